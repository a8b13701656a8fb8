"""Warnings as PyTorch's: the same category and text (less the C++ "(Triggered internally at ...)" suffix), shown
once per process where PyTorch uses TORCH_WARN_ONCE and every time where it warns every time.

Each situation is ``fn(lib)``. The every-time table runs each twice with both libraries under
``simplefilter("always")``. The once table compares the first warning with PyTorch's under
``torch.set_warn_always(True)`` (which makes TORCH_WARN_ONCE repeat, so test order does not matter), then checks that
torchish shows it once, and every time after ``torchish.set_warn_always(True)``.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from oracle import needs_torch, same_error, torch, torchish
from torchish import _global_flags


def _params(lib):
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=0.1)
    return p, opt


def _hooked(lib, module, *inputs):
    module.register_backward_hook(lambda *a: None)
    return module(*inputs)


def _two_outputs(lib):
    """A module whose forward returns two tensors made by different nodes."""
    class Two(lib.nn.Module):
        def forward(self, a):
            return a * 2, a + 1
    return Two()


EVERY_TIME = {
    "softmax without dim": lambda t: t.nn.functional.softmax(t.ones(2, 3)),
    "softmin without dim": lambda t: t.nn.functional.softmin(t.ones(2, 3)),
    "nn.Softmin without dim": lambda t: t.nn.Softmin()(t.ones(2, 3)),
    "log_softmax without dim": lambda t: t.nn.functional.log_softmax(t.ones(3)),
    ".grad of a non-leaf": lambda t: (t.ones(2, requires_grad=True) * 2).grad,
    "F.upsample": lambda t: t.nn.functional.upsample(t.ones(1, 1, 2, 2), scale_factor=2),
    "F.upsample_nearest": lambda t: t.nn.functional.upsample_nearest(t.ones(1, 1, 2, 2), scale_factor=2),
    "F.upsample_bilinear": lambda t: t.nn.functional.upsample_bilinear(t.ones(1, 1, 2, 2), scale_factor=2),
    "gumbel_softmax eps": lambda t: t.nn.functional.gumbel_softmax(t.ones(2, 3), eps=1e-5),
    "torch.range": lambda t: t.range(0, 3),
    "mse_loss target size": lambda t: t.nn.functional.mse_loss(t.ones(3, 1), t.ones(3)),
    "size_average": lambda t: t.nn.functional.l1_loss(t.ones(3), t.ones(3), size_average=False),
    "torch.tensor(tensor)": lambda t: t.tensor(t.ones(2)),
    "new_tensor(tensor)": lambda t: t.ones(2).new_tensor(t.ones(2)),
    "Variable(volatile=True)": lambda t: t.autograd.Variable(t.ones(2), volatile=True),
    "state_dict positional": lambda t: t.nn.Linear(2, 2).state_dict({}, ""),
    "sdp_kernel called": lambda t: t.backends.cuda.sdp_kernel(),
    "testing.assert_allclose": lambda t: t.testing.assert_allclose(t.ones(2), t.ones(2)),
    "scheduler.step() first": lambda t: t.optim.lr_scheduler.StepLR(_params(t)[1], 1).step(),
    "non-full hook, multiple nodes": lambda t: _hooked(t, t.nn.Linear(2, 2), t.ones(1, 2, requires_grad=True)),
    "non-full hook, two output nodes": lambda t: _hooked(t, _two_outputs(t), t.ones(2, requires_grad=True) * 1),
    "non-full hook, one node": lambda t: _hooked(t, t.nn.ReLU(), t.ones(2, requires_grad=True) * 2),
}

# situations where PyTorch does not warn (the table checks torchish adds nothing)
SILENT = {"non-full hook, one node"}


def _complex_into_real(t):
    x = t.zeros(2)
    x[0] = t.tensor(1 + 1j)
    return x


def _readonly(t):
    a = np.zeros(2)
    a.setflags(write=False)
    return t.from_numpy(a)


ONCE = {
    "conv2d padding='same', even kernel": lambda t: t.nn.functional.conv2d(t.ones(1, 1, 4, 4), t.ones(1, 1, 2, 2),
                                                                           padding="same"),
    "rms_norm dtype mismatch": lambda t: t.nn.functional.rms_norm(t.ones(2, 3), (3,), t.ones(3, dtype=t.float64)),
    "x.T of 3-D": lambda t: t.ones(2, 3, 4).T,
    "x.T of 0-D": lambda t: t.tensor(1.0).T,
    "x.mH of 0-D": lambda t: t.tensor(1.0).mH,
    "meshgrid without indexing": lambda t: t.meshgrid(t.arange(2), t.arange(3)),
    "stft without window": lambda t: t.stft(t.ones(32), 8, return_complex=True),
    "istft without window": lambda t: t.istft(t.ones(5, 9, dtype=t.complex64), 8),
    "cholesky": lambda t: t.cholesky(t.eye(2)),
    "qr": lambda t: t.qr(t.eye(2)),
    "chain_matmul": lambda t: t.chain_matmul(t.eye(2), t.eye(2)),
    "lu_solve, function then method": lambda t: [t.lu_solve(t.ones(2, 1), *t.linalg.lu_factor(t.eye(2))),
                                                 t.ones(2, 1).lu_solve(*t.linalg.lu_factor(t.eye(2)))],
    "nuclear_norm": lambda t: t.nuclear_norm(t.eye(2)),
    "frobenius_norm": lambda t: t.frobenius_norm(t.eye(2), dim=(0, 1)),
    "cross without dim": lambda t: t.cross(t.ones(3, 3), t.ones(3, 3)),
    "where with uint8": lambda t: t.where(t.tensor([1, 0], dtype=t.uint8), t.ones(2), t.zeros(2)),
    "list of ndarrays": lambda t: t.tensor([np.zeros(2), np.ones(2)]),
    "read-only numpy array": _readonly,
    "complex into real": _complex_into_real,
    "backward(create_graph=True)": lambda t: (t.ones(2, requires_grad=True) ** 2).sum().backward(create_graph=True),
    "set_default_tensor_type": lambda t: t.set_default_tensor_type(t.FloatTensor),
}


def _record(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(lib)
    return [(w.category.__name__, re.sub(r" \(Triggered internally at [^)]*\)\.?$", "", str(w.message)))
            for w in caught]


@pytest.fixture
def torch_warn_always():
    """PyTorch repeating its once-per-process warnings for the test (restored after)."""
    before = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    yield
    torch.set_warn_always(before)


@pytest.fixture(autouse=True)
def _restore_warn_always():
    """(conftest clears torchish's warn-once registry before each test)"""
    before = torchish.is_warn_always_enabled()
    yield
    torchish.set_warn_always(before)


@needs_torch
@pytest.mark.parametrize("name", sorted(EVERY_TIME))
def test_warns_every_time_as_pytorch(name):
    fn = EVERY_TIME[name]
    ref = [_record(fn, torch) for _ in range(2)]
    assert bool(ref[0]) == (name not in SILENT), ref
    assert [_record(fn, torchish) for _ in range(2)] == ref


@needs_torch
@pytest.mark.parametrize("name", sorted(ONCE))
def test_warns_once_per_process_as_pytorch(name, torch_warn_always):
    fn = ONCE[name]
    try:
        ref = _record(fn, torch)
    finally:
        torch.set_default_dtype(torch.float32)
    assert ref, "PyTorch gave no warning"
    try:
        assert _record(fn, torchish) == list(dict.fromkeys(ref))  # each message the first time only
        assert _record(fn, torchish) == []  # once per process
        torchish.set_warn_always(True)
        assert _record(fn, torchish) == ref  # ... unless warn_always is set
    finally:
        torchish.set_default_dtype(torchish.float32)


@needs_torch
def test_typed_storage_warns_once_as_pytorch():
    """Tensor.storage() warns once (PyTorch's own flag, reset here so that test order does not matter)."""
    import torch.storage as ts
    ts._warn_typed_storage_removal.__dict__["has_warned"] = False
    ref = [_record(lambda t: t.ones(2).storage(), torch) for _ in range(2)]
    assert ref[0] and not ref[1]
    assert [_record(lambda t: t.ones(2).storage(), torchish) for _ in range(2)] == ref


def test_warn_once_key_and_warn_always():
    """``warn_once`` shows a key's first message only; ``set_warn_always(True)`` shows every call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _global_flags.warn_once("first", key="k")
        _global_flags.warn_once("second", key="k")
        _global_flags.warn_once("other")
        torchish.set_warn_always(True)
        _global_flags.warn_once("third", key="k")
    assert [str(w.message) for w in caught] == ["first", "other", "third"]
    assert all(w.category is UserWarning for w in caught)


@needs_torch
@pytest.mark.parametrize("write", [
    lambda t, x, m: x.__setitem__(m, 1.0),
    lambda t, x, m: x.__setitem__((m,), t.tensor(1.0)),
    lambda t, x, m: x.index_put_((m,), t.tensor(1.0)),
])
def test_uint8_mask_with_one_value_raises_as_masked_fill(write):
    """A lone uint8 mask and a one-element value go to masked_fill_, which refuses the mask (torchish warned that
    uint8 indexing is deprecated and wrote)."""
    same_error(lambda t: write(t, t.zeros(3), t.tensor([1, 0, 1], dtype=t.uint8)))
