"""torchish: PyTorch's API on JAX. ``import torchish as torch``."""
from __future__ import annotations

import sys as _sys

import jax as _jax

_jax.config.update("jax_enable_x64", True)  # float64 / int64 must work for real, as in PyTorch

from . import _executables  # noqa: E402
_executables.install()  # a bound on the compiled kernels kept alive (see _executables)

from ._dtype import (dtype as dtype, bool as bool, uint8 as uint8, uint16 as uint16, uint32 as uint32,  # noqa: E402
                     uint64 as uint64, int8 as int8, int16 as int16, int32 as int32, int64 as int64,
                     float16 as float16, bfloat16 as bfloat16, float32 as float32, float64 as float64,
                     complex64 as complex64, complex128 as complex128, float8_e4m3fn as float8_e4m3fn,
                     float8_e5m2 as float8_e5m2, float8_e4m3fnuz as float8_e4m3fnuz,
                     float8_e5m2fnuz as float8_e5m2fnuz, float8_e8m0fnu as float8_e8m0fnu, complex32 as complex32,
                     set_default_dtype as set_default_dtype,
                     get_default_dtype as get_default_dtype, promote_types as promote_types, finfo as finfo,
                     iinfo as iinfo, can_cast as can_cast)
from ._dtype import ALIASES as _ALIASES  # noqa: E402
from ._device import device as device, set_default_device as set_default_device  # noqa: E402
from ._device import get_default_device as get_default_device  # noqa: E402
from ._tensor import Tensor as Tensor, Size as Size  # noqa: E402
from ._random import (Generator as Generator, manual_seed as manual_seed, seed as seed,  # noqa: E402
                      initial_seed as initial_seed, get_rng_state as get_rng_state, set_rng_state as set_rng_state,
                      default_generator as default_generator)
from . import autograd as autograd  # noqa: E402
from .autograd import engine as _engine  # noqa: E402,F401  (installs Tensor.backward)
from .autograd import (no_grad as no_grad, enable_grad as enable_grad, set_grad_enabled as set_grad_enabled,  # noqa
                       inference_mode as inference_mode, is_grad_enabled as is_grad_enabled,
                       is_inference_mode_enabled as is_inference_mode_enabled)
from . import ops as _ops  # noqa: E402  (installs the Tensor methods)
from .ops.unary import *  # noqa: E402,F401,F403
from .ops.arith import *  # noqa: E402,F401,F403
from .ops.power import *  # noqa: E402,F401,F403
from .ops.compare import *  # noqa: E402,F401,F403
from .ops.ternary import *  # noqa: E402,F401,F403
from .ops.copying import *  # noqa: E402,F401,F403
from .ops.reduce import *  # noqa: E402,F401,F403
from .ops.extrema import *  # noqa: E402,F401,F403
from .ops.stats import *  # noqa: E402,F401,F403
from .ops.softmax import *  # noqa: E402,F401,F403
from .ops.scan import *  # noqa: E402,F401,F403
from .ops.shape import *  # noqa: E402,F401,F403
from .ops.broadcast import *  # noqa: E402,F401,F403
from .ops.reorder import *  # noqa: E402,F401,F403
from .ops.slicing import *  # noqa: E402,F401,F403
from .ops.diag import *  # noqa: E402,F401,F403
from .ops.join import *  # noqa: E402,F401,F403
from .ops.index import *  # noqa: E402,F401,F403
from .ops.setitem import *  # noqa: E402,F401,F403
from .ops.gather import *  # noqa: E402,F401,F403
from .ops.scatter import *  # noqa: E402,F401,F403
from .ops.spectral import *  # noqa: E402,F401,F403
from .ops.numeric import *  # noqa: E402,F401,F403
from .ops.creation import *  # noqa: E402,F401,F403
from .ops.random import *  # noqa: E402,F401,F403
from .ops.linalg import *  # noqa: E402,F401,F403
from .ops.linalg_add import *  # noqa: E402,F401,F403
from .ops.einsum import *  # noqa: E402,F401,F403
from .ops.sort import *  # noqa: E402,F401,F403
from .ops.unique import *  # noqa: E402,F401,F403
from .ops.gradient import *  # noqa: E402,F401,F403
from .ops.viewcopy import *  # noqa: E402,F401,F403
from .ops.strided import *  # noqa: E402,F401,F403
from .ops.geqrf import *  # noqa: E402,F401,F403
from .ops.fake_quant import *  # noqa: E402,F401,F403
from .ops.scaled_mm import _scaled_mm as _scaled_mm  # noqa: E402
from .ops.tensor_api import *  # noqa: E402,F401,F403
from .ops.storage import *  # noqa: E402,F401,F403  (UntypedStorage, TypedStorage)
from .ops.inplace_functions import *  # noqa: E402,F401,F403  (torch.abs_, torch.fill, torch.is_signed, ...)
from .ops.foreach import *  # noqa: E402,F401,F403  (torch._foreach_add_, _foreach_lerp_, ...)
from ._layout import (layout as layout, strided as strided, sparse_coo as sparse_coo,  # noqa: E402
                      sparse_csr as sparse_csr, sparse_csc as sparse_csc, sparse_bsr as sparse_bsr,
                      sparse_bsc as sparse_bsc, _mkldnn as _mkldnn, jagged as jagged)
from ._global_flags import *  # noqa: E402,F401,F403  (set_warn_always, set_anomaly_enabled, set_flush_denormal)
from ._frombuffer import frombuffer as frombuffer  # noqa: E402
from . import return_types as return_types  # noqa: E402
newaxis = None
from .compile import compile as compile  # noqa: E402,A004
from ._config import config as config  # noqa: E402
from ._dtype import result_type as result_type  # noqa: E402
from ._tensor_str import (set_printoptions as set_printoptions, get_printoptions as get_printoptions,  # noqa: E402
                          printoptions as printoptions)
from . import cuda as cuda  # noqa: E402
from .cuda import AcceleratorError as AcceleratorError, OutOfMemoryError as OutOfMemoryError  # noqa: E402
from . import amp as amp  # noqa: E402
from .amp import autocast as autocast  # noqa: E402
from .amp import cuda_amp as _cuda_amp  # noqa: E402
from .amp._state import (is_autocast_enabled as is_autocast_enabled,  # noqa: E402
                         set_autocast_enabled as set_autocast_enabled, get_autocast_dtype as get_autocast_dtype,
                         set_autocast_dtype as set_autocast_dtype, get_autocast_gpu_dtype as get_autocast_gpu_dtype,
                         set_autocast_gpu_dtype as set_autocast_gpu_dtype,
                         get_autocast_cpu_dtype as get_autocast_cpu_dtype,
                         set_autocast_cpu_dtype as set_autocast_cpu_dtype,
                         is_autocast_cpu_enabled as is_autocast_cpu_enabled,
                         set_autocast_cpu_enabled as set_autocast_cpu_enabled,
                         is_autocast_cache_enabled as is_autocast_cache_enabled,
                         set_autocast_cache_enabled as set_autocast_cache_enabled,
                         clear_autocast_cache as clear_autocast_cache,
                         autocast_increment_nesting as autocast_increment_nesting,
                         autocast_decrement_nesting as autocast_decrement_nesting)
cuda.amp = _cuda_amp  # torchish.cuda is a module: its amp submodule is registered by hand
_sys.modules[__name__ + ".cuda.amp"] = _cuda_amp
_sys.modules[__name__ + ".cuda.nvtx"] = cuda.nvtx
from . import cpu as cpu  # noqa: E402
from . import accelerator as accelerator  # noqa: E402
from . import xpu as xpu, mps as mps  # noqa: E402
from . import __future__ as __future__  # noqa: E402  (torch.__future__'s switches; not Python's)
from .streams import Event as Event, Stream as Stream  # noqa: E402
from .amp import GradScaler as GradScaler  # noqa: E402
from ._removed import eig as eig, symeig as symeig, lstsq as lstsq, solve as solve  # noqa: E402
from . import _removed  # noqa: E402
for _n, _f in _removed.METHODS.items():  # (Tensor.eig ... raise as the functions do)
    setattr(Tensor, _n, _f)
Tensor.const_data_ptr = Tensor.data_ptr
from . import linalg as linalg  # noqa: E402
from . import random as random  # noqa: E402
from . import special as special  # noqa: E402
from . import fft as fft  # noqa: E402
from . import sparse as sparse  # noqa: E402
from . import masked as masked  # noqa: E402
from .sparse import sparse_coo_tensor as sparse_coo_tensor, spmm as spmm  # noqa: E402
from ._sparse_csr import sparse_csr_tensor as sparse_csr_tensor  # noqa: E402
from ._sparse_coo_functions import record as _record_sparse_aware  # noqa: E402
_record_sparse_aware(globals())  # torch.abs(s), F.relu(s)...: made sparse-aware in place by the first COO tensor
from . import quasirandom as quasirandom  # noqa: E402
from . import signal as signal  # noqa: E402
globals().update(linalg.TOP_LEVEL)  # torch.det, torch.svd, torch.cholesky, ... (the older top-level spellings)
globals().update(linalg.FUNCTIONS)  # torch.chain_matmul

globals().update(_ALIASES)  # torch.float, torch.long, torch.half, ...
float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001
half = float16
short = int16
cfloat = complex64
cdouble = complex128
from . import version as version  # noqa: E402
from . import torch_version as torch_version  # noqa: E402
from .version import __version__ as __version__  # noqa: E402  (the PyTorch API level, torchish's as local label)
import math as _math  # noqa: E402
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan  # torch.pi, torch.e, torch.inf, torch.nan

from . import nn as nn  # noqa: E402
from .nn._functional.distance import (cdist as cdist, pdist as pdist,  # noqa: E402
                                       cosine_similarity as cosine_similarity,
                                       pairwise_distance as pairwise_distance)
from . import optim as optim  # noqa: E402
from ._aliases import *  # noqa: E402,F401,F403  (torch.conv2d, torch.layer_norm, torch.embedding, ...)
from ._aten_nn import *  # noqa: E402,F401,F403  (torch.kl_div, torch.native_layer_norm, ...)
from ._aten_rnn import *  # noqa: E402,F401,F403  (torch.lstm, torch.gru_cell, torch.batch_norm_stats, ...)
from ._aten_linalg import *  # noqa: E402,F401,F403  (torch.lu_unpack, torch.svd_lowrank, ...)
from ._legacy_types import CPU_TYPES as _CPU_TYPES, CUDA_TYPES as _CUDA_TYPES  # noqa: E402
globals().update(_CPU_TYPES)  # torch.FloatTensor, torch.LongTensor, ...
for _name, _cls in _CUDA_TYPES.items():
    setattr(cuda, _name, _cls)
from .serialization import save as save, load as load  # noqa: E402
from . import distributed as distributed  # noqa: E402
from . import func as func  # noqa: E402
from .interop import from_jax as from_jax  # noqa: E402
from .utils.dlpack import from_dlpack as from_dlpack, to_dlpack as to_dlpack  # noqa: E402  (capsules too)
from .accelerator import get_device_module as get_device_module, is_vulkan_available as is_vulkan_available  # noqa: E402,E501
from ._control_flow import *  # noqa: E402,F401,F403  (cond, while_loop, sym_*)
from . import profiler as profiler  # noqa: E402
from . import jit as jit  # noqa: E402  (pass-throughs: no TorchScript is produced)
from .futures import Future as Future, _fork as fork, _wait as wait  # noqa: E402  (run at once, as outside TorchScript)
from . import utils as utils  # noqa: E402  (torchish.utils.data / .checkpoint resolve on first use)
from . import backends as backends  # noqa: E402
from . import testing as testing  # noqa: E402
from . import distributions as distributions  # noqa: E402
from .func import vmap as vmap  # noqa: E402
from ._runtime import (set_num_threads as set_num_threads, get_num_threads as get_num_threads,  # noqa: E402
                       set_num_interop_threads as set_num_interop_threads,
                       get_num_interop_threads as get_num_interop_threads,
                       use_deterministic_algorithms as use_deterministic_algorithms,
                       are_deterministic_algorithms_enabled as are_deterministic_algorithms_enabled,
                       is_deterministic_algorithms_warn_only_enabled as is_deterministic_algorithms_warn_only_enabled,
                       set_deterministic_debug_mode as set_deterministic_debug_mode,
                       get_deterministic_debug_mode as get_deterministic_debug_mode,
                       set_float32_matmul_precision as set_float32_matmul_precision,
                       get_float32_matmul_precision as get_float32_matmul_precision, is_tensor as is_tensor,
                       _assert as _assert, is_floating_point as is_floating_point, is_complex as is_complex,
                       numel as numel, is_nonzero as is_nonzero, typename as typename, is_storage as is_storage,
                       set_default_tensor_type as set_default_tensor_type)
from . import multiprocessing as multiprocessing  # noqa: E402
from . import compiler as compiler  # noqa: E402
from . import _dynamo as _dynamo  # noqa: E402
from . import hub as hub  # noqa: E402
from . import overrides as overrides  # noqa: E402
from . import _C as _C  # noqa: E402
from ._C import DisableTorchFunction as DisableTorchFunction  # noqa: E402
from ._C import DisableTorchFunctionSubclass as DisableTorchFunctionSubclass  # noqa: E402
from . import types as types  # noqa: E402
from . import library as library  # noqa: E402  (custom operators; torchish.ops.<namespace> finds them)
from . import fx as fx  # noqa: E402  (symbolic tracing, GraphModule, Interpreter)
from . import export as export  # noqa: E402  (torch.export: its modules load on first use)
from ._checks import (_check as _check, _check_with as _check_with, _check_index as _check_index,  # noqa: E402
                      _check_value as _check_value, _check_type as _check_type, _check_is_size as _check_is_size,
                      _check_not_implemented as _check_not_implemented, _check_tensor_all as _check_tensor_all,
                      _check_tensor_all_with as _check_tensor_all_with)
from ._tags import Tag as Tag  # noqa: E402
from ._quantized import *  # noqa: E402,F401,F403  (quantized tensors, their dtypes and qschemes)
from . import ao as ao  # noqa: E402  (torch.ao.quantization.quantize_dynamic, torch.ao.nn.quantized)
quantization = ao.quantization  # (torch.quantization: the same namespace)
from ._subclass import separate_aliases as _separate_aliases  # noqa: E402
_separate_aliases()  # (one function object per name where PyTorch has one per name: __torch_function__ tells them apart)
del _separate_aliases
