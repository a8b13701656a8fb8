"""``gradcheck`` / ``gradgradcheck``: compare the gradients autograd computes with central finite differences.

``gradcheck(func, inputs)`` builds, for every output and every input that requires grad, the Jacobian twice — by
finite differences (``(f(x + eps) - f(x - eps)) / 2 eps``, one pair of calls per input element) and by autograd
(one vector-Jacobian product per output element, or one Jacobian-vector product per input element with
``check_forward_ad``) — and checks ``|analytical - numerical| <= atol + rtol * |numerical|``. Use float64 inputs:
in float32 the finite differences are too noisy. ``gradgradcheck`` does the same for the gradient itself.

Complex numbers follow PyTorch's gradcheck (its "Gradcheck mechanics" note): a complex output is checked as two
functions, its imaginary part and then its real part; for a complex input ``z = x + yj`` the numerical entry is the
conjugate Wirtinger derivative ``ds/dx + 1j * ds/dy`` (one central difference along each part), which is what
backward returns; forward mode splits the complex inputs instead (``x -> f(x + y_0 j)`` and ``y -> f(x_0 + yj)``).

Example::

    >>> x = torchish.randn(3, dtype=torchish.float64, requires_grad=True)
    >>> torchish.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
"""
from __future__ import annotations

import sys
import types
import warnings

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from . import engine, forward_ad


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` and :func:`gradgradcheck` when a check fails."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable(outs):
    return tuple(o for o in _as_tuple(outs) if isinstance(o, Tensor) and o._rg)


def _np(t):
    return np.asarray(t.detach()._concrete())


def _check_inputs(inputs):
    any_grad = False
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and x._rg:
            if x._v.dtype not in (np.float64, np.complex128):
                warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or "
                              "complex. This check will likely fail if all the inputs are not of double precision "
                              "floating point or complex. ", UserWarning, stacklevel=4)
            any_grad = True
    if not any_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


def _const(value):
    """A Tensor holding the numpy array ``value`` (a transfer, not a computation: nothing to compile)."""
    return Tensor._make(jnp.asarray(value))


def _zeros(t):
    return _const(np.zeros(t._v.shape, np.asarray(t._d).dtype))


def _with(inputs, i, value):
    """``inputs`` with input ``i`` replaced by a tensor holding ``value`` (same requires_grad)."""
    x = inputs[i]
    new = _const(value.astype(x._v.dtype).reshape(x._v.shape))
    if x._rg:
        new.requires_grad_(True)
    return inputs[:i] + (new,) + inputs[i + 1:]


def _flat(t):
    """A tensor's values as a flat float64 (complex128 when complex) numpy vector."""
    v = _np(t)
    return v.astype(np.complex128 if np.iscomplexobj(v) else np.float64).reshape(-1)


def _eval_flat(func, inputs):
    """All outputs of ``func(*inputs)`` (tensors only), flattened by :func:`_flat`."""
    outs = _as_tuple(func(*inputs))
    return [_flat(o) for o in outs if isinstance(o, Tensor)]


def _central(func, inputs, j, base, step, eps):
    """Central differences of every output of ``func`` along ``step`` (a vector shaped as input ``j``'s flat
    values, real or imaginary) from ``base``, divided by ``2 eps``."""
    fp = _eval_flat(func, _with(inputs, j, base + step))
    fm = _eval_flat(func, _with(inputs, j, base - step))
    return [(a - b) / (2 * eps) for a, b in zip(fp, fm)]


def _numerical(func, inputs, diff_idx, eps):
    """``num[j][i]``: (numel of input j, numel of output i) matrix of central differences, per input in
    ``diff_idx`` and per tensor output of ``func``; for a complex input, the conjugate Wirtinger derivative
    ``ds/dx + 1j * ds/dy`` of its (real) outputs."""
    res = []
    for j in diff_idx:
        base = _flat(inputs[j])
        cols = []
        for k in range(base.size):
            step = np.zeros(base.size)
            step[k] = eps
            ds_dx = _central(func, inputs, j, base, step, eps)
            if np.iscomplexobj(base):
                ds_dy = _central(func, inputs, j, base, step * 1j, eps)
                ds_dx = [dx + 1j * dy for dx, dy in zip(ds_dx, ds_dy)]
            cols.append(ds_dx)
        n_out = len(cols[0]) if cols else len(_eval_flat(func, inputs))
        res.append([np.stack([c[i] for c in cols]) if cols else np.zeros((0, 0)) for i in range(n_out)])
    return res


def _analytical_rows(output, diff_inputs):
    """``rows[j]``: (numel of input j, numel of output) Jacobian from one vjp per output element, plus whether
    every gradient had its input's dtype and shape."""
    n = output.numel()
    rows = [np.zeros((x.numel(), n), np.complex128 if x.is_complex() else np.float64) for x in diff_inputs]
    types_ok, sizes_ok = True, True
    for k in range(n):
        basis = np.zeros(n, dtype=np.asarray(output._d).dtype)
        basis[k] = 1
        g_out = _const(basis.reshape(output._v.shape))
        grads = engine.grad(output, diff_inputs, g_out, retain_graph=True, allow_unused=True)
        for j, (g, x) in enumerate(zip(grads, diff_inputs)):
            if g is None:
                continue
            types_ok = types_ok and g.dtype == x.dtype
            if tuple(g.shape) != tuple(x.shape):
                sizes_ok = False
                continue
            rows[j][:, k] = _flat(g)
    return rows, types_ok, sizes_ok


def _allclose(a, n, rtol, atol):
    return a.shape == n.shape and bool(np.all(np.abs(a - n) <= atol + rtol * np.abs(n)))


def _mismatch(i, j, n, a, forward=False, part=None):
    """PyTorch's message; ``part`` ("real"/"imaginary") when the output (backward) or input (forward) it names
    is one part of a complex one."""
    mode = "computed with forward mode " if forward else ""
    whose = "inputs" if forward else "outputs"
    prefix = f"While considering the {part} part of complex {whose} only, " if part else ""
    return (f"{prefix}Jacobian {mode}mismatch for output {i:d} with respect to input {j:d},\n"
            f"numerical:{Tensor._make(n)}\nanalytical:{Tensor._make(a)}\n")


def _check_backward(inputs, outputs, out_pos, diff_idx, num, rtol, atol, nondet_tol, check_grad_dtypes, part):
    diff_inputs = tuple(inputs[j] for j in diff_idx)
    for i, o in enumerate(outputs):
        rows, types_ok, sizes_ok = _analytical_rows(o, diff_inputs)
        again, _, _ = _analytical_rows(o, diff_inputs)
        if not types_ok and check_grad_dtypes:
            raise GradcheckError("Gradient has dtype mismatch")
        if not sizes_ok:
            raise GradcheckError("Analytical gradient has incorrect size")
        if any(np.max(np.abs(a - b), initial=0.0) > nondet_tol for a, b in zip(rows, again)):
            raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                                 "multiple times gives different values, although analytical gradient matches "
                                 f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")
        for j, a in enumerate(rows):
            n = num[j][out_pos[i]]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch(i, j, n, a, part=part(i)))


def _check_forward(func, inputs, outputs, out_pos, diff_idx, num, rtol, atol, check_grad_dtypes, part):
    """Forward-mode Jacobian (one dual pass per input element) against the numerical one."""
    for jj, j in enumerate(diff_idx):
        x = inputs[j]
        cols = []
        for k in range(x.numel()):
            basis = np.zeros(x.numel(), dtype=np.asarray(x._d).dtype)
            basis[k] = 1
            with forward_ad.dual_level():
                dual = forward_ad.make_dual(x.detach(), _const(basis.reshape(x._v.shape)))
                args = inputs[:j] + (dual,) + inputs[j + 1:]
                outs = [o for o in _as_tuple(func(*args)) if isinstance(o, Tensor)]
                col = []
                for o in outs:
                    t = forward_ad.unpack_dual(o).tangent
                    if t is not None and check_grad_dtypes and t.dtype != o.dtype:
                        raise GradcheckError("Forward AD gradient has dtype mismatch.")
                    col.append(np.zeros(o.numel()) if t is None else _flat(t))
            cols.append(col)
        for i in range(len(outputs)):
            a = np.stack([c[out_pos[i]] for c in cols]) if cols else np.zeros((0, 0))
            n = num[jj][out_pos[i]]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch(i, jj, n, a, forward=True, part=part(j)))


def _unit(rng, n):
    u = rng.uniform(-1, 1, n)
    return u / max(np.linalg.norm(u), 1e-12)


def _check_fast(func, inputs, outputs, out_pos, diff_idx, eps, rtol, atol, part):
    """Fast mode: compare ``v^T J u`` for random ``u`` (inputs) and ``v`` (outputs) instead of whole Jacobians.
    A complex input has a ``u`` for each part: ``v^T (ds/dx u_r + 1j ds/dy u_i)`` against ``re(g) u_r + 1j im(g)
    u_i`` of backward's (conjugate Wirtinger) gradient ``g``."""
    rng = np.random.default_rng(0)
    diff_inputs = tuple(inputs[j] for j in diff_idx)
    for jj, j in enumerate(diff_idx):
        x = inputs[j]
        base = _flat(x)
        ur = _unit(rng, x.numel())
        ds = _central(func, inputs, j, base, eps * ur, eps)
        if x.is_complex():
            ui = _unit(rng, x.numel())
            ds = [dx + 1j * dy for dx, dy in zip(ds, _central(func, inputs, j, base, eps * 1j * ui, eps))]
        for i, o in enumerate(outputs):
            v = rng.uniform(-1, 1, o.numel())
            n = np.array(v @ ds[out_pos[i]])
            g = engine.grad(o, diff_inputs, _const(v.astype(np.asarray(o._d).dtype).reshape(o._v.shape)),
                            retain_graph=True, allow_unused=True)[jj]
            g = np.zeros(x.numel()) if g is None else _flat(g)
            a = np.array(g.real @ ur + 1j * (g.imag @ ui) if x.is_complex() else g @ ur)
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch(i, jj, n, a, part=part(i)) + "\nThe above quantities relating the "
                                     "numerical and analytical jacobians are computed in fast mode.")


def _check_mul_by_grad_output(outputs, diff_inputs):
    grads = engine.grad(outputs, diff_inputs, [_zeros(o) for o in outputs], allow_unused=True)
    for g, x in zip(grads, diff_inputs):
        if g is None:
            continue
        if np.any(_np(g) != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(g.shape) != tuple(x.shape):
            raise GradcheckError("grad is incorrect size")


def _check_undefined_grad(func, inputs, diff_inputs):
    """Backward must cope with outputs that receive no gradient at all (None), giving None or zeros."""
    from .function import Function

    class _UndefinedGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return None

    outs = _differentiable(func(*inputs))
    try:
        grads = engine.grad(tuple(_UndefinedGrad.apply(o) for o in outs), diff_inputs,
                            [_zeros(o) for o in outs], allow_unused=True)
    except RuntimeError as e:
        raise GradcheckError('Expected backward function to handle undefined output grads. Please look at "Notes '
                             'about undefined output gradients" in "tools/autograd/derivatives.yaml"') from e
    if any(g is not None and np.any(_np(g) != 0) for g in grads):
        raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are undefined "
                             'or zero. Please look at "Notes about undefined output gradients" in '
                             '"tools/autograd/derivatives.yaml"')


def _check_batched_grad(outputs, diff_inputs):
    """``is_grads_batched=True`` must equal one ``autograd.grad`` per row of the batched grad_outputs."""
    rng = np.random.default_rng(1)
    for i, o in enumerate(outputs):
        batch = rng.uniform(-1, 1, (2,) + tuple(o.shape)).astype(np.asarray(o._d).dtype)
        got = engine.grad(o, diff_inputs, _const(batch), retain_graph=True,
                          allow_unused=True, is_grads_batched=True)
        for b in range(2):
            ref = engine.grad(o, diff_inputs, _const(batch[b]), retain_graph=True, allow_unused=True)
            for j, (g, r) in enumerate(zip(got, ref)):
                if (g is None) != (r is None) or (g is not None and not np.allclose(_np(g)[b], _np(r))):
                    raise GradcheckError(f"For output {i} and input {j}:\nbatched grad computed incorrectly: the "
                                         "result of is_grads_batched=True differs from one backward per grad_output.")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences (``torch.autograd.gradcheck``).

    Returns True when every check passes; otherwise raises :class:`GradcheckError` (or returns False with
    ``raise_exception=False``).
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_batched_grad, check_forward_ad, check_backward_ad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _outputs_of(func, inputs):
    """``(outputs, out_pos, diff_idx)``: the outputs of ``func(*inputs)`` that require grad, their positions
    among its tensor outputs, and the positions of the inputs that require grad."""
    tensor_outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]
    out_pos = [k for k, o in enumerate(tensor_outs) if o._rg]
    diff_idx = [j for j, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg]
    return tuple(tensor_outs[k] for k in out_pos), out_pos, diff_idx


def _parts(func, complex_idx, inputs=None):
    """``[("imaginary", fn, args), ("real", fn, args)]``: ``func`` giving the imaginary, then the real part of
    its complex outputs (``inputs`` None: backward mode), or taking the imaginary, then the real part of the
    complex inputs at ``complex_idx`` as real tensors ``args``, the other part held at its value in ``inputs``
    (forward mode)."""
    if inputs is None:
        def of_outputs(part):
            def fn(*args):
                return tuple(getattr(o, part) if isinstance(o, Tensor) and o.is_complex() else o
                             for o in _as_tuple(func(*args)))
            return fn
        return [("imaginary", of_outputs("imag"), None), ("real", of_outputs("real"), None)]

    def of_inputs(rebuild):
        def fn(*args):
            return func(*(rebuild(a, inputs[i]) if i in complex_idx else a for i, a in enumerate(args)))
        return fn
    return [("imaginary", of_inputs(lambda y, z: z.real + y * 1j),
             tuple(x.imag if i in complex_idx else x for i, x in enumerate(inputs))),
            ("real", of_inputs(lambda x, z: x + z.imag * 1j),
             tuple(x.real if i in complex_idx else x for i, x in enumerate(inputs)))]


def _check_jacobians(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, check_forward_ad,
                     check_backward_ad, fast_mode):
    """The Jacobian checks, with complex outputs (backward mode) and complex inputs (forward mode) split into
    their imaginary and real parts as PyTorch's ``_gradcheck_real_imag`` does."""
    outputs, _, _ = _outputs_of(func, inputs)
    if check_backward_ad:
        complex_out = [i for i, o in enumerate(outputs) if o.is_complex()]
        for part, fn, _ in _parts(func, complex_out) if complex_out else [(None, func, None)]:
            outs, out_pos, diff_idx = _outputs_of(fn, inputs)
            name = lambda i, part=part: part if i in complex_out else None  # noqa: E731
            if fast_mode:
                _check_fast(fn, inputs, outs, out_pos, diff_idx, eps, rtol, atol, name)
            else:
                num = _numerical(fn, inputs, diff_idx, eps)
                _check_backward(inputs, outs, out_pos, diff_idx, num, rtol, atol, nondet_tol, check_grad_dtypes,
                                name)
    if check_forward_ad and not fast_mode:
        complex_in = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.is_complex()]
        for part, fn, args in _parts(func, complex_in, inputs) if complex_in else [(None, func, inputs)]:
            outs, out_pos, diff_idx = _outputs_of(fn, args)
            num = _numerical(fn, args, diff_idx, eps)
            name = lambda j, part=part: part if j in complex_in else None  # noqa: E731
            _check_forward(fn, args, outs, out_pos, diff_idx, num, rtol, atol, check_grad_dtypes, name)


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
               check_batched_grad, check_forward_ad, check_backward_ad, fast_mode):
    _check_inputs(inputs)
    outputs, out_pos, diff_idx = _outputs_of(func, inputs)
    if not outputs:
        for per_input in _numerical(func, inputs, diff_idx, eps):
            if any(np.any(n != 0) for n in per_input):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    _check_jacobians(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, check_forward_ad,
                     check_backward_ad, fast_mode)
    if not check_backward_ad:
        return True
    diff_inputs = tuple(inputs[j] for j in diff_idx)
    if check_batched_grad:
        _check_batched_grad(outputs, diff_inputs)
    _check_mul_by_grad_output(outputs, diff_inputs)
    if check_undefined_grad:
        _check_undefined_grad(func, inputs, diff_inputs)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False) -> bool:
    """Check second derivatives: :func:`gradcheck` of ``(inputs, grad_outputs) -> autograd.grad(func(inputs),
    inputs, grad_outputs, create_graph=True)`` (``torch.autograd.gradgradcheck``). Random ``grad_outputs`` in
    [-1, 1) are drawn from torchish's generator when not given."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        from ..ops.random import rand
        from .. import _dtype
        grad_outputs = tuple(
            (rand(tuple(o.shape), dtype=o.dtype if o.is_floating_point() or o.is_complex() else _dtype.float64) * 2
             - (1 + 1j if o.is_complex() else 1)).requires_grad_(True)
            for o in _differentiable(func(*inputs)))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg}
    diff_go = {i for i, g in enumerate(grad_outputs) if isinstance(g, Tensor) and g._rg}

    def first_derivative(*args):
        # the forward-mode check hands in detached duals: restore which arguments require grad
        xs = tuple(x.requires_grad_(True) if i in diff_in else x for i, x in enumerate(args[:len(args) - n_out]))
        gos = tuple(g.requires_grad_(True) if i in diff_go else g for i, g in enumerate(args[len(args) - n_out:]))
        outs = _differentiable(func(*xs))
        grads = engine.grad(outs, tuple(x for i, x in enumerate(xs) if i in diff_in), gos, create_graph=True,
                            allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)


class _CallableModule(types.ModuleType):
    """``torchish.autograd.gradcheck`` is both this module and the function (as in PyTorch): once the module has
    been imported (which binds the module to the package attribute), calling it still runs :func:`gradcheck`."""

    def __call__(self, *args, **kwargs):
        return gradcheck(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
