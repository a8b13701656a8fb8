"""Recurrent layers: RNN, LSTM, GRU and their one-step cells, with PyTorch's parameters, shapes and errors.

Each forward runs the whole stack (every layer and direction, the whole sequence) as ONE registered op whose forward
is a ``jax.lax.scan`` (see ``torchish/nn/_functional/rnn.py``): one kernel launch and one autograd node per call.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import _dtype
from ...amp import _state as _amp_state
from ...ops.creation import empty
from ...ops.gather import index_select
from .. import init
from .._functional.rnn import check_matmul_dtypes, rnn_cell, rnn_stack
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _host_ints

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_MODES = {"RNN_TANH": ("rnn_tanh", 1), "RNN_RELU": ("rnn_relu", 1), "LSTM": ("lstm", 4), "GRU": ("gru", 3)}


def _permute(hx, permutation):
    return hx if permutation is None else index_select(hx, 1, permutation)


def _autocast_operands(input, tensors):
    """Under autocast PyTorch's recurrent layers reach their gates through autocast's ``linear``: a half-precision
    input (a bfloat16 activation from an earlier layer) meets the float32 weights and state as its own dtype, where
    outside autocast the dtypes must agree."""
    if not any(_amp_state.LOCAL.enabled.values()) or input.dtype not in (_dtype.float16, _dtype.bfloat16):
        return tensors
    return [t.to(input.dtype) if t is not None and t.dtype.is_floating_point and t.dtype != input.dtype else t
            for t in tensors]


class RNNBase(Module):
    """The shared machinery of :class:`RNN`, :class:`LSTM` and :class:`GRU` (parameters, checks, packing)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        float(dropout)  # (PyTorch stores float(dropout) first: a str, None or list fails there)
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _MODES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gates = _MODES[mode][1]  # (PyTorch's RNN modes take hidden_size itself: a bool one fails in empty())
        gate_size = hidden_size if gates == 1 else gates * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: the weights are already used in place by the fused op."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # ------------------------------------------------------------------------------------------------------
    # checks (PyTorch's wording)

    def check_input(self, input, batch_sizes):
        w = self._flat_weights[0]
        if input.dtype != w.dtype and not any(_amp_state.LOCAL.enabled.values()):  # (not checked under autocast)
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        return _permute(hx, permutation)

    # ------------------------------------------------------------------------------------------------------
    # forward

    def _unpack_input(self, input, hx, state_dims):
        """Shared front half of forward: returns (input, hx, batch_sizes, sorted, unsorted, is_batched)."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is not None:
                hx = self._map_state(hx, lambda h: _permute(h, sorted_indices))
            sizes = _host_ints(batch_sizes, "PackedSequence.batch_sizes").tolist()
            return data, hx, sizes, sorted_indices, unsorted_indices, True
        name = type(self).__name__
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead"
                             if isinstance(self, RNN) else
                             f"{name}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        is_batched = input.ndim == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                state_dims(hx, 2, "For unbatched 2-D input")
                hx = self._map_state(hx, lambda h: h.unsqueeze(1))
        elif hx is not None:
            state_dims(hx, 3, "For batched 3-D input")
        return input, hx, None, None, None, is_batched

    def _map_state(self, hx, fn):
        return fn(hx)

    def _finish(self, orig, output, hidden, batch_sizes, sorted_indices, unsorted_indices, is_batched):
        if isinstance(orig, PackedSequence):
            output = PackedSequence(output, orig.batch_sizes, sorted_indices, unsorted_indices)
            return output, self._map_state(hidden, lambda h: _permute(h, unsorted_indices))
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = self._map_state(hidden, lambda h: h.squeeze(1))
        return output, hidden

    def _run(self, input, hx, batch_sizes):
        mode = _MODES[self.mode][0]
        weights = _autocast_operands(input, self._flat_weights)
        if hx is not None and weights is not self._flat_weights:
            hx = tuple(_autocast_operands(input, list(hx))) if isinstance(hx, tuple) else \
                _autocast_operands(input, [hx])[0]
        return rnn_stack(mode, input, hx, weights, num_layers=self.num_layers,
                         bidirectional=self.bidirectional, batch_first=self.batch_first, has_bias=self.bias,
                         hidden_size=self.hidden_size, proj_size=self.proj_size, dropout=self.dropout,
                         training=self.training, batch_sizes=batch_sizes)

    def forward(self, input, hx=None):
        def dims(h, n, what):
            if not hasattr(h, "ndim"):  # (PyTorch's module calls hx.dim())
                raise AttributeError(f"'{type(h).__name__}' object has no attribute 'dim'")
            if h.ndim != n:
                raise RuntimeError(f"{what}, hx should also be {n}-D but got {h.ndim}-D tensor")

        orig = input
        input, hx, batch_sizes, sorted_indices, unsorted_indices, is_batched = self._unpack_input(input, hx, dims)
        if hx is not None:
            self.check_forward_args(input, hx, batch_sizes)
        else:
            self.check_input(input, batch_sizes)
        output, hidden = self._run(input, hx, batch_sizes)
        return self._finish(orig, output, hidden, batch_sizes, sorted_indices, unsorted_indices, is_batched)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if getattr(self, "proj_size", 0) != 0:  # (the dynamically quantized LSTM, which shares this, has none)
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU), stacked and optionally
    bidirectional.

    Args:
        input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0,
        bidirectional=False: as in PyTorch.

    Example:
        >>> import torchish as torch
        >>> rnn = torch.nn.RNN(4, 8, num_layers=2)
        >>> out, h_n = rnn(torch.randn(5, 3, 4))
        >>> out.shape, h_n.shape
        (torch.Size([5, 3, 8]), torch.Size([2, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    """Gated recurrent unit with PyTorch's gates: ``r, z = sigmoid(...)``, ``n = tanh(W_in x + b_in +
    r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``.

    Example:
        >>> import torchish as torch
        >>> gru = torch.nn.GRU(4, 8, batch_first=True)
        >>> out, h_n = gru(torch.randn(3, 5, 4))
        >>> out.shape
        torch.Size([3, 5, 8])
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory with PyTorch's gate order ``(i, f, g, o)`` and optional projections (``proj_size``).

    Returns ``(output, (h_n, c_n))``.

    Example:
        >>> import torchish as torch
        >>> lstm = torch.nn.LSTM(4, 8, proj_size=3, bidirectional=True)
        >>> out, (h, c) = lstm(torch.randn(5, 2, 4))
        >>> out.shape, h.shape, c.shape
        (torch.Size([5, 2, 6]), torch.Size([2, 2, 3]), torch.Size([2, 2, 8]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def _get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self._get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        return _permute(hx[0], permutation), _permute(hx[1], permutation)

    def _map_state(self, hx, fn):
        return fn(hx[0]), fn(hx[1])

    def forward(self, input, hx=None):
        def dims(h, n, what):
            if h[0].ndim != n or h[1].ndim != n:
                raise RuntimeError(f"{what}, hx and cx should also be {n}-D but got ({h[0].ndim}-D, "
                                   f"{h[1].ndim}-D) tensors")

        orig = input
        input, hx, batch_sizes, sorted_indices, unsorted_indices, is_batched = self._unpack_input(input, hx, dims)
        if batch_sizes is not None:  # PyTorch's LSTM leaves packed input to the op, whose dtype check comes first
            check_matmul_dtypes(self._flat_weights[0], input, *(hx or ()))
        if hx is not None:
            self.check_forward_args(input, hx, batch_sizes)
        else:
            self.check_input(input, batch_sizes)
        if hx is not None and len(hx) != 2:  # (the checks above read hx[0] and hx[1] only; then PyTorch's op)
            raise RuntimeError("lstm expects two hidden states")
        output, h_n, c_n = self._run(input, hx, batch_sizes)
        return self._finish(orig, output, (h_n, c_n), batch_sizes, sorted_indices, unsorted_indices, is_batched)


# ----------------------------------------------------------------------------------------------------------------
# cells


class RNNCellBase(Module):
    """The parameters shared by the one-step cells: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nl = self.__dict__.get("nonlinearity", "tanh")
        if nl != "tanh":
            s += f", nonlinearity={nl}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _zeros(self, input):
        from ...ops.creation import zeros
        return zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)

    def _check_dims(self, t, what):
        if t is not None and not hasattr(t, "ndim"):  # (PyTorch's cells call .dim())
            raise AttributeError(f"'{type(t).__name__}' object has no attribute 'dim'")
        if t is not None and t.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected {what} to be 1D or 2D, got {t.ndim}D instead")


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU).

    Example:
        >>> import torchish as torch
        >>> cell = torch.nn.RNNCell(4, 6)
        >>> cell(torch.randn(3, 4)).shape
        torch.Size([3, 6])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        self._check_dims(input, "input")
        self._check_dims(hx, "hidden")
        is_batched = input.ndim == 2
        if not is_batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        w_ih, w_hh, b_ih, b_hh = _autocast_operands(input, [self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh])
        hx, = _autocast_operands(input, [hx])
        ret = rnn_cell("rnn_" + self.nonlinearity, input, hx, w_ih, w_hh, b_ih, b_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``.

    Example:
        >>> import torchish as torch
        >>> cell = torch.nn.LSTMCell(4, 6)
        >>> h, c = cell(torch.randn(3, 4))
        >>> h.shape, c.shape
        (torch.Size([3, 6]), torch.Size([3, 6]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        self._check_dims(input, "input")
        if hx is not None:
            for i, value in enumerate(hx):
                if not hasattr(value, "ndim"):  # (PyTorch calls .dim())
                    raise AttributeError(f"'{type(value).__name__}' object has no attribute 'dim'")
                if value.ndim not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{i}] to be 1D or 2D, got {value.ndim}D instead")
        is_batched = input.ndim == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = self._zeros(input)
            hx = (z, z)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        w_ih, w_hh, b_ih, b_hh = _autocast_operands(input, [self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh])
        if isinstance(hx, (tuple, list)):  # (anything else is rnn_cell's TypeError, as PyTorch's binding raises)
            hx = type(hx)(_autocast_operands(input, list(hx)))
        h, c = rnn_cell("lstm", input, hx, w_ih, w_hh, b_ih, b_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step with PyTorch's gate equations.

    Example:
        >>> import torchish as torch
        >>> cell = torch.nn.GRUCell(4, 6)
        >>> cell(torch.randn(3, 4)).shape
        torch.Size([3, 6])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        self._check_dims(input, "input")
        self._check_dims(hx, "hidden")
        is_batched = input.ndim == 2
        if not is_batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        w_ih, w_hh, b_ih, b_hh = _autocast_operands(input, [self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh])
        hx, = _autocast_operands(input, [hx])
        ret = rnn_cell("gru", input, hx, w_ih, w_hh, b_ih, b_hh)
        return ret if is_batched else ret.squeeze(0)

