"""``torchish.backends``: the flags PyTorch scripts set (``torch.backends.cudnn.benchmark = True``...).

XLA chooses its own GPU kernels (cuDNN where it helps), so most of these are settings that code can set and read
back, as in PyTorch: ``cudnn.is_available()`` and ``cudnn.version()`` say whether an accelerator backend is there;
``cudnn.benchmark``/``deterministic`` change no numbers. The TF32 switches do what they do in PyTorch (see
``torchish/_precision.py``): ``cudnn.allow_tf32`` (default True) lets convolutions use one TF32 pass on GPUs,
``cuda.matmul.allow_tf32`` (default False) is ``set_float32_matmul_precision('high')``. ``mps`` is never available
(JAX has no Metal backend torchish maps to).
"""
from __future__ import annotations

import contextlib
import sys
import types
import warnings

from .. import _device, _precision


class _Flags(types.ModuleType):
    """A submodule whose attributes are settable flags (``torchish.backends.cudnn.benchmark = True``)."""

    def __init__(self, name, doc, **flags):
        super().__init__(f"{__name__}.{name}", doc)
        self.__dict__.update(flags)

    def flags(self, **kw):
        """Set several flags at once (PyTorch's ``cudnn.flags(enabled=..., benchmark=...)`` context manager)."""
        return _FlagsContext(self, kw)


class _CudnnFlags(_Flags):
    @property
    def allow_tf32(self):
        return _precision.conv() is _precision.DEFAULT

    @allow_tf32.setter
    def allow_tf32(self, flag):
        _precision.set_precision("conv", _precision.DEFAULT if flag else _precision.HIGHEST)


class _MatmulFlags(_Flags):
    @property
    def allow_tf32(self):
        from .._runtime import get_float32_matmul_precision
        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, flag):
        from .._runtime import set_float32_matmul_precision
        set_float32_matmul_precision("high" if flag else "highest")


class _FlagsContext:
    def __init__(self, mod, kw):
        self.mod, self.kw, self.saved = mod, kw, None

    def __enter__(self):
        self.saved = {k: getattr(self.mod, k) for k in self.kw if self.kw[k] is not None}
        for k, v in self.kw.items():
            if v is not None:
                setattr(self.mod, k, v)
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            setattr(self.mod, k, v)
        return False


def _accelerated():
    return bool(_device.accelerators())


cudnn = _CudnnFlags("cudnn", "cuDNN flags (XLA picks its GPU convolution kernels itself).", enabled=True,
                    benchmark=False, deterministic=False, benchmark_limit=10)
cudnn.is_available = _accelerated
cudnn.version = lambda: None  # torchish links no cuDNN of its own (PyTorch's CPU build says None too)
cudnn.is_acceptable = lambda tensor: _accelerated()

cuda = _Flags("cuda", "CUDA backend flags.")
cuda.matmul = _MatmulFlags("cuda.matmul", "Matmul flags.", allow_fp16_reduced_precision_reduction=True,
                           allow_bf16_reduced_precision_reduction=True)
cuda.is_built = _accelerated

# the kernels scaled dot product attention may use (torchish.nn.attention.sdpa_kernel sets them too)
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True,
        "fp16_bf16_reduction_math": False}


def _sdp_switch(flag):
    def enabled():
        return _SDP[flag]

    def enable(on):
        _SDP[flag] = bool(on)
    return enabled, enable


cuda.flash_sdp_enabled, cuda.enable_flash_sdp = _sdp_switch("flash")
cuda.mem_efficient_sdp_enabled, cuda.enable_mem_efficient_sdp = _sdp_switch("mem_efficient")
cuda.math_sdp_enabled, cuda.enable_math_sdp = _sdp_switch("math")
cuda.cudnn_sdp_enabled, cuda.enable_cudnn_sdp = _sdp_switch("cudnn")
cuda.fp16_bf16_reduction_math_sdp_allowed, cuda.allow_fp16_bf16_reduction_math_sdp = \
    _sdp_switch("fp16_bf16_reduction_math")
cuda.is_ck_sdpa_available = lambda: False


def _sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """The deprecated ``torch.backends.cuda.sdp_kernel``: the attention kernels allowed inside the block (it warns
    when called, as PyTorch's)."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=2)
    return _sdp_kernel_block(enable_flash, enable_math, enable_mem_efficient, enable_cudnn)


@contextlib.contextmanager
def _sdp_kernel_block(enable_flash, enable_math, enable_mem_efficient, enable_cudnn):
    saved = dict(_SDP)
    _SDP.update(flash=bool(enable_flash), math=bool(enable_math), mem_efficient=bool(enable_mem_efficient),
                cudnn=bool(enable_cudnn))
    try:
        yield {}
    finally:
        _SDP.update(saved)


cuda.sdp_kernel = _sdp_kernel

mps = _Flags("mps", "Apple Metal: never available here.")
mps.is_available = lambda: False
mps.is_built = lambda: False

mkldnn = _Flags("mkldnn", "oneDNN flags (XLA:CPU has its own kernels).", enabled=True, deterministic=False)
mkldnn.is_available = lambda: True

opt_einsum = _Flags("opt_einsum", "einsum contraction-order flags (XLA optimises contractions itself).",
                    enabled=True, strategy="auto")
opt_einsum.is_available = lambda: True

openmp = _Flags("openmp", "OpenMP: PyTorch's CPU threading (XLA:CPU has its own thread pool).")
openmp.is_available = lambda: True

nnpack = _Flags("nnpack", "NNPACK: PyTorch's mobile convolution kernels (XLA:CPU has its own).", enabled=True)
nnpack.is_available = lambda: True
nnpack.set_flags = lambda _enabled: _set_flags(nnpack, enabled=_enabled)
nnpack.flags = lambda enabled=False: _FlagsContext(nnpack, {"enabled": enabled})

mkl = _Flags("mkl", "MKL: PyTorch's BLAS/FFT library on x86 (XLA:CPU uses its own kernels).", VERBOSE_OFF=0,
             VERBOSE_ON=1)
mkl.is_available = lambda: True
mkl.verbose = lambda enable: contextlib.nullcontext()  # (PyTorch's MKL_VERBOSE logging: nothing to log here)

mha = _Flags("mha", "The fast path of TransformerEncoder/MultiheadAttention in eval mode (same numbers either way).",
             _is_fastpath_enabled=True)
mha.get_fastpath_enabled = lambda: mha._is_fastpath_enabled
mha.set_fastpath_enabled = lambda value: setattr(mha, "_is_fastpath_enabled", value)

cpu = _Flags("cpu", "The CPU's vector instruction set, as PyTorch's dispatcher names it.")
cpu.get_cpu_capability = lambda: _cpu_capability()


def _set_flags(module, **flags):
    """PyTorch's ``set_flags``: set, returning the previous values as a tuple."""
    old = tuple(getattr(module, k) for k in flags)
    module.__dict__.update(flags)
    return old


def _cpu_capability():
    """"AVX512", "AVX2" or "DEFAULT" from the CPU's feature flags (PyTorch's ``torch._C._get_cpu_capability()``)."""
    try:
        with open("/proc/cpuinfo") as f:
            words = set(next((line for line in f if line.startswith("flags")), "").split())
    except OSError:
        return "DEFAULT"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "fma"} <= words:
        return "AVX512"
    return "AVX2" if {"avx2", "fma"} <= words else "DEFAULT"


from . import quantized as quantized  # noqa: E402  (the quantized engine's name)

__all__ = ["cudnn", "cuda", "mps", "mkldnn", "opt_einsum", "openmp", "nnpack", "mkl", "mha", "cpu", "quantized"]
# `import torchish.backends.cudnn as cudnn` works, as in PyTorch
for _m in (cudnn, cuda, mps, mkldnn, opt_einsum, openmp, nnpack, mkl, mha, cpu):
    sys.modules[_m.__name__] = _m
