"""scaled_dot_product_attention, multi_head_attention_forward and nn.MultiheadAttention against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

from module_oracle import compare, pair
from oracle import arr, check, check_raises, formula_data, graph_walk, needs_torch, same, torch, torchish

pytestmark = needs_torch

E, NH, L, S, N = 8, 2, 3, 4, 2
MASK = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])  # SDPA: True = keep


def _sdpa(**kw):
    def fn(lib, q, k, v):
        extra = {key: (lib.tensor(val) if isinstance(val, np.ndarray) else val) for key, val in kw.items()}
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, **extra)
    return fn


QKV = [arr(N, NH, L, 5), arr(N, NH, S, 5, seed=1), arr(N, NH, S, 6, seed=2)]

SDPA_CASES = [
    ("plain", QKV, {}),
    ("causal", QKV, dict(is_causal=True)),
    ("bool_mask_with_empty_row", QKV, dict(attn_mask=MASK)),
    ("float_mask", QKV, dict(attn_mask=arr(N, 1, L, S, seed=3))),
    ("scale", QKV, dict(scale=0.7)),
    ("gqa", [arr(N, 4, L, 5), QKV[1], QKV[2]], dict(enable_gqa=True, is_causal=True)),
    ("three_d", [x[:, 0] for x in QKV], dict(attn_mask=MASK)),
    ("broadcast_kv", [QKV[0], QKV[1][:1], QKV[2][:1]], {}),
    ("float64", [x.astype(np.float64) for x in QKV], dict(attn_mask=MASK)),
]


@pytest.mark.parametrize("inputs,kw", [c[1:] for c in SDPA_CASES], ids=[c[0] for c in SDPA_CASES])
def test_sdpa_matches_torch(inputs, kw):
    check(_sdpa(**kw), inputs)


def test_sdpa_dropout_one_gives_zeros_like_torch():
    check(_sdpa(dropout_p=1.0), QKV)


def test_sdpa_dropout_uses_torchish_rng():
    q, k, v = (torchish.tensor(x, requires_grad=True) for x in QKV)
    F = torchish.nn.functional
    torchish.manual_seed(3)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    torchish.manual_seed(3)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    c = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    plain = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())
    assert not np.allclose(a.detach().numpy(), plain.detach().numpy())
    a.sum().backward()
    assert np.all(np.isfinite(q.grad.numpy())) and np.any(q.grad.numpy())


def test_sdpa_math_path_graph_is_pytorchs():
    """A value head size other than the query's: PyTorch's CPU build runs its math path, op by op (matmul,
    SafeSoftmaxBackward0, the causal mask added in place)."""
    def graph(lib):
        q, k, v = (lib.tensor(x, requires_grad=True) for x in QKV)
        return graph_walk(lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).grad_fn, 12)
    assert graph(torchish) == graph(torch)


def _sdpa_err_cases():
    q, k, v = arr(2, 4, 3, 8), arr(2, 2, 5, 8, seed=1), arr(2, 2, 5, 6, seed=2)

    def call(**kw):
        def fn(lib, q=q, k=k, v=v):
            extra = {key: (lib.tensor(val) if isinstance(val, np.ndarray) else val) for key, val in kw.items()}
            return lib.nn.functional.scaled_dot_product_attention(lib.tensor(q), lib.tensor(k), lib.tensor(v),
                                                                  **extra)
        return fn

    return [
        call(),  # heads do not broadcast without enable_gqa
        lambda lib: lib.nn.functional.scaled_dot_product_attention(lib.tensor(q), lib.tensor(k).double(),
                                                                   lib.tensor(v)),
        call(attn_mask=np.ones((3, 5), bool), is_causal=True, enable_gqa=True),
        lambda lib: lib.nn.functional.scaled_dot_product_attention(lib.tensor(q[:, :3]), lib.tensor(k),
                                                                   lib.tensor(v), enable_gqa=True),
        call(attn_mask=np.ones((3, 5), np.int64), enable_gqa=True),
        call(attn_mask=np.ones((3, 5), np.float64), enable_gqa=True),
        call(attn_mask=np.ones((3, 4), np.float32), enable_gqa=True),
        lambda lib: lib.nn.functional.scaled_dot_product_attention(lib.tensor(q[0, 0, 0]), lib.tensor(k[0, 0, 0]),
                                                                   lib.tensor(v[0, 0, 0])),
    ]


@pytest.mark.parametrize("case", range(len(_sdpa_err_cases())))
def test_sdpa_errors_match_torch(case):
    fn = _sdpa_err_cases()[case]
    ref = check_raises(fn)
    if case in (1, 2, 4, 5, 7):  # messages PyTorch words itself (others come from its matmul internals)
        with pytest.raises(RuntimeError) as got:
            fn(torchish)
        assert str(got.value) == str(ref)


# ----------------------------------------------------------------------------------------------------------------
# nn.MultiheadAttention


def _mha(**kw):
    return pair(lambda lib: lib.nn.MultiheadAttention(E, NH, **kw))


def _self_call(**call_kw):
    def call(lib, m, x):
        extra = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in call_kw.items()}
        return m(x, x, x, **extra)
    return call


def _cross_call(**call_kw):
    def call(lib, m, q, kv):
        extra = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in call_kw.items()}
        return m(q, kv, kv, **extra)
    return call


KPM = np.array([[False, False, True, True], [False, True, False, False]])  # MHA: True = masked out
ATTN2 = np.array([[False, True, False, False], [False, False, True, False], [True, False, False, False]])

MHA_CASES = [
    ("self", {}, _self_call(), [arr(L, N, E)]),
    ("no_weights", {}, _self_call(need_weights=False), [arr(L, N, E)]),
    ("per_head_weights", {}, _self_call(average_attn_weights=False), [arr(L, N, E)]),
    ("batch_first", dict(batch_first=True), _self_call(), [arr(N, L, E)]),
    ("no_bias", dict(bias=False), _self_call(), [arr(L, N, E)]),
    ("bias_kv", dict(add_bias_kv=True), _self_call(key_padding_mask=KPM[:, :3]), [arr(L, N, E)]),
    ("zero_attn", dict(add_zero_attn=True), _self_call(attn_mask=ATTN2[:, :3], need_weights=False),
     [arr(L, N, E)]),
    ("bias_kv_zero_attn", dict(add_bias_kv=True, add_zero_attn=True), _self_call(attn_mask=ATTN2[:, :3]),
     [arr(L, N, E)]),
    ("kdim_vdim", dict(kdim=6, vdim=5), lambda lib, m, q, k, v: m(q, k, v), [arr(L, N, E), arr(S, N, 6, seed=1),
                                                                          arr(S, N, 5, seed=2)]),
    ("cross_kpm_bool", {}, _cross_call(key_padding_mask=KPM), [arr(L, N, E), arr(S, N, E, seed=1)]),
    ("cross_kpm_float", {}, _cross_call(key_padding_mask=arr(N, S, seed=4)), [arr(L, N, E), arr(S, N, E, seed=1)]),
    ("cross_attn_mask_2d", {}, _cross_call(attn_mask=ATTN2), [arr(L, N, E), arr(S, N, E, seed=1)]),
    ("cross_masks_both_no_weights", {}, _cross_call(attn_mask=ATTN2, key_padding_mask=KPM, need_weights=False),
     [arr(L, N, E), arr(S, N, E, seed=1)]),
    ("attn_mask_3d_float", {}, _cross_call(attn_mask=arr(N * NH, L, S, seed=5)),
     [arr(L, N, E), arr(S, N, E, seed=1)]),
    ("attn_mask_3d_no_weights", {}, _cross_call(attn_mask=arr(N * NH, L, S, seed=5), need_weights=False),
     [arr(L, N, E), arr(S, N, E, seed=1)]),
    ("causal_hint", {}, _self_call(attn_mask=np.triu(np.ones((L, L), bool), 1), is_causal=True,
                                   need_weights=False), [arr(L, N, E)]),
    ("unbatched", {}, _cross_call(key_padding_mask=KPM[0]), [arr(L, E), arr(S, E, seed=1)]),
    ("unbatched_3d_mask", {}, _cross_call(attn_mask=arr(NH, L, S, seed=6)), [arr(L, E), arr(S, E, seed=1)]),
]


@pytest.mark.parametrize("kw,call,inputs", [c[1:] for c in MHA_CASES], ids=[c[0] for c in MHA_CASES])
def test_multihead_attention_matches_torch(kw, call, inputs):
    tm, xm = _mha(**kw)
    compare(tm, xm, inputs, call)


def test_mha_parameter_names_and_init():
    for kw in (dict(), dict(kdim=6, vdim=5, add_bias_kv=True), dict(bias=False)):
        tm = torch.nn.MultiheadAttention(E, NH, **kw)
        xm = torchish.nn.MultiheadAttention(E, NH, **kw)
        assert [(n, tuple(p.shape)) for n, p in xm.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
        assert type(xm.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(xm.out_proj, torchish.nn.Linear)
    xm = torchish.nn.MultiheadAttention(E, NH)
    assert not np.any(xm.in_proj_bias.detach().numpy()) and not np.any(xm.out_proj.bias.detach().numpy())
    bound = np.sqrt(6 / (E + 3 * E))  # xavier_uniform on (3E, E)
    w = xm.in_proj_weight.detach().numpy()
    assert np.all(np.abs(w) <= bound) and w.std() > bound / 3


def test_mha_dropout_in_training_only():
    tm, xm = _mha(dropout=0.5)
    x = torchish.tensor(arr(L, N, E))
    with torchish.no_grad():
        torchish.manual_seed(0)
        a = xm(x, x, x)[0].numpy()
        torchish.manual_seed(0)
        b = xm(x, x, x)[0].numpy()
        c = xm(x, x, x)[0].numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    tm.eval()
    xm.eval()
    compare(tm, xm, [arr(L, N, E)], _self_call())


FAST_CASES = [
    ("weights", dict(key_padding_mask=KPM[:, :3])),
    ("no_weights_empty_row", dict(key_padding_mask=np.array([[False, False, True], [True, True, True]]),
                                  need_weights=False)),
    ("attn_mask", dict(attn_mask=ATTN2[:, :3], need_weights=False)),
    ("causal_hint_ignored", dict(is_causal=True, need_weights=False)),
]


@pytest.mark.parametrize("call_kw", [c[1] for c in FAST_CASES], ids=[c[0] for c in FAST_CASES])
def test_mha_inference_fast_path_numbers(call_kw):
    """Eval mode without grad: PyTorch runs its fused kernel; torchish must give the same numbers (NaN rows too)."""
    tm, xm = _mha(batch_first=True)
    tm.eval()
    xm.eval()
    with torch.no_grad(), torchish.no_grad():
        compare(tm, xm, [arr(N, L, E)], _self_call(**call_kw), grad=False)


def test_multi_head_attention_forward_static_kv():
    w_in, b_in, w_out, b_out = arr(3 * E, E, seed=1), arr(3 * E, seed=2), arr(E, E, seed=3), arr(E, seed=4)
    hd = E // NH

    def fn(lib, q, k, v, sk, sv):
        t = lib.tensor
        return lib.nn.functional.multi_head_attention_forward(
            q, k, v, E, NH, t(w_in), t(b_in), None, None, False, 0.0, t(w_out), t(b_out), training=False,
            static_k=sk, static_v=sv, key_padding_mask=t(KPM[:, :3]))

    check(fn, [arr(L, N, E), arr(3, N, E, seed=5), arr(3, N, E, seed=6), arr(N * NH, 3, hd, seed=7),
               arr(N * NH, 3, hd, seed=8)])


def _mha_err_cases():
    return [
        lambda T: T.nn.MultiheadAttention(8, 3),
        lambda T: T.nn.MultiheadAttention(0, 2),
        lambda T: T.nn.MultiheadAttention(8, 2)(T.ones(3, 2, 8), T.ones(4, 8), T.ones(4, 8)),
        lambda T: T.nn.MultiheadAttention(8, 2)(T.ones(3, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8),
                                               attn_mask=T.ones(3, 3, dtype=T.bool)),
        lambda T: T.nn.MultiheadAttention(8, 2)(T.ones(3, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8),
                                               attn_mask=T.ones(3, 3, 4, dtype=T.bool)),
        lambda T: T.nn.MultiheadAttention(8, 2)(T.ones(3, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8),
                                               key_padding_mask=T.ones(2, 3, dtype=T.bool)),
        lambda T: T.nn.MultiheadAttention(8, 2)(T.ones(3, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8),
                                               key_padding_mask=T.ones(2, 4, dtype=T.int64)),
        lambda T: T.nn.MultiheadAttention(8, 2)(T.ones(3, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8), is_causal=True),
        lambda T: T.nn.MultiheadAttention(8, 2)(T.ones(3, 2, 6), T.ones(4, 2, 6), T.ones(4, 2, 6)),
        lambda T: T.nn.MultiheadAttention(8, 2)(T.ones(2, 3, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8)),
    ]


@pytest.mark.parametrize("case", range(len(_mha_err_cases())))
def test_mha_errors_match_torch(case):
    fn = _mha_err_cases()[case]
    ref = check_raises(fn)
    with pytest.raises(type(ref)) as got:
        fn(torchish)
    assert str(got.value) == str(ref)


@needs_torch
def test_sdpa_applies_attn_mask_and_is_causal_together():
    q, k, v = arr(1, 2, 4, 8, seed=1), arr(1, 2, 4, 8, seed=2), arr(1, 2, 4, 8, seed=3)
    float_mask, bool_mask = arr(4, 4, seed=4), arr(4, 4, seed=5) > -0.4
    for mask in (float_mask, bool_mask):
        check(lambda L, q, k, v, m: L.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True),
              [q, k, v, mask], grad=[0, 1, 2])
    # other ranks (and dropout, grouped heads, a mask that requires grad) take PyTorch's math path, which refuses
    check_raises(lambda L: L.nn.functional.scaled_dot_product_attention(
        L.tensor(q[0]), L.tensor(k[0]), L.tensor(v[0]), attn_mask=L.tensor(float_mask), is_causal=True))


@needs_torch
def test_sdpa_kernel_choices_follow_pytorchs_cpu_rules():
    # torchish computes attention one way; which kernel choices can run (and what fails) follows PyTorch's CPU
    # kernels: math, and flash for 4-D inputs without dropout
    q = np.random.default_rng(0).standard_normal((1, 2, 4, 8)).astype(np.float32)

    def run(lib, backends, rank, **kw):
        B = lib.nn.attention.SDPBackend
        x = lib.tensor(q if rank == 4 else q[0])
        if "attn_mask" in kw:
            kw["attn_mask"] = lib.ones(4, 4, dtype=lib.bool)
        try:
            with lib.nn.attention.sdpa_kernel([getattr(B, b) for b in backends]):
                out = lib.nn.functional.scaled_dot_product_attention(x, x, x, **kw)
            return out.shape if "dropout_p" in kw else np.round(out.numpy(), 5).tolist()
        except RuntimeError as e:
            return str(e)
    for backends in (["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION"], [], ["CUDNN_ATTENTION", "MATH"]):
        for kw in ({}, {"dropout_p": 0.3}, {"attn_mask": True, "is_causal": True}):
            for rank in (3, 4):
                assert run(torchish, backends, rank, **kw) == run(torch, backends, rank, **kw), (backends, kw, rank)
    for lib in (torch, torchish):
        assert str(lib.nn.attention.SDPBackend.MATH) == "SDPBackend.MATH"
        with pytest.raises(AssertionError, match="SDPBackend"):
            with lib.nn.attention.sdpa_kernel("math"):
                pass
        with lib.nn.attention.sdpa_kernel(lib.nn.attention.SDPBackend.MATH):
            assert not lib.backends.cuda.flash_sdp_enabled() and lib.backends.cuda.math_sdp_enabled()
        assert lib.backends.cuda.flash_sdp_enabled()
        with pytest.warns(FutureWarning, match="sdp_kernel"):
            with lib.backends.cuda.sdp_kernel(enable_math=False):
                assert not lib.backends.cuda.math_sdp_enabled()
        assert lib.backends.cuda.math_sdp_enabled()


@needs_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_sdpa_half_precision_kernels_round_as_pytorchs(dtype):
    """On half/bfloat16 inputs PyTorch's CPU flash kernel accumulates in float32 and rounds only the unnormalised
    weights (and, backward, the score gradients) to the input dtype; its math kernel computes in float32 and casts
    the output back (unless fp16/bf16 reduction is allowed). torchish computed scores, softmax and products in the
    input dtype: nanoGPT's flash attention under autocast(bfloat16) had gradients an ulp or more off."""
    def run(lib):
        dt = getattr(lib, dtype)
        q = (formula_data(lib, 2, 2, 6, 4) * 1.5).to(dt).requires_grad_()
        k = formula_data(lib, 2, 2, 6, 4, seed=1).to(dt).requires_grad_()
        v = formula_data(lib, 2, 2, 6, 4, seed=2).to(dt).requires_grad_()
        fmask = formula_data(lib, 1, 1, 6, 6, seed=4) * 2
        bmask = (lib.arange(6)[:, None] * 3 + lib.arange(6)[None, :]) % 5 != 0
        B = lib.nn.attention.SDPBackend
        out = []
        for backends in ([B.FLASH_ATTENTION, B.MATH], [B.MATH]):
            for kw in (dict(is_causal=True), dict(attn_mask=fmask), dict(attn_mask=bmask.to(dt) * -3.0)):
                if kw.get("is_causal") is None or backends[0] == B.FLASH_ATTENTION:
                    with lib.nn.attention.sdpa_kernel(backends):
                        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
                    g = formula_data(lib, *y.shape, seed=3).to(dt)
                    out.append([y, *lib.autograd.grad(y, (q, k, v), g)])
        with lib.autocast("cpu", dtype=lib.bfloat16):  # nanoGPT's step: float inputs cast by autocast
            y = lib.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
        out.append([y, *lib.autograd.grad(y.float().square().sum(), (q, k, v))])
        return out
    same(run, rtol=1e-3, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_sdpa_grouped_query_heads_run_the_flash_kernel_as_pytorchs(dtype):
    """With enable_gqa PyTorch's CPU build runs its flash kernel (sdp_utils: grouped heads pass the dense checks),
    whose backward adds each query head's contribution into its key/value head's gradient in turn, rounding at each
    addition; torchish ran the float32 math kernel (several ulps off) and named the node its own way."""
    def run(lib):
        dt = getattr(lib, dtype)
        q = (formula_data(lib, 1, 4, 6, 4) * 1.5).to(dt).requires_grad_()
        k = formula_data(lib, 1, 2, 6, 4, seed=1).to(dt).requires_grad_()
        v = formula_data(lib, 1, 2, 6, 4, seed=2).to(dt).requires_grad_()
        mask = formula_data(lib, 1, 4, 6, 6, seed=4).to(dt) * 2
        out = []
        for kw in (dict(is_causal=True), dict(attn_mask=mask)):
            y = lib.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
            g = formula_data(lib, *y.shape, seed=3).to(dt)
            out.append([type(y.grad_fn).__name__, y, *lib.autograd.grad(y, (q, k, v), g)])
        return out
    ref, got = run(torch), run(torchish)
    for r, t in zip(ref, got):
        assert r[0] == t[0] == "ScaledDotProductFlashAttentionForCpuBackward0"
        for a, b in zip(r[1:], t[1:]):  # bit for bit
            np.testing.assert_array_equal(a.detach().float().numpy(), b.detach().float().numpy())


@needs_torch
def test_sdpa_node_is_named_for_pytorchs_cpu_flash_kernel_where_it_runs():
    def names(lib):
        F = lib.nn.functional
        q = lib.ones(1, 2, 3, 4, requires_grad=True)
        calls = [lambda: F.scaled_dot_product_attention(q, q, q),
                 lambda: F.scaled_dot_product_attention(q.double(), q.double(), q.double(), is_causal=True),
                 lambda: F.scaled_dot_product_attention(q, lib.ones(1, 2, 5, 4), lib.ones(1, 2, 5, 4), scale=0.3),
                 lambda: F.scaled_dot_product_attention(q.transpose(1, 2), q.transpose(1, 2), q.transpose(1, 2)),
                 lambda: F.scaled_dot_product_attention(q.bfloat16(), q.bfloat16(), q.bfloat16(),
                                                        attn_mask=lib.zeros(1, 1, 3, 3))]
        return [type(f().grad_fn).__name__ for f in calls]
    assert names(torchish) == names(torch) == ["ScaledDotProductFlashAttentionForCpuBackward0"] * 5
