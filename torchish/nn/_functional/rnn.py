"""Recurrent layers as registered ops: a whole RNN/LSTM/GRU stack is ONE op whose forward is a ``jax.lax.scan``.

All layers and directions of a recurrent module run inside a single registry op (``rnn_tanh``, ``rnn_relu``,
``lstm``, ``gru``), so in eager mode a sequence is one cached kernel launch and one autograd node, and in a compiled
program one loop per layer-direction. The gradient is the registry's default: ``jax.vjp`` of the scan.

Variable-length (packed) batches run padded inside the op with a validity mask: past its length a sequence keeps its
state (so the final state is the one at its last valid step; the reverse direction starts at its last valid step)
and emits zeros. Packing and unpacking are gathers done inside the same op.

The one-step cells (``rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell``, ``gru_cell``) are single ops as well.
Gate layouts are PyTorch's: LSTM ``(i, f, g, o)``, GRU ``(r, z, n)`` with ``b_hn`` inside ``r * (W_hn h + b_hn)``.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype, _precision
from ..._tensor import Tensor
from ..._config import config
from ...ops import tracing
from ...ops.join import cat, stack
from ...ops.registry import apply, defop, overload
from .dropout import inverted_dropout_mask

__all__: list = []

_GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}


# ----------------------------------------------------------------------------------------------------------------
# pure JAX: one step, one layer-direction, the whole stack


_mm = _precision.mm


def _step(mode, xp, h, c, w_hh, b_hh, w_hr):
    """One recurrence step given ``xp = x @ W_ih^T + b_ih``; returns ``(h', c')`` (``c'`` None unless LSTM)."""
    gh = _mm(h, w_hh.T)
    if b_hh is not None:
        gh = gh + b_hh
    if mode == "lstm":
        out_gate, c2 = _lstm_gates(xp + gh, c)
        h2 = out_gate * jnp.tanh(c2)
        if w_hr is not None:
            h2 = _mm(h2, w_hr.T)
        return h2, c2
    if mode == "gru":
        xr, xz, xn = jnp.split(xp, 3, axis=-1)
        hr, hz, hn = jnp.split(gh, 3, axis=-1)
        r = jax.nn.sigmoid(xr + hr)
        z = jax.nn.sigmoid(xz + hz)
        n = jnp.tanh(xn + r * hn)
        return (1 - z) * n + z * h, None
    pre = xp + gh
    return (jnp.tanh(pre) if mode == "rnn_tanh" else jnp.maximum(pre, 0)), None


def _lstm_gates(gates, c):
    """The LSTM's output gate and new cell state from its summed gate pre-activations."""
    i, f, g, o = jnp.split(gates, 4, axis=-1)
    return jax.nn.sigmoid(o), jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)


def _in_proj(x, w_ih, b_ih):
    xp = _mm(x, w_ih.T)
    return xp + b_ih if b_ih is not None else xp


def _layer(mode, x, h0, c0, mask, w, reverse, has_bias, has_proj):
    """Run one layer-direction over ``x`` (T, B, I) with ``lax.scan``; returns (outputs, h_T, c_T)."""
    w_ih, w_hh = w[0], w[1]
    b_ih, b_hh = (w[2], w[3]) if has_bias else (None, None)
    w_hr = w[-1] if has_proj else None
    xp = _in_proj(x, w_ih, b_ih)  # every time step's input projection as one matmul

    def body(carry, inp):
        h, c = carry
        if mask is None:
            h2, c2 = _step(mode, inp, h, c, w_hh, b_hh, w_hr)
            return (h2, c2), h2
        xt, m = inp
        h2, c2 = _step(mode, xt, h, c, w_hh, b_hh, w_hr)
        h_keep = jnp.where(m, h2, h)
        c_keep = jnp.where(m, c2, c) if c2 is not None else None
        return (h_keep, c_keep), jnp.where(m, h2, jnp.zeros_like(h2))

    xs = xp if mask is None else (xp, mask)
    (hT, cT), ys = jax.lax.scan(body, (h0, c0), xs, reverse=reverse)
    return ys, hT, cT


def _padded(packed, unpack_idx, batch):
    """Packed rows (N, F) gathered to (T, B, F), with zeros for the padding."""
    ext = jnp.concatenate([packed, jnp.zeros((1,) + packed.shape[1:], packed.dtype)], axis=0)
    return ext[unpack_idx].reshape((unpack_idx.shape[0] // batch, batch) + packed.shape[1:])


def _stack_fwd(x, h0, c0, lengths, unpack_idx, pack_idx, drop, *w, mode, num_layers, num_dirs, has_bias, has_proj,
               hidden_size, out_size):
    """The whole recurrent stack. ``x`` is (T, B, I), or packed data (N, I) with the gather indices; the dropout
    masks between layers are (L - 1, T, B, F), or (L - 1, N, F) for packed data (PyTorch drops out the packed
    layer output, so one draw per packed row).

    Returns the output (padded input with two directions: each direction's, which ``rnn_stack`` concatenates),
    then each layer-direction's final ``h`` (and, for LSTM, ``c``), which ``rnn_stack`` stacks."""
    if unpack_idx is not None:  # packed: gather (N, I) -> (T, B, I), with a zero row for the padding
        batch = lengths.shape[0]
        seq = _padded(x, unpack_idx, batch)
    else:
        seq = x
    steps, batch = seq.shape[0], seq.shape[1]
    mask = None
    if lengths is not None:
        mask = (jnp.arange(steps)[:, None] < lengths[None, :])[:, :, None]
    per = len(w) // (num_layers * num_dirs)
    hs, cs = [], []
    inp = seq
    for layer in range(num_layers):
        outs = []
        for d in range(num_dirs):
            k = layer * num_dirs + d
            h_init = h0[k] if h0 is not None else jnp.zeros((batch, out_size), seq.dtype)
            c_init = None
            if mode == "lstm":
                c_init = c0[k] if c0 is not None else jnp.zeros((batch, hidden_size), seq.dtype)
            ys, hT, cT = _layer(mode, inp, h_init, c_init, mask, w[k * per:(k + 1) * per], d == 1, has_bias,
                                has_proj)
            outs.append(ys)
            hs.append(hT)
            cs.append(cT)
        inp = outs[0] if num_dirs == 1 else jnp.concatenate(outs, axis=-1)
        if drop is not None and layer < num_layers - 1:
            inp = inp * (drop[layer] if unpack_idx is None else _padded(drop[layer], unpack_idx, batch))
    if pack_idx is not None:
        seq = (inp.reshape((-1, inp.shape[-1]))[pack_idx],)
    else:
        seq = tuple(outs)
    return seq + tuple(hs) + (tuple(cs) if mode == "lstm" else ())


# ----------------------------------------------------------------------------------------------------------------
# packing indices (shared with torchish.nn.utils.rnn)


@functools.lru_cache(maxsize=256)
def packed_indices(batch_sizes: tuple, steps: int | None = None):
    """For PyTorch's packed layout with ``batch_sizes`` (one entry per time step, non-increasing), return
    ``(lengths, unpack_idx, pack_idx)`` as numpy int arrays: each sequence's length, for every (t, b) of the padded
    (T, B) grid its row in the packed data (``N`` where it is padding), and for each packed row its flat (t, b).
    ``steps``: a longer grid, its extra steps all padding."""
    bs = np.asarray(batch_sizes, np.int64)
    steps, batch = max(len(bs), steps or 0), int(bs[0]) if len(bs) else 0
    valid = np.arange(batch)[None, :] < np.pad(bs, (0, steps - len(bs)))[:, None]  # (T, B)
    n = int(valid.sum())
    unpack = np.full(steps * batch, n, np.int64)
    flat_valid = np.flatnonzero(valid.reshape(-1))
    unpack[flat_valid] = np.arange(n)
    lengths = valid.sum(axis=0).astype(np.int64)
    return lengths, unpack, flat_valid.astype(np.int64)


def bucket_steps(steps: int) -> int:
    """The number of time steps an eager packed batch runs: the next of 8, 12, 16, 24, 32, 48... Each new pattern
    of lengths would otherwise compile the stack's forward and backward again (about a second each time, where
    PyTorch takes a millisecond); past its length a sequence keeps its state, so extra steps change nothing."""
    b = 8
    while b < steps:
        b = b * 3 // 2 if b & (b - 1) == 0 else b // 3 * 4
    return b


class _Buckets:
    """``OpDef.bucket`` of the recurrent stacks. ``rnn_stack`` passes eager calls ``lengths`` where it wants them
    bucketed, and this pads their time steps to :func:`bucket_steps` (a few shapes; past its length a sequence keeps
    its state, so the extra steps change nothing):
    - packed input runs on ``T' * B`` packed rows, ``T'`` the length of the grid ``rnn_stack`` built the gather
      indices for: the packed data, pack indices and dropout masks are padded with zero rows, and the output rows
      and the data's gradient cut back;
    - padded input whose length varies between calls (``lengths`` all ``T``) is padded to ``T'`` steps, and the
      output and the input's gradient cut back to ``T``.
    Each new row count or length compiles only these small pads and cuts."""

    @staticmethod
    def active(vals):
        return vals[3] is not None

    @staticmethod
    def forward(fwd, *vals):
        if vals[3] is None:
            return fwd(*vals)
        n = vals[0].shape[0]
        res = fwd(*_padded_inputs(vals))
        return tuple(_cut(r, n) if _over_steps(vals, i, r) else r for i, r in enumerate(res))

    @staticmethod
    def backward(bwd, mask, vals, outs, gs):
        if vals[3] is None:
            return bwd(vals, outs, gs)
        n = vals[0].shape[0]
        vals = _padded_inputs(vals)
        gs = tuple(_pad(g, vals[0].shape[0]) if _over_steps(vals, i, g) else g for i, g in enumerate(gs))
        res = bwd(vals, outs, gs)
        return (_cut(res[0], n),) + tuple(res[1:]) if mask[0] else res


def _over_steps(vals, i, r):
    """Whether the stack's output ``i`` (or its gradient) ``r`` runs over the time steps: the packed output, or a
    direction's padded output (3-D; the final states are 2-D)."""
    if r is None:
        return False
    return i == 0 if vals[4] is not None else r.ndim == 3


def _pad(a, rows, axis=0):
    if a.shape[axis] == rows:
        return a
    dev = _cpu_device(a)
    if dev is None:
        return _pad_jit(a, rows, axis)
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, rows - a.shape[axis])
    return jax.device_put(np.pad(np.asarray(a), widths), dev)


def _cut(a, rows):
    dev = _cpu_device(a)
    return _cut_jit(a, rows) if dev is None else jax.device_put(np.asarray(a)[:rows], dev)


def _cpu_device(a):
    """The CPU device ``a`` lives on (alone), where padding and cutting it on the host compiles nothing (each new
    row count would compile a pad or a cut, ~20 ms), else None."""
    if not isinstance(a, jax.Array) or isinstance(a, jax.core.Tracer):  # (meta values, traced calls)
        return None
    devs = a.devices()
    if len(devs) == 1:
        (dev,) = devs
        if dev.platform == "cpu":
            return dev
    return None


@functools.partial(jax.jit, static_argnums=(1, 2))
def _pad_jit(a, rows, axis):
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, rows - a.shape[axis])
    return jnp.pad(a, widths)


@functools.partial(jax.jit, static_argnums=1)
def _cut_jit(a, rows):
    return a[:rows]


def _padded_inputs(vals):
    """The stack's inputs with the packed rows (data, pack indices, dropout masks) padded to the grid's size
    (``rnn_stack`` pads the pack indices on the host, unless recording lazily), or the time steps of padded input
    (and its dropout masks) to the bucketed length."""
    vals = list(vals)
    packed = vals[4] is not None
    rows = vals[4].shape[0] if packed else bucket_steps(vals[0].shape[0])
    vals[0] = _pad(vals[0], rows)
    if packed:
        vals[5] = _pad(vals[5], rows)
    if vals[6] is not None:
        vals[6] = _pad(vals[6], rows, 1)
    return vals


# The node names are those of the op PyTorch's CPU stack ends in: its output is a ``stack`` of the time steps'
# outputs (packed input: a ``cat`` of them), and LSTM in float32/bfloat16 runs oneDNN's layer kernel
# (_MKLDNN_LSTM). The final states PyTorch stacks from the layers (``h_n``, ``c_n``), and two directions' outputs
# it concatenates: rnn_stack runs those ``stack``s and that ``cat`` for real over the fused node's per-layer
# outputs, so each output shows its own node (StackBackward0, CatBackward0), as one node cannot name its outputs
# apart. That is two or three more dispatches per call: little beside a recurrent stack's kernel
_STACK_OPS = {mode: defop(mode, _stack_fwd, grad_name="StackBackward0", bucket=_Buckets)
              for mode in ("rnn_tanh", "rnn_relu", "lstm", "gru")}
_PACKED_OPS = {mode: overload(op, "CatBackward0") for mode, op in _STACK_OPS.items()}


def _cell_fwd(x, h, c, w_ih, w_hh, b_ih, b_hh, *, mode):
    if mode == "lstm":  # (the output gate, tanh(c') and c': rnn_cell multiplies the first two, see _CELL_OPS)
        gh = _mm(h, w_hh.T)
        out_gate, c2 = _lstm_gates(_in_proj(x, w_ih, b_ih) + (gh if b_hh is None else gh + b_hh), c)
        return out_gate, jnp.tanh(c2), c2
    return _step(mode, _in_proj(x, w_ih, b_ih), h, c, w_hh, b_hh, None)[0]


# PyTorch's CPU LSTM in float32/bfloat16 (no projection, padded input) runs oneDNN's kernel, whose node saves the
# output it returns: writing that output in place breaks its backward, as there (two directions: the output is
# the cat of theirs, which saves nothing)
_MKLDNN_LSTM = defop("lstm", _stack_fwd, grad_name="MkldnnRnnLayerBackward0", saved=("0+ o0", ...), bucket=_Buckets)


def _mkldnn_lstm(mode, input, bidirectional, proj_size, batch_sizes):
    return (mode == "lstm" and proj_size == 0 and batch_sizes is None
            and input.dtype in (_dtype.float32, _dtype.bfloat16) and input.device.type == "cpu")


# Named after the op PyTorch's CPU cell (a composite) ends in: the nonlinearity, GRU's ``(1 - z) * n + z * h``
# sum, LSTM's ``c' = f * c + i * g`` sum. LSTM's ``h' = o * tanh(c')`` is another node there: rnn_cell runs that
# product for real (one more dispatch per step) so that h' and c' each show their node
_CELL_OPS = {mode: defop(mode + "_cell", _cell_fwd, grad_name=name) for mode, name in
             (("rnn_tanh", "TanhBackward0"), ("rnn_relu", "ReluBackward0"), ("lstm", "AddBackward0"),
              ("gru", "AddBackward0"))}


# ----------------------------------------------------------------------------------------------------------------
# wrappers


def rnn_stack(mode, input, hx, weights, *, num_layers, bidirectional, batch_first, has_bias, hidden_size,
              proj_size=0, dropout=0.0, training=False, batch_sizes=None):
    """Run a recurrent stack (PyTorch's ``_VF.lstm`` and friends) as one op.

    Args:
        mode: ``"rnn_tanh"``, ``"rnn_relu"``, ``"lstm"`` or ``"gru"``.
        input: (T, B, I) (or (B, T, I) with ``batch_first``), or packed data (N, I) when ``batch_sizes`` is given.
        hx: None, the initial hidden state (L*D, B, H), or for LSTM a pair ``(h0, c0)``.
        weights: the flat weights in PyTorch's order (``weight_ih_l0, weight_hh_l0, bias_ih_l0, ...``).
        batch_sizes: for packed input, the per-step batch sizes (a sequence of ints).

    Returns:
        ``(output, h_n)``, or ``(output, h_n, c_n)`` for LSTM.
    """
    num_dirs = 2 if bidirectional else 1
    h0, c0 = (hx if hx is not None else (None, None)) if mode == "lstm" else (hx, None)
    check_matmul_dtypes(weights[0], input, h0, c0)
    lengths = unpack_idx = pack_idx = None
    if batch_sizes is not None:  # (eager: a grid of bucketed length, see _Buckets)
        batch_sizes = tuple(int(b) for b in batch_sizes)
        grid = None if tracing.active() else bucket_steps(len(batch_sizes))
        lens, unpack, pack = packed_indices(batch_sizes, grid)
        if grid is not None and not config.lazy:  # (recorded lazily, its shape is inferred from the forward)
            pack = np.pad(pack, (0, unpack.shape[0] - pack.shape[0]))
        lengths, unpack_idx, pack_idx = (Tensor._make(jnp.asarray(a)) for a in (lens, unpack, pack))
        batch = len(lens)
        steps = len(batch_sizes)
    else:
        steps = input.shape[1] if batch_first else input.shape[0]
        batch = input.shape[0] if batch_first else input.shape[1]
        if steps == 0:  # (PyTorch's check on padded input; a packed batch always has a first step)
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        if not tracing.active() and input.device.type != "meta" and _varying_steps((mode, batch, tuple(input.shape[2:]), input.dtype, num_layers,
                                                    num_dirs, hidden_size, proj_size, has_bias), steps):
            lengths = Tensor._make(_full_lengths(batch, steps))  # (eager, lengths varying: see _Buckets)
    out_size = proj_size if proj_size > 0 else hidden_size
    drop = None
    if dropout > 0 and training and num_layers > 1:
        rows = (input.shape[0],) if batch_sizes is not None else (steps, batch)
        drop = inverted_dropout_mask(float(dropout), (num_layers - 1,) + rows + (num_dirs * out_size,),
                                     input.dtype, input)
    # PyTorch's lstm/gru/rnn run batch-first input time-major, on input.transpose(0, 1), and hand the output back
    # transposed: as a view for LSTM (output.transpose(0, 1)), in place for the others (output.transpose_(0, 1));
    # either way its strides are (H', B*H', 1) and view() of it raises, as users of batch_first meet
    transposed = bool(batch_first) and batch_sizes is None
    if transposed:
        input = input.transpose(0, 1)
    if _mkldnn_lstm(mode, input, bidirectional, proj_size, batch_sizes):
        op = _MKLDNN_LSTM
    else:
        op = _STACK_OPS[mode] if batch_sizes is None else _PACKED_OPS[mode]
    res = apply(op, (input, h0, c0, lengths, unpack_idx, pack_idx, drop) + tuple(weights), mode=mode,
                num_layers=int(num_layers), num_dirs=num_dirs, has_bias=bool(has_bias), has_proj=proj_size > 0,
                hidden_size=int(hidden_size), out_size=int(out_size))
    n_seq = num_dirs if batch_sizes is None else 1  # (see _stack_fwd)
    k = int(num_layers) * num_dirs
    out = res[0] if n_seq == 1 else cat(res[:n_seq], -1)
    if transposed:
        out = out.transpose(0, 1) if mode == "lstm" else out.transpose_(0, 1)
    states = res[n_seq:]
    if mode == "lstm":
        return out, stack(states[:k]), stack(states[k:])
    return out, stack(states)


_STEPS: dict = {}  # a recurrent stack's signature -> the length of its first eager padded input (None: it varied)


def _varying_steps(key, steps):
    """Whether eager padded input to the stack ``key`` has come with more than one sequence length."""
    first = _STEPS.setdefault(key, steps)
    if first is not None and first != steps:
        _STEPS[key] = first = None
    return first is None


@functools.lru_cache(maxsize=64)
def _full_lengths(batch, steps):
    return jnp.asarray(np.full(batch, steps, np.int64))


def check_matmul_dtypes(weight, *operands):
    """The operands of the recurrent matmuls share the weights' dtype (PyTorch's addmm check, a RuntimeError)."""
    for t in operands:
        if t is not None and t.dtype != weight.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_dtype.scalar_type_name(t.dtype)} "
                               f"and {_dtype.scalar_type_name(weight.dtype)}")


def _check_cell(input, hx, w_ih, w_hh, label):
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {w_ih.shape[1]}")
    if input.shape[0] != hx.shape[0]:
        raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{label} batch size "
                           f"{hx.shape[0]}")
    if hx.shape[1] != w_hh.shape[1]:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.shape[1]}, expected "
                           f"{w_hh.shape[1]}")


def rnn_cell(mode, input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of a recurrent cell (PyTorch's ``torch.lstm_cell`` and friends) on batched 2-D input.

    ``hx`` is the hidden state (B, H), or for LSTM a pair ``(h, c)``; returns ``h'`` or ``(h', c')``.
    """
    if mode == "lstm":
        # (PyTorch's binding: hx must be a tuple/list of Tensors, TypeError, and hold exactly two, RuntimeError)
        if not isinstance(hx, (tuple, list)) or not all(isinstance(t, Tensor) for t in hx):
            raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not "
                            f"{type(hx).__name__}")
        if len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        h, c = hx
        _check_cell(input, h, w_ih, w_hh, "0")
        _check_cell(input, c, w_ih, w_hh, "1")
    else:
        h, c = hx, None
        _check_cell(input, h, w_ih, w_hh, "0")
    check_matmul_dtypes(w_ih, input)  # (the cell state ``c`` only meets elementwise ops: any float dtype)
    check_matmul_dtypes(w_hh, h)
    res = apply(_CELL_OPS[mode], (input, h, c, w_ih, w_hh, b_ih, b_hh), mode=mode)
    if mode == "lstm":
        out_gate, tanh_c, c2 = res
        return out_gate * tanh_c, c2
    return res
