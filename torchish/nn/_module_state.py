"""``state_dict`` / ``load_state_dict`` for :class:`~torchish.nn.Module`, with PyTorch's keys, hooks, strictness
rules and error messages."""
from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.graph import RemovableHandle
from ._hooks import WrappedHook
from .parameter import is_lazy

EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the keys it did not expect."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _has_own(module, name):
    from .module import Module
    return getattr(type(module), name, None) is not getattr(Module, name)


class StateDictMixin:
    """The state-dict half of :class:`~torchish.nn.Module`."""

    # ---------------------------------------------------------------------------------------------------------
    # hooks

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` collects this module's entries."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata) -> None`` may edit the state_dict in place."""
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook):
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = WrappedHook(hook, self if with_module else None)
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        runs before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys) -> None`` runs after this module and its children loaded."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ---------------------------------------------------------------------------------------------------------
    # saving

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if _has_own(self, "get_extra_state"):
            destination[prefix + EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ``OrderedDict`` of this module's persistent state: parameters and persistent buffers (detached
        unless ``keep_vars``), keyed by dotted names."""
        if args:
            import warnings
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict "
                          "for details.", FutureWarning, stacklevel=2)
            destination = args[0] if destination is None else destination
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            res = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if res is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif res is not None:
                destination = res
        return destination

    # ---------------------------------------------------------------------------------------------------------
    # loading

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update((k, v) for k, v in self._buffers.items()
                           if v is not None and k not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        from .. import __future__ as future
        swap = future.get_swap_module_params_on_conversion()
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                continue
            lazy = is_lazy(param)   # an uninitialized entry of a lazy module takes any value (its hook checked)
            if not lazy and param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = value[0]
            if not lazy and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            if not lazy and param.is_meta and not value.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter in "
                              "the current model, which is a no-op. (Did you mean to pass `assign=True` to assign "
                              "items in the state dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", stacklevel=3)
            try:
                with no_grad():
                    if swap:
                        _swap_loaded(param, value, assign)
                    elif assign:
                        self._assign_loaded(name, param, value)
                    else:
                        param.copy_(value)
            except Exception as ex:  # reported together with the other errors, as PyTorch does
                error_msgs.append(f'While {"swapping" if swap else "copying"} the parameter named "{key}", whose '
                                  "dimensions in the model are "
                                  f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, an "
                                  f"exception occurred : {ex.args}.")
        extra_key = prefix + EXTRA_STATE_KEY_SUFFIX
        if _has_own(self, "set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)
                    if len(head) > 1:
                        if head[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif head[0] not in local_state:
                        unexpected_keys.append(key)

    def _assign_loaded(self, name, param, value):
        from .parameter import Parameter
        if isinstance(param, Parameter):
            if not isinstance(value, Parameter):
                value = Parameter(value, requires_grad=param.requires_grad)
            else:
                value.requires_grad_(param.requires_grad)
        setattr(self, name, value)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict`` into this module and its descendants.

        Returns:
            ``_IncompatibleKeys(missing_keys, unexpected_keys)``. With ``strict`` (the default) any missing or
            unexpected key raises RuntimeError, like shape mismatches always do. With ``assign`` the tensors of the
            state_dict become the module's parameters (keeping ``requires_grad``) instead of being copied.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata
        # children are visited depth first, each post-hook after its subtree (as PyTorch's recursion does)
        stack = [(self, state_dict, "", False)]
        while stack:
            module, local, prefix, done = stack.pop()
            if done:
                keys = _IncompatibleKeys(missing, unexpected)
                for hook in module._load_state_dict_post_hooks.values():
                    if hook(module, keys) is not None:
                        raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                             "expected to return new values, if incompatible_keys need to be "
                                             "modified, it should be done inplace.")
                continue
            meta = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                meta["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local, prefix, meta, True, missing, unexpected, errors)
            stack.append((module, local, prefix, True))
            kids = []
            for name, child in module._modules.items():
                if child is not None:
                    cp = prefix + name + "."
                    kids.append((child, {k: v for k, v in local.items() if k.startswith(cp)}, cp, False))
            stack.extend(reversed(kids))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                    "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)


def _swap_loaded(param, value, assign):
    """``load_state_dict`` under ``torch.__future__.set_swap_module_params_on_conversion(True)``: the parameter or
    buffer swaps contents with what its ``module_load`` returns (a Parameter again for a Parameter)."""
    from ..utils._swap import swap_tensors
    from .parameter import Parameter
    new = param.module_load(value, assign=assign)
    if new is value or new is param:
        raise RuntimeError("module_load returned one of self or other, please .detach() the result if returning one "
                           "of the inputs in module_load")
    if isinstance(param, Parameter):
        if not isinstance(new, Parameter):
            new = Parameter(new, requires_grad=param.requires_grad)
        else:
            new.requires_grad_(param.requires_grad)
    swap_tensors(param, new)
