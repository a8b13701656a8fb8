"""torch.cond / torch.while_loop / torch.sym_*: eager calls run the chosen branch or loop; inside torchish.compile a
cond on a traced predicate runs both branches and selects (one program, gradients through the chosen one). Torch's
own cond compiles each call with dynamo (seconds), so the reference here is the same branch chosen in Python on
torch, and torch.cond itself only for its argument errors."""
import pytest

from oracle import assert_same, needs_torch, torch, torchish

pytestmark = needs_torch


def _cond_program(lib, cond, jit):
    x = lib.arange(4.0, requires_grad=True)
    y = cond(x.sum() > 3, lambda a: (a.sin() * 2,), lambda a: (a.cos() + 1,), (x,))
    y[0].sum().backward()
    out = [y, x.grad, cond(True, lambda a: [a + 1, {"k": a * 2}], lambda a: [a - 1, {"k": a}], (x.detach(),)),
           cond(lib.tensor(0.0), lambda a: a + 1, lambda a: a - 1, (x.detach(),))]
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.arange(6.0).reshape(2, 3) / 10)
        lin.bias.fill_(0.1)

    def step(v):
        z = cond(lin(v).sum() > 1.0, lambda t: lin(t * 2).relu(), lambda t: lin((t - 3).tanh()) + lin.bias, (v,))
        loss = z.pow(2).sum()
        loss.backward()
        return loss
    f = jit(step)
    for s in (1.0, -1.0, 2.0, -1.0):  # (both branches, each more than once: the compiled program serves both)
        lin.zero_grad()
        out += [f(lib.ones(1, 3) * s), lin.weight.grad.clone(), lin.bias.grad.clone()]
    return out


def _python_cond(pred, true_fn, false_fn, operands=()):
    return (true_fn if bool(pred) else false_fn)(*operands)


def test_cond_eager_and_compiled_match_torch():
    ref = _cond_program(torch, _python_cond, lambda f: f)
    got = _cond_program(torchish, torchish.cond, torchish.compile)
    assert_same(ref, got)


def test_cond_compiles_one_program_for_both_branches_and_checks_them():
    lin = torchish.nn.Linear(3, 2)
    f = torchish.compile(lambda v: torchish.cond(lin(v).sum() > 0, lambda t: lin(t).relu(), lambda t: lin(-t),
                                                 (v,)).sum())
    for s in (1.0, -1.0, 2.0, -2.0):
        f(torchish.ones(1, 3) * s)
    assert f.stats["traces"] == 1 and f.stats["compiled_calls"] == 3
    g = torchish.compile(lambda v: torchish.cond(v.sum() > 0, lambda t: t * 2, lambda t: t.sum(), (v,)),
                         fullgraph=True)
    g(torchish.ones(3))
    with pytest.raises(RuntimeError, match="same shape and dtype"):
        g(torchish.ones(3))


def test_cond_and_while_loop_arguments():
    for lib in (torch, torchish):
        with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor"):
            lib.cond(lib.tensor([True, False]), lambda a: a, lambda a: a, (lib.ones(2),))
    got = [torchish.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2), (torchish.tensor(0), torchish.ones(2))),
           torchish.while_loop(lambda i: i < 3, lambda i: i + 1, (torchish.tensor(0),)),
           torchish.while_loop(lambda i: i < 3, lambda i: (i + 1,), (0,))]
    ref = [torch.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2), (torch.tensor(0), torch.ones(2))),
           torch.while_loop(lambda i: i < 3, lambda i: i + 1, (torch.tensor(0),)),
           torch.while_loop(lambda i: i < 3, lambda i: (i + 1,), (0,))]
    assert_same(ref, got)


def test_sym_helpers_match_torch():
    def run(lib):
        out = [lib.sym_max(2, 3.5), lib.sym_max(3, 2.5), lib.sym_max(2, 3), lib.sym_min(2, 3.5), lib.sym_min(4, 1),
               lib.sym_int(3.7), lib.sym_int(-3.7), lib.sym_float(3), lib.sym_not(True), lib.sym_ite(False, 1, 2),
               lib.sym_sum([1, 2, 3]), lib.sym_sqrt(4)]
        with pytest.raises(AssertionError):
            lib.sym_max(lib.tensor(1), lib.tensor(2))
        return [(v, type(v).__name__) for v in out]
    assert run(torchish) == run(torch)
