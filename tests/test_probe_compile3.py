"""Regressions found by probing torchish.compile with training code against PyTorch (the identity as ``jit``), and
probe programs kept as guards.

Fixed (each used to give silently wrong numbers): a layer appended to a ModuleList (or removed) that the compiled
function iterates, between calls, was not run (the container is not called, so its children were not guarded);
``opt.state.clear()`` / ``opt.state = defaultdict(dict)`` between calls left the program updating the old moments
where PyTorch starts the state afresh; a custom optimizer keeping a Python number in its per-parameter state
(``state["n"] += 1``) had it baked into the program, advanced once by the trace; hooks with Python side effects
(a forward hook, a tensor hook, an optimizer step hook counting calls) ran once in the trace and never again, and a
trace given up for eager mode left its side effects behind (counted twice); an optimizer step hook registered
between calls was not run; a parameter appended to a param group's list in place was not updated, and momentum or
weight decay set from the int 0 to a float crashed in JAX (int64 vs float64 input); module attributes that are not
plain numbers (a function, a list of numbers, an enum member, a dtype, a tuple) were not guarded, nor were a config
object replaced (on a module or in a closure) by one with other values, a plain list of layers appended to, or a
patched ``module.forward``, nor a numpy number or array the forward reads.

Kept as guards at the end: GradScaler with inf batches (skipped steps, backoff), a GAN with an EMA generator
updated by ``_foreach_mul_/_foreach_add_``, a KV cache written in place with ``index_copy_``.

Also probed and matching (not kept, to keep this file fast): EMA with ``_foreach_lerp_``, LambdaLR / OneCycleLR
(also cycling SGD's momentum) / CyclicLR / CosineAnnealingWarmRestarts / ReduceLROnPlateau / SequentialLR /
PolynomialLR with MultiStepLR stepped outside, ``clip_grad_value_`` and ``clip_grad_norm_`` (inf and 1-norms,
``error_if_nonfinite``), parameters frozen and unfrozen between calls or inside the step, ``add_param_group``,
``zero_grad(set_to_none=False)`` with momentum, train/eval toggles with BatchNorm, forward pre/post and full
backward (pre-)hooks returning new values, removed hooks, ``register_hook`` on activations, no_grad evaluation
returning dicts and tuples, running means and counters kept by hand in buffers, a KV cache written by slice
assignment, outputs aliasing parameters and their ``.grad``, varying batch sizes (also ``dynamic=True``), a compiled
module used for inference and in an eager loop, ``state_dict``/``load_state_dict`` between calls, ``checkpoint`` and
a custom autograd.Function inside a step, every built-in optimizer (Adagrad, RMSprop centered, Adamax, NAdam, RAdam,
ASGD, Rprop, Adadelta, Adam amsgrad/maximize, fused, tensor lr, Adafactor), LBFGS with a compiled closure,
distillation from an eval-mode teacher, SWA/EMA ``AveragedModel``, spectral and weight norm parametrizations,
pruning added and removed between calls, a buffer reassigned, a ModuleDict chosen by a string argument, backward
outside a compiled forward (double backward, TBPTT across two calls, a non-leaf input, in-place on an output), grad
mode and default dtype changed between calls, reseeding and a Generator argument, a compiled method on two
instances, models and optimizers passed as arguments, MAML with ``functional_call``, a manual natural-gradient step
with ``parameters_to_vector``, ``.grad`` assigned by hand, ``backward(inputs=...)``, a LazyLinear, a RoPE cache
grown by the step, nanoGPT steps with micro-batches, manual lr warmup and tied weights.
"""
import collections
import enum

import numpy as np
import pytest

import torchish
from oracle import assert_script_matches, formula_data, formula_init, needs_torch

pytestmark = needs_torch


def _lin(T, i=3, o=2, seed=0):
    return formula_init(T, T.nn.Linear(i, o), seed=seed)


def _compiled(made):
    """``jit`` for torchish that keeps the compiled functions, to look at their statistics."""
    def jit(fn):
        made.append(torchish.compile(fn))
        return made[-1]
    return jit


def _check(case):
    """``case`` matches PyTorch; returns the torchish compiled functions' statistics."""
    assert_script_matches(case)
    made = []
    case(torchish, _compiled(made))
    return [c.stats for c in made]



def _training_step(jit, m, opt):
    """The compiled step the optimizer cases share: zero_grad, a squared-output loss, backward, step."""
    @jit
    def step(x):
        opt.zero_grad()
        loss = m(x).pow(2).sum()
        loss.backward()
        opt.step()
        return loss
    return step

def case_modulelist_grows(T, jit):
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = T.nn.ModuleList([_lin(T, 3, 3)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).tanh()
            return x
    m = Net()

    @jit
    def f(x):
        m.zero_grad()
        y = m(x).sum()
        y.backward()
        return y
    x = formula_data(T, 2, 3)
    out = [f(x), f(x)]
    m.layers.append(_lin(T, 3, 3, seed=4))
    out += [f(x), f(x), m.layers[1].weight.grad]
    del m.layers[0]
    out += [f(x), f(x)]
    return out


def test_layer_appended_to_a_module_list_between_calls_runs():
    """The ModuleList is iterated, not called: appending a layer (or deleting one) used to leave the program
    running the old layers. Its children are now part of the structure the program is guarded on."""
    stats = _check(case_modulelist_grows)
    assert stats[0]["compiled_calls"] >= 4


def case_optimizer_state_reset(T, jit):
    m = _lin(T)
    opt = T.optim.Adam(m.parameters(), lr=0.1)

    step = _training_step(jit, m, opt)
    x = formula_data(T, 2, 3)
    out = [step(x), step(x), step(x)]
    opt.state = collections.defaultdict(dict)
    out += [step(x), step(x)]
    opt.state.clear()
    out += [step(x), step(x)]
    opt.state[m.weight]["exp_avg"] = T.ones_like(m.weight)
    out += [step(x), step(x)]
    return out, m.weight, opt.state_dict()["state"]


def test_optimizer_state_reset_between_calls_starts_afresh():
    """``opt.state = defaultdict(dict)``, ``opt.state.clear()`` and a moment replaced by a new tensor between
    calls: PyTorch's next step starts Adam's state again (or uses the new tensor); the program kept updating the
    tensors the optimizer no longer held."""
    stats = _check(case_optimizer_state_reset)
    assert stats[0]["compiled_calls"] >= 4


def case_custom_optimizer_python_number_in_state(T, jit):
    class MySGD(T.optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, dict(lr=lr))

        @T.no_grad()
        def step(self):
            for g in self.param_groups:
                for p in g["params"]:
                    st = self.state[p]
                    st["n"] = st.get("n", 0) + 1
                    if "buf" not in st:
                        st["buf"] = p.grad.clone()
                    else:
                        st["buf"].mul_(0.5).add_(p.grad)
                    p.add_(st["buf"], alpha=-g["lr"] / st["n"])
    m = _lin(T)
    opt = MySGD(m.parameters(), lr=0.2)

    step = _training_step(jit, m, opt)
    x = formula_data(T, 2, 3)
    return [step(x) for _ in range(4)], m.weight, opt.state[m.weight]["n"], opt.state[m.weight]["buf"]


def test_python_number_in_a_custom_optimizers_state():
    """``state["n"] += 1`` in a custom optimizer's step is a Python side effect: the call runs eagerly as
    PyTorch's graph break does (it used to run a program with ``n`` fixed at its traced value)."""
    _check(case_custom_optimizer_python_number_in_state)


def case_hooks_that_count(T, jit):
    m = _lin(T)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    n = {"fwd": 0, "grad": 0, "pre": 0}
    m.register_forward_hook(lambda mod, args, out: n.__setitem__("fwd", n["fwd"] + 1))
    m.weight.register_hook(lambda g: n.__setitem__("grad", n["grad"] + 1))
    opt.register_step_pre_hook(lambda o, args, kwargs: n.__setitem__("pre", n["pre"] + 1))

    step = _training_step(jit, m, opt)
    x = formula_data(T, 2, 3)
    return [step(x) for _ in range(4)], n, m.weight


def test_hooks_with_python_side_effects_run_at_every_call():
    """A forward hook, a tensor hook and an optimizer step pre-hook counting calls in a dict: the hooks' values
    used to be guarded only after the trace had changed them (and optimizer hooks not at all), so the program ran
    without them; now the call runs eagerly, as PyTorch's graph break does, and counts 4."""
    _check(case_hooks_that_count)


def case_backward_hook_count_when_the_trace_is_given_up(T, jit):
    m = _lin(T)
    calls = {"n": 0}

    def hook(mod, grad_in, grad_out):
        calls["n"] += 1
        return (grad_in[0] * 2,)
    m.register_full_backward_hook(hook)

    @jit
    def step(x):
        m.zero_grad()
        m(x).pow(2).sum().backward()
        return x.grad

    x = formula_data(T, 2, 3).requires_grad_()
    return [step(x) for _ in range(3)], calls


def test_a_trace_given_up_leaves_no_python_side_effect():
    """The trace runs the user's Python (the hook counts once), then finds it cannot compile the call (the
    argument's ``.grad`` accumulates) and runs it eagerly: the count used to go up twice for that call."""
    _check(case_backward_hook_count_when_the_trace_is_given_up)


def case_optimizer_hook_added_later(T, jit):
    m = _lin(T)
    opt = T.optim.SGD(m.parameters(), lr=0.5)

    step = _training_step(jit, m, opt)
    x = formula_data(T, 2, 3)
    out = [step(x), step(x)]

    def clamp(o, args, kwargs):
        with T.no_grad():
            for p in m.parameters():
                p.clamp_(-0.1, 0.1)
    handle = opt.register_step_post_hook(clamp)
    out += [step(x), step(x), m.weight.clone()]
    handle.remove()
    out += [step(x), step(x)]
    return out, m.weight


def test_optimizer_step_hook_registered_between_calls():
    """An optimizer step hook registered (then removed) after the step was compiled: the program used to go on
    without it. The optimizers' hooks are now part of the structure a program is guarded on."""
    stats = _check(case_optimizer_hook_added_later)
    assert stats[0]["compiled_calls"] >= 4


def case_param_group_changed_between_calls(T, jit):
    a, b = _lin(T), _lin(T, seed=3)
    opt = T.optim.SGD(a.parameters(), lr=0.1)

    @jit
    def step(x):
        opt.zero_grad()
        loss = (a(x) * b(x)).sum()
        loss.backward()
        opt.step()
        return loss
    x = formula_data(T, 2, 3)
    out = [step(x), step(x)]
    opt.param_groups[0]["params"].append(b.weight)  # (in place: no add_param_group)
    out += [step(x), step(x)]
    opt.param_groups[0]["momentum"] = 0.9  # (an int 0 before: a momentum buffer from now on)
    out += [step(x), step(x)]
    opt.param_groups[0]["weight_decay"] = 0.01  # (an int 0 before)
    out += [step(x), step(x)]
    return out, a.weight, b.weight, opt.state_dict()["state"]


def test_param_group_changed_in_place_between_calls():
    """Three changes to a param group between calls that used to be missed or crash: a parameter appended to the
    group's list in place (the program went on updating the old list), the momentum set from 0 to 0.9 (whether
    there is a momentum buffer at all is baked into the program: JAX's TypeError about int64 and float64 inputs)
    and a weight decay set from the int 0 to 0.01 (the same TypeError)."""
    stats = _check(case_param_group_changed_between_calls)
    assert stats[0]["compiled_calls"] >= 6


class _Mode(enum.Enum):
    PLAIN = 1
    SCALED = 2


def case_module_settings_that_are_not_numbers(T, jit):
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = _lin(T, 3, 3)
            self.act, self.scales, self.mode, self.dtype, self.shape = T.relu, [1.0, 2.0], _Mode.PLAIN, T.float32, (3, 3)

        def forward(self, x):
            y = self.act(self.lin(x)) * self.scales[0] + self.scales[1]
            if self.mode is _Mode.SCALED:
                y = y * 10
            return y.reshape(self.shape), T.zeros(2, dtype=self.dtype) + 1
    m = Net()
    f = jit(lambda x: m(x))
    x = formula_data(T, 3, 3)
    out = [f(x), f(x)]
    for name, v in [("act", T.tanh), ("scales", [3.0, 4.0]), ("mode", _Mode.SCALED), ("dtype", T.float64),
                    ("shape", (1, 9))]:
        setattr(m, name, v)
        out += [f(x), f(x)]
    m.scales[0] = -1.0
    out += [f(x), f(x)]
    return out


def test_module_settings_that_are_not_numbers_are_guarded():
    """A module attribute holding a function, a list of numbers (replaced, or changed in place), an enum member, a
    dtype or a tuple, changed between calls: the program kept the value it was traced with (only plain numbers,
    strings and flags were guarded). PyTorch's compiler guards them all."""
    stats = _check(case_module_settings_that_are_not_numbers)
    assert stats[0]["compiled_calls"] >= 10


class _Cfg:
    def __init__(self, scale):
        self.scale = scale


def case_objects_rebound_between_calls(T, jit):
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = _lin(T, 3, 3), _lin(T, 3, 3, seed=2)
            self.order, self.cfg = [self.a], _Cfg(1.0)

        def forward(self, x):
            for layer in self.order:
                x = layer(x)
            return x * self.cfg.scale
    m = Net()
    cfg = _Cfg(1.0)
    f = jit(lambda x: m(x) * cfg.scale)
    x = formula_data(T, 2, 3)
    out = [f(x), f(x)]
    m.cfg = _Cfg(3.0)
    out += [f(x), f(x)]
    m.order.append(m.b)
    out += [f(x), f(x)]
    cfg = _Cfg(-1.0)  # (the closure's variable rebound)
    out += [f(x), f(x)]
    forward = m.forward
    m.forward = lambda inp: forward(inp) + 1
    out += [f(x), f(x)]
    return out


def test_objects_rebound_between_calls_are_guarded():
    """A module's config object replaced (``m.cfg = Cfg(3.0)``), a plain list of its layers appended to, a
    closure variable rebound to another config object, and ``m.forward`` patched: each used to leave the program
    computing with what it was traced with. They are guarded by identity now, as PyTorch's compiler does."""
    stats = _check(case_objects_rebound_between_calls)
    assert stats[0]["compiled_calls"] >= 8



def case_numpy_values_read_by_the_model(T, jit):
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = _lin(T)
            self.scale, self.w = np.float32(2.0), np.array([1.0, 2.0], dtype=np.float32)

        def forward(self, x):
            return self.lin(x) * T.from_numpy(self.w) * float(self.scale)
    m = Net()
    f = jit(lambda x: m(x))
    x = formula_data(T, 2, 3)
    out = [f(x), f(x)]
    m.scale = np.float32(5.0)
    out += [f(x), f(x)]
    m.w = np.array([3.0, -1.0], dtype=np.float32)
    out += [f(x), f(x)]
    m.w[0] = 7.0
    out += [f(x), f(x)]
    return out


def test_numpy_values_read_by_the_model_are_guarded():
    """A numpy number and a numpy array (replaced, then changed in place) that the forward reads: the program
    kept the values it was traced with."""
    stats = _check(case_numpy_values_read_by_the_model)
    assert stats[0]["compiled_calls"] >= 6


# probe programs that matched PyTorch, kept as guards
def case_grad_scaler_skips_steps_on_inf(T, jit):
    m = _lin(T)
    opt = T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    scaler = T.amp.GradScaler("cpu", init_scale=2.0 ** 3, backoff_factor=0.5, growth_interval=1)

    @jit
    def step(x):
        opt.zero_grad()
        loss = m(x).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        return loss
    x = formula_data(T, 4, 3)
    bad = x.clone()
    bad[0, 0] = float("inf")
    out = []
    for batch in [x, x, bad, x, bad, x]:
        out += [step(batch), scaler.get_scale(), m.weight.detach().clone()]
    return out


def case_gan_with_an_ema_generator(T, jit):
    G = formula_init(T, T.nn.Sequential(T.nn.Linear(2, 4), T.nn.Tanh(), T.nn.Linear(4, 3)))
    D = formula_init(T, T.nn.Sequential(T.nn.Linear(3, 4), T.nn.LeakyReLU(0.2), T.nn.Linear(4, 1)), seed=5)
    G_ema = formula_init(T, T.nn.Sequential(T.nn.Linear(2, 4), T.nn.Tanh(), T.nn.Linear(4, 3)))
    og = T.optim.Adam(G.parameters(), lr=0.01, betas=(0.5, 0.999))
    od = T.optim.Adam(D.parameters(), lr=0.02, betas=(0.5, 0.999))
    bce = T.nn.BCEWithLogitsLoss()

    @jit
    def step(z, real):
        fake = G(z)
        od.zero_grad()
        loss_d = bce(D(real), T.ones(real.shape[0], 1)) + bce(D(fake.detach()), T.zeros(z.shape[0], 1))
        loss_d.backward()
        od.step()
        og.zero_grad()
        loss_g = bce(D(fake), T.ones(z.shape[0], 1))
        loss_g.backward()
        og.step()
        with T.no_grad():
            ema = list(G_ema.parameters())
            T._foreach_mul_(ema, 0.9)
            T._foreach_add_(ema, list(G.parameters()), alpha=0.1)
        return loss_d, loss_g
    z, real = formula_data(T, 4, 2), formula_data(T, 4, 3, seed=3)
    out = [step(z, real) for _ in range(3)]
    return out, list(G_ema.parameters()), [p.grad for p in D.parameters()], od.state_dict()["state"][0]


def case_kv_cache_written_in_place(T, jit):
    cache = T.zeros(5, 3)

    @jit
    def write(x, pos):
        cache.index_copy_(0, pos, x)
        return cache.sum(0), cache
    out = []
    for i in range(4):
        total, c = write(formula_data(T, 1, 3, seed=i), T.tensor([i]))
        out += [total, c is cache]
    return out, cache


@pytest.mark.parametrize("case", [case_grad_scaler_skips_steps_on_inf, case_gan_with_an_ema_generator,
                                  case_kv_cache_written_in_place], ids=lambda c: c.__name__[5:])
def test_probe_program_matches_pytorch(case):
    stats = _check(case)
    assert stats[0]["compiled_calls"] >= 2
