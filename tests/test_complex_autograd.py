"""Gradients through complex values follow PyTorch's convention (the conjugate Wirtinger derivative: ``z.grad`` is
conj(dL/dz)), where JAX's VJPs use the other one. The leaves are real here (``torch.complex(x, y)``), so the same
gradients are also checked against finite differences of the real loss."""
import numpy as np
import pytest

from oracle import arr, check, check_fd, torchish

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
