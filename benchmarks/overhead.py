"""Per-op eager overhead: torchish vs raw jax.numpy vs PyTorch, side by side in one run.

Measures (small 16x16 float32 tensors, so dispatch dominates):
  * one elementwise op (``a * b``) forward, its value read at once;
  * a chain of ~50 elementwise ops forward;
  * the same chain forward + backward (torchish and torch: ``loss.backward()``; jax.numpy: an eager
    ``jax.vjp`` per call, which is what a user without jit would write).
Reports microseconds per op and the ratios. Every case waits for its result (``block_until_ready``; on a GPU,
``torch.cuda.synchronize()``), and PyTorch runs on the GPU when JAX does. Run: ``python benchmarks/overhead.py [--quick]``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import platform
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import torchish

sys.path.insert(0, __import__("os").path.dirname(__file__))
from devices import torch_sync as sync, use_accelerator  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def interleaved(cases, rounds=7, warmup=3):
    """Median seconds per call of each case ``name -> (fn, reps[, lazy])``. The cases are timed round-robin
    (``reps`` calls of each in turn, ``rounds`` times) so that a machine whose speed drifts slows every system
    alike. ``lazy``: torchish's lazy capture on or off for the case's calls (set around them, not per call)."""
    samples = {name: [] for name in cases}
    for r in range(-1, rounds):
        for name, (fn, reps, *lazy) in cases.items():
            with on_path(*lazy):
                if r < 0:
                    for _ in range(warmup):
                        fn()
                    continue
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn()
                samples[name].append((time.perf_counter() - t0) / reps)
    return {name: statistics.median(v) for name, v in samples.items()}


@contextlib.contextmanager
def on_path(lazy=None):
    """Lazy capture on or off (per-op dispatch, the default) inside the block, the setting restored after; None
    leaves it alone (the other libraries' cases)."""
    saved = torchish.config.lazy
    if lazy is not None:
        torchish.config.lazy = lazy
    try:
        yield
    finally:
        torchish.config.lazy = saved


def chain(lib_ops, x, y):
    """25 rounds of (mul, add): 50 elementwise ops, plus sin/tanh to keep values bounded."""
    h = x
    for i in range(12):
        h = lib_ops.tanh(h * y + x)          # mul, add, tanh
        h = lib_ops.sin(h) * 0.5 + h * 0.25  # sin, mul, mul, add
    return h  # 12 * 7 = 84 ops? kept as N_OPS below


N_OPS = 12 * 7


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    reps = 20 if args.quick else 200
    use_accelerator()
    a = np.random.default_rng(0).uniform(-1, 1, (16, 16)).astype(np.float32)
    b = np.random.default_rng(1).uniform(-1, 1, (16, 16)).astype(np.float32)
    cases = {}

    # --- one op
    xa, xb = torchish.tensor(a), torchish.tensor(b)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    cases["op/torchish"] = (lambda: (xa * xb)._d.block_until_ready(), reps * 5, False)
    cases["op/torchish lazy"] = (lambda: (xa * xb)._d.block_until_ready(), reps * 5, True)
    cases["op/jax.numpy"] = (lambda: (ja * jb).block_until_ready(), reps * 5)
    # the floor of any per-op dispatch through JAX: a cached jitted kernel called with its arrays, no Python around
    # it (no promotion, no wrapper objects, no autograd); jax.numpy's operators add their Python to this
    kernel = jax.jit(lambda p, q: p * q)
    cases["op/jit kernel"] = (lambda: kernel(ja, jb).block_until_ready(), reps * 5)
    if torch is not None:
        ta, tb = torch.tensor(a), torch.tensor(b)
        cases["op/torch"] = (lambda: (ta * tb, sync()), reps * 5)

    # --- chain forward
    cases["fwd/torchish"] = (lambda: chain(torchish, xa, xb)._d.block_until_ready(), reps, False)
    cases["fwd/torchish lazy"] = (lambda: chain(torchish, xa, xb)._d.block_until_ready(), reps, True)
    cases["fwd/jax.numpy"] = (lambda: chain(jnp, ja, jb).block_until_ready(), reps)
    if torch is not None:
        cases["fwd/torch"] = (lambda: (chain(torch, ta, tb), sync()), reps)

    # --- chain forward + backward
    wa = torchish.tensor(a, requires_grad=True)

    def tish_fb():
        wa.grad = None
        chain(torchish, wa, xb).sum().backward()
        wa.grad._d.block_until_ready()
    cases["fwdbwd/torchish"] = (tish_fb, reps, False)
    cases["fwdbwd/torchish lazy"] = (tish_fb, reps, True)

    def jax_fb():
        out, pull = jax.vjp(lambda v: chain(jnp, v, jb).sum(), ja)
        pull(jnp.ones_like(out))[0].block_until_ready()
    cases["fwdbwd/jax.numpy"] = (jax_fb, max(reps // 10, 3))
    if torch is not None:
        wt = torch.tensor(a, requires_grad=True)

        def torch_fb():
            wt.grad = None
            chain(torch, wt, tb).sum().backward()
            sync()
        cases["fwdbwd/torch"] = (torch_fb, reps)

    res = interleaved(cases)
    for k in res:
        if not k.startswith("op/"):
            res[k] /= N_OPS

    rows = []
    for kind, label in (("op", "one op (a * b)"), ("fwd", "chain, forward (per op)"),
                        ("fwdbwd", "chain, forward+backward (per op)")):
        t = res.get(f"{kind}/torchish")
        j = res.get(f"{kind}/jax.numpy")
        p = res.get(f"{kind}/torch")
        rows.append((label, t, j, p, res.get(f"{kind}/torchish lazy")))
    print(f"# per-op overhead, 16x16 float32, {platform.machine()} {jax.devices()[0].platform}, "
          f"jax {jax.__version__}, torch {getattr(torch, '__version__', '-')}, python {sys.version.split()[0]}")
    print("| workload | torchish per-op us | torchish lazy us | jax.numpy us | PyTorch us | "
          "per-op / PyTorch | per-op / jax.numpy | lazy / PyTorch | lazy / jax.numpy |")
    print("|---|---|---|---|---|---|---|---|---|")
    def us(v):
        return f"{v * 1e6:.1f}" if v else "-"

    def ratio(x, y):
        return f"{x / y:.2f}x" if x and y else "-"
    for label, t, j, p, lz in rows:
        print(f"| {label} | {us(t)} | {us(lz)} | {us(j)} | {us(p)} | {ratio(t, p)} | {ratio(t, j)} | {ratio(lz, p)} "
              f"| {ratio(lz, j)} |")
    k, p = res.get("op/jit kernel"), res.get("op/torch")
    print(f"\nA cached jitted kernel called alone (`jax.jit(lambda p, q: p * q)`, the floor of a per-op dispatch "
          f"through JAX): {us(k)} us, {ratio(k, p)} PyTorch's whole op; torchish's one op is {ratio(res.get('op/torchish'), k)} of it.")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
