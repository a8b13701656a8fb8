"""torchish.distributed and torchish.nn.parallel.

The test session's JAX already runs with one CPU device, so everything that needs several devices runs in ONE
subprocess (``tests/_dist_worker.py`` with ``--xla_force_host_platform_device_count=8``) whose JSON report
``test_multi_device`` reads: data-parallel (compiled, eager, ``no_sync``), FSDP/HSDP and the collectives
over 8 devices against the single-device run, PyTorch and the collectives' per-rank definition. The rest runs
here on one device against PyTorch's one-rank process group (``gloo``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from oracle import needs_torch, torch, torchish

import _dist_worker
import torchish.distributed as tdist
from torchish.nn.parallel import DistributedDataParallel

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_dist_worker.py")
CHECKS = ("ddp_compiled", "ddp_no_sync", "ddp_eager", "ddp_dropout", "data_parallel_eager", "fsdp_compiled",
          "hsdp_2d_eager", "collectives", "process_group")
# 8 host devices; XLA's cheaper CPU code generation (the worker's cost is compiling, its programs are tiny)
FLAGS = "--xla_force_host_platform_device_count=8 --xla_backend_optimization_level=0 " \
        "--xla_llvm_disable_expensive_passes=true"


@pytest.mark.slow
def test_multi_device():
    """The worker's checks over 8 devices pass, and its single-device run (the reference of the 8-device runs) is
    PyTorch's training run, with one and with two micro-batches.

    One test, not one per check: under pytest-xdist a module-scoped fixture runs once per worker that gets one of
    the module's tests, so the worker subprocess (nearly all of this file's time) could run on both CI workers."""
    env = dict(os.environ, XLA_FLAGS=f"{os.environ.get('XLA_FLAGS', '')} {FLAGS}".strip(), JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, WORKER], env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "devices" not in report, report["devices"]["detail"]
    assert [name for name in CHECKS if name not in report] == [], "the worker did not run these checks"
    failed = {name: report[name]["detail"] for name in CHECKS if not report[name]["ok"]}
    assert not failed, "\n".join(f"{name}:\n{detail}" for name, detail in failed.items())
    if torch is None:  # the oracle is optional: the reference comparison needs it
        return
    for micro in (1, 2):
        got = report["references"].get(f"micro{micro}")
        assert got is not None, f"the worker computed no single-device reference (micro={micro})"
        expected = _dist_worker.train(torch, compiled=False, micro=micro).params
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(np.asarray(a, dtype=np.float32), b, rtol=2e-4, atol=2e-5,
                                       err_msg=f"micro={micro}")


# ---- process group (one process) ----------------------------------------------------------------------------

@pytest.fixture
def groups():
    """Both libraries' default process groups (PyTorch's: one-rank gloo), destroyed afterwards."""
    tdist.init_process_group()
    if torch is not None:
        import torch.distributed as dist
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield
    tdist.destroy_process_group()
    if torch is not None:
        torch.distributed.destroy_process_group()


def _error_type(fn):
    try:
        fn()
    except Exception as e:  # the type is what is compared
        return type(e)
    return None


@needs_torch
@pytest.mark.parametrize("name", ["get_rank", "get_world_size", "barrier", "get_backend", "destroy_process_group"])
def test_uninitialized_errors(name):
    expected = _error_type(getattr(torch.distributed, name))
    assert expected is not None
    assert _error_type(getattr(tdist, name)) is expected


@needs_torch
def test_init_and_destroy(groups):
    d = torch.distributed
    assert tdist.is_initialized() and d.is_initialized()
    assert (tdist.get_rank(), tdist.get_world_size()) == (d.get_rank(), d.get_world_size())
    assert tdist.barrier() is None
    assert _error_type(lambda: tdist.init_process_group()) is _error_type(
        lambda: d.init_process_group("gloo", store=d.HashStore(), rank=0, world_size=1)) is ValueError
    assert tdist.get_world_size(tdist.default_mesh()) == 1        # the devices of the mesh


def test_bad_init_method():
    with pytest.raises(RuntimeError, match="No rendezvous handler"):
        tdist.init_process_group(init_method="bogus://x")
    with pytest.raises(ValueError):
        tdist.init_process_group(world_size=2, rank=5)
    assert not tdist.is_initialized()


# ---- collectives on one rank: the same values and errors as PyTorch's one-rank group -------------------------

def _collectives(lib, data):
    d = torch.distributed if lib is torch else tdist
    out = {}
    for name in ("SUM", "MAX", "MIN", "PRODUCT"):
        t = lib.tensor(data)
        d.all_reduce(t, op=getattr(d.ReduceOp, name))
        out[name] = t
    t = lib.tensor(data)
    d.broadcast(t, src=0)
    out["broadcast"] = t
    t = lib.tensor(data)
    d.reduce(t, dst=0)
    out["reduce"] = t
    outs = [lib.zeros(*data.shape)]
    d.all_gather(outs, lib.tensor(data))
    out["all_gather"] = outs[0]
    into = lib.zeros(*data.shape)
    d.all_gather_single(into, lib.tensor(data))
    out["into"] = into
    rs = lib.zeros(*data.shape)
    d.reduce_scatter_single(rs, lib.tensor(data))
    out["reduce_scatter_tensor"] = rs
    work = d.all_reduce(lib.tensor(data), async_op=True)
    out["async"] = work.wait()
    return out


@needs_torch
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_collectives_one_rank(groups):
    data = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    got, expected = _collectives(torchish, data), _collectives(torch, data)
    for k, v in expected.items():
        if k == "async":
            assert got[k] is v is True
        else:
            np.testing.assert_allclose(got[k].numpy(), v.numpy(), err_msg=k)


@needs_torch
@pytest.mark.parametrize("case", ["broadcast_src", "gather_list", "not_tensor", "bad_op"])
def test_collective_errors(groups, case):
    def run(lib):
        d = torch.distributed if lib is torch else tdist
        t = lib.ones(2)
        if case == "broadcast_src":
            d.broadcast(t, src=3)
        elif case == "gather_list":
            d.all_gather([lib.ones(2), lib.ones(2)], t)
        elif case == "not_tensor":
            d.all_reduce([1.0, 2.0])
        else:
            d.all_reduce(t, op=42)
    expected = _error_type(lambda: run(torch))
    assert expected is not None
    assert _error_type(lambda: run(torchish)) is expected


# ---- DistributedDataParallel on one device ------------------------------------------------------------------

@needs_torch
def test_ddp_wraps_like_torch(groups):
    tw = DistributedDataParallel(_dist_worker.mlp(torchish))
    pw = torch.nn.parallel.DistributedDataParallel(_dist_worker.mlp(torch))
    assert list(tw.state_dict()) == list(pw.state_dict())
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    for model, lib in ((tw, torchish), (pw, torch)):
        with model.no_sync():
            model(lib.tensor(x)).square().mean().backward()
        model(lib.tensor(x)).square().mean().backward()
    for a, b in zip(tw.parameters(), pw.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=2e-4, atol=2e-5)
    frozen = (torchish.nn.Linear(2, 2).requires_grad_(False), torch.nn.Linear(2, 2).requires_grad_(False))
    assert _error_type(lambda: DistributedDataParallel(frozen[0])) is _error_type(
        lambda: torch.nn.parallel.DistributedDataParallel(frozen[1])) is RuntimeError


def test_device_mesh_one_device():
    mesh = tdist.init_device_mesh("cpu", (1,), mesh_dim_names=("data",))
    assert (mesh.size(), mesh.ndim, mesh.mesh_dim_names, mesh.get_rank()) == (1, 1, ("data",), 0)
    assert mesh["data"] == mesh
    with pytest.raises(RuntimeError):
        tdist.init_device_mesh("cpu", (2,))
    with pytest.raises(KeyError):
        mesh["model"]
    t = tdist.distribute_tensor(torchish.ones(2, 3, requires_grad=True), mesh, [tdist.Shard(1)])
    assert t.is_leaf and t.requires_grad and tuple(t.shape) == (2, 3)
    with pytest.raises(IndexError):
        tdist.distribute_tensor(torchish.ones(2), mesh, [tdist.Shard(3)])


# ---- DistributedSampler (torchish.utils.data) ---------------------------------------------------------------

def _sampler_cls():
    from torchish.utils.data import DistributedSampler
    return DistributedSampler


@needs_torch
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_slices(drop_last):
    sampler = _sampler_cls()
    data = list(range(10))
    for rank in range(3):
        got = list(sampler(data, num_replicas=3, rank=rank, shuffle=False, drop_last=drop_last))
        expected = list(torch.utils.data.DistributedSampler(data, num_replicas=3, rank=rank, shuffle=False,
                                                            drop_last=drop_last))
        assert got == expected


def test_distributed_sampler_shuffle_partitions():
    sampler = _sampler_cls()
    data = list(range(12))
    parts = [list(sampler(data, num_replicas=4, rank=r, shuffle=True, seed=3)) for r in range(4)]
    assert sorted(i for p in parts for i in p) == data          # the ranks split one permutation
    assert all(len(p) == 3 for p in parts)
