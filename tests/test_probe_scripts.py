"""Regression tests from running tutorial-style PyTorch programs on torchish and on PyTorch."""
import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch


@needs_torch
def test_range_as_index_matches_torch():
    # "What is torch.nn really": nll = -input[range(target.shape[0]), target].mean()
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    tgt = np.array([2, 0, 1, 1])
    for lib in (torch, torchish):
        x, t = lib.tensor(a, requires_grad=True), lib.tensor(tgt)
        out = -x[range(t.shape[0]), t].mean()
        out.backward()
        if lib is torch:
            ref = (out.detach().numpy(), x.grad.numpy(), x[range(1, 3)].detach().numpy())
        else:
            got = (out.detach().numpy(), x.grad.numpy(), x[range(1, 3)].detach().numpy())
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r)
    y = torchish.zeros(3, 3)
    y[range(3), range(3)] = 1.0
    np.testing.assert_array_equal(y.numpy(), np.eye(3, dtype=np.float32))


@needs_torch
def test_autograd_variable_is_a_detached_tensor():
    for lib in (torch, torchish):
        x = lib.ones(2)
        v = lib.autograd.Variable(x, requires_grad=True)
        (v * 3).sum().backward()
        assert v is not x and v.requires_grad and not x.requires_grad
        assert isinstance(x, lib.autograd.Variable) and type(v) is lib.Tensor
        np.testing.assert_array_equal(v.grad.numpy(), [3.0, 3.0])
        assert not lib.autograd.Variable(x).requires_grad
        with pytest.raises(TypeError):
            lib.autograd.Variable([1.0, 2.0])


@needs_torch
def test_legacy_tensor_constructor_rejects_requires_grad():
    for lib in (torch, torchish):
        with pytest.raises(TypeError):
            lib.Tensor([1.0, 2.0], requires_grad=True)


def _prune_run(lib):
    import importlib
    prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")
    rng = np.random.default_rng(0)
    conv, lin = lib.nn.Conv2d(2, 4, 3), lib.nn.Linear(6, 3)
    with lib.no_grad():
        for p in list(conv.parameters()) + list(lin.parameters()):
            p.copy_(lib.tensor(rng.uniform(-1, 1, tuple(p.shape)).astype(np.float32)))
    prune.l1_unstructured(conv, "bias", amount=2)
    prune.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
    prune.ln_structured(conv, "weight", amount=1, n=1, dim=1)       # combined through a PruningContainer
    hook = next(h for h in conv._forward_pre_hooks.values() if h._tensor_name == "weight")
    x = lib.tensor(rng.standard_normal((1, 2, 5, 5)).astype(np.float32))
    conv(x).sum().backward()
    out = [conv.weight_mask, conv.bias, conv.weight_orig.grad, sorted(conv.state_dict()), [type(m).__name__ for m in hook]]
    prune.remove(conv, "weight")
    out += [type(conv.weight).__name__, sorted(n for n, _ in conv.named_parameters()), conv.weight]
    # (no ties among the scores: PyTorch's topk orders equal values by its selection algorithm)
    prune.global_unstructured([(lin, "weight"), (conv, "bias")], pruning_method=prune.L1Unstructured, amount=0.3)
    prune.custom_from_mask(lin, "bias", mask=lib.tensor([1, 0, 1]))
    out += [lin.weight_mask, conv.bias_mask, lin(lib.ones(1, 6)), prune.is_pruned(lin)]
    errors = []
    for bad in (lambda: prune.remove(lib.nn.Linear(2, 2), "weight"),
                lambda: prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=1.5),
                lambda: prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=9),
                lambda: prune.ln_structured(lib.nn.Linear(2, 2), "bias", amount=1, n=2, dim=0),
                lambda: prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount="a")):
        try:
            bad()
            errors.append(None)
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            errors.append(type(e).__name__)
    return out, errors


@needs_torch
def test_nn_utils_prune_matches_torch():
    (ref, ref_err), (got, got_err) = _prune_run(torch), _prune_run(torchish)
    assert got_err == ref_err
    for r, g in zip(ref, got):
        if hasattr(r, "detach"):
            np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-5, atol=1e-6)
        else:
            assert g == r
