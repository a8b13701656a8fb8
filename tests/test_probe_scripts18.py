"""Regression tests from probe scripts of the code written around models: freezing and the requires_grad flag,
checkpoint-and-resume of a model, optimizer and scheduler mid-schedule, gradient clipping before any backward,
default_collate of numpy images in the layout of torch.stack, and the warnings of DataLoader(pin_memory=True),
read-only numpy samples, deprecated backward hooks and complex modules. Each ``case_*`` is written against the
PyTorch API only, with inputs and weights from formulas (tests/oracle.py).

Also probed and matching (kept out for time, or covered elsewhere): state_dict/load_state_dict with strict=False
(the IncompatibleKeys tuple and repr), size-mismatch messages, assign=True, non-persistent buffers, prefixes,
_load_from_state_dict and the state-dict hooks, the optimizers' state_dict round trip (SGD, Adam(W), Adagrad,
RMSprop, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop, Adafactor), ten schedulers' state_dict, named_modules(
remove_duplicate=False), register_* errors, __repr__ of ~90 layers, .half()/.double()/.to(channels_last),
containers, get/set_submodule errors, forward/backward (pre-)hooks with kwargs and always_call, global hooks,
clip_grad_norm_/get_total_norm/clip_grads_with_norm_, parameters_to_vector, prune, weight/spectral norm,
fuse_conv_bn_eval, functional_call with tied weights, stack_module_state + vmap, TensorDataset/Subset/
ConcatDataset/StackDataset/ChainDataset, samplers and default_collate of dicts, namedtuples and numpy scalars."""
import copy
import warnings

import numpy as np

from oracle import formula_data as _data, formula_init as _init, raised as _err, script_test


def _warned(fn):
    """The warnings ``fn()`` shows (category name, message without the C++ source location PyTorch appends)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(x.category.__name__, str(x.message).split(" (Triggered internally at ")[0]) for x in w]


def _mlp(lib):
    nn = lib.nn
    return _init(lib, nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)))


def case_requires_grad_flag_must_be_a_bool(lib):
    # PyTorch's argument parser takes a Python bool only: requires_grad_(1) is a TypeError, the property's setter
    # a RuntimeError; Module.requires_grad_ passes the flag on to each parameter
    m = _mlp(lib)
    t = lib.ones(2)
    out = [_err(lambda: t.requires_grad_(1)), _err(lambda: t.requires_grad_(np.bool_(True))),
           _err(lambda: t.requires_grad_(None)), _err(lambda: setattr(t, "requires_grad", 1)),
           _err(lambda: setattr(t, "requires_grad", None)), _err(lambda: m.requires_grad_(0)),
           t.requires_grad_(requires_grad=False).requires_grad, [p.requires_grad for p in m.parameters()]]
    # freezing the first layer, a step, then zero_grad keeping zeros and dropping the grads
    m[0].requires_grad_(False)
    m(_data(lib, 2, 3)).pow(2).sum().backward()
    out.append([p.grad for p in m.parameters()])
    m.zero_grad(set_to_none=False)
    out.append([p.grad for p in m.parameters()])
    m.zero_grad()
    out.append([p.grad is None for p in m.parameters()])
    return out


def case_extra_state_not_defined(lib):
    m = lib.nn.Linear(2, 2)
    return _err(lambda: m.get_extra_state()), _err(lambda: m.set_extra_state({}))


def case_checkpoint_and_resume_mid_schedule(lib, jit):
    D, nn = lib.utils.data, lib.nn
    loader = D.DataLoader(D.TensorDataset(_data(lib, 8, 3), _data(lib, 8, 2, seed=1)), batch_size=3)

    def build():
        model = _mlp(lib)
        opt = lib.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=12)
        return model, opt, sched

    def train(model, opt, sched, epochs):
        @jit
        def step(x, y):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            return loss.detach()
        losses = []
        for _ in range(epochs):
            for x, y in loader:
                losses.append(step(x, y))
                sched.step()
        return losses

    model, opt, sched = build()
    first = train(model, opt, sched, 2)
    ckpt = copy.deepcopy({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict()})
    model2, opt2, sched2 = build()
    with lib.no_grad():
        for p in model2.parameters():
            p.zero_()
    r = model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["opt"])
    sched2.load_state_dict(ckpt["sched"])
    resumed = train(model2, opt2, sched2, 1)
    cont = train(model, opt, sched, 1)
    return (first, repr(r), ckpt["opt"]["param_groups"], sorted(ckpt["sched"]), resumed, cont,
            list(model2.parameters()), sched2.get_last_lr(), opt2.state_dict()["state"][0]["step"])


def case_gradient_clipping_before_any_backward(lib):
    # clip_grad_value_ groups the gradients first, and PyTorch's grouping refuses an empty list; the norm functions
    # return (or use) a zero norm
    nn = lib.nn
    m = _mlp(lib)
    return (_err(lambda: nn.utils.clip_grad_value_(m.parameters(), 1.0)),
            _err(lambda: nn.utils.clip_grad_value_([], 1.0, foreach=False)),
            nn.utils.clip_grad_norm_(m.parameters(), 1.0), nn.utils.get_total_norm([], norm_type="inf"),
            nn.utils.clip_grads_with_norm_(m.parameters(), 1.0, lib.tensor(2.0)))


def case_collate_numpy_images_in_stack_layout(lib):
    # default_collate stacks torch.as_tensor of each numpy sample: contiguous (an HWC image transposed to CHW too),
    # channels-last when every sample's strides are (size-1 dimensions' strides as the view gives them)
    D = lib.utils.data
    img = np.arange(60, dtype=np.float32).reshape(4, 5, 3)
    samples = [img.transpose(2, 0, 1), np.arange(6.0).reshape(2, 3).T,
               np.arange(120, dtype=np.float32).reshape(2, 4, 5, 3).transpose(0, 3, 1, 2),
               np.arange(120, dtype=np.float32).reshape(1, 2, 3, 4, 5).transpose(0, 4, 1, 2, 3),
               np.ones((2, 3, 1, 1), np.float32).transpose(0, 2, 3, 1), np.arange(12.0).reshape(3, 4)[:, ::2]]
    out = []
    for s in samples:
        b = D.default_collate([s, s + 1])
        out.append((b, b.stride()))
    out.append(D.default_collate([samples[0], samples[0]]).view(2, -1))  # (a view works on the contiguous batch)

    class Images(D.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return (img * i).transpose(2, 0, 1), i

    x, y = next(iter(D.DataLoader(Images(), batch_size=3)))
    out += [x.stride(), x.flatten(1).sum(1), y]
    return out


def case_utility_warnings(lib):
    D, nn = lib.utils.data, lib.nn
    ds = D.TensorDataset(lib.arange(4))
    ro = np.arange(3.0)
    ro.setflags(write=False)
    m = _mlp(lib)
    m.register_backward_hook(lambda mod, gi, go: None)  # (inputs without grad: PyTorch warns only the deprecation)
    full = _mlp(lib)
    full.register_full_backward_hook(lambda mod, gi, go: None)  # (inputs without grad: PyTorch's warning with a link)
    before = lib.is_warn_always_enabled()
    lib.set_warn_always(True)  # (the read-only warning shows once per process otherwise)
    try:
        return [_warned(lambda: list(D.DataLoader(ds, batch_size=2, pin_memory=True))),
                _warned(lambda: list(D.DataLoader(ds, batch_size=2, pin_memory=True, pin_memory_device="cuda"))),
                _warned(lambda: D.default_collate([ro, ro])),
                _warned(lambda: m(_data(lib, 2, 3)).sum().backward()),
                _warned(lambda: full(_data(lib, 2, 3)).sum().backward()),
                _warned(lambda: nn.Linear(2, 2).to(lib.complex64))]
    finally:
        lib.set_warn_always(before)


def case_parameter_and_optimizer_state_strides(lib, jit):
    # nn.Parameter(t) is t's data (a transposed tensor keeps its strides, as does deepcopy), parameters_to_vector
    # views each parameter (a non-contiguous one raises), and the optimizers' state is zeros_like(p,
    # preserve_format): a channels-last or transposed parameter's state has its strides, also after load_state_dict
    nn = lib.nn
    conv = _init(lib, nn.Conv2d(2, 3, 3)).to(memory_format=lib.channels_last)
    proj = nn.Parameter(_data(lib, 3, 4).t())
    x = _data(lib, 2, 2, 5, 5).to(memory_format=lib.channels_last)
    params = [conv.weight, conv.bias, proj]
    opt = lib.optim.Adam(params, lr=0.1)

    @jit
    def step(x):
        opt.zero_grad()
        loss = (conv(x).mean((2, 3)) @ proj.t()).pow(2).sum()
        loss.backward()
        opt.step()
        return loss.detach()

    losses = [step(x), step(x)]
    out = [losses, proj.stride(), copy.deepcopy(proj).stride(), proj.grad.stride(), conv.weight.grad.stride(),
           [(k, v.stride()) for p in params for k, v in opt.state[p].items() if v.ndim],
           _err(lambda: nn.utils.parameters_to_vector(params))]
    opt2 = lib.optim.Adam(params, lr=0.1)
    opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
    out.append([(k, v.stride()) for p in params for k, v in opt2.state[p].items() if v.ndim])
    sgd = lib.optim.SGD(params, lr=0.1, momentum=0.9)
    sgd.step()
    out += [[sgd.state[p]["momentum_buffer"].stride() for p in params], proj, conv.weight]
    return out


def case_hook_settings_read_by_compiled_steps(lib, jit):
    # torchish.compile guards the Python values a module hook reads from its closure or its object, as those of the
    # step itself: hooks registered after the first compiled call whose settings then change
    m = _mlp(lib)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    x = _data(lib, 5, 3)

    @jit
    def step(x):
        opt.zero_grad()
        y = m(x)
        y.pow(2).sum().backward()
        opt.step()
        return y.detach()

    class Shift:  # a hook object, and a bound method as a hook, reading their object's attributes
        def __init__(self):
            self.by = 0.1

        def __call__(self, mod, args):
            return (args[0] + self.by,)

        def tilt(self, mod, grad_in, grad_out):
            return (grad_in[0] * (1 + self.by),)

    cfg = {"grad_scale": 2.0, "out_scale": 0.5}
    shift = Shift()
    out = [step(x)]
    m[2].register_full_backward_pre_hook(lambda mod, grad_out: (grad_out[0] * cfg["grad_scale"],))
    m[0].register_forward_hook(lambda mod, args, o: o * cfg["out_scale"])
    m[1].register_forward_pre_hook(shift)
    m[1].register_full_backward_hook(shift.tilt)
    out.append(step(x))
    cfg["grad_scale"] = 3.0
    out += [step(x), step(x)]
    cfg["out_scale"] = 1.5
    shift.by = -0.2
    out += [step(x), step(x)]
    return out, list(m.parameters())


test_script_matches_torch = script_test(globals())
