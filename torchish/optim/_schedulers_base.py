"""The learning-rate scheduler base (PyTorch's ``torch.optim.lr_scheduler.LRScheduler``) and the helpers every
scheduler shares.

A scheduler writes each group's new learning rate into ``optimizer.param_groups[i]['lr']``. Learning rates stay
what the user gave: Python numbers (a Tensor ``lr`` is filled in place, as PyTorch does). The optimizers read
``group['lr']`` through ``compile.recorder.scalar``, so under ``torchish.compile`` a new learning rate is a new
value of the compiled program, never a retrace.

``state_dict()`` is every attribute but the optimizer, with PyTorch's attribute names, so a scheduler state saved
by PyTorch loads here and the other way round.
"""
from __future__ import annotations

import contextlib
import functools
import types
import warnings
import weakref

from .._tensor import Tensor
from .optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please use "
    "`scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the closed "
    "form is used instead of the new chainable form, where available. Please open an issue if you are unable to "
    "replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose."
)

_DOCS_URL = "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"


def check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _copy(value):
    """Tensors are cloned so a scheduler never aliases a group's Tensor hyper-parameter; numbers pass through."""
    return value.clone() if isinstance(value, Tensor) else value


def format_param(name, optimizer, param):
    """One value per parameter group: a list/tuple must match the number of groups, a single value is repeated."""
    n = len(optimizer.param_groups)
    if isinstance(param, (list, tuple)):
        if len(param) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has {n}.")
        return [_copy(p) for p in param]
    return [_copy(param) for _ in range(n)]


def group_values(optimizer, key):
    """``[group[key] for every group]`` (Tensors cloned). A missing key raises KeyError."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def set_group_value(group, key, value):
    """Set ``group[key]``: a Tensor entry is filled in place (it may be shared with compiled code) from a number or
    a one-element Tensor (as a 0-dim tensor, never read as a Python float: inside torchish.compile that would break
    the graph), a number is replaced."""
    current = group[key]
    if isinstance(current, Tensor):
        current.fill_(value.squeeze() if isinstance(value, Tensor) and value.dim() != 0 else value)
    else:
        group[key] = value


def set_momentum(group, momentum, use_beta1):
    """Write a cycled momentum: ``betas[0]`` for Adam-like optimizers, ``momentum`` otherwise."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _track_optimizer_step(optimizer):
    """Wrap ``optimizer.step`` (once per optimizer) so it records that it ran: ``scheduler.step()`` warns when it is
    called first. The wrapper holds the optimizer weakly (no reference cycle through the instance attribute)."""
    step = optimizer.step
    if hasattr(step, "_wrapped_by_lr_sched"):
        return
    opt_ref = weakref.ref(optimizer)
    func = step.__func__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return func.__get__(opt, type(opt))(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


@contextlib.contextmanager
def flag_on(scheduler, name):
    """Set the boolean attribute ``name`` for the duration of a block."""
    setattr(scheduler, name, True)
    try:
        yield
    finally:
        setattr(scheduler, name, False)


LIVE: "weakref.WeakSet" = weakref.WeakSet()  # every scheduler alive


def warn_if_called_outside_step(scheduler):
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      UserWarning, stacklevel=3)


class LRScheduler:
    """Base class of the learning-rate schedulers.

    A subclass defines ``get_lr()`` (the next learning rate of every group, called by ``step()`` after
    ``last_epoch`` advanced) and optionally ``_get_closed_form_lr()`` (used by the deprecated ``step(epoch)``).

    Args:
        optimizer: the optimizer whose ``param_groups[i]['lr']`` the scheduler sets.
        last_epoch: index of the last epoch seen. ``-1`` (default) starts a schedule and records each group's
            ``lr`` as ``'initial_lr'``; another value resumes one and needs ``'initial_lr'`` in every group.

    Example::

        sched = torchish.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
        for epoch in range(100):
            train(...); opt.step()
            sched.step()
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        LIVE.add(obj)  # (torchish.compile puts back the schedulers' state a given-up trace changed)
        return obj

    def __init__(self, optimizer, last_epoch=-1):
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                        "last_epoch >= 0.\nThis typically happens when:\n1. You're trying to resume training from a "
                        "checkpoint but haven't properly loaded the optimizer state\n2. You're using last_epoch >= 0 "
                        "for a fresh training run (not recommended)")
        self.base_lrs = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_step(optimizer)
        self._initial_step()

    def _initial_step(self):
        """The step every scheduler takes when it is built: it sets the learning rates of ``last_epoch + 1``."""
        self._step_count = 0
        with flag_on(self, "_is_initial"):
            self.step()

    def state_dict(self):
        """The scheduler's state: every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore a state from ``state_dict()``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last ``step()`` set, one per group."""
        return self._last_lr

    def get_lr(self):
        """The next learning rate of every group (called by ``step()``; use ``get_last_lr()`` to read them)."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr")

    def step(self, epoch=None):
        """Advance the schedule by one epoch (``epoch``, deprecated, jumps to that epoch through the closed form
        where the scheduler has one). Call it after ``optimizer.step()``."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                              "initialization. Please, make sure to call `optimizer.step()` before "
                              f"`lr_scheduler.step()`. See more details at {_DOCS_URL}", UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 "
                              "and later, you should call them in the opposite order: `optimizer.step()` before "
                              "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
                              f"value of the learning rate schedule. See more details at {_DOCS_URL}",
                              UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        with flag_on(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        self._set_lrs(values)

    def _set_lrs(self, values):
        groups = self.optimizer.param_groups
        if len(values) != len(groups):
            raise ValueError(f"{type(self).__name__} computed {len(values)} learning rates for {len(groups)} "
                             "parameter groups")
        for group, lr in zip(groups, values):
            set_group_value(group, "lr", lr)
        self._last_lr = group_values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The old name of ``LRScheduler``, kept as PyTorch keeps it."""


def functions_state(fns):
    """The saved form of a list of user functions: plain functions and lambdas are not saved (``None``); callable
    objects save their ``__dict__``."""
    return [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in fns]


def load_functions_state(fns, saved):
    for fn, state in zip(fns, saved):
        if state is not None:
            fn.__dict__.update(state)
