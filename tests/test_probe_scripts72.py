"""Third-party programs, round 72 (helper 189): sparse tensors as graph-neural-network, recommender and scientific
code writes them in pure PyTorch (no PyG): a two-layer GCN with a normalised adjacency (``sparse_coo_tensor`` from an
``edge_index`` with duplicate edges, ``coalesce``, self loops, degrees by ``torch.sparse.sum(adj, dim=1).to_dense()``,
``D^-1/2 A D^-1/2`` by rescaling ``indices()``/``values()``) trained a few SGD steps; ``torch.sparse.mm`` and
``adj @ x`` with gradients to the dense operand and to the sparse values (``requires_grad=True`` values) and to a
sparse leaf (its ``.grad`` is sparse); edge attention by ``torch.sparse.softmax``/``log_softmax``; ``to_sparse()``/
``to_sparse_csr()``/``to_dense()`` round trips, hybrid ``to_sparse(sparse_dim=1)``, CSR ``crow_indices``/
``col_indices``/``values``, ``torch.sparse_csr_tensor`` matmul, ``torch.sparse.addmm``, ``torch.sparse.sampled_addmm``;
``index_select``/``transpose``/``t()`` of sparse tensors; sparse + sparse, sparse * scalar, ``mul`` by a dense
broadcast; ``nn.Embedding(sparse=True)`` with ``optim.SparseAdam`` and ``SGD`` (sparse COO grads compared by
``to_dense()``, parameters after the steps), ``nn.EmbeddingBag`` with ``per_sample_weights``; a label-propagation
loop, a float64 Laplacian power iteration, random-walk transition matrices and PageRank, ``torch.sparse.spdiags``;
``is_sparse``/``layout``/``_nnz()`` reads and the error families PyTorch raises for unsupported sparse operations
(``view``, ``stride``, dense-only reductions, optimisers without sparse support), run with torch 2.13 and torchish
and compared by ``assert_script_matches`` (tests/oracle.py). Sparse results are compared through ``to_dense()`` and
their ``indices()``/``values()`` reads. Also: ``torch.save``/``torch.load`` and pickling of COO and CSR tensors and
of a sparse buffer in a ``state_dict``; ``torch.cat``/``stack`` of sparse adjacencies for block-diagonal graph
batches; ``sparse_mask`` attention; ``torch.lobpcg`` on a sparse Laplacian; ``svd_lowrank``/``pca_lowrank`` of a
sparse rating matrix; ``Adagrad`` with sparse gradients and sparse gradient accumulation.

Not compared: ``torch.sparse.spdiags`` with a tall shape (more rows than columns), where PyTorch 2.13 builds column
indices beyond the size and ``to_dense()`` reads memory outside the matrix (the case uses a wide shape).

Fixed here (regression tests at the end): ``torch.save``/``torch.load`` and ``pickle`` turned a sparse COO tensor
into a dense one (and a CSR tensor lost its entries under ``pickle``); both now write PyTorch's
``_rebuild_sparse_tensor`` records, read either way; ``torch.sparse.sampled_addmm`` was missing; ``torch.lobpcg``
and ``torch.pca_lowrank`` (centred) refused a sparse COO matrix; ``torch.sparse.softmax``/``log_softmax`` of a
dense or CSR tensor raised AttributeError and ``torch.sparse.sum`` of one the wrong family; a CSR matrix's
``numpy()``/``tolist()``/``view``/``reshape``/``flatten`` gave dense results and ``sparse_dim()``/``dense_dim()``
answered (0, 2).
"""
import pytest

from oracle import formula_data as _data, formula_init as _init, outcome as _family, script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _edges(torch):
    """A small undirected graph (7 nodes, one isolated-but-for-self-loop node 6, a duplicated edge 0-1)."""
    src = [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 0, 2, 0]
    dst = [1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 2, 0, 1]
    return torch.tensor([src, dst]), 7


def _normalised_adj(torch, edge_index, n, self_loops=True):
    """GCN's ``D^-1/2 (A + I) D^-1/2`` as PyG-free repositories build it."""
    if self_loops:
        loops = torch.arange(n).unsqueeze(0).repeat(2, 1)
        edge_index = torch.cat([edge_index, loops], dim=1)
    vals = torch.ones(edge_index.size(1))
    adj = torch.sparse_coo_tensor(edge_index, vals, (n, n)).coalesce()
    deg = torch.sparse.sum(adj, dim=1).to_dense()
    dinv = deg.pow(-0.5)
    dinv[torch.isinf(dinv)] = 0.0
    row, col = adj.indices()
    nv = dinv[row] * adj.values() * dinv[col]
    return torch.sparse_coo_tensor(adj.indices(), nv, adj.shape).coalesce(), deg


def case_gcn_two_layer_training(lib):
    """A two-layer GCN (Kipf & Welling, pure PyTorch): the normalised adjacency, ``torch.sparse.mm(adj, x @ W)`` in
    layer one and ``adj @ h`` in layer two, cross-entropy on a train mask, three SGD steps with weight decay; losses,
    predictions, the adjacency's reads (nnz, coalesced, indices, values, degrees) and the weights after."""
    torch = lib
    nn, F = torch.nn, torch.nn.functional
    ei, n = _edges(torch)
    adj, deg = _normalised_adj(torch, ei, n)

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(4, 8)
            self.l2 = nn.Linear(8, 3, bias=False)

        def forward(self, x, a):
            h = F.relu(torch.sparse.mm(a, self.l1(x)))
            return a @ self.l2(h)

    torch.manual_seed(0)
    model = _init(torch, GCN())
    x = _data(torch, n, 4)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0])
    mask = torch.tensor([True, True, False, True, False, True, True])
    opt = torch.optim.SGD(model.parameters(), lr=0.2, weight_decay=5e-4)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        out = model(x, adj)
        loss = F.cross_entropy(out[mask], y[mask])
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    pred = model(x, adj).argmax(1)
    return (losses, pred, adj._nnz(), adj.is_coalesced(), adj.indices(), adj.values(), deg, adj.is_sparse,
            str(adj.layout), adj.dtype, model.l1.weight, model.l2.weight.grad)


def case_sparse_mm_grads_to_values_and_dense(lib):
    """Gradients of ``torch.sparse.mm(A, X)``, ``A @ X``, ``torch.mm`` and ``A @ v`` (a vector) to the values of a
    COO tensor built from ``requires_grad=True`` values (duplicates included: gradient to each duplicate), and to the
    dense operand; then a sparse leaf (``A.requires_grad_()``) whose ``.grad`` is sparse with A's pattern."""
    torch = lib
    idx = torch.tensor([[0, 0, 1, 2, 2, 3, 0], [1, 3, 2, 0, 3, 1, 1]])
    out = []
    for form in ("sparse.mm", "matmul", "mm", "vec"):
        vals = torch.tensor([1.0, -2.0, 0.5, 3.0, -1.0, 2.0, 0.25], requires_grad=True)
        X = _data(torch, 4, 3, seed=1).requires_grad_()
        A = torch.sparse_coo_tensor(idx, vals, (4, 4))
        if form == "sparse.mm":
            Y = torch.sparse.mm(A, X)
        elif form == "matmul":
            Y = A @ X
        elif form == "mm":
            Y = torch.mm(A, X)
        else:
            Y = A @ X[:, 0]
        (Y * torch.arange(Y.numel(), dtype=torch.float32).reshape(Y.shape)).sum().backward()
        out.append((Y, vals.grad, X.grad))
    A = torch.sparse_coo_tensor(idx, torch.tensor([1.0, -2.0, 0.5, 3.0, -1.0, 2.0, 0.25]), (4, 4)).coalesce()
    A.requires_grad_()
    X = _data(torch, 4, 3, seed=2)
    torch.sparse.mm(A, X).pow(2).sum().backward()
    g = A.grad
    out.append((g.is_sparse, g.to_dense(), g.coalesce().indices(), A.requires_grad, A.is_leaf))
    return out


def case_edge_attention_sparse_softmax(lib):
    """GAT-style attention over edges: scores from node features on each edge, a COO score matrix, row-wise
    ``torch.sparse.softmax`` (rows without entries stay empty), ``log_softmax``, aggregation by ``sparse.mm`` of the
    attention, gradients to the attention parameters through the sparse values."""
    torch = lib
    nn, F = torch.nn, torch.nn.functional
    ei, n = _edges(torch)
    torch.manual_seed(0)
    lin = _init(torch, nn.Linear(4, 5, bias=False))
    att = torch.nn.Parameter(_data(torch, 10, seed=3))
    x = _data(torch, n, 4)
    h = lin(x)
    src, dst = ei
    e = F.leaky_relu((torch.cat([h[dst], h[src]], dim=1) * att).sum(1), 0.2)
    S = torch.sparse_coo_tensor(torch.stack([dst, src]), e, (n, n))
    alpha = torch.sparse.softmax(S, dim=1)
    logalpha = torch.sparse.log_softmax(S.coalesce(), dim=1)
    outh = torch.sparse.mm(alpha, h)
    loss = outh.pow(2).sum() - logalpha.coalesce().values().sum() * 0.1
    loss.backward()
    ad = alpha.to_dense()
    return (ad, ad.sum(1), logalpha.to_dense(), alpha.is_sparse, alpha.coalesce().indices(), outh, loss,
            att.grad, lin.weight.grad, torch.sparse.softmax(S.detach(), dim=0).to_dense())


def case_layout_round_trips_and_reads(lib):
    """``to_sparse()``/``to_sparse_csr()``/``to_dense()`` round trips of a dense matrix with explicit zeros, a hybrid
    ``to_sparse(sparse_dim=1)``, ``to_sparse(layout=torch.sparse_csr)``, CSR -> COO, COO -> CSR; the reads scripts
    print (``is_sparse``, ``is_sparse_csr``, ``layout``, ``_nnz()``, ``sparse_dim()``, ``dense_dim()``, ``shape``)."""
    torch = lib
    d = torch.tensor([[0.0, 1.5, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 4.0, 0.0]])
    coo = d.to_sparse()
    csr = d.to_sparse_csr()
    hyb = d.to_sparse(sparse_dim=1)
    csr2 = d.to_sparse(layout=torch.sparse_csr)
    back = csr.to_sparse_coo()
    csr3 = coo.to_sparse_csr()
    reads = [(t.is_sparse, t.is_sparse_csr, str(t.layout), t._nnz(), t.shape, t.dtype)
             for t in (coo, csr, hyb, csr2, back, csr3)]
    dims = [(coo.sparse_dim(), coo.dense_dim()), (hyb.sparse_dim(), hyb.dense_dim())]
    return (reads, dims, coo.indices(), coo.values(), coo.is_coalesced(), csr.crow_indices(), csr.col_indices(),
            csr.values(), hyb.indices(), hyb.values(), back.indices(), back.values(), csr3.crow_indices(),
            [t.to_dense() for t in (coo, csr, hyb, csr2, back, csr3)], torch.equal(coo.to_dense(), d))


def case_csr_matmul_addmm_sampled(lib):
    """CSR matrices from ``torch.sparse_csr_tensor(crow, col, values)``: ``csr @ X`` with gradients to the values
    and to X, ``torch.sparse.addmm(M, A, X, beta=, alpha=)`` with a COO ``A``, ``torch.addmm`` of a CSR, and
    ``torch.sparse.sampled_addmm(S, A, B)`` (the product sampled at S's pattern) with beta/alpha."""
    torch = lib
    crow = torch.tensor([0, 2, 3, 3, 5])
    col = torch.tensor([0, 2, 1, 0, 3])
    vals = torch.tensor([1.0, 2.0, -1.0, 0.5, 3.0], requires_grad=True)
    A = torch.sparse_csr_tensor(crow, col, vals, (4, 4))
    X = _data(torch, 4, 3).requires_grad_()
    Y = A @ X
    Y.pow(2).sum().backward()
    coo = A.detach().to_sparse_coo()
    M = _data(torch, 4, 3, seed=5)
    am = torch.sparse.addmm(M, coo, X.detach(), beta=0.5, alpha=2.0)
    am2 = torch.addmm(M, A.detach(), X.detach())
    S = torch.sparse_csr_tensor(torch.tensor([0, 1, 3, 4]), torch.tensor([2, 0, 1, 3]), torch.ones(4), (3, 4))
    P = _data(torch, 3, 2, seed=6)
    Q = _data(torch, 2, 4, seed=7)
    sam = torch.sparse.sampled_addmm(S, P, Q, beta=0.5, alpha=2.0)
    return (Y, vals.grad, X.grad, am, am2, sam.is_sparse_csr, sam.crow_indices(), sam.col_indices(), sam.values(),
            sam.to_dense(), str(sam.layout))


def case_index_select_transpose(lib):
    """Subgraph extraction and reversed graphs: ``index_select`` of a COO adjacency along rows and columns (a
    repeated index), ``t()``/``transpose(0, 1)`` (uncoalesced afterwards as in PyTorch), ``coalesce`` after, and
    in-degree by ``sparse.sum`` of the transpose."""
    torch = lib
    ei, n = _edges(torch)
    A = torch.sparse_coo_tensor(ei, torch.arange(1.0, ei.size(1) + 1), (n, n)).coalesce()
    nodes = torch.tensor([2, 0, 3, 0])
    sub_r = A.index_select(0, nodes)
    sub = sub_r.index_select(1, nodes)
    At = A.t()
    At2 = A.transpose(0, 1)
    indeg = torch.sparse.sum(At, dim=1).to_dense()
    return (sub_r.to_dense(), sub.to_dense(), sub.shape, At.is_coalesced(), At.coalesce().indices(),
            At.coalesce().values(), torch.equal(At.to_dense(), A.to_dense().t()), At2.to_dense(), indeg,
            sub.coalesce().indices(), sub.coalesce().values(), sub._nnz())


def case_sparse_arithmetic(lib):
    """Adjacency algebra: sparse + sparse (overlapping patterns, uncoalesced result), sparse - sparse, sparse *
    scalar and / scalar, ``mul`` by a dense row vector and a dense column (broadcast, where PyTorch allows it),
    sparse * sparse (elementwise), ``A @ A`` (two-hop) and ``torch.sparse.sum`` over everything and per dim."""
    torch = lib
    A = torch.sparse_coo_tensor(torch.tensor([[0, 1, 2, 2], [1, 2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0, 4.0]), (3, 3))
    B = torch.sparse_coo_tensor(torch.tensor([[0, 2, 1], [1, 2, 0]]), torch.tensor([10.0, -4.0, 5.0]), (3, 3))
    s = A + B
    dfr = A - B
    sc = A * 2.5
    dv = A / 2
    row = torch.tensor([1.0, 2.0, 3.0])
    mr = A.mul(row)
    mcol = A * row.unsqueeze(1)
    ew = A * B
    two = torch.sparse.mm(A, A)
    return (s.to_dense(), s.is_coalesced(), s._nnz(), s.coalesce().values(), dfr.to_dense(), sc.to_dense(),
            dv.to_dense(), mr.is_sparse, mr.to_dense(), mcol.to_dense(), ew.to_dense(), ew.is_sparse,
            two.to_dense(), two.is_sparse, torch.sparse.sum(A), torch.sparse.sum(A, dim=0).to_dense(),
            torch.sparse.sum(A, dim=(0, 1)))


def case_embedding_sparse_adam_and_sgd(lib):
    """Recommender embeddings: ``nn.Embedding(sparse=True)`` trained with ``optim.SparseAdam`` (three steps, a
    repeated id) and another with ``SGD`` (plain, then with momentum); the sparse gradient's ``to_dense()``,
    ``is_sparse`` and coalesced ``_nnz()``, and the weights after the steps; dense parameters in a separate
    ``Adam`` group as matrix-factorisation code does."""
    torch = lib
    nn = torch.nn
    torch.manual_seed(0)
    users = _init(torch, nn.Embedding(6, 3, sparse=True))
    items = _init(torch, nn.Embedding(5, 3, sparse=True), seed=1)
    bias = nn.Parameter(torch.zeros(1))
    sopt = torch.optim.SparseAdam(list(users.parameters()) + list(items.parameters()), lr=0.05)
    dopt = torch.optim.Adam([bias], lr=0.05)
    u = torch.tensor([0, 2, 2, 5])
    i = torch.tensor([1, 1, 3, 4])
    r = torch.tensor([4.0, 3.0, 1.0, 5.0])
    losses, grads = [], []
    for _ in range(3):
        sopt.zero_grad()
        dopt.zero_grad()
        pred = (users(u) * items(i)).sum(1) + bias
        loss = ((pred - r) ** 2).mean()
        loss.backward()
        g = users.weight.grad
        grads.append((g.is_sparse, g.to_dense(), g.coalesce()._nnz()))
        sopt.step()
        dopt.step()
        losses.append(loss.detach())
    res = [losses, grads, users.weight, items.weight, bias]
    for mom in (0.0, 0.9):
        emb = _init(torch, nn.Embedding(5, 2, sparse=True), seed=2)
        opt = torch.optim.SGD(emb.parameters(), lr=0.1, momentum=mom)
        for step in range(2):
            opt.zero_grad()
            emb(torch.tensor([[1, 3], [3, 0]])).pow(2).sum().backward()
            opt.step()
        res.append((emb.weight, emb.weight.grad.to_dense()))
    return res


def case_embedding_bag_per_sample_weights(lib):
    """A bag-of-features model: ``nn.EmbeddingBag(mode='sum')`` with offsets and ``per_sample_weights`` (gradients to
    the weights and to the per-sample weights), the same bag with ``sparse=True`` (a sparse weight gradient) and an
    SGD step, and ``include_last_offset=True``."""
    torch = lib
    nn = torch.nn
    res = []
    for sparse in (False, True):
        torch.manual_seed(0)
        bag = _init(torch, nn.EmbeddingBag(8, 3, mode="sum", sparse=sparse))
        ids = torch.tensor([1, 4, 4, 7, 0, 2, 6])
        offs = torch.tensor([0, 3, 3, 5])
        psw = torch.tensor([0.5, 1.0, -1.0, 2.0, 0.25, 1.5, -0.5], requires_grad=True)
        out = bag(ids, offs, per_sample_weights=psw)
        (out * _data(torch, 4, 3, seed=4)).sum().backward()
        g = bag.weight.grad
        opt = torch.optim.SGD(bag.parameters(), lr=0.5)
        opt.step()
        res.append((out, g.is_sparse, g.to_dense(), psw.grad, bag.weight))
    bag = _init(torch, nn.EmbeddingBag(8, 2, mode="sum", include_last_offset=True))
    res.append(bag(torch.tensor([1, 2, 3, 4, 5]), torch.tensor([0, 2, 5]),
                   per_sample_weights=torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])))
    return res


def case_label_propagation(lib):
    """Zhou et al. label spreading: ``S = D^-1/2 A D^-1/2`` (no self loops), ``F <- alpha S F + (1 - alpha) Y`` for
    20 iterations by ``torch.sparse.mm``, clamping the labelled nodes each step; predictions and the scores."""
    torch = lib
    ei, n = _edges(torch)
    S, deg = _normalised_adj(torch, ei, n, self_loops=False)
    Y = torch.zeros(n, 2)
    Y[0, 0] = 1.0
    Y[5, 1] = 1.0
    labelled = torch.tensor([0, 5])
    Fm = Y.clone()
    alpha = 0.8
    for _ in range(20):
        Fm = alpha * torch.sparse.mm(S, Fm) + (1 - alpha) * Y
        Fm[labelled] = Y[labelled]
    probs = Fm / Fm.sum(1, keepdim=True).clamp_min(1e-12)
    return Fm, probs, probs.argmax(1), deg, S.values()


def case_laplacian_power_iteration_f64(lib):
    """The largest eigenvalue of a sparse graph Laplacian ``L = D - A`` (float64; ``L`` built sparse by
    concatenating the diagonal and ``-A``'s entries, coalesced) by power iteration with ``torch.sparse.mm`` on a
    column vector, a Rayleigh quotient, compared with ``eigvalsh`` of the dense Laplacian; the normalised Laplacian's
    ``I - D^-1/2 A D^-1/2`` with ``sparse.addmm``."""
    torch = lib
    ei, n = _edges(torch)
    A = torch.sparse_coo_tensor(ei, torch.ones(ei.size(1), dtype=torch.float64), (n, n)).coalesce()
    A = torch.sparse_coo_tensor(A.indices(), torch.ones_like(A.values()), (n, n)).coalesce()  # binarise duplicates
    deg = torch.sparse.sum(A, dim=1).to_dense()
    diag = torch.arange(n).repeat(2, 1)
    L = torch.sparse_coo_tensor(torch.cat([diag, A.indices()], 1), torch.cat([deg, -A.values()]), (n, n)).coalesce()
    v = torch.linspace(1.0, 2.0, n, dtype=torch.float64).unsqueeze(1)
    for _ in range(60):
        w = torch.sparse.mm(L, v)
        v = w / w.norm()
    lam = (v.t() @ torch.sparse.mm(L, v)).squeeze()
    exact = torch.linalg.eigvalsh(L.to_dense())
    dinv = torch.where(deg > 0, deg.rsqrt(), torch.zeros_like(deg))
    r, c = A.indices()
    An = torch.sparse_coo_tensor(A.indices(), dinv[r] * A.values() * dinv[c], (n, n))
    eye = torch.eye(n, dtype=torch.float64)
    Ln = torch.sparse.addmm(eye, An, eye, beta=1.0, alpha=-1.0)
    return lam, exact, L.values(), L.indices(), Ln, torch.linalg.eigvalsh(Ln).max(), L.dtype


def case_random_walk_pagerank(lib):
    """Random-walk transition matrices: ``P = D^-1 A`` (row-stochastic, by value rescaling), its transpose for
    PageRank with teleport (30 iterations of ``torch.sparse.mm(P.t(), r)``), a 3-step walk distribution by repeated
    ``P.t() @ p`` and the two-hop ``P @ P`` made dense."""
    torch = lib
    ei, n = _edges(torch)
    A = torch.sparse_coo_tensor(ei, torch.ones(ei.size(1)), (n + 1, n + 1)).coalesce()  # node 7: dangling
    N = n + 1
    deg = torch.sparse.sum(A, dim=1).to_dense()
    dinv = torch.where(deg > 0, 1.0 / deg, torch.zeros_like(deg))
    row, col = A.indices()
    P = torch.sparse_coo_tensor(A.indices(), A.values() * dinv[row], (N, N))
    r = torch.full((N, 1), 1.0 / N)
    d = 0.85
    dangling = (deg == 0).float()
    for _ in range(30):
        r = d * torch.sparse.mm(P.t(), r) + d * (dangling @ r) / N + (1 - d) / N
    p = torch.zeros(N)
    p[0] = 1.0
    walks = []
    for _ in range(3):
        p = P.t() @ p
        walks.append(p)
    PP = torch.sparse.mm(P, P)
    return r.squeeze(1), r.sum(), walks, torch.sparse.sum(P, dim=1).to_dense(), PP.to_dense(), PP.is_sparse


def case_spdiags_tridiagonal(lib):
    """``torch.sparse.spdiags`` for a 1-D finite-difference operator (a tridiagonal ``[-1, 2, -1]``, square and
    wide, COO and ``layout=torch.sparse_csr``), applied by ``sparse.mm`` and compared with the dense
    stencil; a Jacobi solve of ``K u = f`` with the sparse operator."""
    torch = lib
    n = 6
    diags = torch.stack([-torch.ones(n), 2 * torch.ones(n), -torch.ones(n)])
    offsets = torch.tensor([-1, 0, 1])
    K = torch.sparse.spdiags(diags, offsets, (n, n))
    Kr = torch.sparse.spdiags(diags, offsets, (n - 2, n))
    Kc = torch.sparse.spdiags(diags.double(), offsets, (n, n), layout=torch.sparse_csr)
    f = torch.ones(n, 1)
    u = torch.zeros(n, 1)
    Kd = K.to_dense()
    dinv = 1.0 / torch.diagonal(Kd).unsqueeze(1)
    for _ in range(25):
        u = u + dinv * (f - torch.sparse.mm(K, u))
    return (Kd, K.is_sparse, K._nnz(), K.coalesce().indices(), Kr.to_dense(), Kr.shape, Kc.crow_indices(),
            Kc.col_indices(), Kc.values(), Kc.to_dense(), str(Kc.layout), u.squeeze(1),
            torch.linalg.solve(Kd, f).squeeze(1))


def case_sparse_unsupported_ops_raise(lib):
    """The errors scripts hit when a sparse adjacency reaches dense-only code: ``view``/``reshape``/``stride()``/
    ``data_ptr()`` of a COO tensor, ``A.mean()``, ``A.exp()``, ``A > 0``, ``torch.sparse.mm`` with mismatched inner
    sizes, ``sparse_coo_tensor`` with an index out of range under invariant checks, ``Adam`` given a sparse
    embedding gradient; a dense or CSR matrix handed to ``torch.sparse.softmax``/``log_softmax``/``sum``; a CSR
    matrix's ``view``/``reshape``/``flatten``/``numpy()``/``tolist()``; compared by builtin exception family, and the
    reads that work (``numel()``, ``size()``, ``dim()``, ``sparse_dim()``/``dense_dim()``)."""
    torch = lib
    A = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2))
    C = A.to_sparse_csr()
    emb = torch.nn.Embedding(4, 2, sparse=True)
    emb(torch.tensor([1, 2])).sum().backward()
    adam = torch.optim.Adam(emb.parameters(), lr=0.1)
    fams = [_family(lambda: A.view(4)),
            _family(lambda: A.stride()),
            _family(lambda: A.mean()),
            _family(lambda: A.exp()),
            _family(lambda: A > 0),
            _family(lambda: torch.sparse.mm(A, torch.ones(3, 1))),
            _family(lambda: torch.sparse_coo_tensor(torch.tensor([[0, 5]]), torch.ones(2), (3,),
                                                    check_invariants=True)),
            _family(adam.step),
            _family(lambda: C.view(4)),
            _family(lambda: A.reshape(4)),
            _family(lambda: A.data_ptr()),
            _family(lambda: A[0, 1]),
            # a dense or CSR matrix handed to the COO-only helpers, and the CSR matrix's strided-only methods
            _family(lambda: torch.sparse.softmax(A.to_dense(), dim=1)),
            _family(lambda: torch.sparse.log_softmax(C, dim=1)),
            _family(lambda: torch.sparse.sum(A.to_dense())),
            _family(lambda: torch.sparse.sum(C, dim=1)),
            _family(lambda: C.numpy()),
            _family(lambda: C.tolist()),
            _family(lambda: C.reshape(4)),
            _family(lambda: C.flatten())]
    return fams, A.numel(), A.size(), A.dim(), C.numel(), (C.sparse_dim(), C.dense_dim()), A.sparse_dim()


def case_sparse_leaf_grad_and_coalesce_duplicates(lib):
    """A learnable sparse adjacency (values of a coalesced COO tensor as the parameter of a module, as structure
    learning code does): forward ``sparse.mm`` of a rebuilt COO tensor, ``torch.sparse.sum`` of an elementwise
    product, loss backward to the values, an Adam step on the values; and ``coalesce`` summing duplicates in a
    value with a dense dimension (hybrid COO)."""
    torch = lib
    nn = torch.nn
    ei, n = _edges(torch)
    base = torch.sparse_coo_tensor(ei, torch.ones(ei.size(1)), (n, n)).coalesce()

    class LearnedAdj(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("idx", base.indices())
            self.w = nn.Parameter(torch.linspace(-0.5, 0.5, base._nnz()))

        def forward(self, x):
            a = torch.sparse_coo_tensor(self.idx, torch.sigmoid(self.w), (n, n))
            return torch.sparse.mm(a, x), a

    m = LearnedAdj()
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    x = _data(torch, n, 2)
    out = []
    for _ in range(2):
        opt.zero_grad()
        h, a = m(x)
        reg = torch.sparse.sum(a * a)
        loss = h.pow(2).mean() + 0.01 * reg
        loss.backward()
        out.append((loss.detach(), m.w.grad.clone()))
        opt.step()
    hv = torch.sparse_coo_tensor(torch.tensor([[0, 2, 0, 1]]), torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0],
                                                                               [7.0, 8.0]]), (3, 2))
    hc = hv.coalesce()
    return out, m.w, hc.indices(), hc.values(), hc.to_dense(), hv._nnz(), hc._nnz(), hv.is_coalesced()



def case_sparse_grad_accumulation_and_adagrad(lib):
    """Sparse gradients accumulated over two backward passes without ``zero_grad`` (PyTorch concatenates the
    entries: the raw ``_nnz()`` and ``_indices()`` before coalescing), ``zero_grad(set_to_none=False)`` on a sparse
    grad, ``optim.Adagrad`` (which supports sparse gradients, with ``lr_decay``) on a sparse embedding for three steps,
    ``F.embedding(..., sparse=True)`` with ``padding_idx``, and ``nn.Embedding.from_pretrained(sparse=True)``."""
    torch = lib
    nn, F = torch.nn, torch.nn.functional
    emb = _init(torch, nn.Embedding(6, 2, sparse=True))
    emb(torch.tensor([1, 4])).sum().backward()
    emb(torch.tensor([[4, 0], [1, 1]])).pow(2).sum().backward()
    g = emb.weight.grad
    acc = (g.is_coalesced(), g._nnz(), g._indices(), g._values(), g.to_dense(), g.coalesce()._nnz())
    opt = torch.optim.SGD(emb.parameters(), lr=0.1)
    opt.zero_grad(set_to_none=False)
    zeroed = (emb.weight.grad is None, emb.weight.grad.is_sparse if emb.weight.grad is not None else None,
              emb.weight.grad.to_dense() if emb.weight.grad is not None else None)
    ada_emb = _init(torch, nn.Embedding(5, 3, sparse=True), seed=1)
    ada = torch.optim.Adagrad(ada_emb.parameters(), lr=0.3, lr_decay=0.01, initial_accumulator_value=0.1)
    for step in range(3):
        ada.zero_grad()
        ada_emb(torch.tensor([0, 3, 3, step])).pow(2).sum().backward()
        ada.step()
    w = _data(torch, 5, 2, seed=2).requires_grad_()
    out = F.embedding(torch.tensor([[0, 2], [4, 2]]), w, padding_idx=2, sparse=True)
    out.sum().backward()
    pre = nn.Embedding.from_pretrained(_data(torch, 4, 2, seed=3), freeze=False, sparse=True)
    pre(torch.tensor([3, 3, 1])).sum().backward()
    return (acc, zeroed, ada_emb.weight, ada.state[ada_emb.weight]["sum"], w.grad.is_sparse, w.grad.to_dense(),
            pre.weight.grad.to_dense(), pre.sparse, pre.weight.requires_grad)


def case_optimizers_refusing_sparse_grads_raise(lib):
    """What recommender code hits when an optimiser without sparse support meets ``nn.Embedding(sparse=True)``:
    ``Adam``, ``AdamW``, ``RMSprop``, ``SGD`` with ``weight_decay``, and ``SparseAdam`` given a dense gradient or
    a dense parameter; compared by builtin exception family."""
    torch = lib
    nn = torch.nn

    def step(make_opt, sparse=True):
        emb = nn.Embedding(4, 2, sparse=sparse)
        opt = make_opt([emb.weight])
        emb(torch.tensor([0, 2])).sum().backward()
        opt.step()
        return emb.weight.grad.is_sparse

    fams = [_family(lambda: step(lambda p: torch.optim.Adam(p, lr=0.1))),
            _family(lambda: step(lambda p: torch.optim.AdamW(p, lr=0.1))),
            _family(lambda: step(lambda p: torch.optim.RMSprop(p, lr=0.1))),
            _family(lambda: step(lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.1))),
            _family(lambda: step(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5, nesterov=True))),
            _family(lambda: step(lambda p: torch.optim.SparseAdam(p, lr=0.1), sparse=False)),
            _family(lambda: step(lambda p: torch.optim.Adagrad(p, lr=0.1, weight_decay=0.1))),
            _family(lambda: step(lambda p: torch.optim.SparseAdam(p, lr=0.1)))]
    return fams


def case_sparse_mask_attention_and_values_grad(lib):
    """Masked dense attention restricted to a graph: ``scores.sparse_mask(adj)`` (dense scores read at the
    adjacency's entries), a softmax over the kept entries, gradient to the dense scores through the sparse values;
    ``values()`` of a coalesced tensor built from ``requires_grad`` values is differentiable, ``to_dense()`` and
    ``torch.sparse.sum`` backward to the values; ``x.to_sparse()`` of a dense ``requires_grad`` tensor whose gradient
    comes back masked."""
    torch = lib
    ei, n = _edges(torch)
    adj = torch.sparse_coo_tensor(ei, torch.ones(ei.size(1)), (n, n)).coalesce()
    q = _data(torch, n, 3, seed=1).requires_grad_()
    k = _data(torch, n, 3, seed=2)
    scores = q @ k.t() / 3 ** 0.5
    masked = scores.sparse_mask(adj)
    att = torch.sparse.softmax(masked, dim=1)
    out = torch.sparse.mm(att, k)
    out.sum().backward()
    v = torch.linspace(-1.0, 1.0, 5).requires_grad_()
    A = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1, 2, 0], [0, 2, 0, 1, 0]]), v, (3, 3)).coalesce()
    (A.values() * torch.arange(1.0, A._nnz() + 1)).sum().backward(retain_graph=True)
    g1 = v.grad.clone()
    v.grad = None
    (A.to_dense() * torch.arange(9.0).reshape(3, 3)).sum().backward(retain_graph=True)
    g2 = v.grad.clone()
    v.grad = None
    torch.sparse.sum(A).backward()
    g3 = v.grad.clone()
    x = _data(torch, 3, 3, seed=4).requires_grad_()
    xs = x.to_sparse()
    torch.sparse.mm(xs, torch.ones(3, 2)).sum().backward()
    return (masked.is_sparse, masked.coalesce().values(), att.to_dense(), out, q.grad, A.indices(), g1, g2, g3,
            x.grad, xs._nnz())


def case_block_diagonal_graph_batching(lib):
    """Mini-batching graphs as PyG-free code does: per-graph ``edge_index`` shifted by the node offsets and
    concatenated, one block-diagonal COO adjacency for the batch, message passing by ``torch.sparse.mm``, mean
    pooling per graph by a sparse assignment matrix (``sparse_coo_tensor`` of (graph, node) with 1/size values) and a
    ``torch.cat``/``torch.stack`` of sparse adjacencies along dim 0."""
    torch = lib
    graphs = [(torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]), 3), (torch.tensor([[0, 1], [1, 0]]), 2),
              (torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 0, 2]]), 4)]
    offs, eis, batch = 0, [], []
    for g, (ei, n) in enumerate(graphs):
        eis.append(ei + offs)
        batch += [g] * n
        offs += n
    ei = torch.cat(eis, dim=1)
    N = offs
    A = torch.sparse_coo_tensor(ei, torch.ones(ei.size(1)), (N, N)).coalesce()
    batch = torch.tensor(batch)
    x = _data(torch, N, 2).requires_grad_()
    h = x + torch.sparse.mm(A, x)
    h = torch.tanh(torch.sparse.mm(A, h))
    counts = torch.bincount(batch).float()
    P = torch.sparse_coo_tensor(torch.stack([batch, torch.arange(N)]), 1.0 / counts[batch], (len(graphs), N))
    pooled = torch.sparse.mm(P, h)
    pooled.pow(2).sum().backward()
    a1 = torch.sparse_coo_tensor(graphs[0][0], torch.ones(4), (4, 4))
    a2 = torch.sparse_coo_tensor(graphs[2][0], torch.arange(1.0, 6.0), (4, 4))
    cat = torch.cat([a1, a2], dim=0)
    st = torch.stack([a1, a2])
    return (A.indices(), pooled, x.grad, cat.shape, cat.to_dense(), cat.is_sparse, st.shape, st.to_dense(),
            st._nnz(), st.sparse_dim())


def case_sparse_save_load_and_copies(lib):
    """Persisting a sparse adjacency (``torch.save``/``torch.load`` to a buffer, coalesced and not, COO and CSR),
    ``copy.deepcopy``, ``clone``, ``.double()``/``.to(torch.float64)`` casts and ``detach`` keeping the layout, and a
    ``state_dict`` holding a sparse buffer."""
    import copy
    import io
    torch = lib
    A = torch.sparse_coo_tensor(torch.tensor([[0, 2, 1, 0], [1, 0, 2, 1]]), torch.tensor([1.0, 2.0, 3.0, 4.0]), (3, 3))
    C = A.coalesce().to_sparse_csr()
    buf = io.BytesIO()
    torch.save({"A": A, "Ac": A.coalesce(), "C": C}, buf)
    buf.seek(0)
    d = torch.load(buf)
    m = torch.nn.Module()
    m.register_buffer("adj", A.coalesce())
    sd = m.state_dict()
    m2 = torch.nn.Module()
    m2.register_buffer("adj", torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (3, 3)))
    m2.load_state_dict(sd)
    dc = copy.deepcopy(A)
    out = []
    for t in (d["A"], d["Ac"], dc, A.clone(), A.double(), A.to(torch.float64), A.detach(), m2.adj, sd["adj"]):
        out.append((t.is_sparse, t.is_coalesced(), t._nnz(), t.dtype, t.to_dense()))
    return (out, d["C"].layout == torch.sparse_csr, d["C"].crow_indices(), d["C"].col_indices(), d["C"].values(),
            m2.adj.indices())


def case_lobpcg_laplacian_eigenmaps(lib):
    """Spectral embedding with ``torch.lobpcg`` on a sparse float64 matrix (the largest eigenpairs of ``2I - L_sym``,
    i.e. the smallest of the normalised Laplacian) from a fixed initial block; eigenvalues compared with ``eigvalsh``
    and the eigenvector subspace by its projector (signs are not defined)."""
    torch = lib
    ei, n = _edges(torch)
    adj, deg = _normalised_adj(torch, ei, n, self_loops=False)
    adj = torch.sparse_coo_tensor(adj.indices(), adj.values().double(), (n, n))
    adj = ((adj + adj.t()) * 0.5).coalesce()  # (the duplicated edge 0 -> 1 made it asymmetric)
    eye = torch.sparse_coo_tensor(torch.arange(n).repeat(2, 1), torch.ones(n, dtype=torch.float64), (n, n))
    M = (eye + adj).coalesce()  # 2I - (I - D^-1/2 A D^-1/2)
    X0 = torch.cos(torch.arange(n * 2, dtype=torch.float64).reshape(n, 2) * 0.7 + 0.3)
    E, V = torch.lobpcg(M, k=2, X=X0, niter=200, tol=1e-10, largest=True)
    exact = torch.linalg.eigvalsh(M.to_dense())[-2:].flip(0)
    proj = V @ V.t()
    return E, exact, proj.diagonal().sum(), (M.to_dense() @ V - V * E).abs().max() < 1e-5, M._nnz()



def case_truncated_svd_of_sparse_ratings(lib):
    """Recommender latent factors from a sparse user-item rating matrix (COO, float64): ``torch.svd_lowrank`` and
    ``torch.pca_lowrank`` (centred: PyTorch passes the column means beside the sparse matrix; and ``center=False``)
    after ``manual_seed`` (the same Gaussian test matrix in both libraries); singular values and the rank-q
    reconstruction error (both well defined for a gapped spectrum), never the singular vectors' signs."""
    torch = lib
    users = torch.tensor([0, 0, 1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 2])
    items = torch.tensor([0, 3, 1, 3, 2, 0, 4, 1, 2, 5, 5, 0, 4, 4])
    r = torch.tensor([5.0, 3.0, 4.0, 1.0, 2.0, 4.0, 5.0, 3.0, 1.0, 4.0, 2.0, 5.0, 1.0, 3.0], dtype=torch.float64)
    R = torch.sparse_coo_tensor(torch.stack([users, items]), r, (8, 6)).coalesce()
    Rd = R.to_dense()
    out = []
    for name in ("svd", "pca", "pca_nocenter"):
        torch.manual_seed(0)
        if name == "svd":
            U, S, V = torch.svd_lowrank(R, q=3, niter=4)
            target = Rd
        elif name == "pca":
            U, S, V = torch.pca_lowrank(R, q=3, niter=4)
            target = Rd - Rd.mean(0, keepdim=True)
        else:
            U, S, V = torch.pca_lowrank(R, q=3, center=False, niter=4)
            target = Rd
        approx = U @ torch.diag(S) @ V.t()
        out.append((S, torch.linalg.matrix_norm(target - approx), U.shape, V.shape, S.dtype))
    return out, torch.linalg.svdvals(Rd)[:3], torch.linalg.svdvals(Rd - Rd.mean(0))[:3]


test_script_matches_torch = script_test(globals())


# --- the fixes

from oracle import assert_same as _assert_same, needs_torch, run_both  # noqa: E402


def _sparse_pair(lib):
    A = lib.sparse_coo_tensor(lib.tensor([[0, 2, 1, 0], [1, 0, 2, 1]]), lib.tensor([1.0, 2.0, 3.0, 4.0]), (3, 3))
    return A, A.coalesce().to_sparse_csr()


def _reads(t):
    if t.is_sparse:
        return (str(t.layout), t.is_coalesced(), t._nnz(), t._indices(), t._values(), t.to_dense())
    return (str(t.layout), t.crow_indices(), t.col_indices(), t.values(), t.to_dense())


@needs_torch
def test_sparse_tensors_survive_torch_save_and_pickle_both_ways():
    """``torch.save``/``torch.load`` (and ``pickle``) kept a COO tensor's dense value only (it loaded strided), and a
    pickled CSR tensor lost its entries: they now write PyTorch's ``_rebuild_sparse_tensor`` record (the layout by
    ``torch.serialization._get_layout``), which PyTorch loads, and read PyTorch's."""
    import io
    import pickle

    import torch
    import torchish
    for saver in (torch, torchish):
        A, C = _sparse_pair(saver)
        buf = io.BytesIO()
        saver.save({"A": A, "Ac": A.coalesce(), "C": C, "layout": saver.sparse_coo}, buf)
        loaded = {}
        for loader in (torch, torchish):
            buf.seek(0)
            loaded[loader] = loader.load(buf)  # (weights_only: PyTorch's allowed globals)
        ref, got = loaded[torch], loaded[torchish]
        _assert_same([_reads(ref[k]) for k in ("A", "Ac", "C")], [_reads(got[k]) for k in ("A", "Ac", "C")])
        assert str(got["layout"]) == str(ref["layout"]) == "torch.sparse_coo"
    ref, got = run_both(lambda lib: [_reads(pickle.loads(pickle.dumps(t))) for t in _sparse_pair(lib)])
    _assert_same(ref, got)


@needs_torch
def test_sampled_addmm_values_gradients_and_errors():
    """``torch.sparse.sampled_addmm`` was missing (AttributeError): ``alpha * (mat1 @ mat2)`` at a CSR matrix's
    entries plus ``beta * input``, a CSR result with gradients to the values (or the CSR leaf), mat1 and mat2, and
    PyTorch's errors for a dense or COO input and mismatched operands."""
    from oracle import outcome

    def prog(lib):
        torch = lib
        crow, col = torch.tensor([0, 1, 3, 4]), torch.tensor([2, 0, 1, 3])
        out = []
        for leaf in (False, True):
            v = torch.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=not leaf)
            S = torch.sparse_csr_tensor(crow, col, v, (3, 4), requires_grad=leaf)
            P = torch.linspace(-1, 1, 6).reshape(3, 2).requires_grad_()
            Q = torch.linspace(0.5, -0.7, 8).reshape(2, 4).requires_grad_()
            r = torch.sparse.sampled_addmm(S, P, Q, beta=0.5, alpha=2.0)
            (r.values() * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
            out.append((r.values(), r.crow_indices(), r.col_indices(), str(r.layout), P.grad, Q.grad,
                        v.grad if not leaf else S.grad.to_dense()))
        S = torch.sparse_csr_tensor(crow, col, torch.ones(4), (3, 4))
        P, Q = torch.ones(3, 2), torch.ones(2, 4)
        out.append([outcome(f) for f in (
            lambda: torch.sparse.sampled_addmm(S.to_dense(), P, Q),
            lambda: torch.sparse.sampled_addmm(S.to_sparse_coo(), P, Q),
            lambda: torch.sparse.sampled_addmm(S, P, Q.t()), lambda: torch.sparse.sampled_addmm(S, P.double(), Q),
            lambda: torch.sparse.sampled_addmm(S, P, Q.to_sparse()), lambda: torch.sparse.sampled_addmm(S, P[0], Q),
            lambda: torch.sparse.sampled_addmm(S, P[:2], Q), lambda: torch.sparse.sampled_addmm(S, P, Q[:, :3]))])
        return out

    ref, got = run_both(prog)
    _assert_same(ref, got)
    assert ref[-1] == ["NotImplementedError"] * 2 + ["RuntimeError"] * 6


@needs_torch
def test_lobpcg_and_centred_pca_lowrank_take_a_sparse_matrix():
    """``torch.lobpcg`` of a sparse COO matrix raised NotImplementedError (its dense eigendecomposition ran on the
    sparse tensor), and so did ``torch.pca_lowrank(A)`` (``A.mean`` of a COO tensor): PyTorch accepts both."""
    def prog(lib):
        torch = lib
        i = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 0, 6], [1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 6, 5, 6, 0]])
        A = torch.sparse_coo_tensor(i, torch.linspace(1.0, 2.0, 14, dtype=torch.float64), (7, 7))
        A = ((A + A.t()) * 0.5).coalesce()
        X0 = torch.cos(torch.arange(14, dtype=torch.float64).reshape(7, 2) * 0.7 + 0.3)
        E, _ = torch.lobpcg(A, k=2, X=X0, niter=200, tol=1e-10)
        torch.manual_seed(0)
        _, S, _ = torch.pca_lowrank(A, q=2, niter=4)
        return E, S
    ref, got = run_both(prog)
    _assert_same(ref, got, rtol=1e-6, atol=1e-8)


@needs_torch
def test_csr_strided_only_methods_and_dims():
    """A CSR matrix's ``numpy()``, ``tolist()``, ``view``, ``reshape`` and ``flatten`` gave dense results where
    PyTorch raises, and ``sparse_dim()``/``dense_dim()`` answered (0, 2) instead of (2, 0)."""
    from oracle import outcome

    def prog(lib):
        C = lib.tensor([[0.0, 1.5], [2.0, 0.0]]).to_sparse_csr()
        return ([outcome(f) for f in (C.numpy, C.tolist, lambda: C.view(4), lambda: C.view(2, 2),
                                      lambda: C.reshape(4), C.flatten)], C.sparse_dim(), C.dense_dim())
    ref, got = run_both(prog)
    _assert_same(ref, got)
    assert ref[1:] == (2, 0)


@needs_torch
def test_sparse_softmax_and_sum_of_a_dense_or_csr_tensor_raise_torchs_family():
    """``torch.sparse.softmax``/``log_softmax`` of a dense or CSR tensor raised AttributeError (no COO entries to
    read) and ``torch.sparse.sum`` of one without ``dim`` NotImplementedError, where PyTorch raises
    NotImplementedError and RuntimeError."""
    from oracle import outcome

    def prog(lib):
        out = []
        for X in (lib.eye(3), lib.eye(3).to_sparse_csr()):
            out += [outcome(lambda: lib.sparse.softmax(X, 1)), outcome(lambda: lib.sparse.log_softmax(X, 0)),
                    outcome(lambda: lib.sparse.sum(X)), outcome(lambda: lib.sparse.sum(X, 1))]
        return out
    ref, got = run_both(prog)
    _assert_same(ref, got)
