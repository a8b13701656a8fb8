"""The meta device (shape and dtype, no data) against PyTorch's: creation, printing, ops and modules on meta
tensors, moving modules to meta and back with ``to_empty``, the ``with torch.device("meta")`` context, value reads
that fail as PyTorch's do, and the model-ensembling recipe that uses a meta copy as ``functional_call``'s template."""
import copy

import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch

LIBS = [torchish] + ([torch] if torch is not None else [])


def _both(fn):
    """fn(lib) with torch (the oracle) and torchish; returns both results."""
    return fn(torch), fn(torchish)


def _meta_summary(t):
    return (t.device.type, tuple(t.shape), str(t.dtype).split(".")[-1], t.requires_grad, t.is_meta)


@needs_torch
def test_creation_and_repr():
    def fn(lib):
        return [repr(lib.empty(2, 3, device="meta")),
                repr(lib.ones(2, device="meta", dtype=lib.float64, requires_grad=True)),
                repr(lib.zeros(2, dtype=lib.long, device="meta")),
                repr(lib.randn(3, device="meta")),
                repr(lib.full((2,), 7.0, device="meta")),
                repr(lib.empty_like(lib.empty(4, device="meta"))),
                repr(lib.tensor([1.0, 2.0], device="meta"))]
    expected, got = _both(fn)
    assert got == expected


@needs_torch
def test_ops_give_meta_results_with_graph():
    def fn(lib):
        a = lib.empty(2, 3, device="meta", requires_grad=True)
        b = lib.empty(3, 4, device="meta")
        y = (a @ b).relu().sum(1, keepdim=True)
        z = lib.cat([y, y], 1).view(4).t() if False else lib.cat([y, y], 1).reshape(4)
        return [_meta_summary(t) for t in (a @ b, y, z, a.to(lib.float64), a[0], a.mean())], type(y.grad_fn).__name__
    expected, got = _both(fn)
    assert got == expected


@needs_torch
@pytest.mark.parametrize("what", ["tolist", "item", "numpy", "cpu", "mixed", "bool"])
def test_value_reads_fail_as_pytorch(what):
    def fn(lib):
        x = lib.empty(2, 3, device="meta")
        calls = {"tolist": lambda: x.tolist(), "item": lambda: x[0, 0].item(), "numpy": lambda: x.numpy(),
                 "cpu": lambda: x.cpu(), "mixed": lambda: x + lib.ones(2, 3), "bool": lambda: bool(x[0, 0])}
        try:
            calls[what]()
        except Exception as e:  # noqa: BLE001  (the family is what is compared)
            return type(e).__name__, str(e).split("\n")[0]
        return None
    expected, got = _both(fn)
    assert got == expected


@needs_torch
def test_modules_to_meta_forward_and_to_empty():
    def fn(lib):
        m = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2), lib.nn.Flatten(), lib.nn.Linear(8, 3))
        m.to("meta")
        out = m(lib.empty(4, 1, 4, 4, device="meta"))
        loss = lib.nn.functional.cross_entropy(out, lib.empty(4, dtype=lib.long, device="meta"))
        kinds = [type(p).__name__ for p in m.parameters()]
        try:
            m.to("cpu")
        except NotImplementedError as e:
            moved = str(e)
        m.to_empty(device="cpu")
        return (moved, _meta_summary(out), _meta_summary(loss), kinds, [p.device.type for p in m.parameters()],
                [tuple(p.shape) for p in m.parameters()], m[1].running_mean.device.type)
    expected, got = _both(fn)
    assert got == expected


@needs_torch
def test_device_context_builds_modules_on_meta():
    def fn(lib):
        with lib.device("meta"):
            lin = lib.nn.Linear(5, 3)
            emb = lib.nn.Embedding(10, 4)
            lstm = lib.nn.LSTM(4, 5)
        h = emb(lib.zeros(2, 6, dtype=lib.long, device="meta"))
        out, _ = lstm(h)
        return _meta_summary(lin.weight), _meta_summary(out), _meta_summary(lin(out))
    expected, got = _both(fn)
    assert got == expected


@needs_torch
def test_model_ensembling_with_a_meta_template():
    def fn(lib):
        models = []
        for i in range(3):
            m = lib.nn.Linear(3, 2)
            with lib.no_grad():
                m.weight.copy_(lib.arange(6.0).reshape(2, 3) / (i + 2))
                m.bias.fill_(i * 0.1)
            models.append(m)
        params, buffers = lib.func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")

        def f(p, b, x):
            return lib.func.functional_call(base, (p, b), (x,))
        x = lib.arange(12.0).reshape(4, 3) / 10
        return lib.func.vmap(f, in_dims=(0, 0, None))(params, buffers, x).detach().numpy()
    expected, got = _both(fn)
    np.testing.assert_allclose(got, expected, rtol=2e-6)


def test_meta_draws_leave_the_generator_alone():
    torchish.manual_seed(0)
    a = torchish.rand(3)
    torchish.manual_seed(0)
    torchish.randn(5, device="meta")
    torchish.empty(4, device="meta").uniform_()
    assert torchish.equal(torchish.rand(3), a)


def _grads_summary(lib, case):
    x = lib.randn(3, 4, device="meta", requires_grad=True)
    w = lib.nn.Linear(4, 2, device="meta")
    if case == "sum":
        w(x).relu().sum().backward()
    elif case == "twice":  # the second backward accumulates into the meta .grad
        (w(x) * w(x)).mean().backward()
        w(x).tanh().sum().backward()
    elif case == "gradient":
        w(x).backward(lib.ones(3, 2, device="meta"))
    elif case == "autograd.grad":
        return [_meta_summary(g) for g in lib.autograd.grad(w(x).sum(), [x, w.weight])]
    elif case == "cross_entropy":
        lib.nn.functional.cross_entropy(w(x), lib.zeros(3, dtype=lib.long, device="meta")).backward()
    elif case == "create_graph":
        w(x).sum().backward(create_graph=True)
    elif case == "conv_bn":
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.Flatten(),
                              lib.nn.Linear(4 * 6 * 6, 2)).to("meta")
        m(lib.randn(2, 3, 8, 8, device="meta")).sum().backward()
        return [_meta_summary(p.grad) for p in m.parameters()]
    return [_meta_summary(t) for t in (x.grad, w.weight.grad, w.bias.grad)]


@needs_torch
@pytest.mark.parametrize("case", ["sum", "twice", "gradient", "autograd.grad", "cross_entropy", "create_graph",
                                  "conv_bn"])
def test_backward_on_meta_gives_meta_gradients(case):
    ref, got = _both(lambda lib: _grads_summary(lib, case))
    assert got == ref


@needs_torch
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_optimizer_step_on_meta_parameters(name):
    def fn(lib):
        w = lib.nn.Linear(4, 2, device="meta")
        opt = getattr(lib.optim, name)(w.parameters(), lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
        w(lib.randn(3, 4, device="meta")).sum().backward()
        opt.step()
        opt.zero_grad()
        state = opt.state[w.weight]
        return [_meta_summary(w.weight), w.weight.grad is None, sorted(state),
                [_meta_summary(v) for k, v in sorted(state.items()) if k != "step"]]
    ref, got = _both(fn)
    assert got == ref


@needs_torch
def test_device_blocks_nest_as_one_stack():
    """``with d: with d:`` with one device object, blocks inside ``set_default_device``, and a block exited
    through another object restore the default device as PyTorch's mode stack does."""
    def devices(lib):
        d, out = lib.device("meta"), []
        with d:
            with lib.device("cpu"):
                with d:
                    out.append(lib.zeros(1).device.type)
                out.append(lib.zeros(1).device.type)
            out.append(lib.zeros(1).device.type)
        out.append(lib.zeros(1).device.type)
        a, b = lib.device("meta"), lib.device("meta")
        a.__enter__()
        out.append(lib.zeros(1).device.type)
        b.__exit__(None, None, None)
        out.append(lib.zeros(1).device.type)
        lib.set_default_device("meta")
        try:
            with lib.device("cpu"):
                out.append(lib.zeros(1).device.type)
            out.append(lib.zeros(1).device.type)
        finally:
            lib.set_default_device(None)
        return out
    assert devices(torchish) == devices(torch)
