"""Signal windows and the short-time Fourier transform: ``hann_window`` & co., ``stft``, ``istft``.

The windows repeat PyTorch's sequence of ops in the requested dtype (``arange``, a multiply by a scalar, ``cos``,
...), each result rounded to it as PyTorch's kernels round (half types compute each op in float32); the Kaiser
window is computed in float64 and rounded. ``stft`` frames the (centre-padded) signal with ``unfold``, multiplies by
the window and transforms each frame with :mod:`torchish.fft`; ``istft`` inverts each frame, overlap-adds them with
``index_add`` and divides by the summed squared window, as PyTorch does — all differentiable.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._global_flags import warn_once
from .. import _dtype
from . import creation as _creation, tracing
from .registry import Family as _Family

_public = _Family(globals()).public


# ----------------------------------------------------------------------------------------------------------------
# windows


class _Arith:
    """PyTorch's CPU arithmetic in one floating dtype, on numpy: every op's result rounded to ``dt`` (the half types
    compute in float32, their opmath type, and round each result), Python scalars taken in the compute type, ``cos``
    rounded from float64. This gives PyTorch's float64 windows exactly and its float32 ones up to a last bit of
    its vectorised ``cos`` in a few percent of the elements (computing the formulas in float64 and rounding once
    differed from most of them); its half-type windows differ in a last bit more often."""

    def __init__(self, dt):
        self.store = dt.np
        self.ct = np.float64 if dt.np == np.float64 else np.float32

    def r(self, v):
        return np.asarray(v, dtype=self.ct).astype(self.store).astype(self.ct)

    def s(self, scalar):
        return self.ct(scalar)

    def cos(self, v):
        return self.r(np.cos(v.astype(np.float64)))


def _window(name, length, periodic, dtype, device, requires_grad, values):
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={length}")
    dt = dtype or _dtype.DEFAULTS.float
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if length == 0:
        w = np.zeros(0)
    elif length == 1:
        w = np.ones(1)
    else:
        n = length + 1 if periodic else length
        a = _Arith(dt)
        w = values(a, a.r(np.arange(n)), n)[:length]
    return _creation.place(w, dt, device, requires_grad)


def _hamming(a, k, n, alpha, beta):
    """PyTorch's ``arange(n).mul_(2 pi / (n - 1)).cos_().mul_(-beta).add_(alpha)``."""
    return a.r(a.r(a.cos(a.r(k * a.s(math.pi * 2.0 / (n - 1)))) * a.s(-beta)) + a.s(alpha))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda a, k, n: _hamming(a, k, n, 0.5, 0.5))


_UNSET = object()


def _overloads(name, given, defaults):
    """PyTorch's window overloads take their optional arguments as a prefix (``alpha`` only with ``periodic``,
    ``beta`` only with ``alpha``): ``given`` maps each optional parameter, in order, to its value or ``_UNSET``.
    The values (``defaults`` where not given), or its argument parser's TypeError where one is skipped."""
    names = list(given)
    have = [given[n] is not _UNSET for n in names]
    cut = have.index(False) if False in have else len(have)
    if not any(have[cut:]):
        return [d if v is _UNSET else v for v, d in zip(given.values(), defaults)]
    got = ["int"] + [type(given[n]).__name__ for n in names[:cut]]
    got += [f"{n}={type(given[n]).__name__}" for n, h in zip(names[cut:], have[cut:]) if h]
    kw = ("*, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
          "bool pin_memory = False, bool requires_grad = False")
    lines = []
    for k in range(len(names) + 1):
        params = ["int window_length"] + [("bool " if n == "periodic" else "float ") + n for n in names[:k]]
        lines.append(f" * ({', '.join(params + [kw])})")
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but expected "
                    "one of:\n" + "\n".join(lines))


def hamming_window(window_length, periodic=_UNSET, alpha=_UNSET, beta=_UNSET, *, dtype=None, layout=None,
                   device=None, requires_grad=False):
    periodic, alpha, beta = _overloads("hamming_window", {"periodic": periodic, "alpha": alpha, "beta": beta},
                                       (True, 0.54, 0.46))
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda a, k, n: _hamming(a, k, n, alpha, beta))


def _blackman(a, k, n):
    """PyTorch's ``w = arange(n).mul_(pi / (n - 1))``, ``w.mul(4).cos_().mul_(0.08) - w.mul(2).cos_().mul_(0.5) +
    0.42``."""
    w = a.r(k * a.s(math.pi / (n - 1)))
    return a.r(a.r(a.r(a.cos(a.r(w * a.s(4))) * a.s(0.08)) - a.r(a.cos(a.r(w * a.s(2))) * a.s(0.5))) + a.s(0.42))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, _blackman)


def _bartlett(a, k, n):
    """PyTorch's ``w = arange(n).mul_(2 / (n - 1))`` with its second half (from ``(n - 1) // 2 + 1``) turned into
    ``2 - w`` by ``mul_(-1).add_(2)``."""
    w = a.r(k * a.s(2.0 / (n - 1)))
    h = ((n - 1) >> 1) + 1
    w[h:] = a.r(a.r(w[h:] * a.s(-1)) + a.s(2))
    return w


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, _bartlett)


def kaiser_window(window_length, periodic=_UNSET, beta=_UNSET, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    periodic, beta = _overloads("kaiser_window", {"periodic": periodic, "beta": beta}, (True, 12.0))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda a, k, n: _kaiser(np.arange(n, dtype=np.float64), (n - 1) / 2, beta))


def _kaiser(k, half, beta):
    return np.i0(beta * np.sqrt(np.clip(1 - ((k - half) / half) ** 2, 0, None))) / np.i0(beta)


for _n in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"):
    _public(_n, globals()[_n], method=False)


# ----------------------------------------------------------------------------------------------------------------
# stft / istft


def _frame_window(window, win_length, n_fft, like):
    """The window (ones when None), zero-padded on both sides to ``n_fft`` as PyTorch centres it (its shape checked
    by :func:`_check_window` first)."""
    if window is None:
        window = _creation.ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    if win_length < n_fft:
        from ..nn.functional import pad
        left = (n_fft - win_length) // 2
        window = pad(window, (left, n_fft - win_length - left))
    return window


def _call(name, x, n_fft, hop, win, window, flags):
    """PyTorch's description of an stft/istft call, which starts its messages about bad lengths:
    ``stft(torch.FloatTensor[2, 48], n_fft=8, hop_length=0, ..., align_to_window=None)``."""
    def text(v):
        return "None" if v is None else str(int(v)) if isinstance(v, bool) else str(v)
    w = "None" if window is None else f"{_dtype.cpp_tensor_type_name(window.dtype)}{{{list(window.shape)}}}"
    args = "".join(f", {k}={text(v)}" for k, v in flags)
    return (f"{name}({_dtype.cpp_tensor_type_name(x.dtype)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}{args})")


def _check_window(window, win, call, name):
    """A window given must be 1-d and ``win_length`` long: PyTorch's stft and istft word it each their own way,
    after the call's description."""
    if window is None or (window.ndim == 1 and window.shape[0] == win):
        return
    if name == "stft":
        raise RuntimeError(f"{call} : expected a 1D window tensor of size equal to win_length={win}, but got "
                           f"window with size {list(window.shape)}")
    raise RuntimeError(f"{call} : Invalid window shape. window has to be 1D and length of `win_length`")


def _lengths(n_fft, hop_length, win_length, name, x, window, flags):
    """The hop and window lengths (defaults n_fft // 4 and n_fft), checked as PyTorch's stft/istft check them, and
    the call's description that starts PyTorch's messages."""
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    call = _call(name, x, n_fft, hop, win, window, flags)
    if name == "stft":
        if not 0 < n_fft <= x.shape[-1]:
            raise RuntimeError(f"{call} : expected 0 < n_fft < {x.shape[-1]}, but got n_fft={n_fft}")
        if hop <= 0:
            raise RuntimeError(f"{call} : expected hop_length > 0, but got hop_length={hop}")
        if not 0 < win <= n_fft:
            raise RuntimeError(f"{call} : expected 0 < win_length <= n_fft, but got win_length={win}")
    else:
        if not 0 < hop <= win:
            raise RuntimeError(f"{call} : expected 0 < hop_length <= win_length")
        if not 0 < win <= n_fft:
            raise RuntimeError(f"{call} : expected 0 < win_length <= n_fft")
    return hop, win, call


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """PyTorch's ``torch.stft``: ``(..., n_freq, n_frames)`` complex (or ``(..., 2)`` real with
    ``return_complex=False``). ``align_to_window=True`` (with ``center=False`` only) starts each frame where its
    window starts: frame ``t`` is ``input[t * hop : t * hop + win_length]``, windowed, in the middle of ``n_fft``."""
    from .. import fft as _fft
    from ..nn.functional import pad
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D tensor")
    x = input
    if center:  # (PyTorch's Python wrapper pads before the kernel's checks and warnings: a bool input fails in the padding)
        x = pad(x.view((1,) * (3 - x.ndim) + tuple(x.shape)), (n_fft // 2, n_fft // 2), mode=pad_mode)
        x = x.view(x.shape[3 - input.ndim:])
    if window is None:
        warn_once("A window was not provided. A rectangular window will be applied,which is known to cause "
                  "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                  "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                  "explicitly set `window=torch.ones(n_fft, device=<device>)`.", stacklevel=2)
    if return_complex is None:
        if not (input.is_complex() or (window is not None and window.is_complex())):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warn_once("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                  "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                  "still call torch.view_as_real on the complex output to recover the old return format.",
                  stacklevel=2)
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError("stft: expected a tensor of floating point or complex values")
    hop, win, call = _lengths(int(n_fft), hop_length, win_length, "stft", x, window,
                              (("normalized", bool(normalized)), ("onesided", onesided),
                               ("return_complex", bool(return_complex)), ("align_to_window", align_to_window)))
    _check_window(window, win, call, "stft")
    if align_to_window and win < n_fft:  # (the frames as if win_length long; zeros where the window is zero)
        left = (n_fft - win) // 2
        x = pad(x, (left, n_fft - win - left))
    # PyTorch's kernel: a 1-d signal as a batch of one, its frames (times the window, where there is one) through
    # one FFT, then transpose_(1, 2) and squeeze_(0) in place: the nodes scripts see
    frames = (x.unsqueeze(0) if x.ndim == 1 else x).unfold(-1, n_fft, hop)
    if window is not None or win < n_fft:
        frames = frames * _frame_window(window, win, n_fft, x)
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    onesided = (not complex_in) if onesided is None else onesided
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = (_fft.rfft if onesided else _fft.fft)(frames, dim=-1, norm=norm).transpose_(1, 2)
    if input.ndim == 1:
        spec.squeeze_(0)
    if return_complex:
        return spec
    from .shape import view_as_real
    return view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """PyTorch's ``torch.istft``: the least-squares inverse of :func:`stft` (overlap-add over the squared window)."""
    from .. import fft as _fft
    from . import creation, scatter
    if window is None:
        warn_once("A window was not provided. A rectangular window will be applied.Please provide the same window "
                  "used by stft to make the inversion lossless.To suppress this warning and use a rectangular "
                  "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", stacklevel=2)
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex type, but got "
                           f"{input.ndim}D")
    hop, win, call = _lengths(int(n_fft), hop_length, win_length, "istft", input, window,
                              (("center", bool(center)), ("normalized", bool(normalized)), ("onesided", onesided),
                               ("length", length), ("return_complex", bool(return_complex))))
    n_freq, n_frames = input.shape[-2], input.shape[-1]
    onesided = (n_freq != n_fft) if onesided is None else onesided
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError(f"{call} : expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft / 2 + 1 when onesided=True, but got {n_freq}")
    if not onesided and n_freq != n_fft:
        raise RuntimeError(f"{call} : expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft when onesided=False, but got {n_freq}")
    _check_window(window, win, call, "istft")
    w = _frame_window(window, win, n_fft, input)
    norm = "ortho" if normalized else "backward"
    # (PyTorch's istft works on a batch: an unbatched input is unsqueezed, and the signal squeezed back before any
    # padding, so its result's node is SqueezeBackward1 or ConstantPadNdBackward0, as here)
    batched = input.ndim == 3
    spec = (input if batched else input.unsqueeze(0)).transpose(-1, -2)
    if onesided:
        if return_complex:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _fft.irfft(spec, n=n_fft, dim=-1, norm=norm)
    else:
        frames = _fft.ifft(spec, n=n_fft, dim=-1, norm=norm)
        if not return_complex:
            frames = frames.real
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    dev = input.device
    idx = (creation.arange(n_frames, device=dev).unsqueeze(1) * hop + creation.arange(n_fft, device=dev)).reshape(-1)
    lead = frames.shape[:-2]
    y = creation.zeros(*lead, total, dtype=frames.dtype, device=frames.device)
    y = scatter.index_add(y, -1, idx, frames.reshape(*lead, -1))
    env = scatter.index_add(creation.zeros(total, dtype=w.dtype.to_real(), device=dev), 0, idx,
                            (w.abs() ** 2 if w.is_complex() else w * w).repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center and length is None else total if length is None else start + int(length)
    env_part = env[start:min(end, total)]
    _check_nola(env_part.abs(), call)
    y = y[..., start:min(end, total)] / env_part
    if not batched:
        y = y.squeeze(0)
    if end > total:
        from ..nn.functional import pad
        y = pad(y, (0, end - total))
    return y


def _check_nola(low, call):
    """PyTorch's NOLA check: the window's overlap-added square must not vanish where the signal is kept. Its
    message prints the failed comparison, a 0-d bool tensor: ``istft(...) window overlap add min: 1\n[ CPUBoolType{}
    ]``. Traced (inside torchish.compile), the check runs before each run of the program instead of breaking the
    graph."""
    message = f"{call} window overlap add min: 1\n[ CPUBoolType{{}} ]"
    d = low._d
    if isinstance(d, jax.core.Tracer):
        if d.size:
            tracing.defer_check(d < 1e-11, jnp.broadcast_to(jnp.min(d), d.shape), RuntimeError, lambda b: message)
        return
    if bool((low < 1e-11).any()):
        raise RuntimeError(message)


_public("stft", stft)
_public("istft", istft)
