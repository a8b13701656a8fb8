"""torch.nn.attention.flex_attention against PyTorch 2.13: masks built with create_block_mask (causal, sliding
window, document, prefix-LM, combined with and_masks/or_masks), score_mods (ALiBi, a learned relative-position bias
with its gradient, tanh softcapping), GQA, return_lse/return_aux, fully masked rows, dtypes, autocast, the
BlockMask tables and methods, torchish.compile, and the errors.

PyTorch's CPU flex_attention refuses a backward for q/k/v (NotImplementedError; captured tensors do get gradients),
so q/k/v gradients are compared between the dense references themselves: PyTorch's flex_attention operator (what its
public function runs) and torchish's ``_math_attention``. Inputs come from formulas; one shape (B=2, H=2, L=16, E=8)
for most cases keeps the XLA compiles few."""
from __future__ import annotations

import math
import re
import warnings

import pytest

from oracle import assert_same, check_raises, compile_three_ways, formula_data, needs_torch, same, torch, torchish

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore:flex_attention called without",
                                                      "ignore:return_lse is deprecated")]

B, H, L, E = 2, 2, 16, 8


def _fa(lib):
    import importlib
    return importlib.import_module(f"{lib.__name__}.nn.attention.flex_attention")


def _qkv(lib, hq=H, hkv=H, ev=E, dtype=None):
    return (formula_data(lib, B, hq, L, E, dtype=dtype), formula_data(lib, B, hkv, L, E, seed=1, dtype=dtype),
            formula_data(lib, B, hkv, L, ev, seed=2, dtype=dtype))


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding_window(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() <= 3


def prefix(b, h, q_idx, kv_idx):
    return kv_idx < 5


def _document_mask(lib):
    doc = lib.tensor([0] * 5 + [1] * 7 + [2] * 4)

    def same_doc(b, h, q_idx, kv_idx):
        return doc[q_idx] == doc[kv_idx]
    return same_doc


def _masks(lib, FA):
    return {"causal": causal, "sliding": FA.and_masks(causal, sliding_window),
            "prefix_lm": FA.or_masks(prefix, causal), "document": FA.and_masks(_document_mask(lib), causal)}


@pytest.mark.parametrize("name", ["causal", "sliding", "prefix_lm", "document"])
def test_masks_give_torchs_outputs_lse_and_block_tables(name):
    def fn(lib):
        FA = _fa(lib)
        mask_mod = _masks(lib, FA)[name]
        bm = FA.create_block_mask(mask_mod, B, None, L, L, device="cpu", BLOCK_SIZE=4)
        out, aux = FA.flex_attention(*_qkv(lib), block_mask=bm, return_aux=FA.AuxRequest(lse=True))
        tables = [bm.kv_num_blocks, bm.kv_indices, bm.full_kv_num_blocks, bm.full_kv_indices, bm.q_num_blocks,
                  bm.q_indices, bm.full_q_num_blocks, bm.full_q_indices]
        dense = FA.create_mask(mask_mod, B, None, L, L, device="cpu")
        return [out, aux.lse, aux.max_scores, *tables, bm.to_dense(), dense, bm.shape, bm.sparsity(), bm.BLOCK_SIZE,
                bm.seq_lengths, str(bm), repr(bm)]
    same(fn)


def test_default_block_size_and_broadcast_mask():
    """BLOCK_SIZE 128 over 16 tokens (PyTorch's negative 'sparsity'), B and H None, create_mask of a score_mod."""
    def fn(lib):
        FA = _fa(lib)
        bm = FA.create_block_mask(causal, None, None, L, L, device="cpu")

        def minus_inf_above(score, b, h, q_idx, kv_idx):
            return lib.where(q_idx >= kv_idx, score, -float("inf"))
        return [FA.flex_attention(*_qkv(lib), block_mask=bm), bm.shape, bm.sparsity(), bm.to_dense(), repr(bm),
                FA.create_mask(minus_inf_above, 1, H, 4, 4, device="cpu"),
                FA.create_mask(FA.noop_mask, None, None, 2, 3)]
    same(fn)


def test_block_mask_slicing_adjust_and_from_kv_blocks():
    def fn(lib):
        FA = _fa(lib)
        bm = FA.create_block_mask(causal, B, H, L, L, device="cpu", BLOCK_SIZE=4)
        sub = bm[1]
        crop = bm._adjust(8, 8)
        q, k, v = _qkv(lib)
        num = lib.tensor([[[1, 2, 1, 3]]], dtype=lib.int32)
        idx = lib.tensor([[[0, 1, 2, 3], [1, 0, 2, 3], [2, 0, 1, 3], [3, 1, 0, 2]]], dtype=lib.int32)[None]
        made = FA.BlockMask.from_kv_blocks(num, idx, BLOCK_SIZE=4, mask_mod=causal)
        return [sub.shape, sub.kv_num_blocks, sub.q_indices, sub.to_dense(), crop.shape, crop.kv_num_blocks,
                crop.kv_indices, crop.to_dense(),
                FA.flex_attention(q[:, :, :8], k[:, :, :8], v[:, :, :8], block_mask=crop),
                made.shape, made.q_num_blocks, made.q_indices, made.to_dense(),
                FA.flex_attention(q, k, v, block_mask=made)]
    same(fn)


def test_block_mask_options_match_torch():
    """Rectangular masks with (Q, KV) block sizes, the dQ write-order tables (both orders, sliced and cropped),
    no separate full blocks, and the pictures to_string draws."""
    def fn(lib):
        FA = _fa(lib)

        def band_and_sink(b, h, q_idx, kv_idx):
            return ((q_idx - kv_idx).abs() < 5) | (kv_idx < 2)
        out = []
        for order in (True, False):
            bm = FA.create_block_mask(band_and_sink, B, 1, L, 24, device="cpu", BLOCK_SIZE=(4, 8),
                                      compute_dq_write_order=True, dq_kv_order=order)
            out += [bm.dq_write_order, bm.dq_write_order_full, bm[1].dq_write_order,
                    bm._adjust(8, 16).dq_write_order_full, bm.dq_kv_order, bm.dq_kv_order_spt]
        out += [bm.to_string(grid_size=-1), bm.to_string(grid_size=2, limit=1)]
        bm = FA.create_block_mask(band_and_sink, B, 1, L, 24, device="cpu", BLOCK_SIZE=(4, 8),
                                  separate_full_blocks=False)
        q, k, v = _qkv(lib)
        k, v = (lib.cat([x, x[:, :, :8]], dim=2) for x in (k, v))
        return out + [bm.full_kv_num_blocks, bm.kv_num_blocks, bm.kv_indices, bm.q_indices, repr(bm),
                      FA.flex_attention(q, k, v, block_mask=bm)]
    same(fn)


def _alibi(lib, slopes):
    def alibi(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)
    return alibi


def _softcap(lib):
    def softcap(score, b, h, q_idx, kv_idx):
        return 2.0 * lib.tanh(score / 2.0)
    return softcap


def test_score_mods_and_learned_bias_gradients():
    """A learned relative-position bias table and per-head ALiBi slopes captured by score_mods get PyTorch's
    gradients (on the CPU too), with tanh softcapping and a sliding-window mask."""
    def fn(lib):
        FA = _fa(lib)
        bias = (formula_data(lib, 2 * L - 1, seed=3) * 0.5).requires_grad_()
        slopes = lib.tensor([0.5, 0.25]).requires_grad_()
        alibi, cap = _alibi(lib, slopes), _softcap(lib)

        def score_mod(score, b, h, q_idx, kv_idx):
            return alibi(cap(score, b, h, q_idx, kv_idx), b, h, q_idx, kv_idx) + bias[q_idx - kv_idx + L - 1]
        bm = FA.create_block_mask(FA.and_masks(causal, sliding_window), None, None, L, L, device="cpu")
        out, lse = FA.flex_attention(*_qkv(lib), score_mod=score_mod, block_mask=bm, return_lse=True)
        (out * formula_data(lib, *out.shape, seed=4)).sum().add(lse.sum() * 0.1).backward()
        return [out, lse, bias.grad, slopes.grad]
    same(fn)


def test_fully_masked_rows_give_zero_output_minus_inf_lse_and_finite_grads():
    def fn(lib):
        FA = _fa(lib)
        bias = formula_data(lib, L, seed=5).requires_grad_()

        def rows_past_11_empty(b, h, q_idx, kv_idx):
            return (q_idx >= kv_idx) & (q_idx < 12)

        def score_mod(score, b, h, q_idx, kv_idx):
            return score + bias[kv_idx]
        bm = FA.create_block_mask(rows_past_11_empty, B, H, L, L, device="cpu")
        out, aux = FA.flex_attention(*_qkv(lib), score_mod=score_mod, block_mask=bm,
                                     return_aux=FA.AuxRequest(lse=True))
        (out.sum() + aux.lse[..., :12].sum()).backward()
        return [out, aux.lse, bias.grad]
    same(fn)


def test_gqa_value_dim_scale_and_broadcast_kv_batch():
    def fn(lib):
        FA = _fa(lib)
        q, k, v = _qkv(lib, hq=4, hkv=2, ev=6)

        def head_bias(score, b, h, q_idx, kv_idx):
            return score + 0.1 * h - 0.2 * b
        bm = FA.create_block_mask(causal, B, None, L, L, device="cpu")
        return [FA.flex_attention(q, k, v, score_mod=head_bias, enable_gqa=True, scale=0.3),
                FA.flex_attention(q, k[:1], v[:1], block_mask=bm, enable_gqa=True, return_lse=True),
                FA.flex_attention(q[:, :2], k, v)]
    same(fn)


@pytest.mark.parametrize("dtypes", [("float64",) * 3, ("bfloat16",) * 3, ("float16",) * 3,
                                    ("float32", "bfloat16", "float64")], ids=["f64", "bf16", "f16", "mixed"])
def test_dtypes(dtypes):
    def fn(lib):
        FA = _fa(lib)
        q, k, v = (x.to(getattr(lib, d)) for x, d in zip(_qkv(lib), dtypes))
        bm = FA.create_block_mask(causal, None, None, L, L, device="cpu")
        return FA.flex_attention(q, k, v, score_mod=_softcap(lib), block_mask=bm, return_lse=True)
    same(fn)


def test_autocast_casts_qkv_once_and_keeps_float32_lse():
    """Under autocast q/k/v are cast to bfloat16 (float32 q with bfloat16 k/v too: no mixed-dtype refusal), the
    scores stay float32 (the score_mod's bias and its gradient too)."""
    def fn(lib):
        FA = _fa(lib)
        q, k, v = _qkv(lib)
        bias = formula_data(lib, L, seed=9).requires_grad_()

        def score_mod(score, b, h, q_idx, kv_idx):
            return score + bias[kv_idx]
        with lib.autocast("cpu", dtype=lib.bfloat16):
            plain = FA.flex_attention(q, k, v, score_mod=_softcap(lib), return_lse=True)
            out = FA.flex_attention(q, k.bfloat16(), v.bfloat16(), score_mod=score_mod)
        out.float().sum().backward()
        return [*plain, out, bias.grad]
    same(fn)


def test_qkv_gradients_match_torchs_dense_reference():
    """q/k/v gradients (GQA, mask, captured-free score_mod) of torchish's dense path against the operator PyTorch's
    flex_attention runs (its public function refuses q/k/v gradients on the CPU, see the next test)."""
    from torch._higher_order_ops.flex_attention import flex_attention as torch_flex_op

    FA = _fa(torch)
    tq, tk, tv = (x.requires_grad_() for x in _qkv(torch, hq=4, ev=6))
    bm = FA.create_block_mask(FA.and_masks(causal, sliding_window), None, None, L, L, device="cpu")
    out, lse, _ = torch_flex_op(tq, tk, tv, _softcap(torch), bm.as_tuple(), 0.3, {})
    cot = formula_data(torch, *out.shape, seed=6)
    (out * cot).sum().add(lse.sum() * math.log(2) * 0.1).backward()

    xFA = _fa(torchish)
    xq, xk, xv = (x.requires_grad_() for x in _qkv(torchish, hq=4, ev=6))
    xout, xlse, _ = xFA._math_attention(xq, xk, xv, _softcap(torchish), xFA.and_masks(causal, sliding_window), 0.3)
    (xout * formula_data(torchish, *xout.shape, seed=6)).sum().add(xlse.sum() * 0.1).backward()
    assert_same([out, lse * math.log(2), tq.grad, tk.grad, tv.grad], [xout, xlse, xq.grad, xk.grad, xv.grad])


def test_compiled_training_step_matches_eager_and_torch():
    """A compiled step: flex attention with a learned bias and a document mask built inside, backward, SGD."""
    def case(T, jit):
        FA = _fa(T)
        bias = (formula_data(T, 2 * L - 1, seed=7) * 0.3).requires_grad_()
        opt = T.optim.SGD([bias], lr=0.5)
        q, k, v = _qkv(T, hq=4)
        doc = _document_mask(T)

        def rel(score, b, h, q_idx, kv_idx):
            return score + bias[q_idx - kv_idx + L - 1]

        @jit
        def step(q, k, v):
            bm = FA.create_block_mask(FA.and_masks(doc, causal), None, None, L, L, device="cpu")
            out = FA.flex_attention(q, k, v, score_mod=rel, block_mask=bm, enable_gqa=True)
            loss = (out * out).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()
        losses = [step(q, k, v) for _ in range(3)]
        return [*losses, bias.detach()]
    compile_three_ways(case)


def test_compiled_create_block_mask_and_flex_attention():
    """``torch.compile(create_block_mask)`` returns a BlockMask; ``torch.compile(flex_attention)`` takes one (and a
    score_mod), as in attention-gym and gpt-fast; a decoding step slices one query block of the mask and offsets
    its mask_mod (gpt-fast's pattern)."""
    def case(T, jit):
        FA = _fa(T)
        make_mask = jit(FA.create_block_mask, dynamic=False, fullgraph=True)
        attend = jit(FA.flex_attention, dynamic=False, fullgraph=True)
        q, k, v = _qkv(T)
        out = []
        for _ in range(2):
            bm = make_mask(FA.and_masks(causal, sliding_window), 1, None, L, L, device="cpu", BLOCK_SIZE=4)
            out += [bm.kv_num_blocks, bm.full_kv_indices, bm.q_indices, attend(q, k, v, _softcap(T), bm)]
        for pos in (5, 9):
            step = bm[:, :, T.tensor([pos]) // bm.BLOCK_SIZE[0]]
            offset, inner = T.tensor(pos), bm.mask_mod

            def shifted(b, h, q_idx, kv_idx):
                return inner(b, h, q_idx + offset, kv_idx)
            step.mask_mod, step.seq_lengths = shifted, (1, L)
            out += [step.kv_num_blocks, step.kv_indices, attend(q[:, :, pos:pos + 1], k, v, block_mask=step)]
        return out
    compile_three_ways(case)


def test_mixed_dtype_backward_raises_like_torch():
    """q/k/v of different dtypes: the forward runs, the backward (here for a captured bias) raises ValueError."""
    def fn(lib):
        FA = _fa(lib)
        q, k, v = _qkv(lib)
        bias = formula_data(lib, L, seed=8).requires_grad_()
        out = FA.flex_attention(q, k.bfloat16(), v.bfloat16(), score_mod=lambda s, b, h, qi, ki: s + bias[ki])
        out.sum().backward()
    err = check_raises(fn)
    with pytest.raises(ValueError) as got:
        fn(torchish)
    assert str(got.value) == str(err)


def _err_cases(lib):
    FA = _fa(lib)
    q, k, v = _qkv(lib)
    bm = FA.create_block_mask(causal, B, None, L, L, device="cpu")
    return {
        "three_d": lambda: FA.flex_attention(q[0], k[0], v[0]),
        "one_d": lambda: FA.flex_attention(q[0, 0, 0], k, v),
        "heads_without_gqa": lambda: FA.flex_attention(q, k[:, :1], v[:, :1]),
        "gqa_not_multiple": lambda: FA.flex_attention(lib.cat([q, q[:, :1]], 1), k, v, enable_gqa=True),
        "batch_without_mask": lambda: FA.flex_attention(q, k[:1], v[:1]),
        "batch_mask_mismatch": lambda: FA.flex_attention(
            q, k[:1], v[:1], block_mask=FA.create_block_mask(causal, 1, None, L, L, device="cpu")),
        "embed_dim": lambda: FA.flex_attention(q, k[..., :4], v),
        "mask_too_short": lambda: FA.flex_attention(
            q, k, v, block_mask=FA.create_block_mask(causal, B, None, 8, L, device="cpu")),
        "mask_too_long": lambda: FA.flex_attention(
            q, k, v, block_mask=FA.create_block_mask(causal, B, None, 32, L, device="cpu")),
        "value_length": lambda: FA.flex_attention(q, k, v[:, :, :12]),
        "lse_and_aux": lambda: FA.flex_attention(q, k, v, return_lse=True, return_aux=FA.AuxRequest(lse=True)),
        "max_scores_on_cpu": lambda: FA.flex_attention(q, k, v, return_aux=FA.AuxRequest(max_scores=True)),
        "bad_backend": lambda: FA.flex_attention(q, k, v, kernel_options={"BACKEND": "XX"}),
        "backend_and_force": lambda: FA.flex_attention(
            q, k, v, kernel_options={"BACKEND": "AUTO", "FORCE_USE_FLEX_ATTENTION": True}),
        "score_mod_with_mask_signature": lambda: FA.flex_attention(q, k, v, score_mod=causal),
        "block_mask_of_score_mod": lambda: FA.create_block_mask(_softcap(lib), B, H, L, L, device="cpu"),
        "mod_with_two_args": lambda: FA.create_mask(lambda b, h: b, B, H, L, L, device="cpu"),
        "sliced_mask": lambda: FA.flex_attention(q[:1], k[:1], v[:1], block_mask=bm[0]),
        "qkv_backward_on_cpu": lambda: FA.flex_attention(q.requires_grad_(), k, v),
        "or_masks_not_callable": lambda: FA.or_masks(causal, 3),
        "int_mask": lambda: FA.create_block_mask(lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx).int(), B, H, L, L,
                                                 device="cpu"),
    }


_ERRORS = ("three_d", "one_d", "heads_without_gqa", "gqa_not_multiple", "batch_without_mask", "batch_mask_mismatch",
           "embed_dim", "mask_too_short", "mask_too_long", "value_length", "lse_and_aux", "max_scores_on_cpu",
           "bad_backend", "backend_and_force", "score_mod_with_mask_signature", "block_mask_of_score_mod",
           "mod_with_two_args", "sliced_mask", "qkv_backward_on_cpu", "or_masks_not_callable", "int_mask")


@pytest.mark.parametrize("name", _ERRORS)
def test_errors_match_torch(name):
    err = check_raises(lambda lib: _err_cases(lib)[name]())
    if not isinstance(err, RuntimeError) or name in ("sliced_mask", "qkv_backward_on_cpu"):
        with pytest.raises(Exception) as got:  # PyTorch's own wording (not a compiler's or a kernel's)
            _err_cases(torchish)[name]()
        def text(e):  # (without the addresses of the functions a message shows)
            return re.sub(r" at 0x[0-9a-f]+", "", str(e))
        assert text(got.value) == text(err)


def test_error_cases_are_all_run():
    assert sorted(_ERRORS) == sorted(_err_cases(torchish))


def test_warnings_like_torch():
    """Once per process, as in PyTorch: the unfused-implementation hint and return_lse's deprecation."""
    FA = _fa(torchish)
    FA._WARNINGS_SHOWN.clear()
    q, k, v = _qkv(torchish)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FA.flex_attention(q, k, v, return_lse=True)
        FA.flex_attention(q, k, v, return_lse=True)
    kinds = sorted((w.category.__name__, str(w.message).split(" ")[0]) for w in caught)
    assert kinds == [("FutureWarning", "return_lse"), ("UserWarning", "flex_attention")]
