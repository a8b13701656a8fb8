"""Where gradients stop inside a trace, as in PyTorch: ``detach()``, ``.data`` and ``no_grad()`` blocks inside a
``torchish.compile``d forward (differentiated outside it as one program) and inside ``torchish.func`` transforms;
an input no output's graph reaches keeps ``.grad`` None; a write behind autograd's back (under ``no_grad``, through
``.data``) leaves the gradient going to the written tensor. Each function is called three times (the first
compiled call runs eagerly, the later ones run the traced program)."""
import pytest

import torchish
from oracle import assert_same, needs_torch, run_both

pytestmark = needs_torch


def _detached_factor(T, x, y, z):
    return (x * y.detach() + z.data * x).sum() + (x.detach() * x).sum()


def _no_grad_block(T, x, y, z):
    with T.no_grad():
        w = y * 2 + x
        with T.enable_grad():
            v = z * 3
    return (x * w + v * y).sum()


def _set_grad_enabled_block(T, x, y, z):
    with T.set_grad_enabled(False):
        w = (x * z).sin()
    return (w * y + x).sum()


def _unused_and_index_only(T, x, y, z):
    return x[y.argmax()] * 2 + (z > 0.3).float().sum()


def _write_under_no_grad(T, x, y, z):
    h = x * 2
    with T.no_grad():
        h.add_(1)          # the graph still sees h: the gradient reaches x through MulBackward0
        h[0] = 5.0
    return (h * y).sum() + z.sum()


def _write_through_data(T, x, y, z):
    h = x * y
    h.data.mul_(3)
    return (h * h).sum() + (z * 0).sum()


_CASES = {f.__name__: f for f in (_detached_factor, _no_grad_block, _set_grad_enabled_block, _unused_and_index_only,
                                  _write_under_no_grad, _write_through_data)}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_compiled_forward_gradients_stop_where_pytorchs_do(name):
    fn = _CASES[name]

    def run(T):
        jit = torchish.compile if T is torchish else (lambda f: f)
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = T.tensor([4.0, 5.0, 6.0], requires_grad=True)
        z = T.tensor([0.5, 0.1, 0.2], requires_grad=True)
        f = jit(lambda x, y, z: fn(T, x, y, z))
        out = []
        for _ in range(3):
            x.grad = y.grad = z.grad = None
            loss = f(x, y, z)
            loss.backward()
            out.append((loss.detach(), x.grad, y.grad, z.grad))
        return out
    ref, got = run_both(run)
    assert_same(ref, got)


def _func_cases(T):
    x = T.tensor([2.0, 3.0])

    def nograd(x):
        with T.no_grad():
            y = x * 2
            with T.enable_grad():
                z = x * 3
        return (y * x + z * x).sum()

    def set_off(x):
        with T.set_grad_enabled(False):
            y = x.sin()
        return (y * x).sum()
    with T.no_grad():  # an outer no_grad does not reach into the transform
        outer = T.func.grad(nograd)(x)
    return (T.func.grad(lambda x: (x.detach() * x).sum())(x), T.func.grad(lambda x: (x.data * x).sum())(x),
            T.func.grad(nograd)(x), outer, T.func.grad(set_off)(x),
            T.func.vjp(lambda x: x.detach() * x, x)[1](T.ones(2)), T.func.jacrev(lambda x: x.data * x)(x),
            T.func.jacfwd(lambda x: x.detach() * x)(x))


def test_func_transforms_respect_detach_and_inner_no_grad():
    ref, got = run_both(_func_cases)
    assert_same(ref, got)


def test_compiled_training_step_with_a_detached_target():
    """A target network's output detached inside a compiled training step (DQN-style), the step's backward inside."""
    def run(T):
        jit = torchish.compile if T is torchish else (lambda f: f)
        net, tgt = T.nn.Linear(3, 2), T.nn.Linear(3, 2)
        with T.no_grad():
            for i, p in enumerate(list(net.parameters()) + list(tgt.parameters())):
                p.copy_(T.sin(T.arange(p.numel(), dtype=T.float32) + i).reshape(p.shape) * 0.5)
        opt = T.optim.SGD(net.parameters(), lr=0.1)
        s = T.tensor([[0.1, 0.2, 0.3], [0.4, -0.5, 0.6]])

        def step(s):
            opt.zero_grad()
            q = net(s)
            target = 1.0 + 0.9 * tgt(s).max(1).values.detach() + 0.1 * q.max(1).values.detach()
            loss = ((q[:, 0] - target) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        f = jit(step)
        losses = [f(s).detach() for _ in range(4)]
        return losses, [p.detach() for p in net.parameters()], [p.grad for p in tgt.parameters()]
    ref, got = run_both(run)
    assert_same(ref, got)
