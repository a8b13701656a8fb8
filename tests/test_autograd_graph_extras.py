"""torch.autograd.graph's register_multi_grad_hook, allow_mutation_on_saved_tensors and increment_version, and
torch.autograd's set_multithreading_enabled, against PyTorch.

Each case runs ``case(lib)`` with torch and with torchish and compares what it returns: the gradients a hook
received (None where torch passes None), the calls it got, the gradients left in ``.grad``, and the errors
(``raised``: type name and message). The graph cases run on the three backward paths of torchish (node by node,
``"auto"`` and ``"always"`` lowered): hooks and packed saved tensors keep a backward node by node, which these
check gives the same results whatever the setting."""
import contextlib
import threading

import pytest

from oracle import assert_same, compile_three_ways, needs_torch, raised, torch, torchish

pytestmark = needs_torch

PATHS = ("never", "auto", "always")


@pytest.fixture(params=PATHS)
def path(request, monkeypatch):
    monkeypatch.setattr(torchish.config, "lowered_backward", request.param)
    return request.param


def both(case):
    """``case(lib)`` with torch and torchish: the results must match."""
    assert_same(case(torch), case(torchish))


def _msg(err):
    """``raised``'s (type, message) with the library's name in the anomaly hint made the same."""
    if err is None:
        return None
    return err[0], err[1].replace("torchish.autograd", "torch.autograd")


def _leaves(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, -4.0], requires_grad=True)
    return a, b


# ---- register_multi_grad_hook, mode "all" -------------------------------------------------------------------

def case_all_backward_inputs_and_grad(lib):
    """The docstring's example and more: which gradients are None for .backward(), backward(inputs=) and
    autograd.grad(inputs=[non-leaf]); twice with retain_graph; nothing after remove()."""
    reg = lib.autograd.graph.register_multi_grad_hook
    a, b = _leaves(lib)
    c = a * b
    d = a * b
    calls = []
    handle = reg((a, b, c, d), lambda grads: calls.append((type(grads).__name__, list(grads))))
    loss = (c * c).sum()
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    got = lib.autograd.grad(loss, (c,), retain_graph=True)
    both_graphs = (c.sum() + 2 * d.sum())
    both_graphs.backward(retain_graph=True)
    handle.remove()
    loss.backward(retain_graph=True)
    return calls, got, a.grad, b.grad


def test_all_backward_inputs_and_grad(path):
    both(case_all_backward_inputs_and_grad)


def case_partially_reached(lib):
    """A tensor outside the backward's graph is not waited for (None); a hook none of whose tensors is in the
    graph is never called; the outputs of one node (split) count once each, the unused one None."""
    reg = lib.autograd.graph.register_multi_grad_hook
    a, b = _leaves(lib)
    c = a * b
    e = b.exp()
    calls = []
    reg((a, e, c), lambda grads: calls.append(("aec", list(grads))))
    reg((e,), lambda grads: calls.append(("e", list(grads))))
    x = lib.tensor([0.5, 1.5, -1.0, 2.0], requires_grad=True)
    p, q = x.split(2)
    reg((p, q), lambda grads: calls.append(("pq", list(grads))))
    (c.sum() * 3).backward()
    (p * p).sum().backward()
    (q.sin()).sum().backward(inputs=(x,))
    return calls, a.grad, b.grad, x.grad


def test_partially_reached(path):
    both(case_partially_reached)


def case_module_parameters(lib):
    """A hook over a small network's parameters, called once per backward after all their gradients, with
    the same gradients .grad receives; a second hook in mode "any" gets the first computed (the last layer's)."""
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (0.5 + 0.1 * i))
    params = list(net.parameters())
    calls, first = [], []
    lib.autograd.graph.register_multi_grad_hook(params, lambda grads: calls.append([g.clone() for g in grads]))
    lib.autograd.graph.register_multi_grad_hook(params, lambda g: first.append(g.clone()), mode="any")
    for step in range(3):
        x = lib.linspace(-1.0, 1.0, 6).reshape(2, 3) * (step + 1)
        net(x).pow(2).sum().backward()
    return calls, first, [p.grad for p in params]


def test_module_parameters(path):
    both(case_module_parameters)


def case_function_returning_none(lib):
    """A custom Function whose backward gives None for an input: that leaf's hooks get None (PyTorch calls them),
    so the multi hook still fires, with None there."""
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * 2 + y

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    a, b = _leaves(lib)
    seen, calls = [], []
    b.register_hook(lambda g: seen.append(g))
    lib.autograd.graph.register_multi_grad_hook((a, b), lambda grads: calls.append(list(grads)))
    F.apply(a, b).sum().backward()
    return seen, calls, a.grad, b.grad


def test_function_returning_none():
    both(case_function_returning_none)


def case_sibling_leaf_hook_order(lib):
    """Leaves fed by one node run their hooks in the node's input order, before any other node (PyTorch runs
    AccumulateGrad first)."""
    ls = [lib.tensor([float(i), 1.0], requires_grad=True) for i in range(3)]
    order = []
    for i, t in enumerate(ls):
        t.register_hook(lambda g, i=i: order.append(i))
    m = ls[2] * 3
    m.register_hook(lambda g: order.append("m"))
    lib.stack([ls[0], ls[1], m]).sum().backward()
    firsts = []
    lib.autograd.graph.register_multi_grad_hook(ls[:2], lambda g: firsts.append(g), mode="any")
    (ls[0] * ls[1]).sum().backward()
    (ls[1] * ls[0]).sum().backward()
    return order, firsts


def test_sibling_leaf_hook_order():
    both(case_sibling_leaf_hook_order)


def case_checkpointed(lib):
    """Through activation checkpointing: the reentrant one recomputes and differentiates the block in a backward of
    its own (w's gradient arrives there, inp's in the outer one: two calls), the non-reentrant one in the same."""
    import warnings
    w = lib.tensor([0.3, -0.7], requires_grad=True)
    inp = lib.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    lib.autograd.graph.register_multi_grad_hook((w, inp), lambda grads: calls.append(list(grads)))
    lib.autograd.graph.register_multi_grad_hook((w, inp), lambda g: calls.append(("any", g)), mode="any")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's warning that the reentrant checkpoint's inputs need no grad)
        for reentrant in (True, False):
            out = lib.utils.checkpoint.checkpoint(lambda t: (t * w).tanh(), inp, use_reentrant=reentrant)
            out.sum().backward()
    return calls


def test_checkpointed():
    both(case_checkpointed)


# ---- mode "any" -------------------------------------------------------------------------------------------

def case_any(lib):
    """The first gradient computed among the tensors, once per backward (retain_graph twice), with tensors
    that do not require grad skipped; nothing once removed."""
    reg = lib.autograd.graph.register_multi_grad_hook
    a, b = _leaves(lib)
    c = a * b
    d = a * b
    firsts = []
    h = reg((a, lib.ones(2), c, d), lambda g: firsts.append(g), mode="any")
    loss = c.sum() + 2 * d.sum()
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    c.sum().backward(retain_graph=True)
    lib.autograd.grad(d.sum(), (a,), retain_graph=True)
    h.remove()
    loss.backward()
    return firsts, a.grad


def test_any(path):
    both(case_any)


# ---- errors ---------------------------------------------------------------------------------------------------

def case_errors(lib):
    reg = lib.autograd.graph.register_multi_grad_hook
    a, b = _leaves(lib)
    c = a * b
    out = [raised(lambda: reg((a,), lambda g: None, mode="first")),
           raised(lambda: reg((a, lib.ones(2)), lambda g: None)),
           raised(lambda: reg((a, lib.ones(2)), lambda g: None, mode="any").remove())]
    with lib.no_grad():
        v = a[:1]  # requires grad, without a grad_fn or an edge
    out += [v.requires_grad, raised(lambda: reg((v,), lambda g: None))]
    h = reg((a, c), lambda grads: None)
    out.append(raised(lambda: lib.autograd.grad(c.sum(), (a,), retain_graph=True)))  # a leaf captured by grad()
    h.remove()
    out.append(raised(lambda: lib.autograd.grad(c.sum(), (a,), retain_graph=True)))
    return out


def test_errors():
    both(case_errors)


# ---- inside torchish.compile --------------------------------------------------------------------------------

def test_compiled_step_with_multi_hooks():
    """A training step compiled with the hooks registered outside: each compiled call runs the hooks' effects
    (written into a tensor made before the call), as eager PyTorch does."""
    def case(lib, jit):
        w1 = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        w2 = lib.nn.Parameter(lib.tensor([3.0, -1.0]))
        total = lib.zeros(2)
        first = lib.zeros(2)
        lib.autograd.graph.register_multi_grad_hook((w1, w2), lambda gs: total.copy_(gs[0] + 2 * gs[1]))
        lib.autograd.graph.register_multi_grad_hook((w1, w2), lambda g: first.copy_(g), mode="any")

        @jit
        def step(x):
            loss = (w1 * x).sum() + (w2 * x * x).sum()
            loss.backward()
            return loss

        out = []
        for i in range(4):
            loss = step(lib.tensor([1.0, float(i) - 1.5]))
            out.append((loss.detach(), total.clone(), first.clone(), w1.grad.clone(), w2.grad.clone()))
            w1.grad = w2.grad = None
        return out
    stats = compile_three_ways(case)
    assert stats[0]["compiled_calls"] >= 2, stats


# ---- allow_mutation_on_saved_tensors ------------------------------------------------------------------------

def case_mutation_allowed(lib):
    """Saved inputs and outputs written in place inside the context: backward uses their values when saved;
    also through a chain of in-place ops, a view's base, a leaf written under no_grad, retain_graph twice with a
    write in between, a double backward and a module whose weight is rescaled after the forward."""
    amst = lib.autograd.graph.allow_mutation_on_saved_tensors
    res = []
    with amst() as ctx:
        a = lib.tensor([0.5, 1.0, -2.0], requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        out.backward()
        res.append(a.grad.clone())
        b = a.clone()
        b.sin_()
        b.mul_(2)
        c = b * b
        b.add_(1)
        e = c.exp()
        e.mul_(3)  # the exp's saved output
        e.sum().backward()
        res.append(a.grad.clone())
        b = a.clone()
        v = b[:2]
        out = (v * v.exp()).sum()
        b.mul_(3)  # the base of the saved view
        a.grad = None
        out.backward()
        res.append(a.grad)
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (w * w).sum()
        with lib.no_grad():
            w.add_(5)
        y.backward()
        res.append(w.grad)
        a.grad = None
        b = a.clone()
        y = (b * b.exp()).sum()
        b.mul_(0)
        y.backward(retain_graph=True)
        b.add_(3)
        y.backward()
        res.append(a.grad)
        b = a.clone()
        y = (b ** 3).sum()
        b.zero_()
        g, = lib.autograd.grad(y, a, create_graph=True)
        a.grad = None
        g.sum().backward()
        res += [g.detach(), a.grad]
        lin = lib.nn.Linear(2, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
            lin.bias.fill_(0.5)
        x = lib.tensor([[1.0, -1.0]], requires_grad=True)
        out = lib.tanh(lin(x)).sum()
        with lib.no_grad():
            lin.weight.mul_(10)
        out.backward()
        res += [x.grad, lin.weight.grad, lin.bias.grad]
        res.append(type(ctx).__name__)
    return res


def test_mutation_allowed(path):
    both(case_mutation_allowed)


def test_compiled_step_with_mutation_allowed():
    """Forward, in-place write of a saved tensor and backward inside the context, in a compiled step."""
    def case(lib, jit):
        w = lib.nn.Parameter(lib.tensor([0.5, -1.0]))

        @jit
        def step(x):
            with lib.autograd.graph.allow_mutation_on_saved_tensors():
                b = x * w
                y = (b * b.exp()).sum()
                b.mul_(2)
                y.backward()
            return y.detach()
        return [(step(lib.tensor([1.0, float(i)])), w.grad.clone()) for i in range(3)]
    stats = compile_three_ways(case)
    assert stats[0]["compiled_calls"] == 2, stats


def case_mutation_errors(lib):
    """Without the context the usual in-place error; a graph recorded inside backwarded outside, or in another
    context, raises AssertionError; contexts cannot nest (and the failed inner one closes the outer, as in
    PyTorch); disable_saved_tensors_hooks refuses it."""
    graph = lib.autograd.graph
    out = []

    def fresh():
        return lib.tensor([1.0, 2.0], requires_grad=True).clone()
    b = fresh()
    y = (b * b).sum()
    b.sin_()
    out.append(_msg(raised(y.backward)))
    with graph.allow_mutation_on_saved_tensors():
        b = fresh()
        y = (b * b).sum()
        b.sin_()
    out.append(raised(y.backward))
    with graph.allow_mutation_on_saved_tensors():
        out.append(raised(y.backward))
    with graph.allow_mutation_on_saved_tensors():
        b = fresh()
        y = (b * b).sum()

        def nested():
            with graph.allow_mutation_on_saved_tensors():
                pass
        out.append(raised(nested))
        out.append(raised(y.backward))

    def disabled():
        with graph.disable_saved_tensors_hooks("no saved tensor hooks here"):
            with graph.allow_mutation_on_saved_tensors():
                pass

    def disabling():
        with graph.allow_mutation_on_saved_tensors():
            with graph.disable_saved_tensors_hooks("no saved tensor hooks here"):
                pass
    out += [raised(disabled), raised(disabling)]
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    y = (b * b).sum()
    y.backward()  # the context is closed: no hooks left behind
    out.append(a.grad)
    return out


def test_mutation_errors(path):
    both(case_mutation_errors)


# ---- increment_version --------------------------------------------------------------------------------------

def case_increment_version(lib):
    inc = lib.autograd.graph.increment_version
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    y = (b * b).sum()
    out = [b._version]
    inc(b)
    out += [b._version, _msg(raised(y.backward))]
    y = (a * a).sum()
    inc([a, a])
    out += [a._version, _msg(raised(y.backward))]
    out += [raised(lambda: inc(5)), raised(lambda: inc([a, 5])), a._version]
    inc(t for t in (a,))
    out.append(a._version)
    with lib.inference_mode():
        i = lib.ones(2)
    out.append(raised(lambda: inc(i)))  # no version counter: nothing to bump, no error
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        b = a * 2
        y = (b * b).sum()
        inc(b)
        y.backward()  # the saved value was kept: no error
    out.append(a.grad)
    return out


def test_increment_version():
    both(case_increment_version)


# ---- set_multithreading_enabled -----------------------------------------------------------------------------

def case_multithreading(lib):
    ag = lib.autograd
    out = [ag.is_multithreading_enabled()]
    ag.set_multithreading_enabled(False)
    out.append(ag.is_multithreading_enabled())
    with ag.set_multithreading_enabled(True):
        out.append(ag.is_multithreading_enabled())
    out.append(ag.is_multithreading_enabled())
    seen = []
    t = threading.Thread(target=lambda: seen.append(ag.is_multithreading_enabled()))
    t.start()
    t.join()
    out.append(seen)

    @ag.set_multithreading_enabled(False)
    def f():
        return ag.is_multithreading_enabled()
    out += [f(), ag.is_multithreading_enabled()]
    ag.set_multithreading_enabled(True)
    a, b = _leaves(lib)
    with ag.set_multithreading_enabled(False):
        (a * b).sum().backward()
    out += [a.grad, ag.is_multithreading_enabled(), raised(lambda: ag.set_multithreading_enabled(1))]
    return out


def test_multithreading():
    both(case_multithreading)


# ---- the stream and memory-budget switches ------------------------------------------------------------------

def case_graph_flags(lib):
    g = lib.autograd.graph
    out = [g.set_warn_on_accumulate_grad_stream_mismatch(False), g.set_override_stale_capture_stream(True),
           raised(lambda: g.set_warn_on_accumulate_grad_stream_mismatch(1)),
           raised(lambda: g.set_override_stale_capture_stream("yes")),
           g.set_warn_on_accumulate_grad_stream_mismatch(True), g.set_override_stale_capture_stream(False)]
    for budget in (0.5, True, 2, "all"):
        out.append(raised(lambda: g.region_activation_memory_budget(budget)))
    return out


def test_graph_flags():
    both(case_graph_flags)


def test_memory_budget_inside_compile():
    """Inside torchish.compile the budget is accepted (XLA plans rematerialization itself): the step gives
    PyTorch's eager numbers, where PyTorch's budget only changes what torch.compile recomputes."""
    def case(lib, budget):
        w = lib.nn.Parameter(lib.tensor([0.5, -1.0]))

        def step(x):
            with budget():
                y = (w * x).tanh()
            y.sum().backward()
            return y.detach()
        if lib is torchish:
            step = torchish.compile(step)
        out = [(step(lib.tensor([1.0, float(i)])), w.grad.clone()) for i in range(3)]
        return out
    ref = case(torch, contextlib.nullcontext)
    assert_same(ref, case(torchish, lambda: torchish.autograd.graph.region_activation_memory_budget(0.25)))
