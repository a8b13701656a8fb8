"""Behaviour differences found by helper 143's grad_fn survey over PyTorch's OpInfo samples, each compared with
PyTorch 2.13: ``torch.gradient`` with an explicit ``spacing=None`` (PyTorch's ``Number spacing = None`` overload:
a unit spacing with an int dim or none, its overload TypeError with a dim list; torchish raised "'NoneType' object
is not iterable"), ``sum_to_size(())`` (at::sum_to sums a 0-d target outright, a 0-d input too: SumBackward0 and
int64 for integers; torchish returned a 0-d input itself and viewed the others), and ``multilabel_margin_loss`` of
a 0-d input (one class; torchish raised IndexError)."""
import warnings

import pytest

from oracle import needs_torch, same, same_error

pytestmark = needs_torch
warnings.filterwarnings("ignore", category=UserWarning)


@pytest.mark.parametrize("dim", [None, 1, -1])
def test_gradient_with_explicit_none_spacing(dim):
    same(lambda T: T.gradient(T.arange(12.0).reshape(3, 4) ** 2, spacing=None, dim=dim, edge_order=1))


@pytest.mark.parametrize("dim", [[0, 1], (1,)])
def test_gradient_none_spacing_with_a_dim_list_is_pytorchs_type_error(dim):
    same_error(lambda T: T.gradient(T.ones(3, 4), spacing=None, dim=dim))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_sum_to_size_of_a_0d_target(shape, dtype):
    def f(T):
        x = (T.arange(6.0)[:max(1, len(shape) * 3)].reshape(shape) - 2.5).to(getattr(T, dtype))
        if dtype == "float32":
            x.requires_grad_()
        r = x.sum_to_size(())
        out = [r, r is x, type(r.grad_fn).__name__ if r.grad_fn is not None else None]
        if r.requires_grad:
            r.backward()
            out.append(x.grad)
        return out
    same(f)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target", [0, -1, [0]])
def test_multilabel_margin_loss_of_a_0d_input(reduction, target):
    def f(T):
        x = T.tensor(0.5, requires_grad=True)
        r = T.nn.functional.multilabel_margin_loss(x, T.tensor(target), reduction=reduction)
        r.backward()
        return r, x.grad, type(r.grad_fn).__name__
    same(f)


CASTS = {
    "float_channels_last": lambda T, x: x.float(memory_format=T.channels_last),
    "double_channels_last": lambda T, x: x.double(memory_format=T.channels_last),
    "half_contiguous": lambda T, x: x.half(memory_format=T.contiguous_format),
    "float_preserve": lambda T, x: x.float(memory_format=T.preserve_format),
    "to_channels_last": lambda T, x: x.to(memory_format=T.channels_last),
    "to_copy": lambda T, x: x.to(copy=True),
    "to_same_dtype_copy": lambda T, x: x.to(T.float32, copy=True),
}


@pytest.mark.parametrize("case", list(CASTS))
def test_casts_with_a_memory_format_copy_as_to_copy(case):
    """``x.float(memory_format=...)`` is ``x.to(torch.float32, memory_format=...)`` (torchish ignored the format),
    and ``to``'s copies are PyTorch's _to_copy (ToCopyBackward0; torchish's were clones: CloneBackward0)."""
    def f(T):
        x = T.arange(8.0).reshape(1, 2, 2, 2).requires_grad_()
        r = CASTS[case](T, x)
        (r.double() * T.arange(8.0, dtype=T.float64).reshape(1, 2, 2, 2)).sum().backward()
        return r, r is x, r.stride(), type(r.grad_fn).__name__ if r.grad_fn is not None else None, x.grad
    same(f)
