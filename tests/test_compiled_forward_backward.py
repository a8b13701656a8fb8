"""A ``torchish.compile``d forward differentiated outside it (``loss = compiled_model(x); loss.backward()``, the
``model = torch.compile(model)`` use) against PyTorch eager: what the program's own differentiation cannot see
(gradient hooks, ``retain_grad``, module backward hooks, custom ``autograd.Function`` backwards) still runs, inputs
reached only by outputs left out of the loss keep ``.grad`` None, outputs whose graphs share no saved tensors can
be differentiated one after another, and complex gradients follow PyTorch's convention. Each function is called
three times (the first compiled call runs eagerly, the later ones run the traced program)."""
import pytest

import torchish
from oracle import assert_same, needs_torch, run_both

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore:torchish.compile")]


def _jit(T):
    return torchish.compile if T is torchish else (lambda f: f)


def _xy(T):
    return T.tensor([1.0, 2.0, 3.0], requires_grad=True), T.tensor([4.0, -5.0, 6.0], requires_grad=True)


def _hook_on_intermediate(T):
    def f(x, y):
        h = x * y
        h.register_hook(lambda g: g * 3)
        return (h * h).sum()
    return f


def _hook_on_argument(T):
    def f(x, y):
        x.register_hook(lambda g: g * 10)  # (added on every call: eager PyTorch multiplies by 10 per call)
        return (x * y).sum()
    return f


def _retain_grad_inside(T):
    def f(x, y):
        h = x * y
        h.retain_grad()
        return (h * h).sum(), h
    return f


def _custom_function(T):
    class Scaled(T.autograd.Function):  # a backward that is not the forward's derivative
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return g * 100.0 * a
    return lambda x, y: (Scaled.apply(x) * y).sum()


def _straight_through(T):
    class Clip(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clamp(-1, 1)

        @staticmethod
        def backward(ctx, g):
            return g
    return lambda x, y: Clip.apply(x * y).sum()


def _output_left_out(T):
    return lambda x, y: (x * 2, y.exp())  # the loss uses the first only: y.grad stays None


_CASES = {f.__name__: f for f in (_hook_on_intermediate, _hook_on_argument, _retain_grad_inside, _custom_function,
                                  _straight_through, _output_left_out)}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_compiled_forward_backward_outside(name):
    def run(T):
        x, y = _xy(T)
        f = _jit(T)(_CASES[name](T))
        out = []
        for _ in range(3):
            x.grad = y.grad = None
            res = f(x, y)
            res = res if isinstance(res, tuple) else (res,)
            res[0].sum().backward()
            out.append([r.detach() for r in res] + [x.grad, y.grad] + [r.grad for r in res[1:] if r.retains_grad])
        return out
    ref, got = run_both(run)
    assert_same(ref, got)


def _model(T):
    m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2))
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(T.sin(T.arange(p.numel(), dtype=T.float32) + i).reshape(p.shape) * 0.5)
    return m


@pytest.mark.parametrize("hook", ["full_backward", "full_backward_pre", "outer_full_backward"])
def test_compiled_module_backward_hooks(hook):
    def run(T):
        m = _model(T)
        if hook == "full_backward":
            m[2].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
        elif hook == "full_backward_pre":
            m[0].register_full_backward_pre_hook(lambda mod, go: (go[0] * 7,))
        else:
            m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
        cm = _jit(T)(m)
        x = T.tensor([[0.1, 0.2, 0.3], [0.4, -0.5, 0.6]], requires_grad=True)
        out = []
        for _ in range(3):
            m.zero_grad(set_to_none=True)
            x.grad = None
            y = cm(x)
            y.sum().backward()
            out.append([y.detach(), x.grad] + [p.grad for p in m.parameters()])
        return out
    ref, got = run_both(run)
    assert_same(ref, got)


def test_outputs_differentiated_one_after_another():
    """One compiled call's outputs are separate branches to PyTorch: a backward through one frees only the saved
    tensors of its own graph."""
    def run(T):
        x, y = _xy(T)

        def shared(x, y):
            h = x * y
            return h * 2, h * 3
        f = _jit(T)(lambda x, y: (x.sin(), y * y, x + y, x * 2))
        g = _jit(T)(shared)
        out = []
        for _ in range(3):
            x.grad = y.grad = None
            a, b, c, d = f(x, y)
            a.sum().backward()
            b.sum().backward()
            c.sum().backward()
            c.sum().backward()  # (no saved tensors on its path: PyTorch allows it again)
            d.sum().backward()
            out.append([x.grad, y.grad])
            for t in (a, b):
                try:
                    t.sum().backward()
                    out.append("no error")
                except RuntimeError as e:
                    out.append(str(e)[:60])
            h2, h3 = g(x, y)
            h2.sum().backward()
            try:
                h3.sum().backward()  # through h's freed MulBackward0
                out.append("no error")
            except RuntimeError as e:
                out.append(str(e)[:60])
        return out
    ref, got = run_both(run)
    assert_same(ref, got)


def test_complex_gradients_through_compiled_forward_and_func():
    def run(T):
        x = T.tensor([1.0 + 2.0j, -0.5 + 1.0j], requires_grad=True)
        w = T.tensor([0.3, -0.7], requires_grad=True)
        f = _jit(T)(lambda x, w: ((x * x + x.conj() * 3j) * w, (x * w).abs().pow(2).sum()))
        out = []
        for _ in range(3):
            x.grad = w.grad = None
            o, loss = f(x, w)
            (o.abs().sum() + loss).backward()
            out.append((o.detach(), loss.detach(), x.grad, w.grad))
        xs = x.detach()  # a PyTorch formula (abs's) inside JAX's differentiation: the real factor's gradient
        out.append(T.func.grad(lambda w: (xs * w).abs().pow(2).sum())(w.detach()))
        return out
    ref, got = run_both(run)
    assert_same(ref, got)


def test_argument_that_is_no_leaf():
    """An argument that is the output of an earlier layer is no leaf inside the compiled forward either: an
    in-place op on it (``nn.ReLU(inplace=True)`` first) is allowed, ``is_leaf`` says False, a hook on it runs."""
    def run(T):
        m = T.nn.Sequential(T.nn.ReLU(inplace=True), T.nn.Linear(3, 2))
        with T.no_grad():
            m[1].weight.copy_(T.arange(6.0).reshape(2, 3) / 5 - 0.4)
            m[1].bias.fill_(0.1)
        cm = _jit(T)(m)

        def hooked(a):
            a.register_hook(lambda g: g * 5)
            return (a * a).sum() * (2.0 if a.is_leaf else 3.0)
        f = _jit(T)(hooked)
        x = T.tensor([[0.1, -0.2, 0.3], [0.4, -0.5, 0.6]], requires_grad=True)
        out = []
        for _ in range(3):
            x.grad = None
            m.zero_grad(set_to_none=True)
            h = x * 2
            y = cm(h)
            (y.sum() + h.sum()).backward()
            out.append((y.detach(), h.detach(), x.grad, m[1].weight.grad))
            x.grad = None
            loss = f(x * 3)
            loss.backward()
            out.append((loss.detach(), x.grad))
        return out
    ref, got = run_both(run)
    assert_same(ref, got)


def test_output_returned_twice_is_one_object():
    def run(T):
        x, y = _xy(T)

        def f(x, y):
            h = x * y
            return h, h.sum(), h
        f = _jit(T)(f)
        out = []
        for _ in range(3):
            x.grad = None
            a, s, c = f(x, y)
            with T.no_grad():
                a.mul_(2)  # one tensor: c sees the write
            (c * 3).sum().backward()
            out.append((a is c, c.detach(), s.detach(), x.grad))
        return out
    ref, got = run_both(run)
    assert_same(ref, got)


def test_output_saved_for_backward_then_written_in_place():
    """exp saves its output: writing into it after the call makes its backward raise PyTorch's error; sin saves its
    input, so its output may be written."""
    def run(T):
        f = _jit(T)(lambda x: ((x * 2).exp(), (x * 3).sin()))
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = []
        for _ in range(3):
            x.grad = None
            e, s = f(x)
            e.mul_(2)
            s.mul_(2)
            try:
                e.sum().backward()
                out.append("no error")
            except RuntimeError as err:
                out.append(str(err).split(" Hint")[0])
            s.sum().backward()
            out.append((e.detach(), s.detach(), x.grad))
        return out
    ref, got = run_both(run)
    assert_same(ref, got)


@pytest.mark.parametrize("hook", ["register_hook", "post_accumulate_grad_hook", "retain_grad"])
def test_hook_registered_on_a_parameter_inside_the_compiled_function(hook):
    """Eager mode adds one hook per call (the gradient doubles once more each call); the program cannot, so the
    call runs eagerly, and the hooks its trace registered are removed."""
    def run(T):
        m = _model(T)
        w = m[0].weight
        seen = []

        def f(x):
            if hook == "register_hook":
                w.register_hook(lambda g: g * 2)
            elif hook == "post_accumulate_grad_hook":
                w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.sum().item()))
            else:
                w.retain_grad()
            return m(x).sum()
        cf = _jit(T)(f)
        x = T.tensor([[0.1, 0.2, 0.3], [0.4, -0.5, 0.6]])
        out = []
        for _ in range(4):
            m.zero_grad(set_to_none=True)
            cf(x).backward()
            out.append([p.grad for p in m.parameters()])
        return out, seen, w.retains_grad
    ref, got = run_both(run)
    assert_same(ref, got)


def _double_backward(T):
    jit = _jit(T)
    T.manual_seed(0)
    m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 1))
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(T.cos(T.arange(p.numel(), dtype=T.float32) + i).reshape(p.shape))
    cm = jit(m)
    scaled = jit(lambda a, k, w: (a.sin() * w).sum() * k)
    res = []
    for _ in range(3):
        x = T.tensor([[0.1, 0.2, 0.3], [0.5, -0.4, 0.2]], requires_grad=True)
        y = cm(x).pow(2).sum()
        g, = T.autograd.grad(y, x, create_graph=True)  # create_graph outside, then a second backward
        (g ** 2).sum().backward()
        res += [y.detach(), g.detach(), x.grad.clone()] + [p.grad.clone() for p in m.parameters()]
        m.zero_grad()
        g2 = T.autograd.grad(cm(x).sum(), list(m.parameters()), create_graph=True)
        res += list(T.autograd.grad(sum((a * a).sum() for a in g2), x))
        w = T.tensor([1.0, -2.0, 0.5], requires_grad=True)
        gx, = T.autograd.grad(scaled(x[0], 3, w), x, create_graph=True)
        res += list(T.autograd.grad(gx.sum(), (x, w)))
    return res


def test_double_backward_through_a_compiled_forward():
    """create_graph=True outside a compiled forward records the gradients as an op over the call's inputs (the
    traced forward's VJP), so a second backward gives eager PyTorch's second derivatives; it raised."""
    ref, got = run_both(_double_backward)
    assert_same(ref, got)


def _decoder_with_learned_mask(T):
    jit = _jit(T)
    T.manual_seed(0)
    layer = T.nn.TransformerDecoderLayer(4, 1, dim_feedforward=3, dropout=0.0)
    dec = T.nn.TransformerDecoder(layer, 1)
    with T.no_grad():
        for i, p in enumerate(dec.parameters()):
            p.copy_(T.cos(T.arange(p.numel(), dtype=T.float32) * 0.7 + i).reshape(p.shape) * 0.5)
    step = jit(lambda t, m, mask: dec(t, m, tgt_mask=mask).sum())
    res = []
    for causal in (True, True, True, False, False, False):
        t = T.cos(T.arange(12.0)).reshape(3, 1, 4).requires_grad_()
        m = T.sin(T.arange(8.0)).reshape(2, 1, 4)
        mask = T.nn.Transformer.generate_square_subsequent_mask(3)
        mask = (mask if causal else mask.clamp(min=-3.0)).requires_grad_()
        out = step(t, m, mask)
        out.backward()
        res += [out.detach(), t.grad, mask.grad]
    return res


def test_causal_float_mask_that_requires_grad_gets_no_gradient_under_compile():
    """A tgt_mask equal to the causal mask is detected by value and dropped by PyTorch's attention (it gets no
    gradient); inside a trace the value is unknown and torchish used the mask, giving it a gradient. A mask that
    requires grad now makes the comparison run (a graph break under compile, as in PyTorch's torch.compile)."""
    ref, got = run_both(_decoder_with_learned_mask)
    assert_same(ref, got)


def _custom_functions_fullgraph(T):
    class Scaled(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, k, w):
            ctx.save_for_backward(a, w)
            ctx.k, ctx.extra = k, a * 2
            return a * a * w, (a + 1).detach()

        @staticmethod
        def backward(ctx, g, g2):
            a, w = ctx.saved_tensors
            return g * 100.0 * a * ctx.k * ctx.extra, None, (g * a).sum(0)

    class Clip(T.autograd.Function):  # the setup_context form, with a straight-through backward
        @staticmethod
        def forward(x):
            return x.clamp(-1, 1)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g
    w = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    f = lambda x: (Scaled.apply(x, 3, w)[0].sum() + Clip.apply(x * 2).sum(), Scaled.apply(x, 2, w)[1])  # noqa: E731
    if T is torchish:
        f = torchish.compile(f, fullgraph=True)
    res = []
    for _ in range(3):
        x = T.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
        y, z = f(x)
        y.backward()
        res += [y.detach(), z, z.requires_grad, x.grad, w.grad]
        w.grad = None
    if T is torchish:
        assert f.stats["compiled_calls"] == 2
    return res


def test_custom_function_differentiated_outside_compiles_with_fullgraph():
    """A custom autograd.Function in a compiled forward differentiated outside it traces into the program (its
    backward becomes a jax.custom_vjp rule of the program's VJP, on the saved tensors' values), as PyTorch's
    torch.compile(fullgraph=True) supports it; torchish raised a graph break."""
    ref, got = run_both(_custom_functions_fullgraph)
    assert_same(ref, got)
