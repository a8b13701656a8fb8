"""Probes of torchish.compile with PyTorch-style programs, each run three ways — PyTorch eager, torchish eager and
torchish.compile — over several calls (the first records, the next traces, later ones reuse or retrace); the
compiled functions' statistics show which calls ran the program and which ran eagerly.

Fixed:
- Output made while a call was traced (compile.output): ``print("step", x.shape)``, ``sys.stdout``/``sys.stderr``
  writes, ``logging`` records and ``warnings.warn`` in the user's code appeared at the traced call only (twice
  where the state took two traces to settle; ``print("y", y)`` of a tensor wrote ``"y "`` before it broke the
  graph, so the line came out as ``"y y tensor(...)"``), and never at the later calls, which ran the program.
  PyTorch's compiler breaks the graph there, so the text appears at every call; a trace that would write now breaks
  the graph before anything is written, and the function runs eagerly for those inputs (``fullgraph=True`` raises).
- Dicts in arguments and outputs (compile.args): JAX's pytree sorts a dict's keys, so from the second call on the
  function got ``{"y": a, "x": b}`` as ``{"x": b, "y": a}`` (``torch.cat(list(batch.values()))``: silently other
  numbers; ``**kwargs`` reordered the same way) and returned dicts came back with sorted keys; a dict whose keys do
  not sort (``{0: x, "y": y}``) raised a ValueError. Such dicts are now pytree nodes that keep insertion order.
- A module hook registered by the function and never removed (``m.register_forward_hook(f)`` at every call): each
  trace left its hook registered (a call traced twice, two), so the traced call added the wrong number of hooks and
  the program ran with the trace's hooks for good, where each eager call adds one more. The trace's registrations
  are now taken back and such a function runs eagerly (compile.side_effects.ModuleHooks); a hook registered and
  removed within the call still compiles.
- Python values the program bakes in and nothing guarded (compile.pystate, pyvalues, args): class attributes read
  through the class (``Cfg.scale`` of a config namespace), through ``self`` (a class-level ``shift = 1.0`` of a
  Module, and that attribute later set on the instance) or through a classmethod's ``cls``; the globals read by the
  function of a ``functools.partial`` and the objects bound to it; the attributes of a callable object compiled
  directly. Each changed between calls kept the traced value (silently stale numbers); each is now guarded.
  ``@compile`` over ``@staticmethod`` passed the instance as an argument (TypeError), and over ``@classmethod``
  was not callable; both now bind as the descriptor does.
- Default argument values (compile.pystate): a mutable default the function appends to (``hist=[]``) counted the
  trace's append only, and a config dict given as a default (``cfg=CFG``) or ``__defaults__``/``__kwdefaults__``
  changed between calls kept the traced values. Defaults are now read as the function's globals are.
- Objects keeping their attributes in ``__slots__`` (``@dataclass(slots=True)`` configs: no ``__dict__`` to watch)
  as a module attribute, a closure variable or an argument: changes kept the traced values; their slots are now
  guarded as a snapshot (compile.pyvalues.slot_values).
"""
import collections
import contextlib
import dataclasses
import functools
import io
import logging
import sys
import warnings

import pytest

from oracle import compile_three_ways, formula_data as _data, formula_init as _init, needs_torch

pytestmark = needs_torch


def _lin(T, i, o, seed=0):
    return _init(T, T.nn.Linear(i, o), seed=seed)


def _three(case, expect=None):
    """:func:`oracle.compile_three_ways`, the statistics cut to the call counts."""
    return [{k: s[k] for k in ("calls", "eager_calls", "compiled_calls", "retraces")}
            for s in compile_three_ways(case, expect=expect)]


# --- output -----------------------------------------------------------------------------------------------------------
def case_output_every_call(T, jit):
    """print of Python values and of a tensor, writes to stdout/stderr, a logger and a warning, in a train step."""
    m = _lin(T, 3, 2)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    log = logging.getLogger("test_probe_compile7")
    log.propagate, log.level = False, logging.INFO
    logged = io.StringIO()
    log.handlers[:] = [logging.StreamHandler(logged)]

    @jit
    def step(x):
        print("step", x.shape, x.dtype)
        opt.zero_grad()
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
        sys.stdout.write(f"batch {x.shape[0]}\n")
        sys.stderr.write("stepped\n")
        log.info("rows %d", x.shape[0])
        warnings.warn("a step")
        return loss

    @jit
    def show(x):
        y = x * 2
        print("y", y)
        return y + 1
    r = []
    for i in range(3):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r += [step(_data(T, 2, 3, seed=i)), show(_data(T, 3, seed=i)), m.weight]
        r += [out.getvalue(), err.getvalue(), [str(c.message) for c in w if str(c.message) == "a step"]]
    return r + [logged.getvalue()]


def test_output_made_by_the_function_appears_at_every_call():
    step, show = _three(case_output_every_call)  # (its graph-break warnings are among those it records)
    assert step == show == {"calls": 3, "eager_calls": 3, "compiled_calls": 0, "retraces": 0}


def test_output_with_fullgraph_is_an_error_that_writes_nothing(capsys):
    import torchish as torch

    def f(x):
        print("hello")
        return x + 1
    c = torch.compile(f, fullgraph=True)
    c(torch.ones(2))  # (the first call runs eagerly)
    assert capsys.readouterr().out == "hello\n"
    with pytest.raises(RuntimeError, match="(?s)test_probe_compile7.py.*print\\(\\) inside the compiled function"):
        c(torch.ones(2))
    assert capsys.readouterr().out == ""
    assert torch.compile(lambda x: x * 2, fullgraph=True)(torch.ones(2)).tolist() == [2.0, 2.0]


# --- dicts in insertion order -----------------------------------------------------------------------------------------
def case_dicts_in_insertion_order(T, jit):
    """Dict and defaultdict arguments and outputs whose keys are not sorted (JAX's pytree sorts them), nested,
    with keys that do not sort (``{1: ..., "b": ...}``), and keyword arguments given out of order to ``**kwargs``."""
    m = _lin(T, 3, 2)

    @jit
    def f(batch, **opts):
        parts = T.cat(list(batch.values()))  # (in the dict's order, as eager code reads it)
        out = {"loss": m(parts).pow(2).mean(), "acc": parts.mean(), "sub": {"z": parts[0], 1: "one", "a": 2}}
        per = collections.defaultdict(list, {"w": [parts.sum()], "b": [parts[1]]})
        return out, list(batch), list(opts), [v * 1 for v in opts.values()], per
    r = []
    for i in range(3):
        b = {"y": _data(T, 1, 3, seed=i), "x": _data(T, 2, 3, seed=i + 1), 0: _data(T, 1, 3)}
        out, keys, names, vals, per = f(b, scale=_data(T, 2, seed=i), bias=_data(T, 1))
        r += [list(out), out, list(out["sub"]), keys, names, vals, type(per).__name__, list(per), per["new"]]
        d = collections.defaultdict(int, [("b", b["y"]), ("a", b["x"])])
        out, keys, _, _, per = f(d, bias=1.0, scale=2.0)
        r += [list(out), out, keys, list(per), dict(per)]
    return r


def test_dicts_keep_their_insertion_order():
    """``torch.cat(list(batch.values()))`` of ``{"y": .., "x": ..}`` concatenated in sorted key order from the
    second call on (other numbers), and returned dicts came back with sorted keys."""
    f, = _three(case_dicts_in_insertion_order)
    assert f == {"calls": 6, "eager_calls": 2, "compiled_calls": 4, "retraces": 0}


# --- module hooks registered by the function --------------------------------------------------------------------------
def case_module_hooks_registered_inside(T, jit):
    """A forward hook registered and removed in the call (compiled), and one registered at every call and never
    removed (each eager call adds one more: eager)."""
    m = T.nn.Sequential(_lin(T, 3, 4), T.nn.ReLU(), _lin(T, 4, 2, seed=1))

    @jit
    def features(x):
        got = {}
        h = m[1].register_forward_hook(lambda mod, i, o: got.__setitem__("a", o * 1))
        y = m(x)
        h.remove()
        return y, got["a"]

    @jit
    def leaky(x):
        m[2].register_forward_hook(lambda mod, i, o: o + 1)
        return m(x)
    r = []
    for i in range(3):
        r += [*features(_data(T, 2, 3, seed=i)), len(m[1]._forward_hooks)]
    for i in range(3):
        r += [leaky(_data(T, 2, 3, seed=i)), len(m[2]._forward_hooks)]
    return r + [*features(_data(T, 2, 3)), len(m[1]._forward_hooks)]


def test_module_hook_left_registered_by_the_function_runs_eagerly():
    """The hook the trace registered stayed (a second trace of the call added another): the traced call gave
    ``o + 2`` where eager code gives ``o + 1``, and every program call kept the hooks of the trace."""
    features, leaky = _three(case_module_hooks_registered_inside, expect="registers a module hook that it does not")
    assert features == {"calls": 4, "eager_calls": 1, "compiled_calls": 3, "retraces": 1}  # (m[2]'s new hooks)
    assert leaky == {"calls": 3, "eager_calls": 3, "compiled_calls": 0, "retraces": 0}


# --- Python state the program bakes in: class attributes, partials, callable objects -----------------------------------
G = {"scale": 2.0}


def case_class_attributes_and_callables(T, jit):
    """Class attributes read through a class (a config namespace), through ``self`` (a Module's class-level
    setting, later shadowed on the instance) and through a classmethod's ``cls``; a ``functools.partial`` whose
    function reads a global and whose bound object changes; a callable object reading its attributes; ``@compile``
    over ``@staticmethod``/``@classmethod``. Each is changed between calls."""
    class Cfg:
        scale = 2.0

    class Net(T.nn.Module):
        shift = 1.0

        def __init__(self):
            super().__init__()
            self.l = _lin(T, 3, 2)

        def forward(self, x):
            return self.l(x) * Cfg.scale + self.shift

        @jit
        @classmethod
        def offset(cls, x):
            return x + cls.shift

        @jit
        @staticmethod
        def double(x):
            return x * 2

    class Scale:
        def __init__(self):
            self.k = 2.0

        def __call__(self, x):
            return x * self.k

    def f(x, cfg, b):
        return x * G["scale"] + cfg.k + b
    m, s = Net(), Scale()
    cm, cs, cp = jit(m), jit(s), jit(functools.partial(f, cfg=s, b=1.0))
    r = []
    for i in range(4):
        x = _data(T, 2, 3, seed=i)
        r += [cm(x), Net.offset(x), m.offset(x), Net.double(x), m.double(x), cs(x), cp(x)]
        if i == 1:
            Cfg.scale, Net.shift, s.k, G["scale"] = 3.0, -1.0, 4.0, 5.0
        if i == 2:
            m.shift = 0.5
    G["scale"] = 2.0
    return r


def test_class_attributes_partials_and_callable_objects_are_guarded():
    """Each change used to be missed (the program kept the value it was traced with), and ``@compile`` over
    ``@staticmethod`` passed the instance as the first argument (a TypeError)."""
    offset, double, cm, cs, cp = _three(case_class_attributes_and_callables)
    # (each change traces again; m.shift set on the instance too)
    assert offset == {"calls": 8, "eager_calls": 1, "compiled_calls": 7, "retraces": 1}
    assert double == {"calls": 8, "eager_calls": 1, "compiled_calls": 7, "retraces": 0}
    assert cm == {"calls": 4, "eager_calls": 1, "compiled_calls": 3, "retraces": 2}
    assert cs == cp == {"calls": 4, "eager_calls": 1, "compiled_calls": 3, "retraces": 1}


# --- default arguments --------------------------------------------------------------------------------------------------
def case_default_arguments(T, jit):
    """A mutable default the function appends to (``hist=[]``: a Python side effect), a config dict given as a
    default and changed between calls, and ``__defaults__``/``__kwdefaults__`` rebound between calls."""
    CFG = {"k": 2.0}

    def count(x, hist=[]):  # noqa: B006 - the mutable default is the point
        hist.append(1)
        return x * len(hist)

    def scaled(x, cfg=CFG, scale=2.0, *, shift=1.0):
        return x * cfg["k"] * scale + shift
    cc, cs = jit(count), jit(scaled)
    r = []
    for i in range(4):
        x = _data(T, 2, seed=i)
        r += [cc(x), cs(x), cs(x, shift=0.0)]
        if i == 1:
            CFG["k"] = 5.0
        if i == 2:
            scaled.__defaults__, scaled.__kwdefaults__ = (CFG, 3.0), {"shift": -1.0}
    return r + [len(count.__defaults__[0])]


def test_default_arguments_are_guarded():
    """The list appended to counted the trace's append only (``x * 2`` at every later call), and the changed
    config dict and defaults kept the traced values."""
    cc, cs = _three(case_default_arguments, expect="changes plain Python state")
    assert cc == {"calls": 4, "eager_calls": 3, "compiled_calls": 1, "retraces": 0}
    assert cs == {"calls": 8, "eager_calls": 2, "compiled_calls": 6, "retraces": 4}  # (2 signatures x 2 changes)


# --- objects that keep their attributes in __slots__ ----------------------------------------------------------------------
@dataclasses.dataclass(slots=True)
class SlotCfg:
    k: float = 2.0
    act: str = "relu"


def case_slots_configs(T, jit):
    """``@dataclass(slots=True)`` configs (no ``__dict__`` to watch) as a Module attribute, a closure variable and
    an argument, changed between calls."""
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.cfg = SlotCfg()
            self.l = _lin(T, 3, 2)

        def forward(self, x):
            y = self.l(x) * self.cfg.k
            return y.relu() if self.cfg.act == "relu" else y.tanh()
    m, outer = Net(), SlotCfg()
    cm = jit(m)

    @jit
    def f(x, cfg):
        return x * cfg.k + outer.k
    r = []
    for i in range(4):
        x = _data(T, 2, 3, seed=i)
        r += [cm(x), f(x, m.cfg)]
        if i == 1:
            m.cfg.k, outer.k = 3.0, -1.0
        if i == 2:
            m.cfg.act = "tanh"
    return r


def test_slots_objects_are_guarded():
    """Their changes kept the traced values (silently stale numbers)."""
    cm, f = _three(case_slots_configs)
    assert cm == {"calls": 4, "eager_calls": 1, "compiled_calls": 3, "retraces": 2}
    assert f == {"calls": 4, "eager_calls": 1, "compiled_calls": 3, "retraces": 2}  # (the slots as one snapshot)
