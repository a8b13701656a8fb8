"""``ctc_loss``: the Connectionist Temporal Classification loss as ONE registry op.

The forward is the CTC forward (alpha) recursion in log space, one ``jax.lax.scan`` step per time step over the
extended label sequence ``blank, l1, blank, l2, ..., blank``. The gradient comes from ``jax.vjp`` of that forward;
PyTorch's backward additionally adds ``exp(log_probs)`` on the valid time steps (its formula is the gradient with
respect to the logits feeding a ``log_softmax``), so the VJP adds that term to match PyTorch on any input.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from ...ops import registry as _registry
from ...ops.registry import apply, defop, overload
from ._loss_util import concrete, reduction_arg
from ._args import need_tensor

_NEG_INF = -jnp.inf


def _lse(*xs):
    """log(sum(exp(x))) over a few arrays, safe when all are -inf (value -inf, gradient 0, no NaN)."""
    m = xs[0]
    for x in xs[1:]:
        m = jnp.maximum(m, x)
    finite = m > _NEG_INF
    ms = jax.lax.stop_gradient(jnp.where(finite, m, 0))
    s = sum(jnp.exp(x - ms) for x in xs)
    return jnp.where(finite, ms + jnp.log(jnp.where(finite, s, 1)), _NEG_INF)


def _nll(lp, targets, il, tl, *, blank):
    """Per-sample negative log-likelihood. lp (T, N, C); targets (N, S) padded; il, tl (N,)."""
    t_max, n, _ = lp.shape
    s = targets.shape[1]
    sp = 2 * s + 1
    pos = jnp.arange(sp)
    lab_idx = jnp.clip((pos - 1) // 2, 0, max(s - 1, 0))
    ext = jnp.where(pos % 2 == 1, targets[:, lab_idx] if s else blank, blank).astype(jnp.int32)
    ext = jnp.broadcast_to(ext, (n, sp))  # (N, S'), also when no sequence has a label (S = 0)
    in_seq = pos[None, :] < 2 * tl[:, None] + 1
    prev2 = jnp.concatenate([jnp.full((n, 2), -1, jnp.int32), ext[:, :-2]], axis=1)[:, :sp]
    skip = (pos[None, :] % 2 == 1) & (ext != prev2) & (pos[None, :] >= 2)                 # may skip a blank
    emit = jnp.take_along_axis(lp, jnp.broadcast_to(ext[None], (t_max, n, sp)), axis=2)  # (T, N, S')
    emit = jnp.where(in_seq[None], emit, _NEG_INF)
    alpha0 = jnp.where(pos[None, :] < 2, emit[0], _NEG_INF)
    neg = jnp.full((n, 1), _NEG_INF, lp.dtype)

    def step(alpha, xs):
        e, t = xs
        a1 = jnp.concatenate([neg, alpha[:, :-1]], axis=1)
        a2 = jnp.where(skip, jnp.concatenate([neg, neg, alpha[:, :-2]], axis=1)[:, :sp], _NEG_INF)
        new = _lse(alpha, a1, a2) + e
        return jnp.where((t < il)[:, None], new, alpha), None

    alpha, _ = jax.lax.scan(step, alpha0, (emit[1:], jnp.arange(1, t_max)))
    last = jnp.take_along_axis(alpha, (2 * tl)[:, None], axis=1)[:, 0]
    before = jnp.take_along_axis(alpha, jnp.maximum(2 * tl - 1, 0)[:, None], axis=1)[:, 0]
    before = jnp.where(tl > 0, before, _NEG_INF)
    return -_lse(last, before)


def _reduce(nll, tl, *, reduction, zero_infinity):
    if zero_infinity:
        nll = jnp.where(nll == jnp.inf, jnp.zeros((), nll.dtype), nll)
    if reduction == "mean":
        return jnp.mean(nll / jnp.maximum(tl, 1).astype(nll.dtype))
    if reduction == "sum":
        return jnp.sum(nll)
    return nll


def _ctc_fwd(lp, targets, il, tl, *, blank, reduction, zero_infinity):
    return _reduce(_nll(lp, targets, il, tl, blank=blank), tl, reduction=reduction, zero_infinity=zero_infinity)


def _ctc_vjp(g, lp, targets, il, tl, out, *, blank, reduction, zero_infinity):
    nll, pull_nll = jax.vjp(lambda x: _nll(x, targets, il, tl, blank=blank), lp)
    _, pull_red = jax.vjp(lambda v: _reduce(v, tl, reduction=reduction, zero_infinity=zero_infinity), nll)
    (gn,) = pull_red(g)                                                    # per-sample cotangent (N,)
    (glp,) = pull_nll(gn)
    valid = (jnp.arange(lp.shape[0])[:, None] < il[None, :])[:, :, None]    # (T, N, 1)
    glp = glp + jnp.where(valid, jnp.exp(lp) * gn[None, :, None], jnp.zeros((), lp.dtype))
    infinite = (nll == jnp.inf)[None, :, None]
    if zero_infinity:
        glp = jnp.where(infinite, jnp.zeros((), lp.dtype), glp)
    else:  # PyTorch's ``exp(log_alpha + log_beta + nll - lp)`` is exp(-inf + inf): NaN on the valid steps
        glp = jnp.where(infinite & valid, jnp.full((), jnp.nan, lp.dtype), glp)
    return glp, None, None, None


# reduction="none" returns PyTorch's own output (its node saves it); a reduced loss, or one with zero_infinity
# (a where() of it), is a new tensor: two ops. The reduced one is named per call for the op PyTorch's composite
# ends in: the where() of zero_infinity, the mean of the loss divided by the target lengths, or the sum
_CTC = {red: defop("ctc_loss" if red else "ctc_loss_reduced", _ctc_fwd, vjp=_ctc_vjp, grad_name="CtcLossBackward0")
        for red in (True, False)}
_CTC_TOP = {red: overload(_CTC[False], name) for red, name in
            (("none", "WhereBackward0"), ("mean", "MeanBackward0"), ("sum", "SumBackward0"))}


def _lengths(x, name, device):
    """The lengths as an int64 vector beside the log-probs (PyTorch reads them on the host, from either device)."""
    if isinstance(x, Tensor):
        if x.dtype.category != _dtype._INT:
            raise RuntimeError(f"{name} must be integral")
        return x.reshape(-1).to(device, _dtype.int64)
    from ...ops.creation import tensor
    if isinstance(x, int):
        raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, not int")
    return tensor([int(v) for v in x], dtype=_dtype.int64, device=device)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """CTC loss of ``log_probs`` (T, N, C) — or (T, C) unbatched — against padded (N, S) or concatenated targets."""
    need_tensor("ctc_loss", log_probs, "log_probs", 1)
    need_tensor("ctc_loss", targets, "targets", 2)
    from ...ops.shape import squeeze, unsqueeze
    red = reduction_arg(None, None, reduction)
    if _registry.autocast_hook is not None:  # (autocast runs ctc_loss in float32, before its dtype check)
        (log_probs,) = _registry.autocast_hook("ctc_loss", (log_probs,))
    if log_probs.dtype.category < _dtype._FLOAT or log_probs.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for '
                                  f"'{_dtype.scalar_type_name(log_probs.dtype)}'")
    if log_probs.numel() == 0:  # (an empty batch too: PyTorch refuses it before any shape check)
        raise RuntimeError("log_probs tensor must not be empty")
    unbatched = log_probs.ndim == 2
    if unbatched:  # (the targets are not unsqueezed: 1-D ones are read as concatenated, 2-D as a batch of one)
        log_probs = unsqueeze(log_probs, 1)
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for argument "
                           "#1 'log_probs' (while checking arguments for ctc_loss_allocate_outputs)")
    t_max, n, c = log_probs.shape
    dev = log_probs.device
    il, tl = _lengths(input_lengths, "input_lengths", dev), _lengths(target_lengths, "target_lengths", dev)
    if il.numel() != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.numel() != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    targets = targets.to(dev, _dtype.int64)  # (PyTorch moves CPU targets, which cuDNN wants, to the log-probs)
    ilv, tlv = concrete(il), concrete(tl)
    for name, v in (("target_lengths", tlv), ("input_lengths", ilv)):
        if v is not None and v.size and v.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value {v.min()} (while checking "
                               "arguments for ctc_loss_allocate_outputs)")
    if ilv is not None and ilv.size and ilv.max() > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {ilv.max()} (while "
                           "checking arguments for ctc_loss_allocate_outputs)")
    if targets.ndim == 1:
        if tlv is not None and targets.shape[0] != int(tlv.sum()):
            raise RuntimeError(f"Expected tensor to have size {int(tlv.sum())} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets' (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
        targets = _pad_concatenated(targets, tl, tlv)
    elif targets.shape[0] != n:
        raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size {targets.shape[0]} for "
                           "argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)")
    elif tlv is not None and tlv.size and tlv.max() > targets.shape[1]:
        raise RuntimeError(f"Expected tensor to have size at least {tlv.max()} at dimension 1, but got size "
                           f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for "
                           "ctc_loss_allocate_outputs)")
    if log_probs.requires_grad and log_probs.dtype.category == _dtype._FLOAT and (red != "none" or zero_infinity):
        out = _ctc_composite(log_probs, targets, il, tl, int(blank), red, bool(zero_infinity))
        return squeeze(out, 0) if unbatched and red == "none" else out
    op = _CTC[True] if red == "none" and not zero_infinity else _CTC_TOP[red]
    out = apply(op, (log_probs, targets, il, tl), blank=int(blank), reduction=red, zero_infinity=bool(zero_infinity))
    return squeeze(out, 0) if unbatched and red == "none" else out


def _ctc_composite(log_probs, targets, il, tl, blank, red, zero_infinity):
    """ATen's ctc_loss_impl op by op where it records a graph: the per-sample losses (CtcLossBackward0; with
    zero_infinity its backward zeroes the infinite ones' gradients), where(res == inf, 0, res) for zero_infinity,
    then (res / target_lengths.clamp_min(1)).mean() or res.sum()."""
    from ...ops.creation import zeros
    from ...ops.ternary import where
    res = apply(_CTC[True], (log_probs, targets, il, tl), blank=blank, reduction="none", zero_infinity=zero_infinity)
    if zero_infinity:  # (the op's values have the zeros already; the where() is PyTorch's node)
        res = where(res == math.inf, zeros((), dtype=res.dtype), res)
    if red == "mean":
        return (res / tl.to(res.dtype).clamp_min(1)).mean()
    return res.sum() if red == "sum" else res


def _pad_concatenated(targets, tl, tlv):
    """Concatenated targets (sum(target_lengths),) as a padded (N, S) array."""
    if tlv is None:  # traced lengths: pad to the total length, gathering with clamped indices
        s = targets.shape[0]
        offsets = jnp.cumsum(tl._d) - tl._d
        idx = jnp.clip(offsets[:, None] + jnp.arange(s)[None, :], 0, max(s - 1, 0))
        return Tensor._make(targets._d[idx])
    s = int(tlv.max()) if tlv.size else 0
    offsets = np.concatenate([[0], np.cumsum(tlv)[:-1]]).astype(np.int64)
    idx = np.clip(offsets[:, None] + np.arange(s)[None, :], 0, max(targets.shape[0] - 1, 0))
    if not targets.shape[0]:
        return Tensor._make(jnp.broadcast_to(targets._d, (len(tlv), s)))  # (N, 0), on the targets' device
    return Tensor._make(targets._d[jnp.asarray(idx)])
