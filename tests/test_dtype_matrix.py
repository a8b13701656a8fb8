"""Representative cases of a dtype-matrix sweep (public functions and Tensor methods called on every dtype, 0-d and
size-0 inputs, with ``out=`` tensors of the right and of a wrong dtype and with ``dtype=``) against PyTorch: the
result's dtype, shape and values, or the builtin exception type PyTorch raises."""
from __future__ import annotations

import warnings

import pytest

from oracle import assert_script_matches, needs_torch, same, same_error

pytestmark = needs_torch
warnings.filterwarnings("ignore", category=UserWarning)


def _matrix(T, dtype="float32"):
    return T.tensor([[2.0, 0.5, -1.0], [0.5, 3.0, 0.25], [-1.0, 0.25, 4.0]]).to(getattr(T, dtype))


def _out_of(T, dtype):
    return T.empty(0, dtype=getattr(T, dtype))


# ---------------------------------------------------------------------------------------------------------------
# the *_copy functions: out= was accepted and ignored (the out tensor stayed empty)

COPY_OUT = {
    "alias_copy": lambda T, o: T.alias_copy(_matrix(T), out=o),
    "permute_copy": lambda T, o: T.permute_copy(_matrix(T), (1, 0), out=o),
    "view_copy": lambda T, o: T.view_copy(_matrix(T), (9,), out=o),
    "detach_copy": lambda T, o: T.detach_copy(_matrix(T), out=o),
    "t_copy": lambda T, o: T.t_copy(_matrix(T, "int64"), out=o),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", list(COPY_OUT))
def test_copy_functions_write_into_out(name, dtype):
    def f(T):
        o = _out_of(T, dtype)
        return COPY_OUT[name](T, o) is o, o
    assert_script_matches(f)


LIST_OUT = {
    "unbind_copy": lambda T, o: T.unbind_copy(_matrix(T)[:2], out=o),
    "split_copy": lambda T, o: T.split_copy(_matrix(T)[:2], 1, out=o),
    "split_with_sizes_copy": lambda T, o: T.split_with_sizes_copy(_matrix(T)[:2], [1, 1], out=o),
}


@pytest.mark.parametrize("outs", ["empty", "int64 rows", "one"])
@pytest.mark.parametrize("name", list(LIST_OUT))
def test_copy_functions_of_several_tensors_write_into_a_list(name, outs):
    def f(T):
        o = {"empty": [T.empty(0), T.empty(0)], "one": [T.empty(0)],
             "int64 rows": [T.empty(1, 3, dtype=T.int64), T.empty(1, 3, dtype=T.int64)]}[outs]
        return LIST_OUT[name](T, o), o
    assert_script_matches(f)


# ---------------------------------------------------------------------------------------------------------------
# adjoint of a 0-d tensor: PyTorch (with a deprecation warning) returns its conjugate


@pytest.mark.parametrize("dtype", ["int64", "float32", "complex64"])
def test_adjoint_of_a_0d_tensor(dtype):
    same(lambda T: (T.adjoint(T.tensor(1.5 - 2j).to(getattr(T, dtype))),
                    T.tensor(2.0 + 1j).to(getattr(T, dtype)).adjoint()))


def test_adjoint_of_a_1d_tensor_raises():
    assert_script_matches(lambda T: T.adjoint(T.ones(3)))


# ---------------------------------------------------------------------------------------------------------------
# special functions: the dtypes PyTorch has kernels for, and its special values


SPECIAL_BY_DTYPE = {
    "zeta": lambda T, x: T.special.zeta(x, x + 3),
    "igamma": lambda T, x: T.igamma(x, x),
    "gammaincc": lambda T, x: T.special.gammaincc(x, x),
    "multigammaln": lambda T, x: T.special.multigammaln(x, 2),
}


@pytest.mark.parametrize("dtype", ["bool", "int64", "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("name", list(SPECIAL_BY_DTYPE))
def test_special_functions_by_dtype(name, dtype):
    assert_script_matches(lambda T: SPECIAL_BY_DTYPE[name](T, T.tensor([1, 0, 3]).to(getattr(T, dtype))))


def test_zeta_at_its_poles_and_below_one():
    same(lambda T: T.special.zeta(T.tensor([5.0, -4.0, 1.0, 0.5, 2.0, 3.0]), T.tensor([-3.0, -1.0, -1.0, 2.0, 0.0, -1.5])))


def test_multigammaln_below_its_former_domain():
    same(lambda T: (T.special.multigammaln(T.tensor([-5.0, 0.2, -1.5]), 1), T.mvlgamma(T.tensor([-5, 2]), 2)))


# ---------------------------------------------------------------------------------------------------------------
# linear algebra out=: PyTorch copies most results into an out of any dtype they safely cast to
# (checkLinalgCompatibleDtype); matrix_power only for n = 0 and 1; chain_matmul of one matrix casts freely;
# multi_dot wants the inputs' dtype, with its own wording

LINALG_OUT = {
    "pinv": lambda T, A, o: T.linalg.pinv(A, out=o),
    "matrix_rank": lambda T, A, o: T.linalg.matrix_rank(A, out=o),
    "cholesky_inverse": lambda T, A, o: T.cholesky_inverse(A, out=o),
    "cholesky_solve": lambda T, A, o: T.cholesky_solve(A, A, out=o),
    "matrix_power 0": lambda T, A, o: T.linalg.matrix_power(A, 0, out=o),
    "matrix_power 2": lambda T, A, o: T.matrix_power(A, 2, out=o),
    "chain_matmul one": lambda T, A, o: T.chain_matmul(A, out=o),
    "multi_dot": lambda T, A, o: T.linalg.multi_dot([A, A], out=o),
}


@pytest.mark.parametrize("out_dtype", ["float64", "int64", "float16", "bool"])
@pytest.mark.parametrize("name", list(LINALG_OUT))
def test_linalg_out_dtypes(name, out_dtype):
    def f(T):
        o = _out_of(T, out_dtype)
        # (the values were computed in float32: compared at its tolerance)
        return LINALG_OUT[name](T, _matrix(T), o) is o, o.dtype, o.float()
    if name == "multi_dot":
        same_error(lambda T: f(T))
    else:
        assert_script_matches(f)


def test_chain_matmul_wants_matrices():
    same_error(lambda T: T.chain_matmul(T.ones(3)))


# ---------------------------------------------------------------------------------------------------------------
# searchsorted: PyTorch's kernel has no bool or complex version (of the common dtype); quantile's out dtype


@pytest.mark.parametrize("seq, value", [("bool", "bool"), ("bool", "int64"), ("int64", "bool"), ("complex64", "complex64")])
def test_searchsorted_by_common_dtype(seq, value):
    assert_script_matches(lambda T: T.searchsorted(T.tensor([0, 1]).to(getattr(T, seq)),
                                                   T.tensor([1]).to(getattr(T, value))))


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("out_dtype", ["float32", "float64"])
def test_quantile_out_must_have_the_input_dtype(name, out_dtype):
    def f(T):
        o = _out_of(T, out_dtype)
        return getattr(T, name)(_matrix(T), 0.25, 0, out=o) is o, o
    assert_script_matches(f)


# ---------------------------------------------------------------------------------------------------------------
# isin's unsupported operand types; heaviside's and lerp's (number weight) out= dtype


ISIN = {
    "bool elements": lambda T: T.isin(T.tensor([True]), T.tensor([1, 0])),
    "bool test elements": lambda T: T.isin(T.tensor([1]), T.tensor([True])),
    "bool number": lambda T: T.isin(T.tensor([1]), True),
    "complex": lambda T: T.isin(T.tensor([1j]), T.tensor([1j])),
    "complex number": lambda T: T.isin(1j, T.tensor([1.0])),
    "float": lambda T: T.isin(T.tensor([1.0, 2.0]), 2.0),
}


@pytest.mark.parametrize("case", list(ISIN))
def test_isin_operand_types(case):
    assert_script_matches(ISIN[case])


OUT_DTYPE = {
    "heaviside": lambda T, o: T.heaviside(_matrix(T), _matrix(T), out=o),
    "lerp number": lambda T, o: T.lerp(_matrix(T), _matrix(T), 0.5, out=o),
    "lerp tensor": lambda T, o: T.lerp(_matrix(T), _matrix(T), _matrix(T), out=o),
}


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", list(OUT_DTYPE))
def test_elementwise_out_dtype(name, out_dtype):
    def f(T):
        o = _out_of(T, out_dtype)
        return OUT_DTYPE[name](T, o) is o, o.dtype, o.float()
    assert_script_matches(f)


# ---------------------------------------------------------------------------------------------------------------
# in-place abs of a complex tensor; polygamma of a complex one

COMPLEX_REFUSED = {
    "abs_": lambda T, x: x.abs_(),
    "absolute_": lambda T, x: x.absolute_(),
    "polygamma 0": lambda T, x: T.polygamma(0, x),
    "polygamma_ 1": lambda T, x: x.polygamma_(1),
    "polygamma 3": lambda T, x: T.polygamma(3, x),
}


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("name", list(COMPLEX_REFUSED))
def test_complex_refusals(name, dtype):
    assert_script_matches(lambda T: COMPLEX_REFUSED[name](T, T.tensor([1.5, -2.0]).to(getattr(T, dtype))))


@pytest.mark.parametrize("name", ["rfftn", "irfftn", "hfftn", "ihfftn", "fftn"])
def test_nd_fft_of_a_0d_tensor(name):
    assert_script_matches(lambda T: getattr(T.fft, name)(T.tensor(1.5)))


@pytest.mark.parametrize("dtype", ["bool", "int8", "float32"])
@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_inplace_scans_run_in_the_tensors_dtype(name, dtype):
    assert_script_matches(lambda T: getattr(T.tensor([[100, 1, 3], [0, 2, 5]]).to(getattr(T, dtype)), name)(1))


def test_inplace_scan_with_another_dtype_is_a_bad_inplace_call():
    same_error(lambda T: T.tensor([1, 2]).cumsum_(0, dtype=T.float32))
