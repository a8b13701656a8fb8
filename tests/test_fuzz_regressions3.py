"""Regressions found by the differential fuzzers (tests/test_fuzz_*.py run with seeds from 9,100,000), continued
from tests/test_fuzz_regressions2.py: each test is the minimised program of one mismatch class, compared with
PyTorch (values, dtypes and gradients, or the exception family) — the grad_fn PyTorch rebuilds for a stale view of
a leaf that is itself a view of a tensor that does not require grad, and setitem with an index that covers the
whole tensor (``y[:] = v``), which PyTorch writes into the tensor itself; the dtype orthogonal polynomials compute
in, diff's shape check of prepend/append for every order, storage reads (as_strided, resize_, storages) through a
permuted or offset layout, and create_graph gradients of empty tensors."""
import warnings

import pytest

from fuzz_harness import agree
from oracle import needs_torch, torchish

warnings.filterwarnings("ignore", category=UserWarning)

# a leaf that requires grad made from a view of a tensor that does not (its autograd base), and one that is its own
LEAVES = {
    "transposed": lambda T: T.arange(40.0).reshape(4, 10).t().requires_grad_(),
    "sliced": lambda T: T.arange(48.0).reshape(12, 4)[1:11].requires_grad_(),
    "reshaped": lambda T: T.arange(40.0).view(10, 4).requires_grad_(),
    "own_base": lambda T: T.arange(40.0).reshape(10, 4).clone().requires_grad_(),
    # detach() makes no autograd view: the detached leaf is its own base (torchish keeps it as an alias)
    "detached": lambda T: T.arange(40.0, requires_grad=True).reshape(10, 4)[:, :].detach().requires_grad_(),
}


def _stale_view(T, make, write):
    w = make(T)
    r = w.select(1, -1)[-8, None]  # a view of the leaf, taken before the write
    with T.no_grad():
        if write == "leaf":
            w.select(-2, 6)[None, -1].mul_(-1.0)
        else:
            r.mul_(2.0)
    loss = (w * w).sum() + (r * 0.5).sum()
    loss.backward()
    return [w.grad, r.detach(), r.grad_fn.name(), r.requires_grad]


@needs_torch
@pytest.mark.parametrize("write", ["leaf", "view"])
@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_stale_view_of_a_leaf_view_rebuilds_its_grad_fn_from_the_base(leaf, write):
    # (index-loop fuzzer seed 9100088) A write made under no_grad moves the version of every view of the storage;
    # PyTorch then rebuilds a view's grad_fn as one AsStridedBackward0 from its autograd base. For a leaf made with
    # requires_grad_() from a view (w = x.t().requires_grad_()), that base is x, which does not require grad: the
    # rebuilt node leads nowhere and the gradient through r is lost (w.grad[2, 3] lacks r's 0.5). torchish rebuilt
    # the node only from a base that requires grad, so r kept its SelectBackward0 and passed the gradient to w.
    # A detached leaf is its own base: the rebuilt node leads to it (torchish did not rebuild it after a write under
    # no_grad; the gradient was the same, the node's name SelectBackward0).
    agree(lambda T: _stale_view(T, LEAVES[leaf], write))


# indices PyTorch's applySlice skips (only slices 0:n with n at least the dim's size, step 1, and ellipses): the write
# goes to the tensor itself, not to a view of it; a literal start of -n keeps the view
WHOLE = {
    "colon": slice(None), "ellipsis": Ellipsis, "both_dims": (slice(None), slice(0, 3)), "past_end": slice(0, 10),
    "step_1": slice(None, None, 1), "colon_ellipsis": (slice(None), Ellipsis), "negative_start": slice(-2, None),
    "part": slice(0, 1), "new_axis": None,
}
VALUES = {
    "number": lambda T: 0.25, "int": lambda T: 3, "0d": lambda T: T.tensor(2.0, requires_grad=True),
    "row": lambda T: T.tensor([1.0, 2.0, 3.0], requires_grad=True), "leading_one": lambda T: T.ones(1, 2, 3) * 0.5,
    "float64": lambda T: T.ones(3, dtype=T.float64), "bad_shape": lambda T: T.ones(2, 1, 3),
}


def _write_whole(T, index, value):
    w = T.arange(6.0).reshape(2, 3).requires_grad_()
    y = w * 1.0
    r = y[0]  # a view taken before the write sees it
    y[index] = value(T)
    loss = (y * y).sum() + r.sum()
    g, = T.autograd.grad(loss, w, create_graph=True)
    return [y.detach(), y.grad_fn.name(), y._version, r.detach(), g, g.requires_grad]


@needs_torch
@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("index", sorted(WHOLE))
def test_setitem_of_the_whole_tensor_writes_it_directly(index, value):
    # (index-loop fuzzer seed 10141009) y[:, 0:3] = 0.25 of a 2x3 y is y.fill_(0.25) in PyTorch (FillBackward3 on
    # y itself): the gradient of (y * y).sum() then stops at the fill, and grad(..., create_graph=True) gives a
    # tensor that does not require grad (so a second backward through it raises). torchish wrote through the view
    # y[:, 0:3] (CopySlices), whose backward kept the product's graph: the gradient required grad.
    agree(lambda T: _write_whole(T, WHOLE[index], VALUES[value]))


@needs_torch
def test_setitem_of_the_whole_leaf_names_the_leaf():
    def fn(T):
        out = []
        for index in (slice(None), (slice(None), slice(0, 3)), slice(0, 1)):
            try:
                T.ones(2, 3, requires_grad=True)[index] = 1.0
            except RuntimeError as e:
                out.append(str(e))
        return out
    agree(fn)


@needs_torch
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_abs_and_norms_of_an_infinite_part_are_infinite(dtype):
    # (math fuzzer seed 7340095) |inf + nan j| is inf in PyTorch (std::abs: hypot), NaN in XLA's complex abs, so
    # abs and every vector norm of such a tensor were NaN where PyTorch's are inf
    inf, nan = float("inf"), float("nan")

    def fn(T):
        z = T.tensor([[complex(inf, nan), complex(0.045, -0.52)], [complex(nan, -inf), complex(-inf, 1.0)]],
                     dtype=getattr(T, dtype))
        return [z.abs(), T.abs(z)] + [T.linalg.vector_norm(z, p, dim=1) for p in (2, 1, 3, 0.5, inf, -inf, 0, -1)]
    agree(fn)


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_ldexp_gradients_round_as_pytorchs_derivative_formulas(dtype):
    # (math fuzzer seed 7340285) LdexpBackward0 computes grad * result * M_LN2 in the result's (half) dtype and sums
    # it to a float32 exponent's shape before the cast: torchish differentiated its forward composite in float32
    def fn(T):
        x = T.tensor([[-3.25, -0.5], [-2.5, 3.75]], dtype=getattr(T, dtype), requires_grad=True)
        out = []
        for e in (T.tensor(-0.0), T.tensor([0.3, -1.2]), T.tensor(0.7, dtype=T.float64)):
            e.requires_grad_()
            y = T.ldexp(x, e)
            y.backward(T.tensor([[0.3, -1.7], [2.2, 0.9]], dtype=y.dtype))
            out += [y, e.grad]
        return out + [x.grad]
    agree(fn)


@needs_torch
def test_lcm_broadcasts_its_operands():
    # (math fuzzer seed 7340291) lcm of a (1,) and a (3, 1, 2) tensor raised a JAX rank error from lax.div
    agree(lambda T: [T.lcm(T.tensor([-3]), T.tensor([[[1, -6]], [[4, 32766]], [[0, -32767]]], dtype=T.int16)),
                     T.lcm(T.tensor([[4], [6]], dtype=T.int8), T.tensor([3, 10], dtype=T.int8))])


@needs_torch
@pytest.mark.parametrize("pair", ["bf16_0d_with_empty_f32", "bf16_with_0d_f32", "bf16_with_f32", "f16_0d_with_int",
                                  "int_with_number", "f64_with_bf16", "complex_number"])
def test_orthogonal_polynomials_check_the_dtype_they_compute_in(pair):
    # (math fuzzer seed 8200063) chebyshev_polynomial_t(tensor(1.5, bfloat16), zeros(0, 1)) runs in float32 in
    # PyTorch (the 0-d bfloat16 promotes with the float32 tensor); torchish refused each bfloat16 input by itself
    def fn(T):
        args = {"bf16_0d_with_empty_f32": (T.tensor(1.5, dtype=T.bfloat16), T.zeros(0, 1)),
                "bf16_with_0d_f32": (T.tensor([1.5], dtype=T.bfloat16), T.tensor(2.0)),
                "bf16_with_f32": (T.tensor([1.5], dtype=T.bfloat16), T.tensor([2.0, 3.0])),
                "f16_0d_with_int": (T.tensor(1.5, dtype=T.float16), T.tensor([2, 3])),
                "int_with_number": (T.tensor([1, 2]), 2),
                "f64_with_bf16": (T.tensor([0.25], dtype=T.float64), T.tensor([3.0], dtype=T.bfloat16)),
                "complex_number": (T.tensor([0.5]), 1j)}[pair]
        return [T.special.chebyshev_polynomial_t(*args), T.special.hermite_polynomial_h(*args),
                T.special.shifted_legendre_polynomial_p(*args)]
    agree(fn)


@needs_torch
@pytest.mark.parametrize("case", ["n0_prepend", "n0_append_other_dim", "n1_prepend", "n0_matching", "dim0"])
def test_diff_checks_prepend_and_append_shapes_for_every_order(case):
    # (math fuzzer seed 8400115) diff(x, n=0, prepend=...) with a prepend of another shape: PyTorch's diff_check
    # raises before it looks at n; torchish returned the input
    def fn(T):
        x = T.tensor([[[0, 1], [5, 3]]], dtype=T.uint8)
        return {"n0_prepend": lambda: T.diff(x, n=0, dim=1, prepend=T.tensor([[[-1.5], [-0.0]]], dtype=T.float16)),
                "n0_append_other_dim": lambda: T.diff(x, n=0, dim=2, append=T.ones(1, 3, 1, dtype=T.uint8)),
                "n1_prepend": lambda: T.diff(x.float(), n=1, dim=2, prepend=T.ones(2, 2, 1)),
                "n0_matching": lambda: T.diff(x, n=0, dim=2, prepend=T.ones(1, 2, 3, dtype=T.uint8)),
                "dim0": lambda: T.diff(x.float(), dim=0, append=T.ones(1, 2, 2))}[case]()
    agree(fn)


def _storage_read(T, case):
    x = T.arange(12.0).reshape(3, 4)
    y = x.t().clone()  # strides (1, 4): its storage holds x's order
    if case == "scatter_offset":
        v = T.tensor([False, True, True, False, True, True, False, False, True, True, False, True, False])[1:]
        s = T.select_scatter(v.view(3, 2, 2), T.tensor([[2, -3], [0, -6], [6, -3]], dtype=T.int8), 2, -1)
        return [s.as_strided((2, 2), (2, 1), 1), s.as_strided((3, 2), (1, 3), 2), s.storage_offset()]
    if case == "slice_scatter_offset":
        s = T.slice_scatter(T.arange(13.0)[1:].view(3, 4), T.zeros(3, 1), 1, 0, 1)
        return [s.as_strided((2, 2), (2, 1), 1), s.as_strided((4,), (3,), 2)]
    if case == "permuted_clone":
        return [y.as_strided((2, 3), (1, 2), 1), y.as_strided((4,), (1,)), y.as_strided((2, 2), (4, 1), 5)]
    if case == "permuted_result":
        return [(x.t() * 2).as_strided((2, 3), (1, 2), 1), (x.t() > 4).as_strided((3,), (2,), 3)]
    if case == "write_through":
        y.as_strided((2, 3), (1, 2), 1).mul_(10)
        return y
    if case == "view_of_permuted":
        return y[1:, 1:].as_strided((2, 2), (1, 4), 5)
    if case == "grad":
        w = T.arange(12.0, dtype=T.float64).reshape(3, 4).requires_grad_()
        g = (w.t() * 1.0).as_strided((2, 3), (1, 2), 1)
        (g * T.arange(6.0, dtype=T.float64).reshape(2, 3)).sum().backward()
        return [g, w.grad]
    if case == "as_strided_scatter":
        s = T.as_strided_scatter(y, T.full((2, 2), -1.0), (2, 2), (4, 1), 1)
        return [s, s.stride()]
    if case == "resize_grow":
        return y.resize_(14)[:12]
    if case == "resize_shrink":
        return y.resize_(2, 3)
    return [y.untyped_storage().nbytes(), y.storage().tolist(),
            T.diagonal_scatter(T.arange(13.0)[1:].view(3, 4), T.zeros(3)).untyped_storage().nbytes()]


@needs_torch
@pytest.mark.parametrize("case", ["scatter_offset", "slice_scatter_offset", "permuted_clone", "permuted_result",
                                  "write_through", "view_of_permuted", "grad", "as_strided_scatter", "resize_grow",
                                  "resize_shrink", "storage"])
def test_storage_reads_follow_a_tensors_strides_not_its_element_order(case):
    # (ops fuzzer seed 9100203) as_strided of a select_scatter result (strides and storage offset 1 kept from its
    # input, as PyTorch's clone_preserve_strides) read the elements in their own order from position 0: torchish
    # took a tensor that is no view for a storage in element order, wrong too for a permuted clone or result
    # (x.t().clone(), x.t() * 2) in as_strided, as_strided_scatter, resize_ and the storage's bytes
    agree(lambda T: _storage_read(T, case))


def test_storage_outside_a_scatter_results_elements_is_refused_not_made_up():
    # A known gap: PyTorch's *_scatter result keeps a copy of its input's whole storage (storage position 0 here,
    # below the storage offset 1); torchish holds only the result's elements, so reading there raises (it read
    # another element before seed 9100203's fix)
    s = torchish.slice_scatter(torchish.arange(13.0)[1:].view(3, 4), torchish.zeros(3, 1), 1, 0, 1)
    assert s.untyped_storage().nbytes() == 52
    with pytest.raises(RuntimeError, match="outside the elements of a tensor with sizes"):
        s.as_strided((2, 2), (2, 1), 0)
    with pytest.raises(RuntimeError, match="outside the elements of a tensor with sizes"):
        s.untyped_storage().tolist()


@needs_torch
@pytest.mark.parametrize("case", ["cat_twice", "cat_with_product", "stack", "split_empty_dim", "index_empty",
                                  "fuzz_program"])
def test_create_graph_gradients_of_empty_tensors_require_grad_as_pytorchs(case):
    # (autograd fuzzer seed 9100224) autograd.grad(create_graph=True) through cat([a, a]) of a (0, 3) leaf gave a
    # gradient that required grad (AddBackward0): the trace that finds what a backward depends on failed at the
    # empty tensors' stand-in sizes and kept every edge; a linear op's backward reads the gradients only
    def fn(T):
        a = T.zeros(0, 3, dtype=T.float64, requires_grad=True)
        b = T.ones(0, 3, dtype=T.float64, requires_grad=True)
        c = T.zeros(3, 0, dtype=T.float64, requires_grad=True)
        loss, ins = {"cat_twice": lambda: (T.cat([a, a]).sum(), [a]),
                     "cat_with_product": lambda: (T.cat([a, a * b]).sum(), [a, b]),
                     "stack": lambda: (T.stack([a, b]).sum(), [a, b]),
                     "split_empty_dim": lambda: (sum(p.sum() for p in c.split(1, 1)), [c]),
                     "index_empty": lambda: ((a[:, [0, 2]] ** 2).sum(), [a]),
                     "fuzz_program": lambda: ((T.sub(T.cat([a, a]), T.cat([a, a]), alpha=2) * 0.5).sum(), [a])}[case]()
        gs = T.autograd.grad(loss, ins, create_graph=True, allow_unused=True)
        second = [(g * g).sum() for g in gs if g.requires_grad]
        if second:
            sum(second).backward()
        return [[g.detach(), g.requires_grad] for g in gs] + [[t.grad for t in (a, b, c)]]
    agree(fn)


@needs_torch
@pytest.mark.parametrize("case", ["select_rows", "select_cols", "slice", "slice_step", "diagonal", "bool"])
def test_scatter_ops_on_an_input_whose_elements_share_memory(case):
    # (ops fuzzer seed 9100597) select_scatter of x = base.as_strided((2, 2), (1, 1)): PyTorch's result is a copy of
    # x's storage with x's layout, so writing row 0 shows in element [1, 0] too; torchish wrote row 0 only. The
    # gradients stay PyTorch's formulas' (they do not see the sharing)
    def fn(T):
        w = T.arange(5.0, dtype=T.float64, requires_grad=True)
        x = w.as_strided((2, 3), (1, 1), 1)
        src = {"select_rows": T.tensor([5.0, 6.0, 7.0]), "select_cols": T.tensor([5.0, 6.0]),
               "slice": T.tensor([[5.0], [6.0]]), "slice_step": T.tensor([[5.0, 7.0], [6.0, 8.0]]),
               "diagonal": T.tensor([5.0, 6.0]), "bool": None}[case]
        if case == "bool":
            x = T.zeros(4, dtype=T.bool).unfold(0, 2, 1)
            return T.select_scatter(x, T.tensor([False, True]), 0, 0)
        src = src.to(T.float64).requires_grad_()
        out = {"select_rows": lambda: T.select_scatter(x, src, 0, 0),
               "select_cols": lambda: T.select_scatter(x, src, 1, 1),
               "slice": lambda: T.slice_scatter(x, src, 1, 0, 1),
               "slice_step": lambda: T.slice_scatter(x, src, 1, 0, 3, 2),
               "diagonal": lambda: T.diagonal_scatter(x, src)}[case]()
        out.backward(T.arange(6.0, dtype=T.float64).reshape(2, 3))
        return [out, out.stride(), out.storage_offset(), out.grad_fn.name(), w.grad, src.grad]
    agree(fn)


@needs_torch
@pytest.mark.parametrize("dtype", ["uint8", "int64", "bool", "float32", "complex64"])
def test_nan_to_num_in_place_on_an_expanded_tensor(dtype):
    # (math fuzzer seed 9100386) nan_to_num_ of an expanded uint8 tensor: PyTorch's integer path is
    # self.copy_(self), which checks nothing; torchish raised the internal-overlap error (floats: both raise)
    agree(lambda T: T.tensor([1], dtype=getattr(T, dtype)).expand(2).nan_to_num_())


@needs_torch
@pytest.mark.parametrize("case", ["permuted_batch", "swapped_batch", "sliced_batch", "expanded", "mT", "three_dims",
                                  "one_by_one", "empty_batch"])
def test_matrix_exp_views_its_batches_as_one_dim(case):
    # (math fuzzer seed 9100488) PyTorch's CPU matrix_exp views a (2, 2, 3, 3) input as (-1, 3, 3): batch dims
    # whose strides do not merge raise view's RuntimeError; torchish computed it
    def fn(T):
        x = T.arange(36.0, dtype=T.float64) / 40
        a = {"permuted_batch": lambda: x.reshape(2, 3, 3, 2).permute(0, 3, 1, 2),
             "swapped_batch": lambda: T.cat([x, x]).reshape(2, 2, 3, 3).transpose(0, 1),
             "sliced_batch": lambda: T.cat([x, x]).reshape(4, 2, 3, 3)[::2],
             "expanded": lambda: x[:18].reshape(1, 2, 3, 3).expand(2, 2, 3, 3),
             "mT": lambda: x.reshape(2, 2, 3, 3).mT,
             "three_dims": lambda: x.reshape(3, 3, 4).permute(2, 0, 1),
             "one_by_one": lambda: x[:4].reshape(2, 1, 1, 2).permute(0, 3, 1, 2),
             "empty_batch": lambda: x[:0].reshape(0, 3, 3, 2).permute(0, 3, 1, 2)}[case]()
        return T.matrix_exp(a)
    agree(fn)


@needs_torch
def test_zeta_of_a_large_order_accumulates_in_double():
    # (math fuzzer seed 9100544) zeta(32766, 1) in float32 is 1 in PyTorch (its CPU kernel accumulates in double);
    # JAX's float32 Euler-Maclaurin terms overflowed to NaN
    def fn(T):
        q = T.tensor([1.0, 1.0, 1.0, 0.5, 2.5, 1e4, 0.3, 1.0], requires_grad=True)
        x = T.tensor([32766.0, 200.0, 89.0, 2.0, 3.5, 1.5, 40.0, 1000.0])
        out = T.special.zeta(x, q)
        out.sum().backward()
        return [out, q.grad, T.special.zeta(T.tensor([32766, -32767], dtype=T.int16), True)]
    agree(fn)


@needs_torch
@pytest.mark.parametrize("case", ["relu", "lp_pool1d", "lp_pool3d", "lp_pool2d_zero_window"])
def test_relu_gradient_passes_nan_as_pytorchs_threshold_backward(case):
    # (nn fuzzer seed 9100293) lp_pool3d(x, 1.5, (3, 1, 1)) of [-1, 2, 3]: PyTorch's gradient is NaN everywhere
    # (relu's backward, result <= 0 ? 0 : grad, passes a NaN); torchish's relu and lp_pool zeroed it: [nan, 0, 0]
    def fn(T):
        F = T.nn.functional
        x = T.tensor([-1.0, 2.0, 3.0, float("nan"), 0.0, 1.5], requires_grad=True)
        y = {"relu": lambda: T.relu(x),
             "lp_pool1d": lambda: F.lp_pool1d(x.view(1, 1, 6), 1.5, 3),
             "lp_pool3d": lambda: F.lp_pool3d(x[:3].view(1, 1, 3, 1, 1), 1.5, (3, 1, 1)),
             "lp_pool2d_zero_window": lambda: F.lp_pool2d((x * 0).view(1, 1, 2, 3), 2.0, (1, 3))}[case]()
        y.backward(T.ones_like(y))
        return [y, x.grad]
    agree(fn)
