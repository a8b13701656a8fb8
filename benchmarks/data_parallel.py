"""Data parallelism: per-step time of one compiled training step on 1 vs 8 host devices.

The model is compute-bound (an MLP of width 1024, batch 256 rows per step): ``DistributedDataParallel`` splits the
batch over the devices and XLA all-reduces the gradients inside the one compiled step. On a CPU host the "devices"
are XLA's simulated host devices (``--xla_force_host_platform_device_count``) sharing the host's cores: the
speed-up is bounded by the core count, and each device count runs in its own process because JAX fixes the device
count when it starts. Reports milliseconds per step (median of 5 timings) and the ratio.
Run: ``python benchmarks/data_parallel.py [--quick]``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time


def child(devices, width, batch, reps):
    """Run in a fresh process with ``devices`` host devices: time the compiled DDP step."""
    import numpy as np

    import torchish as torch
    import torchish.distributed as dist
    from torchish.nn.parallel import DistributedDataParallel as DDP

    rng = np.random.default_rng(0)
    layers = []
    for i in range(4):
        layers += [torch.nn.Linear(width, width), torch.nn.Tanh()]
    model = DDP(torch.nn.Sequential(*layers, torch.nn.Linear(width, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    @torch.compile
    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    x = dist.shard_batch(torch.tensor(rng.standard_normal((batch, width)).astype(np.float32)))
    y = dist.shard_batch(torch.tensor(rng.standard_normal((batch, 1)).astype(np.float32)))
    for _ in range(3):  # record, compile, warm
        step(x, y).item()
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            loss = step(x, y)
        loss.item()
        samples.append((time.perf_counter() - t0) / reps)
    return {"devices": dist.default_mesh().size(), "ms_per_step": 1e3 * statistics.median(samples)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller model and fewer repetitions")
    parser.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    width, batch, reps = (512, 128, 3) if args.quick else (1024, 256, 10)
    if args.child:
        print(json.dumps(child(args.child, width, batch, reps)))
        return 0
    results = []
    for devices in (1, 8):
        env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}", JAX_PLATFORMS="cpu")
        cmd = [sys.executable, os.path.abspath(__file__), f"--child={devices}"] + (["--quick"] if args.quick else [])
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    one, eight = results
    print(f"data-parallel compiled step, MLP width {width}, batch {batch}, {platform.machine()} "
          f"with {os.cpu_count()} CPU cores")
    for r in results:
        print(f"  {r['devices']} device(s): {r['ms_per_step']:8.2f} ms/step")
    print(f"  speed-up 8 vs 1: {one['ms_per_step'] / eight['ms_per_step']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
