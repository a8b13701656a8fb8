"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm) and the legacy weight_norm /
spectral_norm hooks, against PyTorch: values, gradients, training steps, state_dict keys, removal and errors.

Spectral norm draws its initial ``u``/``v`` from the RNG, whose numbers differ between the libraries, so the tests
copy PyTorch's vectors into torchish before comparing."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from module_oracle import compare
from oracle import arr, assert_same, check_raises, needs_torch, to_numpy, torch, torchish

P = "parametrizations"


def _linear(lib):
    return lib.nn.Linear(4, 3)


def _conv(lib):
    return lib.nn.Conv2d(2, 3, 3)


def _convt(lib):
    return lib.nn.ConvTranspose2d(2, 3, 3)


def _input(make):
    return arr(2, 4, seed=1) if make is _linear else arr(1, 2, 5, 5, seed=1)


def _pair(make, wrap):
    """The same module in both libraries, wrapped by ``wrap(lib, module)``, with torch's values copied over
    (parameters and buffers, spectral norm's u/v included)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tm, xm = wrap(torch, make(torch)), wrap(torchish, make(torchish))
    tsd, xsd = tm.state_dict(), xm.state_dict()
    assert list(xsd) == list(tsd)
    assert [n for n, _ in xm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in xm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    with torchish.no_grad():
        for name, value in tsd.items():
            xsd[name].copy_(torchish.tensor(value.detach().numpy()))
    return tm, xm


WRAPS = {
    "weight_norm": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m),
    "weight_norm_dim1": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=1),
    "weight_norm_dimNone": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=None),
    "spectral_norm": lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m),
    "spectral_norm_3it": lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=3),
    "legacy_weight_norm": lambda lib, m: lib.nn.utils.weight_norm(m),
    "legacy_weight_norm_dim1": lambda lib, m: lib.nn.utils.weight_norm(m, dim=1),
    "legacy_spectral_norm": lambda lib, m: lib.nn.utils.spectral_norm(m),
    "legacy_spectral_norm_2it": lambda lib, m: lib.nn.utils.spectral_norm(m, n_power_iterations=2),
}


@needs_torch
@pytest.mark.parametrize("make", [_linear, _conv, _convt], ids=["linear", "conv2d", "convtranspose2d"])
@pytest.mark.parametrize("wrap", list(WRAPS), ids=list(WRAPS))
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_forward_backward_and_buffers(make, wrap, mode):
    tm, xm = _pair(make, WRAPS[wrap])
    if mode == "eval":
        tm.eval(), xm.eval()
    compare(tm, xm, [_input(make)], lambda lib, m, x: m(x))
    # a second call: the power iteration has advanced u/v again in training mode
    compare(tm, xm, [_input(make)], lambda lib, m, x: m(x) * 2)
    assert_same(dict(tm.state_dict()), dict(xm.state_dict()))
    assert type(xm).__name__ == type(tm).__name__


@needs_torch
@pytest.mark.parametrize("wrap", ["weight_norm", "spectral_norm", "legacy_weight_norm", "legacy_spectral_norm"])
def test_sgd_training_steps(wrap):
    tm, xm = _pair(_conv, WRAPS[wrap])
    x, y = arr(2, 2, 5, 5, seed=3), arr(2, 3, 3, 3, seed=4)
    results = []
    for lib, m in ((torch, tm), (torchish, xm)):
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = ((m(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss)
        results.append((losses, dict(m.state_dict()), m.weight))
    assert_same(results[0], results[1])


@needs_torch
@pytest.mark.parametrize("wrap", list(WRAPS))
def test_state_dict_load_round_trip(wrap):
    tm, _ = _pair(_linear, WRAPS[wrap])
    tm(torch.ones(1, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        xm = WRAPS[wrap](torchish, _linear(torchish))
    sd = {k: torchish.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    result = xm.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys
    tm.eval(), xm.eval()
    assert_same(tm(torch.ones(2, 4)), xm(torchish.ones(2, 4)))
    if wrap == "legacy_spectral_norm":
        assert xm.state_dict()._metadata[""] == tm.state_dict()._metadata[""]


@needs_torch
def test_legacy_spectral_norm_loads_version0_state_dict():
    """A state_dict from before ``weight_v`` existed (``weight`` saved instead, no version metadata): ``v`` is
    solved for so that sigma is kept. The solution of the singular system may differ from torch's; the layer's
    output may not."""
    from collections import OrderedDict
    tm = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3))
    tm(torch.ones(1, 4))
    old = OrderedDict((k, v.numpy()) for k, v in tm.state_dict().items() if k != "weight_v")
    old["weight"] = tm.weight.detach().numpy()
    out = []
    for lib in (torch, torchish):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(4, 3))
        sd = OrderedDict((k, lib.tensor(v)) for k, v in old.items())
        sd._metadata = OrderedDict({"": {"version": 1}})
        result = m.load_state_dict(sd)
        m.eval()
        out.append((list(m.state_dict()), m(lib.ones(2, 4)), result.missing_keys, result.unexpected_keys))
    assert_same(out[0], out[1], atol=1e-4)


@needs_torch
def test_weight_norm_loads_legacy_state_dict():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        legacy = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3))
    sd = {k: torchish.tensor(v.detach().numpy()) for k, v in legacy.state_dict().items()}
    xm = torchish.nn.utils.parametrizations.weight_norm(torchish.nn.Linear(4, 3))
    xm.load_state_dict(sd)
    assert_same(legacy(torch.ones(2, 4)), xm(torchish.ones(2, 4)))


@needs_torch
@pytest.mark.parametrize("wrap", ["weight_norm", "spectral_norm"])
@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(wrap, leave):
    tm, xm = _pair(_linear, WRAPS[wrap])
    for lib, m in ((torch, tm), (torchish, xm)):
        m(lib.ones(1, 4))
        if wrap == "weight_norm" and not leave:
            with pytest.raises(ValueError):
                lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
            return
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
    assert type(xm) is torchish.nn.Linear
    assert isinstance(xm.weight, torchish.nn.Parameter)
    assert [n for n, _ in xm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert_same(dict(tm.state_dict()), dict(xm.state_dict()))
    assert not torchish.nn.utils.parametrize.is_parametrized(xm)


@needs_torch
@pytest.mark.parametrize("kind", ["weight", "spectral"])
def test_remove_legacy_hooks(kind):
    tm, xm = _pair(_linear, WRAPS[f"legacy_{kind}_norm"])
    for lib, m in ((torch, tm), (torchish, xm)):
        m(lib.ones(1, 4))
        getattr(lib.nn.utils, f"remove_{kind}_norm")(m)
    assert isinstance(xm.weight, torchish.nn.Parameter)
    assert not xm._forward_pre_hooks and not xm._state_dict_hooks
    assert [n for n, _ in xm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert_same(dict(tm.state_dict()), dict(xm.state_dict()))


def test_legacy_weight_norm_warns():
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        torchish.nn.utils.weight_norm(torchish.nn.Linear(2, 2))


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


@needs_torch
def test_custom_parametrization_symmetric():
    w = arr(3, 3, seed=7)
    new = arr(3, 3, seed=8)
    out = []
    for lib in (torch, torchish):
        m = lib.nn.Linear(3, 3)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
            m.bias.zero_()
        original = m.weight
        pz = lib.nn.utils.parametrize
        pz.register_parametrization(m, "weight", _symmetric(lib))
        assert m.parametrizations.weight.original is original
        assert pz.is_parametrized(m) and pz.is_parametrized(m, "weight") and not pz.is_parametrized(m, "bias")
        assert pz.type_before_parametrizations(m) is lib.nn.Linear
        first = m.weight
        with pz.cached():
            cached_same = m.weight is m.weight
        m.weight = lib.tensor(new + new.T)  # right_inverse stores the upper triangle
        sd = [k for k in m.state_dict()]
        x = lib.tensor(arr(2, 3, seed=9), requires_grad=True)
        y = m(x)
        y.sum().backward()
        out.append((first, m.weight, m.parametrizations.weight.original, y, x.grad,
                    m.parametrizations.weight.original.grad, sd, cached_same, type(m).__name__))
    assert_same(out[0], out[1])


@needs_torch
def test_chained_parametrizations():
    out = []
    for lib in (torch, torchish):
        m = lib.nn.Linear(3, 3)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(arr(3, 3, seed=2)))
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib))
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib))
        names = [n for n, _ in m.named_parameters()]
        out.append((m.weight, names, len(m.parametrizations.weight)))
    assert_same(out[0], out[1])


@needs_torch
def test_errors():
    def register_missing(lib):
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "nope", _symmetric(lib))

    def remove_unparametrized(lib):
        lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight")

    def shape_changing(lib):
        class Half(lib.nn.Module):
            def forward(self, X):
                return X[:1]
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight", Half())

    def assign_without_right_inverse(lib):
        class Double(lib.nn.Module):
            def forward(self, X):
                return X * 2
        m = lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight", Double())
        m.weight = lib.ones(2, 2)

    def remove_weight_norm_missing(lib):
        lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2))

    def remove_spectral_norm_missing(lib):
        lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2))

    def legacy_weight_norm_twice(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2)))

    def legacy_spectral_norm_twice(lib):
        lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2)))

    def spectral_zero_iterations(lib):
        lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)

    def legacy_spectral_zero_iterations(lib):
        lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)

    def spectral_bad_dim(lib):
        lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=2)

    def spectral_missing(lib):
        lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), name="nope")

    def pickle_parametrized(lib):
        import pickle
        pickle.dumps(lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(2, 2)))

    for fn in (register_missing, remove_unparametrized, shape_changing, assign_without_right_inverse,
               remove_weight_norm_missing, remove_spectral_norm_missing, legacy_weight_norm_twice,
               legacy_spectral_norm_twice, spectral_zero_iterations, legacy_spectral_zero_iterations,
               spectral_bad_dim, spectral_missing, pickle_parametrized):
        check_raises(fn)


@needs_torch
def test_transfer_parametrizations_and_params():
    out = []
    for lib in (torch, torchish):
        src = lib.nn.Linear(3, 3)
        with lib.no_grad():
            src.weight.copy_(lib.tensor(arr(3, 3, seed=6)))
            src.bias.zero_()
        lib.nn.utils.parametrizations.weight_norm(src)
        dst = lib.nn.utils.parametrize.transfer_parametrizations_and_params(src, lib.nn.Linear(3, 3))
        out.append((dst.weight, [n for n, _ in dst.named_parameters()][1:], type(dst).__name__))
    assert_same(out[0], out[1])


def test_deepcopy_parametrized():
    import copy
    m = torchish.nn.utils.parametrizations.spectral_norm(torchish.nn.Linear(3, 2))
    c = copy.deepcopy(m)
    assert type(c) is type(m)
    assert c.parametrizations.weight.original is not m.parametrizations.weight.original
    m.eval(), c.eval()
    np.testing.assert_allclose(to_numpy(c(torchish.ones(1, 3))), to_numpy(m(torchish.ones(1, 3))), rtol=1e-6)


COMPILE_WRAPS = {
    "spectral_norm": lambda m: torchish.nn.utils.parametrizations.spectral_norm(m),
    "legacy_spectral_norm": lambda m: torchish.nn.utils.spectral_norm(m, n_power_iterations=2),
    "weight_norm": lambda m: torchish.nn.utils.parametrizations.weight_norm(m),
    "orthogonal": lambda m: torchish.nn.utils.parametrizations.orthogonal(m),
}


@pytest.mark.parametrize("wrap", list(COMPILE_WRAPS))
def test_trains_under_compile(wrap):
    """Eager and compiled steps agree, the power-iteration buffer updates included."""
    x, y = torchish.tensor(arr(4, 3, seed=1)), torchish.tensor(arr(4, 2, seed=2))
    results = []
    for compiled in (False, True):
        torchish.manual_seed(0)
        layer = COMPILE_WRAPS[wrap](torchish.nn.Linear(3, 2))
        model = torchish.nn.Sequential(layer, torchish.nn.Tanh())
        opt = torchish.optim.SGD(model.parameters(), lr=0.5)

        def step():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        fn = torchish.compile(step) if compiled else step
        losses = [to_numpy(fn()) for _ in range(4)]
        if compiled:
            assert fn.stats["compiled_calls"] >= 2, fn.stats
        results.append((losses, {k: to_numpy(v) for k, v in model.state_dict().items()}))
    (eager_losses, eager_sd), (comp_losses, comp_sd) = results
    np.testing.assert_allclose(comp_losses, eager_losses, rtol=1e-5, atol=1e-6)
    assert list(comp_sd) == list(eager_sd)
    for k in eager_sd:
        np.testing.assert_allclose(comp_sd[k], eager_sd[k], rtol=1e-5, atol=1e-6, err_msg=k)


ORTHO_CASES = [((3, 3), None, True), ((3, 3), "cayley", True), ((3, 3), "householder", True),
               ((4, 3), "householder", True), ((3, 4), "matrix_exp", True), ((4, 3), "householder", False),
               ((3, 4), "householder", False), ((4, 3), "cayley", False), ((2, 3, 3), None, True)]


def _matrix_module(lib, shape):
    m = lib.nn.Module()
    m.weight = lib.nn.Parameter(lib.tensor(arr(*shape, seed=3)))
    return m


@needs_torch
@pytest.mark.parametrize("shape,orth_map,triv", ORTHO_CASES)
def test_orthogonal(shape, orth_map, triv):
    """Square weights and ``use_trivialization=False`` are deterministic: the registered state must match torch's
    as is; tall/wide trivialized ones complete ``base`` with random columns, so torch's state is copied."""
    deterministic = shape[-1] == shape[-2] or not triv
    mods = [lib.nn.utils.parametrizations.orthogonal(_matrix_module(lib, shape), orthogonal_map=orth_map,
                                                      use_trivialization=triv) for lib in (torch, torchish)]
    tm, xm = mods
    if deterministic:
        assert_same(dict(tm.state_dict()), dict(xm.state_dict()), atol=1e-5)
    with torchish.no_grad():
        for key, value in tm.state_dict().items():
            xm.state_dict()[key].copy_(torchish.tensor(value.numpy()))
    x = arr(2, shape[-1], seed=4)
    out = []
    for lib, m in ((torch, tm), (torchish, xm)):
        y = lib.tensor(x) @ m.weight.mT
        y.sum().backward()
        out.append((m.weight, y, m.parametrizations.weight.original.grad))
    assert_same(out[0], out[1], atol=1e-5)
    w = to_numpy(xm.weight)
    small = min(shape[-2:])
    gram = w @ np.swapaxes(w, -1, -2) if shape[-2] <= shape[-1] else np.swapaxes(w, -1, -2) @ w
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(small), gram.shape), atol=1e-5)


@needs_torch
def test_orthogonal_assign_and_errors():
    q = np.linalg.qr(arr(3, 3, seed=5).astype(np.float64))[0].astype(np.float32)
    out = []
    for lib in (torch, torchish):
        m = lib.nn.utils.parametrizations.orthogonal(_matrix_module(lib, (3, 3)))
        m.weight = lib.tensor(q)
        out.append((m.weight, dict(m.state_dict())))
    assert_same(out[0], out[1], atol=1e-5)

    def vector(lib):
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.ones(3))
        lib.nn.utils.parametrizations.orthogonal(m)

    def bad_map(lib):
        lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr")

    def assign_no_trivialization(lib):
        m = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), use_trivialization=False)
        m.weight = lib.eye(3)

    for fn in (vector, bad_map, assign_no_trivialization):
        check_raises(fn)
