"""Lazy modules (``LazyLinear``, ``LazyConv*``, ``LazyBatchNorm*``, ``LazyInstanceNorm*``) and uninitialized
parameters/buffers against PyTorch: repr, state dicts, the switch to the regular class at the first forward, the
materialised shapes, then (with PyTorch's values copied in) outputs and gradients; errors as PyTorch's."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from layer_oracle import copy_state
from oracle import arr, assert_same, check_raises, needs_torch, run_both, same, torch, torchish

pytestmark = needs_torch

_LAZY = [
    (lambda nn: nn.LazyLinear(4), (2, 3)),
    (lambda nn: nn.LazyLinear(3, bias=False), (5,)),
    (lambda nn: nn.LazyConv1d(4, 3, padding=1), (2, 3, 6)),
    (lambda nn: nn.LazyConv2d(4, 3, stride=2, groups=2, bias=False), (1, 2, 6, 5)),
    (lambda nn: nn.LazyConv2d(2, 2), (3, 5, 5)),                       # unbatched
    (lambda nn: nn.LazyConv3d(2, 2, padding_mode="circular", padding=1), (1, 2, 3, 4, 3)),
    (lambda nn: nn.LazyConvTranspose1d(3, 3, stride=2, output_padding=1), (2, 2, 4)),
    (lambda nn: nn.LazyConvTranspose2d(4, 3, groups=2), (1, 4, 3, 3)),
    (lambda nn: nn.LazyConvTranspose3d(2, 2), (1, 3, 2, 3, 2)),
    (lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    (lambda nn: nn.LazyBatchNorm2d(momentum=None, bias=False), (3, 2, 3, 3)),
    (lambda nn: nn.LazyBatchNorm3d(affine=False), (2, 2, 2, 3, 2)),
    (lambda nn: nn.LazyBatchNorm2d(affine=False, track_running_stats=False), (2, 3, 2, 2)),
    (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 5)),
    (lambda nn: nn.LazyInstanceNorm2d(affine=False, track_running_stats=False), (2, 3, 4, 4)),
    (lambda nn: nn.LazyInstanceNorm3d(eps=1e-3), (1, 2, 3, 3, 3)),
]


def _describe(m):
    """What a module shows before/after initialization: class, repr, entries (uninitialized ones by repr)."""
    lazy = torchish.nn.parameter.is_lazy if isinstance(m, torchish.nn.Module) else torch.nn.parameter.is_lazy
    return (type(m).__name__, repr(m), m.has_uninitialized_params() if hasattr(m, "has_uninitialized_params") else
            None, [(k, repr(v) if lazy(v) else tuple(v.shape)) for k, v in m.state_dict().items()],
            [(k, type(v).__name__) for k, v in m.named_parameters()])


@pytest.mark.filterwarnings("ignore:input.s size at dim")   # num_features stays 0 without affine or stats
@pytest.mark.parametrize("make,shape", _LAZY)
def test_first_forward_materialises(make, shape):
    tm, xm = make(torch.nn), make(torchish.nn)
    assert _describe(xm) == _describe(tm)
    x = arr(*shape, seed=1)
    with torch.no_grad():
        tm(torch.tensor(x))
    with torchish.no_grad():
        xm(torchish.tensor(x))
    assert _describe(xm) == _describe(tm)
    assert not hasattr(xm, "_initialize_hook") and not xm._forward_pre_hooks and not xm._load_state_dict_pre_hooks
    copy_state(tm, xm)
    tin, xin = torch.tensor(x, requires_grad=True), torchish.tensor(x, requires_grad=True)
    tout, xout = tm(tin), xm(xin)
    assert_same(tout, xout)
    cot = np.random.default_rng(2).uniform(-1, 1, tuple(tout.shape)).astype(np.float32)
    tout.backward(torch.tensor(cot))
    xout.backward(torchish.tensor(cot))
    assert_same(tin.grad, xin.grad)
    xp = dict(xm.named_parameters())
    for name, p in tm.named_parameters():
        assert_same(p.grad, xp[name].grad, f"{name}.grad")
    for (name, b), (_, c) in zip(tm.named_buffers(), xm.named_buffers()):
        assert_same(b, c, name)


def test_load_state_dict_initializes():
    """A lazy module loading a regular state dict materialises its entries; it stays lazy (``in_features=0``) until
    the forward, which takes ``in_features`` from the weight (and checks the input against it)."""
    src = arr(4, 3, seed=3), arr(4, seed=4)

    def run(lib):
        m = lib.nn.LazyLinear(4)
        keys = m.load_state_dict({"weight": lib.tensor(src[0]), "bias": lib.tensor(src[1])})
        before = (type(m).__name__, repr(m), m.has_uninitialized_params(), type(m.weight).__name__, str(keys))
        out = m(lib.tensor(arr(2, 3, seed=5)))
        return before, (type(m).__name__, repr(m)), out

    same(run)
    check_raises(lambda lib: _loaded(lib, src)(lib.ones(2, 5)))      # AssertionError: in_features mismatch


def _loaded(lib, src):
    m = lib.nn.LazyLinear(4)
    m.load_state_dict({"weight": lib.tensor(src[0]), "bias": lib.tensor(src[1])})
    return m


def test_load_state_dict_cases():
    def run(lib):
        out = [str(lib.nn.LazyLinear(4).load_state_dict(lib.nn.LazyLinear(4).state_dict()))]   # lazy into lazy
        m = lib.nn.LazyBatchNorm1d()
        m.load_state_dict(lib.nn.BatchNorm1d(3).state_dict())
        out.append([(k, tuple(v.shape), type(v).__name__) for k, v in m.state_dict(keep_vars=True).items()])
        m = lib.nn.LazyLinear(4)
        keys = m.load_state_dict({"weight": lib.ones(4, 3)}, strict=False)
        out.append((str(keys), m.has_uninitialized_params(), type(m.weight).__name__, type(m.bias).__name__))
        m = lib.nn.LazyLinear(4)
        m.load_state_dict({"weight": lib.ones(4, 3), "bias": lib.ones(4)}, assign=True)
        out.append((type(m.weight).__name__, m.weight.requires_grad))
        return out

    same(run)
    # an uninitialized entry cannot be loaded into an initialized module (reading its shape raises)
    check_raises(lambda lib: lib.nn.Linear(3, 4).load_state_dict(lib.nn.LazyLinear(4).state_dict()))
    # the half-loaded module: its forward cannot materialise an initialized weight
    check_raises(lambda lib: _half_loaded(lib)(lib.ones(1, 3)))


def _half_loaded(lib):
    m = lib.nn.LazyLinear(4)
    m.load_state_dict({"weight": lib.ones(4, 3)}, strict=False)
    return m


_PARAM_USES = [
    lambda lib, p: p.shape,
    lambda lib, p: p.numel(),
    lambda lib, p: p.dim(),
    lambda lib, p: p + 1,
    lambda lib, p: lib.add(p, 1),
    lambda lib, p: p.sum(),
    lambda lib, p: p.detach(),
    lambda lib, p: p.clone(),
    lambda lib, p: p[0],
    lambda lib, p: p.tolist(),
    lambda lib, p: p.requires_grad_(False),
    lambda lib, p: p.share_memory_(),
    lambda lib, p: len(p),
    lambda lib, p: bool(p),
    lambda lib, p: p.fill_(1),
    lambda lib, p: p.copy_(lib.ones(3)),
    lambda lib, p: p == p,
]


@pytest.mark.parametrize("use", _PARAM_USES)
@pytest.mark.parametrize("kind", ["UninitializedParameter", "UninitializedBuffer"])
def test_uninitialized_uses_raise(kind, use):
    check_raises(lambda lib: use(lib, getattr(lib.nn, kind)()))


def test_uninitialized_allowed():
    def run(lib):
        P, B = lib.nn.UninitializedParameter, lib.nn.UninitializedBuffer
        p, b = P(), B()
        out = [repr(p), str(p), repr(b), p.size(), p.dtype, str(p.device), p.ndim, p.requires_grad, p.is_leaf,
               p.grad, p.is_floating_point(), p.is_complex(), p.get_device(), p.cpu() is p, p.to(lib.float32) is p,
               isinstance(p, lib.nn.Parameter), isinstance(p, lib.Tensor), lib.nn.parameter.is_lazy(p),
               lib.nn.parameter.is_lazy(lib.ones(1)), b.requires_grad, b.persistent, isinstance(b, lib.nn.Buffer)]
        d = p.double()
        out += [type(d).__name__, d.dtype, d.requires_grad, type(b.double()).__name__, b.double().dtype]
        out += [P(requires_grad=False).requires_grad, P(dtype=lib.float64).dtype, repr(copy.deepcopy(p)),
                copy.deepcopy(P(dtype=lib.float64)).dtype, repr(pickle.loads(pickle.dumps(P())))]
        p.materialize((2, 3))
        out += [type(p).__name__, p.shape, p.dtype, p.requires_grad]
        q = P(dtype=lib.float64)
        q.materialize([4], dtype=lib.float32)
        out += [type(q).__name__, q.shape, q.dtype]
        b.materialize((3,))
        out += [type(b).__name__, b.shape, b.requires_grad, isinstance(b, lib.nn.Buffer)]
        return out

    same(run)


def test_module_conversions_before_forward():
    """``to``/``double`` convert the uninitialized entries (the parameters keep their identity), so the materialised
    module has that dtype; optimizers take the uninitialized parameters and step them once materialised."""
    x = arr(4, 3, seed=6).astype(np.float64)

    def run(lib):
        m = lib.nn.Sequential(lib.nn.LazyLinear(5), lib.nn.LazyBatchNorm1d(), lib.nn.LazyLinear(2))
        ids = [id(p) for p in m.parameters()]
        m.double()
        kinds = [(k, type(v).__name__, v.dtype) for k, v in m.state_dict(keep_vars=True).items()]
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        with lib.no_grad():
            m(lib.tensor(x))
        assert [id(p) for p in m.parameters()] == ids
        return kinds, repr(m), [(k, v.dtype, tuple(v.shape)) for k, v in m.state_dict().items()], repr(opt)

    same(run)


def test_training_after_lazy_init():
    """An optimizer built on the uninitialized parameters trains the materialised module as PyTorch's does."""
    x, y = arr(6, 3, seed=7), arr(6, 2, seed=8)

    def run(lib):
        m = lib.nn.Sequential(lib.nn.LazyLinear(4), lib.nn.Tanh(), lib.nn.LazyLinear(2))
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        with lib.no_grad():
            m(lib.tensor(x))
        return m, opt

    (tm, topt), (xm, xopt) = run(torch), run(torchish)
    copy_state(tm, xm)
    for _ in range(3):
        for lib, m, opt in ((torch, tm, topt), (torchish, xm, xopt)):
            opt.zero_grad()
            lib.nn.functional.mse_loss(m(lib.tensor(x)), lib.tensor(y)).backward()
            opt.step()
    for (name, p), q in zip(tm.named_parameters(), xm.parameters()):
        assert_same(p.detach(), q.detach(), name)


def test_module_errors():
    check_raises(lambda lib: lib.nn.LazyLinear(4).requires_grad_(False))               # ValueError
    check_raises(lambda lib: lib.nn.LazyLinear(4).share_memory())                      # RuntimeError
    check_raises(lambda lib: lib.nn.LazyLinear(4)(lib.tensor(1.0)))                    # IndexError
    check_raises(lambda lib: lib.nn.LazyConv2d(4, 3)(lib.ones(5, 5)))
    check_raises(lambda lib: lib.nn.LazyConvTranspose1d(4, 3)(lib.ones(5)))
    check_raises(lambda lib: lib.nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 5, 5)))  # in_channels % groups
    check_raises(lambda lib: lib.nn.LazyConvTranspose1d(4, 3, padding_mode="reflect"))
    check_raises(lambda lib: lib.nn.LazyBatchNorm2d()(lib.ones(2, 3)))
    check_raises(lambda lib: lib.nn.LazyLinear(2)._replicate_for_data_parallel())
    check_raises(lambda lib: lib.nn.modules.lazy.LazyModuleMixin.initialize_parameters(lib.nn.LazyLinear(2)))
    same(lambda lib: _messages(lib))


def _messages(lib):
    out = []
    for fn in (lambda: lib.nn.LazyConv2d(4, 3)(lib.ones(5, 5)), lambda: lib.nn.LazyLinear(4).share_memory(),
               lambda: lib.nn.LazyBatchNorm2d()(lib.ones(2, 3)), lambda: lib.nn.UninitializedParameter().shape,
               lambda: _custom(lib, False)(lib.ones(2)), lambda: _custom(lib, True)(lib.ones(2))):
        try:
            fn()
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def _custom(lib, with_init):
    """A user lazy module whose ``initialize_parameters`` is missing, or leaves a parameter uninitialized."""
    class M(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.UninitializedParameter()

        def forward(self, x):
            return x

    if with_init:
        M.initialize_parameters = lambda self, x: None
    return M()


def test_uninitialized_message():
    """The use error keeps PyTorch's words around the name of the function (which differs between libraries)."""
    err = check_raises(lambda lib: lib.nn.UninitializedParameter() + 1)
    with pytest.raises(ValueError) as got:
        torchish.nn.UninitializedParameter() + 1
    head, tail = str(err).split(" in ", 1)[0], str(err).split(". ", 1)[1]
    assert str(got.value).startswith(head + " in ") and str(got.value).endswith(tail)


def test_deepcopy_lazy_module():
    def run(lib):
        m = copy.deepcopy(lib.nn.LazyLinear(3))
        before = (repr(m), type(m.weight).__name__)
        m(lib.ones(2, 4))
        return before, repr(m), tuple(m.weight.shape)

    same(run)


def test_exports():
    names = ["UninitializedParameter", "UninitializedBuffer", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
             "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
             "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
    for name in names:
        assert hasattr(torch.nn, name)
        assert getattr(torchish.nn, name).__name__ == name
        if name.startswith("Lazy"):
            assert getattr(torchish.nn.modules, name) is getattr(torchish.nn, name)
    for name in ("UninitializedParameter", "UninitializedBuffer", "UninitializedTensorMixin", "is_lazy"):
        assert hasattr(torch.nn.parameter, name) and hasattr(torchish.nn.parameter, name)
    assert not hasattr(torch.nn, "LazyModuleMixin") and not hasattr(torchish.nn, "LazyModuleMixin")
    assert torchish.nn.modules.lazy.LazyModuleMixin.__name__ == "LazyModuleMixin"
