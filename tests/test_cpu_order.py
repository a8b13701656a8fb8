"""Which index sort, topk, kthvalue and mode return among equal values (and the order of an unsorted topk):
PyTorch's CPU kernels' algorithms, replayed on the host (``torchish/ops/cpu_order.py``), against torch on tie-heavy
data."""
from __future__ import annotations

import numpy as np
import pytest

import torchish
from oracle import needs_torch, same, same_error, torch
from torchish.ops import cpu_order


def _row(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 2, 3, 4, 5, 16, 17, 20, 33, 64, 65, 130]))
    x = rng.integers(0, int(rng.choice([2, 3, 5, 1000])), n).astype(np.float32)
    if rng.random() < 0.25:
        x[rng.random(n) < 0.2] = np.nan
    k = int(rng.integers(1, n + 1))
    return x, k, bool(rng.random() < 0.5), bool(rng.random() < 0.5)


@needs_torch
@pytest.mark.parametrize("block", range(4))
def test_rows_replay_pytorch_kernels(block):
    """std::partial_sort / nth_element / sort (libstdc++), PyTorch's quickselect, and mode's run scan, row by
    row: 150 random rows per block, with NaNs and many ties."""
    for seed in range(block * 150, (block + 1) * 150):
        x, k, largest, sorted_ = _row(seed)
        t = torch.tensor(x)
        assert cpu_order.topk_row(x, k, largest, sorted_) == \
            torch.topk(t, k, largest=largest, sorted=sorted_).indices.tolist(), seed
        assert cpu_order.kthvalue_row(x, k) == torch.kthvalue(t, k).indices.item(), seed
        assert cpu_order.mode_row(x) == torch.mode(t).indices.item(), seed
        comp = cpu_order.greater if largest else cpu_order.less
        assert cpu_order.sort_row(x, comp) == torch.sort(t, descending=largest).indices.tolist(), seed


def _data(seed, shape, dt, nan=False):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, shape).astype(np.float64)
    if nan:
        x[rng.random(shape) < 0.2] = np.nan
    return x, dt


CASES = [((4, 7), "float32", False), ((3, 5, 6), "int64", False), ((2, 70), "float32", True),
         ((6, 4), "bfloat16", False), ((5, 3), "uint8", False), ((130,), "float64", True)]


@pytest.mark.parametrize("shape,dt,nan", CASES)
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("largest,sorted_", [(True, True), (False, True), (True, False), (False, False)])
def test_topk_among_ties(shape, dt, nan, dim, largest, sorted_):
    x, _ = _data(1, shape, dt, nan)
    for k in sorted({1, 2, shape[dim] // 2 or 1, shape[dim]}):
        same(lambda m: m.topk(m.tensor(x).to(getattr(m, dt)), k, dim, largest, sorted_))


@pytest.mark.parametrize("shape,dt,nan", CASES)
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_and_mode_among_ties(shape, dt, nan, dim, keepdim):
    x, _ = _data(2, shape, dt, nan)
    for k in sorted({1, shape[dim] // 2 or 1, shape[dim]}):
        same(lambda m: m.kthvalue(m.tensor(x).to(getattr(m, dt)), k, dim, keepdim))
    same(lambda m: m.mode(m.tensor(x).to(getattr(m, dt)), dim, keepdim))


@pytest.mark.parametrize("shape,dt,nan", CASES + [((17, 1), "float32", False)])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_among_ties(shape, dt, nan, dim, descending):
    """Rows longer than 16 with equal values come in std::sort's order (not the stable one) unless ``stable=True``;
    PyTorch's radix sort of a long 1-d integer tensor (ascending) is stable."""
    x, _ = _data(7, shape, dt, nan)
    same(lambda m: m.sort(m.tensor(x).to(getattr(m, dt)), dim, descending))
    same(lambda m: m.sort(m.tensor(x).to(getattr(m, dt)), dim=dim, descending=descending, stable=False))
    same(lambda m: m.sort(m.tensor(x).to(getattr(m, dt)), dim=dim, descending=descending, stable=True))
    same(lambda m: m.tensor(x).to(getattr(m, dt)).argsort(dim, descending))
    same(lambda m: m.argsort(m.tensor(x).to(getattr(m, dt)), dim=dim, descending=descending, stable=True))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_of_a_long_integer_vector(descending):
    """PyTorch radix-sorts a 1-d integer tensor of at least 32768 elements ascending (stably): the same indices.
    Descending, it std::sorts it; a sort past ``cpu_order.SORT_MAX_ELEMENTS`` is not replayed (seconds of Python):
    the same values, and the ties' indices in the stable order."""
    x, _ = _data(8, (33000,), "int64")
    if not descending:
        same(lambda m: m.sort(m.tensor(x).long(), descending=descending))
    v, i = torchish.sort(torchish.tensor(x).long(), descending=descending)
    expected = np.argsort(-x if descending else x, kind="stable")
    np.testing.assert_array_equal(np.asarray(i.numpy()), expected)
    np.testing.assert_array_equal(np.asarray(v.numpy()), x[expected].astype(np.int64))
    if torch is not None:
        np.testing.assert_array_equal(np.asarray(v.numpy()), torch.sort(torch.tensor(x).long(),
                                                                      descending=descending).values.numpy())


def test_sort_replays_up_to_its_budget(monkeypatch):
    """A sort with ties larger than the budget keeps the stable order instead of replaying std::sort."""
    x = np.array([1., 3., 3., 2., 3., 1.] * 3, np.float32)
    replayed = np.asarray(torchish.tensor(x).sort().indices.numpy())
    assert not np.array_equal(replayed, np.argsort(x, kind="stable"))  # (18 elements with ties: std::sort's order)
    if torch is not None:
        np.testing.assert_array_equal(replayed, torch.tensor(x).sort().indices.numpy())
    monkeypatch.setattr(cpu_order, "SORT_MAX_ELEMENTS", 17)
    np.testing.assert_array_equal(np.asarray(torchish.tensor(x).sort().indices.numpy()), np.argsort(x, kind="stable"))


def test_sort_of_an_expanded_dim_keeps_the_filled_indices():
    """PyTorch does not sort a dim of stride 0: its indices stay 0, 1, 2, ... (equal values all)."""
    same(lambda m: (m.zeros(1).expand(20).sort(), m.zeros(3, 1).expand(3, 20).sort(1, True),
                    m.zeros(3, 1).expand(3, 20).contiguous().sort(1, True)))


LENGTHS = [3, 1, 2, 3, 2, 1, 3, 3, 2, 1, 2, 3, 1, 1, 2, 3, 2, 2, 1, 3]


@pytest.mark.parametrize("n", [16, 20])
def test_pack_unsorted_sequences_in_sorts_order(n):
    """pack_padded_sequence / pack_sequence(enforce_sorted=False) order the batch by ``torch.sort(lengths,
    descending=True)``: beyond 16 sequences, equal lengths come in std::sort's order (the packed data, batch
    sizes and both index maps), and unpacking restores the caller's order."""
    lens = LENGTHS[:n]

    def f(m):
        x = m.arange(n * 3 * 2.).view(n, 3, 2)
        p = m.nn.utils.rnn.pack_padded_sequence(x, m.tensor(lens), batch_first=True, enforce_sorted=False)
        q = m.nn.utils.rnn.pack_sequence([m.full((k, 2), float(i)) for i, k in enumerate(lens)], enforce_sorted=False)
        back, back_lens = m.nn.utils.rnn.pad_packed_sequence(p, batch_first=True)
        return p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices, q.data, q.sorted_indices, back, back_lens
    same(f)


@pytest.mark.parametrize("op", [lambda m, t: m.topk(t, 3, 1, True, False).values,
                                lambda m, t: m.sort(t, 1, True).values,
                                lambda m, t: m.sort(t, dim=1, stable=False).values,
                                lambda m, t: m.kthvalue(t, 2, 1).values, lambda m, t: m.mode(t, 1).values])
def test_gradients_reach_the_replayed_positions(op):
    x, _ = _data(3, (4, 19), "float32")

    def f(m):
        t = m.tensor(x, requires_grad=True)
        v = op(m, t)
        (v * m.arange(v.numel()).reshape(v.shape).float()).sum().backward()
        return v.detach(), t.grad, type(v.grad_fn).__name__
    same(f)


def test_out_arguments_take_the_replayed_result():
    x, _ = _data(4, (3, 6), "float32")

    def f(m):
        t = m.tensor(x).float()
        vals, idx = m.empty(0), m.empty(0, dtype=m.int64)
        m.topk(t, 2, 1, out=(vals, idx))
        kv, ki = m.empty(0), m.empty(0, dtype=m.int64)
        m.kthvalue(t, 3, 1, out=(kv, ki))
        sv, si = m.empty(0), m.empty(0, dtype=m.int64)
        m.sort(m.cat([t, t, t, t], 1), 1, out=(sv, si))
        return vals, idx, kv, ki, sv, si
    same(f)


def test_beyond_the_budget_the_values_still_agree(monkeypatch):
    monkeypatch.setattr(cpu_order, "MAX_ELEMENTS", 4)
    x, _ = _data(5, (3, 8), "float32")
    t = torchish.tensor(x)
    r = torchish.topk(t, 3, 1)
    np.testing.assert_array_equal(r.values.numpy(), -np.sort(-x, axis=1)[:, :3])
    np.testing.assert_array_equal(np.take_along_axis(x, r.indices.numpy(), 1), r.values.numpy())


def test_inside_compile_the_kernel_order_is_used():
    """A traced program cannot read values: it keeps the kernels' (stable) order; the values agree."""
    x, _ = _data(6, (3, 8), "float32")
    f = torchish.compile(lambda t: torchish.kthvalue(t, 3, 1).values + torchish.topk(t, 2, 1).values.sum(1))
    t = torchish.tensor(x)
    np.testing.assert_array_equal(f(t).numpy(), (torchish.kthvalue(t, 3, 1).values +
                                                 torchish.topk(t, 2, 1).values.sum(1)).numpy())
    t = torchish.tensor(np.tile(x, 3))
    np.testing.assert_array_equal(torchish.compile(lambda t: t.sort(1).values)(t).numpy(), t.sort(1).values.numpy())


@pytest.mark.parametrize("call", [lambda m: m.topk(m.ones(2, 3, dtype=m.bool), 0, 3),
                                  lambda m: m.topk(m.ones(2, 3, dtype=m.bool), 5, 1),
                                  lambda m: m.topk(m.ones(2, 3, dtype=m.complex64), -1, 1),
                                  lambda m: m.topk(m.ones(2, 3, dtype=m.bool), 1, 1)])
def test_topk_checks_dim_then_k_then_dtype(call):
    same_error(call)
