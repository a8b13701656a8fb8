"""Third-party programs, round 57 (helper 169): classic machine learning written in PyTorch the way course notebooks
and small libraries write it (k-means with k-means++ seeding, PCA and whitening, LBFGS logistic regression, ridge and
kernel ridge regression, Nyström, Gaussian-mixture EM, naive Bayes, kNN votes, a hinge-loss linear SVM, t-SNE
gradient steps, spectral clustering, NMF, power iteration and random Fourier features), seeded by
``torch.manual_seed``, run with torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _blobs(torch, n_per=5, centers=((0.0, 0.0), (3.0, 3.0), (0.0, 4.0))):
    c = torch.tensor(centers)
    x = torch.cat([c[i] + 0.5 * torch.randn(n_per, 2) for i in range(len(centers))])
    y = torch.arange(len(centers)).repeat_interleave(n_per)
    return x, y


def case_kmeans_plus_plus(lib):
    """k-means: k-means++ seeding by ``torch.multinomial`` on squared ``cdist`` distances, Lloyd steps with
    ``argmin``, centroid sums by ``index_add_`` and counts by ``bincount``, an empty cluster re-seeded to the
    farthest point, the inertia and cluster sizes; a second update through ``scatter_add_``."""
    torch = lib
    torch.manual_seed(0)
    x, _ = _blobs(torch)
    k = 3
    idx = [torch.randint(0, x.size(0), (1,)).item()]
    for _ in range(1, k):
        d2 = torch.cdist(x, x[idx]).min(dim=1).values ** 2
        idx.append(torch.multinomial(d2 / d2.sum(), 1).item())
    centroids = x[idx].clone()
    inertias = []
    for _ in range(3):
        dist = torch.cdist(x, centroids)
        assign = dist.argmin(dim=1)
        sums = torch.zeros_like(centroids).index_add_(0, assign, x)
        counts = torch.bincount(assign, minlength=k).float()
        empty = counts == 0
        new = sums / counts.clamp(min=1).unsqueeze(1)
        if empty.any():
            far = dist.min(dim=1).values.argmax()
            new[empty] = x[far]
        centroids = new
        inertias.append((dist.min(dim=1).values ** 2).sum().item())
    sums2 = torch.zeros(k, 2).scatter_add_(0, assign.unsqueeze(1).expand(-1, 2), x)
    return idx, centroids, assign, counts, inertias, sums2, torch.rand(2)


def case_pca_svd_eigh_lowrank(lib):
    """PCA three ways: ``linalg.svd`` of the centred data with the sklearn sign flip (largest-|u| entry positive),
    ``linalg.eigh`` of ``torch.cov`` (eigenvalues reversed to descending, same sign rule on components), the
    explained-variance ratio, ``corrcoef``, ``pca_lowrank`` (seeded) projections compared by absolute value, and ZCA
    whitening of the data."""
    torch = lib
    torch.manual_seed(1)
    x = torch.randn(12, 4, dtype=torch.float64) @ torch.tensor(
        [[2.0, 0.3, 0.0, 0.1], [0.0, 1.0, 0.5, 0.0], [0.0, 0.0, 0.5, 0.2], [0.0, 0.0, 0.0, 0.1]], dtype=torch.float64)
    mean = x.mean(dim=0)
    xc = x - mean
    U, S, Vh = torch.linalg.svd(xc, full_matrices=False)
    max_abs = U.abs().argmax(dim=0)
    signs = torch.sign(U[max_abs, torch.arange(U.shape[1])])
    U, Vh = U * signs, Vh * signs[:, None]
    explained = S ** 2 / (x.shape[0] - 1)
    ratio = explained / explained.sum()
    C = torch.cov(x.T)
    evals, evecs = torch.linalg.eigh(C)
    evals, evecs = evals.flip(0), evecs.flip(1)
    evecs = evecs * torch.sign(evecs[evecs.abs().argmax(dim=0), torch.arange(4)])
    R = torch.corrcoef(x.T)
    U2, S2, V2 = torch.pca_lowrank(x, q=2, center=True, niter=3)
    proj = (xc @ V2).abs()
    eps = 1e-5
    W = evecs @ torch.diag(1.0 / torch.sqrt(evals + eps)) @ evecs.T
    xw = xc @ W
    return (S, Vh, ratio, evals, evecs, (Vh.T - evecs).abs().max() < 1e-8, R, S2, proj, torch.cov(xw.T),
            xc @ Vh[:2].T)


def case_logistic_regression_lbfgs(lib):
    """Softmax regression on three blobs trained with ``optim.LBFGS(line_search_fn="strong_wolfe")`` and a closure
    (cross-entropy plus an L2 term), the closure count, final loss, weights, accuracy and ``predict_proba``; then a
    binary logistic regression with ``binary_cross_entropy_with_logits`` and plain LBFGS."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2)
    x, y = _blobs(torch)
    model = nn.Linear(2, 3)
    opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=5, line_search_fn="strong_wolfe")
    calls = []

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) + 1e-3 * model.weight.pow(2).sum()
        loss.backward()
        calls.append(loss.item())
        return loss

    for _ in range(2):
        opt.step(closure)
    with torch.no_grad():
        proba = F.softmax(model(x), dim=1)
        acc = (proba.argmax(1) == y).float().mean()
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    yb = (y == 1).float()
    opt2 = torch.optim.LBFGS([w, b], lr=0.5, max_iter=4)

    def closure2():
        opt2.zero_grad()
        loss = F.binary_cross_entropy_with_logits(x @ w + b, yb)
        loss.backward()
        return loss

    l2 = opt2.step(closure2)
    return len(calls), calls[:3], model.weight, model.bias, proba[:4], acc, w, b, l2, opt.state_dict()["state"][0]["n_iter"]


def case_ridge_closed_form(lib):
    """Ridge regression in closed form four ways on a float64 design with an intercept column: ``linalg.solve`` of
    the normal equations, ``linalg.lstsq`` on the augmented system, ``cholesky`` + ``cholesky_solve``, and the SVD
    filter factors; the GCV score for a small grid of lambdas and the best one."""
    torch = lib
    torch.manual_seed(3)
    n, d = 10, 3
    X = torch.randn(n, d, dtype=torch.float64)
    beta = torch.tensor([1.5, -2.0, 0.5], dtype=torch.float64)
    y = X @ beta + 0.3 + 0.1 * torch.randn(n, dtype=torch.float64)
    Xa = torch.cat([X, torch.ones(n, 1, dtype=torch.float64)], dim=1)
    lam = 0.5
    I = torch.eye(d + 1, dtype=torch.float64)
    I[-1, -1] = 0
    A = Xa.T @ Xa + lam * I
    w1 = torch.linalg.solve(A, Xa.T @ y)
    aug = torch.cat([Xa, math.sqrt(lam) * I[:d]], dim=0)
    yaug = torch.cat([y, torch.zeros(d, dtype=torch.float64)])
    w2 = torch.linalg.lstsq(aug, yaug.unsqueeze(1)).solution.squeeze(1)
    L = torch.linalg.cholesky(A)
    w3 = torch.cholesky_solve((Xa.T @ y).unsqueeze(1), L).squeeze(1)
    U, S, Vh = torch.linalg.svd(X - X.mean(0), full_matrices=False)
    yc = y - y.mean()
    gcv = []
    for l in [0.01, 0.1, 1.0, 10.0]:
        f = S ** 2 / (S ** 2 + l)
        yhat = U @ (f * (U.T @ yc))
        gcv.append((((yc - yhat) ** 2).mean() / (1 - f.sum() / n) ** 2).item())
    best = torch.tensor(gcv).argmin()
    return w1, w2, w3, torch.allclose(w1, w2), torch.allclose(w1, w3), gcv, best, L.diagonal()


def case_kernel_ridge_nystrom(lib):
    """Kernel ridge regression with an RBF kernel from ``cdist`` (median heuristic bandwidth by ``torch.median`` of
    the upper triangle), dual coefficients by ``linalg.solve``, predictions on a grid; the Nyström approximation with
    landmarks drawn by ``randperm``, its pseudo-inverse by ``linalg.pinv`` (``hermitian=True``) and the
    approximation error in Frobenius norm."""
    torch = lib
    torch.manual_seed(4)
    x = torch.linspace(-2, 2, 12).unsqueeze(1)
    y = torch.sin(2 * x).squeeze(1) + 0.1 * torch.randn(12)
    d = torch.cdist(x, x)
    iu = torch.triu_indices(12, 12, offset=1)
    sigma = torch.median(d[iu[0], iu[1]])
    K = torch.exp(-d ** 2 / (2 * sigma ** 2))
    alpha = torch.linalg.solve(K + 0.1 * torch.eye(12), y)
    grid = torch.linspace(-2, 2, 5).unsqueeze(1)
    pred = torch.exp(-torch.cdist(grid, x) ** 2 / (2 * sigma ** 2)) @ alpha
    land = torch.randperm(12)[:4]
    C = K[:, land]
    Wm = K[land][:, land]
    K_ny = C @ torch.linalg.pinv(Wm, hermitian=True) @ C.T
    err = torch.linalg.norm(K - K_ny, ord="fro") / torch.linalg.norm(K)
    return sigma, alpha, pred, land, err, torch.linalg.matrix_rank(K_ny, hermitian=True)


def case_gmm_em(lib):
    """Gaussian-mixture EM in float64: responsibilities from ``MultivariateNormal(mu, covariance_matrix=...)
    .log_prob`` of broadcast data plus log weights, normalised by ``logsumexp``; M-step with ``einsum`` weighted
    covariances plus a ridge; log-likelihood per iteration, then ``scale_tril`` and ``entropy``."""
    torch, D = lib, lib.distributions
    torch.manual_seed(5)
    x, _ = _blobs(torch, n_per=6, centers=((0.0, 0.0), (3.0, 2.0)))
    x = x.double()
    k, n = 2, x.shape[0]
    mu = x[torch.randperm(n)[:k]].clone()
    cov = torch.eye(2, dtype=torch.float64).repeat(k, 1, 1)
    pi = torch.full((k,), 1.0 / k, dtype=torch.float64)
    lls = []
    for _ in range(3):
        mvn = D.MultivariateNormal(mu, covariance_matrix=cov)
        logp = mvn.log_prob(x.unsqueeze(1)) + pi.log()
        lse = torch.logsumexp(logp, dim=1, keepdim=True)
        resp = (logp - lse).exp()
        lls.append(lse.sum().item())
        nk = resp.sum(0)
        pi = nk / n
        mu = resp.T @ x / nk.unsqueeze(1)
        diff = x.unsqueeze(1) - mu
        cov = torch.einsum("nk,nki,nkj->kij", resp, diff, diff) / nk[:, None, None] + 1e-6 * torch.eye(2, dtype=torch.float64)
    mvn = D.MultivariateNormal(mu, covariance_matrix=cov)
    return lls, pi, mu, cov, resp.argmax(1), mvn.scale_tril, mvn.entropy(), mvn.batch_shape, mvn.event_shape


def case_naive_bayes_knn(lib):
    """Gaussian naive Bayes (per-class means and variances by boolean masks, log priors, ``Normal.log_prob``
    summed over features, ``argmax`` and ``softmax`` posteriors) and kNN classification: ``cdist`` to training
    points with the diagonal filled by ``fill_diagonal_(inf)``, ``topk(largest=False)``, votes by ``torch.mode`` and
    by a ``bincount`` per row through ``one_hot().sum``."""
    torch, F, D = lib, lib.nn.functional, lib.distributions
    torch.manual_seed(6)
    x, y = _blobs(torch, n_per=4)
    classes = y.unique()
    means = torch.stack([x[y == c].mean(0) for c in classes])
    vars_ = torch.stack([x[y == c].var(0, unbiased=False) for c in classes]) + 1e-9
    priors = torch.stack([(y == c).float().mean() for c in classes]).log()
    q = torch.tensor([[0.2, 0.1], [2.5, 3.1], [0.3, 3.5], [1.5, 1.5]])
    ll = D.Normal(means, vars_.sqrt()).log_prob(q.unsqueeze(1)).sum(-1) + priors
    nb_pred = ll.argmax(1)
    post = F.softmax(ll, dim=1)
    d = torch.cdist(x, x)
    d.fill_diagonal_(float("inf"))
    dist, nn_idx = d.topk(3, dim=1, largest=False)
    votes = y[nn_idx]
    mode_vals, mode_idx = votes.mode(dim=1)
    counts = F.one_hot(votes, num_classes=3).sum(1)
    knn_acc = (counts.argmax(1) == y).float().mean()
    return classes, means, vars_, nb_pred, post, dist, nn_idx, mode_vals, counts, knn_acc


def case_linear_svm_hinge_sgd(lib):
    """A linear SVM with hinge loss ``clamp(1 - y*f, min=0)`` plus L2, minibatch SGD with momentum over shuffled
    ``randperm`` batches, a ``StepLR`` schedule, the margin violators and support vectors; the same loss through
    ``F.hinge_embedding_loss`` and ``F.multi_margin_loss`` for a one-vs-rest check."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(7)
    x, y3 = _blobs(torch, n_per=4, centers=((0.0, 0.0), (2.5, 2.5)))
    y = y3.float() * 2 - 1
    svm = nn.Linear(2, 1)
    opt = torch.optim.SGD(svm.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    losses = []
    for _ in range(3):
        perm = torch.randperm(x.size(0))
        for b in perm.split(3):
            out = svm(x[b]).squeeze(1)
            loss = torch.clamp(1 - y[b] * out, min=0).mean() + 0.01 * svm.weight.pow(2).sum()
            opt.zero_grad(); loss.backward(); opt.step()
        sched.step()
        losses.append(loss.item())
    with torch.no_grad():
        f = svm(x).squeeze(1)
        margins = y * f
        sv = (margins <= 1).nonzero().squeeze(1)
    hel = F.hinge_embedding_loss(1 - margins, y.new_ones(y.shape).long() * 1, margin=1.0)
    mml = F.multi_margin_loss(torch.stack([-f, f], 1), y3)
    return losses, svm.weight, svm.bias, sv, (torch.sign(f) == y).sum(), hel, mml, sched.get_last_lr()


def case_tsne_gradient_steps(lib):
    """t-SNE by hand: conditional P from Gaussian kernels with a fixed per-point beta by a few bisection steps on
    the entropy, symmetrised, ``fill_diagonal_(0)``; Student-t Q; the KL gradient ``4 * sum((P-Q) * num * (yi-yj))``
    with early exaggeration, gains and momentum as in van der Maaten's reference code; KL divergence."""
    torch = lib
    torch.manual_seed(8)
    X = torch.randn(8, 5)
    n = X.shape[0]
    D2 = torch.cdist(X, X) ** 2
    lo, hi = torch.full((n,), 1e-3), torch.full((n,), 10.0)
    target = math.log(3.0)
    for _ in range(6):
        beta = (lo + hi) / 2
        Pc = torch.exp(-D2 * beta[:, None])
        Pc.fill_diagonal_(0)
        Pc = Pc / Pc.sum(1, keepdim=True)
        H = -(torch.xlogy(Pc, Pc)).sum(1)
        too_flat = H > target
        lo = torch.where(too_flat, beta, lo)
        hi = torch.where(too_flat, hi, beta)
    P = (Pc + Pc.T) / (2 * n)
    P = torch.clamp(P, min=1e-12)
    Y = 1e-2 * torch.randn(n, 2)
    iY = torch.zeros_like(Y)
    gains = torch.ones_like(Y)
    kls = []
    for it in range(3):
        num = 1.0 / (1.0 + torch.cdist(Y, Y) ** 2)
        num.fill_diagonal_(0)
        Q = torch.clamp(num / num.sum(), min=1e-12)
        PQ = 4.0 * P - Q if it < 2 else P - Q
        dY = 4.0 * ((PQ * num).unsqueeze(2) * (Y.unsqueeze(1) - Y.unsqueeze(0))).sum(1)
        gains = (gains + 0.2) * ((dY > 0) != (iY > 0)) + gains * 0.8 * ((dY > 0) == (iY > 0))
        gains = gains.clamp(min=0.01)
        iY = 0.5 * iY - 100.0 * (gains * dY)
        Y = Y + iY
        Y = Y - Y.mean(0)
        kls.append((P * torch.log(P / Q)).sum().item())
    return beta, H, P.sum(), Y, gains, kls


def case_spectral_clustering_nmf(lib):
    """Spectral clustering: RBF affinity with a zeroed diagonal, symmetric normalised Laplacian
    ``I - D^-1/2 W D^-1/2``, ``linalg.eigh`` smallest eigenvectors row-normalised, the eigengap; then NMF with Lee-
    Seung multiplicative updates from ``rand`` factors (reconstruction error per step, ``clamp_min`` eps)."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(9)
    x, _ = _blobs(torch, n_per=4, centers=((0.0, 0.0), (5.0, 5.0)))
    x = x.double()
    W = torch.exp(-torch.cdist(x, x) ** 2 / 2.0)
    W.fill_diagonal_(0)
    deg = W.sum(1)
    Dm = torch.diag(deg.rsqrt())
    L = torch.eye(x.shape[0], dtype=torch.float64) - Dm @ W @ Dm
    evals, evecs = torch.linalg.eigh(L)
    emb = F.normalize(evecs[:, :2], dim=1)
    labels = (emb @ emb[0] > 0).long()
    gap = (evals[1:] - evals[:-1])[:3].argmax() + 1
    V = torch.rand(6, 5) + 0.1
    Wn, Hn = torch.rand(6, 2), torch.rand(2, 5)
    errs = []
    for _ in range(3):
        Hn = Hn * (Wn.T @ V) / (Wn.T @ Wn @ Hn).clamp_min(1e-9)
        Wn = Wn * (V @ Hn.T) / (Wn @ Hn @ Hn.T).clamp_min(1e-9)
        errs.append(torch.linalg.norm(V - Wn @ Hn).item())
    return evals[:4], labels, gap, deg, errs, Wn, Hn


def case_power_iteration_rff(lib):
    """Power iteration for the top eigenpair of a symmetric float64 matrix with the Rayleigh quotient, a few steps
    of Lanczos building a tridiagonal ``T`` with ``torch.diag(..., 1)`` and its ``eigvalsh``; random Fourier
    features ``sqrt(2/D) cos(XW + b)`` approximating an RBF kernel and a ridge fit on them by ``linalg.lstsq``."""
    torch = lib
    torch.manual_seed(10)
    A = torch.randn(6, 6, dtype=torch.float64)
    A = A @ A.T
    v = torch.ones(6, dtype=torch.float64) / math.sqrt(6)
    rq = []
    for _ in range(3):
        w = A @ v
        v = w / torch.linalg.vector_norm(w)
        rq.append(torch.dot(v, A @ v).item())
    m = 4
    Q = torch.zeros(6, m, dtype=torch.float64)
    alphas, betas = [], []
    q = torch.randn(6, dtype=torch.float64)
    q = q / q.norm()
    q_prev, b = torch.zeros_like(q), 0.0
    for j in range(m):
        Q[:, j] = q
        z = A @ q - b * q_prev
        a = torch.dot(q, z)
        z = z - a * q
        z = z - Q[:, : j + 1] @ (Q[:, : j + 1].T @ z)
        alphas.append(a)
        b = z.norm()
        betas.append(b)
        q_prev, q = q, z / b
    T = torch.diag(torch.stack(alphas)) + torch.diag(torch.stack(betas[:-1]), 1) + torch.diag(torch.stack(betas[:-1]), -1)
    ritz = torch.linalg.eigvalsh(T)
    top = torch.linalg.eigvalsh(A)[-1]
    X = torch.randn(8, 3)
    Dd, gamma = 16, 0.5
    Wr = torch.randn(3, Dd) * math.sqrt(2 * gamma)
    br = torch.rand(Dd) * 2 * math.pi
    Z = math.sqrt(2.0 / Dd) * torch.cos(X @ Wr + br)
    K_approx = Z @ Z.T
    K_true = torch.exp(-gamma * torch.cdist(X, X) ** 2)
    yv = X.sum(1, keepdim=True)
    coef = torch.linalg.lstsq(Z, yv, driver="gelsd").solution
    return rq, ritz, top, T, (K_approx - K_true).abs().mean(), K_approx.diagonal(), coef.shape, Z.shape


def case_gaussian_process_hyperparameters(lib):
    """GP regression in float64 as GPyTorch-style tutorials write it by hand: softplus-constrained lengthscale,
    signal and noise as one raw ``nn.Parameter``, the RBF kernel from ``cdist``, ``linalg.cholesky`` +
    ``cholesky_solve`` for the negative log marginal likelihood, three Adam steps, then the predictive mean and
    variance through ``solve_triangular``."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(20)
    X = torch.linspace(0, 1, 8).unsqueeze(1).double()
    y = torch.sin(6 * X).squeeze(1) + 0.1 * torch.randn(8, dtype=torch.float64)
    raw = torch.nn.Parameter(torch.tensor([0.0, 0.0, -2.0], dtype=torch.float64))
    opt = torch.optim.Adam([raw], lr=0.1)
    nlls = []
    for _ in range(3):
        ls, sf, sn = F.softplus(raw)
        K = sf ** 2 * torch.exp(-0.5 * torch.cdist(X, X) ** 2 / ls ** 2) + (sn ** 2 + 1e-6) * torch.eye(
            8, dtype=torch.float64)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y.unsqueeze(1), L)
        nll = 0.5 * (y @ alpha.squeeze(1)) + L.diagonal().log().sum() + 4 * math.log(2 * math.pi)
        opt.zero_grad(); nll.backward(); opt.step()
        nlls.append(nll.item())
    with torch.no_grad():
        Xs = torch.tensor([[0.25], [0.9]], dtype=torch.float64)
        Ks = sf ** 2 * torch.exp(-0.5 * torch.cdist(Xs, X) ** 2 / ls ** 2)
        mu = Ks @ alpha.squeeze(1)
        v = torch.linalg.solve_triangular(L, Ks.T, upper=False)
        var = sf ** 2 - (v ** 2).sum(0)
    return nlls, raw.grad, mu, var, F.softplus(raw)


def case_hmc_sampler(lib):
    """Hamiltonian Monte Carlo on a correlated ``MultivariateNormal`` target: the potential's gradient by
    ``autograd.grad`` of a re-leafed position, leapfrog steps, the Metropolis test against ``torch.rand(())`` and
    the accept flags as Python bools."""
    torch, D = lib, lib.distributions
    torch.manual_seed(21)
    target = D.MultivariateNormal(torch.tensor([1.0, -1.0]), torch.tensor([[1.0, 0.8], [0.8, 1.0]]))

    def U(q):
        return -target.log_prob(q)

    def grad_U(q):
        q = q.detach().requires_grad_(True)
        return torch.autograd.grad(U(q), q)[0]

    q, samples, accepts, eps = torch.zeros(2), [], [], 0.2
    for _ in range(3):
        p = torch.randn(2)
        q0, p0 = q.clone(), p.clone()
        p = p - 0.5 * eps * grad_U(q)
        for i in range(4):
            q = q + eps * p
            if i < 3:
                p = p - eps * grad_U(q)
        p = p - 0.5 * eps * grad_U(q)
        ratio = torch.exp(U(q0) + 0.5 * p0 @ p0 - U(q) - 0.5 * p @ p)
        accept = torch.rand(()) < ratio
        accepts.append(bool(accept))
        if not accept:
            q = q0
        samples.append(q.clone())
    return torch.stack(samples), accepts, ratio


def case_hmm_forward_viterbi(lib):
    """A discrete HMM: the forward algorithm in log space with ``logsumexp`` over broadcast transition scores, the
    sequence log-likelihood, and Viterbi decoding with ``max(0)``/``argmax(0)`` back-pointers walked in Python."""
    torch = lib
    A = torch.tensor([[0.7, 0.3], [0.4, 0.6]])
    B = torch.tensor([[0.5, 0.4, 0.1], [0.1, 0.3, 0.6]])
    pi = torch.tensor([0.6, 0.4])
    obs = torch.tensor([0, 1, 2, 2, 1])
    la = torch.log(pi) + torch.log(B[:, obs[0]])
    alphas = [la]
    for o in obs[1:]:
        la = torch.logsumexp(la.unsqueeze(1) + torch.log(A), 0) + torch.log(B[:, o])
        alphas.append(la)
    delta, back = torch.log(pi) + torch.log(B[:, obs[0]]), []
    for o in obs[1:]:
        scores = delta.unsqueeze(1) + torch.log(A)
        back.append(scores.argmax(0))
        delta = scores.max(0).values + torch.log(B[:, o])
    path = [int(delta.argmax())]
    for bp in reversed(back):
        path.append(int(bp[path[-1]]))
    return torch.stack(alphas), torch.logsumexp(la, 0), path[::-1]


test_script_matches_torch = script_test(globals())
