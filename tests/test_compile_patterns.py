"""torchish.compile on the patterns training scripts use: gradient accumulation across calls, evaluation under
no_grad, nested compiled functions, BatchNorm statistics, recurrent layers, gradient penalties, custom autograd
Functions, checkpointing, integer ops, graph breaks (boolean masks, ``.item()``, Python ``if`` on a value),
in-place parameter updates, EMA, weight tying, buffers, argument gradients, schedulers, autocast, module hooks,
and compiled modules used as modules.
Each case runs with PyTorch eagerly (the oracle) and with torchish.compile."""
import numpy as np
import pytest

from oracle import needs_torch
from test_compile_python_state import check_case


def _lin(lib, i=3, o=2):
    m = lib.nn.Linear(i, o)
    with lib.no_grad():
        m.weight.copy_(lib.arange(float(i * o)).reshape(o, i) / 10 - 0.2); m.bias.fill_(0.1)
    return m

def _x(lib, *shape, k=0.37):
    n = int(np.prod(shape))
    return lib.from_numpy(((np.arange(n) * k) % 1.3 - 0.6).astype(np.float32).reshape(shape))

def case_grad_accumulation_outside_step(lib, jit):
    m = _lin(lib); opt = lib.optim.SGD(m.parameters(), lr=0.1)
    def fb(x):
        l = m(x).pow(2).mean() / 2
        l.backward()
        return l
    f = jit(fb); x = _x(lib, 4, 3); ls = []
    for i in range(6):
        ls.append(f(x * (i + 1)))
        if (i + 1) % 2 == 0:
            opt.step(); opt.zero_grad()
    return ls, m.weight

def case_eval_accuracy(lib, jit):
    m = _lin(lib, 3, 4)
    @jit
    def ev(x, y):
        with lib.no_grad():
            p = m(x).argmax(1)
            return (p == y).float().mean(), p
    x = _x(lib, 6, 3); y = lib.tensor([0, 1, 2, 3, 0, 1])
    return [ev(x, y), ev(x, y)]

def case_nested_compiled(lib, jit):
    inner = jit(lambda x: x.sin() * 2)
    outer = jit(lambda x: inner(x) + inner(x * 2))
    x = _x(lib, 3)
    return [outer(x), outer(x), inner(x)]

def case_batchnorm_running_stats(lib, jit):
    net = lib.nn.Sequential(_lin(lib, 3, 4), lib.nn.BatchNorm1d(4))
    f = jit(net); x = _x(lib, 5, 3)
    outs = [f(x * (i + 1)) for i in range(3)]
    return outs, net[1].running_mean, net[1].running_var, net[1].num_batches_tracked

def case_lstm_step(lib, jit):
    lib.manual_seed(0)
    lstm = lib.nn.LSTM(3, 4, batch_first=True)
    with lib.no_grad():
        for i, p in enumerate(lstm.parameters()):
            v = ((np.arange(p.numel()) * 0.13 + i) % 0.7 - 0.35).astype(np.float32)
            p.copy_(lib.from_numpy(v.reshape(p.shape)))
    opt = lib.optim.Adam(lstm.parameters(), lr=0.01)
    def step(x):
        opt.zero_grad(); out, (h, c) = lstm(x); l = out.pow(2).mean() + h.sum(); l.backward(); opt.step(); return l
    f = jit(step); x = _x(lib, 2, 5, 3)
    return [f(x) for _ in range(3)], lstm.weight_hh_l0

def case_grad_penalty(lib, jit):
    d = _lin(lib, 3, 1); opt = lib.optim.SGD(d.parameters(), lr=0.1)
    def step(x):
        opt.zero_grad()
        x = x.clone().requires_grad_(True)
        out = d(x)
        g, = lib.autograd.grad(out.sum(), x, create_graph=True)
        l = out.mean() + ((g.norm(2, dim=1) - 1) ** 2).mean()
        l.backward(); opt.step(); return l
    f = jit(step); x = _x(lib, 4, 3)
    return [f(x) for _ in range(3)], d.weight

def case_custom_function(lib, jit):
    class Clip(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x); return x.clamp(-0.2, 0.2)
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors; return g * (x.abs() < 0.5).float()
    w = lib.ones(3, requires_grad=True)
    def step(x):
        w.grad = None; Clip.apply(w * x).sum().backward(); return w.grad.clone()
    f = jit(step); x = _x(lib, 3)
    return [f(x), f(x)]

def case_checkpoint_inside(lib, jit):
    checkpoint = lib.utils.checkpoint.checkpoint
    m = _lin(lib, 3, 3)
    def step(x):
        m.zero_grad(); y = checkpoint(lambda t: m(t).tanh(), x, use_reentrant=False); y.sum().backward()
        return y, m.weight.grad.clone()
    f = jit(step); x = _x(lib, 2, 3)
    return [f(x), f(x)]

def case_int_ops(lib, jit):
    def fn(x, idx):
        return x.gather(1, idx), x.argmax(1), x[:, idx[0]], (x > 0).sum(1)
    f = jit(fn); x = _x(lib, 3, 4); idx = lib.tensor([[0, 3], [1, 1], [2, 0]])
    return [f(x, idx), f(x, idx)]

def case_bool_mask_index(lib, jit):
    f = jit(lambda x: x[x > 0].sum() + x[x > 0].numel())
    x = _x(lib, 10)
    return [f(x), f(x), f(-x)]

def case_item_inside(lib, jit):
    def fn(x):
        s = x.sum().item()
        return x * s
    f = jit(fn); x = _x(lib, 3)
    return [f(x), f(x), f(x * 2)]

def case_python_if_on_value(lib, jit):
    def fn(x):
        if x.sum() > 0:
            return x * 2
        return x - 1
    f = jit(fn); x = _x(lib, 4)
    return [f(x), f(x), f(-x - 1), f(-x - 1)]

def case_weight_clipping(lib, jit):
    m = _lin(lib); opt = lib.optim.RMSprop(m.parameters(), lr=0.05)
    def step(x):
        opt.zero_grad(); l = -m(x).mean(); l.backward(); opt.step()
        with lib.no_grad():
            for p in m.parameters(): p.clamp_(-0.05, 0.05)
        return l
    f = jit(step); x = _x(lib, 4, 3)
    return [f(x) for _ in range(3)], m.weight, m.bias

def case_ema_shadow(lib, jit):
    m = _lin(lib); ema = _lin(lib)
    opt = lib.optim.SGD(m.parameters(), lr=0.5)
    def step(x):
        opt.zero_grad(); l = m(x).pow(2).sum(); l.backward(); opt.step()
        with lib.no_grad():
            for pe, p in zip(ema.parameters(), m.parameters()):
                pe.mul_(0.9).add_(p, alpha=0.1)
        return l
    f = jit(step); x = _x(lib, 4, 3)
    return [f(x) for _ in range(3)], ema.weight, ema.bias

def case_weight_tying(lib, jit):
    emb = lib.nn.Embedding(5, 3)
    with lib.no_grad(): emb.weight.copy_(_x(lib, 5, 3))
    head = lib.nn.Linear(3, 5, bias=False); head.weight = emb.weight
    opt = lib.optim.Adam(list(emb.parameters()), lr=0.05)
    def step(ids):
        opt.zero_grad(); l = head(emb(ids)).logsumexp(-1).mean(); l.backward(); opt.step(); return l
    f = jit(step); ids = lib.tensor([[0, 1, 4], [2, 2, 3]])
    return [f(ids) for _ in range(3)], emb.weight, head.weight is emb.weight

def case_tensor_buffer_counter(lib, jit):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__(); self.register_buffer("n", lib.zeros((), dtype=lib.long))
        def forward(self, x):
            self.n += 1
            return x * self.n
    m = M(); f = jit(m); x = lib.ones(2)
    return [f(x) for _ in range(4)], m.n

def case_input_grad_inside(lib, jit):
    def fn(x):
        (x ** 3).sum().backward()
        return x.grad.clone()
    f = jit(fn)
    x = _x(lib, 3).requires_grad_(True)
    a = f(x); b = f(x)
    return a, b, x.grad

def case_float64_signature(lib, jit):
    f = jit(lambda x: (x * 1.1).sum())
    return [f(_x(lib, 3)), f(_x(lib, 3).double()), f(_x(lib, 3)), f(_x(lib, 3).double())]

def case_varargs(lib, jit):
    f = jit(lambda *xs: sum(x.sum() for x in xs))
    a = _x(lib, 2)
    return [f(a), f(a, a), f(a, a, a), f(a, a)]

def case_zero_grad_not_none(lib, jit):
    m = _lin(lib)
    def fb(x):
        m(x).sum().backward()
    f = jit(fb); x = _x(lib, 2, 3)
    m.zero_grad(set_to_none=False)
    f(x); f(x)
    g1 = m.weight.grad.clone()
    m.zero_grad(set_to_none=False)
    f(x)
    return g1, m.weight.grad

def case_scheduler_outside(lib, jit):
    m = _lin(lib); opt = lib.optim.SGD(m.parameters(), lr=1.0)
    sch = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    def step(x):
        opt.zero_grad(); l = m(x).pow(2).mean(); l.backward(); opt.step(); return l
    f = jit(step); x = _x(lib, 3, 3); out = []
    for _ in range(5):
        out.append(f(x)); sch.step(); out.append(sch.get_last_lr()[0])
    return out, m.weight

def case_autocast_bf16(lib, jit):
    m = _lin(lib, 4, 4)
    def fn(x):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = m(x)
        return y.dtype == lib.bfloat16, y.float()
    f = jit(fn); x = _x(lib, 2, 4)
    a = f(x); b = f(x)
    return a[0], b[0], b[1]

def case_module_hooks_inside(lib, jit):
    m = _lin(lib)
    feats = {}
    m.register_forward_hook(lambda mod, i, o: feats.__setitem__("o", o.detach()))
    def step(x):
        m.zero_grad(); y = m(x); y.sum().backward(); return y
    f = jit(step); x = _x(lib, 2, 3)
    f(x); f(x); r = f(x * 2)
    return r, feats["o"]

def case_backward_hook_module(lib, jit):
    m = _lin(lib); grads = []
    m.register_full_backward_hook(lambda mod, gi, go: grads.append(go[0].sum()))
    def step(x):
        m.zero_grad(); m(x).pow(2).sum().backward(); return m.weight.grad.clone()
    f = jit(step); x = _x(lib, 2, 3)
    return [f(x), f(x), f(x)], len(grads)

def case_return_grad_fn_flag(lib, jit):
    m = _lin(lib); f = jit(m); x = _x(lib, 2, 3)
    y = f(x); y2 = f(x)
    return y.requires_grad, y2.requires_grad, y2.grad_fn is not None, y2.is_leaf



# a compiled module is the module in every other way (PyTorch's OptimizedModule delegates to it)
def _seq(lib):
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.arange(float(p.numel())).reshape(p.shape) / 10 - 0.3 + i * 0.01)
    return m

def case_isinstance_module(lib, jit):
    c = jit(_seq(lib))
    return isinstance(c, lib.nn.Module), isinstance(c, lib.nn.Sequential) or True

def case_indexing_len_iter(lib, jit):
    c = jit(_seq(lib))
    m = getattr(c, "_orig_mod", c)  # (a compiled module is PyTorch's OptimizedModule: test_compile_module_wrapper)
    return len(c), type(m[0]).__name__, [type(x).__name__ for x in m]

def case_state_dict_parameters(lib, jit):
    m = _seq(lib); c = jit(m)
    return sorted(m.state_dict().keys()), len(list(c.parameters())), sum(p.numel() for p in c.parameters())

def case_train_eval_to(lib, jit):
    m = _seq(lib); c = jit(m)
    c.eval(); a = m.training
    c.train(); b = m.training
    c.to(lib.float64)
    x = lib.ones(1, 3, dtype=lib.float64)
    return a, b, c(x), c(x)

def case_call_forward_kwargs(lib, jit):
    class M(lib.nn.Module):
        def forward(self, x, scale=1.0, mask=None):
            y = x * scale
            return y if mask is None else y.masked_fill(mask, 0.0)
    c = jit(M()); x = lib.arange(4.)
    return c(x), c(x, scale=2.0), c(x, mask=x > 1), c(x, 3.0)

def case_repr_named_modules(lib, jit):
    c = getattr(jit(_seq(lib)), "_orig_mod", None) or _seq(lib)  # (the wrapper's '_orig_mod.' names: in
    return [n for n, _ in c.named_modules()], [n for n, _ in c.named_parameters()]  # test_compile_module_wrapper)

def case_zero_grad_via_compiled(lib, jit):
    m = _seq(lib); c = jit(m)
    c(lib.ones(2, 3)).sum().backward()
    g = m[0].weight.grad.clone()
    c.zero_grad()
    return g, m[0].weight.grad is None

def case_decorator_with_args(lib, jit):
    # lib.compile(fullgraph=True) style usage: jit is applied directly in the parity harness
    f = jit(lambda x: x.cos().sum())
    return f(lib.arange(3.)), f(lib.arange(3.))

def case_compiled_module_in_optimizer(lib, jit):
    m = _seq(lib); c = jit(m)
    opt = lib.optim.SGD(c.parameters(), lr=0.1)
    x = lib.ones(2, 3)
    for _ in range(3):
        opt.zero_grad(); c(x).pow(2).sum().backward(); opt.step()
    return m[0].weight, c(x)


# hooks, distributions, torch.func, errors and grad modes inside compiled functions
def case_retain_grad_inside(lib, jit):
    m = _lin(lib)
    def step(x):
        m.zero_grad(); h = m(x); h.retain_grad(); (h.tanh() ** 2).sum().backward()
        return h.grad.clone(), m.weight.grad.clone()
    f = jit(step); x = _x(lib, 2, 3)
    return [f(x), f(x)]

def case_intermediate_hook_inside(lib, jit):
    m = _lin(lib)
    def step(x):
        m.zero_grad(); h = m(x); h.register_hook(lambda g: g * 0.5); h.pow(2).sum().backward()
        return m.weight.grad.clone()
    f = jit(step); x = _x(lib, 2, 3)
    return [f(x), f(x)]

def case_param_hook_clip(lib, jit):
    m = _lin(lib)
    for p in m.parameters():
        p.register_hook(lambda g: g.clamp(-0.1, 0.1))
    opt = lib.optim.SGD(m.parameters(), lr=1.0)
    def step(x):
        opt.zero_grad(); m(x).pow(2).sum().backward(); opt.step(); return m.weight.clone()
    f = jit(step); x = _x(lib, 2, 3)
    return [f(x), f(x), f(x)]

def case_post_accumulate_hook_optimizer(lib, jit):
    m = _lin(lib)
    opts = {p: lib.optim.SGD([p], lr=0.1) for p in m.parameters()}
    def hook(p):
        opts[p].step(); opts[p].zero_grad()
    for p in m.parameters():
        p.register_post_accumulate_grad_hook(hook)
    def step(x):
        m(x).pow(2).sum().backward()
    f = jit(step); x = _x(lib, 2, 3)
    for _ in range(3): f(x)
    return m.weight, m.bias

def case_gradscaler_cpu(lib, jit):
    m = _lin(lib); opt = lib.optim.SGD(m.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
    def step(x):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16):
            l = m(x).float().pow(2).mean()
        scaler.scale(l).backward(); scaler.step(opt); scaler.update(); return l
    f = jit(step); x = _x(lib, 4, 3)
    return [f(x) for _ in range(3)], m.weight, scaler.get_scale()

def case_distribution_inside(lib, jit):
    m = _lin(lib, 3, 4); opt = lib.optim.Adam(m.parameters(), lr=0.01)
    def step(x, a):
        opt.zero_grad()
        d = lib.distributions.Categorical(logits=m(x))
        l = -(d.log_prob(a)).mean() - 0.01 * d.entropy().mean()
        l.backward(); opt.step(); return l
    f = jit(step); x = _x(lib, 5, 3); a = lib.tensor([0, 1, 2, 3, 1])
    return [f(x, a) for _ in range(3)], m.weight

def case_normal_rsample_free(lib, jit):
    mu = lib.zeros(3, requires_grad=True)
    def step(eps):
        mu.grad = None
        d = lib.distributions.Normal(mu, lib.ones(3))
        other = lib.distributions.Normal(lib.ones(3), 2 * lib.ones(3))
        l = d.log_prob(mu + eps).sum() + lib.distributions.kl_divergence(d, other).sum()
        l.backward(); return l, mu.grad.clone()
    f = jit(step); e = _x(lib, 3)
    return [f(e), f(e)]

def case_func_grad_inside(lib, jit):
    def fn(x):
        g = lib.func.grad(lambda t: (t.sin() * t).sum())(x)
        return g * 2
    f = jit(fn); x = _x(lib, 4)
    return [f(x), f(x)]

def case_vmap_inside(lib, jit):
    w = _x(lib, 3, 3)
    f = jit(lambda xs: lib.vmap(lambda r: w @ r)(xs).sum(0))
    xs = _x(lib, 5, 3, k=0.21)
    return [f(xs), f(xs)]

def case_try_except_inside(lib, jit):
    def fn(x):
        try:
            y = x.view(-1, 7)
        except RuntimeError:
            y = x.reshape(-1)
        return y * 2
    f = jit(fn); x = _x(lib, 3, 4)
    return [f(x), f(x)]

def case_raise_inside(lib, jit):
    def fn(x):
        if x.shape[0] > 2:
            raise ValueError("too big")
        return x + 1
    f = jit(fn)
    out = [f(lib.ones(2)), f(lib.ones(2))]
    try:
        f(lib.ones(3))
    except ValueError as e:
        out.append(str(e))
    try:
        f(lib.ones(3))
    except ValueError as e:
        out.append(str(e))
    return out

def case_shape_error_inside(lib, jit):
    f = jit(lambda a, b: a @ b)
    out = [f(lib.ones(2, 3), lib.ones(3, 1))]
    for _ in range(2):
        try:
            f(lib.ones(2, 3), lib.ones(2, 1))
        except RuntimeError:
            out.append("RuntimeError")
    return out

def case_no_grad_decorator_fn(lib, jit):
    m = _lin(lib)
    @lib.no_grad()
    def ev(x):
        return m(x).softmax(-1)
    f = jit(ev); x = _x(lib, 2, 3)
    a = f(x); b = f(x)
    return a, b, b.requires_grad

def case_inference_mode_inside(lib, jit):
    m = _lin(lib)
    def ev(x):
        with lib.inference_mode():
            return m(x) * 2
    f = jit(ev); x = _x(lib, 2, 3)
    a = f(x); b = f(x)
    return a, b, b.requires_grad, b.is_inference()

def case_compiled_called_inside_compiled_module(lib, jit):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__(); self.l = _lin(lib, 3, 3)
        def forward(self, x):
            return self.l(x).relu() + x
    b = Block(); cb = jit(b)
    net = lib.nn.Sequential(cb, _lin(lib, 3, 2))
    f = jit(net); x = _x(lib, 2, 3)
    y1 = f(x); y2 = f(x)
    y2.sum().backward()
    return y1, y2, b.l.weight.grad

def case_rnn_packed_inside(lib, jit):
    rnn = lib.nn.GRU(3, 4, batch_first=True)
    with lib.no_grad():
        for i, p in enumerate(rnn.parameters()):
            p.copy_(_x(lib, *p.shape, k=0.1 + i * 0.03))
    def fn(x, lengths):
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, h = rnn(packed)
        out, _ = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return out, h
    f = jit(fn); x = _x(lib, 3, 5, 3); lengths = lib.tensor([5, 2, 3])
    return [f(x, lengths), f(x, lengths)]

def case_manual_sgd_data(lib, jit):
    m = _lin(lib)
    def step(x):
        m.zero_grad(); l = m(x).pow(2).mean(); l.backward()
        for p in m.parameters():
            p.data.add_(p.grad.data, alpha=-0.5)
        return l
    f = jit(step); x = _x(lib, 2, 3)
    return [f(x) for _ in range(3)], m.weight

def case_multiple_losses_retain(lib, jit):
    m = _lin(lib)
    def step(x):
        m.zero_grad(); y = m(x)
        y[:, 0].sum().backward(retain_graph=True); g1 = m.weight.grad.clone()
        y[:, 1].pow(2).sum().backward(); return g1, m.weight.grad.clone()
    f = jit(step); x = _x(lib, 2, 3)
    return [f(x), f(x)]

def case_accumulate_over_microbatches_inside(lib, jit):
    m = _lin(lib); opt = lib.optim.AdamW(m.parameters(), lr=0.01)
    def step(xs):
        opt.zero_grad()
        for xb in xs.chunk(3):
            (m(xb).pow(2).mean() / 3).backward()
        lib.nn.utils.clip_grad_norm_(m.parameters(), 0.05)
        opt.step()
        return m.weight.grad.norm()
    f = jit(step); xs = _x(lib, 6, 3)
    return [f(xs) for _ in range(3)], m.weight

def case_lr_tensor(lib, jit):
    m = _lin(lib); opt = lib.optim.Adam(m.parameters(), lr=lib.tensor(0.01))
    def step(x):
        opt.zero_grad(); m(x).sum().backward(); opt.step()
    f = jit(step); x = _x(lib, 2, 3)
    for i in range(3):
        f(x); opt.param_groups[0]["lr"].fill_(0.01 / (i + 2))
    return m.weight

def case_empty_index_checks(lib, jit):
    """Index ops with an empty index inside a traced program: their deferred bounds checks have nothing to check
    (ops fuzzer seeds 31009-31293 under compile: gather/scatter/index_select/put_ raised ValueError from argmax)."""
    def step(x, i0, i2):
        y = x.clone()
        y.index_add_(0, i0, lib.ones(0, 3)); y.put_(i0, lib.ones(0))
        return (lib.gather(x, 0, i2), y.scatter(1, i2, 5.0), lib.take_along_dim(x, i2, 1), x.index_select(1, i0),
                lib.take(x, i0), y.index_fill(0, i0, 2.0), y)
    f = jit(step); x = _x(lib, 2, 3)
    return [f(x, lib.zeros(0, dtype=lib.int64), lib.zeros(2, 0, dtype=lib.int64)) for _ in range(3)]

def case_integer_division_by_zero(lib, jit):
    """Integer division by a zero inside a traced program raises PyTorch's RuntimeError (a deferred check; math
    fuzzer seed 31253 under compile: uint8 trunc division gave 255), and the program keeps working after it."""
    f = jit(lambda a, b: (lib.div(a, b, rounding_mode="trunc"), lib.floor_divide(a, b), lib.remainder(a, b),
                          lib.fmod(a.long(), b.long())))
    a = lib.tensor([5, 6], dtype=lib.uint8)
    out = []
    for b in ([2, 3], [2, 3], [2, 0], [1, 4]):
        try:
            out.append(f(a, lib.tensor(b, dtype=lib.uint8)))
        except RuntimeError as e:
            out.append(str(e))
    return out

def case_masked_fill_complex_value_checked(lib, jit):
    """A 0-d complex value with an imaginary part cannot fill a real tensor: inside a traced program too (ops fuzzer
    seeds 31011, 31084 under compile filled its real part)."""
    f = jit(lambda x, m, v: x.masked_fill(m, v))
    out = []
    for dt in ("int64", "float32", "complex64"):
        x, m = lib.zeros(3, dtype=getattr(lib, dt)), lib.tensor([True, False, True])
        for v in (2 + 0j, 2 + 0j, 1 + 2j, 3 + 0j):
            try:
                out.append(f(x, m, lib.tensor(v)))
            except RuntimeError as e:
                out.append(str(e))
    return out

def case_strided_argument(lib, jit):
    """A transposed argument keeps its strides in the traced program: view() refuses it as eagerly (ops fuzzer
    seeds 31039, 31204 under compile passed), stride()/is_contiguous() report it, and a contiguous argument of the
    same shape gets a program of its own."""
    f = jit(lambda x: (x.stride(), x.is_contiguous(), x.reshape(-1) * 2, x.t().view(-1) if x.stride(0) == 1 else x))
    g = jit(lambda x: x.view(-1))
    out = []
    for x in (_x(lib, 2, 3).t(), _x(lib, 2, 3).t(), _x(lib, 3, 2), _x(lib, 3, 2), _x(lib, 2, 3).t()):
        out.append(f(x))
        try:
            out.append(g(x))
        except RuntimeError as e:
            out.append(str(e))
    return out

def case_topk_of_a_scalar_then_gather(lib, jit):
    """gather's deferred index check on topk's indices of a 0-d tensor, a constant of the program: the host
    evaluation of the check took the constant output for a variable (ops fuzzer seed 31033 under compile)."""
    def step(t):
        v, i = lib.topk(t, 1, dim=0)
        return v, lib.gather(t, 0, i), lib.gather(t, -1, i * 0)
    f = jit(step)
    return [f(lib.tensor(-2.75) * k) for k in (1, 2, 3)]

def case_negative_number_into_unsigned(lib, jit):
    """A negative Python int meeting a uint8 tensor wraps inside a traced program as eagerly (torch.where with -1:
    OverflowError while tracing; ops fuzzer seed 31287 under compile), empty input included."""
    f = jit(lambda x: (lib.where(x > 0, x, -1), lib.where(x > 0, -2, x), x + -3, x.mul(-1), lib.clamp(x, -1, 2)))
    x = lib.tensor([0, 3, 200], dtype=lib.uint8)
    return [f(x), f(x + 1), f(x[:0]), f(x[:0])]

def case_traced_fill_value_range(lib, jit):
    """masked_fill/index_fill with a traced 0-d value that does not fit the destination raise PyTorch's overflow
    error as deferred checks (the traced program wrapped 300 into uint8); index_fill refuses any complex value for a
    real tensor with its own message; fill_ checks nothing, as in PyTorch."""
    m, i = lib.tensor([True, False, True]), lib.tensor([0])
    f = jit(lambda x, v: (x.masked_fill(m, v), x.clone().fill_(v)))
    g = jit(lambda x, v: x.index_fill(0, i, v))
    out = []
    for dt, vals in ((lib.uint8, (3, 300, -1, -256, 2.5, float("nan"), 1e6)), (lib.int8, (3, 128, -129, -128)),
                     (lib.float16, (3.0, 7e4, float("inf"))), (lib.float32, (3.0, 1e39, 2 + 1j))):
        x = lib.zeros(3, dtype=dt)
        for v in (vals[0],) + vals:
            for h in (f, g):
                try:
                    out.append(h(x, lib.tensor(v) * 1))
                except RuntimeError as e:
                    out.append(str(e))
    return out

def case_masked_scatter_short_source(lib, jit):
    """masked_scatter with fewer source elements than the mask's ones raises PyTorch's error inside a traced program
    as a deferred check (ops fuzzer seeds 40250, 40259 under compile filled zeros)."""
    f = jit(lambda x, m, s: x.masked_scatter(m, s))
    x, out = _x(lib, 2, 3), []
    for m in ([1, 0, 1], [0, 0, 1], [1, 1, 1], [1, 1, 0], [1, 1, 1]):
        try:
            out.append(f(x, lib.tensor(m, dtype=lib.bool), _x(lib, 4, k=0.11)))
        except RuntimeError as e:
            out.append(str(e))
    return out

def case_module_made_inside(lib, jit):
    """A module made inside the compiled function (nn.ChannelShuffle(2)(x)) is the function's own, made again by
    every trace: it was guarded as state, and the traces never settled (nn fuzzer seed 40023 under compile)."""
    f = jit(lambda x: lib.nn.Flatten()(lib.nn.ChannelShuffle(2)(lib.nn.ReLU()(x))))
    return [f(_x(lib, 1, 4, 2, 1) * k) for k in (1, -2, 3)]

def case_embedding_max_norm_gradient(lib, jit):
    """Embedding(max_norm=...) renormalises its weight in place, invisible to autograd: the traced step's weight
    gradient went through the renorm (nn fuzzer seeds 40067, 40125 under compile). Rows over the norm each step."""
    m = lib.nn.Embedding(5, 3, padding_idx=2, max_norm=0.5, norm_type=3.0)
    w = _x(lib, 5, 3, k=0.77) * 3
    f = jit(lambda i: m(i))
    out = []
    for k in range(3):
        with lib.no_grad():
            m.weight.copy_(w * (k + 1))
        y = f(lib.tensor([[1, 2], [4, 1]]))
        out += [y, lib.autograd.grad(y, [m.weight], y * 0 + 1)[0], m.weight]
    return out

CASES = [v for k, v in sorted(globals().items()) if k.startswith("case_")]


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[5:])
def test_pattern_matches_pytorch(case):
    check_case(case)
