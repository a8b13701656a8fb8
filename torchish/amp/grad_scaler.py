"""``torchish.amp.GradScaler``: dynamic loss scaling for float16 training, with PyTorch's numbers and errors.

``scale(loss)`` multiplies by the scale; ``step(optimizer)`` unscales the gradients, checks them for inf/NaN and
skips ``optimizer.step()`` if any were found; ``update()`` backs the scale off after a skipped step and grows it
after ``growth_interval`` good ones.

Unscaling and the inf/NaN check are ONE jitted call over all of an optimizer's gradients on a device (no host
sync per parameter); ``step`` reads the flag once, as PyTorch's does. Inside a ``torchish.compile``d step the flag
is a traced value: the optimizer's step is then traced and its results kept only where no inf was found
(``jnp.where`` on the parameters and the optimizer state), so the compiled program needs no host sync at all.

Example::

    >>> scaler = torchish.amp.GradScaler("cpu")
    >>> scaler.scale(loss).backward()
    >>> scaler.step(optimizer)
    >>> scaler.update()
"""
from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from enum import Enum

import jax
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor, set_values, wrap
from ..autograd.grad_mode import no_grad
from ..ops import lazy

__all__ = ["OptState", "GradScaler"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _unscale(grads, inv_scale):
    """All ``grads`` times ``inv_scale`` (in float32, back to each grad's dtype) and 1.0 if any value is not
    finite (else 0.0): PyTorch's ``_amp_foreach_non_finite_check_and_unscale_``."""
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in grads]))
    found = jnp.where(finite, 0.0, 1.0).astype(jnp.float32)
    return [(g.astype(jnp.float32) * inv_scale).astype(g.dtype) for g in grads], found


def _update_scale(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """PyTorch's ``_amp_update_scale_``: back off after an inf, grow after ``growth_interval`` clean steps (never
    to inf)."""
    successful = tracker + 1
    grow = successful == growth_interval
    grown = (scale.astype(jnp.float64) * growth_factor).astype(jnp.float32)
    grown = jnp.where(jnp.isfinite(grown), grown, scale)
    backed = (scale.astype(jnp.float64) * backoff_factor).astype(jnp.float32)
    inf = found_inf > 0
    new_scale = jnp.where(inf, backed, jnp.where(grow, grown, scale))
    new_tracker = jnp.where(inf | grow, jnp.zeros_like(tracker), successful)
    return new_scale, new_tracker


_UNSCALE = jax.jit(_unscale)
_UPDATE = jax.jit(_update_scale)


def _traced(v):
    return isinstance(v, jax.core.Tracer)


class GradScaler:
    """Scales losses so that float16 gradients do not underflow, and unscales them before the optimizer step.

    Args:
        device: ``'cuda'`` (default) or ``'cpu'``. A cuda scaler without an accelerator warns and disables itself,
            as in PyTorch.
        init_scale: the initial scale.
        growth_factor: the scale is multiplied by it after ``growth_interval`` steps without inf/NaN gradients.
        backoff_factor: the scale is multiplied by it after a step with inf/NaN gradients (that step is skipped).
        growth_interval: see ``growth_factor``.
        enabled: False makes ``step`` call ``optimizer.step()`` and every other method do nothing.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # created on the first scale(), on the device of what it scales
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---------------------------------------------------------------------------------------------------------
    # scaling

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        from ..ops.creation import full
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = full((), self._init_scale, dtype=_dtype.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_dtype.int32, device=dev)

    def scale(self, outputs):
        """``outputs`` (a Tensor or an iterable of them, nested) multiplied by the scale factor."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, (list, tuple)):
                return type(val)(apply_scale(v) for v in val)
            if hasattr(val, "__iter__"):
                return map(apply_scale, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    # ---------------------------------------------------------------------------------------------------------
    # unscaling and the inf check

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        """Unscale the optimizer's gradients in place (one call per device and dtype); the found-inf flag per
        device (a 0-dim float32 Tensor: 1.0 if a gradient had an inf or NaN)."""
        groups = defaultdict(list)  # device -> grads
        for group in optimizer.param_groups:
            for param in group["params"]:
                if not isinstance(param, Tensor):
                    raise AssertionError(f"expected param to be torch.Tensor, got {type(param).__name__}")
                g = param.grad
                if g is None:
                    continue
                if not allow_fp16 and g.dtype is _dtype.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                groups[g.device].append(g)
        found = {}
        with no_grad():
            for dev, grads in groups.items():
                vals = [g._v for g in grads]
                inv = inv_scale.to(device=dev)._v
                if any(_traced(v) for v in vals) or _traced(inv):
                    new, flag = _unscale(vals, inv)
                else:
                    new, flag = _UNSCALE(lazy.concrete_all(vals), lazy.concrete(inv))
                set_values(grads, new)
                found[dev] = wrap(flag)
        return found

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale, in place (optional: ``step`` does it otherwise); once
        per optimizer between two ``update()`` calls."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, as PyTorch (float32 division can be imprecise)
        inv_scale = self._scale.double().reciprocal().float()
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def _check_inf_per_device(self, optimizer):
        """The found-inf flags of the optimizer's gradients, checked without unscaling them."""
        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        from ..ops.creation import full
        one = full((), 1.0, dtype=_dtype.float32, device=scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = self._unscale_grads_(optimizer, one, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    # ---------------------------------------------------------------------------------------------------------
    # step and update

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        flags = list(optimizer_state["found_inf_per_device"].values())
        if not any(_traced(f._v) for f in flags):
            if not sum(f.item() for f in flags):  # the one host sync of the step
                return optimizer.step(*args, **kwargs)
            return None
        return _step_where_finite(optimizer, flags, args, kwargs)

    def step(self, optimizer, *args, **kwargs):
        """Unscale the gradients (unless ``unscale_`` was called) and run ``optimizer.step(*args, **kwargs)`` if
        they hold no inf/NaN. Returns what ``optimizer.step`` returned (None when the step was skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Update the scale: ``new_scale`` (a float or a 1-element Tensor) if given, else back off after an
        inf/NaN step and grow after ``growth_interval`` clean ones. Call it once per iteration, after ``step``."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [f.to(device=scale.device) for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = found_infs[0]._v
            for f in found_infs[1:]:
                found = found + f._v
            hp = (float(self._growth_factor), float(self._backoff_factor), int(self._growth_interval))
            if _traced(scale._v) or _traced(tracker._v) or _traced(found):
                new = _update_scale(scale._v, tracker._v, found, *hp)
            else:
                new = _UPDATE(lazy.concrete(scale._v), lazy.concrete(tracker._v), lazy.concrete(found), *hp)
            set_values((scale, tracker), new)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---------------------------------------------------------------------------------------------------------
    # settings and state

    def _get_scale_async(self):
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled); a host sync."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval``, ``_growth_tracker`` (empty when
        disabled). Take it after ``update()``."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                     "or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def _optimizer_tensors(optimizer):
    """The parameters and the Tensors of the optimizer's state: what a step may write."""
    seen, out = set(), []
    for group in optimizer.param_groups:
        for p in group["params"]:
            if isinstance(p, Tensor) and id(p) not in seen:
                seen.add(id(p))
                out.append(p)
    for st in optimizer.state.values():
        for v in (st.values() if isinstance(st, dict) else ()):
            if isinstance(v, Tensor) and id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out


def _step_where_finite(optimizer, flags, args, kwargs):
    """``optimizer.step()`` inside a trace, its writes kept only where no inf was found (a traced flag cannot
    decide a Python branch). State the step creates is kept as it is."""
    before = [(t, t._v) for t in _optimizer_tensors(optimizer)]
    retval = optimizer.step(*args, **kwargs)
    found = functools.reduce(lambda a, b: a + b, [f._v for f in flags]) > 0
    changed = [(t, old) for t, old in before if t._v is not old]
    kept = {}  # tensors that shared one array before and after (Adam's step counts) still share one after
    for t, old in changed:
        key = (id(old), id(t._v))
        if key not in kept:
            kept[key] = jnp.where(found, old, t._v)
    set_values([t for t, _ in changed], [kept[(id(old), id(t._v))] for t, old in changed])
    return retval
