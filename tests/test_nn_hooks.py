"""Module hooks against PyTorch: forward (pre-)hooks with kwargs/prepend/always_call, full backward (pre-)hooks
with the exact grad_input/grad_output tuples and replacement, global hooks, handles."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import arr, assert_same, needs_torch, to_numpy, torch, torchish

pytestmark = needs_torch


def both(fn):
    return fn(torch), fn(torchish)


def g2l(gs):
    """A gradient tuple as nested lists (None kept) for comparison."""
    return tuple(None if g is None else np.round(to_numpy(g), 5).tolist() for g in gs)


def make(T):
    nn = T.nn

    class Lin(nn.Module):
        def __init__(self, i, o, seed=0):
            super().__init__()
            self.weight = nn.Parameter(T.tensor(arr(o, i, seed=seed)))
            self.bias = nn.Parameter(T.tensor(arr(o, seed=seed + 1)))

        def forward(self, x):
            return x @ self.weight.t() + self.bias

    class Two(nn.Module):
        """Several inputs (one non-tensor, one not requiring grad) and two outputs."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(T.tensor(arr(3, 3, seed=3)))

        def forward(self, x, k, y, scale=1.0):
            h = (x @ self.w) * y * k * scale
            return h.tanh(), (h * h).sum(1)

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Lin(3, 3, seed=4)
            self.b = Lin(3, 2, seed=5)

        def forward(self, x):
            return self.b(self.a(x).sigmoid())

    return Lin, Two, Outer


# ----------------------------------------------------------------------------------------------------------------
# forward hooks


def test_forward_hook_order_prepend_kwargs_and_removal():
    def run(T):
        Lin = make(T)[0]
        m = Lin(3, 2)
        log = []
        h1 = m.register_forward_pre_hook(lambda mod, args: log.append(("pre1", len(args))))
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre0",)), prepend=True)

        def pre_kw(mod, args, kwargs):
            log.append(("prekw", sorted(kwargs)))
            return (args[0] * 2,), kwargs
        m.register_forward_pre_hook(pre_kw, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("fwd1", float(out.detach().sum()))))
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("fwdkw", float(args[0].detach().sum()))),
                                with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("fwd0",)), prepend=True)
        x = T.tensor(arr(1, 3, seed=7))
        y = m(x)
        h1.remove()
        y2 = m(x)
        log.append(float(y.detach().sum()))
        log.append(float(y2.detach().sum()))
        return [tuple(np.round(v, 4) if isinstance(v, float) else v for v in e) if isinstance(e, tuple)
                else round(e, 4) for e in log]
    t, x = both(run)
    assert x == t


def test_forward_hooks_replace_args_and_output():
    def run(T):
        Lin = make(T)[0]
        m = Lin(3, 2)
        m.register_forward_pre_hook(lambda mod, args: args[0] + 1)          # a single value becomes (value,)
        m.register_forward_hook(lambda mod, args, out: out * 10)
        x = T.tensor(arr(2, 3))
        return to_numpy(m(x))
    t, x = both(run)
    np.testing.assert_allclose(x, t, rtol=1e-5)


def test_forward_pre_hook_with_kwargs_bad_return():
    for T in (torch, torchish):
        m = make(T)[0](3, 2)
        m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
            m(T.ones(1, 3))


def test_always_call_hooks_run_when_forward_raises():
    def run(T):
        class Boom(T.nn.Module):
            def forward(self, x, **kwargs):
                raise ValueError("boom")
        m = Boom()
        log = []
        m.register_forward_hook(lambda mod, args, out: log.append("normal"))
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("always_kw", sorted(kwargs))),
                                always_call=True, with_kwargs=True)
        with pytest.raises(ValueError, match="boom"):
            m(T.ones(1), flag=True)
        return log
    t, x = both(run)
    assert x == t


def test_global_forward_hooks_run_before_module_hooks():
    def run(T):
        mm = T.nn.modules.module
        Lin = make(T)[0]
        m = Lin(3, 2)
        log = []
        m.register_forward_pre_hook(lambda mod, args: log.append("local_pre"))
        m.register_forward_hook(lambda mod, args, out: log.append("local_fwd"))
        hs = [mm.register_module_forward_pre_hook(lambda mod, args: log.append("global_pre")),
              mm.register_module_forward_hook(lambda mod, args, out: log.append("global_fwd"))]
        try:
            m(T.ones(1, 3))
        finally:
            for h in hs:
                h.remove()
        m(T.ones(1, 3))
        return log
    t, x = both(run)
    assert x == t


def test_handle_context_manager_and_ids():
    m = make(torchish)[0](3, 2)
    log = []
    with m.register_forward_hook(lambda *a: log.append(1)):
        m(torchish.ones(1, 3))
    m(torchish.ones(1, 3))
    assert log == [1]
    h1 = m.register_forward_hook(lambda *a: None)
    h2 = m.register_forward_hook(lambda *a: None)
    assert h1.id != h2.id and len(m._forward_hooks) == 2


# ----------------------------------------------------------------------------------------------------------------
# full backward hooks


def _two_module_backward(T, replace=False, pre_replace=False):
    Two = make(T)[1]
    m = Two()
    log = []

    def pre(mod, grad_output):
        log.append(("pre", g2l(grad_output)))
        if pre_replace:
            return tuple(None if g is None else g * 2 for g in grad_output)
        return None

    def hook(mod, grad_input, grad_output):
        log.append(("bwd", g2l(grad_input), g2l(grad_output)))
        if replace:
            return tuple(None if g is None else g * 3 for g in grad_input)
        return None
    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(hook)
    x = T.tensor(arr(2, 3, seed=1), requires_grad=True)
    y = T.tensor(arr(2, 3, seed=2))              # does not require grad
    a, b = m(x, 0.5, y, scale=2.0)
    (a.sum() + (b * T.tensor([1.0, -2.0])).sum()).backward()
    return log, to_numpy(x.grad), to_numpy(m.w.grad), type(a.grad_fn).__name__


@pytest.mark.parametrize("replace,pre_replace", [(False, False), (True, False), (False, True), (True, True)])
def test_full_backward_hook_grad_tuples_and_replacement(replace, pre_replace):
    t = _two_module_backward(torch, replace, pre_replace)
    x = _two_module_backward(torchish, replace, pre_replace)
    assert x[3] == t[3]
    assert [e[0] for e in x[0]] == [e[0] for e in t[0]]
    for te, xe in zip(t[0], x[0]):
        for tg, xg in zip(te[1:], xe[1:]):
            assert len(tg) == len(xg)
            for a, b in zip(tg, xg):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x[1], t[1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(x[2], t[2], rtol=1e-4, atol=1e-6)


def test_nested_backward_hook_order_and_global_hooks():
    def run(T):
        mm = T.nn.modules.module
        Outer = make(T)[2]
        m = Outer()
        log = []
        for name, mod in m.named_modules():
            mod.register_full_backward_pre_hook(lambda mod, go, name=name: log.append(("pre", name or "root")))
            mod.register_full_backward_hook(
                lambda mod, gi, go, name=name: log.append(("bwd", name or "root", g2l(gi), g2l(go))))
        hs = [mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(("gbwd", type(mod).__name__))),
              mm.register_module_full_backward_pre_hook(lambda mod, go: log.append(("gpre", type(mod).__name__)))]
        try:
            x = T.tensor(arr(2, 3, seed=3), requires_grad=True)
            m(x).pow(2).sum().backward()
        finally:
            for h in hs:
                h.remove()
        return log, to_numpy(x.grad)
    (tl, tg), (xl, xg) = both(run)
    assert [e[:2] for e in xl] == [e[:2] for e in tl]
    for te, xe in zip(tl, xl):
        if te[0] == "bwd":
            for a_tuple, b_tuple in zip(te[2:], xe[2:]):
                for a, b in zip(a_tuple, b_tuple):
                    np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xg, tg, rtol=1e-4, atol=1e-6)


def test_backward_hook_when_no_input_requires_grad():
    def run(T):
        Lin = make(T)[0]
        m = Lin(3, 2)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((g2l(gi), g2l(go))))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(T.tensor(arr(1, 3))).sum().backward()
        return log, any("no inputs require gradients" in str(x.message) for x in w), to_numpy(m.weight.grad)
    (tl, tw, tg), (xl, xw, xg) = both(run)
    assert xl == tl and xw == tw
    np.testing.assert_allclose(xg, tg, rtol=1e-5)


def test_backward_hook_wrong_length_raises():
    for T in (torch, torchish):
        m = make(T)[0](3, 2)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        x = T.ones(1, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input"):
            m(x).sum().backward()
        m2 = make(T)[0](3, 2)
        m2.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of grad_output"):
            m2(x).sum().backward()


def test_mixing_regular_and_full_backward_hooks_raises():
    for T in (torch, torchish):
        m = make(T)[0](3, 2)
        m.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            m.register_backward_hook(lambda *a: None)
        m2 = make(T)[0](3, 2)
        m2.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            m2.register_full_backward_hook(lambda *a: None)


def test_deprecated_backward_hook_sees_the_last_operations_gradients_as_pytorchs():
    """register_backward_hook's hooks go on the grad_fn of the module's output (PyTorch's legacy hooks): grad_input
    holds the gradients of that node's inputs (a Linear's addmm: bias, input, weight.T), and a returned tuple
    replaces them. torchish ran them as full backward hooks (grad_input: the module inputs' gradients only)."""
    def run(T):
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lin = T.nn.Linear(3, 2)
            with T.no_grad():
                lin.weight.copy_(T.arange(6.0).reshape(2, 3) / 10)
                lin.bias.fill_(0.5)
            rec = []
            h = lin.register_backward_hook(lambda m, gi, go: rec.append((gi, go)))
            x = T.ones(4, 3, requires_grad=True)
            lin(x).pow(2).sum().backward()
            out.append(rec[-1])
            h.remove()
            nobias = T.nn.Linear(3, 2, bias=False)
            with T.no_grad():
                nobias.weight.copy_(T.arange(6.0).reshape(2, 3) / 10)
            nobias.register_backward_hook(lambda m, gi, go: (gi[0] * 2, gi[1]))
            nobias(x).sum().backward()
            out.append(x.grad)
            seq = T.nn.Sequential(T.nn.Linear(3, 3), T.nn.ReLU())
            with T.no_grad():
                seq[0].weight.copy_(T.arange(9.0).reshape(3, 3) / 10 - 0.3)
                seq[0].bias.zero_()
            rec2 = []
            seq.register_backward_hook(lambda m, gi, go: rec2.append((gi, go)))
            (seq(x) * T.arange(3.0)).sum().backward()
            out.append(rec2[-1])
            conv = T.nn.Conv1d(1, 1, 2)
            with T.no_grad():
                conv.weight.fill_(1.0)
                conv.bias.fill_(0.0)
            conv.register_backward_hook(lambda m, gi, go: tuple(None if g is None else g * 0 + 7 for g in gi))
            z = T.ones(1, 1, 4, requires_grad=True)
            conv(z).sum().backward()
            out += [z.grad, conv.weight.grad, conv.bias.grad]
        return out
    assert_same(run(torch), run(torchish))


def test_backward_hook_removal_and_autograd_grad():
    def run(T):
        Lin = make(T)[0]
        m = Lin(3, 2)
        log = []
        h = m.register_full_backward_hook(lambda mod, gi, go: log.append("hook"))
        x = T.tensor(arr(1, 3), requires_grad=True)
        (g,) = T.autograd.grad(m(x).sum(), x)
        h.remove()
        m(x).sum().backward()
        return log, to_numpy(g), to_numpy(x.grad)
    (tl, tg, tx), (xl, xg, xx) = both(run)
    assert xl == tl
    np.testing.assert_allclose(xg, tg, rtol=1e-5)
    np.testing.assert_allclose(xx, tx, rtol=1e-5)


def test_backward_hooks_module_returning_non_tensor_warns():
    for T in (torch, torchish):
        class Listy(T.nn.Module):
            def forward(self, x):
                return [x * 2]
        m = Listy()
        m.register_full_backward_hook(lambda *a: None)
        with pytest.warns(UserWarning, match="For backward hooks to be called"):
            m(T.ones(1, requires_grad=True))
