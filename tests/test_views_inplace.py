"""Views and in-place semantics against PyTorch: writes through views reach the base (and back), version
counters, autograd through in-place ops on views and non-leaves, and PyTorch's refusals (leaves, saved tensors,
multi-output views, views made under no_grad, dtype and shape rules, overlapping writes)."""
import warnings

import pytest

from oracle import arr, assert_same, check_raises, run_both, torchish

warnings.filterwarnings("ignore", category=UserWarning)

A = arr(2, 3)
B = arr(2, 3, seed=1)


def same(fn, *args):
    ref, got = run_both(fn, *args)
    assert_same(ref, got)


def same_error(fn, *args, message=True):
    ref = check_raises(fn, *args)
    with pytest.raises(Exception) as got:
        fn(torchish, *args)
    if message:
        assert str(got.value).split("\n")[0] == str(ref).split("\n")[0]


# ----------------------------------------------------------------------------------------------------------------
# writes through views reach the base, base writes reach live views; versions are shared

def _x(T):
    return T.tensor(A)


WRITES = [
    ("setitem_int", lambda T, x: x.__setitem__(0, 1.0)),
    ("setitem_slice", lambda T, x: x.__setitem__((slice(None), slice(1, None)), -1.0)),
    ("select_zero_", lambda T, x: x[:, 1].zero_()),
    ("view_add_", lambda T, x: x.view(6).add_(1)),
    ("view_of_view", lambda T, x: x.view(3, 2)[1:].view(-1).mul_(10)),
    ("t_select_fill_", lambda T, x: x.t()[0].fill_(7.0)),
    ("unsqueeze_copy_", lambda T, x: x.unsqueeze(0)[0, 1].copy_(T.tensor([1.0, 2.0, 3.0]))),
    ("diagonal_fill_", lambda T, x: x.diagonal().fill_(0.0)),
    ("narrow_mul_", lambda T, x: x.narrow(1, 1, 2).mul_(2)),
    ("split_add_", lambda T, x: x.split(1, dim=1)[2].add_(5)),
    ("unbind_sub_", lambda T, x: x.unbind(0)[1].sub_(1)),
    ("chunk_div_", lambda T, x: x.chunk(3, 1)[0].div_(2)),
    ("unfold_zero_", lambda T, x: x.unfold(1, 2, 2).zero_()),
    ("slice_step_neg_", lambda T, x: x[:, ::2].neg_()),
    ("ellipsis_none", lambda T, x: x[..., None][1].clamp_(max=0.0)),
    ("expand_leading_view", lambda T, x: x[0].view(1, 3).mul_(0.0)),
    ("movedim_iadd", lambda T, x: x.movedim(0, 1).__iadd__(T.ones(3, 2))),
    ("mT_isub", lambda T, x: x.mT.__isub__(1)),
    ("getitem_iadd", lambda T, x: x[0].__iadd__(2.0)),
    ("reshape_view_", lambda T, x: x.reshape(3, 2).t_().mul_(3)),
    ("detach_zero_", lambda T, x: x.detach().zero_()),
    ("detach_view_", lambda T, x: x.detach()[1].fill_(4.0)),
    ("data_mul_", lambda T, x: x.data.mul_(0.5)),
    ("data_view_", lambda T, x: x.data[0, 0].fill_(9.0)),
    ("contiguous_noop", lambda T, x: x.contiguous().add_(1)),
    ("contiguous_copy", lambda T, x: x.t().contiguous().add_(1)),
    ("reshape_copy", lambda T, x: x.t().reshape(6).add_(1)),
    ("clone_", lambda T, x: x.clone().add_(1)),
    ("adv_index_copy", lambda T, x: x[[0, 1]].add_(1)),
    ("view_dtype", lambda T, x: x.view(T.int32)[0, 0].fill_(0)),
    ("flatten_same", lambda T, x: x.flatten(0, 0).add_(1)),
    ("iter_rows", lambda T, x: [row.mul_(2) for row in x]),
]


@pytest.mark.parametrize("fn", [w[1] for w in WRITES], ids=[w[0] for w in WRITES])
def test_write_reaches_base(fn):
    def f(T):
        x = _x(T)
        row = x[1]          # a live view of the base: must see every write
        col = x.t()[2]
        d = x.detach()      # an alias sharing the version counter
        fn(T, x)
        return x, row, col, d, x._version, row._version, d._version
    same(f)


def test_base_write_reaches_views():
    def f(T):
        x = _x(T)
        v, w, s = x.view(3, 2), x[:, 1:], x.unbind(1)
        x.add_(1)
        x[0, 0] = -5.0
        x.copy_(x * 2)
        x.zero_() if False else x.mul_(0.5)
        return v, w, s, x._version, v._version
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# version counters

VERSIONS = [
    ("add_", lambda T, x: x.add_(1)),
    ("iadd_isub_imul", lambda T, x: [x.__iadd__(1), x.__isub__(2), x.__imul__(3), x.__itruediv__(2)]),
    ("setitem_int", lambda T, x: x.__setitem__(0, 1.0)),
    ("setitem_list", lambda T, x: x.__setitem__([0, 1], 1.0)),
    ("setitem_mask", lambda T, x: x.__setitem__(x > 0, 1.0)),
    ("setitem_mask_tensor", lambda T, x: x.__setitem__(T.tensor([True, False]), T.ones(3))),
    ("getitem_iadd_setitem", lambda T, x: x[0].__iadd__(1)),
    ("select_inplace_twice", lambda T, x: [x[:, 1].zero_(), x.view(6).add_(1)]),
    ("copy_fill_zero", lambda T, x: [x.copy_(T.ones(2, 3)), x.fill_(2), x.zero_()]),
    ("index_ops", lambda T, x: [x.index_put_((T.tensor([0]),), T.tensor(1.0), accumulate=True),
                                x.scatter_(1, T.tensor([[0]]), 1.0), x.index_fill_(0, T.tensor([1]), 2.0),
                                x.masked_fill_(x > 0, 3.0)]),
    ("unsqueeze_", lambda T, x: x.unsqueeze_(0)),
    ("t_then_add", lambda T, x: [x.t_(), x.add_(1)]),
    ("clone_view", lambda T, x: [x.clone().add_(1), x.view(6)]),
    ("detach_add", lambda T, x: x.detach().add_(1)),
    ("data_add", lambda T, x: x.data.add_(1)),
    ("no_grad_sub", lambda T, x: _no_grad(T, lambda: x.sub_(1))),
    ("requires_grad_", lambda T, x: x.requires_grad_()),
    ("out_kw", lambda T, x: T.add(x, 1, out=x)),
]


def _no_grad(T, fn):
    with T.no_grad():
        return fn()


@pytest.mark.parametrize("fn", [v[1] for v in VERSIONS], ids=[v[0] for v in VERSIONS])
def test_version_counter(fn):
    def f(T):
        x = _x(T)
        v = x[0]
        d = x.data
        fn(T, x)
        return x._version, v._version, d._version
    same(f)


def test_iadd_keeps_identity():
    def f(T):
        x = _x(T)
        a = x
        x += T.tensor(B)
        x -= 1
        x *= 2
        x /= 4
        i = T.arange(6).view(2, 3)
        j = i
        i //= 2
        i %= 2
        i <<= 1
        i |= 1
        return a is x, j is i, x, i, x._version, i._version
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# autograd through in-place ops on non-leaves and views

GRAPHS = [
    ("setitem_zero", lambda T, y, b: y.__setitem__(0, 0.0)),
    ("view_mul_", lambda T, y, b: y[:, 0].mul_(3)),
    ("mul_tensor", lambda T, y, b: y.mul_(b)),
    ("mul_scalar", lambda T, y, b: y.mul_(2.5)),
    ("iadd_view", lambda T, y, b: y.t()[1].__iadd__(b[0, :2])),
    ("view_chain", lambda T, y, b: y.view(3, 2)[1:].view(-1).mul_(b.view(-1)[:4])),
    ("setitem_value_grad", lambda T, y, b: y.__setitem__((slice(None), 1), b[:, 0] * 2)),
    ("setitem_adv_value_grad", lambda T, y, b: y.__setitem__(([0, 1], [2, 0]), b[0, :2])),
    ("setitem_mask", lambda T, y, b: y.__setitem__(b > 0, 0.0)),
    ("setitem_mask_value", lambda T, y, b: y.__setitem__(b > 0, b[0, 0])),
    ("copy_into_view", lambda T, y, b: y[1].copy_(b[0])),
    ("fill_view", lambda T, y, b: y[0, 1:].fill_(1.5)),
    ("zero_all", lambda T, y, b: y.zero_()),
    ("exp_view", lambda T, y, b: y[0].exp_()),
    ("sigmoid_", lambda T, y, b: y.sigmoid_()),
    ("pow_view", lambda T, y, b: y[:, 2].pow_(2)),
    ("clamp_", lambda T, y, b: y.clamp_(-0.5, 0.5)),
    ("index_add_", lambda T, y, b: y.index_add_(1, T.tensor([0, 0, 2]), b)),
    ("scatter_", lambda T, y, b: y.scatter_(1, T.tensor([[2], [0]]), b[:, :1])),
    ("masked_fill_", lambda T, y, b: y.masked_fill_(b > 0.3, 2.0)),
    ("masked_scatter_", lambda T, y, b: y.masked_scatter_(b > 0, b * 3)),
    ("index_put_acc", lambda T, y, b: y.index_put_((T.tensor([0, 0]),), b[1:] * 1, accumulate=True)),
    ("two_views", lambda T, y, b: [y[0].mul_(b[1]), y[:, 1].add_(b[0, 0])]),
    ("inplace_then_view", lambda T, y, b: [y.add_(b), y[1].mul_(2)]),
    ("unsqueeze_then_write", lambda T, y, b: [y.unsqueeze_(0), y[0, 1].mul_(b[0])]),
    ("t_then_write", lambda T, y, b: [y.t_(), y[0].div_(b[1, 0] + 3)]),
    ("detach_write", lambda T, y, b: y.detach()[0].zero_()),
    ("data_write", lambda T, y, b: y.data.mul_(0.5)),
    ("no_grad_write", lambda T, y, b: _no_grad(T, lambda: y[1].mul_(10))),
    ("write_then_read_view", lambda T, y, b: y[0].mul_(y[1].sum())),
]


@pytest.mark.parametrize("fn", [g[1] for g in GRAPHS], ids=[g[0] for g in GRAPHS])
def test_inplace_graph(fn):
    def f(T):
        x = T.tensor(A, requires_grad=True)
        b = T.tensor(B, requires_grad=True)
        y = x * 2
        view = y[1]
        fn(T, y, b)
        out = (y * y).sum() + view.sum() * 3
        gx, gb = T.autograd.grad(out, [x, b], allow_unused=True)
        return y, view, gx, gb, y.requires_grad, y.is_leaf, view.requires_grad
    same(f)


def test_leaf_write_makes_graph():
    def f(T):
        x = T.zeros(2, 3)
        w = T.tensor(A, requires_grad=True)
        x[0] = w[1] * 2
        v = x[1]
        v.copy_(w[0])
        names = type(x.grad_fn).__name__, x.is_leaf, x.requires_grad, v.requires_grad
        (x * T.tensor(B)).sum().backward()
        return names, w.grad, x._version
    same(f)


def test_view_of_leaf_then_base_requires_grad_write():
    def f(T):
        x = T.zeros(3)
        v = x[1:]
        w = T.tensor(A[0], requires_grad=True)
        x.copy_(w)
        (v * v).sum().backward()
        return v, v.requires_grad, w.grad
    same(f)


def test_no_grad_update_of_leaf():
    def f(T):
        w = T.tensor(A, requires_grad=True)
        (w * w).sum().backward()
        with T.no_grad():
            w -= 0.1 * w.grad
            w[0] = 1.0
            w.grad.zero_()
        (w * 3).sum().backward()
        return w, w.grad, w.is_leaf, w.requires_grad, w.grad_fn is None, w._version
    same(f)


def test_data_mul_keeps_grad_fn():
    def f(T):
        x = T.tensor(A, requires_grad=True)
        y = x * 2
        y.data.mul_(0.5)
        w = T.tensor(B, requires_grad=True)
        w.data.mul_(0.5)
        (y * w).sum().backward()
        return y, type(y.grad_fn).__name__, y._version, w, w._version, x.grad, w.grad
    same(f)


def test_detach_zero_changes_base():
    def f(T):
        x = T.tensor(A, requires_grad=True)
        x.detach().zero_()
        y = x * 2
        y.detach()[0].fill_(3.0)
        y.sum().backward()
        return x, y, x._version, y._version, x.grad, type(y.grad_fn).__name__
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# refusals

def _nl(T):
    return T.tensor(A, requires_grad=True) * 1


def _split_write(T):
    return T.zeros(4, requires_grad=True).mul(2).split(2)[0].mul_(2)


def _saved_then_modified(T, modify):
    x = T.tensor(A, requires_grad=True)
    y = x * 2
    z = modify(T, y)
    z.sum().backward()


ERRORS = [
    ("leaf", lambda T: T.ones(3, requires_grad=True).add_(1)),
    ("leaf_setitem", lambda T: T.ones(3, requires_grad=True).__setitem__(0, 2.0)),
    ("leaf_view", lambda T: T.ones(3, requires_grad=True)[0].add_(1)),
    ("leaf_view_fn", lambda T: T.ones(2, 3, requires_grad=True).view(6).zero_()),
    ("leaf_t_", lambda T: T.ones(2, 3, requires_grad=True).t_()),
    ("leaf_iadd", lambda T: T.ones(3, requires_grad=True).__iadd__(1)),
    ("split_output", _split_write),
    ("unbind_output", lambda T: _nl(T).unbind(0)[1].mul_(2)),
    ("chunk_output_view", lambda T: _nl(T).chunk(2, 1)[0][0].mul_(2)),
    # in-place view ops (metadata changes) are refused on such outputs too
    ("split_output_t_", lambda T: _nl(T).split(1)[1].t_()),
    ("chunk_output_unsqueeze_", lambda T: _nl(T).chunk(3, 1)[2].unsqueeze_(0)),
    ("unbind_output_squeeze_", lambda T: _nl(T).unbind(1)[0].squeeze_()),
    ("split_output_transpose_", lambda T: _nl(T).split(1)[0].transpose_(0, 1)),
    ("iter_rows", lambda T: [r.mul_(2) for r in _nl(T)]),
    ("no_grad_view", lambda T: _nograd_view(T).mul_(2)),
    ("expanded", lambda T: T.zeros(3).expand(2, 3).add_(1)),
    ("dtype_int_float", lambda T: T.ones(3, dtype=T.int64).add_(1.5)),
    ("dtype_int_float_tensor", lambda T: T.ones(3, dtype=T.int64).mul_(T.ones(3))),
    ("dtype_int_div", lambda T: T.ones(3, dtype=T.int64).div_(2)),
    ("dtype_bool_add", lambda T: T.ones(3, dtype=T.bool).add_(1)),
    ("dtype_float_complex", lambda T: T.ones(3).add_(1j)),
    ("dtype_itruediv", lambda T: T.arange(3).__itruediv__(2)),
    ("shape_broadcast_self", lambda T: T.ones(3).add_(T.ones(2, 3))),
    ("shape_broadcast_self2", lambda T: T.ones(1, 3).mul_(T.ones(2, 3))),
    ("shape_mismatch", lambda T: T.ones(2, 3).sub_(T.ones(4))),
    ("copy_mismatch_dim0", lambda T: T.zeros(2, 3).copy_(T.zeros(4, 3))),
    ("copy_mismatch_dim1", lambda T: T.zeros(2, 3).copy_(T.zeros(2, 4))),
    ("copy_broadcast_bigger", lambda T: T.zeros(2, 1).copy_(T.zeros(2, 3))),
    ("copy_more_dims", lambda T: T.zeros(2, 3).copy_(T.zeros(3, 1, 3))),
    ("saved_input", lambda T: _saved_then_modified(T, lambda T, y: _mod(y.sin(), y))),
    ("saved_output", lambda T: _saved_then_modified(T, lambda T, y: y.exp().add_(1))),
    ("saved_view_input", lambda T: _saved_then_modified(T, lambda T, y: _mod(y[0].sin(), y))),
    ("saved_base_via_view", lambda T: _saved_then_modified(T, lambda T, y: _mod(y.sin(), y[1]))),
    ("inplace_uses_own_view", lambda T: _saved_then_modified(T, lambda T, y: y.mul_(y[0]))),
    # an op saving the written tensor as an operand other than ``self`` (addcmul_'s tensor2): that record is stale
    ("inplace_uses_itself_as_tensor2", lambda T: _saved_then_modified(T, lambda T, y: _own(y, y, "addcmul_", 1))),
    ("inplace_uses_itself_as_tensor1", lambda T: _saved_then_modified(T, lambda T, y: _own(y, y, "addcdiv_", 0))),
    # the same on a view of the written tensor (autograd fuzzer seed 60772): ``v.addcmul_(v, v)``, v = y.unsqueeze(0)
    ("inplace_uses_its_view_addcmul", lambda T: _saved_then_modified(T, lambda T, y: _own(y, y.unsqueeze(0),
                                                                                          "addcmul_"))),
    ("inplace_uses_its_view_addcdiv", lambda T: _saved_then_modified(T, lambda T, y: _own(y, y.unsqueeze(0),
                                                                                          "addcdiv_"))),
    # an in-place op that saves its result (exp_, sigmoid_) saves the written tensor itself, at its new version
    ("saved_inplace_result", lambda T: _saved_then_modified(T, lambda T, y: _mod(y.exp_(), y))),
    ("saved_inplace_result_later", lambda T: _saved_then_modified(T, lambda T, y: _mod(y.sigmoid_() * 2, y))),
    ("saved_inplace_result_view", lambda T: _saved_then_modified(T, lambda T, y: _mod(y[0].tanh_(), y))),
    # a write whose source partly overlaps the written elements (PyTorch's memory-overlap check)
    ("overlap_add_shifted", lambda T: _shifted(T, "add_")),
    ("overlap_copy_shifted", lambda T: _shifted(T, "copy_")),
    ("overlap_lerp_shifted", lambda T: _shifted(T, "lerp_", 0.5)),
    ("overlap_setitem_shifted", lambda T: _shifted(T, "__setitem__")),
    ("overlap_index_copy", lambda T: (lambda x: x[1:].index_copy_(0, T.tensor([0, 1]), x[:2]))(T.arange(5.0))),
    ("overlap_row_of_self", lambda T: (lambda x: x.mul_(x[0]))(T.arange(6.0).view(2, 3))),
    ("overlap_transpose", lambda T: (lambda x: x.add_(x.t()))(T.arange(4.0).view(2, 2))),
    ("overlap_unsqueezed_self", lambda T: (lambda x: x.add_(x.unsqueeze(0)))(T.arange(5.0))),
]


def _shifted(T, method, *extra):
    x = T.arange(5.0)
    if method == "__setitem__":
        x[1:] = x[:-1]
    else:
        getattr(x[1:], method)(x[:-1], *extra)
    return x


def _own(y, v, method, other=None):
    """``v.method(v, v)`` (``other`` 0 / 1: that operand is a tensor requiring grad instead of ``v``); returns y."""
    ops = [v, v]
    if other is not None:
        ops[other] = (v.detach() + 2).requires_grad_()
    getattr(v, method)(*ops)
    return y


def _mod(z, y):
    y.add_(1)
    return z


def _nograd_view(T):
    y = _nl(T)
    with T.no_grad():
        v = y[0:1]
    return v


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_inplace_error(name, fn):
    # the saved-tensor message names nodes as PyTorch's internals do; the type and the rest are checked
    same_error(fn, message=not name.startswith(("saved", "inplace_uses")))


def test_saved_tensor_message_names_versions():
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*is at version 1; expected version 0"):
        _saved_then_modified(torchish, lambda T, y: _mod(y.sin(), y))


ALLOWED = [
    ("split_no_grad", lambda T: T.zeros(4).split(2)[0].mul_(2)),
    ("split_no_grad_t_", lambda T: T.zeros(4, 2).split(2)[0].t_()),
    ("split_under_no_grad_t_", lambda T: _no_grad(T, lambda: _nl(T).split(1)[0].t_())),
    ("no_grad_leaf", lambda T: _no_grad(T, lambda: T.ones(3, requires_grad=True).add_(1))),
    ("no_grad_leaf_view", lambda T: _no_grad(T, lambda: T.ones(3, requires_grad=True)[1:].mul_(3))),
    ("detach_leaf", lambda T: T.ones(3, requires_grad=True).detach().add_(1)),
    ("data_leaf", lambda T: T.ones(3, requires_grad=True).data[0].add_(1)),
    ("float16_add_float32", lambda T: T.ones(3, dtype=T.float16).add_(T.ones(3))),
    ("int_add_int", lambda T: T.ones(3, dtype=T.int32).add_(T.ones(3, dtype=T.int64))),
    ("int_floordiv", lambda T: T.arange(5).__ifloordiv__(2)),
    ("float_add_int", lambda T: T.ones(3).add_(T.arange(3))),
    ("broadcast_other", lambda T: T.ones(2, 3).add_(T.arange(3.0))),
    ("no_grad_view_in_no_grad", lambda T: _no_grad(T, lambda: _nograd_view(T).mul_(2))),
    ("expanded_setitem_row", lambda T: _expanded_setitem(T)),
    # what the op did not save may be written: exp saves its result, clamp its input, sin_ the value it overwrote
    ("unsaved_input", lambda T: _written_grad(T, lambda T, y: _mod(y.exp(), y))),
    ("unsaved_output", lambda T: _written_grad(T, lambda T, y: y.clamp(0, 1).add_(1))),
    ("inplace_unsaved_result", lambda T: _written_grad(T, lambda T, y: _mod(y.sin_(), y))),
    # overlaps PyTorch allows: the same layout, disjoint ranges, layouts it cannot judge, fill values
    ("overlap_self", lambda T: (lambda x: (x.mul_(x), x.add_(x.view(5)), x)[-1])(T.arange(5.0))),
    ("overlap_disjoint", lambda T: (lambda x: (x[:2].add_(x[2:4]), x)[-1])(T.arange(5.0))),
    ("overlap_setitem_disjoint", lambda T: (lambda x: (x.__setitem__(slice(0, 2), x[3:]), x)[-1])(T.arange(5.0))),
    ("overlap_strided_columns", lambda T: (lambda x: (x[:, 0].add_(x[:, 1]), x)[-1])(T.arange(6.0).view(3, 2))),
    ("overlap_expanded_source", lambda T: (lambda x: (x[1:].add_(x[0].expand(4)), x)[-1])(T.arange(5.0))),
    ("overlap_masked_fill_value", lambda T: (lambda x: (x[1:].masked_fill_(T.tensor([True, False, True, False]),
                                                                          x[0]), x)[-1])(T.arange(5.0))),
]


def _written_grad(T, modify):
    x = T.tensor(A, requires_grad=True)
    modify(T, x * 2).sum().backward()
    return x.grad


def _expanded_setitem(T):
    x = T.zeros(1, 3)
    e = x.expand(2, 3)
    e[0] = T.tensor([1.0, 2.0, 3.0])  # the written row itself does not overlap: allowed, and seen by both rows
    return x, e, x._version


@pytest.mark.parametrize("fn", [a[1] for a in ALLOWED], ids=[a[0] for a in ALLOWED])
def test_inplace_allowed(fn):
    same(fn)


@pytest.mark.parametrize("write", ["mul_", "setitem", "view_add_"])
def test_view_made_a_leaf_that_requires_grad_is_refused_in_place(write):
    """PyTorch's check_inplace refuses a view that requires grad whose base is a leaf, even one that does not
    require grad (``arange(6.).view(2, 3).requires_grad_()``: the view is the leaf); torchish looked at the base's
    requires_grad only and wrote through it, making the leaf a non-leaf."""
    def fn(T):
        x = T.arange(6.).view(2, 3).requires_grad_()
        if write == "mul_":
            x[1].mul_(2)
        elif write == "setitem":
            x[0] = 5.0
        else:
            x.view(6).add_(1)
        return x
    same_error(fn)


def test_views_of_detached_aliases_have_the_alias_as_base():
    """``x.detach()`` and ``x.data`` are no views, but views taken of them are, with the alias as their ``_base``
    (views of those views too), as in PyTorch."""
    def run(T):
        x = T.arange(6.0).reshape(2, 3).requires_grad_()
        d, dd = x.detach(), x.data
        v = d[0]
        w = v[1:]
        e = (x * 1).detach().t()
        return (d._is_view(), d._base is None, v._is_view(), v._base is d, w._base is d, v.requires_grad,
                dd._is_view(), dd[0]._base is dd, e._is_view(), tuple(e._base.shape), e._base.requires_grad)
    ref, got = run_both(run)
    assert got == ref


def test_views_of_a_tensor_viewed_in_place_have_it_as_base():
    """After ``t_()``/``transpose_()``/``unsqueeze_()`` a tensor is no view, and it is the ``_base`` of the views
    taken of it (before and after), which keep it alive: a batch-first GRU's output is ``transpose_``d in place and
    then squeezed for unbatched input."""
    def run(T):
        out = []
        for rg in (False, True):
            y = T.arange(8.0, requires_grad=rg).reshape(1, 2, 4) * 2
            before = y[0]
            y.transpose_(0, 1)
            z = y.squeeze(1)
            out += [y._is_view(), before._base is y, z._base is y, z._is_view(),
                    y[1]._is_view(), y.stride(), z.stride()]
            def squeezed():
                w = T.arange(6.0, requires_grad=rg).reshape(3, 2) + 1
                w.t_()
                return w.squeeze(0)
            v = squeezed()
            out += [v._is_view(), v._base.shape, v._base.stride()]
        return out
    ref, got = run_both(run)
    assert_same(ref, got)


@pytest.mark.parametrize("write", ["rows_not", "t_and", "split_or", "unbind_xor"])
def test_logical_inplace_on_a_view_leaves_autograd_alone(write):
    """PyTorch does not differentiate logical_not_/and_/or_/xor_: written into a view of a non-leaf, the base keeps
    its history (grad_fn and gradient as if nothing was written; no multi-output-view refusal). torchish recorded
    the write through the view (CopySlices), zeroing the gradient of the written elements."""
    def fn(T):
        leaf = T.tensor(A - 0.5, requires_grad=True)
        x = leaf * 1.0
        {"rows_not": lambda: x[1:].logical_not_(),
         "t_and": lambda: x.t()[::2].logical_and_(x.t()[1::2] * 0),
         "split_or": lambda: x.split(1)[1].logical_or_(T.zeros(3)),
         "unbind_xor": lambda: x.unbind(1)[0].logical_xor_(T.ones(2))}[write]()
        (x * T.tensor(B)).sum().backward()
        return x, leaf.grad, type(x.grad_fn).__name__
    same(fn)


@pytest.mark.parametrize("write", ["add_", "atan2_", "lerp_", "addcmul_"])
def test_view_of_a_detached_alias_written_with_a_tensor_that_requires_grad(write):
    """``v = x.detach()[1]; v.add_(y)`` with y requiring grad: the alias takes a CopySlices and its views (v, and
    one taken before the write) require grad through it, as PyTorch's; torchish left v outside the graph."""
    def fn(T):
        x = T.tensor(A, requires_grad=True) * 1.0
        y = T.tensor(B[0], requires_grad=True)
        d = x.detach()
        w, v = d[:, 1], d[1]
        getattr(v, write)(*((y, 0.5) if write == "lerp_" else (y, y) if write == "addcmul_" else (y,)))
        (v * T.tensor(B[1])).sum().backward(retain_graph=True)
        g1 = y.grad.clone()
        (w * 2.0).sum().backward()
        return v, w, d, g1, y.grad, v.requires_grad, w.requires_grad, x.grad_fn is not None
    same(fn)
