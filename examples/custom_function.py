"""Custom autograd Functions with torchish: hand-written backward passes, checked and used inside a model.

Three ``torch.autograd.Function`` subclasses, written exactly as for PyTorch:

* ``LinearFunction`` -- ``x @ W.T + b`` with a backward that computes only the gradients asked for
  (``ctx.needs_input_grad``); its backward is made of differentiable ops, so double backward works too;
* ``LogCosh`` -- a numerically stable ``log(cosh(x))`` whose gradient ``tanh(x)`` is written by hand;
* ``SignSTE`` -- ``sign(x)`` with a straight-through-estimator gradient (passed through where ``|x| <= 1``),
  ``@once_differentiable``: its gradient is a deliberate approximation, so ``gradcheck`` rejects it and a
  second derivative raises.

``gradcheck``/``gradgradcheck`` compare the hand-written gradients with finite differences (in float64). Then a
small network with binary (sign) hidden units, built from these Functions, is trained on a 2-D toy problem.

Run: ``python examples/custom_function.py`` (``--quick``, or TORCHISH_EXAMPLE_QUICK=1, for a shorter training run).
"""
from __future__ import annotations

import argparse
import math
import os

import numpy as np
from tqdm import tqdm

import torchish as torch
import torchish.nn as nn
from torchish.autograd import Function, gradcheck, gradgradcheck
from torchish.autograd.function import once_differentiable


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.t() + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_out @ weight
        if ctx.needs_input_grad[1]:
            grad_w = grad_out.t() @ x
        if ctx.needs_input_grad[2]:
            grad_b = grad_out.sum(0)
        return grad_x, grad_w, grad_b


class LogCosh(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        # log(cosh x) = |x| + log(1 + exp(-2|x|)) - log 2, which never overflows
        return x.abs() + torch.nn.functional.softplus(-2 * x.abs()) - math.log(2.0)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.tanh(x)


class SignSTE(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x >= 0, 1.0, -1.0).to(x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (x.abs() <= 1).to(grad_out.dtype)


def check_gradients():
    print("== gradcheck (float64, finite differences) ==")
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(2, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    b = torch.randn(2, dtype=torch.float64, generator=gen, requires_grad=True)
    print("LinearFunction gradcheck:", gradcheck(LinearFunction.apply, (x, w, b)))
    print("LinearFunction gradgradcheck:", gradgradcheck(LinearFunction.apply, (x, w, b)))
    print("LogCosh gradcheck:", gradcheck(LogCosh.apply, (x,)))
    print("LogCosh gradgradcheck:", gradgradcheck(LogCosh.apply, (x,)))
    # the straight-through gradient is not sign's derivative (which is 0 almost everywhere): gradcheck says so
    print("SignSTE gradcheck (expected False):", gradcheck(SignSTE.apply, (x,), raise_exception=False))

    frozen = w.detach()          # needs_input_grad[1] is False: backward skips grad_w
    LinearFunction.apply(x, frozen, b).sum().backward()
    print("grad of a frozen weight:", frozen.grad, "| x.grad shape:", tuple(x.grad.shape))

    big = torch.tensor([-1000.0, 0.0, 1000.0], requires_grad=True)
    LogCosh.apply(big).sum().backward()
    print("LogCosh at +-1000:", LogCosh.apply(big).detach(), "grad:", big.grad)

    y = SignSTE.apply(x) * x                  # the incoming gradient (x) requires grad: a graph is built
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    try:
        g.sum().backward()
    except RuntimeError as e:
        print("double backward through SignSTE:", e)


class BinaryMLP(nn.Module):
    """Linear -> sign (straight-through) -> Linear, with the layers' maths in the custom Functions above."""

    def __init__(self, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        h = SignSTE.apply(LinearFunction.apply(x, self.fc1.weight, self.fc1.bias))
        return LinearFunction.apply(h, self.fc2.weight, self.fc2.bias).squeeze(1)


def make_rings(n, seed):
    """Points in the plane; the label says whether a point lies inside the unit circle."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, (n, 2)).astype(np.float32)
    y = ((x ** 2).sum(1) < 1.0).astype(np.float32) * 2 - 1           # +-1 targets
    return torch.from_numpy(x), torch.from_numpy(y)


def train(steps):
    print("\n== a binary-activation network trained through the custom Functions ==")
    torch.manual_seed(0)
    x, y = make_rings(1024, seed=0)
    x_test, y_test = make_rings(512, seed=1)
    model = BinaryMLP()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    bar = tqdm(range(steps), desc="training", ncols=90)
    for _ in bar:
        opt.zero_grad()
        loss = LogCosh.apply(model(x) - y).mean()      # a robust regression loss onto the +-1 labels
        loss.backward()
        opt.step()
        bar.set_postfix(loss=f"{loss.item():.3f}")
    with torch.no_grad():
        accuracy = ((model(x_test) >= 0).float() * 2 - 1 == y_test).float().mean().item()
    print(f"held-out accuracy of the binary network: {accuracy:.1%}")
    return accuracy


def main():
    p = argparse.ArgumentParser(description="custom autograd Functions")
    p.add_argument("--quick", action="store_true", help="short training run (also TORCHISH_EXAMPLE_QUICK=1)")
    args = p.parse_args()
    quick = args.quick or os.environ.get("TORCHISH_EXAMPLE_QUICK", "") not in ("", "0")
    check_gradients()
    train(steps=30 if quick else 400)


if __name__ == "__main__":
    main()
