"""``torchish.autograd.Function``: user-defined forward/backward, in both PyTorch styles
(``forward(ctx, *args)``, or ``forward(*args)`` + ``setup_context(ctx, inputs, output)``).

As in PyTorch the ``ctx`` object *is* the output's ``grad_fn`` (a node named ``<Class>Backward``): what the forward
stores on it (``save_for_backward``, attributes) is visible as ``y.grad_fn.saved_tensors``, ``y.grad_fn.k``.
``apply`` runs ``forward`` with recording off, then links the outputs to that node, whose backward calls the
user's ``backward`` with Tensors (recording on when ``create_graph=True``, so double backward through a Function
works when its backward is written with differentiable ops). In forward-mode AD (``forward_ad``) the user's
``jvp`` gives the outputs' tangents.

Example::

    >>> class Cube(torchish.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 3 * x ** 2 * g
    >>> y = Cube.apply(torchish.ones(2, requires_grad=True))
"""
from __future__ import annotations

import functools
import weakref

import jax.numpy as jnp

from .._tensor import Tensor
from . import forward_ad, saved_hooks
from .graph import ERR_INFERENCE_SAVED, Node, node_class, saved_origin, _ERR_FREED
from .grad_mode import STATE, no_grad


class FunctionCtx:
    """What ``ctx`` offers to ``forward``/``setup_context``/``backward``/``jvp``: saving tensors and flags."""

    _released = False  # a ctx that is not (yet) a graph node has nothing freed

    def __init__(self):
        self._ctx_init()

    def name(self):
        return type(self).__name__

    def _ctx_init(self):
        self._saved = None
        self._saved_versions = None
        self._saved_out_nrs = None  # {position in saved_tensors: output index} for the saved outputs
        self._packed = None  # per saved tensor, what saved_tensors_hooks' pack hook returned (or None)
        self._saved_forward = None
        self._in_jvp = False
        self.needs_input_grad = ()
        self._non_differentiable = set()
        self._dirty = set()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        """Keep ``tensors`` (or None) for ``backward``; modifying one in place afterwards makes backward fail.
        Only a Function whose graph is recorded checks them (PyTorch never reads what an unrecorded one saved)."""
        for i, t in enumerate(tensors if getattr(self, "_records", True) else ()):
            if t is not None and not isinstance(t, Tensor):
                kind = type(t)
                name = f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type {name}")
        self._saved = tensors
        self._snapshot_versions()

    def _snapshot_versions(self):
        if self._saved is not None:
            self._saved_versions = tuple(t._vc.value if isinstance(t, Tensor) else None for t in self._saved)

    def save_for_forward(self, *tensors):
        """Keep ``tensors`` for ``jvp`` (forward-mode AD)."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_forward expects all arguments to be tensors; but got {i} "
                                f"argument of type {type(t).__name__}")
        self._saved_forward = tensors

    @property
    def saved_tensors(self):
        if self._in_jvp:
            return self._saved_forward if self._saved_forward is not None else ()
        if self._released:
            raise RuntimeError(_ERR_FREED)
        if self._packed is not None:
            return tuple(p.unpack() if p is not None else None for p in self._packed)
        if self._saved is None:
            return ()
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions)):
            if t is not None and t._vc.value != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.type()} {list(t.shape)}]{self._saved_origin(i, t)} is at version "
                    f"{t._vc.value}; expected version {v} instead. Hint: enable anomaly detection to find the "
                    "operation that failed to compute its gradient, with "
                    "torchish.autograd.set_detect_anomaly(True, check_nan=False).")
        return self._saved

    def _saved_origin(self, i, t):
        """PyTorch's ", which is output N of Op," for a stale saved tensor: this Function for one of its outputs,
        else the grad_fn the tensor has now (the op that wrote it); nothing for a tensor without one."""
        out_nr = (self._saved_out_nrs or {}).get(i)
        return saved_origin(*((self, out_nr) if out_nr is not None else (t._gfn, t._out_nr)))

    saved_variables = saved_tensors

    def mark_non_differentiable(self, *tensors):
        """These outputs never require grad; backward receives zeros (or None) for them."""
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        """These inputs were modified in place by ``forward`` (and must be returned as outputs)."""
        self._dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool):
        """With False, backward receives None (instead of zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The grad_fn of a custom Function application; also the ``ctx`` its methods receive."""

    __slots__ = ()

    def release_saved(self):
        self._saved = None
        self._packed = None

    def apply_grads(self, grads, create_graph):
        self.check_alive()
        fn = self.fn_cls
        if self.materialize_grads:
            grads = [g if g is not None or meta is None else Tensor._make(jnp.zeros(meta[0], meta[1]))
                     for g, meta in zip(grads, self.out_meta)]
        res = fn._user_backward()(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        name = type(self).__name__
        slots = self.input_slots
        if len(res) != len(slots):
            if len(res) < len(slots) or any(r is not None for r in res[len(slots):]):
                raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected "
                                   f"{len(slots)}, got {len(res)})")
            res = res[:len(slots)]
        out = []
        for i, (slot, g) in enumerate(zip(slots, res)):
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if slot is None:
                if g is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than None at position "
                                       f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            out.append(g)
        return out


class FunctionMeta(type):
    """Gives every Function subclass its node class, named ``<Class>Backward`` as in PyTorch."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = node_class(BackwardCFunction, name + "Backward")


class Function(metaclass=FunctionMeta):
    """Subclass and define ``forward`` and ``backward`` as static methods; call ``YourFunction.apply(*args)``."""

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself. Instantiating an autograd function will raise an "
                      "error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

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

    # torchish.func.vmap batches a Function's forward and rules itself (PyTorch's generate_vmap_rule=True); a
    # Function must opt in with this flag or a vmap staticmethod, as in PyTorch
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap staticmethod "
                                  "or set generate_vmap_rule=True.")

    @classmethod
    def _uses_setup_context(cls):
        return cls.setup_context is not Function.setup_context

    @classmethod
    def _user_backward(cls):
        has_backward = cls.backward is not Function.backward
        has_vjp = cls.vjp is not Function.vjp
        if has_backward and has_vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                               "should only implement one of them.")
        return cls.vjp if has_vjp else cls.backward

    @classmethod
    def apply(cls, *args, **kwargs):
        if getattr(STATE, "functional_trace", 0):
            if getattr(STATE, "engine_fallback", 0):
                # autograd.functional's vectorised JAX path: make it use the engine, which runs the user's backward
                raise RuntimeError("custom autograd.Function met while tracing for autograd.functional")
            from ._function_transform import apply_in_transform
            return apply_in_transform(cls, args, kwargs)
        ctx = cls._backward_cls.__new__(cls._backward_cls)
        ctx._ctx_init()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        tensors = [a for a in args if isinstance(a, Tensor)]
        record = STATE.grad_enabled and not STATE.inference and any(t._rg for t in tensors)
        ctx._records = record
        slots = [(a._edge() if record and a._rg else None,) if isinstance(a, Tensor) else None for a in args]
        Node.__init__(ctx, tuple(s[0] for s in slots if s is not None), (), saves=True)
        with no_grad(), forward_ad.suspended():
            if cls._uses_setup_context():
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(output, tuple)
        outs = (output,) if single else output
        _check_dirty(ctx, args, outs, record)
        if record:
            if ctx._saved and any(t is not None and t._inf for t in ctx._saved):
                raise RuntimeError(ERR_INFERENCE_SAVED)
            outs = _link_outputs(ctx, cls, slots, tensors, outs)
            if STATE.tracing:  # (inside torchish.compile: the program's own differentiation runs `backward` too)
                from ._function_transform import route_traced_outputs
                route_traced_outputs(ctx, cls, args, outs)
            if ctx._saved:
                ctx._saved_out_nrs = {i: j for i, t in enumerate(ctx._saved) for j, o in enumerate(outs)
                                      if t is not None and t is o}
        ctx._snapshot_versions()
        if record and ctx._saved and saved_hooks.ACTIVE and STATE.saved_hooks:
            _pack_saved(ctx)
        if forward_ad.is_active() and any(forward_ad.get_tangent(t) is not None for t in tensors):
            _forward_tangents(ctx, cls, args, outs)
        return outs[0] if single else tuple(outs)


def _pack_saved(ctx):
    """saved_tensors_hooks: the node keeps what the pack hook returns for each saved tensor, in saving order (after
    the forward, as PyTorch); ``saved_tensors`` unpacks them at each read."""
    hooks = STATE.saved_hooks[-1]
    ctx._packed = tuple(saved_hooks.pack(hooks, t) if t is not None else None for t in ctx._saved)
    ctx._saved = tuple(None for _ in ctx._saved)


def _check_dirty(ctx, args, outs, record):
    if not ctx._dirty:
        return
    out_ids = {id(o) for o in outs if isinstance(o, Tensor)}
    if not ctx._dirty <= out_ids:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    if record:
        for a in args:
            if isinstance(a, Tensor) and id(a) in ctx._dirty and a._gfn is None and a._rg:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        views = any(isinstance(a, Tensor) and id(a) in ctx._dirty and a._view is not None and a._view[2] for a in args)
        if views and sum(isinstance(o, Tensor) for o in outs) > 1:
            raise RuntimeError(
                "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
                "return more than one Tensor. This is not supported by the current autograd engine. You should "
                "either make sure the input is not a view (using .clone() for example) or make your Function only "
                "return one Tensor (potentially splitting it into two Functions: one doing the inplace that returns "
                "that one Tensor and the second one that returns the rest).")


def _link_outputs(ctx, cls, slots, tensors, outs):
    """Make the outputs children of ``ctx`` (new Tensors where an output is an input or a view of one)."""
    ctx.out_meta = tuple((o._v.shape, o._v.dtype) if isinstance(o, Tensor) else None for o in outs)
    ctx.fn_cls = cls
    ctx.input_slots = slots
    input_ids = {id(a) for a in tensors}
    new_outs = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor) or id(o) in ctx._non_differentiable or o._v.dtype.kind not in "fc":
            new_outs.append(o)
            continue
        if id(o) in ctx._dirty:
            if o._view is not None and o._view[2]:
                # a view modified in place: as PyTorch's rebase_history, the base's history becomes a CopySlices
                # wrapping this node (the write is recorded on the base) and the view's grad_fn a view of it. The
                # forward's own write (under no_grad) rebuilt the view's grad_fn: it is the input edge again here,
                # so that the CopySlices bypasses it as PyTorch's does
                edge = next((e for t, e in zip(tensors, ctx.next_edges) if t is o), None)
                if edge is not None:
                    o._gfn, o._out_nr = edge
                o._assign(Tensor._make(o._d, True, ctx, i))
                new_outs.append(o)
                continue
            o._vc.value += 1
        elif id(o) in input_ids or o._gfn is not None or o._view is not None:
            o = _output_view(o, cls, i)  # an input (or a view) returned as is: a new output of this node
        o._gfn, o._out_nr, o._rg = ctx, i, True
        new_outs.append(o)
    return new_outs


def _output_view(src, cls, i):
    """A new output sharing ``src``'s storage: as in PyTorch, a view of src's base that refuses in-place ops
    recorded by autograd (they would bypass the custom backward)."""
    out = Tensor._make(src._d)
    base, chain, diff = src._view if src._view is not None else (src, (), True)
    if diff:
        out._view = (base, chain, True)
        out._vc = src._vc
        if base._views is None:
            base._views = weakref.WeakSet()
        base._views.add(out)
        out._fn_view = (cls.__name__, i)
        out._view_ver = out._vc.value
    return out


def _forward_tangents(ctx, cls, args, outs):
    """Forward-mode AD through a custom Function: the user's ``jvp`` maps input tangents to output tangents."""
    tangents = []
    for a in args:
        if not isinstance(a, Tensor):
            tangents.append(None)
            continue
        t = forward_ad.get_tangent(a)
        tangents.append(t if t is not None else Tensor._make(jnp.zeros(a._v.shape, a._v.dtype)))
    ctx._in_jvp = True
    try:
        with forward_ad.suspended():
            res = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    res = res if isinstance(res, tuple) else (res,)
    for o, t in zip(outs, res):
        if isinstance(o, Tensor) and isinstance(t, Tensor) and id(o) not in ctx._non_differentiable \
                and o._v.dtype.kind in "fc":
            forward_ad.set_tangent(o, t)


class DelayedError(Node):
    """The grad_fn given to results of a ``@once_differentiable`` backward run with ``create_graph=True``:
    differentiating through it raises (PyTorch's ``Error`` node)."""

    __slots__ = ("msg",)

    def __init__(self, msg, n):
        super().__init__(tuple(None for _ in range(n)), (), saves=False)
        self.msg = msg

    def apply_grads(self, grads, create_graph):
        raise RuntimeError(self.msg)


def once_differentiable(fn):
    """Mark a ``backward`` as not differentiable itself: it runs without recording, and differentiating its
    results (after ``create_graph=True``) raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not STATE.grad_enabled or not any(isinstance(a, Tensor) and a._rg for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        node = node_class(DelayedError, "Error")(
            "trying to differentiate twice a function that was marked with @once_differentiable", len(outs))
        node.out_meta = tuple((o._v.shape, o._v.dtype) if isinstance(o, Tensor) else None for o in outs)
        res = tuple(Tensor._make(o._d, True, node, i) if isinstance(o, Tensor) else o for i, o in enumerate(outs))
        return res[0] if single else res
    return wrapper


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
