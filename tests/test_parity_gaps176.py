"""Parity gaps left open by an earlier session, each compared with torch 2.13's CPU build.

1. uint16/uint32/uint64 edges: ``torch.tensor`` of floats, NaN and out-of-range values into uint64 (PyTorch unpacks
   each element as a Python int), NaN/inf/out-of-range floats converted to the unsigned types (x86's C casts), a
   Python int in [2^63, 2^64) in arithmetic (a uint64 number, wrapping into the result type), pow's exponent checks,
   and histc's kernel order on unsigned and bool tensors.
2. ``mean``/``sum``/``prod`` argument forms: an explicit ``dim=None``/``axis=None`` is the dim overload (its
   node, MeanBackward1, its out= checks), both NumPy and PyTorch spellings at once and a method's ``out=`` are the
   parser's TypeErrors.
3. ``torch.vander`` builds ATen's graph (CopySlices over CumprodBackward0 of a slice of the first CopySlices,
   flipped); PyTorch's own backward through it raises (cumprod's saved columns were overwritten), and so does
   torchish's.
4. ``F.scaled_dot_product_attention``'s CPU math path with dropout and with grouped-query heads records ATen's
   graph op by op (dropout: MulBackward0 with the scaled noise; GQA: repeat_interleave's View/Clone/Expand/Unsqueeze
   over key and value), and ``repeat_interleave`` with a number of repeats builds ATen's composite graph.
5. ``torch.sparse.check_sparse_tensor_invariants`` (context manager, decorator, enable/disable/is_enabled) and the
   constructors' ``check_invariants=``: the checks' errors where checking is on, none where it is off (for entries
   torchish can place), the implicit-off and CSR beta warnings.
"""
import contextlib
import warnings

import numpy as np
import pytest

import torchish
from oracle import graph_walk, needs_torch, same, same_error, torch

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state",
                                                       "ignore:Sparse invariant checks are implicitly disabled")]

NAN, INF = float("nan"), float("inf")
B = 2 ** 63 + 5  # a Python int PyTorch reads as a uint64 number


# ---------------------------------------------------------------------------------------------------------------
# 1. unsigned edges

@pytest.mark.parametrize("data", [[2.5], [-1.5, 2.7], [NAN], [1, 2.5], [-1], [-2 ** 63], [2 ** 64]],
                         ids=["float", "negative_float", "nan", "mixed", "negative_int", "int64_min", "too_big"])
def test_uint64_tensor_of_non_ints_raises_as_torch(data):
    same_error(lambda t: t.tensor(data, dtype=t.uint64))


@pytest.mark.parametrize("data", [[2 ** 64 - 1, 0], [True, 3]])
def test_uint64_tensor_of_ints(data):
    same(lambda t: t.tensor(data, dtype=t.uint64))


@pytest.mark.parametrize("leaf", ["tensor", "numpy"])
def test_uint64_tensor_of_tensor_or_numpy_scalar_raises(leaf):
    same_error(lambda t: t.tensor([t.tensor(2) if leaf == "tensor" else np.int64(2)], dtype=t.uint64))


@pytest.mark.parametrize("dt", ["uint32", "uint16", "uint8", "int32"])
@pytest.mark.parametrize("data", [[2.5], [NAN], [INF], [-1.5]])
def test_tensor_of_floats_into_narrow_ints(dt, data):
    fn = lambda t: t.tensor(data, dtype=getattr(t, dt))  # noqa: E731
    if data == [2.5] or (data == [-1.5] and dt == "int32"):
        same(fn)
    else:
        same_error(fn)


# 16 values: whole vectors of PyTorch's CPU conversion loop (its scalar remainder converts uint32 otherwise)
CAST_VALUES = [NAN, INF, -INF, 1e20, -1e20, -3.7, 2.9, 70000.0, -70000.0, 3e9, 5e9, -3e9, 2.0 ** 63, 1e19, -1e19,
               2.0 ** 31]


@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("src", ["float32", "float64", "bfloat16"])
def test_nonfinite_and_out_of_range_floats_to_unsigned(dt, src):
    same(lambda t: t.tensor(CAST_VALUES, dtype=getattr(t, src)).to(getattr(t, dt)))


def test_numpy_floats_into_unsigned_tensor():
    values = np.array(CAST_VALUES)
    same(lambda t: [t.tensor(values, dtype=t.uint16), t.tensor(values, dtype=t.uint32),
                    t.tensor(values, dtype=t.uint64)])


@pytest.mark.parametrize("case", [
    lambda t: t.tensor([3], dtype=t.uint16) * 2 ** 63, lambda t: t.tensor([3], dtype=t.uint16) * B,
    lambda t: t.tensor([3], dtype=t.uint32).mul_(B), lambda t: t.tensor([3], dtype=t.uint64) * B,
    lambda t: t.tensor([3], dtype=t.uint8) + B, lambda t: t.tensor([1]) + B, lambda t: B - t.tensor([1]),
    lambda t: t.tensor([3], dtype=t.int32) + B, lambda t: t.tensor([3]) // B, lambda t: t.tensor([3]) & B,
    lambda t: t.tensor([3]) == B, lambda t: t.tensor([1.5]) + B, lambda t: t.tensor([1.5], dtype=t.float64) * B,
], ids=["u16_mul_2**63", "u16_mul", "u32_mul_", "u64_mul", "u8_add", "i64_add", "rsub", "i32_add", "floordiv",
        "bitwise_and", "eq", "f32_add", "f64_mul"])
def test_python_int_beyond_int64_in_arithmetic(case):
    same(case)


@pytest.mark.parametrize("case", [
    lambda t: t.tensor([3], dtype=t.uint16) * 2 ** 64, lambda t: t.tensor([3.0]) * 2 ** 64,
    lambda t: t.tensor([3], dtype=t.uint32) * (-2 ** 63 - 1), lambda t: t.tensor([True]) + B,
    lambda t: t.tensor([3], dtype=t.uint16) + B, lambda t: t.tensor([2]) ** B, lambda t: t.tensor([True]) ** B,
    lambda t: t.tensor([2], dtype=t.uint8) ** 300, lambda t: t.tensor([2], dtype=t.int32) ** 2 ** 40,
    lambda t: t.tensor([2], dtype=t.int32) ** (-B), lambda t: t.tensor([2], dtype=t.int32) ** -2 ** 63,
], ids=["u16_2**64", "f32_2**64", "below_int64", "bool_promotion", "u16_add_kernel", "pow_int64", "pow_bool",
        "pow_u8", "pow_i32", "pow_below_int64", "pow_negative"])
def test_python_int_beyond_int64_errors(case):
    same_error(case)


def test_pow_in_range_exponents():
    same(lambda t: [t.tensor([2]) ** (2 ** 63 - 1), t.tensor([True]) ** 300, t.tensor([3], dtype=t.int8) ** 4])


@pytest.mark.parametrize("dt", ["uint16", "uint64", "bool", "int64"])
@pytest.mark.parametrize("kw", [{}, dict(bins=4, min=0, max=3), dict(bins=0), dict(min=3, max=0),
                                dict(min=NAN, max=1)], ids=["auto", "range", "no_bins", "reversed", "nan"])
def test_histc_non_float_errors(dt, kw):
    for data in ([1, 2], []):
        same_error(lambda t: t.histc(t.tensor(data, dtype=getattr(t, dt)), **kw))


@pytest.mark.parametrize("dt, data, kw", [
    ("uint8", [0, 0], {}), ("uint8", [], {}), ("uint8", [1], dict(min=-5, max=3)), ("int8", [1], dict(min=0, max=300)),
    ("int8", [127, 127], {}), ("int8", [], dict(min=5, max=5)), ("uint8", [3], dict(min=-0.5, max=3)),
], ids=["uint8_zeros", "uint8_empty", "uint8_negative_min", "int8_max", "int8_widened", "int8_given", "uint8_half"])
def test_histc_integer_bin_edges_must_fit(dt, data, kw):
    same_error(lambda t: t.histc(t.tensor(data, dtype=getattr(t, dt)), **kw))


# ---------------------------------------------------------------------------------------------------------------
# 2. mean (and sum/prod) argument forms

MEAN_CALLS = {
    "axis_none_out_none": lambda t, x: t.mean(x, axis=None, out=None),
    "axis_none": lambda t, x: t.mean(x, axis=None), "method_axis_none": lambda t, x: x.mean(axis=None),
    "dim_none": lambda t, x: t.mean(x, dim=None), "positional_none": lambda t, x: t.mean(x, None),
    "dim_none_out": lambda t, x: t.mean(x, dim=None, out=t.zeros(())),
    "axis_none_keepdims": lambda t, x: t.mean(x, axis=None, keepdims=True),
    "method_dim_none_keepdim": lambda t, x: x.mean(dim=None, keepdim=True),
    "no_dim": lambda t, x: t.mean(x), "out_only": lambda t, x: t.mean(x, out=t.zeros(())),
    "sum_dim_none_out": lambda t, x: t.sum(x, dim=None, out=t.zeros(())),
    "sum_axis_none": lambda t, x: t.sum(x, axis=None), "sum_no_dim": lambda t, x: t.sum(x),
    "method_sum_none": lambda t, x: x.sum(None),
}


@pytest.mark.parametrize("name", MEAN_CALLS)
def test_mean_dim_none_forms_values_and_node(name):
    """Values, dtype, shape and the node's name (an out= call runs without grad: out= refuses a graph)."""
    data = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = []
    for t in (torch, torchish):
        x = t.tensor(data, requires_grad=True)
        with t.no_grad() if "out" in name and "out_none" not in name else contextlib.nullcontext():
            y = MEAN_CALLS[name](t, x)
        got.append((y.detach().numpy().tolist(), str(y.dtype), tuple(y.shape),
                    None if y.grad_fn is None else y.grad_fn.name()))
    assert got[0] == got[1]


@pytest.mark.parametrize("case", [
    lambda t, x: x.mean(out=t.zeros(())), lambda t, x: x.sum(out=t.zeros(())), lambda t, x: x.prod(out=t.zeros(())),
    lambda t, x: x.std(out=t.zeros(())), lambda t, x: t.mean(x, dim=0, axis=0), lambda t, x: x.mean(dim=0, axis=1),
    lambda t, x: t.sum(x, dim=0, axis=0), lambda t, x: t.std(x, dim=0, axis=0), lambda t, x: x.var(dim=0, axis=1),
    lambda t, x: t.mean(x, 0, keepdim=True, keepdims=True), lambda t, x: t.prod(x, out=t.zeros(())),
    lambda t, x: t.sum(x, out=t.zeros(())), lambda t, x: t.mean(x, out=t.zeros((), dtype=t.int64)),
    lambda t, x: t.mean(x, dim=None, out=t.zeros((), dtype=t.int64)),
    lambda t, x: t.mean(x, axis=None, out=t.zeros((), dtype=t.int64)),
], ids=["method_mean_out", "method_sum_out", "method_prod_out", "method_std_out", "mean_dim_axis",
        "method_mean_dim_axis", "sum_dim_axis", "std_dim_axis", "method_var_dim_axis", "keepdim_keepdims",
        "prod_out_no_dim", "sum_out_no_dim", "mean_dtype_out", "mean_dim_none_int_out", "mean_axis_none_int_out"])
def test_reduction_argument_errors(case):
    same_error(lambda t: case(t, t.ones(2, 3)))


# ---------------------------------------------------------------------------------------------------------------
# 3. torch.vander's graph

@pytest.mark.parametrize("N, increasing, dt", [(None, False, "float64"), (3, True, "complex64"), (1, False, "float64"),
                                               (0, True, "float32")])
def test_vander_graph_values_and_backward(N, increasing, dt):
    got = []
    for t in (torch, torchish):
        x = t.tensor([1.5, -2.0, 0.5], dtype=getattr(t, dt), requires_grad=True)
        y = t.vander(x, N, increasing) if N is not None else t.vander(x, increasing=increasing)
        walk = graph_walk(y.grad_fn) if y.grad_fn is not None else None
        err = None
        if y.requires_grad:
            with pytest.raises(RuntimeError) as e:
                y.backward(t.ones_like(y))
            # (the stale tensor as PyTorch shows it; a complex one it names by its legacy type string,
            # "CPUComplexFloatType", which torchish's check does not: compared up to the tensor for those)
            err = str(e.value).split("[")[0 if dt.startswith("complex") else 1].split("]")[0]
        got.append((walk, y.requires_grad, str(y.dtype), tuple(y.shape), y.detach().numpy().tolist(), err))
    assert got[0] == got[1]


def test_vander_dtypes():
    """Integer and bool inputs give int64 (their type promoted with Long)."""
    same(lambda t: [t.vander(t.tensor([1, 0, 2, 3]).to(getattr(t, dt)), N, inc)
                    for dt, N, inc in (("uint8", None, False), ("bool", None, True), ("int64", None, False))])


# ---------------------------------------------------------------------------------------------------------------
# 4. sdpa's math path: dropout and grouped-query heads

_RNG = np.random.default_rng(0)
Q = _RNG.standard_normal((1, 4, 3, 2)).astype(np.float32)
KV = _RNG.standard_normal((2, 1, 2, 5, 2)).astype(np.float32)  # key, value: 2 heads for query's 4


def _sdpa_both(make):
    """``make(lib)`` -> (output, inputs that require grad), run seeded in both libraries: the graph to depth 12,
    values, dtype and each input's gradient."""
    got = []
    for t in (torch, torchish):
        t.manual_seed(0)
        y, inputs = make(t)
        y.backward(t.ones_like(y))
        got.append((graph_walk(y.grad_fn, depth=12), str(y.dtype), y.detach().numpy(),
                    [x.grad.numpy() for x in inputs]))
    (walk, dt, y, grads), (walk2, dt2, y2, grads2) = got
    assert walk == walk2 and dt == dt2
    np.testing.assert_allclose(y2, y, rtol=1e-5, atol=1e-6)
    for g, g2 in zip(grads, grads2):
        np.testing.assert_allclose(g2, g, rtol=1e-5, atol=1e-6)


def _qkv(t, heads=4, three_d=False):
    k, v = (np.concatenate([a, a], 1) if heads == 4 else a for a in KV)
    q, k, v = (t.tensor(a[0] if three_d else a, requires_grad=True) for a in (Q, k, v))
    return q, k, v


@pytest.mark.parametrize("p", [0.5, 1.0])
def test_sdpa_math_dropout_graph_values_grads(p):
    def make(t):
        q, k, v = _qkv(t)
        return t.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=p), (q, k, v)
    _sdpa_both(make)


@pytest.mark.parametrize("case", ["mask_requires_grad", "three_d", "dropout"])
def test_sdpa_math_grouped_query_graph_values_grads(case):
    def make(t):
        q, k, v = _qkv(t, heads=2, three_d=case == "three_d")
        mask = t.zeros(3, 5, requires_grad=True) if case == "mask_requires_grad" else None
        y = t.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True,
                                                         dropout_p=0.3 if case == "dropout" else 0.0)
        return y, (q, k, v) + ((mask,) if mask is not None else ())
    _sdpa_both(make)


@pytest.mark.parametrize("case", [
    lambda t, x: x.repeat_interleave(2), lambda t, x: x.repeat_interleave(0, 1), lambda t, x: x.t().repeat_interleave(2, 1),
    lambda t, x: (x * 1).repeat_interleave(3, -1, output_size=9), lambda t, x: x[0, 0].repeat_interleave(2),
    lambda t, x: x.repeat_interleave(t.tensor([1, 2]), 0),
], ids=["flat", "zero", "transposed", "output_size", "zero_dim", "tensor_repeats"])
def test_repeat_interleave_graph(case):
    got = []
    for t in (torch, torchish):
        x = t.tensor([[1.0, 2, 3], [4, 5, 6]], requires_grad=True)
        y = case(t, x)
        y.backward(t.arange(y.numel(), dtype=y.dtype).reshape(y.shape))
        got.append((graph_walk(y.grad_fn), y.tolist(), x.grad.tolist(), y.is_contiguous()))
    assert got[0] == got[1]


def test_repeat_interleave_output_size_error():
    same_error(lambda t: t.ones(2, 3).repeat_interleave(2, 1, output_size=5))


# ---------------------------------------------------------------------------------------------------------------
# 5. sparse invariant checks

def _warnings_of(lib, fn):
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            fn(lib)
    finally:
        lib.set_warn_always(False)
    return [str(w.message).split("  (Triggered internally")[0].split(" (Triggered internally")[0] for w in got]


def test_sparse_implicitly_disabled_and_csr_beta_warnings():
    """(First in this section: once the switch is set in a process, PyTorch no longer warns.)"""
    make = lambda t: t.sparse_csr_tensor([0, 1, 2], [0, 1], [1.0, 2.0], (2, 2))  # noqa: E731
    ref = _warnings_of(torch, make)
    if not any("implicitly disabled" in m for m in ref):
        pytest.skip("PyTorch's invariant-check switch was set explicitly earlier in this process")
    assert _warnings_of(torchish, make) == ref
    quiet = lambda t: t.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,), check_invariants=False)  # noqa: E731
    assert _warnings_of(torchish, quiet) == _warnings_of(torch, quiet) == []


@pytest.fixture
def restore_switch():
    states = [lib.sparse.check_sparse_tensor_invariants.is_enabled() for lib in (torch, torchish)]
    yield
    for lib, state in zip((torch, torchish), states):
        (lib.sparse.check_sparse_tensor_invariants.enable if state else
         lib.sparse.check_sparse_tensor_invariants.disable)()


def test_check_sparse_tensor_invariants_switch(restore_switch):
    def states(t):
        c = t.sparse.check_sparse_tensor_invariants
        c.disable()
        seen = [c.is_enabled()]
        with c():
            seen.append(c.is_enabled())
            with c(False):
                seen.append(c.is_enabled())
            seen.append(c.is_enabled())
        seen.append(c.is_enabled())
        seen.append(c(True)(lambda: c.is_enabled())())
        c.enable()
        seen.append(c.is_enabled())
        seen.append(c(False)(lambda: c.is_enabled())())
        seen.append(c.is_enabled())
        return seen
    assert states(torchish) == states(torch)


def test_check_sparse_tensor_invariants_instance_reentered(restore_switch):
    def reenter(t):
        cm = t.sparse.check_sparse_tensor_invariants()
        with cm:
            with cm:
                pass
    same_error(reenter)


COO_BAD = {
    "out_of_range": lambda t, **k: t.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,), **k),
    "negative": lambda t, **k: t.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (3,), **k),
    "out_of_range_2d": lambda t, **k: t.sparse_coo_tensor([[0, 1], [0, 7]], [1.0, 2.0], (2, 3), **k),
    "one_dim_indices": lambda t, **k: t.sparse_coo_tensor(t.tensor([0, 1]), [1.0, 2.0], (3,), **k),
}
CSR_BAD = {
    "unsorted": lambda t, **k: t.sparse_csr_tensor([0, 2, 3], [2, 0, 1], [1.0, 2.0, 3.0], (2, 3), **k),
    "duplicate": lambda t, **k: t.sparse_csr_tensor([0, 2, 3], [1, 1, 1], [1.0, 2.0, 3.0], (2, 3), **k),
    "last_offset": lambda t, **k: t.sparse_csr_tensor([0, 3, 2], [0, 1, 2], [1.0, 2.0, 3.0], (2, 3), **k),
    "first_offset": lambda t, **k: t.sparse_csr_tensor([1, 2, 3], [0, 1, 2], [1.0, 2.0, 3.0], (2, 3), **k),
    "column": lambda t, **k: t.sparse_csr_tensor([0, 2, 3], [0, 4, 1], [1.0, 2.0, 3.0], (2, 3), **k),
    "offsets_length": lambda t, **k: t.sparse_csr_tensor([0, 2, 3, 3], [0, 1, 1], [1.0, 2.0, 3.0], (2, 3), **k),
    "mixed_dtypes": lambda t, **k: t.sparse_csr_tensor(t.tensor([0, 2, 3], dtype=t.int32), [0, 1, 1],
                                                       [1.0, 2.0, 3.0], (2, 3), **k),
    "float_offsets": lambda t, **k: t.sparse_csr_tensor(t.tensor([0.0, 2, 3]), [0, 1, 1], [1.0, 2.0, 3.0], (2, 3),
                                                        **k),
    "int16": lambda t, **k: t.sparse_csr_tensor(t.tensor([0, 2, 3], dtype=t.int16),
                                                t.tensor([0, 1, 1], dtype=t.int16), [1.0, 2.0, 3.0], (2, 3), **k),
}


@pytest.mark.parametrize("name, how", [(n, "argument") for n in [*COO_BAD, *CSR_BAD]] +
                         [(n, h) for n in ("out_of_range", "unsorted") for h in ("context", "decorator", "enable")])
def test_invariant_errors_when_checking(name, how, restore_switch):
    build = {**COO_BAD, **CSR_BAD}[name]

    def call(t):
        c = t.sparse.check_sparse_tensor_invariants
        if how == "argument":
            c.disable()
            return build(t, check_invariants=True)
        if how == "context":
            with c():
                return build(t)
        if how == "decorator":
            return c()(lambda: build(t))()
        c.enable()
        return build(t)
    same_error(call)


@pytest.mark.parametrize("name", ["unsorted", "duplicate", "offsets_length", "mixed_dtypes", "int16"])
def test_csr_unchecked_entries_build_as_torch(name, restore_switch):
    def call(t):
        with t.sparse.check_sparse_tensor_invariants():  # (the argument overrides the switch)
            a = CSR_BAD[name](t, check_invariants=False)
        return [a.crow_indices(), a.col_indices(), a.values(), a.to_dense(), str(a.layout)]
    same(call)


@pytest.mark.parametrize("indices", [[[0.0, 1.7]], [[True, False]]], ids=["float", "bool"])
def test_coo_indices_of_other_dtypes_read_as_int64(indices):
    same(lambda t: [(a := t.sparse_coo_tensor(t.tensor(indices), [1.0, 2.0], (3,), check_invariants=False))
                    ._indices(), a.to_dense()])


def test_coo_one_dim_indices_unchecked_error():
    same_error(lambda t: t.sparse_coo_tensor(t.tensor([0, 1]), [1.0, 2.0], (3,), check_invariants=False))
