"""Third-party programs, round 36: generative and self-supervised training code in the style of popular repositories
(lucidrains' denoising-diffusion-pytorch, SimCLR/CLIP, Hinton distillation, RealNVP, torchdiffeq's examples, PINN
codes), seeded by ``torch.manual_seed`` with default initialisation, run with torch 2.13 and torchish and compared by
``assert_script_matches`` (tests/oracle.py), warnings by message.
"""
import copy
import math

import numpy as np
import pytest

from oracle import script_test, torch_one_thread
from test_probe_scripts34 import _printed

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_ddpm_conv_denoiser_lerp_ema_and_sampling(lib):
    """denoising-diffusion-pytorch's GaussianDiffusion on 1x6x6 images: a linear beta schedule registered as float32
    buffers through a ``register_buffer = lambda name, val: ...`` helper, ``F.pad(alphas_cumprod[:-1], (1, 0),
    value=1.)``, ``extract`` by ``a.gather(-1, t).reshape(b, *((1,) * (len(x_shape) - 1)))``, the sinusoidal
    position embedding, a conv denoiser with GroupNorm/SiLU and a time MLP added as ``[:, :, None, None]``,
    ``torch.randn_like`` noise, ``torch.randint`` timesteps, AdamW with ``clip_grad_norm_``, an EMA copy updated by
    ``ema_p.lerp_(p, 1 - decay)`` and its buffers by ``copy_``, then ``p_sample_loop`` under
    ``torch.inference_mode()`` with the posterior log-variance ``clamp(min=1e-20).log()``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(0)

    def extract(a, t, x_shape):
        b, *_ = t.shape
        out = a.gather(-1, t)
        return out.reshape(b, *((1,) * (len(x_shape) - 1)))

    class SinusoidalPosEmb(nn.Module):
        def __init__(self, dim, theta=10000):
            super().__init__()
            self.dim, self.theta = dim, theta

        def forward(self, x):
            half_dim = self.dim // 2
            emb = math.log(self.theta) / (half_dim - 1)
            emb = torch.exp(torch.arange(half_dim, device=x.device) * -emb)
            emb = x[:, None] * emb[None, :]
            return torch.cat((emb.sin(), emb.cos()), dim=-1)

    class Denoiser(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, dim * 2), nn.GELU(),
                                          nn.Linear(dim * 2, dim))
            self.init_conv = nn.Conv2d(1, dim, 3, padding=1)
            self.block = nn.Sequential(nn.GroupNorm(2, dim), nn.SiLU(), nn.Conv2d(dim, dim, 3, padding=1))
            self.final = nn.Conv2d(dim, 1, 1)

        def forward(self, x, time):
            h = self.init_conv(x)
            h = h + self.time_mlp(time)[:, :, None, None]
            return self.final(self.block(h) + h)

    class GaussianDiffusion(nn.Module):
        def __init__(self, model, timesteps=8):
            super().__init__()
            self.model = model
            betas = torch.linspace(1e-4, 0.2, timesteps, dtype=torch.float64)
            alphas = 1. - betas
            alphas_cumprod = torch.cumprod(alphas, dim=0)
            alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.)
            self.num_timesteps = int(betas.shape[0])
            register_buffer = lambda name, val: self.register_buffer(name, val.to(torch.float32))  # noqa: E731
            register_buffer("betas", betas)
            register_buffer("sqrt_alphas_cumprod", torch.sqrt(alphas_cumprod))
            register_buffer("sqrt_one_minus_alphas_cumprod", torch.sqrt(1. - alphas_cumprod))
            register_buffer("sqrt_recip_alphas_cumprod", torch.sqrt(1. / alphas_cumprod))
            register_buffer("sqrt_recipm1_alphas_cumprod", torch.sqrt(1. / alphas_cumprod - 1))
            posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)
            register_buffer("posterior_log_variance_clipped", torch.log(posterior_variance.clamp(min=1e-20)))
            register_buffer("posterior_mean_coef1", betas * torch.sqrt(alphas_cumprod_prev) / (1. - alphas_cumprod))
            register_buffer("posterior_mean_coef2",
                            (1. - alphas_cumprod_prev) * torch.sqrt(alphas) / (1. - alphas_cumprod))

        def q_sample(self, x_start, t, noise):
            return (extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
                    + extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)

        def forward(self, img):
            b = img.shape[0]
            t = torch.randint(0, self.num_timesteps, (b,), device=img.device).long()
            noise = torch.randn_like(img)
            x = self.q_sample(img, t, noise)
            model_out = self.model(x, t)
            loss = F.mse_loss(model_out, noise, reduction="none")
            loss = loss.mean(dim=[1, 2, 3])
            return loss.mean()

        @torch.inference_mode()
        def p_sample(self, x, t: int):
            batched_times = torch.full((x.shape[0],), t, device=x.device, dtype=torch.long)
            pred_noise = self.model(x, batched_times)
            x_start = (extract(self.sqrt_recip_alphas_cumprod, batched_times, x.shape) * x
                       - extract(self.sqrt_recipm1_alphas_cumprod, batched_times, x.shape) * pred_noise)
            x_start.clamp_(-1., 1.)
            mean = (extract(self.posterior_mean_coef1, batched_times, x.shape) * x_start
                    + extract(self.posterior_mean_coef2, batched_times, x.shape) * x)
            log_var = extract(self.posterior_log_variance_clipped, batched_times, x.shape)
            noise = torch.randn_like(x) if t > 0 else 0.
            return mean + (0.5 * log_var).exp() * noise, x_start

        @torch.inference_mode()
        def sample(self, batch_size):
            img = torch.randn((batch_size, 1, 6, 6))
            for t in reversed(range(0, self.num_timesteps)):
                img, x_start = self.p_sample(img, t)
            return img

    diffusion = GaussianDiffusion(Denoiser())
    ema = copy.deepcopy(diffusion)
    ema.requires_grad_(False)
    opt = torch.optim.AdamW(diffusion.parameters(), lr=3e-3, betas=(0.9, 0.99))
    data = torch.rand(4, 1, 6, 6) * 2 - 1
    losses, norms = [], []
    for step in range(3):
        loss = diffusion(data)
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(diffusion.parameters(), 1.0))
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
        with torch.no_grad():
            for ema_p, p in zip(ema.parameters(), diffusion.parameters()):
                ema_p.lerp_(p, 1 - 0.9)
            for ema_b, b in zip(ema.buffers(), diffusion.buffers()):
                ema_b.copy_(b)
    samples = ema.sample(2)
    return losses, norms, samples, samples.is_inference(), dict(ema.named_parameters())


def case_simclr_ntxent_and_clip_symmetric_loss(lib):
    """SimCLR's ``info_nce_loss`` (sthalles/SimCLR): ``labels = torch.cat([torch.arange(bs) for i in range(2)])``,
    ``(labels.unsqueeze(0) == labels.unsqueeze(1)).float()``, the diagonal removed by ``[~mask].view(...)``,
    positives and negatives gathered by boolean masks, logits by ``torch.cat`` with zero labels and ``/ temperature``,
    top-k accuracy by ``output.topk(maxk, 1, True, True)`` and ``correct[:k].reshape(-1).float().sum(0,
    keepdim=True)``; then OpenAI CLIP's symmetric loss with ``logit_scale = nn.Parameter(torch.ones([]) *
    np.log(1 / 0.07))``, features divided by ``.norm(dim=1, keepdim=True)``, ``logit_scale.exp()`` and
    ``logits_per_image.t()``, open_clip's ``clamp_(0, math.log(100))`` of the scale after each SGD(nesterov) step
    under a CosineAnnealingLR schedule."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1)
    bs, n_views, temperature = 4, 2, 0.5
    encoder = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(inplace=True), nn.Linear(8, 5))
    opt = torch.optim.Adam(encoder.parameters(), lr=3e-3, weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss()

    def info_nce_loss(features):
        labels = torch.cat([torch.arange(bs) for i in range(n_views)], dim=0)
        labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
        features = F.normalize(features, dim=1)
        similarity_matrix = torch.matmul(features, features.T)
        mask = torch.eye(labels.shape[0], dtype=torch.bool)
        labels = labels[~mask].view(labels.shape[0], -1)
        similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)
        positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)
        negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)
        logits = torch.cat([positives, negatives], dim=1)
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        return logits / temperature, labels

    def accuracy(output, target, topk=(1,)):
        with torch.no_grad():
            maxk = max(topk)
            batch_size = target.size(0)
            _, pred = output.topk(maxk, 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / batch_size) for k in topk]

    x = torch.randn(bs, 6)
    simclr = []
    for _ in range(2):
        images = torch.cat([x + 0.1 * torch.randn_like(x), x.flip(0) * 0.0 + x * torch.rand(1)], dim=0)
        logits, labels = info_nce_loss(encoder(images))
        loss = criterion(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        simclr.append((loss, accuracy(logits, labels, topk=(1, 3))))

    class CLIP(nn.Module):
        def __init__(self):
            super().__init__()
            self.visual = nn.Linear(6, 4, bias=False)
            self.text_projection = nn.Parameter(torch.empty(5, 4))
            self.token_embedding = nn.Embedding(10, 5)
            self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))
            nn.init.normal_(self.text_projection, std=5 ** -0.5)

        def encode_text(self, text):
            x = self.token_embedding(text)
            x = x[torch.arange(x.shape[0]), text.argmax(dim=-1)]
            return x @ self.text_projection

        def forward(self, image, text):
            image_features = self.visual(image)
            text_features = self.encode_text(text)
            image_features = image_features / image_features.norm(dim=1, keepdim=True)
            text_features = text_features / text_features.norm(dim=1, keepdim=True)
            logit_scale = self.logit_scale.exp()
            logits_per_image = logit_scale * image_features @ text_features.t()
            logits_per_text = logits_per_image.t()
            return logits_per_image, logits_per_text

    clip = CLIP()
    opt = torch.optim.SGD(clip.parameters(), lr=0.5, momentum=0.9, nesterov=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3, eta_min=0.01)
    images, texts = torch.randn(3, 6), torch.tensor([[1, 4, 9, 0], [2, 9, 3, 0], [9, 5, 5, 1]])
    clip_out = []
    for _ in range(3):
        logits_per_image, logits_per_text = clip(images, texts)
        ground_truth = torch.arange(len(images), dtype=torch.long)
        total_loss = (F.cross_entropy(logits_per_image, ground_truth)
                      + F.cross_entropy(logits_per_text, ground_truth)) / 2
        opt.zero_grad()
        total_loss.backward()
        clip_out.append((total_loss, clip.logit_scale.grad.clone(), sched.get_last_lr()))
        opt.step()
        sched.step()
        with torch.no_grad():
            clip.logit_scale.clamp_(0, math.log(100))
    return simclr, clip_out, dict(clip.named_parameters()), encoder[1].running_var


def case_distillation_kl_div_reductions_and_feature_hints(lib):
    """Distillation as in the RepDistiller / torchdistill codes: ``nn.KLDivLoss(reduction="batchmean")`` on
    ``F.log_softmax(s / T, dim=1)`` against ``F.softmax(t / T, dim=1)`` times ``T * T``, the deprecated-looking
    ``reduction="mean"`` (PyTorch's warning about the support size) and ``"sum"``, ``log_target=True`` with a
    zero-probability class (-inf log-target), FitNets hints on a forward-hook-captured hidden activation through a
    1x1 regressor and MSE, the teacher in ``eval()`` under ``torch.no_grad()`` with dropout, and OneCycleLR."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    def run():
        torch.manual_seed(2)
        teacher = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Dropout(0.3), nn.Linear(12, 4)).eval()
        student = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Dropout(0.2), nn.Linear(5, 4))
        regressor = nn.Linear(5, 12, bias=False)
        feats = {}
        teacher[1].register_forward_hook(lambda m, i, o: feats.__setitem__("t", o))
        student[1].register_forward_hook(lambda m, i, o: feats.__setitem__("s", o))
        params = list(student.parameters()) + list(regressor.parameters())
        opt = torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=5e-4)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=4)
        kd = nn.KLDivLoss(reduction="batchmean")
        x, y, T = torch.randn(5, 6), torch.tensor([0, 3, 1, 1, 2]), 4.0
        out = []
        for _ in range(3):
            with torch.no_grad():
                t_logits = teacher(x)
            s_logits = student(x)
            loss_kd = kd(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1)) * T * T
            loss_hint = F.mse_loss(regressor(feats["s"]), feats["t"])
            loss = 0.9 * loss_kd + 0.1 * F.cross_entropy(s_logits, y) + 0.5 * loss_hint
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            out.append((loss_kd, loss_hint, sched.get_last_lr(), opt.param_groups[0]["momentum"]))
        s_log = F.log_softmax(student(x), dim=1)
        t_prob = F.softmax(t_logits, dim=1)
        t_prob = torch.cat([t_prob[:, :3], torch.zeros(5, 1)], dim=1)
        out.append(F.kl_div(s_log, t_prob, reduction="mean"))
        out.append(F.kl_div(s_log, t_prob, reduction="sum"))
        out.append(F.kl_div(s_log, t_prob.log(), reduction="none", log_target=True))
        s_leaf = s_log.detach().requires_grad_()
        F.kl_div(s_leaf, t_prob.log(), reduction="batchmean", log_target=True).backward()
        out.append(s_leaf.grad)
        return out, [p.grad for p in params]

    return _printed(run)


test_script_matches_torch = script_test(globals())
