"""``torchish.utils.module_tracker.ModuleTracker``: which modules are running now, forward or backward.

As PyTorch's: a forward pre-hook on every module adds its name to :attr:`ModuleTracker.parents` and a forward hook
removes it; for the backward, a multi-grad hook on the module's outputs that require grad adds it back when their
gradients are ready, and one on its inputs removes it when theirs are; once the backward pass ends
``parents`` is ``{"Global"}`` again. Names are the root module's class name and the attribute path below it
(``"Net.fc1"``), found on first sight of each module.

Example::

    >>> with ModuleTracker() as tracker:
    ...     def f(x):
    ...         print(tracker.parents)
    ...         return x
    ...     model(x)
"""
from __future__ import annotations

import logging
import weakref

from .._tensor import Tensor
from ..autograd import engine
from ..autograd.multi_hooks import register_multi_grad_hook
from ..nn._hooks import register_module_forward_hook, register_module_forward_pre_hook
from ._pytree import tree_flatten

logger = logging.getLogger(__name__)

__all__ = ["ModuleTracker"]


class ModuleTracker:
    """A context manager tracking the module hierarchy during execution (see the module's docstring)."""

    def __init__(self) -> None:
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._has_callback = False
        self._hooks = []

    def _maybe_set_engine_callback(self):
        if self._has_callback:
            return

        def callback():
            self.parents = {"Global"}
            self._has_callback = False

        engine.queue_callback(callback)
        self._has_callback = True

    @property
    def is_bw(self):
        """Whether a backward pass is running now."""
        return engine.current_task() is not None

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for child_name, child in mod.named_children():
                self._known_modules[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
            self._seen_modules.add(mod)
        return name

    def _get_append_fn(self, name, is_bw):
        def fn(*args):
            if is_bw:
                self._maybe_set_engine_callback()
            if name in self.parents:
                logger.info("The module hierarchy tracking seems to be broken as this Module was already entered. "
                            "%s during %s", name, "backward" if is_bw else "forward")
            self.parents.add(name)
        return fn

    def _get_pop_fn(self, name, is_bw):
        def fn(*args):
            if name in self.parents:
                self.parents.remove(name)
            else:
                logger.info("The Module hierarchy tracking is confused as we're exiting a Module that was never "
                            "entered. %s during %s", name, "backward" if is_bw else "forward")
        return fn

    def _fw_pre_hook(self, mod, input):
        name = self._get_mod_name(mod)
        self._get_append_fn(name, False)()
        args, _ = tree_flatten(input)
        tensors = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_pop_fn(name, True)))

    def _fw_post_hook(self, mod, input, output):
        name = self._get_mod_name(mod)
        self._get_pop_fn(name, False)()
        args, _ = tree_flatten(output)
        tensors = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        if tensors:
            # (mode "any": torchish may compute several outputs in one node, need_weights MultiheadAttention's
            # output and weights, so an output the loss never reads still gets its None gradient late, from that
            # node; PyTorch's "all" waits only for the outputs the backward reaches, which is, where they are
            # distinct nodes, the first whose gradient is ready)
            self._hooks.append(register_multi_grad_hook(tensors, self._get_append_fn(name, True), mode="any"))

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
