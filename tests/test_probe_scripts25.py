"""Third-party-style programs, round 25: generation, diffusion and vision-geometry code as Hugging Face transformers,
diffusers, kornia/torchvision-style repositories and training scripts write it, run with torch 2.13 and with torchish
and compared by ``assert_script_matches`` (tests/oracle.py): 4-D causal/padding masks with ``finfo.min`` (a float mask
multiplied in place by a bool one), rotate_half rope with left padding and scaling, RMSNorm variants in half
precision, sampling with multinomial under manual_seed (temperature, top-k, top-p, min-p; the step compiled in
generate's loop; speculative acceptance), repetition penalties and beam bookkeeping; diffusers' schedulers (DDIM with
eta, v-prediction, zero-terminal-SNR, Karras sigmas), timestep embeddings, a tiny UNet sampled with classifier-free
guidance (compiled), an SNR-weighted training step with a foreach EMA, the attention processor's ``baddbmm`` over an
empty input, LoRA and the VAE's diagonal Gaussian; grid_sample/affine_grid (a compiled spatial transformer, RAFT
warping, a homography warp), pixel_(un)shuffle, unfold/fold blending, antialiased interpolate, a hand-written
roi_align, meshgrid tables (Swin, DETR); gradient accumulation over compiled micro-steps with lerp_ EMAs, and the
import-time backend flags with the ``torch.cuda.amp`` path on a CPU.

Fixed here: ``torch.backends.cpu/mkl/nnpack/mha`` were missing (AttributeError at import time); grid_sample in
float16 warned about an overflowing cast on every call; ``Generator(device=...)``: 'cpu:0' kept its index, 'meta' and
absent accelerators raised other exception types than PyTorch's RuntimeError.

Left out (covered by test_probe_scripts9/13): the complex polar/view_as_complex rope and KV caches grown by cat.
Not compared: grid_sample at NaN/inf grid points (PyTorch's 2-D vectorised and 3-D scalar kernels disagree with each
other there, and its backward crashes), the numpy memory shared by ``Tensor.numpy()`` (README, known limitation).
"""
import math
import warnings

import numpy as np
import pytest

from oracle import raised as _err, script_test, torch_one_thread
from oracle import formula_data as _data, formula_init as _init

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _grads(lib, out, *leaves):
    """Gradients of a fixed weighted sum of ``out`` with respect to ``leaves`` (None where unused)."""
    w = lib.cos(lib.arange(out.numel(), dtype=lib.float32) * 0.37).reshape(out.shape).to(out.dtype)
    return lib.autograd.grad((out * w).sum(), leaves, allow_unused=True)


# ---------------------------------------------------------------- transformers: masks, rope, norms, generation

def case_hf_4d_padding_causal_mask_with_cache_position(lib):
    """``_prepare_4d_causal_attention_mask_with_cache_position`` as LLaMA/Gemma write it: a full() of finfo.min,
    triu(diagonal=1), ``causal_mask *= arange > cache_position`` (a float tensor times a bool one in place), the
    padding mask added and compared with 0, masked_fill back into a slice; then eager attention with it in float32,
    bfloat16 and float16 (a left-padded row is fully masked at its padding positions)."""
    F = lib.nn.functional
    res = {}
    attention_mask = lib.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    for dtype in (lib.float32, lib.float16):
        bsz, seq, target = 2, 5, 5
        cache_position = lib.arange(seq)
        min_dtype = lib.finfo(dtype).min
        causal_mask = lib.full((seq, target), fill_value=min_dtype, dtype=dtype)
        if seq != 1:
            causal_mask = lib.triu(causal_mask, diagonal=1)
        causal_mask *= lib.arange(target) > cache_position.reshape(-1, 1)
        causal_mask = causal_mask[None, None, :, :].expand(bsz, 1, -1, -1)
        causal_mask = causal_mask.clone()
        mask_length = attention_mask.shape[-1]
        padding_mask = causal_mask[:, :, :, :mask_length] + attention_mask[:, None, None, :].to(causal_mask.device)
        padding_mask = padding_mask == 0
        causal_mask[:, :, :, :mask_length] = causal_mask[:, :, :, :mask_length].masked_fill(padding_mask, min_dtype)
        q = _data(lib, bsz, 2, seq, 4, dtype=dtype, in_library=dtype != lib.float32).requires_grad_()
        k = _data(lib, bsz, 2, seq, 4, seed=1, dtype=dtype, in_library=dtype != lib.float32).requires_grad_()
        scores = lib.matmul(q, k.transpose(2, 3)) / math.sqrt(4) + causal_mask
        probs = F.softmax(scores, dim=-1, dtype=lib.float32).to(dtype)
        name = str(dtype).split(".")[-1]
        grads = _grads(lib, probs, q, k) if dtype == lib.float32 else None
        res[name] = (min_dtype, causal_mask, probs, probs.dtype, grads)
        # the unmasked-rows fix some models apply for SDPA: rows that are all min get attended everywhere
        unmasked = causal_mask.mul(~lib.all(causal_mask == min_dtype, dim=-1, keepdim=True))
        res[name + "_sdpa"] = unmasked
    # the old _expand_mask / _make_causal_mask pair
    dtype = lib.float32
    mask = lib.full((4, 4), lib.tensor(lib.finfo(dtype).min))
    mask_cond = lib.arange(mask.size(-1))
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    expanded = attention_mask[:, None, None, 1:].expand(2, 1, 4, 4).to(dtype)
    inverted = 1.0 - expanded
    inverted = inverted.masked_fill(inverted.to(lib.bool), lib.finfo(dtype).min)
    res["old"] = (mask, inverted, mask[None, None] + inverted, (mask[None, None] + inverted).isinf().any())
    return res


def case_hf_rope_rotate_half_left_padding_and_scaling(lib):
    """LlamaRotaryEmbedding of transformers 4.4x: inv_freq from an int64 arange, position_ids from the attention
    mask's cumsum (left padding filled with 1), ``inv_freq[None, :, None].float().expand(...) @ position_ids``
    under ``autocast(enabled=False)``, cos/sin cast to the activations' dtype, rotate_half; linear and dynamic-NTK
    scaling; gradients to q and k."""
    res = {}
    dim, base = 8, 10000.0
    attention_mask = lib.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    position_ids = attention_mask.long().cumsum(-1) - 1
    position_ids.masked_fill_(attention_mask == 0, 1)
    res["pos"] = position_ids

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return lib.cat((-x2, x1), dim=-1)

    def rope(x, position_ids, inv_freq, scaling=1.0):
        inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float() / scaling
        with lib.autocast(device_type="cpu", enabled=False):
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = lib.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)

    inv_freq = 1.0 / (base ** (lib.arange(0, dim, 2, dtype=lib.int64).float() / dim))
    res["inv_freq"] = (inv_freq, inv_freq.dtype)
    for dtype, scaling in ((lib.float32, 1.0), (lib.float32, 2.0)):
        q = _data(lib, 2, 2, 6, dim, dtype=dtype, in_library=dtype != lib.float32).requires_grad_()
        k = _data(lib, 2, 1, 6, dim, seed=2, dtype=dtype, in_library=dtype != lib.float32).requires_grad_()
        if True:
            cos, sin = rope(q, position_ids, inv_freq, scaling)
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
            q_embed = (q * cos) + (rotate_half(q) * sin)
            k_embed = (k * cos) + (rotate_half(k) * sin)
            name = f"{str(dtype).split('.')[-1]}_{scaling}"
            grads = _grads(lib, lib.cat([q_embed, k_embed], 1), q, k) if dtype == lib.float32 else None
            res[name] = (q_embed, k_embed, grads)
    # dynamic NTK: base grows with the sequence length
    seq_len, max_pos, factor = 12, 8, 2.0
    new_base = base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq_ntk = 1.0 / (new_base ** (lib.arange(0, dim, 2, dtype=lib.int64).float().to("cpu") / dim))
    res["ntk"] = inv_freq_ntk
    # llama3's frequency-dependent scaling with where()
    low_freq_wavelen, high_freq_wavelen = 8192 / 1.0, 8192 / 4.0
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = lib.where(wavelen > low_freq_wavelen, inv_freq / 8.0, inv_freq)
    smooth_factor = (8192 / wavelen - 1.0) / (4.0 - 1.0)
    smoothed = (1 - smooth_factor) * inv_freq_llama / 8.0 + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    res["llama3"] = (lib.where(is_medium, smoothed, inv_freq_llama), is_medium, is_medium.dtype)
    return res


def case_rmsnorm_float32_upcast_variants(lib):
    """RMSNorm as LLaMA (weight times the result cast back), Gemma (``1 + weight.float()`` in float32, cast at the
    end), T5 (variance in float32, cast to the weight's half dtype) write it, with bfloat16 and float16 parameters and
    activations; gradients to the input and the weight."""
    nn = lib.nn
    res = {}

    class LlamaRMSNorm(nn.Module):
        def __init__(self, hidden_size, eps=1e-6):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(hidden_size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            input_dtype = hidden_states.dtype
            hidden_states = hidden_states.to(lib.float32)
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * lib.rsqrt(variance + self.variance_epsilon)
            return self.weight * hidden_states.to(input_dtype)

    class GemmaRMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(lib.zeros(dim))

        def _norm(self, x):
            return x * lib.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

        def forward(self, x):
            output = self._norm(x.float())
            output = output * (1.0 + self.weight.float())
            return output.type_as(x)

    class T5LayerNorm(nn.Module):
        def __init__(self, hidden_size, eps=1e-6):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(hidden_size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            variance = hidden_states.to(lib.float32).pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * lib.rsqrt(variance + self.variance_epsilon)
            if self.weight.dtype in [lib.float16, lib.bfloat16]:
                hidden_states = hidden_states.to(self.weight.dtype)
            return self.weight * hidden_states

    for cls, dtypes in ((LlamaRMSNorm, (lib.bfloat16,)), (GemmaRMSNorm, (lib.float16,)),
                        (T5LayerNorm, (lib.bfloat16,))):
        for dtype in dtypes:
            m = _init(lib, cls(6)).to(dtype)
            x = (_data(lib, 3, 6, dtype=dtype, in_library=dtype != lib.float32) * 3).requires_grad_()
            y = m(x)
            res[f"{cls.__name__}_{dtype}"] = (y, y.dtype, _grads(lib, y, x, m.weight))
    # nn.RMSNorm (eps None -> finfo(dtype).eps), against the hand-written one
    m = _init(lib, nn.RMSNorm([6]))
    x = _data(lib, 3, 6).requires_grad_()
    y = m(x)
    res["nn"] = (y, _grads(lib, y, x, m.weight), m.eps, repr(m))
    return res


def case_sampling_temperature_topk_topp_multinomial(lib):
    """Sampling as generate() does it: temperature, top-k, top-p (sort ascending, softmax, cumsum, scatter back),
    min-p, then ``torch.multinomial(probs, num_samples=1)`` under manual_seed, for several steps of a toy model whose
    logits depend on the last token; also sampling with replacement, without replacement, from a Generator, and
    from rows with zero probability entries."""
    F = lib.nn.functional
    lib.manual_seed(1234)
    vocab = 11
    table = _data(lib, vocab, vocab) * 4.0
    res = {}
    for temperature, top_k, top_p, min_p in ((0.7, 5, 1.0, 0.0), (1.3, 0, 0.8, 0.0), (1.0, 4, 0.9, 0.1)):
        tokens = lib.tensor([[1], [6], [9]])
        for _ in range(5):
            scores = table[tokens[:, -1]] / temperature
            if top_k > 0:
                top_k_ = min(top_k, scores.size(-1))
                indices_to_remove = scores < lib.topk(scores, top_k_)[0][..., -1, None]
                scores = scores.masked_fill(indices_to_remove, -float("inf"))
            if top_p < 1.0:
                sorted_logits, sorted_indices = lib.sort(scores, descending=False)
                cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
                sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
                sorted_indices_to_remove[..., -1:] = 0
                indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
                scores = scores.masked_fill(indices_to_remove, -float("inf"))
            if min_p > 0:
                probs = lib.softmax(scores, dim=-1)
                top_probs, _ = probs.max(dim=-1, keepdim=True)
                scaled_min_p = min_p * top_probs
                tokens_to_remove = probs < scaled_min_p
                sorted_indices = lib.argsort(scores, descending=True, dim=-1)
                sorted_indices_to_remove = lib.gather(tokens_to_remove, dim=-1, index=sorted_indices)
                sorted_indices_to_remove[..., :1] = False
                indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
                scores = scores.masked_fill(indices_to_remove, -float("inf"))
            probs = F.softmax(scores, dim=-1)
            next_tokens = lib.multinomial(probs, num_samples=1).squeeze(1)
            tokens = lib.cat([tokens, next_tokens[:, None]], dim=-1)
        res[(temperature, top_k, top_p, min_p)] = tokens
    probs = F.softmax(table[:3], dim=-1)
    res["with_replacement"] = lib.multinomial(probs, 6, replacement=True)
    res["without"] = lib.multinomial(probs, 4)
    g = lib.Generator().manual_seed(7)
    res["gen"] = (lib.multinomial(probs[0], 5, replacement=True, generator=g), lib.multinomial(probs, 2, generator=g))
    zero = lib.tensor([[0.0, 0.0, 1.0, 0.0], [0.5, 0.0, 0.5, 0.0]])
    res["zero_rows"] = lib.multinomial(zero, 2)
    res["too_many"] = _err(lambda: lib.multinomial(zero, 3))
    res["negative"] = _err(lambda: lib.multinomial(lib.tensor([0.5, -0.1]), 1))
    res["all_zero"] = _err(lambda: lib.multinomial(lib.tensor([0.0, 0.0]), 1))
    res["next"] = lib.rand(2)
    return res


def case_repetition_penalty_and_beam_bookkeeping(lib):
    """Repetition penalty by gather/where/scatter_ with repeated ids, a frequency/presence penalty through
    scatter_add_ of ones, and one beam-search step: log_softmax plus beam scores, view over beams*vocab, topk(2*beams),
    ``//`` and ``%`` of the flat indices (and torch.div floor), reordering of sequences and a past cache by
    index_select, done flags for eos."""
    F = lib.nn.functional
    vocab, beams, batch = 7, 3, 2
    scores = _data(lib, batch * beams, vocab) * 3.0
    input_ids = lib.tensor([[1, 1, 4], [2, 3, 2], [6, 6, 6], [0, 5, 1], [3, 3, 0], [4, 2, 5]])
    res = {}
    score = lib.gather(scores, 1, input_ids)
    score = lib.where(score < 0, score * 1.2, score / 1.2)
    penalised = scores.clone()
    penalised.scatter_(1, input_ids, score)
    res["rep"] = penalised
    counts = lib.zeros_like(scores).scatter_add_(1, input_ids, lib.ones_like(input_ids, dtype=scores.dtype))
    res["freq"] = (counts, scores - counts * 0.5 - (counts > 0).float() * 0.3)
    beam_scores = lib.zeros((batch, beams), dtype=lib.float)
    beam_scores[:, 1:] = -1e9
    beam_scores = beam_scores.view((batch * beams,))
    seqs = input_ids.clone()
    past = _data(lib, batch * beams, 2, 3, 4)
    eos = 5
    for step in range(3):
        next_token_logits = penalised + step * 0.1 * seqs[:, -1:].float()
        next_token_scores = F.log_softmax(next_token_logits, dim=-1)
        next_token_scores = next_token_scores + beam_scores[:, None].expand_as(next_token_scores)
        next_token_scores = next_token_scores.view(batch, beams * vocab)
        next_token_scores, next_tokens = lib.topk(next_token_scores, 2 * beams, dim=1, largest=True, sorted=True)
        next_indices = next_tokens // vocab
        next_indices_div = lib.div(next_tokens, vocab, rounding_mode="floor")
        next_tokens = next_tokens % vocab
        beam_idx = (next_indices[:, :beams] + lib.arange(batch)[:, None] * beams).view(-1)
        beam_scores = next_token_scores[:, :beams].reshape(-1)
        seqs = lib.cat([seqs[beam_idx, :], next_tokens[:, :beams].reshape(-1, 1)], dim=-1)
        past = past.index_select(0, beam_idx)
        done = (next_tokens[:, :beams] == eos)
        res[f"step{step}"] = (next_token_scores, next_indices, lib.equal(next_indices, next_indices_div), beam_idx,
                              done, done.any(dim=1))
    res["seqs"] = seqs
    res["past"] = past
    res["len_penalised"] = beam_scores / (seqs.shape[-1] ** 1.0)
    return res


# ---------------------------------------------------------------- diffusers: schedules, embeddings, a tiny UNet

def _betas_for_alpha_bar(lib, num_diffusion_timesteps, max_beta=0.999):
    def alpha_bar_fn(t):
        return math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2

    betas = []
    for i in range(num_diffusion_timesteps):
        t1 = i / num_diffusion_timesteps
        t2 = (i + 1) / num_diffusion_timesteps
        betas.append(min(1 - alpha_bar_fn(t2) / alpha_bar_fn(t1), max_beta))
    return lib.tensor(betas, dtype=lib.float32)


def case_diffusers_schedulers_ddim_eta_and_vpred(lib):
    """diffusers' scheduler arithmetic: linear, scaled_linear (``linspace(sqrt) ** 2``) and squaredcos_cap_v2 betas,
    ``rescale_zero_terminal_snr``, alphas_cumprod by cumprod, set_timesteps with numpy (leading/trailing spacing,
    ``from_numpy`` of a reversed copy), DDIM steps with eta > 0 (variance noise from randn with a Generator),
    epsilon and v-prediction, add_noise with a tensor of timesteps broadcast by flatten/unsqueeze; Karras sigmas."""
    T = 20
    res = {}
    betas = {"linear": lib.linspace(1e-4, 0.02, T, dtype=lib.float32),
             "scaled_linear": lib.linspace(0.00085 ** 0.5, 0.012 ** 0.5, T, dtype=lib.float32) ** 2,
             "cos": _betas_for_alpha_bar(lib, T)}

    def rescale_zero_terminal_snr(betas):
        alphas = 1.0 - betas
        alphas_cumprod = lib.cumprod(alphas, dim=0)
        alphas_bar_sqrt = alphas_cumprod.sqrt()
        a0 = alphas_bar_sqrt[0].clone()
        aT = alphas_bar_sqrt[-1].clone()
        alphas_bar_sqrt -= aT
        alphas_bar_sqrt *= a0 / (a0 - aT)
        alphas_bar = alphas_bar_sqrt ** 2
        alphas = alphas_bar[1:] / alphas_bar[:-1]
        alphas = lib.cat([alphas_bar[0:1], alphas])
        return 1 - alphas

    betas["zsnr"] = rescale_zero_terminal_snr(betas["scaled_linear"])
    res["betas"] = betas
    sample0 = _data(lib, 2, 3, 4, 4)
    gen = lib.Generator().manual_seed(3)
    for name, b in betas.items():
        alphas_cumprod = lib.cumprod(1.0 - b, dim=0)
        final_alpha_cumprod = lib.tensor(1.0)
        for spacing in ("leading", "trailing"):
            steps = 5
            if spacing == "leading":
                step_ratio = T // steps
                timesteps = (np.arange(0, steps) * step_ratio).round()[::-1].copy().astype(np.int64)
            else:
                step_ratio = T / steps
                timesteps = np.round(np.arange(T, 0, -step_ratio)).astype(np.int64) - 1
            timesteps = lib.from_numpy(timesteps)
            sample = sample0.clone()
            for t in timesteps:
                model_output = lib.tanh(sample * 0.5 + t.float() / T)
                prev_timestep = t - T // steps
                alpha_prod_t = alphas_cumprod[t]
                alpha_prod_t_prev = alphas_cumprod[prev_timestep] if prev_timestep >= 0 else final_alpha_cumprod
                beta_prod_t = 1 - alpha_prod_t
                if name == "zsnr":  # v-prediction
                    pred_original_sample = (alpha_prod_t ** 0.5) * sample - (beta_prod_t ** 0.5) * model_output
                    pred_epsilon = (alpha_prod_t ** 0.5) * model_output + (beta_prod_t ** 0.5) * sample
                else:
                    pred_original_sample = (sample - beta_prod_t ** (0.5) * model_output) / alpha_prod_t ** (0.5)
                    pred_epsilon = model_output
                pred_original_sample = pred_original_sample.clamp(-1, 1)
                variance = (1 - alpha_prod_t_prev) / (1 - alpha_prod_t) * (1 - alpha_prod_t / alpha_prod_t_prev)
                std_dev_t = 0.5 * variance ** (0.5)
                pred_sample_direction = (1 - alpha_prod_t_prev - std_dev_t ** 2) ** (0.5) * pred_epsilon
                prev_sample = alpha_prod_t_prev ** (0.5) * pred_original_sample + pred_sample_direction
                variance_noise = lib.randn(model_output.shape, generator=gen, dtype=model_output.dtype)
                sample = prev_sample + std_dev_t * variance_noise
            res[f"{name}_{spacing}"] = (timesteps, sample)
        noise = _data(lib, 2, 3, 4, 4, seed=5)
        ts = lib.tensor([3, 17])
        sqrt_alpha_prod = alphas_cumprod[ts] ** 0.5
        sqrt_alpha_prod = sqrt_alpha_prod.flatten()
        while len(sqrt_alpha_prod.shape) < len(sample0.shape):
            sqrt_alpha_prod = sqrt_alpha_prod.unsqueeze(-1)
        sqrt_one_minus = (1 - alphas_cumprod[ts]) ** 0.5
        sqrt_one_minus = sqrt_one_minus.flatten()[:, None, None, None]
        res[f"{name}_noisy"] = sqrt_alpha_prod * sample0 + sqrt_one_minus * noise
        res[f"{name}_snr"] = (alphas_cumprod / (1 - alphas_cumprod))[ts]
    # Karras sigmas
    sigmas = ((1 - lib.cumprod(1 - betas["scaled_linear"], 0)) / lib.cumprod(1 - betas["scaled_linear"], 0)) ** 0.5
    rho = 7.0
    ramp = lib.linspace(0, 1, 6)
    min_inv_rho, max_inv_rho = sigmas[0].item() ** (1 / rho), sigmas[-1].item() ** (1 / rho)
    res["karras"] = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    res["log_sigmas"] = lib.log(sigmas)
    res["generators"] = (str(lib.Generator(device="cpu:0").device), _err(lambda: lib.Generator(device="meta")),
                         gen.initial_seed(), lib.Generator().manual_seed(3).initial_seed())
    return res


def _timestep_embedding(lib, timesteps, embedding_dim, flip_sin_to_cos=False, downscale_freq_shift=1,
                        scale=1, max_period=10000):
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * lib.arange(start=0, end=half_dim, dtype=lib.float32, device=timesteps.device)
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = lib.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = scale * emb
    emb = lib.cat([lib.sin(emb), lib.cos(emb)], dim=-1)
    if flip_sin_to_cos:
        emb = lib.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)
    if embedding_dim % 2 == 1:
        emb = lib.nn.functional.pad(emb, (0, 1, 0, 0))
    return emb


def case_timestep_embeddings(lib):
    """diffusers' get_timestep_embedding (flip_sin_to_cos, downscale_freq_shift 0/1, odd dims padded by F.pad,
    int64/float/0-dim-expanded timesteps), its shape error, TimestepEmbedding (linear, SiLU, linear) with a
    condition projection, and the Gaussian Fourier projection (``2 * pi * x[:, None] * W[None, :]``, log of sigma)."""
    nn = lib.nn
    res = {}
    for ts in (lib.tensor([0, 10, 999]), lib.tensor([0.5, 250.25, 998.0]), lib.tensor(7).expand(3)):
        for flip, shift, dim in ((False, 1, 8), (True, 0, 8), (True, 1, 7)):
            res[f"{ts.dtype}_{flip}_{shift}_{dim}"] = _timestep_embedding(lib, ts, dim, flip, shift)

    class TimestepEmbedding(nn.Module):
        def __init__(self, in_channels, time_embed_dim, cond_proj_dim=None):
            super().__init__()
            self.linear_1 = nn.Linear(in_channels, time_embed_dim)
            self.cond_proj = nn.Linear(cond_proj_dim, in_channels, bias=False) if cond_proj_dim else None
            self.act = nn.SiLU()
            self.linear_2 = nn.Linear(time_embed_dim, time_embed_dim)

        def forward(self, sample, condition=None):
            if condition is not None:
                sample = sample + self.cond_proj(condition)
            return self.linear_2(self.act(self.linear_1(sample)))

    m = _init(lib, TimestepEmbedding(8, 16, cond_proj_dim=4))
    emb = _timestep_embedding(lib, lib.tensor([1, 500]), 8, True, 0).requires_grad_()
    cond = _data(lib, 2, 4).requires_grad_()
    out = m(emb, cond)
    res["mlp"] = (out, _grads(lib, out, emb, cond, m.linear_1.weight, m.cond_proj.weight))
    W = lib.sin(lib.arange(4.0)) * 16
    x = lib.log(lib.tensor([0.02, 1.0, 80.0]))
    x_proj = x[:, None] * W[None, :] * 2 * np.pi
    res["fourier"] = lib.cat([lib.sin(x_proj), lib.cos(x_proj)], dim=-1)
    return res


def _tiny_unet(lib, ch=8, groups=4, temb_dim=16):
    nn, F = lib.nn, lib.nn.functional

    class ResnetBlock(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.norm1 = nn.GroupNorm(groups, cin, eps=1e-6, affine=True)
            self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
            self.time_emb_proj = nn.Linear(temb_dim, cout)
            self.norm2 = nn.GroupNorm(groups, cout, eps=1e-6)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
            self.nonlinearity = nn.SiLU()
            self.conv_shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else None  # (diffusers' 1x1 shortcut)

        def forward(self, input_tensor, temb):
            h = self.conv1(self.nonlinearity(self.norm1(input_tensor)))
            h = h + self.time_emb_proj(self.nonlinearity(temb))[:, :, None, None]
            h = self.conv2(self.nonlinearity(self.norm2(h)))
            if self.conv_shortcut is not None:
                input_tensor = self.conv_shortcut(input_tensor)
            return (input_tensor + h) / 1.0

    class AttnBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.group_norm = nn.GroupNorm(groups, c, eps=1e-6)
            self.to_q, self.to_k, self.to_v = nn.Linear(c, c), nn.Linear(c, c), nn.Linear(c, c)
            self.to_out = nn.ModuleList([nn.Linear(c, c), nn.Dropout(0.0)])
            self.heads = 2

        def forward(self, hidden_states):
            residual = hidden_states
            batch, channel, height, width = hidden_states.shape
            hidden_states = hidden_states.view(batch, channel, height * width).transpose(1, 2)
            hidden_states = self.group_norm(hidden_states.transpose(1, 2)).transpose(1, 2)
            q, k, v = self.to_q(hidden_states), self.to_k(hidden_states), self.to_v(hidden_states)
            head_dim = channel // self.heads
            q, k, v = (t.view(batch, -1, self.heads, head_dim).transpose(1, 2) for t in (q, k, v))
            hidden_states = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=False)
            hidden_states = hidden_states.transpose(1, 2).reshape(batch, -1, self.heads * head_dim)
            hidden_states = hidden_states.to(q.dtype)
            hidden_states = self.to_out[1](self.to_out[0](hidden_states))
            hidden_states = hidden_states.transpose(-1, -2).reshape(batch, channel, height, width)
            return (hidden_states + residual) / 1.0

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv_in = nn.Conv2d(3, ch, 3, padding=1)
            self.time_embedding = nn.Sequential(nn.Linear(ch, temb_dim), nn.SiLU(), nn.Linear(temb_dim, temb_dim))
            self.down = ResnetBlock(ch, ch)  # (cin == cout: no shortcut conv)
            self.downsample = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
            self.attn = AttnBlock(ch)
            self.up_conv = nn.Conv2d(ch, ch, 3, padding=1)
            self.up = nn.Conv2d(2 * ch, ch, 1)
            self.norm_out = nn.GroupNorm(groups, ch, eps=1e-5)
            self.conv_out = nn.Conv2d(ch, 3, 3, padding=1)

        def forward(self, sample, timestep, encoder_hidden_states=None):
            t_emb = _timestep_embedding(lib, timestep, ch, True, 0).to(dtype=sample.dtype)
            emb = self.time_embedding(t_emb)
            if encoder_hidden_states is not None:
                emb = emb + encoder_hidden_states
            h = self.conv_in(sample)
            skip = self.down(h, emb)
            h = self.downsample(skip)
            h = self.attn(h)
            dtype = h.dtype
            if dtype == lib.bfloat16:
                h = h.to(lib.float32)
            h = F.interpolate(h, scale_factor=2.0, mode="nearest")
            if dtype == lib.bfloat16:
                h = h.to(dtype)
            h = self.up_conv(h)
            h = self.up(lib.cat([h, skip], dim=1))
            return self.conv_out(F.silu(self.norm_out(h)))

    return _init(lib, UNet(), scale=0.3)


def case_tiny_unet_cfg_sampling_step(lib, jit):
    """A diffusers-style sampling loop with classifier-free guidance: ``cat([latents] * 2)``, a UNet (GroupNorm,
    SiLU, time embedding, self-attention by SDPA, nearest ``interpolate(scale_factor=2)``, skip concat),
    ``noise_pred.chunk(2)``, the guidance formula and guidance_rescale (std over all but the batch dim), then an
    Euler-ancestral-style update with ``randn_like`` under manual_seed; the step compiled."""
    unet = _tiny_unet(lib)
    unet.eval()
    lib.manual_seed(11)
    latents = _data(lib, 1, 3, 8, 8)
    cond = lib.cat([lib.zeros(1, 16), _data(lib, 1, 16, seed=2)])
    sigmas = lib.linspace(1.5, 0.1, 4)
    guidance_scale, guidance_rescale = 5.0, 0.7

    @jit
    def step(latents, t, sigma, sigma_next):
        latent_model_input = lib.cat([latents] * 2)
        latent_model_input = latent_model_input / ((sigma ** 2 + 1) ** 0.5)
        noise_pred = unet(latent_model_input, t.expand(2), encoder_hidden_states=cond)
        noise_pred_uncond, noise_pred_text = noise_pred.chunk(2)
        noise_pred = noise_pred_uncond + guidance_scale * (noise_pred_text - noise_pred_uncond)
        std_text = noise_pred_text.std(dim=list(range(1, noise_pred_text.ndim)), keepdim=True)
        std_cfg = noise_pred.std(dim=list(range(1, noise_pred.ndim)), keepdim=True)
        noise_pred_rescaled = noise_pred * (std_text / std_cfg)
        noise_pred = guidance_rescale * noise_pred_rescaled + (1 - guidance_rescale) * noise_pred
        sigma_up = (sigma_next ** 2 * (sigma ** 2 - sigma_next ** 2) / sigma ** 2) ** 0.5
        sigma_down = (sigma_next ** 2 - sigma_up ** 2) ** 0.5
        pred_original = latents - sigma * noise_pred
        derivative = (latents - pred_original) / sigma
        latents = latents + derivative * (sigma_down - sigma)
        return latents + lib.randn_like(latents) * sigma_up

    out = []
    with lib.no_grad():
        for i in range(3):
            latents = step(latents, lib.tensor(999 - 333 * i), sigmas[i], sigmas[i + 1])
            out.append(latents)
    return out, lib.rand(2)


def case_ddpm_snr_weighted_training_step_with_ema(lib):
    """A diffusers train_text_to_image-style step on a small denoiser (conv, GroupNorm, SiLU, a time embedding added
    per channel): noise and timesteps from randn/randint under manual_seed,
    add_noise by gather of alphas_cumprod, MSE on the epsilon (and SNR-weighted per-sample mean), AdamW,
    clip_grad_norm_, then EMA of the weights with ``_foreach_mul_``/``_foreach_add_`` and the
    warmup decay ``min(decay, (1 + step) / (10 + step))``."""
    nn, F = lib.nn, lib.nn.functional

    class Denoiser(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv_in = nn.Conv2d(3, 8, 3, padding=1)
            self.norm = nn.GroupNorm(4, 8)
            self.time_proj = nn.Linear(8, 8)
            self.conv_out = nn.Conv2d(8, 3, 3, padding=1)

        def forward(self, x, t):
            temb = self.time_proj(F.silu(_timestep_embedding(lib, t, 8, True, 0)))
            h = F.silu(self.norm(self.conv_in(x))) + temb[:, :, None, None]
            return self.conv_out(h)

    unet = _init(lib, Denoiser(), scale=0.3)
    ema = [p.detach().clone() for p in unet.parameters()]
    opt = lib.optim.AdamW(unet.parameters(), lr=1e-3, weight_decay=1e-2)
    T = 50
    betas = lib.linspace(1e-4, 0.02, T)
    alphas_cumprod = lib.cumprod(1 - betas, 0)
    lib.manual_seed(5)
    clean = _data(lib, 2, 3, 8, 8)

    def train_step(clean):
        noise = lib.randn_like(clean)
        timesteps = lib.randint(0, T, (clean.shape[0],), device=clean.device).long()
        a = alphas_cumprod.gather(-1, timesteps).reshape(-1, 1, 1, 1)
        noisy = a.sqrt() * clean + (1 - a).sqrt() * noise
        pred = unet(noisy, timesteps)
        snr = a / (1 - a)
        w = lib.stack([snr.flatten(), 5 * lib.ones_like(timesteps)], dim=1).min(dim=1)[0] / snr.flatten()
        loss = F.mse_loss(pred.float(), noise.float(), reduction="none")
        loss = loss.mean(dim=list(range(1, len(loss.shape)))) * w
        loss = loss.mean()
        opt.zero_grad()
        loss.backward()
        norm = lib.nn.utils.clip_grad_norm_(unet.parameters(), 1.0)
        opt.step()
        return loss, norm

    out = []
    for step in range(2):
        out.append(train_step(clean))
        decay = min(0.999, (1 + step) / (10 + step))
        with lib.no_grad():
            params = [p.detach() for p in unet.parameters()]
            lib._foreach_mul_(ema, decay)
            lib._foreach_add_(ema, params, alpha=1 - decay)
    return out, ema[0], ema[-1], unet.conv_out.bias, lib.rand(2)
# ---------------------------------------------------------------- vision geometry

def case_grid_sample_modes_paddings_on_pixel_edges(lib):
    """F.grid_sample over every mode (bilinear, nearest, bicubic) x padding (zeros, border, reflection) x
    align_corners, with grid points inside, outside and exactly half-way between pixels (nearest rounds half to
    even), gradients to the input and the grid; bfloat16 and float16 (without warnings); a 5-D volume
    (bilinear/nearest) and float64."""
    F = lib.nn.functional
    res = {}
    img = _data(lib, 1, 2, 4, 5).requires_grad_()
    xs = lib.tensor([-1.3, -1.0, -0.75, -0.5, -0.1, 0.0, 0.25, 0.5, 0.6, 1.0, 1.2])
    ys = lib.tensor([-1.1, -0.5, 0.0, 1.0 / 3.0, 0.75, 1.05])
    gy, gx = lib.meshgrid(ys, xs, indexing="ij")
    grid = lib.stack([gx, gy], dim=-1)[None].requires_grad_()
    for i, mode in enumerate(("bilinear", "nearest", "bicubic")):
        for j, padding_mode in enumerate(("zeros", "border", "reflection")):
            align_corners = (i + j) % 2 == 1
            out = F.grid_sample(img, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
            res[(mode, padding_mode, align_corners)] = (out, _grads(lib, out, img, grid)) if i == j else out
    with warnings.catch_warnings(record=True) as caught:  # (half precision: no overflow warning from a bound)
        warnings.simplefilter("always")
        res["half"] = [F.grid_sample(img.detach().to(dt), grid.detach().to(dt), mode=mode, padding_mode=pad,
                                     align_corners=False)
                       for dt, mode, pad in ((lib.bfloat16, "bilinear", "zeros"), (lib.float16, "bilinear", "border"),
                                             (lib.float16, "nearest", "reflection"), (lib.float16, "bicubic", "zeros"))]
    res["half_warnings"] = [str(w.message) for w in caught]
    vol = _data(lib, 1, 1, 3, 4, 5, dtype=lib.float64).requires_grad_()
    axes = [lib.linspace(a, b, n, dtype=lib.float64) for a, b, n in ((-1.2, 1.2, 3), (-1, 1, 4), (-0.9, 1.1, 2))]
    g3 = lib.stack(lib.meshgrid(*axes, indexing="ij")[::-1], -1)[None]
    for mode, padding_mode in (("bilinear", "reflection"), ("nearest", "border")):
        out = F.grid_sample(vol, g3, mode=mode, padding_mode=padding_mode, align_corners=False)
        res[("3d", mode, padding_mode)] = out
    res["bicubic5d"] = _err(lambda: F.grid_sample(vol, g3, mode="bicubic", align_corners=False))
    res["badmode"] = _err(lambda: F.grid_sample(img, grid, mode="area", align_corners=False))
    res["badgrid"] = _err(lambda: F.grid_sample(img, grid[..., :1], align_corners=False))
    return res


def case_spatial_transformer_affine_grid_from_angles(lib, jit):
    """A spatial transformer network: theta built from learnable angle/scale/translation with cos/sin and stack,
    F.affine_grid (align_corners both; a 3-D theta with a 4-D size is an error), grid_sample(reflection), a loss on
    the warped image and an optimizer step compiled; RAFT's flow warping (coords_grid by meshgrid(indexing='ij')
    stacked [::-1], normalised by ``2 * x / (W - 1) - 1``, a validity mask of in-range points)."""
    nn, F = lib.nn, lib.nn.functional
    res = {}

    class STN(nn.Module):
        def __init__(self):
            super().__init__()
            self.angle = nn.Parameter(lib.tensor([0.3, -0.5]))
            self.scale = nn.Parameter(lib.tensor([1.1, 0.8]))
            self.shift = nn.Parameter(lib.tensor([[0.1, -0.2], [0.0, 0.3]]))

        def forward(self, x, align_corners):
            c, s = lib.cos(self.angle) * self.scale, lib.sin(self.angle) * self.scale
            theta = lib.stack([lib.stack([c, -s, self.shift[:, 0]], -1), lib.stack([s, c, self.shift[:, 1]], -1)], 1)
            grid = F.affine_grid(theta, list(x.size()), align_corners=align_corners)
            return F.grid_sample(x, grid, padding_mode="reflection", align_corners=align_corners), grid

    stn = STN()
    opt = lib.optim.SGD(stn.parameters(), lr=0.1, momentum=0.9)
    x = _data(lib, 2, 1, 5, 6)
    target = _data(lib, 2, 1, 5, 6, seed=4)

    @jit
    def step(x, target):
        opt.zero_grad()
        out, grid = stn(x, False)
        loss = F.mse_loss(out, target)
        loss.backward()
        opt.step()
        return loss, grid

    for i in range(3):
        res[f"step{i}"] = step(x, target)
    res["params"] = list(stn.parameters())
    out, grid = stn(x, True)
    res["ac"] = (out, grid)
    theta3 = lib.tensor([[[1.0, 0.1, 0.0, 0.2], [0.0, 0.9, 0.1, 0.0], [0.2, 0.0, 1.1, -0.1]]], requires_grad=True)
    res["size_err"] = _err(lambda: F.affine_grid(theta3, [1, 1, 3, 4], align_corners=False))
    # RAFT-style warping
    H, W = 5, 6
    coords = lib.meshgrid(lib.arange(H), lib.arange(W), indexing="ij")
    coords = lib.stack(coords[::-1], dim=0).float()
    coords = coords[None].repeat(2, 1, 1, 1)
    flow = (_data(lib, 2, 2, H, W, seed=6) * 2.0).requires_grad_()
    c = (coords + flow).permute(0, 2, 3, 1)
    xgrid, ygrid = c.split([1, 1], dim=-1)
    xgrid = 2 * xgrid / (W - 1) - 1
    ygrid = 2 * ygrid / (H - 1) - 1
    grid = lib.cat([xgrid, ygrid], dim=-1)
    img = _data(lib, 2, 3, H, W, seed=7)
    warped = F.grid_sample(img, grid, align_corners=True)
    mask = (xgrid > -1) & (ygrid > -1) & (xgrid < 1) & (ygrid < 1)
    res["raft"] = (warped, mask.float(), lib.autograd.grad((warped * mask.permute(0, 3, 1, 2)).sum(), flow))
    return res


def case_pixel_shuffle_unshuffle_and_space_to_depth(lib):
    """pixel_shuffle/pixel_unshuffle with extra batch dimensions and unbatched input, agreeing with the
    view/permute space-to-depth YOLO/ESRGAN code writes by hand, gradients through both, their errors, the
    modules' reprs, and ICNR initialisation (a kernel repeated by repeat_interleave)."""
    nn, F = lib.nn, lib.nn.functional
    res = {}
    x = _data(lib, 2, 3, 8, 4, 6).requires_grad_()
    y = F.pixel_shuffle(x, 2)
    res["shuffle5d"] = (y, _grads(lib, y, x))
    z = F.pixel_unshuffle(y, 2)
    res["roundtrip"] = lib.equal(z, x)
    u = _data(lib, 2, 6, 4).requires_grad_()
    res["unbatched"] = (F.pixel_unshuffle(u, 2), _grads(lib, F.pixel_unshuffle(u, 2), u))
    img = _data(lib, 2, 3, 4, 6)
    b, c, h, w = img.shape
    s = 2
    hand = img.view(b, c, h // s, s, w // s, s).permute(0, 3, 5, 1, 2, 4).contiguous()
    hand = hand.view(b, c * s * s, h // s, w // s)
    res["hand_vs_unshuffle"] = (hand, F.pixel_unshuffle(img, 2))
    focus = lib.cat([img[..., ::2, ::2], img[..., 1::2, ::2], img[..., ::2, 1::2], img[..., 1::2, 1::2]], 1)
    res["focus"] = focus
    res["errors"] = [_err(lambda: F.pixel_shuffle(_data(lib, 1, 3, 2, 2), 2)),
                     _err(lambda: F.pixel_unshuffle(_data(lib, 1, 1, 3, 4), 2)),
                     _err(lambda: F.pixel_shuffle(_data(lib, 4, 2), 2)),
                     _err(lambda: F.pixel_shuffle(_data(lib, 1, 4, 2, 2), 0))]
    res["reprs"] = (repr(nn.PixelShuffle(3)), repr(nn.PixelUnshuffle(2)))
    conv = nn.Conv2d(2, 2 * 4, 3, padding=1)
    sub = lib.nn.init.kaiming_normal_(lib.zeros(2, 2, 3, 3)) * 0 + _data(lib, 2, 2, 3, 3)
    with lib.no_grad():
        conv.weight.copy_(sub.repeat_interleave(4, dim=0))
    res["icnr"] = (conv.weight[::4], lib.equal(conv.weight[0], conv.weight[3]))
    return res


def case_unfold_fold_patches_dilation_and_normalisation(lib):
    """Patch extraction with F.unfold (stride, padding, dilation, a non-square kernel, unbatched input) and the
    overlap-add inverse with F.fold divided by fold(unfold(ones)) (the classic blending trick), nn.Unfold/Fold,
    a hand-written conv by unfold + matmul against F.conv2d, and Tensor.unfold patches (MAE-style patchify via
    reshape/einsum); gradients through fold and unfold."""
    nn, F = lib.nn, lib.nn.functional
    res = {}
    x = _data(lib, 2, 3, 7, 8).requires_grad_()
    for k, s, p, d in ((3, 2, 1, 1), ((2, 3), (1, 2), (0, 1), (2, 1))):
        cols = F.unfold(x, kernel_size=k, stride=s, padding=p, dilation=d)
        ones = lib.ones_like(x)
        div = F.fold(F.unfold(ones, k, d, p, s), (7, 8), k, d, p, s)
        back = F.fold(cols, (7, 8), kernel_size=k, dilation=d, padding=p, stride=s)
        blended = back / div.clamp(min=1)
        res[str(k)] = (cols, div, blended, _grads(lib, blended, x))
    w = _data(lib, 4, 3, 3, 3, seed=2)
    cols = F.unfold(x, 3, padding=1)
    hand = (w.view(4, -1) @ cols).view(2, 4, 7, 8)
    res["conv"] = (hand, F.conv2d(x, w, padding=1))
    res["unbatched"] = F.unfold(x[0], 2)
    m, f = nn.Unfold(kernel_size=(2, 2), stride=2), nn.Fold(output_size=(4, 6), kernel_size=(2, 2), stride=2)
    img = _data(lib, 1, 2, 4, 6)
    res["modules"] = (lib.equal(f(m(img)), img), repr(m), repr(f))
    p = 2
    imgs = _data(lib, 2, 3, 4, 6)
    h, w_ = imgs.shape[2] // p, imgs.shape[3] // p
    xx = imgs.reshape(shape=(imgs.shape[0], 3, h, p, w_, p))
    xx = lib.einsum("nchpwq->nhwpqc", xx)
    patches = xx.reshape(shape=(imgs.shape[0], h * w_, p ** 2 * 3))
    res["patchify"] = patches
    tp = imgs.unfold(2, p, p).unfold(3, p, p)
    res["tensor_unfold"] = (tp.shape, tp.stride(), tp.contiguous())
    res["err"] = _err(lambda: F.fold(cols[:, :-1], (7, 8), 3, padding=1))
    return res


def case_interpolate_antialias_area_bicubic(lib):
    """F.interpolate as image pipelines call it: bilinear and bicubic downsampling with antialias=True (and
    upsampling, where antialias changes nothing), area (adaptive average), nearest-exact, align_corners,
    non-integer scale factors with and without recompute_scale_factor, 1-d linear and 3-d trilinear, a uint8 image
    through bilinear antialias; gradients of the float modes."""
    F = lib.nn.functional
    res = {}
    x = (_data(lib, 1, 2, 9, 11) * 2).requires_grad_()
    for mode in ("bilinear", "bicubic"):
        for aa in (False, True):
            for size, ac in (((4, 5), False), ((13, 16), True)):
                out = F.interpolate(x, size=size, mode=mode, antialias=aa, align_corners=ac)
                res[(mode, aa, size, ac)] = (out, _grads(lib, out, x))
    for mode in ("area", "nearest", "nearest-exact"):
        out = F.interpolate(x, size=(4, 7), mode=mode)
        res[mode] = (out, _grads(lib, out, x))
    for rsf in (None, True):
        res[("sf", rsf)] = F.interpolate(x, scale_factor=(0.37, 1.6), mode="bilinear", recompute_scale_factor=rsf)
    res["linear1d"] = F.interpolate(_data(lib, 2, 3, 7), scale_factor=1.5, mode="linear", align_corners=False)
    res["trilinear"] = F.interpolate(_data(lib, 1, 1, 3, 4, 5), size=(5, 3, 7), mode="trilinear")
    u8 = (_data(lib, 1, 3, 9, 11) * 120 + 128).round().to(lib.uint8)
    res["u8"] = (F.interpolate(u8, size=(4, 5), mode="bilinear", antialias=True),
                 F.interpolate(u8, size=(4, 5), mode="nearest"))
    res["errs"] = [_err(lambda: F.interpolate(x, size=(4, 5), mode="nearest", antialias=True)),
                   _err(lambda: F.interpolate(x, size=(4, 5), mode="area", align_corners=True)),
                   _err(lambda: F.interpolate(x, size=(4, 5), scale_factor=2.0)),
                   _err(lambda: F.interpolate(x, mode="bilinear"))]
    return res


def case_roi_align_by_hand_with_meshgrid(lib):
    """torchvision's roi_align written in torch (the reference implementation people paste): per-box sampling
    grids from arange + meshgrid, bilinear interpolation weights with floor/clamp/long, out-of-range samples
    zeroed, four gathers by advanced indexing, average over the sampling_ratio grid; gradients to the features (an
    index_put accumulation) and to the boxes."""
    feat = _data(lib, 2, 3, 6, 7).requires_grad_()
    boxes = lib.tensor([[0, 0.5, 0.7, 4.2, 3.9], [1, -1.0, 1.5, 5.5, 6.5]], requires_grad=True)
    out_h, out_w, spatial_scale, sampling_ratio, aligned = 2, 3, 1.0, 2, True

    def bilinear(img, y, x):
        H, W = img.shape[-2:]
        valid_y, valid_x = (y >= -1) & (y <= H), (x >= -1) & (x <= W)
        y = y.clamp(min=0)
        x = x.clamp(min=0)
        y_low = y.floor().long().clamp(max=H - 1)
        x_low = x.floor().long().clamp(max=W - 1)
        y_high = (y_low + 1).clamp(max=H - 1)
        x_high = (x_low + 1).clamp(max=W - 1)
        y = lib.where(y_low >= H - 1, y_low.to(y.dtype), y)
        x = lib.where(x_low >= W - 1, x_low.to(x.dtype), x)
        ly, lx = y - y_low, x - x_low
        hy, hx = 1.0 - ly, 1.0 - lx
        v1 = img[:, y_low[:, None], x_low[None, :]]
        v2 = img[:, y_low[:, None], x_high[None, :]]
        v3 = img[:, y_high[:, None], x_low[None, :]]
        v4 = img[:, y_high[:, None], x_high[None, :]]
        val = (hy[:, None] * hx[None, :] * v1 + hy[:, None] * lx[None, :] * v2
               + ly[:, None] * hx[None, :] * v3 + ly[:, None] * lx[None, :] * v4)
        return val * (valid_y[:, None] & valid_x[None, :])

    outs = []
    for r in range(boxes.shape[0]):
        b = int(boxes[r, 0].item())
        offset = 0.5 if aligned else 0.0
        x1, y1, x2, y2 = (boxes[r, 1:] * spatial_scale - offset).unbind()
        roi_w, roi_h = x2 - x1, y2 - y1
        bin_h, bin_w = roi_h / out_h, roi_w / out_w
        iy = lib.arange(out_h * sampling_ratio, dtype=lib.float32)
        ix = lib.arange(out_w * sampling_ratio, dtype=lib.float32)
        ys = y1 + (iy + 0.5) * bin_h / sampling_ratio
        xs = x1 + (ix + 0.5) * bin_w / sampling_ratio
        gy, gx = lib.meshgrid(ys, xs, indexing="ij")
        vals = bilinear(feat[b], ys, xs)
        vals = vals.view(feat.shape[1], out_h, sampling_ratio, out_w, sampling_ratio).mean(dim=(2, 4))
        outs.append(vals)
        if r == 0:
            gx2, gy2 = lib.meshgrid(xs, ys, indexing="xy")
            same = (lib.equal(gx, gx2), lib.equal(gy, gy2))
    out = lib.stack(outs)
    return out, same, _grads(lib, out, feat, boxes)


def case_meshgrid_indexing_and_position_tables(lib):
    """meshgrid with 'ij'/'xy' over one to three inputs (0-d and 1-element included), the warning without
    ``indexing``, cartesian_prod, Swin's relative position index (stack(meshgrid), flatten, broadcasting
    difference, permute, ``+=`` / ``*=`` on slices, sum(-1)), DETR's sine position embedding (``not_mask.cumsum`` with
    a dtype, ``dim_t // 2`` on a float arange, stack of sin/cos of even/odd channels then flatten)."""
    res = {}
    a, b, c = lib.arange(3), lib.tensor([10, 20]), lib.tensor([7])
    res["mixed"] = _err(lambda: lib.meshgrid(a, b.float(), indexing="ij"))
    for idx in ("ij", "xy"):
        res[idx] = (lib.meshgrid(a, b, c, indexing=idx), lib.meshgrid(a, indexing=idx),
                    lib.meshgrid([a, c], indexing=idx))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = lib.meshgrid(a, b)
    res["warn"] = (g, [(w.category.__name__, str(w.message)[:60]) for w in caught])
    res["err"] = (_err(lambda: lib.meshgrid(a, b, indexing="ji")),
                  _err(lambda: lib.meshgrid(lib.ones(2, 2), indexing="ij"))[0])  # (PyTorch prints it the C++ way)
    res["zero_d"] = _err(lambda: lib.meshgrid(lib.tensor(1.0), b, indexing="ij"))
    res["cart"] = (lib.cartesian_prod(a, lib.tensor([4, 5])), lib.cartesian_prod(a))
    ws = (2, 3)
    coords_h, coords_w = lib.arange(ws[0]), lib.arange(ws[1])
    coords = lib.stack(lib.meshgrid([coords_h, coords_w], indexing="ij"))
    coords_flatten = lib.flatten(coords, 1)
    relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
    relative_coords = relative_coords.permute(1, 2, 0).contiguous()
    relative_coords[:, :, 0] += ws[0] - 1
    relative_coords[:, :, 1] += ws[1] - 1
    relative_coords[:, :, 0] *= 2 * ws[1] - 1
    res["swin_index"] = relative_coords.sum(-1)
    mask = lib.tensor([[[False, False, False, True], [False, False, False, True], [True, True, True, True]]])
    not_mask = ~mask
    y_embed = not_mask.cumsum(1, dtype=lib.float32)
    x_embed = not_mask.cumsum(2, dtype=lib.float32)
    eps, scale, num_pos_feats, temperature = 1e-6, 2 * math.pi, 4, 10000
    y_embed = (y_embed - 0.5) / (y_embed[:, -1:, :] + eps) * scale
    x_embed = (x_embed - 0.5) / (x_embed[:, :, -1:] + eps) * scale
    dim_t = lib.arange(num_pos_feats, dtype=lib.float32)
    dim_t = temperature ** (2 * (dim_t // 2) / num_pos_feats)
    pos_x = x_embed[:, :, :, None] / dim_t
    pos_y = y_embed[:, :, :, None] / dim_t
    pos_x = lib.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
    pos_y = lib.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
    res["detr"] = lib.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
    dim_i = lib.arange(num_pos_feats)
    res["int_div"] = (temperature ** (2 * (dim_i // 2) / num_pos_feats), (dim_i // 2).dtype)
    return res


# ---------------------------------------------------------------- training utilities

def case_backend_flags_at_import_and_cuda_amp_on_cpu(lib):
    """The block many training scripts run at import time (cudnn.benchmark, TF32 switches, matmul precision,
    ``backends.cpu.get_cpu_capability()``, mkl/nnpack/mha switches, flash/mem-efficient SDP off), the device pick
    ``cuda if available else mps else cpu``, and the ``torch.cuda.amp`` code path run on a CPU: a disabled
    GradScaler (scale returns the loss itself, step calls the optimizer, get_scale 1.0), ``cuda.amp.autocast``
    and ``autocast('cuda')`` (disabled with a warning), clip_grad_value_ after unscale_; warnings recorded."""
    res = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.backends.cudnn.benchmark = True
        lib.backends.cudnn.deterministic = False
        lib.backends.cuda.matmul.allow_tf32 = True
        lib.backends.cudnn.allow_tf32 = True
        lib.set_float32_matmul_precision("high")
        res["flags"] = (lib.backends.cudnn.benchmark, lib.backends.cuda.matmul.allow_tf32,
                        lib.get_float32_matmul_precision(), lib.backends.cpu.get_cpu_capability(),
                        lib.backends.mkl.is_available(), lib.backends.nnpack.is_available(),
                        lib.backends.mha.get_fastpath_enabled())
        lib.backends.mha.set_fastpath_enabled(False)
        res["fastpath"] = lib.backends.mha.get_fastpath_enabled()
        lib.backends.mha.set_fastpath_enabled(True)
        res["nnpack"] = (lib.backends.nnpack.set_flags(False), lib.backends.nnpack.set_flags(True))
        with lib.backends.nnpack.flags(enabled=False):
            res["nnpack_ctx"] = lib.backends.nnpack.set_flags(False)
        res["nnpack_after"] = lib.backends.nnpack.set_flags(True)
        with lib.backends.mkl.verbose(lib.backends.mkl.VERBOSE_ON):
            res["mkl"] = lib.ones(2).sum()
        lib.backends.cuda.enable_flash_sdp(False)
        lib.backends.cuda.enable_mem_efficient_sdp(False)
        device = lib.device("cuda" if lib.cuda.is_available() else "mps" if lib.backends.mps.is_available() else "cpu")
        device = lib.device("cpu")  # (the pick above runs; the comparison stays on the CPU, where torch runs)
        use_amp = device.type == "cuda"
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.GELU(), lib.nn.Linear(8, 2)).to(device)
        opt = lib.optim.Adam(model.parameters(), lr=1e-2)
        scaler = lib.cuda.amp.GradScaler(enabled=use_amp)
        x, y = _data(lib, 6, 4), _data(lib, 6, 2, seed=1)
        losses = []
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            with lib.cuda.amp.autocast(enabled=use_amp):
                out = model(x)
                loss = lib.nn.functional.mse_loss(out, y)
            scaled = scaler.scale(loss)
            res["same_loss"] = scaled is loss
            scaled.backward()
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_value_(model.parameters(), 0.05)
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
        res["scaler"] = (scaler.get_scale(), scaler.is_enabled(), scaler.state_dict())
        with lib.autocast("cuda"):
            res["autocast_cuda"] = (model(x).dtype, lib.is_autocast_enabled("cuda"))
        with lib.autocast(device_type=device.type, dtype=lib.bfloat16, enabled=True):
            res["autocast_cpu"] = model(x).dtype
        res["sdp"] = lib.nn.functional.scaled_dot_product_attention(x[None, None], x[None, None], y[None, None])
        res["losses"] = losses
        res["params"] = list(model.parameters())
    lib.backends.cuda.enable_flash_sdp(True)
    lib.backends.cuda.enable_mem_efficient_sdp(True)
    lib.backends.cudnn.benchmark = False
    lib.backends.cuda.matmul.allow_tf32 = False
    lib.set_float32_matmul_precision("highest")
    res["warnings"] = sorted({(w.category.__name__, str(w.message)[:70]) for w in caught})
    return res


def case_sampling_generate_loop_compiled_step(lib, jit):
    """generate()'s sampling loop: unfinished_sequences, eos via isin, pad tokens written with
    ``next_tokens * unfinished + pad * (1 - unfinished)``, ``unfinished & ~is_done``; the per-token step (model,
    temperature, top-k, softmax, ``multinomial``) compiled, so the draws happen inside the compiled program and
    must stay in step with PyTorch's generator."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(21)
    vocab, pad_id = 9, 0
    emb = _init(lib, nn.Embedding(vocab, 6))
    head = _init(lib, nn.Linear(6, vocab), seed=1)
    eos = lib.tensor([3, 7])

    @jit
    def sample_step(last, temperature):
        logits = head(lib.tanh(emb(last))) * 3.0 / temperature
        kth = lib.topk(logits, 5)[0][..., -1, None]
        logits = logits.masked_fill(logits < kth, -float("inf"))
        probs = F.softmax(logits, dim=-1)
        return lib.multinomial(probs, num_samples=1).squeeze(1), probs

    input_ids = lib.tensor([[1, 2], [4, 5], [6, 8], [2, 2]])
    unfinished = lib.ones(input_ids.shape[0], dtype=lib.long)
    probs_seen = []
    for _ in range(6):
        next_tokens, probs = sample_step(input_ids[:, -1], lib.tensor(0.8))
        probs_seen.append(probs)
        next_tokens = next_tokens * unfinished + pad_id * (1 - unfinished)
        input_ids = lib.cat([input_ids, next_tokens[:, None]], dim=-1)
        is_done = lib.isin(input_ids[:, -1], eos)
        unfinished = unfinished & ~is_done
        if unfinished.max() == 0:
            break
    return input_ids, unfinished, probs_seen, lib.rand(2)


def case_speculative_decoding_acceptance(lib):
    """Speculative sampling's accept/reject step: draft tokens from a small model by multinomial, acceptance by
    ``rand < p_target / p_draft`` (ratio clamped at 1), the first rejection found by cumprod of the accepted mask,
    the residual distribution ``clamp(p - q, min=0)`` renormalised and sampled; all under manual_seed."""
    F = lib.nn.functional
    lib.manual_seed(8)
    vocab, k = 7, 4
    target_table = F.softmax(_data(lib, vocab, vocab) * 3, -1)
    draft_table = F.softmax(_data(lib, vocab, vocab, seed=3) * 2, -1)
    seqs = [lib.tensor([2]), lib.tensor([5])]
    out = []
    for seq in seqs:
        for _ in range(3):
            drafts, qs = [], []
            last = seq[-1]
            for _ in range(k):
                q = draft_table[last]
                tok = lib.multinomial(q, 1)
                drafts.append(tok)
                qs.append(q)
                last = tok[0]
            drafts = lib.cat(drafts)
            ctx = lib.cat([seq[-1:], drafts[:-1]])
            p = target_table[ctx]
            q = lib.stack(qs)
            ratio = (p.gather(1, drafts[:, None]) / q.gather(1, drafts[:, None])).squeeze(1).clamp(max=1.0)
            accepted = (lib.rand(k) < ratio).long()
            n_acc = int(lib.cumprod(accepted, 0).sum())
            if n_acc < k:
                resid = (p[n_acc] - q[n_acc]).clamp(min=0)
                resid = resid / resid.sum()
                extra = lib.multinomial(resid, 1)
            else:
                extra = lib.multinomial(target_table[drafts[-1]], 1)
            seq = lib.cat([seq, drafts[:n_acc], extra])
            out.append((ratio, accepted, n_acc))
        out.append(seq)
    return out, lib.rand(1)


def case_mae_random_masking_and_unpatchify(lib):
    """MAE's random_masking: noise from rand under manual_seed, ``argsort`` twice (ids_shuffle, ids_restore),
    gather of the kept patches with ``ids_keep.unsqueeze(-1).repeat(1, 1, D)``, the binary mask unshuffled by
    gather, mask tokens appended and restored, the masked-patch MSE with per-patch normalised targets, and
    unpatchify by einsum; gradients to the patch embeddings, mask token and the image."""
    nn = lib.nn
    lib.manual_seed(4)
    p, D = 2, 6
    imgs = _data(lib, 2, 3, 4, 6).requires_grad_()
    proj = _init(lib, nn.Linear(p * p * 3, D))
    dec = _init(lib, nn.Linear(D, p * p * 3), seed=2)
    mask_token = nn.Parameter(lib.zeros(1, 1, D))
    nn.init.normal_(mask_token, std=0.02)
    h, w = imgs.shape[2] // p, imgs.shape[3] // p
    x = imgs.reshape(shape=(imgs.shape[0], 3, h, p, w, p))
    x = lib.einsum("nchpwq->nhwpqc", x)
    target = x.reshape(shape=(imgs.shape[0], h * w, p ** 2 * 3))
    tokens = proj(target)
    N, L, _ = tokens.shape
    len_keep = int(L * (1 - 0.5))
    noise = lib.rand(N, L, device=tokens.device)
    ids_shuffle = lib.argsort(noise, dim=1)
    ids_restore = lib.argsort(ids_shuffle, dim=1)
    ids_keep = ids_shuffle[:, :len_keep]
    x_masked = lib.gather(tokens, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D))
    mask = lib.ones([N, L], device=tokens.device)
    mask[:, :len_keep] = 0
    mask = lib.gather(mask, dim=1, index=ids_restore)
    mask_tokens = mask_token.repeat(x_masked.shape[0], ids_restore.shape[1] - x_masked.shape[1], 1)
    x_ = lib.cat([x_masked, mask_tokens], dim=1)
    x_ = lib.gather(x_, dim=1, index=ids_restore.unsqueeze(-1).repeat(1, 1, x_.shape[2]))
    pred = dec(x_)
    mean = target.mean(dim=-1, keepdim=True)
    var = target.var(dim=-1, keepdim=True)
    norm_target = (target - mean) / (var + 1.e-6) ** .5
    loss = ((pred - norm_target) ** 2).mean(dim=-1)
    loss = (loss * mask).sum() / mask.sum()
    grads = lib.autograd.grad(loss, [imgs, proj.weight, mask_token], retain_graph=True)
    y = pred.reshape(shape=(N, h, w, p, p, 3))
    y = lib.einsum("nhwpqc->nchpwq", y)
    recon = y.reshape(shape=(N, 3, h * p, w * p))
    return loss, grads, ids_restore, mask, recon, lib.rand(1)


def case_diffusers_attention_processor_baddbmm_and_lora(lib):
    """diffusers' classic AttnProcessor: ``get_attention_scores`` with ``baddbmm`` over an uninitialised
    ``torch.empty`` input and ``beta=0`` (its contents must not leak), upcast softmax then cast back,
    head_to_batch_dim/batch_to_head_dim reshapes, attention slicing over batch chunks, a LoRA layer (kaiming-uniform
    A, zero B, scale) merged and unmerged; the VAE's DiagonalGaussianDistribution (chunk, clamp of logvar, sample
    from a Generator, kl, nll, mode); gradients to the inputs and the LoRA factors."""
    nn = lib.nn
    heads, dim = 2, 8
    lib.manual_seed(12)

    class LoRALinear(nn.Module):
        def __init__(self, base, rank=2, alpha=4):
            super().__init__()
            self.base = base
            self.lora_A = nn.Parameter(lib.empty(rank, base.in_features))
            self.lora_B = nn.Parameter(lib.zeros(base.out_features, rank))
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            self.scaling = alpha / rank

        def forward(self, x):
            return self.base(x) + (x @ self.lora_A.T @ self.lora_B.T) * self.scaling

    to_q = LoRALinear(_init(lib, nn.Linear(dim, dim, bias=False)))
    to_k = _init(lib, nn.Linear(dim, dim, bias=False), seed=1)
    to_v = _init(lib, nn.Linear(dim, dim, bias=False), seed=2)
    with lib.no_grad():
        to_q.lora_B.copy_(_data(lib, dim, 2) * 0.1)

    def head_to_batch_dim(t):
        b, s, d = t.shape
        return t.reshape(b, s, heads, d // heads).permute(0, 2, 1, 3).reshape(b * heads, s, d // heads)

    def batch_to_head_dim(t):
        b, s, d = t.shape
        return t.reshape(b // heads, heads, s, d).permute(0, 2, 1, 3).reshape(b // heads, s, d * heads)

    def get_attention_scores(query, key, scale):
        dtype = query.dtype
        baddbmm_input = lib.empty(query.shape[0], query.shape[1], key.shape[1], dtype=query.dtype)
        baddbmm_input.fill_(float("nan"))  # (what an uninitialised buffer may hold)
        scores = lib.baddbmm(baddbmm_input, query, key.transpose(-1, -2), beta=0, alpha=scale)
        probs = scores.float().softmax(dim=-1)
        return probs.to(dtype)

    hidden = _data(lib, 2, 5, dim).requires_grad_()
    ctx = _data(lib, 2, 3, dim, seed=4).requires_grad_()
    q = head_to_batch_dim(to_q(hidden))
    k, v = head_to_batch_dim(to_k(ctx)), head_to_batch_dim(to_v(ctx))
    probs = get_attention_scores(q, k, (dim // heads) ** -0.5)
    out = batch_to_head_dim(lib.bmm(probs, v))
    sliced = lib.zeros(q.shape[0], q.shape[1], dim // heads, dtype=q.dtype)
    for i in range(0, q.shape[0], 2):  # (attention slicing: one batch chunk at a time, written into a buffer)
        sliced[i:i + 2] = lib.bmm(probs[i:i + 2], v[i:i + 2])
    sliced = batch_to_head_dim(sliced)
    res = {"out": out, "sliced": sliced,
           "grads": _grads(lib, out + sliced, hidden, ctx, to_q.lora_A, to_q.lora_B, to_k.weight)}
    with lib.no_grad():
        merged = to_q.base.weight + to_q.lora_B @ to_q.lora_A * to_q.scaling
    res["merged"] = (merged, lib.allclose(hidden @ merged.T, to_q(hidden), atol=1e-6))
    params = _data(lib, 2, 8, 2, 2, seed=6) * 20
    mean, logvar = lib.chunk(params, 2, dim=1)
    logvar = lib.clamp(logvar, -30.0, 20.0)
    std, var = lib.exp(0.5 * logvar), lib.exp(logvar)
    g = lib.Generator(device="cpu").manual_seed(9)
    sample = mean + std * lib.randn(mean.shape, generator=g, device=params.device, dtype=params.dtype)
    kl = 0.5 * lib.sum(lib.pow(mean, 2) + var - 1.0 - logvar, dim=[1, 2, 3])
    nll = 0.5 * lib.sum(math.log(2.0 * math.pi) + logvar + lib.pow(sample - mean, 2) / var, dim=[1, 2, 3])
    res["vae"] = (sample, kl, nll, mean)
    return res


def case_homography_warp_perspective(lib):
    """A kornia-style warp_perspective: the homography from four point pairs by the DLT system and
    ``linalg.solve``, normalisation matrices, its inverse, a pixel meshgrid (``meshgrid(indexing='xy')``) through
    the homography with a safe division by the homogeneous coordinate (``where(abs(z) > eps, 1 / z, 1)``),
    grid_sample(bilinear, zeros, align_corners=True); gradients to the image and the destination points."""
    F = lib.nn.functional
    src = lib.tensor([[0., 0.], [4., 0.], [4., 3.], [0., 3.]])
    dst = lib.tensor([[0.3, 0.1], [3.6, -0.2], [4.2, 3.3], [-0.2, 2.7]], requires_grad=True)
    img = _data(lib, 1, 2, 4, 5).requires_grad_()
    rows, rhs = [], []
    for i in range(4):
        x, y = src[i]
        u, v = dst[i]
        one, zero = lib.ones(()), lib.zeros(())
        rows.append(lib.stack([x, y, one, zero, zero, zero, -u * x, -u * y]))
        rows.append(lib.stack([zero, zero, zero, x, y, one, -v * x, -v * y]))
        rhs += [u, v]
    h = lib.linalg.solve(lib.stack(rows), lib.stack(rhs))
    H = lib.cat([h, lib.ones(1)]).reshape(3, 3)
    H_inv = lib.linalg.inv(H)
    Hh, Ww = img.shape[-2:]
    xs, ys = lib.meshgrid(lib.arange(Ww, dtype=lib.float32), lib.arange(Hh, dtype=lib.float32), indexing="xy")
    pts = lib.stack([xs, ys, lib.ones_like(xs)], -1).reshape(-1, 3) @ H_inv.T
    z = pts[:, 2:]
    eps = 1e-8
    scale = lib.where(lib.abs(z) > eps, 1.0 / (z + eps), lib.ones_like(z))
    xy = pts[:, :2] * scale
    norm = lib.tensor([[2.0 / (Ww - 1), 0.0, -1.0], [0.0, 2.0 / (Hh - 1), -1.0]])
    grid = (lib.cat([xy, lib.ones(xy.shape[0], 1)], 1) @ norm.T).reshape(1, Hh, Ww, 2)
    out = F.grid_sample(img, grid, mode="bilinear", padding_mode="zeros", align_corners=True)
    return H, H_inv, out, _grads(lib, out, img, dst)


def case_grad_accumulation_compiled_micro_steps(lib, jit):
    """Gradient accumulation without no_sync: a compiled micro-step (forward, ``loss / accum``, backward) called
    several times so ``.grad`` accumulates across compiled calls, then clip_grad_value_ and the optimizer step and
    zero_grad outside; an EMA copy updated by ``lerp_`` and ``_foreach_lerp_`` (timm's ModelEmaV3) with buffers
    copied; BatchNorm running statistics written by the compiled micro-steps."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(2)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    ema = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    ema.load_state_dict(model.state_dict())
    ema.requires_grad_(False)
    opt = lib.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, nesterov=True)
    data = lib.randn(12, 4)
    target = lib.randint(0, 3, (12,))
    accum = 3

    @jit
    def micro_step(x, y):
        loss = F.cross_entropy(model(x), y) / accum
        loss.backward()
        return loss

    losses, norms = [], []
    for step in range(2):
        for i in range(accum):
            losses.append(micro_step(data[i * 4:(i + 1) * 4], target[i * 4:(i + 1) * 4]))
        norms.append(lib.stack([p.grad.norm() for p in model.parameters()]))
        nn.utils.clip_grad_value_(model.parameters(), clip_value=0.3)
        opt.step()
        opt.zero_grad(set_to_none=True)
        decay = 0.9
        with lib.no_grad():
            ema_p = [p for p in ema.parameters()]
            model_p = [p for p in model.parameters()]
            if step == 0:
                for e, m in zip(ema_p, model_p):
                    e.lerp_(m, 1.0 - decay)
            else:
                lib._foreach_lerp_(ema_p, model_p, weight=1.0 - decay)
            for e, m in zip(ema.buffers(), model.buffers()):
                e.copy_(m)
    return losses, norms, list(ema.parameters()), list(ema.buffers()), model[1].running_var
test_script_matches_torch = script_test(globals())
