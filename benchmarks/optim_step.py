"""One optimizer step over a model with ~100 parameter tensors: torchish Adam vs torch Adam (foreach) vs a
hand-written ``jax.jit`` + ``optax.adam`` update — median milliseconds per step and, for torchish, the number of
jitted calls (plus eager JAX primitive dispatches) one ``step()`` makes.

The model is ``layers`` x ``Linear(64, 64)`` (weights and biases: 100 tensors for 50 layers). Gradients are fixed
numpy values set once; only ``optimizer.step()`` is timed (torchish and optax results are waited for). The count
wraps every function torchish hands to ``jax.jit`` (op kernels, lowered backward, optimizer updates) and runs one
steady-state step: a per-parameter update would make one call per tensor (~100); torchish's group update is one.
(Bare ``jax.numpy`` calls outside a jitted function dispatch in C++ and are not seen by this counter; the step
path makes none once the state exists.)

Run: ``python benchmarks/optim_step.py [--quick] [--layers 50] [--json out.json]``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, os.path.dirname(__file__))
from devices import torch_sync, use_accelerator  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


class CallCounter:
    """Counts calls of every ``jax.jit``-compiled function created while installed."""

    def __init__(self):
        self.calls = 0
        self._jit = jax.jit

    def install(self):
        counter = self

        def counting_jit(fn=None, *args, **kwargs):
            if fn is None:
                return lambda f: counting_jit(f, *args, **kwargs)
            jitted = counter._jit(fn, *args, **kwargs)

            def call(*a, **k):
                counter.calls += 1
                return jitted(*a, **k)
            call.lower = jitted.lower
            return call

        jax.jit = counting_jit

    def uninstall(self):
        jax.jit = self._jit


def shapes(layers, width=64):
    out = []
    for _ in range(layers):
        out += [(width, width), (width,)]
    return out


def median_ms(step, reps, warmup):
    for _ in range(warmup):
        step()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def _params(lib, values, grads):
    """Parameter tensors of ``lib`` (torchish or torch) holding ``values``, with ``grads`` as their ``.grad``."""
    params = [lib.tensor(v, requires_grad=True) for v in values]
    for p, g in zip(params, grads):
        p.grad = lib.tensor(g)
    return params


def _torchish_steps(opts, params):
    def step():
        for opt in opts:
            opt.step()
        jax.block_until_ready([p._d for p in params])
    return step


def torchish_adam(values, grads):
    import torchish
    params = _params(torchish, values, grads)
    return _torchish_steps([torchish.optim.Adam(params, lr=1e-3)], params)


def torchish_adam_per_tensor(values, grads):
    """The contrast: one optimizer per parameter tensor (as the optimizer-in-backward recipe builds them)."""
    import torchish
    params = _params(torchish, values, grads)
    return _torchish_steps([torchish.optim.Adam([p], lr=1e-3) for p in params], params)


def torch_adam(values, grads):
    params = _params(torch, values, grads)
    opt = torch.optim.Adam(params, lr=1e-3, foreach=True)

    def step():
        opt.step()
        torch_sync()  # on a GPU, wait for the queued kernels as the other systems do
    return step


def optax_adam(values, grads):
    tx = optax.adam(1e-3)
    params = [jnp.asarray(v) for v in values]
    gs = [jnp.asarray(g) for g in grads]
    state = [params, tx.init(params)]

    @jax.jit
    def update(params, opt_state, grads):
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    def step():
        state[0], state[1] = update(state[0], state[1], gs)
        jax.block_until_ready(state[0])
    return step


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="few repetitions (a smoke run)")
    ap.add_argument("--layers", type=int, default=50)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    use_accelerator()
    reps, warmup = (20, 3) if args.quick else (200, 10)

    shp = shapes(args.layers)
    rng = np.random.default_rng(0)
    values = [rng.uniform(-0.1, 0.1, s).astype(np.float32) for s in shp]
    grads = [rng.uniform(-1, 1, s).astype(np.float32) for s in shp]

    # count first, on kernels created under the counter (the first step compiles; the second is counted)
    counter = CallCounter()
    calls = {}
    counter.install()
    try:
        for make in (torchish_adam, torchish_adam_per_tensor):
            step = make(values, grads)
            step()
            counter.calls = 0
            step()
            calls[make] = counter.calls
    finally:
        counter.uninstall()

    rows = [("torchish Adam", median_ms(torchish_adam(values, grads), reps, warmup), calls[torchish_adam]),
            ("torchish, Adam per tensor", median_ms(torchish_adam_per_tensor(values, grads), reps, warmup),
             calls[torchish_adam_per_tensor])]
    if torch is not None:
        rows.append(("torch Adam (foreach)", median_ms(torch_adam(values, grads), reps, warmup), None))
    rows.append(("jax.jit + optax.adam", median_ms(optax_adam(values, grads), reps, warmup), 1))

    print(f"optimizer step over {len(shp)} parameter tensors ({args.layers} x Linear(64, 64)), "
          f"{'quick' if args.quick else 'full'} run, {platform.processor() or platform.machine()}, "
          f"jax {jax.__version__}" + (f", torch {torch.__version__}" if torch is not None else ""))
    print(f"{'implementation':26s} {'median ms/step':>15s} {'jitted calls/step':>18s}")
    for name, ms, n in rows:
        print(f"{name:26s} {ms:15.3f} {'-' if n is None else n:>18}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tensors": len(shp), "quick": args.quick,
                       "rows": [{"name": n, "ms": ms, "calls": c} for n, ms, c in rows]}, f, indent=1)


if __name__ == "__main__":
    main()
