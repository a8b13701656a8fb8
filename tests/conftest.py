import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # `from oracle import ...`

# The suite compiles thousands of tiny XLA programs, and LLVM's optimisation passes are most of each compile's cost
# (about 30% of the suite's CPU time). Semantics do not change (XLA uses no fast-math either way); user programs keep
# XLA's defaults. Set TORCHISH_TEST_FULL_XLA_OPT=1 to test with them.
if not os.environ.get("TORCHISH_TEST_FULL_XLA_OPT"):
    _flags = os.environ.get("XLA_FLAGS", "")
    if "xla_backend_optimization_level" not in _flags:
        os.environ["XLA_FLAGS"] = (_flags + " --xla_backend_optimization_level=0"
                                   " --xla_llvm_disable_expensive_passes=true").strip()
# XLA:CPU has two code generators for its fused loops: the MLIR "fusion emitters" (the default, what users' programs
# run) and the older LLVM IR emitters. For the suite's thousands of tiny kernels the older ones compile ~2.3x faster
# (sampled 2026-12-07: 11 test files spread over the suite took 203 s with the default emitters, 135 s with these;
# XLA's backend compile 115 -> 49 s), so the suite uses them. They round a few things differently (float32 `tan`'s
# last bit, float16 -> float8 conversion of subnormals, float64 reduction order), so the tests that pin those bits to
# PyTorch's are listed in tests/users_codegen.py: skipped here and run by tests/test_users_codegen.py in a
# subprocess under the default emitters. Set TORCHISH_TEST_FUSION_EMITTERS=1 to run the whole suite with them.
FUSION_EMITTERS = bool(os.environ.get("TORCHISH_TEST_FUSION_EMITTERS"))
if not FUSION_EMITTERS:
    _flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_use_fusion_emitters" not in _flags:
        os.environ["XLA_FLAGS"] = (_flags + " --xla_cpu_use_fusion_emitters=false").strip()
# XLA:CPU generates code for the host's instruction set, and its vectorised float32 tan/atan/asinh/atanh/sinc and
# reductions give different last bits with AVX-512 than with AVX2 (PyTorch's results do not change with its own
# AVX2/AVX-512 kernels): float16 rounding exposes that in ~1% of elements, so the bit-exact half-precision tests
# (test_half_numerics, test_half_opmath) would pass or fail by the CI machine's CPU. The suite runs XLA at the AVX2
# level on every host (users' programs keep the host's). Set TORCHISH_TEST_HOST_ISA=1 to test with the host's.
if not os.environ.get("TORCHISH_TEST_HOST_ISA"):
    _flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_max_isa" not in _flags:
        os.environ["XLA_FLAGS"] = (_flags + " --xla_cpu_max_isa=AVX2").strip()


def _reuse_mlir_contexts(lowerings_per_context=256):
    """Every jit lowering makes a new MLIR context and loads JAX's ~40 dialects into it: ~6 ms of an eager
    kernel's ~50 ms compile, and the suite compiles tens of thousands of kernels. The suite hands out one context
    per thread for ``lowerings_per_context`` lowerings instead (the modules, and so the programs, are the same; a
    context only interns their types and attributes). User programs keep JAX's fresh contexts. Set
    TORCHISH_TEST_FRESH_MLIR_CONTEXTS=1 to test with them."""
    import threading
    try:
        from jax._src.interpreters import mlir
        fresh = mlir.make_ir_context
    except (ImportError, AttributeError):  # another JAX: fresh contexts
        return
    local = threading.local()

    def make_ir_context():
        if getattr(local, "uses", lowerings_per_context) >= lowerings_per_context:
            local.context, local.uses = fresh(), 0
        local.uses += 1
        return local.context

    mlir.make_ir_context = make_ir_context


if not os.environ.get("TORCHISH_TEST_FRESH_MLIR_CONTEXTS"):
    _reuse_mlir_contexts()


def pytest_addoption(parser):
    parser.addoption("--torchish-mode", default="default", choices=["default", "eager", "dispatch", "lazy", "lowered"],
                     help="run the suite on one execution path: per-op dispatch with node-by-node backward (eager), "
                          "per-op dispatch (dispatch, the default), lazy capture (lazy), or always-lowered backward; "
                          "results must be identical on every path")
    parser.addoption("--torchish-exact", action="store_true",
                     help="torchish.config.exact_programs: lazy programs and lowered backwards round as the ops one "
                          "by one (with --torchish-mode=lazy the optimizer tests that compare bit for bit pass only "
                          "with it)")


def pytest_configure(config):
    import torchish
    # The default generator starts from a random seed, as PyTorch's: the suite starts every worker from one fixed
    # seed instead, so that a failure reproduces.
    torchish.manual_seed(67280421310721)
    # No persistent XLA compilation cache for the suite. Shared between the xdist workers it needs JAX's file lock
    # (without it a worker can read an entry another is still writing: a segfault), and the lock comes only with
    # JAX's size-bounded cache, whose every write lists and stats the whole directory: quadratic in the run's ~30,000
    # compiles (CI ran past 90 minutes with it, where the suite takes ~10 without).
    mode = config.getoption("--torchish-mode")
    if mode == "eager":
        torchish.config.lazy, torchish.config.lowered_backward = False, "never"
    elif mode == "dispatch":
        torchish.config.lazy = False
    elif mode == "lazy":
        torchish.config.lazy = True
    elif mode == "lowered":
        torchish.config.lazy, torchish.config.lowered_backward = False, "always"
    torchish.config.exact_programs = config.getoption("--torchish-exact")


def pytest_collection_modifyitems(config, items):
    """Under the suite's XLA code generation (see FUSION_EMITTERS above), the tests of tests/users_codegen.py skip:
    tests/test_users_codegen.py runs them under the users' one."""
    if FUSION_EMITTERS:
        return
    from users_codegen import TESTS
    skip = pytest.mark.skip(reason="checked under the users' XLA code generation by tests/test_users_codegen.py")
    for item in items:
        if item.nodeid in TESTS:
            item.add_marker(skip)


_CRASH_RERUNS: dict = {}


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """A test whose xdist worker died runs again on a fresh worker, up to twice; a third crash fails it. The crash
    is a rare segfault inside XLA's CPU compiler (``backend_compile_and_load``), about one per full run on 2 cores,
    each time in a different test (test_saved_hooks, test_probe_ops, test_probe_ops2), and the test passes when
    rerun, so it is XLA's and not the test's."""
    if _CRASH_RERUNS.get(crashitem, 0) < 2:
        _CRASH_RERUNS[crashitem] = _CRASH_RERUNS.get(crashitem, 0) + 1
        sched.mark_test_pending(crashitem)
        report.outcome = "rerun"


@pytest.fixture(autouse=True)
def _cache_clears_between_tests():
    """JAX's kernel caches are dropped (``torchish._executables``, when the process's memory mappings near the
    kernel's limit) between tests, never inside one: tests that count compiles or cache entries across a few calls
    failed when a clear due to the thousands of compiles before them landed between their two counts."""
    from torchish import _executables
    with _executables.deferred():
        yield


@pytest.fixture(autouse=True)
def _unusual_count_kept():
    """After every test, ``grad_mode.UNUSUAL`` (which lets the op dispatch skip per-thread flag reads while 0) still
    counts exactly the flags this thread has set: a place that sets one without counting would make ops miss an
    inference mode, a recorder or a trace; one that counts twice would only cost speed, and is caught here too."""
    yield
    from torchish.autograd.grad_mode import STATE, UNUSUAL
    now = STATE.tracing + (STATE.recorder is not None) + bool(STATE.inference) + bool(STATE.anomaly)
    assert UNUSUAL[0] == now, f"grad_mode.UNUSUAL is {UNUSUAL[0]}, but this thread's flags count {now}"


@pytest.fixture(autouse=True)
def _fresh_warn_once_registry():
    """Each test starts as a fresh process would: no once-per-process warning (torchish's ``warn_once``) shown yet,
    so a test that expects one does not depend on the tests run before it."""
    from torchish import _global_flags
    _global_flags._WARNED_ONCE.clear()


@pytest.fixture(autouse=True)
def _torch_distribution_validation_on():
    """Each test starts with PyTorch's default of validating distribution arguments: the first use of PyTorch's
    compiler (``torch._dynamo``, by any earlier test on the same worker) turns it off for the whole process
    (``Distribution.set_default_validate_args(False)``), and the distribution tests then compared a non-validating
    oracle with torchish. Imported only where a test already imported PyTorch."""
    torch = sys.modules.get("torch")
    if torch is not None and "torch.distributions" in sys.modules:
        torch.distributions.Distribution.set_default_validate_args(True)


@pytest.fixture(autouse=True)
def _no_subclass_dispatch_after():
    """A test that defines a Tensor subclass turns ``__torch_function__`` dispatch on for the process
    (``torchish._subclass``); the tests after it run without, as programs without subclasses do."""
    yield
    from torchish import _subclass
    if _subclass._ACTIVE[0]:
        _subclass.deactivate()
