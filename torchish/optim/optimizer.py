"""The Optimizer base: PyTorch's surface (``param_groups``, ``state``, ``zero_grad``, step hooks, ``step(closure)``)
over a pure per-group update.

A subclass defines ``_state_keys(group)``, ``_init_state(p, group)`` (the per-parameter state as Tensors, with
PyTorch's keys and dtypes), ``_static(group)`` (hashable flags that change the update's structure) and
``_update(params, grads, states, hp, **static)``: a pure JAX function over the lists of one group's parameters that
have a gradient, returning new parameters and new states. The base runs it as ONE cached jitted call per group (not
one dispatch per parameter) and writes the results back into the same Tensor objects with ``Tensor._set_value``, so
that ``torchish.compile`` sees them as state. Numeric hyper-parameters (``_hyper``) are read with
``compile.recorder.scalar`` and passed as values: changing ``group['lr']`` between steps neither recompiles nor
retraces. ``maximize`` is passed as a value too (negation is exact), so it costs no extra compile.

Jitted kernels are shared by every optimizer of a class with the same structure (``Optimizer._kernels``), so one
optimizer per parameter (the optimizer-in-backward recipe) compiles once per parameter shape, not once per instance.
State-dict handling lives in ``_state_dict.py``, the step's checks and PyTorch's errors in ``_step_checks.py``.
"""
from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import SingleDeviceSharding

from .. import _device, _dtype, _meta
from .._runtime import typename
from .._config import config
from .._tensor import Tensor, set_values
from ..autograd.graph import RemovableHandle
from ..autograd.grad_mode import STATE, enable_grad, no_grad
from ..autograd.graph import STRUCT_EPOCH
from ..compile.state import _donated_values
from ..compile.recorder import creating_state, note_optimizer, scalar, static as static_flag, static_derived, \
    tensor_source
from ..ops import lazy, nesting, tracing
from ..ops.filled import host_filled
from ..ops.inplace import dense_layout
from ..ops.registry import OpDef, apply
from ._arith import in_place
from ._state_dict import StateDictMixin
from ._step_checks import StepChecksMixin, _state_shape_errors


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_GLOBAL_PRE_HOOKS: dict = OrderedDict()
_GLOBAL_POST_HOOKS: dict = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """A hook ``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` run before every optimizer's step."""
    handle = RemovableHandle(_GLOBAL_PRE_HOOKS)
    _GLOBAL_PRE_HOOKS[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """A hook ``hook(optimizer, args, kwargs)`` run after every optimizer's step."""
    handle = RemovableHandle(_GLOBAL_POST_HOOKS)
    _GLOBAL_POST_HOOKS[handle.id] = hook
    return handle


def _with_step_hooks(step):
    """Wrap a class's ``step`` so pre/post hooks run around it, with ``args`` holding the optimizer first, as in
    PyTorch (``Optimizer.profile_hook_step``)."""
    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        note_optimizer(self)  # (torchish.compile guards its param groups, even where no parameter has a grad yet)
        for hook in itertools.chain(_GLOBAL_PRE_HOOKS.values(), self._optimizer_step_pre_hooks.values()):
            res = hook(self, args, kwargs)
            if res is not None:
                if not (isinstance(res, tuple) and len(res) == 2):
                    raise RuntimeError(f"{_step_repr(self, step)} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {res}.")
                args, kwargs = res
        out = step(*args, **kwargs)
        for hook in itertools.chain(self._optimizer_step_post_hooks.values(), _GLOBAL_POST_HOOKS.values()):
            hook(self, args, kwargs)
        return out
    wrapper.hooked = True
    return wrapper


def _step_repr(optimizer, step):
    """``step`` as PyTorch's hook error shows it: the built-in optimizers share ``Optimizer.step`` here, where each
    of PyTorch's defines its own (``<function SGD.step at 0x...>``)."""
    if step.__qualname__ != "Optimizer.step":
        return str(step)
    owner = next((c.__name__ for c in type(optimizer).__mro__
                  if c.__module__.startswith("torchish.optim") and c.__name__ != "Optimizer"), "Optimizer")
    return f"<function {owner}.step at {hex(id(step))}>"


def scalar_dtype():
    """PyTorch keeps step counts (and NAdam's mu_product, ASGD's eta/mu) as float32 scalars, float64 when the
    default dtype is float64."""
    return jnp.float64 if _dtype.DEFAULTS.float == jnp.float64 else jnp.float32


def scalar_tensor(value, dtype=None, beside=None):
    """A scalar state Tensor (``scalar_dtype()`` unless ``dtype``), uncommitted unless placed ``beside`` a
    parameter (PyTorch's ``device=p.device`` for capturable/fused state)."""
    device = None if beside is None else _device.placement(beside._v)
    if isinstance(value, (int, float)):  # (a transfer: jnp.asarray compiled a conversion program per dtype)
        return Tensor._make(jax.device_put(np.asarray(value, dtype or scalar_dtype()), device))
    return Tensor._make(jnp.asarray(value, dtype or scalar_dtype(), device=device))


def zeros_like_param(p, fill=0.0):
    """A state Tensor of ``p``'s shape, dtype, device and strides (PyTorch's ``zeros_like(p,
    memory_format=torch.preserve_format)``: a channels-last or transposed parameter's state keeps its layout)."""
    where = _device.placement(p._v)
    v = host_filled(p._v.shape, fill, p.dtype, where)  # (no fill kernel compiled per parameter shape)
    t = Tensor._make(v if v is not None else jnp.full(p._v.shape, fill, p._v.dtype, device=where))
    t._layout = dense_layout(p)
    return t


def check_lr(lr):
    """PyTorch's check of a learning rate (a number or a 1-element Tensor)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def check_nonneg(name, value):
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name}: {value}")


def check_fused(fused, foreach, differentiable):
    """PyTorch's checks of ``fused=True`` (made after the parameters are taken, as PyTorch does)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


class Optimizer(StateDictMixin, StepChecksMixin):
    """Base class of all optimizers (PyTorch's ``torch.optim.Optimizer``).

    Args:
        params: an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (parameter groups, each with a
            ``'params'`` entry and optional per-group hyper-parameters).
        defaults: the default hyper-parameters of every group.

    Example::

        opt = torchish.optim.SGD([{"params": model.weight}, {"params": model.bias, "lr": 0.01}], lr=0.1)
        opt.zero_grad(); loss.backward(); opt.step()
    """

    _hyper: tuple = ("lr",)
    _kernels: dict = {}  # (update fn, static flags, n params, sharding) -> jitted update, shared by all instances

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._init_state_dict_hooks()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {typename(params)}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self):
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self._init_state_dict_hooks(keep=True)
        self.defaults.setdefault("differentiable", False)
        self._fill_groups()

    # Group keys that PyTorch's ``__setstate__`` (so also ``load_state_dict``) fills in when a state dict saved by an
    # older version lacks them, with the values (and in the order) PyTorch uses; and the per-parameter state it
    # converts from Python numbers (older layouts) to scalar Tensors.
    _group_defaults: tuple = ()
    _scalar_state: tuple = ()

    def _fill_groups(self):
        for group in self.param_groups:
            for key, value in self._group_defaults:
                group.setdefault(key, value)
            for p in group["params"]:
                st = self.state.get(p)
                if not st:
                    continue
                for key in self._scalar_state:
                    if key in st and not isinstance(st[key], Tensor):
                        st[key] = self._loaded_scalar(p, key, st[key], group)

    def _loaded_scalar(self, p, key, value, group):
        """A Python-number scalar state as PyTorch's ``__setstate__`` converts it: float32 beside the parameter
        when the group is fused (the step count), beside the parameter when capturable, else a plain scalar."""
        fused = key == "step" and bool(group.get("fused"))
        on_device = fused or bool(group.get("capturable"))
        return scalar_tensor(float(value), jnp.float32 if fused else None, p if on_device else None)

    # ---------------------------------------------------------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a group (a dict with ``'params'``); missing hyper-parameters take the optimizer's defaults."""
        STRUCT_EPOCH[0] += 1  # (torchish.compile guards the param groups)
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {typename(p)}")
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for g in self.param_groups:
            seen.update(id(p) for p in g["params"])
            if ("param_names" in param_group) != ("param_names" in g):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True):
        """Reset the gradients of all parameters: to None (default) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    # ---------------------------------------------------------------------------------------------------------
    # hooks

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` before this optimizer's step."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after this optimizer's step."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # ---------------------------------------------------------------------------------------------------------
    # step

    @_with_step_hooks
    @no_grad()
    def step(self, closure=None):
        """Update every parameter that has a gradient (one jitted call per group). ``closure`` re-evaluates
        the model and returns the loss (it runs with gradients enabled)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._step_group(group)
        if config.lazy and STATE.recorder is None:
            # the step's end: run what is pending (forward, backward, this update) as one program now, so that
            # pending work never chains from one step into the next
            lazy.materialize()
        return loss

    def _step_group(self, group, params=None):
        """One jitted update of ``params`` (by default every parameter of ``group`` that has a gradient)."""
        params = [p for p in (group["params"] if params is None else params) if p.grad is not None]
        if not params:
            return
        if STATE.recorder is not None:  # gradients made outside a compiled step are its inputs, not constants
            STATE.recorder.read([p.grad for p in params])
        fresh = [p for p in params if not self.state.get(p)]
        for p in params:
            if p.grad.is_sparse:
                self._check_sparse_grad(group)
            if group.get("fused"):
                self._check_fused(p)
            self._prepare_state(p, group)
        if group.get("capturable"):
            self._check_capturable(group, params)
        if self._param_shaped_state and self.__dict__.get("_unchecked_shapes"):
            self._check_loaded_shapes(params, bool(group.get("foreach")))
        keys = self._state_keys(group)
        shared_step = self._tensor_step and "step" in keys
        if shared_step and len(fresh) > 1:  # counts that start together hold one array (see _share_steps)
            first = self.state[fresh[0]]["step"]._v
            for p in fresh[1:]:
                self.state[p]["step"]._v = first
        states = [[self.state[p][k] for k in keys] for p in params]
        if self._lerp_state:
            self._check_lerp_dtypes(group, params, keys, states)
        hp = self._hyper_values(group, params)
        static = static_derived(group, self._static)
        if STATE.recorder is not None:  # the group's flags shape the update: torchish.compile guards them
            for k, v in group.items():
                if isinstance(v, (bool, str)) or v is None:
                    static_flag(group, k)
        if self.defaults.get("differentiable") and STATE.recorder is None and not (tracing.active() or STATE.tracing):
            self._differentiable_update(group, params, states, hp, static)
            return
        pv = [p._v for p in params]
        gv = [p.grad._v for p in params]
        sv = [[s._v if isinstance(s, Tensor) else s for s in row] for row in states]
        update = in_place(type(self)._update)
        with _state_shape_errors():
            if tracing.active() or STATE.tracing:
                new_p, new_s = update(pv, gv, sv, hp, **static)
            elif config.lazy and STATE.recorder is None:

                def jitted(pv, gv, sv, hp):  # the eager path's kernel (placed by the parameters), for a run op by op
                    return Optimizer._update_kernel(update, static, len(pv), pv[0].sharding)(pv, gv, sv, hp)
                key = (update, tuple(sorted(static.items())))
                fn = functools.partial(update, **static)
                new_p, new_s = lazy.record_pytree(f"{type(self).__name__}_update", key, fn,
                                                  (pv, gv, sv, _hp_values(hp)), jitted=jitted,
                                                  nested=nesting.nested(fn, key))
            else:
                sv = [lazy.concrete_all(row) for row in sv]
                pv, gv = lazy.concrete_all(pv), lazy.concrete_all(gv)
                if _meta.has_meta(pv):  # parameters on the meta device: the update's shapes only
                    new_p, new_s = _meta.eval_meta(functools.partial(update, **static),
                                                   (pv, gv, sv, _hp_values(hp)))
                else:
                    new_p, new_s = self._donating_update(static, pv, gv, sv, _hp_values(hp))
        if shared_step:
            new_s = _share_steps(sv, new_s, keys.index("step"))
        tensors, values = list(params), list(new_p)
        for row, new_row in zip(states, new_s):
            for s, v in zip(row, new_row):
                if isinstance(s, Tensor):
                    tensors.append(s)
                    values.append(v)
        set_values(tensors, values)

    _differentiable_ops: dict = {}  # (update, flags, n, state layout, Tensor hyper-parameters) -> OpDef

    def _differentiable_update(self, group, params, states, hp, static):
        """``differentiable=True``: the group's update as ONE recorded op over the parameters, their gradients,
        their state and the Tensor hyper-parameters (a Tensor ``lr`` that requires grad), its VJP derived by JAX,
        written back with in-place copies under grad mode, as PyTorch's step runs with gradients enabled: the new
        parameters and state carry the graph (hyper-gradients flow to ``lr`` and to gradients made with
        ``create_graph``), and a leaf parameter that requires grad raises PyTorch's in-place error."""
        tensor_hp, fixed = [], []  # (key, None) for a Tensor, (key, i) for a Tensor in a tuple (Adam's betas)
        for k, v in hp.items():
            given = group.get(k)
            if isinstance(given, Tensor):
                tensor_hp.append((k, None))
            elif isinstance(given, tuple) and any(isinstance(x, Tensor) for x in given):
                tensor_hp += [(k, i) for i, x in enumerate(given) if isinstance(x, Tensor)]
                fixed.append((k, tuple(None if isinstance(x, Tensor) else _hp_value(x) for x in given)))
            else:
                fixed.append((k, _hp_value(v)))
        tensor_hp, fixed = tuple(tensor_hp), tuple(fixed)
        mask = tuple(tuple(isinstance(s, Tensor) for s in row) for row in states)
        plain = tuple(tuple(None if m else s for s, m in zip(row, mrow)) for row, mrow in zip(states, mask))
        key = (type(self)._update, tuple(sorted(static.items())), len(params), mask, plain, tensor_hp)
        op = Optimizer._differentiable_ops.get(key)
        if op is None:
            op = Optimizer._differentiable_ops[key] = OpDef(
                f"{type(self).__name__}_update", _flat_update(in_place(type(self)._update), static, len(params),
                                                              mask, plain, tensor_hp),
                # it keeps what it needs as its own temporaries (a second backward fails), not the parameters and
                # state it writes: the next step's writes do not invalidate its backward
                saved=("t", Ellipsis))
        state_tensors = [s for row in states for s in row if isinstance(s, Tensor)]
        with enable_grad():
            outs = apply(op, (*params, *(p.grad for p in params), *state_tensors,
                              *(group[k] if i is None else group[k][i] for k, i in tensor_hp)), hp=fixed)
            for t, new in zip([*params, *state_tensors], outs):
                t.copy_(new)

    def _kernel(self, static, n, sharding, donated=None):
        """The group's jitted update. Inputs are pinned to the parameters' device: fresh state (uncommitted
        arrays) and updated state (committed) would otherwise compile the same update twice."""
        # (AdamW shares Adam's kernels)
        return Optimizer._update_kernel(in_place(type(self)._update), static, n, sharding, donated)

    @staticmethod
    def _update_kernel(update, static, n, sharding, donated=None):
        """``donated``: which state values (per parameter, per state key) the kernel takes in the donated list;
        it is then called as ``(params, donated state, grads, kept state, hyper-parameters)`` with the parameters
        and the donated state donated, so that XLA updates them in place."""
        key = (update, tuple(sorted(static.items())), n, sharding, donated)
        k = Optimizer._kernels.get(key)
        if k is None:
            fn = functools.partial(update, **static)
            kw = {"in_shardings": sharding} if isinstance(sharding, SingleDeviceSharding) else {}
            if donated is not None:
                fn, kw["donate_argnums"] = _joining(fn, donated), (0, 1)
            k = Optimizer._kernels[key] = nesting.jit(fn, **kw)
        return k

    def _donating_update(self, static, pv, gv, sv, hp):
        """The eager update with the parameters and their (non-scalar) state donated: XLA writes the new values
        into the old buffers instead of allocating and filling new ones — Adam over 670K parameters takes 0.6 ms
        instead of 1.7 ms. A value something else still holds (an alias from ``detach()``/``.data``, a graph kept
        with ``retain_graph``, a ``state_dict()`` or a compiled function's guard) is copied first
        (:func:`..compile.state._donated_values`), so donation never deletes an array in use."""
        donated = tuple(tuple(type(v) is lazy.ARRAY_TYPE and v.ndim > 0 for v in row) for row in sv)
        dv = [v for row, m in zip(sv, donated) for v, d in zip(row, m) if d]
        kept = [v for row, m in zip(sv, donated) for v, d in zip(row, m) if not d]
        # references while counted: the Tensor, the caller's list (pv or a row of sv), dv, the copy list, the call
        pv, dv = _donated_values(pv, range(len(pv))), _donated_values(dv, range(len(dv)), _STATE_REFS)
        return self._kernel(static, len(pv), pv[0].sharding, donated)(pv, dv, gv, kept, hp)

    def _hyper_values(self, group, params):
        """The group's hyper-parameters as the update receives them: numbers through ``scalar`` (values in a
        compiled program), Tensors (a Tensor lr) as their values, flags such as ``maximize`` as they are."""
        note_optimizer(self)
        hp = {}
        for k in self._hyper:
            v = group[k]
            if isinstance(v, Tensor):
                if STATE.recorder is not None:
                    STATE.recorder.read((v,))
                    tensor_source(group, k)
                hp[k] = v._d
            elif type(v) is tuple and any(isinstance(x, Tensor) for x in v):  # Tensor betas (OneCycleLR's cycle
                if STATE.recorder is not None:                                  # makes them (float, Tensor))
                    STATE.recorder.read([x for x in v if isinstance(x, Tensor)])
                    tensor_source(group, k)
                    static_flag(group, k)  # (its numbers baked in and guarded)
                hp[k] = tuple(x._d if isinstance(x, Tensor) else x for x in v)
            elif isinstance(v, bool) or v is None:
                hp[k] = static_flag(group, k)
            else:
                hp[k] = scalar(group, k)
        return hp

    _tensor_step = True  # 'step' is a scalar Tensor (SparseAdam and LBFGS keep Python numbers)

    def _after_load(self):
        if not self._tensor_step:
            return
        # counts that are equal become one array again (as they were before saving: see _share_steps)
        counts = [st["step"] for st in self.state.values() if isinstance(st, dict)
                  and isinstance(st.get("step"), Tensor) and st["step"].dim() == 0]
        first = {}
        for t, v in zip(counts, jax.device_get([t._d for t in counts])):
            key = (v.tobytes(), v.dtype.str, str(t.device))  # bitwise equal: -0.0 is not 0.0
            t._v = first.setdefault(key, t._v)

    # subclass API ----------------------------------------------------------------------------------------
    def _prepare_state(self, p, group):
        """Create the state of a parameter about to be updated for the first time."""
        st = self.state[p]
        if not st:
            creating_state()
            st.update(self._init_state(p, group))

    def _state_keys(self, group):
        raise NotImplementedError(f"{type(self).__name__} must define _state_keys")

    def _init_state(self, p, group):
        raise NotImplementedError(f"{type(self).__name__} must define _init_state")

    def _static(self, group):
        """Hashable flags of the group that change the update's structure (amsgrad, nesterov...)."""
        return {}

    @staticmethod
    def _update(params, grads, states, hp, **static):
        raise NotImplementedError("an Optimizer subclass must define _update")


_STATE_REFS = itertools.repeat(5)


def _flat_update(update, static, n, mask, plain, tensor_hp):
    """``update`` as a function of flat arrays (parameters, gradients, state Tensors, Tensor hyper-parameters) with
    the other hyper-parameters as the static ``hp``, returning the new parameters and state Tensors flat."""
    def run(*vals, hp):
        pv, gv, rest = list(vals[:n]), list(vals[n:2 * n]), iter(vals[2 * n:])
        sv = [[next(rest) if m else v for m, v in zip(mrow, prow)] for mrow, prow in zip(mask, plain)]
        hps = dict(hp)
        for (k, i), v in zip(tensor_hp, rest):
            hps[k] = v if i is None else (*hps[k][:i], v, *hps[k][i + 1:])
        new_p, new_s = update(pv, gv, sv, hps, **static)
        return (*new_p, *(v for row, mrow in zip(new_s, mask) for v, m in zip(row, mrow) if m))
    return run


def _joining(update, donated):
    """``update(params, grads, states, hp)`` as a function of the donated and the kept state values apart."""
    def run(pv, dv, gv, kept, hp):
        d, k = iter(dv), iter(kept)
        return update(pv, gv, [[next(d) if m else next(k) for m in row] for row in donated], hp)
    return run


def _share_steps(rows, new_rows, k):
    """Parameters whose step counts were one array get one array back. The new count is a function of the old
    count alone (``step + 1`` in every built-in update), so equal inputs give equal outputs; sharing the array is
    invisible (arrays are immutable: an in-place op on one count gives that Tensor a new array) but lets
    ``torchish.compile`` pass the counts as ONE input and output, with the bias corrections computed once instead
    of once per parameter (PyTorch keeps a count per parameter; optax keeps one)."""
    first = {}
    out = []
    for row, new_row in zip(rows, new_rows):
        new_row = list(new_row)
        v = row[k]
        if type(v) is lazy.LazyValue and v.value is not None:  # materialised: it stands for its array (which
            v = v.value                                         # only one of the Tensors holding it was handed)
        new_row[k] = first.setdefault(id(v), new_row[k])
        out.append(new_row)
    return out


def _hp_value(v):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return float(v)  # one weakly-typed float64 argument whatever the Python type: no retrace for 0 vs 0.9
    if isinstance(v, tuple):
        return tuple(_hp_value(x) for x in v)
    if isinstance(v, Tensor):
        return v._d
    return v


def _hp_values(hp):
    return {k: _hp_value(v) for k, v in hp.items()}
