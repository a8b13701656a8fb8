"""Regression tests from probing error parity and the less common corners of the Tensor API against PyTorch: where
PyTorch raises, torchish raises the same builtin exception type; where it accepts a call, so does torchish."""
import warnings

import numpy as np
import pytest

from oracle import arr, check_raises, needs_torch, same, same_error, torch, torchish

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore::UserWarning")]


def _t(lib, *shape, seed=0):
    return lib.tensor(arr(*shape, seed=seed))


def test_add_deprecated_alpha_with_keyword_other():
    # old optimizer code: p.data.add_(-lr, other=grad) is the deprecated add(Number alpha, Tensor other)
    def f(lib):
        x, y = _t(lib, 3), _t(lib, 3, seed=1)
        c = x.clone()
        c.add_(0.5, other=y)
        i = lib.tensor([1, 2, 3])
        return [x.add(2, other=y), lib.add(x, 2, other=y), c, x.sub(2, other=y), x.add(2, y), x.add(2, other=3),
                i.add(2, other=3.5), lib.add(2, other=y), lib.add(x, y, alpha=2)]
    same(f)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _t(torchish, 3).add(2, other=_t(torchish, 3))
    assert any("deprecated" in str(m.message) for m in w)
    for bad in (lambda lib: _t(lib, 3).add(_t(lib, 3), 2),
                lambda lib: _t(lib, 3).add(2, other=_t(lib, 3), alpha=3),
                lambda lib: _t(lib, 3).add(_t(lib, 3), other=_t(lib, 3)),
                lambda lib: lib.subtract(_t(lib, 3), 2, other=_t(lib, 3)),
                lambda lib: lib.add(_t(lib, 3))):
        check_raises(bad)


def test_split_family_refuses_indices_or_sections_keyword():
    # the documentation's parameter name is no keyword of PyTorch's overloads
    for bad in (lambda lib: lib.hsplit(_t(lib, 4, 4), indices_or_sections=2),
                lambda lib: lib.vsplit(_t(lib, 4, 4), indices_or_sections=2),
                lambda lib: lib.dsplit(_t(lib, 2, 2, 4), indices_or_sections=2),
                lambda lib: lib.tensor_split(_t(lib, 6), indices_or_sections=3),
                lambda lib: _t(lib, 6).tensor_split(indices_or_sections=3),
                lambda lib: lib.tensor_split(_t(lib, 6), 3, 0, dim=0),
                lambda lib: lib.tensor_split(_t(lib, 6), 2, 0, 1),
                lambda lib: lib.hsplit(_t(lib, 4, 4), 2, 1),
                lambda lib: lib.tensor_split(_t(lib, 6))):
        check_raises(bad)
    same(lambda lib: [lib.tensor_split(input=_t(lib, 6), sections=3), lib.tensor_split(_t(lib, 6, 4), 3, dim=1),
                      lib.tensor_split(_t(lib, 6, 4), [1, 2], 1), lib.tensor_split(_t(lib, 6, 4), indices=[2], dim=1),
                      lib.hsplit(input=_t(lib, 4, 4), sections=2), _t(lib, 4, 4).hsplit([1]),
                      lib.tensor_split(_t(lib, 6), lib.tensor([1, 3])), _t(lib, 4, 6).tensor_split(2, 1)])


def test_storages_share_and_size_as_torch():
    def f(lib):
        x = _t(lib, 4, 3)
        p = x.untyped_storage().data_ptr()
        views = (x[1:], x.t(), x.view(-1), x.detach(), x[:, 1], x.reshape(2, 6), x[::2].expand(2, 2, 3))
        copies = (x.clone(), x.t().contiguous(), x + 0)
        s = x.untyped_storage()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ts = x[2].double().storage()
            tv = x[1:].storage()
        return [[v.untyped_storage().data_ptr() == p for v in views],
                [c.untyped_storage().data_ptr() == p for c in copies], s.nbytes(), s.size(), len(s), s.element_size(),
                x[1:].untyped_storage().nbytes(), x[1:].storage_offset(),
                x[1:].data_ptr() - p, ts.size(), ts.nbytes(), ts.element_size(), str(ts.dtype), ts.tolist(), ts[-1],
                tv.size(), tv.data_ptr() == p, tv.untyped().data_ptr() == p, s.tolist()[:8], s.type(), tv.type(),
                lib.empty(0).untyped_storage().nbytes(), lib.empty(0).untyped_storage().data_ptr(),
                isinstance(s, lib.UntypedStorage), isinstance(tv, lib.TypedStorage), lib.UntypedStorage(5).nbytes()]
    same(f)
    check_raises(lambda lib: lib.ones(3).storage()[3])
    check_raises(lambda lib: lib.ones(3).untyped_storage()[12])


def test_in_place_ops_keep_the_address():
    # PyTorch writes in place into the same memory: data_ptr() and the storage's address stay; x = x + 1 moves
    def f(lib):
        x = lib.arange(8.)
        p = x.data_ptr()
        x.add_(1)
        x.mul_(2)
        x[0] = 5
        x.clamp_(max=6.0)
        d, v = x.detach(), x[1:]
        out = [x.data_ptr() == p, x.untyped_storage().data_ptr() == p, d.data_ptr() == p, v.data_ptr() - p]
        x.unsqueeze_(0)
        y = x + 1
        out += [x.data_ptr() == p, y.data_ptr() == p]
        z = lib.arange(8.)
        out += [z[2:].view(lib.int16).storage_offset(), z[2:].view(lib.int16).data_ptr() - z.data_ptr(),
                z.view(lib.float64)[1:].data_ptr() - z.data_ptr()]
        w = lib.nn.Linear(3, 3)
        opt = lib.optim.SGD(w.parameters(), lr=0.1)
        q = w.weight.data_ptr()
        w(lib.ones(2, 3)).sum().backward()
        opt.step()
        return out + [w.weight.data_ptr() == q]
    same(f)


_SPARSE_OPTIMIZERS = [("SGD", {}), ("SGD", {"momentum": 0.9}), ("SGD", {"weight_decay": 0.1}), ("Adam", {}),
                      ("AdamW", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("Adagrad", {}),
                      ("Adagrad", {"weight_decay": 0.1}), ("Adadelta", {}), ("RMSprop", {}), ("Rprop", {}),
                      ("ASGD", {}), ("SparseAdam", {}), ("Adafactor", {})]


@pytest.mark.parametrize("name,kw", _SPARSE_OPTIMIZERS)
def test_optimizers_refuse_sparse_gradients_as_torch(name, kw):
    # an Embedding(sparse=True) gives sparse gradients in PyTorch: most optimizers refuse them at step()
    def f(lib):
        emb = lib.nn.Embedding(5, 2, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(arr(5, 2)))
        opt = getattr(lib.optim, name)(emb.parameters(), lr=0.1, **kw)
        emb(lib.tensor([1, 2])).sum().backward()
        opt.step()
        return emb.weight[0]
    try:
        f(torch)
    except RuntimeError:
        check_raises(f)
    else:
        same(f)


def test_out_of_matmul_and_linalg_ops_must_have_the_result_dtype():
    # structured kernels: out= of another dtype raises (elementwise ops cast instead); linalg ops write into out
    def f64(lib, *shape):
        return lib.empty(*shape, dtype=lib.float64)

    A, v, B = (lambda lib: _t(lib, 2, 2)), (lambda lib: _t(lib, 2)), (lambda lib: _t(lib, 2, 2, 2))
    for bad in (lambda lib: lib.mm(A(lib), A(lib), out=f64(lib, 2, 2)),
                lambda lib: lib.matmul(B(lib), B(lib), out=f64(lib, 2, 2, 2)),
                lambda lib: lib.matmul(v(lib), v(lib), out=f64(lib)),
                lambda lib: lib.bmm(B(lib), B(lib), out=f64(lib, 2, 2, 2)),
                lambda lib: lib.mv(A(lib), v(lib), out=f64(lib, 2)),
                lambda lib: lib.addmm(A(lib), A(lib), A(lib), out=f64(lib, 2, 2)),
                lambda lib: lib.baddbmm(B(lib), B(lib), B(lib), out=f64(lib, 2, 2, 2)),
                lambda lib: lib.tensordot(A(lib), A(lib), dims=1, out=f64(lib, 2, 2)),
                lambda lib: lib.mm(A(lib).long(), A(lib).long(), out=lib.empty(2, 2)),
                lambda lib: lib.linalg.inv(A(lib), out=f64(lib, 2, 2)),
                lambda lib: lib.linalg.svd(A(lib), out=(f64(lib, 2, 2), lib.empty(2), lib.empty(2, 2))),
                lambda lib: lib.linalg.svd(A(lib), out=lib.empty(2, 2)),
                lambda lib: lib.linalg.svd(A(lib), out=(lib.empty(2, 2), lib.empty(2))),
                lambda lib: lib.linalg.inv(A(lib), out=[lib.empty(2, 2)]),
                lambda lib: lib.linalg.vector_norm(v(lib), out=f64(lib)),
                lambda lib: lib.linalg.inv_ex(A(lib), out=(lib.empty(2, 2), lib.empty((), dtype=lib.long)))):
        check_raises(bad)

    def ok(lib):
        M = _t(lib, 3, 3) + 3 * lib.eye(3)
        outs = [lib.empty(3, 3), lib.empty(0), lib.empty(3, 3), lib.empty(()), lib.empty(3, 3), lib.empty(3)]
        res = [lib.linalg.inv(M, out=outs[0]), lib.matmul(M, M, out=outs[1]), lib.linalg.cholesky(M @ M.T, out=outs[2]),
               lib.linalg.det(M, out=outs[3]), lib.linalg.pinv(M, out=outs[4]),
               lib.linalg.solve(M, lib.ones(3), out=outs[5])]
        svd_out = (lib.empty(3, 3), lib.empty(3), lib.empty(3, 3))
        svd = lib.linalg.svd(M, out=[*svd_out])
        qr = lib.linalg.qr(M, out=(lib.empty(3, 3), lib.empty(3, 3)))
        return ([r is o for r, o in zip(res, outs)], outs, [a is b for a, b in zip(svd, svd_out)], svd.S,
                qr.R.abs(), lib.addr(A(lib), v(lib), v(lib), out=f64(lib, 2, 2)),
                lib.frexp(v(lib), out=(lib.empty(2), lib.empty(2, dtype=lib.int32))))
    same(ok, rtol=1e-4, atol=1e-5)


def test_factory_functions_write_into_out():
    # zeros/arange/linspace/eye/full/rand... with out=: the result is made in out's dtype and out is returned
    def f(lib):
        outs = [lib.empty(3, dtype=lib.long), lib.empty(5), lib.empty(0, dtype=lib.int32), lib.empty(3, dtype=lib.long),
                lib.empty(0), lib.empty(3, dtype=lib.float64), lib.empty(2, 2, dtype=lib.int32)]
        res = [lib.zeros(3, out=outs[0]), lib.arange(5, out=outs[1]), lib.arange(1, 4, out=outs[2]),
               lib.linspace(0, 4, 3, out=outs[3]), lib.eye(3, out=outs[4]), lib.full((3,), 2, out=outs[5]),
               lib.ones(2, 2, out=outs[6])]
        r = lib.empty(4, dtype=lib.float64)
        return ([a is b for a, b in zip(res, outs)], outs, lib.rand(4, out=r) is r, r.dtype,
                lib.randint(5, (3,), out=lib.empty(3)).dtype, lib.randperm(4, out=lib.empty(4)).sort().values)
    same(f)
    for bad in (lambda lib: lib.zeros(3, dtype=lib.float32, out=lib.empty(3, dtype=lib.long)),
                lambda lib: lib.randn(3, out=lib.empty(3, dtype=lib.long)),
                lambda lib: lib.zeros(3, out=lib.empty(3, requires_grad=True)),
                lambda lib: lib.multinomial(lib.ones(3), 2, out=lib.empty(2, dtype=lib.int32))):
        check_raises(bad)


def test_out_dtype_checks_of_index_sort_and_reduction_ops():
    def f64(lib, *shape):
        return lib.empty(*shape, dtype=lib.float64)

    def i32(lib, *shape):
        return lib.empty(*shape, dtype=lib.int32)

    A = (lambda lib: _t(lib, 2, 3))
    for bad in (lambda lib: lib.sort(A(lib), 1, out=(f64(lib, 2, 3), lib.empty(2, 3, dtype=lib.long))),
                lambda lib: lib.sort(A(lib), 1, out=(lib.empty(2, 3), i32(lib, 2, 3))),
                lambda lib: lib.topk(A(lib), 2, out=(f64(lib, 2, 2), lib.empty(2, 2, dtype=lib.long))),
                lambda lib: lib.max(A(lib), 1, out=(lib.empty(2), i32(lib, 2))),
                lambda lib: lib.kthvalue(A(lib), 1, 1, out=(f64(lib, 2), lib.empty(2, dtype=lib.long))),
                lambda lib: lib.argmax(A(lib), 1, out=i32(lib, 2)),
                lambda lib: lib.tril(A(lib), out=f64(lib, 2, 3)),
                lambda lib: lib.diag(_t(lib, 2), out=f64(lib, 2, 2)),
                lambda lib: lib.clamp(A(lib), 0, 1, out=f64(lib, 2, 3)),
                lambda lib: lib.clamp(A(lib), 0, 1, out=lib.empty(2, 3, dtype=lib.long)),
                lambda lib: lib.cat([A(lib), A(lib)], out=i32(lib, 4, 3)),
                lambda lib: lib.stack([A(lib), A(lib)], out=lib.empty(2, 2, 3, dtype=lib.long)),
                lambda lib: lib.histc(A(lib), out=f64(lib, 100)),
                lambda lib: lib.searchsorted(lib.arange(3.), A(lib), out=i32(lib, 2, 3)),
                lambda lib: lib.gather(A(lib), 1, lib.zeros(2, 1, dtype=lib.long), out=f64(lib, 2, 1)),
                lambda lib: lib.index_select(A(lib), 0, lib.tensor([0]), out=f64(lib, 1, 3)),
                lambda lib: lib.take(A(lib), lib.tensor([0]), out=f64(lib, 1)),
                lambda lib: lib.masked_select(A(lib), A(lib) > 0, out=f64(lib, 0)),
                lambda lib: lib.nonzero(A(lib), out=i32(lib, 0)),
                lambda lib: lib.logcumsumexp(A(lib), 1, out=f64(lib, 2, 3)),
                lambda lib: lib.cummax(A(lib), 1, out=(f64(lib, 2, 3), lib.empty(2, 3, dtype=lib.long))),
                lambda lib: lib.aminmax(A(lib), dim=1, out=(f64(lib, 2), f64(lib, 2)))):
        check_raises(bad)

    def ok(lib):  # these cast into out, or take out= at all
        x = A(lib)
        outs = [f64(lib, 2, 3), f64(lib, 4, 3), f64(lib, 2), lib.empty(2, 3), f64(lib, 2, 3)]
        res = [lib.clamp(x, lib.zeros(3), out=outs[0]), lib.cat([x.long(), x.long()], out=outs[1]),
               lib.sum(x, 1, out=outs[2]), lib.where(x > 0, x, -x, out=outs[3]), lib.lerp(x, x * 2, 0.5, out=outs[4])]
        cm = lib.cummax(x, 1, out=(lib.empty(2, 3), lib.empty(2, 3, dtype=lib.long)))
        mm = lib.aminmax(x, dim=1, out=(lib.empty(2), lib.empty(2)))
        return [r is o for r, o in zip(res, outs)], outs, cm.values, cm.indices, mm.min, mm.max
    same(ok)


def test_tensor_corners_raise_as_torch():
    for bad in (lambda lib: _t(lib, 3).H,                                     # H: matrices only
                lambda lib: _t(lib, 2, 2, 2).H,
                lambda lib: lib.ones(2, dtype=lib.bfloat16).numpy(),         # NumPy has no bfloat16
                lambda lib: np.asarray(lib.ones(2, dtype=lib.bfloat16)),
                lambda lib: _t(lib, 3, 2, 2).to(memory_format=lib.channels_last),
                lambda lib: _t(lib, 3, 2, 2).contiguous(memory_format=lib.channels_last),
                lambda lib: _t(lib, 2, 3, 2, 2).clone(memory_format=lib.channels_last_3d),
                lambda lib: lib.empty(3, 2, 2, memory_format=lib.channels_last),
                lambda lib: lib.zeros_like(_t(lib, 3, 2), memory_format=lib.channels_last),
                lambda lib: int(lib.tensor(1 + 2j)),                          # complex: only a real value converts
                lambda lib: float(lib.tensor([1 + 2j]))):
        check_raises(bad)
    same(lambda lib: [_t(lib, 2, 3).H, lib.tensor(2.0).H, (_t(lib, 2, 2) * 1j).H,
                      lib.ones(2, dtype=lib.bfloat16).tolist(), lib.ones(2, dtype=lib.bfloat16).float(),
                      _t(lib, 1, 3, 2, 2).to(memory_format=lib.channels_last).shape,
                      lib.empty(1, 2, 3, 4, memory_format=lib.channels_last).shape, int(lib.tensor(2 + 0j)),
                      float(lib.tensor(1.5 + 0j))])
    torchish.testing.assert_close(torchish.ones(2, dtype=torchish.bfloat16), torchish.ones(2, dtype=torchish.bfloat16))


def _set_params(lib, module):
    with lib.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(lib.tensor(arr(*p.shape, seed=i) * 0.5))
    return module


def test_training_loop_that_skips_a_malformed_batch():
    # probe program: a classifier's loop catches the RuntimeError of a batch with the wrong feature count
    def f(lib):
        model = _set_params(lib, lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3)))
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        crit = lib.nn.CrossEntropyLoss()
        rng = np.random.default_rng(0)
        losses, errors = [], []
        for step in range(4):
            x = lib.tensor(rng.standard_normal((6, 4 if step != 2 else 5)).astype(np.float32))
            y = lib.tensor(rng.integers(0, 3, 6))
            try:
                loss = crit(model(x), y)
            except RuntimeError as e:
                errors.append(type(e).__name__)
                continue
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, errors, model[0].weight
    same(f)


def test_loss_with_out_of_range_targets_keeps_earlier_gradients():
    # probe program: targets with a class index past the logits raise IndexError (nothing accumulates), -100 is
    # ignored
    def f(lib):
        model = _set_params(lib, lib.nn.Linear(3, 4))
        x = _t(lib, 5, 3)
        results = []
        for tgt in ([0, 1, 2, 3, 1], [0, 1, 2, 4, 1], [0, 1, -100, 3, 1]):
            try:
                loss = lib.nn.functional.cross_entropy(model(x), lib.tensor(tgt))
                loss.backward()
                results.append(round(loss.item(), 5))
            except (IndexError, RuntimeError) as e:
                results.append(type(e).__name__)
        return results, model.weight.grad
    same(f)


def test_max_min_take_other_by_keyword():
    same(lambda lib: [lib.max(_t(lib, 2, 3), other=_t(lib, 2, 3, seed=1)), _t(lib, 2, 3).min(other=_t(lib, 3, seed=2)),
                      lib.max(input=_t(lib, 2), other=_t(lib, 2, seed=3))])
    for bad in (lambda lib: lib.max(_t(lib, 2, 3), other=_t(lib, 2, 3), dim=1),
                lambda lib: lib.max(_t(lib, 2, 3), 1, out=lib.empty(2))):
        check_raises(bad)


def test_except_clause_naming_out_of_memory_error_lets_other_errors_pass():
    # scripts retry with a smaller batch under `except torch.cuda.OutOfMemoryError`; another error must pass through
    def f(lib):
        try:
            lib.ones(2) @ lib.ones(3)
        except lib.cuda.OutOfMemoryError:
            return "oom"
    check_raises(f)
    assert issubclass(torchish.OutOfMemoryError, RuntimeError) and torchish.cuda.OutOfMemoryError is torchish.OutOfMemoryError


def test_float_sequence_index_is_truncated_to_long():
    # PyTorch converts a Python/NumPy float sequence used as an index to long; a float tensor index is an error
    def f(lib):
        x = lib.arange(12.).view(3, 4)
        y = lib.zeros(3)
        y[[0.0, 2.9]] = 5.0
        return x[[0.0, 1.0]], x[[-1.5]], x[[0.0, 1.0], [1.0, 2.0]], x[np.array([1.7])], x[[True, 1.0]], y
    same(f)
    check_raises(lambda lib: lib.arange(3.)[lib.tensor([0.0])])


def test_kernel_dtype_errors_as_torch():
    # from a sweep of ops x dtypes against torch: the exception type where a kernel refuses a dtype
    c = (lambda lib: lib.tensor([[1 + 1j, 2], [3, 4]]))
    h = (lambda lib: lib.ones(3, 2, dtype=lib.float16))
    for bad in (lambda lib: lib.cross(lib.tensor([True, False, True]), lib.tensor([True, True, False]), dim=0),
                lambda lib: lib.cdist(h(lib), h(lib)), lambda lib: lib.cdist(h(lib).bfloat16(), h(lib).bfloat16()),
                lambda lib: lib.cdist(c(lib), c(lib)), lambda lib: lib.pdist(h(lib)), lambda lib: lib.pdist(c(lib)),
                lambda lib: lib.relu(c(lib)), lambda lib: lib.nn.functional.relu(c(lib)),
                lambda lib: lib.max(c(lib), 0), lambda lib: lib.min(c(lib), dim=0, keepdim=True),
                lambda lib: lib.max(c(lib)), lambda lib: lib.logaddexp2(c(lib), c(lib)),
                lambda lib: lib.unique(lib.tensor([1, 2, 1]), 0), lambda lib: lib.tensor([1, 2]).unique(True, 1),
                lambda lib: lib.unique(lib.tensor([1, 2]), dim=0, sorted=0),
                lambda lib: lib.nn.functional.glu(lib.ones(2, 4, dtype=lib.long)),
                lambda lib: lib.nn.functional.prelu(lib.ones(2, 4, dtype=lib.long), lib.ones(1, dtype=lib.long)),
                lambda lib: lib.nn.Hardtanh()(lib.ones(3, dtype=lib.uint8)),
                lambda lib: lib.ones(2, 3).select(0, 1.0), lambda lib: lib.ones(2, 3).select(0, True)):
        check_raises(bad)
    same(lambda lib: [lib.logaddexp(c(lib), c(lib)), lib.unique(lib.tensor([3, 1, 3]), True, True)])


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "bool", "float16"])
def test_pooling_of_integer_images_raises_as_torch(dtype):
    # a uint8 image batch handed to pooling: PyTorch's CPU kernels refuse most non-float dtypes (int64 averages)
    def x(lib):
        return lib.ones(1, 2, 4, 4, 4).to(getattr(lib, dtype))
    F = (lambda lib: lib.nn.functional)
    cases = [lambda lib: F(lib).avg_pool2d(x(lib)[0], 2), lambda lib: F(lib).avg_pool3d(x(lib), 2),
             lambda lib: F(lib).adaptive_avg_pool2d(x(lib)[0], 1), lambda lib: F(lib).adaptive_avg_pool2d(x(lib)[0], 2),
             lambda lib: F(lib).adaptive_max_pool2d(x(lib)[0], 2), lambda lib: lib.nn.AdaptiveAvgPool2d(1)(x(lib)[0])]
    for case in cases:
        try:
            case(torch)
        except Exception:  # noqa: BLE001 - the type is compared
            check_raises(case)
        else:
            same(lambda lib: case(lib).float())


# ----------------------------------------------------------------------------------------------------------------
# found by a sweep of ~200 common user mistakes (2026-12-04): the error type and PyTorch's exact message

_TRIANGLE_ERRORS = [
    lambda t: t.tril_indices(-1, 3), lambda t: t.triu_indices(3, -2), lambda t: t.triu_indices(-1, -1),
    lambda t: t.tril_indices(3, 3, dtype=t.float32), lambda t: t.triu_indices(2, 2, dtype=t.int16),
    lambda t: t.tril_indices(2, 2, dtype=t.bool), lambda t: t.triu_indices(2, 2, dtype=t.uint8),
]


@pytest.mark.parametrize("fn", _TRIANGLE_ERRORS)
def test_tril_triu_indices_check_sizes_and_dtype(fn):
    same_error(fn)


def test_tril_triu_indices_int32_and_empty():
    same(lambda t: (t.triu_indices(2, 3, dtype=t.int32), t.tril_indices(0, 3), t.tril_indices(3, 0, 1)))


@pytest.mark.parametrize("fn", [
    lambda t: t.ones(2, dtype=t.int64).requires_grad_(),            # "only ... floating point dtype ..."
    lambda t: setattr(t.ones(2, dtype=t.int64), "requires_grad", True),  # "only ... floating point and complex"
    lambda t: t.nn.Parameter(t.tensor([1, 2])),                       # "Only ..." (capitalised)
    lambda t: t.zeros(2, dtype=t.int32, requires_grad=True),
])
def test_integer_requires_grad_messages_per_path(fn):
    same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda t: t.linalg.norm(t.ones(2, 2), "fro", dim=0),      # a str ord is a matrix norm: dim must be 2 long
    lambda t: t.linalg.norm(t.ones(2, 3), "nuc", dim=[-1]),
    lambda t: t.linalg.norm(t.ones(3), "fro"),                # 1-D: matrix_norm's "at least 2 dimensions"
    lambda t: t.linalg.norm(t.ones(3), "abc"),                # the order is checked before the dimensions
    lambda t: t.linalg.norm(t.ones(2, 2, 2), "fro"),
    lambda t: t.linalg.norm(t.ones(2, 2), "fro", dim=()),
    lambda t: t.linalg.matrix_norm(t.ones(2, 2, 2), "fro", dim=(0, 1, 2)),
])
def test_linalg_norm_string_order_errors(fn):
    same_error(fn)


def test_linalg_norm_string_order_values():
    x = arr(2, 3, 2, seed=3)
    same(lambda t: (t.linalg.norm(t.tensor(x[0]), "fro"), t.linalg.norm(t.tensor(x[0]), "nuc"),
                    t.linalg.norm(t.tensor(x), "fro", dim=(0, 2)), t.linalg.norm(t.tensor(x), "nuc", dim=(2, 1),
                                                                             keepdim=True)))


def test_hook_changing_the_size_says_so_in_pytorchs_words():
    def f(t):
        x = t.ones(2, requires_grad=True)
        x.register_hook(lambda g: t.ones(3))
        (x * 2).sum().backward()
    same_error(f)


@pytest.mark.parametrize("fn", [
    lambda t: t.nn.functional.conv1d(t.ones(1, 2, 5), t.ones(3, 2, 2, 2)),   # a 2-d weight's dims decide
    lambda t: t.nn.functional.conv1d(t.ones(2, 5), t.ones(3, 2, 2, 2)),      # (unbatched: the batched size)
    lambda t: t.nn.functional.conv2d(t.ones(1, 2, 5, 5), t.ones(3, 2, 2)),   # a stride of the wrong length
    lambda t: t.nn.functional.conv2d(t.ones(2, 5, 5), t.ones(3, 2, 2, 2, 2)),
    lambda t: t.nn.functional.conv3d(t.ones(1, 2, 5, 5, 5), t.ones(3, 2, 2, 2)),
    lambda t: t.nn.functional.conv2d(t.ones(1, 2, 5, 5), t.ones(3, 2)),
    lambda t: t.nn.functional.conv2d(t.ones(1, 2, 5, 5), t.ones(3, 2, 2), stride=2),
    lambda t: t.nn.functional.conv_transpose1d(t.ones(1, 2, 5), t.ones(2, 3, 2, 2)),
])
def test_conv_weight_of_another_dimensionality(fn):
    same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda t: t.nn.functional.scaled_dot_product_attention(t.ones(2, 3, 4), t.ones(2, 5, 6), t.ones(2, 5, 4)),
    lambda t: t.nn.functional.scaled_dot_product_attention(t.ones(2, 2, 3, 4), t.ones(2, 2, 5, 6),
                                                           t.ones(2, 2, 5, 4)),
    lambda t: t.nn.functional.scaled_dot_product_attention(t.ones(3, 4), t.ones(5, 6), t.ones(5, 4)),
    lambda t: t.nn.functional.scaled_dot_product_attention(t.ones(2, 3, 4), t.ones(2, 5, 4), t.ones(2, 6, 4)),
])
def test_sdpa_size_mismatch_in_the_math_kernels_words(fn):
    same_error(fn)



_NODE_HOOKS = [  # (which hook, what it returns): PyTorch's check_result
    ("pre", lambda t, go: (t.ones(3),)),                       # another size
    ("pre", lambda t, go: (t.ones(2, dtype=t.float64),)),      # another type
    ("pre", lambda t, go: (5,)),                               # not a tensor
    ("pre", lambda t, go: t.ones(2)),                          # not a tuple
    ("post", lambda t, gi, go: (gi[0], gi[0])),                # a None gradient replaced
    ("post", lambda t, gi, go: [gi[0], None]),                 # a list
    ("post", lambda t, gi, go: (gi[0],)),                      # too few
    ("post", lambda t, gi, go: (t.ones(3), None)),
]


@pytest.mark.parametrize("kind,body", _NODE_HOOKS)
def test_node_hook_results_are_checked_as_pytorch_checks_them(kind, body):
    def f(t):
        x = t.ones(2, requires_grad=True)
        y = x * 2
        if kind == "pre":
            y.grad_fn.register_prehook(lambda go: body(t, go))
        else:
            y.grad_fn.register_hook(lambda gi, go: body(t, gi, go))
        y.sum().backward()
    same_error(f)


def test_node_hooks_may_drop_gradients_with_none():
    def f(t):
        x = t.ones(2, requires_grad=True)
        y = x * 3
        y.grad_fn.register_hook(lambda gi, go: (None, None))
        z = t.ones(2, requires_grad=True)
        w = z * 2
        w.grad_fn.register_prehook(lambda go: (None,))
        (y.sum() + w.sum() + (x * z).sum()).backward()
        return x.grad, z.grad
    same(f)


@pytest.mark.parametrize("pre", [False, True])
def test_module_full_backward_hook_size_error_names_the_hook(pre):
    def f(t):
        m = t.nn.Linear(2, 2)
        if pre:
            m.register_full_backward_pre_hook(lambda m, go: (t.ones(3),))
        else:
            m.register_full_backward_hook(lambda m, gi, go: (t.ones(3),))
        m(t.ones(1, 2, requires_grad=True)).sum().backward()
    same_error(f)


def test_tensor_hook_result_errors():
    def wrong_type(t):
        x = t.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g.double())
        y.sum().backward()

    def not_a_tensor(t):
        x = t.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: 5)
        y.sum().backward()
    same_error(wrong_type)
    same_error(not_a_tensor)


def test_backward_inputs_that_do_not_require_grad():
    def f(t):
        x = t.ones(2, requires_grad=True)
        (x * 2).sum().backward(inputs=[t.ones(2)])
    same_error(f)


@pytest.mark.parametrize("call", [
    "x.sum(0, 1)", "x.mean(0, keepdim=1)", "x.max(0, 1)", "x.min(0, keepdim=1)", "x.amax(0, 1)", "x.prod(0, 1)",
    "x.std(0, 1)", "x.var(0, unbiased=1)", "x.any(0, 1)", "x.all(0, 1)", "x.argmax(0, 1)", "x.logsumexp(0, 1)",
    "x.norm(2, 0, 1)", "x.median(0, 1)", "x.sort(0, 1)", "x.topk(1, 0, 1)", "x.topk(1, 0, True, 0)",
    "T.sum(x, 0, 1)", "T.max(x, 0, 1)", "x.sum(0, keepdim=None)", "x.amax(0, T.tensor(True))", "x.mode(0, 1)",
    "x.kthvalue(1, 0, 1)", "T.aminmax(x, dim=0, keepdim=1)", "x.sum(0, np.bool_(True))",
])
def test_a_bool_argument_refuses_other_types(call):
    """PyTorch's argument parser takes a Python bool only where a bool is declared (keepdim, unbiased, descending,
    largest, sorted): an int, None, a numpy bool or a Tensor is a TypeError."""
    check_raises(lambda T: eval(call, {"T": T, "np": np, "x": T.ones(2, 3)}))


@pytest.mark.parametrize("call", [
    'x.to("cpu", "float32")', "x.to(foo=1)", "x.to(T.float64, 'cpu')", 'x.to(dtype="float32")',
    "x.to(T.float64, dtype=T.float32)", "x.to(T.float64, 1)", "x.to(T.float64, False, True, False)",
    "x.to(x, T.float64)", 'x.to("cpu", "cpu")',
])
def test_tensor_to_overloads_refuse_other_combinations(call):
    same_error(lambda T: eval(call, {"T": T, "x": T.ones(2)}))


def test_tensor_to_positional_non_blocking_and_copy():
    """``to(dtype, non_blocking, copy)``, ``to(device, dtype, non_blocking, copy)`` and ``to(other, non_blocking,
    copy)`` take the flags positionally (copy=True: a new tensor even when nothing changes); a Python number as
    ``other`` is PyTorch's 0-d double tensor."""
    def f(T):
        x = T.ones(2)
        return (x.to(T.float64, False, True).dtype, x.to(T.float32, False, True) is x, x.to(T.float32, False, False) is x,
                x.to("cpu", T.float64, False, True).dtype, x.to(x, True, True) is x, x.to(1.5).dtype,
                x.to(T.device("cpu"), None, False, True) is x, x.to(None, T.float64).dtype, x.to() is x)
    same(f)
