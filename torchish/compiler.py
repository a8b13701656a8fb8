"""``torchish.compiler``: PyTorch's ``torch.compiler`` controls over :func:`torchish.compile`.

``is_compiling()`` is True while a compiled function runs for its compilation — the first (recording) call of an
input signature and its trace into an XLA program — and False in eager code, so code that branches on it takes the
same path in both. ``disable`` marks a function that must run eagerly: met while a compiled function is traced it
is a graph break (the compiled function runs eagerly for those inputs; ``fullgraph=True`` raises, as in PyTorch).

Example:
    >>> @torchish.compiler.disable
    ... def log_stats(loss):
    ...     print(loss.item())
    >>> torchish.compiler.is_compiling()
    False
"""
from __future__ import annotations

import contextlib
import functools

from .autograd.grad_mode import STATE
from .compile import function as _function
from .compile.errors import GraphBreakError
from .compile.recorder import Recorder

__all__ = ["is_compiling", "is_dynamo_compiling", "is_exporting", "disable", "reset", "allow_in_graph",
           "assume_constant_result", "set_stance", "compile", "cudagraph_mark_step_begin", "list_backends",
           "get_default_backend", "set_default_backend", "nested_compile_region", "save_cache_artifacts",
           "load_cache_artifacts", "set_enable_guard_collectives"]

# PyTorch 2.13's registered backend names: torchish.compile accepts each, and every one compiles with XLA. The
# first four are those ``list_backends()`` gives without its "debug"/"experimental" ones.
_BACKENDS = ("cudagraphs", "inductor", "openxla", "tvm")
_TAGGED_BACKENDS = (
    "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
    "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts", "dynamo_accuracy_minifier_backend",
    "dynamo_minifier_backend", "eager", "eager_debug", "eager_noexcept", "invoke_subgraph",
    "non_leaf_compile_error_TESTING_ONLY", "openxla_eval", "pre_dispatch_eager", "relu_accuracy_error_TESTING_ONLY",
    "relu_compile_error_TESTING_ONLY", "relu_runtime_error_TESTING_ONLY", "ts")
_SETTINGS = {"default_backend": "inductor", "guard_collectives": False}

_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
            "aot_eager_then_compile")


def _compile_recorder():
    """torchish.compile's recorder of the running call, if any (a checkpoint's read log may stand in front)."""
    rec = STATE.recorder
    while rec is not None and not isinstance(rec, Recorder):
        rec = getattr(rec, "prev", None)
    return rec


def is_compiling() -> bool:
    """Whether the code runs inside :func:`torchish.compile`'s compilation of a function (see module doc)."""
    return _compile_recorder() is not None


def is_dynamo_compiling() -> bool:
    """The same as :func:`is_compiling`: torchish.compile is the only tracer of compiled functions."""
    return _compile_recorder() is not None


def is_exporting() -> bool:
    """False: torchish has no ``torch.export``."""
    return False


def reset() -> None:
    """Clear every compiled function's programs: the next calls record and compile afresh, as after a new
    process start (``stats`` counters are kept)."""
    for compiled in list(_function.INSTANCES):
        compiled.entries.clear()


def _disabled(fn, reason):
    @functools.wraps(fn)
    def run_eagerly(*args, **kwargs):
        rec = _compile_recorder()
        if rec is not None and rec.mode == "trace":
            raise GraphBreakError(
                f"Skip calling `torch.compiler.disable()`d function: {getattr(fn, '__qualname__', fn)} was wrapped "
                f"with `torch.compiler.disable` (reason: {reason}); it cannot run inside one XLA program.")
        return fn(*args, **kwargs)
    run_eagerly._torchdynamo_disable = True
    run_eagerly._torchdynamo_disable_msg = reason
    run_eagerly._torchdynamo_orig_callable = fn
    return run_eagerly


def disable(fn=None, recursive=True, *, reason=None):
    """Run ``fn`` eagerly, never inside a compiled program. Works as ``disable(fn)``, ``@disable`` and
    ``@disable(reason=...)``. A compiled function that calls it runs eagerly for those inputs (a graph break);
    ``recursive=False`` behaves the same (torchish compiles whole functions, not frames). A Module's ``forward``
    is wrapped in place; a class has its ``__init__`` and ``__call__`` wrapped, as in PyTorch."""
    def wrap(f):
        f = getattr(f, "_torchdynamo_orig_callable", f)
        from .nn.modules.module import Module
        if isinstance(f, Module):
            f.forward = _disabled(f.forward, reason)
            return f
        if isinstance(f, type):
            f.__init__ = _disabled(f.__init__, reason)
            f.__call__ = _disabled(f.__call__, reason)
            return f
        if not callable(f):
            raise AssertionError(f"A callable function is expected, but {type(f)} is provided.")
        return _disabled(f, reason)
    return wrap if fn is None else wrap(fn)


def allow_in_graph(fn):
    """Returns ``fn``: torchish.compile traces through every function anyway."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    return fn


def assume_constant_result(fn):
    """Returns ``fn`` (PyTorch marks it for constant folding; the trace evaluates it each time it is traced)."""
    return fn


def _set(stance):
    prev, _function.STANCE[0] = _function.STANCE[0], stance
    return prev


class set_stance(contextlib.ContextDecorator):
    """Set how compiled functions run: a function call, a context manager or a decorator.

    Stances: ``"default"``; ``"force_eager"`` (compiled functions run eagerly); ``"eager_on_recompile"`` (run
    eagerly where a compilation would be needed, programs already compiled are still used);
    ``"fail_on_recompile"`` (raise instead of compiling); ``"eager_then_compile"`` and
    ``"aot_eager_then_compile"`` (first call eager, later ones compiled: torchish.compile's default already).

    Example:
        >>> with torchish.compiler.set_stance("force_eager"):     # doctest: +SKIP
        ...     out = compiled_step(x)                            # runs eagerly
    """

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        if stance not in _STANCES:
            raise RuntimeError(f"invalid torch.compile stance '{stance}'")
        if is_compiling():
            raise RuntimeError("attempted to set_stance in a torch.compile region")
        self.stance = stance
        self.prev = _set(stance)

    def __call__(self, fn):
        _set(self.prev)  # as a decorator the stance holds only while fn runs
        return super().__call__(fn)

    def __enter__(self):
        _set(self.stance)

    def __exit__(self, *exc):
        _set(self.prev)
        return False


def compile(*args, **kwargs):  # noqa: A001 - PyTorch's name
    """``torchish.compile`` (``torch.compiler.compile`` is ``torch.compile``'s other name)."""
    from . import compile as _compile
    return _compile(*args, **kwargs)


def cudagraph_mark_step_begin() -> None:
    """PyTorch's marker of a new step for CUDA graphs (``mode="reduce-overhead"``). XLA programs keep no such
    state between steps, so there is nothing to do."""


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """The backend names ``torchish.compile(backend=...)`` accepts, as PyTorch lists them (without its debug and
    experimental ones unless ``exclude_tags`` is empty). Every name compiles with XLA."""
    names = _BACKENDS if exclude_tags else _BACKENDS + _TAGGED_BACKENDS
    return sorted(names)


def get_default_backend():
    """The backend ``set_default_backend`` last set (PyTorch's default name, ``"inductor"``, at first)."""
    return _SETTINGS["default_backend"]


def set_default_backend(backend) -> None:
    """Record the default backend name; torchish.compile compiles with XLA whatever it is."""
    _SETTINGS["default_backend"] = "inductor" if backend is None else backend


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """PyTorch's marker of a region to compile once and reuse; torchish.compile traces the region into the one
    program of the function that calls it, so the function is returned as it is (also as a decorator factory)."""
    return (lambda f: f) if fn is None else fn


def save_cache_artifacts():
    """PyTorch's serialised compile caches: torchish has none to hand out (JAX's own persistent compilation cache
    is set with ``jax.config.update("jax_compilation_cache_dir", ...)``), so None, as PyTorch with nothing
    compiled."""
    return None


def load_cache_artifacts(serialized_artifacts):
    """Counterpart of :func:`save_cache_artifacts`: nothing to load, None."""
    return None


def set_enable_guard_collectives(enabled: bool) -> bool:
    """PyTorch's switch for synchronising guard results across ranks; recorded, and the previous value returned,
    as PyTorch's."""
    prev, _SETTINGS["guard_collectives"] = _SETTINGS["guard_collectives"], bool(enabled)
    return prev
