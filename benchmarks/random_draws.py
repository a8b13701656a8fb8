"""Seeded random draws, eager: torchish vs PyTorch vs a jitted ``jax.random`` call, side by side in one run.

torchish draws PyTorch's own numbers (mt19937 and PyTorch's CPU samplers, run as one jitted kernel per draw), so
its cost is that kernel's call: the generator state in and out, a twist of the state per 624 words, the sampler.
The JAX column is what a hand-written JAX program pays for the same shape: one jitted threefry draw from a key
(other numbers than PyTorch's). Every case waits for its result. Also timed: the first draw of a new shape (the
kernels it compiles). Run: ``python benchmarks/random_draws.py [--quick]``.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import torchish

sys.path.insert(0, __import__("os").path.dirname(__file__))
from overhead import interleaved  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def cases_for(lib, x):
    """``name -> draw`` for torchish (lib) or torch; ``x`` a (32, 64) tensor for dropout."""
    drop = lib.nn.Dropout(0.1)
    return {
        "rand(3)": lambda: lib.rand(3),
        "rand(32, 64)": lambda: lib.rand(32, 64),
        "randn(32, 64)": lambda: lib.randn(32, 64),
        "randn(400000)": lambda: lib.randn(400000),
        "Dropout(0.1) on (32, 64)": lambda: drop(x),
        "randint(0, 10, (32,))": lambda: lib.randint(0, 10, (32,)),
        "randperm(3200)": lambda: lib.randperm(3200),
    }


def jax_cases():
    key = jax.random.key(0)
    uni = jax.jit(lambda k, shape: jax.random.uniform(k, shape), static_argnums=1)
    nor = jax.jit(lambda k, shape: jax.random.normal(k, shape), static_argnums=1)
    x = jnp.ones((32, 64))
    drop = jax.jit(lambda k, x: jnp.where(jax.random.bernoulli(k, 0.9, x.shape), x / 0.9, 0))
    rint = jax.jit(lambda k: jax.random.randint(k, (32,), 0, 10))
    perm = jax.jit(lambda k: jax.random.permutation(k, 3200))
    return {
        "rand(3)": lambda: uni(key, (3,)),
        "rand(32, 64)": lambda: uni(key, (32, 64)),
        "randn(32, 64)": lambda: nor(key, (32, 64)),
        "randn(400000)": lambda: nor(key, (400000,)),
        "Dropout(0.1) on (32, 64)": lambda: drop(key, x),
        "randint(0, 10, (32,))": lambda: rint(key),
        "randperm(3200)": lambda: perm(key),
    }


def waited(fn, system):
    if system == "torch":
        return fn
    if system == "jax":
        return lambda: fn().block_until_ready()
    return lambda: fn()._d.block_until_ready()


def first_draw_ms(lib, shape):
    """Milliseconds of the first ``uniform_`` of a new shape (nn.init's kaiming_uniform_ of a Linear weight)."""
    w = lib.empty(shape)
    t0 = time.perf_counter()
    w.uniform_(-0.1, 0.1)
    if lib is torchish:
        w._d.block_until_ready()
    return (time.perf_counter() - t0) * 1e3


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    reps = 5 if args.quick else 50
    torchish.manual_seed(0)
    systems = {"torchish": cases_for(torchish, torchish.ones(32, 64)), "jax": jax_cases()}
    if torch is not None:
        torch.manual_seed(0)
        systems["torch"] = cases_for(torch, torch.ones(32, 64))
    timed = {}
    for system, cases in systems.items():
        for name, fn in cases.items():
            timed[(name, system)] = (waited(fn, system), max(1, reps // 10) if "400000" in name else reps)
    res = interleaved(timed, rounds=3 if args.quick else 7)
    print(f"# seeded eager draws, {platform.machine()} {jax.devices()[0].platform}, jax {jax.__version__}, "
          f"torch {getattr(torch, '__version__', '-')}; median us per draw, result waited for")
    print("| draw | torchish | PyTorch | jitted jax.random | torchish / PyTorch | torchish / jax.random |")
    print("|---|---|---|---|---|---|")
    for name in systems["torchish"]:
        t, j, p = (res.get((name, s)) for s in ("torchish", "jax", "torch"))
        print(f"| {name} | {t * 1e6:.1f} | {p * 1e6 if p else float('nan'):.1f} | {j * 1e6:.1f} | "
              f"{t / p if p else float('nan'):.1f}x | {t / j:.1f}x |")
    shape = (37, 53)
    line = f"first uniform_ of a new shape {shape}: torchish {first_draw_ms(torchish, shape):.0f} ms (kernels compile)"
    if torch is not None:
        line += f", PyTorch {first_draw_ms(torch, shape):.2f} ms"
    print(line)
    line = f"first construction of a model with 8 layers of new sizes: torchish {first_build_s(torchish):.2f} s"
    if torch is not None:
        line += f", PyTorch {first_build_s(torch):.3f} s"
    print(line + " (default initialisation: each new size class compiles its sampler)")


def first_build_s(lib):
    nn = lib.nn
    t0 = time.perf_counter()
    layers = [nn.Linear(701, 509), nn.Linear(509, 251), nn.Linear(251, 11), nn.Conv2d(3, 17, 3), nn.Conv2d(17, 31, 3),
              nn.LSTM(31, 61), nn.Embedding(97, 31), nn.LayerNorm(61)]
    if lib is torchish:
        jax.block_until_ready([p._d for m in layers for p in m.parameters()])
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
