"""Copying twins of the view ops and the small view/shape helpers PyTorch exposes at top level:

- the ``*_copy`` functions (``torch.permute_copy``, ``view_copy``, ``split_copy``...): the view op's result as a fresh
  tensor (never a view of the input), its ``grad_fn`` named as PyTorch names it (``PermuteBackward0_copy``);
- ``unsafe_split`` / ``unsafe_split_with_sizes`` / ``unsafe_chunk``: ``split``/``chunk`` whose pieces are not views;
- ``adjoint`` (the conjugate transpose of the last two dims, a view) and ``Tensor.is_nonzero``.

Each copy is the view op followed by a one-input copy node (a clone under PyTorch's node name), so argument checks,
gradients and dtypes are the view op's own.

Example:
    >>> import torchish as torch
    >>> x = torch.arange(6.0).reshape(2, 3)
    >>> y = torch.permute_copy(x, (1, 0))
    >>> y._base is None
    True
"""
from __future__ import annotations

import warnings

from .._tensor import Tensor
from .broadcast import expand
from .copying import _CLONE
from .diag import diagonal
from .._tensor import wrap_dim
from .elementwise import no_derivative, out_structured, require_int
from .reorder import permute, t, transpose
from .registry import Family, apply, defop, overload
from .shape import _ALIAS, squeeze, unsqueeze, view_as_complex, view_as_real
from .slicing import chunk, narrow, select, split, unbind, unfold
from .strided import as_strided

_fam = Family(globals())
_public = _fam.public


def _copy_node(name, grad_name, **kw):
    return defop(name, _CLONE.fwd, linear=True, grad_name=grad_name, **kw)


def _copied(op, out):
    """``out`` (a Tensor or a tuple of them) passed through ``op``'s copy node."""
    if isinstance(out, Tensor):
        return apply(op, (out,))
    return tuple(apply(op, (o,)) for o in out)


# the out= overloads of the copies that return several tensors: the name PyTorch's size check prints, and whether
# they copy into the given tensors (cast, broadcast, never resized) rather than check them as structured outs do
_LIST_OUTS = {"unbind_copy": ("unbind_copy_int_out", False), "split_copy": ("split_copy_Tensor_out()", True),
              "split_with_sizes_copy": ("split_with_sizes_copy_out", False)}


def _into_out(name, result, out):
    """PyTorch's ``out=`` of a ``*_copy`` function: a Tensor result goes into ``out`` as a structured kernel's does
    (same dtype, resized); a tuple of them into a list of as many tensors, and the function then returns None."""
    if out is None:
        return result
    if isinstance(result, Tensor):
        return out_structured(result, out, name)
    if not isinstance(out, (tuple, list)) or not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    label, copies = _LIST_OUTS[name]
    if len(out) != len(result):
        raise RuntimeError(f"{label} expected an out= argument of size {len(result)}, got size {len(out)}")
    for r, o in zip(result, out):
        if copies:
            o.copy_(r)
        else:
            out_structured(r, o, name)
    return None


def _make_copy(name, view_fn, grad_name):
    op = _copy_node(name, grad_name)
    # (squeeze_copy's node is named by overload: SqueezeBackward0_copy, SqueezeBackward1_copy, SqueezeBackward2_copy)
    by_kind = (op, *(overload(op, f"SqueezeBackward{k}_copy") for k in (1, 2))) if name == "squeeze_copy" else None

    def fn(input, *args, out=None, **kwargs):
        node = op if by_kind is None else by_kind[_squeeze_kind(input, *args, **kwargs)]
        return _into_out(name, _copied(node, view_fn(input, *args, **kwargs)), out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: ``{view_fn.__name__}``'s result as a new tensor (not a view)."
    return fn


def _view(input, size):
    return input.view(size)


def _alias(input):
    return input


def _slice(input, dim=0, start=None, end=None, step=1):
    index = (slice(None),) * (dim % input.ndim if input.ndim else 0) + (slice(start, end, step),)
    return input[index]


def _narrow_copy(input, dim, start, length):
    """``narrow_copy``'s own checks, in the order of PyTorch's CPU kernel (not ``narrow``'s): its parser takes
    ``start`` and ``length`` as SymInts only (an integer Tensor of one element; ``narrow``'s Tensor ``start``
    overload is not there), a ``dim`` past the last fails its bare check, and a negative ``length`` the bound
    check of ``start + length``."""
    require_int(dim, "narrow_copy", 2, "dim")
    require_int(start, "narrow_copy", 3, "start", symint=True)
    require_int(length, "narrow_copy", 4, "length", symint=True)
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= input.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request to "
                           "PyTorch.)")
    d = wrap_dim(dim, input.ndim)
    n, start, length = input.shape[d], int(start), int(length)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start + n if start < 0 else start
    if length < 0 or start > n - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return narrow(input, d, start, length)


def _expand(input, size, *, implicit=False):
    return expand(input, tuple(size))


def _permute(input, dims):
    return permute(input, tuple(dims))


def _split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


def _squeeze(input, dim=None):
    return squeeze(input) if dim is None else squeeze(input, dim)


def _squeeze_kind(input, dim=None, **kwargs):
    """Which of PyTorch's squeeze_copy overloads a call is: () 0, (int dim) 1, (int[] dim) 2."""
    return 0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1


_COPIES = (
    ("alias_copy", _alias, "AliasBackward0_copy"),
    ("as_strided_copy", as_strided, "AsStridedBackward0_copy"),
    ("diagonal_copy", diagonal, "DiagonalBackward0_copy"),
    ("expand_copy", _expand, "ExpandBackward0_copy"),
    ("narrow_copy", _narrow_copy, "NarrowCopyBackward0"),
    ("permute_copy", _permute, "PermuteBackward0_copy"),
    ("select_copy", select, "SelectBackward0_copy"),
    ("slice_copy", _slice, "SliceBackward0_copy"),
    ("split_copy", split, "SplitBackward0_copy"),
    ("split_with_sizes_copy", _split_with_sizes, "SplitWithSizesBackward0_copy"),
    ("squeeze_copy", _squeeze, "SqueezeBackward0_copy"),
    ("t_copy", t, "TBackward0_copy"),
    ("transpose_copy", transpose, "TransposeBackward0_copy"),
    ("unbind_copy", unbind, "UnbindBackward0_copy"),
    ("unfold_copy", unfold, "UnfoldBackward0_copy"),
    ("unsqueeze_copy", unsqueeze, "UnsqueezeBackward0_copy"),
    ("view_as_real_copy", view_as_real, "ViewAsRealBackward0_copy"),
    ("view_as_complex_copy", view_as_complex, "ViewAsComplexBackward0_copy"),
)
for _name, _fn, _grad in _COPIES:
    _public(_name, _make_copy(_name, _fn, _grad), method=_name == "narrow_copy")
del _name, _fn, _grad

_VIEW_COPY = _copy_node("view_copy", "ViewBackward0_copy")


def view_copy(input, size, *, out=None):
    """``torch.view_copy``: ``input.view(size)`` (a shape, or a dtype to reinterpret as) as a new tensor."""
    return _into_out("view_copy", apply(_VIEW_COPY, (_view(input, size),)), out)


_public("view_copy", view_copy, method=False)

_DETACH_COPY = defop("detach_copy", _CLONE.fwd, vjp=no_derivative("detach_copy"), grad_name="NotImplemented",
                     linear=True)


def detach_copy(input, *, out=None):
    """``torch.detach_copy``: as in PyTorch, the copy is recorded, but backward through it raises."""
    return _into_out("detach_copy", apply(_DETACH_COPY, (input,)), out)


_public("detach_copy", detach_copy, method=False)


# ----------------------------------------------------------------------------------------------------------------
# unsafe_split / unsafe_split_with_sizes / unsafe_chunk: the pieces are new tensors


_UNSAFE_SPLIT = _copy_node("unsafe_split", "UnsafeSplitBackward0")
_UNSAFE_SPLIT_WS = _copy_node("unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0")


def unsafe_split(input, split_size, dim=0):
    """``split`` whose pieces are not views of ``input``."""
    return _copied(_UNSAFE_SPLIT, split(input, split_size, dim))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``split_with_sizes`` whose pieces are not views of ``input``."""
    return _copied(_UNSAFE_SPLIT_WS, split(input, list(split_sizes), dim))


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` whose pieces are not views of ``input``."""
    return _copied(_UNSAFE_SPLIT, chunk(input, chunks, dim))


_public("unsafe_split", unsafe_split)
_public("unsafe_split_with_sizes", unsafe_split_with_sizes)
_public("unsafe_chunk", unsafe_chunk)


# ----------------------------------------------------------------------------------------------------------------
# adjoint / is_nonzero


def adjoint(input):
    """The conjugate transpose of the last two dims (a view; a lazily conjugated one for complex inputs). A 0-D
    tensor is its own transpose: PyTorch warns and returns its conjugate."""
    if input.ndim == 0:
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        y = apply(_ALIAS, (input,))
        return y.conj() if input.is_complex() else y
    if input.ndim == 1:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{input.ndim}-D tensor.")
    y = transpose(input, -2, -1)
    return y.conj() if input.is_complex() else y


def _is_nonzero(self):
    from .._runtime import is_nonzero  # the top-level function (runtime helpers sit above the ops)
    return is_nonzero(self)


_public("adjoint", adjoint)
_fam.method("is_nonzero", _is_nonzero)
