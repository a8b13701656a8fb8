"""Gradients through complex values follow PyTorch's convention (the conjugate Wirtinger derivative: ``z.grad`` is
conj(dL/dz)), where JAX's VJPs use the other one. The leaves are real here (``torch.complex(x, y)``), so the same
gradients are also checked against finite differences of the real loss."""
import numpy as np
import pytest

from oracle import arr, check, check_fd, same, same_error, torchish

C = [1 + 2j, 3 - 1j, 0.5j]


def _mix(lib, w):
    """A real loss reading both parts of ``w`` through a complex weighting."""
    return (w * lib.tensor(C)).real.sum() + (w * lib.tensor(C)).imag.sum() * 0.5


UNARY = ["exp", "expm1", "exp2", "sqrt", "rsqrt", "tan", "tanh", "sigmoid", "reciprocal", "log", "log1p", "log2",
         "log10", "sin", "cos", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "neg", "square",
         "sgn", "conj", "abs", "angle"]

FUNCS = {
    **{n: (lambda n: lambda lib, z: _mix(lib, getattr(z, n)()))(n) for n in UNARY},
    "div": lambda lib, z: _mix(lib, z / (z + 1)),
    "rdiv": lambda lib, z: _mix(lib, 2 / z),
    "pow_scalar": lambda lib, z: _mix(lib, z ** 3),
    "pow_tensor": lambda lib, z: _mix(lib, z ** z),
    "rpow": lambda lib, z: _mix(lib, 2 ** z),
    "matmul": lambda lib, z: _mix(lib, z.view(3, 1) @ z.view(1, 3)),
    "prod": lambda lib, z: _mix(lib, z.prod()),
    "cumprod": lambda lib, z: _mix(lib, z.cumprod(0)),
    "vdot": lambda lib, z: lib.vdot(z, lib.tensor(C)).real,
    "norm": lambda lib, z: lib.linalg.vector_norm(z),
    "abs_squared": lambda lib, z: (z * z.conj()).real.sum(),
    "chain": lambda lib, z: _mix(lib, ((z * z).exp() / (z.sin() + 2)).sqrt()),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_complex_gradient_matches_torch(name):
    f = FUNCS[name]
    check(lambda lib, x, y: f(lib, lib.complex(x, y)), [arr(3, seed=1, lo=0.3, hi=0.9), arr(3, seed=2, lo=-0.9,
                                                                                           hi=0.9)])


@pytest.mark.parametrize("name", ["exp", "reciprocal", "sgn", "pow_tensor", "chain"])
def test_complex_gradient_finite_differences(name):
    f = FUNCS[name]
    check_fd(lambda x, y: f(torchish, torchish.complex(x, y)), np.array([0.4, 0.7, 0.5]),
             np.array([0.3, -0.6, 0.8]), rtol=1e-5, atol=1e-7)


def _z(lib, rg=True):
    return lib.tensor([1 + 2j, -0.5 + 0.25j, complex("nan")], requires_grad=rg)


# ops PyTorch's autograd does not differentiate for complex outputs (its derivatives have no complex formula):
# recording one raises "<op> does not support automatic differentiation for outputs with complex dtype."
REFUSED = {
    "silu": lambda lib: lib.nn.functional.silu(_z(lib)),
    "silu_of_a_complex_product": lambda lib: lib.nn.functional.silu(lib.ones(2, requires_grad=True) * (1 + 1j)),
    "nan_to_num": lambda lib: lib.nan_to_num(_z(lib)),
    "nan_to_num_method": lambda lib: _z(lib).nan_to_num(nan=1.0),
    "embedding": lambda lib: lib.nn.functional.embedding(lib.tensor([0, 1]), _z(lib).view(3, 1)),
    "normal_mean": lambda lib: lib.normal(_z(lib), 1.0), "normal_std": lambda lib: lib.normal(_z(lib), lib.ones(3)),
    "slice_copy": lambda lib: lib.slice_copy(_z(lib), 0, 0, 2), "select_copy": lambda lib: lib.select_copy(_z(lib), 0, 1),
    "view_as_complex_copy": lambda lib: lib.view_as_complex_copy(lib.view_as_real(_z(lib)) * 1),
}

# the same ops with nothing to record, or written in place (PyTorch refuses only the out-of-place forms)
ALLOWED = {
    "silu_inplace": lambda lib: lib.nn.functional.silu(_z(lib) * 1, inplace=True),
    "nan_to_num_": lambda lib: (_z(lib) * 1).nan_to_num_(),
    "silu_no_grad_input": lambda lib: lib.nn.functional.silu(_z(lib, rg=False)),
    "nan_to_num_detached": lambda lib: lib.nan_to_num(_z(lib).detach()),
    "normal_no_grad_input": lambda lib: lib.normal(_z(lib, rg=False), 0.0),
    "slice_copy_detached": lambda lib: lib.slice_copy(_z(lib).detach(), 0, 0, 2),
    "as_strided_copy": lambda lib: lib.as_strided_copy(_z(lib), (2, 1), (1, 1), 1),
    "embedding_under_no_grad": lambda lib: _no_grad(lib, lambda: lib.nn.functional.embedding(lib.tensor([0]),
                                                                                              _z(lib).view(3, 1))),
}


def _no_grad(lib, fn):
    with lib.no_grad():
        return fn()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_complex_output_refused_by_pytorchs_autograd(name):
    same_error(REFUSED[name])


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_complex_output_of_a_refusing_op_when_nothing_is_recorded(name):
    same(lambda lib: (lambda r: (r.detach(), r.requires_grad))(ALLOWED[name](lib)))


def test_complex_inputs_of_real_only_samplers_raise_not_implemented():
    """poisson and training-mode dropout (of every kind, 0 < p < 1) draw with kernels PyTorch has only for real
    types; p = 0 and p = 1 draw nothing."""
    F = lambda lib: lib.nn.functional  # noqa: E731
    for fn in (lambda lib: lib.poisson(_z(lib, rg=False)), lambda lib: F(lib).dropout(_z(lib), 0.5),
               lambda lib: F(lib).dropout2d(_z(lib, rg=False).reshape(1, 3, 1, 1), 0.5),
               lambda lib: F(lib).alpha_dropout(_z(lib, rg=False), 0.5, training=True)):
        same_error(fn)
    same(lambda lib: [F(lib).dropout(_z(lib, rg=False), 0.5, training=False), F(lib).dropout(_z(lib, rg=False), 0.0),
                      F(lib).dropout(_z(lib, rg=False), 1.0), F(lib).dropout2d(_z(lib, rg=False).reshape(1, 3, 1, 1), 1.0),
                      F(lib).feature_alpha_dropout(_z(lib, rg=False).reshape(1, 3, 1), 1.0, training=True)])
