"""Schedulers with cycles: CyclicLR, OneCycleLR (both may cycle the momentum too, or Adam's ``beta1``) and
CosineAnnealingWarmRestarts.

They compute the learning rate in closed form from the step count (not from the group's current ``lr``), with
PyTorch's formulas in PyTorch's order of operations.
"""
from __future__ import annotations

import math
import types

from ._schedulers_base import (LRScheduler, check_optimizer, flag_on, format_param, set_group_value, set_momentum,
                               warn_if_called_outside_step)


def _setup_momentum(scheduler, optimizer, base_momentum, max_momentum, last_epoch):
    """Validate ``cycle_momentum`` and, for a new schedule, start every group at ``max_momentum`` (recording both
    bounds in the group, as PyTorch does). Returns ``(base_momentums, max_momentums)``."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    max_momentums = format_param("max_momentum", optimizer, max_momentum)
    base_momentums = format_param("base_momentum", optimizer, base_momentum)
    if last_epoch == -1:
        for m_momentum, b_momentum, group in zip(max_momentums, base_momentums, optimizer.param_groups):
            set_momentum(group, m_momentum, scheduler.use_beta1)
            group["max_momentum"] = m_momentum
            group["base_momentum"] = b_momentum
    return base_momentums, max_momentums


class CyclicLR(LRScheduler):
    """Cycle the learning rate between ``base_lr`` and ``max_lr`` (Smith's cyclical learning rates), stepping once
    per batch. With ``cycle_momentum`` the momentum (``betas[0]`` for Adam-like optimizers) cycles inversely between
    ``max_momentum`` and ``base_momentum``.

    Args:
        optimizer: the wrapped optimizer.
        base_lr, max_lr: the bounds of the cycle (a number, or one per group).
        step_size_up: iterations of the rising half; ``step_size_down`` of the falling half (default: the same).
        mode: ``'triangular'`` (constant amplitude), ``'triangular2'`` (amplitude halved every cycle) or
            ``'exp_range'`` (amplitude scaled by ``gamma ** iteration``).
        gamma: the base of ``'exp_range'``.
        scale_fn: a custom amplitude function (replaces ``mode``); ``scale_mode`` says whether it is given the
            cycle number (``'cycle'``) or the iteration (``'iterations'``).
        cycle_momentum, base_momentum, max_momentum: momentum cycling.
        last_epoch: index of the last batch (``-1`` starts the schedule).

    Example::

        opt = torchish.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4)
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                set_group_value(group, "lr", lr)
        self.max_lrs = format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _setup_momentum(self, optimizer, base_momentum, max_momentum,
                                                                      last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        """The built-in modes fix ``scale_mode``; a custom ``scale_fn`` keeps the one given."""
        if self._scale_fn_custom is not None:
            return
        if self.mode in ("triangular", "triangular2"):
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """The amplitude factor at ``x`` (a cycle number or an iteration, per ``scale_mode``)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        warn_if_called_outside_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # position within the cycle, in [0, 1)
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(at)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base_m, max_m in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                momentum = max_m - (max_m - base_m) * scale_factor * self.scale_fn(at)
                set_momentum(group, momentum, self.use_beta1)
        return lrs

    def state_dict(self):
        """The state without the custom ``scale_fn`` (a callable object saves its ``__dict__``)."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        fn_state = state_dict["_scale_fn_custom"]
        super().load_state_dict({k: v for k, v in state_dict.items() if k != "_scale_fn_custom"})
        if fn_state is not None:
            self._scale_fn_custom.__dict__.update(fn_state)
        self._init_scale_fn()


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the learning rate rises from ``max_lr / div_factor`` to ``max_lr`` over the first
    ``pct_start`` of ``total_steps``, then anneals to ``initial_lr / final_div_factor`` (with ``three_phase``, it
    first comes back down to ``initial_lr`` symmetrically). The momentum (or Adam's ``beta1``) moves the other way.

    Args:
        optimizer: the wrapped optimizer.
        max_lr: the peak learning rate (a number or one per group).
        total_steps: the number of steps; or give ``epochs`` and ``steps_per_epoch``.
        pct_start: the fraction of the steps spent rising.
        anneal_strategy: ``'cos'`` or ``'linear'``.
        cycle_momentum, base_momentum, max_momentum: momentum cycling.
        div_factor, final_div_factor: ``initial_lr = max_lr / div_factor``, ``min_lr = initial_lr /
            final_div_factor``.
        three_phase: use the three-phase schedule of fastai.
        last_epoch: index of the last batch (``-1`` starts the schedule).

    Example::

        sched = OneCycleLR(opt, max_lr=0.1, total_steps=100)
        for batch in data:
            train(batch); opt.step(); sched.step()
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        self._schedule_phases = self._phases(pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max_lr in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = group_max_lr / div_factor
                group["max_lr"] = group_max_lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _setup_momentum(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _phases(self, pct_start, three_phase):
        """Each phase: the step it ends at and the group keys of its start and end values."""
        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
            return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
                    "start_momentum": start_momentum, "end_momentum": end_momentum}

        rise_end = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if three_phase:
            return [phase(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                    phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                          "max_momentum"),
                    phase(last, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        return [phase(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                phase(last, "max_lr", "min_lr", "base_momentum", "max_momentum")]

    @staticmethod
    def _annealing_cos(start, end, pct):
        """Cosine from ``start`` (pct 0) to ``end`` (pct 1)."""
        cos_out = math.cos(math.pi * pct) + 1
        return end + (start - end) / 2.0 * cos_out

    @staticmethod
    def _annealing_linear(start, end, pct):
        """Line from ``start`` (pct 0) to ``end`` (pct 1)."""
        return (end - start) * pct + start

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    def get_lr(self):
        warn_if_called_outside_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        last = len(self._schedule_phases) - 1
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]], group[phase["end_momentum"]],
                                                     pct)
                        set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = end_step
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``initial_lr`` to ``eta_min`` over ``T_i`` epochs, then a restart; each period is
    ``T_mult`` times the previous one (``T_0`` first). ``step(epoch)`` accepts fractional epochs (e.g.
    ``epoch + batch / n_batches``) and jumps to that point.

    Example::

        sched = CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2, eta_min=1e-5)
        for epoch in range(30):
            for i, batch in enumerate(data):
                train(batch); opt.step(); sched.step(epoch + i / len(data))
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        cos_out = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base_lr - self.eta_min) * cos_out / 2 for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or go to ``epoch`` (a float allowed): ``T_cur`` and ``T_i`` follow the restarts."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # n complete periods: T_0 (T_mult^n - 1) / (T_mult - 1) <= epoch
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with flag_on(self, "_get_lr_called_within_step"):
            values = self.get_lr()
        self._set_lrs(values)
