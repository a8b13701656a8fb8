"""Divisions by a count or a constant, compared bit for bit with PyTorch's CPU kernels.

XLA rewrites ``x / c`` for a compile-time constant ``c`` (a count, a window size, a Python float) as ``x * (1 / c)``:
two roundings, an ulp off PyTorch's one true division in about half of the float32 results. ``mean`` (PyTorch:
``sum(...).div_(n)``), the losses' ``reduction="mean"``, average pooling's window divisors and ``x / 3.0`` must
divide. The inputs are multiples of 1/32 of at most a few hundred, so that every sum is exact in float32 whatever
order it is added in: only the division's rounding is compared (XLA's reduction order is another matter).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch, torch_one_thread

pytestmark = needs_torch

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _exact_sum_values(shape, seed=0):
    """Random multiples of 1/32 in about [-128, 128]: sums of up to ~1000 of them, and of their squares, are exact."""
    rng = np.random.default_rng(seed)
    return (np.round(rng.standard_normal(shape) * 32) / 32).astype(np.float32)


def _same_bits(f, *arrays, dtype="float32", compiled=False):
    ref = f(torch, torch.nn.functional, *[torch.tensor(a).to(getattr(torch, dtype)) for a in arrays])
    g = f
    if compiled:
        g = torchish.compile(lambda *ts: f(torchish, torchish.nn.functional, *ts))
    args = [torchish.tensor(a).to(getattr(torchish, dtype)) for a in arrays]
    got = g(*args) if compiled else f(torchish, torchish.nn.functional, *args)
    assert str(got.dtype) == str(ref.dtype)
    r, o = ref.detach().double().numpy(), got.detach().double().numpy()
    assert o.shape == r.shape
    differ = int((o != r).sum())
    assert differ == 0, f"{differ} of {r.size} elements differ from torch's"


MEANS = {
    "mean(1)": lambda t, F, x: x.mean(1),
    "mean(0)": lambda t, F, x: x.mean(0),
    "mean(1, keepdim)": lambda t, F, x: x.mean(1, keepdim=True),
    "mean((0, 1)) of 3-d": lambda t, F, x: x.reshape(10, 100, 7).mean((0, 2)),
    "torch.mean(dim=-1)": lambda t, F, x: t.mean(x, dim=-1),
    "mse_loss none then mean(1)": lambda t, F, x: F.mse_loss(x, x * 0.5, reduction="none").mean(1),
}


@pytest.mark.parametrize("name", sorted(MEANS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_mean_divides_the_sum(name, dtype):
    _same_bits(MEANS[name], _exact_sum_values((1000, 7)), dtype=dtype)


def test_mean_of_everything():
    x = _exact_sum_values(448)
    for n in (1, 3, 6, 9):  # one mean per element count (10, 24, 45, 66): divisors with inexact reciprocals
        _same_bits(lambda t, F, v: v.mean().reshape(1), x[:n * 7 + 3])


LOSSES = {
    "mse_loss": lambda t, F, x, y: F.mse_loss(x, y),
    "l1_loss": lambda t, F, x, y: F.l1_loss(x, y),
    "smooth_l1_loss": lambda t, F, x, y: F.smooth_l1_loss(x, y, beta=0.5),
    "huber_loss": lambda t, F, x, y: F.huber_loss(x, y, delta=2.0),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_loss_mean_divides_the_sum(name, dtype):
    x, y = _exact_sum_values((40, 7), 1), _exact_sum_values((40, 7), 2)
    for rows in (7, 40):  # counts 49 and 280: divisors whose reciprocals are inexact
        _same_bits(lambda t, F, a, b: LOSSES[name](t, F, a, b).reshape(1), x[:rows], y[:rows], dtype=dtype)


POOLS = {
    "avg_pool1d k3": lambda t, F, x: F.avg_pool1d(x.reshape(2, 5, 100), 3, 1),
    "avg_pool1d k5 s2 pad2 ceil": lambda t, F, x: F.avg_pool1d(x.reshape(2, 5, 100), 5, 2, 2, ceil_mode=True),
    "avg_pool2d k3 pad1": lambda t, F, x: F.avg_pool2d(x.reshape(2, 5, 10, 10), 3, 1, 1),
    "avg_pool2d k3 pad1 no count_include_pad": lambda t, F, x: F.avg_pool2d(x.reshape(2, 5, 10, 10), 3, 1, 1,
                                                                             count_include_pad=False),
    "avg_pool2d divisor_override 7": lambda t, F, x: F.avg_pool2d(x.reshape(2, 5, 10, 10), 3, divisor_override=7),
    "avg_pool3d k3 pad1": lambda t, F, x: F.avg_pool3d(x.reshape(1, 1, 10, 10, 10), 3, 1, 1),
}


@pytest.mark.parametrize("name", sorted(POOLS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool_divides_each_window(name, dtype):
    _same_bits(POOLS[name], _exact_sum_values(1000), dtype=dtype)


SCALARS = {
    "x / 3.0": lambda t, F, x: x / 3.0,
    "x / 255": lambda t, F, x: x / 255,
    "torch.div(x, 3.0)": lambda t, F, x: t.div(x, 3.0, rounding_mode=None),
    "x / 0-d tensor": lambda t, F, x: x / t.tensor(0.7),
    "x.div_(255)": lambda t, F, x: x.clone().div_(255),
}


@pytest.mark.parametrize("name", sorted(SCALARS))
def test_division_by_a_python_number(name):
    x = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    _same_bits(SCALARS[name], x)


COMPILED = {"x / 3.0": (SCALARS["x / 3.0"], (1000,)), "x / 255": (SCALARS["x / 255"], (1000,)),
            "mean(1)": (MEANS["mean(1)"], (1000, 7)),
            "mse_loss": (lambda t, F, x: F.mse_loss(x, x * 0.25).reshape(1), (40, 7)),
            "avg_pool2d k3 pad1": (POOLS["avg_pool2d k3 pad1"], (1000,)),
            # (its divisor is expand_as(norm): a broadcast inside the program, which XLA divided by through its
            # reciprocal; 203 of 1000 differed)
            "normalize": (lambda t, F, x: F.normalize(x, dim=1), (40, 25))}


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_programs_divide_too(name):
    """Under ``torchish.compile`` a Python number or a count is an HLO constant as well."""
    f, shape = COMPILED[name]
    _same_bits(f, _exact_sum_values(shape), compiled=True)


DEFAULT_FLAGS_SCRIPT = r"""
import json, warnings
import numpy as np, torch, torchish
warnings.simplefilter("ignore")
x = (np.round(np.random.default_rng(0).standard_normal((1000, 7)) * 32) / 32).astype(np.float32)
size = (2, 1, 4, 6, 7)
img = np.cos(np.arange(2 * 4 * 6 * 7) * 0.37).reshape(size)

def grid_sample_3d_pixel_centres(L):  # float64 points on pixel centres (align_corners=False)
    theta = L.eye(3, 4, dtype=L.float64).expand(2, 3, 4)
    grid = L.nn.functional.affine_grid(theta, size, align_corners=False)
    return L.nn.functional.grid_sample(L.tensor(img), grid, align_corners=False)

cases = {
    "mean(1)": lambda L: L.tensor(x).mean(1),
    "mse_loss": lambda L: L.nn.functional.mse_loss(L.tensor(x), L.tensor(x[::-1].copy())).reshape(1),
    "avg_pool1d": lambda L: L.nn.functional.avg_pool1d(L.tensor(x).reshape(1, 1, -1), 3, 1),
    "x / 3.0": lambda L: L.tensor(x) / 3.0,
    "grid_sample_3d": grid_sample_3d_pixel_centres,
}
out = {}
for name, fn in cases.items():
    a, b = (fn(lib).detach().numpy() for lib in (torch, torchish))
    out[name] = int((a != b).sum())
print(json.dumps(out))
"""


def test_divisions_and_3d_sampler_coordinates_under_default_xla_flags():
    """The suite runs XLA at optimisation level 0 (tests/conftest.py); at the default level XLA also contracts
    multiply-adds into FMAs (the 3-d grid sampler's ``(c + 1) * size - 1`` moved float64 points on a pixel centre
    to the other side of it) and simplifies more: these run in a subprocess with XLA's default flags."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    proc = subprocess.run([sys.executable, "-c", DEFAULT_FLAGS_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    mismatches = json.loads(proc.stdout.strip().splitlines()[-1])
    assert mismatches == {name: 0 for name in mismatches}, mismatches
