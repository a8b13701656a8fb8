"""Memory of a training step: activation checkpointing and the optimizer step inside backward.

1. Compiled step (``torchish.compile``: zero_grad, forward, ``backward()``, ``SGD.step()`` as one XLA program) of a
   deep MLP — ``--blocks`` blocks of ``Linear(width, width) + GELU``, batch ``--batch`` — three ways: plain; every
   block under ``torchish.utils.checkpoint.checkpoint(..., use_reentrant=False)`` (``jax.checkpoint`` in the
   program: activations recomputed in the backward pass); and with ``offload=True`` (matmul results saved to host
   memory where the backend has one; on CPU the policy compiles and the transfers are no-ops). The figures are XLA's
   own: ``CompiledFunction.memory_analysis()`` of the compiled executable — temp (scratch the program needs at its
   peak, where saved activations live), argument and output bytes.

2. Peak gradient memory in eager mode, normal loop vs optimizer step inside backward (one SGD per parameter, driven
   by ``register_post_accumulate_grad_hook``, which steps and sets ``.grad`` to None). Measured with one more
   post-accumulate hook on every parameter, registered *before* the optimizer hook: each time a gradient has been
   accumulated it sums ``nbytes`` of the parameters' ``.grad`` tensors that are alive (not None) at that moment; the
   figure is the maximum over the backward pass. It counts the ``.grad`` tensors only (not the engine's transient
   gradient buffers of intermediate results, which are the same in both loops).

Run: ``python benchmarks/memory.py [--quick]``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

import torchish
import torchish.utils.checkpoint  # noqa: F401
from torchish import nn

sys.path.insert(0, os.path.dirname(__file__))
from devices import use_accelerator  # noqa: E402

MIB = 1024 * 1024


def make_model(blocks, width, seed=0):
    rng = np.random.default_rng(seed)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.GELU()) for _ in range(blocks)])
    with torchish.no_grad():
        for p in model.parameters():
            p.copy_(torchish.tensor(rng.uniform(-1, 1, p.shape).astype(np.float32) / np.sqrt(width)))
    return model


def compiled_step(model, mode):
    opt = torchish.optim.SGD(model.parameters(), lr=1e-3)

    def step(x):
        opt.zero_grad()
        h = x
        for blk in model:
            if mode == "plain":
                h = blk(h)
            else:
                h = torchish.utils.checkpoint.checkpoint(blk, h, use_reentrant=False, offload=mode == "offload")
        loss = (h * h).mean()
        loss.backward()
        opt.step()
        return loss
    return torchish.compile(step)


def compiled_memory(blocks, width, batch):
    x = torchish.tensor(np.random.default_rng(1).uniform(-1, 1, (batch, width)).astype(np.float32))
    rows = {}
    for mode in ("plain", "checkpoint", "offload"):
        step = compiled_step(make_model(blocks, width), mode)
        t0 = time.perf_counter()
        losses = [float(step(x)) for _ in range(2)]  # eager run (learns the state), then trace + compile + run
        t_compile = time.perf_counter() - t0
        t0 = time.perf_counter()
        losses.append(float(step(x)))
        t_run = time.perf_counter() - t0
        ma = step.memory_analysis(x)
        rows[mode] = dict(temp=ma.temp_size_in_bytes, argument=ma.argument_size_in_bytes,
                          output=ma.output_size_in_bytes, host_temp=getattr(ma, "host_temp_size_in_bytes", 0),
                          first_calls_s=t_compile, step_s=t_run, losses=losses,
                          barriers=step.lower(x).as_text().count("optimization_barrier"))
    return rows


def peak_grad_memory(blocks, width, batch, in_backward):
    model = make_model(blocks, width)
    params = list(model.parameters())
    live = {"peak": 0}

    def measure(_p):
        live["peak"] = max(live["peak"], sum(q.grad.nbytes for q in params if q.grad is not None))
    for p in params:
        p.register_post_accumulate_grad_hook(measure)
    if in_backward:
        opts = {p: torchish.optim.SGD([p], lr=1e-3) for p in params}

        def step_hook(p):
            opts[p].step()
            opts[p].zero_grad(set_to_none=True)
        for p in params:
            p.register_post_accumulate_grad_hook(step_hook)
    else:
        opt = torchish.optim.SGD(params, lr=1e-3)
    x = torchish.tensor(np.random.default_rng(1).uniform(-1, 1, (batch, width)).astype(np.float32))
    for _ in range(2):
        live["peak"] = 0
        if not in_backward:
            opt.zero_grad(set_to_none=True)
        model(x).pow(2).mean().backward()
        after = sum(q.grad.nbytes for q in params if q.grad is not None)
        if not in_backward:
            opt.step()
    return dict(peak=live["peak"], after_backward=after, params=sum(p.nbytes for p in params))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="4 blocks of width 128, batch 32")
    ap.add_argument("--blocks", type=int)
    ap.add_argument("--width", type=int)
    ap.add_argument("--batch", type=int)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    use_accelerator()
    blocks = args.blocks or (4 if args.quick else 16)
    width = args.width or (128 if args.quick else 512)
    batch = args.batch or (32 if args.quick else 256)
    import jax
    print(f"# torchish memory benchmark — {blocks} x (Linear({width},{width}) + GELU), batch {batch}; "
          f"jax {jax.__version__} on {jax.default_backend()} ({platform.machine()})")

    rows = compiled_memory(blocks, width, batch)
    print("\ncompiled training step (XLA memory analysis of torchish.compile(step)), MiB")
    print(f"{'variant':<12}{'temp':>10}{'argument':>10}{'output':>10}{'host temp':>11}{'barriers':>10}"
          f"{'step ms':>10}{'loss':>12}")
    for mode, r in rows.items():
        print(f"{mode:<12}{r['temp'] / MIB:>10.2f}{r['argument'] / MIB:>10.2f}{r['output'] / MIB:>10.2f}"
              f"{r['host_temp'] / MIB:>11.2f}{r['barriers']:>10d}{r['step_s'] * 1e3:>10.1f}{r['losses'][-1]:>12.6f}")
    saved = 1 - rows["checkpoint"]["temp"] / rows["plain"]["temp"]
    print(f"checkpoint on every block: temp bytes {saved:.0%} lower than plain")

    grads = {k: peak_grad_memory(blocks, width, batch, k == "in_backward") for k in ("normal", "in_backward")}
    print("\npeak bytes of live .grad tensors during backward (eager), MiB")
    print(f"{'loop':<14}{'peak':>10}{'after backward':>16}{'parameters':>12}")
    for k, r in grads.items():
        print(f"{k:<14}{r['peak'] / MIB:>10.2f}{r['after_backward'] / MIB:>16.2f}{r['params'] / MIB:>12.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": dict(blocks=blocks, width=width, batch=batch), "compiled": rows, "grads": grads},
                      f, indent=1)


if __name__ == "__main__":
    main()
