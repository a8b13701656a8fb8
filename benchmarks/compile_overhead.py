"""Where a ``torchish.compile`` training step's time goes, next to hand-written JAX (issue 5's 1.05x target).

For the overhead-bound workloads (a) and (b) of ``workloads.py``, in one process and interleaved:

- the full step as ``workloads.py`` times it, for torchish.compile with different donation thresholds (state
  arrays smaller than the threshold are written but not donated) and for hand-written JAX with and without donation;
- torchish's split per call: its own Python (guards, write-back, new ``.grad`` tensors) versus the non-blocking
  executable call (next to hand-written JAX's non-blocking call), and the executable alone in a loop that feeds its
  outputs back (no torchish Python at all); a cProfile of the calls;
- the size of each optimised program: top-level instructions, fusions, copies, custom calls.

Run: ``python benchmarks/compile_overhead.py [--only a,b] [--steps 200]``.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import statistics
import sys
import time

import jax
import numpy as np

import torchish
from torchish.compile import function as compile_function, state as compile_state

sys.path.insert(0, os.path.dirname(__file__))
import workloads  # noqa: E402
from devices import use_accelerator  # noqa: E402

THRESHOLDS = {"donate all": 0, "donate >= 64 KiB": 1 << 16, "donate none": 1 << 62}


def program_size(hlo):
    """Counts of the top-level instructions of an optimised HLO module's entry computation."""
    entry = hlo[hlo.index("\nENTRY"):]
    ops = collections.Counter(re.findall(r"= [^=]*? ([a-z][\w-]*)\(", entry))
    skip = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}
    return {"instructions": sum(n for op, n in ops.items() if op not in skip), "fusion": ops["fusion"],
            "copy": ops["copy"], "custom-call": ops["custom-call"]}


def compiled_step(spec, x, y, threshold):
    """``workloads.framework_step`` compiled with the given donation threshold (read when the step is lowered)."""
    old = compile_state.DONATE_MIN_BYTES
    compile_state.DONATE_MIN_BYTES = threshold
    try:
        run = workloads.framework_step(torchish, spec, x, y, compiled=True)
        workloads.first_steps(run, 3)
    finally:
        compile_state.DONATE_MIN_BYTES = old
    return run


def host_split(run, steps):
    """Median per call of torchish's own Python and of the (non-blocking) executable call inside it."""
    inner, outer = [], []
    original = compile_function.CompiledFunction._call

    def timed(entry, *vals):
        t0 = time.perf_counter()
        out = original(entry, *vals)
        inner.append(time.perf_counter() - t0)
        return out
    compile_function.CompiledFunction._call = staticmethod(timed)
    try:
        step = run.step
        for _ in range(steps):
            t0 = time.perf_counter()
            out = step()
            outer.append(time.perf_counter() - t0)
            jax.block_until_ready(out._d)
    finally:
        compile_function.CompiledFunction._call = staticmethod(original)
    return statistics.median(np.subtract(outer, inner)), statistics.median(inner)


def python_profile(run, steps, top=12):
    """cProfile of the torchish step's calls (not waiting for results): the functions with the most own time."""
    import cProfile
    import io
    import pstats
    prof = cProfile.Profile()
    step = run.step
    prof.enable()
    for _ in range(steps):
        out = step()
    prof.disable()
    jax.block_until_ready(out._d)
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    lines = buf.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(line.replace(os.path.dirname(os.path.dirname(torchish.__file__)) + "/", "")
                     for line in lines[start:] if line.strip())


def call_time(call, steps):
    """Median time of a call that returns without waiting for the device (the host's share of a step)."""
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - t0)
        jax.block_until_ready(out)
    return statistics.median(times)


def executable_loop(run, steps):
    """The compiled program alone: called with its own outputs fed back (no torchish Python), waiting for every
    output each step. Leaves the model's buffers donated: call last."""
    entry = next(e for e in run.step.entries.values() if e.executable is not None)
    written = entry.info["written"]
    vals = [t._d for t in entry.state]
    if entry.written_out is not None:  # state tensors sharing an array (Adam's step counts) share one output
        written = [w for j, w in sorted({j: w for w, j in zip(written, entry.written_out)}.items())]
    if entry.uniq is not None:  # ... and one input: the program's state inputs are the distinct arrays
        position, rep = {i: k for k, i in enumerate(entry.uniq)}, dict(entry.pairs)
        written = [position[rep.get(i, i)] for i in written]
        vals = [vals[i] for i in entry.uniq]
    scalars = compile_state._scalar_values(entry)
    donated, kept = entry.donate if entry.donate is not None else (None, None)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        if donated is None:
            res = entry.executable([], vals, scalars)
        else:
            res = entry.executable([], [vals[i] for i in donated], [vals[i] for i in kept], scalars)
        res[1][0].block_until_ready()  # the loss: every output of one execution is ready together
        times.append(time.perf_counter() - t0)
        vals = list(vals)
        for i, v in zip(written, res[0]):
            vals[i] = v
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="a,b")
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args(argv)
    use_accelerator()
    rng = np.random.default_rng(0)
    for key in args.only.split(","):
        spec = workloads.WORKLOADS[key]
        x, y = workloads.make_data(spec, rng)
        runs = {f"torchish.compile, {name}": compiled_step(spec, x, y, th) for name, th in THRESHOLDS.items()}
        for donate in (False, True):
            run = workloads.jax_step(spec, x, y, donate=donate)
            workloads.first_steps(run, 3)
            runs[f"hand-written JAX, donate {'all' if donate else 'none'}"] = run
        med = workloads.interleaved_medians(runs, args.steps)
        ref = med["hand-written JAX, donate none"]
        print(f"\n### ({key}) {spec['desc']}: {jax.devices()[0].device_kind}")
        print("| system | median ms/step | vs hand-written JAX | instructions | fusions | copies | custom calls |")
        print("|---|---|---|---|---|---|---|")
        for name, run in runs.items():
            text = run.step.hlo_text() if hasattr(run, "step") else run.hlo()
            size = program_size(text)
            print(f"| {name} | {med[name] * 1e3:.3f} | {med[name] / ref:.2f}x | {size['instructions']} | "
                  f"{size['fusion']} | {size['copy']} | {size['custom-call']} |")
        default = runs["torchish.compile, donate all"]
        python, call = host_split(default, args.steps)
        hand_call = call_time(runs["hand-written JAX, donate none"].call, args.steps)
        profile = python_profile(default, args.steps)
        alone = executable_loop(default, args.steps)
        print(f"\ntorchish.compile (donate all) per call: torchish Python {python * 1e6:.0f} us, non-blocking "
              f"executable call {call * 1e6:.0f} us; the executable alone, outputs fed back: {alone * 1e3:.3f} ms "
              f"({alone / ref:.2f}x hand-written JAX's full step); hand-written JAX's non-blocking call "
              f"{hand_call * 1e6:.0f} us")
        print(f"cProfile of {args.steps} calls (own time, s):\n```\n{profile}\n```")
    print(f"\njax {jax.__version__}, {jax.devices()[0].device_kind}, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
