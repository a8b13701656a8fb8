"""Third-party programs, round 41 (continued from test_probe_scripts40.py): instrumented mixture-of-experts code
(module and tensor hooks, a straight-through custom Function) and an affine-coupling flow with weight-normalised
coupling nets, seeded by ``torch.manual_seed`` with default initialisation and compared with torch 2.13 by
``assert_script_matches``.
"""
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_moe_hooks_straight_through_topk_and_clipping(lib):
    """A mixture-of-experts layer instrumented as debugging code does it: ``register_full_backward_hook`` and
    ``register_forward_pre_hook`` on each expert (a ``lambda ..., i=i`` per expert, logging grad-output norms and
    batch sizes), ``register_post_accumulate_grad_hook`` on a weight, a tensor hook halving the gate's gradient, a
    straight-through top-k mask as a custom ``autograd.Function`` (``topk`` + ``scatter_`` forward, masked
    backward, ``None`` for ``k``), tokens picked by ``nonzero(as_tuple=True)`` and combined by ``index_add_``,
    Adam(amsgrad=True), ``zero_grad(set_to_none=True)`` and ``clip_grad_value_``."""
    torch, nn = lib, lib.nn
    torch.manual_seed(0)
    experts = nn.ModuleList([nn.Sequential(nn.Linear(4, 6), nn.GELU(approximate="tanh"), nn.Linear(6, 4))
                             for _ in range(3)])
    gate = nn.Linear(4, 3, bias=False)
    log = []
    for i, e in enumerate(experts):
        e.register_full_backward_hook(lambda m, gi, go, i=i: log.append((i, go[0].norm().item())))
        e.register_forward_pre_hook(lambda m, args, i=i: log.append(("pre", i, args[0].shape[0])))
        e[0].weight.register_post_accumulate_grad_hook(lambda p: log.append(("acc", p.grad.sum().item())))
    gate.weight.register_hook(lambda g: g * 0.5)
    class TopKST(torch.autograd.Function):
        @staticmethod
        def forward(ctx, scores, k):
            idx = scores.topk(k, dim=-1).indices
            mask = torch.zeros_like(scores).scatter_(-1, idx, 1.0)
            ctx.save_for_backward(mask)
            return mask
        @staticmethod
        def backward(ctx, g):
            (mask,) = ctx.saved_tensors
            return g * mask, None
    x = torch.randn(6, 4)
    opt = torch.optim.Adam(list(experts.parameters()) + list(gate.parameters()), lr=1e-2, amsgrad=True)
    outs = []
    for _ in range(2):
        scores = gate(x).softmax(-1)
        mask = TopKST.apply(scores, 2)
        w = scores * mask
        y = torch.zeros_like(x)
        for e in range(3):
            sel = mask[:, e].nonzero(as_tuple=True)[0]
            if sel.numel() == 0:
                continue
            y.index_add_(0, sel, experts[e](x[sel]) * w[sel, e:e + 1])
        loss = y.pow(2).mean() + (scores.mean(0) * mask.mean(0)).sum() * 3
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_value_(experts.parameters(), 0.05)
        opt.step()
        outs.append((loss, gate.weight.grad.clone(), mask))
    return outs, log, [p for p in gate.parameters()]


def case_affine_coupling_flow_weight_norm_and_sequential_lr(lib):
    """An affine-coupling flow as in the RealNVP/Glow reimplementations: coupling nets built from
    ``nn.utils.parametrizations.weight_norm`` linears, ``chunk(2, dim=1)``, interleaved scale/shift by ``st[:, 0::2]``
    and ``st[:, 1::2]``, a learnable ``scale.exp() * tanh(s)``, a fixed permutation undone by ``argsort``, a
    ``Normal`` base with ``log_prob(z).sum(1)``, Adamax with a SequentialLR of LinearLR then ExponentialLR, sampling
    back through the reversed layers under ``no_grad``, and the parametrized state dict's keys and shapes."""
    torch, nn = lib, lib.nn
    weight_norm = lib.nn.utils.parametrizations.weight_norm
    torch.manual_seed(1)
    class Coupling(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(weight_norm(nn.Linear(2, 8)), nn.ReLU(), weight_norm(nn.Linear(8, 4)))
            self.scale = nn.Parameter(torch.zeros(1, 2))
        def forward(self, x, reverse=False):
            xa, xb = x.chunk(2, dim=1)
            st = self.net(xa)
            s, t = st[:, 0::2], st[:, 1::2]
            s = self.scale.exp() * torch.tanh(s)
            if not reverse:
                xb = xb * s.exp() + t
                ld = s.sum(1)
            else:
                xb = (xb - t) * (-s).exp()
                ld = -s.sum(1)
            return torch.cat([xa, xb], 1), ld
    layers = nn.ModuleList([Coupling() for _ in range(2)])
    perm = torch.tensor([3, 2, 1, 0])
    base = torch.distributions.Normal(torch.zeros(4), torch.ones(4))
    opt = torch.optim.Adamax(layers.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [torch.optim.lr_scheduler.LinearLR(opt, 0.1, 1.0, 2),
                                                        torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)],
                                                  milestones=[2])
    x = torch.randn(8, 4) * torch.tensor([1., 2., 0.5, 1.])
    hist = []
    for _ in range(3):
        z, sld = x, torch.zeros(8)
        for l in layers:
            z, ld = l(z)
            sld = sld + ld
            z = z[:, perm]
        nll = -(base.log_prob(z).sum(1) + sld).mean()
        opt.zero_grad()
        nll.backward()
        opt.step()
        sched.step()
        hist.append((nll, sched.get_last_lr()))
    with torch.no_grad():
        z = base.sample((3,))
        for l in reversed(layers):
            z = z[:, torch.argsort(perm)]
            z, _ = l(z, reverse=True)
    sd = {k: v.shape for k, v in layers.state_dict().items()}
    return hist, z, sd, [p.grad for p in layers.parameters()]


test_script_matches_torch = script_test(globals())
