"""Calling a module: ``__call__`` runs forward pre-hooks, the forward, forward hooks and sets up backward hooks,
in PyTorch's order (global hooks first, then the module's; ``always_call`` hooks also run when forward raises)."""
from __future__ import annotations

import functools
import warnings

from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..autograd.graph import RemovableHandle
from ._hooks import GLOBAL, BackwardHook

_MIXED = ("Cannot use both regular backward hooks and full backward hooks on a single Module. Please use only one "
          "of them.")


def _register(table, hook, prepend, *extras):
    handle = RemovableHandle(table, *extras)
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


class CallMixin:
    """Hook registration and ``__call__`` for :class:`~torchish.nn.Module`."""

    # ---------------------------------------------------------------------------------------------------------
    # registration

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """``hook(module, args) -> None or new args`` (``(module, args, kwargs) -> None or (args, kwargs)`` with
        ``with_kwargs``) runs before forward."""
        handle = _register(self._forward_pre_hooks, hook, prepend, self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """``hook(module, args, output) -> None or new output`` runs after forward (``(module, args, kwargs,
        output)`` with ``with_kwargs``; also when forward raises with ``always_call``)."""
        handle = _register(self._forward_hooks, hook, prepend, self._forward_hooks_with_kwargs,
                           self._forward_hooks_always_called)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_output) -> None or new grad_output`` runs when the output gradients are ready."""
        return _register(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_input, grad_output) -> None or new grad_input`` runs when the gradients w.r.t. the
        module's inputs are computed; a returned tuple replaces what flows on to the inputs."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(_MIXED)
        self._is_full_backward_hook = True
        return _register(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated: use :meth:`register_full_backward_hook`. As PyTorch's, the hook goes on the ``grad_fn`` of
        the module's (first) output: ``grad_input`` holds the gradients of that last operation's inputs (for a
        Linear: bias, input, weight.T), and a returned tuple replaces them."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(_MIXED)
        self._is_full_backward_hook = False
        return _register(self._backward_hooks, hook, False)

    def _get_backward_hooks(self):
        """``(full hooks, non-full hooks)`` as PyTorch's: the global backward hooks are full, the module's are
        non-full when they came from :meth:`register_backward_hook`."""
        full = list(GLOBAL.backward.values())
        if self._is_full_backward_hook is False:
            return full, list(self._backward_hooks.values())
        return full + list(self._backward_hooks.values()), []

    def _get_backward_pre_hooks(self):
        return list(GLOBAL.backward_pre.values()) + list(self._backward_pre_hooks.values())

    # ---------------------------------------------------------------------------------------------------------
    # calling

    def _call_impl(self, *args, **kwargs):
        forward = self.forward
        if STATE.recorder is not None:  # torchish.compile guards on the training flag of every module it calls
            STATE.recorder.module(self)
        if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks or self._forward_pre_hooks
                or GLOBAL.any_call_hooks()):
            return forward(*args, **kwargs)
        state = {"args": args, "kwargs": kwargs, "result": None, "called": set()}
        try:
            return self._call_with_hooks(forward, state)
        except Exception:
            self._run_always_called(state)
            raise

    def __call__(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def compile(self, *args, **kwargs):
        """``Module.compile()``: calls of this module run through ``torchish.compile`` (same arguments), in place —
        the module itself stays the object you hold, its parameters and state dict unchanged."""
        from ..compile import compile as compile_fn
        self.__dict__["_compiled_call_impl"] = compile_fn(self._call_impl, *args, **kwargs)

    def _call_with_hooks(self, forward, state):
        args, kwargs = state["args"], state["kwargs"]
        backward_pre = self._get_backward_pre_hooks() if (self._backward_pre_hooks or GLOBAL.backward_pre) else []
        backward, non_full = self._get_backward_hooks()
        for hook_id, hook in (*GLOBAL.forward_pre.items(), *self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if isinstance(res, tuple) and len(res) == 2:
                        args, kwargs = res
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {res}.")
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
            state["args"], state["kwargs"] = args, kwargs
        bw_hook, raw_args = None, args
        if backward or backward_pre:
            bw_hook = BackwardHook(self, backward, backward_pre)
            args = bw_hook.setup_input_hook(args)
            state["args"] = args
        result = forward(*args, **kwargs)
        state["result"] = result
        for hook_id, hook in (*GLOBAL.forward.items(), *self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called or hook_id in GLOBAL.forward_always_called:
                state["called"].add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs or hook_id in GLOBAL.forward_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
                state["result"] = result
        if non_full:
            _non_full_backward_hooks(self, non_full, raw_args, result)
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)) and not (non_full and not backward_pre):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(result)}", stacklevel=3)
            result = bw_hook.setup_output_hook(result)
        return result

    def _run_always_called(self, state):
        """After forward raised: run the ``always_call`` forward hooks that have not run yet (their errors are
        turned into warnings so the original exception propagates)."""
        args, kwargs, result, called = state["args"], state["kwargs"], state["result"], state["called"]
        for hook_id, hook in GLOBAL.forward.items():
            if hook_id in GLOBAL.forward_always_called and hook_id not in called:
                try:
                    res = hook(self, args, result)
                    if res is not None:
                        result = res
                except Exception as e:
                    warnings.warn("global module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {e}", stacklevel=3)
        for hook_id, hook in self._forward_hooks.items():
            if hook_id in self._forward_hooks_always_called and hook_id not in called:
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        res = hook(self, args, kwargs, result)
                    else:
                        res = hook(self, args, result)
                    if res is not None:
                        result = res
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {e}", stacklevel=3)


def _non_full_backward_hooks(module, hooks, inputs, result):
    """PyTorch's legacy module backward hooks: each is registered on the ``grad_fn`` of the first tensor of the
    output, called as ``hook(module, grad_input, grad_output)`` with that node's gradients."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:  # (the node gives PyTorch's grad_inputs: a 2-d linear's are addmm's, bias first)
        grad_fn.register_hook(functools.partial(_call_module_hook, hook, module))
    _warn_non_full_backward_hook(inputs, result, grad_fn)


def _call_module_hook(hook, module, grad_inputs, grad_outputs):
    return hook(module, grad_inputs, grad_outputs)


def _warn_non_full_backward_hook(inputs, result, grad_fn):
    """PyTorch's ``Module._maybe_warn_non_full_backward_hook``: the FutureWarning saying when a hook registered with
    ``register_backward_hook`` misses gradients (the output's ``grad_fn`` is not the module's whole computation)."""
    tail = " Please use register_full_backward_hook to get the documented behavior."
    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        warnings.warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                      "Tensors is deprecated and will be removed in future versions. This hook will be missing some "
                      "of the grad_output." + tail, FutureWarning, stacklevel=4)
        return
    if not all(isinstance(i, Tensor) for i in inputs):
        warnings.warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                      "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                      "missing some of the grad_input." + tail, FutureWarning, stacklevel=4)
        return
    out_grad_fns = {id(r.grad_fn): r.grad_fn for r in result if r.grad_fn is not None}
    if not out_grad_fns or (len(out_grad_fns) == 1 and id(grad_fn) not in out_grad_fns):
        warnings.warn("Using a non-full backward hook when outputs are nested in python data structure is deprecated "
                      "and will be removed in future versions. This hook will be missing some grad_output.",
                      FutureWarning, stacklevel=4)
    elif len(out_grad_fns) > 1:
        warnings.warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_output." + tail, FutureWarning, stacklevel=4)
    else:
        input_fns = {id(i.grad_fn) for i in inputs if i.grad_fn is not None}
        next_fns = set()
        for node, _ in grad_fn.next_functions:
            if type(node).__name__ == "BackwardHookFunctionBackward":  # torchish's own wrapping of the inputs
                next_fns.update(id(n) for n, _ in node.next_functions)
            else:
                next_fns.add(id(node))
        if input_fns != next_fns:
            warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_input." + tail, FutureWarning, stacklevel=4)
