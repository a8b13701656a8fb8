"""Probe programs modelled on PyTorch's recipes and intermediate tutorials (pytorch.org/tutorials/recipes), run with
torch 2.13 and with torchish and compared by ``assert_script_matches`` (tests/oracle.py): zeroing gradients and what a
state_dict holds, warm-starting from another model (``load_state_dict(strict=False)``'s return value and errors),
several models and optimizers in one ``torch.save`` through io.BytesIO, changing the default device
(``set_default_device``, the ``torch.device`` context), reasoning about shapes on the meta device, loading a
checkpoint with ``mmap=True`` into a meta-built model with ``assign=True``, saving a whole model, the
``torch.autograd.functional`` API (jacobian with vectorize and forward-mode, hessian, vjp, jvp, hvp, vhp, strict),
``torch.utils.benchmark`` Timer/Measurement/Compare (their shape only, no timings), the profiler's
``record_function`` labels and schedule, saved-tensor hooks that pack to files, per-sample gradients
(``vmap(grad(...))`` over ``functional_call``, ``replace_all_batch_norm_modules_``), model ensembling trained through
``vmap`` (``stack_module_state``), forward-mode AD with modules, gradient accumulation with foreach clipping, and the
CPU automatic-mixed-precision recipe with GradScaler (including a skipped step on an overflow), the optimizer step
in backward (``register_post_accumulate_grad_hook``), autograd mechanics (``register_multi_grad_hook`` all/any,
``allow_mutation_on_saved_tensors``, ``increment_version``, node and tensor hook order), the reproducibility recipe
(deterministic flags, seeded DataLoader shuffling), the performance-tuning knobs (threads, matmul precision,
channels_last convolutions), ``checkpoint_sequential`` with dropout, and the extension points of
``load_state_dict`` (``torch.utils.swap_tensors``, ``torch.__future__``'s conversion switches, ``Tensor.module_load``),
the compiled optimizer step with a Tensor lr and a scheduler.

Fixed here: ``copy_`` into a meta tensor (``load_state_dict`` into a model built on the meta device, with PyTorch's
no-op warning) raised an AttributeError, and out of one raised an AttributeError instead of NotImplementedError; the
mixed meta/real device error named the devices the wrong way round where the real tensor comes first;
``torch.load(BytesIO, mmap=True)`` did not raise PyTorch's ValueError; the torch.func transforms (vmap, grad,
grad_and_value, jacrev, jacfwd, hessian, jvp, vjp) cut the graph: their results did not require grad when their inputs
did, so ``backward()`` through ``vmap`` over stacked ensemble parameters (or a MAML step through ``grad``) failed
(torchish/func/_outer_autograd.py); ``torch.utils.swap_tensors``, ``torch.__future__`` and ``Tensor.module_load`` were
missing (torchish/utils/_swap.py, torchish/__future__.py; Module._apply and load_state_dict follow the switches); a
scheduler stepping a Tensor lr read the new value as a Python float, which broke torchish.compile's graph and
stepped the schedule twice (LinearLR's rates went wrong): it fills the lr from a 0-dim tensor, as PyTorch.

Not compared: PyTorch's meta kernels' shape-error wording (the type is compared), PyTorch's vmap in_dims message
(it prints TreeSpec reprs), and the grad_fn names of transform outputs (PyTorch records each op; torchish one node).
"""
import copy
import io
import os
import pickle
import tempfile
import warnings
import weakref

import pytest

import torchish
from oracle import assert_same, needs_torch, raised as _err, script_test, torch, torch_one_thread
from oracle import formula_data as _data, formula_init as _init

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_zeroing_grads_and_state_dict(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3)
            self.pool = nn.MaxPool2d(2, 2)
            self.bn = nn.BatchNorm2d(4)
            self.fc1 = nn.Linear(4 * 3 * 3, 5)

        def forward(self, x):
            x = self.pool(F.relu(self.bn(self.conv1(x))))
            return self.fc1(lib.flatten(x, 1))

    net = Net()
    opt = lib.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = _data(lib, 2, 3, 8, 8)
    y = lib.tensor([1, 3])
    res = {}
    res["keys"] = list(net.state_dict().keys())
    res["shapes"] = [tuple(v.shape) for v in net.state_dict().values()]
    res["dtypes"] = [str(v.dtype) for v in net.state_dict().values()]
    res["grad_before"] = net.conv1.weight.grad is None
    for i in range(3):
        opt.zero_grad(set_to_none=(i != 1))
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        res[f"loss{i}"] = loss
    net.zero_grad(set_to_none=False)
    res["zeroed"] = net.fc1.weight.grad
    net.zero_grad()
    res["none"] = net.fc1.weight.grad is None
    sd = opt.state_dict()
    res["opt_keys"] = sorted(sd.keys())
    res["opt_state_ids"] = sorted(sd["state"].keys())
    res["opt_state_keys"] = sorted(sd["state"][0].keys())
    res["pg"] = {k: v for k, v in sd["param_groups"][0].items()}
    res["num_batches"] = net.state_dict()["bn.num_batches_tracked"]
    res["running_mean"] = net.bn.running_mean
    res["sd_is_detached"] = [v.requires_grad for v in net.state_dict().values()]
    res["keep_vars"] = [v.requires_grad for v in net.state_dict(keep_vars=True).values()]
    return res


def case_warmstart_partial_load(lib):
    nn = lib.nn
    lib.manual_seed(1)

    class NetA(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 6)
            self.fc2 = nn.Linear(6, 3)
            self.register_buffer("scale", lib.ones(3))

    class NetB(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 6)
            self.fc3 = nn.Linear(6, 2)

    a, b = NetA(), NetB()
    r = b.load_state_dict(a.state_dict(), strict=False)
    res = {"missing": r.missing_keys, "unexpected": r.unexpected_keys, "repr": repr(r), "type": type(r).__name__,
           "tuple": tuple(r), "eq": lib.equal(a.fc1.weight, b.fc1.weight)}
    res["strict_err"] = _err(lambda: b.load_state_dict(a.state_dict()))
    sd = a.state_dict()
    sd["fc1.weight"] = lib.zeros(5, 4)
    res["size_err"] = _err(lambda: b.load_state_dict(sd, strict=False))
    sd2 = {k.replace("fc2", "fc3"): v for k, v in a.state_dict().items() if k != "scale"}
    res["size_err2"] = _err(lambda: b.load_state_dict(sd2, strict=False))
    pretrained = {k: v for k, v in a.state_dict().items() if k in b.state_dict()}
    sdb = b.state_dict()
    sdb.update(pretrained)
    res["ok"] = b.load_state_dict(sdb)
    res["ok_bool"] = bool(b.load_state_dict(sdb))
    res["ok_repr"] = repr(b.load_state_dict(sdb))
    res["non_dict"] = _err(lambda: b.load_state_dict([1, 2]))
    res["fc1_after"] = b.fc1.bias
    return res


def case_save_several_models_one_file(lib):
    nn = lib.nn
    lib.manual_seed(2)
    ma, mb = nn.Linear(3, 2), nn.Sequential(nn.Linear(2, 4), nn.GELU(), nn.Linear(4, 1))
    oa, ob = lib.optim.Adam(ma.parameters(), lr=0.1), lib.optim.SGD(mb.parameters(), lr=0.1, momentum=0.5)
    x = _data(lib, 5, 3)
    for _ in range(2):
        oa.zero_grad(); ob.zero_grad()
        loss = mb(ma(x)).pow(2).mean()
        loss.backward()
        oa.step(); ob.step()
    buf = io.BytesIO()
    lib.save({"modelA_state_dict": ma.state_dict(), "modelB_state_dict": mb.state_dict(),
              "optimizerA_state_dict": oa.state_dict(), "optimizerB_state_dict": ob.state_dict(),
              "epoch": 2, "loss": loss.item(), "shared": [x, x[1:3]]}, buf)
    buf.seek(0)
    ck = lib.load(buf, weights_only=True)
    ma2, mb2 = nn.Linear(3, 2), nn.Sequential(nn.Linear(2, 4), nn.GELU(), nn.Linear(4, 1))
    oa2, ob2 = lib.optim.Adam(ma2.parameters(), lr=0.5), lib.optim.SGD(mb2.parameters(), lr=0.5)
    ma2.load_state_dict(ck["modelA_state_dict"]); mb2.load_state_dict(ck["modelB_state_dict"])
    oa2.load_state_dict(ck["optimizerA_state_dict"]); ob2.load_state_dict(ck["optimizerB_state_dict"])
    view = ck["shared"][1]
    view.add_(100)
    res = {"epoch": ck["epoch"], "loss": ck["loss"], "keys": sorted(ck), "shared0": ck["shared"][0],
           "lr": [oa2.param_groups[0]["lr"], ob2.param_groups[0]["lr"], ob2.param_groups[0]["momentum"]]}
    for _ in range(2):
        for o in (oa, ob, oa2, ob2):
            o.zero_grad()
        mb(ma(x)).pow(2).mean().backward()
        mb2(ma2(x)).pow(2).mean().backward()
        for o in (oa, ob, oa2, ob2):
            o.step()
    res["same"] = [lib.equal(p, q) for p, q in zip(list(ma.parameters()) + list(mb.parameters()),
                                                   list(ma2.parameters()) + list(mb2.parameters()))]
    res["w"] = ma2.weight
    res["step"] = oa2.state_dict()["state"][0]["step"]
    return res


def case_default_device_and_context(lib):
    res = {"default": str(lib.get_default_device())}
    try:
        lib.set_default_device("cpu")
        res["set_cpu"] = str(lib.get_default_device())
        res["t"] = str(lib.ones(2).device)
        with lib.device("meta"):
            m = lib.nn.Linear(3, 2)
            t = lib.zeros(4)
            res["in_ctx"] = str(lib.get_default_device())
            res["explicit"] = str(lib.ones(1, device="cpu").device)
            res["fromdata"] = str(lib.tensor([1.0]).device)
        res["m"] = (str(m.weight.device), m.weight.is_meta, str(t.device), t.is_meta)
        res["after"] = str(lib.get_default_device())
        lib.set_default_device("meta")
        res["meta_default"] = (str(lib.get_default_device()), str(lib.empty(2).device), str(lib.arange(3).device))
    finally:
        lib.set_default_device(None)
    res["reset"] = str(lib.get_default_device())
    res["reset_t"] = str(lib.ones(1).device)
    d = lib.device("cpu", 0)
    res["dev"] = (str(d), d.type, d.index, repr(d), d == lib.device("cpu:0"), lib.device("cpu") == lib.device("cpu", 0))
    res["bad"] = _err(lambda: lib.device("nodevice"))
    res["bad2"] = _err(lambda: lib.device("cpu:x"))
    return res


def case_reasoning_about_shapes(lib):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            return self.fc1(lib.flatten(x, 1))

    shapes = []
    def hook(mod, inp, out):
        shapes.append((type(mod).__name__, tuple(inp[0].shape), tuple(out.shape)))

    net = Net().to("meta")
    for m in net.modules():
        if m is not net:
            m.register_forward_hook(hook)
    inp = lib.randn((1024, 3, 32, 32), device="meta")
    out = net(inp)
    res = {"out": (tuple(out.shape), str(out.device), str(out.dtype), out.requires_grad, type(out.grad_fn).__name__)}
    res["shapes"] = shapes
    conv = nn.Conv2d(1, 1, 7, stride=3, padding=2, dilation=2).to("meta")
    res["conv"] = tuple(conv(lib.empty(2, 1, 40, 33, device="meta")).shape)
    res["params"] = [(n, str(p.device), tuple(p.shape)) for n, p in net.named_parameters()]
    loss = out.sum()
    loss.backward()
    res["grad"] = (str(net.fc1.weight.grad.device), tuple(net.fc1.weight.grad.shape))
    net2 = net.to_empty(device="cpu")
    res["empty"] = str(net2.fc1.weight.device)
    # (the meta kernels' shape errors: the type is compared; their wording differs from the CPU kernels' in PyTorch)
    res["err_cat"] = _err(lambda: lib.cat([lib.empty(2, 3, device="meta"), lib.empty(2, 4, device="meta")]))[0]
    res["err_mm"] = _err(lambda: lib.empty(2, 3, device="meta") @ lib.empty(4, 5, device="meta"))[0]
    res["bad_fc"] = _err(lambda: nn.Linear(10, 2, device="meta")(lib.empty(3, 9, device="meta")))[0]
    return res


def case_autograd_functional_api(lib):
    AF = lib.autograd.functional

    def f(x, y):
        return (x.sin() * y.exp()).sum(), (x * y).cumsum(0)

    def g(x):
        return (x ** 3).sum() + x[0] * x[1] * x[2]

    def h(x, y):
        return x @ y.tanh()

    x = _data(lib, 3)
    y = _data(lib, 3, seed=1)
    A = _data(lib, 2, 3, seed=2)
    res = {}
    res["jac"] = AF.jacobian(f, (x, y))
    res["jac_fwd"] = AF.jacobian(h, (A, y), vectorize=True, strategy="forward-mode")
    res["hess"] = AF.hessian(g, x)
    res["hess2"] = AF.hessian(lambda a, b: (a * b.cos()).sum() * a.sum(), (x, y))
    res["vjp"] = AF.vjp(h, (A, y), lib.ones(2))
    res["jvp"] = AF.jvp(h, (A, y), (lib.ones(2, 3), lib.ones(3)))
    res["hvp"] = AF.hvp(g, x, lib.ones(3))
    res["vhp"] = AF.vhp(g, x, lib.ones(3))
    xr = x.clone().requires_grad_()
    j = AF.jacobian(lambda a: a.exp() * a, xr, create_graph=True)
    j.trace().backward()
    res["cg"] = xr.grad
    res["strict"] = _err(lambda: AF.jacobian(lambda a: lib.ones(2), x, strict=True))
    res["nonstrict"] = AF.jacobian(lambda a: lib.ones(2), x)
    res["vjp_err"] = _err(lambda: AF.vjp(g, x, lib.ones(2)))
    res["hess_out_err"] = _err(lambda: AF.hessian(lambda a: a * 2, x))
    res["fwd_no_vec"] = _err(lambda: AF.jacobian(h, (A, y), strategy="forward-mode"))
    return res


def case_benchmark_timer_shape(lib):
    from importlib import import_module
    bm = import_module(lib.__name__ + ".utils.benchmark")
    x = lib.ones(8, 8)
    t = bm.Timer(stmt="x @ x", setup="y = 1", globals={"x": x}, label="mm", sub_label="8x8", description="ones",
                 num_threads=1)
    m = t.timeit(3)
    res = {"type": type(m).__name__, "times": len(m.times), "npr": m.number_per_run, "label": m.label,
           "sub": m.sub_label, "desc": m.description, "stmt": m.stmt, "title": m.title, "nt": m.num_threads,
           "mean_float": isinstance(m.mean, float), "median_pos": m.median > 0, "env": m.env,
           "task": (m.task_spec.stmt, m.task_spec.setup, m.task_spec.label)}
    m2 = bm.Timer("x.sum()", globals={"x": x}, label="mm", sub_label="sum", description="ones")
    m2 = m2.blocked_autorange(min_run_time=0.01)
    res["blocked"] = (type(m2).__name__, m2.number_per_run >= 1, len(m2.times) >= 1, m2.label, m2.sub_label)
    c = bm.Compare([m, m2])
    res["cmp"] = type(str(c)).__name__
    res["bad"] = _err(lambda: bm.Timer("x +", globals={"x": x}).timeit(1))
    return res


def case_profiler_record_function(lib):
    nn = lib.nn
    from importlib import import_module
    prof_mod = import_module(lib.__name__ + ".profiler")
    model = _init(lib, nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)))
    x = _data(lib, 3, 4)
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU], record_shapes=True) as prof:
        with prof_mod.record_function("model_inference"):
            out = model(x)
        with prof_mod.record_function("loss"):
            l = out.sum()
        l.backward()
        with prof_mod.record_function("model_inference"):
            out2 = model(x)
    ka = prof.key_averages()
    keys = {e.key: e.count for e in ka}
    res = {"mi": keys.get("model_inference"), "loss": keys.get("loss"), "out": out2, "g": model[0].weight.grad,
           "table": type(ka.table(sort_by="cpu_time_total", row_limit=5)).__name__,
           "act": prof_mod.ProfilerActivity.CPU.name}
    @prof_mod.record_function("decorated")
    def f(t):
        return t * 2
    res["dec"] = f(x)
    sched = prof_mod.schedule(wait=1, warmup=1, active=2, repeat=1)
    res["sched"] = [sched(i).name for i in range(6)]
    return res


def case_saved_tensor_hooks_to_disk(lib):
    with tempfile.TemporaryDirectory() as tmp:
        return _saved_to_disk(lib, tmp)


def _saved_to_disk(lib, tmp):
    counter = [0]
    def pack(t):
        counter[0] += 1
        name = os.path.join(tmp, f"{counter[0]}.pt")
        lib.save(t, name)
        return name
    def unpack(name):
        return lib.load(name, weights_only=True)
    x = _data(lib, 4).requires_grad_()
    w = _data(lib, 4, seed=1).requires_grad_()
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * w).sin() * x.exp()
        z = y.pow(2).sum()
    packs = counter[0]
    z.backward()
    res = {"packs": packs, "gx": x.grad, "gw": w.grad}
    y2 = x.pow(2)
    res["saved_self_eq"] = lib.equal(y2.grad_fn._saved_self, x)
    res["saved_self_is"] = y2.grad_fn._saved_self is x
    res["exponent"] = y2.grad_fn._saved_exponent
    y3 = x.exp()
    res["saved_result_is"] = y3.grad_fn._saved_result is y3
    y2.grad_fn._raw_saved_self.register_hooks(lambda t: t * 2, lambda t: t)
    y2.sum().backward()
    res["hooked_grad"] = x.grad
    res["after_bwd"] = _err(lambda: y2.grad_fn._saved_self)
    with lib.autograd.graph.save_on_cpu(pin_memory=False):
        q = (x * w).tanh().sum()
    q.backward()
    res["cpu"] = w.grad
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        res["inplace_err"] = _err(lambda: x.exp_())
    return res




def case_per_sample_gradients(lib):
    nn, F = lib.nn, lib.nn.functional
    from importlib import import_module
    func = import_module(lib.__name__ + ".func")

    class SimpleNet(nn.Module):  # (the tutorial's CNN, with its convolution left out for the test's time)
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 8)
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            return F.log_softmax(self.fc2(F.relu(self.fc1(lib.flatten(x, 1)))), dim=1)

    model = _init(lib, SimpleNet())
    data = _data(lib, 5, 1, 4, 4)
    targets = lib.tensor([0, 2, 1, 1, 0])
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        preds = func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.nll_loss(preds, target.unsqueeze(0))

    ft = func.vmap(func.grad(compute_loss), in_dims=(None, None, 0, 0))
    g = ft(params, buffers, data, targets)
    loop = []
    for i in range(5):
        model.zero_grad()
        F.nll_loss(model(data[i:i + 1]), targets[i:i + 1]).backward()
        loop.append(model.fc1.weight.grad.clone())
    gv = func.vmap(func.grad_and_value(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
    bn = _init(lib, nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
    bparams = {k: v.detach() for k, v in bn.named_parameters()}
    bbuf = {k: v.detach() for k, v in bn.named_buffers()}
    err = _err(lambda: func.vmap(lambda p, b, x: func.functional_call(bn, (p, b), (x,)),
                                 in_dims=(None, None, 0))(bparams, bbuf, _data(lib, 2, 5, 3)))
    func.replace_all_batch_norm_modules_(bn)
    ok = func.vmap(lambda p, x: func.functional_call(bn, p, (x,)), in_dims=(None, 0))(bparams, _data(lib, 2, 5, 3))
    return {"g": g, "loop": lib.stack(loop), "gv": gv, "bn_err": err[0] if err else None, "bn_ok": ok,
            "rm": bn[1].running_mean, "track": bn[1].track_running_stats}


def case_model_ensembling(lib):
    nn, F = lib.nn, lib.nn.functional
    from importlib import import_module
    func = import_module(lib.__name__ + ".func")

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 8)
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x.flatten(1))))

    models = [_init(lib, SimpleMLP(), seed=i) for i in range(3)]
    minibatches = _data(lib, 3, 4, 2, 3)
    minibatch = minibatches[0]
    params, buffers = func.stack_module_state(models)
    res = {"keys": sorted(params), "shape": tuple(params["fc1.weight"].shape),
           "rg": params["fc1.weight"].requires_grad, "leaf": params["fc1.weight"].is_leaf}
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return func.functional_call(base, (params, buffers), (x,))

    res["diff"] = func.vmap(fmodel)(params, buffers, minibatches)
    res["same"] = func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    res["loop"] = lib.stack([m(minibatch) for m in models])
    out = res["same"].sum()
    out.backward()
    res["grad"] = params["fc2.bias"].grad
    res["chunk"] = func.vmap(fmodel, in_dims=(0, 0, None), chunk_size=2)(params, buffers, minibatch)
    res["err"] = _err(lambda: func.stack_module_state([models[0], nn.Linear(6, 8)]))
    # (the type only: PyTorch's message prints its TreeSpec reprs)
    res["err_dims"] = _err(lambda: func.vmap(fmodel, in_dims=(0, 0))(params, buffers, minibatch))[0]
    res["err_size"] = _err(lambda: func.vmap(fmodel)(params, buffers, minibatches[:2]))
    return res


def case_forward_ad_with_modules(lib):
    nn = lib.nn
    fwAD = lib.autograd.forward_ad
    from importlib import import_module
    func = import_module(lib.__name__ + ".func")
    model = _init(lib, nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2)))
    x = _data(lib, 3, 5)
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: lib.ones_like(p) * 0.1 for name, p in params.items()}
    with fwAD.dual_level():
        dual_params = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
        out = func.functional_call(model, dual_params, x)
        jvp = fwAD.unpack_dual(out).tangent
        prim = fwAD.unpack_dual(out).primal
        dx = fwAD.make_dual(x, lib.ones_like(x))
        out2 = model(dx)
        t2 = fwAD.unpack_dual(out2).tangent
        nt = fwAD.unpack_dual(x).tangent
        y = fwAD.make_dual(lib.tensor(2.0), lib.tensor(3.0))
        z = (y * y).exp().log() + y.sqrt()
        tz = fwAD.unpack_dual(z)
        res_err = _err(lambda: fwAD.make_dual(x, lib.ones(2)))
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

    with fwAD.dual_level():
        d = fwAD.make_dual(_data(lib, 4), _data(lib, 4, seed=1))
        cf = fwAD.unpack_dual(Fn.apply(d))
    j_out, j_t = func.jvp(lambda p: func.functional_call(model, p, (x,)), (params,), (tangents,))
    return {"jvp": jvp, "prim": prim, "t2": t2, "nt": nt, "tz": (tz.primal, tz.tangent), "err": res_err,
            "cf": (cf.primal, cf.tangent), "fjvp": (j_out, j_t), "outside": _err(lambda: fwAD.make_dual(x, x))}


def case_grad_accumulation_clip_foreach(lib):
    nn, F = lib.nn, lib.nn.functional
    model = _init(lib, nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 1)))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-2, foreach=True)
    x, y = _data(lib, 8, 4), _data(lib, 8, 1, seed=3)
    accum, norms = 4, []
    for step in range(2):
        for i in range(accum):
            loss = F.mse_loss(model(x[2 * i:2 * i + 2]), y[2 * i:2 * i + 2]) / accum
            loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5, foreach=True))
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.3, norm_type=float("inf"), foreach=True))
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=1.0, foreach=False))
        nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01, foreach=True)
        opt.step()
        opt.zero_grad()
    g = [p.grad for p in model.parameters()]
    model[0].weight.grad = lib.full((6, 4), float("inf"))
    e1 = _err(lambda: nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True, foreach=True))
    n_inf = nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
    empty = nn.utils.clip_grad_norm_([], 1.0)
    single = nn.utils.clip_grad_norm_(model[2].weight, 1.0)
    ng = nn.utils.clip_grad_norm_([lib.zeros(2, requires_grad=True)], 1.0)
    return {"norms": norms, "g": g, "w": [p for p in model.parameters()], "e1": e1, "ninf": n_inf,
            "empty": empty, "single": single, "ng": ng, "w0": model[0].weight.grad}


def case_amp_recipe_cpu(lib):
    nn, F = lib.nn, lib.nn.functional
    model = _init(lib, nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x, y = _data(lib, 6, 8), _data(lib, 6, 4, seed=2)
    scaler = lib.amp.GradScaler("cpu", init_scale=2. ** 8, growth_interval=2)
    res = {"enabled": scaler.is_enabled(), "scale0": scaler.get_scale(), "sd0": scaler.state_dict()}
    hist = []
    for step in range(4):
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
            out = model(x)
            loss = F.mse_loss(out, y)
            hist.append((str(out.dtype), str(loss.dtype)))
        sl = scaler.scale(loss)
        sl.backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        scaler.step(opt)
        scaler.update()
        hist.append((loss.float().item(), scaler.get_scale(), str(sl.dtype)))
        opt.zero_grad()
    res["hist"] = hist
    res["w"] = model[0].weight
    big = lib.amp.GradScaler("cpu", init_scale=2. ** 120)
    with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
        loss = F.mse_loss(model(x * 1e3), y)
    before = model[2].weight.detach().clone()
    big.scale(loss).backward()
    r = big.step(opt)
    big.update()
    res["skip"] = (r, big.get_scale(), lib.equal(before, model[2].weight), big._get_growth_tracker())
    res["sd"] = big.state_dict()
    off = lib.amp.GradScaler("cpu", enabled=False)
    res["off"] = (off.scale(loss) is loss, off.get_scale(), off.is_enabled(), off.state_dict())
    res["err"] = _err(lambda: scaler.unscale_(opt) or scaler.unscale_(opt))
    return res


def case_load_checkpoint_tips(lib):
    with tempfile.TemporaryDirectory() as tmp:
        return _load_checkpoint_tips(lib, tmp)


def _load_checkpoint_tips(lib, tmp):
    nn = lib.nn
    path = os.path.join(tmp, "ck.pt")

    class Big(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(6, 6) for _ in range(3)])
            self.norm = nn.LayerNorm(6)

        def forward(self, x):
            for l in self.layers:
                x = l(x).relu()
            return self.norm(x)

    src = _init(lib, Big())
    lib.save(src.state_dict(), path)
    sd = lib.load(path, mmap=True, weights_only=True)
    with lib.device("meta"):
        meta = Big()
    r = meta.load_state_dict(sd, assign=True)
    x = _data(lib, 2, 6)
    res = {"r": repr(r), "dev": str(meta.layers[0].weight.device), "param": type(meta.layers[0].weight).__name__,
           "rg": meta.layers[0].weight.requires_grad, "out": meta(x)}
    with lib.device("meta"):
        meta2 = Big()
    # (a fresh load: PyTorch's load_state_dict(assign=True) leaves assign=True in the dict's _metadata)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        meta2.load_state_dict(lib.load(path, weights_only=True))
    res["warned"] = [(w.category.__name__, str(w.message)) for w in caught]
    res["meta2"] = str(meta2.layers[0].weight.device)
    res["err"] = _err(lambda: meta2(x))
    sd2 = lib.load(path, weights_only=True, map_location="cpu")
    res["keys"] = list(sd2)
    res["mmap_cpu"] = _err(lambda: lib.load(io.BytesIO(open(path, "rb").read()), mmap=True))
    return res


def case_save_whole_model(lib):
    nn = lib.nn
    model = _init(lib, nn.Sequential(nn.Linear(3, 2), nn.Tanh()))
    buf = io.BytesIO()
    lib.save(model, buf)
    buf.seek(0)
    try:
        lib.load(buf, weights_only=True)
        refused = None
    except pickle.UnpicklingError as e:  # (torchish's is a subclass with PyTorch's message)
        refused = str(e).split("\n")[0]
    buf.seek(0)
    m2 = lib.load(buf, weights_only=False)
    return {"refused": refused, "type": type(m2).__name__, "out": m2(_data(lib, 2, 3)),
            "repr": repr(m2)}


def case_optimizer_step_in_backward(lib):
    nn, F = lib.nn, lib.nn.functional
    model = _init(lib, nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)))
    ref = copy.deepcopy(model)
    opt_dict = {p: lib.optim.Adam([p], lr=0.05, foreach=False) for p in model.parameters()}

    def optimizer_hook(parameter):
        opt_dict[parameter].step()
        opt_dict[parameter].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(optimizer_hook) for p in model.parameters()]
    ref_opt = lib.optim.Adam(ref.parameters(), lr=0.05)
    x, y = _data(lib, 5, 4), _data(lib, 5, 2, seed=1)
    losses = []
    for _ in range(3):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        losses.append(loss.detach())
        ref_opt.zero_grad()
        F.mse_loss(ref(x), y).backward()
        ref_opt.step()
    grads = [p.grad for p in model.parameters()]
    for h in handles:
        h.remove()
    return {"losses": losses, "grads_none": [g is None for g in grads], "params": list(model.parameters()),
            "ref": list(ref.parameters()),
            "err": _err(lambda: lib.ones(2).register_post_accumulate_grad_hook(lambda p: None)),
            "err2": _err(lambda: (lib.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(print))}


def case_autograd_mechanics_hooks(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    seen = []
    h = lib.autograd.graph.register_multi_grad_hook((a, b), lambda grads: seen.append([g is None for g in grads]))
    (a * 2).sum().backward()
    (a * b).sum().backward()
    h.remove()
    (a * b).sum().backward()
    anyseen = []
    h2 = lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: anyseen.append(g), mode="any")
    (a * b).sum().backward()
    h2.remove()
    res = {"seen": seen, "any": anyseen, "ga": a.grad, "gb": b.grad}
    c = a.detach().clone().requires_grad_()
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        d = c.clone()
        e = d.sin()
        d.add_(1)
        e.sum().backward()
        res["mut_grad"] = c.grad
    d2 = a.detach().clone().requires_grad_().clone()
    e2 = d2.sin()
    lib.autograd.graph.increment_version(d2)
    err = _err(lambda: e2.sum().backward())
    res["inc"] = (err[0], err[1].replace(lib.__name__ + ".", "torch."))  # (the hint names the library)
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y.exp()
    order = []
    z.grad_fn.register_prehook(lambda go: order.append("pre"))
    z.grad_fn.register_hook(lambda gi, go: order.append("post"))
    y.register_hook(lambda g: order.append("tensor") or g * 10)
    z.sum().backward()
    res["order"] = order
    res["y_grad"] = y.grad
    res["x_grad"] = x.grad
    res["gradient_edge"] = lib.autograd.graph.get_gradient_edge(y).node.name()
    res["nf"] = [type(n[0]).__name__ if n[0] is not None else None for n in z.grad_fn.next_functions]
    return res


def case_reproducibility_recipe(lib):
    import random
    res = {}
    lib.manual_seed(0)
    random.seed(0)
    res["seeded"] = (lib.initial_seed(), lib.rand(2))
    lib.use_deterministic_algorithms(True, warn_only=True)
    res["det"] = (lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled())
    lib.use_deterministic_algorithms(False)
    res["det_off"] = lib.are_deterministic_algorithms_enabled()
    saved = lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic
    lib.backends.cudnn.benchmark = False
    lib.backends.cudnn.deterministic = True
    res["cudnn"] = (lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic)
    lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic = saved
    ds = lib.utils.data.TensorDataset(lib.arange(10.0))

    def seed_worker(worker_id):
        worker_seed = lib.initial_seed() % 2 ** 32
        random.seed(worker_seed)

    g = lib.Generator()
    g.manual_seed(0)
    dl = lib.utils.data.DataLoader(ds, batch_size=3, shuffle=True, worker_init_fn=seed_worker, generator=g)
    res["batches"] = [b[0] for b in dl]
    res["batches2"] = [b[0] for b in dl]
    g.manual_seed(0)
    res["again"] = [b[0] for b in dl]
    res["info"] = lib.utils.data.get_worker_info()
    st = lib.get_rng_state()
    a = lib.randn(3)
    lib.set_rng_state(st)
    res["state"] = (lib.equal(a, lib.randn(3)), st.dtype, tuple(st.shape))
    res["bad"] = _err(lambda: lib.use_deterministic_algorithms("yes"))
    return res


def case_checkpoint_sequential_dropout(lib):
    nn = lib.nn
    from importlib import import_module
    cp = import_module(lib.__name__ + ".utils.checkpoint")
    lib.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 1))
    x = _data(lib, 6, 4).requires_grad_()
    lib.manual_seed(7)
    out = cp.checkpoint_sequential(model, 2, x, use_reentrant=False)
    out.sum().backward()
    g1 = [p.grad.clone() for p in model.parameters()]
    gx = x.grad.clone()
    model.zero_grad()
    x.grad = None
    lib.manual_seed(7)
    out2 = model(x)
    out2.sum().backward()
    g2 = [p.grad for p in model.parameters()]
    def block(t):
        return model[3](model[2](model[1](model[0](t))))
    lib.manual_seed(11)
    o3 = cp.checkpoint(block, x, use_reentrant=False, preserve_rng_state=True)
    o3.sum().backward()
    return {"out": out, "out2": out2, "g1": g1, "g2": g2, "gx": gx, "o3": o3, "gx3": x.grad,
            "err": _err(lambda: cp.checkpoint(block, x, use_reentrant=True, foo=1)),
            "rng_after": lib.rand(2)}


def case_swap_tensors_and_module_load(lib):
    nn = lib.nn
    from importlib import import_module
    future = import_module(lib.__name__ + ".__future__")
    res = {"flags": (future.get_swap_module_params_on_conversion(), future.get_overwrite_module_params_on_conversion())}
    t1, t2 = lib.arange(2.0), lib.zeros(3, dtype=lib.float64)
    t1.foo = "one"
    lib.utils.swap_tensors(t1, t2)
    res["swapped"] = (t1, t2, getattr(t1, "foo", None), getattr(t2, "foo", None))
    p = nn.Parameter(lib.ones(2))
    q = lib.zeros(2)
    lib.utils.swap_tensors(p, q)
    res["classes"] = (type(p).__name__, type(q).__name__, p.requires_grad, q.requires_grad)
    r = lib.ones(1)
    ref = weakref.ref(r)
    res["weak"] = _err(lambda: lib.utils.swap_tensors(r, lib.zeros(1)))
    del ref
    model = _init(lib, nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
    w = model[0].weight
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x = _data(lib, 5, 3)
    model(x).sum().backward()
    for flags in ((False, False), (False, True), (True, False)):
        future.set_swap_module_params_on_conversion(flags[0])
        future.set_overwrite_module_params_on_conversion(flags[1])
        try:
            model.double()
            res[f"double{flags}"] = (model[0].weight is w, model[0].weight.dtype, model[0].weight.grad.dtype,
                                     model[1].running_mean.dtype, type(model[0].weight).__name__,
                                     opt.param_groups[0]["params"][0] is model[0].weight)
            model.float()
            w = model[0].weight
        finally:
            future.set_swap_module_params_on_conversion(False)
            future.set_overwrite_module_params_on_conversion(False)
    future.set_swap_module_params_on_conversion(True)
    try:
        sd = {k: v * 2 for k, v in model.state_dict().items()}
        w = model[0].weight
        res["load"] = repr(model.load_state_dict(sd))
        res["load_vals"] = (model[0].weight is w, model[0].weight.clone(), model[1].running_var.clone(),
                            model[0].weight.requires_grad)
        res["assign"] = repr(model.load_state_dict({k: v + 1 for k, v in sd.items()}, assign=True))
        res["assign_vals"] = (model[0].weight is w, model[0].bias.clone())
        model.zero_grad()
        model.eval()  # (in training mode the gradients before BatchNorm are float32 rounding noise here)
        model(x).pow(2).sum().backward()
        model.train()
        res["trained"] = [p.grad.clone() for p in model.parameters()]  # (copies: the swaps below change them)
        y = model(x).sum()
        # (changing the dtype between forward and backward fails: PyTorch refuses to swap a tensor the graph saved
        # (BatchNorm's weight), torchish's backward refuses to reach a swapped parameter; the type is compared)
        res["poisoned"] = _err(lambda: (model.double(), y.backward()))[0]
    finally:
        future.set_swap_module_params_on_conversion(False)
    res["module_load"] = (lib.ones(2).module_load(lib.zeros(2)),
                          lib.ones(2).module_load(lib.full((2,), 3.0), assign=True))
    return res


def case_performance_tuning_flags(lib):
    res = {}
    n = lib.get_num_threads()
    lib.set_num_threads(1)
    res["threads"] = lib.get_num_threads()
    lib.set_num_threads(n)
    res["interop"] = isinstance(lib.get_num_interop_threads(), int)
    res["mkldnn"] = isinstance(lib.backends.mkldnn.is_available(), bool)
    res["cudnn"] = (lib.backends.cudnn.is_available(), lib.cuda.is_available(), lib.backends.mps.is_available())
    res["tf32"] = (lib.backends.cuda.matmul.allow_tf32, lib.get_float32_matmul_precision())
    lib.set_float32_matmul_precision("high")
    res["prec"] = lib.get_float32_matmul_precision()
    lib.set_float32_matmul_precision("highest")
    res["bad_prec"] = _err(lambda: lib.set_float32_matmul_precision("fast"))
    m = lib.nn.Conv2d(2, 3, 3).to(memory_format=lib.channels_last)
    x = _data(lib, 1, 2, 5, 5).to(memory_format=lib.channels_last)
    _init(lib, m)
    y = m(x)
    res["cl"] = (m.weight.is_contiguous(memory_format=lib.channels_last),
                 y.is_contiguous(memory_format=lib.channels_last), y.stride(), y)
    with lib.autograd.profiler.emit_nvtx(enabled=False):
        res["nvtx"] = True
    res["anomaly"] = lib.is_anomaly_enabled()
    return res


def case_compiled_optimizer_tensor_lr(lib, jit):
    nn, F = lib.nn, lib.nn.functional
    model = _init(lib, nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2)))
    x, y = _data(lib, 5, 4), _data(lib, 5, 2, seed=1)
    opt = lib.optim.Adam(model.parameters(), lr=lib.tensor(0.01))
    sched = lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)

    @jit  # (the recipe "compiling the optimizer": step and scheduler in one compiled function)
    def opt_step():
        opt.step()
        sched.step()

    hist = []
    for _ in range(4):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt_step()
        hist.append((loss.detach(), opt.param_groups[0]["lr"], sched.get_last_lr()))
    return hist, list(model.parameters()), type(opt.param_groups[0]["lr"]).__name__


test_script_matches_torch = script_test(globals())


# ------------------------------------------------------------------------------------- the fixes, where they live


@needs_torch
def test_copy_into_and_out_of_meta_tensors():
    def fn(lib):
        out = []
        x = lib.empty(2, device="meta")
        y = x.copy_(lib.ones(2))
        out.append((y is x, str(y.device), x._version))
        a = lib.ones(2, requires_grad=True)
        z = lib.empty(2, device="meta").copy_(a * 2)
        out.append((z.requires_grad, type(z.grad_fn).__name__))
        out.append(_err(lambda: lib.ones(2).copy_(lib.empty(2, device="meta"))))
        out.append(_err(lambda: lib.empty(2, device="meta").copy_(lib.ones(3))))
        with lib.device("meta"):
            m = lib.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = m.load_state_dict(lib.nn.Linear(2, 2).state_dict())
        out.append((repr(r), str(m.weight.device), [(w.category.__name__, str(w.message)) for w in caught]))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m.load_state_dict(lib.nn.Linear(2, 2).to("meta").state_dict())
        out.append(len(caught))
        return out
    assert_same(fn(torch), fn(torchish))


@needs_torch
def test_meta_meeting_a_real_tensor_names_the_first_device_as_expected():
    def fn(lib):
        m, c = lib.empty(2, 3, device="meta"), lib.ones(2, 3)
        return [_err(f) for f in (lambda: m + c, lambda: c + m, lambda: lib.cat([c, m]),
                                  lambda: lib.where(c > 0, m, c), lambda: c * lib.empty((), device="meta"),
                                  lambda: lib.nn.functional.layer_norm(c, (3,), lib.empty(3, device="meta")))]
    assert fn(torchish) == fn(torch)


@needs_torch
def test_load_with_mmap_needs_a_file_path():
    def fn(lib):
        buf = io.BytesIO()
        lib.save({"w": lib.ones(2)}, buf)
        buf.seek(0)
        return _err(lambda: lib.load(buf, mmap=True, weights_only=True))
    assert fn(torchish) == fn(torch)


def _through_transforms(lib):
    """Gradients from outside of each torch.func transform, first and second order."""
    from importlib import import_module
    func = import_module(lib.__name__ + ".func")
    x = lib.tensor([1.0, -1.0, 0.5], requires_grad=True)
    w = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    lin = _init(lib, lib.nn.Linear(3, 2))  # (captured by the functions: its parameters get gradients too)
    res = {}
    y = func.vmap(lambda w, b, r: (w @ r).sin() + b + lin(r), in_dims=(None, None, 0))(w, x[:2], w.detach() * 0.1)
    res["vmap"] = (y.requires_grad, lib.autograd.grad(y.pow(2).sum(), [w, x, lin.weight], create_graph=True))
    res["vmap2"] = lib.autograd.grad(res["vmap"][1][0].sum(), x)
    y = func.vmap(lin)(w.detach())
    res["module"] = (y.requires_grad, lib.autograd.grad(y.sum(), [lin.weight, lin.bias]))
    ints = func.vmap(lambda r: (r * 2, r.argmax()))(w)
    res["ints"] = (ints[0].requires_grad, ints[1].requires_grad)
    with lib.no_grad():
        res["no_grad"] = func.vmap(lambda r: r * 2)(w).requires_grad
    g = func.grad(lambda x, w: (w @ x).tanh().sum())(x, w)
    res["grad"] = (g.requires_grad, lib.autograd.grad(g.pow(2).sum(), [w, x]))
    fast = w - 0.1 * func.grad(lambda p: ((p @ x) ** 2).sum())(w)  # (MAML's inner step)
    res["maml"] = lib.autograd.grad(((fast @ x) ** 2).sum(), [w, x])
    f = lambda x, w: (w @ x.sin()).tanh()  # noqa: E731
    res["jacrev"] = lib.autograd.grad(func.jacrev(f)(x, w).pow(2).sum(), [x, w])
    res["hessian"] = lib.autograd.grad(func.hessian(lambda x: (x.sin() * x).sum())(x).sum(), x)
    o, t = func.jvp(lambda a: a.sin() * w.sum(), (x,), (x * 2,))
    res["jvp"] = (o.requires_grad, t.requires_grad, lib.autograd.grad(t.sum(), x))
    o, pull = func.vjp(lambda a: (w @ a).sin(), x)
    cot = lib.tensor([1.0, 2.0], requires_grad=True)
    res["vjp"] = (o.requires_grad, lib.autograd.grad((pull(cot)[0] ** 2).sum() + o.sum(), [x, w, cot]))
    c = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    res["complex"] = lib.autograd.grad(func.vmap(lambda a: a * a.conj() + a * 1j)(c).real.sum(), c)
    return res


@needs_torch
def test_func_transforms_are_differentiable_from_outside():
    assert_same(_through_transforms(torch), _through_transforms(torchish))
