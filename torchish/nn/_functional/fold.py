"""``unfold`` (im2col) and ``fold`` (col2im): sliding local blocks of a batched (N, C, H, W) image as columns,
and back (overlapping values are summed). Each is one op built from strided slices, so the gradient of one is the
other, as in PyTorch."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ... import _dtype
from ...ops.registry import apply, defop
from ._args import need_int_list, need_tensor

__all__ = ["unfold", "fold"]


def _pair(v, name, op, pos):
    """PyTorch's ``_pair`` and its op's parser: ints only (the first element's type, then the others', each with
    the parser's own wording), then the op's length check."""
    pair = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    need_int_list(op, pair, name, pos)
    if len(pair) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(pair)}")
    return int(pair[0]), int(pair[1])


def _blocks(size, k, d, p, s):
    """Number of sliding blocks along one dimension (PyTorch's ``div_rtn``: integer division rounding down, which
    error messages show for a kernel larger than the padded input)."""
    num = size + 2 * p - (d * (k - 1) + 1)
    return num // s + 1


def _check_params(k, d, p, s):
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: "
                           f"{k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: "
                           f"{d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")


def _window(i, j, k, d, s, o):
    """The strided (start, stop, step) window of kernel offset (i, j) over an (oh, ow) grid of blocks."""
    return (i * d[0], i * d[0] + s[0] * (o[0] - 1) + 1, s[0]), (j * d[1], j * d[1] + s[1] * (o[1] - 1) + 1, s[1])


def _unfold_fwd(x, *, k, d, p, s, o):
    n, c = x.shape[:2]
    xp = jax.lax.pad(x, jnp.zeros((), x.dtype), [(0, 0, 0), (0, 0, 0), (p[0], p[0], 0), (p[1], p[1], 0)])
    cols = []
    for i in range(k[0]):
        for j in range(k[1]):
            (h0, h1, hs), (w0, w1, ws) = _window(i, j, k, d, s, o)
            cols.append(jax.lax.slice(xp, (0, 0, h0, w0), (n, c, h1, w1), (1, 1, hs, ws)))
    return jnp.stack(cols, axis=2).reshape(n, c * k[0] * k[1], o[0] * o[1])


def _fold_fwd(x, *, size, k, d, p, s, o):
    n = x.shape[0]
    c = x.shape[1] // (k[0] * k[1])
    cols = x.reshape(n, c, k[0], k[1], o[0], o[1])
    canvas = jnp.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            (h0, h1, hs), (w0, w1, ws) = _window(i, j, k, d, s, o)
            win = canvas.at[:, :, h0:h1:hs, w0:w1:ws]
            # (a Bool canvas accumulates with "or", as PyTorch's += on bool does)
            canvas = win.max(cols[:, :, i, j]) if x.dtype == jnp.bool_ else win.add(cols[:, :, i, j])
    return canvas[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


_UNFOLD = defop("im2col", _unfold_fwd, linear=True, grad_name="Im2ColBackward0")
_FOLD = defop("col2im", _fold_fwd, linear=True, grad_name="Col2ImBackward0")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks: (N, C, H, W) -> (N, C * kh * kw, L)."""
    need_tensor("im2col", input)
    k, d = _pair(kernel_size, "kernel_size", "im2col", 2), _pair(dilation, "dilation", "im2col", 3)
    p, s = _pair(padding, "padding", "im2col", 4), _pair(stride, "stride", "im2col", 5)
    _check_params(k, d, p, s)
    if input.ndim == 0:  # (PyTorch's kernel reads a size past the input's last dimension first)
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    if input.ndim in (1, 2):
        raise IndexError(f"Dimension out of range (expected to be in range of [-{input.ndim}, {input.ndim - 1}], but "
                         f"got {input.ndim})")
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[input.ndim - 3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    if input.dtype.category == _dtype._INT:  # (PyTorch's kernels take Bool, float and complex inputs)
        raise NotImplementedError(f'"im2col_out_cpu" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')
    h, w = input.shape[-2:]
    o = (_blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1]))
    if o[0] < 1 or o[1] < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={k}, dilation={d}, padding={p}, "
                           f"calculated shape of the array of sliding blocks as {o}, but its components must be at "
                           "least one.")
    x = input if input.ndim == 4 else input.unsqueeze(0)
    out = apply(_UNFOLD, (x,), k=k, d=d, p=p, s=s, o=o)
    return out if input.ndim == 4 else out.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding local blocks into a tensor: (N, C * kh * kw, L) -> (N, C, H, W), summing overlaps."""
    need_tensor("col2im", input)
    size, k = _pair(output_size, "output_size", "col2im", 2), _pair(kernel_size, "kernel_size", "col2im", 3)
    d, p = _pair(dilation, "dilation", "col2im", 4), _pair(padding, "padding", "col2im", 5)
    s = _pair(stride, "stride", "col2im", 6)
    _check_params(k, d, p, s)
    if input.ndim not in (2, 3) or any(n == 0 for n in input.shape[input.ndim - 2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    b = input.ndim - 2
    planes, length = input.shape[b], input.shape[b + 1]
    if planes % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension {b} to be divisible by the product of kernel_size, but "
                           f"got input.size({b})={planes} and kernel_size={k}.")
    o = (_blocks(size[0], k[0], d[0], p[0], s[0]), _blocks(size[1], k[1], d[1], p[1], s[1]))
    if length != o[0] * o[1]:  # (checked first, as PyTorch's col2im_shape_check does)
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension {b + 1} to match the calculated number of sliding "
                           f"blocks {o[0]} * {o[1]} = {o[0] * o[1]}, but got input.size({b + 1})={length}.")
    if o[0] < 1 or o[1] < 1:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"calculated shape of the array of sliding blocks as {o}, which is too small "
                           "(non-positive)")
    if input.dtype.category == _dtype._INT:  # (PyTorch's kernels take Bool, float and complex inputs)
        raise NotImplementedError(f'"col2im_out_cpu" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')
    x = input if input.ndim == 3 else input.unsqueeze(0)
    out = apply(_FOLD, (x,), size=size, k=k, d=d, p=p, s=s, o=o)
    return out if input.ndim == 3 else out.squeeze(0)
