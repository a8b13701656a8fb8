"""A walk through PyTorch's autograd semantics, running on JAX through torchish.

Topics: scalar vs non-scalar backward and the ``gradient`` argument (vector-Jacobian products), ``.grad``
accumulation and zeroing, ``retain_graph``, ``no_grad``, tensor hooks that inspect and rewrite gradients, a custom
``autograd.Function``, double backward. (Module backward hooks are shown once torchish.nn is imported.)

Run: ``python examples/autograd_tour.py`` (a second or two after JAX starts).
"""
from __future__ import annotations

import torchish as torch


def section(title):
    print(f"\n== {title} ==")


def scalar_and_vector_backward():
    section("scalar vs non-scalar backward")
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    y = (x ** 2).sum()
    y.backward()
    print("d(sum x^2)/dx =", x.grad)                     # [4., 6.]

    x.grad = None
    y = torch.stack([x[0] ** 2 + x[1], x[0] * x[1] * 3])  # a vector output: backward needs a vector v
    try:
        y.backward()
    except RuntimeError as e:
        print("without gradient=:", e)
    y.backward(torch.tensor([1.0, 10.0]), retain_graph=True)  # v^T J with v = [1, 10]
    print("v = [1, 10]:", x.grad)
    x.grad = None
    y.backward(torch.tensor([1.0, 1.0]))
    print("v = [1, 1]: ", x.grad)


def accumulation():
    section(".grad accumulates until zeroed")
    w = torch.tensor([1.0, -1.0], requires_grad=True)
    for step in range(3):
        (w * (step + 1)).sum().backward()
        print(f"after backward {step + 1}: w.grad = {w.grad}")
    w.grad.zero_()
    print("after zero_():", w.grad)


def retain_graph_and_no_grad():
    section("retain_graph and no_grad")
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()  # allowed: the graph was retained
    print("two backwards, accumulated:", x.grad)
    with torch.no_grad():
        z = x * 2
    print("under no_grad: requires_grad =", z.requires_grad, ", grad_fn =", z.grad_fn)


def hooks():
    section("tensor hooks")
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 3
    seen = []
    h.register_hook(lambda g: seen.append(g.clone()))      # inspect
    h.register_hook(lambda g: g.clamp(max=0.5))            # rewrite: clip the incoming gradient
    (h * torch.tensor([0.1, 1.0, 10.0])).sum().backward()
    print("gradient seen at h:", seen[0])
    print("x.grad after the clipping hook:", x.grad)


class Cube(torch.autograd.Function):
    """x^3 with a hand-written backward (which is itself differentiable)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 3 * x ** 2


def custom_function_and_double_backward():
    section("custom autograd.Function and double backward")
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)  # 3 x^2
    print("first derivative:", g, "grad_fn:", type(g.grad_fn).__name__)
    g.sum().backward()                                    # d/dx sum(3 x^2) = 6 x
    print("second derivative:", x.grad)


def main():
    scalar_and_vector_backward()
    accumulation()
    retain_graph_and_no_grad()
    hooks()
    custom_function_and_double_backward()


if __name__ == "__main__":
    main()
