"""Third-party programs, round 61: Bayesian and probabilistic machine learning written in pure PyTorch the way popular
repositories write it (a GPyTorch-style exact Gaussian process with RBF and Matern-5/2 kernels, Pyro-style stochastic
variational inference with a mean-field guide and a Bayes-by-backprop layer, a Hawkes process with an exponential
kernel, a Laplace-approximated Bayesian logistic regression with a per-sample-gradient diagonal Laplace and an
importance-weighted autoencoder bound), seeded by ``torch.manual_seed``, run with torch 2.13 and torchish and compared
by ``assert_script_matches`` (tests/oracle.py).
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_exact_gp_rbf_matern(lib):
    """An exact GP as GPyTorch writes it, in float32: an ``nn.Module`` with raw lengthscale, outputscale and noise
    parameters constrained by ``F.softplus``, an RBF kernel plus a Matern-5/2 kernel (inputs centred by their mean
    and scaled by the lengthscale, distances by ``torch.cdist``), jitter on the diagonal, ``linalg.cholesky`` and
    ``cholesky_solve`` for the marginal log-likelihood divided by the number of points (checked against
    ``MultivariateNormal(scale_tril=L).log_prob``), four Adam steps, then the predictive mean and the variance
    through ``linalg.solve_triangular`` clamped at a floor; GPyTorch's ``psd_safe_cholesky`` retry loop (growing
    jitter while ``cholesky_ex``'s ``info`` is nonzero) on a singular kernel matrix."""
    torch, nn, F, D = lib, lib.nn, lib.nn.functional, lib.distributions
    torch.manual_seed(0)
    n = 10
    X = torch.rand(n, 1) * 4
    y = torch.sin(2 * X).squeeze(-1) + 0.1 * torch.randn(n)

    class ExactGP(nn.Module):
        def __init__(self):
            super().__init__()
            self.raw_lengthscale = nn.Parameter(torch.zeros(2))
            self.raw_outputscale = nn.Parameter(torch.zeros(2))
            self.raw_noise = nn.Parameter(torch.tensor(-1.0))
            self.mean_constant = nn.Parameter(torch.zeros(()))

        def rbf(self, a, b, ls):
            d = torch.cdist(a / ls, b / ls)
            return torch.exp(-0.5 * d.pow(2))

        def matern52(self, a, b, ls):
            mean = a.mean(dim=-2, keepdim=True)
            d = torch.cdist((a - mean) / ls, (b - mean) / ls)
            exp_component = torch.exp(-math.sqrt(5.0) * d)
            constant_component = (math.sqrt(5.0) * d).add(1).add(5.0 / 3.0 * d ** 2)
            return constant_component * exp_component

        def covar(self, a, b):
            ls, os = F.softplus(self.raw_lengthscale), F.softplus(self.raw_outputscale)
            return os[0] * self.rbf(a, b, ls[0]) + os[1] * self.matern52(a, b, ls[1])

        def noise(self):
            return F.softplus(self.raw_noise) + 1e-4

    gp = ExactGP()
    opt = torch.optim.Adam(gp.parameters(), lr=0.1)
    mlls, checks = [], []
    for _ in range(4):
        K = gp.covar(X, X) + (gp.noise() + 1e-6) * torch.eye(n)
        L = torch.linalg.cholesky(K)
        r = (y - gp.mean_constant).unsqueeze(-1)
        alpha = torch.cholesky_solve(r, L)
        mll = -0.5 * (r * alpha).sum() - L.diagonal().log().sum() - 0.5 * n * math.log(2 * math.pi)
        mvn = D.MultivariateNormal(gp.mean_constant.expand(n), scale_tril=L)
        checks.append((mvn.log_prob(y) - mll).abs().item() < 1e-3)
        loss = -mll / n
        opt.zero_grad()
        loss.backward()
        opt.step()
        mlls.append(loss.item())
    grads = [p.grad.clone() for p in gp.parameters()]
    with torch.no_grad():
        K = gp.covar(X, X) + (gp.noise() + 1e-6) * torch.eye(n)
        L = torch.linalg.cholesky(K)
        Xs = torch.linspace(0, 4, 5).unsqueeze(-1)
        Ks = gp.covar(Xs, X)
        alpha = torch.cholesky_solve((y - gp.mean_constant).unsqueeze(-1), L)
        mu = gp.mean_constant + (Ks @ alpha).squeeze(-1)
        v = torch.linalg.solve_triangular(L, Ks.transpose(-1, -2), upper=False)
        kss = gp.covar(Xs, Xs).diagonal()
        var = (kss - v.pow(2).sum(-2)).clamp_min(1e-6)
        lower, upper = mu - 2 * var.sqrt(), mu + 2 * var.sqrt()
        Kd = gp.covar(torch.ones(3, 1), torch.ones(3, 1))  # three copies of one input: singular
        Ld, info = torch.linalg.cholesky_ex(Kd)
        jitter, tries = 1e-6, 0
        while bool(info.any()) and tries < 4:  # GPyTorch's psd_safe_cholesky
            Ld, info = torch.linalg.cholesky_ex(Kd + jitter * torch.eye(3))
            jitter, tries = jitter * 10, tries + 1
    return (mlls, checks, grads, F.softplus(gp.raw_lengthscale), mu, var, lower, upper, L.diagonal(), tries, info,
            Ld[:, 0])


def case_svi_mean_field_regression(lib):
    """Pyro-style SVI in pure torch: Bayesian linear regression with a Normal prior on the weights and a Gamma prior
    on the noise precision; a mean-field guide (``Normal(loc, softplus(rho))`` on the weights, ``LogNormal`` on the
    precision) sampled with ``rsample((S,))``; the ELBO from ``log_prob`` and ``kl_divergence``; three Adam steps,
    the guide's gradients and its posterior mean and standard deviation."""
    torch, nn, F, D = lib, lib.nn, lib.nn.functional, lib.distributions
    torch.manual_seed(1)
    n, d, S = 12, 3, 4
    X = torch.randn(n, d)
    y = X @ torch.tensor([1.0, -0.5, 0.25]) + 0.2 * torch.randn(n)
    w_loc = nn.Parameter(torch.zeros(d))
    w_rho = nn.Parameter(torch.full((d,), -3.0))
    tau_loc = nn.Parameter(torch.tensor(0.0))
    tau_rho = nn.Parameter(torch.tensor(-2.0))
    opt = torch.optim.Adam([w_loc, w_rho, tau_loc, tau_rho], lr=0.05)
    prior_w = D.Normal(torch.zeros(d), torch.ones(d))
    prior_tau = D.Gamma(torch.tensor(2.0), torch.tensor(1.0))
    elbos = []
    for _ in range(3):
        q_w = D.Normal(w_loc, F.softplus(w_rho))
        q_tau = D.LogNormal(tau_loc, F.softplus(tau_rho))
        w = q_w.rsample((S,))
        tau = q_tau.rsample((S,))
        lik = D.Normal(w @ X.T, tau.rsqrt().unsqueeze(-1)).log_prob(y).sum(-1)
        elbo = (lik + prior_tau.log_prob(tau) - q_tau.log_prob(tau)).mean() - D.kl_divergence(q_w, prior_w).sum()
        opt.zero_grad()
        (-elbo).backward()
        opt.step()
        elbos.append(elbo.item())
    grads = [w_loc.grad, w_rho.grad, tau_loc.grad, tau_rho.grad]
    return elbos, grads, w_loc, F.softplus(w_rho), q_tau.mean, q_tau.stddev, torch.rand(2)


def case_bayes_by_backprop_classifier(lib):
    """A Bayes-by-backprop linear layer as BNN repositories write it: ``log1p(exp(rho))`` scales, the local
    reparameterisation trick (activation mean and variance through ``F.linear``, ``randn_like`` noise), the KL to a
    ``Normal(0, 1)`` prior by ``kl_divergence``; a Bernoulli likelihood by logits, one backward pass, a
    ``Categorical`` over mixture labels sampled and scored, and the Monte-Carlo predictive over seeded passes."""
    torch, nn, F, D = lib, lib.nn, lib.nn.functional, lib.distributions
    torch.manual_seed(6)
    n, d = 12, 3
    X = torch.randn(n, d)
    labels = (X.sum(1) > 0).float()

    class BayesLinear(nn.Module):
        def __init__(self, fan_in, fan_out, prior_sigma=1.0):
            super().__init__()
            self.w_mu = nn.Parameter(torch.empty(fan_out, fan_in).uniform_(-0.2, 0.2))
            self.w_rho = nn.Parameter(torch.full((fan_out, fan_in), -5.0))
            self.b_mu = nn.Parameter(torch.zeros(fan_out))
            self.b_rho = nn.Parameter(torch.full((fan_out,), -5.0))
            self.prior = D.Normal(0.0, prior_sigma)

        def forward(self, x):
            w_sigma, b_sigma = torch.log1p(torch.exp(self.w_rho)), torch.log1p(torch.exp(self.b_rho))
            act_mu = F.linear(x, self.w_mu, self.b_mu)
            act_var = F.linear(x.pow(2), w_sigma.pow(2), b_sigma.pow(2))
            eps = torch.randn_like(act_mu)
            self.kl = (D.kl_divergence(D.Normal(self.w_mu, w_sigma), self.prior).sum()
                       + D.kl_divergence(D.Normal(self.b_mu, b_sigma), self.prior).sum())
            return act_mu + act_var.sqrt() * eps

    layer = BayesLinear(d, 1)
    out = layer(X).squeeze(-1)
    nll = -D.Bernoulli(logits=out).log_prob(labels).sum()
    loss = nll + layer.kl / n
    loss.backward()
    mix = D.Categorical(logits=torch.tensor([0.0, 1.0, -1.0]))
    z = mix.sample((6,))
    with torch.no_grad():
        probs = torch.stack([torch.sigmoid(layer(X).squeeze(-1)) for _ in range(4)])
    return (loss, layer.kl, layer.w_mu.grad, layer.w_rho.grad, layer.b_rho.grad, z, mix.log_prob(z), mix.entropy(),
            probs.mean(0), probs.std(0))


def case_hawkes_exponential_mle(lib):
    """A univariate Hawkes process with an exponential kernel as point-process repositories write it: the intensity
    at each event by a strictly-lower-triangular mask over pairwise lags and again by the recursive ``A_i``
    accumulated in a Python loop, the log-likelihood ``sum log lambda(t_i) - compensator`` with the closed-form
    integral, gradient ascent on log-parameters, the intensity on a grid using ``torch.searchsorted`` to pick the
    events strictly before each query time, and Ogata thinning with a seeded ``Exponential`` and ``rand``."""
    torch, D = lib, lib.distributions
    torch.manual_seed(2)
    t = torch.cumsum(D.Exponential(torch.tensor(1.5)).sample((12,)), 0).double()
    T = float(t[-1]) + 0.5
    log_mu = torch.tensor(math.log(0.5), dtype=torch.float64, requires_grad=True)
    log_alpha = torch.tensor(math.log(0.4), dtype=torch.float64, requires_grad=True)
    log_beta = torch.tensor(math.log(1.0), dtype=torch.float64, requires_grad=True)
    lls = []
    n = t.shape[0]
    mask = torch.ones(n, n, dtype=torch.bool).tril(-1)
    for _ in range(4):
        mu, alpha, beta = log_mu.exp(), log_alpha.exp(), log_beta.exp()
        lag = t.unsqueeze(1) - t.unsqueeze(0)
        kern = torch.where(mask, alpha * beta * torch.exp(-beta * lag.clamp_min(0)), torch.zeros_like(lag))
        lam = mu + kern.sum(1)
        comp = mu * T + alpha * (1 - torch.exp(-beta * (T - t))).sum()
        ll = torch.log(lam).sum() - comp
        grads = torch.autograd.grad(ll, [log_mu, log_alpha, log_beta])
        with torch.no_grad():
            for p, g in zip([log_mu, log_alpha, log_beta], grads):
                p.add_(0.05 * g)
        lls.append(ll.item())
    with torch.no_grad():
        mu, alpha, beta = log_mu.exp(), log_alpha.exp(), log_beta.exp()
        A = [torch.zeros((), dtype=torch.float64)]
        for i in range(1, n):
            A.append(torch.exp(-beta * (t[i] - t[i - 1])) * (1 + A[-1]))
        lam_rec = mu + alpha * beta * torch.stack(A)
        grid = torch.linspace(0, T, 7, dtype=torch.float64)
        k = torch.searchsorted(t, grid)
        before = torch.arange(n).unsqueeze(0) < k.unsqueeze(1)
        lag = (grid.unsqueeze(1) - t.unsqueeze(0)).clamp_min(0)
        lam_grid = mu + (alpha * beta * torch.exp(-beta * lag) * before).sum(1)
        right = torch.searchsorted(t, t, right=True)
        events, s, accepted = [], 0.0, 0
        while len(events) < 4 and s < 50:
            past = torch.tensor(events, dtype=torch.float64)
            lam_bar = float(mu + (alpha * beta * torch.exp(-beta * (s - past))).sum())
            s += float(D.Exponential(torch.tensor(lam_bar, dtype=torch.float64)).sample())
            lam_s = float(mu + (alpha * beta * torch.exp(-beta * (s - past))).sum())
            if float(torch.rand(())) * lam_bar <= lam_s:
                events.append(s)
                accepted += 1
    return (t, lls, grads, lam, lam_rec, (lam - lam_rec).abs().max() < 1e-10, k, lam_grid, right, events,
            accepted, log_mu, log_alpha, log_beta)


def case_laplace_bayesian_logreg(lib):
    """Bayesian logistic regression with a Gaussian prior: the MAP by a few Newton steps with the gradient from
    ``autograd.grad`` and the Hessian from ``torch.autograd.functional.hessian``, the Laplace posterior covariance by
    ``linalg.inv`` (and ``cholesky_inverse``), the probit-approximated predictive ``sigmoid(kappa * mu)``, posterior
    samples from ``MultivariateNormal(precision_matrix=H)`` and the Laplace log evidence with ``logdet``; then the
    diagonal empirical-Fisher Laplace of an ``nn.Linear`` from per-sample gradients by ``func.vmap(func.grad(...))``
    over ``functional_call``, flattened in parameter order by ``torch.cat(list(grads.values()))``."""
    torch, F, D = lib, lib.nn.functional, lib.distributions
    torch.manual_seed(3)
    n, d = 16, 3
    X = torch.cat([torch.randn(n, d - 1), torch.ones(n, 1)], 1).double()
    w_true = torch.tensor([1.5, -1.0, 0.3], dtype=torch.float64)
    y = torch.bernoulli(torch.sigmoid(X @ w_true))
    prior_prec = 1.0

    def neg_log_post(w):
        return F.binary_cross_entropy_with_logits(X @ w, y, reduction="sum") + 0.5 * prior_prec * (w * w).sum()

    w = torch.zeros(d, dtype=torch.float64)
    losses = []
    for _ in range(4):
        w_ = w.clone().requires_grad_(True)
        loss = neg_log_post(w_)
        g, = torch.autograd.grad(loss, w_)
        H = torch.autograd.functional.hessian(neg_log_post, w)
        w = w - torch.linalg.solve(H, g)
        losses.append(loss.item())
    H = torch.autograd.functional.hessian(neg_log_post, w)
    p = torch.sigmoid(X @ w)
    H_closed = X.T @ (X * (p * (1 - p)).unsqueeze(1)) + prior_prec * torch.eye(d, dtype=torch.float64)
    Sigma = torch.linalg.inv(H)
    Sigma2 = torch.cholesky_inverse(torch.linalg.cholesky(H))
    Xs = torch.tensor([[0.5, 0.5, 1.0], [-2.0, 1.0, 1.0]], dtype=torch.float64)
    mu_a = Xs @ w
    s2_a = ((Xs @ Sigma) * Xs).sum(1)
    kappa = 1.0 / torch.sqrt(1.0 + math.pi * s2_a / 8.0)
    pred = torch.sigmoid(kappa * mu_a)
    post = D.MultivariateNormal(w, precision_matrix=H)
    samples = post.sample((3,))
    mc_pred = torch.sigmoid(samples @ Xs.T).mean(0)
    log_ev = -neg_log_post(w) + 0.5 * d * math.log(prior_prec) - 0.5 * torch.logdet(H)
    model = torch.nn.Linear(d - 1, 1).double()
    params = {k: v.detach() for k, v in model.named_parameters()}  # weight, then bias

    def nll_one(p, x, t):
        logit = torch.func.functional_call(model, p, (x.unsqueeze(0),)).squeeze()
        return F.binary_cross_entropy_with_logits(logit, t)

    per_sample = torch.func.vmap(torch.func.grad(nll_one), in_dims=(None, 0, 0))(params, X[:, :-1], y)
    flat = torch.cat([g.reshape(n, -1) for g in per_sample.values()], 1)
    diag_prec = flat.pow(2).sum(0) + prior_prec
    return (losses, w, H, (H - H_closed).abs().max() < 1e-10, Sigma, torch.allclose(Sigma, Sigma2), pred,
            samples, mc_pred, log_ev, post.log_prob(w), list(per_sample), flat, diag_prec)


def case_iwae_bound(lib):
    """An importance-weighted autoencoder bound on binarised data: a Gaussian encoder ``Linear -> chunk(2)`` with a
    ``softplus`` scale, K samples by ``rsample((K,))``, ``Independent(Normal)`` prior and posterior log densities,
    a Bernoulli decoder by logits, ``logsumexp(log_w, 0) - log K``, the ELBO for K=1, the normalised importance
    weights and the gradient of the encoder; then one Adam step."""
    torch, nn, F, D = lib, lib.nn, lib.nn.functional, lib.distributions
    torch.manual_seed(4)
    B, x_dim, z_dim, K = 5, 6, 2, 4
    x = torch.bernoulli(torch.full((B, x_dim), 0.4))
    enc = nn.Sequential(nn.Linear(x_dim, 8), nn.Tanh(), nn.Linear(8, 2 * z_dim))
    dec = nn.Sequential(nn.Linear(z_dim, 8), nn.Tanh(), nn.Linear(8, x_dim))
    opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=1e-2)
    prior = D.Independent(D.Normal(torch.zeros(z_dim), torch.ones(z_dim)), 1)

    def bound(k):
        loc, raw = enc(x).chunk(2, dim=-1)
        q = D.Independent(D.Normal(loc, F.softplus(raw) + 1e-4), 1)
        z = q.rsample((k,))
        logits = dec(z)
        log_px = D.Bernoulli(logits=logits).log_prob(x).sum(-1)
        log_w = log_px + prior.log_prob(z) - q.log_prob(z)
        return torch.logsumexp(log_w, 0) - math.log(k), log_w

    iwae, log_w = bound(K)
    elbo, _ = bound(1)
    weights = F.softmax(log_w, dim=0)
    ess = 1.0 / weights.pow(2).sum(0)
    loss = -iwae.mean()
    opt.zero_grad()
    loss.backward()
    g_enc = enc[2].weight.grad.clone()
    opt.step()
    iwae2, _ = bound(K)
    return iwae, elbo, weights, ess, loss, g_enc, dec[2].bias.grad, iwae2.mean(), (iwae >= elbo - 5).all()


test_script_matches_torch = script_test(globals())
