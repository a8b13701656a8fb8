"""Multi-device checks of tests/test_distributed.py, run as ONE subprocess with 8 host CPU devices.

JAX fixes its device count when it starts, and the test session has already started it with one device, so the
checks needing 8 devices run here: ``python tests/_dist_worker.py`` prints one JSON object mapping each check's
name to ``{"ok": bool, "detail": str, "cpu_s": float}`` and, under ``"references"``, the parameters of the
single-device runs (the test compares those with PyTorch in its own process, where torch is already loaded).
References: the same training run on one device (torchish), and numpy for the collectives (computed from their
per-rank definition). ``python tests/_dist_worker.py NAME...`` runs only the named checks.
"""
from __future__ import annotations

import collections
import contextlib
import json
import os
import sys
import time
import traceback

if __name__ == "__main__" and "--xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402

import torchish  # noqa: E402
import torchish.distributed as dist  # noqa: E402
from torchish.distributed.fsdp import fully_shard, FullyShardedDataParallel  # noqa: E402
from torchish.distributed.tensor import Shard, distribute_tensor  # noqa: E402
from torchish.nn.parallel import DistributedDataParallel as DDP, DataParallel  # noqa: E402

N = 8
SIZES = (8, 16, 8, 1)            # Linear(8,16) tanh Linear(16,8) tanh Linear(8,1): the last weight is (1, 8)
STEPS = 5
CHECKS = {}


def check(name):
    def deco(fn):
        CHECKS[name] = fn
        return fn
    return deco


def run_checks(names):
    results = {}
    for name in names:
        t0 = time.process_time()
        try:
            detail = CHECKS[name]()
            results[name] = {"ok": True, "detail": detail or ""}
        except Exception:  # report every failure; the test shows the traceback
            results[name] = {"ok": False, "detail": traceback.format_exc()}
        results[name]["cpu_s"] = round(time.process_time() - t0, 2)
    return results


def init_values():
    rng = np.random.default_rng(0)
    vals = []
    for i, o in zip(SIZES[:-1], SIZES[1:]):
        vals.append(rng.uniform(-0.5, 0.5, (o, i)).astype(np.float32))
        vals.append(rng.uniform(-0.5, 0.5, (o,)).astype(np.float32))
    return vals


def data(step, rows=16):
    rng = np.random.default_rng(100 + step)
    return (rng.uniform(-1, 1, (rows, SIZES[0])).astype(np.float32),
            rng.uniform(-1, 1, (rows, SIZES[-1])).astype(np.float32))


def mlp(lib):
    """Linear(8,16) tanh Linear(16,8) tanh Linear(8,1) with weights from numpy (no framework RNG: its kernels
    would be the most expensive compiles of the worker)."""
    class Linear(lib.nn.Module):
        def __init__(self, w, b):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.tensor(w))
            self.bias = lib.nn.Parameter(lib.tensor(b))

        def forward(self, x):
            return lib.nn.functional.linear(x, self.weight, self.bias)

    vals = init_values()
    layers = []
    for k in range(0, len(vals), 2):
        layers.append(Linear(vals[k], vals[k + 1]))
        if k < len(vals) - 2:
            layers.append(lib.nn.Tanh())
    return lib.nn.Sequential(*layers)


Run = collections.namedtuple("Run", "model params opt step args")


def train(lib, wrap=None, place=None, compiled=True, micro=1, lowered=None, dropout=0.0):
    """STEPS optimizer steps on global batches of 16 rows (``micro`` accumulated micro-batches each, the
    first ones under ``no_sync``); returns a :data:`Run` (the final parameters as numpy arrays). ``dropout``
    puts a Dropout after the first layer."""
    model = mlp(lib)
    if dropout:
        model.insert(1, lib.nn.Dropout(dropout))
    inner = model
    if wrap is not None:
        model = wrap(model)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)   # momentum: optimizer state to shard

    def step(*batches):
        opt.zero_grad()
        pairs = list(zip(batches[0::2], batches[1::2]))
        for j, (x, y) in enumerate(pairs):
            sync = j == len(pairs) - 1
            ctx = model.no_sync() if (not sync and hasattr(model, "no_sync")) else contextlib.nullcontext()
            with ctx:
                loss = lib.nn.functional.mse_loss(model(x), y) / len(pairs)
                loss.backward()
        opt.step()
        return loss
    lowering = torchish.config.lowered_backward
    if compiled and lib is torchish:
        step = torchish.compile(step)
        # the first (recording) call runs eagerly: one lowered backward compiles faster than a kernel per node
        torchish.config.lowered_backward = "always"
    elif lowered is not None:
        torchish.config.lowered_backward = lowered
    try:
        args = run_steps(lib, step, place, micro)
    finally:
        torchish.config.lowered_backward = lowering
    return Run(inner, [p.detach().numpy().copy() for p in inner.parameters()], opt, step, args)


def run_steps(lib, step, place, micro):
    for s in range(STEPS):
        x, y = data(s)
        args = []
        for xs, ys in zip(np.split(x, micro), np.split(y, micro)):
            xt, yt = lib.tensor(xs), lib.tensor(ys)
            if place is not None:
                xt, yt = place(xt), place(yt)
            args += [xt, yt]
        step(*args)
    return args


def close(a_list, b_list, rtol, atol):
    for a, b in zip(a_list, b_list):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    return True


def shard0(t):
    return distribute_tensor(t, placements=[Shard(0)])


REF = {}


def reference(micro=1):
    """The same training on one device (torchish, compiled); the test compares these with PyTorch."""
    key = f"micro{micro}"
    if key not in REF:
        REF[key] = train(torchish, micro=micro).params
    return REF[key]


@check("ddp_compiled")
def _():
    run = train(torchish, wrap=DDP, place=shard0)
    close(run.params, reference(), rtol=1e-5, atol=1e-6)
    assert run.model[0].weight.jax().sharding.is_fully_replicated
    assert len(run.model[0].weight.jax().sharding.device_set) == N
    assert (run.step.stats["compiled_calls"], run.step.stats["retraces"]) == (STEPS - 1, 0), run.step.stats
    assert "all-reduce" in run.step.hlo_text(*run.args), "XLA inserted no gradient all-reduce"
    return f"{len(run.params)} params equal after {STEPS} compiled SGD steps on {N} devices"


@check("ddp_no_sync")
def _():
    run = train(torchish, wrap=DDP, place=shard0, micro=2)
    close(run.params, reference(micro=2), rtol=1e-5, atol=1e-6)
    assert (run.step.stats["compiled_calls"], run.step.stats["retraces"]) == (STEPS - 1, 0), run.step.stats


@check("ddp_eager")
def _():
    close(train(torchish, wrap=DDP, place=shard0, compiled=False).params, reference(), rtol=1e-5, atol=1e-6)


@check("ddp_dropout")
def _():
    """Dropout inside a data-parallel model: masks drawn beside sharded activations (the generator's key goes
    uncommitted), eager and compiled; the same seed gives the same parameters on both paths."""
    def run(compiled):
        torchish.manual_seed(3)
        return train(torchish, wrap=DDP, place=shard0, compiled=compiled, dropout=0.25).params
    eager, compiled = run(False), run(True)
    assert not all(np.allclose(a, b) for a, b in zip(eager, init_values())), "the model did not train"
    close(compiled, eager, rtol=1e-5, atol=1e-6)


@check("data_parallel_eager")
def _():
    run = train(torchish, wrap=DataParallel, compiled=False)   # inputs and targets stay on device 0
    close(run.params, reference(), rtol=1e-5, atol=1e-6)


def sharded(v):
    return len(v.sharding.device_set) == N and not v.sharding.is_fully_replicated


@check("fsdp_compiled")
def _():
    inner, params, opt, _, _ = train(torchish, wrap=fully_shard, place=shard0)
    close(params, reference(), rtol=1e-5, atol=1e-6)
    w = inner[0].weight
    assert w.jax().sharding.spec[0] == "data", w.jax().sharding
    n_sharded = sum(sharded(p.jax()) for p in inner.parameters())
    assert n_sharded == len(params) - 1, n_sharded      # the (1,)-shaped last bias stays replicated
    n_state = sum(sharded(opt.state[p]["momentum_buffer"].jax()) for p in inner.parameters())
    assert n_state == n_sharded, n_state
    return f"{n_sharded}/{len(params)} parameters and their momentum buffers sharded"


@check("hsdp_2d_eager")
def _():
    mesh = dist.init_device_mesh("cpu", (2, 4), mesh_dim_names=("replicate", "shard"))

    def place(t):
        return distribute_tensor(t, mesh, [Shard(0), Shard(0)])
    inner, params, _, _, _ = train(torchish, wrap=lambda m: FullyShardedDataParallel(m, device_mesh=mesh),
                             place=place, compiled=False, lowered="always")   # the eager path, one backward program
    close(params, reference(), rtol=1e-5, atol=1e-6)
    spec = inner[0].weight.jax().sharding.spec
    assert spec[0] == "shard" and "replicate" not in spec, spec        # sharded over 4, replicated over 2


@check("collectives")
def _():
    rng = np.random.default_rng(7)
    base = rng.uniform(0.5, 1.5, (N * 2, 3)).astype(np.float32)       # rank r: rows 2r, 2r+1
    big = rng.uniform(0.5, 1.5, (N * N * 2, 3)).astype(np.float32)    # rank r: 2N rows
    ranks, ranks_big = np.split(base, N), np.split(big, N)
    # reduce_scatter's input list: entry i on rank j = block i of rank j's rows of ``big``
    pieces = [np.concatenate([np.split(rb, N)[i] for rb in ranks_big]) for i in range(N)]
    scattered = np.concatenate([sum(np.split(rb, N)[r] for rb in ranks_big) for r in range(N)])
    expect = {
        "sum": np.tile(sum(ranks), (N, 1)),
        "avg": np.tile(sum(ranks) / N, (N, 1)),
        "max": np.tile(np.max(ranks, axis=0), (N, 1)),
        "product": np.tile(np.prod(ranks, axis=0), (N, 1)),
        "broadcast": np.tile(ranks[3], (N, 1)),
        "reduce": np.concatenate([r if i != 2 else sum(ranks) for i, r in enumerate(ranks)]),
        "gather": [np.tile(r, (N, 1)) for r in ranks],
        "into": np.tile(base, (N, 1)),
        "scatter": scattered,
        "scatter_list": scattered,
    }

    def run(b, g, *pieces):
        out = {}
        for name, op in (("sum", dist.ReduceOp.SUM), ("avg", dist.ReduceOp.AVG), ("max", dist.ReduceOp.MAX),
                         ("product", dist.ReduceOp.PRODUCT)):
            t = b * 1
            dist.all_reduce(t, op=op)
            out[name] = t
        t = b * 1
        dist.broadcast(t, src=3)
        out["broadcast"] = t
        t = b * 1
        dist.reduce(t, dst=2)
        out["reduce"] = t
        out["gather"] = [torchish.empty_like(b) for _ in range(N)]
        dist.all_gather(out["gather"], b)
        out["into"] = torchish.empty(N * b.shape[0], 3)
        dist.all_gather_into_tensor(out["into"], b)
        out["scatter"] = torchish.empty(N * 2, 3)
        dist.reduce_scatter_tensor(out["scatter"], g)
        out["scatter_list"] = torchish.empty(N * 2, 3)
        dist.reduce_scatter(out["scatter_list"], list(pieces))
        return out

    def compare(out, how):
        for k, v in expect.items():
            got = [t.numpy() for t in out[k]] if isinstance(v, list) else out[k].numpy()
            np.testing.assert_allclose(got, v, rtol=1e-5, err_msg=f"{how} {k}")

    args = [torchish.tensor(v) for v in [base, big] + pieces]
    compare(run(*args), "eager")
    compiled = torchish.compile(run)
    args = [shard0(t) for t in args]
    for _ in range(3):            # record, trace + compile, then the compiled program
        out = compiled(*args)
    assert compiled.stats["compiled_calls"] >= 1, compiled.stats
    compare(out, "compiled")
    hlo = compiled.hlo_text(*args)
    for op in ("all-reduce", "all-gather", "reduce-scatter"):
        assert op in hlo, f"no {op} in the compiled program"
    return "eager and compiled values match the per-rank definition"


@check("process_group")
def _():
    dist.init_process_group()
    try:
        assert dist.get_world_size() == 1 and dist.get_rank() == 0       # one process drives the 8 devices
        assert dist.get_world_size(dist.default_mesh()) == N
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    import jax
    if jax.device_count() != N:
        out = {"devices": {"ok": False, "detail": f"expected {N} devices, got {jax.device_count()}"}}
    else:
        out = run_checks(sys.argv[1:] or list(CHECKS))
        out["references"] = {k: [p.tolist() for p in v] for k, v in REF.items()}
    sys.stdout.write(json.dumps(out) + "\n")
