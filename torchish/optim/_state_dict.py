"""``Optimizer.state_dict`` / ``load_state_dict`` and their hooks, with PyTorch's layout:
``{'state': {index: {key: value}}, 'param_groups': [{..., 'params': [indices]}]}``.

``state_dict()`` returns the live state Tensors, as PyTorch does (copy it to keep a snapshot). ``load_state_dict``
casts floating state to each parameter's dtype and device (``'step'`` keeps its own), as PyTorch does, and keeps a
Tensor that needs no cast as it is: the loaded optimizer then shares it with the state dict's source (an update of
one is seen by the other), as in PyTorch. One exception: where the optimizer already holds a state Tensor of the
same key, shape and dtype, the loaded value is written into that Tensor object instead, so that a
``torchish.compile``'d training step that ran before (and holds it) keeps working after a checkpoint is loaded
(PyTorch replaces the object; its compiled steps recompile on the new one).
"""
from __future__ import annotations

import copy
import itertools
from collections import OrderedDict, defaultdict

from .._dtype import float32
from .._tensor import Tensor
from ..autograd.graph import STRUCT_EPOCH, RemovableHandle


def _register(hooks, hook, prepend):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class StateDictMixin:
    """The state-dict half of :class:`torchish.optim.Optimizer`."""

    def _init_state_dict_hooks(self, keep=False):
        for name in ("_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks"):
            if not keep or name not in self.__dict__:
                setattr(self, name, OrderedDict())

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` before ``state_dict()`` builds its result."""
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> None | new_state_dict`` after ``state_dict()``."""
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> None | new_state_dict`` before ``load_state_dict``."""
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` after ``load_state_dict``."""
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---------------------------------------------------------------------------------------------------------
    def state_dict(self):
        """The optimizer's state: per-parameter state keyed by the parameter's index over all groups, and the
        groups' hyper-parameters with ``'params'`` as lists of indices."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping, start = {}, 0
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for i, p in enumerate(g["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in g["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        out = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            res = hook(self, out)
            if res is not None:
                out = res
        return out

    def load_state_dict(self, state_dict):
        """Load a state dict made by ``state_dict()`` (of this library or of PyTorch, e.g. through
        ``torchish.load``): the groups must have the same sizes."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            res = hook(self, state_dict)
            if res is not None:
                state_dict = res
        groups = self.param_groups
        saved = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(s["params"] for s in saved),
                          itertools.chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                state[p] = self._cast_state(p, v, _group_flags(k, state_dict["param_groups"]), self.state.get(p))
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.__setstate__({"state": state, "param_groups": new_groups})
        # (the loaded state's shapes are checked against the parameters' at their next step, where PyTorch's
        # in-place updates fail)
        self._unchecked_shapes = {id(p) for p in state if isinstance(p, Tensor)}
        STRUCT_EPOCH[0] += 1  # new group dicts: a compiled step reading the old ones' hyper-parameters is stale
        self._after_load()
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    def _after_load(self):
        """Subclasses tidy the loaded state here (older layouts are converted by ``__setstate__``, as in PyTorch)."""

    def _cast_state(self, p, value, flags, old, key=None):
        """PyTorch's ``_process_value_according_to_param_policy``: floating state takes the parameter's dtype and
        device, ``'step'`` keeps its own (float32 beside the parameter when fused or capturable). A Tensor that
        needs no conversion is kept itself, not copied, unless ``old`` (the state Tensor held before) can take
        the value (see the module's docstring)."""
        if isinstance(value, Tensor):
            if key == "step":
                if flags.get("capturable") or flags.get("fused"):
                    value = value.to(dtype=float32, device=p.device)
            elif p.is_floating_point():
                value = value.to(dtype=p.dtype, device=p.device)
            else:
                value = value.to(device=p.device)
            if (isinstance(old, Tensor) and old is not value and old._v.shape == value._v.shape
                    and old._v.dtype == value._v.dtype and old.device == value.device):
                old._set_value(value._d)
                return old
            return value
        if isinstance(value, dict):
            old = old if isinstance(old, dict) else {}
            return {k: self._cast_state(p, v, flags, old.get(k), key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._cast_state(p, v, flags, None) for v in value)
        return value


def _group_flags(param_id, saved_groups):
    for g in saved_groups:
        if param_id in g["params"]:
            return {"fused": g.get("fused", False), "capturable": g.get("capturable", False)}
    return {}
