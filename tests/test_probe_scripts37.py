"""Third-party programs, round 37 (continued from test_probe_scripts36.py): density models and differential
equations in the style of popular repositories (RealNVP on 2-D toy data with ``torch.distributions``, torchdiffeq's
``ode_demo.py`` with a hand-written RK4 step, a physics-informed network for Burgers' equation), seeded by
``torch.manual_seed`` with default initialisation and compared with torch 2.13 by ``assert_script_matches``.
"""
import numpy as np
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_realnvp_distributions_log_prob_and_sampling(lib):
    """RealNVP on 2-D points (the "normalizing flows in PyTorch" notebooks): coupling layers with fixed
    ``nn.Parameter(mask, requires_grad=False)`` masks, ``s = self.s[i](x_) * (1 - self.mask[i])`` through Tanh
    and ``t`` nets, ``log_det_J -= s.sum(dim=1)`` in the backward (data to latent) pass, the prior a
    ``distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))``, ``prior.log_prob(z) + logp`` and
    ``-loss.mean()``, Adam on ``[p for p in flow.parameters() if p.requires_grad]``, sampling by
    ``prior.sample((n, 1))`` through the forward pass; then an ``Independent(Normal(loc, scale), 1)`` base in a
    ``TransformedDistribution`` with an ``AffineTransform`` and ``SigmoidTransform``, its ``rsample`` and
    ``log_prob`` differentiated into the loc and scale."""
    torch, nn = lib, lib.nn
    distributions = torch.distributions
    torch.manual_seed(3)

    class RealNVP(nn.Module):
        def __init__(self, nets, nett, mask, prior):
            super().__init__()
            self.prior = prior
            self.mask = nn.Parameter(mask, requires_grad=False)
            self.t = torch.nn.ModuleList([nett() for _ in range(len(mask))])
            self.s = torch.nn.ModuleList([nets() for _ in range(len(mask))])

        def g(self, z):
            x = z
            for i in range(len(self.t)):
                x_ = x * self.mask[i]
                s = self.s[i](x_) * (1 - self.mask[i])
                t = self.t[i](x_) * (1 - self.mask[i])
                x = x_ + (1 - self.mask[i]) * (x * torch.exp(s) + t)
            return x

        def f(self, x):
            log_det_J, z = x.new_zeros(x.shape[0]), x
            for i in reversed(range(len(self.t))):
                z_ = self.mask[i] * z
                s = self.s[i](z_) * (1 - self.mask[i])
                t = self.t[i](z_) * (1 - self.mask[i])
                z = (1 - self.mask[i]) * (z - t) * torch.exp(-s) + z_
                log_det_J -= s.sum(dim=1)
            return z, log_det_J

        def log_prob(self, x):
            z, logp = self.f(x)
            return self.prior.log_prob(z) + logp

        def sample(self, batchSize):
            z = self.prior.sample((batchSize, 1))
            return self.g(z)

    nets = lambda: nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(), nn.Linear(8, 2), nn.Tanh())  # noqa: E731
    nett = lambda: nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(), nn.Linear(8, 2))  # noqa: E731
    masks = torch.from_numpy(np.array([[0, 1], [1, 0]] * 2).astype(np.float32))
    prior = distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    flow = RealNVP(nets, nett, masks, prior)
    optimizer = torch.optim.Adam([p for p in flow.parameters() if p.requires_grad], lr=1e-3)
    angles = torch.rand(16) * 2 * np.pi
    data = torch.stack([angles.cos(), angles.sin()], 1) + 0.05 * torch.randn(16, 2)
    losses = []
    for t in range(3):
        loss = -flow.log_prob(data).mean()
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
        losses.append(loss)
    samples = flow.sample(3).detach()

    loc = torch.zeros(2, requires_grad=True)
    log_scale = torch.full((2,), -0.5, requires_grad=True)
    base = distributions.Independent(distributions.Normal(loc, log_scale.exp()), 1)
    squash = distributions.TransformedDistribution(base, [distributions.AffineTransform(0.5, 2.0),
                                                          distributions.SigmoidTransform()])
    y = squash.rsample((4,))
    lp = squash.log_prob(y.detach().clamp(1e-3, 1 - 1e-3))
    (lp.sum() + y.pow(2).sum()).backward()
    return (losses, samples, flow.mask.grad, list(flow.parameters())[1].grad, y, lp, loc.grad, log_scale.grad,
            base.entropy(), squash.batch_shape, squash.event_shape)


def case_torchdiffeq_demo_rk4_by_hand(lib):
    """torchdiffeq's ``examples/ode_demo.py`` without the library: ``true_y0 = torch.tensor([[2., 0.]])``, the
    cubic ``Lambda`` dynamics ``torch.mm(y**3, true_A)`` integrated under ``torch.no_grad()`` by a fixed-step RK4
    (the 3/8 rule variant torchdiffeq's "rk4" uses), ``get_batch`` by ``np.random.choice`` and
    ``torch.from_numpy``, ``torch.stack([true_y[s + i] for i in range(batch_time)], dim=0)``, the ODEFunc with
    ``nn.init.normal_(m.weight, mean=0, std=0.1)`` and ``constant_(m.bias, val=0)``, RMSprop(lr=1e-3), the
    ``RunningAverageMeter`` and a ``torch.abs`` loss, all backpropagated through the unrolled solver."""
    torch, nn = lib, lib.nn
    torch.manual_seed(4)
    rs = np.random.RandomState(0)
    data_size, batch_time, batch_size = 12, 4, 3
    true_y0 = torch.tensor([[2., 0.]])
    t = torch.linspace(0., 1.5, data_size)
    true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])

    def rk4_alt_step(func, t0, dt, t1, y0):
        k1 = func(t0, y0)
        k2 = func(t0 + dt / 3, y0 + dt * k1 / 3)
        k3 = func(t0 + dt * 2 / 3, y0 + dt * (k2 - k1 / 3))
        k4 = func(t1, y0 + dt * (k1 - k2 + k3))
        return (k1 + 3 * (k2 + k3) + k4) * dt * 0.125

    def odeint(func, y0, t):
        solution = [y0]
        y = y0
        for t0, t1 in zip(t[:-1], t[1:]):
            dt = t1 - t0
            y = y + rk4_alt_step(func, t0, dt, t1, y)
            solution.append(y)
        return torch.stack(solution, dim=0)

    class Lambda(nn.Module):
        def forward(self, t, y):
            return torch.mm(y ** 3, true_A)

    with torch.no_grad():
        true_y = odeint(Lambda(), true_y0, t)

    def get_batch():
        s = torch.from_numpy(rs.choice(np.arange(data_size - batch_time, dtype=np.int64), batch_size, replace=False))
        batch_y0 = true_y[s]
        batch_t = t[:batch_time]
        batch_y = torch.stack([true_y[s + i] for i in range(batch_time)], dim=0)
        return batch_y0, batch_t, batch_y

    class ODEFunc(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 10), nn.Tanh(), nn.Linear(10, 2))
            for m in self.net.modules():
                if isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, mean=0, std=0.1)
                    nn.init.constant_(m.bias, val=0)

        def forward(self, t, y):
            return self.net(y ** 3)

    class RunningAverageMeter(object):
        def __init__(self, momentum=0.99):
            self.momentum, self.val, self.avg = momentum, None, 0

        def update(self, val):
            self.avg = val if self.val is None else self.avg * self.momentum + val * (1 - self.momentum)
            self.val = val

    func = ODEFunc()
    optimizer = torch.optim.RMSprop(func.parameters(), lr=1e-3)
    loss_meter = RunningAverageMeter(0.97)
    for itr in range(1, 4):
        optimizer.zero_grad()
        batch_y0, batch_t, batch_y = get_batch()
        pred_y = odeint(func, batch_y0, batch_t)
        loss = torch.mean(torch.abs(pred_y - batch_y))
        loss.backward()
        optimizer.step()
        loss_meter.update(loss.item())
    with torch.no_grad():
        pred_y = odeint(func, true_y0, t)
        test_loss = torch.mean(torch.abs(pred_y - true_y))
    return true_y, pred_y, test_loss, loss_meter.avg, [p.grad for p in func.parameters()]


def case_pinn_burgers_create_graph_and_lbfgs(lib):
    """A PINN for viscous Burgers' equation (maziarraissi/PINNs ported to PyTorch): ``x`` and ``t`` columns with
    ``requires_grad=True``, ``u = self.dnn(torch.cat([x, t], dim=1))``, ``u_t`` and ``u_x`` by
    ``torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), retain_graph=True, create_graph=True)[0]``,
    ``u_xx`` from ``u_x``, the residual ``u_t + u * u_x - nu * u_xx``, boundary/initial points with
    ``-torch.sin(np.pi * x)``, Xavier-normal init with zero biases, a DNN built from an ``OrderedDict`` of layers,
    two Adam steps and an LBFGS step (``max_iter=4``, ``tolerance_grad=1e-5``, ``history_size=5``,
    ``line_search_fn="strong_wolfe"``) whose closure counts its calls; also the gradient of the residual loss w.r.t.
    the collocation inputs (a third-order derivative)."""
    torch, nn = lib, lib.nn
    from collections import OrderedDict
    torch.manual_seed(5)
    nu = 0.01 / np.pi

    class DNN(nn.Module):
        def __init__(self, layers):
            super().__init__()
            self.depth = len(layers) - 1
            layer_list = []
            for i in range(self.depth - 1):
                layer_list.append(("layer_%d" % i, nn.Linear(layers[i], layers[i + 1])))
                layer_list.append(("activation_%d" % i, nn.Tanh()))
            layer_list.append(("layer_%d" % (self.depth - 1), nn.Linear(layers[-2], layers[-1])))
            self.layers = nn.Sequential(OrderedDict(layer_list))
            for m in self.layers:
                if isinstance(m, nn.Linear):
                    nn.init.xavier_normal_(m.weight)
                    nn.init.zeros_(m.bias)

        def forward(self, x):
            return self.layers(x)

    dnn = DNN([2, 10, 10, 1])

    def net_f(x, t):
        u = dnn(torch.cat([x, t], dim=1))
        u_t = torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u), retain_graph=True, create_graph=True)[0]
        u_x = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), retain_graph=True, create_graph=True)[0]
        u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), retain_graph=True,
                                   create_graph=True)[0]
        return u_t + u * u_x - nu * u_xx

    x_f = (torch.rand(12, 1) * 2 - 1).requires_grad_(True)
    t_f = torch.rand(12, 1, requires_grad=True)
    x_u = torch.linspace(-1, 1, 6).unsqueeze(-1)
    X_u = torch.cat([torch.cat([x_u, torch.zeros_like(x_u)], 1),
                     torch.tensor([[-1., 0.5], [1., 0.5]])], 0)
    u_true = torch.cat([-torch.sin(np.pi * x_u), torch.zeros(2, 1)], 0)

    def loss_func():
        u_pred = dnn(X_u)
        f_pred = net_f(x_f, t_f)
        return torch.mean((u_true - u_pred) ** 2) + torch.mean(f_pred ** 2)

    adam = torch.optim.Adam(dnn.parameters(), lr=1e-3)
    losses = []
    for _ in range(2):
        adam.zero_grad()
        loss = loss_func()
        loss.backward()
        adam.step()
        losses.append(loss)
    lbfgs = torch.optim.LBFGS(dnn.parameters(), lr=1.0, max_iter=4, max_eval=6, history_size=5,
                              tolerance_grad=1e-5, tolerance_change=1.0 * np.finfo(float).eps,
                              line_search_fn="strong_wolfe")
    calls = []

    def closure():
        lbfgs.zero_grad()
        loss = loss_func()
        loss.backward()
        calls.append(loss.item())
        return loss

    final = lbfgs.step(closure)
    f = net_f(x_f, t_f)
    g_x, g_t = torch.autograd.grad(f.pow(2).mean(), [x_f, t_f])
    return losses, final, calls, f, g_x, g_t, lbfgs.state_dict()["state"][0]["n_iter"], dict(dnn.named_parameters())


test_script_matches_torch = script_test(globals())
