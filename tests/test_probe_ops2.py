"""Ops found missing by probing against PyTorch 2.13: linalg.householder_product / orgqr, the LDL factorization and
solve, torch.gradient, unsafe_split / unsafe_chunk, adjoint, is_nonzero, the ``*_copy`` view twins and the
torch.special Bessel functions and orthogonal polynomials."""
import numpy as np
import pytest

from oracle import arr, check, check_raises, same, torch, torchish, needs_torch

pytestmark = needs_torch


def _sym(n, seed, batch=(), dtype=np.float64, zero_diag=False):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n))
    a = a + np.swapaxes(a, -1, -2)
    if zero_diag:  # forces 2x2 pivots
        a[..., np.arange(n), np.arange(n)] = 0.0
    return a.astype(dtype)


# ----------------------------------------------------------------------------------------------------------------
# householder_product / orgqr


@pytest.mark.parametrize("shape,k,dtype", [((5, 3), 2, np.float64), ((2, 4, 4), 4, np.float32),
                                           ((3, 2), 0, np.float64)])
def test_householder_product(shape, k, dtype):
    tau = arr(*(shape[:-2] + (k,)), seed=1, dtype=dtype)
    check(lambda T, a, t: T.linalg.householder_product(a, t), [arr(*shape, dtype=dtype), tau])


def test_householder_product_complex():
    a = arr(4, 3) + 1j * arr(4, 3, seed=2)
    t = arr(2, seed=1) + 1j * arr(2, seed=3)
    check(lambda T, a, t: T.linalg.householder_product(a, t), [a.astype(np.complex128), t.astype(np.complex128)])


def test_orgqr_of_geqrf():
    """orgqr turns geqrf's reflectors back into Q (checked on torch's own geqrf output)."""
    a, tau = torch.geqrf(torch.tensor(arr(4, 3, dtype=np.float64)))
    check(lambda T, a, t: (T.orgqr(a, t), a.orgqr(t)), [a.numpy(), tau.numpy()])


@pytest.mark.parametrize("call", [
    lambda T: T.linalg.householder_product(T.ones(3), T.ones(1)),
    lambda T: T.linalg.householder_product(T.ones(2, 3), T.ones(1)),
    lambda T: T.linalg.householder_product(T.ones(3, 2), T.ones(3)),
    lambda T: T.linalg.householder_product(T.ones(3, 2), T.ones(2, dtype=T.float64)),
    lambda T: T.linalg.householder_product(T.ones(2, 3, 2), T.ones(3, 2)),
    lambda T: T.linalg.householder_product(T.ones(3, 2, dtype=T.int64), T.ones(2, dtype=T.int64)),
    lambda T: T.linalg.householder_product(T.ones(3, 2), T.ones(())),
    lambda T: T.linalg.householder_product(T.ones(3, 2), T.ones(2, 2)),
], ids=["1d", "wide", "long_tau", "tau_dtype", "tau_batch", "int", "tau_0d", "tau_ndim"])
def test_householder_product_errors(call):
    check_raises(call)


# ----------------------------------------------------------------------------------------------------------------
# ldl_factor / ldl_factor_ex / ldl_solve


@pytest.mark.parametrize("a", [_sym(1, 0), _sym(2, 1, zero_diag=True), _sym(6, 2, batch=(3,)),
                               _sym(5, 3, zero_diag=True), _sym(4, 4, dtype=np.float32)],
                         ids=["1x1", "2x2_pivot", "batch", "zero_diag", "float32"])
def test_ldl_factor_and_solve(a):
    b = arr(*(a.shape[:-1] + (2,)), seed=5, dtype=a.dtype)
    check(lambda T, a, b: (tuple(T.linalg.ldl_factor_ex(a)), tuple(T.linalg.ldl_factor(a, hermitian=True)),
                           T.linalg.ldl_solve(*T.linalg.ldl_factor(a), b)), [a, b], grad=False)


@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_complex(hermitian):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 5, 5)) + 1j * rng.standard_normal((2, 5, 5))
    a = a + np.swapaxes(a.conj() if hermitian else a, -1, -2)
    b = rng.standard_normal((2, 5, 3)) + 1j * rng.standard_normal((2, 5, 3))
    check(lambda T, a, b: (tuple(T.linalg.ldl_factor(a, hermitian=hermitian)),
                           T.linalg.ldl_solve(*T.linalg.ldl_factor(a, hermitian=hermitian), b, hermitian=hermitian)),
          [a, b], grad=False)


def test_ldl_solve_int64_pivots_and_broadcast():
    a, b = _sym(4, 8), arr(2, 4, 1, seed=9, dtype=np.float64)
    check(lambda T, a, b: (T.linalg.ldl_solve(T.linalg.ldl_factor(a)[0], T.linalg.ldl_factor(a)[1].long(), b[0]),
                           T.linalg.ldl_solve(*T.linalg.ldl_factor(a), b)), [a, b], grad=False)


def test_ldl_singular_info():
    check(lambda T, a: tuple(T.linalg.ldl_factor_ex(a)), [np.zeros((3, 3), np.float32)], grad=False)
    check_raises(lambda T: T.linalg.ldl_factor(T.zeros(3, 3)))
    check_raises(lambda T: T.linalg.ldl_factor_ex(T.zeros(3, 3), check_errors=True))


def test_ldl_no_derivative():
    a = torchish.tensor(_sym(3, 7), requires_grad=True)
    LD, piv = torchish.linalg.ldl_factor(a)
    assert LD.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
        LD.sum().backward()
    b = torchish.tensor(arr(3, 2, dtype=np.float64), requires_grad=True)
    x = torchish.linalg.ldl_solve(LD.detach(), piv, b)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"):
        x.sum().backward()


@pytest.mark.parametrize("call", [
    lambda T: T.linalg.ldl_factor(T.ones(3)),
    lambda T: T.linalg.ldl_factor(T.ones(2, 3)),
    lambda T: T.linalg.ldl_factor(T.ones(2, 2, dtype=T.int64)),
    lambda T: T.linalg.ldl_factor(T.ones(2, 2, dtype=T.float16)),
    lambda T: T.linalg.ldl_solve(T.eye(3), T.arange(1, 4, dtype=T.int32), T.ones(2, 1)),
    lambda T: T.linalg.ldl_solve(T.eye(3), T.arange(1, 4, dtype=T.int32), T.ones(3, 1, dtype=T.float64)),
    lambda T: T.linalg.ldl_solve(T.eye(3), T.arange(1, 4, dtype=T.int32), T.ones(3)),
    lambda T: T.linalg.ldl_solve(T.eye(3), T.arange(1, 4, dtype=T.float32), T.ones(3, 1)),
    lambda T: T.linalg.ldl_solve(T.eye(3), T.arange(1, 3, dtype=T.int32), T.ones(3, 1)),
], ids=["1d", "nonsquare", "int", "half", "b_rows", "b_dtype", "b_1d", "float_pivots", "pivots_shape"])
def test_ldl_errors(call):
    check_raises(call)


# ----------------------------------------------------------------------------------------------------------------
# torch.gradient

_C0 = np.array([0.0, 0.5, 1.7, 2.0, 3.5])
_C1 = np.array([0.0, 1.0, 1.5, 3.0])


@pytest.mark.parametrize("kwargs", [
    {}, dict(spacing=2.0), dict(spacing=[2.0, 0.5]), dict(dim=1, edge_order=2), dict(spacing=(3,), dim=0, edge_order=2),
    dict(spacing="coords", edge_order=1), dict(spacing="coords", edge_order=2), dict(spacing="coords1", dim=-1),
], ids=["default", "scalar", "list", "dim_edge2", "tuple_dim", "coords1", "coords2", "coords_dim"])
def test_gradient(kwargs):
    def call(T, x, c0, c1):
        kw = dict(kwargs)
        if kw.get("spacing") == "coords":
            kw["spacing"] = [c0, c1]
        elif kw.get("spacing") == "coords1":
            kw["spacing"] = [c1]
        return T.gradient(x, **kw)
    check(call, [arr(5, 4, dtype=np.float64), _C0, _C1], grad=(0,))


def test_gradient_int_and_float32():
    check(lambda T, x: T.gradient(x), [np.arange(6, dtype=np.int64) ** 2], grad=False)
    check(lambda T, x: T.gradient(x, spacing=2, edge_order=2), [np.arange(6, dtype=np.int64) ** 2], grad=False)
    check(lambda T, x: T.gradient(x, spacing=0.5, edge_order=2), [arr(3, 4)])


@pytest.mark.parametrize("call", [
    lambda T, x: T.gradient(x, spacing=[1.0, 2.0, 3.0]),
    lambda T, x: T.gradient(x, spacing=[2.0]),
    lambda T, x: T.gradient(x, edge_order=3),
    lambda T, x: T.gradient(T.ones(2, 5), edge_order=2),
    lambda T, x: T.gradient(x, spacing=[T.ones(3, 1), T.ones(4)]),
    lambda T, x: T.gradient(x, dim=[0, 1], spacing=[1.0]),
    lambda T, x: T.gradient(x, dim=5),
    lambda T, x: T.gradient(x, dim=(0, 0)),
    lambda T, x: T.gradient(T.ones(1, 4)),
], ids=["spacing_len", "spacing_len1", "edge3", "short_dim", "coords_2d", "dim_len", "dim_range", "dim_twice",
        "size1"])
def test_gradient_errors(call):
    check_raises(lambda T: call(T, T.ones(3, 4)))


# ----------------------------------------------------------------------------------------------------------------
# unsafe_split / unsafe_chunk / adjoint / is_nonzero


@pytest.mark.parametrize("call", [
    lambda T, x: T.unsafe_split(x, 2, 1),
    lambda T, x: x.unsafe_split(3),
    lambda T, x: T.unsafe_split_with_sizes(x, [1, 2], 1),
    lambda T, x: x.unsafe_split_with_sizes([3, 1]),
    lambda T, x: T.unsafe_chunk(x, 2, 1),
    lambda T, x: x.unsafe_chunk(3),
], ids=["split", "split_method", "sizes", "sizes_method", "chunk", "chunk_method"])
def test_unsafe_split(call):
    check(call, [arr(4, 3)])
    parts = call(torchish, torchish.tensor(arr(4, 3)))
    assert all(p._base is None for p in parts)


def test_unsafe_split_grad_fn_name():
    x = torchish.tensor(arr(4, 3), requires_grad=True)
    assert type(torchish.unsafe_split(x, 2)[0].grad_fn).__name__ == "UnsafeSplitBackward0"
    assert type(torchish.unsafe_split_with_sizes(x, [1, 3])[0].grad_fn).__name__ == "UnsafeSplitWithSizesBackward0"


def test_adjoint():
    check(lambda T, x: (T.adjoint(x), x.adjoint()), [arr(2, 3, 4)])
    c = (arr(3, 2) + 1j * arr(3, 2, seed=1)).astype(np.complex64)
    check(lambda T, x: T.adjoint(x), [c])
    x = torchish.tensor(arr(3, 2))
    assert torchish.adjoint(x)._base is x
    check_raises(lambda T: T.adjoint(T.ones(3)))


def test_is_nonzero():
    for v in ([0.0], [2], [float("nan")], [False]):
        same(lambda T: T.tensor(v).is_nonzero())
    check_raises(lambda T: T.tensor([]).is_nonzero())
    check_raises(lambda T: T.tensor([1, 2]).is_nonzero())


# ----------------------------------------------------------------------------------------------------------------
# the *_copy twins of the view ops

_COPIES = {
    "alias_copy": lambda T, x: T.alias_copy(x),
    "diagonal_copy": lambda T, x: T.diagonal_copy(x, 1, 1, 2),
    "expand_copy": lambda T, x: T.expand_copy(x, (2, 2, 3, 4)),
    "narrow_copy": lambda T, x: (T.narrow_copy(x, 1, 1, 2), x.narrow_copy(2, 0, 3)),
    "permute_copy": lambda T, x: T.permute_copy(x, (2, 0, 1)),
    "select_copy": lambda T, x: T.select_copy(x, 1, -1),
    "slice_copy": lambda T, x: (T.slice_copy(x, 2, 1, None, 2), T.slice_copy(x)),
    "split_copy": lambda T, x: T.split_copy(x, 2, 2),
    "split_with_sizes_copy": lambda T, x: T.split_with_sizes_copy(x, [1, 3], -1),
    "squeeze_copy": lambda T, x: (T.squeeze_copy(x[:1]), T.squeeze_copy(x[:1], 0), T.squeeze_copy(x[:1], (0, 1))),
    "t_copy": lambda T, x: T.t_copy(x[0]),
    "transpose_copy": lambda T, x: T.transpose_copy(x, 0, 2),
    "unbind_copy": lambda T, x: T.unbind_copy(x, 1),
    "unfold_copy": lambda T, x: T.unfold_copy(x, 2, 2, 1),
    "unsqueeze_copy": lambda T, x: T.unsqueeze_copy(x, -1),
    "view_copy": lambda T, x: (T.view_copy(x, (6, 4)), T.view_copy(x, [-1])),
    "view_as_real_copy": lambda T, x: T.view_as_real_copy(T.view_as_complex(x[..., :2].contiguous())),
}


@pytest.mark.parametrize("name", list(_COPIES))
def test_copy_ops(name):
    check(_COPIES[name], [arr(2, 3, 4)])
    out = _COPIES[name](torchish, torchish.tensor(arr(2, 3, 4)))
    for o in (out if isinstance(out, tuple) else (out,)):
        assert o._base is None


def test_copy_grad_fn_names():
    x = torchish.tensor(arr(2, 3), requires_grad=True)
    assert type(torchish.permute_copy(x, (1, 0)).grad_fn).__name__ == "PermuteBackward0_copy"
    assert type(torchish.view_copy(x, (6,)).grad_fn).__name__ == "ViewBackward0_copy"


def test_copy_ops_no_grad_cases():
    check(lambda T, x: T.view_copy(x, T.int32), [arr(2, 3)], grad=False)
    check(lambda T, x: T.view_as_complex_copy(x), [arr(3, 2)], grad=False)
    check(lambda T, x: T.detach_copy(x), [arr(3, 2)], grad=False)
    x = torchish.tensor(arr(3), requires_grad=True)
    y = torchish.detach_copy(x)
    assert y.requires_grad and y._base is None
    with pytest.raises(RuntimeError, match="derivative for aten::detach_copy is not implemented"):
        y.sum().backward()


# ----------------------------------------------------------------------------------------------------------------
# torch.special: Bessel functions, airy_ai, orthogonal polynomials (PyTorch records no gradient for any of them)

_BESSEL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0", "airy_ai"]
# PyTorch's own float64 kernels for these are accurate to only ~3e-5 relative / 3e-6 absolute in the oscillatory
# range (measured against mpmath); the comparison with torch allows that, test_bessel_vs_mpmath pins torchish to 1e-9
_TORCH_F64_ERROR = {"bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"}
_X = np.concatenate([np.linspace(-30, 30, 121), np.geomspace(1e-6, 1e3, 40), [0.0, np.inf, -np.inf, np.nan]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", _BESSEL)
def test_bessel_vs_torch(name, dtype):
    tols = dict(rtol=1e-4, atol=5e-6) if dtype == np.float64 and name in _TORCH_F64_ERROR else {}
    check(lambda T, x: getattr(T.special, name)(x), [_X.astype(dtype)], **tols)


_MP = {"bessel_j0": lambda mp, v: mp.besselj(0, v), "bessel_j1": lambda mp, v: mp.besselj(1, v),
       "bessel_y0": lambda mp, v: mp.bessely(0, v), "bessel_y1": lambda mp, v: mp.bessely(1, v),
       "modified_bessel_k0": lambda mp, v: mp.besselk(0, v), "modified_bessel_k1": lambda mp, v: mp.besselk(1, v),
       "scaled_modified_bessel_k1": lambda mp, v: mp.besselk(1, v) * mp.exp(v), "airy_ai": lambda mp, v: mp.airyai(v)}


@pytest.mark.parametrize("name", list(_MP))
def test_bessel_vs_mpmath(name):
    mp = pytest.importorskip("mpmath")
    x = np.concatenate([np.linspace(0.05, 40, 80), [14.99, 15.0, 24.99, 25.0, 0.999, 1.0, 1e-5, 300.0]])
    if name in ("bessel_j0", "bessel_j1", "airy_ai"):
        x = np.concatenate([x, -x])
    got = getattr(torchish.special, name)(torchish.tensor(x)).numpy()
    ref = np.array([float(_MP[name](mp, v)) for v in x])
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


_POLY = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
         "legendre_polynomial_p"]
_PX, _PN = np.meshgrid(np.concatenate([np.linspace(-1.5, 1.5, 13), [-1.0, 1.0, 0.0, 0.3, 2.0, -3.0]]),
                       np.array([-1.0, 0, 1, 2, 3, 5, 7, 8, 9, 12, 20, 2.7]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", _POLY)
def test_polynomials(name, dtype):
    check(lambda T, x, n: getattr(T.special, name)(x, n), [_PX.astype(dtype), _PN.astype(dtype)])


def test_polynomial_scalar_and_int_arguments():
    check(lambda T, n: T.special.chebyshev_polynomial_t(0.5, n), [np.array([3, 4, 10])], grad=False)
    check(lambda T, x: T.special.hermite_polynomial_h(x, 3), [np.array([1, 2])], grad=False)
    check(lambda T, x: T.special.legendre_polynomial_p(x, 4), [arr(5)])
    check(lambda T, x, n: T.special.laguerre_polynomial_l(x, n), [arr(3, dtype=np.float64), np.array([2, 3, 4])])


@pytest.mark.parametrize("call", [
    lambda T: T.special.bessel_j0(1.0),
    lambda T: T.special.bessel_j0(T.ones(2, dtype=T.complex64)),
    lambda T: T.special.airy_ai(T.ones(2, dtype=T.float16)),
    lambda T: T.special.chebyshev_polynomial_t(0.5, 2),
    lambda T: T.special.chebyshev_polynomial_t(T.ones(2, dtype=T.complex64), 2),
    lambda T: T.special.hermite_polynomial_h(T.ones(2, dtype=T.bfloat16), 2),
], ids=["number", "complex", "half", "numbers", "poly_complex", "poly_bf16"])
def test_special_errors(call):
    check_raises(call)


def test_bessel_int_input():
    check(lambda T, x: (T.special.bessel_j0(x), T.special.modified_bessel_k1(x)), [np.array([1, 2, 5])], grad=False)


# ----------------------------------------------------------------------------------------------------------------
# the nuclear norm (already present; pinned here with its gradient)


def test_nuclear_norm():
    check(lambda T, a: (T.linalg.matrix_norm(a, "nuc"), T.norm(a, p="nuc"), T.linalg.norm(a, "nuc")), [arr(3, 4)])
    check(lambda T, a: (T.linalg.matrix_norm(a, "nuc", dim=(0, 2), keepdim=True), T.norm(a, "nuc", dim=(1, 2))),
          [arr(2, 3, 4, dtype=np.float64)])


@needs_torch
def test_division_by_broadcast_divisor_is_one_rounding():
    # XLA turns ``x / broadcast(c)`` into ``x * broadcast(1 / c)``: an ulp off in about a third of these elements,
    # which trunc/floor/long() turn into whole units (x / 0.3 gave 10 where PyTorch gives 9.9999996 -> 9)
    a = np.arange(-300, 300, dtype=np.float32)
    rows = np.random.default_rng(0).uniform(0.5, 3, (4, 1)).astype(np.float32)
    m = np.random.default_rng(1).uniform(1, 9, (4, 6)).astype(np.float32)
    got = []
    for lib in (torch, torchish):
        x, w = lib.tensor(a), lib.tensor(m)
        got.append([(x / 3.0).numpy(), (x / lib.tensor(7.0)).numpy(), x.div(0.3, rounding_mode="trunc").numpy(),
                    (x / 0.3).long().numpy(), (w / lib.tensor(rows)).numpy(),
                    (w.double() / 10).numpy()])
    for r, g in zip(*got):
        np.testing.assert_array_equal(g, r)
