"""torchish.compile and plain Python state: numbers, strings and flags a compiled function reads from module
attributes, its own objects, globals and closure variables are guarded (a changed value traces again, as PyTorch's
compiler guards them), and a function that changes such a value itself runs the effect once per call (eagerly after
its traced call). Each case runs with PyTorch eagerly (the oracle: ``jit`` is the identity there) and with
torchish.compile."""
import dataclasses
import warnings

import numpy as np
import pytest

import torchish
from torchish.compile import GraphBreakError
from oracle import needs_torch, torch


def _values(out):
    if hasattr(out, "detach"):
        return out.detach().numpy()
    if isinstance(out, dict):
        return [[k, _values(v)] for k, v in out.items()]
    if isinstance(out, (list, tuple)):
        return [_values(v) for v in out]
    return out


def _assert_same(got, expected):
    if isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-5)
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_same(g, e)
    else:
        assert type(got) is type(expected) and got == expected


def case_module_counter(lib, jit):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 2)
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return self.lin(x) * self.calls
    m = M()
    with lib.no_grad():
        m.lin.weight.copy_(lib.arange(6.).reshape(2, 3) / 10)
        m.lin.bias.zero_()
    f = jit(m)
    x = lib.ones(4, 3)
    return [f(x) for _ in range(4)], m.calls


def _scale_module(lib):
    """A module multiplying by its plain Python attribute ``scale``."""
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 1.0

        def forward(self, x):
            return x * self.scale
    return M()


def case_attribute_set_outside(lib, jit):
    m = _scale_module(lib)
    f = jit(m)
    x = lib.ones(3)
    outs = []
    for s in [1.0, 2.0, 3.0, 2.0, 2]:  # (an int scale: x * 2 keeps float32 either way, but the guard sees the type)
        m.scale = s
        outs.append(f(x))
    return outs


def case_dropout_p_changed(lib, jit):
    net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Dropout(0.5))
    with lib.no_grad():
        net[0].weight.fill_(0.5)
        net[0].bias.fill_(0.1)
    f = jit(net)
    x = lib.ones(3, 2)
    outs = []
    for p in [0.0, 0.0, 1.0, 1.0, 0.0]:
        net[1].p = p
        outs.append(f(x))
    return outs


def case_batchnorm_momentum_changed(lib, jit):
    bn = lib.nn.BatchNorm1d(2)
    f = jit(bn)
    x = lib.arange(8.).reshape(4, 2)
    for m in [0.1, 0.1, 0.5, 0.5]:
        bn.momentum = m
        f(x)
    return bn.running_mean, bn.running_var


SCALE = 1.0
STEP = 0


def case_global_scalar(lib, jit):
    global SCALE

    def fn(x):
        return x * SCALE
    f = jit(fn)
    x = lib.ones(3)
    outs = []
    for s in [1.0, 2.0, 3.0]:
        SCALE = s
        outs.append(f(x))
    SCALE = 1.0
    return outs


def _helper(x):
    return x + SCALE


def case_global_read_by_a_called_function(lib, jit):
    global SCALE

    def fn(x):
        return _helper(x) * 2
    f = jit(fn)
    x = lib.ones(2)
    outs = []
    for s in [1.0, 1.0, 5.0]:
        SCALE = s
        outs.append(f(x))
    SCALE = 1.0
    return outs


def case_global_counter(lib, jit):
    global STEP
    STEP = 0

    def fn(x):
        global STEP
        STEP += 1
        return x + STEP
    f = jit(fn)
    x = lib.ones(2)
    return [f(x) for _ in range(4)], STEP


def case_closure_object(lib, jit):
    class Cfg:
        pass
    cfg = Cfg()
    cfg.alpha = 0.5

    def fn(x):
        return x * cfg.alpha
    f = jit(fn)
    x = lib.ones(2)
    outs = []
    for a in [0.5, 0.25, 2.0]:
        cfg.alpha = a
        outs.append(f(x))
    return outs


def case_list_appended_inside(lib, jit):
    log = []

    def fn(x):
        log.append(1)
        return x * 2
    f = jit(fn)
    x = lib.ones(2)
    return [f(x) for _ in range(3)], len(log)


def case_closure_counter(lib, jit):
    n = [0]

    def fn(x):
        n[0] += 1
        return x * n[0]
    f = jit(fn)
    x = lib.ones(2)
    return [f(x) for _ in range(4)], n[0]


def case_attribute_set_inside_same_value(lib, jit):
    class M(lib.nn.Module):
        def forward(self, x):
            self.seen_shape = tuple(x.shape)  # the same value every call: not an effect to repeat
            return x + 1
    m = M()
    f = jit(m)
    x = lib.zeros(2, 2)
    return [f(x) for _ in range(3)], m.seen_shape




def case_nested_config_object(lib, jit):
    class Cfg:
        def __init__(self): self.scale = 2.0
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__(); self.cfg = Cfg()
        def forward(self, x):
            return x * self.cfg.scale
    m = M(); f = jit(m); x = lib.ones(2); outs = []
    for s in [2.0, 2.0, 3.0, 3.0, 2.0]:
        m.cfg.scale = s; outs.append(f(x))
    return outs

def case_nested_counter_object(lib, jit):
    class State:
        def __init__(self): self.n = 0
    st = {"s": State()}
    def fn(x):
        s = st["s"]
        s.n += 1
        return x + s.n
    f = jit(fn); x = lib.ones(2)
    return [f(x) for _ in range(4)], st["s"].n


# structure and arguments: hooks, children, param groups, tensors in dicts replaced between calls
def _lin(lib, i=3, o=2):
    m = lib.nn.Linear(i, o)
    with lib.no_grad():
        m.weight.copy_(lib.arange(float(i * o)).reshape(o, i) / 10 - 0.2); m.bias.fill_(0.1)
    return m

def case_forward_hook_added_later(lib, jit):
    m = _lin(lib); f = jit(m); x = lib.ones(2, 3)
    outs = [f(x), f(x)]
    h = m.register_forward_hook(lambda mod, inp, out: out * 10)
    outs += [f(x), f(x)]
    h.remove()
    outs += [f(x), f(x)]
    return outs

def case_forward_pre_hook_added_later(lib, jit):
    m = _lin(lib); f = jit(m); x = lib.ones(2, 3)
    outs = [f(x), f(x)]
    m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 2,))
    outs += [f(x), f(x)]
    return outs

def case_tensor_hook_added_later(lib, jit):
    w = lib.ones(3, requires_grad=True)
    def step(x):
        w.grad = None
        (w * x).sum().backward()
        return w.grad.clone()
    f = jit(step); x = lib.arange(3.)
    outs = [f(x), f(x)]
    w.register_hook(lambda g: g * 3)
    outs += [f(x), f(x)]
    return outs

def case_requires_grad_toggled(lib, jit):
    m = _lin(lib)
    def step(x):
        for p in m.parameters(): p.grad = None
        m(x).sum().backward()
        return [p.grad for p in m.parameters()]
    f = jit(step); x = lib.ones(2, 3)
    outs = [f(x), f(x)]
    m.bias.requires_grad_(False)
    outs += [f(x), f(x)]
    return [[o if o is not None else "none" for o in out] for out in outs]

def case_float_argument(lib, jit):
    f = jit(lambda x, s: x * s); x = lib.ones(2)
    return [f(x, 1.0), f(x, 2.0), f(x, 2.0), f(x, 3)]

def case_string_argument(lib, jit):
    def fn(x, mode):
        return x.sum() if mode == "sum" else x.mean()
    f = jit(fn); x = lib.arange(4.)
    return [f(x, "sum"), f(x, "mean"), f(x, "sum"), f(x, "mean")]

def case_list_of_tensors_arg(lib, jit):
    f = jit(lambda xs: lib.stack(xs).sum(0)); a = lib.ones(2)
    return [f([a, a]), f([a, a]), f([a, a, a]), f([a, a, a])]

def case_load_state_dict_between(lib, jit):
    m = _lin(lib); f = jit(m); x = lib.ones(1, 3)
    outs = [f(x), f(x)]
    sd = {k: v * 2 for k, v in m.state_dict().items()}
    m.load_state_dict(sd)
    outs += [f(x), f(x)]
    return outs

def case_eval_no_grad(lib, jit):
    net = lib.nn.Sequential(_lin(lib), lib.nn.BatchNorm1d(2))
    f = jit(net); x = lib.arange(6.).reshape(2, 3)
    f(x); f(x)
    net.eval()
    with lib.no_grad():
        a = f(x); b = f(x)
    return a, b, a.requires_grad, net[1].running_mean

def case_inplace_argument(lib, jit):
    def fn(x):
        x.add_(1)
        return x * 2
    f = jit(fn); x = lib.zeros(2)
    outs = [f(x).clone(), f(x).clone(), f(x).clone()]
    return outs, x

def case_return_view_of_input(lib, jit):
    f = jit(lambda x: x[1:]); x = lib.arange(4.)
    a = f(x); b = f(x)
    return a, b

def case_backward_outside(lib, jit):
    m = _lin(lib); f = jit(m)
    x = lib.ones(2, 3, requires_grad=True)
    outs = []
    for _ in range(3):
        m.zero_grad(); x.grad = None
        f(x).pow(2).sum().backward()
        outs += [x.grad.clone(), m.weight.grad.clone()]
    return outs

def case_dict_output(lib, jit):
    f = jit(lambda x: {"a": x + 1, "b": (x * 2, None, 3)}); x = lib.ones(2)
    r = [f(x), f(x)]
    return [[d["a"], d["b"][0], d["b"][1] is None, d["b"][2]] for d in r]

def case_kwargs_defaults(lib, jit):
    def fn(x, scale=2.0, *, bias=None):
        y = x * scale
        return y if bias is None else y + bias
    f = jit(fn); x = lib.ones(2)
    return [f(x), f(x, 3.0), f(x, bias=lib.ones(2)), f(x), f(x, bias=lib.ones(2))]

def case_shape_in_python(lib, jit):
    def fn(x):
        n = x.shape[0]
        return x.sum() / n + x.size(1)
    f = jit(fn)
    return [f(lib.ones(2, 3)), f(lib.ones(2, 3)), f(lib.ones(4, 3)), f(lib.ones(4, 3))]

def _group_setting_changes(lib, jit, make_opt, key, values):
    """A compiled SGD/Adam-style step while ``param_groups[0][key]`` takes ``values`` between calls."""
    m = _lin(lib)
    opt = make_opt(m.parameters())

    def step(x):
        opt.zero_grad(); l = m(x).pow(2).mean(); l.backward(); opt.step(); return l
    f = jit(step); x = lib.ones(2, 3)
    outs = []
    for v in values:
        opt.param_groups[0][key] = v
        outs.append(f(x))
    return outs, m.weight

def case_optimizer_lr_change(lib, jit):
    return _group_setting_changes(lib, jit, lambda ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9), "lr",
                                  [0.1 / (i + 1) for i in range(5)])

def case_momentum_change(lib, jit):
    return _group_setting_changes(lib, jit, lambda ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9), "momentum",
                                  [0.9, 0.9, 0.5, 0.5])

def case_nesterov_toggle(lib, jit):  # a flag that changes the update's structure: guarded, not a value
    return _group_setting_changes(lib, jit, lambda ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9), "nesterov",
                                  [False, False, True, True])

def case_maximize_toggle(lib, jit):
    return _group_setting_changes(lib, jit, lambda ps: lib.optim.Adam(ps, lr=0.1), "maximize",
                                  [False, False, True, True])

def case_weight_decay_toggle(lib, jit):
    return _group_setting_changes(lib, jit, lambda ps: lib.optim.AdamW(ps, lr=0.1, weight_decay=0.0),
                                  "weight_decay", [0.0, 0.0, 0.5, 0.5])

def case_add_param_group_later(lib, jit):
    a = _lin(lib); b = _lin(lib, 2, 2)
    opt = lib.optim.SGD(a.parameters(), lr=0.1)
    def step(x):
        opt.zero_grad(); l = b(a(x)).pow(2).mean(); l.backward(); opt.step(); return l
    f = jit(step); x = lib.ones(2, 3)
    outs = [f(x), f(x)]
    opt.add_param_group({"params": b.parameters(), "lr": 0.05})
    outs += [f(x), f(x)]
    return outs, a.weight, b.weight

def case_grad_mode_switch(lib, jit):
    m = _lin(lib); f = jit(m); x = lib.ones(1, 3)
    a = f(x)
    with lib.no_grad():
        b = f(x); c = f(x)
    d = f(x)
    return a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, d

def case_module_replaced(lib, jit):
    net = lib.nn.Sequential(_lin(lib), lib.nn.ReLU())
    f = jit(net); x = lib.ones(1, 3) * -1
    outs = [f(x), f(x)]
    net[1] = lib.nn.Tanh()
    outs += [f(x), f(x)]
    return outs

def case_global_tensor_replaced(lib, jit):
    st = {"w": lib.ones(2)}
    f = jit(lambda x: x * st["w"]); x = lib.arange(2.)
    outs = [f(x), f(x)]
    st["w"] = lib.full((2,), 3.0)
    outs += [f(x), f(x)]
    return outs

def case_param_data_replaced(lib, jit):
    m = _lin(lib); f = jit(m); x = lib.ones(1, 3)
    outs = [f(x), f(x)]
    m.weight.data = lib.zeros(2, 3)
    outs += [f(x), f(x)]
    return outs

def case_clip_grad_norm_return(lib, jit):
    m = _lin(lib)
    def step(x):
        m.zero_grad(); m(x).pow(2).sum().backward()
        return lib.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
    f = jit(step); x = lib.ones(2, 3)
    return [f(x), f(x), m.weight.grad]

def case_dropout_train_eval(lib, jit):
    net = lib.nn.Sequential(_lin(lib), lib.nn.Dropout(0.0))
    f = jit(net); x = lib.ones(1, 3)
    outs = [f(x), f(x)]
    net.eval(); outs += [f(x), f(x)]
    net.train(); outs += [f(x)]
    return outs

def case_method_decorated(lib, jit):
    class T:
        def __init__(self):
            self.m = _lin(lib); self.k = 2.0
        @jit
        def run(self, x):
            return self.m(x) * self.k
    t = T(); x = lib.ones(1, 3)
    outs = [t.run(x), t.run(x)]
    t.k = 5.0
    outs += [t.run(x)]
    return outs

def case_none_grad_after_zero(lib, jit):
    m = _lin(lib); opt = lib.optim.Adam(m.parameters(), lr=0.01)
    def step(x):
        opt.zero_grad(set_to_none=False); m(x).sum().backward(); opt.step()
    f = jit(step); x = lib.ones(2, 3)
    for _ in range(3): f(x)
    return m.weight, m.weight.grad

@dataclasses.dataclass
class _Batch:
    x: object
    y: object
    weight: float = 1.0


class _Inputs:
    def __init__(self, x, scale):
        self.x, self.scale = x, scale


def _batch_step(lib, jit):
    m = _lin(lib); opt = lib.optim.SGD(m.parameters(), lr=0.1)
    def step(b):
        opt.zero_grad()
        loss = ((m(b.x) - b.y) ** 2).mean() * b.weight
        loss.backward(); opt.step()
        return loss
    return m, jit(step)

def case_dataclass_batch_argument(lib, jit):  # a new Batch object every step
    m, f = _batch_step(lib, jit)
    outs = [f(_Batch(lib.full((4, 3), 0.1 * i), lib.full((4, 1), 0.2 * i))) for i in range(5)]
    outs.append(f(_Batch(lib.ones(2, 3), lib.zeros(2, 1), weight=3.0)))  # new shapes and a new Python value
    return outs + [m.weight]

def case_object_argument_with_objects_inside(lib, jit):
    def fn(inputs):
        return sum(i.x * i.scale for i in inputs["parts"]) + inputs["extra"].x
    f = jit(fn)
    return [f({"parts": [_Inputs(lib.full((2,), float(i)), 2.0), _Inputs(lib.ones(2), 0.5 * i)],
               "extra": _Inputs(lib.arange(2.), None)}) for i in range(4)]

def case_argument_attribute_set_inside(lib, jit):  # a Python side effect on the argument: runs eagerly
    def fn(b):
        b.out = b.x * 2
        return b.x + 1
    f = jit(fn)
    outs = []
    for i in range(3):
        b = _Inputs(lib.full((2,), float(i)), 1.0)
        outs += [f(b), b.out]
    return outs

def case_method_of_object_without_state(lib, jit):
    class Scale:
        def __init__(self, lib):
            self.w, self.k = lib.arange(3.), 2.0
        @jit
        def run(self, x):
            return x * self.w * self.k
    s = Scale(lib); x = lib.ones(3)
    outs = [s.run(x), s.run(x)]
    s.w = lib.full((3,), 4.0)
    outs.append(s.run(x))
    s.k = 0.5
    return outs + [s.run(x), s.run(x)]

def case_object_holding_raw_parameters(lib, jit):  # a model without nn.Module, its manual SGD step compiled
    class Model:
        def __init__(self):
            self.w = lib.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
            self.params = [lib.tensor([0.1, -0.1], requires_grad=True)]
    def step(model, x):
        loss = ((x @ model.w + model.params[0]).tanh() ** 2).sum()
        loss.backward()
        with lib.no_grad():
            for p in (model.w, model.params[0]):
                p -= 0.1 * p.grad
                p.grad.zero_()
        return loss
    f, model = jit(step), Model()
    return [f(model, lib.full((3, 2), 0.2 * i)) for i in range(4)] + [model.w, model.params[0]]


CASES = [v for k, v in sorted(globals().items()) if k.startswith("case_")]


def check_case(case):
    """``case(torch, identity)`` (PyTorch eagerly, the oracle) against ``case(torchish, torchish.compile)``."""
    expected = _values(case(torch, lambda f: f))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _values(case(torchish, torchish.compile))
    _assert_same(got, expected)


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[5:])
def test_python_state_matches_pytorch(case):
    check_case(case)


def test_guarded_values_retrace_or_switch_programs():
    m = _scale_module(torchish)
    f = torchish.compile(m)
    x = torchish.ones(3)
    for s in [1.0, 2.0, 3.0, 2.0, 3.0, 3.0]:
        m.scale = s
        assert f(x).tolist() == [s] * 3
    # call 1 eager, call 2 traced for 2.0, call 3 traced for 3.0; 2.0 and 3.0 again switch back to their programs
    stats = m._compiled_call.stats
    assert stats["traces"] == 2 and stats["compiled_calls"] == 5 and stats["eager_calls"] == 1


def test_unrelated_attributes_do_not_retrace():
    m = torchish.nn.Linear(2, 2)
    f = torchish.compile(m)
    x = torchish.ones(1, 2)
    for i in range(5):
        m.last_loss = float(i)  # written outside every step, never read inside
        f(x)
    assert m._compiled_call.stats["traces"] == 1 and m._compiled_call.stats["compiled_calls"] == 4


def test_training_step_with_module_settings_stays_compiled():
    torchish.manual_seed(0)
    model = torchish.nn.Sequential(torchish.nn.Linear(4, 8), torchish.nn.LayerNorm(8), torchish.nn.Dropout(0.1),
                                   torchish.nn.Linear(8, 2))
    opt = torchish.optim.AdamW(model.parameters(), lr=1e-2)
    sched = torchish.optim.lr_scheduler.StepLR(opt, 2)

    @torchish.compile
    def step(x, y):
        opt.zero_grad()
        loss = torchish.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    x, y = torchish.ones(5, 4), torchish.tensor([0, 1, 0, 1, 1])
    for _ in range(6):
        step(x, y)
        sched.step()
    assert step.stats["traces"] == 1 and step.stats["compiled_calls"] == 5 and step.stats["eager_calls"] == 1


def test_python_side_effect_runs_eagerly_with_a_warning_or_raises_with_fullgraph():
    class M(torchish.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.calls
    m = M()
    f = torchish.compile(m)
    x = torchish.ones(2)
    f(x)
    with pytest.warns(UserWarning, match="changes plain Python state"):
        assert f(x).tolist() == [2.0, 2.0]
    assert f(x).tolist() == [3.0, 3.0] and m.calls == 3 and m._compiled_call.stats["eager_calls"] == 2

    m2 = M()
    g = torchish.compile(m2, fullgraph=True)
    g(x)
    with pytest.raises(GraphBreakError, match="changes plain Python state"):
        g(x)


def test_every_trace_of_a_call_starts_from_the_same_python_values():
    # a state tensor first met during the trace makes the function trace again; the counter moves once per call
    calls = [0]
    late = {}

    def fn(x):
        calls[0] += 1
        if "w" in late:
            x = x * late["w"]
        return x + calls[0]
    f = torchish.compile(fn)
    x = torchish.ones(2)
    f(x)
    late["w"] = torchish.full((2,), 3.0)  # pre-existing when the trace meets it: state found during the trace
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert f(x).tolist() == [5.0, 5.0]
    assert calls[0] == 2



BATCH, X, CFG, NESTED = None, None, None, None


class _Cfg:
    scale = 0.5


def _rebound_step(model, opt):
    opt.zero_grad()
    x, y = BATCH
    loss = ((model(x) - y) ** 2).mean() * CFG.scale + model(X).mean() + NESTED["extra"][1][0].sum()
    loss.backward()
    opt.step()
    return loss


def test_globals_rebound_between_calls_are_read_again_without_retracing():
    """A script that rebinds globals the step reads — a tensor ``X``, a ``BATCH`` tuple of tensors, a dict of tuples
    of lists of tensors ``NESTED``, a fresh config
    object — gets the new tensors every call (the program used the first ones: silently wrong losses), without a
    retrace per call; a new shape compiles for it."""
    global BATCH, X, CFG, NESTED
    runs = []
    for compiled in (False, True):
        torchish.manual_seed(0)
        model = torchish.nn.Linear(3, 2)
        opt = torchish.optim.SGD(model.parameters(), lr=0.1)
        step = torchish.compile(_rebound_step) if compiled else _rebound_step
        losses = []
        for i in range(6):
            n = 4 if i < 5 else 2
            BATCH = (torchish.full((n, 3), float(i)), torchish.full((n, 2), 0.5 * i))
            X = torchish.full((3, 3), -float(i))
            CFG = _Cfg()
            NESTED = {"extra": (None, [torchish.full((2,), 0.1 * i)])}
            losses.append(float(step(model, opt)))
        runs.append(losses)
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-6)
    assert step.stats["retraces"] == 1, step.stats  # the new batch size only


class _Data:
    pass


class _Trainer:
    def __init__(self, model, opt):
        self.model, self.opt, self.data = model, opt, _Data()

    def step(self):
        x, y = self.batch
        self.opt.zero_grad()
        loss = ((self.model(x) + self.data.shift - y) ** 2).mean()
        loss.backward()
        self.opt.step()
        return loss


def test_attributes_rebound_between_calls_are_read_again_without_retracing():
    """Tensors a compiled method reads from its object's attributes (``self.batch = (x, y)``, ``self.data.shift``)
    rebound between calls are read again every call (the program kept the first ones: silently wrong losses),
    without a retrace per call; a new batch size compiles for it."""
    runs = []
    for compiled in (False, True):
        torchish.manual_seed(0)
        model = torchish.nn.Linear(3, 2)
        trainer = _Trainer(model, torchish.optim.SGD(model.parameters(), lr=0.05))
        step = torchish.compile(trainer.step) if compiled else trainer.step
        losses = []
        for i in range(6):
            n = 4 if i < 5 else 2
            trainer.batch = (torchish.full((n, 3), 0.5 * i), torchish.full((n, 2), 0.25 * i))
            trainer.data.shift = torchish.full((2,), -0.1 * i)
            losses.append(float(step()))
        runs.append(losses)
    assert len(set(runs[0])) == 6
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-6)
    assert step.stats["retraces"] == 1, step.stats  # the new batch size only


def test_object_arguments_are_taken_apart_into_inputs_and_guarded_values():
    """A new dataclass batch every step reuses one program (each new object was a new signature: every call ran
    eagerly and the cache kept every batch alive); a changed Python attribute is a new signature; more signatures
    than the cache keeps are forgotten oldest first, with a warning."""
    m, f = _batch_step(torchish, torchish.compile)
    for i in range(6):
        f(_Batch(torchish.full((4, 3), 0.1 * i), torchish.full((4, 1), 0.2 * i)))
    assert f.stats["traces"] == 1 and f.stats["compiled_calls"] == 5 and len(f.entries) == 1, f.stats
    f(_Batch(torchish.ones(4, 3), torchish.zeros(4, 1), weight=2.0))
    assert len(f.entries) == 2
    g = torchish.compile(lambda x, n: x * n)
    x = torchish.ones(2)
    with pytest.warns(RuntimeWarning, match="more than 64 input signatures"):
        for n in range(70):
            assert g(x, n).tolist() == [float(n)] * 2
    assert len(g.entries) == 64 and g.stats["evictions"] == 6
    # an object holding tensors that require grad (parameters) is state, kept whole: its step stays compiled
    model, x = _Data(), torchish.ones(2)
    model.w = torchish.ones(2, requires_grad=True)

    def sgd(model, x):
        (model.w * x).sum().backward()
        with torchish.no_grad():
            model.w -= 0.5 * model.w.grad
            model.w.grad.zero_()
    h = torchish.compile(sgd)
    for _ in range(4):
        h(model, x)
    assert h.stats["compiled_calls"] == 3 and h.stats["eager_calls"] == 1, h.stats
    assert model.w.tolist() == [-1.0, -1.0]


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kind", ["exponential", "onecycle", "plateau", "sequential"])
def test_scheduler_stepped_before_a_graph_break_steps_once(kind):
    """A compiled step that steps its scheduler and then breaks the graph (``float(loss)``, a plateau scheduler
    reading the loss) runs eagerly after the trace is given up: the trace's scheduler step must be undone, or the
    schedule advances twice per call (the learning rates and parameters drifted from torch's)."""
    def run(T, compile_):
        p = T.nn.Parameter(T.tensor([1.0, 2.0]))
        opt = T.optim.SGD([p], lr=0.1, momentum=0.9)
        S = T.optim.lr_scheduler
        sched = {"exponential": lambda: S.ExponentialLR(opt, gamma=0.5),
                 "onecycle": lambda: S.OneCycleLR(opt, max_lr=0.5, total_steps=10),
                 "plateau": lambda: S.ReduceLROnPlateau(opt, factor=0.5, patience=0),
                 "sequential": lambda: S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.5, total_iters=2),
                                                            S.ExponentialLR(opt, gamma=0.9)], milestones=[2])}[kind]()

        def step(x):
            loss = ((p * x).sum() - 1.0) ** 2
            loss.backward()
            opt.step()
            opt.zero_grad()
            if kind != "plateau":
                sched.step()  # (then the graph break)
            value = float(loss)
            if kind == "plateau":
                sched.step(value)
            return value
        f = T.compile(step) if compile_ else step
        out = []
        for i in range(5):
            out.append((f(T.tensor([1.0, 0.5 + i])), opt.param_groups[0]["lr"], p.detach().tolist()))
        return out, sched.last_epoch
    ref, got = run(torch, False), run(torchish, True)
    assert got[1] == ref[1]
    for (rl, rlr, rp), (gl, glr, gp) in zip(ref[0], got[0]):
        np.testing.assert_allclose([gl, glr] + gp, [rl, rlr] + rp, rtol=1e-5)


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("lr", ["float", "tensor"])
def test_scheduler_stepped_in_a_trace_that_is_retried_steps_once(lr):
    """``torchish.compile`` over ``opt.step(); sched.step()`` with the backward outside: the first trace meets the
    new ``.grad`` tensors (state it did not know) and traces again. Each attempt must start from the scheduler as
    it was, or the schedule advanced once per attempt (LinearLR's rate 0.0057 where torch's is 0.01)."""
    def run(T, compile_):
        p = T.nn.Parameter(T.tensor([1.0, 2.0]))
        opt = T.optim.Adam([p], lr=T.tensor(0.01) if lr == "tensor" else 0.01)
        sched = T.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)

        def step():
            opt.step()
            sched.step()
        f = T.compile(step) if compile_ else step
        out = []
        for i in range(4):
            opt.zero_grad()
            ((p * (i + 1.0)).sum() ** 2).backward()
            f()
            out.append([float(opt.param_groups[0]["lr"])] + p.detach().tolist())
        return out, sched.last_epoch
    ref, got = run(torch, False), run(torchish, True)
    assert got[1] == ref[1]
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-5)


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("source", ["dataloader", "dataloader_attribute", "list_iterator", "generator"])
@pytest.mark.parametrize("graph_break", [False, True])
def test_batches_drawn_with_next_inside_a_compiled_step_are_each_drawn_once(source, graph_break):
    """next() on an iterator inside a compiled function: every trace drew a batch (one skipped per call traced;
    a list iterator never settled: RuntimeError after 6 traces) and the program kept the traced batch as a
    constant (every later call returned the same loss). The function runs eagerly instead, as torch's numbers."""
    def run(T, compile_):
        data = T.arange(24.0).reshape(12, 2)
        w = T.nn.Parameter(T.tensor([1.0, -0.5]))
        if source.startswith("dataloader"):
            it = iter(T.utils.data.DataLoader(T.utils.data.TensorDataset(data), batch_size=2))
        elif source == "list_iterator":
            it = iter([(data[2 * i:2 * i + 2],) for i in range(6)])
        else:
            it = ((data[2 * i:2 * i + 2],) for i in range(6))
        holder = type("Holder", (), {})()
        holder.it = it

        def step():
            (x,) = next(holder.it if source == "dataloader_attribute" else it)
            loss = (x * w).sum()
            return float(loss) if graph_break else loss
        f = T.compile(step) if compile_ else step
        return [float(f()) for _ in range(4)]
    assert run(torchish, True) == run(torch, False)
