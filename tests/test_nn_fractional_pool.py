"""Fractional max pooling (``F.fractional_max_pool2d/3d``, ``nn.FractionalMaxPool2d/3d``) against PyTorch.

Both libraries get the same ``_random_samples``, so the pooling intervals, values, indices and gradients must match
exactly; the errors are PyTorch's, type and wording.
"""
from __future__ import annotations

import numpy as np
import pytest

from oracle import arr, assert_same, needs_torch, run_both, same_error, torch, torchish

pytestmark = needs_torch

# (nd, input shape, kernel_size, output_size): batched and unbatched, square and not, overlapping windows
_CASES = [
    (2, (2, 3, 11, 9), (2, 3), (5, 4)),
    (2, (3, 13, 10), 3, (6, 7)),
    (2, (1, 2, 6, 6), 2, 5),            # output + kernel - 1 == input: every window shifts by one
    (2, (1, 1, 7, 5), 2, 1),            # one window: the last one, at input - kernel
    (3, (1, 2, 9, 8, 7), (2, 3, 2), (4, 3, 5)),
    (3, (2, 7, 9, 6), 2, (3, 5, 4)),
]


def _samples(shape, nd, seed=3, values=None):
    batch = shape[0] if len(shape) == nd + 2 else 1
    size = (batch, shape[-nd - 1], nd)
    if values is not None:
        return np.resize(np.asarray(values, np.float32), size)
    return np.random.default_rng(seed).uniform(0, 1, size).astype(np.float32)


def _pool(lib, nd, x, s, kernel, output_size, dtype="float32", **kw):
    dt = getattr(lib, dtype)
    xt = lib.tensor(x).to(dt).requires_grad_(True)
    f = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
    out, idx = f(xt, kernel, output_size, return_indices=True, _random_samples=lib.tensor(s).to(dt), **kw)
    cot = np.random.default_rng(1).uniform(-1, 1, tuple(out.shape)).astype(np.float32)
    out.backward(lib.tensor(cot).to(dt))
    return out, idx, xt.grad, type(out.grad_fn).__name__


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("nd,shape,kernel,output_size", _CASES)
def test_values_indices_gradients(nd, shape, kernel, output_size, dtype):
    x, s = arr(*shape, seed=nd), _samples(shape, nd)
    ref, got = run_both(_pool, nd, x, s, kernel, output_size, dtype)
    assert_same(ref, got, rtol=0, atol=0)


@pytest.mark.parametrize("values", [[0.0, 0.0, 0.0], [0.5, 0.25, 0.75], [0.99999994, 0.375, 0.125],
                                    [0.3333333, 0.6666667, 0.9]])
@pytest.mark.parametrize("nd,shape,kernel,output_size", [(2, (1, 2, 10, 13), 2, (4, 6)),
                                                         (3, (1, 1, 10, 13, 7), 2, (4, 6, 3))])
def test_sample_edges(nd, shape, kernel, output_size, values):
    """Samples at 0, near 1 and at thirds: the truncations of ``(i + u) * alpha`` in the input's dtype."""
    x, s = arr(*shape, seed=2), _samples(shape, nd, values=values)
    for dtype in ("float32", "float64"):
        ref, got = run_both(_pool, nd, x, s, kernel, output_size, dtype)
        assert_same(ref, got, rtol=0, atol=0)


@pytest.mark.parametrize("nd", [2, 3])
def test_ties_and_nans(nd):
    """Ties pick the first maximum of a window (and its gradient); a NaN wins, the last one of the window."""
    shape = (2, 2, 7, 6) if nd == 2 else (1, 2, 6, 6, 6)
    x = np.floor(arr(*shape, seed=4, lo=0, hi=3))
    x.reshape(-1)[::7] = np.nan
    s = _samples(shape, nd, seed=5)
    ref, got = run_both(_pool, nd, x, s, 3, 3)
    assert_same(ref, got, rtol=0, atol=0)


def test_output_ratio_and_module():
    x, s = arr(2, 3, 10, 9, seed=6), _samples((2, 3, 10, 9), 2)

    def run(lib):
        m = lib.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.7), return_indices=True,
                                       _random_samples=lib.tensor(s))
        out, idx = m(lib.tensor(x))
        return repr(m), list(dict(m.named_buffers())), list(m.state_dict()), out, idx

    ref, got = run_both(run)
    assert_same(ref, got, rtol=0, atol=0)


def test_module_3d():
    x, s = arr(1, 2, 8, 7, 9, seed=7), _samples((1, 2, 8, 7, 9), 3)

    def run(lib):
        m = lib.nn.FractionalMaxPool3d((2, 3, 2), output_size=(4, 3, 5), _random_samples=lib.tensor(s))
        return repr(m), m(lib.tensor(x))

    ref, got = run_both(run)
    assert_same(ref, got, rtol=0, atol=0)


@pytest.mark.parametrize("nd", [2, 3])
def test_drawn_samples(nd):
    """Without ``_random_samples`` each call draws its own: the shape is torch's and every value is the input at its
    index, inside the plane."""
    shape = (2, 3, 9, 8) if nd == 2 else (2, 2, 7, 8, 6)
    x = arr(*shape, seed=8)
    f = getattr(torchish.nn.functional, f"fractional_max_pool{nd}d")
    out, idx = f(torchish.tensor(x), 2, output_ratio=(0.5,) * nd, return_indices=True)
    ref = getattr(torch.nn.functional, f"fractional_max_pool{nd}d")(torch.tensor(x), 2, output_ratio=(0.5,) * nd)
    assert tuple(out.shape) == tuple(ref.shape)
    planes = x.reshape(shape[0], shape[1], -1)
    i = idx.numpy().reshape(shape[0], shape[1], -1)
    assert i.min() >= 0 and i.max() < planes.shape[-1]
    np.testing.assert_array_equal(out.numpy().reshape(i.shape), np.take_along_axis(planes, i, axis=-1))


def _f(nd, shape, kernel, output_size, samples_shape=None, dtype="float32", sdtype=None, **kw):
    def run(lib):
        f = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        x = lib.zeros(shape, dtype=getattr(lib, dtype))
        s = None if samples_shape is None else lib.full(samples_shape, 0.5, dtype=getattr(lib, sdtype or dtype))
        return f(x, kernel, output_size, _random_samples=s, **kw)
    return run


_ERRORS = [
    _f(2, (1, 2, 7, 6), 2, None),                                    # neither output_size nor output_ratio
    _f(3, (1, 2, 5, 6, 7), 2, None),
    _f(2, (1, 2, 7, 6), 2, None, (1, 2, 2), output_ratio=0.5),       # len() of a float
    _f(2, (1, 2, 7, 6), 2, None, (1, 2, 2), output_ratio=(0.5, 0.5, 0.5)),
    _f(2, (1, 2, 7, 6), (2, 2, 2), 2, (1, 2, 2)),
    _f(2, (1, 2, 7, 6), 2, (2, 2, 2), (1, 2, 2)),
    _f(3, (1, 2, 5, 6, 7), (2, 2), 2, (1, 2, 3)),
    _f(3, (1, 2, 5, 6, 7), 2, (2, 2), (1, 2, 3)),
    _f(2, (7, 6), 2, 2, (1, 2, 2)),
    _f(2, (1, 1, 2, 7, 6), 2, 2, (1, 2, 2)),
    _f(3, (5, 6, 7), 2, 2, (1, 2, 3)),
    _f(2, (1, 2, 0, 6), 2, 2, (1, 2, 2)),
    _f(2, (1, 0, 7, 6), 2, 2, (1, 0, 2)),
    _f(3, (1, 2, 5, 0, 7), 2, 2, (1, 2, 3)),
    _f(2, (1, 2, 7, 6), 2, (7, 2), (1, 2, 2)),                       # height: output + kernel - 1 > input
    _f(2, (1, 2, 7, 6), 3, (5, 5), (1, 2, 2)),                       # width
    _f(3, (1, 2, 5, 6, 7), 2, (4, 2, 2), (1, 2, 3)),                 # time: 3-D needs output + kernel - 1 < input
    _f(3, (1, 2, 5, 6, 7), 2, (2, 5, 2), (1, 2, 3)),
    _f(3, (1, 2, 5, 6, 7), 2, (2, 2, 6), (1, 2, 3)),
    _f(2, (1, 2, 7, 6), 2, 2, (1, 2, 2), sdtype="float64"),
    _f(2, (1, 2, 7, 6), 2, 2, (2, 2)),
    _f(2, (2, 2, 7, 6), 2, 2, (1, 2, 2)),
    _f(2, (1, 2, 7, 6), 2, 2, (1, 3, 2)),
    _f(2, (1, 2, 7, 6), 2, 2, (1, 2, 3)),
    _f(3, (1, 2, 5, 6, 7), 2, 2, (1, 2, 2)),
    _f(2, (1, 2, 7, 6), 2.0, 2, (1, 2, 2)),
    _f(2, (1, 2, 7, 6), 2, (2.0, 2), (1, 2, 2)),
    _f(2, (1, 2, 7, 6), 2, 2, (1, 2, 2), dtype="int64"),
]


@pytest.mark.parametrize("i", range(len(_ERRORS)))
def test_errors(i):
    same_error(_ERRORS[i])


@pytest.mark.parametrize("make", [
    lambda nn: nn.FractionalMaxPool2d(2),
    lambda nn: nn.FractionalMaxPool3d(2),
    lambda nn: nn.FractionalMaxPool2d(2, 3, 0.5),
    lambda nn: nn.FractionalMaxPool3d(2, 3, 0.5),
    lambda nn: nn.FractionalMaxPool2d(2, output_ratio=1.0),
    lambda nn: nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.5, 0.5)),
    lambda nn: nn.FractionalMaxPool3d(0, output_size=2),
    lambda nn: nn.FractionalMaxPool3d((2, -1, 2), output_size=2),
])
def test_module_errors(make):
    same_error(lambda lib: make(lib.nn))


@pytest.mark.parametrize("kernel", [0, -1])
def test_empty_windows(kernel):
    """A kernel of 0 or less: PyTorch raises nothing and returns -inf at each window's corner."""
    x, s = arr(1, 2, 7, 6, seed=9), _samples((1, 2, 7, 6), 2)

    def run(lib):
        return lib.nn.functional.fractional_max_pool2d(lib.tensor(x), kernel, 3, return_indices=True,
                                                       _random_samples=lib.tensor(s))

    ref, got = run_both(run)
    assert_same(ref, got, rtol=0, atol=0)


def test_exports():
    for name in ("FractionalMaxPool2d", "FractionalMaxPool3d"):
        assert getattr(torchish.nn, name) is getattr(torchish.nn.modules.pooling, name)
        assert getattr(torchish.nn.modules, name) is getattr(torchish.nn, name)
    for name in ("fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
                 "fractional_max_pool3d_with_indices"):
        assert hasattr(torch.nn.functional, name)
        assert callable(getattr(torchish.nn.functional, name))
