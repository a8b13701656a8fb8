"""Device placement as on a GPU machine (JAX's default device is the accelerator, torchish's is the CPU).

The test session's JAX runs with one CPU device, so the checks run in ONE subprocess (``tests/_device_worker.py``)
with two host devices, the second standing for ``cuda``: creation without ``device=`` lands on the CPU (random
draws too), a model moved with ``.to("cuda")`` trains there in eager, lazy and compiled mode with every parameter,
gradient and optimizer state on its device, packed sequences keep their metadata on the CPU, tensors on two devices raise PyTorch's error (a 0-dim CPU tensor may
join, as in PyTorch), and a compiled step follows its model to another device.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_device_worker.py")
CHECKS = ("default_device_is_cpu", "training_stays_on_its_device", "varied_model_stays_on_its_device",
          "mixed_devices_raise_pytorch_error", "pinned_memory_and_type_names", "cpu_scalar_joins_accelerator_op",
          "compiled_step_follows_model_to_accelerator", "packed_sequences_keep_metadata_on_cpu",
          "eig_on_accelerator_keeps_column_major_vectors", "istft_and_ctc_loss_on_accelerator",
          "streams_and_events_on_accelerator")


def test_device_placement_and_same_numbers_on_every_device_and_path():
    """Every check of the worker passes, and the same seed gives the same dropout masks and losses on the CPU and
    the accelerator, eager, lazy and compiled (one generator stream for all devices).

    One test, not one per check: under pytest-xdist a module-scoped fixture runs once per worker that gets one of
    the module's tests, so the worker subprocess (nearly all of this file's time) ran on both CI workers."""
    proc = subprocess.run([sys.executable, WORKER], env=dict(os.environ), capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    checks = report["checks"]
    assert [name for name in CHECKS if name not in checks] == [], "the worker did not run these checks"
    failed = {name: result["detail"] for name, result in checks.items() if not result["ok"]}
    assert not failed, "\n".join(f"{name}:\n{detail}" for name, detail in failed.items())
    losses = report["losses"]
    assert sorted(losses) == sorted(f"{d}/{m}" for d in ("cpu", "cuda") for m in ("eager", "lazy", "compile"))
    ref = losses["cpu/eager"]
    assert ref[0] > ref[-1]  # it trains
    for name, got in losses.items():
        np.testing.assert_allclose(got, ref, rtol=1e-5, err_msg=name)
