"""``torch.overrides.TorchFunctionMode``: inside ``with Mode():`` every call PyTorch dispatches goes first to the
mode's ``__torch_function__`` (factory functions such as ``torch.zeros`` too, which no argument can dispatch), with
the mode off this thread's stack while it runs. Compared with torch 2.13 by ``same``: what a logging mode sees
(function names, the types handed, the keyword names), modes that change or replace calls, nesting, a mode beside
a Tensor subclass, ``DisableTorchFunction``/``DisableTorchFunctionSubclass``, the stack helpers and their errors.
The conftest turns dispatch off again after each test (entering a mode turns it on).
"""
import threading

import numpy as np
import pytest

import torchish
from oracle import logging_subclass, needs_torch, same


def _logging_mode(lib):
    class Log(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.calls.append((func.__name__, tuple(t.__name__ for t in types),
                               None if kwargs is None else tuple(sorted(kwargs))))
            return func(*args, **(kwargs or {}))
    return Log


# each program's calls, as a logging mode sees them
_PROGRAMS = {
    "operators": lambda lib, x: (x + 1, 2 * x, x @ x.T, -x, abs(x), x == x, ~(x > 0), x[0], x.clone().__iadd__(1)),
    "factories": lambda lib, x: (lib.zeros(2), lib.ones(2, dtype=lib.float64), lib.tensor([1.0]), lib.arange(3),
                                 lib.full((2,), 3.0), lib.eye(2), lib.linspace(0, 1, 3), lib.empty(2).shape,
                                 lib.as_tensor([1, 2]), lib.randn(2).shape, lib.hann_window(4)),
    "likes": lambda lib, x: (lib.zeros_like(x), lib.rand_like(x).shape, lib.randint_like(x, 3).shape,
                             lib.result_type(x, 1), lib.promote_types(lib.int8, lib.float32)),
    "functional": lambda lib, x: (lib.nn.functional.relu(x), lib.nn.functional.softmax(x, -1),
                                  lib.nn.functional.linear(x, x), lib.nn.functional.gelu(x),
                                  lib.nn.functional.layer_norm(x, (3,)), lib.nn.functional.pad(x, (1, 1))),
    "python_functions": lambda lib, x: (lib.norm(x), lib.einsum("ij,ij->", x, x), lib.split(x, 1),
                                        lib.meshgrid(x[0], x[0], indexing="ij"), lib.broadcast_tensors(x, x)),
    "properties": lambda lib, x: (x.shape, x.dtype, x.T, x.requires_grad, x.is_leaf, x.ndim, x.device),
    "self_only_methods": lambda lib, x: (x.dim(), x.tolist(), x[0, 0].item(), float(x[0, 0]), int(x[0, 0]),
                                         bool(x[0, 0]), x.abs(), x.exp(), x.numel(), len(x), x.sum(), x.size(0)),
    "namespaces": lambda lib, x: (lib.linalg.norm(x), lib.fft.fft(x).shape, lib.special.erf(x), lib.stack([x, x]),
                                  lib.where(x > 0, x, 0.0), lib.cat([x, x])),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_a_logging_mode_sees_the_calls_pytorch_makes(name):
    def program(lib):
        x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 0.0, 1.0]])
        with _logging_mode(lib)() as mode:
            _PROGRAMS[name](lib, x)
        return mode.calls
    same(program)


@needs_torch
def test_a_training_step_under_a_logging_mode():
    def program(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        x, y = lib.ones(5, 3), lib.tensor([0, 1, 0, 1, 1])
        with _logging_mode(lib)() as mode:
            loss = lib.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            grads = [p.grad for p in model.parameters()]
        return mode.calls, loss, grads
    same(program)


@needs_torch
def test_a_mode_that_sets_the_dtype_of_factories():
    def program(lib):
        factories = {lib.zeros, lib.ones, lib.randn, lib.arange, lib.tensor, lib.full}

        class Float64(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                if func in factories:
                    kwargs.setdefault("dtype", lib.float64)
                return func(*args, **kwargs)
        lib.manual_seed(0)
        with Float64():
            made = (lib.zeros(2), lib.ones(2, 3), lib.randn(3), lib.arange(3), lib.tensor([1.5]), lib.full((2,), 7))
            kept = (lib.zeros(2, dtype=lib.float16), lib.ones(2) + lib.ones(2, dtype=lib.float32))
        after = lib.zeros(2)
        return made, kept, after
    same(program)


@needs_torch
def test_a_mode_that_replaces_a_function_inside_a_model():
    def program(lib):
        F = lib.nn.functional

        class GeluForRelu(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if func is F.relu:
                    return F.gelu(args[0])
                if func is lib.relu:
                    return lib.tanh(args[0])
                return func(*args, **(kwargs or {}))
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        x = lib.randn(2, 3)
        with GeluForRelu():
            out = model(x)
            direct = lib.relu(x)
            out.sum().backward()
        return out, direct, [p.grad for p in model.parameters()], model(x)
    same(program)


@needs_torch
def test_nested_modes_innermost_first_and_calls_inside_go_to_the_next():
    def program(lib):
        log = []

        def make(tag):
            class Tagged(lib.overrides.TorchFunctionMode):
                def __torch_function__(self, func, types, args=(), kwargs=None):
                    log.append((tag, func.__name__, len(lib.overrides._get_current_function_mode_stack())))
                    return func(*args, **(kwargs or {}))
            return Tagged()
        outer, inner = make("outer"), make("inner")
        x = lib.ones(2)
        with outer:
            with inner:
                y = lib.add(x, 1)
                stack = [type(m).__name__ for m in lib.overrides._get_current_function_mode_stack()]
                top = lib.overrides._get_current_function_mode() is inner
                depth = lib._C._len_torch_function_stack()
            z = x * 3
        return log, y, z, stack, top, depth, lib._C._len_torch_function_stack()
    same(program)


@needs_torch
def test_a_mode_before_a_subclass_and_not_implemented_hands_on():
    def program(lib):
        Sub, log = logging_subclass(lib, lambda func, types, args, kwargs: ("sub", func.__name__,
                                                                             tuple(t.__name__ for t in types)))

        class Declines(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(("mode", func.__name__, tuple(t.__name__ for t in types)))
                if func.__name__ == "mul" and types or func.__name__ == "sub":
                    return NotImplemented
                return func(*args, **(kwargs or {}))
        s = lib.ones(2).as_subclass(Sub)
        with Declines():
            a = lib.add(s, 1)
            b = s * 2  # (the mode declines; Sub's handler runs ``mul`` with subclasses off: the mode sees it again)
            try:
                lib.sub(lib.ones(2), 1)  # (every handler declines)
            except TypeError as e:
                err = str(e).split(";")[0], "mode object" in str(e)
        return log, type(a).__name__, type(b).__name__, a, b, err
    same(program)


@needs_torch
def test_disable_torch_function_turns_modes_off_and_the_subclass_block_does_not():
    def program(lib):
        with _logging_mode(lib)() as mode:
            x = lib.ones(2)
            with lib._C.DisableTorchFunction():
                lib.add(x, 1)
                off = lib._C._is_torch_function_mode_enabled()
            with lib._C.DisableTorchFunctionSubclass():
                lib.sub(x, 1)
                on = lib._C._is_torch_function_mode_enabled()
        return mode.calls, off, on, lib._C._is_torch_function_mode_enabled()
    same(program)


@needs_torch
def test_stack_helpers_and_their_errors():
    def program(lib):
        out = []
        try:
            lib.overrides._pop_mode()
        except Exception as e:  # noqa: BLE001 - the error is the outcome
            out.append((type(e).__name__, str(e)))
        try:
            with lib.overrides.TorchFunctionMode():
                lib.zeros(2)
        except NotImplementedError as e:
            out.append(("NotImplementedError", str(e)))
        with lib.overrides.BaseTorchFunctionMode():
            out.append(lib.ones(2) * 2)
        mode = _logging_mode(lib)()
        lib.overrides._push_mode(mode)
        lib.ones(1)
        out.append(lib.overrides._pop_mode() is mode)
        out.append(mode.calls)
        out.append(lib.overrides._get_current_function_mode())
        return out
    same(program)


def test_a_mode_entered_on_one_thread_does_not_see_another_threads_calls():
    Log = _logging_mode(torchish)
    seen_elsewhere = []

    def other():
        seen_elsewhere.append(torchish.overrides._get_current_function_mode())
        torchish.zeros(2) + 1
    with Log() as mode:
        t = threading.Thread(target=other)
        t.start()
        t.join()
        torchish.ones(1)
    assert seen_elsewhere == [None]
    assert [c[0] for c in mode.calls] == ["ones"]


def test_push_warns_and_gives_an_instance():
    Log = _logging_mode(torchish)
    with pytest.warns(UserWarning, match="no longer necessary"):
        mode = Log.push()
    assert isinstance(mode, Log) and torchish.overrides._get_current_function_mode() is None


@needs_torch
def test_nn_init_functions_dispatch_as_pytorchs():
    def program(lib):
        Sub, log = logging_subclass(lib, lambda func, types, args, kwargs: (func.__name__, len(args),
                                                                             sorted(kwargs or {})))
        lib.manual_seed(0)
        w = lib.empty(3, 2).as_subclass(Sub)
        lib.nn.init.uniform_(w, -1, 1)
        lib.nn.init.normal_(w, std=0.1)
        lib.nn.init.constant_(w, 0.5)
        lib.nn.init.kaiming_uniform_(w, a=5 ** 0.5)
        return log, w.as_subclass(lib.Tensor)
    same(program)


def test_without_a_mode_plain_tensors_take_no_dispatch_path():
    with _logging_mode(torchish)():
        pass
    assert torchish.overrides._get_current_function_mode_stack() == []
    x = torchish.ones(3)
    assert np.allclose((x * 2).numpy(), 2.0) and x.shape == (3,)


@needs_torch
def test_a_compiled_function_called_inside_a_mode_runs_what_the_mode_says():
    """A function compiled (traced) outside a mode and called inside one: the mode sees each call and may change
    what runs, as PyTorch's compiled function under a mode gives the eager results."""
    def program(lib, jit):
        F = lib.nn.functional

        class GeluForRelu(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if func is F.relu:
                    return F.gelu(args[0])
                return func(*args, **(kwargs or {}))

        @jit
        def f(x):
            return F.relu(x) * 2
        x = lib.tensor([0.5, -1.0, 2.0])
        before = [f(x) for _ in range(3)]
        with GeluForRelu():
            inside = [f(x) for _ in range(2)]
        return before, inside, f(x)
    from oracle import assert_script_matches
    assert_script_matches(program)


@needs_torch
def test_has_torch_function_is_true_under_a_mode_and_attention_leaves_its_fast_path():
    """``has_torch_function`` answers True for any argument while a mode is on (so library code hands its calls
    on), and MultiheadAttention / TransformerEncoderLayer then take their Python path, whose calls the mode sees."""
    def program(lib):
        x = lib.ones(2)
        out = []
        with lib.overrides.BaseTorchFunctionMode():
            out += [lib.overrides.has_torch_function((x,)), lib.overrides.has_torch_function_unary(x),
                    lib.overrides.has_torch_function_variadic(x, x), lib.overrides.has_torch_function(())]
            with lib._C.DisableTorchFunction():
                out.append(lib.overrides.has_torch_function((x,)))
            with lib._C.DisableTorchFunctionSubclass():
                out.append(lib.overrides.has_torch_function((x,)))
        out.append(lib.overrides.has_torch_function((x,)))
        lib.manual_seed(0)
        mha = lib.nn.MultiheadAttention(8, 2, batch_first=True).eval()
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).eval()
        q = lib.randn(2, 3, 8)
        with lib.no_grad(), _logging_mode(lib)() as mode:
            a, w = mha(q, q, q)
            b = layer(q)
        names = sorted({c[0] for c in mode.calls})
        return out, a, w, b, "multi_head_attention_forward" in names, "linear" in names
    same(program)
