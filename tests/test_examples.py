"""The examples run as shipped: each in its quick mode (``--quick``) as a subprocess, exit code 0 and its key line."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name, *args):
    env = dict(os.environ, TQDM_DISABLE="1")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{name} exited with {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_autograd_tour():
    out = run_example("autograd_tour.py")
    assert "v = [1, 10]: tensor([94., 61.])" in out
    assert "second derivative:" in out


def test_custom_function():
    out = run_example("custom_function.py", "--quick")
    for check in ("LinearFunction gradcheck: True", "LinearFunction gradgradcheck: True", "LogCosh gradcheck: True",
                  "LogCosh gradgradcheck: True", "SignSTE gradcheck (expected False): False",
                  "grad of a frozen weight: None", "once_differentiable"):
        assert check in out, check
    assert "held-out accuracy of the binary network:" in out


def test_gradient_penalty():
    out = run_example("gradient_penalty.py", "--quick")
    assert "Wasserstein estimate:" in out and "critic gradient norm at interpolates:" in out


def test_jit_training_loop():
    out = run_example("jit_training_loop.py", "--quick")
    assert "speed-up:" in out
    assert "losses equal: eager and compiled runs match" in out


def test_jax_interop():
    out = run_example("jax_interop.py", "--quick")
    assert "from_jax shares the buffer: True" in out
    assert "largest parameter difference between the two trainings:" in out
    assert "all checks passed" in out


@pytest.mark.slow
def test_video_classification(tmp_path):
    out = run_example("video_classification.py", "--quick", "--out", str(tmp_path))
    assert "held-out accuracy:" in out
    assert "reloaded model: identical held-out accuracy" in out
    assert os.path.exists(tmp_path / "video_classification.pt")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in out
    else:
        assert f"loss curve written to {tmp_path / 'loss_curve.png'}" in out
        assert (tmp_path / "loss_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
