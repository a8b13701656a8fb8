"""Regression tests from running generative-model and advanced-autograd programs (VAE, GAN, WGAN-GP, flows,
torch.func, custom Functions) on torchish and on PyTorch."""
import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch


def _both(fn):
    return fn(torch), fn(torchish)


def _raises_alike(fn):
    errs = []
    for lib in (torch, torchish):
        with pytest.raises(Exception) as info:
            fn(lib)
        errs.append(info.value)
    assert type(errs[1]) is type(errs[0]), errs


@needs_torch
def test_binary_cross_entropy_checks_target_range_after_input():
    for x, t in (([0.2, 0.7], [0.0, 1.5]), ([1.2, 0.7], [0.0, 1.5]), ([0.2, 0.7], [0.0, float("nan")]),
                 ([0.2, 0.7], [-0.1, 1.0])):
        _raises_alike(lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor(x), lib.tensor(t)))


def _cube_fn(lib):
    class Cube(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, k):
            return x ** 3 * k, (3 * x ** 2 * k)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])
            ctx.k = inputs[1]
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, g, g_dx):
            x, dx = ctx.saved_tensors
            return g * dx * 10, None   # a deliberately "wrong" gradient: the transforms must use it

    class Old(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Cube, Old


@needs_torch
def test_custom_function_inside_func_transforms_uses_its_backward():
    def run(lib):
        Cube, _ = _cube_fn(lib)
        f = lib.func
        x = lib.tensor([0.5, -1.0, 2.0])
        xs = lib.tensor([[0.5, 1.0], [2.0, -1.0]])
        g = f.grad(lambda t: Cube.apply(t, 2.0)[0].sum())(x)
        gg = f.grad(f.grad(lambda t: Cube.apply(t, 2.0)[0].sum()))(lib.tensor(0.7))
        vg = f.vmap(f.grad(lambda t: Cube.apply(t, 1.5)[0].sum()))(xs)
        jr = f.jacrev(lambda t: Cube.apply(t, 2.0)[0])(x)
        out, vjp_fn = f.vjp(lambda t: Cube.apply(t, 2.0)[0], x)
        return [t.detach().numpy() for t in (g, gg, vg, jr, out, vjp_fn(lib.ones(3))[0])]
    for r, g in zip(*_both(run)):
        np.testing.assert_allclose(g, r, rtol=1e-6)


@needs_torch
def test_custom_function_transform_requirements_raise_like_torch():
    def old_in_grad(lib):
        _, Old = _cube_fn(lib)
        lib.func.grad(lambda t: Old.apply(t).sum())(lib.ones(2))

    def vmap_without_rule(lib):
        Cube, _ = _cube_fn(lib)

        class NoRule(Cube):
            generate_vmap_rule = False
        lib.func.vmap(lambda t: NoRule.apply(t, 1.0)[0])(lib.ones(2))

    def jvp_without_rule(lib):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * x

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g
        lib.func.jvp(Sq.apply, (lib.ones(2),), (lib.ones(2),))
    for fn in (old_in_grad, vmap_without_rule, jvp_without_rule):
        _raises_alike(fn)


@needs_torch
def test_layer_norm_backward_mixed_bf16_input_float_weight():
    # autocast('cpu', bfloat16) feeds LayerNorm a bfloat16 input with its float32 weight: PyTorch's mixed-type kernel
    # keeps mean/rstd in float32 and sums the weight gradient as dy * (rstd * x - rstd * mean)
    rng = np.random.default_rng(0)
    xs, gs = rng.standard_normal((40, 64)).astype(np.float32), rng.standard_normal((40, 64)).astype(np.float32) * 0.03
    ws, bs = rng.uniform(0.5, 1.5, 64).astype(np.float32), rng.uniform(-0.5, 0.5, 64).astype(np.float32)
    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the weight gradient's bfloat16 buffers are per thread in PyTorch
    try:
        def run(lib):
            x = lib.tensor(xs).bfloat16().requires_grad_()
            w, b = lib.tensor(ws).requires_grad_(), lib.tensor(bs).requires_grad_()
            lib.nn.functional.layer_norm(x, (64,), w, b).backward(lib.tensor(gs).bfloat16())
            return [t.float().numpy() for t in (x.grad, w.grad, b.grad)] + [w.grad.dtype == lib.float32]
        ref, got = _both(run)
    finally:
        torch.set_num_threads(n_threads)
    assert got[3] and ref[3]
    for r, g in zip(ref[:3], got[:3]):
        np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-7)


@needs_torch
def test_foreach_ops_as_ema_and_optimizer_code_uses_them():
    # timm/ema-pytorch style EMA: torch._foreach_lerp_ / _foreach_mul_ / _foreach_add_ over parameter lists
    def run(lib):
        rng = np.random.default_rng(0)
        mk = lambda: [lib.tensor(rng.uniform(0.1, 2, s).astype(np.float32)) for s in ((3,), (2, 2), ())]  # noqa
        ema, model, other = mk(), mk(), mk()
        with lib.no_grad():
            r = lib._foreach_lerp_(ema, model, 0.1)
            lib._foreach_mul_(ema, 0.9)
            lib._foreach_add_(ema, model, alpha=0.1)
            lib._foreach_addcmul_(ema, model, other, value=-0.05)
            lib._foreach_maximum_(ema, 0.3)
        res = [r is ema, type(lib._foreach_sqrt(ema)).__name__]
        res += [t.numpy() for t in ema + list(lib._foreach_div(ema, lib.tensor(3.0)))]
        res += [t.numpy() for t in lib._foreach_norm(ema) + lib._foreach_pow(2.0, model)]
        res += [t.numpy() for t in lib._foreach_addcdiv(ema, model, other, [1.0, 2.0, 3.0])]
        x = lib.ones(2, requires_grad=True)
        lib._foreach_mul([x], 3.0)[0].sum().backward()
        return res + [x.grad.numpy()]
    ref, got = _both(run)
    assert got[:2] == ref[:2] == [True, "tuple"]
    for r, g in zip(ref[2:], got[2:]):
        np.testing.assert_allclose(g, r, rtol=1e-6)
    for call in (lambda lib: lib._foreach_add([lib.ones(2)], [lib.ones(2)] * 2),
                 lambda lib: lib._foreach_add([], 1),
                 lambda lib: lib._foreach_add([lib.ones(2)], [1.0, 2.0]),
                 lambda lib: lib._foreach_add([lib.ones(2)], lib.ones(2)),
                 lambda lib: lib._foreach_sub([lib.ones(2)], lib.ones(2)),
                 lambda lib: lib._foreach_add([lib.ones(2)], 1, alpha=2)):
        _raises_alike(call)


@needs_torch
def test_func_linearize_matches_torch():
    def run(lib):
        x = lib.tensor([0.3, -1.2, 2.0])
        out, jvp_fn = lib.func.linearize(lambda a, b: (lib.sin(a) * b, (a * b).exp()), x, x * 0.5)
        t1 = jvp_fn(lib.ones(3), lib.tensor([0.5, 1.0, -1.0]))
        t2 = jvp_fn(x, x)
        return [t.numpy() for t in (*out, *t1, *t2)]
    for r, g in zip(*_both(run)):
        np.testing.assert_allclose(g, r, rtol=1e-6)
    _raises_alike(lambda lib: lib.func.linearize(lib.sin, lib.ones(2))[1](lib.ones(3)))
    _raises_alike(lambda lib: lib.func.linearize(lib.sin, lib.ones(2))[1](lib.ones(2, dtype=lib.float64)))
    _raises_alike(lambda lib: lib.func.linearize(lambda a: a * 2, lib.tensor([1, 2])))


@needs_torch
def test_vmap_over_batchnorm_updating_unbatched_running_stats_raises():
    for lib in (torch, torchish):
        bn = lib.nn.BatchNorm1d(3)
        with pytest.raises(RuntimeError, match="Batch norm got a batched tensor"):
            lib.func.vmap(bn)(lib.ones(4, 2, 3))
        F = lib.nn.functional
        ok = lib.func.vmap(lambda x, rm, rv: F.batch_norm(x, rm, rv, training=True))(
            lib.ones(4, 2, 3), lib.zeros(4, 3), lib.ones(4, 3))
        assert tuple(ok.shape) == (4, 2, 3)
        bn.eval()
        assert tuple(lib.func.vmap(bn)(lib.ones(4, 2, 3)).shape) == (4, 2, 3)


@needs_torch
def test_func_transforms_refuse_mutating_captured_tensors():
    # a training-mode BatchNorm (or any buffer update) inside grad: PyTorch raises; the buffers keep their values
    for lib in (torch, torchish):
        bn = lib.nn.BatchNorm1d(3)
        c = lib.zeros(3)
        with pytest.raises(RuntimeError, match="mutate a captured Tensor"):
            lib.func.grad(lambda x: bn(x).sum())(lib.ones(2, 3))

        def bump(x):
            c.add_(1.0)
            return (x * c).sum()
        with pytest.raises(RuntimeError, match="mutate a captured Tensor"):
            lib.func.grad(bump)(lib.ones(3))
        np.testing.assert_array_equal(bn.running_mean.numpy(), np.zeros(3, np.float32))
        np.testing.assert_array_equal(c.numpy(), np.zeros(3, np.float32))

        def local(x):  # Tensors made inside the function may be written in place
            y = lib.zeros(3)
            y.copy_(x)
            y[0] = x[1] * 2
            return (y * y).sum()
        np.testing.assert_allclose(lib.func.grad(local)(lib.tensor([1.0, 2.0, 3.0])).numpy(), [0.0, 20.0, 6.0])

        def write_batched(x):
            c.add_(x)
            return x
        with pytest.raises(RuntimeError):
            lib.func.vmap(write_batched)(lib.ones(2, 3))
        lib.func.vmap(lambda x: c.add_(1.0) * 0 + x)(lib.ones(2, 3))   # an unbatched write is allowed under vmap
        np.testing.assert_array_equal(c.numpy(), np.ones(3, np.float32))


@needs_torch
def test_func_transforms_allow_writes_into_tensors_made_inside():
    def run(lib):
        def f(x):  # the output built by slice assignment into a fresh buffer
            out = lib.zeros(4)
            out[:2] = x * 2
            out[2:] += x.sin()
            return out

        class Pick(lib.autograd.Function):  # a backward filling a fresh buffer in place, and a non-Tensor output
            @staticmethod
            def forward(x, idx):
                return x[idx] * 2, "tag"

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[1])
                ctx.n = inputs[0].shape[0]

            @staticmethod
            def backward(ctx, g, g_tag):
                idx, = ctx.saved_tensors
                out = lib.zeros(ctx.n, dtype=g.dtype)
                out.index_add_(0, idx, g * 2)
                return out, None
        x = lib.tensor([0.5, 1.0])
        idx = lib.tensor([0, 1, 1])
        g = lib.func.grad(lambda t: Pick.apply(t, idx)[0].pow(2).sum())(x)
        return [t.numpy() for t in (lib.func.jacrev(f)(x), lib.func.jacfwd(f)(x), g)] + [Pick.apply(x, idx)[1]]
    ref, got = _both(run)
    assert got[3] == ref[3] == "tag"
    for r, g in zip(ref[:3], got[:3]):
        np.testing.assert_allclose(g, r, rtol=1e-6)


# ----------------------------------------------------------------------------------------------------------------
# whole programs from the probe (they passed; kept as regression guards)


def _assert_close_tree(ref, got, rtol=2e-4, atol=2e-5):
    if isinstance(ref, dict):
        assert sorted(ref) == sorted(got)
        for k in ref:
            _assert_close_tree(ref[k], got[k], rtol, atol)
    elif isinstance(ref, (list, tuple)):
        assert len(ref) == len(got)
        for r, g in zip(ref, got):
            _assert_close_tree(r, g, rtol, atol)
    elif hasattr(ref, "detach"):
        assert str(ref.dtype).split(".")[-1] == str(got.dtype).split(".")[-1]
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=rtol, atol=atol)
    else:
        assert ref == pytest.approx(got, rel=rtol, abs=atol) if isinstance(ref, float) else ref == got


def _init(lib, module, seed):
    with lib.no_grad():
        for i, p in enumerate(module.parameters()):
            rng = np.random.default_rng(seed + i)
            p.copy_(lib.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
    return module


def _vae_steps(lib):
    nn, F = lib.nn, lib.nn.functional
    enc, dec = _init(lib, nn.Linear(8, 6), 50), _init(lib, nn.Linear(3, 8), 60)
    opt = lib.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.05)
    rng = np.random.default_rng(5)
    hist = []
    for _ in range(2):
        x = lib.from_numpy((rng.uniform(size=(4, 8)) > 0.5).astype(np.float32))
        eps = lib.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
        mu, logvar = enc(x).chunk(2, dim=-1)
        z = mu + eps * lib.exp(0.5 * logvar)
        logits = dec(z)
        bce = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
        bce2 = F.binary_cross_entropy(lib.sigmoid(logits), x, reduction="sum")
        kld = -0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = (bce + kld) / x.size(0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append([loss.item(), bce2.item(), kld.item()])
    return hist, enc.weight, dec.bias.grad


@needs_torch
def test_program_vae_training():
    _assert_close_tree(*_both(_vae_steps))


def _quantized_ste_model(lib):
    class RoundSTE(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return lib.round(x)

        @staticmethod
        def backward(ctx, g):
            return g

    class ClampGrad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, lo, hi):
            ctx.save_for_backward(x)
            ctx.lo, ctx.hi = lo, hi
            return x.clamp(lo, hi)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            mask = (x >= ctx.lo) & (x <= ctx.hi)
            return (g * mask.to(g.dtype) if ctx.needs_input_grad[0] else None), None, None

    lin = _init(lib, lib.nn.Linear(5, 4), 40)
    opt = lib.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    rng = np.random.default_rng(4)
    x = lib.tensor(rng.uniform(-1, 1, (6, 5)).astype(np.float32))
    tgt = lib.tensor(rng.uniform(-1, 1, (6, 4)).astype(np.float32))
    losses = []
    for _ in range(3):
        w = RoundSTE.apply(lin.weight * 4) / 4
        out = ClampGrad.apply(lib.nn.functional.linear(x, w, lin.bias), -0.5, 0.5)
        loss = lib.nn.functional.mse_loss(out, tgt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, lin.weight, lin.weight.grad, type(out.grad_fn).__name__


@needs_torch
def test_program_straight_through_quantized_layer():
    _assert_close_tree(*_both(_quantized_ste_model))
