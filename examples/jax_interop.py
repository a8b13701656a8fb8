"""torchish and JAX in one program: values, models and training loops crossing in both directions.

1. **Values.** ``tensor.jax()`` and ``torchish.from_jax(array)`` share the buffer (no copy); DLPack moves values
   to and from anything that speaks it (numpy, real PyTorch when installed); numpy both ways.
2. **A torchish model trained by plain JAX.** ``torchish.func.to_jax(model)`` gives ``(params, apply_fn)``, a pure
   JAX function: ``jax.jit(jax.value_and_grad(...))`` and ``optax.adam`` train it, and the trained parameters are
   loaded back into the torchish model with ``load_state_dict``. The same model trained by torchish's own
   ``loss.backward()`` + ``torchish.optim.Adam`` reaches the same parameters (checked).
3. **A flax.nnx model trained by torchish.** ``torchish.interop.NNXModule(nnx_model)`` makes the nnx model a
   torchish ``nn.Module``: its ``nnx.Param``s are torchish Parameters, ``loss.backward()`` fills their ``.grad``,
   ``torchish.optim.AdamW`` and ``torchish.compile`` work on it, and ``to_nnx()`` writes the result back.

Data: a synthetic regression task made in-process (a fixed random two-layer teacher network).
Run: ``python examples/jax_interop.py`` (``--quick``, or TORCHISH_EXAMPLE_QUICK=1, for fewer steps).
"""
from __future__ import annotations

import argparse
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from tqdm import tqdm

import torchish as torch
import torchish.nn as nn
import torchish.nn.functional as F
from torchish.interop import NNXModule


def make_data(n, seed=0):
    """Inputs in R^8 and targets from a fixed random teacher network (tanh hidden layer), plus a little noise."""
    rng = np.random.default_rng(seed)
    w1, w2 = rng.normal(size=(8, 32)) / np.sqrt(8), rng.normal(size=(32, 1)) / np.sqrt(32)
    x = rng.normal(size=(n, 8)).astype(np.float32)
    y = (np.tanh(x @ w1) @ w2 + 0.01 * rng.normal(size=(n, 1))).astype(np.float32)
    return x, y


def values_section():
    print("== 1. values ==")
    a = jnp.arange(6.0).reshape(2, 3)
    t = torch.from_jax(a)
    print("from_jax shares the buffer:", t.jax() is a)
    doubled = (t * 2).jax()                                  # torchish result -> jax.Array, no copy
    print("torchish result as jax.Array:", type(doubled).__name__, doubled.tolist())
    via_dlpack = torch.from_dlpack(np.arange(3, dtype=np.float32))
    print("from_dlpack(numpy):", via_dlpack)
    print("numpy round trip:", torch.from_numpy(np.ones(2)).numpy().dtype)
    try:
        import torch as real_torch
    except ImportError:
        print("PyTorch not installed: skipping the DLPack round trip with real torch tensors")
    else:
        pt = real_torch.from_dlpack(torch.linspace(0, 1, 3))
        back = torch.from_dlpack(pt * 10)
        print("torchish -> PyTorch -> torchish via DLPack:", back)


def mlp():
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))


def torchish_model_trained_by_jax(x, y, steps, batch):
    print("\n== 2. a torchish model trained by jax.jit + optax ==")
    torch.manual_seed(0)
    model = mlp()
    twin = mlp()
    twin.load_state_dict(model.state_dict())                 # the same start for the torchish-trained copy
    params, apply_fn = torch.func.to_jax(model)              # pure function of a dict of jax.Arrays
    tx = optax.adam(1e-2)
    opt_state = tx.init(params)

    @jax.jit
    def jax_step(params, opt_state, xb, yb):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((apply_fn(p, xb) - yb) ** 2))(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    opt = torch.optim.Adam(twin.parameters(), lr=1e-2)

    def torchish_step(xb, yb):
        opt.zero_grad()
        loss = F.mse_loss(twin(xb), yb)
        loss.backward()
        opt.step()
        return loss

    n = len(x)
    for step in (bar := tqdm(range(steps), desc="jax.jit+optax vs torchish", unit="step")):
        i = (step * batch) % n
        xb, yb = x[i:i + batch], y[i:i + batch]
        params, opt_state, jloss = jax_step(params, opt_state, jnp.asarray(xb), jnp.asarray(yb))
        tloss = torchish_step(torch.from_numpy(xb), torch.from_numpy(yb))
        if step % 20 == 0:
            bar.set_postfix(jax=f"{float(jloss):.4f}", torchish=f"{tloss.item():.4f}")
    model.load_state_dict({k: torch.from_jax(v) for k, v in params.items()})
    gap = max(float((p - q).abs().max()) for p, q in zip(model.parameters(), twin.parameters()))
    print(f"final loss: jax.jit+optax {float(jloss):.5f}, torchish {tloss.item():.5f}")
    print(f"largest parameter difference between the two trainings: {gap:.2e}")
    return gap


class NNXRegressor(nnx.Module):
    def __init__(self, rngs):
        self.linear1 = nnx.Linear(8, 32, rngs=rngs)
        self.linear2 = nnx.Linear(32, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear2(jnp.tanh(self.linear1(x)))


def nnx_model_trained_by_torchish(x, y, steps, batch):
    print("\n== 3. a flax.nnx model trained by torchish ==")
    nnx_model = NNXRegressor(nnx.Rngs(0))
    model = NNXModule(nnx_model)
    print("parameters seen by torchish:", [f"{n} {tuple(p.shape)}" for n, p in model.named_parameters()])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-4)

    @torch.compile
    def step(xb, yb):
        opt.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    first = None
    for i in (bar := tqdm(range(steps), desc="nnx model, torchish.compile + AdamW", unit="step")):
        j = (i * batch) % len(x)
        loss = step(xt[j:j + batch], yt[j:j + batch])
        if first is None:
            first = loss.item()
        if i % 20 == 0:
            bar.set_postfix(loss=f"{loss.item():.4f}")
    print(f"loss: first step {first:.4f}, last step {loss.item():.5f}")
    model.to_nnx()                                           # the trained values back into the nnx module
    direct = float(jnp.mean((nnx_model(jnp.asarray(x)) - jnp.asarray(y)) ** 2))
    print(f"the nnx module itself, after to_nnx(): mse on all data {direct:.5f}")
    return first, loss.item()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer training steps (the CI smoke mode)")
    args = ap.parse_args(argv)
    quick = args.quick or os.environ.get("TORCHISH_EXAMPLE_QUICK") == "1"
    steps = 40 if quick else 400
    x, y = make_data(512)
    values_section()
    gap = torchish_model_trained_by_jax(x, y, steps, batch=64)
    first, last = nnx_model_trained_by_torchish(x, y, steps, batch=64)
    ok = gap < 1e-4 and last < first
    print("\nall checks passed" if ok else "\nCHECK FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
