"""Regressions found by a differential fuzzer of autograd semantics (random small programs of views, in-place ops,
grad modes, hooks, custom Functions and checkpoints, run with PyTorch and torchish): each test is the minimised
program of one mismatch class — views made under no_grad / inference_mode, in-place writes on ``detach()`` /
``.data`` aliases, the node names of ``zero_`` / ``fill_``, tensor hooks of outputs no gradient reached, what
``autograd.grad`` captures at a node that still runs, outputs of custom Functions that return an input, leaves
``detach_()``ed after use, the regenerated grad_fn of written views, and checkpoints (reentrant under
``autograd.grad``, inputs modified in place)."""
import warnings

import pytest

from oracle import arr, assert_same, check_raises, run_both

warnings.filterwarnings("ignore", category=UserWarning)


def _names(fn):
    """grad_fn class name and its next_functions' names (None where an edge is empty)."""
    if fn is None:
        return None
    return type(fn).__name__, tuple(None if f is None else type(f).__name__ for f, _ in fn.next_functions)


# ----------------------------------------------------------------------------------------------------------------
# views made with grad recording off


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled"])
def test_view_made_under_no_grad_reports_requires_grad_and_passes_no_gradient(mode):
    def fn(T):
        x = T.tensor(arr(4), requires_grad=True)
        ctx = T.set_grad_enabled(False) if mode == "set_grad_enabled" else getattr(T, mode)()
        with ctx:
            v = x[:2]
            w = x.detach()[:2]
        y = (v * 2).sum() + (x * 3).sum()
        y.backward()
        gs = T.autograd.grad((x[:2] * v).sum(), [x, v], allow_unused=True)
        return [v.requires_grad, v.is_leaf, v.grad_fn is None, w.requires_grad, v.is_inference(),
                _names(y.grad_fn.next_functions[0][0].next_functions[0][0]), x.grad, gs[1] is None]
    ref, got = run_both(fn)
    assert_same(ref, got)


def test_view_made_under_no_grad_refuses_inplace_with_grad_mode():
    def fn(T):
        x = T.tensor(arr(4), requires_grad=True) * 1
        with T.no_grad():
            v = x[:2]
        v.add_(1)
    check_raises(fn, match="created in no_grad mode")


def test_view_made_under_no_grad_refuses_its_grad_fn_once_written():
    def fn(T):
        x = T.tensor(arr(4), requires_grad=True) * 1
        with T.no_grad():
            v = x[1:]
            v.mul_(2)  # allowed under no_grad, but the view's graph cannot be rebuilt afterwards
        return v.grad_fn
    check_raises(fn, match="created in no_grad mode")


def test_inference_mode_view_of_a_normal_tensor_is_normal_and_inference_tensors_have_no_version():
    def fn(T):
        x = T.tensor(arr(4), requires_grad=True)
        with T.inference_mode():
            v = x[:2]
            w = x * 2
        return [v.is_inference(), w.is_inference(), v._version]
    ref, got = run_both(fn)
    assert_same(ref, got)

    def version(T):
        with T.inference_mode():
            w = T.ones(3) * 2
        return w._version
    check_raises(version, match="do not track version counter")


# ----------------------------------------------------------------------------------------------------------------
# in-place writes on detach() / .data aliases


@pytest.mark.parametrize("alias", ["data", "detach"])
@pytest.mark.parametrize("write", ["setitem", "add_", "copy_"])
def test_inplace_write_with_grad_on_an_alias_records_on_the_alias(alias, write):
    def fn(T):
        x = T.tensor(arr(4), requires_grad=True) * 1
        y = T.tensor(arr(seed=1), requires_grad=True)
        d = x.data if alias == "data" else x.detach()
        if write == "setitem":
            d[1:][0] = y * 3
        elif write == "add_":
            d.add_(y)
        else:
            d.copy_(y.expand(4))
        (d * d).sum().backward()
        return [d.requires_grad, d.is_leaf, _names(d.grad_fn), _names(x.grad_fn), d._version, x._version, d, x,
                y.grad]
    ref, got = run_both(fn)
    assert_same(ref, got)


# ----------------------------------------------------------------------------------------------------------------
# node names, hooks and captured gradients


def test_zero_and_fill_nodes_are_named_by_overload():
    def fn(T):
        out = []
        for k in range(3):
            x = T.tensor(arr(3), requires_grad=True) * 1
            if k == 0:
                x.zero_()
            elif k == 1:
                x.fill_(2.0)
            else:
                x.fill_(T.tensor(2.0, requires_grad=True))
            out.append(_names(x.grad_fn))
        return out
    ref, got = run_both(fn)
    assert_same(ref, got)


def test_tensor_hook_of_an_output_no_gradient_reached_is_called_with_none():
    def fn(T):
        log = []
        x = T.tensor(arr(4), requires_grad=True)
        a, b = (x * 1).split(2)
        b.register_hook(lambda g: log.append(("b", g)))
        b.grad_fn.register_prehook(lambda go: log.append(("pre", [g is None for g in go])))
        a.sum().backward()
        c, d = x.unbind(0)[:2]
        d.register_hook(lambda g: log.append(("d", g)))
        c.backward()
        return log, x.grad
    ref, got = run_both(fn)
    assert_same(ref, got)


def test_grad_captures_a_node_that_still_runs_before_its_tensor_hooks():
    def fn(T):
        x = T.tensor(arr(3), requires_grad=True)
        y = x * 1
        y.register_hook(lambda g: g * 2)
        loss = (y * 3).sum()
        alone = T.autograd.grad(loss, [y], retain_graph=True)
        with_x = T.autograd.grad(loss, [y, x], retain_graph=True)
        return list(alone) + list(with_x)
    ref, got = run_both(fn)
    assert_same(ref, got)


# ----------------------------------------------------------------------------------------------------------------
# custom Functions and checkpoints


def test_custom_function_returning_an_input_gives_a_view_that_refuses_inplace():
    def make(T):
        class Identity(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g
        return Identity

    def fn(T):
        y = make(T).apply(T.tensor(arr(3), requires_grad=True) * 1)
        return [y._is_view(), _names(y.grad_fn)]
    ref, got = run_both(fn)
    assert_same(ref, got)

    def inplace(T):
        make(T).apply(T.tensor(arr(3), requires_grad=True) * 1).add_(1)
    check_raises(inplace, match="Output 0 of Identity is a view")

    def module_hook(T):
        m = T.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda *a: None)
        m(T.tensor(arr(3), requires_grad=True)).mul_(2)
    check_raises(module_hook, match="Output 0 of BackwardHookFunction is a view")


def test_views_of_a_custom_function_view_output_refuse_inplace_and_a_rebased_grad_fn():
    def make(T):
        class Identity(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g
        return Identity

    def view_inplace(T):
        make(T).apply(T.tensor(arr(4), requires_grad=True) * 1)[1:].add_(1)
    check_raises(view_inplace, match="Output 0 of Slice is a view and is being modified inplace")

    def rebased(T):
        b = T.tensor(arr(4), requires_grad=True) * 1
        y = make(T).apply(b)
        with T.no_grad():
            b.mul_(2)
        return y.grad_fn
    check_raises(rebased, match="Output 0 of Identity is a view and its base")


def test_custom_function_dirtying_a_view_input_returns_one_tensor_only():
    def fn(T):
        class Twice(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a, a * 3

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 6
        Twice.apply((T.tensor(arr(4), requires_grad=True) * 1)[1:])
    check_raises(fn, match="cannot return more than one Tensor")


def test_leaf_detached_in_place_after_use_gets_no_gradient():
    def fn(T):
        log = []
        x = T.tensor(arr(3), requires_grad=True)
        v = x[:2]
        x.register_hook(lambda g: log.append(g))
        x.detach_()
        (v * 2).sum().backward()
        return [x.grad is None, x.requires_grad, log]
    ref, got = run_both(fn)
    assert_same(ref, got)


def test_grad_fn_of_a_view_whose_storage_was_written_is_regenerated_as_as_strided():
    def fn(T):
        x = T.tensor(arr(4, 3), requires_grad=True) * 1
        v = x[1:].t()
        w = x[0]
        v.add_(T.tensor(arr(3, 3, seed=1), requires_grad=True))
        (v.sum() + (w * w).sum()).backward()
        return [_names(v.grad_fn), _names(w.grad_fn), type(x.grad_fn).__name__]
    ref, got = run_both(fn)
    assert_same(ref, got)


def test_view_written_with_grad_off_rebuilds_its_grad_fn_and_multi_views_refuse():
    def fn(T):
        x = T.tensor(arr(4, 3), requires_grad=True)
        v = x[1:]
        d = x.data.unsqueeze(-1)
        w = x.unsqueeze(-1)
        with T.no_grad():
            v.mul_(2)
        d.add_(1)  # a `.data` write moves no version of x's views
        return [_names(v.grad_fn), _names(w.grad_fn), v._version]
    ref, got = run_both(fn)
    assert_same(ref, got)

    def multi(T):
        x = T.tensor(arr(3, 4), requires_grad=True)
        a = x.unbind(0)[1]
        with T.no_grad():
            x.detach().zero_()
            a.add_(1)
        return a.grad_fn
    check_raises(multi, match="Output 1 of Unbind is a view and its base")


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_refuses_an_input_it_saved_being_modified_in_place(reentrant):
    def fn(T):
        import importlib
        cp = importlib.import_module(T.__name__ + ".utils.checkpoint")
        a = T.tensor(arr(3), requires_grad=True) * 1
        y = cp.checkpoint(lambda t: (t.sin() * t).exp(), a, use_reentrant=reentrant)
        a.copy_(T.zeros(3))
        y.sum().backward()
    check_raises(fn, match="modified by an inplace operation")


@pytest.mark.parametrize("how", ["grad", "inputs"])
def test_reentrant_checkpoint_refuses_grad_and_backward_inputs(how):
    def fn(T):
        import importlib
        cp = importlib.import_module(T.__name__ + ".utils.checkpoint")
        x = T.tensor(arr(3), requires_grad=True)
        y = cp.checkpoint(lambda t: t.sin() * 2, x, use_reentrant=True).sum()
        if how == "grad":
            T.autograd.grad(y, x)
        else:
            y.backward(inputs=[x])
    check_raises(fn, match="use_reentrant=True")


# ----------------------------------------------------------------------------------------------------------------
# CopySlices of an op applied in place to a view, and checkpoint inputs written in place


def _names_nr(fn):
    return type(fn).__name__, tuple((None if f is None else type(f).__name__, i) for f, i in fn.next_functions)


@pytest.mark.parametrize("write", ["mul_tensor", "mul_scalar", "addcmul", "setitem", "copy", "clamp", "add_alpha",
                                   "view_sub", "zero", "exp"])
def test_copyslices_shows_the_base_then_the_inplace_ops_other_inputs(write):
    def fn(T):
        x = T.tensor(arr(4), requires_grad=True)
        w = T.tensor(arr(2) + 2, requires_grad=True)
        y = x * 1
        {"mul_tensor": lambda: y[1:3].mul_(w), "mul_scalar": lambda: y[1:3].mul_(2),
         "addcmul": lambda: y[1:3].addcmul_(w, w * 2), "setitem": lambda: y.__setitem__(slice(1, 3), w * 3),
         "copy": lambda: y[1:3].copy_(w), "clamp": lambda: y[1:3].clamp_(min=0.5),
         "add_alpha": lambda: y[::2].add_(w, alpha=2), "view_sub": lambda: y.view(2, 2)[0].sub_(w),
         "zero": lambda: y[1:3].zero_(), "exp": lambda: y[1:3].exp_()}[write]()
        y.sum().backward()
        return [_names_nr(y.grad_fn), x.grad, w.grad]
    ref, got = run_both(fn)
    assert_same(ref, got)


@pytest.mark.parametrize("saves", [False, True])
@pytest.mark.parametrize("where", ["after", "inside", "view_after"])
def test_checkpoint_input_written_in_place_keeps_the_forwards_graph(where, saves):
    """PyTorch keeps the forward's graph (the recomputation only refills saved values): an input written in place
    later — or by the function itself — still passes its gradient where it went at the forward; and when the
    function saved anything, every input's version is checked at backward."""
    def fn(T):
        import importlib
        cp = importlib.import_module(T.__name__ + ".utils.checkpoint")
        x = T.tensor(arr(3), requires_grad=True)
        w = T.tensor(arr(3) - 1, requires_grad=True)
        inp = x * 1
        a = inp[1:] if where == "view_after" else inp

        def body(t, u):
            if where == "inside":
                t.mul_(2)
            s = t.exp() * 0 + t if saves else t * 2 + 1
            return (s + u[: s.shape[0]]).sum()
        out = cp.checkpoint(body, a, w, use_reentrant=False)
        if where != "inside":
            a.add_(1)
        out.backward()
        return [x.grad, w.grad]
    if saves:
        check_raises(fn, match="modified by an inplace operation")
    else:
        ref, got = run_both(fn)
        assert_same(ref, got)


def test_create_graph_gradients_that_depend_on_no_differentiable_input_do_not_require_grad():
    """PyTorch computes each input's gradient with its own formula: under create_graph=True a gradient that
    depends only on the incoming gradient (a bias's: its sum over the batch) has no grad_fn."""
    def fn(T):
        x = T.tensor(arr(3, 4), requires_grad=True)
        lin = T.nn.Linear(4, 2)
        lin(x).sum().backward(create_graph=True)
        y = T.tensor(arr(2), requires_grad=True)
        z = T.tensor(arr(2) + 1, requires_grad=True)
        g1, = T.autograd.grad((y * 2).sum(), y, create_graph=True)
        g2, = T.autograd.grad((y ** 3).sum(), y, create_graph=True)
        ga, gb = T.autograd.grad((y * z).sum(), [y, z], create_graph=True)
        return [[t.requires_grad for t in (x.grad, lin.weight.grad, lin.bias.grad, g1, g2, ga, gb)],
                [None if t.grad_fn is None else type(t.grad_fn).__name__ for t in (lin.bias.grad, g1, g2)],
                g2, ga, gb]
    ref, got = run_both(fn)
    assert_same(ref, got)


def test_create_graph_through_an_empty_tensor_first_keeps_later_gradients_differentiable():
    """(autograd-programs fuzzer seed 130224: std of the diagonal of a (0, 3) leaf, autograd.grad with
    create_graph=True) torchish decides once per backward op whether its outputs depend on its inputs, from the
    op's jaxpr; traced on an empty array JAX builds the result as a constant, so the first create_graph backward of
    pow/diagonal/select through an empty tensor left that gradient, and every later one of the op at any shape,
    without grad_fn. PyTorch's formulas record it."""
    from torchish.ops import opnode
    opnode._USED.clear()  # (the analysis is kept per op for the process: start from none, as a fresh process)

    def fn(T):
        out = []
        for shape in ((0, 3), (2, 3)):
            x = T.tensor(arr(*shape), requires_grad=True)
            g, = T.autograd.grad(x.diagonal().pow(2).sum() + x[:, 0].pow(3).sum(), x, create_graph=True)
            (g * g).sum().backward()
            out += [g.requires_grad, _names(g.grad_fn)[0], g.detach(), x.grad]
        return out
    ref, got = run_both(fn)
    assert_same(ref, got)


def test_create_graph_through_a_size_one_dim_first_keeps_later_gradients_differentiable():
    """cumprod's gradient over a dim of size 1 is the incoming gradient itself (no dependency on the input, so it
    does not require grad, as PyTorch's); torchish kept that analysis for the op at every later shape, so the
    gradient over a longer dim did not require grad and the second derivative was silently missing. Found by a scan
    of in-place ops on views (cumprod_ on an unsqueezed view, then a double backward)."""
    from torchish.ops import opnode
    opnode._USED.clear()  # (the analysis is kept for the process: start from none, as a fresh process)

    def fn(T):
        out = []
        for view in (lambda x: x.unsqueeze(0), lambda x: x):
            x = T.tensor(arr(3, 4), requires_grad=True)
            g, = T.autograd.grad(view(x * 1.0).cumprod(0).sum(), x, create_graph=True)
            out += [g.requires_grad, g.detach()]
            if g.requires_grad:
                (g * g).sum().backward()
                out.append(x.grad)
        return out
    ref, got = run_both(fn)
    assert_same(ref, got)


def test_create_graph_gradient_of_a_transposing_view_is_the_inverse_views_node():
    """PyTorch's derivative of t/transpose/permute/movedim is the inverse permutation, of unsqueeze a squeeze: a
    gradient recorded with create_graph=True shows that op's node (TBackward0...), not <Op>BackwardBackward0
    (found replaying the autograd-programs fuzzer's seed 130224 by hand)."""
    def fn(T):
        x = T.tensor(arr(2, 3), requires_grad=True)
        views = (lambda v: v.t(), lambda v: v.transpose(0, 1), lambda v: v.permute(1, 0), lambda v: v.mT,
                 lambda v: v.movedim(0, 1), lambda v: v.unsqueeze(1))
        return [type(T.autograd.grad(f(x).pow(2).sum(), x, create_graph=True)[0].grad_fn).__name__ for f in views]
    ref, got = run_both(fn)
    assert_same(ref, got)
