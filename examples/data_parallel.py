"""Data-parallel (and sharded) training with torchish: one program over every device, the batch split over a mesh.

One host (without an accelerator, 8 CPU devices are simulated)::

    python examples/data_parallel.py            # DistributedDataParallel, compiled step
    python examples/data_parallel.py --fsdp     # parameters and Adam state sharded (fully_shard)
    python examples/data_parallel.py --quick    # a few steps, small model

Several hosts: ONE process per host, each driving all of its local devices. On every host run::

    torchrun --nnodes=2 --nproc_per_node=1 --node_rank=$NODE_RANK \\
        --master_addr=$HOST0 --master_port=29500 examples/data_parallel.py

(or set ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` = number of hosts and ``RANK`` = this host yourself and
run ``python examples/data_parallel.py``). ``init_process_group()`` then calls ``jax.distributed.initialize``;
``DistributedSampler`` gives each process its slice of the data, ``shard_batch`` splits each process's batch over
its devices, and the global batch is the concatenation of the processes' batches, as with PyTorch's DDP.

What the script shows: the model is wrapped (parameters replicated, or sharded with ``--fsdp``), each batch is
split over the mesh, the whole step (forward, ``backward()``, ``optimizer.step()``) is one compiled XLA program
in which XLA's partitioner inserted the gradient all-reduce, and the loss is the global batch's.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

if __name__ == "__main__" and "--xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    # must happen before JAX starts: simulate 8 devices on the host CPU (accelerators are used as they are)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402

import torchish as torch  # noqa: E402
import torchish.distributed as dist  # noqa: E402
import torchish.nn as nn  # noqa: E402
from torchish.distributed.fsdp import fully_shard  # noqa: E402
from torchish.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def make_data(n, features, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features)).astype(np.float32)
    w = rng.standard_normal((features, 1)).astype(np.float32)
    y = np.tanh(x @ w) + 0.05 * rng.standard_normal((n, 1)).astype(np.float32)
    return x, y.astype(np.float32)


def batches(x, y, batch_size, rank, world):
    """This process's batches: its DistributedSampler slice when torchish.utils.data has one."""
    try:
        from torchish.utils.data import DistributedSampler
        order = list(DistributedSampler(range(len(x)), num_replicas=world, rank=rank, shuffle=False))
    except ImportError:
        order = list(range(rank, len(x), world))
    for i in range(0, len(order) - batch_size + 1, batch_size):
        idx = order[i:i + batch_size]
        yield torch.tensor(x[idx]), torch.tensor(y[idx])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few steps on a small model")
    parser.add_argument("--fsdp", action="store_true", help="shard parameters and optimizer state")
    args = parser.parse_args(argv)

    dist.init_process_group()                          # several hosts: jax.distributed.initialize
    mesh = dist.default_mesh()                         # all devices of all processes, one axis "data"
    rank, world = dist.get_rank(), dist.get_world_size()
    hidden, steps = (32, 6) if args.quick else (256, 60)
    batch = 8 * mesh.size() // world                   # this process's batch: 8 rows per device

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                          nn.Linear(hidden, 1))
    model = fully_shard(model) if args.fsdp else DDP(model)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    @torch.compile
    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    x, y = make_data(batch * world * steps, 16)
    if rank == 0:
        kind = "fully_shard (FSDP)" if args.fsdp else "DistributedDataParallel"
        print(f"{kind} over {mesh.size()} {mesh.device_type} devices in {world} process(es); "
              f"global batch {batch * world}")
    t0 = time.perf_counter()
    for i, (xb, yb) in enumerate(batches(x, y, batch, rank, world)):
        loss = step(dist.shard_batch(xb), dist.shard_batch(yb))   # split this process's batch over the mesh
        if rank == 0 and (i % max(1, steps // 6) == 0 or i == steps - 1):
            print(f"step {i:3d}  loss {loss.item():.4f}")
    first = model[0] if args.fsdp else model.module[0]
    if rank == 0:
        print(f"{steps} steps in {time.perf_counter() - t0:.2f}s; first weight laid out as "
              f"{first.weight.jax().sharding.spec}")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
