"""Schedulers that decay the learning rate by a rule of the epoch: LambdaLR, MultiplicativeLR, StepLR, MultiStepLR,
ConstantLR, LinearLR, ExponentialLR, PolynomialLR and CosineAnnealingLR.

Like PyTorch's, most are chainable: ``get_lr()`` scales the group's *current* ``lr`` (so several schedulers can act
on one optimizer), and ``_get_closed_form_lr()`` computes the value from ``base_lrs`` for the deprecated
``step(epoch)``. The arithmetic follows PyTorch's order of operations, so the sequences agree to the last bit.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter

from ._schedulers_base import (LRScheduler, functions_state, group_values, load_functions_state,
                               warn_if_called_outside_step)


class _FunctionScheduler(LRScheduler):
    """A scheduler driven by user functions of the epoch, one per parameter group (``lr_lambda`` may be one
    function for all groups). Plain functions are not part of ``state_dict()``; callable objects save their
    ``__dict__``."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        self._check_lambdas()
        super().__init__(optimizer, last_epoch)

    def _check_lambdas(self):
        pass

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = functions_state(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict):
        saved = state_dict["lr_lambdas"]
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "lr_lambdas"})
        load_functions_state(self.lr_lambdas, saved)


class LambdaLR(_FunctionScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``.

    Args:
        optimizer: the wrapped optimizer.
        lr_lambda: a function of the epoch giving a factor, or a list of them (one per parameter group).
        last_epoch: index of the last epoch (``-1`` starts the schedule).

    Example::

        sched = LambdaLR(opt, lr_lambda=lambda epoch: 0.95 ** epoch)
    """

    def get_lr(self):
        warn_if_called_outside_step(self)
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_FunctionScheduler):
    """Multiply every group's current ``lr`` by ``lr_lambda(epoch)`` each epoch.

    Example::

        sched = MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.95)
    """

    def _check_lambdas(self):
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        return [group["lr"] * fn(self.last_epoch) for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs.

    Example::

        sched = StepLR(opt, step_size=30, gamma=0.1)   # 0.05 until epoch 30, 0.005 until 60, ...
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each milestone epoch (by ``gamma ** n`` at a milestone listed
    ``n`` times).

    Example::

        sched = MultiStepLR(opt, milestones=[30, 80], gamma=0.1)
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self.last_epoch not in self.milestones:
            return group_values(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the learning rate by ``factor`` for the first ``total_iters`` epochs, then restore it.

    Example::

        sched = ConstantLR(opt, factor=0.5, total_iters=4)
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        factor = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base_lr * factor for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs.

    Example::

        sched = LinearLR(opt, start_factor=0.25, total_iters=4)   # warm-up
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer, "lr")
        delta = self.end_factor - self.start_factor
        # the ratio of factor(epoch) to factor(epoch - 1)
        ratio = 1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        delta = self.end_factor - self.start_factor
        factor = self.start_factor + delta * min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * factor for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch.

    Example::

        sched = ExponentialLR(opt, gamma=0.9)
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self._is_initial:  # resuming must not step one epoch ahead
            return group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the learning rate as ``(1 - epoch / total_iters) ** power`` until it reaches 0 at ``total_iters``.

    Example::

        sched = PolynomialLR(opt, total_iters=4, power=2.0)
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer, "lr")
        t, n = self.last_epoch, self.total_iters
        decay = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        factor = (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
        return [base_lr * factor for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal the learning rate along a cosine from ``initial_lr`` to ``eta_min`` over ``T_max`` epochs (and back
    up over the next ``T_max``: the schedule is periodic, without restarts).

    The update is PyTorch's recursive form, ``lr_t = eta_min + (lr_{t-1} - eta_min) * (1 + cos(pi t / T)) /
    (1 + cos(pi (t-1) / T))``, so it composes with other schedulers acting on the same optimizer.

    Example::

        sched = CosineAnnealingLR(opt, T_max=50, eta_min=1e-4)
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        if self._step_count == 1 and t > 0:  # first step after resuming: the closed form
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(t * math.pi / T)) / 2 for base_lr in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:  # leaving the minimum: the recursion would divide by zero
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self):
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        return [eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * t / T)) / 2 for base_lr in self.base_lrs]
