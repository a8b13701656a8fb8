"""Third-party programs, round 40 (continued from test_probe_scripts39.py): self-supervised losses, Glow's invertible
1x1 convolutions, a functorch-style PINN and inverse-CDF sampling, in the style of popular repositories (MoCo v2,
Barlow Twins, VICReg, BYOL, rosinality's glow-pytorch, torch.func PINN tutorials, word2vec/LM samplers), seeded by
``torch.manual_seed`` with default initialisation and compared with torch 2.13 by ``assert_script_matches``.
"""
import math

import numpy as np
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_moco_queue_barlow_twins_vicreg_byol(lib):
    """MoCo v2's ``MoCo`` module: a key encoder copied by ``param_k.data.copy_(param_q.data)`` and frozen, updated
    by ``param_k.data = param_k.data * m + param_q.data * (1. - m)``, a normalised ``queue`` buffer reassigned after
    ``register_buffer``, ``int(self.queue_ptr)`` and ``self.queue[:, ptr:ptr + batch_size] = keys.T``, the
    shuffle-BN stand-in ``randperm`` + ``argsort``, ``torch.einsum("nc,nc->n", [q, k])`` and ``"nc,ck->nk"`` with
    operand lists, ``logits /= self.T``; Barlow Twins' ``off_diagonal`` (``x.flatten()[:-1].view(n - 1, n + 1)[:,
    1:].flatten()``) and ``torch.diagonal(c).add_(-1).pow_(2).sum()`` on an affine-free BatchNorm1d, ``c.div_``;
    VICReg's variance/covariance terms; BYOL's ``2 - 2 * F.cosine_similarity``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(0)

    class MoCo(nn.Module):
        def __init__(self, dim=4, K=8, m=0.9, T=0.2):
            super().__init__()
            self.K, self.m, self.T = K, m, T
            self.encoder_q = nn.Sequential(nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, dim))
            self.encoder_k = nn.Sequential(nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, dim))
            for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
                param_k.data.copy_(param_q.data)
                param_k.requires_grad = False
            self.register_buffer("queue", torch.randn(dim, K))
            self.queue = nn.functional.normalize(self.queue, dim=0)
            self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

        @torch.no_grad()
        def _momentum_update_key_encoder(self):
            for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
                param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

        @torch.no_grad()
        def _dequeue_and_enqueue(self, keys):
            batch_size = keys.shape[0]
            ptr = int(self.queue_ptr)
            self.queue[:, ptr:ptr + batch_size] = keys.T
            ptr = (ptr + batch_size) % self.K
            self.queue_ptr[0] = ptr

        def forward(self, im_q, im_k):
            q = nn.functional.normalize(self.encoder_q(im_q), dim=1)
            with torch.no_grad():
                self._momentum_update_key_encoder()
                idx_shuffle = torch.randperm(im_k.shape[0])
                idx_unshuffle = torch.argsort(idx_shuffle)
                k = self.encoder_k(im_k[idx_shuffle])
                k = nn.functional.normalize(k, dim=1)[idx_unshuffle]
            l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
            l_neg = torch.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
            logits = torch.cat([l_pos, l_neg], dim=1)
            logits /= self.T
            labels = torch.zeros(logits.shape[0], dtype=torch.long)
            self._dequeue_and_enqueue(k)
            return logits, labels

    moco = MoCo()
    opt = torch.optim.SGD(moco.parameters(), lr=0.03, momentum=0.9, weight_decay=1e-4)
    out = []
    x = torch.randn(4, 5)
    for _ in range(3):
        logits, labels = moco(x + 0.1 * torch.randn_like(x), x * 0.9)
        loss = nn.CrossEntropyLoss()(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append((loss, moco.queue_ptr.clone()))

    def off_diagonal(x):
        n, m = x.shape
        return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()

    proj = nn.Linear(5, 4)
    bn = nn.BatchNorm1d(4, affine=False)
    z1, z2 = proj(x), proj(x.flip(1))
    c = bn(z1).T @ bn(z2)
    c.div_(4)
    on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
    off_diag = off_diagonal(c).pow_(2).sum()
    barlow = on_diag + 0.005 * off_diag
    barlow.backward()
    g_barlow = proj.weight.grad.clone()
    proj.zero_grad()
    z1, z2 = proj(x), proj(x.flip(1))
    repr_loss = F.mse_loss(z1, z2)
    xa, ya = z1 - z1.mean(dim=0), z2 - z2.mean(dim=0)
    std_x = torch.sqrt(xa.var(dim=0) + 0.0001)
    std_y = torch.sqrt(ya.var(dim=0) + 0.0001)
    std_loss = torch.mean(F.relu(1 - std_x)) / 2 + torch.mean(F.relu(1 - std_y)) / 2
    cov_x = (xa.T @ xa) / (4 - 1)
    cov_loss = off_diagonal(cov_x).pow_(2).sum().div(4)
    vicreg = 25 * repr_loss + 25 * std_loss + cov_loss
    vicreg.backward()
    byol = 2 - 2 * F.cosine_similarity(z1.detach(), z2, dim=-1).mean()
    return (out, moco.queue, list(moco.encoder_k.parameters()), barlow, g_barlow, vicreg, proj.weight.grad, byol,
            bn.running_var)


def case_glow_invertible_1x1_conv_lu_and_dequantisation(lib):
    """rosinality's glow-pytorch: ``InvConv2dLU`` from the P, L, U factors of a random orthogonal matrix (here
    ``torch.linalg.qr`` and ``torch.linalg.lu`` instead of numpy/scipy), ``u_mask``/``l_mask``/``s_sign``/``l_eye``
    buffers, ``calc_weight`` as ``w_p @ (w_l * l_mask + l_eye) @ (w_u * u_mask + torch.diag(s_sign *
    torch.exp(w_s)))``, ``F.conv2d`` with the ``unsqueeze(2).unsqueeze(3)`` weight, the log-determinant
    ``height * width * torch.sum(w_s)``, the reverse through ``weight.squeeze().inverse()``; ``InvConv2d`` with
    ``torch.slogdet(weight.squeeze().double())[1].float()``; uniform dequantisation ``floor(x * 255) / 256 +
    torch.rand_like(x) / 256``, a ``Normal(0, 1).log_prob(...).sum(dim=[1, 2, 3])`` prior and the bits-per-dim
    loss."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1)

    class InvConv2dLU(nn.Module):
        def __init__(self, in_channel):
            super().__init__()
            weight = torch.from_numpy(np.random.RandomState(0).randn(in_channel, in_channel).astype(np.float32))
            q, _ = torch.linalg.qr(weight)
            w_p, w_l, w_u = torch.linalg.lu(q)
            w_s = torch.diag(w_u)
            w_u = torch.triu(w_u, 1)
            u_mask = torch.triu(torch.ones_like(w_u), 1)
            l_mask = u_mask.T
            self.register_buffer("w_p", w_p)
            self.register_buffer("u_mask", u_mask)
            self.register_buffer("l_mask", l_mask)
            self.register_buffer("s_sign", torch.sign(w_s))
            self.register_buffer("l_eye", torch.eye(l_mask.shape[0]))
            self.w_l = nn.Parameter(w_l)
            self.w_s = nn.Parameter(torch.log(torch.abs(w_s)))
            self.w_u = nn.Parameter(w_u)

        def forward(self, input):
            _, _, height, width = input.shape
            weight = self.calc_weight()
            out = F.conv2d(input, weight)
            logdet = height * width * torch.sum(self.w_s)
            return out, logdet

        def calc_weight(self):
            weight = (self.w_p @ (self.w_l * self.l_mask + self.l_eye)
                      @ ((self.w_u * self.u_mask) + torch.diag(self.s_sign * torch.exp(self.w_s))))
            return weight.unsqueeze(2).unsqueeze(3)

        def reverse(self, output):
            weight = self.calc_weight()
            return F.conv2d(output, weight.squeeze().inverse().unsqueeze(2).unsqueeze(3))

    class InvConv2d(nn.Module):
        def __init__(self, in_channel):
            super().__init__()
            weight = torch.randn(in_channel, in_channel)
            q, _ = torch.linalg.qr(weight)
            self.weight = nn.Parameter(q.unsqueeze(2).unsqueeze(3))

        def forward(self, input):
            _, _, height, width = input.shape
            out = F.conv2d(input, self.weight)
            logdet = height * width * torch.slogdet(self.weight.squeeze().double())[1].float()
            return out, logdet

    x = torch.rand(2, 3, 4, 4)
    x = (x * 255).floor() / 256 + torch.rand_like(x) / 256
    x = x - 0.5
    m1, m2 = InvConv2dLU(3), InvConv2d(3)
    y1, ld1 = m1(x)
    y2, ld2 = m2(y1)
    log_p = torch.distributions.Normal(0., 1.).log_prob(y2).sum(dim=[1, 2, 3])
    n_pixel = 3 * 4 * 4
    loss = -math.log(256) * n_pixel + ld1 + ld2 + log_p
    loss = (-loss / (math.log(2) * n_pixel)).mean()
    loss.backward()
    rec = m1.reverse(y1)
    sign, logabsdet = torch.linalg.slogdet(m2.weight.detach().squeeze())
    return loss, rec, x, [p.grad for p in m1.parameters()], m2.weight.grad, m1.w_p, sign, logabsdet


def case_pinn_torch_func_vmap_grad_hessian(lib):
    """A PINN written with ``torch.func`` as in the functorch PINN tutorials: ``functional_call(model, params,
    (inp,))`` of a scalar ``f(params, x, t)``, derivatives by ``vmap(grad(f, argnums=1), in_dims=(None, 0, 0))``
    and ``grad(grad(...))`` for the second derivative, a Burgers residual, ``grad_and_value`` of the loss w.r.t.
    the parameter dict and a plain SGD update of the dict, ``hessian`` in x, and ``jacrev``/``jacfwd`` of the batched
    network w.r.t. stacked inputs."""
    torch, nn = lib, lib.nn
    fn = torch.func
    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def f(params, x, t):
        inp = torch.stack([x, t])
        return fn.functional_call(model, params, (inp,)).squeeze()

    dfdx = fn.vmap(fn.grad(f, argnums=1), in_dims=(None, 0, 0))
    d2fdx2 = fn.vmap(fn.grad(fn.grad(f, argnums=1), argnums=1), in_dims=(None, 0, 0))
    dfdt = fn.vmap(fn.grad(f, argnums=2), in_dims=(None, 0, 0))
    fv = fn.vmap(f, in_dims=(None, 0, 0))
    x, t = torch.rand(5), torch.rand(5)

    def loss_fn(params):
        res = dfdt(params, x, t) - 0.1 * d2fdx2(params, x, t) + fv(params, x, t) * dfdx(params, x, t)
        return res.pow(2).mean()

    grads, loss = fn.grad_and_value(loss_fn)(params)
    new_params = {k: params[k] - 0.01 * grads[k] for k in params}
    H = fn.hessian(lambda xx: f(new_params, xx, t[0]))(x[0])
    J = fn.jacrev(lambda xt: fv(new_params, xt[0], xt[1]))(torch.stack([x, t]))
    Jf = fn.jacfwd(lambda xt: fv(new_params, xt[0], xt[1]))(torch.stack([x, t]))
    return loss, grads, loss_fn(new_params), H, J, Jf


def case_inverse_cdf_sampling_and_categorical(lib):
    """Samplers from word2vec and language-model code that avoid ``multinomial``: a unigram^0.75 table turned
    into a CDF by ``cumsum`` and inverted by ``torch.searchsorted(cdf, torch.rand(n), right=True)`` (clamped in
    place) and ``torch.bucketize``; ``distributions.Categorical(probs=...)`` ``sample((2, 3))``, ``log_prob`` and
    ``entropy`` (a zero-probability class); ``repeat_interleave`` with a tensor of repeats and
    ``torch.unravel_index`` of beam-search flat indices; the generator's next draw."""
    torch = lib
    torch.manual_seed(3)
    counts = torch.tensor([10., 5., 3., 0., 2., 1.])
    p = counts.pow(0.75)
    p = p / p.sum()
    cdf = torch.cumsum(p, 0)
    u = torch.rand(12)
    samples = torch.searchsorted(cdf, u, right=True).clamp_(max=len(p) - 1)
    buckets = torch.bucketize(u, cdf)
    cat = torch.distributions.Categorical(probs=p)
    drawn = cat.sample((2, 3))
    repeated = torch.repeat_interleave(torch.arange(4), torch.tensor([1, 0, 3, 2]))
    beam, token = torch.unravel_index(torch.tensor([5, 11, 3]), (3, 4))
    return samples, buckets, drawn, cat.log_prob(drawn), cat.entropy(), repeated, beam, token, torch.rand(1)


test_script_matches_torch = script_test(globals())
