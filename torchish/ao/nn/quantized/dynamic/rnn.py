"""``torch.ao.nn.quantized.dynamic.LSTM``: an LSTM whose weights are qint8 (one per-tensor scale per weight
matrix) and whose matrix products run as :mod:`.linear`'s dynamically quantized Linear, as PyTorch's
``quantized_lstm`` (x86, fbgemm) runs them.

Per layer and direction, PyTorch's CPU LSTM first applies the input weights to the whole sequence at once (one
set of input quantization parameters for all time steps, ``b_ih`` added there), then per step the hidden weights
to ``h`` (its own parameters per step, ``b_hh`` added there), adds the two, and runs the gates in float32. The
matrix products equal PyTorch's bit for bit; the gates' sigmoid/tanh are XLA's (within float32 rounding of
PyTorch's vectorized ones), so outputs agree to float32 accuracy rather than bit for bit.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..... import _dtype
from ....._quantized import qint8, quantize_per_tensor
from ....._tensor import Tensor, wrap
from .....nn.module import Module
from .....nn.modules.rnn import RNNBase
from .linear import _linear_dynamic

__all__ = ["LSTM"]


def _direction(xs, h0, c0, w_ih, s_ih, b_ih, w_hh, s_hh, b_hh):
    """One direction of one layer over ``xs`` (time, batch, features): the outputs and the last (h, c)."""
    gi = _linear_dynamic(xs, w_ih, s_ih, b_ih, reduce_range=True)

    def step(carry, g):
        h, c = carry
        gates = _linear_dynamic(h, w_hh, s_hh, b_hh, reduce_range=True) + g
        i, f, cell, o = jnp.split(gates, 4, axis=-1)
        i, f, o = jax.nn.sigmoid(i), jax.nn.sigmoid(f), jax.nn.sigmoid(o)
        c = f * c + i * jnp.tanh(cell)
        h = o * jnp.tanh(c)
        return (h, c), h
    (h, c), ys = jax.lax.scan(step, (h0, c0), gi)
    return ys, h, c


@functools.partial(jax.jit, static_argnames=("num_layers", "bidirectional"))
def _lstm(x, h0, c0, weights, num_layers, bidirectional):
    """The stacked LSTM over ``x`` (time, batch, features); ``weights``: per layer and direction, the (w_ih, s_ih,
    b_ih, w_hh, s_hh, b_hh) tuple. Returns the last layer's outputs and the stacked final h and c."""
    dirs = 2 if bidirectional else 1
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            xs = x if d == 0 else x[::-1]
            ys, h, c = _direction(xs, h0[k], c0[k], *weights[k])
            outs.append(ys if d == 0 else ys[::-1])
            hs.append(h)
            cs.append(c)
        x = outs[0] if dirs == 1 else jnp.concatenate(outs, axis=-1)
    return x, jnp.stack(hs), jnp.stack(cs)


class LSTM(Module):
    """A dynamically quantized LSTM (``quantize_dynamic`` makes it from an ``nn.LSTM``): ``forward(input, hx=None)``
    returns ``(output, (h_n, c_n))`` as ``nn.LSTM`` does, for batched input (3-D)."""

    _FLOAT_MODULE = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=qint8):
        super().__init__()
        if dtype is not qint8:
            raise RuntimeError("torchish: dynamically quantized LSTM supports only dtype=torch.qint8")
        self.mode = "LSTM"
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.dtype = bidirectional, dtype
        self.__dict__["_weights"] = []  # per layer and direction: (qweight_ih, bias_ih, qweight_hh, bias_hh)

    def _get_name(self):
        return "DynamicQuantizedLSTM"

    extra_repr = RNNBase.extra_repr  # (PyTorch's text: the float LSTM's, without proj_size)

    def __repr__(self):
        return f"{self._get_name()}({self.extra_repr()})"

    def forward(self, input, hx=None):
        from .....ops.creation import zeros
        if not isinstance(input, Tensor) or input.ndim != 3:
            raise NotImplementedError("torchish: dynamically quantized LSTM takes a batched (3-D) input tensor "
                                      "(PackedSequence and unbatched input are not supported)")
        x = input._d.astype(jnp.float32)
        if self.batch_first:
            x = jnp.swapaxes(x, 0, 1)
        dirs = 2 if self.bidirectional else 1
        if hx is None:
            h0 = c0 = zeros(self.num_layers * dirs, x.shape[1], self.hidden_size)._d
        else:
            h0, c0 = hx[0]._d, hx[1]._d
        weights = tuple((w_ih._d, np.float32(w_ih.q_scale()), b_ih.detach()._d, w_hh._d, np.float32(w_hh.q_scale()),
                         b_hh.detach()._d) for w_ih, b_ih, w_hh, b_hh in self._weights)
        y, h, c = _lstm(x, h0, c0, weights, num_layers=self.num_layers, bidirectional=self.bidirectional)
        if self.batch_first:
            y = jnp.swapaxes(y, 0, 1)
        return wrap(y), (wrap(h), wrap(c))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The dynamic LSTM of a float ``nn.LSTM``: each weight matrix observed by its own ``qconfig.weight()``
        observer (default: MinMaxObserver, qint8, per_tensor_symmetric) and quantized per tensor."""
        from .....nn.modules.rnn import LSTM as FloatLSTM
        from ....quantization.qconfig import default_dynamic_qconfig
        if type(mod) is not FloatLSTM:
            raise AssertionError("nn.quantized.dynamic.RNNBase.from_float only works for nn.LSTM and nn.GRU")
        if not mod.bias:
            raise AssertionError("mod.bias must be True")
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError("torchish: dynamic quantization of an LSTM with proj_size is not supported")
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        observe = qconfig.weight

        if observe().dtype is _dtype.float16:
            raise NotImplementedError("torchish: dynamic quantization of LSTM to float16 is not implemented")

        def quantize(w):
            observer = observe()
            if observer.dtype is not qint8:
                raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {observer.dtype}")
            observer(w)
            scale, zero_point = observer.calculate_qparams()
            return quantize_per_tensor(w.detach().float(), float(scale), int(zero_point), qint8)
        q = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first, mod.dropout,
                mod.bidirectional)
        for layer in range(mod.num_layers):
            for suffix in ("", "_reverse") if mod.bidirectional else ("",):
                get = functools.partial(getattr, mod)
                q._weights.append((quantize(get(f"weight_ih_l{layer}{suffix}")), get(f"bias_ih_l{layer}{suffix}"),
                                   quantize(get(f"weight_hh_l{layer}{suffix}")), get(f"bias_hh_l{layer}{suffix}")))
        return q
