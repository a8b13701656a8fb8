"""Reordering: views that permute dims (permute, transpose, t, ``.T``/``.mT``/``.H``/``.mH``, movedim/moveaxis,
swapaxes/swapdims, and the in-place ``t_``/``transpose_``/``swapaxes_``) and copies that reorder elements (flip,
fliplr, flipud, roll, rot90)."""
from __future__ import annotations

import operator

import jax.numpy as jnp
import numpy as np

from .._tensor import wrap_dim
from ..autograd.saved_attrs import show_raw_dims
from .elementwise import parser_worded, require_int, require_tensor, type_name
from .inplace import _dense, contiguous_strides, layout, layout_rule
from .out_layout import keep_format, output_strides
from .registry import apply, defop
from .registry import Family as _Family
from .shape import _ALIAS, _args_or_kw, _dims_arg, _inplace_view, _size_args, int_list_arg, later_bools_as_ints

_public = _Family(globals()).public


# ----------------------------------------------------------------------------------------------------------------
# permutations

_PERMUTE = defop("permute", lambda x, *, dims: jnp.transpose(x, dims), view=True, linear=True,
                 grad_name="PermuteBackward0")
_TRANSPOSE = defop("transpose", lambda x, *, dims: jnp.transpose(x, dims), view=True, linear=True,
                   grad_name="TransposeBackward0")
_T = defop("t", lambda x, *, dims: jnp.transpose(x, dims), view=True, linear=True, grad_name="TBackward0")


@layout_rule("permute", "transpose", "t")
def _permute_layout(lay, *, dims):
    shape, strides, offset = lay
    return tuple(shape[d] for d in dims), tuple(strides[d] for d in dims), offset


def _permute(input, *args, dims=None):
    """``Tensor.permute``: the dims spread out (``x.permute(1, 0)``) or as one list."""
    dims = _args_or_kw(args, dims, "permute", "dims")
    if not dims:  # ``permute()``: PyTorch's parser wants the dims even for a 0-d tensor (``permute(())`` is fine)
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _size_args(dims, "permute", "dims")
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(_PERMUTE, (input,), dims=dims)


@parser_worded
def permute(input, dims):
    """``torch.permute``: PyTorch's function takes the dims as one list (not spread out, not a lone int)."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"permute(): argument 'dims' (position 2) must be tuple of ints, not {type_name(dims)}")
    return _permute(input, dims)


def _swap_perm(nd, dim0, dim1):
    if nd == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return ()
    a, b = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    p = list(range(nd))
    p[a], p[b] = p[b], p[a]
    return tuple(p)


@parser_worded
def transpose(input, dim0, dim1):
    require_tensor(input, "transpose")
    return show_raw_dims(apply(_TRANSPOSE, (input,), dims=_swap_perm(input.ndim, dim0, dim1)), dim0=int(dim0),
                         dim1=int(dim1))


@parser_worded
def t(input):
    return _t(input, "t")


def _t(input, name):
    if input.ndim > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return apply(_T, (input,), dims=tuple(reversed(range(input.ndim))))


def _T_prop(self):
    from .._global_flags import warn_once
    if self.ndim == 0:
        warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.")
    elif self.ndim != 2:
        warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and "
                  "it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices "
                  "or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
    return apply(_PERMUTE, (self,), dims=tuple(reversed(range(self.ndim))))


def _mT(self, name="mT"):
    if self.ndim == 0:
        from .._global_flags import warn_once
        hint = "This function is the identity in these cases." if name == "mT" else "Consider using x.conj()."
        warn_once(f"Tensor.{name} is deprecated on 0-D tensors. {hint}", stacklevel=3)
        return apply(_ALIAS, (self,))
    if self.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {self.ndim}-D "
                           "tensor.")
    return transpose(self, -2, -1)


@parser_worded
def movedim(input, source, destination):
    if isinstance(source, (tuple, list)) != isinstance(destination, (tuple, list)):  # (two ints or two lists)
        raise TypeError("movedim(): source and destination must both be ints or both lists of ints")
    src = later_bools_as_ints(source) if isinstance(source, (tuple, list)) else (source,)  # (an int: a 0-d tensor too)
    dst = later_bools_as_ints(destination) if isinstance(destination, (tuple, list)) else (destination,)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    nd = input.ndim
    src = [wrap_dim(s, nd) for s in src]
    dst = [wrap_dim(d, nd) for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    if nd == 0:  # dim 0 of a 0-d tensor is the tensor itself: PyTorch returns an alias
        return apply(_ALIAS, (input,))
    order = [-1] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    order = [o if o >= 0 else next(rest) for o in order]
    return apply(_PERMUTE, (input,), dims=tuple(order))


@parser_worded
def swapaxes(input, axis0, axis1):
    return transpose.__wrapped__(input, axis0, axis1)  # (not worded as transpose's parser words it)


@parser_worded
def swapdims(input, dim0, dim1):
    return transpose.__wrapped__(input, dim0, dim1)


moveaxis = parser_worded(movedim.__wrapped__, "moveaxis")


# ----------------------------------------------------------------------------------------------------------------
# flip / roll / rot90


_FLIP = defop("flip", lambda x, *, dims: jnp.flip(x, dims), linear=True, grad_name="FlipBackward0")


def _flip(input, *args, dims=None):
    """``Tensor.flip``: the dims spread out (``x.flip(0, 1)``) or as one list."""
    require_tensor(input, "flip")
    args = _args_or_kw(args, dims, "flip", "dims")
    if not args:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = _size_args(args, "flip", "dims")
    if input.ndim == 0:
        if len(dims) > 1:
            for d in dims:
                wrap_dim(d, 0)
            raise RuntimeError("dim 0 appears multiple times in the list of dims")
        for d in dims:
            wrap_dim(d, 0)
        return apply(_FLIP, (input,), dims=())
    out = apply(_FLIP, (input,), dims=_dims_arg(dims, input.ndim))
    if input._view is not None or input._layout is not None:  # (allocated like the input: empty_like)
        keep_format(out, input)
    return out


@parser_worded
def flip(input, dims):
    """``torch.flip``: PyTorch's function takes the dims as one list (not spread out, not a lone int)."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not {type_name(dims)}")
    return _flip(input, dims)


def fliplr(input):
    require_tensor(input, "fliplr")
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, 1)


def flipud(input):
    require_tensor(input, "flipud")
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, 0)


def _roll_fwd(x, *, shifts, dims):
    if dims is None:
        return jnp.roll(x.reshape(-1), shifts).reshape(x.shape)
    return jnp.roll(x, shifts, dims)


def _roll_dynamic(static, take):
    """``OpDef.dynamic`` of roll: the shifts are values of its eager kernels (``jnp.roll`` takes traced shifts), so
    a loop rolling by a new amount each time (random shifts in augmentation) compiles one kernel, not one per
    amount."""
    return tuple((k, (take(v) if type(v) is int else tuple(map(take, v))) if k == "shifts" else v)
                 for k, v in static)


_ROLL = defop("roll", _roll_fwd, linear=True, grad_name="RollBackward0", dynamic=_roll_dynamic)


def _type_name(v):
    return f"numpy.{type(v).__name__}" if isinstance(v, np.generic) else type(v).__name__


def _index(v):
    """``operator.index(v)`` (ints, numpy integers, integer 0-d tensors), or None; bools are no ints here."""
    if isinstance(v, (bool, np.bool_)):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def _int_list(v, arg, pos):
    """roll's ``int[]`` argument as PyTorch's parser reads it: one integer or a tuple/list of them."""
    if _index(v) is not None:
        return (_index(v),)
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"roll(): argument '{arg}' (position {pos}) must be tuple of ints, not {_type_name(v)}")
    # (the parser checks the first value's type; it unpacks a later bool as an index)
    v = v[:1] + type(v)(int(s) if isinstance(s, bool) else s for s in v[1:])
    for i, s in enumerate(v):
        if _index(s) is None:
            raise TypeError(f"roll(): argument '{arg}' (position {pos}) must be tuple of ints, but found element of "
                            f"type {_type_name(s)} at pos {i}")
    return tuple(_index(s) for s in v)


@parser_worded
def roll(input, shifts, dims=None):
    sh = _int_list(shifts, "shifts", 2)  # (positions of the function: the method counts from shifts, 1)
    ds = () if dims is None else _int_list(dims, "dims", 3)
    if not sh:
        raise RuntimeError("`shifts` required")
    if not ds:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
        return apply(_ROLL, (input,), shifts=sh[0], dims=None)
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    if input.numel() == 0:  # PyTorch's kernel returns an empty input's clone before looking at dims (RollBackward0)
        return apply(_ROLL, (input,), shifts=0, dims=None)
    if input.ndim == 0:  # roll does not take a 0-d tensor's dims as 1-d, unlike most ops
        raise IndexError(f"Dimension specified as {ds[0]} but tensor has no dimensions")
    return apply(_ROLL, (input,), shifts=sh, dims=tuple(wrap_dim(d, input.ndim) for d in ds))


_ROT90 = defop("rot90", lambda x, *, k, dims: jnp.rot90(x, k, dims), linear=True, grad_name="Rot90Backward0")


@parser_worded
def rot90(input, k=1, dims=(0, 1)):
    require_int(k, "rot90", 2, "k")
    dims = int_list_arg(dims, "rot90", "dims", 3)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    a, b = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k = int(k) % 4
    out = apply(_ROT90, (input,), k=k, dims=(a, b))
    # PyTorch's strides: k = 0 clones contiguous; otherwise input.flip(...) is allocated like the input (its
    # strides if dense, else dense ones in their order) and, for odd k, transposed in place: a's and b's swap
    strides = None
    if k and (input._view is not None or input._layout is not None):
        shape, st, _ = layout(input)
        strides = tuple(st) if _dense(shape, st) else output_strides([(shape, st)], shape)
    if k % 2:
        strides = list(strides or contiguous_strides(input.shape))
        strides[a], strides[b] = strides[b], strides[a]
    if strides is not None and tuple(strides) != contiguous_strides(out.shape):
        out._layout = (tuple(out.shape), tuple(strides), 0)
    return out


for _n in ("transpose", "t", "movedim", "swapaxes", "fliplr", "flipud", "roll", "rot90"):
    _public(_n, globals()[_n])
for _n in ("flip", "permute"):  # (the functions take one list of dims, the methods spread ones too)
    _public(_n, globals()[_n], method=False)
    METHODS[_n] = parser_worded(globals()["_" + _n], _n, method=True)  # noqa: F821 (the Family's table)
def _H_prop(self):
    """``x.H``: the conjugate transpose of a matrix (a 0-D tensor is itself); other ranks raise, as in PyTorch."""
    if self.ndim not in (0, 2):
        hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.{hint}")
    if self.ndim == 0:
        from .._global_flags import warn_once
        warn_once("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
    t = apply(_PERMUTE, (self,), dims=tuple(reversed(range(self.ndim))))
    return t.conj() if self.is_complex() else t


# (the in-place forms name themselves in PyTorch's parser errors: ``transpose_() missing 1 required ...``)
for _n, _f in (("t", lambda self: _t(self, "t_")), ("transpose", transpose.__wrapped__),
               ("swapaxes", swapaxes.__wrapped__), ("swapdims", swapdims.__wrapped__)):
    METHODS[_n + "_"] = parser_worded(_inplace_view(_f), _n + "_", method=True)
METHODS["moveaxis"] = moveaxis
METHODS["swapdims"] = swapdims
METHODS["T"] = property(_T_prop)
METHODS["mT"] = property(_mT)
METHODS["H"] = property(_H_prop)
METHODS["mH"] = property(lambda self: _mT(self, "mH").conj() if self.is_complex() else _mT(self, "mH"))
__all__ += ["moveaxis", "swapdims"]
