"""Regression tests from running scientific and generative model code as research repositories write it, on
torchish and on PyTorch: DDPM (beta schedules, alphas_cumprod with F.pad, extract, q_sample, the sinusoidal timestep
embedding, a tiny UNet with GroupNorm/SiLU/nearest upsampling/skip concat/self-attention, the training loss and
reverse sampling steps), a VAE and RealNVP/Glow-style flows (coupling layers, ActNorm data-dependent init), neural
ODEs (RK4/Euler written in torch) and PINNs (autograd.grad with create_graph, Adam then LBFGS), NeRF (positional
encoding, volume rendering, inverse-CDF sampling), point clouds (kNN by cdist+topk, Chamfer, PointNet's shared MLP), contrastive
losses (SimCLR/InfoNCE, triplet) and graph networks written by hand (GCN normalisation, index_add_,
scatter_reduce, GAT's segment softmax). Each ``case_*`` is written against the PyTorch API only; inputs and weights
come from formulas (tests/oracle.py) and random draws are replaced by fixed tensors (noise, eps, u)."""
import math

from oracle import formula_data as _data, formula_init as _init, script_test


# ---------------------------------------------------------------- DDPM

def _linear_beta_schedule(lib, timesteps):
    scale = 1000 / timesteps
    return lib.linspace(scale * 0.0001, scale * 0.02, timesteps, dtype=lib.float64)


def _cosine_beta_schedule(lib, timesteps, s=0.008):
    steps = timesteps + 1
    t = lib.linspace(0, timesteps, steps, dtype=lib.float64) / timesteps
    alphas_cumprod = lib.cos((t + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return lib.clip(betas, 0, 0.999)


def _extract(a, t, x_shape):
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


def _unet(lib):
    nn, F = lib.nn, lib.nn.functional

    class SinusoidalPosEmb(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dim = dim

        def forward(self, x):
            device = x.device
            half_dim = self.dim // 2
            emb = math.log(10000) / (half_dim - 1)
            emb = lib.exp(lib.arange(half_dim, device=device) * -emb)
            emb = x[:, None] * emb[None, :]
            emb = lib.cat((emb.sin(), emb.cos()), dim=-1)
            return emb

    class ResBlock(nn.Module):
        def __init__(self, dim, dim_out, time_dim):
            super().__init__()
            self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_dim, dim_out * 2))
            self.conv1 = nn.Conv2d(dim, dim_out, 3, padding=1)
            self.norm1 = nn.GroupNorm(2, dim_out)
            self.conv2 = nn.Conv2d(dim_out, dim_out, 3, padding=1)
            self.norm2 = nn.GroupNorm(2, dim_out)
            self.act = nn.SiLU()
            self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

        def forward(self, x, time_emb):
            scale, shift = self.mlp(time_emb)[:, :, None, None].chunk(2, dim=1)
            h = self.act(self.norm1(self.conv1(x)) * (scale + 1) + shift)
            h = self.act(self.norm2(self.conv2(h)))
            return h + self.res_conv(x)

    class Attention(nn.Module):
        def __init__(self, dim, heads=2, dim_head=4):
            super().__init__()
            self.scale = dim_head ** -0.5
            self.heads = heads
            hidden_dim = dim_head * heads
            self.norm = nn.GroupNorm(1, dim)
            self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, bias=False)
            self.to_out = nn.Conv2d(hidden_dim, dim, 1)

        def forward(self, x):
            b, c, h, w = x.shape
            qkv = self.to_qkv(self.norm(x)).chunk(3, dim=1)
            q, k, v = map(lambda t: t.reshape(b, self.heads, -1, h * w), qkv)
            q = q * self.scale
            sim = lib.einsum("b h d i, b h d j -> b h i j", q, k)
            sim = sim - sim.amax(dim=-1, keepdim=True).detach()
            attn = sim.softmax(dim=-1)
            out = lib.einsum("b h i j, b h d j -> b h i d", attn, v)
            out = out.permute(0, 1, 3, 2).reshape(b, -1, h, w)
            return self.to_out(out) + x

    class Unet(nn.Module):
        def __init__(self, dim=4, channels=1):
            super().__init__()
            time_dim = dim * 2
            self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, time_dim), nn.GELU(),
                                          nn.Linear(time_dim, time_dim))
            self.init_conv = nn.Conv2d(channels, dim, 3, padding=1)
            self.down = ResBlock(dim, dim, time_dim)
            self.downsample = nn.Conv2d(dim, dim * 2, 4, 2, 1)
            self.mid = ResBlock(dim * 2, dim * 2, time_dim)
            self.mid_attn = Attention(dim * 2)
            self.upsample = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                                          nn.Conv2d(dim * 2, dim, 3, padding=1))
            self.up = ResBlock(dim * 2, dim, time_dim)
            self.final_conv = nn.Conv2d(dim, channels, 1)

        def forward(self, x, time):
            t = self.time_mlp(time)
            x = self.init_conv(x)
            h = self.down(x, t)
            x = self.downsample(h)
            x = self.mid(x, t)
            x = self.mid_attn(x)
            x = self.upsample(x)
            x = F.interpolate(x, scale_factor=1, mode="nearest") if x.shape[-1] != h.shape[-1] else x
            x = lib.cat((x, h), dim=1)
            x = self.up(x, t)
            return self.final_conv(x)

    return Unet


class _Diffusion:
    """lucidrains/denoising-diffusion-pytorch's GaussianDiffusion bookkeeping, float64 schedules cast to float32."""

    def __init__(self, lib, model, timesteps, schedule):
        F = lib.nn.functional
        self.lib, self.model, self.num_timesteps = lib, model, timesteps
        betas = _linear_beta_schedule(lib, timesteps) if schedule == "linear" else _cosine_beta_schedule(lib, timesteps)
        alphas = 1. - betas
        alphas_cumprod = lib.cumprod(alphas, dim=0)
        alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.)
        f32 = lambda v: v.to(lib.float32)  # noqa: E731
        self.betas = f32(betas)
        self.alphas_cumprod = f32(alphas_cumprod)
        self.alphas_cumprod_prev = f32(alphas_cumprod_prev)
        self.sqrt_alphas_cumprod = f32(lib.sqrt(alphas_cumprod))
        self.sqrt_one_minus_alphas_cumprod = f32(lib.sqrt(1. - alphas_cumprod))
        self.sqrt_recip_alphas_cumprod = f32(lib.sqrt(1. / alphas_cumprod))
        self.sqrt_recipm1_alphas_cumprod = f32(lib.sqrt(1. / alphas_cumprod - 1))
        posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)
        self.posterior_variance = f32(posterior_variance)
        self.posterior_log_variance_clipped = f32(lib.log(posterior_variance.clamp(min=1e-20)))
        self.posterior_mean_coef1 = f32(betas * lib.sqrt(alphas_cumprod_prev) / (1. - alphas_cumprod))
        self.posterior_mean_coef2 = f32((1. - alphas_cumprod_prev) * lib.sqrt(alphas) / (1. - alphas_cumprod))

    def q_sample(self, x_start, t, noise):
        return (_extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
                + _extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)

    def p_losses(self, x_start, t, noise):
        x = self.q_sample(x_start=x_start, t=t, noise=noise)
        model_out = self.model(x, t)
        loss = self.lib.nn.functional.mse_loss(model_out, noise, reduction='none')
        loss = loss.reshape(loss.shape[0], -1).mean(dim=1)
        return loss.mean()

    def predict_start_from_noise(self, x_t, t, noise):
        return (_extract(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t
                - _extract(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape) * noise)

    def q_posterior(self, x_start, x_t, t):
        posterior_mean = (_extract(self.posterior_mean_coef1, t, x_t.shape) * x_start
                          + _extract(self.posterior_mean_coef2, t, x_t.shape) * x_t)
        posterior_variance = _extract(self.posterior_variance, t, x_t.shape)
        posterior_log_variance_clipped = _extract(self.posterior_log_variance_clipped, t, x_t.shape)
        return posterior_mean, posterior_variance, posterior_log_variance_clipped

    def p_sample(self, x, t, noise):
        lib = self.lib
        batched_times = lib.full((x.shape[0],), t, dtype=lib.long)
        pred_noise = self.model(x, batched_times)
        x_start = self.predict_start_from_noise(x, batched_times, pred_noise)
        x_start.clamp_(-1., 1.)
        model_mean, _, model_log_variance = self.q_posterior(x_start=x_start, x_t=x, t=batched_times)
        nonzero = (batched_times != 0).float().reshape(x.shape[0], 1, 1, 1)
        pred_img = model_mean + nonzero * (0.5 * model_log_variance).exp() * noise
        noise_w = lib.where(batched_times == 0, lib.zeros_like(batched_times, dtype=lib.float32),
                            lib.ones_like(batched_times, dtype=lib.float32))
        return pred_img, x_start, noise_w


def case_ddpm_schedules(lib):
    """The two beta schedules and every buffer derived from them, in float64 then cast; extract at several t."""
    out = []
    for schedule in ("linear", "cosine"):
        d = _Diffusion(lib, None, 10, schedule)
        out += [d.betas, d.alphas_cumprod_prev, d.posterior_log_variance_clipped, d.posterior_mean_coef1,
                d.posterior_mean_coef2, d.sqrt_recipm1_alphas_cumprod]
        t = lib.tensor([0, 3, 9])
        out.append(_extract(d.posterior_variance, t, (3, 1, 4, 4)))
        out.append(d.q_sample(_data(lib, 3, 1, 4, 4), t, _data(lib, 3, 1, 4, 4, seed=1)))
    return out


def case_ddpm_train_and_sample(lib, jit):
    """A tiny UNet trained on the fixed-noise loss by a traced Adam step, then three reverse steps with fixed noise
    (eager, under no_grad: clamp_ of x_start, torch.where(t == 0, ...))."""
    Unet = _unet(lib)
    model = _init(lib, Unet())
    d = _Diffusion(lib, model, 10, "cosine")
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)

    def step(x0, t, noise):
        loss = d.p_losses(x0, t, noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()
    step = jit(step)
    x0 = _data(lib, 2, 1, 4, 4) * 0.9
    out = [step(x0, lib.tensor([i + 1, 7 - i]), _data(lib, 2, 1, 4, 4, seed=i + 3)) for i in range(3)]
    out.append({n: p.grad for n, p in model.named_parameters()})
    img = _data(lib, 2, 1, 4, 4, seed=9)
    with lib.no_grad():
        for t in (2, 1, 0):
            img, x_start, w = d.p_sample(img, t, _data(lib, 2, 1, 4, 4, seed=10 + t))
            out += [img, x_start, w]
        img = (img + 1) * 0.5
        out.append(img.clamp_(0, 1))
    out.append(model.state_dict())
    return out


def case_rotary_and_einsum_dtypes(lib):
    """Rotary/sinusoidal tables as repositories write them: einsum("i,j->ij", arange (int64), inv_freq) is a mul in
    PyTorch's einsum (no label contracted), so the dtypes promote; a contraction (bmm) of mixed dtypes raises; integer
    operands summed on the way come out int64."""
    dim = 6
    inv_freq = 1.0 / (10000 ** (lib.arange(0, dim, 2).float() / dim))
    t = lib.arange(5)
    freqs = lib.einsum("i,j->ij", t, inv_freq)
    emb = lib.cat((freqs, freqs), dim=-1)
    x = _data(lib, 1, 5, dim)
    x1, x2 = x.chunk(2, dim=-1)
    rotated = x * emb.cos() + lib.cat((-x2, x1), dim=-1) * emb.sin()
    out = [freqs, rotated, lib.einsum("i,j->ij", t.float(), inv_freq.double()),
           lib.einsum("ij,k->ik", lib.ones(2, 3, dtype=lib.int32), lib.arange(3, dtype=lib.int32)),
           lib.einsum("ij->i", lib.ones(2, 3, dtype=lib.int32)), lib.einsum("i,j->", t, inv_freq),
           lib.einsum("bi,bj->bij", lib.ones(2, 3, dtype=lib.int32), _data(lib, 2, 2))]
    for eq, a, b in (("ij,j->i", lib.ones(2, 3, dtype=lib.long), lib.ones(3)),
                     ("bhd,bhd->bh", _data(lib, 2, 3, 4).half(), _data(lib, 2, 3, 4)),
                     ("ij,ij->i", lib.ones(2, 3, dtype=lib.bool), lib.ones(2, 3, dtype=lib.bool))):
        try:
            lib.einsum(eq, a, b)
        except (RuntimeError, NotImplementedError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def case_vae_and_flows(lib):
    """pytorch/examples' VAE: reparameterisation with fixed eps, BCE(sum) + the KL term, two Adam steps; the KL
    again by torch.distributions (Normal, kl_divergence) and an empty rsample."""
    nn, F = lib.nn, lib.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 8)
            self.fc21 = nn.Linear(8, 2)
            self.fc22 = nn.Linear(8, 2)
            self.fc3 = nn.Linear(2, 8)
            self.fc4 = nn.Linear(8, 6)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps):
            std = lib.exp(0.5 * logvar)
            return mu + eps * std

        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return lib.sigmoid(self.fc4(h3))

        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 6))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 6), reduction='sum')
        KLD = -0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD, BCE, KLD

    model = _init(lib, VAE())
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = (_data(lib, 4, 6) + 1) / 2
    out = []
    for i in range(2):
        eps = _data(lib, 4, 2, seed=i + 1)
        recon, mu, logvar = model(x, eps)
        loss, bce, kld = loss_function(recon, x, mu, logvar)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out += [loss, bce, kld, recon]
    # KL with distributions
    q = lib.distributions.Normal(mu, lib.exp(0.5 * logvar))
    p = lib.distributions.Normal(lib.zeros_like(mu), lib.ones_like(mu))
    out.append(lib.distributions.kl_divergence(q, p).sum(-1))
    out.append(q.rsample(lib.Size([0])).shape)
    return out


def case_realnvp_glow(lib):
    """RealNVP coupling layers (alternating masks, tanh-scaled log-scales, summed log-dets, the inverse pass) under
    a MultivariateNormal prior; Glow's ActNorm with its data-dependent init on the first call (a uint8 buffer flag),
    the squeeze by view/permute and the logit preprocessing."""
    nn, F = lib.nn, lib.nn.functional

    class ActNorm(nn.Module):
        def __init__(self, num_features):
            super().__init__()
            self.loc = nn.Parameter(lib.zeros(1, num_features, 1, 1))
            self.scale = nn.Parameter(lib.ones(1, num_features, 1, 1))
            self.register_buffer("initialized", lib.tensor(0, dtype=lib.uint8))

        def initialize(self, input):
            with lib.no_grad():
                flatten = input.permute(1, 0, 2, 3).contiguous().view(input.shape[1], -1)
                mean = flatten.mean(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
                std = flatten.std(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
                self.loc.data.copy_(-mean)
                self.scale.data.copy_(1 / (std + 1e-6))

        def forward(self, input):
            _, _, height, width = input.shape
            if self.initialized.item() == 0:
                self.initialize(input)
                self.initialized.fill_(1)
            log_abs = lib.log(lib.abs(self.scale))
            logdet = height * width * lib.sum(log_abs)
            return self.scale * (input + self.loc), logdet

        def reverse(self, output):
            return output / self.scale - self.loc

    class Coupling(nn.Module):
        def __init__(self, dim, mask):
            super().__init__()
            self.register_buffer("mask", mask)
            self.net = nn.Sequential(nn.Linear(dim, 8), nn.ReLU(), nn.Linear(8, 2 * dim))
            self.scale = nn.Parameter(lib.ones(dim))

        def forward(self, x):
            x_masked = x * self.mask
            s, t = self.net(x_masked).chunk(2, dim=1)
            s = self.scale * lib.tanh(s)
            s = s * (1 - self.mask)
            t = t * (1 - self.mask)
            y = x_masked + (1 - self.mask) * (x * lib.exp(s) + t)
            return y, s.sum(dim=1)

        def inverse(self, y):
            y_masked = y * self.mask
            s, t = self.net(y_masked).chunk(2, dim=1)
            s = self.scale * lib.tanh(s)
            s = s * (1 - self.mask)
            t = t * (1 - self.mask)
            x = y_masked + (1 - self.mask) * (y - t) * lib.exp(-s)
            return x, -s.sum(dim=1)

    dim = 4
    masks = [lib.arange(dim) % 2, 1 - lib.arange(dim) % 2, (lib.arange(dim) < 2).float()]
    masks = [m.float() if m.dtype != lib.float32 else m for m in masks]
    layers = nn.ModuleList([Coupling(dim, m) for m in masks])
    _init(lib, layers)
    prior = lib.distributions.MultivariateNormal(lib.zeros(dim), lib.eye(dim))
    opt = lib.optim.Adam(layers.parameters(), lr=1e-3)
    x = _data(lib, 5, dim)
    out = []
    for _ in range(2):
        z, log_det = x, lib.zeros(x.shape[0])
        for layer in layers:
            z, ld = layer(z)
            log_det += ld
        loss = -(prior.log_prob(z) + log_det).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        out += [loss, z]
    with lib.no_grad():
        xr = z
        for layer in reversed(layers):
            xr, _ = layer.inverse(xr)
    out.append(xr)
    an = ActNorm(3)
    img = _data(lib, 2, 3, 2, 2) * 2 + 0.5
    y, ld = an(img)
    y2, ld2 = an(img * 0.5)
    out += [y, ld, y2, ld2, an.reverse(y), an.state_dict()]
    # Glow's squeeze and the logit preprocess
    b, c, h, w = img.shape
    sq = img.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(b, c * 4, h // 2, w // 2)
    out.append(sq)
    xx = (img.sigmoid() * 255. / 256.) + 1e-3
    out.append(lib.log(xx) - lib.log1p(-xx))
    return out


def case_neural_ode_pinn(lib):
    """A neural ODE through fixed-step RK4 (stacked states) and Euler (written into an empty tensor) with backprop
    through the solver and RMSprop; a PINN for the heat equation: u_t, u_x, u_xx by autograd.grad(create_graph=True,
    grad_outputs=ones_like), two Adam steps, then one LBFGS(strong_wolfe) step with a closure and its state."""
    nn = lib.nn

    class ODEFunc(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))

        def forward(self, t, y):
            return self.net(y ** 3) * (1 + 0.1 * t)

    def rk4(func, y0, t):
        ys = [y0]
        y = y0
        for i in range(len(t) - 1):
            t0, dt = t[i], t[i + 1] - t[i]
            k1 = func(t0, y)
            k2 = func(t0 + dt / 2, y + dt * k1 / 2)
            k3 = func(t0 + dt / 2, y + dt * k2 / 2)
            k4 = func(t0 + dt, y + dt * k3)
            y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            ys.append(y)
        return lib.stack(ys)

    def euler(func, y0, t):
        sol = lib.empty(len(t), *y0.shape, dtype=y0.dtype)
        sol[0] = y0
        y = y0
        for i in range(1, len(t)):
            y = y + (t[i] - t[i - 1]) * func(t[i - 1], y)
            sol[i] = y
        return sol

    func = _init(lib, ODEFunc())
    opt = lib.optim.RMSprop(func.parameters(), lr=1e-3)
    t = lib.linspace(0., 1., 5)
    y0 = lib.tensor([[2., 0.], [0.5, -0.3]])
    true_y = _data(lib, 5, 2, 2)
    out = []
    for solver in (rk4, euler):
        pred_y = solver(func, y0, t)
        loss = lib.mean(lib.abs(pred_y - true_y))
        opt.zero_grad()
        loss.backward()
        out += [pred_y, loss, [p.grad.clone() for p in func.parameters()]]
        opt.step()

    # PINN for the heat equation u_t = u_xx
    class PINN(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 10), nn.Tanh(), nn.Linear(10, 10), nn.Tanh(), nn.Linear(10, 1))

        def forward(self, x, t):
            return self.net(lib.cat([x, t], dim=1))

    model = _init(lib, PINN(), seed=3)
    x = lib.linspace(-1, 1, 6).view(-1, 1).requires_grad_(True)
    tt = lib.linspace(0, 1, 6).flip(0).view(-1, 1).requires_grad_(True)
    x0 = lib.linspace(-1, 1, 5).unsqueeze(1)
    u0 = -lib.sin(math.pi * x0)

    def pde_loss():
        u = model(x, tt)
        u_t = lib.autograd.grad(u, tt, grad_outputs=lib.ones_like(u), create_graph=True)[0]
        u_x = lib.autograd.grad(u, x, grad_outputs=lib.ones_like(u), retain_graph=True, create_graph=True)[0]
        u_xx = lib.autograd.grad(u_x, x, grad_outputs=lib.ones_like(u_x), create_graph=True)[0]
        f = u_t - 0.1 * u_xx
        loss_f = lib.mean(f ** 2)
        loss_u = nn.MSELoss()(model(x0, lib.zeros_like(x0)), u0)
        return loss_f + loss_u, u_t, u_xx
    adam = lib.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(2):
        adam.zero_grad()
        loss, u_t, u_xx = pde_loss()
        loss.backward()
        adam.step()
        out += [loss, u_t, u_xx, x.grad]
    lbfgs = lib.optim.LBFGS(model.parameters(), lr=0.5, max_iter=3, history_size=5, line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        loss = pde_loss()[0]
        loss.backward()
        return loss
    out.append(lbfgs.step(closure))
    out.append(model.state_dict())
    st = lbfgs.state_dict()["state"][0]
    out.append({k: v for k, v in st.items() if k in ("func_evals", "n_iter", "t", "d", "prev_loss")})
    return out


def case_nerf(lib):
    """nerf-pytorch: the Embedder's positional encoding, stratified z_vals, raw2outputs (exclusive cumprod by cat of
    ones, weights, rgb/depth/disp/acc maps), hierarchical sample_pdf (cumsum, searchsorted(right=True), max/min,
    gather), sort of the merged samples, img2mse/mse2psnr, gradients of the fine and coarse losses."""
    nn, F = lib.nn, lib.nn.functional

    class Embedder:
        def __init__(self, multires):
            self.freq_bands = 2. ** lib.linspace(0., multires - 1, steps=multires)
            self.embed_fns = [lambda x: x]
            for freq in self.freq_bands:
                for p_fn in [lib.sin, lib.cos]:
                    self.embed_fns.append(lambda x, p_fn=p_fn, freq=freq: p_fn(x * freq))

        def embed(self, inputs):
            return lib.cat([fn(inputs) for fn in self.embed_fns], -1)

    emb = Embedder(3)
    # The inputs keep the formulas computed by each library's ops (oracle.formula_init's in_library): the last
    # hierarchical sample sits on searchsorted's edge (u = 1.0 against a cdf ending 1 +- 1 ulp). Given the same
    # weights and rays in both libraries (numpy's or PyTorch's values), torchish's cdf of the third ray ends at
    # 1.0000001 where PyTorch's ends at 1.0 (the pdf differs by up to 3e-6 relative: exp's ulps through 1 - exp(-x)),
    # which moves that sample from 5.676 to 5.674.
    model = _init(lib, nn.Sequential(nn.Linear(3 * 7, 16), nn.ReLU(), nn.Linear(16, 4)), in_library=True)

    def raw2outputs(raw, z_vals, rays_d, raw_noise_std=0):
        raw2alpha = lambda raw, dists, act_fn=F.relu: 1. - lib.exp(-act_fn(raw) * dists)  # noqa: E731
        dists = z_vals[..., 1:] - z_vals[..., :-1]
        dists = lib.cat([dists, lib.Tensor([1e10]).expand(dists[..., :1].shape)], -1)
        dists = dists * lib.norm(rays_d[..., None, :], dim=-1)
        rgb = lib.sigmoid(raw[..., :3])
        alpha = raw2alpha(raw[..., 3], dists)
        weights = alpha * lib.cumprod(lib.cat([lib.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
        rgb_map = lib.sum(weights[..., None] * rgb, -2)
        depth_map = lib.sum(weights * z_vals, -1)
        disp_map = 1. / lib.max(1e-10 * lib.ones_like(depth_map), depth_map / lib.sum(weights, -1))
        acc_map = lib.sum(weights, -1)
        rgb_map = rgb_map + (1. - acc_map[..., None])
        return rgb_map, disp_map, acc_map, weights, depth_map

    def sample_pdf(bins, weights, N_samples, det=True):
        weights = weights + 1e-5
        pdf = weights / lib.sum(weights, -1, keepdim=True)
        cdf = lib.cumsum(pdf, -1)
        cdf = lib.cat([lib.zeros_like(cdf[..., :1]), cdf], -1)
        u = lib.linspace(0., 1., steps=N_samples)
        u = u.expand(list(cdf.shape[:-1]) + [N_samples])
        u = u.contiguous()
        inds = lib.searchsorted(cdf, u, right=True)
        below = lib.max(lib.zeros_like(inds - 1), inds - 1)
        above = lib.min((cdf.shape[-1] - 1) * lib.ones_like(inds), inds)
        inds_g = lib.stack([below, above], -1)
        matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
        cdf_g = lib.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
        bins_g = lib.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)
        denom = (cdf_g[..., 1] - cdf_g[..., 0])
        denom = lib.where(denom < 1e-5, lib.ones_like(denom), denom)
        t = (u - cdf_g[..., 0]) / denom
        samples = bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])
        return samples

    N_rays, N_samples = 3, 6
    rays_o = _data(lib, N_rays, 3, in_library=True) * 0.1
    rays_d = _data(lib, N_rays, 3, seed=1, in_library=True)
    rays_d = rays_d / lib.norm(rays_d, dim=-1, keepdim=True)
    near, far = 2. * lib.ones_like(rays_d[..., :1]), 6. * lib.ones_like(rays_d[..., :1])
    t_vals = lib.linspace(0., 1., steps=N_samples)
    z_vals = near * (1. - t_vals) + far * (t_vals)
    z_vals = z_vals.expand([N_rays, N_samples])
    mids = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
    upper = lib.cat([mids, z_vals[..., -1:]], -1)
    lower = lib.cat([z_vals[..., :1], mids], -1)
    t_rand = lib.linspace(0.1, 0.9, N_samples).expand(z_vals.shape)
    z_vals = lower + (upper - lower) * t_rand
    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
    raw = model(emb.embed(pts))
    rgb_map, disp_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d)
    z_vals_mid = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
    z_samples = sample_pdf(z_vals_mid, weights[..., 1:-1], 5, det=True)
    z_samples = z_samples.detach()
    z_vals2, _ = lib.sort(lib.cat([z_vals, z_samples], -1), -1)
    pts2 = rays_o[..., None, :] + rays_d[..., None, :] * z_vals2[..., :, None]
    rgb2, disp2, acc2, w2, d2 = raw2outputs(model(emb.embed(pts2)), z_vals2, rays_d)
    img2mse = lambda x, y: lib.mean((x - y) ** 2)  # noqa: E731
    mse2psnr = lambda x: -10. * lib.log(x) / lib.log(lib.Tensor([10.]))  # noqa: E731
    target = _data(lib, N_rays, 3, seed=4, in_library=True).abs()
    loss = img2mse(rgb_map, target) + img2mse(rgb2, target)
    psnr = mse2psnr(img2mse(rgb2, target))
    loss.backward()
    return ([rgb_map, disp_map, acc_map, weights, depth_map, z_samples, z_vals2, rgb2, disp2, loss, psnr],
            [p.grad for p in model.parameters()])


def case_point_clouds_contrastive(lib):
    """Point clouds: kNN by cdist + topk(largest=False), gather of neighbours, Chamfer (min both ways), DGCNN's
    knn/get_graph_feature; contrastive: NT-Xent with masked_fill(-inf) and (-9e15), SimCLR's info_nce_loss (boolean
    mask indexing), a triplet loss by hand and F.triplet_margin_loss, the margin contrastive loss; gradients."""
    nn, F = lib.nn, lib.nn.functional

    def knn(x, k):
        inner = -2 * lib.matmul(x.transpose(2, 1), x)
        xx = lib.sum(x ** 2, dim=1, keepdim=True)
        pairwise_distance = -xx - inner - xx.transpose(2, 1)
        idx = pairwise_distance.topk(k=k, dim=-1)[1]
        return idx

    def get_graph_feature(x, k=3):
        batch_size, num_dims, num_points = x.size()
        idx = knn(x, k=k)
        idx_base = lib.arange(0, batch_size).view(-1, 1, 1) * num_points
        idx = idx + idx_base
        idx = idx.view(-1)
        x = x.transpose(2, 1).contiguous()
        feature = x.view(batch_size * num_points, -1)[idx, :]
        feature = feature.view(batch_size, num_points, k, num_dims)
        x = x.view(batch_size, num_points, 1, num_dims).repeat(1, 1, k, 1)
        feature = lib.cat((feature - x, x), dim=3).permute(0, 3, 1, 2).contiguous()
        return feature

    def chamfer(p1, p2):
        d = lib.cdist(p1, p2)
        return d.min(dim=2)[0].mean(dim=1) + d.min(dim=1)[0].mean(dim=1), d.min(dim=2)[1]

    pts = _data(lib, 2, 7, 3).requires_grad_()
    pts2 = _data(lib, 2, 5, 3, seed=2)
    out = []
    dist = lib.cdist(pts, pts)
    knn_d, knn_i = dist.topk(3, dim=-1, largest=False)
    out += [knn_d, knn_i]
    neigh = lib.gather(pts.unsqueeze(1).expand(-1, 7, -1, -1), 2, knn_i.unsqueeze(-1).expand(-1, -1, -1, 3))
    out.append(neigh)
    cd, nn_idx = chamfer(pts, pts2)
    out += [cd, nn_idx]
    gf = get_graph_feature(pts.transpose(1, 2).contiguous())
    out.append(gf)
    loss = cd.sum() + gf.max(dim=-1, keepdim=False)[0].sum() + knn_d.sum() + neigh.sum()
    loss.backward()
    out.append(pts.grad)

    # SimCLR NT-Xent
    z = _data(lib, 8, 6, seed=5).requires_grad_()
    temperature = 0.5
    zn = F.normalize(z, dim=1)
    sim = lib.mm(zn, zn.t()) / temperature
    n = z.shape[0] // 2
    labels = lib.cat([lib.arange(n) + n, lib.arange(n)])
    mask = lib.eye(2 * n, dtype=lib.bool)
    logits = sim.masked_fill(mask, float("-inf"))
    l1 = F.cross_entropy(logits, labels)
    logits2 = sim.masked_fill(mask, -9e15)
    l2 = F.cross_entropy(logits2, labels, reduction="sum")
    # SimCLR's info_nce_loss
    labels3 = (lib.cat([lib.arange(n) for _ in range(2)], dim=0).unsqueeze(0) == lib.cat(
        [lib.arange(n) for _ in range(2)], dim=0).unsqueeze(1)).float()
    sm = lib.matmul(zn, zn.T)
    labels3 = labels3[~mask].view(labels3.shape[0], -1)
    sm = sm[~mask].view(sm.shape[0], -1)
    positives = sm[labels3.bool()].view(labels3.shape[0], -1)
    negatives = sm[~labels3.bool()].view(sm.shape[0], -1)
    lg = lib.cat([positives, negatives], dim=1) / temperature
    l3 = F.cross_entropy(lg, lib.zeros(lg.shape[0], dtype=lib.long))
    # triplet / contrastive by hand
    a, p, ng = zn[:3], zn[3:6], zn[[6, 7, 0]]
    d_ap = (a - p).pow(2).sum(1)
    d_an = (a - ng).pow(2).sum(1)
    l4 = F.relu(d_ap - d_an + 0.5).mean()
    l5 = F.triplet_margin_loss(a, p, ng, margin=0.5)
    y = lib.tensor([1., 0., 1.])
    ed = F.pairwise_distance(a, p)
    l6 = lib.mean(y * lib.pow(ed, 2) + (1 - y) * lib.pow(lib.clamp(1.0 - ed, min=0.0), 2))
    tot = l1 + l2 + l3 + l4 + l5 + l6
    tot.backward()
    out += [l1, l2, l3, l4, l5, l6, z.grad, lg]
    return out


def case_gnn(lib):
    """GCN/GAT without libraries: degrees by bincount and scatter_add_, pow(-0.5) with inf -> 0 (masked_fill and
    boolean setitem), index_add_ message passing, scatter_reduce amax/mean with and without include_self, a dense
    normalised adjacency, GAT's segment softmax (scatter max, exp, scatter sum), per-graph pooling; gradients."""
    nn, F = lib.nn, lib.nn.functional
    N = 6
    edge_index = lib.tensor([[0, 1, 1, 2, 3, 4, 4, 0, 2], [1, 0, 2, 1, 4, 3, 0, 4, 0]])
    x = _data(lib, N, 4).requires_grad_()
    row, col = edge_index
    deg = lib.bincount(col, minlength=N).float()
    deg2 = lib.zeros(N).scatter_add_(0, col, lib.ones(col.size(0)))
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt = deg_inv_sqrt.masked_fill(deg_inv_sqrt == float('inf'), 0)
    deg_inv_sqrt2 = deg2.pow(-0.5)
    deg_inv_sqrt2[lib.isinf(deg_inv_sqrt2)] = 0
    norm = deg_inv_sqrt[row] * deg_inv_sqrt[col]
    lin = _init(lib, nn.Linear(4, 5))
    h = lin(x)
    msg = norm.view(-1, 1) * h[row]
    out1 = lib.zeros(N, 5).index_add_(0, col, msg)
    out2 = lib.zeros(N, 5).scatter_reduce(0, col.view(-1, 1).expand(-1, 5), h[row], reduce="amax", include_self=False)
    out3 = lib.zeros(N, 5).scatter_reduce(0, col.view(-1, 1).expand(-1, 5), h[row], reduce="mean", include_self=False)
    out4 = lib.full((N, 5), 0.5).scatter_reduce(0, col.view(-1, 1).expand(-1, 5), h[row], reduce="mean")
    # dense adjacency GCN
    adj = lib.zeros(N, N)
    adj[row, col] = 1.
    adj = adj + lib.eye(N)
    d = adj.sum(1)
    d_inv = lib.diag(lib.pow(d, -0.5))
    a_hat = d_inv @ adj @ d_inv
    out5 = a_hat @ h
    # GAT with segment softmax
    att_src = nn.Parameter(_data(lib, 1, 5, seed=2))
    att_dst = nn.Parameter(_data(lib, 1, 5, seed=3))
    a_s = (h * att_src).sum(-1)
    a_d = (h * att_dst).sum(-1)
    e = F.leaky_relu(a_s[row] + a_d[col], 0.2)
    e_max = lib.zeros(N).scatter_reduce(0, col, e, reduce="amax", include_self=False)
    e_exp = (e - e_max[col]).exp()
    denom = lib.zeros(N).scatter_add(0, col, e_exp)
    alpha = e_exp / (denom[col] + 1e-16)
    out6 = lib.zeros(N, 5).index_add(0, col, alpha.unsqueeze(-1) * h[row])
    # pooling per graph
    batch = lib.tensor([0, 0, 0, 1, 1, 1])
    pooled = lib.zeros(2, 5).index_add_(0, batch, out6) / lib.bincount(batch).unsqueeze(1)
    pooled_max = lib.full((2, 5), float("-inf")).scatter_reduce(0, batch.unsqueeze(1).expand(-1, 5), out2,
                                                                 reduce="amax")
    loss = sum(o.pow(2).sum() for o in (out1, out2, out3, out4, out5, out6, pooled)) + pooled_max.sum()
    loss.backward()
    return ([deg, deg2, deg_inv_sqrt, deg_inv_sqrt2, out1, out2, out3, out4, out5, alpha, out6, pooled, pooled_max,
             loss], x.grad, att_src.grad, att_dst.grad, [p.grad for p in lin.parameters()])


def case_jit_vae_flow_ode(lib, jit):
    """Traced training steps: a VAE step (reparameterisation, KL), an RK4 neural-ODE step with SGD momentum,
    an affine coupling flow step."""
    nn, F = lib.nn, lib.nn.functional
    enc = _init(lib, nn.Linear(6, 4))
    dec = _init(lib, nn.Sequential(nn.Linear(2, 6), nn.Sigmoid()), seed=1)
    params = list(enc.parameters()) + list(dec.parameters())
    opt = lib.optim.Adam(params, lr=1e-2)

    def vae_step(x, eps):
        mu, logvar = enc(x).chunk(2, dim=1)
        z = mu + eps * lib.exp(0.5 * logvar)
        recon = dec(z)
        bce = F.binary_cross_entropy(recon, x, reduction='sum')
        kld = -0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = (bce + kld) / x.size(0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), kld.detach()
    vs = jit(vae_step)
    x = (_data(lib, 4, 6) + 1) / 2
    out = [vs(x, _data(lib, 4, 2, seed=i)) for i in range(3)]

    func = _init(lib, nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2)), seed=2)
    opt2 = lib.optim.SGD(func.parameters(), lr=0.1, momentum=0.9)

    def rk4_step(y0, t, target):
        y, ys = y0, [y0]
        for i in range(t.shape[0] - 1):
            dt = t[i + 1] - t[i]
            k1 = func(y)
            k2 = func(y + dt * k1 / 2)
            k3 = func(y + dt * k2 / 2)
            k4 = func(y + dt * k3)
            y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            ys.append(y)
        pred = lib.stack(ys)
        loss = (pred - target).abs().mean()
        opt2.zero_grad()
        loss.backward()
        opt2.step()
        return loss.detach(), pred.detach()
    rs = jit(rk4_step)
    t = lib.linspace(0., 1., 4)
    out += [rs(lib.tensor([[2., 0.], [0.5, -0.3]]), t, _data(lib, 4, 2, 2, seed=i)) for i in range(2)]

    # coupling layer log-det under jit
    mask = (lib.arange(4) % 2).float()
    net = _init(lib, nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8)), seed=3)
    opt3 = lib.optim.Adam(net.parameters(), lr=1e-3)

    def flow_step(x):
        s, tt = net(x * mask).chunk(2, dim=1)
        s = lib.tanh(s) * (1 - mask)
        z = x * mask + (1 - mask) * (x * s.exp() + tt)
        log_det = s.sum(1)
        logp = -0.5 * (z ** 2).sum(1) - 0.5 * 4 * math.log(2 * math.pi)
        loss = -(logp + log_det).mean()
        opt3.zero_grad()
        loss.backward()
        opt3.step()
        return loss.detach(), z.detach()
    fs = jit(flow_step)
    out += [fs(_data(lib, 5, 4, seed=i)) for i in range(2)]
    out.append([p.detach().clone() for p in params + list(func.parameters()) + list(net.parameters())])
    return out


def case_jit_pinn(lib, jit):
    """A traced PINN step for Burgers' equation: first and second derivatives by autograd.grad(create_graph=True)
    inside the traced function, then backward through them and Adam."""
    nn = lib.nn
    model = _init(lib, nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1)), seed=3)
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)

    def step(x, t):
        x = x.clone().requires_grad_(True)
        t = t.clone().requires_grad_(True)
        u = model(lib.cat([x, t], 1))
        u_t, u_x = lib.autograd.grad(u, [t, x], grad_outputs=lib.ones_like(u), create_graph=True)
        u_xx = lib.autograd.grad(u_x, x, grad_outputs=lib.ones_like(u_x), create_graph=True)[0]
        f = u_t + u * u_x - (0.01 / math.pi) * u_xx
        loss = (f ** 2).mean() + ((model(lib.cat([x, lib.zeros_like(t)], 1)) + lib.sin(math.pi * x)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), u_xx.detach()
    s = jit(step)
    x = lib.linspace(-1, 1, 6).view(-1, 1)
    t = lib.linspace(0, 1, 6).view(-1, 1)
    out = [s(x, t) for _ in range(3)]
    out.append(model.state_dict())
    return out


def case_jit_nerf_points_graph(lib, jit):
    """Traced steps: NeRF volume rendering with an MLP and Adam; inverse-CDF sampling; a point-cloud step
    (Chamfer, kNN gather, Conv1d(k=1) + max pool, NT-Xent with -9e15); a GCN + GAT step with scatter_reduce and
    index_add."""
    nn, F = lib.nn, lib.nn.functional
    mlp = _init(lib, nn.Sequential(nn.Linear(9, 16), nn.ReLU(), nn.Linear(16, 4)))
    opt = lib.optim.Adam(mlp.parameters(), lr=5e-4)

    def render(z_vals, rays_o, rays_d, target):
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
        enc = lib.cat([pts, lib.sin(pts), lib.cos(2 * pts)], -1)
        raw = mlp(enc)
        dists = z_vals[..., 1:] - z_vals[..., :-1]
        dists = lib.cat([dists, lib.tensor([1e10]).expand(dists[..., :1].shape)], -1)
        alpha = 1. - lib.exp(-F.relu(raw[..., 3]) * dists)
        weights = alpha * lib.cumprod(lib.cat([lib.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
        rgb = lib.sum(weights[..., None] * lib.sigmoid(raw[..., :3]), -2)
        loss = F.mse_loss(rgb, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), weights.detach()
    r = jit(render)
    z = lib.linspace(2., 6., 5).expand(3, 5)
    out = [r(z, _data(lib, 3, 3) * 0.1, F.normalize(_data(lib, 3, 3, seed=1), dim=-1), _data(lib, 3, 3, seed=2).abs())
           for _ in range(2)]

    def sample_pdf(bins, weights, u):
        weights = weights + 1e-5
        pdf = weights / lib.sum(weights, -1, keepdim=True)
        cdf = lib.cat([lib.zeros_like(pdf[..., :1]), lib.cumsum(pdf, -1)], -1)
        u = u.expand(list(cdf.shape[:-1]) + [u.shape[-1]]).contiguous()
        inds = lib.searchsorted(cdf, u, right=True)
        below = lib.clamp(inds - 1, min=0)
        above = lib.clamp(inds, max=cdf.shape[-1] - 1)
        inds_g = lib.stack([below, above], -1)
        ms = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
        cdf_g = lib.gather(cdf.unsqueeze(1).expand(ms), 2, inds_g)
        bins_g = lib.gather(bins.unsqueeze(1).expand(ms), 2, inds_g)
        denom = cdf_g[..., 1] - cdf_g[..., 0]
        denom = lib.where(denom < 1e-5, lib.ones_like(denom), denom)
        return bins_g[..., 0] + (u - cdf_g[..., 0]) / denom * (bins_g[..., 1] - bins_g[..., 0])
    out.append(jit(sample_pdf)(lib.linspace(2, 6, 5).expand(3, 5), _data(lib, 3, 4, seed=3).abs(), lib.linspace(0, 1, 7)))

    conv = _init(lib, nn.Sequential(nn.Conv1d(3, 8, 1), nn.ReLU(), nn.Conv1d(8, 8, 1)), seed=4)
    opt2 = lib.optim.SGD(conv.parameters(), lr=0.1)

    def points(p1, p2):
        d = lib.cdist(p1, p2)
        cham = d.min(2)[0].mean() + d.min(1)[0].mean()
        kd, ki = lib.cdist(p1, p1).topk(3, dim=-1, largest=False)
        nb = lib.gather(p1.unsqueeze(1).expand(-1, p1.shape[1], -1, -1), 2, ki.unsqueeze(-1).expand(-1, -1, -1, 3))
        feat = conv((nb - p1.unsqueeze(2)).mean(2).transpose(1, 2)).max(dim=2)[0]
        z = F.normalize(feat, dim=1)
        sim = z @ z.t() / 0.5
        sim = sim.masked_fill(lib.eye(z.shape[0], dtype=lib.bool), -9e15)
        labels = lib.tensor([1, 0, 3, 2])
        loss = F.cross_entropy(sim, labels) + cham
        opt2.zero_grad()
        loss.backward()
        opt2.step()
        return loss.detach(), ki, kd.detach()
    ps = jit(points)
    out += [ps(_data(lib, 4, 6, 3, seed=i), _data(lib, 4, 5, 3, seed=i + 5)) for i in range(2)]

    lin = _init(lib, nn.Linear(4, 5), seed=5)
    att = nn.Parameter(_data(lib, 10, seed=6))
    # SGD: att[5:] (the target term, constant within each softmax segment) has a gradient of rounding noise only,
    # which Adam would scale up to full-size steps
    opt3 = lib.optim.SGD(list(lin.parameters()) + [att], lr=1e-2)

    def gnn(x, edge_index):
        row, col = edge_index
        n = x.shape[0]
        deg = lib.zeros(n).scatter_add_(0, col, lib.ones(col.size(0)))
        dis = deg.pow(-0.5)
        dis = dis.masked_fill(dis == float('inf'), 0)
        h = lin(x)
        gcn = lib.zeros(n, 5).index_add_(0, col, (dis[row] * dis[col]).view(-1, 1) * h[row])
        e = F.leaky_relu((h[row] * att[:5]).sum(-1) + (h[col] * att[5:]).sum(-1), 0.2)
        e_max = lib.zeros(n).scatter_reduce(0, col, e, reduce="amax", include_self=False)
        e_exp = (e - e_max[col]).exp()
        den = lib.zeros(n).scatter_add(0, col, e_exp)
        alpha = e_exp / (den[col] + 1e-16)
        gat = lib.zeros(n, 5).index_add(0, col, alpha.unsqueeze(-1) * h[row])
        mean = lib.zeros(n, 5).scatter_reduce(0, col.view(-1, 1).expand(-1, 5), h[row], reduce="mean",
                                              include_self=False)
        loss = gcn.pow(2).sum() + gat.pow(2).sum() + mean.sum()
        opt3.zero_grad()
        loss.backward()
        opt3.step()
        return loss.detach(), alpha.detach(), deg
    g = jit(gnn)
    ei = lib.tensor([[0, 1, 1, 2, 3, 4, 4, 0, 2], [1, 0, 2, 1, 4, 3, 0, 4, 0]])
    out += [g(_data(lib, 6, 4, seed=i), ei) for i in range(2)]
    out.append([p.detach().clone() for p in list(mlp.parameters()) + list(conv.parameters()) + list(lin.parameters())])
    return out


def case_einsum_single_operand_views(lib):
    """A one-operand einsum that sums nothing ('b h n d -> b n h d', a diagonal 'bii->bi') is a view in PyTorch: its
    strides, is_contiguous, view() refusing it, a write through it reaching the input; the gradient through it."""
    x = _data(lib, 1, 2, 3, 4).requires_grad_()
    y = lib.einsum("b h n d -> b n h d", x)
    m = _data(lib, 2, 3, 3, seed=1)
    dg = lib.einsum("bii->bi", m)
    out = [y, y.stride(), y.is_contiguous(), y.reshape(1, 3, 8), dg, dg.stride(), lib.einsum("ji", m[0]).stride()]
    try:
        y.view(1, 3, 8)
    except RuntimeError as e:
        out.append(str(e))
    dg.mul_(0)
    out.append(m)
    (y * lib.arange(24.).view(1, 3, 2, 4)).sum().backward()
    out.append(x.grad)
    # two operands: the strides of PyTorch's bmm (swapped where the right's dims come first) or mul result
    a, b = _data(lib, 2, 3, 4), _data(lib, 3, 4, seed=2)
    q, k = _data(lib, 1, 2, 3, 4), _data(lib, 1, 2, 5, 4, seed=3)
    for r in (lib.einsum("bnd,nd->bn", a, b), lib.einsum("bhid,bhjd->bijh", q, k), lib.einsum("bij,jk->bki", a, b.t()),
              lib.einsum("ij,ij->ji", b.t(), b.t()), lib.einsum("bi,bj->ijb", a[:, 0], a[:, 1]),
              lib.einsum("bhid,bhjd->bhij", q, k)):
        out += [r, r.stride(), r.is_contiguous()]
    return out


def case_pointnet2_sparse_gcn_glow(lib):
    """PointNet++ farthest point sampling (fixed start), index_points by a repeated arange, ball query with boolean
    setitem and sort; pygcn's sparse adjacency (sparse_coo_tensor, spmm, sparse.mm) with gradients; cosine similarity
    matrices; EMA by mul_/add_, lerp_ and _foreach_lerp_; Glow's invertible 1x1 convolution (slogdet, inverse in
    float64, linalg.lu)."""
    F = lib.nn.functional
    out = []
    # pygcn: sparse adjacency
    idx = lib.tensor([[0, 1, 1, 2, 3], [1, 0, 2, 1, 3]])  # (PyTorch warns that invariant checks are off)
    vals = lib.tensor([0.5, 0.5, 0.3, 0.3, 1.0])
    adj = lib.sparse_coo_tensor(idx, vals, (4, 4))
    w = _data(lib, 4, 3).requires_grad_()
    h = lib.spmm(adj, w)
    h2 = lib.sparse.mm(adj, w)
    out += [h, h2, adj.to_dense(), adj.coalesce().indices(), adj._nnz()]
    (h.sum() + h2.pow(2).sum()).backward()
    out.append(w.grad)
    # cosine similarity matrix
    z = _data(lib, 4, 5)
    out.append(F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=2))
    # farthest point sampling with a fixed start
    xyz = _data(lib, 2, 8, 3)
    B, N, C = xyz.shape
    npoint = 4
    centroids = lib.zeros(B, npoint, dtype=lib.long)
    distance = lib.ones(B, N) * 1e10
    farthest = lib.zeros(B, dtype=lib.long)
    batch_indices = lib.arange(B, dtype=lib.long)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch_indices, farthest, :].view(B, 1, 3)
        dist = lib.sum((xyz - centroid) ** 2, -1)
        mask = dist < distance
        distance[mask] = dist[mask]
        farthest = lib.max(distance, -1)[1]
    out.append(centroids)

    def index_points(points, idx):
        B = points.shape[0]
        view_shape = list(idx.shape)
        view_shape[1:] = [1] * (len(view_shape) - 1)
        repeat_shape = list(idx.shape)
        repeat_shape[0] = 1
        batch_indices = lib.arange(B, dtype=lib.long).view(view_shape).repeat(repeat_shape)
        return points[batch_indices, idx, :]
    new_xyz = index_points(xyz, centroids)
    out.append(new_xyz)
    # ball query
    sqrdists = -2 * lib.matmul(new_xyz, xyz.permute(0, 2, 1))
    sqrdists += lib.sum(new_xyz ** 2, -1).view(B, npoint, 1)
    sqrdists += lib.sum(xyz ** 2, -1).view(B, 1, N)
    group_idx = lib.arange(N, dtype=lib.long).view(1, 1, N).repeat([B, npoint, 1])
    group_idx[sqrdists > 0.8 ** 2] = N
    group_idx = group_idx.sort(dim=-1)[0][:, :, :3]
    group_first = group_idx[:, :, 0].view(B, npoint, 1).repeat([1, 1, 3])
    mask = group_idx == N
    group_idx[mask] = group_first[mask]
    out += [group_idx, index_points(xyz, group_idx)]
    # EMA and lerp
    p = _data(lib, 5)
    ema = lib.zeros(5)
    ema.mul_(0.99).add_((1 - 0.99) * p)
    ema2 = lib.zeros(5).lerp_(p, 0.01)
    out += [ema, ema2]
    e1, e2 = [lib.zeros(3), lib.ones(2)], [lib.ones(3), lib.full((2,), 3.)]
    lib._foreach_lerp_(e1, e2, 0.1)
    lib._foreach_mul_(e2, 0.5)
    out += [e1, e2]
    # invertible 1x1 conv (Glow)
    wq = _data(lib, 3, 3) + 2 * lib.eye(3)
    x = _data(lib, 2, 3, 2, 2).requires_grad_()
    y = F.conv2d(x, wq.view(3, 3, 1, 1))
    logdet = 4 * lib.slogdet(wq)[1]
    inv = lib.inverse(wq.double()).float()
    xr = F.conv2d(y, inv.view(3, 3, 1, 1))
    Pm, L, U = lib.linalg.lu(wq)
    s = lib.diag(U)
    out += [y, logdet, xr, Pm, L, U, lib.sum(lib.log(lib.abs(s))), lib.sign(s)]
    (y.sum() + logdet).backward()
    out.append(x.grad)
    return out


test_script_matches_torch = script_test(globals())
