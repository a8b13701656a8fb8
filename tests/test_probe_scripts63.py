"""Third-party programs, round 63 (helper 180): newer architectures as their reference repositories write them in
pure PyTorch (Kolmogorov-Arnold networks in efficient-kan's form: Cox-de Boor B-spline bases on a grid buffer, a
spline scaler, ``update_grid`` by ``torch.linalg.lstsq`` and the entropy regulariser, trained a few steps; xLSTM's
mLSTM cell with exponential gating stabilised by ``m = max(...)``, its parallel form from log-space ``cumsum`` checked
against the recurrent form, and a ``logcumsumexp`` RWKV-style time mixing; hand-written deformable sampling and ROI
align by ``grid_sample``/``affine_grid`` with every padding mode and both ``align_corners``, gradients into the
offsets; a mixture-of-depths router with ``topk`` capacity, stable ``sort``, ``gather``/``scatter`` back into the
residual stream and an early-exit head; speculative decoding's acceptance rule by seeded ``rand``/``multinomial``;
a Gaussian-splatting style 2-D projection composited front to back by ``cumprod``), re-implemented here, run with
torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _kan_linear(torch):
    """efficient-kan's ``KANLinear`` (Blealtan/efficient-kan), kept as the repository writes it."""
    F = torch.nn.functional

    class KANLinear(torch.nn.Module):
        def __init__(self, in_features, out_features, grid_size=5, spline_order=3, scale_noise=0.1, scale_base=1.0,
                     scale_spline=1.0, enable_standalone_scale_spline=True, base_activation=torch.nn.SiLU,
                     grid_eps=0.02, grid_range=(-1, 1)):
            super().__init__()
            self.in_features, self.out_features = in_features, out_features
            self.grid_size, self.spline_order = grid_size, spline_order
            h = (grid_range[1] - grid_range[0]) / grid_size
            grid = ((torch.arange(-spline_order, grid_size + spline_order + 1) * h + grid_range[0])
                    .expand(in_features, -1).contiguous())
            self.register_buffer("grid", grid)
            self.base_weight = torch.nn.Parameter(torch.Tensor(out_features, in_features))
            self.spline_weight = torch.nn.Parameter(torch.Tensor(out_features, in_features, grid_size + spline_order))
            if enable_standalone_scale_spline:
                self.spline_scaler = torch.nn.Parameter(torch.Tensor(out_features, in_features))
            self.scale_noise, self.scale_base, self.scale_spline = scale_noise, scale_base, scale_spline
            self.enable_standalone_scale_spline = enable_standalone_scale_spline
            self.base_activation = base_activation()
            self.grid_eps = grid_eps
            self.reset_parameters()

        def reset_parameters(self):
            torch.nn.init.kaiming_uniform_(self.base_weight, a=math.sqrt(5) * self.scale_base)
            with torch.no_grad():
                noise = ((torch.rand(self.grid_size + 1, self.in_features, self.out_features) - 1 / 2)
                         * self.scale_noise / self.grid_size)
                self.spline_weight.data.copy_(
                    (self.scale_spline if not self.enable_standalone_scale_spline else 1.0)
                    * self.curve2coeff(self.grid.T[self.spline_order:-self.spline_order], noise))
                if self.enable_standalone_scale_spline:
                    torch.nn.init.kaiming_uniform_(self.spline_scaler, a=math.sqrt(5) * self.scale_spline)

        def b_splines(self, x):
            assert x.dim() == 2 and x.size(1) == self.in_features
            grid = self.grid
            x = x.unsqueeze(-1)
            bases = ((x >= grid[:, :-1]) & (x < grid[:, 1:])).to(x.dtype)
            for k in range(1, self.spline_order + 1):
                bases = ((x - grid[:, :-(k + 1)]) / (grid[:, k:-1] - grid[:, :-(k + 1)]) * bases[:, :, :-1]) + (
                    (grid[:, k + 1:] - x) / (grid[:, k + 1:] - grid[:, 1:(-k)]) * bases[:, :, 1:])
            assert bases.size() == (x.size(0), self.in_features, self.grid_size + self.spline_order)
            return bases.contiguous()

        def curve2coeff(self, x, y):
            assert x.dim() == 2 and x.size(1) == self.in_features
            assert y.size() == (x.size(0), self.in_features, self.out_features)
            A = self.b_splines(x).transpose(0, 1)
            B = y.transpose(0, 1)
            solution = torch.linalg.lstsq(A, B).solution
            result = solution.permute(2, 0, 1)
            assert result.size() == (self.out_features, self.in_features, self.grid_size + self.spline_order)
            return result.contiguous()

        @property
        def scaled_spline_weight(self):
            return self.spline_weight * (self.spline_scaler.unsqueeze(-1)
                                         if self.enable_standalone_scale_spline else 1.0)

        def forward(self, x):
            assert x.size(-1) == self.in_features
            original_shape = x.shape
            x = x.reshape(-1, self.in_features)
            base_output = F.linear(self.base_activation(x), self.base_weight)
            spline_output = torch.einsum("bik,oik->bo", self.b_splines(x), self.scaled_spline_weight)
            output = base_output + spline_output
            return output.reshape(*original_shape[:-1], self.out_features)

        @torch.no_grad()
        def update_grid(self, x, margin=0.01):
            assert x.dim() == 2 and x.size(1) == self.in_features
            batch = x.size(0)
            splines = self.b_splines(x).permute(1, 0, 2)
            orig_coeff = self.scaled_spline_weight.permute(1, 2, 0)
            unreduced_spline_output = torch.bmm(splines, orig_coeff).permute(1, 0, 2)
            x_sorted = torch.sort(x, dim=0)[0]
            grid_adaptive = x_sorted[torch.linspace(0, batch - 1, self.grid_size + 1, dtype=torch.int64,
                                                    device=x.device)]
            uniform_step = (x_sorted[-1] - x_sorted[0] + 2 * margin) / self.grid_size
            grid_uniform = (torch.arange(self.grid_size + 1, dtype=torch.float32, device=x.device).unsqueeze(1)
                            * uniform_step + x_sorted[0] - margin)
            grid = self.grid_eps * grid_uniform + (1 - self.grid_eps) * grid_adaptive
            grid = torch.concatenate([
                grid[:1] - uniform_step * torch.arange(self.spline_order, 0, -1, device=x.device).unsqueeze(1),
                grid,
                grid[-1:] + uniform_step * torch.arange(1, self.spline_order + 1, device=x.device).unsqueeze(1),
            ], dim=0)
            self.grid.copy_(grid.T)
            self.spline_weight.data.copy_(self.curve2coeff(x, unreduced_spline_output))

        def regularization_loss(self, regularize_activation=1.0, regularize_entropy=1.0):
            l1_fake = self.spline_weight.abs().mean(-1)
            regularization_loss_activation = l1_fake.sum()
            p = l1_fake / regularization_loss_activation
            regularization_loss_entropy = -torch.sum(p * p.log())
            return (regularize_activation * regularization_loss_activation
                    + regularize_entropy * regularization_loss_entropy)

    return KANLinear


def case_kan_bsplines_update_grid_train(lib):
    """efficient-kan: a two-layer KAN (``KANLinear`` 2 -> 2 -> 2) initialised by ``curve2coeff`` (an
    underdetermined batched ``linalg.lstsq`` on 6 grid points for 8 coefficients), the Cox-de Boor bases' partition of
    unity inside the grid, a few Adam steps on a regression loss plus ``regularization_loss``, ``update_grid`` from
    the batch (sorted quantiles by ``linspace`` indices, a refit by ``lstsq``) and the outputs before and after."""
    torch, F = lib, lib.nn.functional
    KANLinear = _kan_linear(torch)

    class KAN(torch.nn.Module):
        def __init__(self, layers_hidden):
            super().__init__()
            self.layers = torch.nn.ModuleList(KANLinear(i, o) for i, o in zip(layers_hidden, layers_hidden[1:]))

        def forward(self, x, update_grid=False):
            for layer in self.layers:
                if update_grid:
                    layer.update_grid(x)
                x = layer(x)
            return x

        def regularization_loss(self, regularize_activation=1.0, regularize_entropy=1.0):
            return sum(layer.regularization_loss(regularize_activation, regularize_entropy) for layer in self.layers)

    torch.manual_seed(0)
    model = KAN([2, 2, 2])
    x = torch.rand(16, 2) * 1.6 - 0.8
    y = torch.cat([torch.sin(math.pi * x[:, :1]) * x[:, 1:] ** 2, x.prod(1, keepdim=True)], 1)
    bases = model.layers[0].b_splines(x)
    init_w = model.layers[0].spline_weight.detach().clone()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y) + 1e-3 * model.regularization_loss()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    grads = [p.grad.clone() for p in model.layers[0].parameters()]
    before = model(x).detach()
    with torch.no_grad():
        model(x, update_grid=True)
    after = model(x).detach()
    return (bases, bases.sum(-1), init_w, losses, grads, model.layers[0].grid, model.layers[1].grid,
            model.layers[1].spline_weight.detach(), before, after, model.regularization_loss().item())


def _mlstm_parallel(torch, queries, keys, values, igate_preact, fgate_preact, eps=1e-6):
    """xLSTM's ``parallel_stabilized_simple`` (NX-AI/xlstm, backends.py)."""
    B, NH, S, DH = queries.shape
    _dtype, _device = queries.dtype, queries.device
    log_fgates = torch.nn.functional.logsigmoid(fgate_preact)
    ltr = torch.tril(torch.ones((S, S), dtype=torch.bool, device=_device))
    log_fgates_cumsum = torch.cat([torch.zeros((B, NH, 1, 1), dtype=_dtype, device=_device),
                                   torch.cumsum(log_fgates, dim=-2)], dim=-2)
    rep_log_fgates_cumsum = log_fgates_cumsum.repeat(1, 1, 1, S + 1)
    _log_fg_matrix = rep_log_fgates_cumsum - rep_log_fgates_cumsum.transpose(-2, -1)
    log_fg_matrix = torch.where(ltr, _log_fg_matrix[:, :, 1:, 1:], -float("inf"))
    log_D_matrix = log_fg_matrix + igate_preact.transpose(-2, -1)
    max_log_D, _ = torch.max(log_D_matrix, dim=-1, keepdim=True)
    log_D_matrix_stabilized = log_D_matrix - max_log_D
    D_matrix = torch.exp(log_D_matrix_stabilized)
    keys_scaled = keys / math.sqrt(DH)
    qk_matrix = queries @ keys_scaled.transpose(-2, -1)
    C_matrix = qk_matrix * D_matrix
    normalizer = torch.maximum(C_matrix.sum(dim=-1, keepdim=True).abs(), torch.exp(-max_log_D))
    C_matrix_normalized = C_matrix / (normalizer + eps)
    return C_matrix_normalized @ values


def _mlstm_step(torch, c_state, n_state, m_state, q, k, v, igate_preact, fgate_preact, eps=1e-6):
    """xLSTM's ``recurrent_step_stabilized_simple`` (its in-place ``squeeze_`` on the step's slices included)."""
    B, NH, S, DH = q.shape
    q, k, v = q.squeeze_(2).unsqueeze(-1), k.squeeze_(2).unsqueeze(-1), v.squeeze_(2).unsqueeze(-1)
    log_fg_act = torch.nn.functional.logsigmoid(fgate_preact)
    m_state_new = torch.max(log_fg_act + m_state, igate_preact)
    fg_act = torch.exp(log_fg_act + m_state - m_state_new)
    ig_act = torch.exp(igate_preact - m_state_new)
    k_scaled = k / math.sqrt(DH)
    c_state_new = fg_act * c_state + ig_act * (k_scaled @ v.transpose(-1, -2))
    n_state_new = fg_act * n_state + ig_act * k_scaled
    h_num = q.transpose(-1, -2) @ c_state_new
    qn_dotproduct = q.transpose(-1, -2) @ n_state_new
    max_val = torch.exp(-m_state_new)
    h_denom = torch.maximum(qn_dotproduct.abs(), max_val) + eps
    return h_num / h_denom, (c_state_new, n_state_new, m_state_new)


def case_mlstm_parallel_vs_recurrent(lib):
    """xLSTM's mLSTM: the stabilised parallel form (log forget gates by ``logsigmoid``, their ``cumsum`` repeated into
    a decay matrix, ``where`` with ``-inf`` above the diagonal, the row max as stabiliser) against the recurrent form
    stepped token by token from ``m = 0`` states (``torch.max`` of two tensors, in-place ``squeeze_`` of slices), the
    gradients of the parallel form wrt q, k, v and both gate pre-activations, and an RWKV-style decayed time mixing
    whose log-space normaliser by ``logcumsumexp`` is checked against an explicit loop."""
    torch = lib
    torch.manual_seed(1)
    B, NH, S, DH = 1, 2, 6, 4
    q, k, v = (torch.randn(B, NH, S, DH, requires_grad=True) for _ in range(3))
    ig = (torch.randn(B, NH, S, 1) * 2).requires_grad_()
    fg = (torch.randn(B, NH, S, 1) + 3.0).requires_grad_()
    h_par = _mlstm_parallel(torch, q, k, v, ig, fg)
    (h_par.square().sum() + h_par.sum()).backward()
    grads = [t.grad for t in (q, k, v, ig, fg)]

    c = torch.zeros(B, NH, DH, DH)
    n = torch.zeros(B, NH, DH, 1)
    m = torch.zeros(B, NH, 1, 1)
    hs = []
    with torch.no_grad():
        for t in range(S):
            h, (c, n, m) = _mlstm_step(torch, c, n, m, q[:, :, t:t + 1].clone(), k[:, :, t:t + 1].clone(),
                                       v[:, :, t:t + 1].clone(), ig[:, :, t:t + 1], fg[:, :, t:t + 1])
            hs.append(h)
    h_rec = torch.cat(hs, dim=-2)
    agree = torch.allclose(h_par, h_rec, atol=1e-4)

    # RWKV-like time mixing: out_t = sum_{s<=t} exp(w*(s-t) + k_s) v_s / sum_{s<=t} exp(w*(s-t) + k_s)
    torch.manual_seed(2)
    T, C = 6, 3
    kk = torch.randn(T, C, requires_grad=True)
    vv = torch.randn(T, C)
    w = torch.rand(C, requires_grad=True)
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    logits = kk + w * pos
    log_den = torch.logcumsumexp(logits, dim=0)
    num = torch.cumsum(torch.exp(logits - logits.max(0).values) * vv, dim=0)
    out = num * torch.exp(logits.max(0).values - log_den)
    ref = torch.stack([(torch.softmax(logits[:t + 1], 0) * vv[:t + 1]).sum(0) for t in range(T)])
    out.sum().backward()
    return (h_par, h_rec, agree, grads, m, out, (out - ref).abs().max() < 1e-5, kk.grad, w.grad,
            torch.logcumsumexp(torch.tensor([[-float("inf"), 0.0, -float("inf"), 1.0]]), dim=1))


def case_grid_sample_deformable_roi_align(lib):
    """Hand-written deformable sampling: ``grid_sample`` bilinear/nearest over the three padding modes and both
    ``align_corners`` with grids reaching outside ``[-1, 1]``, its gradients wrt input and grid; ``affine_grid`` for a
    rotation + scale (a spatial-transformer step); a homography warp whose division by ``w`` gives infinite and NaN
    points (NaN outputs with zeros padding, clamped with border/reflection); a deformable 3x3 conv whose offsets come
    from a conv and are added to the base grid (``torch.meshgrid(..., indexing="ij")``), trained one SGD step; ROI
    align by ``grid_sample`` with sampling ratio 2 (bin centres from ``arange``, averaged by ``view``/``mean``)
    against ``avg_pool2d`` on an axis-aligned box."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(3)
    H = W = 5
    img = torch.randn(1, 2, H, W, requires_grad=True)
    grid = (torch.rand(1, 4, 4, 2) * 2.6 - 1.3).requires_grad_()
    outs, ggrads = [], []
    for mode in ("bilinear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            for ac in (False, True):
                o = F.grid_sample(img, grid, mode=mode, padding_mode=pad, align_corners=ac)
                outs.append(o)
                if mode == "bilinear":
                    gi, gg = torch.autograd.grad((o * torch.arange(o.numel()).view_as(o).float()).sum(), (img, grid))
                    ggrads.append((gi, gg))
    ang = torch.tensor(0.3)
    theta = torch.stack([torch.stack([1.2 * torch.cos(ang), -torch.sin(ang), torch.tensor(0.1)]),
                         torch.stack([torch.sin(ang), 0.9 * torch.cos(ang), torch.tensor(-0.2)])]).unsqueeze(0)
    stn = []
    for ac in (False, True):
        g = F.affine_grid(theta, (1, 2, H, W), align_corners=ac)
        stn.append((g, F.grid_sample(img.detach(), g, align_corners=ac, padding_mode="border")))
    # a projective warp (a homography's division by w, as kornia-style code writes it): w is 0 on the middle row, so
    # those points are infinite, or NaN at the centre (0 / 0)
    base = F.affine_grid(torch.eye(2, 3)[None], (1, 2, H, W), align_corners=True)
    homog = torch.cat([base, torch.ones_like(base[..., :1])], -1) @ torch.tensor(
        [[1.0, 0.2, 0.0], [0.1, 1.0, 0.0], [0.0, 1.0, 0.0]]).T
    warp_grid = homog[..., :2] / homog[..., 2:]
    warped = [F.grid_sample(img.detach(), warp_grid, mode=m, padding_mode=p, align_corners=True)
              for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")]
    stn.append((warp_grid, warped, [w.isnan().sum() for w in warped]))

    class DeformConv(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.offset = nn.Conv2d(cin, 18, 3, padding=1)
            nn.init.normal_(self.offset.weight, std=0.05)
            nn.init.zeros_(self.offset.bias)
            self.weight = nn.Parameter(torch.randn(cout, cin * 9) * 0.2)

        def forward(self, x):
            b, c, h, w = x.shape
            off = self.offset(x).view(b, 9, 2, h, w)
            ys, xs = torch.meshgrid(torch.arange(h, dtype=x.dtype), torch.arange(w, dtype=x.dtype), indexing="ij")
            ky, kx = torch.meshgrid(torch.arange(-1, 2, dtype=x.dtype), torch.arange(-1, 2, dtype=x.dtype),
                                    indexing="ij")
            py = ys[None] + ky.reshape(9, 1, 1) + off[:, :, 0]
            px = xs[None] + kx.reshape(9, 1, 1) + off[:, :, 1]
            g = torch.stack([2 * px / (w - 1) - 1, 2 * py / (h - 1) - 1], dim=-1)  # (b, 9, h, w, 2)
            sampled = F.grid_sample(x, g.view(b, 9 * h, w, 2), align_corners=True).view(b, c, 9, h, w)
            return torch.einsum("ok,bkhw->bohw", self.weight, sampled.reshape(b, c * 9, h, w))

    dc = DeformConv(2, 3)
    opt = torch.optim.SGD(dc.parameters(), lr=0.1)
    x = img.detach()
    y1 = dc(x)
    loss = y1.square().mean()
    loss.backward()
    off_grad = dc.offset.weight.grad.clone()
    opt.step()
    y2 = dc(x)

    def roi_align(feat, rois, out_size=2, sampling_ratio=2):
        n, c = rois.size(0), feat.size(1)
        h, w = feat.shape[-2:]
        res = []
        for r in range(n):
            x1, y1_, x2, y2_ = rois[r]
            bw, bh = (x2 - x1) / out_size, (y2_ - y1_) / out_size
            steps = (torch.arange(out_size * sampling_ratio, dtype=feat.dtype) + 0.5) / sampling_ratio
            sx, sy = x1 + steps * bw - 0.5, y1_ + steps * bh - 0.5
            gy, gx = torch.meshgrid(2 * (sy + 0.5) / h - 1, 2 * (sx + 0.5) / w - 1, indexing="ij")
            g = torch.stack([gx, gy], -1)[None]
            s = F.grid_sample(feat, g, align_corners=False)
            res.append(s.view(1, c, out_size, sampling_ratio, out_size, sampling_ratio).mean((3, 5)))
        return torch.cat(res)

    feat = torch.randn(1, 2, 6, 6, requires_grad=True)
    rois = torch.tensor([[0.0, 0.0, 4.0, 4.0], [1.3, 0.7, 4.9, 5.2]])
    pooled = roi_align(feat, rois)
    pooled.sum().backward()
    return (outs, ggrads, stn, y1, off_grad, y2, pooled, feat.grad,
            torch.allclose(pooled[0], F.avg_pool2d(feat.detach()[:, :, :4, :4], 2)[0], atol=1e-6))


def case_mixture_of_depths_router(lib):
    """Mixture-of-depths (Raposo et al., as community ports write it): a scalar router per token, ``topk`` over the
    sequence at capacity ``int(T * capacity_factor)``, the chosen indices re-sorted (``torch.sort(..., stable=True)``)
    to keep causal order, the tokens ``gather``-ed, run through a small block, scaled by their router weight and
    ``scatter``-ed back into the residual stream (and the same through ``scatter_add``); an auxiliary BCE router loss,
    the backward into router and block; stable descending ties; a confidence-threshold early-exit head."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(4)
    Bsz, T, D = 2, 8, 4
    capacity_factor = 0.5

    class MoDBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.router = nn.Linear(D, 1)
            self.block = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

        def forward(self, x):
            b, t, d = x.shape
            k = int(t * capacity_factor)
            weights = self.router(x).squeeze(-1)
            top_w, top_i = torch.topk(weights, k, dim=1, sorted=False)
            top_i, order = torch.sort(top_i, dim=1, stable=True)
            top_w = torch.gather(top_w, 1, order)
            idx = top_i.unsqueeze(-1).expand(-1, -1, d)
            chosen = torch.gather(x, 1, idx)
            processed = self.block(chosen) * torch.sigmoid(top_w).unsqueeze(-1)
            out = torch.scatter(x, 1, idx, chosen + processed)
            out_add = x.scatter_add(1, idx, processed)
            target = torch.zeros_like(weights).scatter_(1, top_i, 1.0)
            aux = F.binary_cross_entropy_with_logits(weights, target)
            return out, out_add, aux, top_i

    mod = MoDBlock()
    x = torch.randn(Bsz, T, D, requires_grad=True)
    out, out_add, aux, top_i = mod(x)
    (out.square().mean() + 0.1 * aux).backward()
    grads = [p.grad for p in mod.parameters()] + [x.grad]

    ties = torch.tensor([[0.5, 1.0, 0.5, 1.0, 0.0, 1.0, 0.5, 0.0]])
    sv, si = torch.sort(ties, dim=1, descending=True, stable=True)
    sv2, si2 = torch.sort(ties, dim=1, stable=True)

    head = nn.Linear(D, 3)
    h = x.detach()
    exited = torch.zeros(Bsz, T, dtype=torch.bool)
    preds = torch.full((Bsz, T), -1, dtype=torch.long)
    exit_layer = torch.full((Bsz, T), -1, dtype=torch.long)
    for layer in range(3):
        h = h + 0.5 * torch.tanh(h @ mod.block[1].weight[:D].T)
        probs = F.softmax(head(h), dim=-1)
        conf, pred = probs.max(-1)
        now = (conf > 0.45) & ~exited
        preds = torch.where(now, pred, preds)
        exit_layer[now] = layer
        exited |= now
    return out, out_add, aux, top_i, grads, sv, si, sv2, si2, preds, exit_layer, exited.float().mean()


def case_speculative_decoding_acceptance(lib):
    """Speculative sampling (Leviathan et al. / Chen et al., as minimal repositories write it): a draft and a target
    model as fixed logits tables over a vocabulary of 6, draft tokens by ``torch.multinomial`` under
    ``manual_seed``, acceptance ``rand < min(1, p/q)``, the first rejection found by ``cumprod`` of the accept mask,
    the residual distribution ``clamp(p - q, min=0)`` renormalised and resampled, the bonus token when all are
    accepted; many rounds, and the empirical distribution of the first token against the target's."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(5)
    V, gamma = 6, 3
    draft_table = torch.randn(V, V)
    target_table = draft_table + 0.7 * torch.randn(V, V)

    def probs(table, tok, temp=1.0):
        return F.softmax(table[tok] / temp, dim=-1)

    def speculative_step(prefix_tok, gen):
        toks, qs = [], []
        cur = prefix_tok
        for _ in range(gamma):
            q = probs(draft_table, cur)
            nxt = torch.multinomial(q, 1, generator=gen).item()
            toks.append(nxt)
            qs.append(q)
            cur = nxt
        q = torch.stack(qs)
        ctx = torch.tensor([prefix_tok] + toks)
        p = probs(target_table, ctx)
        t = torch.tensor(toks)
        p_tok, q_tok = p[:-1].gather(1, t[:, None]).squeeze(1), q.gather(1, t[:, None]).squeeze(1)
        r = torch.rand(gamma, generator=gen)
        accept = r < torch.clamp(p_tok / q_tok, max=1.0)
        n_acc = int(torch.cumprod(accept.long(), 0).sum())
        if n_acc < gamma:
            resid = torch.clamp(p[n_acc] - q[n_acc], min=0)
            resid = resid / resid.sum()
            extra = torch.multinomial(resid, 1, generator=gen).item()
        else:
            extra = torch.multinomial(p[-1], 1, generator=gen).item()
        return toks[:n_acc] + [extra], n_acc

    gen = torch.Generator().manual_seed(7)
    seqs, accs = [], []
    for start in range(V):
        out, n = speculative_step(start, gen)
        seqs.append(out)
        accs.append(n)
    counts = torch.zeros(V)
    for _ in range(60):
        out, _ = speculative_step(0, gen)
        counts[out[0]] += 1
    batch = torch.multinomial(F.softmax(target_table, -1), 4, replacement=True)
    no_rep = torch.multinomial(F.softmax(target_table, -1), 3, replacement=False)
    return seqs, accs, counts, probs(target_table, 0), batch, no_rep, torch.rand(3)


def case_gaussian_splatting_2d_composite(lib):
    """A Gaussian-splatting style rasteriser in pure PyTorch (gsplat's reference ``_torch_impl`` flavour): 3-D means
    through a pinhole camera, the EWA Jacobian ``J W Sigma W^T J^T`` with covariances from quaternions and log-scales,
    a 0.3 low-pass, conics by the closed-form 2x2 inverse, per-pixel Gaussian weights ``opacity * exp(-0.5 d^T conic
    d)`` clamped at 0.99, depth order by ``argsort``, front-to-back transmittance by an exclusive ``cumprod``, colour
    and alpha images and the gradients wrt means, log-scales, quaternions, opacities and colours."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(6)
    N, Hh, Ww = 5, 6, 7
    means = (torch.randn(N, 3) * torch.tensor([0.6, 0.5, 0.3]) + torch.tensor([0.0, 0.0, 3.0])).requires_grad_()
    log_scales = (torch.randn(N, 3) * 0.2 - 1.5).requires_grad_()
    quats = torch.randn(N, 4).requires_grad_()
    opac_logit = torch.randn(N).requires_grad_()
    colors = torch.rand(N, 3).requires_grad_()
    fx = fy = 6.0
    cx, cy = Ww / 2, Hh / 2

    def quat_to_rot(q):
        q = F.normalize(q, dim=-1)
        w, x, y, z = q.unbind(-1)
        return torch.stack([
            1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1).view(-1, 3, 3)

    R = quat_to_rot(quats)
    S = torch.diag_embed(torch.exp(log_scales))
    M = R @ S
    cov3d = M @ M.transpose(-1, -2)
    tx, ty, tz = means.unbind(-1)
    J = torch.zeros(N, 2, 3)
    J = torch.stack([torch.stack([fx / tz, torch.zeros_like(tz), -fx * tx / tz ** 2], -1),
                     torch.stack([torch.zeros_like(tz), fy / tz, -fy * ty / tz ** 2], -1)], -2)
    cov2d = J @ cov3d @ J.transpose(-1, -2) + 0.3 * torch.eye(2)
    a, b, c = cov2d[:, 0, 0], cov2d[:, 0, 1], cov2d[:, 1, 1]
    det = a * c - b * b
    conic = torch.stack([c / det, -b / det, a / det], -1)
    mean2d = torch.stack([fx * tx / tz + cx, fy * ty / tz + cy], -1)
    radius = torch.ceil(3 * torch.sqrt(0.5 * (a + c) + torch.sqrt((0.25 * (a - c) ** 2 + b * b).clamp(min=0.1))))

    order = torch.argsort(tz.detach())
    ys, xs = torch.meshgrid(torch.arange(Hh, dtype=torch.float32) + 0.5, torch.arange(Ww, dtype=torch.float32) + 0.5,
                            indexing="ij")
    pix = torch.stack([xs, ys], -1).view(-1, 2)
    d = pix[:, None, :] - mean2d[order][None]
    con = conic[order]
    sigma = 0.5 * (con[:, 0] * d[..., 0] ** 2 + con[:, 2] * d[..., 1] ** 2) + con[:, 1] * d[..., 0] * d[..., 1]
    alpha = torch.clamp(torch.sigmoid(opac_logit[order]) * torch.exp(-sigma), max=0.99)
    T = torch.cumprod(torch.cat([torch.ones(pix.size(0), 1), 1 - alpha[:, :-1]], dim=1), dim=1)
    wts = alpha * T
    img = (wts[..., None] * colors[order][None]).sum(1).view(Hh, Ww, 3)
    acc = wts.sum(1).view(Hh, Ww)
    target = torch.linspace(0, 1, Hh * Ww * 3).view(Hh, Ww, 3)
    loss = F.l1_loss(img, target) + 0.1 * (1 - acc).abs().mean()
    loss.backward()
    return (mean2d, conic, radius, order, img, acc, loss, means.grad, log_scales.grad, quats.grad, opac_logit.grad,
            colors.grad)


test_script_matches_torch = script_test(globals())
