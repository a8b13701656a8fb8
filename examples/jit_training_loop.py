"""The same training loop eager and under ``torch.compile``: time per step, speed-up, and equal losses.

An MLP classifier on synthetic data (Gaussian blobs) is trained twice from the same initial weights on the same
batches: once op by op (eager: every op a cached XLA kernel, backward node by node) and once with the whole step --
forward, ``loss.backward()``, ``optimizer.step()`` and ``zero_grad()`` -- compiled into one XLA program by
``torch.compile``. The script prints the steady-state time per step of each, the speed-up, the one-off compile
cost, and checks that both runs produced the same losses and the same final weights.

Run: ``python examples/jit_training_loop.py`` (``--quick``, or TORCHISH_EXAMPLE_QUICK=1, for fewer steps).
"""
from __future__ import annotations

import argparse
import copy
import os
import time

import numpy as np
from tqdm import tqdm

import torchish as torch
import torchish.nn as nn
import torchish.nn.functional as F

WARMUP = 3   # steps not timed: the first eager steps compile each op's kernel; the compiled run traces and compiles


def make_data(n_batches, batch, dim, classes, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 2.0, (classes, dim)).astype(np.float32)
    labels = rng.integers(0, classes, (n_batches, batch))
    points = centres[labels] + rng.normal(0, 1.0, (n_batches, batch, dim)).astype(np.float32)
    return [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in zip(points, labels)]


def make_model(dim, classes, hidden):
    return nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.LayerNorm(hidden),
                         nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, classes))


def run(model, batches, compiled, desc):
    """Train ``model`` on ``batches``; returns the losses and the seconds each step took."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss

    step = torch.compile(train_step) if compiled else train_step
    losses, times = [], []
    for x, y in tqdm(batches, desc=desc, ncols=90):
        start = time.perf_counter()
        loss = step(x, y).item()          # .item() waits for the step to finish
        times.append(time.perf_counter() - start)
        losses.append(loss)
    return losses, times


def main():
    p = argparse.ArgumentParser(description="eager vs compiled training step")
    p.add_argument("--quick", action="store_true", help="fewer steps (also TORCHISH_EXAMPLE_QUICK=1)")
    p.add_argument("--steps", type=int, default=None)
    args = p.parse_args()
    quick = args.quick or os.environ.get("TORCHISH_EXAMPLE_QUICK", "") not in ("", "0")
    steps = args.steps or (12 if quick else 200)
    dim, classes, hidden, batch = 32, 10, 256, 128

    torch.manual_seed(0)
    batches = make_data(steps, batch, dim, classes)
    eager_model = make_model(dim, classes, hidden)
    compiled_model = copy.deepcopy(eager_model)         # same initial weights

    eager_losses, eager_times = run(eager_model, batches, compiled=False, desc="eager")
    compiled_losses, compiled_times = run(compiled_model, batches, compiled=True, desc="compiled")

    eager_step = float(np.median(eager_times[WARMUP:]))
    compiled_step = float(np.median(compiled_times[WARMUP:]))
    print(f"eager:    {eager_step * 1e3:8.2f} ms/step (median over {steps - WARMUP} steps)")
    print(f"compiled: {compiled_step * 1e3:8.2f} ms/step; first steps (record + trace + compile) "
          f"{sum(compiled_times[:WARMUP]):.2f} s")
    print(f"speed-up: {eager_step / compiled_step:.1f}x")

    # XLA may fuse (and so round) a little differently from the eager kernels: equal up to float32 rounding
    loss_diff = float(np.max(np.abs(np.array(eager_losses) - np.array(compiled_losses))))
    weight_diff = max((a - b).abs().max().item()
                      for a, b in zip(eager_model.parameters(), compiled_model.parameters()))
    print(f"loss {eager_losses[0]:.4f} -> {eager_losses[-1]:.4f}; largest difference eager vs compiled: "
          f"losses {loss_diff:.2e}, weights {weight_diff:.2e}")
    if not np.allclose(eager_losses, compiled_losses, rtol=1e-5, atol=1e-6) or weight_diff > 1e-5:
        raise SystemExit("eager and compiled training diverged")
    print("losses equal: eager and compiled runs match")


if __name__ == "__main__":
    main()
