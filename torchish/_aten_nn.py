"""The ``torch.*`` (aten) spellings of ``nn.functional`` ops that take aten's arguments: integer reduction enums
(``0`` none, ``1`` mean, ``2`` sum), integer grid-sampler modes, ``torch.convolution``'s explicit transposed flag,
the ``native_*`` normalisations that also return their statistics, the in-place activations and dropouts, and
``torch.embedding_bag``'s four outputs. Each is a thin adapter over the ``nn.functional`` implementation; the
statistics and bookkeeping outputs are computed beside it without gradient, as PyTorch marks them, except
``native_group_norm``'s, which PyTorch differentiates: its three outputs are one op's.

Example::

    >>> x = torchish.randn(2, 3, 4)
    >>> out, mean, rstd = torchish.native_layer_norm(x, [4], None, None, 1e-5)
    >>> mean.shape
    torchish.Size([2, 3, 1])
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _dtype
from ._device import placement
from ._tensor import Tensor
from .autograd.grad_mode import no_grad
from .nn import functional as F
from .nn._functional import dropout as _dropout
from .nn._functional import loss as _loss
from .nn._functional import normalization as _norm
from .nn._functional._loss_util import check_broadcast
from .nn._functional.activation import rrelu_with_generator
from .nn._functional.embedding import _renorm_
from .ops.registry import apply, defop

__all__ = ["cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "triplet_margin_loss",
           "poisson_nll_loss", "kl_div", "ctc_loss", "binary_cross_entropy_with_logits", "embedding_bag", "rms_norm",
           "convolution", "constant_pad_nd", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
           "affine_grid_generator", "native_layer_norm", "native_batch_norm", "native_group_norm", "native_dropout",
           "native_channel_shuffle", "max_pool1d_with_indices", "feature_dropout", "feature_dropout_",
           "feature_alpha_dropout", "feature_alpha_dropout_", "alpha_dropout_", "rrelu_", "selu_", "celu_",
           "threshold_", "embedding_renorm_"]


def _reduction(r):
    """aten's reduction enum as nn.functional's name (an unknown value reduces nothing, as PyTorch's kernels).

    The Python bindings of the top-level losses default to ``0`` (no reduction), whatever aten's schema says."""
    return {1: "mean", 2: "sum"}.get(int(r), "none")


# ----------------------------------------------------------------------------------------------------------------
# losses


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def kl_div(input, target, reduction=0, *, log_target=False):
    """``torch.kl_div``: ``reduction=1`` is the plain mean over every element (no 'batchmean', no warning)."""
    if input.dtype.category < _dtype._FLOAT or target.dtype.category < _dtype._FLOAT:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    check_broadcast(input, target)
    red = _reduction(reduction)
    return _loss.apply(_loss._kl_op(red, bool(log_target), input.ndim), (input, target), reduction=red,
                       log_target=bool(log_target))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


# ----------------------------------------------------------------------------------------------------------------
# convolution, padding, sampling grids


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """``torch.convolution``: the N-d (transposed) convolution picked by ``weight``'s rank."""
    nd = weight.ndim - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
                           f"{list(input.shape)}" if nd == 0 else f"convolution: unsupported weight rank {weight.ndim}")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding), groups, tuple(dilation))
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def constant_pad_nd(input, pad, value=0):
    return F.pad(input, tuple(pad), "constant", value)


_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler`` with aten's integer modes (interpolation 0/1/2: bilinear/nearest/bicubic; padding
    0/1/2: zeros/border/reflection)."""
    if interpolation_mode not in _INTERP:
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode to be 0, 1 or 2, got {interpolation_mode}")
    if padding_mode not in _PADDING:
        raise RuntimeError(f"grid_sampler(): expected padding_mode to be 0, 1 or 2, got {padding_mode}")
    return F.grid_sample(input, grid, _INTERP[interpolation_mode], _PADDING[padding_mode], bool(align_corners))


def _grid_sampler_nd(nd):
    def sampler(input, grid, interpolation_mode, padding_mode, align_corners):
        if input.ndim != nd + 2 or grid.ndim != nd + 2:
            raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number of dimensions, "
                               f"but got input with sizes {list(input.shape)} and grid with sizes "
                               f"{list(grid.shape)}")
        return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
    sampler.__name__ = f"grid_sampler_{nd}d"
    return sampler


grid_sampler_2d, grid_sampler_3d = _grid_sampler_nd(2), _grid_sampler_nd(3)


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, list(size), bool(align_corners))


# ----------------------------------------------------------------------------------------------------------------
# native_* normalisations: the output plus the saved statistics


def _stats(x, dims, eps):
    """Mean and ``1 / sqrt(biased var + eps)`` over ``dims`` (kept), in float32 for half inputs, without grad."""
    with no_grad():
        xa = x.detach()
        if xa.dtype in (_dtype.float16, _dtype.bfloat16):
            xa = xa.float()
        mean = xa.mean(dims, keepdim=True)
        var = (xa - mean).square().mean(dims, keepdim=True)
        return mean, (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``(out, mean, rstd)``; the statistics have the normalised dims kept as size 1."""
    out = F.layer_norm(input, tuple(normalized_shape), weight, bias, eps)
    k = len(tuple(normalized_shape))
    mean, rstd = _stats(input, tuple(range(input.ndim - k, input.ndim)), eps)
    return out, mean.to(input.dtype), rstd.to(input.dtype)


_NO_CHANNEL_DIM = "Dimension out of range (expected to be in range of [-1, 0], but got 1)"


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``(out, save_mean, save_invstd)``: the batch statistics in training, empty tensors in evaluation.

    PyTorch's kernel, unlike ``batch_norm`` (which returns an empty input's result before calling it), checks the
    input itself: in training it reads the channel dim first (IndexError for a 1-d input), then refuses a
    dtype that is no float and parameters of another dtype, then an empty input (its statistics would be of
    nothing); in evaluation the dtypes come first, then a 1-d input with elements, and an empty input gives an
    empty output with (0,) statistics."""
    if training and input.ndim == 1:
        raise IndexError(_NO_CHANNEL_DIM)
    _norm._check_dtypes("batch_norm", input, weight, bias, running_mean, running_var, kernel_first=True)
    if input.ndim == 1 and input.numel():
        raise IndexError(_NO_CHANNEL_DIM)
    if training and not input.numel():
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = {list(input.shape)}")
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    acc = _dtype.float32 if input.dtype in (_dtype.float16, _dtype.bfloat16) else input.dtype
    if not training:
        empty = Tensor._make(jnp.zeros((0,), acc.np, device=placement(input._v)))
        return out, empty, empty.clone()
    dims = (0,) + tuple(range(2, input.ndim))
    mean, invstd = _stats(input, dims, eps)
    return out, mean.reshape(-1), invstd.reshape(-1)


def _native_gn_stats(x3, groups, eps):
    """Mean and rstd of each (sample, group) of ``x3`` (N, C, HxW), in float32 for half inputs, as ``(N, G, 1)``."""
    n, c, hw = x3.shape
    xg = _norm._acc(x3).reshape((n, groups, c // groups * hw))
    if not xg.shape[2]:  # (empty groups: PyTorch's mean is 0, its rstd NaN)
        return xg, jnp.zeros((n, groups, 1), xg.dtype), jnp.full((n, groups, 1), jnp.nan, xg.dtype)
    mean = jnp.mean(xg, axis=2, keepdims=True)
    return xg, mean, _norm._rstd(jnp.mean(jnp.square(xg - mean), axis=2, keepdims=True), eps)


def _native_gn_fwd(x, w, b, *, n, c, hw, groups, eps):
    x3 = x.reshape((n, c, hw))
    out = _norm._gn_fwd(x3, w, b, groups=groups, eps=eps).reshape(x.shape)
    _, mean, rstd = _native_gn_stats(x3, groups, eps)
    return out, mean[..., 0].astype(x.dtype), rstd[..., 0].astype(x.dtype)


def _native_gn_vjp(g, x, w, b, out, *, n, c, hw, groups, eps):
    """group_norm's backward for the output's gradient, plus the statistics' own: ``d mean / dx = 1 / D`` and
    ``d rstd / dx = -rstd^3 (x - mean) / D`` over each group of D elements (PyTorch's mean and rstd outputs are
    differentiable)."""
    g_out, g_mean, g_rstd = g
    x3 = x.reshape((n, c, hw))
    dx, dw, db = _norm._gn_vjp(g_out.reshape((n, c, hw)), x3, w, b, None, groups, eps)
    xg, mean, rstd = _native_gn_stats(x3, groups, eps)
    d = max(xg.shape[2], 1)
    g_mean, g_rstd = (v.astype(xg.dtype)[..., None] for v in (g_mean, g_rstd))
    stats = (g_mean - g_rstd * rstd * rstd * rstd * (xg - mean)) / d
    dx = (dx.astype(xg.dtype) + stats.reshape((n, c, hw))).astype(x.dtype).reshape(x.shape)
    return dx, dw, db


# one node for the three outputs, as PyTorch's NativeGroupNormBackward0 (input, weight, mean and rstd saved)
_NATIVE_GN = defop("native_group_norm", _native_gn_fwd, vjp=_native_gn_vjp, grad_name="NativeGroupNormBackward0",
                   saved=("01o1o2",) * 3)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``(out, mean, rstd)``: the output in the input's shape, statistics of shape ``(N, group)``; the input holds
    ``N * C * HxW`` elements (any shape), its channels being the C of each of the N samples."""
    n, c, hw, group = int(N), int(C), int(HxW), int(group)
    if group <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {group}")
    if c % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={group}")
    if input.numel() != n * c * hw:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.")
    for nm, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {nm} to be a vector of size equal to the number of channels in input, but "
                               f"got {nm} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    _norm._check_dtypes("GroupNormKernelImpl", input, weight, bias)
    return apply(_NATIVE_GN, (input, weight, bias), n=n, c=c, hw=hw, groups=group, eps=float(eps))


def native_dropout(input, p, train):
    """``(out, mask)``: ``train=False`` keeps everything (mask all True); ``None`` counts as training."""
    from .ops.draw import draw
    if train is not None and not train:
        return input * 1, Tensor._make(jnp.ones(tuple(input.shape), bool, device=placement(input._v)))
    _dropout._check_p(p)
    if p == 1:
        mask = Tensor._make(jnp.zeros(tuple(input.shape), bool, device=placement(input._v)))
    else:
        mask = Tensor._make(draw("bernoulli", tuple(input.shape), _dtype.bool, (1.0 - p,), device=input))
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return _dropout.apply(_dropout._DROPOUT, (input, mask, scale)), mask


def native_channel_shuffle(input, groups):
    return F.channel_shuffle(input, groups)


# ----------------------------------------------------------------------------------------------------------------
# pooling, dropout variants, in-place activations, embeddings


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


def feature_dropout(input, p, train):
    return _dropout._apply(input, p, train, False, feature=True, alpha=False)


def feature_dropout_(input, p, train):
    return _dropout._apply(input, p, train, True, feature=True, alpha=False)


def feature_alpha_dropout(input, p, train):
    return _dropout._apply(input, p, train, False, feature=True, alpha=True)


def feature_alpha_dropout_(input, p, train):
    return _dropout._apply(input, p, train, True, feature=True, alpha=True)


def alpha_dropout_(input, p, train):
    return _dropout._apply(input, p, train, True, feature=False, alpha=True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return rrelu_with_generator(input, lower, upper, training, inplace=True, generator=generator)


def selu_(input):
    return F.selu_(input)


def celu_(input, alpha=1.0):
    return F.celu_(input, alpha)


def threshold_(input, threshold, value):
    return F.threshold_(input, threshold, value)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rows of ``input`` referenced by ``indices`` whose ``norm_type``-norm exceeds ``max_norm`` are scaled down to
    it, in place; returns ``input``."""
    if input.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for embedding_renorm_)")
    _renorm_(input, indices, max_norm, norm_type)
    return input


_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def _bag_aux(weight, indices, offsets, mode, num_bags, padding_idx):
    """``(offset2bag, bag_size, max_indices)`` as PyTorch's CPU kernel gives them."""
    idx, offs = indices._d, offsets._d
    it = idx.dtype
    n = idx.shape[0]
    seg = jnp.searchsorted(offs, jnp.arange(n, dtype=offs.dtype), side="right") - 1
    keep = jnp.ones((n,), bool) if padding_idx is None else idx != padding_idx
    # the summing fast path of float32 weights without padding leaves offset2bag empty
    fast = mode == "sum" and padding_idx is None and weight.dtype is _dtype.float32
    here = placement(indices._v)
    offset2bag = jnp.zeros((0,), it, device=here) if fast else seg.astype(it)
    if mode == "sum":
        zeros = jnp.zeros((num_bags,), it, device=here)
        return offset2bag, zeros, zeros
    bag_size = jax.ops.segment_sum(keep.astype(it), seg, num_bags)
    if mode == "mean":
        return offset2bag, bag_size, bag_size
    rows = jnp.where(keep[:, None], weight._d[idx], -jnp.inf)
    best = jax.ops.segment_max(rows, seg, num_bags)
    hit = keep[:, None] & (rows == best[jnp.clip(seg, 0, max(num_bags - 1, 0))])
    first = jax.ops.segment_min(jnp.where(hit, jnp.arange(n)[:, None], n), seg, num_bags)
    padded = jnp.concatenate([idx, jnp.zeros((1,), it)])
    return offset2bag, bag_size, padded[jnp.minimum(first, n)].astype(it)


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """``torch.embedding_bag``: ``(output, offset2bag, bag_size, max_indices)`` with the integer ``mode`` (0 sum,
    1 mean, 2 max); ``padding_idx`` None or negative is no padding."""
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    if mode not in _BAG_MODES:
        raise RuntimeError(f"embedding_bag: unknown mode {mode}")
    if indices.ndim != 1:
        raise ValueError(f"input has to be 1D Tensor, but got Tensor of dimension {indices.ndim}")
    pad = None if padding_idx is None or padding_idx < 0 else int(padding_idx)
    out = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq, mode=_BAG_MODES[mode],
                          sparse=sparse, per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=pad)
    num_bags = out.shape[0]
    aux = _bag_aux(weight, indices, offsets.to(indices.dtype), _BAG_MODES[mode], num_bags, pad)
    return (out,) + tuple(Tensor._make(a) for a in aux)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)
