"""nn.Module, Parameter, Buffer and the containers against PyTorch: registration, names and order, state_dict,
load_state_dict (messages included), conversions keeping Parameter identity, printing, copying."""
from __future__ import annotations

import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest

from oracle import arr, needs_torch, to_numpy, torch, torchish

pytestmark = needs_torch
LIBS = pytest.mark.parametrize("lib", ["torch", "torchish"])


def _lib(name):
    return torch if name == "torch" else torchish


def make_classes(T):
    """The same small modules written against either library (only Module/Parameter/ops, no nn layers)."""
    nn = T.nn

    class Lin(nn.Module):
        def __init__(self, i, o, bias=True, seed=0):
            super().__init__()
            self.in_features, self.out_features = i, o
            self.weight = nn.Parameter(T.tensor(arr(o, i, seed=seed)))
            if bias:
                self.bias = nn.Parameter(T.tensor(arr(o, seed=seed + 100)))
            else:
                self.register_parameter("bias", None)

        def forward(self, x):
            y = x @ self.weight.t()
            return y + self.bias if self.bias is not None else y

        def extra_repr(self):
            return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"

    class Norm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.scale = nn.Parameter(T.ones(n))
            self.register_buffer("running_mean", T.zeros(n))
            self.register_buffer("num_batches", T.tensor(0))
            self.register_buffer("scratch", T.zeros(n), persistent=False)
            self.register_buffer("missing", None)

        def forward(self, x):
            return (x - self.running_mean) * self.scale

        def extra_repr(self):
            return f"{self.scale.shape[0]}"

    class Block(nn.Module):
        def __init__(self, n, seed):
            super().__init__()
            self.fc = Lin(n, n, seed=seed)
            self.norm = Norm(n)

        def forward(self, x):
            return self.norm(self.fc(x)).tanh()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = Lin(3, 4, seed=1)
            self.blocks = nn.ModuleList([Block(4, 2), Block(4, 3)])
            self.heads = nn.ModuleDict(OrderedDict([("b", Lin(4, 2, seed=4)), ("a", Lin(4, 1, bias=False, seed=5))]))
            self.shared = self.embed            # the same module twice
            self.extra = nn.ParameterList([nn.Parameter(T.ones(2)), T.zeros(3)])
            self.table = nn.ParameterDict({"z": nn.Parameter(T.ones(1)), "y": T.zeros(2, 2)})
            self.tied = self.embed.weight       # the same parameter twice
            self.register_buffer("step", T.tensor(1.0))
            self.empty = nn.Sequential()

        def forward(self, x):
            h = self.embed(x)
            for b in self.blocks:
                h = b(h)
            return self.heads["b"](h).sum() + self.heads["a"](h).sum() + self.extra[0].sum()

    return Lin, Norm, Block, Net


def both(fn):
    """Run ``fn(lib)`` with torch and torchish."""
    return fn(torch), fn(torchish)


def names(pairs):
    return [n for n, _ in pairs]


# ----------------------------------------------------------------------------------------------------------------
# Parameter / Buffer


def test_parameter_basics():
    for T in (torch, torchish):
        p = T.nn.Parameter(T.ones(2))
        assert isinstance(p, T.Tensor) and isinstance(p, T.nn.Parameter)
        assert p.requires_grad and p.is_leaf
        assert type(p * 2) is T.Tensor
        assert type(p.detach()) is T.Tensor
        with T.no_grad():
            assert T.nn.Parameter(T.ones(1)).requires_grad
        assert not T.nn.Parameter(T.ones(1), requires_grad=False).requires_grad
        assert T.nn.Parameter().shape == (0,)
    t_rep, x_rep = both(lambda T: repr(T.nn.Parameter(T.ones(2))))
    assert x_rep == t_rep == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
    t_rep, x_rep = both(lambda T: repr(T.nn.Parameter(T.tensor([2.0, -1.0]), requires_grad=False)))
    assert x_rep == t_rep


def test_parameter_int_requires_grad_error():
    for T in (torch, torchish):
        with pytest.raises(RuntimeError, match="floating point"):
            T.nn.Parameter(T.arange(3))
        assert T.nn.Parameter(T.arange(3), requires_grad=False).dtype == T.int64


def test_parameter_shares_data_with_source():
    def run(T):
        src = T.zeros(3)
        p = T.nn.Parameter(src)
        with T.no_grad():
            p.add_(1.0)
        src.mul_(3.0)
        return to_numpy(src), to_numpy(p)
    (ts, tp), (xs, xp) = both(run)
    np.testing.assert_array_equal(xs, ts)
    np.testing.assert_array_equal(xp, tp)


def test_parameter_inplace_guard_and_deepcopy():
    for T in (torch, torchish):
        p = T.nn.Parameter(T.ones(2))
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            p.add_(1)
        p.grad = T.ones(2)
        q = copy.deepcopy(p)
        assert type(q) is T.nn.Parameter and q is not p and q.requires_grad
        assert q.grad is None
        np.testing.assert_array_equal(to_numpy(q), to_numpy(p))


def test_buffer_class():
    def run(T):
        m = T.nn.Module()
        m.a = T.nn.Buffer(T.ones(2))
        m.b = T.nn.Buffer(T.zeros(1), persistent=False)
        m.c = T.zeros(1)  # a plain tensor is just an attribute
        b = T.nn.Buffer(T.ones(1))
        return (names(m.named_buffers()), list(m.state_dict()), isinstance(b, T.nn.Buffer),
                isinstance(T.ones(1), T.nn.Buffer), type(b).__name__)
    t, x = both(run)
    assert x == t


# ----------------------------------------------------------------------------------------------------------------
# registration and traversal


def _traversal(T):
    Net = make_classes(T)[3]
    m = Net()
    return dict(
        params=names(m.named_parameters()),
        params_dup=names(m.named_parameters(remove_duplicate=False)),
        params_prefix=names(m.named_parameters(prefix="model")),
        params_local=names(m.named_parameters(recurse=False)),
        buffers=names(m.named_buffers()),
        buffers_dup=names(m.named_buffers(remove_duplicate=False)),
        children=names(m.named_children()),
        modules=names(m.named_modules()),
        modules_dup=names(m.named_modules(remove_duplicate=False)),
        modules_prefix=names(m.named_modules(prefix="root")),
        n_params=len(list(m.parameters())),
        n_modules=len(list(m.modules())),
        n_children=len(list(m.children())),
        state=list(m.state_dict()),
        state_prefix=list(m.state_dict(prefix="pre.")),
    )


def test_traversal_names_and_order_match_torch():
    t, x = both(_traversal)
    for key in t:
        assert x[key] == t[key], key


def test_state_dict_values_detached_and_keep_vars():
    def run(T):
        m = make_classes(T)[3]()
        sd = m.state_dict()
        kv = m.state_dict(keep_vars=True)
        return (type(sd).__name__, [type(v).__name__ for v in sd.values()], [v.requires_grad for v in sd.values()],
                [type(v).__name__ for v in kv.values()], kv["embed.weight"] is m.embed.weight,
                {k: to_numpy(v) for k, v in sd.items()}, hasattr(sd, "_metadata"))
    t, x = both(run)
    assert x[:5] == t[:5]
    assert x[6] == t[6]
    assert set(x[5]) == set(t[5])
    for k in t[5]:
        np.testing.assert_allclose(x[5][k], t[5][k], err_msg=k)


def test_forward_matches_torch():
    def run(T):
        m = make_classes(T)[3]()
        x = T.tensor(arr(2, 3, seed=9))
        y = m(x)
        y.backward()
        return y, [p.grad for p in m.parameters()]
    (ty, tg), (xy, xg) = both(run)
    np.testing.assert_allclose(to_numpy(xy), to_numpy(ty), rtol=1e-5)
    assert len(tg) == len(xg)
    for a, b in zip(tg, xg):
        if a is None:
            assert b is None
        else:
            np.testing.assert_allclose(to_numpy(b), to_numpy(a), rtol=1e-4, atol=1e-6)


def test_repr_matches_torch():
    def run(T):
        Lin, Norm, Block, Net = make_classes(T)
        m = Net()
        seq = T.nn.Sequential(OrderedDict([("first", Lin(2, 2)), ("second", Block(2, 1))]))
        ml = T.nn.ModuleList([Lin(2, 2), Lin(2, 2), Lin(2, 3), Lin(2, 2), Lin(2, 2)])
        return [repr(m), repr(seq), repr(ml), repr(T.nn.ModuleList()), repr(T.nn.Module())]
    t, x = both(run)
    for a, b in zip(t, x):
        assert b == a


def test_setattr_and_delattr():
    def run(T):
        Lin = make_classes(T)[0]
        m = Lin(2, 2)
        m.weight = T.nn.Parameter(T.ones(1))
        m.sub = Lin(1, 1)
        m.sub = None                  # a module slot keeps its name, holding None
        m.bias = None                 # a parameter slot keeps its name, holding None
        m.register_buffer("buf", T.zeros(1))
        m.buf = T.ones(2)             # reassigning a buffer name keeps it a buffer
        m.plain = 3
        out = [names(m.named_parameters()), list(m._parameters), list(m._modules), names(m.named_buffers()),
               m.plain]
        del m.buf
        del m.weight
        m.weight = T.nn.Parameter(T.ones(1))  # back, now last
        out += [names(m.named_buffers()), list(m._parameters)]
        m.y = Lin(1, 1)
        m.y = T.nn.Parameter(T.ones(1))  # a parameter replaces a module of the same name
        m.z = T.ones(1)
        m.z = T.nn.Parameter(T.ones(1))  # ... and a plain attribute
        out += [list(m._parameters), list(m._modules), "z" in m.__dict__]
        return out
    t, x = both(run)
    assert x == t


ERRORS = [
    ("tensor_to_param", lambda T, m: setattr(m, "weight", T.ones(2))),
    ("module_to_param", lambda T, m: setattr(m, "weight", T.nn.Module())),
    ("int_to_module", lambda T, m: (m.add_module("sub", T.nn.Module()), setattr(m, "sub", 3))),
    ("int_to_buffer", lambda T, m: (m.register_buffer("b", None), setattr(m, "b", 3))),
    ("buffer_dot", lambda T, m: m.register_buffer("a.b", T.ones(1))),
    ("buffer_empty", lambda T, m: m.register_buffer("", T.ones(1))),
    ("buffer_exists", lambda T, m: m.register_buffer("forward", T.ones(1))),
    ("buffer_type", lambda T, m: m.register_buffer("b", 3)),
    ("buffer_name_type", lambda T, m: m.register_buffer(1, T.ones(1))),
    ("param_type", lambda T, m: m.register_parameter("p", T.ones(1))),
    ("param_nonleaf", lambda T, m: m.register_parameter("p", T.nn.Parameter(T.ones(1)) * 2)),
    ("param_dot", lambda T, m: m.register_parameter("a.b", None)),
    ("param_exists", lambda T, m: m.register_parameter("training", None)),
    ("module_type", lambda T, m: m.add_module("x", 3)),
    ("module_dot", lambda T, m: m.add_module("a.b", T.nn.Module())),
    ("module_empty", lambda T, m: m.add_module("", T.nn.Module())),
    ("module_exists", lambda T, m: m.add_module("weight", T.nn.Module())),
    ("getattr_missing", lambda T, m: m.nope),
    ("get_submodule_missing", lambda T, m: m.get_submodule("a.b")),
    ("get_submodule_not_module", lambda T, m: m.get_submodule("weight")),
    ("get_parameter_missing", lambda T, m: m.get_parameter("nope")),
    ("get_parameter_not_param", lambda T, m: (m.register_buffer("bb", T.ones(1)), m.get_parameter("bb"))),
    ("get_buffer_not_buffer", lambda T, m: m.get_buffer("weight")),
    ("set_submodule_empty", lambda T, m: m.set_submodule("", T.nn.Module())),
    ("set_submodule_strict", lambda T, m: m.set_submodule("zz", T.nn.Module(), strict=True)),
    ("set_submodule_not_module", lambda T, m: m.set_submodule("weight", T.nn.Module())),
    ("train_not_bool", lambda T, m: m.train(1)),
    ("to_int_dtype", lambda T, m: m.to(T.int64)),
    ("init_kwargs", lambda T, m: T.nn.Module(foo=1)),
    ("init_args", lambda T, m: T.nn.Module(1)),
    ("forward_missing", lambda T, m: T.nn.Module()(1)),
    ("load_not_mapping", lambda T, m: m.load_state_dict([1])),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    errors = []
    for T in (torch, torchish):
        m = make_classes(T)[0](2, 2)
        with pytest.raises(Exception) as info:
            fn(T, m)
        errors.append(info.value)
    te, xe = errors
    assert type(xe) is type(te), f"{type(xe).__name__} != torch's {type(te).__name__}"
    assert str(xe).replace("torchish.nn.module.", "torch.nn.modules.module.") == str(te)


def test_get_submodule_parameter_buffer_and_set_submodule():
    def run(T):
        Lin, Norm, Block, Net = make_classes(T)
        m = Net()
        out = [type(m.get_submodule("blocks.1.norm")).__name__, m.get_submodule("") is m,
               m.get_parameter("blocks.0.fc.weight") is m.blocks[0].fc.weight,
               m.get_buffer("blocks.1.norm.running_mean") is m.blocks[1].norm.running_mean]
        m.set_submodule("blocks.0.fc", Lin(4, 4, seed=7))
        m.set_submodule("newmod", Lin(1, 1))
        out.append(names(m.named_modules()))
        return out
    t, x = both(run)
    assert x == t


def test_dir_lists_registered_names():
    for T in (torch, torchish):
        m = make_classes(T)[3]()
        d = dir(m)
        for n in ("embed", "blocks", "tied", "step", "forward", "training"):
            assert n in d
        assert d == sorted(d)
        assert "0" not in dir(m.blocks)


# ----------------------------------------------------------------------------------------------------------------
# load_state_dict


def _load_case(T, mutate, **kw):
    Net = make_classes(T)[3]
    m = Net()
    sd = m.state_dict()
    mutate(T, sd)
    try:
        res = m.load_state_dict(sd, **kw)
    except RuntimeError as e:
        return ("error", str(e))
    return ("ok", list(res.missing_keys), list(res.unexpected_keys), repr(res))


LOAD_CASES = [
    ("exact", lambda T, sd: None, {}),
    ("missing", lambda T, sd: (sd.pop("embed.bias"), sd.pop("blocks.1.norm.num_batches")), {}),
    ("unexpected", lambda T, sd: sd.update({"blocks.0.extra": T.ones(1), "nope.x": T.ones(1), "zz": T.ones(1)}), {}),
    ("both", lambda T, sd: (sd.pop("step"), sd.update({"stepp": T.ones(1)})), {}),
    ("both_nonstrict", lambda T, sd: (sd.pop("step"), sd.update({"stepp": T.ones(1)})), {"strict": False}),
    ("shape", lambda T, sd: sd.update({"embed.weight": T.ones(3, 3), "heads.a.weight": T.ones(1)}), {}),
    ("shape_nonstrict", lambda T, sd: sd.update({"embed.bias": T.ones(5)}), {"strict": False}),
    ("shape_and_missing", lambda T, sd: (sd.update({"embed.bias": T.ones(5)}), sd.pop("step")), {}),
    ("not_tensor", lambda T, sd: sd.update({"embed.bias": [1.0, 2.0]}), {}),
]


@pytest.mark.parametrize("name,mutate,kw", LOAD_CASES, ids=[c[0] for c in LOAD_CASES])
def test_load_state_dict_results_and_messages(name, mutate, kw):
    t = _load_case(torch, mutate, **kw)
    x = _load_case(torchish, mutate, **kw)
    if name == "not_tensor":  # torch prints its own type name for the offending value; compare the shape of it
        assert x[0] == t[0] == "error"
        assert x[1].split("received")[0] == t[1].split("received")[0]
        return
    assert x == t


def test_load_state_dict_copies_values_in_place_and_assign():
    def run(T, assign):
        Lin = make_classes(T)[0]
        m = Lin(3, 2, seed=0)
        w = m.weight
        src = Lin(3, 2, seed=5).state_dict()
        m.load_state_dict(src, assign=assign)
        return (m.weight is w, type(m.weight).__name__, m.weight.requires_grad, to_numpy(m.weight),
                to_numpy(src["weight"]), m.weight is src["weight"])
    for assign in (False, True):
        t, x = run(torch, assign), run(torchish, assign)
        assert x[:3] == t[:3]
        assert x[5] == t[5]
        np.testing.assert_array_equal(x[3], x[4])
        np.testing.assert_array_equal(x[3], t[3])


def test_load_state_dict_scalar_from_one_element_vector():
    for T in (torch, torchish):
        m = T.nn.Module()
        m.register_buffer("s", T.tensor(0.0))
        m.load_state_dict({"s": T.tensor([4.0])})
        assert m.s.shape == () and float(m.s) == 4.0


def test_state_dict_and_load_hooks_sequence():
    def run(T):
        Lin = make_classes(T)[0]
        outer = T.nn.Sequential(Lin(2, 2), Lin(2, 1))
        log = []
        outer.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("sd_pre", prefix, keep)))
        outer[1].register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("sd_pre1", prefix)))

        def post(mod, sd, prefix, meta):
            log.append(("sd_post", prefix, sorted(sd)))
            sd["added"] = T.ones(1)
        outer[0].register_state_dict_post_hook(post)
        sd = outer.state_dict()
        log.append(sorted(sd))
        del sd["added"]

        def pre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            log.append(("load_pre", type(mod).__name__, prefix, sorted(sd), strict))

        def lpost(mod, keys):
            log.append(("load_post", type(mod).__name__, list(keys.missing_keys), list(keys.unexpected_keys)))
        outer.register_load_state_dict_pre_hook(pre)
        outer[0].register_load_state_dict_pre_hook(pre)
        outer.register_load_state_dict_post_hook(lpost)
        h = outer[1].register_load_state_dict_post_hook(lpost)
        sd.pop("1.bias")
        outer.load_state_dict(sd, strict=False)
        h.remove()
        outer.load_state_dict(sd, strict=False)
        return log
    t, x = both(run)
    assert x == t


def test_extra_state_round_trip():
    def run(T):
        class WithExtra(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = T.nn.Parameter(T.ones(1))
                self.note = {"k": 1}

            def get_extra_state(self):
                return self.note

            def set_extra_state(self, state):
                self.note = dict(state, loaded=True)
        outer = T.nn.Sequential(WithExtra())
        sd = outer.state_dict()
        keys = list(sd)
        outer.load_state_dict(sd)
        missing = outer.load_state_dict({"0.w": T.ones(1)}, strict=False)
        return keys, outer[0].note, list(missing.missing_keys)
    t, x = both(run)
    assert x == t


# ----------------------------------------------------------------------------------------------------------------
# modes and conversions


def test_train_eval_requires_grad_zero_grad():
    def run(T):
        m = make_classes(T)[3]()
        out = [m.training, m.eval() is m, [mm.training for mm in m.modules()]]
        m.train()
        out.append(all(mm.training for mm in m.modules()))
        m.blocks.eval()
        out.append([mm.training for mm in m.modules()])
        m.requires_grad_(False)
        out.append([p.requires_grad for p in m.parameters()])
        m.requires_grad_()
        for i, p in enumerate(m.parameters()):
            if i % 3:
                p.grad = T.ones_like(p)
        out.append([p.grad is None for p in m.parameters()])
        m.zero_grad(set_to_none=False)
        out.append([None if p.grad is None else float(p.grad.abs().sum()) for p in m.parameters()])
        m.zero_grad()
        out.append([p.grad is None for p in m.parameters()])
        return out
    t, x = both(run)
    assert x == t


def test_apply_visits_children_first():
    def run(T):
        m = make_classes(T)[3]()
        seen = []
        assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
        return seen
    t, x = both(run)
    assert x == t


@pytest.mark.parametrize("conv", ["double", "half", "bfloat16", "to_f64", "to_tensor", "type", "float_back"])
def test_conversions_keep_parameter_identity(conv):
    def run(T):
        m = make_classes(T)[2](2, seed=1)
        m.fc.weight.grad = T.ones(2, 2)
        before = {n: p for n, p in m.named_parameters()}
        buf_ids = {n: id(b) for n, b in m.named_buffers()}
        if conv == "double":
            r = m.double()
        elif conv == "half":
            r = m.half()
        elif conv == "bfloat16":
            r = m.bfloat16()
        elif conv == "to_f64":
            r = m.to(T.float64)
        elif conv == "to_tensor":
            r = m.to(T.ones(1, dtype=T.float64))
        elif conv == "type":
            r = m.type(T.float64)
        else:
            r = m.double().float()
        assert r is m
        same = all(p is before[n] for n, p in m.named_parameters())
        return (same, {n: str(p.dtype) for n, p in m.named_parameters()},
                {n: str(p.grad.dtype) for n, p in m.named_parameters() if p.grad is not None},
                {n: str(b.dtype) for n, b in m.named_buffers()},
                {n: id(b) == buf_ids[n] for n, b in m.named_buffers()},
                all(p.requires_grad and p.is_leaf for p in m.parameters()))
    t, x = both(run)
    assert x[0] and t[0]
    assert x[1:4] == t[1:4]
    assert x[5] == t[5]


def test_conversion_then_training_step_uses_same_parameters():
    m = make_classes(torchish)[0](2, 1)
    params = list(m.parameters())
    m.double()
    y = m(torchish.tensor(arr(1, 2), dtype=torchish.float64)).sum()
    y.backward()
    assert all(p.grad is not None and p.grad.dtype == torchish.float64 for p in params if p.grad is not None)
    assert params[0].grad is not None
    with torchish.no_grad():
        for p in params:
            if p.grad is not None:
                p.sub_(0.1 * p.grad)
    assert all(p is q for p, q in zip(params, m.parameters()))


def test_cpu_share_memory_to_device():
    for T in (torch, torchish):
        m = make_classes(T)[0](2, 2)
        w = m.weight
        assert m.cpu() is m and m.share_memory() is m and m.to("cpu") is m
        assert m.weight is w and m.weight.device.type == "cpu"
    m = make_classes(torchish)[0](2, 2)
    m.to_empty(device="cpu")
    assert m.weight.shape == (2, 2)


def test_deepcopy_and_getstate():
    def run(T):
        m = make_classes(T)[3]()
        h = m.register_forward_hook(lambda *a: None)
        c = copy.deepcopy(m)
        out = [names(c.named_parameters()) == names(m.named_parameters()),
               all(a is not b for a, b in zip(c.parameters(), m.parameters())),
               c.tied is c.embed.weight, c.shared is c.embed, len(c._forward_hooks)]
        with T.no_grad():
            c.embed.weight.add_(1.0)
        out.append(float((c.embed.weight - m.embed.weight).detach().sum()))
        h.remove()
        state = m.__getstate__()
        out.append(sorted(k for k in state if k.startswith("_") and "hook" not in k))
        s = copy.copy(m)
        out.append(s.embed is m.embed)
        return out
    t, x = both(run)
    assert x == t


# ----------------------------------------------------------------------------------------------------------------
# containers


def test_sequential_operations():
    def run(T):
        Lin = make_classes(T)[0]
        mods = [Lin(2, 2, seed=i) for i in range(4)]
        s = T.nn.Sequential(*mods[:3])
        out = [len(s), s[0] is mods[0], s[-1] is mods[2], type(s[1:]).__name__, names(s[1:].named_children())]
        s[1] = mods[3]
        out.append(s[1] is mods[3])
        del s[0]
        out.append(names(s.named_children()))
        s.append(mods[0])
        s.insert(0, mods[1])
        s.insert(-1, mods[2])
        out.append([mods.index(m) for m in s])
        out.append(mods.index(s.pop(1)))
        out.append(names(s.named_children()))
        s2 = s + T.nn.Sequential(mods[0])
        out.append(names(s2.named_children()))
        s3 = s * 2
        out.append(len(s3))
        s += T.nn.Sequential(mods[1])
        out.append(len(s))
        s.extend([mods[2]])
        out.append(len(s))
        out.append([mods.index(m) for m in s])
        del s[1:3]
        out.append(names(s.named_children()))
        x = T.tensor(arr(1, 2))
        out.append(to_numpy(T.nn.Sequential(mods[0], mods[1])(x)).tolist())
        with pytest.raises(IndexError):
            s[10]
        return out
    t, x = both(run)
    assert x[:-1] == t[:-1]
    np.testing.assert_allclose(x[-1], t[-1], rtol=1e-5)


def test_modulelist_moduledict():
    def run(T):
        Lin = make_classes(T)[0]
        mods = [Lin(1, 1, seed=i) for i in range(4)]
        ml = T.nn.ModuleList(mods[:2])
        ml.append(mods[2])
        ml.extend([mods[3]])
        ml.insert(1, mods[0])
        out = [len(ml), [mods.index(m) for m in ml], names(ml.named_children())]
        del ml[-1]
        ml += [mods[1]]
        out.append([mods.index(m) for m in ml])
        out.append([mods.index(m) for m in ml[1:3]])
        out.append(mods.index(ml.pop(0)))
        out.append(names((ml + T.nn.ModuleList([mods[2]])).named_children()))
        md = T.nn.ModuleDict({"x": mods[0]})
        md.update([("b", mods[1]), ("a", mods[2])])
        md["c"] = mods[3]
        out.append(list(md.keys()))
        out.append("a" in md)
        out.append(mods.index(md.pop("b")))
        out.append([(k, mods.index(v)) for k, v in md.items()])
        out.append(len(md))
        md.clear()
        out.append(len(md))
        return out
    t, x = both(run)
    assert x == t


def test_parameterlist_parameterdict():
    def run(T):
        pl = T.nn.ParameterList([T.ones(2), T.nn.Parameter(T.zeros(1))])
        pl.append(T.ones(3, 2))
        pl.extend([T.zeros(1)])
        out = [len(pl), [type(p).__name__ for p in pl], names(pl.named_parameters()), repr(pl)]
        pl[0] = T.full((2,), 5.0)
        out.append(float(pl[0].detach().sum()))
        out.append(len(pl[1:3]))
        pd = T.nn.ParameterDict({"b": T.ones(1), "a": T.zeros(2)})
        pd.update(OrderedDict([("z", T.ones(1)), ("c", T.ones(1))]))
        pd["m"] = T.nn.Parameter(T.ones(2, 2))
        out += [list(pd.keys()), names(pd.named_parameters()), repr(pd), "a" in pd, len(pd)]
        out.append(type(pd.pop("a")).__name__)
        out.append(pd.get("nope", 7))
        out.append(list(pd.setdefault("s", T.ones(1)).shape))
        k, _ = pd.popitem()
        out.append(k)
        out.append(list((pd | T.nn.ParameterDict({"q": T.ones(1)})).keys()))
        pd.clear()
        out.append(len(pd))
        return out
    t, x = both(run)
    assert x == t


def test_container_errors_match_torch():
    cases = [
        lambda T: T.nn.Sequential() + 3,
        lambda T: T.nn.Sequential() * 0,
        lambda T: T.nn.Sequential() * 1.5,
        lambda T: T.nn.ModuleList().extend(3),
        lambda T: T.nn.ModuleList()[0],
        lambda T: T.nn.ModuleDict().update(3),
        lambda T: T.nn.ModuleDict().update([("a",)]),
        lambda T: T.nn.ParameterList()(1),
        lambda T: T.nn.ParameterDict()(1),
        lambda T: T.nn.ParameterDict()[1],
        lambda T: T.nn.ParameterList().extend(T.ones(2)),
    ]
    for fn in cases:
        errs = []
        for T in (torch, torchish):
            with pytest.raises(Exception) as info:
                fn(T)
            errs.append(info.value)
        msg = str(errs[1]).replace("torchish.nn.container", "torch.nn.modules.container")
        assert type(errs[1]) is type(errs[0]) and msg == str(errs[0]), str(errs[0])


def test_no_warnings_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = make_classes(torchish)[3]()
        m.state_dict()
        m.load_state_dict(m.state_dict())
