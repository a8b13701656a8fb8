"""Hand-written JAX versions of the benchmark's models (MLP, video, transformer): pure functions over a parameter
dict (named as PyTorch names them, initialised from the same torchish model), ``jax.jit`` + ``optax.adam`` — the
reference torchish is measured against."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def _mm(a, b):
    """A matrix product in full float32, as PyTorch's default and torchish compute it (JAX's default precision
    would let GPUs use TF32: a cheaper, different computation). Convolutions keep JAX's default precision: PyTorch
    (``cudnn.allow_tf32``) and torchish allow TF32 there."""
    return jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)


def _xent(logits, y):
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


def _conv3d(x, w, b):
    out = jax.lax.conv_general_dilated(x, w, (1, 1, 1), "VALID", dimension_numbers=("NCDHW", "OIDHW", "NCDHW"))
    return out + b[None, :, None, None, None]


def _pool122(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 1, 2, 2), (1, 1, 1, 2, 2), "VALID")


def _gru(x, p, hidden):
    wi, wh, bi, bh = p["gru.weight_ih_l0"], p["gru.weight_hh_l0"], p["gru.bias_ih_l0"], p["gru.bias_hh_l0"]
    gi_all = _mm(x, wi.T) + bi  # (B, T, 3H)

    def cell(h, gi):
        gh = _mm(h, wh.T) + bh
        ir, iz, in_ = jnp.split(gi, 3, axis=-1)
        hr, hz, hn = jnp.split(gh, 3, axis=-1)
        r = jax.nn.sigmoid(ir + hr)
        z = jax.nn.sigmoid(iz + hz)
        n = jnp.tanh(in_ + r * hn)
        h = (1 - z) * n + z * h
        return h, h
    h0 = jnp.zeros((x.shape[0], hidden), x.dtype)
    h, _ = jax.lax.scan(cell, h0, jnp.swapaxes(gi_all, 0, 1))
    return h


def video_forward(p, x):
    h = _pool122(jax.nn.relu(_conv3d(x, p["c1.weight"], p["c1.bias"])))
    h = _pool122(jax.nn.relu(_conv3d(h, p["c2.weight"], p["c2.bias"])))
    h = jnp.swapaxes(h.mean(axis=(3, 4)), 1, 2)
    h = _gru(h, p, p["gru.weight_hh_l0"].shape[1])
    return _mm(h, p["fc.weight"].T) + p["fc.bias"]


def _layer_norm(x, w, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + eps) * w + b


def transformer_forward(p, x, heads, layers):
    B, S, D = x.shape
    hd = D // heads
    for i in range(layers):
        pre = f"enc.layers.{i}."
        qkv = _mm(x, p[pre + "self_attn.in_proj_weight"].T) + p[pre + "self_attn.in_proj_bias"]
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q, k, v = (t.reshape(B, S, heads, hd).transpose(0, 2, 1, 3) for t in (q, k, v))
        att = jax.nn.softmax(_mm(q, k.transpose(0, 1, 3, 2)) / jnp.sqrt(hd), axis=-1)
        o = _mm(att, v).transpose(0, 2, 1, 3).reshape(B, S, D)
        o = _mm(o, p[pre + "self_attn.out_proj.weight"].T) + p[pre + "self_attn.out_proj.bias"]
        x = _layer_norm(x + o, p[pre + "norm1.weight"], p[pre + "norm1.bias"])
        f = jax.nn.relu(_mm(x, p[pre + "linear1.weight"].T) + p[pre + "linear1.bias"])
        f = _mm(f, p[pre + "linear2.weight"].T) + p[pre + "linear2.bias"]
        x = _layer_norm(x + f, p[pre + "norm2.weight"], p[pre + "norm2.bias"])
    return _mm(x.mean(1), p["fc.weight"].T) + p["fc.bias"]


def mlp_forward(params, x, n_layers):
    h = x
    for i in range(n_layers):
        h = _mm(h, params[f"{2 * i}.weight"].T) + params[f"{2 * i}.bias"]
        if i < n_layers - 1:
            h = jax.nn.relu(h)
    return h


def make_step(forward, params, x, y, donate=False):
    """``run()``: one jitted step (loss, gradients, optax.adam update) of ``forward``. ``donate``: the parameters'
    and optimizer state's buffers are donated, as torchish.compile donates the state it writes. ``run.hlo()`` is
    the optimised program's text."""
    tx = optax.adam(1e-3)
    opt_state = tx.init(params)

    def step(params, opt_state, x, y):
        loss, g = jax.value_and_grad(lambda p: _xent(forward(p, x), y))(params)
        updates, opt_state = tx.update(g, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss
    step = jax.jit(step, donate_argnums=(0, 1) if donate else ())
    if donate:
        params = jax.tree.map(jnp.copy, params)  # donation deletes the buffers: not the torchish model's own
    state = [params, opt_state]
    xj, yj = jnp.asarray(x), jnp.asarray(y)

    def call():  # the step, not waiting for it
        state[0], state[1], loss = step(state[0], state[1], xj, yj)
        return loss

    def run():
        call().block_until_ready()
    run.call = call
    run.hlo = lambda: step.lower(state[0], state[1], xj, yj).compile().as_text()
    return run


def mlp_step(spec, x, y, model, donate=False):
    params = {n: p._d for n, p in model.named_parameters()}
    n = len(spec["sizes"]) - 1
    return make_step(lambda p, x: mlp_forward(p, x, n), params, x, y, donate)


def video_step(spec, x, y, model, donate=False):
    params = {n: p._d for n, p in model.named_parameters()}
    return make_step(video_forward, params, x, y, donate)


def transformer_step(spec, x, y, model, donate=False):
    params = {n: p._d for n, p in model.named_parameters()}
    return make_step(lambda p, x: transformer_forward(p, x, spec["heads"], spec["layers"]), params, x, y, donate)
