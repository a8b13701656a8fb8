"""float16 and bfloat16 against PyTorch's CPU kernels: values, dtypes and the gradient of a weighted sum, at the
parity tolerance (rtol 1e-2, atol 1e-2), on inputs large enough that computing in the half type instead of
PyTorch's float32 ("opmath") shows: reductions over hundreds of elements, products with inner dimensions >= 128.

Each case is ``fn(lib, *tensors)`` over half-precision leaves made from deterministic numpy values (every leaf
requires grad unless listed in ``nograd``); the table holds the ops fixed for half precision and a few that
already matched, in both dtypes.
"""
import numpy as np
import pytest

import torchish
from oracle import arr, assert_same, needs_avx512_fp16_torch, needs_torch, torch


def _ins(*shapes, scale=1.0):
    return [arr(*s, seed=i, lo=-scale, hi=scale) for i, s in enumerate(shapes)]


# name -> (fn(lib, *tensors), numpy inputs, positions that do not require grad)
CASES = {
    # addmm family: beta * input + alpha * product in float32, rounded once (addbmm: once per batch; addr: per op)
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.7, alpha=1.3), _ins((16, 8), (16, 256), (256, 8), scale=2), ()),
    "addmv": (lambda lib, c, a, b: lib.addmv(c, a, b, beta=0.7, alpha=1.3), _ins((16,), (16, 256), (256,), scale=2), ()),
    "baddbmm": (lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0.7, alpha=1.3), _ins((2, 16, 8), (2, 16, 256), (2, 256, 8), scale=2), ()),
    "addbmm": (lambda lib, c, a, b: lib.addbmm(c, a, b, beta=0.7, alpha=1.3), _ins((16, 8), (2, 16, 256), (2, 256, 8), scale=2), ()),
    "addr": (lambda lib, c, a, b: lib.addr(c, a, b, beta=0.7, alpha=1.3), _ins((16, 8), (16,), (8,), scale=2), ()),
    "mm": (lambda lib, a, b: a @ b, _ins((16, 256), (256, 8), scale=2), ()),
    # embedding_bag: rows weighed and summed in float32, each bag rounded once
    "embedding_bag_sum": (lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o, mode="sum"),
                          [arr(50, 16, lo=-2, hi=2), np.arange(300) * 7 % 50, np.array([0, 100, 150, 290])], ()),
    "embedding_bag_mean": (lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o, mode="mean"),
                           [arr(50, 16, lo=-2, hi=2), np.arange(300) * 7 % 50, np.array([0, 100, 150, 290])], ()),
    "embedding_bag_psw": (lambda lib, w, i, o, p: lib.nn.functional.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
                          [arr(50, 16, lo=-2, hi=2), np.arange(300) * 7 % 50, np.array([0, 100, 150, 290]), arr(300, seed=1)], (4,)),
    # threshold compares in float32: an element equal to the threshold rounded to the half type is kept
    "threshold": (lambda lib, x: lib.nn.functional.threshold(x, 0.1, 0.5), [np.linspace(0.09, 0.11, 64, dtype=np.float32)], ()),
    # a broadcast operand's gradient summed in float32 (sum_to_size), each product rounded to the half type first
    "bias_add": (lambda lib, x, b: x + b, _ins((300, 32), (32,), scale=2), ()),
    "add_alpha": (lambda lib, x, b: lib.add(x, b, alpha=0.37) - lib.sub(x, b, alpha=1.7), _ins((300, 32), (32,), scale=2), ()),
    "expand": (lambda lib, b: b.expand(300, 32) * 1.5, _ins((32,), scale=2), ()),
    "lerp_broadcast": (lambda lib, x, b: lib.lerp(x, b, 0.3), _ins((300, 32), (32,), scale=2), ()),
    "outer": (lambda lib, a, b: lib.outer(a, b), _ins((300,), (40,), scale=2), ()),
    "prelu": (lambda lib, x, w: lib.nn.functional.prelu(x, w), _ins((8, 16, 40), (16,), scale=1), ()),
    "prelu_one": (lambda lib, x, w: lib.nn.functional.prelu(x, w), _ins((8, 16, 40), (1,), scale=1), ()),
    # linear on a non-contiguous 3-D input: PyTorch's matmul then add_(bias), two roundings
    "linear_transposed": (lambda lib, x, w, b: lib.nn.functional.linear(x.transpose(0, 1), w, b), _ins((4, 30, 64), (48, 64), (48,)), ()),
    # multi-head attention (batch_first: transposed projections), weights through PyTorch's explicit ops
    "mha_weights": (lambda lib, x, w, b, ow, ob: lib.nn.functional.multi_head_attention_forward(
        x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), 64, 4, w, b, None, None, False, 0.0, ow, ob,
        need_weights=True, average_attn_weights=False), _ins((2, 30, 64), (192, 64), (192,), (64, 64), (64,), scale=1.2), (0, 1, 2, 3, 4)),
    "mha_sdpa": (lambda lib, x, w, b, ow, ob: lib.nn.functional.multi_head_attention_forward(
        x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), 64, 4, w, b, None, None, False, 0.0, ow, ob,
        need_weights=False)[0], _ins((2, 30, 64), (192, 64), (192,), (64, 64), (64,), scale=0.5), (0, 1, 2, 3, 4)),
    # prod: every product rounded to the half type, in the order of PyTorch's 16-lane vectorised kernel
    "prod_last": (lambda lib, x: (x * 0.1 + 1).prod(1), _ins((8, 300)), ()),
    "prod_first": (lambda lib, x: (x * 0.1 + 1).prod(0), _ins((300, 8)), ()),
    "prod_all": (lambda lib, x: (x * 0.05 + 1).prod(), _ins((5, 130)), ()),
    # cdist's matrix-product path (_euclidean_dist) is composite in PyTorch: it runs in the half types
    "cdist_mm": (lambda lib, a, b: lib.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), _ins((12, 256), (10, 256)), ()),
    "cdist_mm_auto": (lambda lib, a, b: lib.cdist(a, b), _ins((40, 64), (30, 64)), ()),
    # histc: each thread's count in the half type (stops at 256 in bfloat16), bin positions one op at a time
    "histc": (lambda lib, x: lib.histc(x, 20, -2, 2), [np.sin(np.arange(4800) * 0.73).astype(np.float32) * 1.7], (0,)),
    "histc_auto": (lambda lib, x: lib.histc(x, 7), [np.sin(np.arange(4800) * 0.73).astype(np.float32) * 1.7], (0,)),
}


def _leaves(lib, dtype, inputs, nograd):
    dt = getattr(lib, dtype)
    return [(lib.tensor(x).to(dt).requires_grad_(i not in nograd) if x.dtype.kind == "f" else lib.tensor(x))
            if isinstance(x, np.ndarray) else x for i, x in enumerate(inputs)]


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_half_matches_torch(name, dtype):
    if name == "mha_weights" and dtype == "float16":
        needs_avx512_fp16_torch("the float16 attention weights' accumulation order")
    fn, inputs, nograd = CASES[name]
    results = []
    before = torchish.get_num_threads()
    torchish.set_num_threads(torch.get_num_threads())  # (PyTorch's histc splits its work by thread)
    try:
        for lib in (torch, torchish):
            leaves = _leaves(lib, dtype, inputs, nograd)
            out = fn(lib, *leaves)
            outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.requires_grad]
            wrt = [t for t in leaves if isinstance(t, lib.Tensor) and t.requires_grad]
            grads = ()
            if outs and wrt:  # the gradient of a weighted sum, the weights in each output's dtype
                cots = [lib.tensor(arr(*o.shape, seed=9)).to(o.dtype) for o in outs]
                grads = lib.autograd.grad(outs, wrt, cots, allow_unused=True)
            results.append((out, grads))
    finally:
        torchish.set_num_threads(before)
    assert_same(results[0][0], results[1][0], "out")
    assert_same(list(results[0][1]), list(results[1][1]), "grad")
