"""The tests of tests/users_codegen.py, run under the XLA:CPU code generation users' programs get (its default
fusion emitters), in a subprocess: the suite itself compiles with the older emitters (tests/conftest.py)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from oracle import needs_torch
from users_codegen import TESTS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@needs_torch
@pytest.mark.skipif(bool(os.environ.get("TORCHISH_TEST_FUSION_EMITTERS")), reason="the suite runs these tests itself under the default emitters")
def test_codegen_sensitive_tests_pass_under_the_users_code_generation():
    flags = " ".join(f for f in os.environ.get("XLA_FLAGS", "").split() if "xla_cpu_use_fusion_emitters" not in f)
    env = dict(os.environ, XLA_FLAGS=flags, TORCHISH_TEST_FUSION_EMITTERS="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "-rs",
                           *sorted(TESTS)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    tail = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    counts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (passed|skipped|failed|error)", proc.stdout))
    assert counts == {"passed": len(TESTS)}, tail  # each listed test ran (a renamed one is an error, not a pass)
