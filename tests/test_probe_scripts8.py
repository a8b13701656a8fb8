"""Regression tests from running more tutorial-style PyTorch programs on torchish and on PyTorch: a GAN with two
optimizers, chained schedulers, LBFGS and the less common optimizers, custom autograd Functions, evaluation metrics,
checkpointing and hooks, data loading, users' common mistakes, compiled steps with dict outputs and EMA updates, model
ensembling and per-parameter optimizers from the tutorials, forward-mode AD, containers and parametrizations. Each
``case_*`` is written against the PyTorch API only; inputs and weights come from formulas."""
import copy
import math

import numpy as np

from oracle import formula_data as _data, formula_init as _init, script_test


def case_gan_two_optimizers(lib):
    """A GAN step: two Adam optimizers (betas=(0.5, 0.999)), the discriminator trained on ``fake.detach()``, the
    generator through it with smoothed labels, ``zero_grad(set_to_none=True)``."""
    nn, F = lib.nn, lib.nn.functional
    G = _init(lib, nn.Sequential(nn.Linear(3, 8), nn.LeakyReLU(0.2), nn.Linear(8, 4), nn.Tanh()))
    D = _init(lib, nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1)), 1)
    og = lib.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
    od = lib.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
    real = _data(lib, 6, 4)
    z = _data(lib, 6, 3, seed=1)
    crit = nn.BCEWithLogitsLoss()
    hist = []
    for _ in range(3):
        fake = G(z)
        od.zero_grad()
        ld = crit(D(real), lib.ones(6, 1)) + crit(D(fake.detach()), lib.zeros(6, 1))
        ld.backward()
        od.step()
        og.zero_grad(set_to_none=True)
        lg = crit(D(fake), lib.full((6, 1), 0.9))
        lg.backward()
        og.step()
        hist.append((ld.item(), lg.item()))
    return hist, [p.grad for p in G.parameters()], list(D.parameters()), od.state_dict()["state"][0]["exp_avg_sq"]


def case_chained_schedulers(lib):
    """OneCycleLR (cycling momentum of a Nesterov SGD), then LinearLR -> CosineAnnealingWarmRestarts through
    SequentialLR next to a ReduceLROnPlateau on the same Adam."""
    nn = lib.nn
    m = _init(lib, nn.Linear(3, 2))
    opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=8, pct_start=0.3,
                                              anneal_strategy="cos")
    x, y = _data(lib, 5, 3), _data(lib, 5, 2, seed=2)
    lrs, mom, losses = [], [], []
    for _ in range(8):
        loss = nn.functional.mse_loss(m(x), y)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
        lrs.append(sched.get_last_lr()[0]); mom.append(opt.param_groups[0]["momentum"]); losses.append(loss.item())
    opt2 = lib.optim.Adam(m.parameters(), lr=0.1)
    s1 = lib.optim.lr_scheduler.LinearLR(opt2, start_factor=0.25, total_iters=3)
    s2 = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt2, T_0=3, T_mult=2, eta_min=0.01)
    seq = lib.optim.lr_scheduler.SequentialLR(opt2, [s1, s2], milestones=[3])
    plat = lib.optim.lr_scheduler.ReduceLROnPlateau(opt2, mode="min", factor=0.5, patience=1, threshold=0.1)
    lrs2 = []
    for i in range(10):
        opt2.step(); seq.step()
        plat.step(1.0 if i < 3 else 2.0)
        lrs2.append(opt2.param_groups[0]["lr"])
    return lrs, mom, losses, lrs2, seq.state_dict()["_milestones"], sched.state_dict()["total_steps"]


def case_custom_function_needs_input_grad(lib):
    """A custom autograd.Function that saves its inputs, keeps a Python scalar on ctx and skips the gradients
    ``ctx.needs_input_grad`` says nobody wants (also with a broadcast input, through autograd.grad)."""
    class ScaledMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, scale):
            ctx.save_for_backward(a, b)
            ctx.scale = scale
            return a * b * scale

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ga = gb = None
            if ctx.needs_input_grad[0]:
                ga = g * b * ctx.scale
            if ctx.needs_input_grad[1]:
                gb = g * a * ctx.scale
            return ga, gb, None
    a = _data(lib, 3, 4).requires_grad_()
    b = _data(lib, 3, 4, seed=1)
    out = ScaledMul.apply(a, b, 2.5)
    out.sum().backward()
    c = _data(lib, 4, seed=3).requires_grad_()
    out2 = ScaledMul.apply(a, c, 0.5)  # broadcasting
    g = lib.autograd.grad(out2.pow(2).sum(), [a, c])
    return out, a.grad, b.grad, g, out.grad_fn is not None, out.requires_grad


def case_metrics_sort_unique_bincount(lib):
    """Evaluation metrics: a confusion matrix by bincount, top-k accuracy, per-class F1, unique/unique_consecutive
    counts, histc, stable sort ranks, quantiles, a weighted bincount, median."""
    logits = _data(lib, 12, 4)
    target = lib.tensor([0, 1, 2, 3, 0, 1, 2, 3, 3, 3, 1, 0])
    pred = logits.argmax(1)
    conf = lib.bincount(target * 4 + pred, minlength=16).reshape(4, 4)
    acc = (pred == target).float().mean()
    top2 = logits.topk(2, dim=1).indices
    top2acc = (top2 == target[:, None]).any(1).float().mean()
    vals, counts = lib.unique(pred, return_counts=True)
    u, inv = lib.unique(target, sorted=True, return_inverse=True)
    h = lib.histc(logits, bins=5, min=-1, max=1)
    s, idx = lib.sort(logits[:, 0], descending=True, stable=True)
    ranks = lib.argsort(idx)
    prec = conf.diag().float() / conf.sum(0).clamp(min=1).float()
    rec = conf.diag().float() / conf.sum(1).float()
    f1 = 2 * prec * rec / (prec + rec).clamp(min=1e-8)
    cum = lib.cumsum(lib.bincount(target), 0)
    uc = lib.unique_consecutive(lib.tensor([1, 1, 2, 2, 3, 1, 1]), return_counts=True, return_inverse=True)
    q = lib.quantile(logits[:, 1], lib.tensor([0.25, 0.5, 0.9]))
    wb = lib.bincount(target, weights=logits[:, 2])
    return conf, acc, top2acc, vals, counts, u, inv, h, s, idx, ranks, f1, cum, uc, q, wb, logits.median(0)


def case_lbfgs_strong_wolfe(lib):
    """LBFGS with a closure and the strong-Wolfe line search on a least-squares fit (convex, so rounding is not
    amplified along the iterates), its state's n_iter and func_evals."""
    nn = lib.nn
    m = _init(lib, nn.Linear(3, 2))
    x = _data(lib, 8, 3)
    y = x @ lib.tensor([[1.0, -2.0], [0.5, 0.0], [-1.0, 3.0]]) + lib.tensor([0.25, -0.5]) + _data(lib, 8, 2, seed=2) * 0.1
    opt = lib.optim.LBFGS(m.parameters(), lr=1, max_iter=4, history_size=3, line_search_fn="strong_wolfe")
    losses = []

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(m(x), y)
        loss.backward()
        return loss
    for _ in range(3):
        losses.append(opt.step(closure).item())
    st = opt.state_dict()["state"][0]
    return losses, list(m.parameters()), st["n_iter"], st["func_evals"]


def case_more_optimizers(lib):
    """NAdam (and decoupled), RAdam decoupled, Adagrad with lr_decay, Rprop, ASGD, Adadelta and a maximizing
    dampened SGD, four steps each."""
    nn = lib.nn
    res = []
    for name, kw in [("NAdam", dict(lr=0.01, momentum_decay=4e-3)), ("RAdam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1)),
                     ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)), ("Rprop", dict(lr=0.01)),
                     ("ASGD", dict(lr=0.05, t0=1)), ("Adadelta", dict(lr=1.0, rho=0.8)),
                     ("NAdam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.05)),
                     ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, maximize=True))]:
        m = _init(lib, nn.Linear(3, 2))
        opt = getattr(lib.optim, name)(m.parameters(), **kw)
        x = _data(lib, 4, 3)
        for _ in range(4):
            loss = (m(x) ** 2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
        res.append((name, loss.item(), m.weight, m.bias))
    return res


def case_checkpoint_and_hooks(lib):
    """Activation checkpointing (use_reentrant=False) of a block with a forward pre-hook and a full backward hook,
    and a tensor hook that doubles the gradient."""
    nn = lib.nn
    blk = _init(lib, nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.Linear(4, 4)))
    head = _init(lib, nn.Linear(4, 2), 1)
    seen = []
    blk[0].register_forward_pre_hook(lambda mod, inp: seen.append(("pre", tuple(inp[0].shape))))
    h = blk[2].register_full_backward_hook(lambda mod, gi, go: seen.append(("bwd", go[0].sum().item())))
    x = _data(lib, 3, 4).requires_grad_()
    hid = lib.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
    hid.register_hook(lambda g: g * 2)
    out = head(hid).sum()
    out.backward()
    h.remove()
    return seen, x.grad, blk[0].weight.grad, head.weight.grad


def case_module_utilities(lib):
    """Module plumbing: apply(init_fn), persistent and non-persistent buffers, register_parameter, .to(float64),
    requires_grad_(False) on a submodule, half(), train/eval flags."""
    nn = lib.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.register_buffer("scale", lib.tensor([1.0, 2.0, 3.0]))
            self.register_buffer("tmp", lib.zeros(2), persistent=False)
            self.register_parameter("extra", nn.Parameter(lib.ones(3)))
        def forward(self, x):
            return self.fc(x) * self.scale + self.extra
    def init_fn(m):
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.bias, 0.1)
            with lib.no_grad():
                m.weight.copy_(lib.eye(3) * 0.5 + 0.1)
    net = Net().apply(init_fn)
    keys = list(net.state_dict().keys())
    bufs = [n for n, _ in net.named_buffers()]
    d = net.to(lib.float64)
    y = d(lib.ones(2, 3, dtype=lib.float64))
    nparams = sum(p.numel() for p in net.parameters() if p.requires_grad)
    net.fc.requires_grad_(False)
    trainable = [n for n, p in net.named_parameters() if p.requires_grad]
    mods = [n for n, _ in net.named_modules()]
    h = net.half()
    z = net.zero_grad()
    return keys, bufs, y, nparams, trainable, mods, h.scale.dtype, h.tmp.dtype, str(net.fc.weight.dtype), z, net.training, net.eval().training


def case_dataloader_epochs(lib):
    """DataLoader over a map-style Dataset returning dicts (default collation), TensorDataset/Subset/ConcatDataset
    with a BatchSampler, and a custom collate_fn."""
    data = lib.utils.data
    class Pairs(data.Dataset):
        def __init__(self, n):
            self.x = _data(lib, n, 3); self.y = lib.arange(n) % 2
        def __len__(self):
            return len(self.y)
        def __getitem__(self, i):
            return {"x": self.x[i], "y": self.y[i], "id": i}
    ds = Pairs(7)
    dl = data.DataLoader(ds, batch_size=3, shuffle=False, drop_last=False)
    batches = [(b["x"], b["y"], b["id"]) for b in dl]
    td = data.TensorDataset(_data(lib, 5, 2), lib.arange(5.0))
    sub = data.Subset(td, [4, 0, 2])
    cat = data.ConcatDataset([td, sub])
    dl2 = data.DataLoader(cat, batch_sampler=data.BatchSampler(data.SequentialSampler(cat), 3, drop_last=True))
    b2 = list(dl2)
    dl3 = data.DataLoader(td, batch_size=2, collate_fn=lambda items: lib.stack([a for a, _ in items]).sum(0))
    return batches, len(dl), b2, len(cat), [b for b in dl3], data.default_collate([(1, 2.0), (3, 4.0)])


def case_common_user_errors(lib):
    """The mistakes users make (wrong shapes, dtypes, out-of-range targets, backward twice, in-place on a leaf,
    view of a non-contiguous tensor, bad optimizer arguments, strict state_dict loads): the builtin error type of
    each."""
    nn = lib.nn
    res = []
    def attempt(f):
        try:
            f(); res.append("ok")
        except Exception as e:
            t = type(e)
            while t.__module__ != "builtins":
                t = t.__mro__[1]
            res.append(t.__name__)
    lin = nn.Linear(3, 2)
    attempt(lambda: lin(lib.ones(4, 5)))
    attempt(lambda: nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([0.0, 1.0]).long().float()))
    attempt(lambda: nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([0, 3])))
    def twice():
        x = lib.ones(2, requires_grad=True); y = (x.exp()).sum(); y.backward(); y.backward()
    attempt(twice)
    attempt(lambda: lib.ones(2, requires_grad=True).add_(1))
    attempt(lambda: lib.ones(2, 3).view(3, 3))
    attempt(lambda: lib.ones(2, 3).t().view(6))
    attempt(lambda: lib.cat([lib.ones(2, 3), lib.ones(2, 4)]))
    attempt(lambda: lib.ones(2, 3) @ lib.ones(2, 3))
    attempt(lambda: nn.functional.mse_loss(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64)))
    attempt(lambda: lib.ones(3, requires_grad=True).numpy())
    attempt(lambda: lib.ones(2, 2).backward())
    attempt(lambda: nn.Embedding(3, 2)(lib.tensor([3])))
    attempt(lambda: nn.BatchNorm1d(3)(lib.ones(1, 3)))
    attempt(lambda: lib.optim.SGD([], lr=0.1))
    attempt(lambda: lib.optim.Adam(lin.parameters(), lr=-1))
    attempt(lambda: lin.load_state_dict({"weight": lib.ones(2, 3)}))
    attempt(lambda: lin.load_state_dict({"weight": lib.ones(3, 3), "bias": lib.ones(2)}))
    attempt(lambda: lib.tensor([1, 2]).float().mean(dtype=lib.long))
    attempt(lambda: lib.arange(3).mean())
    attempt(lambda: lib.ones(2, 3).item())
    attempt(lambda: nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([[0], [1]])))
    attempt(lambda: nn.Conv2d(3, 4, 3)(lib.ones(1, 2, 5, 5)))
    attempt(lambda: nn.Conv2d(3, 4, 3)(lib.ones(1, 3, 2, 2)))
    attempt(lambda: lib.stack([lib.ones(2), lib.ones(3)]))
    attempt(lambda: nn.LSTM(3, 4)(lib.ones(2, 5)))
    attempt(lambda: nn.LSTM(3, 4)(lib.ones(5, 2, 4)))
    return res


def case_compiled_forward_dict_output_grad_accum(lib, jit):
    """A compiled module returning a dict, with a Python branch on the batch size, a keyword argument and a buffer
    incremented in forward; gradients accumulated over three micro-batches of two shapes."""
    nn = lib.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 4); self.b = nn.Linear(4, 2); self.register_buffer("count", lib.zeros((), dtype=lib.long))
        def forward(self, x, scale=1.0):
            self.count += 1
            h = lib.relu(self.a(x))
            if x.shape[0] > 2:
                h = h * scale
            return {"logits": self.b(h), "hidden": h}
    net = _init(lib, Net())
    f = jit(net)
    opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    xs = [_data(lib, 4, 3), _data(lib, 2, 3, seed=1), _data(lib, 4, 3, seed=2)]
    opt.zero_grad()
    outs = []
    for i, x in enumerate(xs):
        out = f(x, scale=0.5 + i)
        (out["logits"].square().mean() / len(xs)).backward()
        outs.append(out["logits"].detach())
    g = net.a.weight.grad.clone()
    opt.step()
    return outs, g, net.count, list(net.parameters()), sorted(out.keys())


def case_compiled_ema_and_inplace(lib, jit):
    """A compiled AdamW step that also updates an EMA copy of the weights in place under no_grad."""
    nn = lib.nn
    model = _init(lib, nn.Linear(3, 3))
    ema = _init(lib, nn.Linear(3, 3), 1)
    opt = lib.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.01)

    @jit
    def train_step(x):
        loss = (model(x) - x).pow(2).sum(1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with lib.no_grad():
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.mul_(0.9).add_(pm, alpha=0.1)
        return loss.detach()
    hist = [train_step(_data(lib, 4, 3, seed=i)) for i in range(3)]
    return hist, list(ema.parameters()), list(model.parameters())


def case_compiled_attention_masks(lib, jit):
    """Compiled hand-written attention with padding and causal masks (fully masked rows turned to 0 by nan_to_num)
    beside scaled_dot_product_attention with a boolean mask."""
    F = lib.nn.functional
    @jit
    def attn(q, k, v, pad):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        s = s.masked_fill(pad[:, None, None, :], float("-inf"))
        causal = lib.triu(lib.ones(q.size(-2), k.size(-2), dtype=lib.bool), diagonal=1)
        s = s.masked_fill(causal, float("-inf"))
        p = F.softmax(s, dim=-1)
        p = lib.nan_to_num(p)
        return p @ v, F.scaled_dot_product_attention(q, k, v, attn_mask=~pad[:, None, None, :] & ~causal)
    q = _data(lib, 2, 2, 4, 3).requires_grad_()
    k = _data(lib, 2, 2, 4, 3, seed=1)
    v = _data(lib, 2, 2, 4, 3, seed=2)
    pad = lib.tensor([[False, False, False, True], [False, True, True, True]])
    a, b = attn(q, k, v, pad)
    (a.sum() + b.sum()).backward()
    return a, b, q.grad


def case_model_ensembling_vmap(lib):
    """The model-ensembling tutorial: stack_module_state, a meta-device base model, functional_call under vmap with
    shared and with per-model inputs."""
    nn = lib.nn
    models = [_init(lib, nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)), s) for s in range(3)]
    params, buffers = lib.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    def fmodel(p, b, x):
        return lib.func.functional_call(base, (p, b), (x,))
    x = _data(lib, 5, 3)
    out = lib.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
    xs = _data(lib, 3, 5, 3, seed=1)
    out2 = lib.vmap(fmodel)(params, buffers, xs)
    return out, out2, sorted(params.keys()), params["0.weight"].shape


def case_optimizer_in_backward_hooks(lib):
    """The optimizer-in-backward tutorial: one SGD per parameter stepped from register_post_accumulate_grad_hook;
    and saved_tensors_hooks packing/unpacking."""
    nn = lib.nn
    model = _init(lib, nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)))
    opts = {p: lib.optim.SGD([p], lr=0.1, momentum=0.5) for p in model.parameters()}
    order = []
    def hook(p):
        order.append(tuple(p.shape))
        opts[p].step(); opts[p].zero_grad()
    for p in model.parameters():
        p.register_post_accumulate_grad_hook(hook)
    x = _data(lib, 4, 3)
    for _ in range(2):
        model(x).pow(2).mean().backward()
    packed = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: (packed.append(tuple(t.shape)), t)[1], lambda t: t * 1):
        y = (x.requires_grad_() * 2).exp().sum()
    y.backward()
    return order, list(model.parameters()), [p.grad for p in model.parameters()], sorted(packed), x.grad


def case_forward_ad_dual(lib):
    """Forward-mode AD through a Linear, GELU and softmax with dual tensors, and torch.func.jvp."""
    fwAD = lib.autograd.forward_ad
    x = _data(lib, 3, 4); t = _data(lib, 3, 4, seed=1)
    lin = _init(lib, lib.nn.Linear(4, 2))
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, t)
        out = lib.nn.functional.gelu(lin(dx)).softmax(-1)
        p, tang = fwAD.unpack_dual(out)
    jvp_out = lib.func.jvp(lambda z: lin(z).tanh(), (x,), (t,))
    return p, tang, jvp_out


def case_module_containers_and_state_hooks(lib):
    """ParameterList/ParameterDict/ModuleDict in forward, state_dict(prefix, keep_vars), a load_state_dict
    post-hook with a non-strict load, parameters_to_vector round trip."""
    nn = lib.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.plist = nn.ParameterList([nn.Parameter(lib.ones(2) * i) for i in range(3)])
            self.pdict = nn.ParameterDict({"b": nn.Parameter(lib.zeros(2)), "a": nn.Parameter(lib.ones(2))})
            self.mdict = nn.ModuleDict({"z": nn.Linear(2, 2), "y": nn.Identity()})
            self.add_module("extra", nn.Tanh())
        def forward(self, x):
            for p in self.plist:
                x = x + p
            x = x * self.pdict["a"] + self.pdict["b"]
            for name, m in self.mdict.items():
                x = m(x)
            return self.extra(x)
    net = Net()
    _init(lib, net)
    log = []
    net.register_load_state_dict_post_hook(lambda mod, keys: log.append((list(keys.missing_keys), list(keys.unexpected_keys))))
    sd = net.state_dict(prefix="pre.", keep_vars=True)
    y = net(_data(lib, 3, 2))
    y.sum().backward()
    net2 = Net()
    res = net2.load_state_dict({k[4:]: v.detach() + 1 for k, v in sd.items() if "pdict.b" not in k} | {"junk": lib.ones(1)}, strict=False)
    v = nn.utils.parameters_to_vector(net.parameters())
    nn.utils.vector_to_parameters(v * 2, net2.parameters())
    return (list(sd.keys()), type(sd["pre.plist.0"]).__name__, y, [p.grad for p in net.plist], log, res.missing_keys, res.unexpected_keys,
            v, list(net2.parameters()), [n for n, _ in net.named_children()], len(net.plist), list(net.pdict.keys()))


def case_parametrize_custom_and_orthogonal(lib):
    """register_parametrization with a Symmetric module (under parametrize.cached()) and one with right_inverse
    (assigning the parametrized tensor), and the orthogonal parametrization."""
    nn = lib.nn
    P = nn.utils.parametrize
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
    class PosScale(nn.Module):
        def forward(self, X):
            return X.exp()
        def right_inverse(self, Y):
            return Y.log()
    lin = _init(lib, nn.Linear(3, 3))
    P.register_parametrization(lin, "weight", Symmetric())
    lin2 = nn.Linear(2, 2)
    with lib.no_grad():
        lin2.bias.copy_(lib.tensor([0.5, 2.0]))
        lin2.weight.copy_(lib.tensor([[1.0, 0.2], [0.3, 0.9]]))
    P.register_parametrization(lin2, "bias", PosScale())
    orig_bias = lin2.parametrizations.bias.original.clone()
    x = _data(lib, 4, 3)
    with P.cached():
        y = lin(x) + lin(x * 2)
    y.sum().backward()
    lin2.bias = lib.tensor([1.0, 3.0])
    o = nn.utils.parametrizations.orthogonal(nn.Linear(3, 3))
    with lib.no_grad():
        o.parametrizations.weight.original.copy_(lib.eye(3) + 0.1 * _data(lib, 3, 3))
    W = o.weight
    return (lin.weight, lin.parametrizations.weight.original.grad, orig_bias, lin2.parametrizations.bias.original,
            lin2.bias, (W @ W.T - lib.eye(3)).abs().max() < 1e-5, sorted(lin.state_dict().keys()), type(lin).__name__)


def case_numpy_ufuncs_and_scalars_on_tensors(lib):
    """Scripts that mix NumPy in: ufuncs on a tensor give a tensor back (a 0-d one for a 0-d input; a boolean result
    is uint8), ``np.argmax(t)`` too, ``np.concatenate`` an array; NumPy scalars as operands (np.bool_ counts as a
    float, so subtracting it is allowed and an integer tensor times it is float; np.complex64, not a Python complex,
    counts as its real part)."""
    t = lib.tensor([1.0, 2.0, 4.0])
    ti, tb = lib.tensor([1, 2, 3]), lib.tensor([True, False, True])
    ufuncs = [np.exp(t), np.sqrt(t), np.add(t, 1), np.maximum(t, 1.5), np.exp(lib.tensor(1.0)), np.argmax(t),
              np.exp(ti), np.isnan(t), np.add(t, t), np.clip(t, 0, 3), np.square(t.T), np.argsort(-t), np.cumsum(ti),
              np.tanh(lib.tensor([[1.0, 2.0]])), np.exp(lib.zeros(0)), np.abs(lib.tensor([-1, 2], dtype=lib.int8)),
              np.float32(2) * t]
    joined = np.concatenate([t, t])
    scalars = [t - np.bool_(True), np.bool_(True) - t, ti - np.bool_(True), ti * np.bool_(True), tb + np.bool_(True),
               lib.sub(t, np.bool_(True)), lib.rsub(ti, np.bool_(True)), ti.div(np.bool_(True)), ti ** np.bool_(True),
               lib.where(tb, ti, np.bool_(True)), tb.masked_fill(tb, np.bool_(False)), ti + np.int8(3), t * np.float64(2),
               (ti.to(lib.int8) + np.int64(3)).dtype, lib.full((2,), np.bool_(True)), lib.full((2,), np.complex64(1j)),
               lib.full((2,), np.complex128(1j)), t * np.complex64(1 + 1j), t.mul(np.complex128(1j)),
               t.masked_fill(tb, np.complex64(2 + 1j)), lib.where(tb, t, np.complex64(3 + 1j)),
               t.new_full((2,), np.bool_(True)), lib.full((1,), np.bool_(False), dtype=lib.bool)]
    errors = []
    scalars += [lib.add(t, 1, alpha=np.bool_(True)), lib.sub(t, t, alpha=np.bool_(False))]
    for f in (lambda: tb - np.bool_(True), lambda: tb & np.bool_(True), lambda: lib.add(ti, 1, alpha=np.bool_(True)),
              lambda: np.exp(t.requires_grad_())):
        try:
            f()
            errors.append("ok")
        except Exception as e:  # noqa: BLE001 - the builtin family is the outcome
            errors.append(next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"))
    return ufuncs, [type(u).__name__ for u in ufuncs], type(joined).__name__, joined.tolist(), scalars, errors


def case_numpy_array_operands(lib):
    """Operators with a NumPy array as PyTorch runs them: ``t + arr`` is NumPy's ufunc wrapped back into a tensor
    (NumPy's promotion: float32 + int64 array is float64; a tensor that requires grad refuses), ``arr + t`` and
    ``t < arr`` raise TypeError, ``t == arr`` is a tensor comparison, ``t != arr`` Python's identity fallback,
    ``arr / t`` is ``t.reciprocal() * arr``; in-place operators take the array."""
    import operator
    t = lib.tensor([1.0, 2.0])
    out = []
    for arr in (np.ones(2), np.array(2.0), np.arange(2), np.ones(2, dtype=np.float32), np.array([True, False])):
        for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lt", "ge", "eq", "ne", "matmul"):
            for a, b in ((t, arr), (arr, t)):
                try:
                    r = getattr(operator, name)(a, b)
                    out.append(r if isinstance(r, (lib.Tensor, bool)) else type(r).__name__)
                except Exception as e:  # noqa: BLE001 - the builtin family is the outcome
                    out.append(next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"))
        x = t.clone()
        x += arr
        out.append(x)
    for f in (lambda: lib.ones(2, requires_grad=True) * np.ones(2), lambda: np.ones(2) / lib.ones(2, requires_grad=True)):
        try:
            out.append(f())
        except Exception as e:  # noqa: BLE001 - the builtin family is the outcome
            out.append(next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"))
    return out



test_script_matches_torch = script_test(globals(), avx512={
    "lbfgs_strong_wolfe": "the float32 rounding that decides one line-search step (15 function evaluations vs 16)"})
