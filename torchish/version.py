"""``torch.version``: what scripts that branch on the PyTorch version read.

``torchish.__version__`` names the PyTorch API level torchish follows (its semantics are checked against torch
2.13), with torchish's own release as the local label — so ``packaging.version.parse(torch.__version__) >=
Version("2.0")`` and ``torch.__version__ >= "2"`` take the modern-PyTorch path they should. The CUDA/HIP versions are
those of a CPU build: torchish reaches accelerators through JAX, not through a CUDA build of its own.
"""
from __future__ import annotations

from .torch_version import TorchVersion

torchish_version = "0.1.0"
api_version = "2.13.0"
__version__ = TorchVersion(f"{api_version}+torchish.{torchish_version}")
cuda = None
hip = None
git_version = "torchish-" + torchish_version
debug = False
