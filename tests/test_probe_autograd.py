"""Autograd behaviours found by differential probing against PyTorch 2.13: inference tensors saved for backward,
``next_functions`` of nodes with Scalar arguments, the grad_fn of create_graph gradients, ``Node.metadata`` and
``materialize_grads``. Each case runs the same code on both libraries and compares what it shows."""
import pytest

from oracle import needs_torch, torch, torchish

pytestmark = needs_torch


def _outcome(fn):
    """What ``fn()`` gives, or the exception type and the start of its message."""
    try:
        return ("ok", fn())
    except RuntimeError as e:
        return ("RuntimeError", str(e).split(". ")[0])


# ---- inference tensors saved for backward -----------------------------------------------------------------

_INFERENCE_CASES = {
    "mul": lambda lib, x, w, i: x * w,
    "rmul": lambda lib, x, w, i: w * x,
    "add": lambda lib, x, w, i: x + w,  # add saves nothing
    "sub": lambda lib, x, w, i: x - w,
    "div_self": lambda lib, x, w, i: w / x,
    "div_other": lambda lib, x, w, i: x / w,
    "scalar_mul": lambda lib, x, w, i: x * 2,  # nothing requires grad: no node
    "dot": lambda lib, x, w, i: x.dot(w),
    "slice_view": lambda lib, x, w, i: x[0:2] * w[:2],
    "clone": lambda lib, x, w, i: x.clone() * w,
    "cat": lambda lib, x, w, i: lib.cat([x, w]),
    "gather_index": lambda lib, x, w, i: w.gather(0, i),
    "index_select": lambda lib, x, w, i: w.index_select(0, i),
    "maximum": lambda lib, x, w, i: lib.maximum(x, w),
    "addcmul_self": lambda lib, x, w, i: lib.addcmul(w, x, x),
    "addcmul_tensor": lambda lib, x, w, i: lib.addcmul(x, w, x),
    "lerp": lambda lib, x, w, i: lib.lerp(w, x, 0.5),
    "pow": lambda lib, x, w, i: w ** x,
    "mse": lambda lib, x, w, i: lib.nn.functional.mse_loss(w, x),
    "detach": lambda lib, x, w, i: x.detach() * w,
    "inplace_mul": lambda lib, x, w, i: w.clone().mul_(x),
    "inplace_add": lambda lib, x, w, i: w.clone().add_(x),
}


def _inference_inputs(lib):
    with lib.inference_mode():
        x = lib.ones(3)
        i = lib.zeros(3, dtype=lib.int64)
    return x, lib.ones(3, requires_grad=True), i


@pytest.mark.parametrize("case", sorted(_INFERENCE_CASES))
def test_inference_tensor_saved_for_backward(case):
    fn = _INFERENCE_CASES[case]
    got = [_outcome(lambda lib=lib: type(fn(lib, *_inference_inputs(lib)).grad_fn).__name__)
           for lib in (torch, torchish)]
    assert got[0] == got[1]


def test_inference_tensor_error_wording():
    x, w, _ = _inference_inputs(torchish)
    with pytest.raises(RuntimeError) as e:
        x * w
    tx, tw, _ = _inference_inputs(torch)
    with pytest.raises(RuntimeError) as te:
        tx * tw
    prefix = "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode"
    assert str(te.value).startswith(prefix) and str(e.value).startswith(prefix)


@pytest.mark.parametrize("lib_name", ["torch", "torchish"])
def test_inference_tensor_allowed_without_graph(lib_name):
    lib = torch if lib_name == "torch" else torchish
    x, w, _ = _inference_inputs(lib)
    with lib.no_grad():
        assert (x * w).grad_fn is None
    with lib.inference_mode():
        assert (x * w).grad_fn is None
        with lib.enable_grad():  # inference mode records nothing, whatever the grad mode says
            assert lib.is_grad_enabled()
            assert (w * 2).grad_fn is None


def test_inference_tensor_saved_by_custom_function():
    def run(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(b)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g, None
        x, w, _ = _inference_inputs(lib)
        return [_outcome(lambda: F.apply(w, x).grad_fn.name()), _outcome(lambda: F.apply(x.clone(), x).grad_fn)]
    assert run(torch) == run(torchish)


# ---- next_functions ---------------------------------------------------------------------------------------

def _names(fn):
    return [None if n is None else n.name().split("::")[-1] for n, _ in fn.next_functions]


_NEXT_CASES = {
    "add": lambda lib, a, b, n, m: a + b,
    "add_alpha": lambda lib, a, b, n, m: lib.add(a, b, alpha=2),
    "sub_alpha": lambda lib, a, b, n, m: lib.sub(a, b, alpha=2),
    "add_scalar": lambda lib, a, b, n, m: a + 1,
    "radd_scalar": lambda lib, a, b, n, m: 1 + a,
    "rsub_scalar": lambda lib, a, b, n, m: 1 - a,
    "rsub": lambda lib, a, b, n, m: lib.rsub(a, b),
    "mul_scalar": lambda lib, a, b, n, m: a * 2,
    "rmul_scalar": lambda lib, a, b, n, m: 2 * a,
    "div_scalar": lambda lib, a, b, n, m: a / 2,
    "mul_const": lambda lib, a, b, n, m: n * a,
    "pow_scalar": lambda lib, a, b, n, m: a ** 2,
    "pow_base": lambda lib, a, b, n, m: 2 ** a,
    "addcmul": lambda lib, a, b, n, m: lib.addcmul(a, b, b, value=2),
    "addcmul_const": lambda lib, a, b, n, m: lib.addcmul(n, a, b),
    "addcdiv": lambda lib, a, b, n, m: lib.addcdiv(a, b, b, value=2),
    "lerp_scalar": lambda lib, a, b, n, m: lib.lerp(a, n, 0.5),
    "lerp_tensor": lambda lib, a, b, n, m: lib.lerp(a, b, n),
    "clamp": lambda lib, a, b, n, m: a.clamp(0, 1),
    "clamp_min": lambda lib, a, b, n, m: a.clamp(min=0),
    "clamp_tensor_min": lambda lib, a, b, n, m: a.clamp(min=b),
    "clamp_tensor_max": lambda lib, a, b, n, m: a.clamp(max=b),
    "where_scalar": lambda lib, a, b, n, m: lib.where(m, a, 1.0),
    "where_scalar_first": lambda lib, a, b, n, m: lib.where(m, 1.0, a),
    "where": lambda lib, a, b, n, m: lib.where(m, a, b),
    "masked_fill": lambda lib, a, b, n, m: a.masked_fill(m, 2.0),
    "masked_fill_tensor": lambda lib, a, b, n, m: a.masked_fill(m, lib.tensor(2.0)),
    "gather": lambda lib, a, b, n, m: a.gather(0, lib.tensor([0, 1])),
    "index": lambda lib, a, b, n, m: a[lib.tensor([0, 1])],
    "fmod_scalar": lambda lib, a, b, n, m: a.fmod(2),
    "mse": lambda lib, a, b, n, m: lib.nn.functional.mse_loss(a, n),
    "inplace_add_scalar": lambda lib, a, b, n, m: a.clone().add_(1),
    "inplace_clamp": lambda lib, a, b, n, m: a.clone().clamp_(0, 1),
    "layer_norm": lambda lib, a, b, n, m: lib.nn.functional.layer_norm(a, (3,)),
    "batch_norm": lambda lib, a, b, n, m: lib.nn.functional.batch_norm(a.reshape(3, 1), None, None, training=True),
    "conv_no_bias": lambda lib, a, b, n, m: lib.nn.functional.conv1d(a.reshape(1, 1, 3), b.reshape(1, 1, 3)),
}


def _next_inputs(lib):
    return (lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True), lib.ones(3),
            lib.tensor([True, False, True]))


@pytest.mark.parametrize("case", sorted(_NEXT_CASES))
def test_next_functions_match(case):
    fn = _NEXT_CASES[case]
    got = []
    for lib in (torch, torchish):
        out = fn(lib, *_next_inputs(lib))
        got.append((type(out.grad_fn).__name__, _names(out.grad_fn)))
    assert got[0] == got[1]


def test_next_functions_after_backward_and_call():
    """The listing survives the release of the saved values; calling a node returns one gradient per entry."""
    for lib in (torch, torchish):
        a = lib.ones(3, requires_grad=True)
        y = a + 1
        y.sum().backward()
        assert _names(y.grad_fn) == ["AccumulateGrad", None]
        res = (a * 2).grad_fn(lib.ones(3))
        assert isinstance(res, tuple) and len(res) == 2 and res[1] is None
        assert res[0].tolist() == [2.0, 2.0, 2.0]


# ---- create_graph gradients -------------------------------------------------------------------------------

_DOUBLE_CASES = {
    "pow": lambda lib, x: (x ** 2).sum(),
    "mul_self": lambda lib, x: (x * x).sum(),
    "sin": lambda lib, x: x.sin().sum(),
    "exp": lambda lib, x: x.exp().sum(),
    "log": lambda lib, x: x.log().sum(),
    "sqrt": lambda lib, x: x.sqrt().sum(),
    "reciprocal": lambda lib, x: (1 / x).sum(),
    "tanh": lambda lib, x: x.tanh().sum(),
    "sigmoid": lambda lib, x: x.sigmoid().sum(),
    "relu": lambda lib, x: x.relu().sum(),
    "softmax": lambda lib, x: x.softmax(0)[0],
    "log_softmax": lambda lib, x: x.log_softmax(0)[0],
    "atan": lambda lib, x: x.atan().sum(),
    "mm": lambda lib, x: (x.reshape(1, 3) @ x.reshape(3, 1)).sum(),
}


# ops whose gradient PyTorch builds from several nodes: only the last one's name is compared
_DOUBLE_NAME_ONLY = {
    "logit": lambda lib, x: x.logit().sum(),
    "exp2": lambda lib, x: x.exp2().sum(),
    "cos": lambda lib, x: x.cos().sum(),
    "erf": lambda lib, x: x.erf().sum(),
}


@pytest.mark.parametrize("case", sorted(_DOUBLE_NAME_ONLY))
def test_create_graph_grad_fn_name_composite(case):
    fn = _DOUBLE_NAME_ONLY[case]
    names = []
    for lib in (torch, torchish):
        x = lib.tensor([0.3, 0.6, 0.9], requires_grad=True)
        g, = lib.autograd.grad(fn(lib, x), x, create_graph=True)
        names.append(g.grad_fn.name())
    assert names[0] == names[1]


@pytest.mark.parametrize("case", sorted(_DOUBLE_CASES))
def test_create_graph_grad_fn_name(case):
    fn = _DOUBLE_CASES[case]
    got = []
    for lib in (torch, torchish):
        x = lib.tensor([0.3, 0.6, 0.9], requires_grad=True)
        g, = lib.autograd.grad(fn(lib, x), x, create_graph=True)
        got.append((g.grad_fn.name(), len(g.grad_fn.next_functions), g.grad_fn.next_functions[0][0] is None))
    assert got[0] == got[1]


# ---- Node.metadata, materialize_grads ---------------------------------------------------------------------

def test_node_metadata():
    for lib in (torch, torchish):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.grad_fn.metadata["k"] = 1
        assert y.grad_fn.metadata == {"k": 1}
        assert y.grad_fn.next_functions[0][0].metadata == {}


@pytest.mark.parametrize("create_graph", [False, True])
def test_materialize_grads_requires_grad(create_graph):
    got = []
    for lib in (torch, torchish):
        x = lib.ones(2, requires_grad=True)
        z = lib.ones(2, requires_grad=True)
        r = lib.autograd.grad((x * 2).sum(), (x, z), materialize_grads=True, create_graph=create_graph)
        got.append([(t.tolist(), t.requires_grad) for t in r])
    assert got[0] == got[1]
