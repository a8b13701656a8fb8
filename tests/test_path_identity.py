"""With ``torchish.config.exact_programs``, every execution path gives the same bits: ops dispatched one by one with
the backward node by node, the lowered backward (one program per backward), and lazy capture (forward, backward and
optimizer update as one program). A program made of recorded ops then keeps each op a computation of its own
(``torchish/ops/nesting.py``), and a lazy program takes Python scalars as arguments, so XLA cannot fuse or fold
across ops and round otherwise than the ops do one by one."""
from __future__ import annotations

import numpy as np
import pytest

import torchish
import torchish.nn as nn
import torchish.nn.functional as F
from torchish.ops import lazy

PATHS = {
    "node_by_node": dict(lazy=False, lowered_backward="never", lazy_compile="auto", exact_programs=True),
    "lowered": dict(lazy=False, lowered_backward="always", lazy_compile="auto", exact_programs=True),
    "lazy_compiled": dict(lazy=True, lowered_backward="auto", lazy_compile="always", exact_programs=True),
}
OPTIMIZERS = {
    "adam": lambda ps: torchish.optim.Adam(ps, lr=1e-2),
    "rmsprop_centered": lambda ps: torchish.optim.RMSprop(ps, lr=1e-2, centered=True, momentum=0.5),
    "adagrad": lambda ps: torchish.optim.Adagrad(ps, lr=0.1),
}


def _train(path, opt_name, steps=3):
    """Losses, parameters, gradients and optimizer state after ``steps`` steps of a small model whose ops
    (products feeding reductions, a transpose feeding a matmul, divisions by hyper-parameters) would round
    differently if fused across."""
    saved = {k: getattr(torchish.config, k) for k in PATHS[path]}
    lazy.materialize()
    for k, v in PATHS[path].items():
        setattr(torchish.config, k, v)
    try:
        rng = np.random.default_rng(2)
        model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.GELU(), nn.LayerNorm(32),
                              nn.Linear(32, 5))
        with torchish.no_grad():
            for p in model.parameters():
                p.copy_(torchish.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
        opt = OPTIMIZERS[opt_name](model.parameters())
        x = torchish.tensor(rng.standard_normal((8, 16)).astype(np.float32))
        y = torchish.tensor(rng.integers(0, 5, 8))
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            out = model(x)
            loss = F.cross_entropy(out, y) + 1e-3 * (out * out).sum()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        state = [v.numpy() for s in opt.state.values() for _, v in sorted(s.items()) if isinstance(v, torchish.Tensor)]
        return (losses, [p.detach().numpy() for p in model.parameters()],
                [p.grad.numpy() for p in model.parameters()], state)
    finally:
        lazy.materialize()
        for k, v in saved.items():
            setattr(torchish.config, k, v)


@pytest.mark.parametrize("opt_name", list(OPTIMIZERS))
def test_training_steps_are_bit_identical_on_every_path(opt_name):
    ref = _train("node_by_node", opt_name)
    for path in ("lowered", "lazy_compiled"):
        got = _train(path, opt_name)
        assert got[0] == ref[0], path
        for what, g, r in zip(("parameters", "gradients", "optimizer state"), got[1:], ref[1:]):
            assert len(g) == len(r)
            for a, b in zip(g, r):
                np.testing.assert_array_equal(a, b, err_msg=f"{path}: {what}")


def test_a_lazy_program_takes_each_python_scalar_as_its_own_argument():
    """Scalars are passed to a program (made device arrays once, then reused), never baked in as constants: XLA
    folds a constant into the arithmetic around it (Adam's bias corrections) and the update rounds otherwise than
    its kernel alone (the ``adam`` case above). Values ``==`` does not tell apart get arrays of their own."""
    vals = [0.0, -0.0, 1, 1.0, True, float("nan"), 2.5]
    arrays = lazy._scalar_arrays(vals)
    assert [a.dtype for a in arrays] == [np.float64, np.float64, np.int64, np.float64, np.bool_, np.float64,
                                         np.float64]
    assert np.signbit(arrays[1]) and not np.signbit(arrays[0]) and np.isnan(arrays[5])
    assert all(a is b for a, b in zip(lazy._scalar_arrays(vals), arrays))  # reused, no transfer per call


def test_a_lazy_program_holds_ops_with_nested_jaxprs():
    """Ops whose JAX implementation carries jaxprs in named tuples (``custom_linear_solve`` in ``jnp.linalg.solve``,
    which the orthogonal parametrisation's registration calls) compile in a lazy program and match the ops run one by
    one."""
    def run():
        torchish.manual_seed(0)
        layer = nn.Module()
        layer.weight = nn.Parameter(torchish.tensor(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3)))
        layer = nn.utils.parametrizations.orthogonal(layer)
        loss = (layer.weight * 2).sum()
        loss.backward()
        return layer.weight.detach().numpy(), layer.parametrizations.weight.original.grad.numpy()
    ref = run()
    saved = (torchish.config.lazy, torchish.config.lazy_compile, torchish.config.exact_programs)
    lazy.materialize()
    torchish.config.lazy, torchish.config.lazy_compile, torchish.config.exact_programs = True, "always", True
    try:
        got = run()
    finally:
        lazy.materialize()
        torchish.config.lazy, torchish.config.lazy_compile, torchish.config.exact_programs = saved
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g, r)


def test_exact_programs_is_off_by_default_and_keyed_into_the_caches():
    """Fused programs are the default (faster: a convolution's backward keeps its fusions); a program compiled for
    one setting is not reused under the other."""
    assert torchish._config.Config().exact_programs is False
    with pytest.raises(ValueError, match="must be one of"):
        torchish.config.exact_programs = "yes"
    from torchish.ops import nesting
    saved = torchish.config.exact_programs
    try:
        torchish.config.exact_programs = False
        assert nesting.options() == nesting.AS_WRITTEN  # (every program keeps its roundings to half types)
        torchish.config.exact_programs = True
        assert nesting.options() == {**nesting.AS_WRITTEN, **nesting.NO_INLINING}  # (the suite runs on CPU)
    finally:
        torchish.config.exact_programs = saved


def test_nested_kernels_mark_inner_jits_inline_with_jaxs_own_value():
    """nesting marks the jit equations inside an op's kernel inline with the value jax itself gives ``inline=True``
    (a bool up to jax 0.10, the enum ``jax.Inline`` from 0.11: a bool there broke every lowered backward), and
    a program of nested kernels evaluates to the kernels' values."""
    import jax
    import jax.numpy as jnp
    from torchish.ops import nesting

    def kernel(x):
        return jnp.where(x > 0, x, 0.5 * x)  # (jnp.where is a jitted helper: an inner jit equation)

    closed = jax.make_jaxpr(kernel)(jnp.ones(3))
    inner = [e for e in closed.jaxpr.eqns if e.primitive.name in ("jit", "pjit")]
    assert inner, "expected jnp.where to trace as a nested jit"
    marked = [e for e in nesting._inline_all(closed.jaxpr).eqns if e.primitive.name in ("jit", "pjit")]
    for before, after in zip(inner, marked):
        assert type(after.params["inline"]) is type(before.params["inline"])  # (jax's own type for the parameter)
        assert after.params["inline"] != before.params["inline"]
    x = jnp.asarray([-2.0, 0.0, 3.0])
    fn = nesting.nested(kernel, ("test_nested_kernels",))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: fn(v))(x)), np.asarray(kernel(x)))
    assert np.asarray(nesting._inlined_call(kernel, x)).tolist() == np.asarray(kernel(x)).tolist()
