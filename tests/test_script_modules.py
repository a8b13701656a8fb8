"""The modules training-script boilerplate touches: torchish.multiprocessing, .compiler, ._dynamo, .hub,
.autograd.profiler, .overrides, set_default_tensor_type / is_storage — compared with PyTorch where comparable."""
from __future__ import annotations

import multiprocessing as py_mp
import os
import warnings

import pytest

import torchish
import torchish._dynamo
import torchish.autograd.profiler
import torchish.multiprocessing as tmp
from torchish.compile import GraphBreakError
from torchish.compile import function as compile_function
from torchish.compile import entry as compile_entry

import _mp_worker

try:
    import torch
    import torch._dynamo
    import torch.hub
    import torch.multiprocessing
    import torch.overrides
except ImportError:  # the oracle is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")


# ----------------------------------------------------------------------------------------------------------------
# multiprocessing


def test_multiprocessing_namespace():
    import torchish.multiprocessing as m2
    assert m2 is torchish.multiprocessing
    for name in py_mp.__all__:
        assert hasattr(tmp, name), name
    assert tmp.get_context("spawn").get_start_method() == "spawn"
    assert tmp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(AssertionError):
        tmp.set_sharing_strategy("shared_everything")


@needs_torch
def test_multiprocessing_matches_torch():
    assert tmp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert tmp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    tmp.set_sharing_strategy("file_system")
    assert tmp.get_sharing_strategy() == "file_system"
    tmp.set_sharing_strategy("file_descriptor")
    for name in torch.multiprocessing.__all__:
        assert hasattr(tmp, name), name
    assert issubclass(tmp.ProcessRaisedException, tmp.ProcessException)
    assert issubclass(tmp.ProcessExitedException, Exception)


def test_spawn_runs_each_rank_and_returns_none():
    queue = py_mp.get_context("spawn").SimpleQueue()
    assert tmp.spawn(_mp_worker.square_rank, args=(queue, 3), nprocs=2) is None
    assert sorted(queue.get() for _ in range(2)) == [(0, [9.0]), (1, [16.0])]


def test_spawn_forwards_child_exception():
    ctx = tmp.spawn(_mp_worker.fail, args=("boom",), nprocs=1, join=False)
    assert isinstance(ctx, tmp.ProcessContext) and len(ctx.pids()) == 1
    with pytest.raises(tmp.ProcessRaisedException) as info:
        while not ctx.join(timeout=60):
            pass
    msg = str(info.value)
    assert msg.startswith("\n\n-- Process 0 terminated with the following error:\nTraceback")
    assert "ValueError: boom in rank 0" in msg and info.value.error_index == 0


def test_process_context_exit_code():
    p = py_mp.get_context("spawn").Process(target=os._exit, args=(3,))
    p.start()
    ctx = tmp.ProcessContext([p], ["/nonexistent/torchish-errorfile.pickle"])
    with pytest.raises(tmp.ProcessExitedException, match=r"^process 0 terminated with exit code 3$") as info:
        ctx.join()
    assert info.value.exit_code == 3 and ctx.join() is True


# ----------------------------------------------------------------------------------------------------------------
# compiler / _dynamo


def test_is_compiling_inside_compiled_function_only():
    @torchish.compile
    def f(x):
        return x * 2 if torchish.compiler.is_compiling() else x * 3

    x = torchish.ones(3)
    assert [f(x).tolist() for _ in range(3)] == [[2.0] * 3] * 3  # recording call, traced program, program again
    assert f.stats["compiled_calls"] == 2 and f.fn(x).tolist() == [3.0] * 3
    assert not torchish.compiler.is_compiling() and not torchish._dynamo.is_compiling()
    assert torchish.compiler.is_dynamo_compiling() is False


def test_disable_is_a_graph_break():
    calls = []

    @torchish.compiler.disable
    def log(x):
        calls.append(x.sum().item())  # value-dependent: must never be traced
        return x + 1

    assert log._torchdynamo_disable and log.__name__ == "log"

    def step(x):
        return log(x) * 2

    strict = torchish.compile(step, fullgraph=True)
    x = torchish.ones(2)
    strict(x)
    with pytest.raises(GraphBreakError, match="torch.compiler.disable"):
        strict(x)
    assert isinstance(GraphBreakError("x"), RuntimeError)  # PyTorch's Unsupported is a RuntimeError too
    lenient = torchish.compile(step, fullgraph=False)
    outs = [lenient(x).tolist() for _ in range(3)]
    assert outs == [[4.0, 4.0]] * 3 and calls[-3:] == [2.0, 2.0, 2.0]
    assert torchish.compiler.disable(reason="slow")(lambda v: v)(5) == 5


def test_reset_and_stances():
    @torchish.compile
    def f(x):
        return x + 1

    x = torchish.ones(2)
    f(x), f(x)
    assert f.entries
    torchish._dynamo.reset()
    assert not f.entries
    with torchish.compiler.set_stance("force_eager"):
        assert f(x).tolist() == [2.0, 2.0] and not f.entries
    with torchish.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(RuntimeError, match="Detected recompile when torch.compile stance is 'fail_on_recompile'"):
            f(x)
    f(x), f(x)
    with torchish.compiler.set_stance("fail_on_recompile"):
        before = f.stats["compiled_calls"]
        assert f(x).tolist() == [2.0, 2.0] and f.stats["compiled_calls"] == before + 1  # cached: still compiled
    with torchish.compiler.set_stance("eager_on_recompile"):
        assert f(torchish.ones(5)).tolist() == [2.0] * 5 and len(f.entries) == 1
    assert compile_function.STANCE[0] == "default"
    with pytest.raises(RuntimeError, match="invalid torch.compile stance 'bogus'"):
        torchish.compiler.set_stance("bogus")

    @torchish.compiler.set_stance("force_eager")
    def run(v):
        return compile_function.STANCE[0]
    assert compile_function.STANCE[0] == "default" and run(x) == "force_eager"
    assert torchish.compiler.allow_in_graph(f) is f and torchish.compiler.assume_constant_result(f) is f


@needs_torch
@pytest.mark.filterwarnings("ignore::FutureWarning")  # (PyTorch deprecates reading some of its settings)
def test_dynamo_config_matches_torch():
    cfg, ref = torchish._dynamo.config, torch._dynamo.config
    for name in dir(cfg):
        if name not in ("patch", "get_config_copy", "load_config"):
            assert getattr(cfg, name) == getattr(ref, name), name
    for target in (cfg, ref):
        with pytest.raises(AttributeError, match="does not exist"):
            target.no_such_setting = 1
        with pytest.raises(AttributeError, match="does not exist"):
            target.no_such_setting  # noqa: B018
    import torchish._dynamo.config as as_module
    assert as_module is cfg


def test_cache_size_limit_governs_variants():
    cfg = torchish._dynamo.config
    assert cfg.cache_size_limit == compile_entry.VARIANTS == 8
    with cfg.patch(cache_size_limit=3, suppress_errors=True):
        assert compile_entry.VARIANTS == 3 and cfg.recompile_limit == 3 and cfg.suppress_errors
    assert compile_entry.VARIANTS == 8 and cfg.suppress_errors is False
    cfg.cache_size_limit = 16
    try:
        assert compile_entry.VARIANTS == 16
    finally:
        del cfg.cache_size_limit
    assert compile_entry.VARIANTS == 8


# ----------------------------------------------------------------------------------------------------------------
# hub


HUBCONF = '''
dependencies = ["numpy"]
import torchish


def tiny(width=2, bias=True):
    """A tiny Linear."""
    return torchish.nn.Linear(width, 1, bias=bias)


def _private():
    pass
'''


@needs_torch
def test_hub_dir_matches_torch(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert torchish.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "th" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert torchish.hub.get_dir() == torch.hub.get_dir()
    torchish.hub.set_dir("~/somewhere")
    try:
        assert torchish.hub.get_dir() == os.path.expanduser("~/somewhere")
    finally:
        torchish.hub._hub_dir = None


def test_hub_load_local(tmp_path):
    (tmp_path / "hubconf.py").write_text(HUBCONF)
    net = torchish.hub.load(str(tmp_path), "tiny", 3, source="local", bias=False)
    assert isinstance(net, torchish.nn.Linear) and net.weight.shape == (1, 3) and net.bias is None
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        torchish.hub.load(str(tmp_path), "nope", source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        torchish.hub.load(str(tmp_path), "tiny", source="svn")
    (tmp_path / "hubconf.py").write_text(HUBCONF.replace('["numpy"]', '["numpy", "no_such_package_xyz"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_xyz"):
        torchish.hub.load(str(tmp_path), "tiny", source="local")
    with pytest.raises(FileNotFoundError):
        torchish.hub.load(str(tmp_path / "missing"), "tiny", source="local")


def test_hub_checkpoints(tmp_path):
    sd = {"w": torchish.arange(4.0)}
    torchish.save(sd, tmp_path / "net-0123abcd.pth")
    out = torchish.hub.load_state_dict_from_url("https://example.invalid/models/net-0123abcd.pth",
                                                model_dir=str(tmp_path))
    assert out["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    from urllib.error import URLError
    with pytest.raises(URLError):  # nothing listens there: the download fails as PyTorch's does
        torchish.hub.download_url_to_file("http://127.0.0.1:9/x.pth", str(tmp_path / "x.pth"), progress=False)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]


# ----------------------------------------------------------------------------------------------------------------
# autograd.profiler


def test_legacy_profiler():
    P = torchish.autograd.profiler
    with P.profile() as prof:
        with P.record_function("my_region"):
            torchish.ones(3).sum()
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    assert "my_region" in table and "Self CPU" in table
    assert [r.key for r in prof.function_events] == ["my_region"] and prof.self_cpu_time_total > 0
    with P.profile(enabled=False) as off:
        pass
    with pytest.raises(AttributeError):
        off.key_averages()
    with P.emit_itt():
        pass
    if not torchish.cuda.is_available():
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            with P.emit_nvtx():
                pass
    with P.emit_nvtx(enabled=False):
        pass


# ----------------------------------------------------------------------------------------------------------------
# overrides


def _cases(lib):
    class Sub(lib.Tensor):
        pass

    class TF:
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return ("TF", func.__name__, [t.__name__ for t in types], len(args), kwargs)

    class Declines:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    o = lib.overrides
    t = lib.ones(2)

    def f(x, y=1):
        if o.has_torch_function((x,)):
            return o.handle_torch_function(f, (x,), x, y=y)
        return "plain"

    try:
        o.handle_torch_function(f, (Declines(),), Declines())
        declined = None
    except TypeError as e:
        declined = str(e).split(":")[0]
    sub = t.as_subclass(Sub)
    sub_result = o.handle_torch_function(lib.add, (sub,), sub, 1)
    return [o.has_torch_function((t, 1)), o.has_torch_function((t.as_subclass(Sub),)),
            o.has_torch_function((lib.nn.Parameter(t),)), o.has_torch_function([TF()]),
            o.has_torch_function_unary(t), o.has_torch_function_unary(TF()), o.has_torch_function_variadic(t, TF()),
            o.is_tensor_like(t), o.is_tensor_like(TF()), o.is_tensor_like(TF), o.is_tensor_like(1),
            o.is_tensor_like(t.as_subclass(Sub)), f(t), f(TF()), declined, type(sub_result).__name__,
            sub_result.tolist()]


@needs_torch
@pytest.mark.filterwarnings("ignore:Defining your `__torch_function__ as a plain method:DeprecationWarning")
def test_overrides_match_torch():
    mine, ref = _cases(torchish), _cases(torch)
    assert mine == ref


# ----------------------------------------------------------------------------------------------------------------
# set_default_tensor_type, is_storage


def _default_tensor_type_results(lib):
    out = []
    for arg in ["torch.DoubleTensor", lib.HalfTensor, lib.BFloat16Tensor, lib.FloatTensor, lib.cuda.FloatTensor,
                "torch.cuda.DoubleTensor", lib.LongTensor, lib.float64, 3, "torch.Bogus"]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                lib.set_default_tensor_type(arg)
                out.append(str(lib.ones(1).dtype))
            except (TypeError, AttributeError) as e:
                out.append((type(e).__name__, str(e)))
            out.append([x.category.__name__ for x in w if "set_default_tensor_type" in str(x.message)][:1])
    lib.set_default_dtype(lib.float32)
    return out


@needs_torch
def test_set_default_tensor_type_matches_torch():
    if torchish.cuda.is_available():
        pytest.skip("the CUDA types are available here and not in the CPU oracle")
    mine, ref = _default_tensor_type_results(torchish), _default_tensor_type_results(torch)
    # PyTorch warns once per process (TORCH_WARN_ONCE): compare the warning where it has one
    assert [m for m in mine if not isinstance(m, list)] == [r for r in ref if not isinstance(r, list)]
    assert mine[1] == ["UserWarning"]
    assert torchish.get_default_dtype() == torchish.float32
    assert torchish.is_storage(torchish.ones(2)) is torch.is_storage(torch.ones(2)) is False
    assert torchish.is_storage(1) is torch.is_storage(1) is False
