"""Small differences from PyTorch found in a list of known ones: in-place writes into expanded tensors, conv_tbc,
torch.cuda.is_current_stream_capturing, optimizer state of the wrong shape, sort's argument errors, the strides of
tensors made from numpy arrays, and tensors made from an UntypedStorage. Each ``case_*`` is written against the
PyTorch API only and compared with torch (tests/oracle.py)."""
import warnings

import numpy as np
import pytest

from oracle import formula_data as _data, same_error, script_test, needs_torch


def case_inplace_writes_into_expanded_tensors(lib):
    # PyTorch checks internal overlap only in some in-place ops: these write an expanded view (each changed element
    # lands in the one shared location); the others (add_, fill_ of a tensor, a write recorded by autograd) refuse
    warnings.simplefilter("ignore")  # (PyTorch warns that masked_fill_/index_fill_/index_put_ on one is deprecated)
    ops = [lambda t: t.tril_(), lambda t: t.triu_(), lambda t: t.tril_(-1), lambda t: t.triu_(1),
           lambda t: t.zero_(), lambda t: t.fill_(2.5),
           lambda t: t.masked_fill_(lib.tensor([[True, False, False]] * 3), 7.),
           lambda t: t.index_fill_(1, lib.tensor([0, 2]), 7.), lambda t: t.fill_diagonal_(7.),
           lambda t: t.index_put_((lib.tensor([0]),), lib.tensor(7.)),
           lambda t: lib.nn.functional.threshold_(t, 0.8, 9.),
           lambda t: lib.nn.functional.threshold(t, 0.8, 9., inplace=True),
           lambda t: t.__setitem__(lib.tensor([[True, False, False]] * 3), 7.),  # (advanced indexing: index_put_)
           lambda t: t.__setitem__((lib.tensor([0]),), 7.), lambda t: t.__setitem__((slice(None), lib.tensor([0])), 7.)]
    out = []
    for op in ops:
        base = _data(lib, 3)
        t = base.expand(3, 3)
        op(t)
        out.append((base, t.stride()))
    refused = []
    for op in [lambda t: t.add_(1), lambda t: t.fill_(lib.tensor(2.)), lambda t: t[:, 0].fill_(1.) and t.add_(1)]:
        try:
            op(_data(lib, 3).expand(3, 3))
            refused.append("ok")
        except RuntimeError as e:
            refused.append(str(e))
    return out, refused


def case_conv_tbc(lib):
    # fairseq's time-batch-channel convolution: values, gradients, layout, node name; a negative pad crops
    out = []
    for pad in (1, 0, -1, 2):
        x = _data(lib, 6, 2, 3).requires_grad_()
        w = _data(lib, 3, 3, 4, seed=1).requires_grad_()
        b = _data(lib, 4, seed=2).requires_grad_()
        y = lib.conv_tbc(x, w, b, pad)
        (y * _data(lib, *y.shape, seed=3)).sum().backward()
        out.append((y, y.stride(), type(y.grad_fn).__name__, x.grad, w.grad, b.grad))
    out.append(lib.nn.functional.conv_tbc(_data(lib, 4, 1, 2, dtype=lib.float64), _data(lib, 2, 2, 3, dtype=lib.float64),
                                          _data(lib, 3, dtype=lib.float64)))
    with lib.autocast("cpu", dtype=lib.bfloat16):
        out.append(lib.conv_tbc(_data(lib, 4, 1, 2), _data(lib, 2, 2, 3), _data(lib, 3), 1).dtype)
    return out


def case_optimizer_state_of_another_shape(lib):
    # state edited by hand to a wrong shape: PyTorch's elementwise ops raise their broadcast RuntimeError (which of
    # the two shapes it names first depends on the op, so only the kind of message is compared); nothing is written
    out = []
    for make, key in [(lambda ps: lib.optim.Rprop(ps), "prev"), (lambda ps: lib.optim.Adam(ps), "exp_avg"),
                      (lambda ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9), "momentum_buffer"),
                      (lambda ps: lib.optim.Adagrad(ps), "sum"), (lambda ps: lib.optim.RMSprop(ps), "square_avg")]:
        p = lib.nn.Parameter(_data(lib, 3))
        o = make([p])
        p.grad = _data(lib, 3, seed=1)
        o.step()
        o.state[p][key] = lib.ones(4)
        try:
            o.step()
            out.append("stepped")
        except RuntimeError as e:
            out.append(str(e).startswith("The size of tensor a ("))
        out.append(p.detach().clone())
    return out


def case_numpy_strides(lib):
    # a dense numpy array keeps its exact strides, a size-1 dim's too; other arrays are copied dense in their
    # memory order (from_numpy/as_tensor of a gapped array are left out: PyTorch shares numpy's memory and keeps
    # its gaps, (4, 2) for ones((2, 4))[:, ::2]; torchish copies dense)
    arrays = [np.ascontiguousarray(np.ones((2, 1, 2), np.float32).swapaxes(0, 1)),
              np.ones((2, 1, 1), np.float64).transpose(1, 0, 2), np.ones(2, np.float32)[::2],
              np.ones((3, 1, 2), np.int16)[1:2], np.ones((3, 1, 4), np.float32).transpose(2, 1, 0),
              np.ones((4, 1), np.float32)[::2], np.arange(12, dtype=np.float32).reshape(3, 4)[::2, ::2]]
    out = []
    for a in arrays:
        t = lib.tensor(a)
        out.append((t, t.stride(), t.is_contiguous(), lib.tensor(a, dtype=lib.float64).stride(), (t + 1).stride(),
                    t.clone().stride(), lib.empty_like(t).stride()))
        if a.flags.c_contiguous:
            out.append((lib.from_numpy(a).stride(), lib.as_tensor(a).stride()))
    return out


def case_sort_arguments(lib):
    x = _data(lib, 5)
    return [x.sort(dim=0, stable=True), x.sort(0, True), lib.sort(x, descending=True), x.argsort(descending=True, dim=0),
            lib.argsort(x, 0, True), lib.sort(x, -1, False), x.argsort(stable=True)]


def case_tensor_from_untyped_storage(lib):
    # an UntypedStorage's bytes as whole elements of the dtype asked (int64 when none is; a new storage's bytes are
    # uninitialised in PyTorch: its shape only); a typed storage's elements as they are
    s = _data(lib, 3).untyped_storage()
    out = [lib.tensor(s), lib.tensor(s, dtype=lib.float32), lib.tensor(s, dtype=lib.uint8), lib.as_tensor(s),
           lib.tensor(s, dtype=lib.float64), lib.tensor(lib.UntypedStorage(5), dtype=lib.int16).shape,
           lib.tensor(_data(lib, 2, 2, dtype=lib.float64).untyped_storage(), dtype=lib.complex64)]
    warnings.simplefilter("ignore")  # (TypedStorage is deprecated)
    out.append(lib.tensor(_data(lib, 3).storage()))
    return out


@needs_torch
@pytest.mark.parametrize("args", [
    lambda lib: (_data(lib, 6, 3), _data(lib, 3, 3, 4), _data(lib, 4)),
    lambda lib: (_data(lib, 6, 2, 3), _data(lib, 3, 4), _data(lib, 4)),
    lambda lib: (_data(lib, 6, 2, 3), _data(lib, 3, 3, 4), _data(lib, 1, 4)),
    lambda lib: (_data(lib, 6, 2, 3), _data(lib, 3, 2, 4), _data(lib, 4)),
    lambda lib: (_data(lib, 6, 2, 3), _data(lib, 3, 3, 4), _data(lib, 5)),
    lambda lib: (_data(lib, 6, 2, 3), _data(lib, 3, 3, 4), _data(lib, 4), 1.5),
    lambda lib: (_data(lib, 6, 2, 3, dtype=lib.float64), _data(lib, 3, 3, 4), _data(lib, 4)),
])
def test_conv_tbc_errors(args):
    same_error(lambda lib: lib.conv_tbc(*args(lib)))


@needs_torch
@pytest.mark.parametrize("call", [
    lambda lib, x: x.sort(0, stable=True), lambda lib, x: lib.sort(x, 0, stable=True),
    lambda lib, x: x.sort(0, True, stable=True), lambda lib, x: lib.sort(x, 0, True, stable=True),
    lambda lib, x: x.argsort(0, stable=True), lambda lib, x: lib.argsort(x, 0, stable=True),
    lambda lib, x: x.argsort(0, True, stable=True), lambda lib, x: lib.argsort(x, 0, True, stable=True),
    lambda lib, x: x.sort(0, stable=1), lambda lib, x: x.sort(0, True, False), lambda lib, x: lib.sort(x, 0, True, False),
    lambda lib, x: x.sort(0, descending=True, stable=True), lambda lib, x: x.argsort(0, True, False),
])
def test_sort_argument_errors(call):
    # PyTorch's argument parser: the method and the function word it differently (their overloads differ), and
    # one plausible overload gives its own "takes from .. positional arguments" message
    same_error(lambda lib: call(lib, lib.arange(4.)))


test_script_matches_torch = script_test(globals())


@needs_torch
def test_cuda_is_current_stream_capturing_without_cuda():
    # a CPU-only PyTorch build raises from its dummy CUDA binding (with an accelerator torchish says False)
    from oracle import torchish
    if torchish.cuda.is_available():
        assert torchish.cuda.is_current_stream_capturing() is False
        return
    same_error(lambda lib: lib.cuda.is_current_stream_capturing())


def test_detach_of_a_view_in_place_error():
    # PyTorch's whole message, with its DDP gradient_as_bucket_view paragraph (torchish stopped after "instead.")
    same_error(lambda lib: lib.arange(3.).expand(3, 3).detach_())
