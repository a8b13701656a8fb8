"""Tensor hooks, retain_grad and node hooks around in-place writes into views, compared with PyTorch.

PyTorch's CopySlices (the grad_fn of a base written through a view) runs the in-place op's node itself and writes
the gradient of the view's old value straight into the base's gradient: a hook registered on the view before the
in-place op (on its old grad_fn) does not see that gradient, while a gradient reaching the old view by another
path (an earlier use of the view, the op's second input, a double backward through the saved old value) does.
Each ``case_*`` is written against the PyTorch API only; the suite runs them on every execution path
(``--torchish-mode``: eager, lazy, lowered).
"""
from oracle import raised as _err, script_test


def _w(lib):
    w = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    return w, w * 1.0


def case_hook_on_view_then_inplace_on_view(lib):
    """The reported reproducer, several in-place ops in a row, and hooks added between them."""
    res = []
    w, y = _w(lib)
    v = y[1]
    v.register_hook(lambda g: g * 2)
    v.mul_(3.0)
    (v * 1.0).sum().backward()
    res.append(w.grad)
    w, y = _w(lib)
    v = y[1]
    v.register_hook(lambda g: g * 2)
    v.mul_(3.0).add_(1.0).mul_(2.0)
    (v * 1.0).sum().backward()
    res.append(w.grad)
    w, y = _w(lib)
    v = y[1]
    v.register_hook(lambda g: g * 10)
    v.mul_(2.0)
    v.register_hook(lambda g: g * 3)
    v.mul_(2.0)
    v.register_hook(lambda g: g + 1)
    (v * v).sum().backward()
    res.append(w.grad)
    w, y = _w(lib)
    v = y[1]
    v.mul_(3.0)
    v.register_hook(lambda g: g * 2)  # registered after the write: it applies
    (v * 1.0).sum().backward()
    res.append(w.grad)
    return res


def case_hook_on_view_reached_by_other_paths(lib):
    """The old view still receives gradients from its earlier uses and from the op's other inputs."""
    res = []
    w, y = _w(lib)
    v = y[1]
    z = v * 2.0
    v.register_hook(lambda g: g * 10)
    v.mul_(3.0)
    (z.sum() + y.sum()).backward()
    res.append(w.grad)
    w, y = _w(lib)
    x = lib.tensor([2.0, 3.0, 4.0], requires_grad=True)
    v = y[1]
    v.register_hook(lambda g: g * 10)
    v.add_(x * x)
    (v * v).sum().backward()
    res += [w.grad, x.grad]
    w, y = _w(lib)
    x = lib.tensor([2.0, 3.0, 4.0], requires_grad=True)
    v = y[1]
    v.register_hook(lambda g: g * 10)
    v.copy_(x)
    v[0] = 7.0
    (y * y).sum().backward()
    res += [w.grad, x.grad]
    return res


def case_hooks_on_base_and_nested_views(lib):
    """A hook on the base (its old version's gradient), on an intermediate view, on a view whose base is written,
    and a node pre-hook on the old view's grad_fn."""
    res = []
    w, y = _w(lib)
    y.register_hook(lambda g: g * 2)
    y[1].mul_(3.0)
    (y * 1.0).sum().backward()
    res.append(w.grad)
    w, y = _w(lib)
    a = y[1]
    a.register_hook(lambda g: g * 10)
    a[0:2].mul_(3.0)
    (y * 1.0).sum().backward()
    res.append(w.grad)
    w, y = _w(lib)
    v = y[1]
    v.register_hook(lambda g: g * 2)
    y.mul_(3.0)
    (v * 1.0).sum().backward()
    res.append(w.grad)
    w, y = _w(lib)
    v, u = y[1], y[:, 0]
    v.register_hook(lambda g: g * 10)
    u.mul_(3.0)
    (v * y).sum().backward()
    res.append(w.grad)
    w, y = _w(lib)
    v = y[1]
    v.grad_fn.register_prehook(lambda gs: (gs[0] * 10,))
    v.mul_(3.0)
    (v * 1.0).sum().backward()
    res.append(w.grad)
    w, y = _w(lib)
    v = w.t()  # a hook on a leaf's view (no in-place)
    v.register_hook(lambda g: g * 10)
    (v * v).sum().backward()
    res.append(w.grad)
    return res


def case_retain_grad_and_edges_of_written_views(lib):
    """retain_grad follows the newest version; the old view's gradient edge is no longer on the base's path; the
    graph PyTorch shows after the write."""
    res = []
    w, y = _w(lib)
    v = y[1]
    v.retain_grad()
    v.mul_(3.0)
    (v * 2.0).sum().backward()
    res += [w.grad, v.grad]
    w, y = _w(lib)
    y.retain_grad()
    v = y[1]
    v.retain_grad()
    v.mul_(3.0)
    (y * 2.0).sum().backward()
    res += [w.grad, y.grad, v.grad is None]
    w, y = _w(lib)
    v = y[1]
    edge = lib.autograd.graph.get_gradient_edge(v)
    v.mul_(3.0)
    res.append(_err(lambda: lib.autograd.grad(y.sum(), edge))[0])
    res.append(lib.autograd.grad(y.sum(), edge, allow_unused=True))
    res.append(_err(lambda: lib.autograd.grad(y.sum(), edge, allow_unused=True, materialize_grads=True))[0])
    res += [v.grad_fn.name(), y.grad_fn.name(),
            [(None if f is None else type(f).__name__, n) for f, n in y.grad_fn.next_functions]]
    return res


def case_double_backward_through_written_view(lib):
    """create_graph: the saved old value of the view keeps the old grad_fn (and its hook) in the second backward."""
    w, y = _w(lib)
    v = y[1]
    v.register_hook(lambda g: g * 10)
    v.mul_(w[0])
    g, = lib.autograd.grad((y * y).sum(), w, create_graph=True)
    g.sum().backward()
    return g, w.grad


def case_grad_layout_of_strided_leaves(lib):
    """``.grad`` made by backward() follows PyTorch's AccumulateGrad layout contract: a leaf's strides where the
    leaf is non-overlapping and dense (transposed, permuted, channels-last), contiguous otherwise (expanded,
    sliced with steps); the same after a second backward accumulates into it."""
    a = lib.arange(24.0).reshape(2, 3, 4) / 8
    leaves = [a[0].t(), a.permute(2, 0, 1), a[:1, :, :1].expand(2, 3, 4), a[:, 1:, ::2],
              a.reshape(1, 2, 3, 4).contiguous(memory_format=lib.channels_last)]
    res = []
    for x in leaves:
        x = x.detach().requires_grad_()
        (x * x).sum().backward()
        first = (x.grad.stride(), x.grad.is_contiguous())
        (x.exp() * 2).sum().backward()
        res += [first, x.grad.stride(), x.grad.is_contiguous(), x.grad]
    return res


test_script_matches_torch = script_test(globals())
