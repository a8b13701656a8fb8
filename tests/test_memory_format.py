"""Memory formats as PyTorch's: ``channels_last`` / ``channels_last_3d`` tensors (``contiguous``, ``to``, ``clone``,
``empty``, ``*_like``, ``Module.to(memory_format=...)``, ``convert_conv2d_weight_memory_format``) report PyTorch's
strides and ``is_contiguous(memory_format=...)``; ops that PyTorch runs in the input's suggested format
(convolutions, pooling, batch/group norm, resampling, padding, ``cat``) and elementwise ops keep it; ``.grad`` takes
its parameter's strides; ``view`` raises where PyTorch's does; save/load keeps strides. Values are unaffected."""
import io

import numpy as np
import pytest

from oracle import assert_same, needs_torch, run_both

pytestmark = needs_torch


def formula_data(T, *shape, seed=0, dtype=None):
    """The same values in both libraries (computed by numpy: the libraries' float32 cos differ in the last bit)."""
    x = T.tensor(np.cos(np.arange(int(np.prod(shape))) * 0.417 + seed).astype(np.float32).reshape(shape))
    return x if dtype is None else x.to(dtype)


def _x(T):
    return formula_data(T, 2, 4, 6, 6).contiguous(memory_format=T.channels_last)


def _x5(T):
    return formula_data(T, 2, 3, 4, 6, 6).contiguous(memory_format=T.channels_last_3d)


def _w(T, *shape):
    return formula_data(T, *shape, seed=1)


_F = lambda T: T.nn.functional  # noqa: E731

_CASES = {
    "contiguous_cl": lambda T: _x(T),
    "contiguous_cl3d": lambda T: _x5(T),
    "to_cl": lambda T: formula_data(T, 2, 4, 6, 6).to(memory_format=T.channels_last),
    "to_double_cl": lambda T: formula_data(T, 2, 4, 6, 6).to(T.float64, memory_format=T.channels_last),
    "to_contiguous": lambda T: _x(T).to(memory_format=T.contiguous_format),
    "transposed_to_contiguous_aliases": lambda T: formula_data(T, 3, 4).t().to(memory_format=T.contiguous_format),
    "clone_preserves": lambda T: _x(T).clone(), "clone_cl": lambda T: formula_data(T, 2, 4, 6, 6).clone(
        memory_format=T.channels_last),
    "double": lambda T: _x(T).double(), "half": lambda T: _x(T).half(),
    "empty_cl": lambda T: T.empty(2, 3, 4, 5, memory_format=T.channels_last).zero_(),
    "empty_cl3d": lambda T: T.empty(1, 2, 3, 4, 5, memory_format=T.channels_last_3d).zero_(),
    "zeros_like": lambda T: T.zeros_like(_x(T)),
    "empty_like_contiguous": lambda T: T.empty_like(_x(T), memory_format=T.contiguous_format).zero_(),
    "randn_like": lambda T: T.randn_like(_x(T)) * 0, "randint_like": lambda T: T.randint_like(_x(T), 3) * 0,
    "N111_is_contiguous": lambda T: formula_data(T, 2, 1, 1, 1).contiguous(memory_format=T.channels_last),
    "C1": lambda T: formula_data(T, 2, 1, 3, 3).contiguous(memory_format=T.channels_last),
    "sliced_then_cl": lambda T: _x(T)[:, :, 1:].contiguous(memory_format=T.channels_last),
    "permute_idiom": lambda T: formula_data(T, 2, 6, 6, 4).permute(0, 3, 1, 2),
    "permute_of_cl": lambda T: _x(T).permute(0, 2, 3, 1),
    "mul": lambda T: _x(T) * 2, "add_cl_first": lambda T: _x(T) + formula_data(T, 2, 4, 6, 6),
    "add_contiguous_first": lambda T: formula_data(T, 2, 4, 6, 6) + _x(T),
    "silu": lambda T: _F(T).silu(_x(T)), "prelu": lambda T: _F(T).prelu(_x(T), T.full((4,), 0.1)),
    "dropout2d": lambda T: _F(T).dropout2d(_x(T), 0.0, training=True),
    "conv_input": lambda T: _F(T).conv2d(_x(T), _w(T, 3, 4, 3, 3), padding=1),
    "conv_weight": lambda T: _F(T).conv2d(formula_data(T, 2, 4, 6, 6),
                                          _w(T, 3, 4, 3, 3).contiguous(memory_format=T.channels_last), T.ones(3)),
    "conv_groups": lambda T: _F(T).conv2d(_x(T), _w(T, 4, 1, 3, 3), groups=4),
    "conv_double": lambda T: _F(T).conv2d(formula_data(T, 2, 4, 6, 6, dtype=T.float64).contiguous(
        memory_format=T.channels_last), formula_data(T, 3, 4, 3, 3, seed=1, dtype=T.float64)),
    "conv_sliced_input": lambda T: _F(T).conv2d(_x(T)[:, :, 1:], _w(T, 3, 4, 3, 3)),
    "conv_transpose": lambda T: _F(T).conv_transpose2d(_x(T), _w(T, 4, 2, 3, 3)),
    "conv3d": lambda T: _F(T).conv3d(_x5(T), _w(T, 4, 3, 3, 3, 3)),
    "conv_C1_input_contiguous": lambda T: _F(T).conv2d(formula_data(T, 2, 1, 4, 4).contiguous(
        memory_format=T.channels_last), _w(T, 3, 1, 1, 1)),
    "max_pool": lambda T: _F(T).max_pool2d(_x(T), 2),
    "max_pool_indices": lambda T: _F(T).max_pool2d(_x(T), 2, return_indices=True)[1],
    "max_pool3d": lambda T: _F(T).max_pool3d(_x5(T), 2),
    "avg_pool": lambda T: _F(T).avg_pool2d(_x(T), 2), "avg_pool3d_contiguous": lambda T: _F(T).avg_pool3d(_x5(T), 2),
    "adaptive_avg": lambda T: _F(T).adaptive_avg_pool2d(_x(T), 2),
    "adaptive_avg_global": lambda T: _F(T).adaptive_avg_pool2d(_x(T), 1),
    "adaptive_max": lambda T: _F(T).adaptive_max_pool2d(_x(T), 2),
    "adaptive_max3d_contiguous": lambda T: _F(T).adaptive_max_pool3d(_x5(T), 2),
    "lp_pool": lambda T: _F(T).lp_pool2d(_x(T) + 2, 2, 2),
    "batch_norm": lambda T: _F(T).batch_norm(_x(T), None, None, training=True),
    "batch_norm_eval": lambda T: _F(T).batch_norm(_x(T), T.zeros(4), T.ones(4)),
    "batch_norm3d": lambda T: _F(T).batch_norm(_x5(T), None, None, training=True),
    "group_norm": lambda T: _F(T).group_norm(_x(T), 2),
    "layer_norm_contiguous": lambda T: _F(T).layer_norm(_x(T), (6,)),
    "instance_norm_contiguous": lambda T: _F(T).instance_norm(_x(T)),
    "local_response_norm": lambda T: _F(T).local_response_norm(_x(T), 2),
    "nearest": lambda T: _F(T).interpolate(_x(T), scale_factor=2),
    "bilinear": lambda T: _F(T).interpolate(_x(T), size=(5, 7), mode="bilinear"),
    "bicubic_aa": lambda T: _F(T).interpolate(_x(T), size=(3, 3), mode="bicubic", antialias=True),
    "area": lambda T: _F(T).interpolate(_x(T), size=(3, 3), mode="area"),
    "trilinear": lambda T: _F(T).interpolate(_x5(T), scale_factor=2, mode="trilinear"),
    "pad_constant": lambda T: _F(T).pad(_x(T), (1, 1, 1, 1)),
    "pad_reflect": lambda T: _F(T).pad(_x(T), (1, 1, 1, 1), mode="reflect"),
    "pad_circular_contiguous": lambda T: _F(T).pad(_x(T), (1, 1, 1, 1), mode="circular"),
    "pixel_shuffle": lambda T: _F(T).pixel_shuffle(_x(T), 2), "pixel_unshuffle": lambda T: _F(T).pixel_unshuffle(_x(T), 2),
    "channel_shuffle": lambda T: _F(T).channel_shuffle(_x(T), 2),
    "cat": lambda T: T.cat([_x(T), _x(T)], 1), "cat_mixed_contiguous": lambda T: T.cat([_x(T), formula_data(T, 2, 4, 6, 6)]),
    "stack0": lambda T: T.stack([_x(T), _x(T)]), "stack2": lambda T: T.stack([_x(T), _x(T)], 2),
    "stack_last_contiguous": lambda T: T.stack([_x(T), _x(T)], -1),
    "stack_transposed_contiguous": lambda T: T.stack([formula_data(T, 3, 4).t()] * 2),
    "softmax_contiguous": lambda T: _F(T).softmax(_x(T), 1),
    "glu": lambda T: _F(T).glu(_x(T), 1), "roll": lambda T: _x(T).roll(1, 1),
    "max_unpool": lambda T: _F(T).max_unpool2d(*_F(T).max_pool2d(_x(T), 2, return_indices=True), 2),
    "mse_none": lambda T: _F(T).mse_loss(_x(T), _x(T) * 0.5, reduction="none"),
    "bce_logits_follows_target": lambda T: _F(T).binary_cross_entropy_with_logits(
        formula_data(T, 2, 4, 6, 6), _x(T).sigmoid(), reduction="none"),
    "mean_keepdim": lambda T: _x(T).mean((2, 3), keepdim=True), "sum_dim1": lambda T: _x(T).sum(1, keepdim=True),
    "flatten": lambda T: _x(T).flatten(1), "reshape": lambda T: _x(T).reshape(2, -1),
    "in_place": lambda T: _x(T).add_(1), "detach": lambda T: _x(T).detach(), "data": lambda T: _x(T).data,
    "deepcopy": lambda T: __import__("copy").deepcopy(_x(T)),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_memory_format_strides_match_pytorch(name):
    def run(T):
        t = _CASES[name](T)
        try:
            t.view(-1)
            viewable = True
        except RuntimeError:
            viewable = False
        formats = [t.is_contiguous()] + [t.is_contiguous(memory_format=f) for f in (T.channels_last,
                                                                                     T.channels_last_3d)]
        return (tuple(t.shape), tuple(t.stride()), formats, viewable), t.detach()
    ref, got = run_both(run)
    assert got[0] == ref[0]
    assert_same(ref[1], got[1])


def test_wrong_rank_and_preserve_format_errors():
    def run(T):
        out = []
        for f in (lambda: formula_data(T, 2, 3).contiguous(memory_format=T.channels_last),
                  lambda: _x(T).to(memory_format=T.channels_last_3d),
                  lambda: _x(T).permute(0, 2, 1, 3).contiguous(memory_format=T.preserve_format),
                  lambda: formula_data(T, 2, 3).is_contiguous(memory_format=T.channels_last),
                  lambda: _x(T).contiguous(memory_format=T.preserve_format).stride()):
            try:
                out.append(f())
            except RuntimeError as e:
                out.append(str(e))
        return out
    ref, got = run_both(run)
    assert got == ref


def _model(T):
    m = T.nn.Sequential(T.nn.Conv2d(4, 8, 3, padding=1), T.nn.BatchNorm2d(8), T.nn.ReLU(), T.nn.MaxPool2d(2),
                        T.nn.Conv2d(8, 8, 1), T.nn.AdaptiveAvgPool2d(1), T.nn.Flatten(), T.nn.Linear(8, 2))
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(formula_data(T, *p.shape, seed=i) * 0.5)
    return m


def test_channels_last_model_training_matches_pytorch():
    """A model moved to channels_last: parameter and gradient strides, each layer's output strides, losses and
    parameters after SGD steps, eager and under torchish.compile."""
    def run(T, jit=None):
        m = _model(T).to(memory_format=T.channels_last)
        opt = T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        x, y = _x(T), T.tensor([0, 1])
        strides = []
        h = x
        for layer in m:
            h = layer(h)
            strides.append(tuple(h.stride()))

        def step(x, y):
            opt.zero_grad()
            loss = T.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss
        step = jit(step) if jit else step
        losses = [step(x, y).detach() for _ in range(3)]
        return (strides, [tuple(p.stride()) for p in m.parameters()], [tuple(p.grad.stride()) for p in m.parameters()],
                losses, [p.detach() for p in m.parameters()])
    ref, got = run_both(run)
    assert got[:3] == ref[:3]
    assert_same(ref[3:], got[3:])
    import torchish
    compiled = run(torchish, torchish.compile)
    assert compiled[1:3] == ref[1:3]
    assert_same(ref[3:], compiled[3:])


def test_leaf_grad_convert_weights_set_data_and_save_load_keep_strides():
    def run(T):
        x = _x(T).requires_grad_()
        (x * x).sum().backward()
        m = T.nn.utils.convert_conv2d_weight_memory_format(
            T.nn.Sequential(T.nn.Conv2d(4, 3, 3), T.nn.ConvTranspose2d(3, 2, 2)), T.channels_last)
        p = formula_data(T, 2, 4, 6, 6)
        p.data = _x(T)
        buf = io.BytesIO()
        T.save({"x": _x(T), "t": formula_data(T, 3, 4).t().clone()}, buf)
        buf.seek(0)
        loaded = T.load(buf)
        return (tuple(x.grad.stride()), [tuple(q.stride()) for q in m.parameters()], tuple(p.stride()),
                tuple(loaded["x"].stride()), tuple(loaded["t"].stride()), x.grad, loaded["x"])
    ref, got = run_both(run)
    assert got[:5] == ref[:5]
    assert_same(ref[5:], got[5:])


def test_compiled_outputs_keep_eager_strides():
    """torchish.compile's outputs have the strides the eager call gives (a channels-last or transposed argument is
    part of the signature), as torch.compile keeps eager's output strides."""
    import torchish
    for make in (lambda T: _x(T), lambda T: formula_data(T, 3, 4).t()):
        for fn in (lambda T, x: T.relu(x) * 2, lambda T, x: x + 1):
            ref = tuple(fn(torch_module(), make(torch_module())).stride())
            step = torchish.compile(lambda x: fn(torchish, x))
            got = [tuple(step(make(torchish)).stride()) for _ in range(3)]
            assert got == [ref] * 3
    conv = torchish.compile(torchish.nn.Conv2d(4, 3, 3))
    assert [tuple(conv(_x(torchish)).stride()) for _ in range(3)] == [(48, 1, 12, 3)] * 3


def torch_module():
    from oracle import torch
    return torch
