"""What a compiled function touches: the state recorder.

While ``torchish.compile`` runs a function eagerly (its first call) or traces it, the facade reports to the active
:class:`Recorder` (``STATE.recorder``) every Tensor an op reads, every in-place write, every ``.grad`` assignment,
every Tensor created, every Python hyper-parameter read through :func:`scalar`, and every Module called. A Tensor
that existed before the call started (by its creation serial number) and is read or written is *state*: it becomes
an input of the compiled program and, when written, an output written back after each call.
"""
from __future__ import annotations

import weakref

import jax
import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import STATE, unusual


class Recorder:
    """Collects state during one eager run (``mode="eager"``) or one trace (``mode="trace"``).

    In trace mode the known state Tensors hold tracers; meeting a *concrete* pre-existing Tensor means the state
    set was incomplete: it is noted in ``missing`` and the caller traces again with it included.
    """

    def __init__(self, mode, start_serial, scalar_tracers=None, scalar_start=None):
        self.mode = mode
        self.start = start_serial
        self.reads = {}        # id -> Tensor: pre-existing tensors read
        self.writes = {}       # id -> Tensor: pre-existing tensors written in place (or whose .grad was set)
        self.missing = {}      # trace mode: pre-existing concrete tensors met
        self.originals = {}    # trace mode: id -> (tensor, its fields) of those, as first met: restored after
        self._created = []     # weakrefs to tensors created during the run
        self.scalars = {}      # (id(container), key) -> (container, key)
        self.missing_scalars = {}
        self.scalar_tracers = scalar_tracers or {}
        self.scalar_start = scalar_start or {}  # trace mode: the hyper-parameters' values when the trace began
        self.scalars_written = False           # trace mode: the function changed a hyper-parameter it reads
        self.modules = {}      # id -> Module called during the run
        self.fresh_modules = {}  # id -> Module made during the run (the function's own: not guarded)
        self.optimizers = {}   # id -> Optimizer stepped during the run (its param groups are guarded)
        self.statics = {}      # (id(container), key) -> (container, key): flags read as Python values (guarded)
        self.derived = {}      # (id(container), fn) -> (container, fn): flags computed from numbers (guarded)
        self.sources = {}      # (id(container), key) -> (container, key): where Tensor hyper-parameters were read
        self.backward_ran = False
        self.prev = None

    def __enter__(self):
        self.prev = STATE.recorder
        STATE.recorder = self
        unusual(1)
        return self

    def __exit__(self, *exc):
        STATE.recorder = self.prev
        unusual(-1)
        return False

    # ---- facade callbacks ------------------------------------------------------------------------------
    def read(self, args):
        start = self.start
        for a in args:
            if isinstance(a, Tensor) and a._sn < start:
                if self.mode == "trace":
                    if not isinstance(a._d, jax.core.Tracer):
                        self.missing[id(a)] = a
                        self._snapshot(a)
                else:
                    self.reads[id(a)] = a

    def wrote(self, t):
        """Called BEFORE ``t``'s value, ``.grad`` or graph fields change."""
        if t._sn < self.start:
            self.writes[id(t)] = t
            if self.mode == "trace" and not isinstance(t._v, jax.core.Tracer):
                self._snapshot(t)

    def _snapshot(self, t):
        if id(t) not in self.originals:
            self.originals[id(t)] = (t, t._v, t._gval, t._gfn, t._out_nr, t._rg, t._vc.value)

    def restore(self):
        """Undo what the trace did to concrete pre-existing tensors outside the known state (the trace is repeated
        with them in the state; left alone they would keep tracers: an in-place ``.grad`` accumulation, a new
        ``.grad`` on a parameter not yet known)."""
        for t, v, g, gf, nr, rg, vc in self.originals.values():
            t._v, t._gval, t._gfn, t._out_nr, t._rg = v, g, gf, nr, rg
            t._vc.value = vc
            if t._views:
                for view in list(t._views):
                    view._refresh()

    def created(self, t):
        self._created.append(weakref.ref(t))

    def scalar(self, container, key, value):
        k = (id(container), key)
        if self.mode == "eager":
            self.scalars[k] = (container, key)
            return value
        tracer = self.scalar_tracers.get(k)
        if tracer is None:
            self.missing_scalars[k] = (container, key)
            return value
        start = self.scalar_start.get(k, value)
        if value is not start and value != start:  # set inside the function (a scheduler stepped in it)
            self.scalars_written = True
            return value
        return tracer

    def module(self, m):
        if id(m) not in self.fresh_modules:
            self.modules[id(m)] = m

    def survivors(self):
        """Tensors created during the run that are still alive: after the eager run, state created lazily (Adam's
        moments, new ``.grad`` tensors); after a trace, tensors the function stored outside itself."""
        out = {}
        for r in self._created:
            t = r()
            if t is not None:
                out[id(t)] = t
        return out


def scalar(container, key):
    """Read ``container[key]`` (a Python number such as a learning rate, or a tuple of numbers such as Adam's
    betas) so that ``torchish.compile`` passes it to the compiled program as a value: changing it between calls
    does not retrace."""
    value = container[key]
    rec = STATE.recorder
    if rec is None or not _numeric(value):
        return value
    return rec.scalar(container, key, value)


def _numeric(v):
    if isinstance(v, bool) or isinstance(v, Tensor):
        return False
    if isinstance(v, (int, float, np.integer, np.floating)):  # (numpy too: an lr from a float32 array, lrs[it])
        return True
    return isinstance(v, tuple) and len(v) > 0 and all(_numeric(x) for x in v)


def note_module(module):
    """Called by ``Module.__call__``: the compiled function guards on the module's ``training`` flag."""
    rec = STATE.recorder
    if rec is not None:
        rec.module(module)


def note_optimizer(opt):
    """Called by ``Optimizer`` when it reads a group's hyper-parameters: the compiled function guards on the
    optimizer's param groups (``add_param_group`` between calls)."""
    rec = STATE.recorder
    if rec is not None:
        rec.optimizers[id(opt)] = opt


def static(container, key):
    """Read ``container[key]`` (a flag such as ``maximize`` or ``nesterov``) as a Python value that a compiled
    program bakes in: ``torchish.compile`` guards it, so changing it between calls traces again."""
    value = container[key]
    rec = STATE.recorder
    if rec is not None:
        rec.statics[(id(container), key)] = (container, key)
    return value


def tensor_source(container, key):
    """Note that ``container[key]`` holds the Tensors (a Tensor lr, Tensor betas) a compiled program reads as state:
    ``torchish.compile`` reads the Tensors found there at each call (``load_state_dict`` or ``group["lr"] =
    torch.tensor(...)`` between calls puts new Tensor objects there), and traces again where there are none."""
    rec = STATE.recorder
    if rec is not None:
        rec.sources[(id(container), key)] = (container, key)


def static_derived(container, fn):
    """``fn(container)``: flags a compiled program bakes in that are computed from numbers it otherwise takes as
    values (SGD's ``momentum != 0``, which decides whether there is a momentum buffer at all, while the momentum
    itself is an input a scheduler may cycle): ``torchish.compile`` guards the result, so setting the momentum
    from 0 to 0.9 between calls traces again."""
    value = fn(container)
    rec = STATE.recorder
    if rec is not None:
        rec.derived[(id(container), fn)] = (container, fn)
    return value


def creating_state():
    """Called where a library object is about to create state lazily (an optimizer's per-parameter state): inside
    a trace this interrupts it, and ``torchish.compile`` runs the call eagerly under a recorder instead (see
    ``errors._NeedsRecord``), so the new state starts from concrete values."""
    rec = STATE.recorder
    if rec is not None and rec.mode == "trace":
        from .errors import _NeedsRecord
        raise _NeedsRecord()


def note_backward():
    rec = STATE.recorder
    if rec is not None:
        rec.backward_ran = True
