"""torchish.amp against PyTorch 2.13 on the CPU (bfloat16 autocast): the casting policy per op (lower precision,
float32, promote, untouched), values and gradients of a small model under autocast, the autocast state (nesting,
decorator, threads, custom Functions), GradScaler's numbers and errors, and torchish.compile with autocast."""
import json
import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import torchish
from oracle import arr, assert_same, needs_avx512_torch, needs_torch, raised, to_numpy, torch

BF16 = dict(rtol=2e-2, atol=2e-2)  # results that went through bfloat16


def _tensors(lib, inputs, grad=False):
    out = []
    for a in inputs:
        if isinstance(a, np.ndarray):
            t = lib.tensor(a)
            out.append(t.requires_grad_(True) if grad and a.dtype.kind == "f" else t)
        else:
            out.append(a)
    return out


def _flat(out):
    return [t for o in out for t in _flat(o)] if isinstance(out, (tuple, list)) else [out]


def _both(fn, inputs, grad=False):
    """``fn(lib, *tensors)`` under CPU autocast in both libraries; with ``grad`` also the gradients of the inputs
    from one backward (outside the region, as PyTorch recommends) of a fixed weighting of the outputs."""
    res = []
    for lib in (torch, torchish):
        ts = _tensors(lib, inputs, grad)
        with lib.autocast("cpu"):
            out = fn(lib, *ts)
        grads = None
        if grad:
            loss = None
            for o in _flat(out):
                term = (o.float() * lib.tensor(arr(*o.shape, seed=9))).sum()
                loss = term if loss is None else loss + term
            loss.backward()
            grads = [t.grad for t in ts if isinstance(t, lib.Tensor) and t.requires_grad]
        res.append((out, grads))
    return res


# shared inputs (one set of shapes, so the kernels compiled for one test serve the others)
X = arr(5, 4, seed=1)
X_INF = X.copy()
X_INF[1, 2] = np.inf  # makes the gradients inf/NaN
W = arr(3, 4, seed=2)
BV = arr(3, seed=3)
T = np.array([0, 2, 1, 1, 0])


def _seeded(lib, module):
    """``module`` with deterministic parameters (the same in both libraries)."""
    with lib.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(lib.tensor(arr(*p.shape, seed=60 + i)))
    return module


# (name, fn, inputs): ops of each class of the CPU policy, and ops autocast leaves alone
POLICY_CASES = [
    # lower precision: bfloat16 results, for float32 and mixed inputs alike
    ("linear", lambda L, x, w, b: L.nn.functional.linear(x, w, b), [X, W, BV]),
    ("conv2d", lambda L, x, k: L.nn.functional.conv2d(x.view(1, 1, 5, 4), k.view(1, 1, 3, 4)), [X, W]),
    ("matmul_mixed", lambda L, x, w: x @ w.bfloat16().t(), [X, W]),
    ("addmm", lambda L, c, x, w: L.addmm(c, x, w.t()), [arr(5, 3, seed=7), X, W]),
    ("sdpa", lambda L, x, w: L.nn.functional.scaled_dot_product_attention(x, w, w.bfloat16()), [X, W]),
    ("prelu", lambda L, x: L.nn.functional.prelu(x, L.tensor([0.25])), [X]),
    ("bmm", lambda L, x: L.bmm(x[None], x.t()[None]), [X]),
    ("baddbmm", lambda L, x, w: L.baddbmm(x[None, :, :3], x[None], w.t()[None]), [X, W]),
    ("einsum", lambda L, x, w: L.einsum("ij,kj->ik", x, w), [X, W]),
    ("einsum_one_operand", lambda L, x: L.einsum("ij->j", x), [X]),  # a plain sum on the CPU: not cast
    ("lstm", lambda L, x: _seeded(L, L.nn.LSTM(4, 3))(x[:, None]), [X]),
    ("multihead_attention", lambda L, x: _seeded(L, L.nn.MultiheadAttention(4, 2))(x[:, None], x[:, None], x[:, None]),
     [X]),
    # float32: losses and the float32 list, whatever the input precision
    ("mse_loss", lambda L, x, w: L.nn.functional.mse_loss(x[:3].bfloat16(), w), [X, W]),
    ("cross_entropy", lambda L, x, t: L.nn.functional.cross_entropy(x.bfloat16(), t), [X, T]),
    ("nll_loss", lambda L, x, t: L.nn.functional.nll_loss(x.bfloat16(), t), [X, T]),
    ("bce_with_logits", lambda L, x: L.nn.functional.binary_cross_entropy_with_logits(x.bfloat16(), x.sigmoid()),
     [X]),
    ("svdvals", lambda L, x: L.linalg.svdvals(x.bfloat16()), [X]),
    ("prod", lambda L, x: (x.bfloat16() + 1).prod(1), [X]),
    # front-ends that check dtypes before the funnel (refused bfloat16, or kept float32 where PyTorch casts)
    ("conv_transpose2d", lambda L, x, k: L.nn.functional.conv_transpose2d(x.view(1, 1, 5, 4), k.view(1, 1, 3, 4)),
     [X, W]),
    ("conv_transpose2d_bf16", lambda L, x, k: L.nn.functional.conv_transpose2d(x.view(1, 1, 5, 4).bfloat16(),
                                                                              k.view(1, 1, 3, 4)), [X, W]),
    ("avg_pool3d", lambda L, x: L.nn.functional.avg_pool3d(x.bfloat16().view(1, 1, 1, 5, 4), (1, 2, 2)), [X]),
    ("cdist", lambda L, x, w: L.cdist(x.bfloat16(), w), [X, W]),
    ("affine_grid", lambda L, x: L.nn.functional.affine_grid(x[:2, :3].unsqueeze(0), (1, 1, 3, 5),
                                                             align_corners=False), [X]),
    # losses whose front-end gives the result the input's dtype: the cast input's (float32), as PyTorch's
    ("huber_loss", lambda L, x, w: L.nn.functional.huber_loss(x[:3].bfloat16(), w.bfloat16(), delta=0.5), [X, W]),
    ("soft_margin_loss", lambda L, x: L.nn.functional.soft_margin_loss(x.bfloat16(), x.sign().detach()), [X]),
    ("poisson_nll_loss", lambda L, x: L.nn.functional.poisson_nll_loss(x.bfloat16(), x.abs().detach()), [X]),
    ("fft_rfft", lambda L, x: L.fft.rfft(x.bfloat16()), [X]),  # fft ops: float32 (they refused bfloat16)
    ("fft_fft2_irfft", lambda L, x: [L.fft.fft2(x.bfloat16()), L.fft.irfft(x.bfloat16()), L.fft.hfft(x.bfloat16())],
     [X]),
    ("polar", lambda L, x: L.polar(x.abs().bfloat16(), x.bfloat16()), [X]),  # these refused bfloat16 too
    ("view_as_complex", lambda L, x: L.view_as_complex(x.bfloat16().view(5, 2, 2)), [X]),
    ("cholesky_solve", lambda L, x: L.cholesky_solve(x[:4].bfloat16(), L.eye(4) * 2 + x[:4].tril(-1) * 0.1), [X]),
    ("triangular_solve", lambda L, x: L.triangular_solve(x[:4].bfloat16(), L.eye(4) * 2 + x[:4].triu(1) * 0.1)[0],
     [X]),
    ("linalg_cond", lambda L, x: L.linalg.cond(x[:4].bfloat16() + 2 * L.eye(4)), [X]),
    ("pinverse", lambda L, x: L.pinverse(x[:4].bfloat16() + 2 * L.eye(4)), [X]),  # (linalg.pinv is not cast)
    # a bfloat16 activation into a float32 recurrent layer: PyTorch skips its dtype check under autocast and its
    # gates' linear casts (torchish raised 'RNN input dtype ... does not match weight dtype')
    ("gru_bf16_input", lambda L, x: _seeded(L, L.nn.GRU(4, 3))(x.bfloat16()[:, None]), [X]),
    ("lstm_bf16_input", lambda L, x: _seeded(L, L.nn.LSTM(4, 3, batch_first=True))(x.bfloat16()[None]), [X]),
    ("cells_bf16_input", lambda L, x: [_seeded(L, L.nn.GRUCell(4, 3))(x.bfloat16()),
                                       _seeded(L, L.nn.LSTMCell(4, 3))(x.bfloat16())[1],
                                       _seeded(L, L.nn.RNNCell(4, 3))(x.bfloat16(), L.zeros(5, 3))], [X]),
    # promote: the widest floating type among the inputs
    ("cat", lambda L, x, w: L.cat([x, w.bfloat16()]), [X, W]),
    ("stack_bf16", lambda L, x: L.stack([x.bfloat16(), x.bfloat16()]), [X]),
    ("index_copy", lambda L, x, w: x.index_copy(0, L.tensor([2, 0, 4]), w.bfloat16()), [X, W]),
    # not in the CPU lists: computed in their inputs' dtypes
    ("mv", lambda L, x, v: L.mv(x, v), [X, arr(4, seed=10)]),
    ("softmax", lambda L, x: L.softmax(x.bfloat16(), -1), [X]),
    ("layer_norm", lambda L, x: L.nn.functional.layer_norm(x.bfloat16(), (4,)), [X]),
    ("exp_sum", lambda L, x: L.exp(x.bfloat16()).sum(0), [X]),
    ("float64", lambda L, x, w: L.nn.functional.linear(x.double(), w.double()), [X, W]),
    ("integer", lambda L: L.mm(L.ones(2, 2, dtype=L.int64), L.ones(2, 2, dtype=L.int64)), []),
]


@needs_torch
@pytest.mark.parametrize("name,fn,inputs", POLICY_CASES, ids=[c[0] for c in POLICY_CASES])
def test_policy_dtypes_and_values(name, fn, inputs):
    if name == "lstm":
        needs_avx512_torch("whether oneDNN can build a bfloat16 LSTM (PyTorch raises)")
    (ref, _), (got, _) = _both(fn, inputs)
    assert_same(ref, got, name, **BF16)


@needs_torch
@pytest.mark.parametrize("name", ["linear", "matmul_mixed", "conv2d", "cross_entropy", "cat", "lstm", "conv_transpose2d",
                                  "cdist", "affine_grid", "huber_loss", "soft_margin_loss", "poisson_nll_loss",
                                  "polar", "cholesky_solve", "gru_bf16_input", "cells_bf16_input"])
def test_gradients_flow_back_in_the_inputs_dtypes(name):
    if name == "lstm":
        needs_avx512_torch("whether oneDNN can build a bfloat16 LSTM (PyTorch raises)")
    _, fn, inputs = next(c for c in POLICY_CASES if c[0] == name)
    (ref, ref_g), (got, got_g) = _both(fn, inputs, grad=True)
    assert_same(ref, got, name, **BF16)
    assert [str(g.dtype) for g in got_g] == [str(g.dtype) for g in ref_g] == ["torch.float32"] * len(ref_g)
    assert_same(ref_g, got_g, name + ".grad", **BF16)


@needs_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_local_response_norm_of_a_half_4d_input(dtype):
    """PyTorch's composite pools the squares of a 4-d (or wider) input with avg_pool3d: no half kernel outside
    autocast (its NotImplementedError; torchish computed), float32 under CPU autocast (torchish gave the half dtype)."""
    def fn(lib):
        x = lib.tensor(X.reshape(1, 5, 2, 2)).to(getattr(lib, dtype))
        with pytest.raises(NotImplementedError) as err:
            lib.nn.functional.local_response_norm(x, 2)
        with lib.autocast("cpu"):
            return str(err.value), lib.nn.functional.local_response_norm(x, 2, alpha=0.5)
    ref = fn(torch)
    assert_same(ref, fn(torchish), **BF16)


@needs_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_kernels_pytorch_lacks_and_their_autocast_casts(dtype):
    """multi_margin_loss, multilabel_margin_loss and antialiased resizing have no half CPU kernel in PyTorch (its
    NotImplementedError; torchish computed them), an empty or same-size input never reaching it; CPU autocast runs
    the two losses in float32 (weight included)."""
    def fn(lib):
        x = lib.tensor(X[:2, :3]).to(getattr(lib, dtype))
        t, tm = lib.tensor([0, 2]), lib.tensor([[0, -1, 1], [2, -1, 0]])
        out = [raised(lambda: lib.nn.functional.multi_margin_loss(x, t)),
               raised(lambda: lib.nn.functional.multilabel_margin_loss(x, tm)),
               raised(lambda: lib.nn.functional.interpolate(x.view(1, 1, 2, 3), scale_factor=2, mode="bilinear",
                                                            antialias=True)),
               lib.nn.functional.interpolate(x.view(1, 1, 2, 3), size=(2, 3), mode="bicubic", antialias=True)]
        # an empty input runs without raising; PyTorch's sum over it is uninitialised memory (garbage, or NaN),
        # so only its dtype and shape are compared, and torchish's must be the empty sum, 0
        empty = lib.nn.functional.multi_margin_loss(x[:0], t[:0], reduction="sum")
        out.append((str(empty.dtype), tuple(empty.shape)))
        if lib is torchish:
            assert empty.item() == 0
        with lib.autocast("cpu"):
            out += [lib.nn.functional.multi_margin_loss(x, t, weight=lib.ones(3, dtype=x.dtype)),
                    lib.nn.functional.multilabel_margin_loss(x, tm)]
        return out
    ref = fn(torch)
    assert_same(ref, fn(torchish), **BF16)


@needs_torch
def test_linalg_ops_autocast_leaves_uncast_refuse_bfloat16():
    """CPU autocast casts linalg.solve and pinverse to float32 but not linalg.pinv or linalg.lu_solve, which refuse
    a bfloat16 input with their own errors (torchish cast them)."""
    def fn(lib):
        m = lib.tensor(X[:4]) * 0.1 + 2 * lib.eye(4)
        lu = lib.linalg.lu_factor(m)
        with lib.autocast("cpu"):
            return [raised(lambda: lib.linalg.pinv(m.bfloat16())), raised(lambda: lib.linalg.pinv(m.bfloat16(),
                                                                                                  hermitian=True)),
                    raised(lambda: lib.linalg.lu_solve(*lu, m.bfloat16())),
                    raised(lambda: lib.linalg.lu_solve(*lu, m[0].double())), lib.linalg.solve(m.bfloat16(), m)]
    ref = fn(torch)
    assert_same(ref, fn(torchish), **BF16)


def _mlp(lib):
    """Linear -> ReLU -> Linear, the same weights in both libraries (and in the GradScaler and compile tests)."""
    return _seeded(lib, lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.ReLU(), lib.nn.Linear(4, 3)))


def _loss(lib, net, x):
    with lib.autocast("cpu"):
        logits = net(lib.tensor(x))
        return lib.nn.functional.cross_entropy(logits, lib.tensor(T)), logits


@needs_torch
def test_model_forward_backward_under_autocast_matches_torch():
    res = []
    for lib in (torch, torchish):
        net = _mlp(lib)
        loss, logits = _loss(lib, net, X)
        loss.backward()
        res.append((logits, loss, [p.grad for p in net.parameters()]))
    (rl, rloss, rg), (gl, gloss, gg) = res
    assert str(gl.dtype) == str(rl.dtype) == "torch.bfloat16" and str(gloss.dtype) == "torch.float32"
    assert_same(rl, gl, "logits", **BF16)
    assert_same(rloss, gloss, "loss", **BF16)
    assert_same(rg, gg, "grads", **BF16)  # float32 gradients, as the float32 parameters


def test_state_nesting_decorator_and_enabled_false():
    a, w = torchish.tensor(X), torchish.tensor(W.T.copy())
    assert not torchish.is_autocast_enabled("cpu") and torchish.get_autocast_dtype("cpu") is torchish.bfloat16
    assert torchish.get_autocast_dtype("cuda") is torchish.float16
    with torchish.autocast("cpu"):
        assert torchish.is_autocast_enabled("cpu") and not torchish.is_autocast_enabled()  # no argument: cuda
        assert (a @ w).dtype is torchish.bfloat16
        with torchish.autocast("cpu", enabled=False):
            assert not torchish.is_autocast_enabled("cpu")
            assert (a @ w).dtype is torchish.float32
        with torchish.autocast("cpu", dtype=torchish.float16):
            assert (a @ w).dtype is torchish.float16
        assert (a @ w).dtype is torchish.bfloat16 and torchish.get_autocast_dtype("cpu") is torchish.bfloat16
    assert not torchish.is_autocast_enabled("cpu") and (a @ w).dtype is torchish.float32
    assert torchish.ops.registry.autocast_hook is None  # off: apply pays nothing

    @torchish.autocast("cpu")
    def f(x, depth):
        return f(x, depth - 1) if depth else x @ w  # recursion keeps each call's saved state
    assert f(a, 2).dtype is torchish.bfloat16 and not torchish.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match="requires a callable"):
        torchish.autocast("cpu")(3)


def test_state_is_per_thread():
    seen = {}
    a, w = torchish.tensor(X), torchish.tensor(W.T.copy())

    def other():
        seen["enabled"] = torchish.is_autocast_enabled("cpu")
        seen["dtype"] = (a @ w).dtype

    with torchish.autocast("cpu"):
        th = threading.Thread(target=other)
        th.start()
        th.join()
        assert (a @ w).dtype is torchish.bfloat16
    assert seen == {"enabled": False, "dtype": torchish.float32}


@needs_torch
def test_api_errors_and_warnings_match_torch():
    for lib in (torch, torchish):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.autocast(3)
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            lib.autocast("foo")
        assert lib.amp.is_autocast_available("cpu") and lib.amp.is_autocast_available("cuda")
        with pytest.warns(DeprecationWarning, match=r"get_autocast_gpu_dtype\(\) is deprecated"):
            assert str(lib.get_autocast_gpu_dtype()) == "torch.float16"
        with pytest.warns(DeprecationWarning, match=r"is_autocast_cpu_enabled\(\) is deprecated"):
            assert lib.is_autocast_cpu_enabled() is False
    texts = []
    for lib in (torch, torchish):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ac = lib.autocast("cpu", dtype=lib.float32)  # unsupported: warns and disables
            with ac:
                assert not lib.is_autocast_enabled("cpu") and str(lib.get_autocast_dtype("cpu")) == "torch.float32"
            assert str(lib.get_autocast_dtype("cpu")) == "torch.bfloat16"
            lib.cpu.amp.autocast()
        texts.append([(x.category, str(x.message)) for x in w])
    assert texts[1] == texts[0]


@needs_torch
@pytest.mark.skipif(torchish.cuda.is_available(), reason="compares with a CPU-only PyTorch build")
def test_cuda_spellings_without_cuda_warn_and_disable_as_torch():
    texts, states = [], []
    for lib in (torch, torchish):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ac = lib.autocast("cuda")
            dep = lib.cuda.amp.autocast()
            scaler = lib.amp.GradScaler()
            dep_scaler = lib.cuda.amp.GradScaler()
            lib.cuda.amp.custom_fwd(lambda ctx, x: x)
        texts.append([(x.category, str(x.message)) for x in w])
        states.append((ac._enabled, dep._enabled, str(ac.fast_dtype), scaler.is_enabled(), dep_scaler.is_enabled(),
                       scaler.get_scale(), scaler.state_dict(), scaler.step(_NoOpt())))
    assert texts[1] == texts[0]
    assert states[1] == states[0] == (False, False, "torch.float16", False, False, 1.0, {}, "stepped")


class _NoOpt:
    param_groups = []

    def step(self):
        return "stepped"


@needs_torch
def test_custom_fwd_casts_inputs_and_runs_forward_without_autocast():
    def make(lib):
        class MyMM(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                ctx.seen = (a.dtype, b.dtype, lib.is_autocast_enabled("cpu"))
                return a.mm(b)

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                ctx.bwd_autocast = lib.is_autocast_enabled("cpu")
                return g.mm(b.t()), a.t().mm(g)
        return MyMM

    res = []
    for lib in (torch, torchish):
        fn = make(lib)
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(W.T.copy(), requires_grad=True)
        with lib.autocast("cpu"):
            out = fn.apply(a.bfloat16(), b)
            plain = a.mm(b)
        out.sum().backward()
        ctx = out.grad_fn
        res.append((out, plain.dtype, [str(d) for d in ctx.seen[:2]], ctx.seen[2], ctx.bwd_autocast, a.grad, b.grad))
    (ro, rp, rs, ra, rb, rga, rgb), (go, gp, gs, ga, gb, gga, ggb) = res
    assert_same(ro, go, "out", **BF16)
    assert str(go.dtype) == "torch.float32" and str(gp) == str(rp) == "torch.bfloat16"
    assert gs == rs == ["torch.float32", "torch.float32"] and ga is ra is False and gb is rb is False
    assert_same([rga, rgb], [gga, ggb], "grads", **BF16)


# --------------------------------------------------------------------------------------------------------------
# GradScaler


class _PlainSGD:
    """``p -= lr * grad``: what GradScaler needs of an optimizer (``param_groups``, ``step``). The PyTorch side uses
    it because constructing a ``torch.optim`` optimizer imports torch._dynamo, seconds of this file's runtime."""

    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]

    def zero_grad(self):
        for p in self.param_groups[0]["params"]:
            p.grad = None

    def step(self):
        with torch.no_grad():
            for p in self.param_groups[0]["params"]:
                p.sub_(self.param_groups[0]["lr"] * p.grad)


def _sgd(lib, net):
    return _PlainSGD(net.parameters(), lr=0.1) if lib is torch else lib.optim.SGD(net.parameters(), lr=0.1)


def _scaled_training(lib, steps, inf_at=()):
    """SGD steps of the MLP with a scaled loss (growth every 2 clean steps); at the steps in
    ``inf_at`` the input holds an inf, so the gradients do too."""
    net = _mlp(lib)
    opt = _sgd(lib, net)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)
    trace = []
    for i in range(steps):
        opt.zero_grad()
        loss, _ = _loss(lib, net, X_INF if i in inf_at else X)
        scaler.scale(loss).backward()
        ret = scaler.step(opt)
        scaler.update()
        trace.append((ret, scaler.state_dict()))
    return net, opt, scaler, trace


@needs_torch
def test_grad_scaler_training_steps_match_torch():
    (rn, _, _, rt), (gn, _, _, gt) = (_scaled_training(lib, 3, inf_at=(2,)) for lib in (torch, torchish))
    assert gt == rt  # the skipped step returns None; the scale grows, backs off, the tracker resets as torch's
    assert [s["scale"] for _, s in gt] == [16.0, 32.0, 16.0] and [s["_growth_tracker"] for _, s in gt] == [1, 0, 0]
    assert_same(list(rn.parameters()), list(gn.parameters()), "params", **BF16)


@needs_torch
def test_grad_scaler_skips_the_step_on_inf_and_reports_errors():
    res = []
    for lib in (torch, torchish):
        net = _mlp(lib)
        opt = _sgd(lib, net)
        scaler = lib.amp.GradScaler("cpu")
        with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
            scaler.step(opt)
        loss = _loss(lib, net, X_INF)[0]
        scaler.scale(loss).backward()
        before = [to_numpy(p) for p in net.parameters()]
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError) as twice:
            scaler.unscale_(opt)
        skipped = scaler.step(opt)
        with pytest.raises(RuntimeError) as after:
            scaler.unscale_(opt)
        with pytest.raises(RuntimeError) as step_twice:
            scaler.step(opt)
        scaler.update()
        unchanged = all(np.array_equal(to_numpy(p), b, equal_nan=True) for p, b in zip(net.parameters(), before))
        scaler.load_state_dict({"scale": 8.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 7,
                                "_growth_tracker": 5})
        res.append((str(twice.value), str(after.value), str(step_twice.value), skipped, unchanged,
                    scaler.get_scale(), scaler.state_dict(), scaler.scale([loss, (loss,)])))
    assert res[1][0] == res[0][0] == "unscale_() has already been called on this optimizer since the last update()."
    assert res[1][1:7] == res[0][1:7]
    assert res[1][3:6] == (None, True, 8.0)
    assert_same(res[0][7], res[1][7], "scaled")


# --------------------------------------------------------------------------------------------------------------
# torchish.compile


def _compiled_step_run(compiled):
    """A training step with autocast and a GradScaler inside, eager or compiled; the third input holds an inf (the
    compiled program skips that optimizer step without a host sync)."""
    net = _mlp(torchish)
    opt = torchish.optim.SGD(net.parameters(), lr=0.1)
    scaler = torchish.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)
    t = torchish.tensor(T)

    def step(x):
        opt.zero_grad()
        with torchish.autocast("cpu"):
            logits = net(x)
            loss = torchish.nn.functional.cross_entropy(logits, t)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss, logits

    fn = torchish.compile(step) if compiled else step
    outs = [fn(torchish.tensor(x)) + (scaler.get_scale(),) for x in (X, X, X_INF, X)]
    return outs, net, fn


def test_compiled_step_under_autocast_equals_eager():
    (eager, ne, _), (comp, nc, c) = _compiled_step_run(False), _compiled_step_run(True)
    assert c.stats["traces"] == 1 and c.stats["compiled_calls"] == 3
    assert [s for _, _, s in comp] == [s for _, _, s in eager] == [16.0, 32.0, 16.0, 16.0]
    for (el, elog, _), (cl, clog, _) in zip(eager, comp):
        assert elog.dtype is clog.dtype is torchish.bfloat16 and cl.dtype is torchish.float32
        np.testing.assert_allclose(to_numpy(cl), to_numpy(el), rtol=1e-6)
        np.testing.assert_allclose(to_numpy(clog), to_numpy(elog), rtol=1e-6)
    for pe, pc in zip(ne.parameters(), nc.parameters()):
        np.testing.assert_allclose(to_numpy(pc), to_numpy(pe), rtol=1e-6)


def test_compile_retraces_when_autocast_changes():
    f = torchish.compile(lambda a, b: a @ b)
    a, w = torchish.tensor(X), torchish.tensor(W.T.copy())
    dtypes = [f(a, w).dtype, f(a, w).dtype]
    with torchish.autocast("cpu"):
        dtypes += [f(a, w).dtype, f(a, w).dtype]
    dtypes += [f(a, w).dtype]
    assert dtypes == [torchish.float32] * 2 + [torchish.bfloat16] * 2 + [torchish.float32]
    assert f.stats["traces"] == 2 and f.stats["retraces"] == 0


# --------------------------------------------------------------------------------------------------------------
# the CUDA policy, on a machine without a GPU: a subprocess where a second host device stands for cuda

_CUDA_SCRIPT = r"""
import json, os
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2").strip()
os.environ["TORCHISH_HOST_ACCELERATOR"] = "1"
os.environ["JAX_PLATFORMS"] = "cpu"
import torchish as torch
F = torch.nn.functional
x = torch.arange(12.0, device="cuda").reshape(3, 4) / 12
w = torch.ones(2, 4, device="cuda")
out = {}
with torch.autocast("cuda"):
    y = F.linear(x, w)
    out.update(linear=y, mv=torch.mv(x, x[0]), softmax=F.softmax(y, -1), sum=y.sum(), exp=torch.exp(y),
               mean=y.mean(), layer_norm=F.layer_norm(y, (2,)), mse=F.mse_loss(y, y), relu=F.relu(y),
               dot=torch.dot(x[0], x[1].half()), cat=torch.cat([y, x[:, :2]]),
               cpu_matmul=torch.ones(2, 2) @ torch.ones(2, 2), einsum=torch.einsum("ij,kj->ik", x, w.half()),
               einsum_one_operand=torch.einsum("ij->j", x))
    try:
        F.binary_cross_entropy(torch.sigmoid(y), torch.sigmoid(y))
    except RuntimeError as e:
        out["bce"] = str(e).splitlines()[0]
print(json.dumps({k: v if isinstance(v, str) else str(v.dtype) for k, v in out.items()}))
"""


def test_cuda_policy_on_a_simulated_accelerator():
    proc = subprocess.run([sys.executable, "-c", _CUDA_SCRIPT], env=dict(os.environ), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    f16, f32 = "torch.float16", "torch.float32"
    assert got == {"linear": f16, "mv": f16, "softmax": f32, "sum": f32, "exp": f32, "mean": f16, "layer_norm": f32,
                   "mse": f32, "relu": f16, "dot": f32, "cat": f32, "cpu_matmul": f32, "einsum": f16,
                   "einsum_one_operand": f16,
                   "bce": "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast."}
