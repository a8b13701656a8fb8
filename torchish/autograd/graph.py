"""The records of the autograd graph: nodes (``grad_fn``), AccumulateGrad, edges, hooks and version counters.

A :class:`Node` is created by every differentiable op that ran with grad recording on. It holds the edges to the
nodes that produced its inputs (``next_functions``), the metadata (shape, dtype) of each of its outputs, the hooks
registered on it, and whatever the subclass saved for its backward. The engine walks these records; it never
reaches back into Python frames.
"""
from __future__ import annotations

import collections
import itertools
import re
import traceback
from typing import Any, NamedTuple

from .grad_mode import STATE, UNUSUAL

_SEQ = itertools.count()


class VersionCounter:
    """Shared by a tensor and its views; bumped by every in-place write.

    The initial 0 is a class attribute (no ``__init__``): every op output makes one, so creating it stays in C.
    """

    value = 0
    detached = None  # the value at which a non-leaf sharing it was detach_()ed (its saved uses then raise)


# Bumped whenever a hook is registered or removed and whenever a module's attributes, children, parameters or
# buffers change: torchish.compile re-checks the structure and settings its programs were traced for only then.
STRUCT_EPOCH = [0]


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` takes the hook out again (also usable as a context)."""

    _next_id = itertools.count()

    def __init__(self, *hooks_dicts):
        self.id = next(RemovableHandle._next_id)
        self._dicts = hooks_dicts
        STRUCT_EPOCH[0] += 1

    def remove(self):
        STRUCT_EPOCH[0] += 1
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def add_hook(hooks: dict, fn) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


_ERR_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
              "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
              "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
              "if you need to access saved tensors after calling backward.")


ERR_INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in "
                       "inference mode in computation tracked by autograd. To work around this, you can make a clone "
                       "to get a normal tensor and use it in autograd, or use `torchish.no_grad()` instead of "
                       "`torchish.inference_mode()`.")


class Node:
    """A node of the backward graph (PyTorch's ``grad_fn``). Subclasses implement :meth:`apply_grads`.

    Attributes:
        next_edges: per input, ``(node, output_nr)`` of the node that receives that input's gradient, or None.
        out_meta: per output, ``(shape, dtype)``; incoming gradients are checked and cast against it.
    """

    __slots__ = ("next_edges", "out_meta", "seq", "_pre_hooks", "_post_hooks", "_tensor_pre_hooks", "_retains",
                 "_released", "_saves", "_trace", "_metadata", "__weakref__", "__dict__")

    # a node whose backward depends on which node produced its incoming gradient (a sparse embedding's: PyTorch's
    # layout of that gradient): the engine then lists the producers in ``__dict__["producers"]`` (engine.py)
    sees_producers = False

    def __init__(self, next_edges, out_meta, saves=True):
        self.next_edges = next_edges
        self.out_meta = out_meta
        self.seq = next(_SEQ)
        self._pre_hooks = None
        self._post_hooks = None
        self._tensor_pre_hooks = None
        self._retains = None
        self._released = False
        self._saves = saves
        self._trace = traceback.format_stack()[:-3] if UNUSUAL[0] and STATE.anomaly else None

    # ---- what PyTorch shows --------------------------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)

    @property
    def metadata(self) -> dict:
        """A dict the user may fill (PyTorch's ``Node.metadata``), made on first access."""
        try:
            return self._metadata
        except AttributeError:
            self._metadata = {}
            return self._metadata

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # ---- hooks ---------------------------------------------------------------------------------------------
    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node computed its input gradients; it may return
        replacement ``grad_inputs``."""
        if self._post_hooks is None:
            self._post_hooks = {}
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return replacement ``grad_outputs``."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return add_hook(self._pre_hooks, fn)

    def add_tensor_pre_hook(self, output_nr, fn) -> RemovableHandle:
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        hooks = self._tensor_pre_hooks.get(output_nr)
        if hooks is None:  # (an ordered dict: ``t._backward_hooks`` shows it, as PyTorch's)
            hooks = self._tensor_pre_hooks[output_nr] = collections.OrderedDict()
        return add_hook(hooks, fn)

    def set_retain(self, output_nr, fn):
        if self._retains is None:
            self._retains = {}
        self._retains[output_nr] = fn

    # ---- saved values --------------------------------------------------------------------------------------
    def check_alive(self):
        if self._released:
            raise RuntimeError(_ERR_FREED)

    def release(self):
        """Free what was saved for backward (after a backward without retain_graph)."""
        if self._saves:
            self._released = True
            self.release_saved()

    def release_saved(self):
        pass

    def apply_grads(self, grads, create_graph):
        """Gradients of the inputs (one per ``next_edges`` entry, None where unused) from those of the outputs."""
        raise NotImplementedError(f"{self.name()} does not define apply_grads")

    def __call__(self, *grads):
        out = self.apply_grads(list(grads), STATE.grad_enabled)
        return out[0] if len(out) == 1 else tuple(out)


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds the incoming gradient to ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__((), ((variable._v.shape, variable._v.dtype),), saves=False)
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # what PyTorch's grad_fn.name() says for this C++ node

    def apply_grads(self, grads, create_graph):
        return []


_NODE_CLASSES: dict = {}
_CPP_NODES = ("CopySlices", "CopyBackwards", "NotImplemented")  # PyTorch's hand-written C++ nodes: name() gives the C++ class name


def node_class(base, name):
    """A subclass of ``base`` named ``name`` (``MulBackward0``), so ``type(grad_fn).__name__`` reads as PyTorch's."""
    key = (base, name)
    cls = _NODE_CLASSES.get(key)
    if cls is None:
        body = {"__slots__": ()}
        if name in _CPP_NODES:
            cpp = f"torch::autograd::{name}"
            body["name"] = lambda self: cpp
        cls = _NODE_CLASSES[key] = type(name, (base,), body)
    return cls


_BACKWARD_SUFFIX = re.compile(r"Backward(\d*)$")  # (CopyBackwards keeps its name)


def saved_origin(node, output_nr):
    """PyTorch's ``", which is output N of Op,"`` in the error for a saved tensor modified in place: ``node`` is the
    grad_fn the tensor has now (for a saved input) or the node that saved it (for a saved output), named as
    PyTorch's message names it (``AddBackward0`` -> ``Add``, ``TBackward1`` -> ``T1``); nothing without a node."""
    if node is None:
        return ""
    name = _BACKWARD_SUFFIX.sub(lambda m: "" if m[1] in ("", "0") else m[1], node.name())
    return f", which is output {output_nr} of {name},"


def live_tensor(tid, counter):
    """The live Tensor whose ``id`` is ``tid`` and whose version counter is ``counter`` (None if it is gone): the
    saved input an error message names, looked up only when the error is raised (a node keeps values, not
    Tensors, so the forward pays nothing for it)."""
    import gc
    from .._tensor import Tensor
    for obj in gc.get_objects():
        if id(obj) == tid and isinstance(obj, Tensor) and obj._vc is counter:
            return obj
    return None


def anomaly_trace(node) -> str:
    return "".join(node._trace) if node._trace else ""


class GradientEdge(NamedTuple):
    """Where a gradient flows in the graph: ``node`` receives it as its input ``output_nr``
    (``torch.autograd.graph.GradientEdge``). ``torchish.autograd.grad`` accepts one in ``inputs``."""

    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The :class:`GradientEdge` of ``tensor``'s gradient: its ``grad_fn`` (a leaf's AccumulateGrad) and output
    number. The edge stays valid when the tensor is later modified in place (it keeps the node of now)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node, nr = tensor._edge()
    return GradientEdge(node, nr)


from .saved_hooks import (saved_tensors_hooks as saved_tensors_hooks, save_on_cpu as save_on_cpu,  # noqa: E402
                          disable_saved_tensors_hooks as disable_saved_tensors_hooks)
from .multi_hooks import register_multi_grad_hook as register_multi_grad_hook  # noqa: E402
from .saved_mutation import (allow_mutation_on_saved_tensors as allow_mutation_on_saved_tensors,  # noqa: E402
                             increment_version as increment_version)
from .graph_flags import (region_activation_memory_budget as region_activation_memory_budget,  # noqa: E402
                          set_override_stale_capture_stream as set_override_stale_capture_stream,
                          set_warn_on_accumulate_grad_stream_mismatch as set_warn_on_accumulate_grad_stream_mismatch)
