"""Third-party programs, round 50: adversarial training, meta-learning and capsule networks in the style of popular
repositories (Madry-lab style FGSM/PGD on the input followed by a training step on the adversarial batch; MAML with
``torch.func.functional_call`` and second-order ``create_graph=True`` gradients; a hypernetwork generating a target
net's weights; CapsNet's squash and dynamic routing; L2 PGD, TRADES and Carlini-Wagner), seeded by
``torch.manual_seed`` with default initialisation, run with torch 2.13 and torchish and compared by
``assert_script_matches`` (tests/oracle.py).
"""
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_fgsm_pgd_adversarial_training(lib):
    """FGSM (``x.requires_grad_()``, ``torch.autograd.grad(loss, x)[0].sign()``) and a PGD attack with a random
    start ``torch.empty_like(x).uniform_(-eps, eps)``, steps of ``x_adv.detach() + alpha * grad.sign()``,
    projection ``torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0, 1)``, the model in ``eval()`` for the
    attack and ``train()`` for a SGD step on ``torch.cat([x, x_adv])``; robust accuracy by
    ``(pred == y).sum().item()``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(11)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Dropout(0.2),
                          nn.Linear(4 * 4 * 4, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    x = torch.rand(4, 1, 6, 6)
    y = torch.tensor([0, 2, 1, 2])
    eps, alpha = 8 / 255, 2 / 255

    def fgsm(model, x, y):
        x = x.clone().requires_grad_()
        loss = F.cross_entropy(model(x), y)
        g, = torch.autograd.grad(loss, x)
        return (x + eps * g.sign()).clamp(0, 1).detach()

    def pgd(model, x, y, steps=3):
        x_adv = x + torch.empty_like(x).uniform_(-eps, eps)
        x_adv = x_adv.clamp(0, 1).detach()
        for _ in range(steps):
            x_adv.requires_grad_(True)
            loss = F.cross_entropy(model(x_adv), y)
            grad = torch.autograd.grad(loss, [x_adv])[0]
            x_adv = x_adv.detach() + alpha * grad.sign()
            x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0, 1)
        return x_adv

    out = []
    for _ in range(2):
        model.eval()
        x_f = fgsm(model, x, y)
        x_p = pgd(model, x, y)
        model.train()
        logits = model(torch.cat([x, x_p]))
        loss = F.cross_entropy(logits, torch.cat([y, y]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            rob = (model(x_p).argmax(1) == y).sum().item()
        out += [x_f, x_p, loss.item(), rob]
    return out, model[0].weight.grad, model[1].running_mean, (x_p - x).abs().max() <= eps + 1e-6


def case_maml_functional_call_second_order(lib):
    """MAML on sine regression: ``torch.func.functional_call(model, params, (x,))`` with ``params =
    dict(model.named_parameters())``, an inner SGD step ``{n: p - lr * g for (n, p), g in zip(params.items(),
    grads)}`` from ``torch.autograd.grad(loss, params.values(), create_graph=True)``, two inner steps, outer Adam on
    the mean query loss over tasks (second-order gradients flow through the inner updates), and a first-order
    variant with ``create_graph=False`` and ``.detach()``-ed grads for comparison."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    from_func = torch.func
    torch.manual_seed(12)
    model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-2)

    def task():
        amp, phase = torch.rand(1) * 4 + 1, torch.rand(1) * 3
        xs, xq = torch.rand(5, 1) * 10 - 5, torch.rand(5, 1) * 10 - 5
        return xs, amp * torch.sin(xs + phase), xq, amp * torch.sin(xq + phase)

    def adapt(params, xs, ys, second_order, steps=2, lr=0.01):
        for _ in range(steps):
            loss = F.mse_loss(from_func.functional_call(model, params, (xs,)), ys)
            grads = torch.autograd.grad(loss, params.values(), create_graph=second_order)
            if not second_order:
                grads = [g.detach() for g in grads]
            params = {n: p - lr * g for (n, p), g in zip(params.items(), grads)}
        return params

    history = []
    for second_order in (True, True, False):
        meta_opt.zero_grad()
        total = 0.0
        for _ in range(2):
            xs, ys, xq, yq = task()
            fast = adapt(dict(model.named_parameters()), xs, ys, second_order)
            q_loss = F.mse_loss(from_func.functional_call(model, fast, (xq,)), yq)
            total = total + q_loss
        (total / 2).backward()
        history.append((total.item(), model[0].weight.grad.clone(), model[2].bias.grad.clone()))
        meta_opt.step()
    return history, model[0].weight, model[2].weight


def case_hypernetwork_generates_target_weights(lib):
    """A hypernetwork (ha-style): a task embedding ``nn.Embedding`` fed to an MLP whose output is split with
    ``torch.split`` and ``view``-ed into the target net's weight and bias, applied by ``F.linear``/``torch.bmm``
    for a batch of tasks, a forward pre-hook on the hypernet that records input shapes and a full backward hook on
    the head, Adam for 3 steps with ``retain_graph=True`` on a first backward and a ``register_hook`` on the
    generated weights that scales their gradient."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(13)
    d_in, d_out = 3, 2

    class HyperNet(nn.Module):
        def __init__(self, n_tasks, z=4):
            super().__init__()
            self.emb = nn.Embedding(n_tasks, z)
            self.body = nn.Sequential(nn.Linear(z, 16), nn.ReLU())
            self.head = nn.Linear(16, d_in * d_out + d_out)

        def forward(self, task):
            h = self.head(self.body(self.emb(task)))
            w, b = torch.split(h, [d_in * d_out, d_out], dim=-1)
            return w.view(-1, d_out, d_in), b

    hyper = HyperNet(3)
    seen, grads_seen = [], []
    hyper.register_forward_pre_hook(lambda m, args: seen.append(tuple(args[0].shape)))
    hyper.head.register_full_backward_hook(lambda m, gi, go: grads_seen.append(go[0].abs().sum().item()))
    opt = torch.optim.Adam(hyper.parameters(), lr=1e-2)
    x = torch.randn(3, 5, d_in)
    y = torch.randn(3, 5, d_out)
    tasks = torch.arange(3)
    losses = []
    for _ in range(3):
        W, b = hyper(tasks)
        W.register_hook(lambda g: g * 0.5)
        pred = torch.bmm(x, W.transpose(1, 2)) + b.unsqueeze(1)
        loss = F.mse_loss(pred, y)
        reg = W.pow(2).mean()
        opt.zero_grad()
        reg.backward(retain_graph=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    W0, b0 = hyper(torch.tensor([0]))
    single = F.linear(x[0], W0[0], b0[0])
    return losses, seen, grads_seen, hyper.emb.weight.grad, hyper.head.weight, single


def case_capsule_squash_dynamic_routing(lib):
    """CapsNet: primary capsules from a conv reshaped ``view(B, 8, -1).transpose(1, 2)``, ``squash`` as
    ``(n2 / (1 + n2)) * s / torch.sqrt(n2 + 1e-8)``, prediction vectors by ``torch.einsum("bic,jicd->bijd",
    u, W)`` (and the same by ``torch.matmul`` on ``unsqueeze``-ed shapes), three routing iterations with
    ``F.softmax(b, dim=2)`` over the output-capsule dim (not the last), agreement ``b = b + (u_hat *
    v.unsqueeze(1)).sum(-1)``, the margin loss with ``F.relu(0.9 - lengths) ** 2``, and a masked reconstruction
    decoder input by ``v * F.one_hot(y, 3).unsqueeze(-1)``; Adam for 2 steps."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(14)

    def squash(s, dim=-1):
        n2 = (s ** 2).sum(dim=dim, keepdim=True)
        return (n2 / (1 + n2)) * s / torch.sqrt(n2 + 1e-8)

    class CapsNet(nn.Module):
        def __init__(self, n_cls=3, d_prim=4, d_out=5):
            super().__init__()
            self.conv = nn.Conv2d(1, 8, 3, stride=2)
            self.W = nn.Parameter(0.1 * torch.randn(n_cls, 8, d_prim, d_out))
            self.decoder = nn.Sequential(nn.Linear(n_cls * d_out, 12), nn.ReLU(), nn.Linear(12, 36), nn.Sigmoid())
            self.d_prim = d_prim

        def forward(self, x, y, iters=3):
            B = x.size(0)
            u = F.relu(self.conv(x)).view(B, 2, self.d_prim, -1).permute(0, 1, 3, 2).reshape(B, -1, self.d_prim)
            u = squash(u)
            u_hat = torch.einsum("bic,jicd->bijd", u, self.W)
            b = torch.zeros(B, u_hat.size(1), u_hat.size(2))
            for r in range(iters):
                c = F.softmax(b, dim=2)
                s = (c.unsqueeze(-1) * u_hat).sum(dim=1)
                v = squash(s)
                if r < iters - 1:
                    b = b + (u_hat * v.unsqueeze(1)).sum(-1)
            lengths = v.norm(dim=-1)
            masked = v * F.one_hot(y, v.size(1)).unsqueeze(-1)
            recon = self.decoder(masked.flatten(1))
            return lengths, recon, u_hat, u

    def margin_loss(lengths, y):
        t = F.one_hot(y, lengths.size(1)).float()
        loss = t * F.relu(0.9 - lengths) ** 2 + 0.5 * (1 - t) * F.relu(lengths - 0.1) ** 2
        return loss.sum(1).mean()

    net = CapsNet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    x = torch.rand(2, 1, 6, 6)
    y = torch.tensor([2, 0])
    losses = []
    for _ in range(2):
        lengths, recon, u_hat, u = net(x, y)
        loss = margin_loss(lengths, y) + 0.0005 * F.mse_loss(recon, x.flatten(1), reduction="sum")
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    alt = torch.matmul(u.unsqueeze(2).unsqueeze(3), net.W.transpose(0, 1).unsqueeze(0)).squeeze(3)
    return losses, lengths, u_hat, (alt - u_hat).abs().max(), net.W.grad, net.conv.weight.grad


def case_l2_pgd_trades_and_carlini_wagner(lib):
    """Three more attacks: an L2 PGD on ``delta`` updated through ``.data`` (``delta.data.add_``, ``renorm_(p=2,
    dim=0, maxnorm=eps)``, ``delta.data = (x + delta.data).clamp_(0, 1) - x``, ``delta.grad.zero_()``), TRADES'
    KL attack (``F.kl_div(log_softmax, softmax, reduction="sum")``, ``torch.autograd.grad(kl, [x_adv])``) and
    Carlini-Wagner's tanh-space attack: ``w = atanh(2x - 1)`` plus a modifier optimised by Adam against
    ``mse(adv, x, sum) + clamp(real - other, min=0)`` with ``other`` from ``logits - 1e4 * one_hot``. The modifier
    starts from small noise: at exactly zero the MSE term's gradient is the round-off of ``tanh(atanh(v)) - v``,
    which Adam scales to +-lr, so the result would be the sign of last-bit noise (XLA's float32 tanh is up to 4 ulp
    from the correctly rounded value, PyTorch's Sleef kernel within 0.51)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(19)
    model = nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3))
    x = torch.rand(4, 3, 2, 2)
    y = torch.tensor([0, 1, 2, 1])
    eps = 0.5
    delta = torch.zeros_like(x).normal_()
    n = delta.view(4, -1).norm(p=2, dim=1).view(-1, 1, 1, 1)
    delta = (delta / n * 0.1).requires_grad_(True)
    for _ in range(3):
        loss = F.cross_entropy(model(x + delta), y)
        loss.backward()
        g = delta.grad.detach()
        gn = g.view(4, -1).norm(dim=1).view(-1, 1, 1, 1) + 1e-12
        delta.data.add_(0.2 * g / gn)
        delta.data.renorm_(p=2, dim=0, maxnorm=eps)
        delta.data = (x + delta.data).clamp_(0, 1) - x
        delta.grad.zero_()
    x_nat = x.detach()
    x_adv = x_nat + 0.001 * torch.randn_like(x_nat)
    for _ in range(2):
        x_adv.requires_grad_()
        kl = F.kl_div(F.log_softmax(model(x_adv), dim=1), F.softmax(model(x_nat), dim=1), reduction="sum")
        g = torch.autograd.grad(kl, [x_adv])[0]
        x_adv = x_adv.detach() + 0.01 * torch.sign(g.detach())
        x_adv = torch.min(torch.max(x_adv, x_nat - 0.03), x_nat + 0.03).clamp(0.0, 1.0)
    w_x = torch.atanh((x * 2 - 1).clamp(-0.999, 0.999))
    modifier = (0.1 * torch.randn_like(x)).requires_grad_()
    opt = torch.optim.Adam([modifier], lr=0.05)
    for _ in range(2):
        adv = 0.5 * (torch.tanh(w_x + modifier) + 1)
        logits = model(adv)
        real = logits.gather(1, y.unsqueeze(1)).squeeze(1)
        other = (logits - 1e4 * F.one_hot(y, 3)).max(1)[0]
        f = torch.clamp(real - other, min=0)
        loss = F.mse_loss(adv, x, reduction="sum") + f.sum()
        opt.zero_grad(); loss.backward(); opt.step()
    r = torch.renorm(torch.randn(3, 4), p=1, dim=1, maxnorm=0.5)
    return delta, x_adv, modifier, r, model[1].weight.grad


test_script_matches_torch = script_test(globals())
