"""Integer indices and slice starts are values of the eager kernels (``torchish/ops/dynamic.py``): a loop over rows
compiles one kernel, not one per index, and every path that replays an index (the forward, the node's VJP, writes
through views, refreshed views, the lowered backward) gets each index's own numbers, as PyTorch does."""
from __future__ import annotations

import numpy as np
import pytest

import torchish
from torchish import _executables

from oracle import arr, needs_torch, torch

# (name, fn(lib, x, i), the same in numpy) over a 6x5 input, i in 0..3
READS = [
    ("int", lambda lib, x, i: x[i], lambda a, i: a[i]),
    ("negative_int", lambda lib, x, i: x[-i - 1], lambda a, i: a[-i - 1]),
    ("slice", lambda lib, x, i: x[i:i + 2], lambda a, i: a[i:i + 2]),
    ("slice_to_end", lambda lib, x, i: x[i:], lambda a, i: a[i:]),
    ("slice_step", lambda lib, x, i: x[i::2], lambda a, i: a[i::2]),
    ("column", lambda lib, x, i: x[:, i], lambda a, i: a[:, i]),
    ("int_and_slice", lambda lib, x, i: x[i, 1:4], lambda a, i: a[i, 1:4]),
    ("slice_of_columns", lambda lib, x, i: x[1:3, i:i + 2], lambda a, i: a[1:3, i:i + 2]),
    ("none_and_int", lambda lib, x, i: x[None, i], lambda a, i: a[None, i]),
    ("ellipsis_int", lambda lib, x, i: x[..., i], lambda a, i: a[..., i]),
    ("array_and_int", lambda lib, x, i: x[lib.tensor([0, 2, 5]), i], lambda a, i: a[[0, 2, 5], i]),
    ("int_and_array", lambda lib, x, i: x[i, lib.tensor([4, 0])], lambda a, i: a[i, [4, 0]]),
    ("select", lambda lib, x, i: x.select(1, i), lambda a, i: a[:, i]),
    ("narrow", lambda lib, x, i: x.narrow(0, i, 3), lambda a, i: a[i:i + 3]),
    ("view_of_view", lambda lib, x, i: x[i:i + 3][1][i], lambda a, i: a[i + 1, i]),
]


def _compiles():
    return _executables.stats()["compiles"]


@pytest.mark.parametrize("name,fn,np_fn", READS, ids=[r[0] for r in READS])
def test_reads_take_each_index_and_compile_once(name, fn, np_fn):
    a = arr(6, 5, seed=1)
    x = torchish.tensor(a)
    ref = torch.tensor(a) if torch is not None else None
    shapes = {tuple(fn(torchish, x, i).shape) for i in (1, 2)}
    before, new_shapes = _compiles(), 0
    for i in (3, 0, 2, 1, 3):
        got = fn(torchish, x, i).numpy()
        new_shapes += got.shape not in shapes  # (``x[i:]``: another length is another kernel)
        shapes.add(got.shape)
        np.testing.assert_array_equal(got, np_fn(a, i))
        if ref is not None:
            np.testing.assert_array_equal(got, fn(torch, ref, i).numpy())
    assert _compiles() - before <= 1 + new_shapes  # (a slice from 0: one static kernel of its own)


def test_new_indices_compile_nothing_once_warm():
    x = torchish.tensor(arr(40, 8, seed=2))
    for i in (1, 2):
        x[i], x[:, i % 8], x[i:i + 3], x.select(0, i), x.narrow(0, i, 4)
    before = _compiles()
    for i in range(3, 30):
        x[i], x[:, i % 8], x[i:i + 3], x.select(0, i), x.narrow(0, i, 4)
    assert _compiles() == before


@needs_torch
def test_writes_through_views_with_live_views():
    """Writes at new indices through views, with other views of the base alive (they are refreshed by replaying
    their own index chains)."""
    a = arr(6, 5, seed=3)
    outs = []
    for lib in (torch, torchish):
        y = lib.tensor(a.copy())
        row, col, block = y[4], y[:, 3], y[1:4, 2:4]  # live views, refreshed after each write
        for i in (0, 1, 2, 3, 2):
            y[i] = float(i)
            y[:, i].mul_(2.0)
            y[i:i + 2, i] += 1.0
            y.narrow(1, i, 2).select(0, 5 - i).sub_(0.5)
        outs.append([t.clone().numpy() for t in (y, row, col, block)])
    for t, m in zip(*outs):
        np.testing.assert_array_equal(m, t)


@needs_torch
@pytest.mark.parametrize("mode", ["auto", "never"])
def test_gradients_per_index_node_by_node_and_lowered(mode, monkeypatch):
    """Each step indexes other rows; the same graph structure with other indices must not reuse the numbers of
    the first (the lowered backward takes them as values)."""
    monkeypatch.setattr(torchish.config, "lowered_backward", mode)
    a, c = arr(6, 5, seed=4), arr(5, seed=5)
    grads = []
    for lib in (torch, torchish):
        w = lib.tensor(a, requires_grad=True)
        cc = lib.tensor(c)
        seen = []
        for i in (0, 1, 2, 0, 1, 2, 3, 3):
            loss = (w[i] * cc).sum() + (w[:, i] ** 2).sum() + w.narrow(0, i, 2)[1:, i:].sum()
            loss.backward()
            seen.append(w.grad.clone().numpy())
        grads.append(seen)
    for t, m in zip(*grads):
        np.testing.assert_allclose(m, t, rtol=1e-6, atol=1e-6)


@needs_torch
def test_grad_through_a_written_view():
    """CopySlices and the view replays of a graph whose writes use new indices."""
    a = arr(5, 4, seed=6)
    grads = []
    for lib in (torch, torchish):
        w = lib.tensor(a, requires_grad=True)
        for i in (1, 2, 3):
            y = w * 1.0
            v = y[i]
            y[i - 1, 1:] = v[1:] * 3.0
            (y * y).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def test_compiled_step_keeps_python_indices_static():
    """Inside torchish.compile an index is a constant of the trace (a new one retraces, as other Python values)."""
    x = torchish.tensor(arr(6, 5, seed=7))

    @torchish.compile
    def row(t, i):
        return t[i] * 2

    for i in (1, 4, 1):
        np.testing.assert_array_equal(row(x, i).numpy(), x.numpy()[i] * 2)


@needs_torch
@pytest.mark.parametrize("n", [3, 19])
def test_unbind_and_iteration(n):
    """Beyond a few outputs unbind runs one select kernel per output (a program's compile time grows with its
    outputs): same values, strides, views and gradients either way."""
    a = arr(4, n, seed=8)
    res = []
    for lib in (torch, torchish):
        x = lib.tensor(a, requires_grad=True)
        cols = x.unbind(1)
        rows = list(x * 1.0)
        loss = sum((c * (k + 1)).sum() for k, c in enumerate(cols)) + sum((r ** 2).sum() for r in rows)
        loss.backward()
        res.append(([c.detach().numpy() for c in cols], [c.stride() for c in cols], [r.stride() for r in rows],
                    [type(c.grad_fn).__name__ for c in cols[:2]], x.grad.numpy()))
    for t, m in zip(*res):
        if isinstance(t, np.ndarray):
            np.testing.assert_allclose(m, t, rtol=1e-6)
        else:
            assert len(m) == len(t)
            for u, v in zip(t, m):
                np.testing.assert_array_equal(np.asarray(v), np.asarray(u))


def test_unbind_of_many_compiles_one_kernel():
    x = torchish.tensor(arr(37, 3, seed=9))
    before = _compiles()
    rows = x.unbind(0)
    assert _compiles() - before <= 1
    np.testing.assert_array_equal(np.stack([r.numpy() for r in rows]), x.numpy())


def test_selection_shape_without_tracing():
    """setitem/index_put compute the indexed shape in Python (``index_shape``): the same as tracing the read."""
    import itertools

    import jax

    from torchish.ops.index import _getitem_fwd, index_shape, parse_index

    x = torchish.zeros(4, 3, 5, 2)
    i2, i23, m = torchish.tensor([1, 0]), torchish.tensor([[0, 2, 1], [1, 1, 0]]), torchish.tensor([True, False, True])
    items = [0, -1, slice(None), slice(1, 3), slice(0, 4, 2), None, Ellipsis, i2, i23, True]
    count = 0
    for idx in itertools.product(items, repeat=3):
        try:
            template, arrays = parse_index(x, idx)
        except (IndexError, TypeError, ValueError):
            continue
        want = jax.eval_shape(lambda *a: _getitem_fwd(jax.numpy.zeros(x.shape, np.int8), *a, template=template),
                              *[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (t._v for t in arrays)]).shape
        assert index_shape(tuple(x.shape), [a._v for a in arrays], template) == tuple(want), idx
        count += 1
    template, arrays = parse_index(x, (slice(None), m))
    assert index_shape(tuple(x.shape), [a._v for a in arrays], template) == (4, 2, 5, 2)
    assert count > 500


@pytest.mark.parametrize("dims", [None, 1, (0, 2)], ids=["flat", "one_dim", "two_dims"])
def test_roll_shifts_are_values(dims):
    """roll's shifts are values of its eager kernels too (random shifts in augmentation): each new amount, negative
    or past the size, gives PyTorch's values and gradient without a new kernel."""
    a = arr(2, 3, 4, seed=3)
    w = arr(2, 3, 4, seed=4)

    def run(lib, s):
        x = lib.tensor(a, requires_grad=True)
        shifts = s if dims is None or isinstance(dims, int) else (s, 1 - s)
        y = lib.roll(x, shifts, dims) if dims is not None else lib.roll(x, shifts)
        (y * lib.tensor(w)).sum().backward()
        return y.detach().numpy(), x.grad.numpy()

    run(torchish, 1), run(torchish, 2)
    before = _compiles()
    for s in (-7, -1, 0, 3, 13):
        y, g = run(torchish, s)
        if torch is not None:
            ty, tg = run(torch, s)
            np.testing.assert_array_equal(y, ty)
            np.testing.assert_array_equal(g, tg)
    assert _compiles() == before


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_triangle_diagonals_are_values(name):
    """tril/triu's diagonal is a value of their eager kernels: each new offset (past the matrix too) gives
    PyTorch's values and gradient, for float, int and bool batches, without a new kernel."""
    a = arr(2, 3, 4, seed=5)
    w = arr(2, 3, 4, seed=6)

    def run(lib, k):
        x = lib.tensor(a, requires_grad=True)
        y = getattr(lib, name)(x, k)
        (y * lib.tensor(w)).sum().backward()
        ints = getattr(lib.tensor(a * 10).long(), name)(k)
        bools = getattr(lib.tensor(a > 0), name)(diagonal=k)
        return y.detach().numpy(), x.grad.numpy(), ints.numpy(), bools.numpy()

    run(torchish, 1), run(torchish, 2)
    before = _compiles()
    for k in (-5, -1, 0, 3, 4, 10 ** 12, -(10 ** 12)):
        got = run(torchish, k)
        if torch is not None:
            for g, r in zip(got, run(torch, k)):
                np.testing.assert_array_equal(g, r)
    assert _compiles() == before
