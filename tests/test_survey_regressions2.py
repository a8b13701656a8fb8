"""Behaviour differences found by the last survey round, each compared with PyTorch 2.13 (continued from
tests/test_survey_regressions.py):

- ``native_batch_norm`` of an empty input in training: PyTorch's kernel refuses it (RuntimeError "input tensor
  must have at least one element"; IndexError for a 1-d input, whose channel dim it reads first; NotImplementedError
  for an integer dtype), where torchish returned statistics of nothing. In evaluation it returns an empty output
  and (0,) statistics (torchish already did).
- ``renorm``'s gradient: PyTorch's renorm_backward takes the norm in the CPU accumulate type (float64 for float32
  and complex64), so with ``p=inf`` a complex64 slice that was scaled gets NaN (its moduli, in complex64, equal
  no float64 norm); torchish computed in the input's dtype and gave finite values.
- ``linalg.cond``: the orders PyTorch takes through ``inv_ex`` give inf for an exactly singular matrix. (Not
  matched, reported instead: ``cond(torch.ones(2, 2), 'nuc')`` is inf in PyTorch only because MKL's gesdd returns
  an exact 0 singular value there; the reference LAPACK gesdd that jaxlib and SciPy call returns 1.35e-08, and MKL
  itself returns 8.4e-08 for [[1, 1], [2, 2]], so no algorithm change gives PyTorch's values in general.)
"""
import warnings

import numpy as np
import pytest

from fuzz_harness import agree
from oracle import check, needs_torch, same, same_error

pytestmark = needs_torch
warnings.filterwarnings("ignore", category=UserWarning)


def _bn(lib, shape, training, stats=True, dtype="float32", stats_dtype="float32"):
    x = lib.ones(*shape, dtype=getattr(lib, dtype))
    c = shape[1] if len(shape) > 1 else shape[0]
    dt = getattr(lib, stats_dtype)
    mean, var = (lib.zeros(c, dtype=dt), lib.ones(c, dtype=dt)) if stats else (None, None)
    return lib.native_batch_norm(x, None, None, mean, var, training, 0.1, 1e-5)


@pytest.mark.parametrize("shape,stats,dtype,stats_dtype", [
    ((0, 2), True, "float32", "float32"), ((0, 2), False, "float32", "float32"),
    ((2, 0), True, "float32", "float32"), ((0, 2, 3), True, "float64", "float64"),
    ((2, 2, 0), True, "float16", "float32"), ((0,), True, "float32", "float32"), ((3,), False, "float32", "float32"),
    ((0, 2), False, "int64", "float32"), ((3,), False, "int64", "float32"), ((0, 2), False, "complex64", "float32"),
    ((0, 2), True, "float64", "float32")])
def test_native_batch_norm_refuses_what_its_training_kernel_refuses(shape, stats, dtype, stats_dtype):
    """(an empty input's dtypes are checked first: a float64 one with float32 statistics is a mixed dtype)"""
    same_error(lambda lib: _bn(lib, shape, True, stats, dtype, stats_dtype))


@pytest.mark.parametrize("shape,dtype,stats_dtype", [((3,), "float32", "float32"), ((0, 2), "int64", "float32"),
                                                     ((2, 2), "int64", "float32"), ((2, 0), "float64", "float32")])
def test_native_batch_norm_refuses_in_evaluation(shape, dtype, stats_dtype):
    same_error(lambda lib: _bn(lib, shape, False, True, dtype, stats_dtype))


@pytest.mark.parametrize("shape,dtype,stats_dtype", [((0, 2), "float32", "float32"), ((0,), "float32", "float32"),
                                                     ((0, 2, 3), "float16", "float32"), ((2, 0), "float64", "float64")])
def test_native_batch_norm_of_nothing_in_evaluation(shape, dtype, stats_dtype):
    same(lambda lib: list(_bn(lib, shape, False, True, dtype, stats_dtype)))


def test_native_batch_norm_with_elements_unchanged():
    check(lambda lib, x, w, b: lib.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
          [np.linspace(-1, 2, 12, dtype=np.float32).reshape(4, 3), np.array([1.0, 2.0, 0.5], np.float32),
           np.array([0.0, 0.1, -0.2], np.float32)])


_COMPLEX = np.array([[1 + 2j, 0.5 - 1j], [0.1 + 0.1j, 0.2j], [3 + 4j, 1]])
_REAL = np.array([[1.0, -2.0], [0.1, 0.2], [3.0, 4.0]])


@pytest.mark.parametrize("p", [float("inf"), 2.0, 1.0, 3.0, 0.5])
@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "float16"])
def test_renorm_gradient_follows_pytorchs_formula(p, dtype):
    """(complex64 with p=inf: NaN in the first slice, whose moduli are inexact; the last, 3+4j, stays finite)"""
    values = (_COMPLEX if dtype.startswith("complex") else _REAL).astype(dtype)
    cot = np.full(values.shape, 1 + 0.5j if dtype.startswith("complex") else 0.75).astype(dtype)

    def grad(lib):
        x = lib.tensor(values, requires_grad=True)
        y = lib.renorm(x, p, 0, 0.3)
        y.backward(lib.tensor(cot))
        return [y, x.grad, y.grad_fn.name()]
    same(grad)


@pytest.mark.parametrize("p", ["fro", 1, -1, float("inf"), float("-inf")])
def test_cond_of_an_exactly_singular_matrix_is_infinite(p):
    same(lambda lib: [lib.linalg.cond(lib.ones(2, 2), p), lib.linalg.cond(lib.ones(2, 3, 3), p)])


def test_nuclear_cond_of_an_invertible_matrix():
    check(lambda lib, a: lib.linalg.cond(a, "nuc"), [np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)])


@needs_torch
@pytest.mark.filterwarnings("ignore:torch.lu is deprecated")
def test_deprecated_lu_factors_a_singular_matrix():
    # torch.lu / Tensor.lu call _lu_with_info, which checks its arguments only: a singular matrix gives LU, pivots
    # (and info > 0), where torchish raised linalg.lu_factor's "U[2,2] is zero"; torch.lu(get_infos=True) is an
    # _lu_with_info, Tensor.lu's results plain tuples
    def fn(T):
        A = T.tensor([[[1., 2.], [2., 4.]], [[4., 3.], [6., 3.]]], requires_grad=True)
        LU, pivots = T.lu(A)
        (LU * T.arange(4.).reshape(2, 2)).sum().backward()
        full = T.lu(A.detach(), get_infos=True)
        return [LU, pivots, A.grad, type(full).__name__, list(full), type(A.lu()).__name__,
                type(A.detach().lu(get_infos=True)).__name__, list(A.detach().lu(get_infos=True))]
    agree(fn)
