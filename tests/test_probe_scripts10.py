"""Regression tests from running the programs of the official PyTorch tutorials (pytorch.org/tutorials) on torchish
and on PyTorch: the autograd introduction, "Learning PyTorch with Examples" (the polynomial fit with tensors,
autograd, a custom LegendrePolynomial3 Function, nn and optim, and the dynamic DynamicNet), forward-mode AD, double
backward with custom Functions, saved-tensor hooks, "Extending torch.func with autograd.Function" and the
scaled_dot_product_attention tutorial's CausalSelfAttention. Each ``case_*`` is written against the PyTorch API
only; inputs and weights come from formulas (never a framework's RNG). Each returns losses, selected gradients,
parameters and printed reprs where the tutorial prints.

Where a program differs from the tutorial it follows, a comment says why."""
import math

import numpy as np

import torchish
from oracle import needs_torch, same_error, torch
from oracle import formula_data as _data, formula_init as _init, script_test


def case_autograd_tutorial(lib):
    x = lib.ones(5)
    y = lib.zeros(3)
    w = lib.sin(lib.arange(15.0)).reshape(5, 3).requires_grad_(True)
    b = lib.cos(lib.arange(3.0)).requires_grad_(True)
    z = lib.matmul(x, w) + b
    loss = lib.nn.functional.binary_cross_entropy_with_logits(z, y)
    out = [type(z.grad_fn).__name__ if False else z.grad_fn.name(), loss.grad_fn.name()]
    loss.backward()
    out += [w.grad, b.grad]
    z = lib.matmul(x, w) + b
    out.append(z.requires_grad)
    with lib.no_grad():
        z = lib.matmul(x, w) + b
    out.append(z.requires_grad)
    z_det = (lib.matmul(x, w) + b).detach()
    out.append(z_det.requires_grad)
    inp = lib.eye(4, 5, requires_grad=True)
    o = (inp + 1).pow(2).t()
    o.backward(lib.ones_like(o), retain_graph=True)
    out.append(inp.grad.clone())
    o.backward(lib.ones_like(o), retain_graph=True)
    out.append(inp.grad.clone())
    inp.grad.zero_()
    o.backward(lib.ones_like(o), retain_graph=True)
    out.append(inp.grad.clone())
    # blitz autograd
    a = lib.tensor([2., 3.], requires_grad=True)
    b = lib.tensor([6., 4.], requires_grad=True)
    Q = 3 * a ** 3 - b ** 2
    Q.backward(gradient=lib.tensor([1., 1.]))
    out += [a.grad, b.grad, 9 * a ** 2 == a.grad, -2 * b == b.grad]
    x = lib.rand(5, 5) if False else _data(lib, 5, 5)
    y = _data(lib, 5, 5, seed=1)
    z = _data(lib, 5, 5, seed=2).requires_grad_()
    a = x + y
    out.append(a.requires_grad)
    b = x + z
    out.append(b.requires_grad)
    out.append(repr(lib.tensor([1., 2.], requires_grad=True) * 2))
    out.append(repr(Q))
    return out


def case_polynomial(lib):
    x = lib.linspace(-math.pi, math.pi, 200)
    y = lib.sin(x)
    out = []
    # tensors manual
    a, b, c, d = [lib.tensor(v) for v in (0.1, -0.2, 0.3, -0.05)]
    lr = 1e-6
    for t in range(5):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        grad_y_pred = 2.0 * (y_pred - y)
        a -= lr * grad_y_pred.sum()
        b -= lr * (grad_y_pred * x).sum()
        c -= lr * (grad_y_pred * x ** 2).sum()
        d -= lr * (grad_y_pred * x ** 3).sum()
        out.append(loss)
    out.append(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3'[:20])
    # autograd
    dtype = lib.float
    a, b, c, d = [lib.tensor(v, dtype=dtype, requires_grad=True) for v in (0.1, -0.2, 0.3, -0.05)]
    for t in range(5):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        out.append(loss.item())
        loss.backward()
        with lib.no_grad():
            a -= lr * a.grad
            b -= lr * b.grad
            c -= lr * c.grad
            d -= lr * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    out += [a, b, c, d]

    class LegendrePolynomial3(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)
    a = lib.full((), 0.0, requires_grad=True)
    b = lib.full((), -1.0, requires_grad=True)
    c = lib.full((), 0.0, requires_grad=True)
    d = lib.full((), 0.3, requires_grad=True)
    lr = 5e-6
    for t in range(5):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        out.append(loss.item())
        loss.backward()
        with lib.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    out += [a, b, c, d, y_pred.grad_fn.name()]
    # nn
    p = lib.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1))
    _init(lib, model)
    loss_fn = lib.nn.MSELoss(reduction='sum')
    for t in range(3):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        out.append(loss.item())
        model.zero_grad()
        loss.backward()
        with lib.no_grad():
            for param in model.parameters():
                param -= 1e-6 * param.grad
    linear_layer = model[0]
    out += [linear_layer.bias.item(), linear_layer.weight[:, 0].item(), str(xx.dtype)]
    for opt_cls, kw in ((lib.optim.RMSprop, dict(lr=1e-3)), (lib.optim.SGD, dict(lr=1e-6, momentum=0.9))):
        _init(lib, model)
        opt = opt_cls(model.parameters(), **kw)
        for t in range(3):
            loss = loss_fn(model(xx), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            out.append(loss.item())

    class Polynomial3(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Parameter(lib.tensor(0.1))
            self.b = lib.nn.Parameter(lib.tensor(0.2))
            self.c = lib.nn.Parameter(lib.tensor(-0.1))
            self.d = lib.nn.Parameter(lib.tensor(-0.05))

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'
    m = Polynomial3()
    opt = lib.optim.SGD(m.parameters(), lr=1e-6)
    for t in range(3):
        loss = loss_fn(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    out.append(m.string()[:12])

    class DynamicNet(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Parameter(lib.tensor(0.1))
            self.b = lib.nn.Parameter(lib.tensor(0.2))
            self.c = lib.nn.Parameter(lib.tensor(-0.1))
            self.d = lib.nn.Parameter(lib.tensor(-0.05))
            self.e = lib.nn.Parameter(lib.tensor(0.01))

        def forward(self, x, k):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, k):
                y = y + self.e * x ** exp
            return y
    m = DynamicNet()
    opt = lib.optim.SGD(m.parameters(), lr=1e-8, momentum=0.9)
    for t, k in enumerate((4, 5, 6, 5)):
        loss = loss_fn(m(x, k), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(loss.item())
    out.append([p.detach() for p in m.parameters()])
    return out


def case_forward_ad(lib):
    fwAD = lib.autograd.forward_ad
    primal = _data(lib, 4, 4)  # (square, as the tutorial's: a transposed tangent has the primal's shape)
    tangent = _data(lib, 4, 4, seed=1)

    def fn(x, y):
        return x ** 2 + y ** 2
    out = []
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        out.append(fwAD.unpack_dual(dual_input).tangent is tangent)
        dual_input_alt = fwAD.make_dual(primal, tangent.T)
        out.append(fwAD.unpack_dual(dual_input_alt).tangent is not tangent)
        plain_tensor = _data(lib, 4, 4)
        dual_output = fn(dual_input, plain_tensor.T)
        jvp = fwAD.unpack_dual(dual_output).tangent
        out.append(jvp)
        out.append(fwAD.unpack_dual(dual_output).primal)
        out.append(fwAD.unpack_dual(dual_output)[0].shape)
    out.append(fwAD.unpack_dual(dual_output).tangent is None)
    model = lib.nn.Linear(5, 5)
    _init(lib, model)
    input = _data(lib, 16, 5)
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: _data(lib, *p.shape, seed=3) for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        o = model(input)
        jvp = fwAD.unpack_dual(o).tangent
    out.append(jvp)
    return out


def case_double_backward_functions(lib):
    out = []

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return grad_out * 2 * x
    x = _data(lib, 3, 3, dtype=lib.double).requires_grad_()
    out.append(lib.autograd.gradcheck(Square.apply, x))
    out.append(lib.autograd.gradgradcheck(Square.apply, x))

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = lib.exp(x)
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_out):
            result, = ctx.saved_tensors
            return result * grad_out
    out.append(lib.autograd.gradcheck(Exp.apply, x))
    out.append(lib.autograd.gradgradcheck(Exp.apply, x))

    class Sinh(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = lib.exp(x)
            expnegx = lib.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    def sinh(x):
        return Sinh.apply(x)[0]
    out.append(lib.autograd.gradcheck(sinh, x))
    out.append(lib.autograd.gradgradcheck(sinh, x))

    class SinhBad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = lib.exp(x)
            expnegx = lib.exp(-x)
            ctx.expx = expx
            ctx.expnegx = expnegx
            return (expx - expnegx) / 2

        @staticmethod
        def backward(ctx, grad_out):
            expx = ctx.expx
            expnegx = ctx.expnegx
            grad_input = grad_out * (expx + expnegx) / 2
            return grad_input
    y = SinhBad.apply(x)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    out.append(g.requires_grad)
    out.append(g)

    def cube_forward(x):
        return x ** 3

    def cube_backward(grad_out, x):
        return grad_out * 3 * x ** 2

    def cube_backward_backward(grad_out, sav_grad_out, x):
        return grad_out * sav_grad_out * 6 * x

    def cube_backward_backward_grad_out(grad_out, x):
        return grad_out * 3 * x ** 2

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return cube_forward(x)

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return CubeBackward.apply(grad_out, x)

    class CubeBackward(lib.autograd.Function):
        @staticmethod
        def forward(ctx, grad_out, x):
            ctx.save_for_backward(x, grad_out)
            return cube_backward(grad_out, x)

        @staticmethod
        def backward(ctx, grad_out):
            x, sav_grad_out = ctx.saved_tensors
            dx = cube_backward_backward(grad_out, sav_grad_out, x)
            dgrad_out = cube_backward_backward_grad_out(grad_out, x)
            return dgrad_out, dx
    out.append(lib.autograd.gradcheck(Cube.apply, x))
    out.append(lib.autograd.gradgradcheck(Cube.apply, x))
    y = Cube.apply(x)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    gg, = lib.autograd.grad((g * g).sum(), x)
    out += [g, gg, y.grad_fn.name() if hasattr(y.grad_fn, "name") else None, type(y.grad_fn).__name__]

    class Once(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()
    y = Once.apply(x)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    out.append(g)
    out.append(g.requires_grad)
    return out


def case_saved_tensor_hooks(lib):
    out = []
    x = _data(lib, 5).requires_grad_()
    y = x.pow(2)
    out.append(y.grad_fn._saved_self is x)
    out.append(y.grad_fn._saved_exponent)
    x = _data(lib, 5).requires_grad_()
    y = x.exp()
    out.append(y.grad_fn._saved_result.equal(y))
    out.append(y.grad_fn._saved_result is y)
    x = _data(lib, 5).requires_grad_()
    y = x.pow(2)
    log = []
    y.grad_fn._raw_saved_self.register_hooks(lambda t: (log.append("pack"), t)[1],
                                             lambda t: (log.append("unpack"), t)[1])
    y.sum().backward()
    out += [x.grad, list(log)]

    def pack_hook(x):
        log.append(("pack", tuple(x.shape)))
        return x * 1

    def unpack_hook(x):
        log.append(("unpack", tuple(x.shape)))
        return x
    log.clear()
    a = _data(lib, 5, seed=1).requires_grad_()
    b = lib.ones(5, requires_grad=True) * 2
    with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    y.sum().backward()
    out += [a.grad, list(log)]
    log.clear()
    storage = []

    def pack2(x):
        storage.append(x)
        return len(storage) - 1

    def unpack2(i):
        return storage[i]
    x = _data(lib, 5, seed=3).requires_grad_()
    with lib.autograd.graph.saved_tensors_hooks(pack2, unpack2):
        y = x.pow(2).sin()
    y.sum().backward()
    out += [x.grad, len(storage)]
    x = _data(lib, 5, seed=4).requires_grad_()
    with lib.autograd.graph.save_on_cpu(pin_memory=False):
        y = (x * x).exp().sum()
    y.backward()
    out.append(x.grad)
    x = _data(lib, 5, seed=4).requires_grad_()
    y = x.pow(2)
    y.sum().backward()
    try:
        y.grad_fn._saved_self
        out.append("no error")
    except RuntimeError as e:
        out.append(str(e)[:60])
    with lib.autograd.graph.disable_saved_tensors_hooks("nope"):
        try:
            with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
                pass
            out.append("no error")
        except RuntimeError as e:
            out.append(str(e))
    return out


def case_extending_func(lib):
    out = []
    import numpy as np

    def to_numpy(tensor):
        return tensor.cpu().numpy()

    class NumpySort(lib.autograd.Function):
        @staticmethod
        def forward(x, dim):
            device = x.device
            x = to_numpy(x)
            ind = np.argsort(x, axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            result = np.take_along_axis(x, ind, axis=dim)
            return (lib.tensor(result, device=device), lib.tensor(ind, device=device),
                    lib.tensor(ind_inv, device=device))

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output, _0, _1):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    class NumpyTake(lib.autograd.Function):
        @staticmethod
        def forward(x, ind, ind_inv, dim):
            device = x.device
            x = to_numpy(x)
            ind = to_numpy(ind)
            return lib.tensor(np.take_along_axis(x, ind, dim), device=device)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
            return result, None, None, None
    x = _data(lib, 2, 3).requires_grad_()
    s, ind, ind_inv = NumpySort.apply(x, 1)
    out += [s, ind, ind_inv, s.requires_grad, ind.requires_grad]

    def numpy_sort(x, dim=-1):
        result, _, _ = NumpySort.apply(x, dim)
        return result
    grad_x = lib.func.grad(lambda x: numpy_sort(x).sum())(_data(lib, 2, 3, seed=1))
    out.append(grad_x)
    s.sum().backward()
    out.append(x.grad)

    class MyCube(lib.autograd.Function):
        @staticmethod
        def forward(x):
            result = x ** 3
            dx = 3 * x ** 2
            return result, dx

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            result, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            result = grad_output * dx + grad_dx * 6 * x
            return result

    def my_cube(x):
        result, _ = MyCube.apply(x)
        return result
    x = _data(lib, 5, seed=2)
    ggx = lib.func.grad(lib.func.grad(my_cube))(x[0])
    out.append(ggx)

    class NumpySort2(NumpySort):
        generate_vmap_rule = True

    class NumpyTakeV(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, ind, ind_inv, dim):
            return lib.take_along_dim(x, ind, dim)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTakeV.apply(grad_output, ind_inv, ind, ctx.dim), None, None, None

    class MySin(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()

        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return t * x.cos()
    xb = _data(lib, 3, 4, seed=3)
    out.append(lib.func.vmap(MySin.apply)(xb))
    out.append(lib.func.vmap(lib.func.grad(lambda v: MySin.apply(v).sum()))(xb))
    out.append(lib.func.jvp(MySin.apply, (xb,), (lib.ones_like(xb),)))
    out.append(lib.func.jacrev(MySin.apply)(xb[0]))
    out.append(lib.func.jacfwd(MySin.apply)(xb[0]))
    ind = lib.tensor([[2, 0, 1, 3]] * 3)
    out.append(lib.func.vmap(lambda a, i: NumpyTakeV.apply(a, i, i, 0))(xb, ind))

    # The tutorial's hand-written ``vmap`` staticmethod is left out: torchish batches the forward with JAX instead of
    # calling it (a divergence noted in the report of this file's commit).
    return out


def case_sdpa_causal_self_attention(lib):
    """The scaled_dot_product_attention tutorial's CausalSelfAttention: heads split from a chunk of one projection
    by view + transpose, and merged back with ``y.transpose(1, 2).view(...)``, which PyTorch allows because its
    CPU flash kernel allocates the output like the query."""
    F = lib.nn.functional
    out = []

    class CausalSelfAttention(lib.nn.Module):
        def __init__(self, num_heads, embed_dimension, bias=False, is_causal=False, dropout=0.0):
            super().__init__()
            self.c_attn = lib.nn.Linear(embed_dimension, 3 * embed_dimension, bias=bias)
            self.c_proj = lib.nn.Linear(embed_dimension, embed_dimension, bias=bias)
            self.dropout = dropout
            self.resid_dropout = lib.nn.Dropout(dropout)
            self.num_heads = num_heads
            self.embed_dimension = embed_dimension
            self.is_causal = is_causal

        def forward(self, x):
            query_projected = self.c_attn(x)
            batch_size = query_projected.size(0)
            embed_dim = query_projected.size(2)
            head_dim = embed_dim // (self.num_heads * 3)
            query, key, value = query_projected.chunk(3, -1)
            query = query.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
            key = key.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
            value = value.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
            dropout = self.dropout if self.training else 0.0
            is_causal = self.is_causal if self.training else False
            y = F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout,
                                               is_causal=is_causal)
            y = y.transpose(1, 2).view(batch_size, -1, self.num_heads * head_dim)
            y = self.resid_dropout(self.c_proj(y))
            return y
    model = _init(lib, CausalSelfAttention(num_heads=2, embed_dimension=8, bias=False, is_causal=True))
    x = _data(lib, 2, 5, 8, seed=4)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    for i in range(2):
        opt.zero_grad()
        y = model(x)
        loss = y.pow(2).mean()
        loss.backward()
        opt.step()
        out.append(loss.item())
    out.append(model.c_attn.weight.grad)
    model.eval()
    out.append(model(x))
    out.append(str(model))
    return out


test_script_matches_torch = script_test(globals())


def _numpy_of_grad_tensor(lib):
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    with lib.no_grad():
        a, b = x.numpy(), np.asarray(x * 2)
    with lib.inference_mode():
        c = x.numpy()
    return a.tolist(), b.tolist(), c.tolist()


@needs_torch
def test_numpy_of_a_tensor_requiring_grad_works_under_no_grad():
    """PyTorch refuses ``numpy()`` of a tensor that requires grad only while grad mode is on (so an
    autograd.Function's forward, which runs under no_grad, may call it, as the extending-torch.func tutorial's
    NumpySort does); torchish refused it in every mode."""
    assert _numpy_of_grad_tensor(torch) == _numpy_of_grad_tensor(torchish)
    same_error(lambda lib: lib.tensor([1.0], requires_grad=True).numpy())


def _sdpa_and_like_strides(lib):
    F = lib.nn.functional
    qkv = _data(lib, 2, 5, 24)
    q, k, v = (t.view(2, 5, 2, 4).transpose(1, 2) for t in qkv.chunk(3, -1))  # not dense
    kc = _data(lib, 2, 3, 6, 4, seed=1)
    qt = _data(lib, 2, 5, 3, 4, seed=2).transpose(1, 2)
    out = [F.scaled_dot_product_attention(q, k, v).stride(),
           F.scaled_dot_product_attention(qt, kc, kc).stride(),
           F.scaled_dot_product_attention(qt, kc, kc, is_causal=True, attn_mask=lib.ones(5, 6)).stride(),
           F.scaled_dot_product_attention(_data(lib, 2, 3, 4, 5).transpose(2, 3), kc, kc).stride(),  # math
           F.scaled_dot_product_attention(qt, kc[:1], kc[:1]).stride(),  # math: batch broadcast
           F.scaled_dot_product_attention(qt, kc, kc[..., :2]).stride()]  # math: value head size differs
    y = lib.ones(4, 6)[:, ::2].t()
    c = lib.ones(2, 6, 5, 3).permute(0, 3, 1, 2)[:, :, ::2]
    for t in (q, y, c, lib.ones(3, 1).expand(3, 4).t()):
        out.append([f(t).stride() for f in (lib.empty_like, lib.zeros_like, lib.clone)])
    return out


@needs_torch
def test_sdpa_output_and_like_factories_take_the_inputs_dense_strides():
    """PyTorch's CPU flash attention allocates its output as ``empty_like(query)`` (4-D inputs of equal batch
    size, value's head size equal to query's, unit last strides; otherwise the math kernel's output is contiguous),
    and ``empty_like``/``zeros_like``/``clone`` of a tensor that is not dense give dense strides in the order of
    its strides (infer_dense_strides). torchish made both contiguous, so the tutorial's
    ``y.transpose(1, 2).view(B, L, H * E)`` raised."""
    assert _sdpa_and_like_strides(torch) == _sdpa_and_like_strides(torchish)
