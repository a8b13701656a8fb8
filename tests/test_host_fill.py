"""Fills that need no kernel: ``zero_()``/``fill_()`` of a tensor no autograd, trace or lazy capture sees, and the
optimizers' zero state, write a host buffer moved to the device instead of compiling a fill kernel for each new
shape (~20-90 ms each on CPU: building a BatchNorm, ``nn.init.zeros_``, ``zero_grad(set_to_none=False)``, Adam's
first step). Values, dtypes, versions and placement are PyTorch's / the kernel path's."""
import warnings

import jax
import numpy as np
import pytest
from jax._src import monitoring

import torchish
from oracle import needs_torch, same

warnings.filterwarnings("ignore", category=UserWarning)

_COMPILES = []
monitoring.register_event_duration_secs_listener(
    lambda name, secs, **kw: _COMPILES.append(name) if name == "/jax/core/compile/backend_compile_duration" else None)


def _compiles(fn):
    """How many XLA programs ``fn()`` compiled."""
    before = len(_COMPILES)
    fn()
    return len(_COMPILES) - before


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "int64", "int32", "uint8", "int8",
                                   "bool", "complex64"])
def test_fill_and_zero_values_as_pytorch(dtype):
    def f(T):
        dt = getattr(T, dtype)
        out = []
        for v in (0, 1, 2.7, -1, 0.1, True, 300):
            t = T.ones(2, 3, dtype=dt)
            try:
                t.fill_(v)
            except Exception as e:  # noqa: BLE001 - PyTorch's refusal (a number that does not fit) is the outcome
                out.append(type(e).__name__)
                continue
            out.append(t)
        z = T.full((4,), 3, dtype=dt).zero_()
        return out + [z, z._version]
    same(f)


@needs_torch
def test_no_grad_init_of_parameters_and_zero_grad_keep_pytorchs_state():
    def f(T):
        T.manual_seed(0)
        m = T.nn.Linear(5, 3)
        with T.no_grad():
            T.nn.init.zeros_(m.bias)
            m.weight.fill_(0.25)
        v = (m.bias._version, m.weight._version, m.bias.requires_grad, m.weight.is_leaf)
        m(T.ones(2, 5)).sum().backward()
        opt = T.optim.SGD(m.parameters(), lr=0.1)
        opt.zero_grad(set_to_none=False)
        g = (m.weight.grad.clone(), m.bias.grad.clone(), m.weight.grad._version)
        bn = T.nn.BatchNorm1d(3)
        bn(T.arange(6.0).reshape(2, 3))
        bn.reset_running_stats()
        return v, g, bn.running_mean, bn.running_var, bn.num_batches_tracked
    same(f)


@needs_torch
def test_fill_of_a_tensor_in_the_graph_still_records_it():
    def f(T):
        x = T.arange(4.0, requires_grad=True)
        y = x * 2
        y.zero_()
        z = x * 3
        z.fill_(1.5)
        (y.sum() + (z * x).sum()).backward()
        return y.grad_fn.name(), z.grad_fn.name(), x.grad
    same(f)


def test_fills_and_optimizer_state_compile_nothing_per_shape():
    torchish.optim.Adam([torchish.nn.Parameter(torchish.ones(2))]).step  # (imports)
    assert _compiles(lambda: [torchish.nn.BatchNorm2d(n) for n in (17, 19, 23)]) == 0
    assert _compiles(lambda: [torchish.zeros(n, 2).fill_(0.5).zero_() for n in (17, 19, 23)]) == 0
    ps = [torchish.nn.Parameter(torchish.ones(n, 3)) for n in (17, 19, 23)]
    for p in ps:
        p.grad = torchish.ones(p.shape)
    opt = torchish.optim.Adam(ps, lr=0.1)
    assert _compiles(opt.step) == 1  # the update itself (one program for the three parameters)
    assert all(tuple(opt.state[p]["exp_avg"].shape) == tuple(p.shape) for p in ps)


def test_host_fill_keeps_placement():
    """A committed tensor's fill stays on its device; an uncommitted optimizer state follows its parameter."""
    dev = jax.devices()[-1]
    t = torchish.Tensor._make(jax.device_put(np.ones((3,), np.float32), dev))
    t.zero_()
    assert t._v.committed and t._v.devices() == {dev}
    p = torchish.nn.Parameter(torchish.Tensor._make(jax.numpy.ones((3,), np.float32)))  # uncommitted
    p.grad = torchish.ones(3)
    opt = torchish.optim.SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    assert opt.state[p]["momentum_buffer"]._v.committed == p._v.committed
