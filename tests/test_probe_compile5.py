"""Probes of torchish.compile with training and inference steps, each run three ways — PyTorch eager, torchish
eager and torchish.compile — over several calls, so that the state a compiled call writes back (parameters,
``.grad``, buffers, optimizer state) is what the next call reads; the compiled functions' statistics show when
they retrace.

Fixed: a Python float baked into a program was matched by ``==``, so ``-0.0`` reused the program traced for
``0.0`` (``1 / (x * s)`` gave inf where PyTorch gives -inf), as an argument (the cache key), a module attribute
or a global/closure value (the guards); and a NaN argument, unequal to itself, made every call a new signature
(each ran eagerly, the cache filled with them). Floats are now keyed by their bits (compile.args, compile.pystate).
``requires_grad_`` set by the function on a parameter (``a.requires_grad_(not freeze)`` with a flag argument) was
undone after each compiled call (the trace's flags were restored, and no call set them again), so ``a.weight``
stayed frozen after an unfreezing call, and ``x.requires_grad_()`` on an argument (saliency maps, input
gradients) left the caller's ``x.requires_grad`` False; the program's writes of these flags are now made again
after each call, as its train/eval switches are. A compiled call that wrote state in another dtype or shape than it read
(``w.data = w.data.to(x.dtype)``) left the next call's guard vouching for the new value by identity: the program
compiled for the old dtype was called with it and JAX raised a TypeError; such a call now makes the next guard
compare in full, so it retraces or switches to a program traced for that state (compile.function).
"""
import warnings

import numpy as np
import pytest

import torchish
from oracle import assert_same, formula_data as _data, formula_init as _init, needs_torch, torch

pytestmark = needs_torch


def _lin(T, i, o, seed=0):
    return _init(T, T.nn.Linear(i, o), seed=seed)


def _three(case, eager=True):
    """``case(T, jit)`` run by PyTorch (``jit`` the identity), by torchish eagerly (with ``eager``) and by torchish
    with ``torchish.compile``: the results must match PyTorch's. Returns the compiled functions' statistics."""
    def ident(fn=None, **kw):
        return fn if fn is not None else (lambda f: f)
    made = []

    def jit(fn=None, **kw):
        if fn is None:
            return lambda f: jit(f, **kw)
        made.append(torchish.compile(fn, **kw))
        return made[-1]
    ref = case(torch, ident)
    if eager:
        assert_same(ref, case(torchish, ident), "eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no graph break, no retrace warning expected)
        got = case(torchish, jit)
    assert_same(ref, got, "compiled")
    return [dict(getattr(c, "stats", None) or c._compiled_call.stats) for c in made]


def _counts(stats):
    return {k: stats[k] for k in ("calls", "eager_calls", "compiled_calls", "retraces")}


# --- floats baked into programs ------------------------------------------------------------------------------------
def case_signed_zero_and_nan(T, jit):
    """-0.0 after 0.0 as an argument, a numpy float argument, a module attribute and a global's entry; NaN
    arguments (a new object each call)."""
    class Scaled(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.s = 0.0

        def forward(self, x):
            return 1 / (x * self.s)
    m = Scaled()
    cm = jit(m)
    cfg = {"s": 0.0}

    @jit
    def f(x, s):
        return 1 / (x * s), x * s

    @jit
    def g(x):
        return 1 / (x * cfg["s"])
    x = _data(T, 3).abs() + 0.5
    r = [f(x, 0.0), f(x, 0.0), f(x, -0.0), f(x, -0.0), f(x, 0.0)]
    r += [f(x, np.float64(0.0)), f(x, np.float64(0.0)), f(x, np.float64(-0.0))]
    r += [f(x, float("nan")) for _ in range(3)]
    r += [cm(x), cm(x), g(x), g(x)]
    m.s, cfg["s"] = -0.0, -0.0
    r += [cm(x), cm(x), g(x), g(x)]
    m.s, cfg["s"] = float("nan"), float("nan")
    r += [cm(x), cm(x), g(x)]
    cfg["s"] = float("nan")  # (another NaN object)
    return r + [g(x)]


def test_signed_zero_and_nan_python_floats():
    cm, f, g = _three(case_signed_zero_and_nan, eager=False)
    # f: 0.0, -0.0, numpy's 0.0 and -0.0 and NaN are five signatures, each recorded eagerly once
    assert _counts(f) == {"calls": 11, "eager_calls": 5, "compiled_calls": 6, "retraces": 0}
    # the module's and the global's -0.0, then NaN, retrace once each; a new NaN object does not
    assert _counts(cm) == _counts(g) == {"calls": 6, "eager_calls": 1, "compiled_calls": 5, "retraces": 2}


# --- flags and dtypes the function itself writes ---------------------------------------------------------------------
def case_freeze_by_argument(T, jit):
    a, b = _lin(T, 3, 3), _lin(T, 3, 1, seed=1)
    opt = T.optim.SGD(list(a.parameters()) + list(b.parameters()), lr=0.1, momentum=0.9)

    @jit
    def step(x, freeze):
        a.requires_grad_(not freeze)
        opt.zero_grad()
        loss = b(a(x).relu()).pow(2).sum()
        loss.backward()
        opt.step()
        return loss
    x = _data(T, 4, 3)
    r = []
    for f in (False, False, True, True, False, False):
        r += [step(x, f), a.weight.requires_grad, a.bias.requires_grad, a.weight, b.weight, a.weight.grad]
    return r


def test_requires_grad_set_inside_is_set_after_each_call():
    s, = _three(case_freeze_by_argument)
    # per flag: recorded, traced; the unfreezing call retraces (the flag it starts from is new), the next one
    # switches back to the first program
    assert _counts(s) == {"calls": 6, "eager_calls": 2, "compiled_calls": 4, "retraces": 1}


def case_state_retyped_by_the_call(T, jit):
    w = T.ones(3)

    @jit
    def f(x):
        w.data = (w.data * 2).to(x.dtype)
        return w * x
    x = _data(T, 3, dtype=T.float64)
    r = []
    for dt in (T.float32, T.float32, T.float64, T.float64, T.float32, T.float32, T.float32):
        r += [f(x.to(dt)), w.dtype]
    return r + [w]


def test_state_written_in_another_dtype():
    s, = _three(case_state_retyped_by_the_call, eager=False)
    assert _counts(s) == {"calls": 7, "eager_calls": 2, "compiled_calls": 5, "retraces": 1}


def case_argument_requires_grad_inside(T, jit):
    """Saliency: the function makes its input require grad, backpropagates into it and into the model."""
    m = _lin(T, 3, 2)

    @jit
    def saliency(x):
        x.requires_grad_(True)
        m(x).tanh().sum().backward()
        return x.grad.abs()

    @jit
    def input_grad(x):
        x.requires_grad_()
        y = m(x).pow(2).sum()
        return y, T.autograd.grad(y, x)[0]
    r = []
    for s in range(3):
        x, z = _data(T, 4, 3, seed=s), _data(T, 4, 3, seed=s + 5)
        r += [saliency(x), x.requires_grad, x.grad, m.weight.grad, input_grad(z), z.requires_grad, z.grad]
    return r


def test_argument_made_to_require_grad_inside():
    for s in _three(case_argument_requires_grad_inside):
        assert _counts(s) == {"calls": 3, "eager_calls": 1, "compiled_calls": 2, "retraces": 0}
