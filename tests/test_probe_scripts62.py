"""Third-party programs, round 62 (helper 179): optimisation and geometry code written in pure PyTorch the way popular
repositories write it (custom ``torch.optim.Optimizer`` subclasses: SAM with ``first_step``/``second_step`` and a
closure under ``enable_grad``, timm's Lookahead wrapper sharing ``param_groups`` with a hand-written Lion, BertAdam
with a warmup schedule and per-parameter ``clip_grad_norm_``; log-domain Sinkhorn with ``logsumexp``, entropic OT
gradients, Sinkhorn divergences and POT-style Wasserstein barycenters; an E(n)-equivariant graph layer (EGNN) with
``scatter_add_``/``index_add_`` aggregation checked against a rotation from ``linalg.qr``; warmup ``LambdaLR``,
``add_param_group``, ``clip_grad_value_`` and timm's adaptive gradient clipping; an optimizer step compiled on its
own), re-implemented here, run with torch 2.13 and torchish and compared by ``assert_script_matches``
(tests/oracle.py).
"""
import copy
import io
from collections import OrderedDict, defaultdict

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _tiny_regression(torch, n=8, d=3):
    x = torch.randn(n, d)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1 * torch.randn(n, 1)
    return x, y


def case_sam_first_second_step(lib):
    """davda54/sam's SAM optimizer: ``base_optimizer`` built on SAM's ``param_groups`` (and then shared back), the
    grad norm over all groups by ``torch.norm(torch.stack([...]))``, ``state[p]["old_p"]`` restored through
    ``p.data = ...``, the two-step loop and the ``step(closure)`` form with ``torch.enable_grad()(closure)``;
    adaptive SAM (ASAM) on a second model with SGD momentum."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    class SAM(torch.optim.Optimizer):
        def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
            if rho < 0.0:
                raise ValueError(f"Invalid rho, should be non-negative: {rho}")
            defaults = dict(rho=rho, adaptive=adaptive, **kwargs)
            super(SAM, self).__init__(params, defaults)
            self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
            self.param_groups = self.base_optimizer.param_groups
            self.defaults.update(self.base_optimizer.defaults)

        @torch.no_grad()
        def first_step(self, zero_grad=False):
            grad_norm = self._grad_norm()
            for group in self.param_groups:
                scale = group["rho"] / (grad_norm + 1e-12)
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    self.state[p]["old_p"] = p.data.clone()
                    e_w = (torch.pow(p, 2) if group["adaptive"] else 1.0) * p.grad * scale.to(p)
                    p.add_(e_w)
            if zero_grad:
                self.zero_grad()

        @torch.no_grad()
        def second_step(self, zero_grad=False):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.data = self.state[p]["old_p"]
            self.base_optimizer.step()
            if zero_grad:
                self.zero_grad()

        @torch.no_grad()
        def step(self, closure=None):
            closure = torch.enable_grad()(closure)
            self.first_step(zero_grad=True)
            closure()
            self.second_step()

        def _grad_norm(self):
            shared_device = self.param_groups[0]["params"][0].device
            return torch.norm(torch.stack([
                ((torch.abs(p) if group["adaptive"] else 1.0) * p.grad).norm(p=2).to(shared_device)
                for group in self.param_groups for p in group["params"] if p.grad is not None]), p=2)

    torch.manual_seed(0)
    x, y = _tiny_regression(torch)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1)
    losses = []
    for _ in range(3):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.first_step(zero_grad=True)
        F.mse_loss(model(x), y).backward()
        opt.second_step(zero_grad=True)
        losses.append(loss.item())
    shared = opt.base_optimizer.param_groups is opt.param_groups

    model2 = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt2 = SAM(model2.parameters(), torch.optim.SGD, rho=0.5, adaptive=True, lr=0.05, momentum=0.9)

    def closure():
        loss = F.mse_loss(model2(x), y)
        loss.backward()
        return loss

    for _ in range(3):
        F.mse_loss(model2(x), y).backward()
        opt2.step(closure)
        opt2.zero_grad()
    old = opt2.state[model2[0].weight]["old_p"]
    return (losses, shared, sorted(opt.defaults), [p.detach() for p in model.parameters()],
            [p.detach() for p in model2.parameters()], old, opt2.base_optimizer.state[model2[2].bias]["momentum_buffer"],
            F.mse_loss(model2(x), y).item())


def case_lookahead_lion_state_dict(lib):
    """A hand-written Lion (lucidrains' / Google's form: ``sign`` of the interpolated momentum, ``p.add_(...,
    alpha=-lr)``, decoupled weight decay by ``p.data.mul_``, ``exp_avg.lerp_``) wrapped by timm's Lookahead (no
    ``super().__init__``, ``param_groups`` shared with the inner optimizer, slow weights kept in the inner state);
    a checkpoint through ``torch.save``/``torch.load`` of the model and optimizer ``state_dict``, restored into a fresh
    pair by ``load_state_dict``, and both continued for the same steps."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    class Lion(torch.optim.Optimizer):
        def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
            if not 0.0 < lr:
                raise ValueError(f"Invalid learning rate: {lr}")
            super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in filter(lambda p: p.grad is not None, group["params"]):
                    grad, lr, wd, (beta1, beta2) = p.grad, group["lr"], group["weight_decay"], group["betas"]
                    state = self.state[p]
                    if len(state) == 0:
                        state["exp_avg"] = torch.zeros_like(p)
                    exp_avg = state["exp_avg"]
                    p.data.mul_(1 - lr * wd)
                    update = exp_avg * beta1 + grad * (1 - beta1)
                    p.add_(torch.sign(update), alpha=-lr)
                    exp_avg.lerp_(grad, 1 - beta2)
            return loss

    class Lookahead(torch.optim.Optimizer):
        def __init__(self, base_optimizer, alpha=0.5, k=3):
            defaults = dict(lookahead_alpha=alpha, lookahead_k=k, lookahead_step=0)
            self._optimizer_step_pre_hooks = OrderedDict()
            self._optimizer_step_post_hooks = OrderedDict()
            self._base_optimizer = base_optimizer
            self.param_groups = base_optimizer.param_groups
            self.defaults = base_optimizer.defaults
            self.defaults.update(defaults)
            self.state = defaultdict(dict)
            for name, default in defaults.items():
                for group in self._base_optimizer.param_groups:
                    group.setdefault(name, default)

        @torch.no_grad()
        def update_slow(self, group):
            for fast_p in group["params"]:
                if fast_p.grad is None:
                    continue
                param_state = self._base_optimizer.state[fast_p]
                if "lookahead_slow_buff" not in param_state:
                    param_state["lookahead_slow_buff"] = torch.empty_like(fast_p)
                    param_state["lookahead_slow_buff"].copy_(fast_p)
                slow = param_state["lookahead_slow_buff"]
                slow.add_(fast_p - slow, alpha=group["lookahead_alpha"])
                fast_p.copy_(slow)

        @torch.no_grad()
        def step(self, closure=None):
            loss = self._base_optimizer.step(closure)
            for group in self._base_optimizer.param_groups:
                group["lookahead_step"] += 1
                if group["lookahead_step"] % group["lookahead_k"] == 0:
                    self.update_slow(group)
            return loss

        def state_dict(self):
            return self._base_optimizer.state_dict()

        def load_state_dict(self, state_dict):
            self._base_optimizer.load_state_dict(state_dict)
            self.param_groups = self._base_optimizer.param_groups

    def make():
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        return model, Lookahead(Lion(model.parameters(), lr=0.01, weight_decay=0.1), alpha=0.5, k=3)

    def train(model, opt, steps):
        out = []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            out.append(loss.item())
        return out

    torch.manual_seed(1)
    x, y = _tiny_regression(torch)
    model, opt = make()
    losses = train(model, opt, 4)
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
    buf.seek(0)
    ckpt = torch.load(buf)
    model_b, opt_b = make()
    model_b.load_state_dict(ckpt["model"])
    opt_b.load_state_dict(copy.deepcopy(ckpt["opt"]))
    more_a, more_b = train(model, opt, 3), train(model_b, opt_b, 3)
    sd = opt_b.state_dict()
    return (losses, more_a, more_b, [p.detach() for p in model_b.parameters()],
            sorted(sd["state"][0]), sd["state"][0]["lookahead_slow_buff"], sd["state"][3]["exp_avg"],
            [{k: v for k, v in g.items() if k != "params"} for g in sd["param_groups"]],
            opt_b.param_groups is opt_b._base_optimizer.param_groups, sorted(ckpt["opt"]["state"]))


def _sinkhorn_log(torch, a, b, C, eps, n_iter):
    """Log-domain Sinkhorn: dual potentials by alternating ``logsumexp`` soft-minima; the transport plan."""
    log_a, log_b = a.log(), b.log()
    f, g = torch.zeros_like(a), torch.zeros_like(b)
    for _ in range(n_iter):
        f = -eps * torch.logsumexp((g[None, :] - C) / eps + log_b[None, :], dim=1)
        g = -eps * torch.logsumexp((f[:, None] - C) / eps + log_a[:, None], dim=0)
    P = torch.exp((f[:, None] + g[None, :] - C) / eps + log_a[:, None] + log_b[None, :])
    return P, f, g


def case_sinkhorn_ot_divergence_grad(lib):
    """Entropic optimal transport between two small point clouds in float64: squared-Euclidean costs by ``cdist``,
    log-domain Sinkhorn, the plan's marginals, the primal cost ``<P, C>`` and the dual ``<a, f> + <b, g>``, the
    gradient of the OT loss wrt both clouds (backward through the iterations), the debiased Sinkhorn divergence
    ``OT(x, y) - (OT(x, x) + OT(y, y)) / 2`` and a few gradient-flow steps moving ``x`` towards ``y``."""
    torch = lib
    torch.manual_seed(2)
    x = torch.randn(6, 2, dtype=torch.float64, requires_grad=True)
    y = (torch.randn(6, 2, dtype=torch.float64) + torch.tensor([2.0, 1.0], dtype=torch.float64)).requires_grad_()
    a = torch.full((6,), 1 / 6, dtype=torch.float64)
    b = torch.softmax(torch.randn(6, dtype=torch.float64), dim=0)
    eps = 0.5

    def ot(p, q, wp, wq):
        C = torch.cdist(p, q) ** 2 / 2
        P, f, g = _sinkhorn_log(torch, wp, wq, C, eps, 8)
        return P, (P * C).sum(), (wp * f).sum() + (wq * g).sum()

    P, primal, dual = ot(x, y, a, b)
    gx, gy = torch.autograd.grad(dual, (x, y))
    marg = (P.sum(1), P.sum(0))

    def divergence(p, q):
        return ot(p, q, a, b)[2] - 0.5 * (ot(p, p, a, a)[2] + ot(q, q, b, b)[2])

    div = divergence(x, y)
    flow = x.detach().clone().requires_grad_()
    divs = []
    for _ in range(2):
        d = divergence(flow, y.detach())
        (g,) = torch.autograd.grad(d, flow)
        with torch.no_grad():
            flow -= 1.0 * g / a[:, None]
        divs.append(d.item())
    return P, marg, primal, dual, gx, gy, div, divs, flow.detach(), divergence(y.detach(), y.detach()).abs() < 1e-6


def case_wasserstein_barycenter_pot_style(lib):
    """POT's ``bregman.barycenter_sinkhorn`` written against the torch backend: two Gaussian histograms on a 1-D
    grid, the Gibbs kernel ``exp(-M / reg)`` with ``M`` normalised by its max, ``geometricBar`` by ``exp(log(.) @
    weights)``, the stopping error from ``std`` every tenth iteration, and ``ot.emd2``-free checks: the barycenter's
    mass and mean for three weightings; the barycenter's gradient wrt one input histogram."""
    torch = lib
    torch.manual_seed(3)
    n = 20
    grid = torch.arange(n, dtype=torch.float64)

    def gauss(m, s):
        h = torch.exp(-(grid - m) ** 2 / (2 * s ** 2))
        return h / h.sum()

    A = torch.stack([gauss(5.0, 2.0), gauss(14.0, 3.0)], dim=1)
    M = (grid[:, None] - grid[None, :]) ** 2
    M = M / M.max()
    reg = 1e-2

    def geometric_bar(weights, alldistribT):
        return torch.exp(torch.log(alldistribT) @ weights)  # (POT writes weights.T of the 1-D weights)

    def geometric_mean(alldistribT):
        return torch.exp(torch.mean(torch.log(alldistribT), dim=1))

    def barycenter(A, M, reg, weights, num_iter=40, stop_thr=1e-8):
        K = torch.exp(-M / reg)
        UKv = K @ (A.T / torch.sum(K, dim=0)).T
        u = (geometric_mean(UKv) / UKv.T).T
        err, cpt, errs = 1.0, 0, []
        while err > stop_thr and cpt < num_iter:
            cpt += 1
            UKv = u * (K.T @ (A / (K @ u)))
            u = (u.T * geometric_bar(weights, UKv)).T / UKv
            if cpt % 10 == 1:
                err = torch.sum(torch.std(UKv, dim=1)).item()
                errs.append(err)
        return geometric_bar(weights, UKv), cpt, errs

    out = []
    for w in (0.5, 0.25, 0.9):
        weights = torch.tensor([w, 1 - w], dtype=torch.float64)
        bary, cpt, errs = barycenter(A, M, reg, weights)
        out.append((bary, cpt, errs, bary.sum(), (bary * grid).sum() / bary.sum()))
    A_var = A.clone().requires_grad_()
    bary, _, _ = barycenter(A_var, M, reg, torch.tensor([0.5, 0.5], dtype=torch.float64), num_iter=10)
    (bary * grid).sum().backward()
    return out, A_var.grad, torch.rand(2)


def _unsorted_segment_sum(data, segment_ids, num_segments):
    result = data.new_full((num_segments, data.size(1)), 0)
    result.scatter_add_(0, segment_ids.unsqueeze(-1).expand(-1, data.size(1)), data)
    return result


def _unsorted_segment_mean(torch, data, segment_ids, num_segments):
    shape = (num_segments, data.size(1))
    result, count = data.new_full(shape, 0), data.new_full(shape, 0)
    ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
    result.scatter_add_(0, ids, data)
    count.scatter_add_(0, ids, torch.ones_like(data))
    return result / count.clamp(min=1)


def case_egnn_equivariance(lib):
    """An E(n)-equivariant graph layer as in vgsatorras/egnn's ``E_GCL``: edge MLP on ``cat([h_i, h_j, |x_i -
    x_j|^2])``, coordinate update ``x_i + mean_j (x_i - x_j) phi_x(m_ij)`` by ``scatter_add_`` segment means, node
    update by ``index_add_`` message sums with a residual; two stacked layers on a fully connected 5-node graph, the
    invariance of ``h`` and equivariance of ``x`` under a random orthogonal matrix from ``linalg.qr`` plus a
    translation, and the gradients of a coordinate loss."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    class EGCL(nn.Module):
        def __init__(self, nf, hidden):
            super().__init__()
            act = nn.SiLU()
            self.edge_mlp = nn.Sequential(nn.Linear(2 * nf + 1, hidden), act, nn.Linear(hidden, hidden), act)
            self.node_mlp = nn.Sequential(nn.Linear(hidden + nf, hidden), act, nn.Linear(hidden, nf))
            layer = nn.Linear(hidden, 1, bias=False)
            torch.nn.init.xavier_uniform_(layer.weight, gain=0.001)
            self.coord_mlp = nn.Sequential(nn.Linear(hidden, hidden), act, layer)

        def forward(self, h, edge_index, coord):
            row, col = edge_index
            coord_diff = coord[row] - coord[col]
            radial = torch.sum(coord_diff ** 2, 1).unsqueeze(1)
            m = self.edge_mlp(torch.cat([h[row], h[col], radial], dim=1))
            trans = coord_diff * self.coord_mlp(m)
            coord = coord + _unsorted_segment_mean(torch, trans, row, coord.size(0))
            agg = torch.zeros(h.size(0), m.size(1), dtype=m.dtype).index_add_(0, row, m)
            h = h + self.node_mlp(torch.cat([h, agg], dim=1))
            return h, coord, m

    torch.manual_seed(4)
    n = 5
    rows, cols = zip(*[(i, j) for i in range(n) for j in range(n) if i != j])
    edges = [torch.tensor(rows), torch.tensor(cols)]
    layers = nn.ModuleList([EGCL(4, 4), EGCL(4, 4)])
    h0, x0 = torch.randn(n, 4), torch.randn(n, 3)

    def run(h, x):
        for layer in layers:
            h, x, m = layer(h, edges, x)
        return h, x, m

    Q, R = torch.linalg.qr(torch.randn(3, 3))
    Q = Q * torch.sign(torch.diagonal(R)).unsqueeze(0)
    t = torch.randn(1, 3)
    h1, x1, m1 = run(h0, x0)
    h2, x2, _ = run(h0, x0 @ Q.T + t)
    inv = (h1 - h2).abs().max() < 1e-4
    equi = (x1 @ Q.T + t - x2).abs().max() < 1e-4
    msum = _unsorted_segment_sum(m1, edges[0], n)
    target = torch.randn(n, 3)
    _, xo, _ = run(h0, x0)
    loss = F.mse_loss(xo, target)
    loss.backward()
    grads = [p.grad for p in layers[0].coord_mlp.parameters()]
    return h1, x1, inv, equi, msum, torch.dist(Q @ Q.T, torch.eye(3)) < 1e-5, loss, grads


def case_warmup_clipping_param_groups(lib):
    """Fine-tuning plumbing: pytorch-pretrained-bert's BertAdam (a hand-written AdamW with ``warmup_linear`` inside
    ``step`` and ``clip_grad_norm_`` per parameter via ``group["max_grad_norm"]``), a ``LambdaLR`` linear warmup
    then decay on AdamW with no-decay parameter groups by name, ``add_param_group`` for a head unfrozen later (before the
    scheduler: a group added after it makes ``step`` raise), ``clip_grad_value_`` and per-parameter grad norms logged by name, and timm's
    adaptive gradient clipping (unit-wise norms, ``torch.where``, ``p.grad.detach().copy_``)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    def warmup_linear(x, warmup=0.002):
        if x < warmup:
            return x / warmup
        return max((x - 1.0) / (warmup - 1.0), 0)

    class BertAdam(torch.optim.Optimizer):
        def __init__(self, params, lr, warmup=-1, t_total=-1, b1=0.9, b2=0.999, e=1e-6, weight_decay=0.01,
                     max_grad_norm=1.0):
            defaults = dict(lr=lr, warmup=warmup, t_total=t_total, b1=b1, b2=b2, e=e, weight_decay=weight_decay,
                            max_grad_norm=max_grad_norm)
            super(BertAdam, self).__init__(params, defaults)

        def get_lr(self):
            lr = []
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    if len(state) == 0:
                        return [0]
                    lr_scheduled = group["lr"] * warmup_linear(state["step"] / group["t_total"], group["warmup"])
                    lr.append(lr_scheduled)
            return lr

        def step(self, closure=None):
            loss = None
            if closure is not None:
                loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad.data
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["next_m"] = torch.zeros_like(p.data)
                        state["next_v"] = torch.zeros_like(p.data)
                    next_m, next_v = state["next_m"], state["next_v"]
                    beta1, beta2 = group["b1"], group["b2"]
                    if group["max_grad_norm"] > 0:
                        torch.nn.utils.clip_grad_norm_(p, group["max_grad_norm"])
                    next_m.mul_(beta1).add_(grad, alpha=1 - beta1)
                    next_v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    update = next_m / (next_v.sqrt() + group["e"])
                    if group["weight_decay"] > 0.0:
                        update += group["weight_decay"] * p.data
                    lr_scheduled = group["lr"] * warmup_linear(state["step"] / group["t_total"], group["warmup"])
                    p.data.add_(-lr_scheduled * update)
                    state["step"] += 1
            return loss

    def unitwise_norm(x, norm_type=2.0):
        if x.ndim <= 1:
            return x.norm(norm_type)
        return x.norm(norm_type, dim=tuple(range(1, x.ndim)), keepdim=True)

    def adaptive_clip_grad(parameters, clip_factor=0.01, eps=1e-3, norm_type=2.0):
        for p in parameters:
            if p.grad is None:
                continue
            p_data, g_data = p.detach(), p.grad.detach()
            max_norm = unitwise_norm(p_data, norm_type=norm_type).clamp_(min=eps).mul_(clip_factor)
            grad_norm = unitwise_norm(g_data, norm_type=norm_type)
            clipped_grad = g_data * (max_norm / grad_norm.clamp(min=1e-6))
            p.grad.detach().copy_(torch.where(grad_norm < max_norm, g_data, clipped_grad))

    torch.manual_seed(5)
    x, y = _tiny_regression(torch)
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 1))
    bert = BertAdam(model.parameters(), lr=0.05, warmup=0.25, t_total=8, max_grad_norm=0.5)
    lrs0, bert_losses = [bert.get_lr()], []
    for _ in range(4):
        bert.zero_grad()
        loss = F.mse_loss(model(x), 3 * y)
        loss.backward()
        bert.step()
        bert_losses.append(loss.item())
        lrs0.append(bert.get_lr())

    torch.manual_seed(6)
    body, head = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4)), nn.Linear(4, 1)
    for p in head.parameters():
        p.requires_grad_(False)
    no_decay = ["bias", "1.weight"]
    groups = [
        {"params": [p for n, p in body.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.1},
        {"params": [p for n, p in body.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=0.02)
    opt.add_param_group({"params": list(head.parameters()), "lr": 0.005, "weight_decay": 0.0})
    warmup, total = 2, 6
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: s / warmup if s < warmup else max(0.0, (total - s) / (total - warmup)))
    lrs, norms, losses = [], [], []
    for step in range(5):
        if step == 2:
            for p in head.parameters():
                p.requires_grad_(True)
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(head(body(x)), y)
        loss.backward()
        norms.append({n: p.grad.norm(2).item() for n, p in body.named_parameters()})
        if step % 2 == 0:
            torch.nn.utils.clip_grad_value_(body.parameters(), clip_value=0.05)
        else:
            adaptive_clip_grad(list(body.parameters()) + list(head.parameters()), clip_factor=0.05)
        opt.step()
        sched.step()
        lrs.append([g["lr"] for g in opt.param_groups])
        losses.append(loss.item())
    extra = nn.Parameter(torch.zeros(2))
    opt.add_param_group({"params": [extra]})
    try:
        sched.step()
        late_group = "stepped"
    except ValueError:
        late_group = "ValueError"
    return (lrs0, bert_losses, [p.detach() for p in model.parameters()], lrs, sched.get_last_lr(), norms, losses,
            [p.detach() for p in head.parameters()], opt.state[head.weight]["step"], len(opt.param_groups),
            sched.base_lrs, opt.param_groups[2]["initial_lr"], late_group, opt.param_groups[3]["lr"])


def case_compiled_optimizer_step(lib, jit):
    """The optimizer step compiled on its own, the backward outside it (nanoGPT-style scripts and torchtitan's
    compiled optimizer): ``jit(opt.step)`` for AdamW with a warmup ``LambdaLR`` changing ``lr`` between calls and
    ``clip_grad_norm_`` before each step, fresh ``.grad`` tensors after ``zero_grad()`` at every call; then an
    SGD-momentum step compiled through a wrapper with ``zero_grad(set_to_none=False)`` (the same ``.grad`` tensors
    refilled by each backward)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(7)
    x, y = _tiny_regression(torch)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 3))
    step = jit(opt.step)
    losses, norms = [], []
    for i in range(5):
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x * (1 + 0.1 * i)), y)
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        step()
        sched.step()
        losses.append(loss.item())
    model2 = nn.Linear(3, 1)
    opt2 = torch.optim.SGD(model2.parameters(), lr=0.05, momentum=0.9)

    @jit
    def sgd_step():
        opt2.step()

    for i in range(4):
        opt2.zero_grad(set_to_none=False)
        F.mse_loss(model2(x), y * (i + 1)).backward()
        sgd_step()
    return (losses, norms, [p.detach() for p in model.parameters()], opt.state[model[0].weight]["exp_avg"],
            sched.get_last_lr(), [p.detach() for p in model2.parameters()],
            opt2.state[model2.bias]["momentum_buffer"])


test_script_matches_torch = script_test(globals())
