"""Third-party programs, round 27 (continued from test_probe_scripts27/28.py): more of the official PyTorch
tutorials on tiny synthetic data, compared with torch 2.13 by ``assert_script_matches`` (tests/oracle.py):
seq2seq with Bahdanau attention (batch-first GRUs, teacher forcing from the targets, greedy decoding by ``topk``
with ``detach``, two Adams, a RandomSampler DataLoader), the Jacobians/Hessians tutorial of ``torch.func``
(row-by-row autograd jacobians, ``vmap(vjp_fn)``, jacrev/jacfwd with ``argnums``, hessian three ways, batched
jacobians by vmap and by summing the batch, ``has_aux``), forward-mode AD (a custom Function with ``jvp``, dual
parameters set on a module, ``functional_call`` with duals, ``func.jvp``/``linearize``), custom autograd Functions
from "Extending PyTorch" (``mark_non_differentiable``, ``set_materialize_grads(False)``, ``once_differentiable``
with ``needs_input_grad``, ``mark_dirty``, double backward through a saved result), the "Fusing Convolution and
Batch Norm" tutorial (the fused custom Function checked by ``gradcheck`` and trained in a small net beside
Conv2d + BatchNorm2d; test_probe_scripts22's copy merged in), "Extending torch
Python API" (ScalarTensor with HANDLED_FUNCTIONS and a logging Tensor subclass calling
``super().__torch_function__``), the Python custom-operator tutorial (``library.custom_op`` with
``register_fake``/``register_autograd``, a mutating op, ``opcheck``), and ``format()`` of a vector as the
Optimization tutorial's users mistype it.

Nothing in these programs differed from PyTorch's results. (The ScalarTensor part ran after the logging subclass
was defined until a duck class's own statement turned torchish's dispatch on: tests/test_torch_function_ducktype.py.)
The Bi-LSTM CRF tutorial is test_probe_scripts22's ``bilstm_crf_tagger``.
Left out for time: the neural-tangent-kernel tutorial (``vmap(vmap(vjp/jvp))`` over a CNN's functional_call:
it matches, in ~40 s of XLA compiles) and the fusion tutorial's separate Conv2D/BatchNorm Functions and their
gradchecks (they match; the fused one covers their code).
"""
import functools
import importlib
import math

import numpy as np
import pytest

from oracle import script_test, torch_one_thread
from oracle import formula_data as _data, formula_init as _init

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_seq2seq_bahdanau_attention(lib):
    """The seq2seq translation tutorial (its current batched form): an Embedding + GRU encoder, Bahdanau
    attention (``Va(tanh(Wa(q) + Ua(k)))``, squeeze/unsqueeze, softmax, bmm), a decoder fed its targets (teacher
    forcing) or its own ``topk`` predictions, NLLLoss over the flattened outputs, two Adams, then greedy
    decoding in eval mode."""
    nn, F = lib.nn, lib.nn.functional
    SOS_token, EOS_token, MAX_LENGTH = 0, 1, 4

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super().__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            output, hidden = self.gru(embedded)
            return output, hidden

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super().__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(lib.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            context = lib.bmm(weights, keys)
            return context, weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super().__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = lib.empty(batch_size, 1, dtype=lib.long).fill_(SOS_token)
            decoder_hidden = encoder_hidden
            decoder_outputs = []
            attentions = []
            for i in range(MAX_LENGTH):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = lib.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            attentions = lib.cat(attentions, dim=1)
            return decoder_outputs, decoder_hidden, attentions

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = lib.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            output = self.out(output)
            return output, hidden, attn_weights

    lib.manual_seed(4)
    n_in, n_out, hidden = 7, 6, 8
    encoder = _init(lib, EncoderRNN(n_in, hidden))
    decoder = _init(lib, AttnDecoderRNN(hidden, n_out), seed=1)
    inputs = lib.tensor([[2, 3, 4, 1], [5, 6, 1, 0], [3, 3, 2, 1], [4, 1, 0, 0]])
    targets = lib.tensor([[3, 2, 1, 0], [4, 5, 5, 1], [2, 1, 0, 0], [5, 1, 0, 0]])
    ds = lib.utils.data.TensorDataset(inputs, targets)
    train_dataloader = lib.utils.data.DataLoader(ds, sampler=lib.utils.data.RandomSampler(ds), batch_size=2)
    encoder_optimizer = lib.optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = lib.optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    losses = []
    for epoch in range(2):
        total_loss = 0
        for data in train_dataloader:
            input_tensor, target_tensor = data
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
            loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            total_loss += loss.item()
        losses.append(total_loss / len(train_dataloader))
    encoder.eval()
    decoder.eval()
    with lib.no_grad():
        encoder_outputs, encoder_hidden = encoder(inputs[:2])
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()[0]
        decoded_words = []
        for idx in decoded_ids:
            if idx.item() == EOS_token:
                decoded_words.append('<EOS>')
                break
            decoded_words.append(int(idx.item()))
    return losses, decoded_words, decoder_attn, decoder_hidden, lib.rand(2)


def case_jacobians_hessians_func(lib):
    """The torch.func "Jacobians, Hessians, hvp, vhp, and more" tutorial: jacobians of ``F.linear(...).tanh()``
    row by row with autograd.grad, by ``vmap`` of a vjp function, by jacrev/jacfwd with argnums, hessians by
    ``hessian``, jacfwd(jacrev) and jacrev(jacrev), batched by vmap with in_dims and by the summed-output trick,
    jvp, has_aux and autograd.functional.jacobian."""
    from functools import partial
    jacrev, jacfwd, vmap, hessian, vjp, jvp = (lib.func.jacrev, lib.func.jacfwd, lib.func.vmap, lib.func.hessian,
                                             lib.func.vjp, lib.func.jvp)
    F = lib.nn.functional

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    D = 4
    weight = _data(lib, D, D)
    bias = _data(lib, D, seed=1)
    x = _data(lib, D, seed=2)
    xp = x.clone().requires_grad_()
    unit_vectors = lib.eye(D)

    def compute_jac(xp):
        jacobian_rows = [lib.autograd.grad(predict(weight, bias, xp), xp, vec)[0] for vec in unit_vectors]
        return lib.stack(jacobian_rows)

    jacobian = compute_jac(xp)
    res = {"manual": (jacobian.shape, jacobian[0])}
    _, vjp_fn = vjp(partial(predict, weight, bias), x)
    ft_jacobian, = vmap(vjp_fn)(unit_vectors)
    res["vjp"] = ft_jacobian
    ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
    res["jacrev"] = ft_jacobian
    ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    res["wb"] = (ft_jac_weight.shape, ft_jac_weight, ft_jac_bias)
    res["jacfwd"] = jacfwd(predict, argnums=2)(weight, bias, x)
    hess_api = hessian(predict, argnums=2)(weight, bias, x)
    hess_fwdrev = jacfwd(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    res["hess"] = (hess_api.shape, hess_api, hess_fwdrev, hess_revrev)
    batch_size = 3
    xb = _data(lib, batch_size, D, seed=3)
    compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    batch_jacobian0 = compute_batch_jacobian(weight, bias, xb)
    res["batch"] = batch_jacobian0

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, xb).movedim(1, 0)
    res["batch_sum"] = batch_jacobian1
    res["batch_hess"] = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xb)
    res["jvp"] = jvp(partial(predict, weight, bias), (x,), (unit_vectors[0],))
    res["has_aux"] = jacrev(lambda x: (predict(weight, bias, x), x.sum()), has_aux=True)(x)
    res["autograd_f"] = lib.autograd.functional.jacobian(partial(predict, weight, bias), x)
    return res


def case_forward_ad_custom_function_jvp(lib):
    """The forward-mode AD tutorial: a custom Function with ``jvp`` (the result kept on ctx), gradcheck with
    ``check_forward_ad``, a module's parameters replaced by duals, ``functional_call`` with dual parameters,
    ``func.jvp`` and ``func.linearize``."""
    fwAD = lib.autograd.forward_ad

    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = lib.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    fn = Fn.apply
    primal = _data(lib, 3, 2, dtype=lib.double).requires_grad_()
    tangent = _data(lib, 3, 2, seed=1, dtype=lib.double)
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input)
        jvp = fwAD.unpack_dual(dual_output).tangent
    res = [jvp, fwAD.unpack_dual(dual_output).primal]
    res.append(lib.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                                      check_undefined_grad=False, check_batched_grad=False))
    model = lib.nn.Linear(5, 5)
    _init(lib, model)
    input = _data(lib, 16, 5)
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: lib.cos(lib.arange(p.numel(), dtype=p.dtype)).reshape(p.shape) for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out = model(input)
        jvp = fwAD.unpack_dual(out).tangent
    res.append(jvp)
    model = _init(lib, lib.nn.Linear(5, 5))
    dual_params = {}
    with fwAD.dual_level():
        for name, p in params.items():
            dual_params[name] = fwAD.make_dual(p, tangents[name])
        out = lib.func.functional_call(model, dual_params, input)
        jvp2 = fwAD.unpack_dual(out).tangent
    res.append(jvp2)

    def fn2(x, y):
        return x ** 2 + y ** 2
    primals = (_data(lib, 5, dtype=lib.double), _data(lib, 5, seed=2, dtype=lib.double))
    tangents = (lib.ones(5, dtype=lib.double), lib.ones(5, dtype=lib.double))
    res.append(lib.func.jvp(fn2, primals, tangents))
    out_lin, jvp_fn = lib.func.linearize(lambda x: x.sin() * 2, primals[0])
    res.append((out_lin, jvp_fn(tangents[0]), jvp_fn(primals[1])))
    return res


def case_custom_function_ctx_flags(lib):
    """"Extending PyTorch" custom Functions: a sort with ``mark_non_differentiable`` indices,
    ``set_materialize_grads(False)`` with None gradients, ``once_differentiable`` reading ``needs_input_grad``,
    an in-place ``mark_dirty`` Function, and double backward through a Function saving its output."""
    class Sort(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            vals, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return vals, idx

        @staticmethod
        def backward(ctx, g1, g2):
            x, idx = ctx.saved_tensors
            grad_input = lib.zeros_like(x)
            grad_input.index_add_(0, idx, g1)
            return grad_input

    x = lib.tensor([3., 1., 2.], requires_grad=True)
    a, b = Sort.apply(x)
    res = [a, b, a.requires_grad, b.requires_grad]
    (a * lib.tensor([1., 10., 100.])).sum().backward()
    res.append(x.grad)

    class SimpleFunc(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            x, = ctx.saved_tensors
            grad_input = lib.zeros_like(x)
            if g1 is not None:
                grad_input += g1
            if g2 is not None:
                grad_input += g2 * 2
            return grad_input

    x = lib.tensor([1., 2.], requires_grad=True)
    o1, o2 = SimpleFunc.apply(x)
    o1.sum().backward()
    res.append(x.grad.clone())
    x.grad = None
    o1, o2 = SimpleFunc.apply(x)
    (o2 * 3).sum().backward()
    res.append(x.grad)

    class MulAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, scale):
            ctx.scale = scale
            ctx.save_for_backward(x, y)
            return x * y * scale

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            flags = ctx.needs_input_grad
            return (g * y * ctx.scale if flags[0] else None, g * x * ctx.scale if flags[1] else None, None)

    x = lib.tensor([1., 2.], requires_grad=True)
    y = lib.tensor([3., 4.])
    out = MulAdd.apply(x, y, 2.0)
    g, = lib.autograd.grad(out.sum(), x, create_graph=True)
    res.append((g, g.requires_grad))

    class AddOneInplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.add_(1)

        @staticmethod
        def backward(ctx, g):
            return g

    x = lib.tensor([1., 2.], requires_grad=True)
    z = x.clone()
    w = AddOneInplace.apply(z)
    res.append((w is z, z, type(z.grad_fn).__name__.startswith("AddOneInplace")))
    (w * w).sum().backward()
    res.append(x.grad)

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            result, = ctx.saved_tensors
            return grad_output * result

    x = lib.tensor([0.5, 1.0], requires_grad=True)
    y = Exp.apply(x)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    gg, = lib.autograd.grad(g.sum(), x)
    res.append((y, g, gg))
    return res


def case_fuse_conv_bn_custom_function(lib):
    """"Fusing Convolution and Batch Norm using Custom Function": the convolution backward by
    conv2d/conv_transpose2d, the batch-norm backward by hand, the fused Function (in-place ``sub_``/``div_`` on
    its output) checked by gradcheck in float64, and a FusedConvBN module with kaiming_uniform_ weights trained by
    Adadelta in a small net beside the same net of Conv2d + BatchNorm2d (losses, the fused weight's gradient)."""
    F = lib.nn.functional
    nn = lib.nn
    lib.manual_seed(0)

    def convolution_backward(grad_out, X, weight):
        grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
        grad_X = F.conv_transpose2d(grad_out, weight)
        return grad_X, grad_input

    def unsqueeze_all(t):
        return t[None, :, None, None]

    def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
        tmp = ((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
        tmp *= -1
        d_denom = tmp / (sqrt_var + eps) ** 2
        d_var = d_denom / (2 * sqrt_var)
        d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
        d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
        grad_input = X * unsqueeze_all(d_var * N)
        grad_input += unsqueeze_all(-d_var * sum)
        grad_input *= 2 / ((N - 1) * N)
        grad_input += d_mean_dx
        grad_input *= unsqueeze_all(sqrt_var + eps)
        grad_input += grad_out
        grad_input /= unsqueeze_all(sqrt_var + eps)
        return grad_input

    class FusedConvBN2DFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, X, conv_weight, eps=1e-3):
            assert X.ndim == 4
            ctx.save_for_backward(X, conv_weight)
            X = F.conv2d(X, conv_weight)
            sum = X.sum(dim=(0, 2, 3))
            var = X.var(unbiased=True, dim=(0, 2, 3))
            N = X.numel() / X.size(1)
            sqrt_var = lib.sqrt(var)
            ctx.eps = eps
            ctx.sum = sum
            ctx.N = N
            ctx.sqrt_var = sqrt_var
            mean = sum / N
            denom = sqrt_var + eps
            X.sub_(unsqueeze_all(mean))
            X.div_(unsqueeze_all(denom))
            return X

        @staticmethod
        def backward(ctx, grad_out):
            X, conv_weight, = ctx.saved_tensors
            X_conv_out = F.conv2d(X, conv_weight)
            grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)
            grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
            return grad_X, grad_input, None, None, None, None, None

    weight = lib.rand(3, 2, 2, 2, requires_grad=True, dtype=lib.double)
    X = lib.rand(2, 2, 3, 3, requires_grad=True, dtype=lib.double)
    ok = lib.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight))

    class FusedConvBN(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, exp_avg_factor=0.1, eps=1e-3):
            super().__init__()
            weight_shape = (out_channels, in_channels, kernel_size, kernel_size)
            self.conv_weight = nn.Parameter(lib.empty(*weight_shape))
            self.eps = eps
            self.reset_parameters()

        def forward(self, X):
            return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

        def reset_parameters(self) -> None:
            nn.init.kaiming_uniform_(self.conv_weight, a=math.sqrt(5))

    class Net(nn.Module):
        def __init__(self, fused=True):
            super().__init__()
            self.fused = fused
            if fused:
                self.convbn1 = FusedConvBN(1, 4, 3)
            else:
                self.conv1 = nn.Conv2d(1, 4, 3, bias=False)
                self.bn1 = nn.BatchNorm2d(4, affine=False, track_running_stats=False)
            self.fc1 = nn.Linear(4 * 3 * 3, 5)

        def forward(self, x):
            if self.fused:
                x = self.convbn1(x)
            else:
                x = self.bn1(self.conv1(x))
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = lib.flatten(x, 1)
            return F.log_softmax(self.fc1(x), dim=1)

    data = lib.randn(6, 1, 8, 8)
    target = lib.randint(0, 5, (6,))
    out = []
    for fused in (True, False):
        lib.manual_seed(3)
        model = Net(fused)
        opt = lib.optim.Adadelta(model.parameters(), lr=1.0)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        conv_weight = model.convbn1.conv_weight if fused else model.conv1.weight
        out.append((losses, model.fc1.weight.grad, conv_weight.grad))
    return ok, out, lib.rand(2)


def case_torch_function_scalar_tensor(lib):
    """"Extending torch Python API" in its order: the ScalarTensor duck type with HANDLED_FUNCTIONS filled by
    ``implements(torch.mean)`` and a fallback for unhandled functions, then a logging Tensor subclass whose
    ``__torch_function__`` records names and calls ``super()`` (results stay the subclass, backward works)."""
    HANDLED_FUNCTIONS = {}

    class ScalarTensor(object):
        def __init__(self, N, value):
            self._N = N
            self._value = value

        def __repr__(self):
            return "ScalarTensor(N={}, value={})".format(self._N, self._value)

        def tensor(self):
            return self._value * lib.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if func not in HANDLED_FUNCTIONS or not all(issubclass(t, (lib.Tensor, ScalarTensor)) for t in types):
                args = [a.tensor() if hasattr(a, 'tensor') else a for a in args]
                return func(*args, **kwargs)
            return HANDLED_FUNCTIONS[func](*args, **kwargs)

    def implements(torch_function):
        def decorator(func):
            functools.update_wrapper(func, torch_function)
            HANDLED_FUNCTIONS[torch_function] = func
            return func
        return decorator

    @implements(lib.mean)
    def mean(input):
        return float(input._value) / input._N

    d = ScalarTensor(5, 2)
    res = [repr(d), d.tensor(), lib.mean(d)]
    res.append(lib.add(d, lib.ones(5)))  # not handled: falls back to the tensor
    res.append(lib.mul(lib.ones(5), d))
    res.append(lib.mean.__name__ if hasattr(mean, "__wrapped__") else None)

    class LoggingTensor(lib.Tensor):
        log = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            cls.log.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs)

    t = _data(lib, 2, 3).as_subclass(LoggingTensor)
    u = t + 1
    v = lib.relu(u).sum(dim=0)
    w = u.exp().mean()
    res.append((type(u).__name__, type(v).__name__, type(w).__name__, v, w, isinstance(v, lib.Tensor)))
    res.append(LoggingTensor.log[:6])
    res.append(type(t.shape).__name__)
    res.append(type(lib.cat([t, t])).__name__)
    res.append(type(t[0]).__name__)
    x = lib.tensor([1.0, 2.0], requires_grad=True).as_subclass(LoggingTensor)
    y = (x * x).sum()
    y.backward()
    res.append((type(x.grad).__name__, x.grad, type(y).__name__, y))
    return res


def case_custom_op_tutorial(lib):
    """The Python custom operators tutorial: ``library.custom_op`` over numpy with ``register_fake`` and
    ``register_autograd``, a mutating op (``mutates_args={'x'}``), ``opcheck``'s report keys and the op called
    through ``torch.ops.<namespace>``."""
    library = importlib.import_module(lib.__name__ + ".library")
    ns = "h140tut_" + lib.__name__

    @library.custom_op(ns + "::numpy_sin", mutates_args=())
    def numpy_sin(x: lib.Tensor) -> lib.Tensor:
        x_np = x.numpy()
        return lib.from_numpy(np.sin(x_np))

    @numpy_sin.register_fake
    def _(x):
        return lib.empty_like(x)

    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.cos()

    numpy_sin.register_autograd(backward, setup_context=setup_context)

    @library.custom_op(ns + "::numpy_sin_", mutates_args={"x"})
    def numpy_sin_(x: lib.Tensor) -> None:
        x_np = x.numpy()
        np.sin(x_np, out=x_np)

    x = _data(lib, 3).requires_grad_()
    y = numpy_sin(x)
    g, = lib.autograd.grad(y.sum(), x)
    z = _data(lib, 3)
    numpy_sin_(z)
    ex = library.opcheck(numpy_sin, (_data(lib, 3),))
    op = getattr(getattr(lib.ops, ns), "numpy_sin")
    return y, g, z, sorted(ex), op(_data(lib, 2, seed=1))


def case_format_vector_raises(lib):
    """Formatting a non-scalar tensor with a format spec (``f"{t:.2f}"``) raises TypeError as PyTorch's
    ``Tensor.__format__`` does."""
    return f"{lib.tensor([1.0, 2.0]):.2f}"


test_script_matches_torch = script_test(globals())
