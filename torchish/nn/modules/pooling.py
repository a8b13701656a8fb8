"""Pooling layers: max, average, adaptive, LP and fractional max pooling and max-unpooling in 1, 2 and 3 dimensions."""
from __future__ import annotations

from .. import functional as F
from .._functional import pooling as P
from .._functional import pooling_adaptive as A
from .._functional import pooling_fractional as FR
from .._functional.conv import ntuple
from ..module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


def _tuple(value, n):
    t = ntuple(value, n)
    return t * n if len(t) == 1 and n > 1 else t


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):  # (PyTorch's: F.max_pool{n}d, which subclasses, modes and fx proxies see)
        return getattr(F, f"max_pool{self._nd}d")(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                                  ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)``; ``return_indices=True`` also returns the argmax positions."""

    _nd = 1


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over ``(N, C, H, W)``.

    Example::

        >>> out, idx = torchish.nn.MaxPool2d(2, return_indices=True)(torchish.ones(1, 1, 4, 4))
        >>> out.shape, idx.dtype
        (torch.Size([1, 1, 2, 2]), torch.int64)
    """

    _nd = 2


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)``."""

    _nd = 3


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):  # (PyTorch's: F.avg_pool{2,3}d)
        return getattr(F, f"avg_pool{self._nd}d")(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                                  self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling over ``(N, C, L)``."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]
    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        Module.__init__(self)
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):  # (PyTorch's: F.avg_pool1d)
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling over ``(N, C, H, W)``.

    Example::

        >>> torchish.nn.AvgPool2d(3, stride=2, padding=1)(torchish.ones(1, 1, 5, 5)).shape
        torch.Size([1, 1, 3, 3])
    """

    _nd = 2


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling over ``(N, C, D, H, W)``."""

    _nd = 3


class _AdaptivePoolNd(Module):
    __constants__ = ["output_size"]
    _nd = 0

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(_AdaptivePoolNd):
    def forward(self, input):
        # (through the public function: its argument checks, a non-Tensor input first, are the module's)
        return getattr(A, f"adaptive_avg_pool{self._nd}d")(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output length, whatever the input length."""

    _nd = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed ``(H_out, W_out)`` (``None`` keeps that input size).

    Example::

        >>> torchish.nn.AdaptiveAvgPool2d((1, 1))(torchish.ones(2, 3, 7, 5)).shape
        torch.Size([2, 3, 1, 1])
    """

    _nd = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed ``(D_out, H_out, W_out)``."""

    _nd = 3


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return getattr(A, f"adaptive_max_pool{self._nd}d")(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output length."""

    _nd = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed ``(H_out, W_out)``."""

    _nd = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed ``(D_out, H_out, W_out)``."""

    _nd = 3


class _MaxUnpoolNd(Module):
    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        nd = self._nd
        self.kernel_size = _tuple(kernel_size, nd)
        self.stride = _tuple(stride if stride is not None else kernel_size, nd)
        self.padding = _tuple(padding, nd)

    def forward(self, input, indices, output_size=None):
        return A._max_unpool(self._nd, input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of :class:`MaxPool1d`: values go back to their argmax positions, zeros elsewhere."""

    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of :class:`MaxPool2d`.

    Example::

        >>> pool, unpool = torchish.nn.MaxPool2d(2, return_indices=True), torchish.nn.MaxUnpool2d(2)
        >>> unpool(*pool(torchish.ones(1, 1, 4, 4))).shape
        torch.Size([1, 1, 4, 4])
    """

    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of :class:`MaxPool3d`."""

    _nd = 3


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _nd = 0

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        lp_pool = getattr(P, f"lp_pool{self._nd}d")  # (their checks: PyTorch's modules call them, with a float p)
        return lp_pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """``(sum over each window of x**p) ** (1/p)`` over ``(N, C, L)``."""

    _nd = 1


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling."""

    _nd = 2


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling."""

    _nd = 3


def _repeat(value, n):
    """PyTorch's ``_pair``/``_triple``: a sequence as a tuple, anything else repeated ``n`` times."""
    return tuple(value) if isinstance(value, (list, tuple)) else (value,) * n


class _FractionalMaxPoolNd(Module):
    """Fractional max pooling (see ``torchish.nn.functional.fractional_max_pool2d``); ``_random_samples``, when
    given, is a buffer used at every call (else each call draws new samples)."""

    _nd = 0

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        nd = self._nd
        if nd == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or
                        (isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _repeat(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _repeat(output_size, nd) if output_size is not None else None
        self.output_ratio = _repeat(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio[:nd]):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        out, idx = FR._fractional(self._nd, input, self.kernel_size, self.output_size, self.output_ratio,
                                  self._random_samples)
        return (out, idx) if self.return_indices else out


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling over ``(N, C, H, W)``: ``kernel_size`` windows at pseudo-random positions giving
    ``output_size`` (or ``output_ratio`` of the input size) outputs.

    Example::

        >>> m = torchish.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
        >>> m(torchish.randn(2, 4, 10, 8)).shape
        torch.Size([2, 4, 5, 4])
    """

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling over ``(N, C, T, H, W)`` (see :class:`FractionalMaxPool2d`)."""

    _nd = 3
