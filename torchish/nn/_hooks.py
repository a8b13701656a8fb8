"""Module hooks: the global registries, and full backward hooks built from identity autograd Functions.

A full backward hook sees ``grad_input`` (gradients w.r.t. the module's tensor inputs) and ``grad_output``
(w.r.t. its tensor outputs). As in PyTorch, :class:`BackwardHook` wraps the module's tensor inputs, and then its
tensor outputs, in :class:`BackwardHookFunction` (an identity Function). The node of the outputs' identity sees
``grad_output`` first (the backward pre-hooks run there and may replace it); the node of the inputs' identity sees
``grad_input`` last (the backward hooks run there and may replace it, changing what flows to the inputs).
"""
from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.graph import RemovableHandle
from ..autograd.grad_mode import STATE
from ..ops.stats import _user_stacklevel


class _GlobalHooks:
    """The hooks registered for every module (``register_module_forward_hook`` and friends)."""

    def __init__(self):
        self.forward_pre = OrderedDict()
        self.forward = OrderedDict()
        self.forward_with_kwargs = OrderedDict()
        self.forward_always_called = OrderedDict()
        self.backward = OrderedDict()
        self.backward_pre = OrderedDict()
        self.is_full_backward = None
        self.buffer_registration = OrderedDict()
        self.module_registration = OrderedDict()
        self.parameter_registration = OrderedDict()

    def any_call_hooks(self):
        return bool(self.forward_pre or self.forward or self.backward or self.backward_pre)


GLOBAL = _GlobalHooks()

_MIXED = ("Cannot use both regular backward hooks and full backward hooks as a global Module hook. Please use only "
          "one of them.")


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, args) -> None or new args`` runs before every module's forward."""
    handle = RemovableHandle(GLOBAL.forward_pre)
    GLOBAL.forward_pre[handle.id] = hook
    return handle


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False) -> RemovableHandle:
    """``hook(module, args, output)`` (``(module, args, kwargs, output)`` with ``with_kwargs``) runs after every
    module's forward; a returned value replaces the output."""
    handle = RemovableHandle(GLOBAL.forward, GLOBAL.forward_with_kwargs, GLOBAL.forward_always_called)
    GLOBAL.forward[handle.id] = hook
    if with_kwargs:
        GLOBAL.forward_with_kwargs[handle.id] = True
    if always_call:
        GLOBAL.forward_always_called[handle.id] = True
    return handle


def register_module_backward_hook(hook) -> RemovableHandle:
    """Deprecated global backward hook; torchish runs it as a full backward hook."""
    if GLOBAL.is_full_backward is True:
        raise RuntimeError(_MIXED)
    GLOBAL.is_full_backward = False
    handle = RemovableHandle(GLOBAL.backward)
    GLOBAL.backward[handle.id] = hook
    return handle


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, grad_output) -> None or new grad_output`` for every module."""
    handle = RemovableHandle(GLOBAL.backward_pre)
    GLOBAL.backward_pre[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """``hook(module, grad_input, grad_output) -> None or new grad_input`` for every module."""
    if GLOBAL.is_full_backward is False:
        raise RuntimeError(_MIXED)
    GLOBAL.is_full_backward = True
    handle = RemovableHandle(GLOBAL.backward)
    GLOBAL.backward[handle.id] = hook
    return handle


def _registration_hook(table):
    def register(hook) -> RemovableHandle:
        handle = RemovableHandle(table)
        table[handle.id] = hook
        return handle
    return register


register_module_buffer_registration_hook = _registration_hook(GLOBAL.buffer_registration)
register_module_module_registration_hook = _registration_hook(GLOBAL.module_registration)
register_module_parameter_registration_hook = _registration_hook(GLOBAL.parameter_registration)


class WrappedHook:
    """A hook that receives its module (held weakly) as first argument (``load_state_dict`` pre-hooks)."""

    def __init__(self, hook, module=None):
        self.hook = hook
        self.with_module = module is not None
        self.module = weakref.ref(module) if module is not None else None

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        return {"hook": self.hook, "with_module": self.with_module,
                "module": self.module() if self.with_module else None}

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        self.module = weakref.ref(state["module"]) if self.with_module else None


# ----------------------------------------------------------------------------------------------------------------
# full backward hooks


class BackwardHookFunction(Function):
    """Identity on any number of tensors; its node is where a module's backward hooks attach."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _pack_with_none(indices, values, size):
    res = [None] * size
    for idx, val in zip(indices, values):
        res[idx] = val
    return tuple(res)


def _unpack_none(indices, values):
    return tuple(values[idx] for idx in indices)


class BackwardHook:
    """Runs a module's full backward (pre-)hooks for one forward call.

    ``setup_input_hook(args)`` before the forward and ``setup_output_hook(result)`` after it replace the tensors
    by identity Function outputs, whose backward nodes carry the hooks.
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    def _input_hook(self, grad_input, _grad_output):
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the module's outputs (double backward)
            return None
        res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                   f"expected {len(res)}")
            res = out
        self.grad_outputs = None
        return _unpack_none(self.input_tensors_index, res)

    def _output_hook(self, grad_output):
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
        for hook in self.user_pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(new)}, "
                                   f"but expected {len(self.grad_outputs)}")
            self.grad_outputs = tuple(new)
        local = self.grad_outputs
        if self.input_tensors_index is None:  # no input requires grad: the hooks run here, with grad_input all None
            if self.user_hooks:
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.", stacklevel=_user_stacklevel())
            grad_inputs = _pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_tensors_index)

    def _apply_on_tensors(self, attach, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (STATE.grad_enabled and any(t.requires_grad for t in tensors)):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        if not isinstance(new, tuple):
            new = (new,)
        node = next(t.grad_fn for t in new if t.grad_fn is not None)
        attach(node)
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(*out)), idx

    def setup_input_hook(self, args):
        def hook(grad_input, grad_output):  # (PyTorch's name for it, in the errors its results raise)
            return self._input_hook(grad_input, grad_output)
        res, idx = self._apply_on_tensors(lambda node: node.register_hook(hook), args)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        args = (result,) if single else result
        def hook(grad_output):
            return self._output_hook(grad_output)
        res, idx = self._apply_on_tensors(lambda node: node.register_prehook(hook), args)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        return res[0] if single else res
