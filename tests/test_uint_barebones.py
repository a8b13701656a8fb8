"""PyTorch's "barebones" unsigned dtypes uint16, uint32 and uint64 against torch 2.13's CPU build
(torchish/ops/barebones.py): the few kernels PyTorch has for them (``mul``, bitwise and/or/xor, ``eq``/``ne``,
``sum``/``prod`` and their scans, ``sort``, ``unique``, ``where``, joins, pads, copies) give its values and dtypes,
an op computing in one of them without a kernel raises its NotImplementedError with the same message (before,
torchish computed ``x + 1``, ``x << 8``, ``x.max()``, ``x.flip(0)``... on uint16 where PyTorch raises), and a
uint16 operand promoted to a float computes in that float."""
import pytest

from oracle import needs_torch, same, same_error

X = [5, 1, 3, 2, 4]

ERRORS = {
    "add": lambda t, x: x + x, "add_scalar": lambda t, x: x + 1, "sub": lambda t, x: x - x, "rsub": lambda t, x: 10 - x,
    "lshift": lambda t, x: x << 2, "rshift": lambda t, x: t.bitwise_right_shift(x, x), "not": lambda t, x: ~x,
    "floordiv": lambda t, x: x // 3, "div_floor": lambda t, x: x.div(2, rounding_mode="floor"),
    "div_trunc": lambda t, x: x.div(2, rounding_mode="trunc"), "remainder": lambda t, x: x % 3,
    "fmod": lambda t, x: t.fmod(x, 3), "neg": lambda t, x: -x, "abs": lambda t, x: x.abs(),
    "sign": lambda t, x: x.sign(), "pow": lambda t, x: x ** 2, "maximum": lambda t, x: t.maximum(x, x),
    "minimum": lambda t, x: t.minimum(x, x), "gcd": lambda t, x: t.gcd(x, x), "lcm": lambda t, x: t.lcm(x, x),
    "addcmul": lambda t, x: t.addcmul(x, x, x), "lt": lambda t, x: x < 3, "le": lambda t, x: x <= 3,
    "gt": lambda t, x: x > x, "ge": lambda t, x: x >= 3, "logical_and": lambda t, x: t.logical_and(x, x),
    "logical_not": lambda t, x: t.logical_not(x), "max": lambda t, x: x.max(), "min": lambda t, x: x.min(),
    "max_dim": lambda t, x: x.max(0), "min_dim": lambda t, x: x.min(0), "amax": lambda t, x: x.amax(0),
    "amin": lambda t, x: x.amin(0), "aminmax": lambda t, x: x.aminmax(), "argmax": lambda t, x: x.argmax(),
    "argmin": lambda t, x: x.argmin(), "topk": lambda t, x: x.topk(2), "kthvalue": lambda t, x: x.kthvalue(2),
    "median": lambda t, x: x.median(), "median_dim": lambda t, x: x.median(0), "nanmedian": lambda t, x: x.nanmedian(),
    "nanmedian_dim": lambda t, x: x.nanmedian(0), "mode": lambda t, x: x.mode(), "cummax": lambda t, x: x.cummax(0),
    "cummin": lambda t, x: x.cummin(0), "count_nonzero": lambda t, x: t.count_nonzero(x),
    "nonzero": lambda t, x: x.nonzero(), "argwhere": lambda t, x: t.argwhere(x), "clamp": lambda t, x: x.clamp(1, 3),
    "clamp_min": lambda t, x: x.clamp(min=1), "clamp_max": lambda t, x: x.clamp(max=3),
    "clamp_tensor": lambda t, x: x.clamp(x, x), "relu": lambda t, x: t.relu(x),
    "gather": lambda t, x: x.gather(0, t.tensor([0, 2])), "scatter": lambda t, x: x.scatter(0, t.tensor([0, 1]), x[:2]),
    "scatter_value": lambda t, x: x.scatter(0, t.tensor([0, 1]), 3),
    "scatter_add": lambda t, x: x.scatter_add(0, t.tensor([0, 1]), x[:2]),
    "index_add": lambda t, x: x.index_add(0, t.tensor([0, 1]), x[:2]),
    "index_fill": lambda t, x: x.index_fill(0, t.tensor([1]), 2),
    "index_copy": lambda t, x: x.index_copy(0, t.tensor([0, 1]), x[:2]),
    "index_put": lambda t, x: x.clone().index_put_((t.tensor([0]),), x[:1]),
    "index_select": lambda t, x: x.index_select(0, t.tensor([1, 0])),
    "masked_select": lambda t, x: x.masked_select(x == 1), "masked_scatter": lambda t, x: x.masked_scatter(x == 1, x),
    "setitem_mask": lambda t, x: x.clone().__setitem__(x == 1, 7),
    "masked_fill": lambda t, x: x.masked_fill(x == 1, 0),
    "masked_fill_tensor": lambda t, x: x.masked_fill(x == 1, x[0]),
    "take": lambda t, x: x.take(t.tensor([0, 2])),
    "flip": lambda t, x: x.flip(0), "rot90": lambda t, x: t.rot90(x.view(1, 5)),
    "tril": lambda t, x: x.view(1, 5).tril(), "triu": lambda t, x: x.view(1, 5).triu(),
    "trace": lambda t, x: x.view(1, 5).trace(), "bincount": lambda t, x: t.bincount(x),
    "isin": lambda t, x: t.isin(x, x[:2]), "diff": lambda t, x: x.diff(),
    "searchsorted": lambda t, x: t.searchsorted(x.sort().values, x), "mm": lambda t, x: x.view(1, 5) @ x.view(5, 1),
    "bmm": lambda t, x: t.bmm(x.view(1, 1, 5), x.view(1, 5, 1)), "mv": lambda t, x: t.mv(x.view(1, 5), x),
    "dot": lambda t, x: x @ x, "reflect_pad": lambda t, x: t.nn.functional.pad(x.view(1, 1, 5), (1, 1), mode="reflect"),
    "replicate_pad": lambda t, x: t.nn.functional.pad(x.view(1, 1, 1, 5), (1, 1, 1, 0), mode="replicate"),
    "arange": lambda t, x: t.arange(3, dtype=x.dtype), "linspace": lambda t, x: t.linspace(0, 4, 5, dtype=x.dtype),
    "logspace": lambda t, x: t.logspace(0, 1, 3, dtype=x.dtype),
}


@needs_torch
@pytest.mark.parametrize("op", sorted(ERRORS))
def test_uint16_missing_kernels_raise_torchs_error(op):
    same_error(lambda lib: ERRORS[op](lib, lib.tensor(X, dtype=lib.uint16)))


@needs_torch
@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
@pytest.mark.parametrize("op", ["add_scalar", "lshift", "max", "gt", "flip", "argmin", "clamp_min", "div_trunc"])
def test_uint32_uint64_missing_kernels_raise_torchs_error(op, dtype):
    same_error(lambda lib: ERRORS[op](lib, lib.tensor(X, dtype=getattr(lib, dtype))))


@needs_torch
@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_barebones_kernels_torch_has(dtype):
    """What PyTorch computes on these dtypes (and what computes in a float after promotion) still works."""
    def run(t):
        x = t.tensor(X, dtype=getattr(t, dtype))
        v = x.view(1, 5)
        return [x * x, x * 2, x & 6, x | 1, x ^ x, x == 3, x != x, x.sum(), v.sum(1), x.prod(), x.cumsum(0),
                x.cumprod(0), x.sort(), x.sort(descending=True), x.argsort(), x.unique(return_counts=True),
                t.unique_consecutive(x), t.where(x == 1, x, 0), t.cat([x, x]), t.stack([x, x]), x.repeat(2),
                x.roll(1), t.nn.functional.pad(x, (1, 2)), x[t.tensor([0, 2])], x[1:3], v.t().contiguous(),
                x.any(), x.all(), t.equal(x, x), t.allclose(x, x), x.floor(), x.round(), x.isnan(),
                x.nan_to_num(), x + 0.5, x / 3, x.sqrt(), x.float(), x.to(t.int32), x.tolist(), x[0].item(),
                t.bucketize(t.tensor([1.5, 3.0]), x.sort().values), v.clone().fill_diagonal_(0),
                t.zeros(4, 2, dtype=x.dtype).fill_diagonal_(2.5, wrap=True),
                t.zeros(5, dtype=x.dtype).copy_(x), x.clone().fill_(7), x.sum(dtype=t.int64)]
    same(run)
    same_error(lambda t: WRITES["pad"](t, t.uint16, -1))  # (pad's value is a float: never negative)


@needs_torch
@pytest.mark.parametrize("write", ["fill", "full", "setitem", "fill_diagonal", "pad"])
@pytest.mark.parametrize("dtype,value", [("uint16", 70000), ("uint16", -65536), ("uint16", -1.0), ("uint32", 2 ** 32)])
def test_numbers_out_of_range_raise(write, dtype, value):
    """A number written into uint16/32/64 is checked as PyTorch's ``c10::checked_convert`` checks it (before, it
    wrapped silently): an int may be as low as -max (it wraps), a float may not be negative."""
    same_error(lambda t: WRITES[write](t, getattr(t, dtype), value))


WRITES = {"fill": lambda t, dt, v: t.zeros(2, dtype=dt).fill_(v), "full": lambda t, dt, v: t.full((2,), v, dtype=dt),
          "setitem": lambda t, dt, v: t.zeros(2, dtype=dt).__setitem__(0, v),
          "fill_diagonal": lambda t, dt, v: t.zeros(2, 2, dtype=dt).fill_diagonal_(v),
          "pad": lambda t, dt, v: t.nn.functional.pad(t.zeros(2, dtype=dt), (1, 0), value=v)}


@needs_torch
def test_numbers_in_range_wrap_as_torchs():
    def run(t):
        return [WRITES[w](t, getattr(t, dt), v).to(t.float64) for w in ("fill", "full", "fill_diagonal")
                for dt, v in (("uint16", -1), ("uint16", -65535), ("uint32", -65536), ("uint64", 2 ** 63),
                              ("uint16", 2.7))]
    same(run)
    same_error(lambda t: WRITES["pad"](t, t.uint16, -1))  # (pad's value is a float: never negative)
