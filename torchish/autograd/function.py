"""``torchish.autograd.Function``: user-defined forward/backward, in both PyTorch styles
(``forward(ctx, *args)``, or ``forward(*args)`` + ``setup_context(ctx, inputs, output)``).

``apply`` runs ``forward`` with recording off, then links the outputs to a node named ``<Class>Backward`` whose
backward calls the user's ``backward`` with Tensors (recording on when ``create_graph=True``, so double backward
through a Function works when its backward is written with differentiable ops).
"""
from __future__ import annotations

import functools

import jax.numpy as jnp

from .._tensor import Tensor
from .graph import Node, node_class
from .grad_mode import STATE, no_grad

_ERR_SAVED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
              "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
              "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
              "if you need to access saved tensors after calling backward.")


class FunctionCtx:
    """The ``ctx`` object: save tensors and flags for backward."""

    def __init__(self):
        self._saved = None
        self._saved_versions = None
        self._released = False
        self.needs_input_grad = ()
        self._non_differentiable = set()
        self._dirty = set()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 is of type "
                                f"{type(t).__name__}")
        self._saved = tensors
        self._saved_versions = tuple((t._vc, t._vc.value) if t is not None else None for t in tensors)

    def save_for_forward(self, *tensors):
        self._saved_forward = tensors

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(_ERR_SAVED)
        if self._saved is None:
            return ()
        for t, v in zip(self._saved, self._saved_versions):
            if t is not None and t._vc.value != v[1]:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.type()} {list(t.shape)}] is at version {t._vc.value}; expected version "
                    f"{v[1]} instead. Hint: enable anomaly detection to find the operation that failed to compute "
                    "its gradient, with torchish.autograd.set_detect_anomaly(True).")
        return self._saved

    saved_variables = saved_tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = bool(value)


class BackwardCFunction(Node):
    """The grad_fn of a custom Function application."""

    __slots__ = ()

    def release_saved(self):
        self.ctx._released = True

    def apply_grads(self, grads, create_graph):
        self.check_alive()
        ctx = self.ctx
        if ctx.materialize_grads:
            grads = [g if g is not None else Tensor._make(jnp.zeros(shape, dt))
                     for g, (shape, dt) in zip(grads, self.out_meta)]
        fn = self.fn_cls
        if getattr(fn.backward, "_once_differentiable", False) and create_graph:
            with no_grad():
                res = fn.backward(ctx, *grads)
        else:
            res = fn.backward(ctx, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n_in = len(self.input_slots)
        if len(res) < n_in:
            raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of gradients (expected "
                               f"{n_in}, got {len(res)})")
        if len(res) > n_in:
            extra = res[n_in:]
            if any(r is not None for r in extra):
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of gradients "
                                   f"(expected {n_in}, got {len(res)})")
            res = res[:n_in]
        out = []
        for slot, g in zip(self.input_slots, res):
            if slot is None:
                continue
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"function {type(self).__name__} returned a gradient of type {type(g).__name__}; "
                                "expected a Tensor or None")
            out.append(g)
        return out


class FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = node_class(BackwardCFunction, name + "Backward")


class Function(metaclass=FunctionMeta):
    """Subclass and define ``forward`` and ``backward`` as static methods; call ``YourFunction.apply(*args)``."""

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self).__name__} should not be instantiated. Methods on autograd functions are all "
                      "static, so you should invoke them on the class itself.", DeprecationWarning, stacklevel=2)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def _uses_setup_context(cls):
        return cls.setup_context is not Function.setup_context

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        tensors = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        record = STATE.grad_enabled and any(t._rg for t in tensors)
        with no_grad():
            if cls._uses_setup_context():
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(output, tuple)
        outs = (output,) if single else output
        if not record:
            return output
        slots = [((a._edge() if a._rg else None),) if isinstance(a, Tensor) else None for a in args]
        edges = tuple(s[0] for s in slots if s is not None)
        # the outputs: fresh Tensors (or the dirty inputs, rebound) linked to the node
        meta = tuple((o._d.shape, o._d.dtype) if isinstance(o, Tensor) else ((), jnp.float32) for o in outs)
        node = cls._backward_cls(edges, meta, saves=True)
        node.ctx = ctx
        node.fn_cls = cls
        node.input_slots = slots
        input_ids = {id(a) for a in tensors}
        new_outs = []
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                new_outs.append(o)
                continue
            if id(o) in ctx._non_differentiable or o._d.dtype.kind not in "fc":
                new_outs.append(o)
                continue
            if id(o) in ctx._dirty:
                o._vc.value += 1
                o._grad_fn, o._out_nr, o._rg = node, i, True
                new_outs.append(o)
                continue
            if id(o) in input_ids or o._grad_fn is not None or o._view is not None:
                o = Tensor._make(o._d)  # an input returned as is becomes a new output (a view in PyTorch)
            o._grad_fn, o._out_nr, o._rg = node, i, True
            new_outs.append(o)
        return new_outs[0] if single else tuple(new_outs)


def once_differentiable(fn):
    """Mark a ``backward`` as not differentiable itself: it runs without recording even with create_graph."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    wrapper._once_differentiable = True
    return wrapper


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
