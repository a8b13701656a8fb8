"""``torch.masked``'s reductions and normalizations against PyTorch 2.13: values, result dtypes and gradients with
a full mask (one row all masked out), a broadcast mask, ``mask=None``, ``keepdim``, dim tuples, ``dtype=``,
integer inputs, and PyTorch's errors."""
import math

import numpy as np
import pytest

from oracle import arr, check, check_raises, needs_torch

pytestmark = needs_torch

X = arr(3, 4, seed=7)
X64 = X.astype(np.float64)
FULL = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
ROW = np.array([True, False, True, True])  # (broadcast over the rows)
INTS = np.array([[3, -2, 5, 1], [0, 4, -1, 2], [7, 7, -3, 0]], np.int32)

MASKS = {"full": FULL, "row": ROW, "none": None}

# name -> the call with the reduced/normalized dim; every op takes mask=
CALLS = {
    "sum": lambda T, x, **k: T.masked.sum(x, 1, **k),
    "prod": lambda T, x, **k: T.masked.prod(x, 1, **k),
    "amax": lambda T, x, **k: T.masked.amax(x, 1, **k),
    "amin": lambda T, x, **k: T.masked.amin(x, 1, **k),
    "argmax": lambda T, x, **k: T.masked.argmax(x, 1, **k),
    "argmin": lambda T, x, **k: T.masked.argmin(x, 1, **k),
    "mean": lambda T, x, **k: T.masked.mean(x, 1, **k),
    "median": lambda T, x, **k: T.masked.median(x, 1, **k),
    "logsumexp": lambda T, x, **k: T.masked.logsumexp(x, 1, **k),
    "norm": lambda T, x, **k: T.masked.norm(x, 2.0, 1, **k),
    "norm_inf": lambda T, x, **k: T.masked.norm(x, math.inf, 1, **k),
    "norm_ninf": lambda T, x, **k: T.masked.norm(x, -math.inf, 1, **k),
    "norm_1": lambda T, x, **k: T.masked.norm(x, 1.0, 1, **k),
    "var": lambda T, x, **k: T.masked.var(x, 1, **k),
    "std": lambda T, x, **k: T.masked.std(x, 1, **k),
    "var_biased": lambda T, x, **k: T.masked.var(x, 1, unbiased=False, **k),
    "std_correction": lambda T, x, **k: T.masked.std(x, 1, correction=2, **k),
    "softmax": lambda T, x, **k: T.masked.softmax(x, 1, **k),
    "log_softmax": lambda T, x, **k: T.masked.log_softmax(x, 1, **k),
    "softmin": lambda T, x, **k: T.masked.softmin(x, 1, **k),
    "normalize": lambda T, x, **k: T.masked.normalize(x, 2.0, 1, **k),
    "cumsum": lambda T, x, **k: T.masked.cumsum(x, 1, **k),
    "cumprod": lambda T, x, **k: T.masked.cumprod(x, 1, **k),
}


def _masked(call, **kwargs):
    def fn(T, x, m):
        return call(T, x, mask=m, **kwargs)
    return fn


@pytest.mark.parametrize("name", list(CALLS))
def test_values_and_gradients_float32(name):
    check(_masked(CALLS[name]), [X, FULL])


@pytest.mark.parametrize("mask", ["row", "none"])
@pytest.mark.parametrize("name", ["sum", "amax", "mean", "std", "softmax", "norm", "cumprod", "median"])
def test_broadcast_mask_and_no_mask(name, mask):
    check(_masked(CALLS[name]), [X, MASKS[mask]])


@pytest.mark.parametrize("name", ["sum", "amax", "median", "var", "log_softmax", "normalize"])
def test_values_and_gradients_float64(name):
    check(_masked(CALLS[name]), [X64, FULL])


REDUCE_ALL = ["sum", "prod", "amin", "var"]


def _reduce(name, dim, keepdim, mask):
    def fn(T, x, m):
        op = getattr(T.masked, name)
        args = (2.0, dim) if name == "norm" else (dim,)
        return op(x, *args, keepdim=keepdim, mask=m)
    return fn


@pytest.mark.parametrize("dim", [None, (-1, 0), 0])
@pytest.mark.parametrize("name", REDUCE_ALL)
def test_dims_and_keepdim(name, dim):
    check(_reduce(name, dim, True, FULL), [X, FULL])
    check(_reduce(name, dim, False, ROW), [X, ROW])
    check(_reduce(name, () if dim is None else dim, False, None), [X, None])


@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "argmax", "argmin", "median", "cumsum",
                                  "cumprod", "var", "std", "mean", "logsumexp", "norm"])
def test_integer_input(name):
    # sum/prod promote small integers to int64; argmax returns the input's dtype; median needs a masked-in
    # element per row; mean/logsumexp/norm of integers raise what PyTorch raises
    def fn(T, x, m):
        return CALLS[name](T, x, mask=m)
    mask = ROW
    try:
        check(fn, [INTS, mask], grad=False)
    except Exception:
        check_raises(lambda T: fn(T, T.tensor(INTS), T.tensor(mask)))


@pytest.mark.parametrize("name,dtype", [("sum", "float64"), ("prod", "float64"), ("amax", "float64"),
                                        ("mean", "float64"), ("softmax", "float64"), ("cumsum", "float64"),
                                        ("norm", "float64"), ("var", "float64"), ("argmax", "int64")])
def test_dtype_argument(name, dtype):
    check(lambda T, x, m: CALLS[name](T, x, mask=m, dtype=getattr(T, dtype)), [X, FULL])


def test_logaddexp_masks_each_operand():
    other = arr(3, 4, seed=8)

    def fn(T, a, b, ma, mb):
        return T.masked.logaddexp(a, b, input_mask=ma, other_mask=mb)
    check(fn, [X, other, FULL, ROW])
    check(lambda T, a, b: T.masked.logaddexp(a, b, dtype=T.float32), [X64, other.astype(np.float64)])
    check(lambda T, a, b: T.masked._ops.logaddexp(a, b, input_mask=T.tensor(ROW)), [X, other])


def test_nonbool_mask_is_converted():
    check(lambda T, x: T.masked.sum(x, 0, mask=T.tensor(FULL.astype(np.int64))), [X])


def test_zero_dim_input():
    check(lambda T, x: T.masked.sum(x, 0, mask=T.tensor(True)), [np.array(2.5, np.float32)])
    check(lambda T, x: T.masked.amax(x, mask=T.tensor(False)), [np.array(2.5, np.float32)])


@pytest.mark.parametrize("call", [
    lambda T, x: T.masked.sum(x, 1, mask=T.ones(1, 3, 4, dtype=T.bool)),   # mask has more dims: IndexError
    lambda T, x: T.masked.sum(x, 1, mask=T.ones(3, dtype=T.bool)),         # not broadcastable
    lambda T, x: T.masked.sum(x, 2, mask=T.ones(4, dtype=T.bool)),         # dim out of range
    lambda T, x: T.masked.sum(x, (1, 1), mask=T.ones(4, dtype=T.bool)),    # repeated dim
    lambda T, x: T.masked.mean(x.long(), 1, mask=T.ones(4, dtype=T.bool)),  # mean of integers
    lambda T, x: T.masked.mean(x, 1, dtype=T.int32),
    lambda T, x: T.masked.median(x.long(), 1, mask=T.tensor(FULL)),        # all-masked integer row
    lambda T, x: T.masked.var(x, 1, unbiased=True, correction=1),
    lambda T, x: T.masked.norm(x.long(), -math.inf, 1, mask=T.tensor(FULL)),
    lambda T, x: T.masked.argmax(x.to_sparse(), 1, mask=T.tensor(FULL)),
    lambda T, x: T.masked.logaddexp(x.to_sparse(), x),
])
def test_errors(call):
    check_raises(lambda T: call(T, T.tensor(X)))


def test_error_messages():
    import torchish
    x = torchish.tensor(X)
    with pytest.raises(ValueError, match=r"mean\(\): Could not infer output dtype. Input dtype must be either a "
                                         r"floating point or complex dtype. Got: torch.int64"):
        torchish.masked.mean(x.long(), 1, mask=torchish.tensor(FULL))
    with pytest.raises(ValueError, match="masked median expects no fully masked out rows"):
        torchish.masked.median(x.long(), 1, mask=torchish.tensor(FULL))
    with pytest.raises(IndexError, match="_input_mask expected broadcastable mask"):
        torchish.masked.sum(x, 1, mask=torchish.ones(1, 3, 4, dtype=torchish.bool))


def test_public_names():
    import torch
    import torchish
    assert sorted(torchish.masked.__all__) == sorted(torch.masked.__all__)
