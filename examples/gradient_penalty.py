"""WGAN-GP on a 2-D toy distribution with torchish: a gradient penalty through double backward.

The real data is a ring of 8 Gaussians. A generator maps noise to points; a critic scores points. The critic is
trained to estimate the Wasserstein-1 distance between real and generated points,
``E[critic(real)] - E[critic(fake)]``, under a 1-Lipschitz constraint enforced softly by the gradient penalty of
Gulrajani et al. (2017): ``lambda * (||d critic(x_hat) / d x_hat|| - 1)^2`` at random points ``x_hat`` between real
and fake samples. The penalty's gradient is taken with ``torch.autograd.grad(..., create_graph=True)``, so the
critic's update backpropagates through a gradient (double backward). The Wasserstein estimate rises while the
critic learns and falls as the generator learns the ring; after the full 600 generator updates 40-60% of the
generated points lie within 0.25 of one of the 8 modes (a fresh generator: ~3%). Measured: torchish 44.6%, PyTorch
58.1% with this same script (their random streams differ, so the runs differ in detail).

Run: ``python examples/gradient_penalty.py`` (``--quick``, or TORCHISH_EXAMPLE_QUICK=1, for a few steps).
"""
from __future__ import annotations

import argparse
import math
import os

from tqdm import tqdm

import torchish as torch
import torchish.nn as nn

LAMBDA_GP = 10.0
CRITIC_STEPS = 5           # critic updates per generator update
BATCH = 256


def sample_ring(n, generator):
    """``n`` points from 8 Gaussians (std 0.05) evenly spaced on a circle of radius 2."""
    k = torch.randint(0, 8, (n,), generator=generator)
    angle = k.float() * (2 * math.pi / 8)
    centres = torch.stack([angle.cos(), angle.sin()], dim=1) * 2.0
    return centres + 0.05 * torch.randn(n, 2, generator=generator)


def mlp(n_in, n_out, hidden=128):
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_out))


def gradient_penalty(critic, real, fake, generator):
    """``mean((||grad_x critic(x_hat)|| - 1)^2)`` at random interpolates; differentiable w.r.t. the critic."""
    alpha = torch.rand(real.shape[0], 1, generator=generator)
    x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    (grad,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    norms = grad.norm(2, dim=1)
    return ((norms - 1) ** 2).mean(), norms.mean().detach()


def near_a_mode(points):
    """Fraction of points within 0.25 of one of the 8 centres: how much of the generator's mass is on the ring."""
    angles = torch.arange(8).float() * (2 * math.pi / 8)
    centres = torch.stack([angles.cos(), angles.sin()], dim=1) * 2.0
    distance = (points[:, None, :] - centres[None]).norm(dim=2).min(dim=1).values
    return (distance < 0.25).float().mean().item()


def main():
    p = argparse.ArgumentParser(description="WGAN-GP on a ring of Gaussians")
    p.add_argument("--quick", action="store_true", help="a few steps only (also TORCHISH_EXAMPLE_QUICK=1)")
    p.add_argument("--steps", type=int, default=None, help="generator updates")
    args = p.parse_args()
    quick = args.quick or os.environ.get("TORCHISH_EXAMPLE_QUICK", "") not in ("", "0")
    steps = args.steps or (3 if quick else 600)

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    generator, critic = mlp(2, 2), mlp(2, 1)
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.9))
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))

    history = []
    bar = tqdm(range(steps), desc="WGAN-GP", ncols=100)
    for step in bar:
        for _ in range(CRITIC_STEPS):
            real = sample_ring(BATCH, gen)
            with torch.no_grad():
                fake = generator(torch.randn(BATCH, 2, generator=gen))
            wasserstein = critic(real).mean() - critic(fake).mean()
            penalty, grad_norm = gradient_penalty(critic, real, fake, gen)
            opt_c.zero_grad()
            (-wasserstein + LAMBDA_GP * penalty).backward()      # backward through the penalty's gradient
            opt_c.step()
        opt_g.zero_grad()
        (-critic(generator(torch.randn(BATCH, 2, generator=gen))).mean()).backward()
        opt_g.step()
        history.append(wasserstein.item())
        bar.set_postfix(W=f"{history[-1]:.3f}", grad_norm=f"{grad_norm.item():.2f}")

    with torch.no_grad():
        samples = generator(torch.randn(2048, 2, generator=gen))
    first, last = history[0], sum(history[-10:]) / len(history[-10:])
    print(f"Wasserstein estimate: {first:.3f} at the first step, {last:.3f} over the last steps")
    print(f"critic gradient norm at interpolates: {grad_norm.item():.3f} (the penalty pulls it towards 1)")
    print(f"generated points within 0.25 of a mode: {near_a_mode(samples):.1%}")


if __name__ == "__main__":
    main()
