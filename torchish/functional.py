"""``torch.functional``: the module where PyTorch writes ``einsum``, ``split``, ``stft``, ``norm`` and the other
functions of its ``__all__`` in Python; the same objects as ``torchish.einsum`` etc."""
from __future__ import annotations

from . import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes, broadcast_tensors,  # noqa: F401
               cartesian_prod, cdist, chain_matmul, einsum, istft, lu, meshgrid, norm, pca_lowrank, split, stft,
               svd_lowrank, tensordot, unique, unique_consecutive, unravel_index)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
           "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split",
           "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"]
