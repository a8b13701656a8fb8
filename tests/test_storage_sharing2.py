"""Storage sharing between tensors that are no views of one another, against PyTorch: ``nn.Parameter(view)``,
``vector_to_parameters``, ``t.data = other``, ``Tensor.set_`` (tensors, storages, windows of them) and an
optimizer step on a parameter that is a view. Each case writes in place through either side afterwards and returns
the values, ``data_ptr``/``untyped_storage().data_ptr()`` equalities, ``_base`` and version counters, so a tensor
that only copied the values (torchish before) shows up."""
import warnings

import pytest

from oracle import formula_data as _data, same_error, script_test


def _ptr_eq(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def case_parameter_of_view(lib):
    nn = lib.nn
    base = _data(lib, 6)
    v = base[2:5]
    p = nn.Parameter(v)
    out = [p.data_ptr() == v.data_ptr(), _ptr_eq(p, base), p._base is None, p.is_leaf, p.storage_offset(),
           p._version]
    with lib.no_grad():
        p.mul_(10)
    out += [base.clone(), v.clone(), base._version, p._version]
    base[3] = -1
    out.append(p.detach().clone())
    v.add_(100)
    out.append(p.detach().clone())
    (p * p).sum().backward()
    out.append(p.grad)
    # a transposed view keeps its strides; a parameter of a non-leaf and of a leaf that requires grad share too
    b2 = _data(lib, 2, 3, seed=1)
    pt = nn.Parameter(b2.t())
    with lib.no_grad():
        pt[0, 1] = 50.
    out += [pt.stride(), pt.is_contiguous(), b2.clone()]
    a = _data(lib, 4, seed=2).requires_grad_()
    nonleaf = a * 2
    pn, pa = nn.Parameter(nonleaf), nn.Parameter(a)
    with lib.no_grad():
        pn.add_(1)
        pa.add_(1)
    out += [nonleaf.detach().clone(), a.detach().clone(), pn.is_leaf, pa._version, a._version]
    with lib.no_grad():
        a.mul_(2)
    out += [pa.detach().clone(), pa._version]
    # a parameter of a tensor that has views: the views see writes through the parameter
    c = _data(lib, 4, seed=3)
    cv = c[1:]
    pc = nn.Parameter(c)
    with lib.no_grad():
        pc.add_(1)
    cv.mul_(2)
    out += [cv.clone(), pc.detach().clone(), cv._base is c]
    return out


def case_vector_to_parameters(lib):
    nn = lib.nn
    m = nn.Linear(3, 2)
    vec = _data(lib, 8)
    nn.utils.vector_to_parameters(vec, m.parameters())
    w, b = m.weight, m.bias
    out = [w.detach().clone(), b.detach().clone(), w.data_ptr() == vec.data_ptr(),
           b.data_ptr() == vec.data_ptr() + 6 * vec.element_size(), w._base is None, w.is_leaf, type(w).__name__,
           w.storage_offset(), b.storage_offset()]
    vec.mul_(2)
    out += [w.detach().clone(), b.detach().clone()]
    with lib.no_grad():
        w.add_(100)
    out.append(vec.clone())
    m(lib.ones(1, 3)).sum().backward()
    out += [w.grad, b.grad, vec._version]
    # an optimizer step on the parameters writes into vec
    opt = lib.optim.SGD(m.parameters(), lr=0.5)
    opt.step()
    out += [vec.clone(), w.detach().clone()]
    with lib.no_grad():
        w[0, 0] = 7.
    out += [vec.clone(), b.detach().clone()]
    return out


def case_set_data(lib):
    t = lib.zeros(3, requires_grad=True)
    calls = []
    t.register_hook(lambda g: calls.append(1))
    (t * 2).sum().backward()
    o = _data(lib, 3)
    t.data = o
    out = [t.requires_grad, t.grad.clone(), t.data_ptr() == o.data_ptr(), t.is_leaf]
    o.add_(5)
    out.append(t.detach().clone())
    with lib.no_grad():
        t.mul_(2)
    out.append(o.clone())
    (t * 3).sum().backward()
    out += [t.grad, len(calls), t._version, o._version]
    # another shape; a view of another tensor (its offset); the old views of t keep the old storage
    s = lib.zeros(3, requires_grad=True)
    o2 = _data(lib, 2, 3, seed=1)
    s.data = o2
    o2[0, 0] = 9.
    out += [s.shape, s.requires_grad, s.detach().clone()]
    u = lib.zeros(2)
    base = _data(lib, 6, seed=2)
    u.data = base[1:3]
    out += [u.storage_offset(), u.data_ptr() == base.data_ptr() + 4, u._base is None]
    base.add_(1)
    out.append(u.clone())
    u.add_(100)
    out.append(base.clone())
    x = _data(lib, 4, seed=3)
    xv = x[1:3]
    x.data = lib.zeros(5)
    x.add_(1)
    xv.add_(7)
    out += [xv.clone(), x.clone(), xv._base is x]
    # a parameter re-pointed at a transposed view of itself shares its storage (module weight tricks)
    w = lib.nn.Parameter(_data(lib, 2, 3, seed=4))
    w.data = w.data.t()
    out += [w.shape, w.stride(), w.is_leaf, w.requires_grad]
    with lib.no_grad():
        w[0, 1] = -3.
    out.append(w.detach().clone())
    # a plain tensor's data set to itself stays what it was
    y = _data(lib, 3, seed=5)
    y.data = y.data
    y.data = y
    y.add_(1)
    out += [y.clone(), y._base is None]
    return out


def test_set_data_messages():
    def not_a_tensor(lib):
        lib.zeros(3).data = [1, 2]

    def int_data(lib):
        lib.zeros(3, requires_grad=True).data = lib.arange(3)

    def sparse(lib):
        lib.zeros(3).data = lib.zeros(3).to_sparse()

    for fn in (not_a_tensor, int_data, sparse):
        same_error(fn)


def case_set_(lib):
    t = lib.zeros(2)
    s = _data(lib, 6)
    t.set_(s)
    out = [t.clone(), t.data_ptr() == s.data_ptr(), t._version, s._version]
    s.add_(1)
    out += [t.clone(), t._version, s._version]
    t.add_(1)
    out += [s.clone(), t._version, s._version]
    # a window of a storage, or of a tensor's storage (the offset counts from the tensor's own)
    u = lib.zeros(2)
    s2 = _data(lib, 12, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u.set_(s2.untyped_storage(), 2, (2, 3), (1, 2))
    out += [u.clone(), u.stride(), u.storage_offset(), u._base is None]
    s2.add_(1)
    out.append(u.clone())
    u.mul_(2)
    out.append(s2.clone())
    w = lib.zeros(1)
    w.set_(s2.untyped_storage())
    out += [w.shape, w.clone()]
    v = lib.zeros(1)
    b = _data(lib, 3, 4, seed=2)[1:]
    v.set_(b, 2, (2,), (1,))
    out += [v.clone(), v.storage_offset(), v._base is None]
    z = lib.zeros(1)
    z.set_(s2[2:])
    out += [z.storage_offset(), z._base is None]
    # set_ on a tensor with views: the views keep the old storage, their _base stays
    e = _data(lib, 4, seed=3)
    ev = e[1:]
    e.set_(lib.zeros(2))
    e.add_(1)
    out += [ev.clone(), ev._base is e, e.clone()]
    # not differentiable: the result records a node whose backward raises
    x = lib.ones(3, requires_grad=True)
    y = lib.zeros(3)
    y.set_(x)
    out += [y.requires_grad, y.is_leaf, type(y.grad_fn).__name__]
    try:
        y.sum().backward()
        out.append("no error")
    except RuntimeError as err:
        out.append(str(err))
    q = lib.zeros(3)
    with lib.no_grad():
        q.set_(x)
    out += [q.requires_grad, q.grad_fn is None]
    return out


def test_set_errors():
    def typed_storage_of_other_dtype(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.zeros(2, dtype=lib.float64).set_(lib.arange(6.).storage())

    def noncontiguous_tensor_window(lib):
        lib.zeros(2).set_(lib.arange(6.)[::2], 0, (2,), (1,))

    for fn in (typed_storage_of_other_dtype, noncontiguous_tensor_window):
        same_error(fn)


@pytest.mark.parametrize("args", [(1,), (None, 1)], ids=["offset_without_size", "offset_alone"])
def test_set_argument_combinations(args):
    from oracle import check_raises
    check_raises(lambda lib: lib.zeros(2).set_(*((lib.arange(6.),) + args)))


def case_optimizer_step_on_a_view(lib):
    base = lib.zeros(4)
    x = base[1:].requires_grad_()
    opt = lib.optim.SGD([x], lr=1.0)
    x.grad = _data(lib, 3)
    opt.step()
    out = [x.detach().clone(), base.clone(), x._version]
    with lib.no_grad():
        x[0] = 5.
    out += [x.detach().clone(), base.clone()]
    # a detach() alias sees later writes through its source, and its writes reach the source
    a = _data(lib, 4, seed=1).requires_grad_()
    d = a.detach()
    with lib.no_grad():
        a.mul_(2)
    out += [d.clone(), d._version, a._version]
    d.add_(1)
    out += [a.detach().clone(), a._version]
    return out


def case_resize_grows_the_shared_storage(lib):
    # PyTorch grows the storage in place: the views of a resized base keep sharing it (and name it as _base)
    x = _data(lib, 4)
    v, w, d = x[1:], x.view(2, 2).t(), x.detach()
    p0 = v.data_ptr()
    x.resize_(10)
    out = [v._base is x, w._base is x, d._base is None, v.clone(), v.stride(), w.stride(), v.storage_offset(),
           v.data_ptr() == x.data_ptr() + 4, v.data_ptr() == p0]
    x.add_(1)
    out += [v.clone(), w.clone(), d.clone()]
    v.mul_(2)
    out += [x[:4].clone(), w.clone()]  # (the grown elements are uninitialised in PyTorch)
    d[0] = -1
    out += [x[:2].clone(), v.clone(), x._version, v._version]
    return out


# Tensor.new_zeros/new_ones/new_empty/new_full parse their size once, and every error names the method
_NEW_FACTORY_ERRORS = [
    lambda x: x.new_zeros(2, requires_grad=1),
    lambda x: x.new_ones(2, dtype="float"),
    lambda x: x.new_empty(2, 3, memory_format=None),
    lambda x: x.new_zeros(2, foo=1),
    lambda x: x.new_zeros(),
    lambda x: x.new_zeros((2,), size=(2,)),
    lambda x: x.new_zeros(-1),
    lambda x: x.new_ones((2, "a")),
    lambda x: x.new_full(3, 1.),
    lambda x: x.new_full((2,), "a"),
    lambda x: x.new_full((2,), 1., requires_grad=1),
    lambda x: x.new_full((-1,), 1.),
]


@pytest.mark.parametrize("k", range(len(_NEW_FACTORY_ERRORS)))
def test_new_factory_messages(k):
    same_error(lambda lib: _NEW_FACTORY_ERRORS[k](lib.ones(2, dtype=lib.float64)))


def case_new_factories(lib):
    x = lib.ones(2, dtype=lib.float64)
    return [x.new_zeros(size=(2,), dtype=lib.int64), x.new_ones([2, 3]), x.new_empty(2, 1).shape,
            x.new_full([2], 3), str(x.new_zeros(lib.Size([2]), device="meta").device), x.new_full(size=(1,), fill_value=3.)]


test_script_matches_torch = script_test(globals())
