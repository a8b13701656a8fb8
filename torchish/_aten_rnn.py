"""The aten recurrent functions with flat weights (``torch.lstm``, ``torch.gru``, ``torch.rnn_tanh``,
``torch.rnn_relu`` and their one-step ``*_cell`` forms) and the batch-norm kernels SyncBatchNorm is built from
(``torch.batch_norm_stats``, ``batch_norm_gather_stats(_with_counts)``, ``batch_norm_elemt``,
``batch_norm_update_stats``, ``batch_norm_backward_reduce``, ``batch_norm_backward_elemt``).

The recurrent functions take both of aten's overloads: ``(input, hx, params, has_biases, num_layers, dropout,
train, bidirectional, batch_first)`` and the packed ``(data, batch_sizes, hx, params, has_biases, num_layers,
dropout, train, bidirectional)``; each runs as one op (``nn._functional.rnn.rnn_stack``).

Example::

    >>> x, h = torchish.randn(5, 2, 3), torchish.zeros(1, 2, 4)
    >>> params = [torchish.randn(12, 3), torchish.randn(12, 4), torchish.randn(12), torchish.randn(12)]
    >>> out, h_n = torchish.gru(x, h, params, True, 1, 0.0, False, False, False)
"""
from __future__ import annotations

from . import _dtype
from ._tensor import Tensor
from .autograd.grad_mode import no_grad
from .nn._functional.rnn import rnn_cell, rnn_stack

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
           "batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
           "batch_norm_update_stats", "batch_norm_backward_reduce", "batch_norm_backward_elemt"]


# ----------------------------------------------------------------------------------------------------------------
# recurrent stacks and cells


def _run(mode, input, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    params = list(params)
    if mode == "lstm":
        h0, c0 = hx
        hidden = c0.shape[-1]
        proj = h0.shape[-1] if h0.shape[-1] != hidden else 0
        state = (h0, c0)
    else:
        hidden, proj, state = hx.shape[-1], 0, hx
    per = (2 + 2 * bool(has_biases)) + (1 if proj else 0)
    dirs = 2 if bidirectional else 1
    if len(params) != per * num_layers * dirs:
        raise RuntimeError(f"Expected {per * num_layers * dirs} parameters, got {len(params)}")
    bs = None if batch_sizes is None else [int(b) for b in batch_sizes.tolist()]
    return rnn_stack(mode, input, state, params, num_layers=int(num_layers), bidirectional=bool(bidirectional),
                     batch_first=bool(batch_first), has_bias=bool(has_biases), hidden_size=int(hidden),
                     proj_size=int(proj), dropout=float(dropout), training=bool(train), batch_sizes=bs)


def _stack(mode):
    def fn(input, *args):
        if mode == "lstm":
            packed = isinstance(args[0], Tensor)
        else:  # (input, hx, params, ...) or (data, batch_sizes, hx, params, ...)
            packed = len(args) > 1 and isinstance(args[1], Tensor)
        if packed:
            batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
            return _run(mode, input, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                        False)
        hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        return _run(mode, input, None, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    fn.__name__ = mode
    fn.__doc__ = (f"``torch.{mode}`` with flat weights (``w_ih, w_hh[, b_ih, b_hh]`` per layer and direction); "
                  "returns ``(output, h_n" + (", c_n)``." if mode == "lstm" else ")``."))
    return fn


lstm, gru, rnn_tanh, rnn_relu = _stack("lstm"), _stack("gru"), _stack("rnn_tanh"), _stack("rnn_relu")


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return rnn_cell("lstm", input, hx, w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return rnn_cell("gru", input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return rnn_cell("rnn_tanh", input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return rnn_cell("rnn_relu", input, hx, w_ih, w_hh, b_ih, b_hh)


# ----------------------------------------------------------------------------------------------------------------
# SyncBatchNorm's kernels (per-channel statistics over every dim but 1)


def _dims(x):
    return (0,) + tuple(range(2, x.ndim))


def _bcast(v, x):
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def _acc(x):
    return x.float() if x.dtype in (_dtype.float16, _dtype.bfloat16) else x


def batch_norm_stats(input, eps):
    """This worker's ``(mean, invstd)`` per channel (biased variance), in float32 for half inputs."""
    x = _acc(input)
    mean = x.mean(_dims(x))
    var = (x - _bcast(mean, x)).square().mean(_dims(x))
    return mean, (var + eps).rsqrt()


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    """``(input - mean) * invstd * weight + bias`` with per-channel statistics."""
    y = (input - _bcast(mean, input)) * _bcast(invstd, input)
    if weight is not None:
        y = y * _bcast(weight, input)
    if bias is not None:
        y = y + _bcast(bias, input)
    return y.to(input.dtype)


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts):
    """Combine the workers' ``(mean, invstd)`` rows (weighted by ``counts``) into the global statistics; the running
    statistics are updated in place (unbiased variance)."""
    counts = counts.to(mean.dtype)
    total = counts.sum()
    var = (invstd.square().reciprocal() - eps)
    g_mean = (mean * counts.unsqueeze(1)).sum(0) / total
    g_var = ((var + (mean - g_mean).square()) * counts.unsqueeze(1)).sum(0) / total
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(running_mean * (1 - momentum) + g_mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = g_var * total / (total - 1)
            running_var.copy_(running_var * (1 - momentum) + unbiased.to(running_var.dtype) * momentum)
    return g_mean, (g_var + eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    """:func:`batch_norm_gather_stats_with_counts` with every worker counting ``count`` elements."""
    from .ops.creation import full
    counts = full((mean.shape[0],), float(count), dtype=mean.dtype)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """``(mean, biased var)`` of ``input`` per channel; the running statistics are updated in place (with the
    unbiased variance)."""
    x = _acc(input)
    dims = _dims(x)
    n = x.numel() // max(x.shape[1], 1)
    mean = x.mean(dims)
    var = (x - _bcast(mean, x)).square().mean(dims)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(running_mean * (1 - momentum) + mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var * (n / max(n - 1, 1))
            running_var.copy_(running_var * (1 - momentum) + unbiased.to(running_var.dtype) * momentum)
    return mean, var


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    """``(sum_dy, sum_dy_xmu, grad_weight, grad_bias)`` per channel; the ones not asked for are None."""
    dims = _dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _bcast(mean, input))).sum(dims)
    grad_weight = (sum_dy_xmu * invstd).to(input.dtype) if weight_g and weight is not None else None
    grad_bias = sum_dy.to(input.dtype) if bias_g and weight is not None else None
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    """The input gradient from the reduced sums over all workers (``count``: each worker's element count)."""
    total = count.to(mean.dtype).sum()
    mean_dy = _bcast(sum_dy / total, input)
    mean_dy_xmu = _bcast(sum_dy_xmu / total, input)
    inv = _bcast(invstd, input)
    g = (grad_out - mean_dy - (input - _bcast(mean, input)) * inv.square() * mean_dy_xmu) * inv
    if weight is not None:
        g = g * _bcast(weight, input)
    return g.to(input.dtype)
