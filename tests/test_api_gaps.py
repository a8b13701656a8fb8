"""Tensor methods and top-level names that round out PyTorch's API: strided views, resize/set_, callables applied
element by element, geqrf/ormqr, the top-level in-place functions, layouts, return types and global flags."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

from oracle import arr, check, check_raises, needs_torch, same_error, torch

import torchish

pytestmark = needs_torch


def _geom(lib, t):
    return t, tuple(t.shape), t.stride(), t.storage_offset()


# ----------------------------------------------------------------------------------------------------------------
# as_strided family


@pytest.mark.parametrize("size,stride,offset", [((2, 2), (1, 2), 1), ((3,), (2,), None), ((2, 2), (1, 1), 0)])
def test_as_strided(size, stride, offset):
    check(lambda T, x: x.as_strided(size, stride, offset), [arr(6)])


def test_as_strided_of_view_reads_storage():
    check(lambda T, x: _geom(T, (x * 1)[2:].as_strided((2,), (1,))), [arr(6)])
    # outside the view's own elements: the values are the storage's (PyTorch's gradient there is zero, torchish's
    # reaches the base: see the report in torchish/ops/strided.py)
    check(lambda T, x: _geom(T, (x * 1)[2:].as_strided((2,), (1,), 0)), [arr(6)], grad=False)


def test_as_strided_writes_through():
    def fn(T, x):
        y = x * 1
        y.as_strided((2, 2), (1, 2)).mul_(10)
        return y
    check(fn, [arr(6)])


def test_as_strided_inplace():
    def fn(T, x):
        y = (x * 1).detach()
        y.as_strided_((2, 2), (1, 2), 1)
        return _geom(T, y)
    check(fn, [arr(6)], grad=False)


def test_as_strided_scatter():
    check(lambda T, x, s: T.as_strided_scatter(x, s, (2, 2), (1, 2)), [arr(6), arr(2, 2, seed=1)])
    # (PyTorch's result keeps the input's strides (3, 1) and offset 1; torchish's is a contiguous new tensor)
    check(lambda T, x, s: T.as_strided_scatter(x.view(2, 3)[:, 1:], s, (2, 2), (1, 2)),
          [arr(6), arr(2, 2, seed=1)], grad=False)


@pytest.mark.parametrize("fn", [
    lambda T: T.arange(6.).as_strided((10,), (1,)),
    lambda T: T.arange(6.).as_strided((2,), (-1,), 3),
    lambda T: T.arange(6.).as_strided((2,), (1,), -1),
    lambda T: T.arange(6.).as_strided((2, 2), (1,)),
    lambda T: T.as_strided_scatter(T.arange(6.), T.ones(3), (2, 2), (1, 2)),
    lambda T: T.arange(6.).as_strided((2, 2), (0, 1)).add_(1),
    lambda T: T.ones(2, requires_grad=True).as_strided_((2,), (1,)),
])
def test_as_strided_errors(fn):
    check_raises(fn)


def test_empty_strided_keeps_its_strides_storage_and_aliasing():
    def f(T):
        out = []
        for size, stride in [((2, 3), (1, 2)), ((2, 3, 4), (12, 1, 3)), ((2, 3), (10, 1)), ((2, 2), (1, 1)),
                             ((2, 3), (0, 1)), ((0, 3), (5, 7)), ((), ())]:
            t = T.empty_strided(size, stride).fill_(2.0)
            out.append((t.stride(), t.is_contiguous(), t.untyped_storage().nbytes(), t._base is None,
                        (t + 1).stride(), t.clone().stride() if t.numel() else None, t.sum()))
        gaps = T.empty_strided((2, 3), (10, 1)).fill_(2.0)
        gaps[1, 2] = 5.0  # (a storage with gaps: the other elements keep their value)
        overlap = T.empty_strided((2, 2), (1, 1)).zero_()
        overlap[0, 1] = 7.0  # (one memory location: [0, 1] and [1, 0] both read it)
        leaf = T.empty_strided((2, 3), (1, 2), dtype=T.float64, requires_grad=True)
        (leaf * 2).sum().backward()
        return out, gaps, overlap, leaf.is_leaf, leaf.stride(), leaf.grad, leaf.grad.stride()
    check(f, [], grad=False)
    for bad in [((2, 3), (1,)), ((2, -1), (1, 1)), ((2, 3), (-1, 1))]:
        same_error(lambda T: T.empty_strided(*bad))


def test_strided_creation_and_dim_order():
    check(lambda T: T.arange(4.).new_empty_strided((2, 2), (1, 2), dtype=T.int32).stride(), [], grad=False)
    check(lambda T: T.empty_permuted((2, 3, 4), (0, 2, 1)).stride(), [], grad=False)
    check(lambda T: (T.empty(2, 3, 4).permute(2, 0, 1).dim_order(), T.ones(3).dim_order()), [], grad=False)
    check_raises(lambda T: T.empty_permuted((2, 3), (1, 1)))
    check_raises(lambda T: T.empty(2, 1, 4).dim_order(ambiguity_check=True))


# ----------------------------------------------------------------------------------------------------------------
# resize / set_


@pytest.mark.parametrize("size", [(2, 2), (6,), (3, 2)])
def test_resize_keeps_leading_data(size):
    check(lambda T, x: _geom(T, x.detach().clone().resize_(*size)), [arr(6)], grad=False)


def test_resize_grows_and_views():
    def fn(T, x):
        b = x.detach().clone()
        v = b[1:]
        v.resize_(8)
        return v[:5], b, v.storage_offset(), v.shape
    check(fn, [arr(6)], grad=False)
    check(lambda T, x, y: x.detach().clone().resize_as_(y).shape, [arr(6), arr(2, 2)], grad=False)


def test_resize_autograd_copy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda T, x: x.resize(3, 2), [arr(6)])
        check(lambda T, x, y: x.resize_as(y), [arr(6), arr(2, 3)])
        check_raises(lambda T: T.ones(6).resize(4))


@pytest.mark.parametrize("fn", [
    lambda T: T.ones(2, requires_grad=True).resize_(3),
    lambda T: T.ones(2, requires_grad=True).resize_as_(T.ones(3)),
    lambda T: T.ones(2).resize_(2, -1),
    lambda T: T.ones(2, requires_grad=True).set_(T.ones(3)),
])
def test_resize_set_errors(fn):
    check_raises(fn)


def test_set_aliases_source():
    def fn(T, x):
        src = x.detach().clone()
        z = T.zeros(2)
        z.set_(src)
        src[0] = 7
        return z, z.is_set_to(src), src.is_set_to(src[:]), src.is_set_to(src.view(2, 3))
    check(fn, [arr(6)], grad=False)
    check(lambda T, x: _geom(T, T.zeros(2).set_(x.detach(), 1, (2,), (2,))), [arr(6)], grad=False)
    check(lambda T: _geom(T, T.zeros(2).set_()), [], grad=False)


def test_share_memory():
    check(lambda T: (T.ones(2).is_shared(), T.ones(2).share_memory_().is_shared()), [], grad=False)


# ----------------------------------------------------------------------------------------------------------------
# Python callables


def test_apply_map():
    check(lambda T, x: x.detach().clone().apply_(lambda v: v * 2 + 1), [arr(2, 3)], grad=False)
    check(lambda T: T.tensor([1, 2]).apply_(lambda v: v * 2.5), [], grad=False)
    check(lambda T, x, y: x.detach().clone().map_(y.detach(), lambda a, b: a - b), [arr(2, 3), arr(3, seed=1)],
          grad=False)
    check(lambda T, x, y: x.detach().clone().map2_(y.detach(), y.detach(), lambda a, b, c: a * b + c),
          [arr(3), arr(3, seed=1)], grad=False)


@pytest.mark.parametrize("fn", [
    lambda T: T.ones(2, requires_grad=True).apply_(lambda v: v),
    lambda T: T.ones(2).map_(T.ones(2, requires_grad=True), lambda a, b: a),
    lambda T: T.ones(2).map2_(T.ones(2), T.ones(2, requires_grad=True), lambda a, b, c: a),
    lambda T: T.ones(3).map_(T.ones(3, dtype=T.int64), lambda a, b: a),
    lambda T: T.ones(2).map_(T.ones(3), lambda a, b: a),
    lambda T: T.ones(2).apply_(lambda v: "s"),
    lambda T: T.ones(2).apply_(5),
])
def test_apply_map_errors(fn):
    check_raises(fn)


# ----------------------------------------------------------------------------------------------------------------
# methods spelled after functions


def test_method_spellings():
    check(lambda T, x, a, b: x.clone().baddbmm_(a, b, beta=0.5, alpha=2), [arr(2, 2, 2), arr(2, 2, 3, seed=1),
                                                                          arr(2, 3, 2, seed=2)])
    check(lambda T, x: x.hardshrink(0.3), [arr(5)])
    check(lambda T, x, w: x.prelu(w), [arr(2, 3), arr(1, seed=1)])
    check(lambda T, x: (x.is_same_size(x), T.is_same_size(x, x[:1])), [arr(2, 3)], grad=False)


def test_lu_solve_method():
    a = arr(3, 3) + 3 * np.eye(3, dtype=np.float32)

    def fn(T, a, b):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            LU, piv = T.linalg.lu_factor(a)
            return b.lu_solve(LU, piv), T.lu_solve(b, LU, piv)
    check(fn, [a, arr(3, 2, seed=1)])


def test_nonzero_static():
    check(lambda T, x: T.nonzero_static(x, size=4), [np.array([0, 1, 0, 2])], grad=False)
    check(lambda T, x: x.nonzero_static(size=1, fill_value=5), [np.array([[0, 1], [1, 1]])], grad=False)
    check(lambda T, x: T.nonzero_static(x, size=2), [np.array(3)], grad=False)
    check_raises(lambda T: T.nonzero_static(T.tensor([1]), size=-1))


def test_as_subclass():
    def fn(T, x):
        y = (x * 2).as_subclass(T.nn.Parameter)
        return y, type(y).__name__, type(y.grad_fn).__name__
    check(fn, [arr(3)])
    check_raises(lambda T: T.ones(2).as_subclass(int))


def test_constant_predicates():
    names = ("is_mps", "is_xpu", "is_ipu", "is_xla", "is_maia", "is_mtia", "is_vulkan", "is_mkldnn", "is_sparse_csr",
             "is_nested", "name")
    check(lambda T: [getattr(T.ones(2), n) for n in names] + [T.ones(2).is_distributed()], [], grad=False)
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert torchish.ones(2).volatile is False


def test_chalf_unsupported():
    with pytest.raises(TypeError, match="complex32"):
        torchish.ones(2).chalf()


# ----------------------------------------------------------------------------------------------------------------
# geqrf / ormqr


@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (2, 2, 2)])
def test_geqrf(shape):
    check(lambda T, a: tuple(T.geqrf(a.detach())) + (type(T.geqrf(a.detach())).__name__,),
          [arr(*shape, dtype=np.float64)], grad=False)


def test_geqrf_complex_and_errors():
    a = arr(3, 2, dtype=np.float64) + 1j * arr(3, 2, seed=1, dtype=np.float64)
    check(lambda T, a: tuple(a.geqrf()), [a], grad=False)
    check_raises(lambda T: T.geqrf(T.ones(3)))
    check_raises(lambda T: T.geqrf(T.ones(2, 2, dtype=T.int64)))
    check_raises(lambda T: T.geqrf(T.ones(2, 2, requires_grad=True))[0].sum().backward())


@pytest.mark.parametrize("left,transpose", [(True, False), (True, True), (False, True)])
def test_ormqr(left, transpose):
    def fn(T, a, c):
        h, tau = T.geqrf(a.detach())
        return T.ormqr(h, tau, c if left else c.mT, left, transpose)
    check(fn, [arr(3, 2, dtype=np.float64), arr(3, 2, seed=1, dtype=np.float64)])


@pytest.mark.parametrize("fn", [
    lambda T: T.ormqr(*T.geqrf(T.ones(3, 2)), T.ones(2, 2)),
    lambda T: T.ormqr(T.geqrf(T.ones(3, 2))[0], T.ones(3), T.ones(3, 2)),
    lambda T: T.ormqr(*T.geqrf(T.ones(3, 2)), T.ones(3, 2, dtype=T.float64)),
])
def test_ormqr_errors(fn):
    check_raises(fn)


# ----------------------------------------------------------------------------------------------------------------
# top-level functions and names


def test_toplevel_inplace_functions_cover_torch():
    missing = [n for n in dir(torch) if n.endswith("_") and not n.startswith("_") and hasattr(torch.Tensor, n)
               and hasattr(torchish.Tensor, n) and not hasattr(torchish, n)]
    assert missing == []


@pytest.mark.parametrize("name,args", [("abs_", ()), ("sin_", ()), ("clamp_", (-0.5, 0.5)), ("clamp_min_", (0.1,)),
                                       ("clip_", (None, 0.2)), ("fill_", (3.0,)), ("zero_", ()),
                                       ("nan_to_num_", ()), ("logit_", (0.1,)), ("neg_", ())])
def test_toplevel_inplace(name, args):
    def fn(T, x):
        y = x.detach().clone()
        out = getattr(T, name)(y, *args)
        return out, y, out is y
    check(fn, [arr(2, 3)], grad=False)


def test_toplevel_queries():
    check(lambda T, x: (T.fill(x, 2.0), T.is_inference(x), T.is_signed(x), T.get_device(x),
                        T.is_signed(x.to(T.uint8))), [arr(3)])
    check(lambda T, x: (T.xlogy_(x.detach().abs().clone(), 2.0), T.gcd_(T.tensor([4, 6]), T.tensor([6, 9])),
                        T.index_put_(T.zeros(3), (T.tensor([1]),), T.tensor(5.0))), [arr(3)], grad=False)


def test_layouts():
    for name in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn",
                 "jagged"):
        assert repr(getattr(torchish, name)) == repr(getattr(torch, name))
        assert isinstance(getattr(torchish, name), torchish.layout)
    assert torchish.ones(2).layout is torchish.strided
    assert pickle.loads(pickle.dumps(torchish.strided)) is torchish.strided
    check_raises(lambda T: T.layout())
    assert torchish.newaxis is None and torch.newaxis is None


def test_return_types():
    x = torchish.tensor([[3.0, 1.0], [2.0, 4.0]])
    assert isinstance(torchish.max(x, 0), torchish.return_types.max)
    assert isinstance(torchish.min(x, 0), torchish.return_types.min)
    assert isinstance(torchish.sort(x), torchish.return_types.sort)
    assert isinstance(torchish.topk(x, 1), torchish.return_types.topk)
    assert isinstance(torchish.linalg.qr(x), torchish.return_types.linalg_qr)
    assert isinstance(torchish.geqrf(x), torchish.return_types.geqrf)
    assert torchish.return_types.max.__name__ == torch.return_types.max.__name__
    with pytest.raises(AttributeError):
        torchish.return_types.not_a_type  # noqa: B018


def test_global_flags():
    check(lambda T: (T.is_warn_always_enabled(), T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()), [],
          grad=False)
    for T in (torch, torchish):
        T.set_warn_always(True)
        assert T.is_warn_always_enabled()
        T.set_warn_always(False)
        T.set_anomaly_enabled(True, False)
        assert T.is_anomaly_enabled() and not T.is_anomaly_check_nan_enabled()
        T.set_anomaly_enabled(False)
        assert not T.is_anomaly_enabled()
    assert torchish.set_flush_denormal(False) == torch.set_flush_denormal(False)


def test_frombuffer():
    buf = np.array([1, 2, 3], np.int32).tobytes()
    check(lambda T: T.frombuffer(bytearray(buf), dtype=T.int32), [], grad=False)
    check(lambda T: T.frombuffer(bytearray(buf), dtype=T.int32, count=1, offset=4), [], grad=False)
    for kw in ({"dtype": "float32"}, {"count": 4}, {"offset": 12}):
        kw = dict(kw)
        dt = kw.pop("dtype", None)
        check_raises(lambda T: T.frombuffer(bytearray(buf[:7] if dt else buf), dtype=T.float32 if dt else T.int32,
                                            **kw))


@needs_torch
def test_accelerator_api_removed_functions_and_func_helpers():
    for lib in (torch, torchish):
        acc = lib.accelerator
        assert acc.is_available() is lib.cuda.is_available() and acc.device_count() == lib.cuda.device_count()
        if not acc.is_available():
            assert acc.current_accelerator() is None
            for call in (acc.current_device_index, acc.synchronize, acc.empty_cache, acc.memory_allocated,
                         lambda: acc.set_device_index(0)):
                with pytest.raises(RuntimeError, match="none is available"):
                    call()
        with acc.device_index(None):
            pass
        assert lib.GradScaler is lib.amp.GradScaler
        x = lib.ones(2)
        assert x.const_data_ptr() == x.data_ptr()
    for name, args in (("eig", 1), ("symeig", 1), ("lstsq", 2), ("solve", 2)):
        msgs = []
        for lib in (torch, torchish):
            for call in (lambda: getattr(lib, name)(*[lib.eye(2)] * args),
                         lambda: getattr(lib.eye(2), name)(*[lib.eye(2)] * (args - 1))):
                with pytest.raises(RuntimeError) as info:
                    call()
                msgs.append(str(info.value))
        assert msgs[2:] == msgs[:2], name
    got = []
    for lib in (torch, torchish):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Sequential(lib.nn.BatchNorm1d(4)))
        assert lib.func.replace_all_batch_norm_modules_(m) is m
        got.append((sorted(m.state_dict()), m[1].running_mean, m[2][0].track_running_stats))
        f = lib.func.functionalize(lambda t: t.add_(1) * 2)
        got.append(f(lib.ones(2)).tolist())
        with pytest.raises(RuntimeError, match="invalid argument for remove"):
            lib.func.functionalize(f, remove="views")
    assert got[:2] == got[2:]


@needs_torch
def test_cuda_queries_scripts_make_unguarded_behave_as_a_cpu_only_pytorch():
    calls = [lambda C: C.get_rng_state_all(), lambda C: C.set_rng_state_all([]), lambda C: C.get_device_capability(),
             lambda C: C.get_device_properties(0), lambda C: C.memory_cached(), lambda C: C.max_memory_cached(),
             lambda C: C.mem_get_info(), lambda C: C.get_arch_list(), lambda C: C.is_tf32_supported(),
             lambda C: C.init(), lambda C: C.has_half, lambda C: C.default_generators]
    if torchish.cuda.is_available():
        pytest.skip("compares with a CPU-only PyTorch")
    for call in calls:
        got = []
        for lib in (torch, torchish):
            try:
                got.append(repr(call(lib.cuda)))
            except AssertionError as e:
                got.append(str(e))
        assert got[0] == got[1]
