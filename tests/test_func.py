"""torchish.func against torch.func: the transforms (grad, vjp, jvp, jacobians, vmap), functional_call and
stack_module_state on the same numpy inputs, errors of the same builtin types, and to_jax trained by optax.

Shapes are shared across tests ((3,) and (2, 3) inputs) so JAX's per-primitive compiles are reused."""
from __future__ import annotations

import numpy as np
import pytest

from module_oracle import pair
from oracle import arr, assert_same, check_raises, needs_torch, run_both, to_numpy, torch, torchish


def _fn(lib):
    return torch.func if lib is torch else torchish.func


def _t(lib, *arrays):
    return [lib.tensor(a) for a in arrays]


X, Y, M = arr(3), arr(3, seed=1), arr(2, 3, seed=2)


def _f(T, x, y):
    return (x.sin() * y).sum() + (x * x).sum()


def _aux(T, x, y):
    return _f(T, x, y), {"m": x.mean(), "n": [x * 2, (y,)]}


def _two(T, x, y):
    return x.sin() * y, (x * y).exp()


# name -> fn(func module, lib, x, y, m): each case is one result compared with torch.func's
TRANSFORMS = {
    "grad": lambda F, T, x, y, m: F.grad(lambda a: _f(T, a, y))(x),
    "grad_argnums_aux": lambda F, T, x, y, m: F.grad(lambda a, b: _aux(T, a, b), argnums=(0, 1), has_aux=True)(x, y),
    "grad_pytree": lambda F, T, x, y, m: F.grad(lambda d: (d["w"] @ d["v"][0]).sum() + d["v"][1].sum())(
        {"w": m, "v": (x, y)}),
    "grad_and_value_aux": lambda F, T, x, y, m: F.grad_and_value(lambda a: _aux(T, a, y), has_aux=True)(x),
    "grad_of_grad": lambda F, T, x, y, m: F.grad(lambda a: F.grad(lambda b: (b ** 3).sum())(a).sum())(x),
    "vjp": lambda F, T, x, y, m: (lambda o, f: (o, f((T.ones(3), y))))(*F.vjp(lambda a: _two(T, a, y), x)),
    "vjp_aux": lambda F, T, x, y, m: (lambda o, f, a: (o, f(y), a))(
        *F.vjp(lambda a, b: (a * b, b.sum()), x, y, has_aux=True)),
    "jvp": lambda F, T, x, y, m: F.jvp(lambda a, b: _two(T, a, b), (x, y), (y, x)),
    "jvp_aux": lambda F, T, x, y, m: F.jvp(lambda a: (a.tanh(), a.sum()), (x,), (y,), has_aux=True),
    "jacrev_argnums_tuple_out": lambda F, T, x, y, m: F.jacrev(lambda a, b: _two(T, a, b), argnums=(0, 1))(x, y),
    "jacrev_aux": lambda F, T, x, y, m: F.jacrev(lambda a: (m @ a, a.sum()), has_aux=True)(x),
    "jacfwd_argnums_tuple_out": lambda F, T, x, y, m: F.jacfwd(lambda a, b: _two(T, a, b), argnums=(0, 1))(x, y),
    "jacfwd_matrix_input": lambda F, T, x, y, m: F.jacfwd(lambda a: (a * a).sum(0), has_aux=False)(m),
    "hessian_argnums": lambda F, T, x, y, m: F.hessian(lambda a, b: _f(T, a, b), argnums=(0, 1))(x, y),
}


@needs_torch
@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transforms_match_torch_func(name):
    case = TRANSFORMS[name]
    ref = case(torch.func, torch, *_t(torch, X, Y, M))
    got = case(torchish.func, torchish, *_t(torchish, X, Y, M))
    assert_same(ref, got)


# name -> (fn(lib, x, m), in_dims, out_dims, kwargs): vmap of fn over (x-like, m-like) inputs
VMAPS = {
    "default": (lambda T, v, w: v * w, 0, 0, {}),
    "in_dims_none": (lambda T, v, w: v * w[0], (0, None), 0, {}),
    "in_dims_negative_out_dims": (lambda T, v, w: v[:, None] * w, (-1, 1), 1, {}),
    "nested_in_dims_dict": (lambda T, v, w: v["a"] * v["b"][0] * w.sum(), ({"a": 0, "b": (None,)}, 0), 0, {}),
    "tuple_out_with_none": (lambda T, v, w: (v.sum(), w.sum()), (0, None), (0, None), {}),
    "chunked": (lambda T, v, w: (v * w, v.exp()), (0, 1), (1, 0), {"chunk_size": 1}),
}
VMAP_INPUTS = {
    "default": lambda x, m: (m, m),
    "in_dims_none": lambda x, m: (m, m),
    "in_dims_negative_out_dims": lambda x, m: (m, m),
    "nested_in_dims_dict": lambda x, m: ({"a": m, "b": (x,)}, m),
    "tuple_out_with_none": lambda x, m: (m, m),
    "chunked": lambda x, m: (m[0], m),
}


@needs_torch
@pytest.mark.parametrize("name", list(VMAPS))
def test_vmap_matches_torch(name):
    fn, in_dims, out_dims, kw = VMAPS[name]

    def run(lib):
        x, m = _t(lib, X, M)
        return _fn(lib).vmap(lambda *a: fn(lib, *a), in_dims=in_dims, out_dims=out_dims, **kw)(
            *VMAP_INPUTS[name](x, m))
    assert_same(*run_both(lambda lib: run(lib)))


@needs_torch
def test_nested_vmap_and_kwargs():
    def run(lib):
        x, m = _t(lib, X, M)
        F = _fn(lib)
        outer = F.vmap(F.vmap(lambda a, b, scale=1.0: a * b * scale, in_dims=(0, None)), in_dims=(None, 0))
        return outer(x, m, scale=lib.tensor(2.0)), F.vmap(lambda r, s: lib.outer(r, s))(m, m)
    assert_same(*run_both(run))


@needs_torch
def test_vmap_in_place_on_a_mapped_input_writes_back():
    def run(lib):
        m = lib.tensor(M)
        out = _fn(lib).vmap(lambda r, s: r.add_(s), in_dims=(1, None))(m, lib.tensor(M[:, 0]))
        return out, m
    assert_same(*run_both(run))


def test_vmap_randomness_modes():
    x = torchish.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        torchish.func.vmap(lambda r: r + torchish.rand(3))(x)
    diff = torchish.func.vmap(lambda r: r + torchish.rand(3), randomness="different")(x)
    assert len({tuple(row) for row in to_numpy(diff)}) == 4
    assert not np.isnan(to_numpy(torchish.rand(2))).any()  # the generator holds a concrete key afterwards
    with pytest.raises(RuntimeError, match="randomness"):
        torchish.func.vmap(lambda r: r, randomness="sometimes")(x)


@needs_torch
def test_vmap_randomness_error_and_same_match_torch_behaviour():
    check_raises(lambda T: _fn(T).vmap(lambda r: r * T.rand(()))(T.ones(3)))
    check_raises(lambda T: _fn(T).jacfwd(lambda r: r * T.rand(3))(T.ones(3)))
    t, x = run_both(lambda T: _fn(T).vmap(lambda r: r * 0 + T.rand(()), randomness="same")(T.ones(3)))
    assert to_numpy(x).shape == to_numpy(t).shape and len(set(to_numpy(x).tolist())) == 1


ERRORS = {
    "grad_non_scalar": lambda T, F: F.grad(lambda a: a * 2)(T.ones(3)),
    "grad_non_tensor_out": lambda T, F: F.grad(lambda a: 3.0)(T.ones(3)),
    "grad_aux_not_pair": lambda T, F: F.grad(lambda a: a.sum(), has_aux=True)(T.ones(3)),
    "grad_aux_not_tensors": lambda T, F: F.grad(lambda a: (a.sum(), 3), has_aux=True)(T.ones(3)),
    "grad_int_input": lambda T, F: F.grad(lambda a: a.sum())(T.ones(3, dtype=T.long)),
    "grad_argnum_range": lambda T, F: F.grad(lambda a: a.sum(), argnums=1)(T.ones(3)),
    "grad_argnums_type": lambda T, F: F.grad(lambda a: a.sum(), argnums=0.5)(T.ones(3)),
    "grad_python_float_arg": lambda T, F: F.grad(lambda a: a * 2)(2.0),
    "vjp_cotangent_shape": lambda T, F: F.vjp(lambda a: a * 2, T.ones(3))[1](T.ones(2)),
    "vjp_cotangent_structure": lambda T, F: F.vjp(lambda a: a * 2, T.ones(3))[1]((T.ones(3),)),
    "vjp_non_tensor_out": lambda T, F: F.vjp(lambda a: 3, T.ones(3)),
    "jvp_primals_not_tuple": lambda T, F: F.jvp(lambda a: a, T.ones(3), (T.ones(3),)),
    "jvp_structure": lambda T, F: F.jvp(lambda a: a, (T.ones(3),), (T.ones(3), T.ones(3))),
    "jvp_tangent_shape": lambda T, F: F.jvp(lambda a: a, (T.ones(3),), (T.ones(2),)),
    "jacrev_int_input": lambda T, F: F.jacrev(lambda a: a)(T.ones(3, dtype=T.long)),
    "vmap_no_inputs": lambda T, F: F.vmap(lambda: T.ones(1))(),
    "vmap_non_tensor_mapped": lambda T, F: F.vmap(lambda a, b: a)(T.ones(3), 3),
    "vmap_in_dim_range": lambda T, F: F.vmap(lambda a: a, in_dims=1)(T.ones(3)),
    "vmap_sizes_differ": lambda T, F: F.vmap(lambda a, b: a + b)(T.ones(3), T.ones(2)),
    "vmap_in_dims_list": lambda T, F: F.vmap(lambda a: a, in_dims=[0])(T.ones(3)),
    "vmap_in_dims_structure": lambda T, F: F.vmap(lambda a, b: a, in_dims=(0,))(T.ones(3), T.ones(3)),
    "vmap_nothing_mapped": lambda T, F: F.vmap(lambda a: a, in_dims=(None,))(T.ones(3)),
    "vmap_non_tensor_out": lambda T, F: F.vmap(lambda a: 3)(T.ones(3)),
    "vmap_batched_out_dim_none": lambda T, F: F.vmap(lambda a: a, out_dims=None)(T.ones(3)),
    "vmap_out_dims_type": lambda T, F: F.vmap(lambda a: a, out_dims="a")(T.ones(3)),
    "vmap_out_dim_range": lambda T, F: F.vmap(lambda a: a, out_dims=2)(T.ones(3)),
    "vmap_chunk_size": lambda T, F: F.vmap(lambda a: a, chunk_size=0)(T.ones(3)),
    "stack_no_models": lambda T, F: F.stack_module_state([]),
    "stack_mixed_classes": lambda T, F: F.stack_module_state([T.nn.Linear(2, 2), T.nn.Identity()]),
    "functional_call_strict": lambda T, F: F.functional_call(T.nn.Linear(2, 2), {"weight": T.ones(2, 2)},
                                                             (T.ones(2),), strict=True),
    "functional_call_repeated_keys": lambda T, F: F.functional_call(
        T.nn.Linear(2, 2), ({"weight": T.ones(2, 2)}, {"weight": T.ones(2, 2)}), (T.ones(2),)),
    "functional_call_not_a_dict": lambda T, F: F.functional_call(T.nn.Linear(2, 2), 3, (T.ones(2),)),
    "functional_call_non_tensor_value": lambda T, F: F.functional_call(T.nn.Linear(2, 2), {"weight": 3},
                                                                       (T.ones(2),)),
}


@needs_torch
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch_types(name):
    check_raises(lambda T: ERRORS[name](T, _fn(T)))


def _mlp(T):
    return T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2))


@needs_torch
def test_per_sample_gradients_match_torch():
    """The torch.func tutorial: vmap(grad(loss)) over a batch, one gradient per sample."""
    tm, xm = pair(_mlp)
    data, target = arr(5, 3, seed=3), np.array([0, 1, 1, 0, 1])

    def run(lib, model):
        params = {k: v.detach() for k, v in model.named_parameters()}
        F = _fn(lib)

        def loss(p, x, t):
            out = F.functional_call(model, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, t.unsqueeze(0))
        return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(data), lib.tensor(target))
    assert_same(run(torch, tm), run(torchish, xm))


def test_transforms_keep_dict_insertion_order():
    """Dicts come back from the transforms in insertion order, as PyTorch's pytrees keep it (JAX's sort the keys):
    ``torch.cat(list(grads.values()))`` of a model's per-sample gradients is flattened in parameter order."""
    def run(lib):
        F = _fn(lib)
        p = {"w": lib.tensor(X), "b": lib.tensor(Y)}  # (not sorted)
        f = lambda q: (q["w"].sin() * q["b"]).sum()
        batch = {"w": lib.tensor(M), "b": lib.tensor(Y)}
        per_sample = F.vmap(F.grad(f), in_dims=({"w": 0, "b": None},))(batch)
        outs = [F.grad(f)(p), F.grad_and_value(f)(p)[0], F.jacrev(f)(p), F.jacfwd(f)(p), F.hessian(f)(p),
                F.hessian(f)(p)["b"], F.vjp(lambda q: {"z": q["w"], "a": q["b"]}, p)[0],
                F.jvp(lambda q: {"z": q["w"], "a": q["b"]}, (p,), (p,))[1], per_sample,
                F.grad(lambda q: (f(q), {"z": q["w"], "a": q["b"]}), has_aux=True)(p)[1]]
        return [list(o) for o in outs], lib.cat([v.flatten() for v in per_sample.values()])
    ref, got = run_both(run)
    assert got[0] == ref[0]
    assert_same(ref[1], got[1])


@needs_torch
def test_ensemble_vmap_over_stacked_linears_matches_loop():
    pairs = [pair(lambda T: T.nn.Linear(3, 2)) for _ in range(3)]
    x = arr(4, 3, seed=4)
    loop = torch.stack([tm(torch.tensor(x)) for tm, _ in pairs])
    params, buffers = torchish.func.stack_module_state([xm for _, xm in pairs])
    assert params["weight"].requires_grad and params["weight"].is_leaf and params["weight"].shape == (3, 2, 3)
    base = pairs[0][1]
    out = torchish.func.vmap(lambda p, b, d: torchish.func.functional_call(base, (p, b), (d,)),
                             in_dims=(0, 0, None))(params, buffers, torchish.tensor(x))
    assert_same(loop.detach(), out)
    ref_params, _ = torch.func.stack_module_state([tm for tm, _ in pairs])
    assert_same({k: v.detach() for k, v in ref_params.items()}, {k: v.detach() for k, v in params.items()})


@needs_torch
def test_functional_call_batchnorm_updates_passed_buffers_in_place():
    def run(lib):
        bn = lib.nn.BatchNorm1d(3)
        state = {k: v.detach().clone() + 0.5 for k, v in bn.named_parameters()}
        state.update({k: v.clone() for k, v in bn.named_buffers()})
        mean = state["running_mean"]
        out = _fn(lib).functional_call(bn, state, lib.tensor(M))
        assert state["running_mean"] is mean  # updated in place, as PyTorch
        return out, state, dict(bn.named_buffers()), bn.weight.detach()
    assert_same(*run_both(run))


@needs_torch
def test_functional_call_ties_weights_and_sets_unknown_attributes():
    def make(lib):
        m = lib.nn.Sequential(lib.nn.Linear(3, 3, bias=False), lib.nn.Linear(3, 3, bias=False))
        m[1].weight = m[0].weight
        with lib.no_grad():
            m[0].weight.copy_(lib.tensor(arr(3, 3, seed=7)))
        return m

    def run(lib):
        m, x = make(lib), lib.tensor(X)
        F = _fn(lib)
        w = lib.tensor(M.T @ M)
        tied = F.functional_call(m, {"0.weight": w}, x)
        untied = F.functional_call(m, {"0.weight": w}, x, tie_weights=False)
        both = F.functional_call(m, {"0.weight": w, "1.weight": w}, (x,))
        return tied.detach(), untied.detach(), both.detach(), m[1].weight is m[0].weight
    assert_same(*run_both(run))
    check_raises(lambda T: _fn(T).functional_call(make(T), {"0.weight": T.ones(3, 3), "1.weight": T.zeros(3, 3)},
                                                  (T.ones(3),)))


def test_functional_call_restores_parameters_after_an_exception():
    class Boom(torchish.nn.Linear):
        def forward(self, x):
            raise KeyError("boom")

    m = Boom(2, 2)
    w, b = m.weight, m.bias
    with pytest.raises(KeyError):
        torchish.func.functional_call(m, {"weight": torchish.zeros(2, 2), "extra": torchish.ones(1)}, torchish.ones(2))
    assert m.weight is w and m.bias is b and isinstance(m.weight, torchish.nn.Parameter)
    assert not hasattr(m, "extra") and dict(m.named_parameters()) == {"weight": w, "bias": b}


def test_functional_call_connects_to_autograd_outside_transforms():
    m = torchish.nn.Linear(3, 2)
    p = {k: v.detach().clone().requires_grad_() for k, v in m.named_parameters()}
    torchish.func.functional_call(m, p, torchish.tensor(M)).sum().backward()
    np.testing.assert_allclose(to_numpy(p["bias"].grad), [2.0, 2.0])
    assert m.weight.grad is None


@needs_torch
def test_to_jax_trains_with_optax_like_torchish_sgd():
    import jax
    import optax

    tm, xm = pair(_mlp)
    x, y = arr(6, 3, seed=5), arr(6, 2, seed=6)
    params, apply_fn = torchish.func.to_jax(xm)

    @jax.jit
    def step(p, opt_state):
        loss, g = jax.value_and_grad(lambda q: ((apply_fn(q, x) - y) ** 2).mean())(p)
        updates, opt_state = opt.update(g, opt_state, p)
        return optax.apply_updates(p, updates), opt_state, loss

    opt = optax.sgd(0.1, momentum=0.9)
    state = opt.init(params)
    losses = []
    for _ in range(4):
        params, state, loss = step(params, state)
        losses.append(float(loss))

    ref_losses = []
    for lib, model in ((torchish, xm), (torch, tm)):
        sgd = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        ref_losses.append([])
        for _ in range(4):
            sgd.zero_grad()
            loss = ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()
            loss.backward()
            sgd.step()
            ref_losses[-1].append(loss.item())
    np.testing.assert_allclose(losses, ref_losses[0], rtol=1e-5)
    np.testing.assert_allclose(losses, ref_losses[1], rtol=1e-5)
    for name, p in xm.named_parameters():
        np.testing.assert_allclose(np.asarray(params[name]), to_numpy(p), rtol=1e-5, atol=1e-6)
    assert all(type(v) is not torchish.Tensor for v in params.values())


def test_to_jax_random_ops_need_a_key():
    import jax

    model = torchish.nn.Sequential(torchish.nn.Linear(3, 3), torchish.nn.Dropout(0.5))
    params, apply_fn = torchish.func.to_jax(model)
    x = jax.numpy.ones((2, 3), "float32")
    with pytest.raises(RuntimeError, match="rng_key"):
        jax.jit(apply_fn)(params, x)
    jitted = jax.jit(apply_fn)
    a = jitted(params, x, rng_key=jax.random.key(0))
    b = jitted(params, x, rng_key=jax.random.key(1))
    assert a.shape == (2, 3) and not np.array_equal(np.asarray(a), np.asarray(b))
    assert not isinstance(model[0].weight._d, jax.core.Tracer)
    model.eval()
    np.testing.assert_allclose(np.asarray(apply_fn(params, x)), to_numpy(model(torchish.tensor(np.ones((2, 3),
                                                                                                       np.float32)))))
