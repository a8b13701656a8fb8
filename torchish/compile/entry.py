"""One input signature of a compiled function (:class:`_Entry`): the state its program reads and writes, the
programs kept for it, and the guards that say whether a program still fits the state before a call."""
from __future__ import annotations

import operator

from ..autograd.graph import STRUCT_EPOCH
from . import pyguard, pyvalues
from .state import _GRAD, _NONES, _OWN_REFS, _REQUIRES_GRAD, _TRAINING, _VALUE, _flags

VARIANTS = 8  # programs kept per input signature for different guards (PyTorch's cache_size_limit is 8)


def scalar_kind(v):
    """The type of a hyper-parameter, or of each number of a tuple of them (Adam's betas)."""
    return tuple(map(type, v)) if type(v) is tuple else type(v)


class _Entry:
    """One input signature of a compiled function."""

    def __init__(self):
        self.calls = 0
        self.eager = False          # fall back to eager (graph break allowed by fullgraph=False)
        self.state = []             # state Tensors, in a fixed order
        self.scalars = []           # (container, key)
        self.modules = []
        self.executable = None
        self.lowered = None
        self.donate = None          # (donated, kept) input indices when written state is donated
        self.feed = None            # the same as indices of the state (not of its distinct arrays, see uniq)
        self.check_outputs = 0      # how many outputs of the program are its value checks' (see compile.checks)
        self.scalar_cache = {}      # scalar index -> (Python value, device array)
        self.scalar_last = None     # (scalars, their objects at the last call, the values passed for them)
        self.scalar_kinds = ()      # the types of the scalars the program was traced for (int or float: its dtypes)
        self.info = None
        self.guard = None           # (state shapes and dtypes, _flags) the program was traced for
        self.seen = []              # the state values the guard last saw (or the last run wrote)
        self.grads_seen = None      # the state's `.grad` objects when their presence last matched the guard
        self.written_tensors = []   # the state tensors the program writes, in its outputs' order
        self.grads_of_args = False  # whether the program sets the .grad of an argument (not only of state)
        self.compile_time = 0.0
        self.split = {}             # state tensor id -> label: shared arrays that a run splits (_unstable)
        self.uniq = None            # state indices passed to the program when some tensors share an input
        self.pairs = []             # (i, j): state tensors i and j must hold one array for the program to fit
        self.own_refs = _OWN_REFS   # expected reference counts of the donated values (_donated_values)
        self.written_out = None     # program output of each written tensor when outputs are shared
        self.variants = []          # programs traced before for other guards (train/eval, .grad None or not)
        self.grad_links = []        # (i, j): state[j] is the .grad of state[i] (the program's `.grad` slot)
        self.link_of = {}           # i -> j of grad_links
        self.written_links = False  # whether a .grad slot of grad_links is also written state
        self.other_grads = False    # whether the program sets a .grad to None or to other state (not only new ones)
        self.mode_writes = []       # (module, training): the train/eval switches the function makes
        self.side_effects = None    # tensors the traced call stored away (its program also returns their values)
        self.replay = None          # (dict, key) where each stored tensor goes again after every call
        self.scalar_override = None  # the traced call's hyper-parameters when the function changes them
        self.py_guard = None        # the plain Python values the program was traced with (pyguard.Guard)
        self.optimizers = []        # the optimizers the function steps
        self.returned = set()       # plain classes of objects the first call returned (see args.returned_classes)
        self.struct = None          # (function, value, epoch checked): modules' children and hooks, param groups
        self.opt_state = None       # pyguard.OptimizerState: the optimizers' per-parameter state it was traced with
        self.py_changed = False     # whether the traced call changed one of them itself (a Python side effect)
        self.sources = []           # (global/closure item, [(key, state index)]): where state tensors were read
        self.check = None           # (failed, details, inputs, kept, host): the program's value checks (compile.checks)
        self.check_uniq = None      # the state indices whose values the traced step (and its checks) took
        self.check_seen = None      # weak references to the values the checks last passed on

    def stash(self):
        """Keep the current program as a variant (its guards no longer hold, but may again: a module switched
        back to training, ``.grad`` set to None every other call by gradient accumulation)."""
        v = _Entry.__new__(_Entry)
        v.__dict__.update(self.__dict__)
        v.variants = None
        v.split, v.scalar_cache, v.scalar_last = dict(self.split), dict(self.scalar_cache), None
        v.seen = [None] * len(self.state)  # no value is vouched for: the guard compares in full
        v.grads_seen = None
        self.variants = (self.variants + [v])[-VARIANTS:]

    def load(self, v):
        """Make the stashed variant ``v`` the current program (the current one is stashed first)."""
        self.variants.remove(v)
        self.stash()
        keep = {"calls": self.calls, "eager": self.eager, "variants": self.variants}
        self.__dict__.update(v.__dict__)
        self.__dict__.update(keep)

    def guard_key(self):
        return (tuple((t._v.shape, t._v.dtype) for t in self.state), _flags(self))

    def rebind_grads(self):
        """The program reads and writes ``p.grad`` through the state tensor that was ``p``'s ``.grad`` when it was
        traced. A ``.grad`` replaced since (``p.grad = torch.zeros_like(p)`` outside, or a new ``.grad`` made by a
        call after ``zero_grad()``) takes that tensor's place in the state."""
        state = self.state
        moved = [(j, state[i]._gval) for i, j in self.grad_links
                 if state[i]._gval is not state[j] and state[i]._gval is not None]
        if not moved:
            return
        ids = {id(t) for t in state}
        if any(id(g) in ids for j, g in moved):
            return  # the grad is also other state: the guard decides (the flags and values no longer fit)
        state = list(state)
        for j, g in moved:
            state[j] = g
        self.state = state
        self.written_tensors = [state[i] for i in self.info["written"]]

    def sources_hold(self):
        """:meth:`rebind_sources`, after a check that every global and closure variable still holds the tensor the
        state has there (the common case: nothing was rebound)."""
        state = self.state
        for item, paths in self.sources:
            v = pyvalues.value(item)
            for key, j in paths:
                if (v if not key else pyguard.tensor_at(v, key)) is not state[j]:
                    return self.rebind_sources()
        return True

    def rebind_sources(self):
        """The tensors now held by the globals and closure variables the program read tensors from (``x = ...``
        or ``batch = (x, y)`` rebound between calls) take their predecessors' places in the state; the guard
        below then checks their shapes and dtypes. False (retrace) where such a name no longer holds a tensor
        there, or where the tensor is linked to a ``.grad`` in the state."""
        state, new = self.state, None
        for item, paths in self.sources:
            v = pyvalues.value(item)
            for key, j in paths:
                t = pyguard.tensor_at(v, key)
                if t is None:
                    return False
                if t is not state[j]:
                    if j in self.link_of or j in self.link_of.values():
                        return False
                    if new is None:
                        new = list(state)
                    new[j] = t
        if new is not None:
            if len({id(t) for t in new}) != len(new):  # one tensor in two places now: trace for that
                return False
            self.state = new
            self.written_tensors = [new[i] for i in self.info["written"]]
        return True

    def rebind_buffers(self):
        """The buffers the function rebinds (see side_effects._replayable) as they are now: another program of the
        function (another signature or variant) or the script may have rebound them since. False (retrace) where
        such a buffer now is another state tensor."""
        state = None
        for d, k, j in self.replay:
            if j is None:
                continue
            t = pyguard.slot_value(d, k)
            if t is not self.state[j]:
                if t is None or any(t is s for s in self.state):
                    return False
                if state is None:
                    state = list(self.state)
                state[j] = t
        if state is not None:
            self.state = state
            self.written_tensors = [state[i] for i in self.info["written"]]
        return True

    def guards_hold(self):
        """Whether the compiled program still fits the state. The values the last run left (or the trace saw) are
        compared by identity first: the same array objects cannot have changed shape or dtype, so only a value
        replaced outside the function (``p.mul_(0.5)``, ``load_state_dict``) costs the full comparison. The plain
        Python values the trace read (``self.scale``, a global) must still be the ones it was traced with."""
        if self.py_guard is not None and not self.py_guard():
            return False
        if self.replay and not self.rebind_buffers():
            return False
        if self.sources and not self.sources_hold():
            return False
        if self.struct is not None and self.struct[2] != STRUCT_EPOCH[0]:  # something was (re)registered
            if self.struct[0]() != self.struct[1]:
                return False
            self.struct = self.struct[:2] + (STRUCT_EPOCH[0],)
        if self.opt_state is not None and not self.opt_state():  # (opt.state.clear() between calls)
            return False
        if self.scalars and not self.scalar_kinds_hold():
            return False
        if self.grad_links:
            self.rebind_grads()
        vals = list(map(_VALUE, self.state))
        if not all(map(operator.is_, vals, self.seen)):
            if self.guard_key() != self.guard or not all(vals[i] is vals[j] for i, j in self.pairs):
                return False
            self.seen = vals
            self.grads_seen = list(map(_GRAD, self.state))
            return True
        return self.flags_hold()

    def scalar_kinds_hold(self):
        """Whether the hyper-parameters passed as values still have the Python types the program was traced for:
        a weight decay set from ``0`` to ``0.1`` (or an lr from ``0.1`` to ``1``) is an int64 input where the program
        takes a float64 one, or the reverse, so it traces again. The last call's objects vouch for their types."""
        now = [c[k] for c, k in self.scalars]
        last = self.scalar_last
        if last is not None and last[0] is self.scalars and all(map(operator.is_, now, last[1])):
            return True
        return tuple(map(scalar_kind, now)) == self.scalar_kinds

    def flags_hold(self):
        """``_flags(self) == self.guard[1]``, with the presence of each ``.grad`` vouched for by identity: the same
        ``.grad`` objects as when it last matched (the run before wrote them) cannot have come or gone."""
        state, (rg, _, training) = self.state, self.guard[1]
        seen = self.grads_seen
        if seen is not None and all(map(operator.is_, map(_GRAD, state), seen)):
            return tuple(map(_REQUIRES_GRAD, state)) == rg and tuple(map(_TRAINING, self.modules)) == training
        if _flags(self) != self.guard[1]:
            return False
        self.grads_seen = list(map(_GRAD, state))
        return True

    def note_grads(self):
        """After a run wrote the ``.grad`` of the state: vouch for them in the next guard where their presence is
        the one the program was traced for."""
        grads = list(map(_GRAD, self.state))
        self.grads_seen = grads if tuple(map(operator.is_, grads, _NONES)) == self.guard[1][1] else None

    def switch_variant(self):
        """Whether a program traced before for this signature fits the state now; it becomes the current one."""
        for v in reversed(self.variants):
            if v.guards_hold():
                self.load(v)
                return True
        return False
