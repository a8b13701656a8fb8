"""``torch.ao.nn.quantized.dynamic``: modules whose weights are stored quantized and whose activations are quantized
on the fly, per call (``torch.ao.quantization.quantize_dynamic`` puts them in place of float modules)."""
from .linear import Linear as Linear  # noqa: F401
from .rnn import LSTM as LSTM  # noqa: F401

__all__ = ["Linear", "LSTM"]
