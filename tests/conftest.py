import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # `from oracle import ...`

# The suite compiles thousands of tiny XLA programs, and LLVM's optimisation passes are most of each compile's cost
# (about 30% of the suite's CPU time). Semantics do not change (XLA uses no fast-math either way); user programs keep
# XLA's defaults. Set TORCHISH_TEST_FULL_XLA_OPT=1 to test with them.
if not os.environ.get("TORCHISH_TEST_FULL_XLA_OPT"):
    _flags = os.environ.get("XLA_FLAGS", "")
    if "xla_backend_optimization_level" not in _flags:
        os.environ["XLA_FLAGS"] = (_flags + " --xla_backend_optimization_level=0"
                                   " --xla_llvm_disable_expensive_passes=true").strip()


def pytest_addoption(parser):
    parser.addoption("--torchish-mode", default="default", choices=["default", "eager", "lazy", "lowered"],
                     help="run the suite with node-by-node backward (eager), lazy capture, or always-lowered "
                          "backward; results must be identical on every path")


def _bound_cache(path, limit):
    """Empty the compilation cache directory when it holds more than ``limit`` files."""
    import shutil
    try:
        n = sum(1 for _ in os.scandir(path))
    except FileNotFoundError:
        return
    if n > limit:
        shutil.rmtree(path, ignore_errors=True)


def pytest_configure(config):
    import torchish
    # One persistent XLA compilation cache for the processes the run starts — the xdist workers (spawned after this
    # hook, they inherit the variable) and the examples, device and distributed workers — so a kernel one of them
    # compiled is loaded by the others. Full suite, 2 workers: 5:32 without it, 5:14 with an empty cache (as in CI),
    # 4:06 with a warm one. TORCHISH_TEST_XLA_CACHE=0 turns it off.
    if os.environ.get("TORCHISH_TEST_XLA_CACHE", "1") != "0" and "JAX_COMPILATION_CACHE_DIR" not in os.environ:
        import tempfile
        cache = os.path.join(tempfile.gettempdir(), f"torchish-test-xla-cache-{os.getuid()}")
        _bound_cache(cache, 20000)
        os.environ["JAX_COMPILATION_CACHE_DIR"] = cache
        os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
        # A size limit keeps JAX's cache lock, which the workers need: without it one worker can read an entry
        # another is still writing (a segfault in the cache read). Eviction reads every entry's size and access
        # time on each write, so a large directory makes every compile slow (36,000 files left by earlier runs made
        # the suite 3x slower): the directory is also emptied at start when it holds more than 20,000 files.
        os.environ["JAX_COMPILATION_CACHE_MAX_SIZE"] = str(1 << 30)
    mode = config.getoption("--torchish-mode")
    if mode == "eager":
        torchish.config.lowered_backward = "never"
    elif mode == "lazy":
        torchish.config.lazy = True
    elif mode == "lowered":
        torchish.config.lowered_backward = "always"
