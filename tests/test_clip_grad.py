"""nn.utils: clip_grad_norm_ / clip_grad_value_ / get_total_norm / clip_grads_with_norm_ and the parameter/vector
conversions, against PyTorch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import arr, needs_torch, to_numpy, torch, torchish

pytestmark = needs_torch

SHAPES = [(3, 4), (4,), (2, 2)]


def params_with_grads(T, scale=1.0, none_at=None, nan=False):
    ps = []
    for i, s in enumerate(SHAPES):
        p = T.nn.Parameter(T.tensor(arr(*s, seed=i)))
        if i != none_at:
            g = arr(*s, seed=10 + i) * scale
            if nan and i == 1:
                g[0] = np.nan
            p.grad = T.tensor(g)
        ps.append(p)
    return ps


def grads(ps):
    return [None if p.grad is None else to_numpy(p.grad) for p in ps]


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.1, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    out = []
    for T in (torch, torchish):
        ps = params_with_grads(T)
        total = T.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        out.append((total, grads(ps)))
    (tt, tg), (xt, xg) = out
    assert isinstance(xt, torchish.Tensor) and xt.shape == () and xt.dtype == torchish.float32
    np.testing.assert_allclose(to_numpy(xt), to_numpy(tt), rtol=1e-5)
    for a, b in zip(tg, xg):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_norm_foreach_none_grads_and_single_tensor(foreach):
    out = []
    for T in (torch, torchish):
        ps = params_with_grads(T, scale=5.0, none_at=1)
        t1 = T.nn.utils.clip_grad_norm_(ps, 1.0, foreach=foreach)
        single = params_with_grads(T, scale=5.0)[0]
        t2 = T.nn.utils.clip_grad_norm_(single, 0.5, norm_type=1.0, foreach=foreach)
        gen_total = T.nn.utils.clip_grad_norm_((p for p in params_with_grads(T)), 0.3)
        out.append((float(t1), grads(ps), float(t2), to_numpy(single.grad), float(gen_total)))
    t, x = out
    np.testing.assert_allclose([x[0], x[2], x[4]], [t[0], t[2], t[4]], rtol=1e-5)
    for a, b in zip(t[1], x[1]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(x[3], t[3], rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_empty():
    for T in (torch, torchish):
        total = T.nn.utils.clip_grad_norm_([], 1.0)
        assert float(total) == 0.0 and total.shape == ()
        with pytest.warns(UserWarning, match="empty generator"):
            T.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        assert float(T.nn.utils.clip_grad_norm_([T.nn.Parameter(T.ones(2))], 1.0)) == 0.0


def test_clip_grad_norm_nonfinite():
    msgs = []
    for T in (torch, torchish):
        ps = params_with_grads(T, nan=True)
        with pytest.raises(RuntimeError) as info:
            T.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
        msgs.append(str(info.value))
        np.testing.assert_array_equal(grads(ps)[0], arr(3, 4, seed=10))  # nothing was scaled
    assert msgs[1] == msgs[0]
    out = []
    for T in (torch, torchish):
        ps = params_with_grads(T, nan=True)
        total = T.nn.utils.clip_grad_norm_(ps, 1.0)
        out.append((float(total), grads(ps)))
    assert np.isnan(out[0][0]) and np.isnan(out[1][0])
    for a, b in zip(out[0][1], out[1][1]):
        np.testing.assert_array_equal(np.isnan(b), np.isnan(a))


def test_get_total_norm_and_clip_grads_with_norm():
    out = []
    for T in (torch, torchish):
        ps = params_with_grads(T)
        total = T.nn.utils.get_total_norm([p.grad for p in ps], norm_type=3.0)
        T.nn.utils.clip_grads_with_norm_(ps, 0.2, total)
        out.append((float(total), grads(ps)))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5)
    for a, b in zip(out[0][1], out[1][1]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


def test_deprecated_clip_grad_norm_warns():
    ps = params_with_grads(torchish)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        torchish.nn.utils.clip_grad_norm(ps, 1.0)


@pytest.mark.parametrize("clip", [0.1, 0.5, 2])
def test_clip_grad_value_matches_torch(clip):
    out = []
    for T in (torch, torchish):
        ps = params_with_grads(T, scale=2.0, none_at=2)
        assert T.nn.utils.clip_grad_value_(ps, clip) is None
        single = params_with_grads(T)[0]
        T.nn.utils.clip_grad_value_(single, clip, foreach=False)
        out.append(grads(ps) + [to_numpy(single.grad)])
    for a, b in zip(*out):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(b, a)


def test_clipping_leaves_params_and_graph_alone():
    ps = params_with_grads(torchish, scale=4.0)
    before = [to_numpy(p) for p in ps]
    grads_before = [p.grad for p in ps]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torchish.nn.utils.clip_grad_norm_(ps, 0.5)
    assert all(p.grad is g for p, g in zip(ps, grads_before))  # in place
    assert all(not p.grad.requires_grad and p.grad.grad_fn is None for p in ps)
    for p, b in zip(ps, before):
        np.testing.assert_array_equal(to_numpy(p), b)


def test_parameters_to_vector_and_back():
    out = []
    for T in (torch, torchish):
        ps = params_with_grads(T)
        vec = T.nn.utils.parameters_to_vector(ps)
        ids = [id(p) for p in ps]
        T.nn.utils.vector_to_parameters(vec * 2 + 1, ps)
        out.append((to_numpy(vec), [to_numpy(p) for p in ps], [id(p) for p in ps] == ids,
                    [p.requires_grad for p in ps], vec.requires_grad, type(vec.grad_fn).__name__))
    t, x = out
    np.testing.assert_allclose(x[0], t[0])
    for a, b in zip(t[1], x[1]):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    assert x[2:5] == t[2:5]


def test_vector_to_parameters_type_error():
    msgs = []
    for T in (torch, torchish):
        with pytest.raises(TypeError) as info:
            T.nn.utils.vector_to_parameters([1.0, 2.0], [T.nn.Parameter(T.ones(2))])
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


def test_parameters_to_vector_is_differentiable():
    ps = params_with_grads(torchish)
    for p in ps:
        p.grad = None
    (torchish.nn.utils.parameters_to_vector(ps) * 3).sum().backward()
    for p in ps:
        np.testing.assert_array_equal(to_numpy(p.grad), np.full(tuple(p.shape), 3.0, np.float32))
