"""The strides of an elementwise op's output, as PyTorch's TensorIterator allocates it.

PyTorch's elementwise kernels do not return contiguous tensors: the output follows its inputs' memory layout, so
``(x.t() * 2).stride()`` is ``x.t()``'s ``(1, 3)``, ``is_contiguous()`` is False and ``view(-1)`` raises. torchish's
values are plain arrays in logical order; an output whose PyTorch layout is not contiguous records it in
``Tensor._layout`` (read by ``ops.inplace.layout``: ``stride()``, ``is_contiguous()``, ``view()``, ``data_ptr``-free
address arithmetic). Only inputs that are views or carry such a layout cost anything: a contiguous input never
reaches this module.

The rule (TensorIterator's ``compute_fast_setup_type`` then ``reorder_dimensions``): operands of the output's shape
that are all non-overlapping and dense with equal strides give those strides; otherwise the dimensions are ordered
by the operands' strides (the first operand whose strides differ for two dimensions decides, broadcast dimensions
are skipped, equal strides put the smaller size first) and the output is contiguous in that order.
"""
from __future__ import annotations

from .inplace import _dense, contiguous_strides, is_contiguous, layout, view_strides
from .registry import COLUMN_MAJOR, ELEMENTWISE, SUGGESTS_FORMAT

ELEMENTWISE.update((
    "add", "sub", "rsub", "rsub_scalar", "mul", "div", "div_mode", "floor_divide", "remainder", "pow", "pow_tensor",
    "pow_scalar_base", "ldexp", "heaviside", "clamp", "clamp_tensor", "clamp_min", "clamp_max", "where", "lerp",
    "lerp_tensor", "addcmul", "addcdiv", "isclose", "bitwise_not", "logical_not", "logical_and",
    "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge",
    # nn.functional's pointwise activations and dropout (log_sigmoid's output is allocated contiguous in PyTorch)
    "hardtanh", "leaky_relu", "prelu", "threshold", "softshrink", "hardshrink", "hardswish", "hardsigmoid", "elu",
    "celu", "gelu", "silu", "mish", "softsign", "tanhshrink", "softplus", "rrelu_with_noise_eval", "dropout",
    "alpha_dropout",
    # unary ops defined outside the unary family, and frexp (both outputs)
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit", "sign", "round", "logit",
    "nan_to_num", "polygamma", "frexp", "special_xlog1py", "special_zeta", "fake_quantize_per_tensor_affine",
    "fake_quantize_per_tensor_affine_tensor_qparams", "fake_quantize_per_channel_affine",
    # losses computed elementwise (their reduction='none' results; binary_cross_entropy_with_logits follows its
    # target, nn.functional sets it), and glu (over the input's two halves, whose strides are the input's)
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "glu"))


def output_strides(operands, shape):
    """The strides PyTorch gives the output of ``shape`` computed from ``operands`` (each ``(shape, strides)`` or
    None for a Python number), or None where they are contiguous."""
    shape = tuple(shape)
    nd = len(shape)
    if nd < 2:
        return None
    same = all(op is not None and tuple(op[0]) == shape for op in operands)
    if same:
        if all(is_contiguous(*op) for op in operands):
            return None
        if all(_dense(*op) for op in operands) and len({tuple(op[1]) for op in operands}) == 1:
            return tuple(operands[0][1])
    # broadcast strides: 0 where an operand is broadcast (or a number)
    per_op = []
    for op in operands:
        if op is None:
            continue
        s, st = tuple(op[0]), tuple(op[1])
        lead = nd - len(s)
        per_op.append(tuple(0 if d < lead or (s[d - lead] == 1 and shape[d] != 1) else st[d - lead]
                            for d in range(nd)))

    def should_swap(d0, d1):
        for st in per_op:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    perm = list(range(nd - 1, -1, -1))  # fastest-moving dimension first
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(nd - 1, -1, -1)):
        return None
    strides = [0] * nd
    step = 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    strides = tuple(strides)
    return None if strides == contiguous_strides(shape) else strides


# ----------------------------------------------------------------------------------------------------------------
# memory formats: channels_last (NHWC order of an NCHW tensor) and channels_last_3d (NDHWC)

_CL_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}  # dims from fastest-moving to slowest
_CL_NAME = {4: "channels_last", 5: "channels_last_3d"}


SUGGESTS_FORMAT.update((  # (PyTorch's CPU avg_pool3d, adaptive_max_pool3d and circular padding are contiguous)
    "convolution", "cat", "batch_norm", "batch_norm_eval", "group_norm", "constant_pad_nd", "pixel_shuffle",
    "max_unpool2d", "roll",  # (roll is a cat of two narrowed pieces)
    "pixel_unshuffle", "channel_shuffle", "local_response_norm", "lp_pool2d", "avg_pool2d", "adaptive_max_pool2d",
    "adaptive_avg_pool2d_global", "adaptive_avg_pool3d_global",
    *(f"{kind}{nd}d" for nd in (2, 3) for kind in ("max_pool", "adaptive_avg_pool")),
    *(f"max_pool{nd}d_with_indices" for nd in (2, 3)),
    *(f"{mode}_pad{nd}d" for nd in (2, 3) for mode in ("reflect", "replicate")),
    *(f"upsample_{mode}{nd}d{aa}" for nd in (2, 3) for aa in ("", "_aa")
      for mode in ("nearest", "nearest-exact", "bilinear", "bicubic", "trilinear", "area"))))


def set_suggested_layout(name, outs, args):
    """Give the outputs of op ``name`` of the rank of its input the channels-last strides PyTorch allocates them
    with when the input suggests that format: a convolution's input or weight, every tensor of a ``cat``, the first
    input otherwise."""
    from .._tensor import Tensor
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not tensors:
        return
    if name == "convolution":
        formats = {suggest_format(t) for t in tensors[:2]} - {"contiguous_format"}
        fmt = formats.pop() if len(formats) == 1 else "contiguous_format"
    elif name == "cat":
        fmt = _common_format(tensors)
    else:
        fmt = suggest_format(tensors[0])
    if fmt == "contiguous_format":
        return
    for out in outs:
        if out._v.ndim == tensors[0]._v.ndim:
            set_format(out, fmt)


def _common_format(tensors):
    """The memory format of ``cat``'s output: the one every input suggests, or contiguous."""
    formats = {suggest_format(t) for t in tensors}
    return formats.pop() if len(formats) == 1 else "contiguous_format"


def set_stack_layout(out, tensors, dim):
    """``stack`` along a dimension before the last, as PyTorch computes it (:func:`stack_strides`)."""
    strides = stack_strides(tensors[0]._v.shape, len(tensors), dim, [suggest_format(t) for t in tensors])
    if strides is not None:
        out._layout = (tuple(out._v.shape), strides, 0)


def stack_strides(shape, count, dim, formats):
    """The strides of ``stack`` of ``count`` tensors of ``shape`` along ``dim`` (before the last) whose suggested
    memory formats are ``formats``, as PyTorch computes them: ``cat(tensors, dim)`` in the inputs' common format
    viewed with the stacked dimension split off; None where that is contiguous."""
    formats = set(formats)
    if len(formats) != 1 or formats == {"contiguous_format"}:
        return None
    joined = list(shape)
    joined[dim] *= count
    stacked = (*shape[:dim], count, *shape[dim:])
    strides = view_strides(joined, channels_last_strides(joined), stacked)
    return strides if strides is not None and strides != contiguous_strides(stacked) else None


def format_name(memory_format):
    """``"channels_last"``, ``"contiguous_format"``, ... for a ``torch.memory_format`` (None: preserve)."""
    return getattr(memory_format, "_name", None)


def channels_last_strides(shape):
    """PyTorch's ``get_channels_last_strides_2d/3d``: the strides of a 4-d (5-d) tensor stored as NHWC (NDHWC)."""
    strides, step = [0] * len(shape), 1
    for d in _CL_ORDER[len(shape)]:
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def is_channels_last_contiguous(shape, strides):
    """``is_contiguous(memory_format=channels_last[_3d])`` (c10's ``compute_channels_last_contiguous_2d/3d``):
    size-1 dimensions' strides do not matter."""
    order = _CL_ORDER.get(len(shape))
    if order is None:
        return False
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _strides_like_channels_last(shape, strides):
    """c10's ``is_channels_last_strides_2d_s4`` / ``_3d_s5``: strides increasing in channels-last order, with the
    ambiguous cases (an N111 tensor, a trivial C dimension) read as contiguous."""
    order = _CL_ORDER.get(len(shape))
    if order is None or strides[1] == 0:
        return False
    least = 0
    for d in order:
        if shape[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[1]:
            return False
        least = strides[d]
        if shape[d] > 1:
            least *= shape[d]
    return True


def suggest_format(t):
    """``Tensor.suggest_memory_format()`` as the name of a format: ``"channels_last"`` / ``"channels_last_3d"`` for
    a 4-d / 5-d tensor whose strides are like it, else ``"contiguous_format"``."""
    if t._view is None and t._layout is None:
        return "contiguous_format"
    shape, strides, _ = layout(t)
    return strides_format(shape, strides)


def strides_format(shape, strides):
    """The format :func:`suggest_format` reads from ``strides`` (in elements) of a tensor of ``shape``."""
    return _CL_NAME[len(shape)] if _strides_like_channels_last(shape, strides) else "contiguous_format"


def set_format(out, name):
    """Give ``out`` (a fresh tensor) the strides of memory format ``name``; returns ``out``."""
    out._layout = None
    shape = tuple(out._v.shape)
    if name == _CL_NAME.get(len(shape)):
        strides = channels_last_strides(shape)
        if strides != contiguous_strides(shape):
            out._layout = (shape, strides, 0)
    return out


def keep_format(out, input, memory_format=None):
    """``out`` (a new tensor of ``input``'s shape: a clone, a cast, a ``*_like`` factory) with PyTorch's
    ``memory_format``: ``preserve_format`` (the default) keeps a non-overlapping and dense input's strides, and
    otherwise makes dense strides in the order of the input's (``empty_like``'s ``infer_dense_strides``: the rule
    of :func:`output_strides` for one operand); ``contiguous_format`` is contiguous, ``channels_last[_3d]`` those
    formats' strides."""
    name = format_name(memory_format)
    if name not in (None, "preserve_format"):
        return set_format(out, name)
    out._layout = None
    if input._view is None and input._layout is None:
        return out
    shape, strides, _ = layout(input)
    if shape and tuple(strides) != contiguous_strides(shape):  # (exactly: size-1 dimensions' too, a 1-d one's)
        # (an empty input counts as dense, as PyTorch's is_non_overlapping_and_dense: its strides are kept exactly)
        dense = tuple(strides) if 0 in shape or _dense(shape, strides) else output_strides([(shape, strides)], shape)
        if dense is not None:
            out._layout = (tuple(shape), dense, 0)
    return out


def numpy_layout(out, arr):
    """``out`` made from the numpy array ``arr``: a transposed or sliced array gives a tensor whose strides follow
    its memory order (``torch.tensor(img.transpose(2, 0, 1))`` is not contiguous in PyTorch); returns ``out``.
    A dense array keeps numpy's strides exactly, a size-1 dim's too (PyTorch's copy is an ``empty_like`` of the
    array's view, which keeps non-overlapping dense strides): ``ascontiguousarray(a.swapaxes(0, 1))`` of a
    ``(2, 1, 2)`` float32 array has strides (8, 8, 4) bytes, so the tensor's are (2, 2, 1). An empty array's are
    kept too, whatever they are (an empty tensor is dense)."""
    if not any(s % arr.itemsize for s in arr.strides):
        strides = tuple(s // arr.itemsize for s in arr.strides)
        if not arr.size:  # an empty array's strides are kept as numpy reports them (zeros: np.zeros((2, 0)))
            if strides != contiguous_strides(arr.shape):
                out._layout = (tuple(arr.shape), strides, 0)
            return out
        if _dense(arr.shape, strides):
            if strides != contiguous_strides(arr.shape):
                out._layout = (tuple(arr.shape), strides, 0)
            return out
    if arr.ndim > 1 and not arr.flags.c_contiguous and arr.size:
        strides = output_strides([(arr.shape, tuple(s // arr.itemsize for s in arr.strides))], arr.shape)
        if strides is not None:
            out._layout = (tuple(arr.shape), strides, 0)
    return out


def like_format(out, input, memory_format=None):
    """:func:`keep_format` where it can change anything (``input`` has strides of its own, or a channels-last
    format is asked for); returns ``out``."""
    if (input._view is not None or input._layout is not None
            or format_name(memory_format) in ("channels_last", "channels_last_3d")):
        keep_format(out, input, memory_format)
    return out


def set_output_layout(out, args):
    """Give ``out`` (a Tensor just made by an elementwise op on ``args``) PyTorch's output strides."""
    from .._tensor import Tensor
    operands = [layout(a)[:2] if isinstance(a, Tensor) else None for a in args if a is not None]
    strides = output_strides(operands, out._v.shape)
    if strides is not None:
        out._layout = (tuple(out._v.shape), strides, 0)


# ----------------------------------------------------------------------------------------------------------------
# LAPACK's layout: batches of column-major matrices (LinearAlgebraUtils' batched_matrix_contiguous_strides(shape,
# f_contig=True)), PyTorch's allocation for the results its LAPACK kernels write

def _left_only(left=True, **_):
    """The solvers that compute ``X A = B`` as the transpose of a left solve return a contiguous ``X``."""
    return (0,) if left else ()


COLUMN_MAJOR.update({  # op name -> the indices of its column-major outputs, or a function of its static arguments
    "linalg_inv_ex": (0,), "linalg_solve_ex": _left_only, "linalg_lu_solve": _left_only,
    "linalg_solve_triangular": (0,), "triangular_solve": (0, 1), "cholesky_solve": (0,), "cholesky_inverse": (0,),
    "linalg_lu_factor_ex": (0,), "linalg_ldl_factor_ex": (0,), "linalg_cholesky_ex": (0,), "cholesky": (0,),
    "linalg_qr": (0, 1), "linalg_svd": (0, 2), "linalg_eigh": (1,), "linalg_eig": (1,), "geqrf": (0,),
    "linalg_householder_product": (0,), "ormqr": (0,), "linalg_ldl_solve": (0,)})


def column_major_strides(shape, rows=None):
    """The strides of a batch of column-major matrices of ``shape``, narrowed from ``rows`` rows (``lstsq``'s
    solution is the top of its right-hand side's buffer of ``max(m, n)`` rows)."""
    shape = tuple(shape)
    full = shape[:-2] + (shape[-2] if rows is None else rows, shape[-1])
    strides = list(contiguous_strides(full))
    strides[-1], strides[-2] = max(full[-2], 1), 1
    return tuple(strides)


def column_major(t, rows=None, vector=False):
    """Give ``t`` (a fresh tensor) the strides :func:`column_major_strides` says, where it has two dimensions or
    more; ``vector``: ``t`` is a (batch of) vector(s), the matrices' column squeezed away. Returns ``t``."""
    shape = tuple(t._v.shape)
    if vector:
        strides = column_major_strides(shape + (1,), rows)[:-1]
    elif len(shape) >= 2:
        strides = column_major_strides(shape, rows)
    else:
        return t
    t._layout = None if strides == contiguous_strides(shape) else (shape, strides, 0)
    return t


def set_column_major(name, outs, static):
    """Give the outputs of op ``name`` that :data:`COLUMN_MAJOR` lists LAPACK's column-major strides."""
    which = COLUMN_MAJOR[name]
    for i in (which(**dict(static)) if callable(which) else which):
        column_major(outs[i])
