"""The order and wording of the matrix products' checks (matmul's batched and folded paths, baddbmm), and what an
empty product of mixed dtypes gives: PyTorch's bmm checks no dtype when there is nothing to multiply, and its
result takes the second operand's dtype."""
from __future__ import annotations

import pytest

from oracle import same, same_error

F32, F64 = "float32", "float64"

# (shape a, shape b, which operand requires grad: 0 none, 1 b, 2 a) -- the requires-grad flag picks PyTorch's path
MATMUL = [((2, 3, 0), (2, 0, 2), 0), ((2, 0, 4), (2, 4, 2), 0), ((0, 3, 4), (0, 4, 2), 0), ((2, 3, 4), (1, 4, 0), 0),
          ((3, 4), (2, 4, 0), 0), ((3, 0), (2, 0, 3), 1), ((3, 0), (2, 0, 3), 0), ((2, 3, 4), (2, 5, 2), 0),
          ((2, 3, 4), (3, 4, 2), 0), ((4,), (2, 4, 0), 0), ((0,), (2, 0, 3), 1), ((1, 3, 4), (2, 4, 5), 2),
          ((3, 4), (2, 4, 3), 1), ((2, 3, 4), (4,), 0), ((2, 3, 0), (0, 2), 0)]


def _matmul(sa, sb, rg, da, db):
    def f(m):
        a = m.ones(*sa, dtype=getattr(m, da), requires_grad=rg == 2)
        b = m.ones(*sb, dtype=getattr(m, db), requires_grad=rg == 1)
        r = m.matmul(a, b)
        return r.detach(), type(r.grad_fn).__name__ if r.grad_fn is not None else None
    return f


@pytest.mark.parametrize("dtypes", [(F64, F32), (F32, F64)])
@pytest.mark.parametrize("sa,sb,rg", MATMUL)
def test_matmul_of_mixed_dtypes(sa, sb, rg, dtypes):
    f = _matmul(sa, sb, rg, *dtypes)
    try:
        same(f)
    except AssertionError:
        raise
    except Exception:  # torch raised: torchish must raise the same message
        same_error(f)


def test_matmul_empty_mixed_product_backward():
    def f(m):
        a = m.ones(2, 3, 0, dtype=m.float64, requires_grad=True)
        b = m.ones(2, 0, 2, requires_grad=True)
        m.matmul(a, b).sum().backward()
        return a.grad, b.grad
    same(f)


BADDBMM = [
    ((2, 3, 2), (2, 3, 4), (2, 4, 2)), ((2, 3, 5), (2, 3, 4), (2, 4, 2)), ((2, 3, 2), (2, 3, 4), (2, 5, 2)),
    ((2, 3, 2), (2, 3, 0), (2, 0, 2)), ((0, 3, 2), (0, 3, 4), (0, 4, 2)), ((2, 3, 2), (3, 4), (2, 4, 2)),
    ((2, 3, 2), (3,), (2, 4, 2)), ((2, 3, 2), (), (2, 4, 2)), ((2, 3, 2), (2, 3, 4), (4, 2)),
    ((2, 3, 2), (2, 3, 4, 1), (2, 4, 2)),
]


@pytest.mark.parametrize("dtypes", [(F32, F32, F64), (F32, F64, F64), (F64, F32, F32), (F32, F64, F32),
                                    (F32, F32, "int64")])
@pytest.mark.parametrize("shapes", BADDBMM)
@pytest.mark.parametrize("beta", [1, 0])
def test_baddbmm_check_order(shapes, dtypes, beta):
    def f(m):
        args = [m.ones(*s, dtype=getattr(m, d)) for s, d in zip(shapes, dtypes)]
        return m.baddbmm(*args, beta=beta)
    try:
        same(f)
    except AssertionError:
        raise
    except Exception:
        same_error(f)


# an empty contraction (nothing to multiply) into a non-empty result: PyTorch scales the result in place by beta
# (``result.mul_(beta)``), so a beta the result's dtype cannot hold raises ("result type Long can't be cast to the
# desired output type Bool"); addmv instead takes beta in input's dtype, Bool included, and mv of Bool gives False
EMPTY_PRODUCTS = {
    "addmm": lambda m, x, b: m.addmm(x(2, 2), x(2, 0), x(0, 2), beta=b),
    "addmm_broadcast": lambda m, x, b: m.addmm(x(2), x(2, 0), x(0, 2), beta=b),
    "addmm_": lambda m, x, b: x(2, 2).addmm_(x(2, 0), x(0, 2), beta=b),
    "addmm_empty_result": lambda m, x, b: m.addmm(x(0, 2), x(0, 3), x(3, 2), beta=b),
    "baddbmm": lambda m, x, b: m.baddbmm(x(1, 2, 2), x(1, 2, 0), x(1, 0, 2), beta=b),
    "baddbmm_": lambda m, x, b: x(1, 2, 2).baddbmm_(x(1, 2, 0), x(1, 0, 2), beta=b),
    "baddbmm_no_batch": lambda m, x, b: m.baddbmm(x(0, 2, 2), x(0, 2, 3), x(0, 3, 2), beta=b),
    "addbmm": lambda m, x, b: m.addbmm(x(2, 2), x(1, 2, 0), x(1, 0, 2), beta=b),
    "addbmm_no_batch": lambda m, x, b: m.addbmm(x(2, 2), x(0, 2, 3), x(0, 3, 2), beta=b),
    "addmv": lambda m, x, b: m.addmv(x(2), x(2, 0), x(0), beta=b),
    "mv": lambda m, x, b: m.mv(x(2, 0), x(0)),
}


@pytest.mark.parametrize("dtype", ["bool", "int64", F32])
@pytest.mark.parametrize("beta", [1, 0, 2, True, 0.5])
@pytest.mark.parametrize("name", list(EMPTY_PRODUCTS))
def test_empty_product_scales_by_beta_in_the_results_dtype(name, beta, dtype):
    def f(m):
        return EMPTY_PRODUCTS[name](m, lambda *s: m.ones(*s, dtype=getattr(m, dtype)), beta)
    try:
        same(f)
    except AssertionError:
        raise
    except Exception:
        same_error(f)


@pytest.mark.parametrize("call", [lambda t: t.size(0), lambda t: t.size(-1), lambda t: t.stride(0),
                                  lambda t: t.size(dim=1)])
def test_size_of_a_zero_dim_tensor(call):
    same_error(lambda m: call(m.ones(())))
