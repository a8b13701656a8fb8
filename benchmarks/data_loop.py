"""A training loop as people write it: workload (a)'s model, a shuffled ``DataLoader`` over a ``TensorDataset``
(3200 samples, batch 32), a new batch every step, nothing waited for until the end of the epoch.

``workloads.py`` reuses one batch and waits for every step, which measures a step's latency. Here the loader's
cost, the per-batch value checks (a ``cross_entropy`` target) and the overlap of host work with the device's
execution all count, as they do in a real epoch. Systems: PyTorch eager, torchish default eager, torchish lazy
capture, torchish.compile, and hand-written ``jax.jit`` + optax whose batches are numpy slices of a permutation (the
idiomatic JAX input pipeline). Reports the median time per step over epochs, and the ratio to hand-written JAX.
Run: ``python benchmarks/data_loop.py [--epochs 5]``.
"""
from __future__ import annotations

import argparse
import contextlib
import platform
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

import torchish

sys.path.insert(0, __import__("os").path.dirname(__file__))
import handwritten  # noqa: E402
from workloads import WORKLOADS, build_model, execution_path  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SPEC = WORKLOADS["a"]
N = 3200


def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((N, SPEC["sizes"][0])).astype(np.float32), rng.integers(0, SPEC["sizes"][-1], N)


def framework_epoch(lib, compiled=False, lazy=False):
    """One epoch of the PyTorch-style loop with ``lib`` (torch or torchish; ``lazy``: torchish's lazy capture);
    returns the epoch's function."""
    X, Y = data()
    lib.manual_seed(0)
    model = build_model(lib, SPEC)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    F = lib.nn.functional
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.tensor(X), lib.tensor(Y)),
                                       batch_size=SPEC["batch"], shuffle=True)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    if compiled:
        step = torchish.compile(step)

    def epoch():
        with execution_path("auto", lazy) if lib is torchish else contextlib.nullcontext():
            for x, y in loader:
                loss = step(x, y)
            return float(loss.detach())  # (waits for the epoch's last step)
    return epoch, len(loader)


def jax_epoch():
    X, Y = data()
    model = build_model(torchish, SPEC)
    params = {n: p._d for n, p in model.named_parameters()}
    n_layers = len(SPEC["sizes"]) - 1
    tx = optax.adam(1e-3)

    @jax.jit
    def step(params, opt_state, x, y):
        loss, g = jax.value_and_grad(lambda p: handwritten._xent(handwritten.mlp_forward(p, x, n_layers), y))(params)
        updates, opt_state = tx.update(g, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss
    state = [params, tx.init(params)]
    rng = np.random.default_rng(1)
    b = SPEC["batch"]

    def epoch():
        perm = rng.permutation(N)
        for i in range(0, N, b):
            idx = perm[i:i + b]
            state[0], state[1], loss = step(state[0], state[1], X[idx], Y[idx])
        return float(loss)
    return epoch, -(-N // b)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args(argv)
    systems = {"torchish default": lambda: framework_epoch(torchish),
               "torchish lazy": lambda: framework_epoch(torchish, lazy=True),
               "torchish.compile": lambda: framework_epoch(torchish, compiled=True),
               "jax.jit + optax (hand-written)": jax_epoch}
    if torch is not None:
        torch.set_num_threads(torch.get_num_threads())
        systems["PyTorch eager"] = lambda: framework_epoch(torch)
    epochs = {}
    for name, make in systems.items():
        epochs[name] = make()
        epochs[name][0]()  # (the first epoch compiles)
    times = {name: [] for name in systems}
    for _ in range(args.epochs):  # epochs of each system in turn, so a drifting machine slows all alike
        for name, (epoch, steps) in epochs.items():
            t0 = time.perf_counter()
            epoch()
            times[name].append((time.perf_counter() - t0) / steps)
    ref = statistics.median(times["jax.jit + optax (hand-written)"])
    print(f"\n### {SPEC['desc']}: an epoch of {N} samples through a shuffled DataLoader, no wait per step")
    print("| system | median us/step | vs hand-written JAX |")
    print("|---|---|---|")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"| {name} | {med * 1e6:.0f} | {med / ref:.2f}x |")
    print(f"\n{platform.machine()}, {jax.devices()[0].device_kind}, jax {jax.__version__}, "
          f"torch {getattr(torch, '__version__', '-')}, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
