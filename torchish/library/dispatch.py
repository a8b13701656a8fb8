"""Calling a user-defined operator: PyTorch's dispatcher order, for the keys torchish has.

1. The arguments are bound to the schema (missing, extra and mistyped ones raise PyTorch's RuntimeErrors).
2. A ``CompositeImplicitAutograd`` kernel runs as it is: autograd goes through the torch code inside it.
3. Meta tensors run the fake implementation (or a ``Meta`` kernel) and nothing else (:mod:`.fake`); then a
   ``register_autocast`` rule (:mod:`.autocast`) and, under ``torchish.func.vmap``, a ``register_vmap`` rule
   (:mod:`.vmap`) apply.
4. Autograd: an op with an autograd formula (every ``custom_op`` has one slot; ``register_autograd`` fills it) runs
   through a generated :class:`torchish.autograd.Function` when an input requires grad; backward through a custom
   op without a formula raises PyTorch's error. An op with an ``Autograd`` kernel calls that kernel instead.
5. The backend kernel for the tensors' device (``CPU``...), else ``CompositeExplicitAutograd``, runs below
   autograd (with the arguments PyTorch's dispatcher would hand it: converted, trailing defaults left out).
   Arguments the schema marks ``Tensor(a!)`` get their version bumped (and NumPy writes into them are kept), and
   a custom op may not return one of its inputs (PyTorch's aliasing check) unless tagged ``Tag.inplace`` (it
   returns its first argument) or ``Tag.out`` (its keyword-only buffers, never differentiated).

Inside ``torchish.compile`` (tensors holding tracers) an op with a fake implementation is opaque, as under
``torch.compile``: the kernel runs on the host through ``jax.pure_callback``, with the fake implementation giving
the output shapes, so a kernel that calls ``.numpy()`` works inside a compiled step. An op without one is traced
through (its body is torch code that torchish can trace); reading values there raises PyTorch's "no fake impl"
error. Under ``torchish.func.vmap`` the same holds, the host kernel running once per sample; under the
differentiating transforms (grad, jvp, jacrev...) a custom op is refused as functorch refuses it.
"""
from __future__ import annotations

import contextlib

import jax
import numpy as np
from jax.tree_util import tree_flatten as flatten, tree_unflatten

from ..autograd.grad_mode import STATE, no_grad
from .schema import NO_DEFAULT

BACKEND_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "xpu": "XPU", "mps": "MPS"}


_TENSOR = []  # (torchish.Tensor, MetaArray), imported on first use: this module loads before the Tensor layer


def _tensor_type():
    if not _TENSOR:
        from .._meta import MetaArray
        from .._tensor import Tensor
        _TENSOR.extend((Tensor, MetaArray))
    return _TENSOR[0]


def _is_meta(t):
    return type(t._v) is _TENSOR[1]


def flat_tensors(values):
    T = _tensor_type()
    out = []
    for v in values:
        if isinstance(v, T):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(t for t in v if isinstance(t, T))
    return out


def split_args(e, values):
    """Schema-ordered values -> (positional args, keyword-only kwargs), as the dispatcher hands them to kernels."""
    pos = [v for a, v in zip(e.schema.arguments, values) if not a.kwarg_only]
    kw = {a.name: v for a, v in zip(e.schema.arguments, values) if a.kwarg_only}
    return pos, kw


def call(e, args, kwargs):
    if e.schema is None:
        raise RuntimeError(f"operator {e.qualname} does not exist")
    values = e.schema.bind(args, kwargs)
    pos, kw = split_args(e, values)
    implicit = e.kernels.get("CompositeImplicitAutograd")
    if implicit is not None:
        return _invoke(e, implicit, pos, kw)
    tensors = flat_tensors(values)
    if any(_is_meta(t) for t in tensors):
        from .fake import run_fake
        return run_fake(e, pos, kw)
    if e.autocast:
        from .autocast import call_with_autocast
        return call_with_autocast(e, pos, kw, _below_autocast)
    return _below_autocast(e, pos, kw)


def _below_autocast(e, pos, kw):
    if e.vmap_fn is not None and getattr(STATE, "vmap_level", 0):
        from .vmap import call_with_rule
        return call_with_rule(e, pos, kw, _autograd_and_backend)
    return _autograd_and_backend(e, pos, kw)


def _autograd_and_backend(e, pos, kw):
    tensors = flat_tensors(list(pos) + list(kw.values()))
    has_formula = e.custom is not None or e.backward is not None
    if e.custom is not None and e.has_tag("out"):  # (out= variants never differentiate, as PyTorch's)
        if STATE.grad_enabled and any(t.requires_grad for t in tensors):
            raise RuntimeError(f"{e.opname}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        with no_grad():
            return backend(e, pos, kw)
    if has_formula and getattr(STATE, "functional_trace", 0) > getattr(STATE, "vmap_level", 0):
        # torchish.func.grad/jvp/jacrev...: the generated Function meets the transform, which refuses it for want
        # of a setup_context staticmethod, as functorch refuses PyTorch's (never a silent zero gradient)
        return autograd_function(e).run(pos, kw)
    if has_formula and STATE.grad_enabled and any(t.requires_grad for t in flat_tensors(pos)):
        return autograd_function(e).run(pos, kw)
    autograd_kernel = None
    if any(k.startswith("Autograd") for k in e.kernels):
        autograd_kernel = e.kernels.get("Autograd") or e.kernels.get(f"Autograd{_backend_key(e, tensors, pos)}")
    # (with grad mode off, as inside the autograd.Function such a kernel applies, the backend kernel runs: PyTorch's
    # kernels get there with torch._C._AutoDispatchBelowAutograd, which torchish has no need for)
    if autograd_kernel is not None and STATE.grad_enabled:
        return _invoke(e, autograd_kernel, pos, kw)
    if has_formula:
        with no_grad():  # (PyTorch runs the kernel below autograd)
            return backend(e, pos, kw)
    out = backend(e, pos, kw)  # no autograd kernel: the torch code inside the kernel records the graph
    if STATE.grad_enabled and not STATE.tracing:  # (a hook added inside torchish.compile would be a side effect)
        _warn_on_backward(e, tensors, out)
    return out


def _warn_on_backward(e, inputs, out):
    """PyTorch's autograd fallback for an op with no autograd kernel: gradients flow through the graph its kernel
    recorded, with a warning when the backward reaches the op's outputs."""
    import warnings
    ids = {id(t) for t in inputs}
    msg = (f"{e.qualname}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
           "backprop through it. This may lead to silently incorrect behavior. This behavior is deprecated and will "
           "be removed in a future version of PyTorch. If your operator is differentiable, please ensure you have "
           "registered an autograd kernel to the correct Autograd key (e.g. DispatchKey::Autograd, "
           "DispatchKey::CompositeImplicitAutograd). If your operator is not differentiable, or to squash this "
           "warning and use the previous behavior, please register torch::CppFunction::makeFallthrough() to "
           "DispatchKey::Autograd.")

    def hook(grad):
        warnings.warn(msg, UserWarning, stacklevel=2)

    for o in flat_tensors(out if isinstance(out, (list, tuple)) else [out]):
        if o.requires_grad and o.grad_fn is not None and id(o) not in ids:
            o.register_hook(hook)


def _invoke(e, kernel, pos, kw):
    fn, with_keyset = kernel
    pos, kw = kernel_args(e, pos, kw)
    return fn(None, *pos, **kw) if with_keyset else fn(*pos, **kw)


def kernel_args(e, pos, kw):
    """The arguments a kernel receives: as PyTorch's dispatcher, trailing positional arguments equal to their
    defaults and keyword-only ones equal to theirs are left out (the kernel's own defaults then apply)."""
    args = [a for a in e.schema.arguments if not a.kwarg_only]
    n = len(pos)
    while n and _is_default(args[n - 1], pos[n - 1], NO_DEFAULT):
        n -= 1
    named = {a.name: a for a in e.schema.arguments if a.kwarg_only}
    return list(pos[:n]), {k: v for k, v in kw.items() if not _is_default(named[k], v, NO_DEFAULT)}


def _is_default(a, v, no_default):
    if a.default is no_default or isinstance(v, _tensor_type()) or type(v) is not type(a.default):
        return False
    return v == a.default


def _backend_key(e, tensors, pos):
    if tensors:
        return BACKEND_KEYS.get(tensors[0].device.type, tensors[0].device.type.upper())
    for a, v in zip(e.schema.arguments, pos):  # a factory op: its Device argument picks the kernel
        if a.base == "Device" and v is not None:
            from .._device import device
            return BACKEND_KEYS.get(device(v).type, "CPU")
    return "CPU"


def find_kernel(e, tensors, pos):
    key = _backend_key(e, tensors, pos)
    kernel = e.kernels.get(key) or e.kernels.get("CompositeExplicitAutograd")
    if kernel is None:
        raise NotImplementedError(
            f"Could not run '{e.qualname}' with arguments from the '{key}' backend. This could be because the "
            f"operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
            f"using custom build). '{e.qualname}' is only available for these backends: {sorted(e.kernels)}.")
    return kernel


def backend(e, pos, kw):
    from ..ops import registry as _ops
    if _ops.flop_hook is not None:  # (a FlopCounterMode: the op counts as one, by its registered formula)
        return _ops.flop_hook.custom_op(e, pos, kw, _backend)
    return _backend(e, pos, kw)


def _backend(e, pos, kw):
    tensors = flat_tensors(list(pos) + list(kw.values()))
    kernel = find_kernel(e, tensors, pos)
    if any(isinstance(t._v, jax.core.Tracer) for t in tensors):
        from .fake import fake_impl
        if fake_impl(e) is not None:
            return _host_call(e, kernel, pos, kw)
        from ..ops.tracing import ConcretizationError
        try:  # (no fake impl: the kernel's torch code is traced into the program, if it can be)
            out = _invoke(e, kernel, pos, kw)
        except ConcretizationError as err:  # (it reads values: PyTorch's torch.compile needs the fake impl too)
            raise no_fake_error(e) from err
    else:
        with numpy_write_back(_mutated(e, pos, kw) if e.custom is not None else []):
            out = _invoke(e, kernel, pos, kw)
    if e.custom is not None:  # (custom_op registers PyTorch's ADInplaceOrView kernel: one more version bump)
        for t in _mutated(e, pos, kw):
            t._vc.value += 1
        if e.has_tag("inplace"):
            if out is not pos[0]:
                raise RuntimeError(f"{e.opname} (with implementation in {e.custom._module()}): An operator tagged "
                                   "with torch.Tag.inplace must return its first argument.")
        elif e.has_tag("out"):
            if not _returns_outs(e, kw, out):
                raise RuntimeError(f"{e.opname} (with implementation in {e.custom._module()}): An operator tagged "
                                   "with torch.Tag.out must return its mutable keyword-only arguments.")
        else:
            check_aliasing(e, tensors, out)
    return out


def out_names(e):
    """The keyword-only buffers of a ``Tag.out`` op, in schema order."""
    return [a.name for a in e.schema.arguments if a.kwarg_only and a.is_write]


def _returns_outs(e, kw, out):
    names = out_names(e)
    if len(names) == 1:
        return out is kw[names[0]]
    return isinstance(out, tuple) and len(out) == len(names) and all(o is kw[n] for o, n in zip(out, names))


@contextlib.contextmanager
def numpy_write_back(tensors):
    """PyTorch's ``x.numpy()`` shares ``x``'s memory, so a kernel may write a mutated argument through NumPy
    (``np.sin(x_np, out=x_np)``, the custom-op tutorial's in-place example). torchish's ``numpy()`` returns a copy:
    for the arguments the schema marks mutable, the arrays their ``numpy()`` hands out during the kernel are
    written back afterwards when the kernel changed them."""
    handed = []
    for t in tensors:
        def numpy(*, force=False, _t=t):
            arr = type(_t).numpy(_t, force=force)
            handed.append((_t, arr, arr.copy()))
            return arr
        t.__dict__["numpy"] = numpy  # (an instance attribute shadows the method for this call only)
    try:
        yield
    finally:
        for t in tensors:
            t.__dict__.pop("numpy", None)
    for t, arr, before in handed:
        if not np.array_equal(arr, before, equal_nan=True):
            from ..ops.from_data import from_numpy
            with no_grad():
                t.copy_(from_numpy(arr))
            t._vc.value -= 1  # (a write through NumPy bumps no version in PyTorch: only the op's own bump counts)


def _mutated(e, pos, kw):
    """The tensors the schema says the op writes (``Tensor(a!)``, lists of them included)."""
    out = []
    values = dict(zip([a.name for a in e.schema.arguments if not a.kwarg_only], pos)) | kw
    for a in e.schema.arguments:
        if a.is_write and values.get(a.name) is not None:
            out.extend(flat_tensors([values[a.name]]))
    return out


def _storage_root(t):
    while t._view is not None:
        t = t._view[0]
    return t


def check_aliasing(e, inputs, out):
    roots = {id(_storage_root(t)) for t in inputs}
    seen = set()
    for o in flat_tensors(out if isinstance(out, (list, tuple)) else [out]):
        r = id(_storage_root(o))
        if r in roots or r in seen:
            raise RuntimeError(
                f"{e.opname} (with implementation in {e.custom._module()}): The output of this custom operator (1) "
                "must not also be an input to this custom operator and (2) may not alias any inputs to this custom "
                "operator or other returns. The most common way to trigger this error is if we have y = "
                "custom_op(x) and y and x are the same Tensor. Please instead return a clone of the offending "
                "output tensor(s) (e.g. return x.clone()) or refactor the custom operator to not return y.")
        seen.add(r)


def no_fake_error(e):
    if e.custom is not None:
        return RuntimeError(f"There was no fake impl registered for {e.custom}. This is necessary for "
                            f"torch.compile/export/fx tracing to work. Please use "
                            f"`{e.custom._init_fn.__name__}.register_fake` to add an fake impl.")
    return RuntimeError(e.dotted)  # (PyTorch's UnsupportedOperatorException, a RuntimeError, says only the name)


def _host_call(e, kernel, pos, kw):
    """The op inside a trace: its kernel runs on the host (``jax.pure_callback``), shapes from the fake impl."""
    from .. import empty
    from .._tensor import wrap
    T = _tensor_type()
    leaves, spec = flatten((list(pos), kw))
    idx = [i for i, v in enumerate(leaves) if isinstance(v, T)]
    metas = list(leaves)
    for i in idx:
        metas[i] = empty(tuple(leaves[i].shape), dtype=leaves[i].dtype, device="meta")
    from .fake import run_fake
    meta_pos, meta_kw = tree_unflatten(spec, metas)
    fake_out = run_fake(e, meta_pos, meta_kw, mode="trace")
    out_leaves, out_spec = flatten(fake_out)
    out_idx = [i for i, v in enumerate(out_leaves) if isinstance(v, T)]
    mutated = _mutated(e, pos, kw)
    shapes = [jax.ShapeDtypeStruct(tuple(out_leaves[i].shape), out_leaves[i].dtype.np) for i in out_idx]
    shapes += [jax.ShapeDtypeStruct(tuple(t.shape), t.dtype.np) for t in mutated]
    mut_pos = [next(k for k, i in enumerate(idx) if leaves[i] is t) for t in mutated]
    # the callback stays in the program: it must hold no traced tensor (torchish.compile takes tensors of the
    # trace that outlive it for values the function stored away)
    consts = [None if isinstance(v, T) else v for v in leaves]

    def host(*arrays):
        from ..ops.from_data import from_numpy
        with no_grad():
            vals = list(consts)
            for i, a in zip(idx, arrays):
                vals[i] = from_numpy(np.array(a))
            p, k = tree_unflatten(spec, vals)
            with numpy_write_back([vals[idx[j]] for j in mut_pos]):
                res_leaves, _ = flatten(_invoke(e, kernel, p, k))
            res = [res_leaves[i] for i in out_idx] + [vals[idx[j]] for j in mut_pos]
            return [np.asarray(r.detach().numpy(), dtype=s.dtype) for r, s in zip(res, shapes)]

    # (under torchish.func.vmap the kernel runs once per sample, as PyTorch's vmap fallback for custom ops does)
    results = jax.pure_callback(host, shapes, *[leaves[i]._d for i in idx], vmap_method="sequential")
    for t, v in zip(mutated, results[len(out_idx):]):
        with no_grad():
            t.copy_(wrap(v))
    if e.has_tag("inplace"):  # (the op's result is its written argument itself)
        return pos[0]
    if e.has_tag("out"):
        names = out_names(e)
        return kw[names[0]] if len(names) == 1 else tuple(kw[n] for n in names)
    outs = list(out_leaves)
    for i, v in zip(out_idx, results[:len(out_idx)]):
        outs[i] = wrap(v)
    return tree_unflatten(out_spec, outs)


def autograd_function(e):
    if e.function_cls is None:
        from .autograd import make_function
        e.function_cls = make_function(e)
    return e.function_cls
