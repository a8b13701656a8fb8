"""``torchish.autograd.functional``: jacobian, hessian, vjp, jvp, hvp, vhp.

Each is computed the way PyTorch computes it — with the autograd engine (``autograd.grad``), forward products by
the double-backward trick, forward-mode Jacobians with dual tensors — so custom Functions, hooks and
data-dependent Python in the user's function behave exactly as in PyTorch. ``vectorize=True`` (reverse mode) first
tries one vectorised JAX program (``jax.jacrev`` of the function traced to pure JAX) and falls back to the engine
when the function cannot be traced.

Example::

    >>> from torchish.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torchish.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from . import engine, forward_ad
from .grad_mode import STATE, enable_grad, set_grad_enabled

# ----------------------------------------------------------------------------------------------------------------
# helpers shared by the six functions


def _as_tuple(x, arg_name, fn_name):
    """``(was_tuple, tuple_of_tensors)``, with PyTorch's TypeError for anything that is not a Tensor."""
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, el in enumerate(xs):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the {where} has type {type(el)}.")
    return is_tuple, xs


def _prep(xs, create_graph, need_graph):
    """Inputs as the user's function sees them: connected to the caller's graph only with create_graph."""
    out = []
    for x in xs:
        if create_graph and x._rg:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(need_graph))
    return tuple(out)


def _post(res, create_graph):
    if isinstance(res, Tensor):
        return res if create_graph else res.detach()
    return tuple(_post(r, create_graph) for r in res)


def _unpack(res, flags):
    """Undo the tupling of inputs/outputs: ``flags`` is one bool, or (outer, inner) for nested results."""
    if isinstance(flags, bool):
        return res if flags else res[0]
    outer, inner = flags
    if not inner:
        res = tuple(r[0] for r in res)
    return res if outer else res[0]


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None, is_grads_batched=False):
    """``autograd.grad`` over the outputs that require grad; None for every input when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o._rg]
    if not pairs:
        return (None,) * len(inputs)
    return engine.grad(tuple(p[0] for p in pairs), inputs, tuple(p[1] for p in pairs), retain_graph=retain_graph,
                       create_graph=create_graph, allow_unused=True, is_grads_batched=is_grads_batched)


def _zeros_like(x):
    return Tensor._make(jnp.zeros(x._v.shape, x._v.dtype))


_NONE_MSG = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_zeros(grads, refs, strict, create_graph, stage):
    """Replace None gradients by zeros, or raise PyTorch's strict-mode error."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_NONE_MSG[stage].format(i=i))
            g = _zeros_like(refs[i])
        elif strict and create_graph and not g._rg:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _check_rg(tensors, kind, strict):
    """Strict mode: every output (or intermediate derivative) must depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode.")
        if t._rg:
            continue
        if kind == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is independent "
                               "of the input. This is not allowed in strict mode. You should ensure that your "
                               "function is thrice differentiable and that the hessian depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided function "
                               f"with respect to input {i} is independent of the input. This is not allowed in "
                               "strict mode. You should ensure that your function is twice differentiable and that "
                               "the jacobian depends on the inputs (this would be violated by a linear function for "
                               "example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                               "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs must be "
                           "computed in a differentiable manner from the input when running in strict mode.")


def _validate_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if tuple(a.shape) != tuple(b.shape):
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.shape} but got {a.shape}.")


def _prep_v(v, like, like_is_tuple, create_graph, fn_name):
    _, v = _as_tuple(v, "v", fn_name)
    v = _prep(v, create_graph, need_graph=False)
    _validate_v(v, like, like_is_tuple)
    return v


def _v_none_inputs(inputs):
    if len(inputs) != 1 or inputs[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")


# ----------------------------------------------------------------------------------------------------------------
# vector products


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prep(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_rg(outputs, "outputs", strict)
        if v is not None:
            v = _prep_v(v, outputs, out_tuple, create_graph, "vjp")
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
    with set_grad_enabled(bool(create_graph or STATE.grad_enabled)):
        res = _fill_zeros(_grad(outputs, inputs, v, create_graph=create_graph), inputs, strict, create_graph, "back")
    return _unpack(_post(outputs, create_graph), out_tuple), _unpack(_post(res, create_graph), in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick (as PyTorch)."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prep(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _prep_v(v, inputs, in_tuple, create_graph, "jvp")
        else:
            _v_none_inputs(inputs)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_rg(outputs, "outputs", strict)
        # the backward is linear in these, so their (zero) value never matters
        dummies = tuple(_zeros_like(o).requires_grad_(True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _check_rg(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(bool(create_graph or STATE.grad_enabled)):
        res = _grad(grad_inputs, dummies, v, create_graph=create_graph)
        res = _fill_zeros(res, outputs, strict, create_graph, "back_trick")
    return _unpack(_post(outputs, create_graph), out_tuple), _unpack(_post(res, create_graph), out_tuple)


def _scalar_output(func, inputs, fn_name, strict):
    out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_rg(outputs, "outputs", strict)
    if out_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar function."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prep(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _prep_v(v, inputs, in_tuple, create_graph, "vhp")
        else:
            _v_none_inputs(inputs)
        outputs = _scalar_output(func, inputs, "vhp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_rg(jac, "jacobian", strict)
    with set_grad_enabled(bool(create_graph or STATE.grad_enabled)):
        res = _fill_zeros(_grad(jac, inputs, v, create_graph=create_graph), inputs, strict, create_graph,
                          "double_back")
    return _unpack(_post(outputs, create_graph), False), _unpack(_post(res, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar function, by the double-backward trick (as PyTorch)."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prep(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _prep_v(v, inputs, in_tuple, create_graph, "hvp")
        else:
            _v_none_inputs(inputs)
        outputs = _scalar_output(func, inputs, "hvp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_rg(jac, "jacobian", strict)
        dummies = tuple(_zeros_like(x).requires_grad_(True) for x in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _check_rg(jac, "hessian", strict)
    with set_grad_enabled(bool(create_graph or STATE.grad_enabled)):
        res = _fill_zeros(_grad(double_back, dummies, v, create_graph=create_graph), inputs, strict, create_graph,
                          "double_back_trick")
    return _unpack(_post(outputs, create_graph), False), _unpack(_post(res, create_graph), in_tuple)


# ----------------------------------------------------------------------------------------------------------------
# jacobian and hessian


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                           "together. Please either set `strict=False` or `vectorize=False`.")
    if vectorize and not create_graph:
        fast = _jax_jacobian(func, inputs)
        if fast is not None:
            return fast
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prep(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_rg(outputs, "outputs", strict)
        rows = tuple(_jacobian_rows(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
    return _unpack(_post(rows, create_graph), (out_tuple, in_tuple))


def _jacobian_rows(i, out, inputs, create_graph, strict):
    """d out / d inputs[j] for every j, one backward per element of ``out``."""
    from ..ops.join import stack
    per_input = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.numel()):
        vj = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, x) in enumerate(zip(vj, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. This "
                                       "is not allowed in strict mode.")
                g = _zeros_like(x)
            elif strict and create_graph and not g._rg:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode when create_graph=True.")
            per_input[j].append(g)
    res = []
    for rows, x in zip(per_input, inputs):
        shape = tuple(out.shape) + tuple(x.shape)
        res.append(stack(rows).reshape(shape) if rows else Tensor._make(jnp.zeros(shape, x._v.dtype)))
    return tuple(res)


def _jacfwd(func, inputs, strict, vectorize):
    """Forward-mode Jacobian: one pass with dual tensors per input element (PyTorch requires vectorize=True)."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    from ..ops.join import stack
    columns = []  # per input j, per element: tuple of output tangents
    out_tuple, outputs = None, None
    for j, x in enumerate(inputs):
        cols = []
        for k in range(x.numel()):
            basis = jnp.zeros((x.numel(),), x._v.dtype).at[k].set(1).reshape(x._v.shape)
            with forward_ad.dual_level():
                duals = tuple(forward_ad.make_dual(y, Tensor._make(basis) if i == j else _zeros_like(y))
                              for i, y in enumerate(inputs))
                out_tuple, outs = _as_tuple(func(*duals), "outputs", "jacobian")
                prims = [forward_ad.unpack_dual(o) for o in outs]
                outputs = tuple(p.primal for p in prims)
                cols.append(tuple(p.tangent.detach() if p.tangent is not None else _zeros_like(p.primal)
                                  for p in prims))
        columns.append(cols)
    rows = []
    for i, out in enumerate(outputs):
        row = []
        for j, x in enumerate(inputs):
            shape = tuple(out.shape) + tuple(x.shape)
            if columns[j]:
                t = stack([c[i] for c in columns[j]], dim=-1).reshape(shape)
            else:
                t = Tensor._make(jnp.zeros(shape, out._v.dtype))
            row.append(t)
        rows.append(tuple(row))
    return _unpack(tuple(rows), (out_tuple, in_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs`` (``H[i][j]``: ``inputs[i].shape +
    inputs[j].shape``)."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if vectorize and not create_graph and outer_jacobian_strategy == "reverse-mode":
        fast = _jax_hessian(func, inputs, in_tuple)
        if fast is not None:
            return fast

    def single_output(*xs):
        out = _scalar_output(func, xs, "hessian", strict)[0]
        return out.reshape(())

    def jac_func(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(x.requires_grad_(True) for x in xs)
        jac = jacobian(single_output, xs, create_graph=True)
        _check_rg(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (in_tuple, in_tuple))


# ----------------------------------------------------------------------------------------------------------------
# vectorised fast path: the function traced to pure JAX, differentiated by jax.jacrev


class _NotTraceable(Exception):
    """Raised inside the trace when the function needs the engine (a custom Function, a value-dependent op)."""


def _pure(func):
    from ..ops.tracing import transform_scope

    def f(*arrays):
        with transform_scope(engine_fallback=True):
            out = func(*[Tensor._make(a) for a in arrays])
        if isinstance(out, Tensor):
            return out._d
        if isinstance(out, tuple) and all(isinstance(o, Tensor) for o in out):
            return tuple(o._d for o in out)
        raise _NotTraceable()
    return f


def _try_jax(thunk):
    if forward_ad.is_active() or STATE.tracing:
        return None
    try:
        return thunk()
    except Exception:  # noqa: BLE001 - any failure to trace: the engine path gives PyTorch's behaviour and errors
        return None


def _jax_jacobian(func, inputs):
    if not isinstance(inputs, (Tensor, tuple)) or not all(isinstance(x, Tensor) for x in
                                                          (inputs if isinstance(inputs, tuple) else (inputs,))):
        return None
    in_tuple = isinstance(inputs, tuple)
    xs = inputs if in_tuple else (inputs,)

    def run():
        f = _pure(func)
        vals = [x._d for x in xs]
        shapes = jax.eval_shape(f, *vals)
        out_tuple = isinstance(shapes, tuple)
        for s in (shapes if out_tuple else (shapes,)):
            if not jnp.issubdtype(s.dtype, jnp.inexact):
                raise _NotTraceable()
        jac = jax.jacrev(f, argnums=tuple(range(len(xs))))(*vals)
        rows = jac if out_tuple else (jac,)
        res = tuple(tuple(Tensor._make(j) for j in row) for row in rows)
        return _unpack(res, (out_tuple, in_tuple))
    return _try_jax(run)


def _jax_hessian(func, inputs, in_tuple):
    def run():
        f = _pure(func)
        vals = [x._d for x in inputs]
        shape = jax.eval_shape(f, *vals)
        if isinstance(shape, tuple) or shape.size != 1 or not jnp.issubdtype(shape.dtype, jnp.inexact):
            raise _NotTraceable()

        def scalar(*a):
            return f(*a).reshape(())
        argnums = tuple(range(len(inputs)))
        h = jax.jacrev(jax.jacrev(scalar, argnums=argnums), argnums=argnums)(*vals)
        res = tuple(tuple(Tensor._make(hij) for hij in row) for row in h)
        return _unpack(res, (in_tuple, in_tuple))
    return _try_jax(run)
