"""Quantized tensors: ``torch.quantize_per_tensor`` / ``quantize_per_channel`` / ``quantize_per_tensor_dynamic``,
``torch.dequantize``, the quantized dtypes (``qint8``, ``quint8``, ``qint32``, ``quint4x2``, ``quint2x4``) and the
qschemes.

A quantized tensor is a :class:`QuantizedTensor`: a Tensor whose value is its integer representation (int8 for
qint8, uint8 for quint8, quint4x2 and quint2x4, int32 for qint32; the sub-byte types are held one value a byte,
unpacked) and whose quantization parameters (:class:`QParams`) live beside it. Its ``dtype`` is the quantized dtype.
PyTorch runs few kernels on the QuantizedCPU backend: the class's methods are the ones it has (views and copies of
the integer representation that keep the parameters, ``dequantize``, ``int_repr``, the ``q_*`` accessors, printing),
and every other function or method reached through ``__torch_function__`` raises PyTorch's NotImplementedError
("Could not run 'aten::add.out' with arguments from the 'QuantizedCPU' backend..."). The protocol is turned on by
the first quantized tensor made (``_subclass.activate``), so programs without quantized tensors pay nothing.

The arithmetic (rounding as PyTorch's x86 kernels, ATen's ``ChooseQuantizationParams``) is in
:mod:`torchish._quantize_kernels`.

Example:
    >>> import torchish as torch
    >>> q = torch.quantize_per_tensor(torch.tensor([-1.0, 0.5]), 0.1, 10, torch.qint8)
    >>> q.int_repr()
    tensor([ 0, 15], dtype=torch.int8)
    >>> q.dequantize()
    tensor([-1.0000,  0.5000])
"""
from __future__ import annotations

import pickle

import jax.numpy as jnp
import numpy as np

from . import _dtype, _quantize_kernels as _k, _subclass
from ._tensor import Tensor, wrap

__all__ = ["qint8", "quint8", "qint32", "quint4x2", "quint2x4", "qscheme", "per_tensor_affine",
           "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric", "per_channel_affine_float_qparams",
           "quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic", "dequantize"]


class qscheme:
    """``torch.qscheme``: how a quantized tensor's parameters apply (per tensor or per channel)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_qscheme_named, (self.name,))


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")
_QSCHEMES = {q.name: q for q in (per_tensor_affine, per_channel_affine, per_tensor_symmetric, per_channel_symmetric,
                                 per_channel_affine_float_qparams)}


def _qscheme_named(name):
    return _QSCHEMES[name]


def _qdtype(name, storage, lo, hi):
    d = _dtype.dtype(name, storage, _dtype._INT)
    d.is_signed = None  # (PyTorch: "isSignedType not supported for quantized types"; see _is_signed below)
    _RANGE[d] = (lo, hi)
    _dtype._BY_NAME[name] = d  # (unpickling a dtype looks it up by name)
    setattr(_dtype, name, d)  # (pickling one names it torchish._dtype.<name>)
    return d


_RANGE: dict = {}
qint8 = _qdtype("qint8", np.int8, -128, 127)
quint8 = _qdtype("quint8", np.uint8, 0, 255)
qint32 = _qdtype("qint32", np.int32, -2 ** 31, 2 ** 31 - 1)
quint4x2 = _qdtype("quint4x2", np.uint8, 0, 15)
quint2x4 = _qdtype("quint2x4", np.uint8, 0, 3)
_SUB_BYTE = {quint4x2: 4, quint2x4: 2}
_NAMES = {qint8: "QInt8", quint8: "QUInt8", qint32: "QInt32", quint4x2: "QUInt4x2", quint2x4: "QUInt2x4"}


def is_quantized_dtype(d) -> bool:
    return d in _RANGE


class QParams:
    """A quantized tensor's parameters: its quantized ``dtype``, ``qscheme``, and ``scale`` (a Python float) and
    ``zero_point`` (an int) per tensor, or ``scales`` (float64) / ``zero_points`` (int64 or float) Tensors along
    ``axis`` per channel."""

    __slots__ = ("dtype", "qscheme", "scale", "zero_point", "axis")

    def __init__(self, dtype, qscheme, scale, zero_point, axis=None):
        self.dtype, self.qscheme, self.scale, self.zero_point, self.axis = dtype, qscheme, scale, zero_point, axis

    @property
    def per_channel(self):
        return self.axis is not None


def _not_run(op):
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the 'QuantizedCPU' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
        "using custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
        "https://fburl.com/ptmv1 for possible resolutions. 'aten::" + op + "' is only available for these backends: "
        "[CPU, Meta, BackendSelect, Python, FuncTorchDynamicLayerBackMode, Functionalize, Named, Conjugate, Negative, "
        "ZeroTensor, ADInplaceOrView, AutogradOther, AutogradCPU, ...].")


# PyTorch's kernel name in the error, where the out= overload is what fails (``q + q``: 'aten::add.out')
_ATEN = {"add": "add.out", "sub": "sub.out", "mul": "mul.out", "div": "div.out", "neg": "neg.out",
         "abs": "abs.out", "sum": "sum.IntList_out", "exp": "exp.out", "log": "log.out", "sqrt": "sqrt.out",
         "pow": "pow.Tensor_Scalar_out", "matmul": "mm", "mm": "mm", "zero_": "zero_", "zeros_like": "zero_",
         "new_zeros": "zero_", "sin": "sin.out", "cos": "cos.out", "tanh": "tanh.out", "sigmoid": "sigmoid.out"}


class QuantizedTensor(Tensor):
    """A quantized tensor: its value is the integer representation, ``_qp`` its :class:`QParams`."""

    __slots__ = ()

    @property
    def dtype(self):
        return self._qp.dtype

    @property
    def is_quantized(self):
        return True

    def is_floating_point(self):
        return False

    def is_signed(self):
        raise RuntimeError("isSignedType not supported for quantized types")

    @property
    def requires_grad(self):
        return False

    @requires_grad.setter
    def requires_grad(self, value):
        if value:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    # --- the quantization parameters ---
    def qscheme(self):
        return self._qp.qscheme

    def q_scale(self):
        if self._qp.per_channel:
            raise RuntimeError(_expected("quantizer->qscheme() == kPerTensorAffine"))
        return self._qp.scale

    def q_zero_point(self):
        if self._qp.per_channel:
            raise RuntimeError(_expected("quantizer->qscheme() == kPerTensorAffine"))
        return self._qp.zero_point

    def q_per_channel_scales(self):
        self._check_per_channel()
        return self._qp.scale.clone()

    def q_per_channel_zero_points(self):
        self._check_per_channel()
        return self._qp.zero_point.clone()

    def q_per_channel_axis(self):
        self._check_per_channel()
        return self._qp.axis

    def _check_per_channel(self):
        if not self._qp.per_channel:
            raise RuntimeError(_expected("quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
                                         "kPerChannelAffineFloatQParams"))

    # --- values ---
    def int_repr(self):
        bits = _SUB_BYTE.get(self._qp.dtype)
        if bits is None:
            return wrap(self._d)
        return wrap(_k.pack_sub_byte(self._d, bits))

    def dequantize(self):
        return wrap(_k.dequantize_values(self._d, self._qp))

    def item(self):
        return self.dequantize().item()

    def __float__(self):
        return float(self.dequantize())

    def tolist(self):
        raise RuntimeError("load_scalar: invalid type")

    def numpy(self, *, force=False):
        raise TypeError(f"Got unsupported ScalarType {_NAMES[self._qp.dtype]}")

    __array__ = None  # (numpy must not read the integer representation as the values)

    def to(self, *args, **kwargs):
        target = kwargs.get("dtype")
        for a in args:
            if isinstance(a, _dtype.dtype):
                target = a
        if target is not None and target is not self._qp.dtype:
            raise RuntimeError("Creation of quantized tensor requires quantized dtype like torch.quint8")
        return self

    def cpu(self, memory_format=None):
        return self

    def _cast(self, *args, **kwargs):
        raise RuntimeError("Creation of quantized tensor requires quantized dtype like torch.quint8")

    float = double = half = bfloat16 = long = int = short = char = byte = bool = _cast

    def __repr__(self, *, tensor_contents=None):
        return _repr(self)

    def __reduce_ex__(self, protocol):  # (plain pickle / copy: the integers and the parameters)
        qp = self._qp
        return (_unpickle, (np.asarray(self._d), qp.dtype, qp.qscheme, qp.scale, qp.zero_point, qp.axis))

    def _qparams_for_pickle(self):
        """The ``quantizer_params`` of PyTorch's ``_rebuild_qtensor`` (``torch.save``)."""
        qp = self._qp
        if qp.dtype in _SUB_BYTE:
            raise NotImplementedError(f"torchish: saving a {qp.dtype} tensor is not supported")
        if qp.per_channel:
            return (qp.qscheme, qp.scale, qp.zero_point, qp.axis)
        return (qp.qscheme, qp.scale, qp.zero_point)

    __str__ = __repr__

    def equal(self, other):
        if not isinstance(other, QuantizedTensor) or other.shape != self.shape:
            return False
        a, b = self._qp, other._qp
        if a.dtype is not b.dtype or a.qscheme is not b.qscheme or a.axis != b.axis:
            return False
        same_qparams = (a.scale == b.scale and a.zero_point == b.zero_point) if not a.per_channel else (
            bool(jnp.array_equal(a.scale._d, b.scale._d)) and bool(jnp.array_equal(a.zero_point._d, b.zero_point._d)))
        return same_qparams and bool(jnp.array_equal(self._d, other._d))

    # --- the few computing kernels PyTorch's QuantizedCPU backend has (per-tensor) ---
    def relu(self):
        qp = self._per_tensor_only()
        return _rewrap(jnp.maximum(self._d, jnp.asarray(qp.zero_point, self._d.dtype)), qp)

    def relu_(self):
        self._d = self.relu()._d
        return self

    def _extreme(name):
        def method(self, *args, **kwargs):
            qp = self._per_tensor_only()
            out = getattr(Tensor, name)(wrap(self._d), *args, **kwargs)
            if isinstance(out, Tensor):
                return _rewrap(out, qp)
            return type(out)(_rewrap(out[0], qp), out[1])  # (values quantized, indices as they are)
        method.__name__ = name
        return method

    max, min = _extreme("max"), _extreme("min")
    del _extreme

    def mean(self, *args, **kwargs):  # (PyTorch's: the dequantized mean, quantized with the input's parameters)
        qp = self._per_tensor_only()
        return quantize_per_tensor(Tensor.mean(self.dequantize(), *args, **kwargs), qp.scale, qp.zero_point,
                                   qp.dtype)

    def _per_tensor_only(self):
        if self._qp.per_channel:
            raise RuntimeError(_expected("quantizer->qscheme() == kPerTensorAffine"))
        return self._qp

    def _compare(name):
        def method(self, other):
            b = other.dequantize() if isinstance(other, QuantizedTensor) else other
            return getattr(Tensor, name)(self.dequantize(), b)  # (PyTorch compares the dequantized values)
        method.__name__ = name
        return method

    __eq__, __ne__ = eq, ne = _compare("eq"), _compare("ne")
    __hash__ = Tensor.__hash__
    del _compare

    # --- refused: arithmetic with a number fails earlier in PyTorch (its result has no quantizer) ---
    def _arith(name):
        def method(self, other=None, *args, **kwargs):
            if not isinstance(other, Tensor):
                raise RuntimeError("empty_strided not supported on quantized tensors yet see "
                                   "https://github.com/pytorch/pytorch/issues/74540")
            raise _not_run(_ATEN[name.strip("_").lstrip("r") if name.startswith("__r") else name])
        return method

    __add__ = __radd__ = add = _arith("add")
    __sub__ = __rsub__ = sub = _arith("sub")
    __mul__ = __rmul__ = mul = _arith("mul")
    __truediv__ = __rtruediv__ = div = _arith("div")
    del _arith

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        public = getattr(func, "_torchish_public", None) or getattr(func, "_torchish_python", None)
        if public is None and getattr(func, "__name__", None) not in ("__get__", "__set__"):
            public = f"{func.__module__}.{func.__name__}"
        if public is None:  # a property's getter or setter (shape, device, grad...): metadata, read as Tensor's
            with _subclass.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        name = public.rsplit(".", 1)[1]
        handler = _FUNCTIONS.get(name) if public.startswith("torch.") and not public.startswith("torch.Tensor.") \
            else None
        if handler is None:
            own = cls.__dict__.get(name)
            if callable(own) and args and isinstance(args[0], QuantizedTensor):
                return own(*args, **kwargs)
            if name in _METADATA:
                with _subclass.DisableTorchFunctionSubclass():
                    return func(*args, **kwargs)
            raise _not_run(_ATEN.get(name, name))
        return handler(*args, **kwargs)


def _expected(cond):
    return (f"Expected {cond} to be true, but got false.  (Could this error message be improved?  If so, please "
            "report an enhancement request to PyTorch.)")


# Tensor methods that read only metadata: they run as Tensor's on a quantized tensor
_METADATA = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "storage_offset", "is_contiguous",
    "get_device", "__len__", "data_ptr", "is_shared", "is_pinned", "type", "__format__", "__hash__", "__bool__",
    "is_set_to", "has_names", "__reduce_ex__", "__deepcopy__", "__setstate__", "_is_view", "is_inference",
    "untyped_storage", "__index__", "__dir__", "__sizeof__", "__contains__",
})


def _rewrap(t, qp):
    """A QuantizedTensor over ``t``'s value (an integer representation) with parameters ``qp``."""
    q = wrap(t._d if isinstance(t, Tensor) else t)
    q.__class__ = QuantizedTensor
    q._qp = qp
    return q


def _shape_method(name):
    """A method that runs Tensor's ``name`` on the integer representation and keeps the parameters (PyTorch's
    views and copies of a per-tensor quantized tensor)."""
    base = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        qp = self._qp
        if qp.per_channel and name not in _ANY_SCHEME:
            raise NotImplementedError(f"torchish: {name}() of a per-channel quantized tensor is not supported "
                                      "(its channel axis would move)")
        out = base(wrap(self._d), *args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(_rewrap(o, qp) for o in out)
        return _rewrap(out, qp)

    method.__name__ = method.__qualname__ = name
    return method


_ANY_SCHEME = frozenset({"clone", "detach", "contiguous"})
for _name in ("clone", "detach", "contiguous", "view", "reshape", "flatten", "permute", "transpose", "t",
              "__getitem__", "unsqueeze", "squeeze", "expand", "expand_as", "repeat", "flip", "index_select",
              "narrow", "select", "chunk", "split", "unbind", "view_as", "reshape_as", "unflatten", "movedim",
              "swapaxes", "swapdims", "roll", "tile"):
    setattr(QuantizedTensor, _name, _shape_method(_name))
QuantizedTensor.data = property(lambda self: _rewrap(self._d, self._qp))
del _name


def _repr(q):
    """PyTorch's print of a quantized tensor: the dequantized values, then its size, dtype and parameters."""
    from ._tensor_str import _add_suffixes, format_values
    prefix = "tensor("
    values = np.asarray(_k.dequantize_values(q._d, q._qp))
    qp = q._qp
    suffixes = [f"size={tuple(q.shape)}", f"dtype={qp.dtype}", f"quantization_scheme={qp.qscheme}"]
    if qp.per_channel:
        suffixes += [f"scale={qp.scale!r}", f"zero_point={qp.zero_point!r}", f"axis={qp.axis}"]
    else:
        suffixes += [f"scale={qp.scale}", f"zero_point={qp.zero_point}"]
    text = format_values(values, len(prefix)) if values.size else "[]"
    return _add_suffixes(prefix + text, suffixes, len(prefix))


def _made(value, qp):
    if not _subclass._ACTIVE[0]:
        _subclass.activate()  # (the protocol that refuses the ops PyTorch has no quantized kernel for)
    return _rewrap(value, qp)


def _check_input(x, dtype, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    if isinstance(x, QuantizedTensor) or x.dtype is not _dtype.float32:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {_dtype.scalar_type_name(x.dtype)}")
    if not is_quantized_dtype(dtype):
        name = _dtype.scalar_type_name(dtype) if isinstance(dtype, _dtype.dtype) else dtype
        raise RuntimeError(f"ScalarType {name} is not supported in new_qtensor.")


def quantize_per_tensor(input, scale, zero_point, dtype):
    """``torch.quantize_per_tensor``: ``input`` (float32, or a list of them with one scale and zero point each in
    Tensors) quantized to ``dtype`` with one ``scale`` and ``zero_point``."""
    if isinstance(input, (list, tuple)):
        scales = np.asarray(scale.detach()._d, np.float64).reshape(-1)
        zps = np.asarray(zero_point.detach()._d, np.int64).reshape(-1)
        return tuple(quantize_per_tensor(x, float(s), int(z), dtype) for x, s, z in zip(input, scales, zps))
    _check_input(input, dtype, "quantize_per_tensor")
    if isinstance(scale, Tensor):
        scale = float(np.float32(scale.item()))  # (a scale Tensor is read as float32)
    if isinstance(zero_point, Tensor):
        zero_point = int(zero_point.item())
    scale, zero_point = float(scale), int(zero_point)
    lo, hi = _RANGE[dtype]
    info = np.iinfo(dtype.np)  # (the zero point is checked against the storage type's range)
    if zero_point > info.max:
        raise RuntimeError(f"quantize_tensor_per_tensor_affine zero_point {zero_point} is above upper bound.")
    if zero_point < info.min:
        raise RuntimeError(f"quantize_tensor_per_tensor_affine zero_point {zero_point} is below lower bound.")
    if dtype in _SUB_BYTE:
        v = _k.quantize_sub_byte(input._d, np.float32(scale), np.float32(zero_point), hi, dtype.np.type)
    else:
        v = _k.quantize_values(input._d, np.float32(scale), np.int64(zero_point), lo, hi, dtype.np.type)
    return _made(v, QParams(dtype, per_tensor_affine, scale, zero_point))


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """``torch.quantize_per_channel``: one scale and zero point per index along ``axis``."""
    from .ops import creation
    _check_input(input, dtype, "quantize_per_channel")
    axis = int(axis)
    if not 0 <= axis < input.ndim:
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. Got: {axis}Expected: < "
                           f"{input.ndim}")
    n = input.shape[axis]
    if scales.numel() != n:
        raise RuntimeError(f"length of scales must equal to channel, expected {n} got, {scales.numel()}")
    if zero_points.numel() != n:
        raise RuntimeError(f"length of zero_points must equal to channel expected {n} got, {zero_points.numel()}")
    float_qparams = zero_points.dtype.is_floating_point
    scales = creation.tensor(np.asarray(scales.detach()._d, np.float64).reshape(-1))
    zero_points = wrap(zero_points.detach()._d.reshape(-1)) if float_qparams else \
        creation.tensor(np.asarray(zero_points.detach()._d, np.int64).reshape(-1))
    shape = [1] * input.ndim
    shape[axis] = -1
    lo, hi = _RANGE[dtype]
    x = input._d
    scale = scales._d.astype(jnp.float32).reshape(shape)
    zp = zero_points._d.reshape(shape)
    if float_qparams:  # (the embedding scheme: zero points are floats, rounded with the scaled value)
        v = jnp.clip(jnp.round(x / scale + zp.astype(jnp.float32)), lo, hi).astype(dtype.np)
        scheme = per_channel_affine_float_qparams
    else:
        v = _k.quantize_values(x, scale, zp, lo, hi, dtype.np.type)
        scheme = per_channel_affine
    return _made(v, QParams(dtype, scheme, scales, zero_points, axis))


def quantize_per_tensor_dynamic(input, dtype, reduce_range):
    """``torch.quantize_per_tensor_dynamic``: per-tensor quantization with parameters chosen from ``input``'s range
    (quint8 or qint8; float16 is a cast)."""
    if dtype is _dtype.float16:
        return input.contiguous().to(_dtype.float16)
    if dtype not in (qint8, quint8):
        raise RuntimeError(f"dtype {_NAMES.get(dtype, dtype)}not supported")
    lo, hi = _RANGE[dtype]
    scale, zp = _k.choose_qparams(float(input.min()), float(input.max()), lo, hi, reduce_range)
    return quantize_per_tensor(input, scale, zp, dtype)


def dequantize(tensor):
    """``torch.dequantize``: the float32 values of a quantized tensor (a list of them: a tuple); a float tensor is
    returned as it is."""
    return _dequantize(tensor)


def _dequantize(tensor):  # (torch.dequantize's handler: the public function dispatches to it)
    if isinstance(tensor, (list, tuple)):
        return tuple(_dequantize(t) for t in tensor)
    if isinstance(tensor, QuantizedTensor):
        return tensor.dequantize()
    return tensor


def _unpickle(ints, dtype, scheme, scale, zero_point, axis):
    return _made(jnp.asarray(ints), QParams(dtype, scheme, scale, zero_point, axis))


def rebuild_qtensor(rebuild_tensor, storage, storage_offset, size, stride, quantizer_params, requires_grad=False,
                    backward_hooks=None):
    """``torch._utils._rebuild_qtensor`` for the checkpoint reader: the integers ``rebuild_tensor`` makes of the
    storage, with ``quantizer_params`` ``(qscheme, scale, zero_point)`` or ``(qscheme, scales, zero_points,
    axis)``."""
    ints = rebuild_tensor(storage, storage_offset, size, stride)
    scheme = quantizer_params[0]
    dtype = {np.dtype(np.int8): qint8, np.dtype(np.uint8): quint8, np.dtype(np.int32): qint32}[ints._d.dtype]
    if scheme in (per_tensor_affine, per_tensor_symmetric):
        qp = QParams(dtype, per_tensor_affine, float(quantizer_params[1]), int(quantizer_params[2]))
    elif scheme in (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams):
        scales, zero_points, axis = quantizer_params[1:4]
        qp = QParams(dtype, scheme if scheme is not per_channel_symmetric else per_channel_affine, scales.detach(),
                     zero_points.detach(), int(axis))
    else:
        raise pickle.UnpicklingError(f"unsupported quantization scheme in the checkpoint: {scheme!r}")
    return _made(ints._d, qp)


def _cat(tensors, dim=0, *, out=None):
    """``torch.cat`` of quantized tensors: the others requantized to the first one's parameters (PyTorch's
    quantized cat)."""
    from .ops import join
    first = tensors[0]
    qp = first._qp
    if qp.per_channel:
        raise NotImplementedError("torchish: cat of per-channel quantized tensors is not supported")
    parts = []
    for t in tensors:
        if not isinstance(t, QuantizedTensor):
            raise _not_run("cat")
        same = not t._qp.per_channel and t._qp.scale == qp.scale and t._qp.zero_point == qp.zero_point
        parts.append(wrap(t._d) if same else quantize_per_tensor(t.dequantize(), qp.scale, qp.zero_point,
                                                                 qp.dtype).int_repr())
    return _rewrap(join.cat(parts, dim), qp)


def _stack(tensors, dim=0, *, out=None):
    return _cat([t.unsqueeze(dim) for t in tensors], dim)


def _method_function(name):
    def fn(input, *args, **kwargs):
        return getattr(QuantizedTensor, name)(input, *args, **kwargs)
    return fn


# torch.* functions with quantized kernels (the rest raise through __torch_function__)
_FUNCTIONS = {"relu": lambda t, inplace=False: t.relu_() if inplace else t.relu(),
              "relu_": lambda t: t.relu_(), "max": _method_function("max"), "min": _method_function("min"),
              "eq": _method_function("eq"), "ne": _method_function("ne"),
              "mean": _method_function("mean"),
              "cat": _cat, "concat": _cat, "concatenate": _cat, "stack": _stack, "dequantize": _dequantize,
              "equal": lambda a, b: a.equal(b) if isinstance(a, QuantizedTensor) else False,
              "is_floating_point": lambda t: False, "numel": lambda t: t.numel(),
              "int_repr": lambda t: t.int_repr(), "q_scale": lambda t: t.q_scale(),
              "q_zero_point": lambda t: t.q_zero_point(), "qscheme": lambda t: t.qscheme(),
              "q_per_channel_scales": lambda t: t.q_per_channel_scales(),
              "q_per_channel_zero_points": lambda t: t.q_per_channel_zero_points(),
              "q_per_channel_axis": lambda t: t.q_per_channel_axis(),
              **{n: _method_function(n) for n in ("clone", "detach", "reshape", "flatten", "permute", "transpose",
                                                  "t", "unsqueeze", "squeeze", "narrow", "select", "chunk", "split",
                                                  "unbind", "index_select", "flip", "movedim", "swapaxes",
                                                  "swapdims", "roll", "tile", "unflatten")}}
