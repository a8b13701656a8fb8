"""``Embedding(sparse=True)`` / ``F.embedding(..., sparse=True)`` / ``EmbeddingBag(sparse=True)``: the weight's
gradient is a sparse COO tensor with PyTorch's entries (indices, values, coalesced flag, nnz), accumulated as
PyTorch accumulates it, and read by the optimizers as PyTorch's are. Every case runs in torch and torchish.

Most gradients reaching a lookup here are contiguous (an explicit ``gradient=`` or a product with a tensor), which
PyTorch's sparse add merges; ``test_broadcast_output_gradients_concatenate`` covers the ``sum`` patterns whose
values PyTorch keeps as a broadcast view, which it concatenates.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchish

from oracle import arr, needs_torch, torch

pytestmark = needs_torch

TOL = dict(rtol=2e-4, atol=2e-5)
W0 = arr(5, 3, seed=1)
G0 = arr(2, 3, 3, seed=2)


def _np(t):
    # (a copy: PyTorch cannot resize storage numpy() has shared, which a sparse gradient's refill after zero_() does)
    return t.detach().clone().numpy()


def _entries(g):
    """Everything PyTorch shows of a sparse gradient."""
    if g is None:
        return None
    if not g.is_sparse:
        return ("dense", str(g.layout), str(g.dtype), _np(g))
    c = g.coalesce()
    return (str(g.layout), g.is_coalesced(), g._nnz(), g._indices().tolist(), _np(g._values()), str(g.dtype),
            tuple(g.shape), _np(g.to_dense()), c._indices().tolist(), _np(c._values()), g.requires_grad)


def _same(a, b, **tols):
    tols = tols or TOL
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y, **tols)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
        np.testing.assert_allclose(b, a, **tols)
    elif isinstance(a, float):
        assert isinstance(b, float), (a, b)
        np.testing.assert_allclose(b, a, **tols)
    else:
        assert a == b, (a, b)


def both(fn, **tols):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = fn(torch)
        got = fn(torchish)
    _same(ref, got, **tols)
    return got


def _weight(lib, dtype="float32"):
    return lib.tensor(W0.astype(dtype), requires_grad=True)


@pytest.mark.parametrize("padding_idx", [None, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_gradient_is_sparse_with_torch_entries(padding_idx, dtype):
    def run(lib):
        w = _weight(lib, dtype)
        idx = lib.tensor([[0, 1, 2], [2, 4, 1]])
        out = lib.nn.functional.embedding(idx, w, padding_idx=padding_idx, sparse=True)
        out.backward(lib.tensor(G0.astype(dtype)))
        return _entries(w.grad), str(out.grad_fn.name())
    both(run)


def test_embedding_single_empty_and_all_padding_lookups():
    def run(lib):
        F = lib.nn.functional
        w = _weight(lib)
        F.embedding(lib.tensor(2), w, sparse=True).backward(lib.tensor([1., 2., 3.]))
        one = _entries(w.grad)
        w = _weight(lib)
        F.embedding(lib.tensor([], dtype=lib.long), w, sparse=True).sum().backward()
        empty = _entries(w.grad)
        w = _weight(lib)
        F.embedding(lib.tensor([3, 3], dtype=lib.int32), w, padding_idx=3, sparse=True).sum().backward()
        return one, empty, _entries(w.grad)
    both(run)


@pytest.mark.parametrize("case", ["sum_pad", "mean_pad", "sum_psw", "mean_2d", "mean_empty_bag", "last_offset"])
def test_embedding_bag_gradient_is_sparse_with_torch_entries(case):
    def run(lib):
        w = _weight(lib)
        idx = lib.tensor([0, 2, 2, 4, 1])
        kw = dict(sparse=True)
        offsets = lib.tensor([0, 2])
        g = lib.tensor(G0[0, :2])
        if case in ("sum_pad", "mean_pad"):
            kw.update(mode=case[:-4], padding_idx=1)
        elif case == "sum_psw":
            kw.update(mode="sum", per_sample_weights=lib.tensor([1., 2., 3., 4., 5.]))
        elif case == "mean_2d":
            idx, offsets = lib.tensor([[0, 2], [2, 4]]), None
        elif case == "mean_empty_bag":
            offsets, g = lib.tensor([0, 2, 2]), lib.tensor(G0[0])
        else:
            offsets, kw["include_last_offset"] = lib.tensor([0, 2, 5]), True
        lib.nn.functional.embedding_bag(idx, w, offsets, **kw).backward(g)
        return _entries(w.grad)
    both(run)


def test_embedding_bag_module_and_max_mode_error():
    def run(lib):
        lib.manual_seed(0)
        bag = lib.nn.EmbeddingBag(5, 3, mode="sum", sparse=True)
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(W0))
        bag(lib.tensor([1, 3, 3]), lib.tensor([0, 1])).backward(lib.tensor(G0[1, :2]))
        try:
            lib.nn.functional.embedding_bag(lib.tensor([1, 2]), bag.weight, lib.tensor([0]), mode="max", sparse=True)
            err = None
        except ValueError as e:
            err = str(e)
        return _entries(bag.weight.grad), err
    got = both(run)
    assert got[1] == "max mode does not support sparse weights"


def _lookup(lib, w, idx, k=1.0):
    """A lookup whose gradient is contiguous (a product with a tensor), scaled by ``k``."""
    scale = lib.tensor(np.array([1.0, -2.0, 0.5], np.float32) * k)
    return (lib.nn.functional.embedding(lib.tensor(idx), w, sparse=True) * scale).sum()


def test_accumulation_across_backward_calls_merges_in_place():
    def run(lib):
        w = _weight(lib)
        _lookup(lib, w, [1, 2]).backward()
        first = w.grad
        steps = [_entries(w.grad)]
        _lookup(lib, w, [0, 2, 3], 2.0).backward()
        steps.append(_entries(w.grad))
        _lookup(lib, w, [2], 3.0).backward()  # a coalesced one-entry gradient into an uncoalesced one
        steps.append(_entries(w.grad))
        return steps, w.grad is first
    got = both(run)
    assert got[1] is True


def test_two_lookups_in_one_backward_and_mixed_dense_sparse():
    def run(lib):
        w = _weight(lib)
        (_lookup(lib, w, [3, 1]) + _lookup(lib, w, [0, 2], 2.0)).backward()
        one_graph = _entries(w.grad)
        w = _weight(lib)
        (_lookup(lib, w, [3, 1]) + (w * 2).sum()).backward()  # sparse + dense in one backward: dense
        mixed = _entries(w.grad)
        w = _weight(lib)
        (w * 2).sum().backward()
        _lookup(lib, w, [1, 2]).backward()  # dense .grad += sparse: dense
        dense_first = _entries(w.grad)
        w = _weight(lib)
        _lookup(lib, w, [1, 2]).backward()
        (w * 2).sum().backward()  # sparse .grad + dense: dense
        return one_graph, mixed, dense_first, _entries(w.grad)
    got = both(run)
    assert got[1][0] == got[2][0] == got[3][0] == "dense"


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_of_a_sparse_gradient(set_to_none):
    def run(lib):
        emb = lib.nn.Embedding(5, 3, sparse=True)
        opt = lib.optim.SGD(emb.parameters(), lr=0.1)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(W0))
        _lookup(lib, emb.weight, [1, 2]).backward()
        opt.zero_grad(set_to_none=set_to_none)
        zeroed = _entries(emb.weight.grad)
        _lookup(lib, emb.weight, [4, 0]).backward()
        after = _entries(emb.weight.grad)
        emb.zero_grad(set_to_none=set_to_none)
        return zeroed, after, _entries(emb.weight.grad)
    both(run)


def test_hook_retain_graph_and_autograd_grad_see_sparse_gradients():
    def run(lib):
        w = _weight(lib)
        seen = []
        w.register_hook(lambda g: seen.append(_entries(g)))
        loss = _lookup(lib, w, [4, 1, 4])
        loss.backward(retain_graph=True)
        loss.backward()
        g, = lib.autograd.grad(_lookup(lib, w, [0, 3]), w)
        return seen, _entries(w.grad), _entries(g)
    both(run)


def test_create_graph_through_a_sparse_lookup():
    def run(lib):
        w = _weight(lib)
        out = lib.nn.functional.embedding(lib.tensor([1, 2, 1]), w, sparse=True)
        g, = lib.autograd.grad((out ** 2).sum(), w, create_graph=True)
        first = _entries(g)
        (g.to_dense() * lib.tensor(W0)).sum().backward()
        return first, _entries(w.grad)
    both(run)


def _train(lib, make_opt, steps=((0, 2, 2), (1, 2), (4,))):
    emb = lib.nn.Embedding(5, 3, sparse=True)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(W0))
    opt = make_opt(lib, emb.parameters())
    for k, idx in enumerate(steps):
        opt.zero_grad()
        _lookup(lib, emb.weight, list(idx), 1.0 + k).backward()
        opt.step()
    state = [(k, _entries(v) if isinstance(v, lib.Tensor) else v) for k, v in sorted(opt.state[emb.weight].items())]
    return _np(emb.weight), state, _entries(emb.weight.grad)


@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.3, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, foreach=True)),
    ("Adagrad", dict(lr=0.1)), ("Adagrad", dict(lr=0.1, lr_decay=0.1)), ("SparseAdam", dict(lr=0.1)),
    ("SparseAdam", dict(lr=0.1, maximize=True))])
def test_optimizers_step_with_sparse_gradients(name, kw):
    both(lambda lib: _train(lib, lambda lib, p: getattr(lib.optim, name)(p, **kw)))


def test_sparse_adam_updates_rows_looked_up_with_zero_gradient():
    # a row looked up whose gradient is exactly zero is still an entry: PyTorch's SparseAdam moves its moments
    def run(lib):
        emb = lib.nn.Embedding(5, 3, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(W0))
        opt = lib.optim.SparseAdam(emb.parameters(), lr=0.1)
        for idx, k in (([1, 2], 1.0), ([1, 3], 0.0)):
            opt.zero_grad()
            _lookup(lib, emb.weight, idx, k).backward()
            opt.step()
        return _np(emb.weight), _np(opt.state[emb.weight]["exp_avg"]), _np(opt.state[emb.weight]["exp_avg_sq"])
    both(run)


@pytest.mark.parametrize("name,kw", [
    ("Adam", {}), ("AdamW", {}), ("RMSprop", {}), ("SGD", dict(lr=0.1, weight_decay=0.1)),
    ("Adagrad", dict(weight_decay=0.1))])
def test_optimizers_refuse_sparse_gradients_with_torch_message(name, kw):
    def run(lib):
        emb = lib.nn.Embedding(5, 3, sparse=True)
        opt = getattr(lib.optim, name)(emb.parameters(), **kw)
        _lookup(lib, emb.weight, [1]).backward()
        with pytest.raises(RuntimeError) as e:
            opt.step()
        return str(e.value)
    both(run)


@pytest.mark.parametrize("util", ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"])
def test_grad_utilities_refuse_sparse_gradients(util):
    def run(lib):
        emb = lib.nn.Embedding(5, 3, sparse=True)
        _lookup(lib, emb.weight, [1, 1]).backward()
        fn = getattr(lib.nn.utils, util)
        arg = [emb.weight.grad] if util == "get_total_norm" else emb.parameters()
        with pytest.raises(NotImplementedError) as e:
            fn(arg, 0.5) if util != "get_total_norm" else fn(arg)
        return str(e.value).split(" This could be")[0], _entries(emb.weight.grad)
    both(run)


def test_compiled_step_with_a_sparse_embedding_equals_eager():
    def run(lib, compiled):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(5, 3, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(W0))
        opt = lib.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)

        def step(idx):
            opt.zero_grad()
            loss = _lookup(lib, emb.weight, idx)
            loss.backward()
            opt.step()
            return loss
        if compiled:
            step = lib.compile(step)
        losses = [step(i).item() for i in ([0, 2], [2, 3], [1, 4])]
        return losses, _np(emb.weight), _entries(emb.weight.grad)
    ref = run(torch, False)
    _same(ref, run(torchish, False))
    _same(ref, run(torchish, True))


@pytest.mark.parametrize("op", ["mul_", "mul_0d", "mul_row", "div_", "idiv", "imul", "neg_", "add_", "sub_",
                                "add_alpha", "copy_", "clamp_", "fill_", "clip_grads_with_norm_"])
def test_in_place_ops_on_a_sparse_gradient_keep_its_entries(op):
    # gradients scaled or summed by hand: PyTorch scales the entries; torchish kept stale ones before
    def weight(lib, idx=(2, 0, 2)):
        w = _weight(lib)
        _lookup(lib, w, list(idx)).backward()
        return w

    def grad(lib, idx=(2, 0, 2)):
        return weight(lib, idx).grad

    def run(lib):
        w = weight(lib)
        g = w.grad
        calls = {"mul_": lambda: g.mul_(2.0), "mul_0d": lambda: g.mul_(lib.tensor(0.5)),
                 "mul_row": lambda: g.mul_(lib.tensor([1., 2., 3.])), "div_": lambda: g.div_(2),
                 "idiv": lambda: g.__itruediv__(4), "imul": lambda: g.__imul__(3), "neg_": lambda: g.neg_(),
                 "add_": lambda: g.add_(grad(lib, (1, 2))), "sub_": lambda: g.sub_(grad(lib)),
                 "add_alpha": lambda: g.add_(grad(lib, (0,)), alpha=2), "copy_": lambda: g.copy_(grad(lib, (4, 4))),
                 "clamp_": lambda: g.clamp_(-1, 1), "fill_": lambda: g.fill_(1.0),
                 "clip_grads_with_norm_": lambda: lib.nn.utils.clip_grads_with_norm_([w], 1.0, lib.tensor(10.0))}
        try:
            r = calls[op]()
        except NotImplementedError as e:
            return str(e).split(" This could")[0], _entries(g)
        return r is g or r is None, _entries(g)
    both(run)


@pytest.mark.parametrize("hook", ["to_dense", "times2", "coalesce", "to_sparse"])
def test_weight_hook_results_for_a_sparse_gradient(hook):
    # a hook's result must keep the sparse type (PyTorch's "changed the type" error); the first .grad is a shallow
    # copy of its entries, coalesced only with fewer than two (PyTorch's _sparse_coo_tensor_unsafe)
    def run(lib):
        w = _weight(lib)
        w.register_hook({"to_dense": lambda g: g.to_dense(), "times2": lambda g: g * 2,
                         "coalesce": lambda g: g.coalesce(), "to_sparse": lambda g: g.to_dense().to_sparse()}[hook])
        try:
            _lookup(lib, w, [2, 0, 2]).backward()
        except RuntimeError as e:
            return str(e)
        return _entries(w.grad)
    both(run)


def test_backward_create_graph_accumulates_sparse_gradients_with_graphs():
    def run(lib):
        w = _weight(lib)
        F = lib.nn.functional
        (F.embedding(lib.tensor([2, 0, 2]), w, sparse=True) ** 2).sum().backward(create_graph=True)
        first = w.grad
        steps = [_entries(first)]
        (F.embedding(lib.tensor([1, 2]), w, sparse=True) ** 3).sum().backward(create_graph=True)
        steps.append(_entries(w.grad))
        v, = lib.autograd.grad(w.grad.to_dense().sum(), w)
        return steps, w.grad is first, _entries(v)
    both(run)


_REDUCTIONS = {
    "sum": lambda lib, o: o.sum(), "sum_dim0": lambda lib, o: (o.sum(0) * lib.tensor([1., 2., 3.])).sum(),
    "sum_last": lambda lib, o: (o.sum(-1) * 2).sum(), "sum_keep": lambda lib, o: (o.sum(0, True) * 2).sum(),
    "mean": lambda lib, o: o.mean(), "sum_plus_sum": lambda lib, o: o.sum() + o.sum()}


@pytest.mark.parametrize("reduction", list(_REDUCTIONS))
@pytest.mark.parametrize("idx", [[[0, 2], [2, 4]], [1, 2, 1]])
def test_broadcast_output_gradients_concatenate(reduction, idx):
    # emb(x).sum(): PyTorch's values are a view of the expanded gradient (not contiguous), and its sparse add
    # concatenates such entry lists (across backward calls and within one) where it merges contiguous ones
    def run(lib):
        F, f = lib.nn.functional, _REDUCTIONS[reduction]
        w = _weight(lib)
        steps = []
        for pad in (None, None, 4):  # (padding_idx: PyTorch's values are a gathered copy, contiguous)
            f(lib, F.embedding(lib.tensor(idx), w, padding_idx=pad, sparse=True)).backward()
            steps.append(_entries(w.grad))
        _lookup(lib, w, [2, 1]).backward()
        steps.append(_entries(w.grad))
        w = _weight(lib)
        (f(lib, F.embedding(lib.tensor([3, 1]), w, sparse=True)) + _lookup(lib, w, [0, 2])).backward()
        return steps, _entries(w.grad)
    both(run)


def test_concatenated_entries_coalesce_past_numel():
    # PyTorch coalesces a concatenation that has more entries than the tensor has elements
    def run(lib):
        w = lib.tensor([[1.0], [2.0]], requires_grad=True)
        seen = []
        for _ in range(2):
            lib.nn.functional.embedding(lib.tensor([0, 1, 0]), w, sparse=True).sum().backward()
            seen.append(_entries(w.grad))
        return seen
    both(run)


def test_sgd_momentum_buffer_of_broadcast_gradients():
    def run(lib):
        emb = lib.nn.Embedding(5, 3, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(W0))
        opt = lib.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)
        for idx in ([0, 2, 2], [1, 2], [2]):
            opt.zero_grad()
            emb(lib.tensor(idx)).sum().backward()
            opt.step()
        return _np(emb.weight), _entries(opt.state[emb.weight]["momentum_buffer"])
    both(run)
