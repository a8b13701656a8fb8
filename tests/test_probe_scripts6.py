"""Regression tests from running reinforcement-learning, graph, recommender, metric-learning, physics-informed,
time-series and tabular PyTorch programs on torchish and on PyTorch."""
import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch


def _arr(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


def _np(x):
    return x.detach().numpy()


def _outcome(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type is the outcome
        return type(e).__name__
    return "ok"


def _sparse_program(lib):
    """pygcn's GraphConvolution on a row-normalised adjacency built as a COO tensor, with a learned edge weight."""
    ei = lib.tensor([[0, 1, 1, 2, 2, 1, 0], [1, 0, 2, 1, 0, 2, 0]])
    w = lib.tensor(_arr(7, seed=1), requires_grad=True)
    adj = lib.sparse_coo_tensor(ei, w, size=(3, 3))
    x = lib.tensor(_arr(3, 2, seed=2), requires_grad=True)
    y = lib.spmm(adj, x) + lib.sparse.mm(adj, x) * 0.5 + (adj @ x).pow(2)
    y = lib.sparse.addmm(y, adj, x, beta=0.5, alpha=2.0)
    y.sum().backward()
    c = adj.coalesce()
    legacy = lib.sparse.FloatTensor(ei, lib.ones(7), lib.Size([3, 3]))
    dense = lib.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, 0.0]])
    s = dense.to_sparse()
    info = (adj.is_sparse, str(adj.layout), adj._nnz(), adj.is_coalesced(), c.is_coalesced(), c._nnz(),
            adj.sparse_dim(), adj.dense_dim(), tuple(adj.shape), str(adj.dtype), adj.requires_grad,
            dense.is_sparse, dense.to_dense() is dense, s.is_coalesced(), repr(c.detach()), repr(legacy))
    errors = [_outcome(f) for f in (adj.indices, adj.values, dense.coalesce, dense.indices, adj.numpy,
                                    lambda: lib.sparse_coo_tensor(ei, w[:3], (3, 3)),
                                    lambda: lib.sparse_coo_tensor(ei, w, (3,)))]
    tensors = [y, w.grad, x.grad, c.indices(), c.values(), adj.to_dense(), legacy.to_dense(), s.indices(),
               s.values(), lib.sparse.sum(adj, dim=1).to_dense(), lib.sparse.sum(c, dim=0).indices(),
               lib.sparse.sum(adj), adj.detach().to_dense(),
               lib.sparse_coo_tensor([[0, 1], [1, 1]], [[1.0, 2.0], [3.0, 4.0]]).to_dense()]
    return info, errors, [_np(t) for t in tensors]


@needs_torch
def test_sparse_coo_tensor_gcn_matches_torch():
    ref, got = _sparse_program(torch), _sparse_program(torchish)
    assert got[0] == ref[0]
    assert got[1] == ref[1]
    for r, g in zip(ref[2], got[2]):
        assert r.dtype == g.dtype and r.shape == g.shape
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-6)


def _sparse_grad_program(lib):
    """``p.grad = p.grad.to_sparse()`` before a step: SparseAdam takes it, Adam refuses it."""
    w = lib.nn.Parameter(lib.tensor(_arr(4, 3, seed=3)))
    opt = lib.optim.SparseAdam([w], lr=0.1)
    x = lib.tensor(_arr(2, 4, seed=4))
    x[:, 1] = 0.0
    for _ in range(2):
        opt.zero_grad()
        (x @ w).pow(2).sum().backward()
        w.grad = w.grad.to_sparse()
        opt.step()
    sparse_grad = (w.grad.is_sparse, w.grad._nnz(), _np(w.grad.to_dense()))
    adam = lib.optim.Adam([w])
    return _np(w), sparse_grad, _outcome(adam.step)


@needs_torch
def test_sparse_gradients_in_optimizers_match_torch():
    (rw, (rs, rn, rg), re), (gw, (gs, gn, gg), ge) = _sparse_grad_program(torch), _sparse_grad_program(torchish)
    np.testing.assert_allclose(gw, rw, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(gg, rg, rtol=2e-5, atol=1e-6)
    assert (gs, gn, ge) == (rs, rn, re) == (True, 9, "RuntimeError")


def _entries(r):
    return (r._nnz(), r.is_coalesced(), r._indices().tolist(), _np(r._values()), str(r.dtype), tuple(r.shape),
            _np(r.to_dense()))


def _sparse_ops_program(lib):
    """Symmetrising and normalising an adjacency matrix with sparse-to-sparse ops, then a sparse softmax."""
    ei = lib.tensor([[0, 1, 2, 2], [1, 2, 0, 1]])
    v = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    A = lib.sparse_coo_tensor(ei, v, (3, 3))
    C = A.coalesce()
    ints = lib.sparse_coo_tensor(ei, lib.tensor([1, 2, 3, 4]), (3, 3))
    hybrid = lib.sparse_coo_tensor(ei, lib.tensor(np.arange(8, dtype=np.float32).reshape(4, 2)), (3, 3, 2))
    results = [A.t(), C.transpose(1, 0), A * 2, 2 * C, A / 2, -A, ints * 0.5, C.double(), C.clone(), A + A.t(),
               C - C.t(), (A + A.t()).coalesce(), hybrid * 3, lib.sparse.sum(hybrid, dim=(0, 2)),
               lib.sparse.softmax(A, 1), lib.sparse.softmax(A, 0), lib.sparse.log_softmax(C, dim=1),
               lib.sparse.softmax(hybrid, 0), lib.sparse.softmax(A, 1, dtype=lib.float64)]
    (A.t() * 2 - A).to_dense().pow(2).sum().backward(retain_graph=True)
    lib.sparse.softmax(A, 1).to_dense().pow(2).sum().backward()
    errors = [_outcome(f) for f in (lambda: A + lib.ones(3, 3), lambda: A + 1)]
    return [_entries(r.detach()) for r in results], _np(v.grad), errors


@needs_torch
def test_sparse_to_sparse_ops_match_torch():
    ref, got = _sparse_ops_program(torch), _sparse_ops_program(torchish)
    assert got[2] == ref[2]
    np.testing.assert_allclose(got[1], ref[1], rtol=2e-5, atol=1e-6)
    for r, g in zip(ref[0], got[0]):  # every result is sparse in both
        assert (g[0], g[1], g[2], g[4], g[5]) == (r[0], r[1], r[2], r[4], r[5])
        np.testing.assert_allclose(g[3], r[3], rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(g[6], r[6], rtol=2e-5, atol=1e-6)
