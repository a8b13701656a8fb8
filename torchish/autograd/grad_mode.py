"""Grad-mode state (per thread) and the context managers that are also decorators: no_grad, enable_grad,
set_grad_enabled, inference_mode, set_multithreading_enabled."""
from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        # the grad mode the user's code set: the same as grad_enabled, except in the body of a torchish.func
        # transform, whose own recording is off while the body's no_grad blocks must still cut its gradients
        self.user_grad = True
        self.inference = False
        self.anomaly = False
        self.anomaly_check_nan = True
        self.tracing = 0  # > 0 while Tensors hold JAX tracers (torchish.compile)
        self.jax_diff = 0  # > 0 in a block JAX differentiates itself inside a trace (a checkpointed block)
        self.recorder = None  # torchish.compile's state recorder while it runs or traces a function
        self.saved_hooks = ()  # the (pack, unpack) pairs of the open saved_tensors_hooks contexts, innermost last
        self.saved_hooks_disabled = None  # disable_saved_tensors_hooks' error message while it is open
        # > 0 while an in-place or out= op runs its out-of-place body: PyTorch's autocast lists functional ops
        # only, so these run in their operands' own dtypes (``addmm_``, ``index_copy_``, ``addmm(out=)``)
        self.autocast_off = 0
        self.multithreading = True  # set_multithreading_enabled's flag (a flag only: see there)


STATE = _State()

# How many per-thread flags that every op would otherwise read are away from their defaults, over all threads: open
# tracing scopes, recorders, inference modes, anomaly modes (each counted while set, nested ones each). While it is
# 0, the op dispatch (``ops.registry.apply``, ``Tensor._make``, ``Node.__init__``) skips those reads of ``STATE``
# (a ``threading.local``: ~0.1 µs each, several per op). Counting too many is safe (the reads then happen); every
# place that sets one of those flags keeps the count through :func:`unusual`, :func:`set_inference` or
# :func:`set_anomaly`.
UNUSUAL = [0]
_UNUSUAL_LOCK = threading.Lock()


def unusual(delta: int) -> None:
    """Count a flag of ``UNUSUAL``'s list set (``+1``) or back to its default (``-1``)."""
    with _UNUSUAL_LOCK:
        UNUSUAL[0] += delta


def set_inference(on) -> None:
    """Set this thread's inference-mode flag, keeping :data:`UNUSUAL`'s count."""
    on = bool(on)
    if on != STATE.inference:
        unusual(1 if on else -1)
    STATE.inference = on


def set_anomaly(on, check_nan) -> None:
    """Set this thread's anomaly-mode flags, keeping :data:`UNUSUAL`'s count."""
    on = bool(on)
    if on != bool(STATE.anomaly):
        unusual(1 if on else -1)
    STATE.anomaly, STATE.anomaly_check_nan = on, check_nan


def is_grad_enabled() -> bool:
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is enabled (``set_multithreading_enabled``; True by default)."""
    return STATE.multithreading


class _DecoratorContextManager:
    """A context manager that can also decorate a function (or generator) to run it inside itself."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("torchish grad-mode decorators cannot decorate classes; decorate a method instead")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:  # noqa: BLE001 - forwarded into the generator
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            try:
                                response = gen.send(request)
                            except StopIteration as stop:
                                return stop.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable gradient recording inside the block (or the decorated function)."""

    def __init__(self):
        # PyTorch's initial ``prev``: leaving a block never entered turns recording off
        self.prev = False, False

    def __enter__(self):
        self.prev = STATE.grad_enabled, STATE.user_grad
        STATE.grad_enabled = STATE.user_grad = False

    def __exit__(self, *exc):
        STATE.grad_enabled, STATE.user_grad = self.prev
        return False


class enable_grad(_NoParamDecoratorContextManager):
    """Enable gradient recording inside the block, also inside ``no_grad``. (``prev`` is set on entry only: leaving
    a block never entered is PyTorch's AttributeError.)"""

    def __enter__(self):
        self.prev = STATE.grad_enabled, STATE.user_grad
        STATE.grad_enabled = STATE.user_grad = True

    def __exit__(self, *exc):
        STATE.grad_enabled, STATE.user_grad = self.prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(mode)``: takes effect at once (as a function) and restores on exit (as a context)."""

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{type(mode).__name__}")
        self.prev = STATE.grad_enabled, STATE.user_grad
        self.mode = mode
        STATE.grad_enabled = STATE.user_grad = self.mode

    def __call__(self, func):
        STATE.grad_enabled, STATE.user_grad = self.prev  # used as a decorator: only the decorated calls change it
        return super().__call__(func)

    def __enter__(self):
        STATE.grad_enabled = STATE.user_grad = self.mode

    def __exit__(self, *exc):
        STATE.grad_enabled, STATE.user_grad = self.prev
        return False

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``; tensors created inside are marked as inference tensors."""

    def __init__(self, mode: bool = True):
        self.mode = mode

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # used as @inference_mode without parentheses
            return cls(True)(mode)
        return super().__new__(cls)

    def __enter__(self):
        # named as PyTorch's attribute, whose absence (leaving a block never entered) is its AttributeError
        self._inference_mode_context = (STATE.grad_enabled, STATE.inference, STATE.user_grad)
        if self.mode:
            STATE.grad_enabled = STATE.user_grad = False
            set_inference(True)

    def __exit__(self, *exc):
        STATE.grad_enabled, inference, STATE.user_grad = self._inference_mode_context
        set_inference(inference)
        return False

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """``set_multithreading_enabled(mode)``: PyTorch's switch for running backward on per-device worker threads.
    Takes effect at once (as a function) and restores the previous mode on exit (as a context); per thread.

    A flag only: torchish always runs a backward on the calling thread, node after node (what PyTorch does with
    ``mode=False``), so either mode computes the same. Decorating a function sets the mode when the decorator is
    made, as PyTorch's does.
    """

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_multithreading_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{type(mode).__name__}")
        self.prev = STATE.multithreading
        self.mode = mode
        STATE.multithreading = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        STATE.multithreading = self.prev
        return False

    def clone(self):
        return self.__class__(self.mode)
