"""Interop: Tensor.jax / from_jax (no copy), DLPack both ways (against real torch), and flax.nnx modules trained as
torchish Modules (against pure JAX: jax.grad and optax on the same nnx model)."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx

import torchish
from torchish.interop import NNXModule
from oracle import arr, check_raises, needs_torch, run_both, torch


# ----------------------------------------------------------------------------------------------------------------
# JAX arrays


def test_jax_and_from_jax_share_the_array():
    a = jnp.asarray(arr(2, 3))
    t = torchish.from_jax(a)
    assert t.jax() is a
    assert t.jax().unsafe_buffer_pointer() == a.unsafe_buffer_pointer()
    assert t.dtype == torchish.float32 and tuple(t.shape) == (2, 3) and not t.requires_grad
    np.testing.assert_array_equal(np.asarray(t.jax()), np.asarray(a))


def test_jax_of_tensor_requiring_grad_is_its_detached_value():
    x = torchish.tensor(arr(3), requires_grad=True)
    y = x * 2
    v = y.jax()
    assert isinstance(v, jax.Array)
    np.testing.assert_allclose(np.asarray(v), arr(3) * 2)
    y.sum().backward()  # taking the value did not disturb the graph
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0, np.float32))


def test_jax_materialises_a_lazy_value():
    saved = torchish.config.lazy
    torchish.config.lazy = True
    try:
        y = torchish.tensor(arr(3)) * 3 + 1
        v = y.jax()
    finally:
        torchish.config.lazy = saved
    assert isinstance(v, jax.Array)
    np.testing.assert_allclose(np.asarray(v), arr(3) * 3 + 1, rtol=1e-6)


def test_from_jax_rejects_other_objects():
    with pytest.raises(TypeError, match="jax.Array"):
        torchish.from_jax([1.0, 2.0])
    with pytest.raises(TypeError):
        torchish.from_jax(np.ones(2))


# ----------------------------------------------------------------------------------------------------------------
# DLPack


@needs_torch
def test_torch_and_numpy_read_a_tensor_through_dlpack_without_copy():
    t = torchish.tensor(arr(2, 3))
    ptr = t.jax().unsafe_buffer_pointer()
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == ptr
    assert tt.dtype == torch.float32 and tuple(tt.shape) == (2, 3)
    np.testing.assert_array_equal(tt.numpy(), arr(2, 3))
    a = np.from_dlpack(t)
    assert a.ctypes.data == ptr
    np.testing.assert_array_equal(a, arr(2, 3))
    assert t.__dlpack_device__() == tt.__dlpack_device__()


@needs_torch
def test_from_dlpack_of_a_torch_tensor_shares_its_buffer():
    src = torch.tensor(arr(4, 2))
    t = torchish.from_dlpack(src)
    assert t.jax().unsafe_buffer_pointer() == src.data_ptr()
    ref = torch.from_dlpack(src)
    assert str(t.dtype) == str(ref.dtype) and tuple(t.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(t.numpy(), ref.numpy())


@needs_torch
@pytest.mark.parametrize("make", [
    lambda: arr(3, 2, dtype=np.float64),
    lambda: arr(5, lo=-9, hi=9, dtype=np.int64),
    lambda: arr(3, 3, dtype=np.bool_),
    lambda: arr(4, 6)[:, ::2],                      # strided: JAX needs a copy
    lambda: jnp.asarray(arr(2, 2)),                 # a JAX array
    lambda: torch.tensor(arr(2, 3)).t(),            # a transposed torch tensor
], ids=["numpy-f64", "numpy-i64", "numpy-bool", "numpy-strided", "jax", "torch-transposed"])
def test_from_dlpack_matches_torch(make):
    ref, got = run_both(lambda T: T.from_dlpack(make()))
    assert str(got.dtype) == str(ref.dtype) and tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


@needs_torch
def test_dlpack_errors_match_torch():
    check_raises(lambda T: T.from_dlpack([1, 2]))
    check_raises(lambda T: T.ones(2, requires_grad=True).__dlpack__())
    check_raises(lambda T: torch.from_dlpack(T.ones(2, requires_grad=True)))
    check_raises(lambda T: T.from_dlpack(T.ones(2, requires_grad=True)))


_NUMPY_LEFT = {"f32*t": lambda t, ti: np.float32(2) * t, "f64-t": lambda t, ti: np.float64(1) - t,
               "sqrt*t": lambda t, ti: np.sqrt(np.float32(4.0)) * t, "f32**t": lambda t, ti: np.float32(2) ** t,
               "f16*t": lambda t, ti: np.float16(2) * t, "i64+ti": lambda t, ti: np.int64(1) + ti,
               "f64*ti": lambda t, ti: np.float64(1.5) * ti, "i32<ti": lambda t, ti: np.int32(1) < ti}


@pytest.mark.parametrize("case", sorted(_NUMPY_LEFT))
def test_numpy_scalar_on_the_left_gives_a_tensor(case):
    """NumPy defers to the Tensor's reflected operator: a Tensor of PyTorch's dtype that keeps autograd (NumPy
    converted the Tensor with __array__ before: an ndarray, or an error when it required grad)."""
    def fn(lib):
        t = lib.tensor([1.0, 2.0], requires_grad=True)
        out = _NUMPY_LEFT[case](t, lib.tensor([1, 2]))
        res = [type(out).__name__, str(out.dtype), out.detach().numpy().tolist()]
        if out.requires_grad:
            out.sum().backward()
            res.append(t.grad.numpy().tolist())
        return res
    ref, got = run_both(fn)
    assert got == ref


_BUFFERS = {  # big-endian arrays: refused whole (ValueError), read by value inside a list; bytearray/memoryview are
    # sequences of their items (a multi-dimensional memoryview has no len() per level)
    "tensor(>f4)": lambda L: L.tensor(np.arange(3, dtype=">f4")), "from_numpy(>i8)": lambda L: L.from_numpy(
        np.arange(3, dtype=">i8")), "as_tensor(>f8)": lambda L: L.as_tensor(np.arange(3, dtype=">f8")),
    "tensor(>i1)": lambda L: L.tensor(np.arange(3, dtype=">i1")),
    "list of >f4": lambda L: L.tensor([np.arange(2, dtype=">f4"), np.arange(2, dtype=">f4")]),
    "bytearray": lambda L: L.tensor(bytearray(b"ab")), "memoryview f64": lambda L: L.tensor(memoryview(np.arange(3.0))),
    "memoryview i32": lambda L: L.as_tensor(memoryview(np.arange(3, dtype=np.int32))),
    "memoryview 2-d": lambda L: L.tensor(memoryview(np.arange(6).reshape(2, 3))),
    "list of bytearray": lambda L: L.tensor([bytearray(b"a"), bytearray(b"b")]), "bytes": lambda L: L.tensor(b"ab"),
}


@needs_torch
@pytest.mark.parametrize("case", sorted(_BUFFERS))
def test_byte_order_and_buffer_objects_as_torch(case):
    def fn(lib):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = _BUFFERS[case](lib)
        except Exception as e:  # noqa: BLE001 - the error is the outcome
            return type(e).__name__, str(e)
        return str(t.dtype), t.tolist()
    ref, got = run_both(fn)
    assert got == ref


@needs_torch
def test_from_numpy_writes_do_not_reach_the_array_unlike_torch():
    """Documented difference: JAX arrays are immutable, so an in-place op on the tensor rebinds it to a new
    value and the numpy array keeps its values (torch writes into the shared memory)."""
    a_ref, a_got = arr(3), arr(3)
    ref, got = run_both(lambda T: T.from_numpy(a_ref if T is torch else a_got))
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    assert str(got.dtype) == str(ref.dtype)
    ref.add_(1.0)
    got.add_(1.0)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    np.testing.assert_array_equal(a_ref, arr(3) + 1.0)
    np.testing.assert_array_equal(a_got, arr(3))


# ----------------------------------------------------------------------------------------------------------------
# flax.nnx modules as torchish Modules


class _MLP(nnx.Module):
    def __init__(self, rngs):
        self.linear1 = nnx.Linear(3, 5, rngs=rngs)
        self.linear2 = nnx.Linear(5, 2, rngs=rngs)

    def __call__(self, x):
        return self.linear2(jax.nn.relu(self.linear1(x)))


class _BNNet(nnx.Module):
    def __init__(self, rngs):
        self.layers = nnx.List([nnx.Linear(3, 4, rngs=rngs)])
        self.bn = nnx.BatchNorm(4, rngs=rngs)

    def __call__(self, x):
        return self.bn(self.layers[0](x))


def _build(cls):
    """An nnx model whose parameters come from numpy (nnx.eval_shape skips the random initialisers, which would
    compile many small programs); batch statistics start at mean 0, variance 1 as nnx's do."""
    graphdef, state = nnx.split(nnx.eval_shape(lambda: cls(nnx.Rngs(0))))
    flat = []
    for i, (path, var) in enumerate(nnx.to_flat_state(state)):
        shape = var.get_value().shape
        if isinstance(var, nnx.Param):
            value = arr(*shape, seed=10 + i)
        else:
            value = (np.ones if path[-1] == "var" else np.zeros)(shape, np.float32)
        flat.append((path, var.replace(jnp.asarray(value))))
    return nnx.merge(graphdef, nnx.from_flat_state(flat))


def _name(path):
    return ".".join(str(p) for p in path)


@pytest.fixture(scope="module")
def mlp_reference():
    """Pure JAX on the nnx MLP (one jitted program): the first forward and gradients, then 3 optax.sgd steps."""
    x, y = arr(4, 3), arr(4, 2, seed=1)
    model = _build(_MLP)
    graphdef, params = nnx.split(model, nnx.Param)
    tx = optax.sgd(0.1)

    @jax.jit
    def step(p, opt_state):
        def loss_fn(p):
            out = nnx.merge(graphdef, p)(x)
            return jnp.mean((out - y) ** 2), out
        (loss, out), g = jax.value_and_grad(loss_fn, has_aux=True)(p)
        updates, opt_state = tx.update(g, opt_state, p)
        return optax.apply_updates(p, updates), opt_state, loss, out, g

    opt_state = tx.init(params)
    losses, first = [], None
    for _ in range(3):
        new_params, opt_state, loss, out, g = step(params, opt_state)
        if first is None:
            first = (np.asarray(out), {_name(k): np.asarray(v.get_value()) for k, v in nnx.to_flat_state(g)})
        params = new_params
        losses.append(float(loss))
    final = {_name(k): np.asarray(v.get_value()) for k, v in nnx.to_flat_state(params)}
    return dict(model=model, x=x, y=y, out=first[0], grads=first[1], losses=losses, params=final)


def test_nnx_module_forward_and_grads_match_jax(mlp_reference):
    ref = mlp_reference
    wrapped = NNXModule(ref["model"])
    names = [n for n, _ in wrapped.named_parameters()]
    assert sorted(names) == sorted(ref["grads"]) == ["linear1.bias", "linear1.kernel", "linear2.bias",
                                                     "linear2.kernel"]
    assert all(isinstance(p, torchish.nn.Parameter) and p.requires_grad for p in wrapped.parameters())
    out = wrapped(torchish.tensor(ref["x"]))
    assert type(out.grad_fn).__name__ == "NNXModuleBackward0"
    np.testing.assert_allclose(out.detach().numpy(), ref["out"], rtol=1e-6, atol=1e-6)
    ((out - torchish.tensor(ref["y"])) ** 2).mean().backward()
    for name, g in ref["grads"].items():
        np.testing.assert_allclose(wrapped.get_parameter(name).grad.numpy(), g, rtol=1e-5, atol=1e-6, err_msg=name)


def test_nnx_module_trains_like_optax_sgd(mlp_reference):
    ref = mlp_reference
    model = NNXModule(ref["model"])
    opt = torchish.optim.SGD(model.parameters(), lr=0.1)
    xt, yt = torchish.tensor(ref["x"]), torchish.tensor(ref["y"])
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = ((model(xt) - yt) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(losses, ref["losses"], rtol=1e-5)
    for name, value in ref["params"].items():
        np.testing.assert_allclose(model.get_parameter(name).detach().numpy(), value, rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    back = model.to_nnx()  # the trained values written back into the nnx module
    assert back is ref["model"]
    np.testing.assert_allclose(np.asarray(back.linear2.kernel[...]), ref["params"]["linear2.kernel"], rtol=1e-6)


def test_nnx_module_state_buffers_and_train_eval():
    x = arr(6, 3)
    ref = _build(_BNNet)
    model = NNXModule(ref)
    assert sorted(n for n, _ in model.named_parameters()) == ["bn.bias", "bn.scale", "layers.0.bias",
                                                              "layers.0.kernel"]
    assert sorted(model.state_dict()) == ["bn.bias", "bn.mean", "bn.scale", "bn.var", "layers.0.bias",
                                          "layers.0.kernel"]
    graphdef, state = nnx.split(ref)

    @jax.jit
    def ref_call(state):  # nnx in train mode: output and updated batch statistics
        m = nnx.merge(graphdef, state)
        out = m(x)
        return out, nnx.state(m)

    ref_out, ref_state = ref_call(state)
    out = model(torchish.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), np.asarray(ref_out), rtol=1e-5, atol=1e-6)
    out.sum().backward()  # updating the running statistics did not invalidate the graph
    np.testing.assert_allclose(model.bn.mean.numpy(), np.asarray(ref_state["bn"]["mean"][...]), rtol=1e-6,
                               atol=1e-7)
    model.eval()  # nnx's eval mode: the running statistics are used
    m = nnx.merge(graphdef, ref_state)
    m.eval()
    eval_graphdef, eval_state = nnx.split(m)
    ref_eval = jax.jit(lambda s: nnx.merge(eval_graphdef, s)(x))(eval_state)
    np.testing.assert_allclose(model(torchish.tensor(x)).detach().numpy(), np.asarray(ref_eval), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(TypeError):
        NNXModule(torchish.nn.Linear(2, 2))
