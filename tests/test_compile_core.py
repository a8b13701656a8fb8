"""torchish.compile on plain tensors: compiled results equal eager ones, state is discovered and written back,
guards retrace when they should and only then, graph breaks raise a clear error (or run eagerly on request)."""
import gc
import importlib
import warnings

import jax
import numpy as np
import pytest

import torchish as torch
from oracle import arr


def _params():
    w = torch.tensor(arr(4, 3, seed=1) * 0.5, requires_grad=True)
    b = torch.tensor(arr(3, seed=2) * 0.1, requires_grad=True)
    return w, b


def _make_step(w, b, lr=0.1):
    def step(x, y):
        w.grad = None
        b.grad = None
        out = torch.tanh(x @ w + b)
        loss = ((out - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w.sub_(lr * w.grad)
            b.sub_(lr * b.grad)
        return loss
    return step


def _run(step, x, y, n):
    return [float(step(x, y)) for _ in range(n)]


def test_training_step_matches_eager():
    x, y = torch.tensor(arr(8, 4, seed=3)), torch.tensor(arr(8, 3, seed=4))
    w1, b1 = _params()
    eager = _run(_make_step(w1, b1), x, y, 5)
    w2, b2 = _params()
    c = torch.compile(_make_step(w2, b2))
    compiled = _run(c, x, y, 5)
    np.testing.assert_allclose(compiled, eager, rtol=1e-6)
    np.testing.assert_allclose(w2.detach().numpy(), w1.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert w2.grad is not None and np.allclose(w2.grad.numpy(), w1.grad.numpy(), atol=1e-7)
    assert c.stats["traces"] == 1 and c.stats["compiled_calls"] == 4 and c.stats["retraces"] == 0


def test_grad_accumulates_inside_and_across_calls():
    w = torch.tensor(arr(3, seed=5), requires_grad=True)

    def step(x):
        (w * x).sum().backward()
        return w.grad * 1.0
    c = torch.compile(step)
    x = torch.tensor(arr(3, seed=6))
    outs = [c(x).numpy() for _ in range(3)]
    np.testing.assert_allclose(outs[2], 3 * x.numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), 3 * x.numpy(), rtol=1e-6)


def test_changes_outside_are_seen():
    w = torch.tensor(arr(3, seed=7), requires_grad=True)
    c = torch.compile(lambda x: (w * x).sum())
    x = torch.tensor(arr(3, seed=8))
    c(x), c(x)
    with torch.no_grad():
        w.mul_(0.5)
    assert np.isclose(float(c(x)), float((w * x).sum()), rtol=1e-6)
    assert c.stats["retraces"] == 0


def test_state_changed_outside_retraces_only_when_the_program_no_longer_fits():
    """The guards compare state arrays by identity first: a value replaced outside with the same shape and dtype is
    used without a retrace; a new shape or dtype, a requires_grad flip, a removed .grad or a module's train/eval
    switch retraces — and every call equals eager."""
    def make():
        lin = torch.nn.Linear(3, 2)
        with torch.no_grad():
            lin.weight.copy_(torch.tensor(arr(2, 3, seed=21)))
            lin.bias.copy_(torch.tensor(arr(2, seed=22)))
        drop = torch.nn.Dropout(0.5)
        extra = torch.tensor(arr(2, seed=23))

        def step(x):
            out = (drop(lin(x)) * extra).sum()
            out.backward()
            return out
        return lin, drop, extra, step
    x = torch.tensor(arr(4, 3, seed=24))
    changes = [
        ("same shape", lambda lin, drop, extra: extra.mul_(2.0), 0),
        ("new dtype", lambda lin, drop, extra: setattr(extra, "data", extra.data.double()), 1),
        ("new shape", lambda lin, drop, extra: setattr(extra, "data", torch.tensor([[1.5], [-2.0], [0.5], [3.0]],
                                                                                   dtype=torch.float64)), 1),
        # no .grad at the first call (one new program), one again at the next: the program traced before fits
        ("grad removed", lambda lin, drop, extra: setattr(lin.weight, "grad", None), 1),
        ("requires_grad", lambda lin, drop, extra: lin.bias.requires_grad_(False), 1),
        ("eval", lambda lin, drop, extra: drop.eval(), 1),
    ]
    results = {}
    for compiled in (False, True):
        torch.manual_seed(5)
        lin, drop, extra, step = make()
        fn = torch.compile(step) if compiled else step
        outs = [float(fn(x)) for _ in range(3)]
        for name, change, _ in changes:
            with torch.no_grad():
                change(lin, drop, extra)
            before = fn.stats["retraces"] if compiled else 0
            outs += [float(fn(x)) for _ in range(2)]
            if compiled:
                expected = next(n for c, _, n in changes if c == name)
                assert fn.stats["retraces"] - before == expected, (name, fn.stats)
        outs.append(lin.weight.grad.numpy().copy())
        results[compiled] = outs
    for e, c in zip(results[False], results[True]):
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-6)


def test_shape_change_retraces_new_entry():
    w = torch.tensor(arr(3, seed=9))
    c = torch.compile(lambda x: (x * w).sum(-1))
    for n in (2, 2, 5, 5, 2):
        out = c(torch.tensor(arr(n, 3, seed=n)))
        assert out.shape == (n,)
    assert len(c.entries) == 2 and c.stats["compiled_calls"] == 3


def test_hooks_run_inside_compiled_backward():
    w = torch.tensor(arr(4, seed=10), requires_grad=True)

    def step(x):
        w.grad = None
        h = w * x
        h.register_hook(lambda g: g * 10)
        h.sum().backward()
        return w.grad
    c = torch.compile(step)
    x = torch.tensor(arr(4, seed=11))
    for _ in range(3):
        g = c(x)
    np.testing.assert_allclose(g.numpy(), 10 * x.numpy(), rtol=1e-6)


def test_custom_function_and_create_graph_inside():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    w = torch.tensor(arr(3, seed=12), requires_grad=True)

    def step():
        w.grad = None
        (g,) = torch.autograd.grad(Cube.apply(w).sum(), w, create_graph=True)
        g.sum().backward()
        return w.grad
    c = torch.compile(step)
    for _ in range(3):
        out = c()
    np.testing.assert_allclose(out.numpy(), 6 * w.detach().numpy(), rtol=1e-6)


def test_rng_state_advances_between_compiled_calls():
    c = torch.compile(lambda x: x + torch.rand(4))
    x = torch.zeros(4)
    outs = [c(x).numpy() for _ in range(4)]
    assert not np.allclose(outs[2], outs[3])
    torch.manual_seed(3)
    a = [c(x).numpy() for _ in range(2)]
    torch.manual_seed(3)
    b = [c(x).numpy() for _ in range(2)]
    np.testing.assert_array_equal(a[0], b[0])


def test_compiled_dropout_draws_the_eager_sequence():
    """The global generator's key is state of the compiled program: masks advance every call, exactly as eager."""
    def run(compiled):
        torch.manual_seed(5)
        drop = torch.nn.Dropout(0.5)
        f = torch.compile(drop) if compiled else drop
        return [f(torch.ones(8)).numpy() for _ in range(5)] + [torch.rand(3).numpy()]
    eager, comp = run(False), run(True)
    for a, b in zip(eager, comp):
        np.testing.assert_array_equal(a, b)
    assert len({tuple(m) for m in comp[:5]}) > 1


def test_inplace_buffer_state_written_back():
    running = torch.zeros(3)

    def step(x):
        with torch.no_grad():
            running.mul_(0.9).add_(0.1 * x.mean(0))
        return x.sum()
    c = torch.compile(step)
    x = torch.tensor(arr(5, 3, seed=13))
    ref = np.zeros(3, np.float32)
    for _ in range(4):
        c(x)
        ref = 0.9 * ref + 0.1 * x.numpy().mean(0)
    np.testing.assert_allclose(running.numpy(), ref, rtol=1e-5)
    assert running._version >= 4


def _value_dependent(x):
    if x.sum() > 0:  # value-dependent Python
        return x * 2
    return -x


def test_graph_break_error_names_line_and_fix():
    c = torch.compile(_value_dependent, fullgraph=True)
    x = torch.tensor(arr(3, seed=14))
    c(x)  # first call runs eagerly
    with pytest.raises(RuntimeError, match="(?s)test_compile_core.py.*if x.sum\\(\\) > 0.*tensor ops"):
        c(x)


def test_graph_break_by_default_runs_eagerly_with_a_warning():
    """PyTorch's default (fullgraph=False) allows graph breaks: the function runs, with a warning naming the line."""
    c = torch.compile(_value_dependent)
    x = torch.tensor(arr(3, seed=14))
    expected = _value_dependent(x).numpy()
    np.testing.assert_allclose(c(x).numpy(), expected)
    with pytest.warns(UserWarning, match="(?s)test_compile_core.py.*if x.sum\\(\\) > 0.*runs this function eagerly"):
        out = c(x)
    np.testing.assert_allclose(out.numpy(), expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per signature
        np.testing.assert_allclose(c(x).numpy(), expected)
    assert c.stats["eager_calls"] == 3 and c.stats["compiled_calls"] == 0


def test_print_of_a_tensor_is_a_graph_break_that_prints_every_call(capsys):
    """As torch.compile's graph break on print: every call prints the call's real values (a trace would print a
    tracer once and later calls nothing); with fullgraph=True the trace is an error naming the line."""
    def show(x):
        y = x * 2
        print("y is", y, f"{y.sum()}")
        return y + 1
    c = torch.compile(show, fullgraph=False)
    for i in range(3):
        np.testing.assert_allclose(c(torch.full((2,), float(i))).numpy(), [2 * i + 1] * 2)
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"y is tensor([{2 * i}., {2 * i}.]) {4.0 * i}" for i in range(3)]
    assert c.stats["compiled_calls"] == 0
    strict = torch.compile(show, fullgraph=True)
    strict(torch.ones(2))  # (the first call runs eagerly)
    with pytest.raises(RuntimeError, match="(?s)test_compile_core.py.*print.*printing a tensor"):
        strict(torch.ones(2))


def test_fullgraph_false_runs_eagerly():
    def bad(x):
        return x * 2 if float(x.sum()) > 0 else x
    c = torch.compile(bad, fullgraph=False)
    x = torch.tensor(np.ones(3, np.float32))
    for _ in range(3):
        np.testing.assert_allclose(c(x).numpy(), 2 * np.ones(3))
    assert c.stats["eager_calls"] == 3


def test_compiled_forward_backward_outside():
    w = torch.tensor(arr(4, 3, seed=15), requires_grad=True)

    def fwd(x):
        return torch.tanh(x @ w).clamp(min=0.0)
    c = torch.compile(fwd)
    x = torch.tensor(arr(6, 4, seed=16), requires_grad=True)
    for _ in range(3):
        w.grad, x.grad = None, None
        (c(x) ** 2).sum().backward()
    gw, gx = w.grad.numpy(), x.grad.numpy()
    w.grad, x.grad = None, None
    (fwd(x) ** 2).sum().backward()
    np.testing.assert_allclose(gw, w.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-6)


def test_long_loop_no_retrace_and_hlo_access():
    w = torch.tensor(arr(3, seed=17), requires_grad=True)

    def step(x):
        w.grad = None
        (w * x).sum().backward()
        with torch.no_grad():
            w.sub_(0.01 * w.grad)
        return w.sum()
    c = torch.compile(step)
    x = torch.tensor(arr(3, seed=18))
    for _ in range(3):
        c(x)
    gc.collect()
    live = len(jax.live_arrays())
    for _ in range(50):
        c(x)
    gc.collect()
    assert len(jax.live_arrays()) <= live  # no buffer kept per call: memory does not grow with the loop
    assert c.stats["traces"] == 1 and c.stats["retraces"] == 0
    assert "HloModule" in c.hlo_text(x) or "module" in c.hlo_text(x)
    assert c.memory_analysis(x) is not None


def test_no_retrace_warning_in_steady_state():
    w = torch.tensor(arr(3, seed=19))
    c = torch.compile(lambda x: x * w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(20):
            c(torch.tensor(arr(3, seed=20)))


@pytest.mark.parametrize("lazy_used", [False, True])
def test_written_state_is_donated_and_aliases_stay_valid(monkeypatch, lazy_used):
    cf = importlib.import_module("torchish.compile.function")
    if lazy_used:  # once lazy mode has recorded anything, compiled calls take the path that resolves pending values
        monkeypatch.setattr(torch.config, "lazy", True)
        float((torch.ones(2) * 2).sum())
        monkeypatch.setattr(torch.config, "lazy", False)
    calls = []
    real = cf._donated_values

    def spy(vals, donated, *own_refs):
        out = real(vals, donated, *own_refs)
        calls.extend(v is vals[i] for v, i in zip(out, donated))  # True: the buffer itself was donated
        return out
    monkeypatch.setattr(cf, "_donated_values", spy)
    x, y = torch.tensor(arr(8, 4, seed=3)), torch.tensor(arr(8, 3, seed=4))
    w1, b1 = _params()
    w2, b2 = _params()
    eager, c = _make_step(w1, b1), torch.compile(_make_step(w2, b2))
    for _ in range(3):
        eager(x, y)
        c(x, y)
    assert calls and all(calls)  # no alias: parameters updated in place, no copies
    mem = c.memory_analysis(x, y)
    assert mem.alias_size_in_bytes >= (4 * 3 + 3) * 4  # XLA aliases the donated w and b with their new values
    # an alias of a parameter (detach shares the value, as PyTorch's shares storage) and a clone stay valid
    alias, snapshot = w2.detach(), w2.detach().clone()
    alias1, snapshot1 = w1.detach(), w1.detach().clone()
    calls.clear()
    eager(x, y)
    c(x, y)
    assert False in calls  # the aliased buffer was copied, not donated
    np.testing.assert_allclose(alias.numpy(), alias1.numpy(), rtol=1e-6)
    np.testing.assert_allclose(snapshot.numpy(), snapshot1.numpy(), rtol=1e-6)
    np.testing.assert_allclose(w2.detach().numpy(), w1.detach().numpy(), rtol=1e-6)


def test_module_compile_in_place_matches_eager():
    """``Module.compile()`` (PyTorch 2.2+): the module object stays the same, its calls go through torchish.compile,
    parameters and gradients are unchanged."""
    w, b = arr(3, 4, seed=30), arr(3, seed=31)

    def make():
        m = torch.nn.Linear(4, 3)
        with torch.no_grad():
            m.weight.copy_(torch.tensor(w))
            m.bias.copy_(torch.tensor(b))
        return m
    x = torch.tensor(arr(5, 4, seed=32))
    eager, comp = make(), make()
    assert comp.compile() is None
    for _ in range(3):
        e, c = eager(x), comp(x)
        np.testing.assert_allclose(c.detach().numpy(), e.detach().numpy(), rtol=1e-6)
        e.sum().backward()
        c.sum().backward()
    np.testing.assert_allclose(comp.weight.grad.numpy(), eager.weight.grad.numpy(), rtol=1e-6)
    assert list(comp.state_dict()) == ["weight", "bias"]
    assert comp._compiled_call_impl.stats["compiled_calls"] == 2
