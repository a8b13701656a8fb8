"""``torchish.nn.utils.rnn``: variable-length batches for recurrent layers — PackedSequence and its helpers.

The packed layout is PyTorch's: ``data`` holds the valid time steps of all sequences, step by step (at step ``t``
the first ``batch_sizes[t]`` sequences of the length-sorted batch), ``batch_sizes`` is an int64 CPU tensor and
``sorted_indices``/``unsorted_indices`` map between the caller's batch order and the sorted one. Packing and
padding are each one gather op (the index arrays are built on the host from the lengths, which must be concrete).

Example:
    >>> import torchish as torch
    >>> from torchish.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    >>> x = torch.arange(6.).reshape(3, 2, 1)                     # (T=3, B=2, 1)
    >>> packed = pack_padded_sequence(x, [2, 3], enforce_sorted=False)
    >>> packed.batch_sizes
    tensor([2, 2, 1])
    >>> pad_packed_sequence(packed)[1]
    tensor([2, 3])
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ... import _device, _dtype
from ..._tensor import Tensor
from ...ops import cpu_order, tracing
from ...ops.registry import apply, defop
from .._functional.rnn import packed_indices

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


def _int_tensor(a, like=None):
    """An int64 tensor that remembers its host values (so packing metadata stays readable inside a trace): on the
    device of ``like`` (index arrays used with it), else on the CPU, where PyTorch keeps ``batch_sizes`` and
    lengths."""
    a = np.asarray(a, np.int64)
    if tracing.active():  # one program: a constant of it
        v = jnp.asarray(a)
    elif like is not None:
        v = jax.device_put(a, _device.placement(like._v))
    else:
        v = jax.device_put(a, _device.cpu())
    t = Tensor._make(v)
    t._host = (a, t._vc.value)
    return t


def _host_ints(t, what):
    """A 1-D integer numpy array from a Tensor or a Python sequence (values must be concrete)."""
    if isinstance(t, Tensor):
        host = t.__dict__.get("_host")
        if host is not None and host[1] == t._vc.value:  # not written in place since it was made
            return host[0].reshape(-1)
        if isinstance(t._d, jax.core.Tracer):
            raise tracing.concrete_error(what)
        return np.asarray(t._d).astype(np.int64).reshape(-1)
    return np.asarray(list(t), dtype=np.float64).astype(np.int64).reshape(-1)


def _check_lengths(lengths, enforce_sorted):
    """PyTorch's checks of pack_padded_sequence's ``lengths`` (a list becomes a CPU int64 tensor): unsorted, they
    first index the batch (index_select wants a vector); then the packing kernel wants one dimension, on the CPU."""
    ndim = lengths.ndim if isinstance(lengths, Tensor) else np.ndim(lengths)
    if not enforce_sorted and ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    device = str(lengths.device) if isinstance(lengths, Tensor) else "cpu"
    if ndim != 1 or not device.startswith("cpu"):
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {ndim}D {device} Long tensor")


def invert_permutation(permutation):
    """The inverse of an index permutation (None stays None)."""
    if permutation is None:
        return None
    p = _host_ints(permutation, "invert_permutation")
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size)
    return _int_tensor(inv, like=permutation)


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    """Holds the data and the per-step batch sizes of a packed batch of sequences.

    Build it with :func:`pack_padded_sequence` or :func:`pack_sequence`, never by hand; recurrent modules accept it
    as input and return one.

    Example:
        >>> import torchish as torch
        >>> p = torch.nn.utils.rnn.pack_sequence([torch.ones(3, 2), torch.ones(1, 2)])
        >>> p.data.shape, p.batch_sizes
        (torch.Size([4, 2]), tensor([2, 1, 1]))
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)), the legacy form
            if not isinstance(data, (list, tuple)) or len(data) != 2:
                raise TypeError("PackedSequence: expected (data, batch_sizes) when batch_sizes is not given")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu" and not tracing.active():
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                             "created manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Move/cast ``data`` (indices follow its device); returns self when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device
        idx = [i.to(dev) if i is not None else None for i in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *idx)

    def cuda(self, *args, **kwargs):
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to(*args, device="cpu", **kwargs)

    def pin_memory(self):
        return self

    def is_pinned(self):
        return False

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def double(self):
        return self.to(dtype=_dtype.float64)

    def float(self):
        return self.to(dtype=_dtype.float32)

    def half(self):
        return self.to(dtype=_dtype.float16)

    def long(self):
        return self.to(dtype=_dtype.int64)

    def int(self):
        return self.to(dtype=_dtype.int32)

    def short(self):
        return self.to(dtype=_dtype.int16)

    def char(self):
        return self.to(dtype=_dtype.int8)

    def byte(self):
        return self.to(dtype=_dtype.uint8)


# ----------------------------------------------------------------------------------------------------------------
# ops: each direction is one gather


def _gather_rows(x, idx):
    return x.reshape((-1,) + x.shape[2:])[idx]


def _scatter_padded(data, idx, *, steps, batch, batch_first, padding_value):
    ext = jnp.concatenate([data, jnp.full((1,) + data.shape[1:], padding_value, data.dtype)], axis=0)
    out = ext[idx].reshape((steps, batch) + data.shape[1:])
    return jnp.swapaxes(out, 0, 1) if batch_first else out


def _pad_fwd(*seqs, batch_first, padding_value, left):
    longest = max(s.shape[0] for s in seqs)
    dt = seqs[0].dtype
    rows = []
    for s in seqs:
        pad = [(longest - s.shape[0], 0) if left else (0, longest - s.shape[0])] + [(0, 0)] * (s.ndim - 1)
        rows.append(jnp.pad(s.astype(dt), pad, constant_values=jnp.asarray(padding_value, dt)))
    return jnp.stack(rows, axis=0 if batch_first else 1)


_PACK = defop("pack_padded_sequence", _gather_rows, grad_name="PackPaddedSequenceBackward0")
_PAD_PACKED = defop("pad_packed_sequence", _scatter_padded, grad_name="PadPackedSequenceBackward0")
_PAD = defop("pad_sequence", _pad_fwd, grad_name="PadSequenceBackward0")


def _sorted_by_length(lens):
    """The batch order of ``torch.sort(lengths, descending=True)`` on PyTorch's CPU: stable up to 16 sequences or
    without equal lengths, else libstdc++'s ``std::sort`` order among equal ones (``ops/cpu_order.py``)."""
    if lens.size <= cpu_order.THRESHOLD or np.unique(lens).size == lens.size:
        return np.argsort(-lens, kind="stable")
    return np.asarray(cpu_order.sort_row(lens, cpu_order.greater), np.int64)


# ----------------------------------------------------------------------------------------------------------------
# public functions


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) of sequences with the given lengths.

    With ``enforce_sorted=True`` the lengths must be in decreasing order; otherwise the batch is sorted as
    PyTorch's ``torch.sort(lengths, descending=True)`` sorts it (equal lengths of more than 16 sequences in its CPU
    kernel's order) and the permutation is kept in the result so that outputs come back in the caller's order.
    """
    _check_lengths(lengths, enforce_sorted)
    lens = _host_ints(lengths, "pack_padded_sequence(lengths)")
    if input.ndim < 2:  # (PyTorch reads input.size(1) first, after batch_first's transpose(0, 1))
        scalar = input.ndim == 0 and not batch_first
        raise IndexError("Dimension specified as 1 but tensor has no dimensions" if scalar else
                         "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    batch = input.shape[0] if batch_first else input.shape[1]
    steps = input.shape[1] if batch_first else input.shape[0]
    if enforce_sorted:
        if np.any(lens[1:] > lens[:-1]):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        order = np.arange(lens.size)
        sorted_indices = None
    else:
        order = _sorted_by_length(lens)
        sorted_indices = _int_tensor(order, like=input)
        # PyTorch first gathers the batch in sorted order (input.index_select(batch_dim, sorted_indices)): fewer
        # lengths than sequences pack the first ones only, more fail that gather
        if lens.size > batch:
            raise IndexError("index out of range in self")
        batch_used = lens.size
    if lens.size != (batch if enforce_sorted else batch_used):
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
                           f"(batch_size={batch})")
    if lens.size == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lens.max() > steps:
        raise RuntimeError(f"Expected every length to be at most the padded sequence length {steps}, but found "
                           f"a length of {lens.max()}")
    slens = lens[order]
    batch_sizes = (slens[None, :] > np.arange(slens[0])[:, None]).sum(axis=1)
    _, _, pack = packed_indices(tuple(int(b) for b in batch_sizes))
    t, j = pack // batch_sizes[0], pack % batch_sizes[0]
    src = order[j] * steps + t if batch_first else t * batch + order[j]
    data = apply(_PACK, (input, _int_tensor(src, like=input)))
    return PackedSequence(data, _int_tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of :func:`pack_padded_sequence`: returns ``(padded, lengths)`` in the caller's batch order.

    Positions past each length hold ``padding_value``; ``total_length`` pads the time dimension further.
    """
    bs = _host_ints(sequence.batch_sizes, "pad_packed_sequence(batch_sizes)")
    lens, unpack, _ = packed_indices(tuple(int(b) for b in bs))
    steps, batch = len(bs), len(lens)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        n = sequence.data.shape[0]
        unpack = np.concatenate([unpack, np.full((total_length - steps) * batch, n, np.int64)])
        steps = int(total_length)
    grid = unpack.reshape(steps, batch)
    if sequence.unsorted_indices is not None:
        perm = _host_ints(sequence.unsorted_indices, "pad_packed_sequence(unsorted_indices)")
        grid, lens = grid[:, perm], lens[perm]
    index = _int_tensor(grid.reshape(-1), like=sequence.data)
    padded = apply(_PAD_PACKED, (sequence.data, index), steps=steps, batch=batch,
                   batch_first=bool(batch_first), padding_value=float(padding_value))
    return padded, _int_tensor(lens)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack variable-length sequences (each (L_i, *)) into (T, B, *) (or (B, T, *)), padding with
    ``padding_value`` on the ``padding_side`` ("right" or "left")."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    seqs = tuple(sequences.unbind(0)) if isinstance(sequences, Tensor) else tuple(sequences)
    for i, s in enumerate(seqs):  # (PyTorch's parser reads them as a list of Tensors)
        if not isinstance(s, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(s).__name__}")
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    if seqs[0].ndim == 0:  # (PyTorch slices the first sequence's sizes past its length dim)
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    if any(s.ndim == 0 for s in seqs):  # (then it reads every sequence's length)
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    trailing = tuple(seqs[0].shape[1:])
    for s in seqs[1:]:
        rest = tuple(s.shape[1:])
        if rest != trailing:
            nd = max(len(rest), len(trailing))
            for i in range(nd - 1, -1, -1):
                a = trailing[i] if i < len(trailing) else 1
                b = rest[i] if i < len(rest) else 1
                if a != b:
                    raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                                       f"non-singleton dimension {i + 1}")
            raise RuntimeError(f"pad_sequence: sequences have different trailing shapes {trailing} and {rest}")
    return apply(_PAD, seqs, batch_first=bool(batch_first), padding_value=float(padding_value),
                 left=padding_side == "left")


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of sequences of the given lengths (the inverse of pad_sequence).

    As PyTorch, a time-major batch is turned batch-major with an in-place ``transpose_(0, 1)`` of the caller's
    tensor (so its shape changes, and a leaf that requires grad is refused), the lengths must be one per sequence
    (``zip(..., strict=True)``: ValueError) and each keeps its first ``min(length, T)`` steps (PyTorch's mask
    ``arange(T) < length``)."""
    from ...ops.gather import index_select
    from ...ops.slicing import select
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    lens = _host_ints(lengths, "unpad_sequence(lengths)")
    max_length = padded_sequences.shape[1]
    out = []
    for b, n in zip(range(padded_sequences.shape[0]), lens, strict=True):
        seq = select(padded_sequences, 0, b)
        out.append(index_select(seq, 0, _int_tensor(np.arange(min(max(n, 0), max_length)), like=seq)))
    return out


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of variable-length sequences (each (L_i, *)): ``pack_padded_sequence(pad_sequence(...))``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Unpack a PackedSequence into the list of its sequences (in the caller's order)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
