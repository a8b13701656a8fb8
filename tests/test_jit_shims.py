"""torchish.jit pass-throughs: scripted/traced modules and functions give PyTorch's outputs; decorators keep
functions callable; is_scripting/is_tracing are False; save/load raise."""
import warnings

import pytest

import torchish
from oracle import arr, check_raises, needs_torch, same, torch


class _Net:
    """Built for either library: a small MLP with an @ignore'd helper and an @export'd method."""

    @staticmethod
    def make(lib, exported=True):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = lib.nn.Linear(4, 3)
                self.fc2 = lib.nn.Linear(3, 2)

            @lib.jit.ignore
            def helper(self, x):
                return x * 2

            @lib.jit.export
            def double(self, x):
                return self.forward(x) * 2

            def forward(self, x):
                return self.fc2(lib.relu(self.fc1(x)))

        if not exported:  # PyTorch's tracer rejects a module with @export'd methods calling forward
            del Net.double
        net = Net()
        with lib.no_grad():
            for i, p in enumerate(net.parameters()):
                p.copy_(lib.tensor(arr(*p.shape, seed=30 + i)))
        return net


@needs_torch
def test_scripted_module_matches():
    def fn(lib):
        net = _Net.make(lib)
        scripted = lib.jit.script(net)
        x = lib.tensor(arr(5, 4, seed=1))
        return scripted(x), scripted.double(x), list(scripted.state_dict()), net(x)

    same(fn)


@needs_torch
def test_traced_module_and_function_match():
    def fn(lib):
        net = _Net.make(lib, exported=False)
        x = lib.tensor(arr(5, 4, seed=2))
        traced = lib.jit.trace(net, x)
        traced_fn = lib.jit.trace(lambda a, b: a * b + 1, (x, x))
        y = lib.tensor(arr(5, 4, seed=3))
        return traced(y), traced_fn(y, x)

    same(fn)


@needs_torch
def test_scripted_function_matches():
    def fn(lib):
        def f(x, y):
            return lib.tanh(x) + y.sum()

        scripted = lib.jit.script(f)
        return scripted(lib.tensor(arr(3, seed=4)), lib.tensor(arr(2, seed=5)))

    same(fn)


@needs_torch
def test_traced_module_trains():
    """Gradients flow through a traced module, as through the original."""
    def fn(lib):
        net = _Net.make(lib, exported=False)
        traced = lib.jit.trace(net, lib.tensor(arr(2, 4)))
        traced(lib.tensor(arr(5, 4, seed=6))).pow(2).sum().backward()
        return [p.grad for p in net.parameters()]

    same(fn)


pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.:DeprecationWarning")


def test_deprecation_warnings_as_torch():
    net = _Net.make(torchish)
    for name, call in (("script", lambda: torchish.jit.script(net)),
                       ("trace", lambda: torchish.jit.trace(net, torchish.ones(1, 4))),
                       ("trace_method", lambda: torchish.jit.trace_module(net, {"forward": torchish.ones(1, 4)}))):
        with pytest.warns(DeprecationWarning, match=f"`torch.jit.{name}` is deprecated"):
            call()


def test_script_and_trace_return_the_object():
    net = _Net.make(torchish)
    assert torchish.jit.script(net) is net
    assert torchish.jit.trace(net, torchish.ones(1, 4)) is net
    assert torchish.jit.trace_module(net, {"forward": torchish.ones(1, 4)}) is net
    # PyTorch's scripted module is a ScriptModule; ours is the plain module, which code then treats as plain
    assert not isinstance(net, torchish.jit.ScriptModule) and issubclass(torchish.jit.ScriptModule,
                                                                            torchish.nn.Module)


def test_decorators_leave_functions_callable():
    jit = torchish.jit

    @jit.ignore
    def a(x):
        return x + 1

    @jit.ignore(drop=True)
    def b(x):
        return x + 2

    @jit.unused
    def c(x):
        return x + 3

    @jit.export
    def d(x):
        return x + 4

    @jit.script_if_tracing
    def e(x):
        return x + 5

    assert [a(0), b(0), c(0), d(0), e(0)] == [1, 2, 3, 4, 5]
    assert _Net.make(torchish).helper(3) == 6


@needs_torch
def test_flags_and_annotate():
    def fn(lib):
        x = lib.jit.annotate(list, [])
        final_ok = lib.jit.Final[int] is not None
        return lib.jit.is_scripting(), lib.jit.is_tracing(), x, final_ok

    same(fn)


def test_trace_runs_the_example_once():
    calls = []

    def f(x, scale=1):
        calls.append(scale)
        return x * scale

    torchish.jit.trace(f, torchish.ones(2), example_kwarg_inputs=None)
    torchish.jit.trace(f, (torchish.ones(2),))
    assert calls == [1, 1]
    with pytest.raises(TypeError):
        torchish.jit.trace(f, (torchish.ones(2), 1, 2, 3))


def test_save_and_load_raise(tmp_path):
    net = _Net.make(torchish)
    with pytest.raises(RuntimeError, match="torchish.save"):
        torchish.jit.save(net, str(tmp_path / "m.pt"))
    with pytest.raises(RuntimeError, match="TorchScript"):
        torchish.jit.load(str(tmp_path / "m.pt"))


@needs_torch
def test_ignore_bad_argument():
    check_raises(lambda lib: lib.jit.ignore(drop="yes"), match="must be a bool or a function")


@needs_torch
def test_script_of_a_lambda_raises_as_torch():
    f = lambda x: x + 1  # noqa: E731
    for lib in (torch, torchish):
        with pytest.raises(RuntimeError) as e, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.jit.script(f)
        assert str(e.value) == f"Expected a single top-level function: {__file__}:{f.__code__.co_firstlineno}"


@needs_torch
@pytest.mark.parametrize("obj", [1, 1.5, True, "x", None, b"x", 2j], ids=repr)
def test_script_of_a_builtin_instance_raises_as_torch(obj):
    """``torch.jit.script(1)``: TypeError "<class 'int'> is a built-in class", as PyTorch's."""
    def call(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.jit.script(obj)
    err = check_raises(call)
    with pytest.raises(TypeError) as got:
        call(torchish)
    assert str(got.value) == str(err)
