"""The samplers whose exactness depends on how XLA rounds multiply-adds, checked under XLA's DEFAULT flags.

The suite runs XLA at optimisation level 0 (tests/conftest.py), where XLA:CPU does not contract ``a * b + c`` into
an FMA; users' programs run at the default level, where it does. PyTorch's kernels fuse some multiply-adds and not
others, so torchish builds those roundings explicitly (``ops/_samplers.fma64``, ``ops/_avx_mathfun``, RReLU's
unfused product in ``ops/random_layout``). This test draws them in a subprocess with XLA's default flags and
compares with PyTorch bit for bit, so a regression that only the default flags show cannot pass the suite.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from oracle import needs_torch

SCRIPT = r"""
import json, warnings
import numpy as np, torch, torchish
warnings.simplefilter("ignore")
cases = {
    "rrelu_float64": lambda L: L.nn.functional.rrelu(L.linspace(-3, 1, 3000, dtype=L.float64), training=True),
    "uniform_float64": lambda L: L.empty(500, dtype=L.float64).uniform_(-0.37, 2.9),
    "uniform_float32_inexact_width": lambda L: L.empty(500).uniform_(-0.0924, 2.1098),
    "normal_float64": lambda L: L.empty(300, dtype=L.float64).normal_(0.3, 2.7),
    "randn_float32": lambda L: L.randn(40000),
    "normal_float32_scaled": lambda L: L.empty(999).normal_(0.3, 2.7),
    "linear_float64": lambda L: L.nn.Linear(7, 5, dtype=L.float64).weight,
    "cauchy_float64": lambda L: L.empty(300, dtype=L.float64).cauchy_(0.3, 2.7),
}
out = {}
for name, fn in cases.items():
    got = []
    for lib in (torch, torchish):
        lib.manual_seed(0)
        got.append((fn(lib).detach().numpy(), lib.rand(3).numpy()))
    (a, na), (b, nb) = got
    out[name] = int((a != b).sum()) + int((na != nb).sum())
print(json.dumps(out))
"""


@needs_torch
def test_contraction_sensitive_samplers_are_exact_under_default_xla_flags():
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    mismatches = json.loads(proc.stdout.strip().splitlines()[-1])
    assert mismatches == {name: 0 for name in mismatches}, mismatches
