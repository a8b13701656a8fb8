"""Regression tests from running scientific and generative model code as research repositories write it, on
torchish and on PyTorch: DDPM (beta schedules, alphas_cumprod with F.pad, extract, q_sample, the sinusoidal timestep
embedding, a tiny UNet with GroupNorm/SiLU/nearest upsampling/skip concat/self-attention, the training loss and
reverse sampling steps), a VAE and RealNVP/Glow-style flows (coupling layers, ActNorm data-dependent init), neural
ODEs (RK4/Euler written in torch) and PINNs (autograd.grad with create_graph, Adam then LBFGS), NeRF (positional
encoding, volume rendering, inverse-CDF sampling), point clouds (kNN by cdist+topk, Chamfer, PointNet), contrastive
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


def case_ddpm_train_and_sample(lib):
    """A tiny UNet trained two Adam steps on the fixed-noise loss, then three reverse steps with fixed noise."""
    Unet = _unet(lib)
    model = _init(lib, Unet())
    d = _Diffusion(lib, model, 10, "cosine")
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x0 = _data(lib, 2, 1, 4, 4) * 0.9
    out = []
    for i in range(2):
        t = lib.tensor([i + 1, 7 - i])
        noise = _data(lib, 2, 1, 4, 4, seed=i + 3)
        loss = d.p_losses(x0, t, noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(loss)
    out.append({n: p.grad for n, p in model.named_parameters()})
    img = _data(lib, 2, 1, 4, 4, seed=9)
    with lib.no_grad():
        for t in (2, 1, 0):
            img, x_start, w = d.p_sample(img, t, _data(lib, 2, 1, 4, 4, seed=10 + t))
            out += [img, x_start, w]
        img = (img + 1) * 0.5
        out.append(img.clamp_(0, 1))
    return out


def case_ddpm_train_step_jit(lib, jit):
    """The same loss and Adam step traced as one function."""
    Unet = _unet(lib)
    model = _init(lib, Unet(), seed=1)
    d = _Diffusion(lib, model, 10, "linear")
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)

    def step(x0, t, noise):
        loss = d.p_losses(x0, t, noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()
    step = jit(step)
    x0 = _data(lib, 2, 1, 4, 4) * 0.9
    out = [step(x0, lib.tensor([i, 9 - i]), _data(lib, 2, 1, 4, 4, seed=i)) for i in range(3)]
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


test_script_matches_torch = script_test(globals())
