"""The Optimizer base: PyTorch's surface (``param_groups``, ``state``, ``state_dict``, ``zero_grad``, hooks,
``step(closure)``) over a pure per-group update.

A subclass defines ``_init_state(p)`` (the per-parameter state as Tensors, PyTorch's keys) and
``_update(params, grads, states, hp)``: a pure JAX function over the lists of one group's parameters that have a
gradient, returning new parameters and new states. The base runs it as ONE cached jitted call per group (not one
dispatch per parameter) and writes the results back into the same Tensor objects in place, so that
``torchish.compile`` sees them as state. Hyper-parameters are read with ``compile.scalar`` and passed as values:
changing ``group['lr']`` between steps neither recompiles nor retraces.
"""
from __future__ import annotations

import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from ..autograd.graph import RemovableHandle
from ..autograd.grad_mode import STATE, no_grad
from ..compile.recorder import scalar
from ..ops import lazy, tracing


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_GLOBAL_PRE_HOOKS: dict = OrderedDict()
_GLOBAL_POST_HOOKS: dict = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    handle = RemovableHandle(_GLOBAL_PRE_HOOKS)
    _GLOBAL_PRE_HOOKS[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    handle = RemovableHandle(_GLOBAL_POST_HOOKS)
    _GLOBAL_POST_HOOKS[handle.id] = hook
    return handle


class Optimizer:
    """Base class of all optimizers. Subclasses set ``_hyper`` (the numeric hyper-parameters passed to the
    update as values), and implement ``_init_state`` and ``_update``."""

    _hyper: tuple = ("lr",)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._kernels = {}
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ---------------------------------------------------------------------------------------------------------
    def __repr__(self):
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += "\nParameter Group {0}".format(i)
            for key in sorted(group.keys()):
                if key != "params":
                    out += "\n    {0}: {1}".format(key, group[key])
        return out + "\n)"

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._kernels = {}
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
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
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True):
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
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _run_pre_hooks(self, args, kwargs):
        for hook in itertools.chain(_GLOBAL_PRE_HOOKS.values(), self._optimizer_step_pre_hooks.values()):
            res = hook(self, args, kwargs)
            if res is not None:
                if not (isinstance(res, tuple) and len(res) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {res}.")
                args, kwargs = res
        return args, kwargs

    def _run_post_hooks(self, args, kwargs):
        for hook in itertools.chain(self._optimizer_step_post_hooks.values(), _GLOBAL_POST_HOOKS.values()):
            hook(self, args, kwargs)

    # ---------------------------------------------------------------------------------------------------------
    # step

    @no_grad()
    def step(self, closure=None):
        """Update every parameter that has a gradient (one jitted call per group). ``closure`` re-evaluates
        the model and returns the loss (it runs with gradients enabled)."""
        args, kwargs = self._run_pre_hooks((closure,), {})
        closure = args[0] if args else closure
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._step_group(group)
        self._run_post_hooks(args, kwargs)
        return loss

    def _step_group(self, group):
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return
        for p in params:
            if p.grad.is_sparse:
                raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")
            st = self.state[p]
            if not st:
                st.update(self._init_state(p, group))
        keys = self._state_keys(group)
        states = [[self.state[p][k] for k in keys] for p in params]
        hp = {k: scalar(group, k) if isinstance(group[k], (int, float)) and not isinstance(group[k], bool)
              else group[k] for k in self._hyper}
        static = self._static(group)
        pv = [p._d for p in params]
        gv = [p.grad._d for p in params]
        sv = [[s._d if isinstance(s, Tensor) else s for s in row] for row in states]
        if tracing.active() or STATE.tracing:
            new_p, new_s = self._update(pv, gv, sv, hp, **static)
        else:
            key = (tuple(sorted(static.items())), len(params))
            k = self._kernels.get(key)
            if k is None:
                fn = functools.partial(self._update, **static)
                k = self._kernels[key] = jax.jit(fn)
            new_p, new_s = k(lazy.concrete_all(pv), lazy.concrete_all(gv), sv, _hp_values(hp))
        for p, v in zip(params, new_p):
            p._set_value(v)
        for row, new_row in zip(states, new_s):
            for s, v in zip(row, new_row):
                if isinstance(s, Tensor):
                    s._set_value(v)

    # subclass API ----------------------------------------------------------------------------------------
    def _state_keys(self, group):
        raise NotImplementedError

    def _init_state(self, p, group):
        raise NotImplementedError

    def _static(self, group):
        """Hashable flags of the group that change the update's structure (amsgrad, nesterov...)."""
        return {}

    @staticmethod
    def _update(params, grads, states, hp, **static):
        raise NotImplementedError

    # ---------------------------------------------------------------------------------------------------------
    # state_dict

    def state_dict(self):
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}`` as PyTorch."""
        index, start = {}, 0
        groups = []
        for g in self.param_groups:
            for p in g["params"]:
                if id(p) not in index:
                    index[id(p)] = start
                    start += 1
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        state = {index[id(p)]: {k: (v.detach().clone() if isinstance(v, Tensor) else copy.deepcopy(v))
                                for k, v in s.items()}
                 for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = {"state": state_dict["state"], "param_groups": state_dict["param_groups"]}
        groups, saved = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {old: p for g, s in zip(groups, saved) for old, p in zip(s["params"], g["params"])}
        self.state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            key = int(k) if not isinstance(k, int) else k
            if key not in id_map:
                continue
            p = id_map[key]
            self.state[p] = {name: self._cast_state(p, name, val) for name, val in v.items()}
        for g, s in zip(groups, saved):
            for k, v in s.items():
                if k != "params":
                    g[k] = v

    def _cast_state(self, p, name, val):
        from ..ops.convert import to
        if not isinstance(val, Tensor):
            return val
        if name == "step":
            return val.detach().clone()
        return to(val.detach(), dtype=p.dtype, device=p.device).clone()


def _hp_values(hp):
    return {k: (v._d if isinstance(v, Tensor) else v) for k, v in hp.items()}


def step_tensor(p):
    """PyTorch keeps the step count of Adam-style optimizers as a float32 scalar tensor."""
    return Tensor._make(jnp.zeros((), jnp.float32))


def params_of(group):
    return group["params"]
