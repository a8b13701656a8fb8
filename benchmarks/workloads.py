"""Training-step benchmark: the same models, side by side, in one run.

Workloads (issue 5): (a) MLP 64-128-128-10, batch 32, Adam — overhead-bound; (b) MLP 784-512-512-10, batch 128;
(c) a small video model: Conv3d(3,16,3)+MaxPool3d(1,2,2)+Conv3d(16,32,3)+pool, mean over space, GRU(32,64) over
time, Linear(64,10) on input (4,3,8,32,32); (d) a 2-layer Transformer encoder (d=128, 4 heads, seq 64, batch 16).

Systems: torchish eager node-by-node (lowered backward off), torchish default eager (per-op dispatch, lowered
backward), torchish lazy capture, torchish.compile,
hand-written ``jax.jit`` + optax, flax.nnx + optax, PyTorch eager, ``torch.compile`` (when ``--torch-compile``).
Reports the median time per step, the time of the first two steps (compilation), the device memory a system holds
after its warm-up (model, optimizer state, cached buffers; where the backend reports memory: GPUs), and the ratio to
hand-written JAX. On a GPU machine PyTorch runs on ``cuda`` and every system's step waits for the device.
Run: ``python benchmarks/workloads.py [--quick] [--only a,b] [--systems compile,hand] [--json out.json]``.
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
import optax

import torchish

sys.path.insert(0, __import__('os').path.dirname(__file__))
from devices import torch_device, torch_sync, use_accelerator  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

WORKLOADS = {
    "a": dict(kind="mlp", sizes=(64, 128, 128, 10), batch=32, desc="MLP 64-128-128-10, batch 32, Adam"),
    "b": dict(kind="mlp", sizes=(784, 512, 512, 10), batch=128, desc="MLP 784-512-512-10, batch 128, Adam"),
    "c": dict(kind="video", batch=4, desc="Conv3d+pool x2, GRU(32,64), Linear; input (4,3,8,32,32), Adam"),
    "d": dict(kind="transformer", batch=16, seq=64, d=128, heads=4, layers=2,
              desc="Transformer encoder 2 layers, d=128, 4 heads, seq 64, batch 16, Adam"),
}


# ----------------------------------------------------------------------------------------------------------------
# models written once against the PyTorch API (used for torchish and torch)

def build_model(lib, spec):
    nn = lib.nn
    if spec["kind"] == "mlp":
        s = spec["sizes"]
        layers = []
        for i in range(len(s) - 1):
            layers.append(nn.Linear(s[i], s[i + 1]))
            if i < len(s) - 2:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)
    if spec["kind"] == "video":
        class Video(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv3d(3, 16, 3)
                self.p1 = nn.MaxPool3d((1, 2, 2))
                self.c2 = nn.Conv3d(16, 32, 3)
                self.p2 = nn.MaxPool3d((1, 2, 2))
                self.gru = nn.GRU(32, 64, batch_first=True)
                self.fc = nn.Linear(64, 10)

            def forward(self, x):
                h = self.p1(lib.relu(self.c1(x)))
                h = self.p2(lib.relu(self.c2(h)))
                h = h.mean(dim=(3, 4)).transpose(1, 2)  # (B, T, C)
                out, _ = self.gru(h)
                return self.fc(out[:, -1])
        return Video()
    layer = nn.TransformerEncoderLayer(spec["d"], spec["heads"], dim_feedforward=4 * spec["d"], dropout=0.0,
                                       batch_first=True)

    class Enc(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.TransformerEncoder(layer, spec["layers"], enable_nested_tensor=False)
            self.fc = nn.Linear(spec["d"], 10)

        def forward(self, x):
            return self.fc(self.enc(x).mean(1))
    return Enc()


def make_data(spec, rng):
    if spec["kind"] == "mlp":
        x = rng.normal(size=(spec["batch"], spec["sizes"][0])).astype(np.float32)
    elif spec["kind"] == "video":
        x = rng.normal(size=(spec["batch"], 3, 8, 32, 32)).astype(np.float32)
    else:
        x = rng.normal(size=(spec["batch"], spec["seq"], spec["d"])).astype(np.float32)
    y = rng.integers(0, 10, size=(spec["batch"],)).astype(np.int64)
    return x, y


def framework_step(lib, spec, x, y, compiled=False):
    torch_like = lib
    model = build_model(torch_like, spec)
    opt = torch_like.optim.Adam(model.parameters(), lr=1e-3)
    F = torch_like.nn.functional
    xt, yt = torch_like.tensor(x), torch_like.tensor(y)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        return loss
    if lib is not torchish:
        tstep = torch.compile(step) if compiled else step

        def run_torch():
            tstep()
            torch_sync()
        return run_torch
    cstep = torchish.compile(step) if compiled else step
    params = list(model.parameters())

    def run():
        # JAX dispatches asynchronously: wait for the updated parameters too, not only the loss (in eager mode the
        # backward and optimizer kernels are still running when the loss is ready; their time belongs to this step)
        jax.block_until_ready([cstep()._d] + [p._d for p in params])

    def run_compiled():  # one executable: its outputs (loss, parameters) are ready together, as hand-written JAX's
        cstep()._d.block_until_ready()
    if compiled:
        run = run_compiled
    run.step = cstep
    return run


# ----------------------------------------------------------------------------------------------------------------
# hand-written JAX (the reference) and flax.nnx

def jax_step(spec, x, y, donate=False):
    """A hand-written pure function of the same model (initialised from a torchish model), jitted with optax.adam
    (handwritten.py)."""
    import handwritten
    builder = {"mlp": handwritten.mlp_step, "video": handwritten.video_step,
               "transformer": handwritten.transformer_step}[spec["kind"]]
    return builder(spec, x, y, build_model(torchish, spec), donate)


def flax_step(spec, x, y):
    if spec["kind"] != "mlp":
        return None
    from flax import nnx
    sizes = spec["sizes"]

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.layers = nnx.List([nnx.Linear(sizes[i], sizes[i + 1], rngs=rngs,
                                                  precision=jax.lax.Precision.HIGHEST)  # as torchish, PyTorch
                                       for i in range(len(sizes) - 1)])

        def __call__(self, x):
            for i, l in enumerate(self.layers):
                x = l(x)
                if i < len(self.layers) - 1:
                    x = jax.nn.relu(x)
            return x
    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)

    @nnx.jit
    def step(model, optimizer, x, y):
        def loss_fn(model):
            logits = model(x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    return lambda: step(model, optimizer, xj, yj).block_until_ready()


# ----------------------------------------------------------------------------------------------------------------


def first_steps(run, warmup):
    """Time of the first two steps (where compilation happens: hand-written ``jax.jit`` compiles on its first call,
    ``torchish.compile`` runs the first call eagerly to learn the state and compiles on the second), then warm up."""
    t0 = time.perf_counter()
    run()
    run()
    first = time.perf_counter() - t0
    for _ in range(warmup):
        run()
    return first


def interleaved_medians(runs, steps, rounds=5):
    """Median step time of each system, timed round-robin in blocks: each round runs ``steps // rounds`` consecutive
    steps of every system in turn (each step timed alone), so that a machine whose speed drifts (shared CPUs,
    thermal limits) slows every system alike, while each system runs as a training loop does — step after step,
    its own kernels and buffers in the caches (one step of each system in turn made every system pay for the
    others' cache footprint, and PyTorch's worker threads were still spinning when the next system started)."""
    times = {name: [] for name in runs}
    block = max(1, steps // rounds)
    for _ in range(max(1, steps // block)):
        for name, run in runs.items():
            for _ in range(block):
                t0 = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


@contextlib.contextmanager
def execution_path(lowered, lazy):
    """torchish's execution-path settings for one system, restored afterwards (systems run interleaved)."""
    saved = torchish.config.lowered_backward, torchish.config.lazy
    torchish.config.lowered_backward, torchish.config.lazy = lowered, lazy
    try:
        yield
    finally:
        torchish.config.lowered_backward, torchish.config.lazy = saved


def bytes_in_use(name):
    """Device bytes allocated now by the system's framework (None where the backend does not say: CPU)."""
    if name.startswith("PyTorch") or name.startswith("torch."):
        return torch.cuda.memory_allocated() if torch_device() == "cuda" else None
    try:
        stats = jax.devices()[0].memory_stats()
        return stats.get("bytes_in_use") if stats else None
    except Exception:  # noqa: BLE001 - not every backend reports memory
        return None


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="a,b,c,d")
    ap.add_argument("--json")
    ap.add_argument("--torch-compile", action="store_true")
    ap.add_argument("--systems", help="comma-separated substrings: run only the systems whose name contains one "
                                      "(hand-written JAX always runs: it is the reference)")
    args = ap.parse_args(argv)
    steps, warmup = (5, 2) if args.quick else (60, 5)
    use_accelerator()
    rng = np.random.default_rng(0)
    results = {}
    for key in args.only.split(","):
        spec = WORKLOADS[key]
        x, y = make_data(spec, rng)
        systems = {}

        def torchish_mode(lowered, lazy, compiled=False):
            def make():
                with execution_path(lowered, lazy):
                    inner = framework_step(torchish, spec, x, y, compiled=compiled)

                def run():
                    with execution_path(lowered, lazy):
                        return inner()
                return run
            return make
        systems["torchish eager (node by node)"] = torchish_mode("never", False)
        systems["torchish default"] = torchish_mode("auto", False)
        systems["torchish lazy"] = torchish_mode("auto", True)
        systems["torchish.compile"] = torchish_mode("auto", False, compiled=True)
        systems["jax.jit + optax (hand-written)"] = lambda: jax_step(spec, x, y)
        systems["flax.nnx + optax"] = lambda: flax_step(spec, x, y)
        if torch is not None:
            systems["PyTorch eager"] = lambda: framework_step(torch, spec, x, y)
            if args.torch_compile:
                systems["torch.compile"] = lambda: framework_step(torch, spec, x, y, compiled=True)
        if args.systems:
            wanted = args.systems.split(",")
            systems = {n: m for n, m in systems.items() if "hand-written" in n or any(w in n for w in wanted)}
        rows, runs = {}, {}
        for name, make in systems.items():
            try:
                before = bytes_in_use(name)
                run = make()
                if run is None:
                    continue
                rows[name] = {"first_ms": first_steps(run, warmup) * 1e3}
                after = bytes_in_use(name)
                rows[name]["held_bytes"] = after - before if before is not None and after is not None else None
                runs[name] = run
            except Exception as e:  # noqa: BLE001 - a system that cannot run this workload is reported, not fatal
                rows[name] = {"error": f"{type(e).__name__}: {str(e)[:120]}"}
        for name, med in interleaved_medians(runs, steps).items():
            rows[name]["median_ms"] = med * 1e3
        results[key] = rows
        ref = rows.get("jax.jit + optax (hand-written)", {}).get("median_ms")
        print(f"\n### ({key}) {spec['desc']}")
        print("| system | median ms/step | first 2 steps ms (compile) | device MiB held | vs hand-written JAX |")
        print("|---|---|---|---|---|")
        for name, r in rows.items():
            if "error" in r:
                print(f"| {name} | error: {r['error']} | | | |")
                continue
            ratio = f"{r['median_ms'] / ref:.2f}x" if ref else "-"
            held = f"{r['held_bytes'] / 2**20:.1f}" if r.get("held_bytes") is not None else "-"
            print(f"| {name} | {r['median_ms']:.2f} | {r['first_ms']:.0f} | {held} | {ratio} |")
    print(f"\n{platform.machine()}, {jax.devices()[0].device_kind}, jax {jax.__version__}, "
          f"torch {getattr(torch, '__version__', '-')} on {torch_device()}, python {sys.version.split()[0]}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
