"""Probes of torchish.compile with training and inference functions, each run three ways — PyTorch eager,
torchish eager and torchish.compile — over several calls, so that the state a compiled call writes back (parameters,
``.grad``, buffers, optimizer state, generators) is what the next call reads; the compiled functions' statistics
show which calls ran the program, which ran eagerly and when they retraced.

Fixed (compile.pystate, compile.side_effects, compile.args, compile.function):
- A list of tensors the function reads (``torch.stack(buffer[-2:])``, ``hist[-1] * len(hist)``,
  ``self.memory[-1]``) and the script appends to between calls: the program kept reading the tensors at the
  positions it was traced with and its length as a constant — silently stale numbers. The length of such a list
  is now guarded (a new length traces again), as PyTorch's compiler guards it. A ``deque(maxlen=...)`` rotated
  between calls was read as the tensors it first held; its tensors are now read where they are at each call.
- A function that pops from or appends to such a list (a bounded history, ``old = hist.pop(0)``): every trace of
  the call popped again (a trace that met new state ran the Python again), emptying the list (IndexError), and the
  program never popped. Every trace now starts from the list's entries, and the change is a Python side effect:
  the call runs the program once and later calls run eagerly, as other side effects do.
- An argument stored outside the function (a replay buffer ``buffer.append(x)``, ``cache["x"] = x``,
  ``self.last = x`` in a forward) kept the trace's stand-in holding a JAX tracer: the next read raised JAX's
  "unexpected tracer" error or "Computation compiled for 5 inputs but called with 4", and ``.tolist()`` of it a
  ConcretizationError. Such a call now runs eagerly (a graph break with a warning), storing the argument itself.
- An argument passed twice, or with a view of it (``f(x, x)``, ``f(y[1], y)``), and written in place by the
  function: the program took each as a value of its own, so the write did not show in the other (silently wrong
  numbers). Which arguments share memory is now part of the signature, and such a call that writes into one runs
  eagerly (a graph break with a warning).
- A dataclass returned by the function (``Out(loss=..., n=...)``) was kept whole, its tensors counted as stored
  outside the function: every call after the first ran eagerly with a misleading warning. Its fields are now the
  program's outputs, and each call returns a new instance of the class.
- A step that rebinds a closure variable or a global dict entry to a new tensor computed from the old one (a
  running loss: ``nonlocal running; running = running * 0.9 + loss.detach()``, ``G["ema"] = G["ema"] * 0.5 +
  loss``) ran eagerly after one compiled call, with a warning (only module buffers were stored again). The program
  now returns the new tensor, stores it in the closure variable or dict entry and reads it as that state the next
  call, as PyTorch's compiler replays such stores; so does a trainer's ``self.total = self.total + loss``.
  Such a tensor rebound by a trace that was then given up (a graph break after it) kept the traced value: the eager
  call raised JAX's "unexpected tracer". Every trace now starts from the tensors the function's globals, closure
  variables and attributes held, and a given-up trace puts them back (pystate.PyState.slots).
- A compiled model called under ``inference_mode()`` and later under ``no_grad()`` (one signature: grad mode off)
  returned inference tensors under ``no_grad`` too (``is_inference()`` True, where PyTorch gives a normal tensor
  that autograd may save later), and the reverse. Inference mode is now part of the signature (compile.args).

Kept as guards, matching PyTorch: a compiled Module used in an eager loop with ``backward()`` and Adam outside it;
compiled inference under ``inference_mode()`` and ``no_grad()`` after ``model.eval()`` (BatchNorm, Dropout); a
Module and an optimizer passed as arguments; a compiled step calling a compiled forward; ``@compile`` on
``forward`` and on a bound method; gradient accumulation over ``x.chunk(4)`` with ``zero_grad()`` after ``step()``;
two optimizers on disjoint parameters; ``manual_seed`` inside and between calls; ``torch.Generator`` objects as
arguments of ``randn``/``rand``/``randint``/``randperm``; ``GradScaler(enabled=False)`` (``torch.amp`` and
``torch.cuda.amp``) with ``unscale_``; ``torch._dynamo.config.suppress_errors``, ``backend="eager"/"aot_eager"``,
``mode="max-autotune"``, ``torch._dynamo.reset()`` and a ``torch.compiler.disable``d helper (eager, with a
warning, where PyTorch breaks the graph); a replay buffer in a preallocated tensor written at a tensor pointer;
``func.functional_call`` and ``parameters_to_vector``; a Python branch on ``p.grad is not None``; ``*args`` of
varying length and an optional tensor keyword. Eager with a warning, numbers matching:
``clip_grad_norm_(foreach=True, error_if_nonfinite=True)`` (reads the norm in Python, as PyTorch's graph break
does; the error is raised alike), ``OneCycleLR`` stepped inside the function,
``AveragedModel.update_parameters`` (branches on its ``n_averaged`` tensor) beside an EMA by
``_foreach_mul_``/``_foreach_add_``, and ``vector_to_parameters`` of an argument (the parameters become its
views). Also kept: forward (pre-)hooks ``with_kwargs=True`` changing a keyword, a dataclass argument holding a
list of varying length. Also probed and matching (not kept, for time): a ``weight_norm`` parametrization trained
with Adam, LBFGS with a compiled closure, ``train()``/``eval()`` switched inside the step with an evaluation under
``no_grad``, ``no_grad`` stacked over ``compile`` and under it, a model kept in a plain Python list of layers, a
custom Function with ``mark_non_differentiable``, ``autograd.grad(allow_unused=True, materialize_grads=...)``,
gradient accumulation with the step outside the compiled forward-backward, a tensor default argument written in
place.

"""
import collections
import dataclasses
import warnings

import pytest

from oracle import compile_three_ways, formula_data as _data, formula_init as _init, needs_torch

pytestmark = needs_torch


def _lin(T, i, o, seed=0):
    return _init(T, T.nn.Linear(i, o), seed=seed)


def _three(case, expect=None):
    """:func:`oracle.compile_three_ways`, the statistics cut to the call counts."""
    return [_counts(s) for s in compile_three_ways(case, expect=expect)]


def _counts(stats):
    return {k: stats[k] for k in ("calls", "eager_calls", "compiled_calls", "retraces")}


# --- lists of tensors ------------------------------------------------------------------------------------------------
def case_list_grown_between_calls(T, jit):
    """A list and a module's list attribute appended to between calls; a deque of fixed length rotated."""
    buffer = [_data(T, 2), _data(T, 2, seed=1)]
    hist = [_data(T, 2, seed=2)]
    window = collections.deque([_data(T, 2, seed=3)], maxlen=2)

    class Memory(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.memory = [_data(T, 2, seed=4)]

        def forward(self, x):
            return x * self.memory[-1] - len(self.memory)
    mem = Memory()
    cmem = jit(mem)

    @jit
    def rolling(x):
        return x + window[0] * 2 + window[-1] * len(window)

    @jit
    def recent():
        return T.stack(buffer[-2:]).sum(0)

    @jit
    def scaled(x):
        return x + hist[-1] * len(hist)
    r = []
    for i in range(4):
        x = _data(T, 2, seed=5)
        r += [recent(), recent(), scaled(x), scaled(x), cmem(x), cmem(x), rolling(x), rolling(x)]
        buffer.append(_data(T, 2, seed=i + 3))
        hist.append(_data(T, 2, seed=i + 7))
        mem.memory.append(_data(T, 2, seed=i + 11))
        window.append(_data(T, 2, seed=i + 13))
    r += [recent(), recent()]
    buffer[-1] = _data(T, 2, seed=9)  # (replaced: read again without a retrace)
    return r + [recent()]


def test_list_of_tensors_grown_between_calls_retraces():
    cmem, rolling, recent, scaled = _three(case_list_grown_between_calls)
    # each new length traces again; the entries replaced (and the deque rotated) are read without a retrace
    assert recent == {"calls": 11, "eager_calls": 1, "compiled_calls": 10, "retraces": 4}
    assert scaled == cmem == {"calls": 8, "eager_calls": 1, "compiled_calls": 7, "retraces": 3}
    assert rolling == {"calls": 8, "eager_calls": 1, "compiled_calls": 7, "retraces": 1}


def case_history_popped_and_appended(T, jit):
    w = _lin(T, 2, 1)
    opt = T.optim.SGD(w.parameters(), lr=0.1)
    hist = [_data(T, 3, 2, seed=k) for k in range(6)]

    @jit
    def step(x):
        old = hist.pop(0)
        opt.zero_grad()
        loss = (w(x) - w(old)).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    r = []
    for i in range(4):
        r += [step(_data(T, 3, 2, seed=10 + i)), len(hist), w.weight]
    return r + [hist]


def test_list_popped_by_the_function_runs_its_effect_once_per_call():
    s, = _three(case_history_popped_and_appended, expect="changes plain Python state")
    assert s == {"calls": 4, "eager_calls": 3, "compiled_calls": 1, "retraces": 0}


def case_arguments_stored_outside(T, jit):
    """A replay buffer of the step's batches, a cache dict and a module attribute holding the argument."""
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = _lin(T, 3, 1)

        def forward(self, x):
            self.last = x
            return self.l(x)
    m = Net()
    opt = T.optim.Adam(m.parameters(), lr=1e-2)
    buffer, losses, cache = [], [], {}

    @jit
    def step(x):
        buffer.append(x)
        cache["x"] = x
        opt.zero_grad()
        loss = m(T.cat(buffer[-2:])).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        return loss
    r = []
    for i in range(4):
        r += [step(_data(T, 2, 3, seed=i)), m.l.weight]
    return r + [buffer, losses, T.stack(losses), cache["x"] * 1, m.last * 1, buffer[-1] is cache["x"]]


def test_arguments_stored_outside_run_eagerly():
    s, = _three(case_arguments_stored_outside, expect="stores an argument tensor outside itself")
    assert s == {"calls": 4, "eager_calls": 4, "compiled_calls": 0, "retraces": 0}


def case_arguments_sharing_memory(T, jit):
    @jit
    def f(a, b):
        a.add_(1)
        return b * 2, a + b
    x, z = _data(T, 3), _data(T, 3, seed=1)
    r = [f(x, z), f(x, z), x * 1]
    for i in range(2):
        w = _data(T, 3, seed=i)
        y = _data(T, 2, 3, seed=i)
        r += [f(w, w), w * 1, f(y[0], y[0]), f(y[1], y), f(y, y[1].detach()), y * 1]
    return r + [f(x, z), x * 1, z * 1]


def test_arguments_sharing_memory_written_in_place_run_eagerly():
    """``f(x, x)``, ``f(y[1], y)``: a write into one argument shows in the other, as in PyTorch (the program took
    each as a value of its own: the other kept the old values). Such calls are signatures of their own."""
    s, = _three(case_arguments_sharing_memory, expect="shares its memory with another argument")
    assert s == {"calls": 11, "eager_calls": 9, "compiled_calls": 2, "retraces": 0}


# --- outputs ----------------------------------------------------------------------------------------------------------
Pair = collections.namedtuple("Pair", "loss logits")


@dataclasses.dataclass
class Out:
    loss: object
    n: int
    extra: object = None


def case_structured_outputs(T, jit):
    m = _lin(T, 3, 2)

    @jit
    def f(x, k):
        logits = m(x)
        loss = logits.pow(2).mean()
        return (Pair(loss, logits), Out(loss * 2, x.shape[0], extra=Out(logits.sum(), k)),
                {"parts": [logits[i] for i in range(k)], "k": k, "s": 1.5, "t": (loss, None), "size": x.shape})
    r = []
    for i, k in enumerate((1, 2, 2, 2, 3)):
        p, o, d = f(_data(T, 4, 3, seed=i), k)
        assert type(p) is Pair and type(o) is Out and type(o.extra) is Out
        r += [p.loss, p.logits, o.loss, o.n, o.extra.loss, o.extra.n, d, p.loss.requires_grad]
        o.loss.backward()
        r += [m.weight.grad]
    return r


def test_namedtuples_dataclasses_and_variable_length_lists_are_returned():
    s, = _three(case_structured_outputs)
    # each list length is a signature of its own (k), recorded eagerly once; no eager call after that
    assert s == {"calls": 5, "eager_calls": 3, "compiled_calls": 2, "retraces": 0}


# --- kept as guards ---------------------------------------------------------------------------------------------------
def case_compiled_module_backward_outside(T, jit):
    m = T.nn.Sequential(_lin(T, 3, 4), T.nn.Tanh(), _lin(T, 4, 2, seed=1))
    cm = jit(m)
    opt = T.optim.Adam(cm.parameters(), lr=1e-2)
    r = []
    for i in range(4):
        opt.zero_grad()
        loss = cm(_data(T, 5, 3, seed=i)).pow(2).mean()
        loss.backward()
        r += [loss, m[0].weight.grad, m[2].bias.grad]
        opt.step()
        r += [m[0].weight, opt.state[m[2].bias]["exp_avg_sq"]]
    return r


def case_inference_mode_after_eval(T, jit):
    m = T.nn.Sequential(_lin(T, 3, 4), T.nn.BatchNorm1d(4), T.nn.Dropout(0.5), _lin(T, 4, 2, seed=1))
    with T.no_grad():
        m[1].running_mean.fill_(0.2)
        m[1].running_var.fill_(1.5)
    m.eval()
    cm = jit(m)
    r = []
    for i in range(3):
        with T.inference_mode():
            y = cm(_data(T, 5, 3, seed=i))
        r += [y, y.requires_grad, y.is_inference(), m[1].running_mean, m[1].num_batches_tracked]
    for i in range(2):
        with T.no_grad():
            y = cm(_data(T, 5, 3, seed=i))
        r += [y, y.requires_grad, y.is_inference()]
    with T.inference_mode():
        y = cm(_data(T, 5, 3))
    return r + [y, y.is_inference()]


def case_module_and_optimizer_as_arguments(T, jit):
    a, b = _lin(T, 3, 2), _lin(T, 3, 2, seed=1)
    oa, ob = T.optim.SGD(a.parameters(), lr=0.1, momentum=0.9), T.optim.Adam(b.parameters(), lr=1e-2)

    @jit
    def step(model, opt, x):
        opt.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        opt.step()
        return loss
    r = []
    for i in range(3):
        x = _data(T, 4, 3, seed=i)
        r += [step(a, oa, x), step(b, ob, x), a.weight, b.weight, a.weight.grad]
    return r


def case_nested_compiled_and_compiled_methods(T, jit):
    """A compiled step calling a compiled forward; ``@compile`` on a Module's ``forward`` (with a buffer counter)
    and ``compile`` of a bound method."""
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = _lin(T, 3, 2)
            self.register_buffer("calls", T.zeros(()))

        @jit
        def forward(self, x):
            self.calls += 1
            return self.l(x).relu()
    n = Net()
    other = _lin(T, 3, 2, seed=2)
    bound = jit(other.forward)
    opt = T.optim.SGD(list(n.parameters()) + list(other.parameters()), lr=0.1)

    @jit
    def features(x):
        return n(x).tanh() + bound(x)

    @jit
    def step(x):
        opt.zero_grad()
        loss = features(x).pow(2).sum() + features(x * 2).sum()
        loss.backward()
        opt.step()
        return loss
    r = []
    for i in range(3):
        x = _data(T, 4, 3, seed=i)
        r += [step(x), n.l.weight, n.calls, other.weight.grad, bound(x), n(x * 3)]
    return r


def case_microbatches_zero_grad_after_step_two_optimizers(T, jit):
    enc = T.nn.Sequential(_lin(T, 3, 4), T.nn.ReLU())
    head = _lin(T, 4, 1, seed=1)
    o1 = T.optim.AdamW(enc.parameters(), lr=1e-2, weight_decay=0.1)
    o2 = T.optim.SGD(head.parameters(), lr=0.1, momentum=0.9, nesterov=True)

    @jit
    def step(x, y):
        total = 0
        for xb, yb in zip(x.chunk(4), y.chunk(4)):
            loss = T.nn.functional.mse_loss(head(enc(xb)), yb) / 4
            loss.backward()
            total = total + loss.detach()
        o1.step()
        o2.step()
        o1.zero_grad()
        o2.zero_grad()
        return total
    r = []
    for i in range(3):
        r += [step(_data(T, 8, 3, seed=i), _data(T, 8, 1, seed=i + 5)), enc[0].weight, head.bias, head.bias.grad,
              o2.state[head.weight]["momentum_buffer"], o1.state[enc[0].bias]["exp_avg"]]
    return r


def case_seeds_and_generators(T, jit):
    m = T.nn.Sequential(_lin(T, 3, 4), T.nn.Dropout(0.5))

    @jit
    def seeded(x, seed):
        T.manual_seed(seed)
        return m(x), T.randn(3)

    @jit
    def draw(x):
        return m(x), T.rand(2)

    @jit
    def with_generator(x, gen):
        noise = T.randn(x.shape, generator=gen)
        mask = T.rand(x.shape, generator=gen) > 0.5
        return x + noise * mask, T.randint(0, 10, (3,), generator=gen), T.randperm(5, generator=gen)
    x = _data(T, 4, 3)
    r = [seeded(x, s) for s in (0, 1, 0, 1)]
    for s in (5, 5, 6):
        T.manual_seed(s)
        r += [draw(x), draw(x)]
    g1 = T.Generator().manual_seed(3)
    g2 = T.Generator()
    g2.manual_seed(7)
    r += [with_generator(x[:2], g) for g in (g1, g1, g2, g1, g2)]
    g1.manual_seed(3)
    return r + [with_generator(x[:2], g1), g1.initial_seed(), T.rand(2)]


def case_grad_scaler_disabled(T, jit):
    m = _lin(T, 3, 2)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    scaler = T.amp.GradScaler("cpu", enabled=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (deprecated in both)
        scaler2 = T.cuda.amp.GradScaler(enabled=False)

    @jit
    def step(x, s):
        opt.zero_grad()
        loss = m(x).pow(2).mean()
        s.scale(loss).backward()
        s.unscale_(opt)
        T.nn.utils.clip_grad_value_(m.parameters(), 0.05)
        s.step(opt)
        s.update()
        return loss
    r = []
    for i in range(3):
        r += [step(_data(T, 4, 3, seed=i), scaler), m.weight, scaler.get_scale(), scaler.is_enabled()]
    return r + [step(_data(T, 4, 3), scaler2), m.weight, scaler2.get_scale()]


def case_dynamo_settings(T, jit):
    dynamo = T._dynamo
    m = _lin(T, 3, 2)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    old = dynamo.config.suppress_errors
    dynamo.config.suppress_errors = True

    def step(x):
        opt.zero_grad()
        loss = m(x).pow(2).sum()
        loss.backward()
        opt.step()
        return loss
    try:
        fs = [jit(step, backend="eager"), jit(step, backend="aot_eager"), jit(step, mode="max-autotune"),
              jit(step, mode="reduce-overhead", dynamic=False)]
        r = [(f(_data(T, 4, 3, seed=i)), m.weight) for i in range(2) for f in fs]
        dynamo.reset()
        r += [fs[0](_data(T, 4, 3)), m.weight]

        @T.compiler.disable
        def helper(x):
            return x * 2

        @jit
        def h(x):
            return helper(m(x)).sum()
        return r + [h(_data(T, 4, 3)), h(_data(T, 4, 3))]
    finally:
        dynamo.config.suppress_errors = old


def case_clip_norm_foreach_error_if_nonfinite(T, jit):
    m = T.nn.Sequential(_lin(T, 3, 4), T.nn.GELU(), _lin(T, 4, 2, seed=1))
    opt = T.optim.Adam(m.parameters(), lr=1e-2)

    @jit
    def step(x):
        opt.zero_grad()
        loss = m(x).pow(2).sum() * 10
        loss.backward()
        T.nn.utils.clip_grad_value_(m[0].parameters(), 0.3)
        n = T.nn.utils.clip_grad_norm_(m.parameters(), 1.0, foreach=True, error_if_nonfinite=True)
        opt.step()
        return loss, n
    r = []
    for i in range(3):
        r += [step(_data(T, 4, 3, seed=i)), m[0].weight, m[2].weight.grad]
    try:
        step(_data(T, 4, 3) * float("inf"))
    except RuntimeError as e:
        r.append(str(e).split(",")[0])
    return r + [m[0].weight, m[2].weight.grad]


def case_one_cycle_stepped_inside(T, jit):
    m = _lin(T, 3, 2)
    opt = T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    sched = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=6)

    @jit
    def step(x):
        opt.zero_grad()
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
        sched.step()
        return loss
    r = []
    for i in range(5):
        r += [step(_data(T, 4, 3, seed=i)), m.weight, opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"],
              sched.get_last_lr()]
    return r


def case_preallocated_replay_buffer(T, jit):
    class Buf:
        def __init__(self):
            self.data = T.zeros(4, 3)
            self.ptr = T.zeros((), dtype=T.long)
    b = Buf()
    m = _lin(T, 3, 1)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    @jit
    def step(x):
        b.data[b.ptr] = x
        b.ptr.add_(1).remainder_(4)
        opt.zero_grad()
        loss = m(b.data).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    r = []
    for i in range(6):
        r += [step(_data(T, 3, seed=i)), b.data * 1, b.ptr * 1, m.weight]
    return r


def case_functional_call_and_vector(T, jit):
    m = T.nn.Sequential(_lin(T, 3, 4), T.nn.Tanh(), _lin(T, 4, 2, seed=1))
    @jit
    def f(x, scale):
        params = {k: v * scale for k, v in m.named_parameters()}
        out = T.func.functional_call(m, params, (x,))
        vec = T.nn.utils.parameters_to_vector(m.parameters())
        return out, vec.norm()
    r = []
    for i in range(3):
        r += [f(_data(T, 2, 3, seed=i), 0.5)]
    @jit
    def g(v):
        T.nn.utils.vector_to_parameters(v, m.parameters())
        return m(_data(T, 2, 3))
    n = sum(p.numel() for p in m.parameters())
    for i in range(3):
        r += [g(_data(T, n, seed=i)), m[0].weight]
    return r


def case_grad_presence_branch(T, jit):
    m = _lin(T, 3, 2)
    @jit
    def step(x, accumulate):
        if not accumulate:
            m.zero_grad(set_to_none=True)
        m(x).pow(2).sum().backward()
        n = 0
        for p in m.parameters():
            if p.grad is not None:
                n += 1
        return n, m.weight.grad * 1
    r = []
    for acc in (False, True, True, False, True):
        r += [step(_data(T, 2, 3), acc)]
    return r


def case_varargs_list_argument(T, jit):
    m = _lin(T, 3, 2)
    @jit
    def f(*xs, weights=None):
        out = sum(m(x).sum() for x in xs)
        if weights is not None:
            out = out * weights.sum()
        return out
    r = []
    for k in (1, 2, 2, 3, 1):
        xs = [_data(T, 2, 3, seed=j) for j in range(k)]
        r += [f(*xs), f(*xs, weights=_data(T, 2))]
    return r


def case_foreach_ema_and_swa(T, jit):
    m = _lin(T, 3, 2)
    ema = _lin(T, 3, 2, seed=3)
    swa = T.optim.swa_utils.AveragedModel(m)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    @jit
    def step(x):
        opt.zero_grad()
        loss = m(x).pow(2).sum()
        loss.backward()
        opt.step()
        with T.no_grad():
            ps, es = list(m.parameters()), list(ema.parameters())
            T._foreach_mul_(es, 0.9)
            T._foreach_add_(es, ps, alpha=0.1)
        swa.update_parameters(m)
        return loss
    r = []
    for i in range(4):
        r += [step(_data(T, 4, 3, seed=i)), ema.weight, swa.module.weight, swa.n_averaged]
    return r


@dataclasses.dataclass
class _Batch:
    xs: list
    mask: object = None


def case_pre_hook_with_kwargs(T, jit):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = _lin(T, 3, 2)
        def forward(self, x, scale=1.0, shift=None):
            y = self.l(x) * scale
            return y if shift is None else y + shift
    m = M()
    def hook(mod, args, kwargs):
        kwargs = dict(kwargs)
        kwargs["scale"] = kwargs.get("scale", 1.0) * 2
        return args, kwargs
    m.register_forward_pre_hook(hook, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: out - 1, with_kwargs=True)
    cm = jit(m)
    r = []
    for i in range(3):
        x = _data(T, 2, 3, seed=i)
        r += [cm(x), cm(x, scale=3.0), cm(x, shift=_data(T, 2))]
    return r


def case_dataclass_with_list(T, jit):
    m = _lin(T, 3, 2)
    @jit
    def f(b):
        out = T.stack([m(x) for x in b.xs]).sum(0)
        return out if b.mask is None else out.masked_fill(b.mask, 0.0)
    r = []
    for k in (1, 2, 2, 3, 2):
        xs = [_data(T, 2, 3, seed=j) for j in range(k)]
        r += [f(_Batch(xs)), f(_Batch(xs, mask=_data(T, 2, 2) > 0))]
    return r


def case_running_tensors_rebound(T, jit):
    """A running loss kept in a nonlocal variable and an EMA in a global dict, both rebound to new tensors."""
    m = _lin(T, 3, 1)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    running = T.zeros(())
    _GLOBAL["ema"] = T.zeros(())

    @jit
    def step(x):
        nonlocal running
        opt.zero_grad()
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
        running = running * 0.9 + loss.detach() * 0.1
        _GLOBAL["ema"] = _GLOBAL["ema"] * 0.5 + loss.detach()
        return loss
    r = []
    for i in range(4):
        r += [step(_data(T, 2, 3, seed=i)), running * 1, _GLOBAL["ema"] * 1]
    return r


_GLOBAL = {}


def case_attribute_rebound_and_graph_break(T, jit):
    """A trainer's ``self.total`` rebound by its compiled step (a watched attribute); a global tensor rebound
    before a graph break (``if loss > ...``: the trace is given up and the call runs eagerly)."""
    class Trainer:
        def __init__(self):
            self.m = _lin(T, 3, 1)
            self.opt = T.optim.SGD(self.m.parameters(), lr=0.1)
            self.total = T.zeros(())

        @jit
        def step(self, x):
            self.opt.zero_grad()
            loss = self.m(x).pow(2).mean()
            loss.backward()
            self.opt.step()
            self.total = self.total + loss.detach()
            return loss
    t = Trainer()
    _GLOBAL["total"] = T.zeros(())

    @jit
    def breaks(x):
        loss = t.m(x).pow(2).mean()
        _GLOBAL["total"] = _GLOBAL["total"] + loss.detach()
        if loss > 0.05:
            loss = loss * 2
        return loss
    r = []
    for i in range(4):
        x = _data(T, 2, 3, seed=i)
        r += [t.step(x), t.total * 1, breaks(x), _GLOBAL["total"] * 1]
    return r


_KEPT = {  # case: (the warning the compiled run gives, or None; its functions' (calls, eager_calls) counts)
    "compiled_module_backward_outside": (None, [(4, 1)]),
    # (inference mode and no_grad are signatures of their own: only the first makes inference tensors)
    "inference_mode_after_eval": (None, [(6, 2)]),
    "module_and_optimizer_as_arguments": (None, [(6, 2)]),
    # (the compiled forward and features only run inlined in step, until forward and bound are called outside)
    "nested_compiled_and_compiled_methods": (None, [(3, 1), (3, 1), (0, 0), (3, 1)]),
    "microbatches_zero_grad_after_step_two_optimizers": (None, [(3, 1)]),
    "seeds_and_generators": (None, [(4, 2), (6, 1), (6, 2)]),
    "grad_scaler_disabled": (None, [(4, 2)]),
    "dynamo_settings": ("disable", [(3, 2), (2, 1), (2, 1), (2, 1), (2, 2)]),
    "clip_norm_foreach_error_if_nonfinite": ("could not trace", [(4, 4)]),
    "one_cycle_stepped_inside": ("changes a hyper-parameter", [(5, 4)]),
    "preallocated_replay_buffer": (None, [(6, 1)]),
    # (vector_to_parameters makes the parameters views of the argument, as in PyTorch: eager)
    "functional_call_and_vector": ("stores an argument tensor", [(3, 1), (3, 3)]),
    "grad_presence_branch": (None, [(5, 2)]),
    "varargs_list_argument": (None, [(10, 6)]),
    # (AveragedModel.update_parameters branches on its n_averaged tensor, a graph break in PyTorch too)
    "foreach_ema_and_swa": ("could not trace", [(4, 4)]),
    "pre_hook_with_kwargs": (None, [(9, 3)]),
    "dataclass_with_list": (None, [(10, 6)]),
    "running_tensors_rebound": (None, [(4, 1)]),
    "attribute_rebound_and_graph_break": ("could not trace", [(4, 1), (4, 4)]),
}


@pytest.mark.parametrize("name", list(_KEPT))
def test_probe_program_matches_pytorch(name):
    expect, counts = _KEPT[name]
    stats = _three(globals()["case_" + name], expect=expect)
    assert [(s["calls"], s["eager_calls"]) for s in stats] == counts
    assert all(s["retraces"] == 0 for s in stats)
