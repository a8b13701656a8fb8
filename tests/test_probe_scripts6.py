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


def _set_params(lib, module, seed=0, scale=0.5):
    with lib.no_grad():
        for i, (_, p) in enumerate(module.named_parameters()):
            p.copy_(lib.tensor(_arr(*p.shape, seed=seed + i) * scale))
    return module


def _pinn_program(lib, compile_fn):
    """A physics-informed residual u'' + u (second derivatives of the network w.r.t. its input, create_graph=True)
    in a compiled function; the loss is backpropagated outside it."""
    nn = lib.nn
    net = _set_params(lib, nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1)), seed=3)
    opt = lib.optim.Adam(net.parameters(), lr=1e-2)

    @compile_fn
    def residual(x):
        u = net(x)
        du = lib.autograd.grad(u.sum(), x, create_graph=True)[0]
        d2u = lib.autograd.grad(du.sum(), x, create_graph=True)[0]
        return (d2u + u).pow(2).mean()

    losses = []
    for _ in range(3):
        x = lib.linspace(0, 1, 9).unsqueeze(1).requires_grad_()
        loss = residual(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, loss.requires_grad, _np(x.grad), _np(net[0].weight.grad), _np(net[2].weight)


@needs_torch
def test_compiled_create_graph_residual_stays_differentiable():
    ref, got = _pinn_program(torch, lambda f: f), _pinn_program(torchish, torchish.compile)
    np.testing.assert_allclose(got[0], ref[0], rtol=2e-4)
    assert got[1] is ref[1] is True
    for r, g in zip(ref[2:], got[2:]):
        np.testing.assert_allclose(g, r, rtol=2e-4, atol=2e-6)


def _ppo_gae_program(lib):
    """CleanRL-style PPO: GAE with a reversed Python loop writing advantages[t], clipped surrogate, minibatches."""
    nn = lib.nn

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
            self.pi = nn.Linear(8, 2)
            self.v = nn.Linear(8, 1)

        def forward(self, x):
            h = self.body(x)
            return self.pi(h), self.v(h).squeeze(-1)

    ac = _set_params(lib, ActorCritic(), seed=5)
    opt = lib.optim.Adam(ac.parameters(), lr=3e-4, eps=1e-5)
    rng = np.random.default_rng(2)
    T = 6
    obs = lib.tensor(rng.normal(size=(T, 4)).astype(np.float32))
    actions = lib.tensor(rng.integers(0, 2, size=T))
    rewards = lib.tensor(rng.uniform(0, 1, size=T).astype(np.float32))
    dones = lib.tensor((rng.uniform(size=T) < 0.3).astype(np.float32))
    with lib.no_grad():
        logits, values = ac(obs)
        old_logp = lib.distributions.Categorical(logits=logits).log_prob(actions)
    advantages = lib.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(T)):
        nextnonterminal = 1.0 - dones[t + 1] if t < T - 1 else 1.0 - dones[t]
        nextvalues = values[t + 1] if t < T - 1 else values[t]
        delta = rewards[t] + 0.99 * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + 0.99 * 0.95 * nextnonterminal * lastgaelam
    returns = advantages + values
    stats = []
    for mb in (lib.arange(T), lib.arange(T).flip(0)):
        logits, v = ac(obs[mb])
        dist = lib.distributions.Categorical(logits=logits)
        ratio = (dist.log_prob(actions[mb]) - old_logp[mb]).exp()
        adv = (advantages[mb] - advantages[mb].mean()) / (advantages[mb].std() + 1e-8)
        pg_loss = lib.max(-adv * ratio, -adv * lib.clamp(ratio, 0.8, 1.2)).mean()
        loss = pg_loss - 0.01 * dist.entropy().mean() + 0.25 * ((v - returns[mb]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(ac.parameters(), 0.5)
        opt.step()
        stats.append((loss.item(), ((ratio - 1.0).abs() > 0.2).float().mean().item()))
    return stats, _np(advantages), _np(ac.pi.bias.grad), _np(ac.v.weight)


@needs_torch
def test_ppo_gae_program_matches_torch():
    ref, got = _ppo_gae_program(torch), _ppo_gae_program(torchish)
    np.testing.assert_allclose(np.array(got[0]), np.array(ref[0]), rtol=2e-4, atol=2e-6)
    for r, g in zip(ref[1:], got[1:]):
        np.testing.assert_allclose(g, r, rtol=2e-4, atol=2e-6)


def _gat_program(lib):
    """A hand-written GAT layer: scatter_reduce(amax, include_self=False) segment softmax and index_add_ messages."""
    nn, F = lib.nn, lib.nn.functional
    N, H, D = 5, 2, 3
    src = lib.tensor([0, 1, 2, 3, 4, 0, 2, 1, 3, 0, 1, 2, 3, 4])
    dst = lib.tensor([1, 2, 3, 4, 0, 2, 0, 1, 1, 0, 1, 2, 3, 4])

    class GAT(nn.Module):
        def __init__(self):
            super().__init__()
            self.W = nn.Linear(3, H * D, bias=False)
            self.att = nn.Parameter(lib.empty(1, H, 2 * D))

        def forward(self, x):
            h = self.W(x).view(-1, H, D)
            e = F.leaky_relu((lib.cat([h[src], h[dst]], -1) * self.att).sum(-1), 0.2)
            e_max = lib.zeros(N, H).scatter_reduce(0, dst.unsqueeze(1).expand(-1, H), e, reduce="amax",
                                                   include_self=False)
            e = (e - e_max[dst]).exp()
            alpha = e / lib.zeros(N, H).index_add(0, dst, e)[dst]
            out = lib.zeros(N, H, D).index_add_(0, dst, h[src] * alpha.unsqueeze(-1))
            return out.mean(1), alpha

    layer = _set_params(lib, GAT(), seed=6)
    x, target = lib.tensor(_arr(N, 3, seed=7)), lib.tensor(_arr(N, D, seed=8))
    opt = lib.optim.AdamW(layer.parameters(), lr=0.05)
    losses = []
    for _ in range(3):
        out, alpha = layer(x)
        loss = F.mse_loss(out, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, _np(alpha), _np(layer.att.grad), _np(layer.W.weight)


@needs_torch
def test_gat_segment_softmax_program_matches_torch():
    ref, got = _gat_program(torch), _gat_program(torchish)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=2e-4, atol=2e-6)


def _batch_hard_grad(lib):
    """Batch-hard triplet mining on cdist(emb, emb) of more than 25 rows (PyTorch's matrix-product path): the
    diagonal's zero distances must give the subgradient 0, not NaN."""
    x = lib.tensor(_arr(32, 4, seed=5), requires_grad=True)
    labels = lib.tensor(np.arange(32) % 8)
    emb = lib.nn.functional.normalize(x, dim=1)
    d = lib.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    pos = (d * same.float()).max(1).values
    neg = (d + 10.0 * same.float()).min(1).values
    lib.nn.functional.relu(pos - neg + 0.5).mean().backward()
    y = lib.tensor(_arr(1, 27, 4, seed=6), requires_grad=True)
    z = lib.tensor(_arr(2, 30, 4, seed=7), requires_grad=True)
    (lib.cdist(z, y, compute_mode="use_mm_for_euclid_dist") * lib.arange(27.0)).sum().backward()
    return _np(x.grad), _np(y.grad), _np(z.grad)


@needs_torch
def test_cdist_matrix_product_path_gradient_matches_torch():
    ref, got = _batch_hard_grad(torch), _batch_hard_grad(torchish)
    assert not np.isnan(got[0]).any()
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=2e-4, atol=2e-5)


@needs_torch
def test_cdist_refuses_mixed_dtypes_as_torch():
    # embeddings in float32 against a float64 table from numpy: PyTorch's kernels do not promote
    for lib in (torch, torchish):
        for rows in (2, 30):  # the direct kernel and the matrix-product path
            with pytest.raises(RuntimeError):
                lib.cdist(lib.ones(rows, 3), lib.ones(rows, 3, dtype=lib.float64))
        assert lib.cdist(lib.ones(2, 3, dtype=lib.float64), lib.zeros(2, 3, dtype=lib.float64)).dtype == lib.float64


def _class_weight_losses(lib):
    """Class weights from numpy/sklearn arrive as float64 against float32 logits: which losses refuse them, and
    the dtype of those that take them."""
    F = lib.nn.functional
    logits = lib.tensor(_arr(4, 3, seed=9))
    labels = lib.tensor([0, 2, 1, 1])
    w64 = lib.tensor(np.array([0.5, 2.0, 1.0]))
    x, t = lib.tensor(_arr(4, seed=10)), lib.tensor([1.0, 0.0, 1.0, 1.0])
    cases = {
        "ce": lambda: F.cross_entropy(logits, labels, weight=w64),
        "ce_smooth": lambda: F.cross_entropy(logits, labels, weight=w64, label_smoothing=0.1),
        "nll": lambda: F.nll_loss(logits.log_softmax(1), labels, weight=w64),
        "module": lambda: lib.nn.CrossEntropyLoss(weight=w64)(logits, labels),
        "multi_margin": lambda: F.multi_margin_loss(logits, labels, weight=w64),
        "ce_probs": lambda: F.cross_entropy(logits, logits.softmax(1), weight=w64),
        "bce": lambda: F.binary_cross_entropy(x.sigmoid(), t, weight=lib.tensor(np.full(4, 2.0))),
        "bce_logits_w": lambda: F.binary_cross_entropy_with_logits(x, t, weight=lib.tensor(np.full(4, 2.0))),
        "bce_logits_pw": lambda: F.binary_cross_entropy_with_logits(x, t, pos_weight=lib.tensor(np.array([3.0]))),
        "bce_logits_x64": lambda: F.binary_cross_entropy_with_logits(x.double(), t, reduction="none"),
        "huber_w": lambda: F.huber_loss(x, t, weight=lib.tensor(np.full(4, 2.0))),
        "soft_margin_t64": lambda: F.soft_margin_loss(x, lib.tensor(np.array([1.0, -1.0, 1.0, -1.0]))),
    }
    out = {}
    for k, f in cases.items():
        try:
            r = f()
            out[k] = (str(r.dtype), _np(r))
        except Exception as e:  # noqa: BLE001 - the type is the outcome
            out[k] = type(e).__name__
    return out


@needs_torch
def test_float64_class_weights_match_torch():
    ref, got = _class_weight_losses(torch), _class_weight_losses(torchish)
    assert ref["ce"] == ref["multi_margin"] == "RuntimeError"
    assert ref.keys() == got.keys()
    for k, r in ref.items():
        g = got[k]
        if isinstance(r, str):
            assert g == r, k
        else:
            assert g[0] == r[0], k
            np.testing.assert_allclose(g[1], r[1], rtol=2e-5, atol=1e-6, err_msg=k)


@needs_torch
def test_multivariate_normal_with_float64_mean_matches_torch():
    # a mean from numpy (float64) with a float32 covariance: solve_triangular solves in the factor's dtype
    def run(lib):
        mean = lib.tensor(np.array([0.3, 0.6]), requires_grad=True)
        cov = lib.tensor([[1.0, 0.2], [0.2, 0.5]])
        m = lib.distributions.MultivariateNormal(mean, covariance_matrix=cov)
        lp = m.log_prob(lib.tensor(_arr(3, 2, seed=11)))
        lp.sum().backward()
        L = lib.tensor([[2.0, 0.0], [1.0, 3.0]])
        x = lib.linalg.solve_triangular(L, lib.tensor(np.array([[1.0], [2.0]])), upper=False)
        return str(lp.dtype), _np(lp), str(mean.grad.dtype), _np(mean.grad), str(x.dtype), _np(x)
    ref, got = run(torch), run(torchish)
    for r, g in zip(ref, got):
        if isinstance(r, str):
            assert g == r
        else:
            np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-6)
