"""Strides of new tensors as PyTorch's: an elementwise op's output follows its inputs' memory layout
(TensorIterator), ``clone``/casts/``*_like`` keep a dense input's strides (``preserve_format``), so ``stride()``,
``is_contiguous()`` and whether ``view()`` raises agree with PyTorch."""
import warnings

import pytest

from oracle import assert_same, needs_torch, run_both

pytestmark = needs_torch

_CASES = {
    "mul_scalar": lambda T, x: x.transpose(0, 2) * 2, "sin": lambda T, x: x.permute(1, 2, 0).sin(),
    "add_same_layout": lambda T, x: x.transpose(1, 2) + x.transpose(1, 2),
    "add_two_layouts": lambda T, x: x.permute(2, 0, 1) + x.permute(2, 1, 0).transpose(1, 2),
    "broadcast_row": lambda T, x: x.permute(2, 0, 1) + T.ones(1, 1, 3),
    "broadcast_part": lambda T, x: x.transpose(0, 2) * x.transpose(0, 2)[:1],
    "zero_dim_operand": lambda T, x: x.transpose(1, 2) + T.tensor(1.0),
    "compare": lambda T, x: x.transpose(0, 1) > 3, "where": lambda T, x: T.where(x.transpose(0, 1) > 3, x.transpose(0, 1), 0.0),
    "clamp": lambda T, x: x.transpose(0, 1).clamp(min=2.0), "relu": lambda T, x: T.relu(x.transpose(1, 2)),
    "lerp": lambda T, x: x.transpose(0, 1).lerp(x.transpose(0, 1) * 0, 0.3),
    "non_dense_slice": lambda T, x: x[:, :, ::2] * 2, "expanded": lambda T, x: T.ones(3, 1).expand(3, 4) * 2,
    "size_one_dims": lambda T, x: T.arange(4.0).reshape(4, 1).t() * 1,
    "clone": lambda T, x: x.permute(2, 0, 1).clone(), "clone_non_dense": lambda T, x: x[:, :, ::2].clone(),
    "clone_contiguous_format": lambda T, x: x.transpose(1, 2).clone(memory_format=T.contiguous_format),
    "double": lambda T, x: x.transpose(0, 1).double(), "zeros_like": lambda T, x: T.zeros_like(x.permute(1, 2, 0)),
    "ones_like_contiguous_format": lambda T, x: T.ones_like(x.t() if x.ndim == 2 else x.transpose(0, 2),
                                                            memory_format=T.contiguous_format),
    "full_like": lambda T, x: T.full_like(x.transpose(0, 1), 2.0), "empty_like": lambda T, x: T.empty_like(x.transpose(1, 2)),
    "contiguous": lambda T, x: (x.transpose(1, 2) * 2).contiguous(),
    "transposed_back": lambda T, x: (x.transpose(1, 2) * 2).transpose(1, 2),
    "in_place_keeps": lambda T, x: x.transpose(1, 2).clone().mul_(2), "reduction": lambda T, x: (x.transpose(1, 2) * 2).sum(0),
    "chain": lambda T, x: ((x.transpose(0, 2) + 1).exp() * x.transpose(0, 2)).neg(),
    "activations": lambda T, x: T.nn.functional.gelu(T.nn.functional.silu(T.nn.functional.hardtanh(
        T.nn.functional.leaky_relu(x.transpose(0, 2) - 10)))),
    "softplus_elu": lambda T, x: T.nn.functional.elu(T.nn.functional.softplus(x.permute(1, 2, 0) - 9)),
    "log_sigmoid_contiguous": lambda T, x: T.nn.functional.logsigmoid(x.transpose(0, 2)),
    "dropout_eval": lambda T, x: T.nn.functional.dropout(x.transpose(0, 2), 0.5, training=False),
    "detach": lambda T, x: (x.transpose(0, 2) * 2).detach(), "data": lambda T, x: (x.permute(1, 2, 0) + 1).data,
    "roll_contiguous": lambda T, x: x.permute(2, 0, 1).roll(1, 0),
    "l1_loss_none": lambda T, x: T.nn.functional.l1_loss(x.permute(2, 0, 1), x.permute(2, 0, 1) * 0, reduction="none"),
    "bce_logits_target_contiguous": lambda T, x: T.nn.functional.binary_cross_entropy_with_logits(
        x.permute(2, 0, 1) / 24, (x.permute(2, 0, 1) / 24).contiguous(), reduction="none"),
    "deepcopy": lambda T, x: __import__("copy").deepcopy(x.permute(1, 2, 0) + 1),
    # unary ops outside the unary family, frexp's two outputs, and empty_like(input)'s layout (flip, sort)
    "isnan": lambda T, x: x.permute(2, 0, 1).isnan(), "signbit": lambda T, x: x.transpose(0, 2).signbit(),
    "sign": lambda T, x: x.transpose(0, 2).sign(), "round": lambda T, x: x.transpose(0, 2).round(decimals=1),
    "logit": lambda T, x: (x.transpose(0, 2) / 30).logit(), "nan_to_num": lambda T, x: x.permute(2, 0, 1).nan_to_num(),
    "polygamma": lambda T, x: T.polygamma(1, x.transpose(0, 2) + 1), "entr": lambda T, x: T.special.entr(x.mT),
    "bessel_j0": lambda T, x: T.special.bessel_j0(x.mT), "xlog1py": lambda T, x: T.special.xlog1py(x.mT, x.mT),
    "chebyshev_t": lambda T, x: T.special.chebyshev_polynomial_t(x.mT / 30, 2),
    "frexp": lambda T, x: T.frexp(x.permute(2, 0, 1))[0], "frexp_exponent": lambda T, x: T.frexp(x.mT)[1],
    "flip": lambda T, x: x.permute(2, 0, 1).flip(0), "flip_non_dense": lambda T, x: x[:, :, ::2].mT.flip(1),
    "sort": lambda T, x: x.permute(2, 0, 1).sort(1)[0], "argsort": lambda T, x: x.mT.argsort(0),
    # rot90: a flip allocated like the input, transposed in place for odd k (also of a contiguous input)
    "rot90": lambda T, x: x.rot90(), "rot90_k2": lambda T, x: x.permute(2, 0, 1).rot90(2),
    "rot90_k3_dims": lambda T, x: x.permute(2, 0, 1).rot90(3, (0, 2)), "rot90_k0": lambda T, x: x.mT.rot90(0),
    # nonzero's (n, ndim) result is allocated column by column
    "nonzero": lambda T, x: (x > 5).nonzero(), "argwhere_1d": lambda T, x: T.argwhere(x.reshape(-1) > 20),
    "nonzero_empty": lambda T, x: (x > 100).nonzero(),
    # diff subtracts narrowed views (n times)
    "diff": lambda T, x: x.permute(2, 0, 1).diff(dim=1), "diff_n2": lambda T, x: x.permute(2, 0, 1).diff(2, dim=2),
    "diff_prepend": lambda T, x: x.mT.diff(dim=1, prepend=x.mT[:, :1]),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_output_strides_match_pytorch(name):
    def run(T):
        x = T.arange(24.0).reshape(2, 3, 4)
        t = _CASES[name](T, x)
        try:
            t.view(-1)
            viewable = True
        except RuntimeError:
            viewable = False
        return (tuple(t.stride()), t.is_contiguous(), viewable), (t.detach() if name != "empty_like" else None)
    ref, got = run_both(run)
    assert got[0] == ref[0]
    assert_same(ref[1], got[1])


def test_strided_output_gradients_and_reshape():
    """Values and gradients are those of the logical tensor whatever its strides; reshape copies where view
    cannot."""
    def run(T):
        x = T.arange(6.0, requires_grad=True)
        y = (x.reshape(2, 3).t() * 3).sin()
        z = y.reshape(-1) * T.arange(6.0)
        z.sum().backward()
        return tuple(y.stride()), z.detach(), x.grad
    ref, got = run_both(run)
    assert got[0] == ref[0]
    assert_same(ref[1:], got[1:])


def test_tensors_made_from_transposed_arrays_keep_their_memory_order():
    """torch.tensor / from_numpy / as_tensor of a transposed or sliced numpy array (an HWC image transposed to CHW)
    and torch.tensor of a transposed tensor give strides in the source's memory order, as PyTorch's."""
    import numpy as np
    a = np.arange(12, dtype=np.float32).reshape(3, 4).T
    img = np.arange(24, dtype=np.float32).reshape(2, 3, 4).transpose(2, 0, 1)

    def run(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            made = [T.tensor(a), T.from_numpy(a), T.as_tensor(a), T.tensor(a[:, ::2]), T.tensor(img),
                    T.tensor(T.arange(12.0).reshape(3, 4).t()), T.tensor(np.broadcast_to(a[0], (4, 3))),
                    T.tensor(np.ones((2, 1, 3))[:, :, ::2])]
        viewable = []
        for t in made:
            try:
                t.view(-1)
                viewable.append(True)
            except RuntimeError:
                viewable.append(False)
        return [tuple(t.stride()) for t in made], viewable, made
    ref, got = run_both(run)
    assert got[:2] == ref[:2]
    assert_same(ref[2], got[2])


def test_numpy_of_a_strided_tensor_has_its_strides():
    """``Tensor.numpy()`` of a permuted or channels-last tensor has the tensor's strides (in bytes), as PyTorch's
    (whose array shares the tensor's memory), so a round trip through numpy keeps the layout."""
    def run(T):
        x = T.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
        c = T.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=T.channels_last)
        return ([x.numpy().strides, c.numpy().strides, x.contiguous().numpy().strides, tuple(T.tensor(c.numpy()).stride())],
                [T.tensor(x.numpy()), T.tensor(c.numpy())])
    ref, got = run_both(run)
    assert got[0] == ref[0]
    assert_same(ref[1], got[1])
