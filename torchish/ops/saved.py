"""What PyTorch saves for each op's backward, so that in-place writes and second backwards fail exactly where
PyTorch's do (``derivatives.yaml``: the variables a formula reads become ``SavedVariable``\\s of the node).

An entry maps an op name to one string per input position of the op's ``apply(op, args)`` call (not PyTorch's
signature): what the gradient of that input reads. Its tokens:

- ``0``, ``1``...: that input (integer index tensors included: PyTorch saves ``index`` for ``gather``);
  ``2+``: input 2 and every later one (variadic index lists);
- ``o``: every output of the op; ``o1``: output 1 only (``max(dim)`` saves its indices, not its values);
- ``t``: a temporary of PyTorch's decomposition (a copy, an intermediate): saved, so a second backward fails, but
  no tensor the user holds is version-checked.

A spec ending in ``...`` repeats its last entry for any further inputs. The node saves the union over the inputs
that require grad, as PyTorch's generated code saves an input under ``should_compute_output`` — but only an input
that one formula reads: a tensor two formulas read (``div``'s ``other``), an optional one (``weight``) and the
outputs are saved whichever input requires grad, so their tokens appear in every entry. An empty union means
nothing is saved: writing any input or output in place leaves the backward valid, and backward may run twice
without ``retain_graph``. A Python number in a saved place counts as saved (PyTorch saves it wrapped in a tensor,
``x * 2.0`` cannot be backwarded twice) and is never checked.

Ops without an entry save every Tensor input (and their outputs when they have a custom VJP); linear ops save
nothing. Where PyTorch's saves depend on a static argument or on the operands' layout (``kl_div``'s log_target,
matmul's copies), the op is split in two, each with an entry. The VJPs themselves always read the forward's
values, which JAX never mutates.
"""
from __future__ import annotations

import re


_TOKEN = re.compile(r"o\d*|\d\+?|t")


def _entry(spec, i):
    """What the gradient of input ``i`` reads (``("t", ...)``: the last entry repeats for any number of inputs)."""
    if spec and spec[-1] is Ellipsis:
        return spec[min(i, len(spec) - 2)]
    return spec[i] if i < len(spec) else ""


_PLANS: dict = {}


def plan(spec, mask, n_out):
    """``(input positions, output positions, saves anything)`` for a node: :func:`needed` and
    :func:`saves_temporary`, cached (the eager path asks once per recorded op)."""
    key = (spec, mask, n_out)
    p = _PLANS.get(key)
    if p is None:
        ins, outs = needed(spec, mask, n_out)
        p = _PLANS[key] = (ins, outs, bool(ins or outs) or saves_temporary(spec, mask))
    return p


def needed(spec, mask, n_out):
    """``(input positions, output positions)`` saved by a node whose inputs requiring grad are ``mask``."""
    ins, outs = set(), set()
    n_in = len(mask)
    for i, m in enumerate(mask):
        if m:
            for tok in _TOKEN.findall(_entry(spec, i)):
                if tok == "o":
                    outs.update(range(n_out))
                elif tok[0] == "o":
                    outs.add(int(tok[1:]))
                elif tok.endswith("+"):
                    ins.update(range(int(tok[:-1]), n_in))
                elif tok != "t":
                    ins.add(int(tok))
    return sorted(i for i in ins if i < n_in), sorted(outs)


def pack_order(spec, mask, n_out, save_out, in_names=None):
    """What a node saves as ``("i", input position)`` / ``("o", output position)`` pairs, in the order PyTorch's
    node saves (and gives to a pack hook) them, whichever inputs require grad: the inputs by their name in
    ``derivatives.yaml`` (``in_names``, see :func:`names`: ``mul``: other, self; ``pow``: exponent, self; ``mm``:
    mat2, self), else as the formulas first read them; then the outputs. ``spec`` None: every input, the outputs
    when the op keeps them (``save_out``)."""
    if spec is None:
        return [("i", i) for i in range(len(mask))] + [("o", j) for j in (range(n_out) if save_out else ())]
    order = _pack_order(spec, mask, n_out)
    if in_names:
        key = {i: (n if n.isidentifier() else "~") for i, n in enumerate(in_names)}
        ins = sorted((e for e in order if e[0] == "i"), key=lambda e: key.get(e[1], "~"))
        order = ins + [e for e in order if e[0] == "o"]
    return order


def _pack_order(spec, mask, n_out):
    saved_ins, saved_outs = needed(spec, mask, n_out)
    ins, outs = [], []
    n_in = len(mask)
    for i in range(n_in):
        for tok in _TOKEN.findall(_entry(spec, i)):
            if tok == "t":
                continue
            if tok[0] == "o":
                new, into = (range(n_out) if tok == "o" else (int(tok[1:]),)), outs
            else:
                new, into = (range(int(tok[:-1]), n_in) if tok.endswith("+") else (int(tok),)), ins
            into.extend(k for k in new if k not in into)
    return [("i", i) for i in ins if i in saved_ins] + [("o", j) for j in outs if j in saved_outs]


def saves_temporary(spec, mask):
    """Whether the node keeps a temporary (``t``) for the inputs that require grad: a second backward then fails
    although no tensor the user holds is checked (``registry._record`` counts it among the node's saves)."""
    return any(m and "t" in _entry(spec, i) for i, m in enumerate(mask))


NOTHING, SELF, RESULT, BOTH = ("",), ("0",), ("o",), ("0o",)

SAVED = {
    # -- unary maths ------------------------------------------------------------------------------------------
    # derivative read from the result (exp: grad * result, tan: grad * (1 + result^2), ...)
    **{n: RESULT for n in ("exp", "exp2", "expm1", "sigmoid", "tanh", "tan", "sqrt", "rsqrt", "relu", "reciprocal",
                           "special_ndtri")},
    # derivative read from the input
    **{n: SELF for n in ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "sin", "sinh",
                         "log", "log10", "log1p", "log2", "erf", "erfc", "erfinv", "digamma", "lgamma", "i0", "sinc",
                         "logit", "angle", "nan_to_num", "polygamma", "mvlgamma", "special_entr")},
    # from both: sgn_backward(self, grad, result); erfcx, i0e, i1, i1e, log_ndtr mix self and result
    **{n: BOTH for n in ("sgn", "special_erfcx", "special_i0e", "special_i1", "special_i1e", "special_log_ndtr")},
    # zero gradient (rounding, sign) or the identity (frac: grad): nothing read
    **{n: NOTHING for n in ("ceil", "floor", "round", "trunc", "sign", "frac")},
    # special.ndtr is (1 + erf(x / sqrt 2)) / 2: ErfBackward0 reads the scaled input, a temporary
    "special_ndtr": ("t",),

    # -- binary maths (positions: self, other) ---------------------------------------------------------------
    "mul": ("1", "0"),
    # self: grad / other; other: -grad * self / other^2 (other read by both, so saved for either)
    "div": ("1", "01"),
    # fmod/remainder: self: grad; other: -grad * self.div(other, rounding)
    **{n: ("", "01") for n in ("fmod", "remainder")},
    # igamma, igammac, zeta: no derivative for self; other's reads both
    **{n: ("", "01") for n in ("igamma", "igammac", "special_zeta")},
    # formulas reading both operands for either gradient
    **{n: ("01", "01") for n in ("atan2", "maximum", "minimum", "fmax", "fmin", "xlogy", "special_xlog1py",
                                 "logaddexp", "logaddexp2")},
    # hypot: grad * self / result and grad * other / result
    "hypot": ("0o", "1o"),
    # copysign: self: copysign_tensor_self_backward(grad, self, result); other: zeros. PyTorch saves outputs
    # whenever the node exists (only inputs are saved conditionally), hence "o" for other too
    "copysign": ("0o", "o"),
    # nextafter: self: where(self != other, grad, 0); other: zeros
    "nextafter": ("01", ""),
    # ldexp: self: grad * 2^other; other: grad * result * ln 2
    "ldexp": ("1o", "o"),
    # pow(Tensor, Scalar): pow_backward(grad, self, exponent)
    "pow": SELF,
    # pow(Tensor, Tensor): both read self and exponent, the exponent's also the result
    "pow_tensor": ("01o", "01o"),
    # pow(Scalar, Tensor): pow_backward_exponent(grad, self, exponent, result)
    "pow_scalar_base": ("", "1o"),

    # -- clamp, where, lerp, addcmul/addcdiv (positions: input, min/end/tensor1, max/weight/tensor2, value) ------
    "clamp": SELF,  # Scalar bounds: clamp_backward(grad, self, min, max)
    # clamp_min/clamp_max take a Scalar or a Tensor bound: a Tensor one is read by both formulas
    "clamp_min": ("01", "01"),
    "clamp_max": ("02", "", "02"),
    # Tensor bounds: clamp_backward(grad, self, min, max) and clamp_backward_min_max(...) read all three
    "clamp_tensor": ("012", "012", "012"),
    # where(condition, grad, 0): the condition only
    "where": ("", "0", "0"),
    # lerp(self, end, Scalar weight): grad * (1 - weight), grad * weight
    "lerp": ("", ""),
    # lerp(self, end, Tensor weight): self, end: weight; weight: end - self
    "lerp_tensor": ("2", "2", "012"),
    # addcmul: tensor1: grad * tensor2 * value; tensor2: grad * tensor1 * value
    "addcmul": ("", "2", "1"),
    # addcdiv: tensor1: grad * value / tensor2; tensor2: -grad * value * tensor1 / tensor2^2. A tensor that two
    # formulas read is saved whichever input requires grad (PyTorch guards only single-use saves)
    "addcdiv": ("2", "2", "12"),

    # -- reductions, scans, softmax (one input; "o1" is the indices output of the (values, indices) ops) -----
    **{n: BOTH for n in ("prod", "prod_all",              # prod_backward(grad, self, result)
                         "max_all", "min_all", "median", "nanmedian",  # evenly_distribute_backward(grad, self, result)
                         "amax", "amin",                  # result == self picks the gradient's places
                         "cumprod", "logcumsumexp", "logsumexp", "std", "linalg_vector_norm")},
    **{n: SELF for n in ("nansum", "var", "var_mean")},
    # std_mean_backward(grads[0], grads[1], self, result0, ...): the std output, not the mean
    "std_mean": ("0o0",),
    **{n: RESULT for n in ("softmax", "log_softmax")},
    # value_selecting_reduction_backward(grad, dim, indices, self.sizes()): the indices only
    **{n: ("o1",) for n in ("max_dim", "min_dim", "median_dim", "nanmedian_dim", "mode", "kthvalue", "sort",
                            "topk")},
    # cummaxmin_backward(grad, self, indices, dim)
    **{n: ("0o1",) for n in ("cummax", "cummin")},
    # quantile sorts the input (a temporary) and interpolates between the sorted values
    **{n: ("t", "t") for n in ("quantile", "nanquantile")},

    # -- indexing (integer and boolean index tensors are saved for the differentiable input reading them) ------
    # gather_backward(grad, self, dim, index), take_backward(grad, self, index)
    **{n: ("01",) for n in ("gather", "take")},
    "index_select": ("1",),                    # index_select_backward(grad, self.sizes(), dim, index)
    "masked_select": ("01",),                  # masked_select_backward(grad, self, mask): (x, mask, *nonzero)
    "index": ("1+t",),                         # index_backward(zeros, indices, grad): (self, *indices)
    # (input, index, src): self: grad.scatter(dim, index, 0); src: grad.gather(dim, index)
    **{n: ("1", "", "1") for n in ("scatter", "index_fill_t", "masked_fill_t", "masked_scatter", "masked_set")},
    # index_copy, put: the source's gradient also reads source.dim() (PyTorch saves the source for it)
    **{n: ("1", "", "12") for n in ("index_copy", "put")},
    **{n: ("1",) for n in ("scatter_value", "index_fill", "masked_fill")},
    # scatter_add: self: grad; src: grad.gather(dim, index)
    "scatter_add": ("", "", "1"),
    # index_add: self: grad; source: grad.index_select(dim, index), reading source.dim()
    "index_add": ("", "", "12"),
    # scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result)
    "scatter_reduce": ("012o", "", "012o"),
    # index_put(self, indices, values): (input, values, *indices), both gradients read the indices
    "index_put": ("2+", "2+"),
    # repeat_interleave with Tensor repeats is an index_select with an index it builds (with an int, a view copied)
    "repeat_interleave_t": ("t",),

    # -- linear algebra (PyTorch's hidden outputs, LU and pivots, are temporaries no user can write) ----------
    **{n: ("1", "0") for n in ("vdot", "linalg_cross")},
    # the decompositions' backwards read their outputs only
    **{n: RESULT for n in ("linalg_eigh", "linalg_eig", "linalg_svd", "linalg_svdvals", "linalg_qr")},
    # inverse: -inverse^H grad inverse^H; cholesky_backward(grad, upper, L): not the info output
    **{n: ("o0",) for n in ("linalg_inv_ex", "linalg_cholesky_ex", "cholesky")},
    # linalg_det_backward(grad, result, A, LU, pivots); pinv_backward(grad, result, self)
    **{n: BOTH for n in ("linalg_det", "linalg_pinv")},
    # slogdet_backward(grad_sign, grad_logabsdet, A, sign, LU, pivots): (sign, logabsdet)
    "linalg_slogdet": ("0o0",),
    "linalg_matrix_exp": SELF,                 # linalg_matrix_exp_differential(self, grad)
    # lu_factor_ex_backward(grad, LU, pivots): (LU, pivots, info)
    "linalg_lu_factor_ex": ("o0o1",),
    # linalg_lu_backward(grad_L, grad_U, P, L, U): (L, U); P comes from linalg_lu_p, which PyTorch's node saves
    "linalg_lu": RESULT,
    # LU: linalg_lu_solve_LU(grad, LU, pivots, result); B: lu_solve(LU, pivots, grad): (LU, pivots, B)
    "linalg_lu_solve": ("01o", "", "01o"),
    # one formula for both inputs: linalg_solve_backward(grad, result, A, LU, pivots): (A, B) -> (X, info)
    "linalg_solve_ex": ("0o0", "0o0"),
    # linalg_solve_triangular_backward(grad, self, result, ...)
    "linalg_solve_triangular": ("0o", "0o"),
    # linalg_lstsq_backward(grads, self, b, solution)
    "linalg_lstsq": ("01o", "01o"),

    # -- products -----------------------------------------------------------------------------------------------
    # mm, mv, bmm, dot: each operand's gradient reads the other (mm_mat1_backward(grad, mat2, ...))
    "matmul": ("1", "0"),
    # matmul copies an operand before its mm/bmm when it cannot flatten it as a view (a transposed fold, a
    # broadcast batch), tensordot when its permuted operand does not flatten: the node saves that copy, a
    # temporary ("t") no user can write (the ops pick their entry: ops/linalg.py)
    "matmul_copy0": ("1", "t"),
    "matmul_copy1": ("t", "0"),
    "matmul_copy01": ("t", "t"),
    # addmm family (input, mat1, mat2, beta, alpha): input: grad * beta; mat1 reads mat2 and mat2 reads mat1
    **{n: ("", "2", "1") for n in ("addmm", "addmv", "addr", "addbmm", "baddbmm")},
    # einsum: one operand is views and sums (nothing saved); two, a mul or a bmm of their views, each read for
    # the other's gradient. Approximate: PyTorch's permute-and-reshape copies some operands (a temporary then),
    # and contracts three or more pairwise
    "einsum_SumBackward1": NOTHING,
    **{n: ("1", "0") for n in ("einsum_MulBackward0", "einsum_ViewBackward0")},
    # outer (a mul of views), inner (a tensordot, or a mul for a scalar operand), F.linear (addmm(bias, input,
    # weight.t()) or matmul + bias): each operand reads the other, the bias nothing
    **{n: ("1", "0") for n in ("outer", "inner", "inner_scalar", "linear", "linear_nobias")},
    # F.bilinear: _trilinear saves each operand for the other two operands' gradients
    **{n: ("12", "02", "01") for n in ("bilinear", "bilinear_nobias")},

    # -- activations ----------------------------------------------------------------------------------------------
    # their *_backward(grad, self, ...) kernels read the input; softsign is x / (1 + |x|), whose DivBackward0
    # reads x (and a temporary)
    **{n: SELF for n in ("hardtanh", "leaky_relu", "threshold", "threshold_", "softshrink", "hardshrink",
                         "hardswish", "hardsigmoid", "elu", "celu", "gelu", "silu", "mish", "softplus", "glu",
                         "log_sigmoid", "rrelu_with_noise", "rrelu_with_noise_eval", "softsign")},
    # the in-place kernels (elu_, celu_, leaky_relu_, rrelu_) read their result instead
    **{n: RESULT for n in ("elu_", "celu_", "leaky_relu_", "rrelu_with_noise_", "rrelu_with_noise_eval_")},
    # _prelu_kernel_backward(grad, self, weight): one formula for both
    "prelu": ("01", "01"),
    # tanhshrink is x - tanh(x): TanhBackward0 reads its result, a temporary
    "tanhshrink": ("t",),

    # -- distances (positions: x1, x2) ---------------------------------------------------------------------------
    # _cdist_backward(grad, x1, x2, p, result) for either; _euclidean_dist (the mm path) likewise
    **{n: ("01o", "01o") for n in ("cdist", "cdist_mm")},
    "pdist": BOTH,                             # _pdist_backward(grad, self, p, result)
    # pairwise_distance is norm(x1 - x2 + eps): its NormBackward reads the difference and the result
    "pairwise_distance": ("to", "to"),
    # cosine_similarity: each input's gradient reads that input (and temporaries of the normalisation)
    "cosine_similarity": ("0t", "1t"),

    # -- losses (positions: input, target, weight unless noted) --------------------------------------------------
    # mse_loss_backward(grad, self, target), and smooth_l1's, huber's: both read by either gradient
    **{n: ("01", "01") for n in ("mse_loss", "smooth_l1_loss", "huber_loss")},
    "l1_loss": ("t", "t"),                     # (input - target).abs(): AbsBackward reads the difference
    # weight * loss(reduction="none"): the product reads the weight for the loss's gradient
    **{n: ("2t", "2t", "t") for n in ("mse_loss_weighted", "l1_loss_weighted")},
    "huber_loss_weighted": ("012", "012", "t"),
    # binary_cross_entropy(_target)_backward(grad, self, target, weight): weight is optional, never guarded
    "binary_cross_entropy": ("012", "012", "012"),
    # binary_cross_entropy_with_logits(_target)_backward(grad, self, target, weight, pos_weight)
    "binary_cross_entropy_with_logits": ("0123", "0123", "0123", "0123"),
    # nll_loss_backward(grad, self, target, weight, total_weight)
    "nll_loss": ("012",),
    # kl_div: xlogy(target, target) - target * input; with log_target: exp(target) * (target - input)
    "kl_div": ("1", "01"),
    "kl_div_log_target": ("t", "t"),
    # poisson_nll_loss: exp(input) - target * input; without log_input: input - target * log(input + eps)
    "poisson_nll_loss_log_input": ("1t", "0"),
    "poisson_nll_loss": ("1t", "t"),
    # cross_entropy with class probabilities: -(log_softmax(input) * target * weight).sum() / n; label smoothing
    # first mixes the target into a temporary
    "cross_entropy_prob_target": ("12t", "2t", "t"),
    "cross_entropy_prob_target_smoothed": ("2t", "2t", "t"),
    # with class indices and label smoothing: nll_loss on log_softmax (reads the target) plus the smoothing term
    "cross_entropy_label_smoothing": ("12t",),
    # (input1, input2, target): cos_sim of the inputs, whose temporaries PyTorch's composite saves with them
    "cosine_embedding_loss": ("01", "01"),
    # composites of clamp_min, mul and abs that only save their temporaries
    **{n: ("t", "t", "t") for n in ("gaussian_nll_loss", "hinge_embedding_loss", "margin_ranking_loss")},
    # (input, target, weight): logsigmoid(input) reads input; target * logsigmoid(...) reads target; * weight
    "multilabel_soft_margin_loss": ("012", "2t", "t"),
    # _ctc_loss_backward(grad, log_probs, targets, ..., result0, result1): result0 is the output of
    # reduction="none" (a reduced loss is computed from it)
    "ctc_loss": ("01o",),
    "ctc_loss_reduced": ("01",),

    # -- normalization (positions: input, weight, bias, running_mean, running_var); save_mean and save_invstd,
    # the hidden outputs, are temporaries --------------------------------------------------------------------------
    # native_batch_norm_backward(grad, input, weight, running_mean, running_var, save_mean, save_invstd): one
    # formula for all three (weight is optional: never guarded)
    **{n: ("01t", "01t", "01t") for n in ("batch_norm", "group_norm")},
    "batch_norm_eval": ("0134", "0134", "0134"),
    # native_layer_norm_backward(grad, input, shape, mean, rstd, weight, bias)
    "layer_norm": ("012t", "012t", "012t"),
    # instance_norm is batch_norm of input.view(1, N * C, ...) with weight.repeat(N) (and the running statistics
    # repeated, without use_input_stats): temporaries
    **{n: ("0t", "0t", "0t") for n in ("instance_norm", "instance_norm_eval")},
    # rms_norm (input, weight): input * rsqrt(mean(input^2) + eps) * weight
    "rms_norm": ("01t", "t"),
    # local_response_norm: input / (k + alpha * avg_pool(input^2))^beta
    "local_response_norm": ("0t",),

    # -- pooling, embedding ---------------------------------------------------------------------------------------
    # avg_pool2d_backward(grad, self, ...), _adaptive_avg_pool2d_backward(grad, self): the input, though linear
    **{f"{k}_pool{nd}d": SELF for k in ("avg", "adaptive_avg") for nd in (1, 2, 3)},
    # max_pool2d_with_indices_backward(grad, self, ..., indices): the (values, indices) ops save their indices;
    # without return_indices they are a temporary
    **{f"{k}{nd}d{w}": ("0o1",) for k, w in (("max_pool", "_with_indices"), ("adaptive_max_pool", ""))
       for nd in (1, 2, 3)},
    **{f"max_pool{nd}d": ("0t",) for nd in (1, 2, 3)},
    # max_unpool (input, indices): max_pool_double_backward(grad, indices)
    **{f"max_unpool{nd}d": ("1",) for nd in (1, 2, 3)},
    # embedding (weight, indices): embedding_backward(grad, indices, ...)
    "embedding": ("1",),
    # embedding_bag (weight, indices, offsets, per_sample_weights): the weight's gradient reads the indices,
    # offsets and the (optional, so always saved) per-sample weights, theirs the weight too
    "embedding_bag": ("123t", "", "", "0123t"),

    # -- attention (positions: query, key, value, mask, dropout mask) -------------------------------------------
    # PyTorch's math path scales query and key into temporaries; softmax(...) @ value saves the value for the
    # weights' gradient (a temporary when it was first repeated or broadcast)
    "scaled_dot_product_attention": ("2t", "2t", "t", "2t"),
    "scaled_dot_product_attention_copied_value": ("t", "t", "t", "t"),
    # multi_head_attention_forward with need_weights: bmm(q * scale, k^T) saves the key (a view of the projected
    # or static key), bmm(weights, v) the value
    "multi_head_attention": ("12t", "2t", "t"),

    # -- padding, resampling -------------------------------------------------------------------------------------
    # constant padding, interpolation and the affine grid read sizes only
    "constant_pad_nd": NOTHING, "affine_grid_generator": NOTHING,
    **{f"upsample_{mode}{nd}d{aa}": NOTHING for mode in ("nearest", "nearest-exact", "linear", "bilinear",
                                                         "bicubic", "trilinear") for nd in (1, 2, 3)
       for aa in ("", "_aa")},
    # mode="area" is adaptive average pooling: _adaptive_avg_pool2d_backward(grad, self)
    **{f"upsample_area{nd}d": SELF for nd in (1, 2, 3)},
    # reflection_pad/replication_pad_backward(grad, self, padding); circular padding saves temporaries
    **{f"{mode}_pad{nd}d": SELF for mode in ("reflect", "replicate") for nd in (1, 2, 3)},
    **{f"circular_pad{nd}d": ("t",) for nd in (1, 2, 3)},
    # grid_sampler_2d_backward(grad, input, grid, ...): one formula for both
    **{f"grid_sampler_{nd}d": ("01", "01") for nd in (2, 3)},

    # -- convolution, dropout ------------------------------------------------------------------------------------
    # convolution_backward(grad, input, weight, bias sizes, ...): one formula for all three
    "convolution": ("01", "01", "01"),
    # (input, mask, scale): the mask PyTorch's dropout draws is the one tensor its backward reads
    **{n: ("1", "", "", "") for n in ("dropout", "alpha_dropout")},

    # -- sequence utilities ------------------------------------------------------------------------------------
    # PyTorch's packing reads the batch sizes it computes (a separate tensor here), padding saves temporaries
    **{n: ("t", "") for n in ("pack_padded_sequence", "pad_packed_sequence")},
    "pad_sequence": ("t", ...),
}


# ``grad_fn._saved_<name>``: the names PyTorch's generated nodes give what they keep (``derivatives.yaml``), per op:
# ``(its apply() inputs, its outputs, what else the node shows)``, space-separated. An input or output shows as a
# tensor where the node saved it (None where the inputs requiring grad did not need it); ``_`` is an input the
# node does not show; ``name#`` a Python number shown as it is (a Scalar argument; None reads as 1). The others:
# ``name=key`` the static argument ``key`` (``key[0]``: its first entry), ``<input>_sym_sizes``/``_sym_numel``/
# ``_sym_strides`` an input's shape, size and strides (the strides empty where that input needs no gradient),
# ``self_sym_sizes=out`` the output's shape, ``dim0 dim1`` the dims a transpose swaps.
# Single-input ops saving SELF, RESULT or BOTH without an entry show ``self`` and ``result``; the products
# (``matmul_<node>`` ops) are looked up by their node's name in MATMUL_NAMES.
NAMES = {
    **{n: ("_ _ alpha#", "", "") for n in ("add", "sub", "rsub_scalar")},
    **{n: ("self other", "", "") for n in ("mul", "div")},
    "div_mode": ("self other", "", "rounding_mode=rounding_mode"),
    "pow": ("self exponent#", "", ""),
    "pow_tensor": ("self exponent", "result", ""),
    "pow_scalar_base": ("self# exponent", "result", ""),
    "sum_all": ("_", "", "self_sym_sizes"),
    "sum": ("_", "", "dim=axis keepdim=keepdims self_sym_sizes"),
    "mean_all": ("_", "", "self_sym_numel self_sym_sizes"),
    "mean": ("_", "", "dim=axis keepdim=keepdims self_sym_numel self_sym_sizes"),
    **{n: ("_", "", "self_sym_sizes") for n in ("view", "expand")},
    "transpose": ("_", "", "dim0 dim1"),
    "select": ("_", "", "dim=dim index=index self_sym_sizes"),
    "narrow": ("_", "", "dim=dim end=@end self_sym_sizes start=start step=@one"),
    # ``x[...]``'s views: the numbers the user wrote (a negative one shown as PyTorch's unsigned 64-bit wrap)
    "getitem_Select": ("_", "", "dim=@index_dim index=@index_index self_sym_sizes"),
    "getitem_Slice": ("_", "", "dim=@index_dim end=@index_end self_sym_sizes start=@index_start step=@index_step"),
    "getitem_Unsqueeze": ("_", "", "dim=@index_dim"),
    "index": ("_", "", "indices=@index_tensors self_sym_sizes"),
    # ``z.real``/``z.imag`` are PyTorch's select over view_as_real: the last dim of the (..., 2) view
    **{n: ("_", "", "dim=@last index=@part self_sym_sizes=@as_real") for n in ("real", "imag")},
    "permute": ("_", "", "dims=dims"),
    "unsqueeze": ("_", "", "dim=dim"),
    "squeeze1": ("_", "", "dim=dims[0] self_sym_sizes"),
    "squeeze2": ("_", "", "dim=dims self_sym_sizes"),
    **{n: ("self", "result", "dim=axis") for n in ("softmax", "log_softmax")},
}

def names(op_name, grad_name, spec, n_in, n_out):
    """``(input names, output names, extra names)`` lists for an op's node (:data:`NAMES`), or None."""
    e = MATMUL_NAMES.get(grad_name) if op_name.startswith("matmul_") else NAMES.get(op_name)
    if e is None:
        if spec not in (SELF, RESULT, BOTH) or n_out != 1:
            return None
        e = (" ".join(["self"] + ["_"] * (n_in - 1)), "result", "")
    return e[0].split(), e[1].split(), e[2].split()


MATMUL_NAMES = {
    "MmBackward0": ("self mat2", "", "self_sym_sizes mat2_sym_sizes self_sym_strides mat2_sym_strides"),
    "BmmBackward0": ("self mat2", "", ""),
    "MvBackward0": ("self vec", "", ""),
    "DotBackward0": ("self tensor", "", ""),
    "UnsafeViewBackward0": ("_ _", "", "self_sym_sizes=out"),
}
