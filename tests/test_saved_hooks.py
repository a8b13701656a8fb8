"""Saved-tensor hooks (``autograd.graph.saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``),
``grad_fn._saved_*`` attributes and ``GradientEdge``, against PyTorch."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

from oracle import arr, assert_same, needs_torch, same_error, to_numpy, torch, torchish

pytestmark = needs_torch


def _log_hooks(lib, log, pack_fn=None, unpack_fn=None):
    """Hooks recording (event, shape, requires_grad, grad_fn name, values) of what they see."""
    def pack(t):
        fn = t.grad_fn.name() if t.grad_fn is not None else None
        log.append(("pack", tuple(t.shape), t.requires_grad, fn, to_numpy(t).round(5).tolist()))
        return pack_fn(t) if pack_fn else t

    def unpack(p):
        r = unpack_fn(p) if unpack_fn else p
        log.append(("unpack", tuple(r.shape)))
        return r
    return lib.autograd.graph.saved_tensors_hooks(pack, unpack)


def _cube_fn(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, None, y)
            return x * x * y

        @staticmethod
        def backward(ctx, g):
            x, _, y = ctx.saved_tensors
            x, _, y = ctx.saved_tensors  # each read unpacks again
            return 2 * g * x * y, g * x * x
    return Cube


# (name, fn(lib, a, b, m), which of a, b require grad)
CASES = [
    ("mul", lambda L, a, b, m: a * b, (True, True)),
    ("mul_self_only", lambda L, a, b, m: a * b, (True, False)),
    ("mul_scalar", lambda L, a, b, m: a * 2.5, (True, False)),
    ("div_other_only", lambda L, a, b, m: a / b, (False, True)),
    ("exp", lambda L, a, b, m: a.exp(), (True, False)),
    ("tanh_sigmoid", lambda L, a, b, m: a.tanh() * b.sigmoid(), (True, True)),
    ("matmul", lambda L, a, b, m: a @ m, (True, False)),
    ("matmul_transposed", lambda L, a, b, m: a @ b.t(), (True, True)),
    ("pow_tensor", lambda L, a, b, m: a.abs() ** b, (True, True)),
    ("softmax_sum", lambda L, a, b, m: (a.softmax(1) * b).sum(0), (True, True)),
    ("custom_function", lambda L, a, b, m: _cube_fn(L).apply(a, b), (True, True)),
    ("add_view_sum", lambda L, a, b, m: (a + b).view(6).sum(), (True, True)),
]


def _inputs(lib, req):
    a = lib.tensor(arr(2, 3, seed=1) + 1.5, requires_grad=req[0])
    b = lib.tensor(arr(2, 3, seed=2), requires_grad=req[1])
    m = lib.tensor(arr(3, 4, seed=3))
    return a, b, m


def _run_logged(lib, fn, req, pack_fn=None, unpack_fn=None, retain=False):
    log = []
    a, b, m = _inputs(lib, req)
    with _log_hooks(lib, log, pack_fn, unpack_fn):
        y = fn(lib, a, b, m)
    log.append("forward done")
    y.sum().backward(retain_graph=retain)
    if retain:
        log.append("first backward done")
        y.sum().backward()
    grads = [t.grad for t in (a, b) if t.requires_grad]
    return y, grads, log


@pytest.mark.parametrize("name,fn,req", CASES, ids=[c[0] for c in CASES])
def test_pack_unpack_calls_match_torch(name, fn, req):
    ref_y, ref_g, ref_log = _run_logged(torch, fn, req, retain=True)
    got_y, got_g, got_log = _run_logged(torchish, fn, req, retain=True)
    assert got_log == ref_log
    assert_same(ref_y, got_y)
    assert_same(ref_g, got_g)


@pytest.mark.parametrize("name,fn,req", CASES, ids=[c[0] for c in CASES])
def test_unpacked_values_are_what_backward_uses(name, fn, req):
    # pack offloads to numpy (+1 to see the change), unpack comes back as a new tensor: the gradients use it
    def run(lib):
        return _run_logged(lib, fn, req, pack_fn=lambda t: to_numpy(t) + 1.0,
                           unpack_fn=lambda p: lib.from_numpy(np.ascontiguousarray(p)))
    ref_y, ref_g, ref_log = run(torch)
    got_y, got_g, got_log = run(torchish)
    assert got_log == ref_log
    assert_same(ref_y, got_y)
    assert_same(ref_g, got_g)


def test_numpy_offload_round_trip_gives_plain_gradients():
    def run(lib):
        w = lib.tensor(arr(3, 4, seed=5), requires_grad=True)
        x = lib.tensor(arr(2, 3, seed=6), requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().numpy().copy(), lib.from_numpy):
            loss = ((x @ w).relu().exp() * 0.5).sum()
        loss.backward()
        return loss, x.grad, w.grad
    ref, got = run(torch), run(torchish)
    assert_same(ref, got)
    plain_x = torchish.tensor(arr(2, 3, seed=6), requires_grad=True)
    plain_w = torchish.tensor(arr(3, 4, seed=5), requires_grad=True)
    ((plain_x @ plain_w).relu().exp() * 0.5).sum().backward()
    assert_same(ref[1], plain_x.grad)
    assert_same(ref[2], plain_w.grad)


def test_nested_hooks_innermost_wins_and_unpack_is_the_packing_ones():
    def run(lib):
        G = lib.autograd.graph
        log = []
        a = lib.tensor(arr(3, seed=1), requires_grad=True)
        b = lib.tensor(arr(3, seed=2), requires_grad=True)
        with G.saved_tensors_hooks(lambda t: (log.append("p_outer"), t)[1], lambda t: (log.append("u_outer"), t)[1]):
            with G.saved_tensors_hooks(lambda t: (log.append("p_inner"), t)[1],
                                       lambda t: (log.append("u_inner"), t)[1]):
                y = a * b
            z = y.sin()
        with G.saved_tensors_hooks(lambda t: t, lambda t: (log.append("u_other"), t)[1]):
            z.sum().backward()
        return log, a.grad
    ref, got = run(torch), run(torchish)
    assert got[0] == ref[0]
    assert_same(ref[1], got[1])


def test_hooks_are_per_thread():
    log = []
    a = torchish.tensor(arr(3), requires_grad=True)
    seen_in_thread = []

    def other():
        seen_in_thread.append(len(log))
        _ = a * a
        seen_in_thread.append(len(log))

    with torchish.autograd.graph.saved_tensors_hooks(lambda t: (log.append(1), t)[1], lambda t: t):
        th = threading.Thread(target=other)
        th.start()
        th.join()
        _ = a * a
    assert seen_in_thread == [0, 0] and len(log) == 2


def test_no_graph_no_pack_and_hooks_run_without_grad():
    def run(lib):
        log = []
        a = lib.tensor(arr(3), requires_grad=True)
        G = lib.autograd.graph
        with G.saved_tensors_hooks(lambda t: (log.append(("p", lib.is_grad_enabled())), t * 1)[1],
                                   lambda t: (log.append(("u", lib.is_grad_enabled())), t)[1]):
            with lib.no_grad():
                _ = a.exp()
            _ = a.detach().exp()
            y = a.exp()
        y.sum().backward()
        return log, y.grad_fn is not None
    ref, got = run(torch), run(torchish)
    assert got == ref


def test_inplace_write_after_packing_is_not_checked():
    def run(lib):
        a = lib.tensor(arr(2, 3), requires_grad=True)
        b = lib.tensor(arr(2, 3, seed=1), requires_grad=True)
        x = a * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            y = x * b
        x.add_(1)
        y.sum().backward()
        return a.grad, b.grad
    assert_same(*[run(lib) for lib in (torch, torchish)])


def test_unpack_must_return_a_tensor():
    def fn(lib):
        a = lib.tensor(arr(3), requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = a * a
        y.sum().backward()
    same_error(fn)


def test_pack_must_not_modify_its_input_in_place():
    def fn(lib):
        a = lib.tensor(arr(3), requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
            _ = a.detach().requires_grad_(False).exp() * (a * 1).exp()
    same_error(fn)


def test_disable_saved_tensors_hooks():
    def inside(lib):
        G = lib.autograd.graph
        with G.disable_saved_tensors_hooks("no hooks here"):
            with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    def entering_with_hooks(lib):
        G = lib.autograd.graph
        with G.saved_tensors_hooks(lambda t: t, lambda t: t):
            with G.disable_saved_tensors_hooks("hooks are open"):
                pass

    def nested_restores(lib):
        G = lib.autograd.graph
        with G.disable_saved_tensors_hooks("outer"):
            with G.disable_saved_tensors_hooks("inner"):
                pass
            with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    for fn in (inside, entering_with_hooks, nested_restores):
        same_error(fn)
    G = torchish.autograd.graph
    with G.disable_saved_tensors_hooks("x"):
        pass
    with G.saved_tensors_hooks(lambda t: t, lambda t: t):  # usable again once closed
        pass


def test_save_on_cpu():
    def run(lib):
        a = lib.tensor(arr(2, 3), requires_grad=True)
        w = lib.tensor(arr(3, 2, seed=4), requires_grad=True)
        with lib.autograd.graph.save_on_cpu(pin_memory=False):
            y = (a @ w).tanh().sum()
            y2 = (a @ w).tanh().sum()
        y.backward()
        return y, a.grad, w.grad, y2
    ref, got = run(torch), run(torchish)
    assert_same(ref, got)
    hooks = torchish.autograd.graph.save_on_cpu()
    assert isinstance(hooks, torchish.autograd.graph.saved_tensors_hooks)
    packed = hooks.pack_hook(torchish.ones(2))
    assert str(packed[1].device) == "cpu"
    assert torchish.equal(hooks.unpack_hook(packed), torchish.ones(2))


def test_create_graph_through_packed_values():
    def run(lib):
        a = lib.tensor(arr(3) + 2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = (a.exp() * a.sin()).sum()
        (g,) = lib.autograd.grad(y, a, create_graph=True)
        g.sum().backward()
        return g, a.grad
    assert_same(*[run(lib) for lib in (torch, torchish)])


def _doubling_step(lib, w, log):
    """exp's saved result comes back doubled: the gradient shows whether the unpacked value was used."""
    def step(x):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: (log.append(1), t * 2)[1], lambda t: t):
            y = (w * x).exp().sum()
        y.backward()
        return y
    return step


def _numpy_step(lib, w):
    def step(x):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().numpy(), lib.from_numpy):
            y = (w * x).exp().sum()
        y.backward()
        return y
    return step


def test_hooks_inside_compile():
    w = torchish.tensor(arr(2, 3), requires_grad=True)
    ref_w = torch.tensor(arr(2, 3), requires_grad=True)
    log, ref_log = [], []
    pairs = [(torchish.compile(_doubling_step(torchish, w, log)), _doubling_step(torch, ref_w, ref_log)),
             (torchish.compile(_numpy_step(torchish, w)), _numpy_step(torch, ref_w))]
    for fn, ref_fn in pairs:
        for i in range(3):
            w.grad = None
            ref_w.grad = None
            x = arr(2, 3, seed=10 + i)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the numpy hooks make compile run the step eagerly (it says so)
                out = fn(torchish.tensor(x))
            ref = ref_fn(torch.tensor(x))
            assert_same(ref, out)
            assert_same(ref_w.grad, w.grad)
    assert log  # the traced step ran the pack hook


# ---- grad_fn._saved_* -------------------------------------------------------------------------------------------

SAVED_CASES = [
    ("add", lambda L, x, b, m: x + b), ("add_alpha", lambda L, x, b, m: L.add(x, b, alpha=3)),
    ("sub", lambda L, x, b, m: L.sub(x, b, alpha=2)), ("rsub", lambda L, x, b, m: 2 - x),
    ("mul", lambda L, x, b, m: x * b), ("mul_detached", lambda L, x, b, m: x * b.detach()),
    ("mul_scalar", lambda L, x, b, m: x * 2.5), ("rmul_int", lambda L, x, b, m: 2 * x),
    ("div", lambda L, x, b, m: x / b), ("div_scalar", lambda L, x, b, m: x / 2),
    ("div_floor", lambda L, x, b, m: L.div(x, b, rounding_mode="floor")),
    ("pow", lambda L, x, b, m: x ** 2), ("pow_float", lambda L, x, b, m: x ** 2.5),
    ("pow_tensor", lambda L, x, b, m: x.abs() ** b), ("rpow", lambda L, x, b, m: 2 ** x),
    ("exp", lambda L, x, b, m: x.exp()), ("log", lambda L, x, b, m: x.abs().log()),
    ("sin", lambda L, x, b, m: x.sin()), ("cos", lambda L, x, b, m: x.cos()), ("tanh", lambda L, x, b, m: x.tanh()),
    ("sigmoid", lambda L, x, b, m: x.sigmoid()), ("relu", lambda L, x, b, m: x.relu()),
    ("sqrt", lambda L, x, b, m: x.abs().sqrt()), ("abs", lambda L, x, b, m: x.abs()),
    ("matmul", lambda L, x, b, m: x @ m), ("mm", lambda L, x, b, m: x.mm(m)),
    ("mv", lambda L, x, b, m: x @ m[:, 0]), ("bmm", lambda L, x, b, m: L.bmm(x[None], m[None])),
    ("matmul_batched", lambda L, x, b, m: x[None] @ m[None]), ("dot", lambda L, x, b, m: L.dot(x[0], b[0])),
    ("sum", lambda L, x, b, m: x.sum()), ("sum_dim", lambda L, x, b, m: x.sum(1)),
    ("sum_keepdim", lambda L, x, b, m: x.sum(1, keepdim=True)), ("mean", lambda L, x, b, m: x.mean()),
    ("mean_dim", lambda L, x, b, m: x.mean(0)), ("view", lambda L, x, b, m: x.view(3, 2)),
    ("reshape", lambda L, x, b, m: x.reshape(6)), ("transpose", lambda L, x, b, m: x.transpose(0, 1)),
    ("t", lambda L, x, b, m: x.t()), ("permute", lambda L, x, b, m: x.permute(1, 0)),
    ("softmax", lambda L, x, b, m: x.softmax(1)), ("log_softmax", lambda L, x, b, m: x.log_softmax(1)),
    ("expand", lambda L, x, b, m: x[:, :1].expand(2, 5)), ("unsqueeze", lambda L, x, b, m: x.unsqueeze(0)),
    ("squeeze", lambda L, x, b, m: x[None].squeeze(0)), ("neg", lambda L, x, b, m: -x),
]


def _saved_attrs(lib, fn, after_backward=False):
    x = lib.tensor(arr(2, 3, seed=1), requires_grad=True)
    b = lib.tensor(arr(2, 3, seed=2) + 2, requires_grad=True)
    m = lib.tensor(arr(3, 4, seed=3), requires_grad=True)
    y = fn(lib, x, b, m)
    g = y.grad_fn
    names = sorted(n for n in dir(g) if n.startswith("_saved_") and not n.endswith("_sym_strides"))
    raw = sorted(n for n in dir(g) if n.startswith("_raw_saved_"))
    if after_backward:
        y.sum().backward()
    out = {}
    for n in names:
        try:
            v = getattr(g, n)
        except RuntimeError as e:
            v = ("error", str(e).replace("torchish", "torch"))
        if isinstance(v, lib.Tensor):
            same_as = [k for k, t in (("x", x), ("b", b), ("m", m), ("y", y)) if v is t]
            v = (v, v.requires_grad, v.grad_fn.name() if v.grad_fn is not None else None, same_as)
        elif isinstance(v, tuple):
            v = tuple(v)
        out[n] = v
    return g.name(), raw, out


@pytest.mark.parametrize("name,fn", SAVED_CASES, ids=[c[0] for c in SAVED_CASES])
@pytest.mark.parametrize("after_backward", [False, True])
def test_saved_attributes_match_torch(name, fn, after_backward):
    ref, got = _saved_attrs(torch, fn, after_backward), _saved_attrs(torchish, fn, after_backward)
    assert got[0] == ref[0]
    assert got[1] == ref[1]
    assert sorted(got[2]) == sorted(ref[2])
    assert_same(ref[2], got[2])


def test_saved_tensors_read_through_hooks_and_raw_register_hooks():
    def run(lib):
        log = []
        a = lib.tensor(arr(2, 3), requires_grad=True)
        b = lib.tensor(arr(2, 3, seed=1), requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: (log.append("p"), t.detach() * 2)[1],
                                                     lambda t: (log.append("u"), t)[1]):
            y = a * b
        s = y.grad_fn._saved_self
        z = a.exp()
        raw = z.grad_fn._raw_saved_result
        raw.register_hooks(lambda t: (log.append("raw_p"), t.detach() + 1)[1], lambda t: (log.append("raw_u"), t)[1])
        (y.sum() + z.sum()).backward()
        return s, log, a.grad, b.grad
    ref, got = run(torch), run(torchish)
    assert got[1] == ref[1]
    assert_same([ref[0], ref[2], ref[3]], [got[0], got[2], got[3]])


def test_raw_saved_register_hooks_errors():
    def twice(lib):
        a = lib.tensor(arr(3), requires_grad=True)
        raw = (a * a).grad_fn._raw_saved_self
        raw.register_hooks(lambda t: t, lambda t: t)
        raw.register_hooks(lambda t: t, lambda t: t)

    def unsaved(lib):
        a = lib.tensor(arr(3), requires_grad=True)
        (a * 2).grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

    same_error(twice)
    same_error(unsaved)


def test_custom_function_saved_tensors_after_backward():
    def fn(lib):
        a = lib.tensor(arr(3), requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = _cube_fn(lib).apply(a, a * 2)
        y.sum().backward()
        return y.grad_fn.saved_tensors
    same_error(fn)


# ---- GradientEdge -----------------------------------------------------------------------------------------------

def test_gradient_edges_as_grad_inputs_and_outputs():
    def run(lib):
        G = lib.autograd.graph
        a = lib.tensor(arr(2, 3), requires_grad=True)
        x = a * 2
        y = x.exp()
        e = G.get_gradient_edge(x)
        leaf = G.get_gradient_edge(a)
        g1 = lib.autograd.grad(y.sum(), [e, a], retain_graph=True)
        g2 = lib.autograd.grad(y.sum(), leaf, retain_graph=True)
        g3 = lib.autograd.grad(G.get_gradient_edge(y), [a], grad_outputs=[lib.ones(2, 3)])
        x.mul_(3)  # the edge keeps the node it was taken from
        z = (a * 3).sum()
        g4 = lib.autograd.grad(z, [G.get_gradient_edge(a)])
        return (g1, g2, g3, g4, type(e).__name__, e.output_nr, leaf.output_nr, e.ownership_token,
                e.node.name(), leaf.node is (a * 1).grad_fn.next_functions[0][0])
    assert_same(*[run(lib) for lib in (torch, torchish)])


def test_gradient_edges_as_backward_inputs():
    def run(lib):
        G = lib.autograd.graph
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        x = a * 2
        y = (x * b).sum()
        y.backward(inputs=[G.get_gradient_edge(a)], retain_graph=True)
        first = (a.grad, b.grad)
        lib.autograd.backward(y, inputs=[G.get_gradient_edge(x)], retain_graph=True)
        second = (a.grad, b.grad, x.retains_grad)
        y.backward(inputs=[G.get_gradient_edge(b)])
        return first, second, a.grad, b.grad
    assert_same(*[run(lib) for lib in (torch, torchish)])


def test_gradient_edge_errors():
    def no_grad_tensor(lib):
        lib.autograd.graph.get_gradient_edge(lib.ones(2))

    def unused(lib):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        lib.autograd.grad((a * 3).sum(), [lib.autograd.graph.get_gradient_edge(b)])

    def materialized(lib):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        lib.autograd.grad((a * 3).sum(), [lib.autograd.graph.get_gradient_edge(b)], materialize_grads=True)

    def bad_input(lib):
        a = lib.ones(2, requires_grad=True)
        lib.autograd.grad((a * 3).sum(), [3])

    for fn in (no_grad_tensor, unused, materialized, bad_input):
        same_error(fn)


_SAVE_ON_CPU_WORKER = """
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ["TORCHISH_HOST_ACCELERATOR"] = "1"
os.environ["JAX_PLATFORMS"] = "cpu"
import jax
jax.config.update("jax_default_device", jax.devices("cpu")[1])
import json
import numpy as np
import torchish
G = torchish.autograd.graph
seen = []
base = G.save_on_cpu()
spy = G.saved_tensors_hooks(lambda t: (seen.append(str(t.device)), base.pack_hook(t))[1],
                            lambda p: (seen.append(str(p[1].device)), base.unpack_hook(p))[1])
grads = []
for hooks in (spy, None):
    x = torchish.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), device="cuda", requires_grad=True)
    w = torchish.tensor(np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4), device="cuda", requires_grad=True)
    if hooks is not None:
        with hooks:
            y = (x @ w).tanh().sum()
    else:
        y = (x @ w).tanh().sum()
    y.backward()
    grads.append([str(x.grad.device), x.grad.cpu().numpy().tolist(), w.grad.cpu().numpy().tolist()])
print(json.dumps({"seen": seen, "grads": grads}))
"""


def test_save_on_cpu_moves_accelerator_tensors_and_back():
    # JAX with two host devices, the second one "cuda" (as tests/test_devices.py): packed values live on the CPU,
    # backward gets them back on the accelerator, and the gradients are those without hooks
    import json
    import subprocess
    import sys
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", _SAVE_ON_CPU_WORKER], capture_output=True, text=True, timeout=300,
                          cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["seen"] == ["cuda:0"] * 3 + ["cpu"] * 3
    assert res["grads"][0] == res["grads"][1] and res["grads"][0][0] == "cuda:0"
