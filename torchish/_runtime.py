"""Process-wide settings PyTorch scripts set at their top: threads, deterministic algorithms, float32 matmul
precision; and the tensor predicates of the top-level namespace (``is_tensor``, ``numel``, ...).

XLA decides threading and kernel choice itself, so most settings are recorded and read back as in PyTorch, with
what they mean here: XLA's CPU kernels are deterministic already. The float32 matmul precision is honoured:
``'highest'`` (default) computes matrix products in full float32, ``'high'`` and ``'medium'`` let GPUs and TPUs use
one TF32/bf16 pass (``torchish/_precision.py``).
"""
from __future__ import annotations

import builtins
import os
import warnings

import numpy as np

from ._global_flags import warn_once
from . import _precision
from ._tensor import Tensor

_SETTINGS = {"threads": None, "interop_threads": None, "deterministic": False, "warn_only": False,
             "matmul_precision": "highest", "fill_uninitialized_memory": True}


def set_num_threads(n):
    """Record the intra-op thread count (XLA sizes its own thread pool; read back by :func:`get_num_threads`)."""
    if not isinstance(n, builtins.int) or isinstance(n, builtins.bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"Expected num_threads to be positive, but got {n}")
    _SETTINGS["threads"] = n


def get_num_threads():
    return _SETTINGS["threads"] or os.cpu_count() or 1


def set_num_interop_threads(n):
    if not isinstance(n, builtins.int) or isinstance(n, builtins.bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    _SETTINGS["interop_threads"] = n


def get_num_interop_threads():
    return _SETTINGS["interop_threads"] or os.cpu_count() or 1


def use_deterministic_algorithms(mode, *, warn_only=False):
    """PyTorch's switch for deterministic kernels. XLA's CPU kernels are deterministic; the setting is recorded
    (``are_deterministic_algorithms_enabled``) for code that reads it."""
    if not isinstance(mode, builtins.bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    if not isinstance(warn_only, builtins.bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _SETTINGS["deterministic"], _SETTINGS["warn_only"] = mode, warn_only and mode


def uninitialized_value(dt):
    """The number a new tensor holds where PyTorch allocates memory without initialising it (``empty``,
    ``empty_like``, ``new_empty``, ``empty_strided``, ``torch.Tensor(2, 3)``, the elements ``resize_`` adds).
    JAX has no uninitialised memory, so it is 0 -- except under ``use_deterministic_algorithms(True)`` with
    ``torch.utils.deterministic.fill_uninitialized_memory`` (on by default), where PyTorch fills such memory with
    NaN (floating and complex dtypes: a real NaN, imaginary part 0), the dtype's largest value (integers) or True."""
    if not (_SETTINGS["deterministic"] and _SETTINGS["fill_uninitialized_memory"]):
        return 0
    if dt.is_complex:
        return complex(float("nan"), 0.0)
    if dt.is_floating_point:
        return float("nan")
    if dt.np == np.bool_:
        return True
    return int(np.iinfo(dt.np).max)


def are_deterministic_algorithms_enabled():
    return _SETTINGS["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _SETTINGS["warn_only"]


_DEBUG_MODES = ("default", "warn", "error")


def set_deterministic_debug_mode(debug_mode):
    """``use_deterministic_algorithms`` by level: 0/"default" off, 1/"warn" on with warn_only, 2/"error" on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, builtins.bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0, 1 or 2: see :func:`set_deterministic_debug_mode`."""
    return 0 if not _SETTINGS["deterministic"] else 1 if _SETTINGS["warn_only"] else 2


def set_float32_matmul_precision(precision):
    """``'highest'`` (default: full float32 matrix products), ``'high'`` or ``'medium'`` (one TF32/bf16 pass
    allowed on GPUs and TPUs; XLA's CPU kernels stay full float32). Anything else warns and changes nothing."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _SETTINGS["matmul_precision"] = precision
    _precision.set_precision("matmul", _precision.HIGHEST if precision == "highest" else _precision.DEFAULT)


def get_float32_matmul_precision():
    return _SETTINGS["matmul_precision"]


# ----------------------------------------------------------------------------------------------------------------
# tensor predicates


def _need_tensor(x, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


def is_tensor(obj):
    """Whether ``obj`` is a Tensor (Parameters included)."""
    return isinstance(obj, Tensor)


def _assert(condition, message):
    """``torch._assert``: ``assert condition, message`` that stays in the program when Python runs with ``-O``
    (models call it to check input shapes; a tensor condition must hold one value)."""
    if not condition:
        raise AssertionError(message)


def is_floating_point(input):
    _need_tensor(input, "is_floating_point")
    return input.is_floating_point()


def is_complex(input):
    _need_tensor(input, "is_complex")
    return input.is_complex()


def numel(input):
    _need_tensor(input, "numel")
    return input.numel()


def is_nonzero(input):
    """The truth of a one-element tensor; more or fewer elements raise PyTorch's error."""
    _need_tensor(input, "is_nonzero")
    n = input.numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if n == 0 else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


# torchish's modules that PyTorch keeps elsewhere, as ``torch.typename`` names their classes in messages
_TORCH_MODULES = {"torchish.nn.container": "torch.nn.modules.container",
                  "torchish.nn.param_container": "torch.nn.modules.container",
                  "torchish.nn.module": "torch.nn.modules.module"}


def typename(obj):
    """``torch.typename``: ``'torch.FloatTensor'`` for tensors (their ``type()``); for a class or function its
    qualified name, for other objects their class's, module-qualified as PyTorch's (torchish's classes under
    PyTorch's module paths, ``torch.nn.modules.container.Sequential``)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    if module == "torchish" or module.startswith("torchish."):
        module = _TORCH_MODULES.get(module, "torch" + module[len("torchish"):])
    return f"{module}.{qualname}"


def is_storage(obj):
    """Whether ``obj`` is a storage object: never here — a torchish Tensor holds a JAX array, not a storage, and
    torchish has no storage types (a Tensor is not a storage in PyTorch either)."""
    return False


def set_default_tensor_type(t):
    """PyTorch's deprecated spelling of :func:`set_default_dtype` (and, for ``torch.cuda.*`` types, of
    ``set_default_device("cuda")``): ``t`` is a floating legacy type (``torchish.DoubleTensor``) or its name
    (``"torch.DoubleTensor"``)."""
    from . import _legacy_types, _dtype as dtypes, _device, cuda
    warn_once("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
              "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
              stacklevel=2)
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        table = {"torch": _legacy_types.CPU_TYPES, "torch.cuda": _legacy_types.CUDA_TYPES}.get(module)
        if table is None or name not in table:
            raise AttributeError(f"module '{module or name}' has no attribute '{name}'")
        t = table[name]
    if not isinstance(t, _legacy_types._LegacyTensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if t.is_cuda and not cuda.is_available():
        raise TypeError(f"type {t.__module__}.{t.__name__} not available. Torch not compiled with CUDA enabled.")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(t.dtype)
    if t.is_cuda:
        _device.set_default_device("cuda")
        _SETTINGS["cuda_default_type"] = True
    elif _SETTINGS.pop("cuda_default_type", False):  # a CPU type after a CUDA one: factories make CPU tensors again
        _device.set_default_device(None)
