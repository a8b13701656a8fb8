"""Where the benchmarks run: on a machine with an accelerator, torchish and PyTorch both use it (as a PyTorch
script written ``device = "cuda" if torch.cuda.is_available() else "cpu"`` does), JAX uses its default device."""
from __future__ import annotations

import functools

import jax

import torchish

try:
    import torch
except ImportError:
    torch = None


@functools.lru_cache(maxsize=None)  # fixed for the process; torch_sync runs inside timed loops
def torch_device():
    """PyTorch's device: the GPU when JAX runs on one too (so both sides use the same hardware)."""
    if torch is not None and jax.default_backend() == "gpu" and torch.cuda.is_available():
        return "cuda"
    return "cpu"


def use_accelerator():
    """Make the accelerator torchish's (and PyTorch's) default device when JAX runs on one."""
    if jax.default_backend() != "cpu" and torchish.cuda.is_available():
        torchish.set_default_device("cuda")
    if torch_device() == "cuda":
        torch.set_default_device("cuda")


def torch_sync():
    """Wait for PyTorch's queued work on the GPU (nothing to wait for on the CPU), as the JAX systems wait for
    their results."""
    if torch_device() == "cuda":
        torch.cuda.synchronize()
