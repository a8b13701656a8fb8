"""The Tensor's Python protocol that needs no op: reading values (``item``, ``tolist``, ``numpy``, ``__array__``,
``bool``/``float``/``int``/``index``), ``len``/``in``/``hash``, ``repr``/``format``, DLPack, pickling and copying.
:class:`TensorValues` is a base of :class:`torchish._tensor.Tensor`."""
from __future__ import annotations

import numbers
import weakref

import jax
import numpy as np

from . import _dtype, _meta
from ._meta import MetaArray
from .autograd.grad_mode import STATE as _GRAD

Tensor = None  # torchish._tensor.Tensor, set once it is defined (this class is its base)


def _real_item(t, ctype):
    """``t.item()`` for ``float(t)``/``int(t)``: a complex value converts only when its imaginary part is 0 (PyTorch
    raises the overflow error of its checked conversion otherwise)."""
    v = t.item()
    if isinstance(v, complex):
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return v.real
    return v



def _in_memory_order(t, arr):
    """``arr`` (``t``'s values in logical order) laid out with ``t``'s strides when they are dense (PyTorch's
    ``numpy()`` shares the tensor's memory, strides included)."""
    from .ops.inplace import dense_layout
    lay = dense_layout(t)
    if lay is None:
        return arr
    strides = lay[1]
    perm = sorted(range(arr.ndim), key=lambda d: (-strides[d], d))  # slowest-moving dimension first
    out = np.ascontiguousarray(arr.transpose(perm)).transpose(np.argsort(perm))
    return out if tuple(s // out.itemsize for s in out.strides) == tuple(strides) else arr

# Reading the value of a tensor that ``torchish.func.vmap`` batches: PyTorch's vmap errors, by what was read
_VMAP_ERRORS = {
    "item": "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a "
            "Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
            "inside PyTorch internals, please file a bug report.",
    "bool": "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
            "support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .",
    "data": "Cannot access data pointer of Tensor that doesn't have storage",
}


def _batched(t) -> bool:
    return getattr(t._d, "batch_dim", None) is not None  # (a jax.vmap BatchTracer)


def _refuse_batched(t, read):
    if _batched(t):
        raise RuntimeError(_VMAP_ERRORS[read])


class TensorValues:
    """The value-reading half of the Python protocol (no state of its own: Tensor holds the slots)."""

    __slots__ = ()


    def item(self):
        if type(self._v) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        _refuse_batched(self, "item")
        d = self._concrete()
        if d.size != 1:
            raise RuntimeError(f"a Tensor with {d.size} elements cannot be converted to Scalar")
        return _to_python(d)

    def tolist(self):
        if self._coo is not None:
            raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
        _refuse_batched(self, "data")
        return np.asarray(self._concrete()).tolist()

    def numpy(self, *, force=False):
        if self._coo is not None:
            raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")
        if type(self._v) is MetaArray:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                            "host memory first.")
        if self._rg and not force and _GRAD.grad_enabled:  # PyTorch allows it under no_grad
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if not force and self._view is not None and self.is_conj():  # force=True resolves them, as PyTorch
            raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj()."
                               "numpy() instead.")
        if not force and self._view is not None and self.is_neg():
            raise RuntimeError("Can't call numpy() on Tensor that has negative bit set. Use tensor.resolve_neg()."
                               "numpy() instead.")
        if self._v.dtype == _dtype.bfloat16.np or self._v.dtype in _dtype.FLOAT8_NP:  # NumPy has neither: PyTorch
            raise TypeError(f"Got unsupported ScalarType {_dtype.scalar_type_name(self.dtype)}")  # refuses them
        _refuse_batched(self, "data")
        arr = np.array(self._concrete())
        if (self._view is not None or self._layout is not None) and arr.ndim > 1:
            arr = _in_memory_order(self, arr)
        return arr

    def _concrete(self, what="reading a tensor's value (.item(), .tolist(), .numpy(), bool(), printing)"):
        d = self._d
        if isinstance(d, jax.core.Tracer):
            from .ops.tracing import concrete_error
            raise concrete_error(what)
        if type(d) is MetaArray:
            raise NotImplementedError(_meta.NO_DATA)
        return d

    # NumPy defers to a Tensor's reflected operators (``np.float32(2) * t`` is a Tensor that keeps autograd, as in
    # PyTorch) instead of converting the Tensor with __array__
    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """NumPy ufuncs and ``np.argmax``-style functions on a tensor give a tensor back, as PyTorch's do:
        ``np.exp(t)`` is a Tensor (a 0-d one for a 0-d input, never a NumPy scalar), and a boolean result is uint8
        (``np.isnan(t)``), PyTorch's workaround kept for its users."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        from .ops.creation import from_numpy
        return from_numpy(np.asarray(array))

    def __len__(self):
        if self._v.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._v.shape[0]

    def __reversed__(self):
        """``reversed(t)``: a tensor, ``self.flip(0)`` (``self`` for a 0-d one), as PyTorch's (not an iterator)."""
        if self.dim() == 0:
            return self
        return self.flip(0)

    def __bool__(self):
        if self._v.size != 1:
            if self._v.size == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        _refuse_batched(self, "bool")
        return bool(self.item())

    def __float__(self):
        if self._v.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(_real_item(self, "double"))

    def __int__(self):
        if self._v.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(_real_item(self, "int64_t"))

    def __complex__(self):
        if self._v.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self.item())

    def __index__(self):
        if self._v.size != 1 or self._v.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __contains__(self, element):
        if not isinstance(element, (Tensor, numbers.Number)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element)}.")
        return bool((element == self).any().item())  # element first, as PyTorch (its broadcast message)

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self, tensor_contents)

    def __format__(self, spec):
        """As PyTorch: a plain 0-dim tensor formats as its number; a subclass (Parameter), a meta tensor and other
        shapes as ``object.__format__`` does (``str(self)`` for an empty spec, else TypeError). A traced value is
        read (torchish.compile's graph break, vmap's error) unless the spec is empty and a transform other than
        vmap traces it: then it prints as ``tensor(<traced>)``."""
        if self._v.ndim == 0 and type(self._v) is not MetaArray and type(self) is Tensor:
            if spec or not isinstance(self._d, jax.core.Tracer) or _batched(self):
                return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export the value through DLPack (``torch.from_dlpack(t)``, ``np.from_dlpack(t)``), sharing its buffer."""
        if self._rg:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        if self._view is not None and self.is_conj():
            raise BufferError("Can't export tensors with the conjugate bit set")
        return self._concrete("exporting a tensor through DLPack").__dlpack__(
            stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return self._concrete("exporting a tensor through DLPack").__dlpack_device__()

    def __jax_array__(self):
        return self._d

    def __reduce_ex__(self, protocol):
        state = user_state(self)  # (attributes set on the tensor, kept as PyTorch's _get_obj_state keeps them)
        return (_rebuild, (type(self), np.asarray(self._concrete()), self.dtype.name, self._rg)
                + ((state,) if state else ()))

    def __copy__(self):
        """``copy.copy(t)``: a new leaf sharing t's storage (as PyTorch's pickling protocol gives)."""
        out = type(self)._make(self._d, self._rg)
        if type(self) is not Tensor:
            out.__dict__.update(self.__dict__)
        out._attach_alias(self, share_version=True)
        return out

    def __deepcopy__(self, memo):
        if self._gfn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        if type(self) is not Tensor and type(self).__module__.split(".")[0] != "torchish":  # (a user's subclass)
            _check_subclass_copy(self)
        out = type(self)._make(self._d, self._rg)
        if type(self) is not Tensor:
            out.__dict__.update(self.__dict__)
        elif self._layout is not None:  # (strides PyTorch's copy keeps)
            out._layout = self._layout
        # a view stays a view of the copy of its base (PyTorch copies storages once); a conjugate or negated view
        # becomes a tensor of its own holding its values (PyTorch's copy applies the bit with conj_physical/neg)
        if self._view is not None and not (self.is_conj() or self.is_neg()):
            import copy
            base, chain, diff = self._view
            new_base = copy.deepcopy(base, memo)
            out._view = (new_base, chain, diff)
            if self._vc is base._vc:
                out._vc = new_base._vc
            if new_base._views is None:
                new_base._views = weakref.WeakSet()
            new_base._views.add(out)
        memo[id(self)] = out
        if self._gval is not None:
            import copy
            out._gval = copy.deepcopy(self._gval, memo)
        return out


_NO_SUBCLASS_COPY = ("The default implementation of __deepcopy__() for non-wrapper subclasses only works for subclass "
                     "types that implement new_empty() and for which that function returns another instance of the "
                     "same subclass. You should either properly implement new_empty() for your subclass or override "
                     "__deepcopy__() if it is intended behavior for new_empty() to return an instance of a different "
                     "type.")


def _check_subclass_copy(t):
    """PyTorch's default ``__deepcopy__`` of a Tensor subclass (one that defines no ``__deepcopy__``; Parameter has
    its own) copies into ``t.new_empty([])``, called with the subclass out of ``__torch_function__`` (as its default
    implementation runs it): a plain Tensor there, unless the subclass's own ``new_empty`` returns the subclass, is
    this RuntimeError."""
    from ._subclass import DisableTorchFunctionSubclass
    with DisableTorchFunctionSubclass():
        probe = t.new_empty([])
    if type(probe) is not type(t):
        raise RuntimeError(_NO_SUBCLASS_COPY)


def _rebuild(cls, arr, dtype_name, requires_grad, state=None):
    import jax.numpy as jnp
    value = jnp.asarray(arr, dtype=_dtype._lookup(dtype_name).np)
    t = cls._make(value, requires_grad)
    if state:
        t.__dict__.update(state)
    return t


def user_state(t):
    """The attributes a user set on tensor ``t`` (``t.tag = ...``; torchish's own fields start with ``_``), or
    None: what pickling and ``torch.save`` keep, as PyTorch's ``_get_obj_state``."""
    state = {k: v for k, v in t.__dict__.items() if not k.startswith("_")}
    return state or None


def _to_python(d):
    v = np.asarray(d).reshape(()).item()
    return v
