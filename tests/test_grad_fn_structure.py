"""The whole autograd graph below composite functions is PyTorch's: for functions PyTorch builds from other ops
(ATen's CompositeImplicitAutograd ones, or Python in torch/nn/functional.py) code that walks
``grad_fn.next_functions`` (the 60-minute blitz, torchviz) sees the same nodes, in the same order, with the same
``None`` edges, to depth 6; values and gradients equal PyTorch's."""
import numpy as np
import pytest

from oracle import arr, check, graph_walk, run_both

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss",
                                        "ignore:Using a target size")


X = arr(3, 4, seed=1, lo=-1.5, hi=2.0)
Y = arr(3, 4, seed=2)
P = arr(3, 4, seed=3, lo=0.1, hi=0.9)  # positive (probabilities, variances, rates)
V3, V4 = arr(3, seed=4), arr(4, seed=5)
SIGNS = np.array([1.0, -1.0, 1.0], np.float32)
Q4, K4, V4D = arr(1, 2, 3, 4, seed=6), arr(1, 2, 3, 4, seed=7), arr(1, 2, 3, 4, seed=8)
PM = np.array([[1.0, -1.0, 1.0, -1.0]] * 3, np.float32)


def _F(lib):
    return lib.nn.functional


# name -> (fn(lib, *inputs), inputs, the positions that require grad)
CASES = {
    "softsign": (lambda lib, x: _F(lib).softsign(x).sum(), [X], (0,)),
    "tanhshrink": (lambda lib, x: _F(lib).tanhshrink(x).sum(), [X], (0,)),
    "l1_mean": (lambda lib, x, y: _F(lib).l1_loss(x, y), [X, Y], (0,)),
    "l1_broadcast": (lambda lib, x, y: _F(lib).l1_loss(x, y), [X, V4], (0, 1)),
    "l1_weighted": (lambda lib, x, y, w: _F(lib).l1_loss(x, y, weight=w), [X, Y, P], (0,)),
    "smooth_l1_beta0": (lambda lib, x, y: _F(lib).smooth_l1_loss(x, y, beta=0.0), [X, Y], (0,)),
    "pairwise_distance": (lambda lib, x, y: _F(lib).pairwise_distance(x, y).sum(), [X, Y], (0,)),
    "pairwise_distance_p1": (lambda lib, x, y: _F(lib).pairwise_distance(x, y, p=1, keepdim=True).sum(), [X, Y],
                             (0, 1)),
    "pairwise_distance_0d": (lambda lib, x, y: _F(lib).pairwise_distance(x[0, 0], y[0, 0]), [X, Y], (0,)),
    "triplet_swap": (lambda lib, a, p, n: _F(lib).triplet_margin_loss(a, p, n, swap=True), [X, Y, P], (0, 1, 2)),
    "triplet_with_distance": (lambda lib, a, p, n: _F(lib).triplet_margin_with_distance_loss(a, p, n), [X, Y, P],
                              (0,)),
    "margin_ranking": (lambda lib, x, t: _F(lib).margin_ranking_loss(x[0], x[1], t, margin=0.1), [X, V4], (0,)),
    "hinge": (lambda lib, x, t: _F(lib).hinge_embedding_loss(x, t), [X, PM], (0,)),
    "kl_batchmean": (lambda lib, x, y: _F(lib).kl_div(x, y, reduction="batchmean"), [X, P], (0,)),
    "kl_mean_target_grad": (lambda lib, x, y: _F(lib).kl_div(x, y, reduction="mean"), [X, P], (0, 1)),
    "kl_log_target": (lambda lib, x, y: _F(lib).kl_div(x, y, reduction="sum", log_target=True), [X, Y], (0,)),
    "poisson": (lambda lib, x, y: _F(lib).poisson_nll_loss(x, y), [X, P], (0,)),
    "poisson_no_log": (lambda lib, x, y: _F(lib).poisson_nll_loss(x, y, log_input=False), [P, Y], (0, 1)),
    "poisson_full": (lambda lib, x, y: _F(lib).poisson_nll_loss(x, y * 3, full=True, reduction="sum"), [X, P], (0,)),
    "gaussian": (lambda lib, x, y, v: _F(lib).gaussian_nll_loss(x, y, v), [X, Y, P], (0,)),
    "gaussian_full_sum": (lambda lib, x, y, v: _F(lib).gaussian_nll_loss(x, y, v, full=True, reduction="sum"),
                          [X, Y, P], (0, 1, 2)),
    "cosine_similarity_dim0": (lambda lib, x, y: _F(lib).cosine_similarity(x, y, dim=0).sum(), [X, Y], (0, 1)),
    "cosine_similarity_broadcast": (lambda lib, x, v: _F(lib).cosine_similarity(x, v).sum(), [X, V4], (0, 1)),
    "cosine_embedding": (lambda lib, x, y, t: _F(lib).cosine_embedding_loss(x, y, t, margin=0.1), [X, Y, SIGNS],
                         (0,)),
    "multilabel_soft_margin_w": (lambda lib, x, y, w: _F(lib).multilabel_soft_margin_loss(x, y, w, reduction="sum"),
                                 [X, P, V4], (0, 1)),
    "reshape_copy": (lambda lib, x: (x.t().reshape(12) * lib.arange(12.0)).sum(), [X], (0,)),
    "flatten_copy": (lambda lib, x: (x.t().flatten() * lib.arange(12.0)).sum(), [X], (0,)),
    "ravel_copy": (lambda lib, x: (x.t().ravel() * lib.arange(12.0)).sum(), [X], (0,)),
    "cartesian_prod": (lambda lib, a, b: (lib.cartesian_prod(a, b) * lib.tensor([1.0, 2.0])).sum(), [V3, V4],
                       (0, 1)),
    "diff": (lambda lib, x: lib.diff(x).sum(), [X], (0,)),
    "diff_n2_dim0_append": (lambda lib, x, v: lib.diff(x, 2, dim=0, append=v[None]).sum(), [X, V4], (0, 1)),
    "masked_select": (lambda lib, x, y: x.masked_select(y > 0).sum(), [X, Y], (0,)),
    "broadcast_tensors": (lambda lib, x, v: sum(t.sum() for t in lib.broadcast_tensors(x, v)), [X, V4], (0, 1)),
    "bmm_transposed_operand": (lambda lib, a: (a.reshape(2, 3, 2) @ a.reshape(2, 3, 2).transpose(1, 2)).sum(), [X],
                               (0,)),
    "bmm_both_transposed": (lambda lib, a, b: (a.reshape(2, 2, 3).transpose(1, 2) @ b.reshape(2, 3, 2).transpose(1, 2))
                            .sum(), [X, Y], (0, 1)),
    "ctc_mean": (lambda lib, s: _F(lib).ctc_loss(s.reshape(3, 2, 2).log_softmax(2), lib.tensor([[1], [1]]),
                                                   lib.tensor([3, 3]), lib.tensor([1, 1])), [X], (0,)),
    "ctc_sum_zero_infinity": (lambda lib, s: _F(lib).ctc_loss(s.reshape(3, 2, 2).log_softmax(2),
                                                              lib.tensor([[1, 1], [1, 0]]), lib.tensor([2, 3]),
                                                              lib.tensor([2, 1]), reduction="sum",
                                                              zero_infinity=True), [X], (0,)),
    "ce_label_smoothing": (lambda lib, x: _F(lib).cross_entropy(x, lib.tensor([1, 0, 3]), label_smoothing=0.1), [X],
                           (0,)),
    "ce_label_smoothing_ignore_sum": (lambda lib, x: _F(lib).cross_entropy(x, lib.tensor([1, -100, 3]),
                                                                           label_smoothing=0.2, reduction="sum"),
                                      [X], (0,)),
    "ce_probabilities": (lambda lib, x, p: _F(lib).cross_entropy(x, p), [X, P], (0,)),
    "ce_probabilities_smoothed_target_grad": (lambda lib, x, p: _F(lib).cross_entropy(x, p, label_smoothing=0.1),
                                              [X, P], (0, 1)),
    "bce_weight": (lambda lib, p, y, w: _F(lib).binary_cross_entropy(p, y, weight=w), [P, Y * 0.5 + 0.5, P],
                   (0,)),
    "bce_logits_pos_weight": (lambda lib, x, y, w: _F(lib).binary_cross_entropy_with_logits(x, y, w, pos_weight=w[0]),
                              [X, P, P], (0,)),
    "special_ndtr": (lambda lib, x: lib.special.ndtr(x).sum(), [X], (0,)),
    "trapezoid": (lambda lib, x: lib.trapezoid(x, dx=0.5).sum(), [X], (0,)),
    "cumulative_trapezoid": (lambda lib, x: lib.cumulative_trapezoid(x).sum(), [X], (0,)),
    "local_response_norm_4d": (lambda lib, x: _F(lib).local_response_norm(x.reshape(1, 3, 2, 2), 2).sum(), [X], (0,)),
    "instance_norm": (lambda lib, x: (_F(lib).instance_norm(x.reshape(2, 2, 3)) * lib.arange(12.0).reshape(2, 2, 3))
                      .sum(), [X], (0,)),
    "instance_norm_affine": (lambda lib, x, w: (_F(lib).instance_norm(x.reshape(2, 2, 3), weight=w[:2], bias=w[2:])
                                                * lib.arange(12.0).reshape(2, 2, 3)).sum(), [X, V4], (0, 1)),
    "outer": (lambda lib, a, b: lib.outer(a, b).sum(), [V3, V4], (0, 1)),
    "rms_norm": (lambda lib, x: _F(lib).rms_norm(x, (4,)).sum(), [X], (0,)),
    "rms_norm_weight": (lambda lib, x, w: _F(lib).rms_norm(x, (4,), w, eps=1e-5).sum(), [X, V4], (0, 1)),
    # einsum: ATen's alignment (diagonal/unsqueeze/permute per operand), then mul or permute-reshape-bmm-view pairs
    "einsum_ij_kj": (lambda lib, a, b: lib.einsum("ij,kj->ik", a, b), [X, Y], (0, 1)),
    "einsum_ij_j": (lambda lib, a, v: lib.einsum("ij,j->i", a, v), [X, V4], (0, 1)),
    "einsum_batched": (lambda lib, a, b: lib.einsum("bij,bkj->bik", a.reshape(2, 2, 3), b.reshape(2, 2, 3)), [X, Y],
                       (0, 1)),
    "einsum_attention": (lambda lib, a, b: lib.einsum("bhqd,bhkd->bhqk", a.reshape(1, 2, 3, 2), b.reshape(1, 2, 3, 2)),
                         [X, Y], (0, 1)),
    "einsum_dot": (lambda lib, a, b: lib.einsum("i,i->", a, b), [V3, V3], (0, 1)),
    "einsum_outer": (lambda lib, a, b: lib.einsum("i,j->ij", a, b), [V3, V4], (0, 1)),
    "einsum_diagonal_sum": (lambda lib, a: lib.einsum("ii->", a[:, :3]), [X], (0,)),
    "einsum_row_sum": (lambda lib, a: lib.einsum("ij->i", a), [X], (0,)),
    "einsum_ellipsis_implicit": (lambda lib, a, b: lib.einsum("...ij,...jk", a.reshape(1, 3, 4), b.t()), [X, Y],
                                 (0, 1)),
    "einsum_channels": (lambda lib, a, b: lib.einsum("nchw,oc->nohw", a.reshape(1, 3, 2, 2), b.reshape(4, 3)),
                        [X, Y], (0, 1)),
    "einsum_three_operands_path": (lambda lib, a, b, c: lib.einsum("ij,jk,kl->il", a, b.t(), c), [X, Y, P],
                                   (0, 1, 2)),
    # scaled_dot_product_attention: the CPU flash kernel's node (no edge for the mask), else the math path op by op
    "sdpa_flash_float_mask": (lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v, attn_mask=q[0, 0, :, :3]
                                                                                        .detach()), [Q4, K4, V4D],
                              (0, 1, 2)),
    "sdpa_math_3d": (lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q[0], k[0], v[0]), [Q4, K4, V4D],
                     (0, 1, 2)),
    "sdpa_math_2d_causal": (lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q[0, 0], k[0, 0], v[0, 0],
                                                                                      is_causal=True), [Q4, K4, V4D],
                            (0, 1, 2)),
    "sdpa_math_bool_mask_negative_scale": (lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(
        q[0], k[0], v[0], attn_mask=lib.tensor([[True, False, True]] * 3), scale=-0.3), [Q4, K4, V4D], (0, 1, 2)),
    "sdpa_math_mask_requires_grad": (lambda lib, q, k, v, m: _F(lib).scaled_dot_product_attention(q, k, v, attn_mask=m),
                                     [Q4, K4, V4D, P[:, :3]], (0, 1, 2, 3)),
    "tensordot_2": (lambda lib, a, b: lib.tensordot(a, b), [X, Y], (0, 1)),
    "tensordot_1_transposed": (lambda lib, a, b: lib.tensordot(a, b.t(), dims=1), [X, Y], (0, 1)),
    "tensordot_lists": (lambda lib, a, b: lib.tensordot(a.reshape(3, 2, 2), b.reshape(2, 2, 3), dims=([1, 2], [1, 0])),
                        [X, Y], (0, 1)),
    "inner": (lambda lib, a, b: lib.inner(a, b), [X, Y], (0, 1)),
    "inner_vectors": (lambda lib, a, b: lib.inner(a[0], b[0]), [X, Y], (0, 1)),
    "multi_dot_vectors": (lambda lib, a, b: lib.linalg.multi_dot([a[0], b.t(), a[:, 0]]), [X, Y], (0, 1)),
    "multi_dot_chain": (lambda lib, a, b: lib.linalg.multi_dot([a, b.t(), a, b.t()]), [X, Y], (0, 1)),
    "folded_matmul_transposed": (lambda lib, a, b: a.reshape(3, 2, 2).transpose(1, 2) @ b[:2], [X, Y], (0, 1)),
    "prelu_weight_view": (lambda lib, x, w: _F(lib).prelu(x.reshape(1, 4, 3), w), [X, V4], (0, 1)),
    "prelu_one_weight": (lambda lib, x, w: _F(lib).prelu(x, w[:1]), [X, V4], (0, 1)),
    "ldexp_integer_exponent": (lambda lib, x: lib.ldexp(x, lib.tensor([1, 2, 3, 4])), [X], (0,)),
    "cov": (lambda lib, x: lib.cov(x), [X], (0,)),
    "cov_aweights": (lambda lib, x, w: lib.cov(x, aweights=w), [X, P[0]], (0,)),
    "corrcoef": (lambda lib, x: lib.corrcoef(x), [X], (0,)),
    "logdet": (lambda lib, x: lib.logdet(x[:, :3] + 3 * lib.eye(3)), [X], (0,)),
    "matrix_power_3": (lambda lib, x: lib.linalg.matrix_power(x[:, :3], 3), [X], (0,)),
    "matrix_power_0": (lambda lib, x: lib.linalg.matrix_power(x[:, :3], 0) * x[:, :3], [X], (0,)),
    "embedding_bag_per_sample_weights": (lambda lib, w, p: _F(lib).embedding_bag(
        lib.tensor([0, 2, 1, 2]), w, lib.tensor([0, 2]), mode="sum", per_sample_weights=p[0]), [X, Y], (0, 1)),
    "pad_circular": (lambda lib, x: _F(lib).pad(x.reshape(1, 3, 4), (1, 2), mode="circular"), [X], (0,)),
    "pad_circular_2d_cropped": (lambda lib, x: _F(lib).pad(x.reshape(1, 1, 3, 4), (-1, 1, 2, 0), mode="circular"), [X],
                                (0,)),
    "copy_into_view_of_a_tensor_without_history": (lambda lib, x: lib.zeros(5, 4).narrow(0, 1, 3).copy_(x)._base, [X],
                                                   (0,)),
    "embedding_bag_mean": (lambda lib, w: _F(lib).embedding_bag(lib.tensor([0, 2, 1, 2]), w, lib.tensor([0, 2])), [X],
                           (0,)),
}


@pytest.mark.parametrize("name", CASES)
def test_graph_values_and_gradients_are_pytorchs(name):
    fn, inputs, grad = CASES[name]
    ref, got = check(fn, inputs, grad=grad)
    assert graph_walk(got.grad_fn) == graph_walk(ref.grad_fn)


def test_hook_on_the_top_node_of_a_composite_loss():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        loss = _F(lib).l1_loss(x, lib.tensor(Y))
        seen = []
        loss.grad_fn.next_functions[0][0].register_hook(lambda gi, go: seen.append(gi[0].shape))
        loss.backward()
        return seen, x.grad
    (ref_seen, ref_grad), (got_seen, got_grad) = run_both(run)
    assert [tuple(s) for s in got_seen] == [tuple(s) for s in ref_seen]
    np.testing.assert_array_equal(got_grad.numpy(), ref_grad.numpy())


def test_hooks_on_a_copying_reshape_see_pytorchs_gradients():
    """The reshape's UnsafeViewBackward0 (torchish's one node over PyTorch's CloneBackward0): its pre-hook and hook
    get PyTorch's tensors, a hook's replacement flows on, and the shown CloneBackward0 refuses hooks clearly."""
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = x.t().reshape(12)
        seen = []
        y.grad_fn.register_prehook(lambda go: seen.append(("pre", tuple(go[0].shape))))

        def hook(gi, go):
            seen.append(("post", tuple(gi[0].shape), tuple(go[0].shape)))
            return (gi[0] * 2,)
        y.grad_fn.register_hook(hook)
        (y * lib.arange(12.0)).sum().backward()
        return seen, x.grad.numpy()
    (ref_seen, ref_grad), (got_seen, got_grad) = run_both(run)
    assert got_seen == ref_seen
    np.testing.assert_array_equal(got_grad, ref_grad)
    import torchish
    clone = torchish.tensor(X, requires_grad=True).t().reshape(12).grad_fn.next_functions[0][0]
    assert type(clone).__name__ == "CloneBackward0"
    with pytest.raises(RuntimeError, match="register the hook on that node or on a tensor"):
        clone.register_hook(lambda gi, go: None)


SAVED_DIMS = ["x.select(-2, 1)", "x.narrow(-2, 1, 2)", "x.unsqueeze(-1)", "x.transpose(-1, -3)", "x.transpose(2, 0)",
              "x.squeeze(-1)", "x.squeeze((0, -1))", "x.squeeze(-2)", "x.swapaxes(-1, 0)"]


@pytest.mark.parametrize("expr", SAVED_DIMS)
def test_view_nodes_save_the_dims_as_written(expr):
    """PyTorch's view nodes keep the dim arguments as passed: a negative one shows as its unsigned 64-bit wrap."""
    def saved(lib):
        x = lib.ones(3, 4, 1, requires_grad=True)
        g = eval(expr, {}, {"x": x}).grad_fn  # noqa: S307  (the expressions above)
        return type(g).__name__, {a: getattr(g, a) for a in dir(g) if a.startswith("_saved_")}
    assert saved(__import__("torchish")) == saved(torch)
