"""``torchish.futures`` / ``jit.fork`` / ``jit.wait`` and the table functions of ``torchish.overrides``
(``resolve_name``, ``get_overridable_functions``, ``get_ignored_functions``, ``get_testing_overrides``,
``is_tensor_method_or_property``, ``wrap_torch_function``), each run with PyTorch and with torchish and compared."""
import threading
import time

import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(fn, lib):
    try:
        return ("ok", fn(lib))
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return ("raised", type(e).__name__, str(e).split("\n")[0][:60])


def _same(fn, values=lambda x: x):
    mine, theirs = _outcome(fn, torchish), _outcome(fn, torch)
    if mine[0] == "ok" and theirs[0] == "ok":
        assert values(mine[1]) == values(theirs[1])
    else:
        assert mine == theirs


def _plain(x):
    """Tensors as lists, so the two libraries' results compare."""
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x.tolist() if hasattr(x, "tolist") else x


FUTURE_PROGRAMS = {
    "set_then_wait": lambda lib: (lambda f: (f.done(), f.set_result(lib.tensor([1., 2.])), f.done(), f.wait(),
                                             f.value()))(lib.futures.Future()),
    "then_chain": lambda lib: (lambda f: (lambda g: (f.set_result(3), g.wait(), g.then(lambda h: h.value() * 2)
                                                     .wait()))(f.then(lambda h: h.value() + 1)))(lib.futures.Future()),
    "then_after_done": lambda lib: (lambda f: (f.set_result(2), f.then(lambda h: h.wait() * 5).wait()))(
        lib.futures.Future()),
    "set_twice": lambda lib: (lambda f: (f.set_result(1), f.set_result(2)))(lib.futures.Future()),
    "exception_raised_by_wait": lambda lib: (lambda f: (f.set_exception(KeyError("k")), f.done(), f.wait()))(
        lib.futures.Future()),
    "exception_raised_by_value": lambda lib: (lambda f: (f.set_exception(ValueError("v")), f.value()))(
        lib.futures.Future()),
    "exception_not_an_exception": lambda lib: lib.futures.Future().set_exception(3),
    "exception_then_result": lambda lib: (lambda f: (f.set_exception(ValueError("v")), f.set_result(1)))(
        lib.futures.Future()),
    "callback_error": lambda lib: (lambda f: (lambda g: (f.set_result(1), g.wait()))(
        f.then(lambda h: 1 / 0)))(lib.futures.Future()),
    "done_callbacks_in_order": lambda lib: (lambda f, seen: (f.add_done_callback(lambda h: seen.append(h.value())),
                                                             f.add_done_callback(lambda h: seen.append(-1)),
                                                             f.set_result(7), f.add_done_callback(
                                                                 lambda h: seen.append(0)), seen))(
        lib.futures.Future(), []),
    "collect_all": lambda lib: (lambda a, b: (lambda c: (c.done(), a.set_result(1), c.done(), b.set_result(
        lib.ones(2)), c.done(), [f.wait() for f in c.wait()]))(lib.futures.collect_all([a, b])))(
        lib.futures.Future(), lib.futures.Future()),
    "collect_all_error": lambda lib: (lambda a, b: (a.set_result(1), b.set_exception(IndexError("i")),
                                                    lib.futures.collect_all([a, b]).wait()))(
        lib.futures.Future(), lib.futures.Future()),
    "collect_all_empty": lambda lib: lib.futures.collect_all([]).wait(),
    "collect_all_not_futures": lambda lib: lib.futures.collect_all([1]),
    "wait_all": lambda lib: (lambda a, b: (a.set_result(lib.zeros(1)), b.set_result("b"),
                                           lib.futures.wait_all([a, b])))(lib.futures.Future(), lib.futures.Future()),
    "wait_all_error": lambda lib: (lambda a, b: (a.set_result(1), b.set_exception(KeyError("k")),
                                                 lib.futures.wait_all([a, b])))(
        lib.futures.Future(), lib.futures.Future()),
    "fork_wait": lambda lib: (lib.jit.wait(lib.jit.fork(lambda x, k=1: x * k, lib.arange(3.), k=2)),
                              lib.jit.fork(lambda: 5).done()),
    "fork_error_at_fork": lambda lib: lib.jit.fork(lambda: {}["missing"]),
    "devices_without_index": lambda lib: lib.futures.Future(devices=["cpu"]),
}


@pytest.mark.parametrize("name", sorted(FUTURE_PROGRAMS))
@pytest.mark.filterwarnings("ignore:`torch.jit.(fork|wait)` is deprecated")
def test_futures_as_pytorch(name):
    _same(FUTURE_PROGRAMS[name], _plain)


def test_wait_blocks_until_another_thread_completes():
    fut = torchish.futures.Future()
    threading.Thread(target=lambda: (time.sleep(0.05), fut.set_result(torchish.tensor(4.)))).start()
    assert fut.wait().item() == 4.0 and fut.done()


@pytest.mark.filterwarnings("ignore:`torch.jit.fork` is deprecated")
def test_jit_future_is_the_futures_class():
    assert torchish.jit.Future is torchish.futures.Future
    assert isinstance(torchish.jit.fork(lambda: 1), torchish.futures.Future)


# ----------------------------------------------------------------------------------------------------------------
# torchish.overrides tables

NAMED = ["add", "Tensor.add", "Tensor.__add__", "nn.functional.relu", "nn.functional.linear", "linalg.norm",
         "fft.fft", "special.erf", "matmul", "Tensor.sum", "cat", "nn.init.normal_", "zeros", "tensor",
         "arange", "Tensor.new_zeros"]  # (not manual_seed: once anything imported torch._dynamo, torch's is a
# wrapper resolve_name does not know)


def _attr(lib, dotted):
    obj = lib
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", NAMED)
def test_resolve_name_and_tables(name):
    for fn_of in (lambda lib: _attr(lib, name),):
        mine, theirs = fn_of(torchish), fn_of(torch)
        assert torchish.overrides.resolve_name(mine) == torch.overrides.resolve_name(theirs)
        assert torchish.overrides.is_tensor_method_or_property(mine) == \
            torch.overrides.is_tensor_method_or_property(theirs)
        assert (mine in torchish.overrides.get_ignored_functions()) == \
            (theirs in torch.overrides.get_ignored_functions())
        listed_mine = any(mine in fns for fns in torchish.overrides.get_overridable_functions().values())
        listed_theirs = any(theirs in fns for fns in torch.overrides.get_overridable_functions().values())
        assert listed_mine == listed_theirs
        assert (mine in torchish.overrides.get_testing_overrides()) == \
            (theirs in torch.overrides.get_testing_overrides())


def test_resolve_name_of_properties_and_unknown_functions():
    for lib in (torchish, torch):
        assert lib.overrides.resolve_name(lib.Tensor.grad.__get__) == "torch.Tensor.grad.__get__"
        assert lib.overrides.resolve_name(lambda x: x) is None
        assert lib.overrides.is_tensor_method_or_property(lib.Tensor.shape.__get__)
        assert lib.Tensor.grad.__get__ in lib.overrides.get_default_nowrap_functions()


def test_testing_overrides_dummies_return_minus_one():
    dummies = torchish.overrides.get_testing_overrides()
    assert dummies[torchish.add](torchish.ones(1), torchish.ones(1)) == -1
    assert dummies[torchish.Tensor.sum](torchish.ones(1)) == -1
    assert len(dummies) > 1000


def _wrapped_program(lib):
    @lib.overrides.wrap_torch_function(lambda x, scale=2: (x,))
    def scaled(x, scale=2):
        return x * scale

    class Logged(lib.Tensor):
        calls = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    plain = scaled(lib.ones(2), scale=3)
    sub = scaled(lib.ones(2).as_subclass(Logged))
    return plain.tolist(), type(sub).__name__, sub.tolist(), Logged.calls[0]


def test_wrap_torch_function_dispatches_as_pytorch():
    _same(_wrapped_program)


def test_enable_reentrant_dispatch_outside_torch_dispatch():
    def enter(lib):
        with lib.overrides.enable_reentrant_dispatch():
            return 1
    _same(enter)


# ----------------------------------------------------------------------------------------------------------------
# torchish.compiler's remaining names

def _compiler_program(lib):
    c = lib.compiler
    step = c.compile(lambda x: x * 2 + 1, backend="eager")  # (PyTorch: no inductor compile in the test)
    x = lib.arange(3.)
    outs = [step(x).tolist() for _ in range(3)]
    c.cudagraph_mark_step_begin()
    region = c.nested_compile_region(lambda x: x - 1)
    also = c.nested_compile_region()(lambda x: x + 1)
    prev = [c.set_enable_guard_collectives(True), c.set_enable_guard_collectives(False)]
    default = c.get_default_backend()
    c.set_default_backend("eager")
    changed = c.get_default_backend()
    c.set_default_backend(default)
    return (outs, region(x).tolist(), also(x).tolist(), prev, default, changed, c.list_backends(),
            c.list_backends(exclude_tags=()))


def test_no_cache_artifacts_to_save_or_load():
    # (PyTorch hands out its inductor caches' bytes after a compile; torchish's compiles keep none of their own)
    assert torchish.compiler.save_cache_artifacts() is None
    assert torchish.compiler.load_cache_artifacts(b"") is None


def test_compiler_names_as_pytorch():
    _same(_compiler_program)


def test_top_level_fork_wait_and_future():
    def program(lib):
        fut = lib.fork(lambda x, k=1: x * k, lib.arange(3.), k=3)
        return type(fut).__name__ == "Future", isinstance(fut, lib.Future), lib.wait(fut).tolist()
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("error")  # (torch.fork/torch.wait do not warn; jit's do)
        _same(program)


def test_profiler_capabilities():
    _same(lambda lib: (sorted(a.name for a in lib.profiler.supported_activities()), lib.profiler.kineto_available()))
