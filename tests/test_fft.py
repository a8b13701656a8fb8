"""torchish.fft, the signal windows, stft/istft and view_as_real/view_as_complex against PyTorch: values, dtypes,
shapes, gradients (through complex intermediates, in PyTorch's convention) and error types."""
import warnings

import numpy as np
import pytest

from oracle import arr, check, check_fd, check_raises, needs_torch, same, same_error, torch, torchish

X = arr(4, 6, seed=1)
Y = arr(4, 6, seed=2)


def _cplx(lib, x, y):
    return lib.complex(x, y)


def _loss_ready(out, lib):
    """A real tensor reading both parts of a complex result (check() backpropagates real outputs only)."""
    return lib.view_as_real(out.resolve_conj()) if out.is_complex() else out


TRANSFORMS = {
    "fft": lambda t, x, y: t.fft.fft(x),
    "fft_n_pad": lambda t, x, y: t.fft.fft(x, n=8, dim=0),
    "fft_n_trim": lambda t, x, y: t.fft.fft(x, n=3),
    "fft_complex": lambda t, x, y: t.fft.fft(_cplx(t, x, y)),
    "ifft": lambda t, x, y: t.fft.ifft(x),
    "ifft_ortho": lambda t, x, y: t.fft.ifft(_cplx(t, x, y), norm="ortho"),
    "fft2": lambda t, x, y: t.fft.fft2(x, norm="forward"),
    "ifft2": lambda t, x, y: t.fft.ifft2(_cplx(t, x, y)),
    "fftn_s": lambda t, x, y: t.fft.fftn(_cplx(t, x, y), s=(5, 4)),
    "ifftn_dim": lambda t, x, y: t.fft.ifftn(x, dim=(0,)),
    "rfft": lambda t, x, y: t.fft.rfft(x),
    "rfft_forward": lambda t, x, y: t.fft.rfft(x, n=5, norm="forward"),
    "rfft2": lambda t, x, y: t.fft.rfft2(x),
    "rfftn": lambda t, x, y: t.fft.rfftn(x, s=(3, 6)),
    "irfft": lambda t, x, y: t.fft.irfft(_cplx(t, x, y)),
    "irfft_n": lambda t, x, y: t.fft.irfft(_cplx(t, x, y), n=7, norm="ortho"),
    "irfft2": lambda t, x, y: t.fft.irfft2(_cplx(t, x, y)),
    "irfftn_s": lambda t, x, y: t.fft.irfftn(_cplx(t, x, y), s=(4, 5)),
    "hfft": lambda t, x, y: t.fft.hfft(_cplx(t, x, y)),
    "hfft2": lambda t, x, y: t.fft.hfft2(_cplx(t, x, y), norm="forward"),
    "ihfft": lambda t, x, y: t.fft.ihfft(x),
    "ihfft2": lambda t, x, y: t.fft.ihfft2(x, norm="ortho"),
    "fftshift": lambda t, x, y: t.fft.fftshift(x),
    "ifftshift_dim": lambda t, x, y: t.fft.ifftshift(x, dim=1),
    "rfft_irfft_roundtrip": lambda t, x, y: t.fft.irfft(t.fft.rfft(x), n=6),
    "float64": lambda t, x, y: t.fft.fft(x.double()),
    "int_input": lambda t, x, y: t.fft.fft(t.arange(6)) * x[0],
    "view_as_real": lambda t, x, y: t.view_as_real(_cplx(t, x, y)) * 3,
    "view_as_complex": lambda t, x, y: t.view_as_complex(x.reshape(4, 3, 2)) * (1 + 2j),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform(name):
    f = TRANSFORMS[name]
    check(lambda lib, x, y: _loss_ready(f(lib, x, y), lib), [X, Y])


def test_rfft_finite_differences():
    check_fd(lambda x: torchish.fft.irfft(torchish.fft.rfft(x) * torchish.tensor([1., 2., 3., 4.]), n=6).exp(),
             np.array([0.3, -0.2, 0.5, 0.1, -0.4, 0.7]))


def test_fft_values_known():
    out = torchish.fft.rfft(torchish.tensor([1., 2., 3., 4.]))
    np.testing.assert_allclose(out.numpy(), [10, -2 + 2j, -2], atol=1e-6)


ERRORS = {
    "rfft_complex": lambda t: t.fft.rfft(t.complex(t.ones(4), t.ones(4))),
    "n_zero": lambda t: t.fft.fft(t.ones(4), n=0),
    "irfft_n_zero": lambda t: t.fft.irfft(t.ones(4, dtype=t.complex64), n=0),
    "dim_range": lambda t: t.fft.fft(t.ones(4), dim=2),
    "half": lambda t: t.fft.fft(t.ones(4).half()),
    "norm": lambda t: t.fft.fft(t.ones(4), norm="bad"),
    "dims_unique": lambda t: t.fft.fftn(t.ones(2, 2), dim=(0, 0)),
    "s_dim_length": lambda t: t.fft.fftn(t.ones(2, 2), s=(2,), dim=(0, 1)),
    "scalar": lambda t: t.fft.fft(t.tensor(1.0)),
    "view_as_real_real": lambda t: t.view_as_real(t.ones(3)),
    "view_as_complex_last": lambda t: t.view_as_complex(t.ones(3, 3)),
    "view_as_complex_int": lambda t: t.view_as_complex(t.ones(3, 2, dtype=t.int64)),
    "view_as_complex_stride": lambda t: t.view_as_complex(t.ones(2, 3).t()),
    "window_negative": lambda t: t.hann_window(-1),
    "window_int": lambda t: t.hamming_window(4, dtype=t.int64),
    "stft_return_complex": lambda t: t.stft(t.ones(32), 8),
    "stft_window_size": lambda t: t.stft(t.ones(32), 8, window=t.ones(5), return_complex=True),
    "istft_real": lambda t: t.istft(t.ones(5, 3), 8),
    "istft_freq": lambda t: t.istft(t.ones(4, 3, dtype=t.complex64), 8),
    "istft_zero_envelope": lambda t: t.istft(t.stft(t.ones(32), 8, window=t.hann_window(8), center=False,
                                                    return_complex=True), 8, window=t.hann_window(8), center=False),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error(name):
    check_raises(ERRORS[name])


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
@pytest.mark.parametrize("length", [0, 1, 2, 7, 8])
def test_windows(name, length):
    same(lambda t: [getattr(t, name)(length), getattr(t, name)(length, periodic=False),
                    getattr(t, name)(length, dtype=t.float64)], rtol=1e-6, atol=1e-6)


def test_window_arguments():
    same(lambda t: [t.hamming_window(9, True, 0.5, 0.5), t.kaiser_window(9, False, beta=5.0)], rtol=1e-6, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("call", [lambda t: t.hamming_window(8, alpha=0.5), lambda t: t.hamming_window(8, beta=0.4),
                                  lambda t: t.hamming_window(8, True, beta=0.4), lambda t: t.kaiser_window(8, beta=5.0),
                                  lambda t: t.hamming_window(8, periodic=False, alpha=0.5, beta=0.4),
                                  lambda t: t.kaiser_window(8, periodic=False, beta=3.0)])
def test_window_optional_arguments_are_a_prefix(call):
    """PyTorch's window overloads take ``alpha`` only with ``periodic`` and ``beta`` only after them: skipping one is
    its argument parser's TypeError, worded alike (torchish took any keyword before); given in order they compute."""
    def first_line(lib):
        try:
            call(lib)
        except TypeError as e:
            return str(e).split("\n")[0]
        return None
    ref = first_line(torch)
    assert first_line(torchish) == ref
    if ref is None:
        same(call, rtol=1e-6, atol=1e-6)


def test_fftfreq():
    same(lambda t: [t.fft.fftfreq(5), t.fft.fftfreq(6, 0.5), t.fft.rfftfreq(7, 0.1),
                    t.fft.fftfreq(4, dtype=t.float64)])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_fftfreq_rounds_as_pytorch(dtype):
    """The frequencies are ``k * (1 / (n * d))`` in the result dtype, bit for bit PyTorch's (before, NumPy's float64
    values were rounded to float32 afterwards: the last bit differed in about half of these)."""
    torch = pytest.importorskip("torch")
    for n in (5, 7, 12, 39):
        for d in (0.1, 0.3, 1 / 7, 2.5):
            for name in ("fftfreq", "rfftfreq"):
                ref = getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype)).float().numpy()
                got = getattr(torchish.fft, name)(n, d, dtype=getattr(torchish, dtype)).float().numpy()
                np.testing.assert_array_equal(got, ref, err_msg=f"{name}({n}, {d}, dtype={dtype})")


def test_fftfreq_edge_sizes_and_spacings():
    """``n * d == 0`` gives infinities (NaN at zero) instead of ZeroDivisionError; a 0-dim Tensor ``d`` is a float;
    ``rfftfreq`` of a negative ``n`` sizes by C++'s truncating division."""
    same(lambda t: [t.fft.fftfreq(0), t.fft.fftfreq(0, d=0), t.fft.fftfreq(4, -0.0), t.fft.rfftfreq(0),
                    t.fft.rfftfreq(-1), t.fft.rfftfreq(-3), t.fft.fftfreq(3, float("inf")),
                    t.fft.fftfreq(3, d=t.tensor(2.0)), t.fft.fftfreq(5, True)])


FFTFREQ_ERRORS = {
    "negative_n": lambda t: t.fft.fftfreq(-1),
    "rfftfreq_negative_size": lambda t: t.fft.rfftfreq(-4),
    "integer_dtype": lambda t: t.fft.rfftfreq(5, dtype=t.int64),
    "bool_dtype": lambda t: t.fft.fftfreq(5, dtype=t.bool),
    "complex_dtype": lambda t: t.fft.fftfreq(5, dtype=t.complex64),
    "d_str": lambda t: t.fft.fftfreq(3, d="a"),
    "d_none": lambda t: t.fft.fftfreq(3, d=None),
    "d_vector": lambda t: t.fft.fftfreq(3, d=t.tensor([2.0])),
}


@pytest.mark.parametrize("name", sorted(FFTFREQ_ERRORS))
def test_fftfreq_errors(name):
    same_error(FFTFREQ_ERRORS[name])


SIGNAL = arr(2, 40, seed=3)

STFT = {
    "stft": lambda t, x: t.stft(x, 16, window=t.hann_window(16), return_complex=True),
    "stft_short_window": lambda t, x: t.stft(x, 16, hop_length=5, win_length=12, window=t.hann_window(12),
                                             return_complex=True),
    "stft_1d_not_centered": lambda t, x: t.stft(x[0], 8, center=False, window=t.hamming_window(8),
                                                return_complex=True, normalized=True),
    "stft_two_sided": lambda t, x: t.stft(x, 8, window=t.hann_window(8), onesided=False, return_complex=True),
    "stft_constant_pad": lambda t, x: t.stft(x, 8, window=t.hann_window(8), return_complex=True,
                                             pad_mode="constant"),
    "stft_method": lambda t, x: x.stft(8, window=t.hann_window(8), return_complex=True),
    "istft": lambda t, x: t.istft(t.stft(x, 16, window=t.hann_window(16), return_complex=True), 16,
                                  window=t.hann_window(16)),
    "istft_length": lambda t, x: t.istft(t.stft(x, 16, hop_length=4, window=t.hann_window(16),
                                                return_complex=True), 16, hop_length=4, window=t.hann_window(16),
                                         length=37),
    "istft_two_sided": lambda t, x: t.istft(t.stft(x, 8, window=t.hann_window(8), onesided=False,
                                                   return_complex=True), 8, window=t.hann_window(8), onesided=False),
}


@pytest.mark.parametrize("name", sorted(STFT))
def test_stft(name):
    f = STFT[name]
    check(lambda lib, x: _loss_ready(f(lib, x), lib), [SIGNAL])


def test_stft_real_output_warns():
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        out = torchish.stft(torchish.tensor(SIGNAL), 8, window=torchish.hann_window(8), return_complex=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(lambda t: t.stft(t.tensor(SIGNAL), 8, window=t.hann_window(8), return_complex=False))
    assert tuple(out.shape) == (2, 5, 21, 2)


def test_view_as_real_and_complex_write_through():
    def f(t):
        z = t.complex(t.ones(3), t.zeros(3))
        t.view_as_real(z)[:, 1] = 2.0
        r = t.zeros(2, 2)
        c = t.view_as_complex(r)
        c += 1j
        return z, r
    same(f)


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("dtype", ["bool", "int64"])
@pytest.mark.parametrize("center", [True, False])
def test_stft_of_a_non_float_input_fails_where_pytorch_does(dtype, center):
    """PyTorch's wrapper pads (center=True) before the kernel's dtype check: a bool input fails in reflection
    padding (NotImplementedError), otherwise the kernel's RuntimeError."""
    check_raises(lambda T: T.stft(T.ones(16, dtype=getattr(T, dtype)), 4, return_complex=True, center=center))
