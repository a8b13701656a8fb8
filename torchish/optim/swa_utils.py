"""``torchish.optim.swa_utils``: Stochastic Weight Averaging and exponential moving averages of a model, as in
PyTorch's ``torch.optim.swa_utils``.

:class:`AveragedModel` keeps a deep copy of a model whose parameters (and, with ``use_buffers=True``, buffers) are
a running average of the model's; :class:`SWALR` anneals every group's learning rate to a constant ``swa_lr``;
:func:`update_bn` recomputes BatchNorm statistics for the averaged weights.

Example::

    swa_model = AveragedModel(model)
    sched = SWALR(opt, swa_lr=0.05, anneal_epochs=5)
    for epoch in range(epochs):
        train(model, opt)
        swa_model.update_parameters(model)
        sched.step()
    update_bn(loader, swa_model)
"""
from __future__ import annotations

import copy
import itertools
import math

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.module import Module
from ..nn.modules.batchnorm import _BatchNorm
from ..ops.creation import tensor
from ._schedulers_base import LRScheduler, format_param, warn_if_called_outside_step

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _is_inexact(t):
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA over lists of tensors: ``ema = decay * ema + (1 - decay) * current`` (``multi_avg_fn``).

    Raises:
        ValueError: ``decay`` outside ``[0, 1]``.
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _num_averaged):
        inexact = bool(ema_param_list) and _is_inexact(ema_param_list[0])
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if inexact:
                p_ema.lerp_(p_model, 1 - decay)
            else:
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean over lists of tensors: ``avg += (current - avg) / (n + 1)`` (``multi_avg_fn``)."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = float(num_averaged) if isinstance(num_averaged, Tensor) else num_averaged
        inexact = bool(averaged_param_list) and _is_inexact(averaged_param_list[0])
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            if inexact:
                p_avg.lerp_(p_model, 1 / (n + 1))
            else:
                p_avg.copy_(p_avg + (p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """A per-tensor EMA ``(ema, current, n) -> decay * ema + (1 - decay) * current`` (``avg_fn``).

    Raises:
        ValueError: ``decay`` outside ``[0, 1]``.
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """A per-tensor running mean ``(avg, current, n) -> avg + (current - avg) / (n + 1)`` (``avg_fn``)."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(pairs):
    """``[(averaged_list, current_list)]``, one entry per (device, dtype) of the averaged tensors, in first-seen
    order: a ``multi_avg_fn`` is given tensors of one kind at a time, as in PyTorch."""
    groups = {}
    for averaged, current in pairs:
        lists = groups.setdefault((str(averaged.device), str(averaged.dtype)), ([], []))
        lists[0].append(averaged)
        lists[1].append(current)
    return list(groups.values())


class AveragedModel(Module):
    """A deep copy of ``model`` (``.module``) whose weights are an average of the weights it is given.

    The first :meth:`update_parameters` copies the model's weights; later ones average them in, by default the
    equal-weight running mean of SWA. ``n_averaged`` (a buffer, so in ``state_dict()``) counts the updates.

    Args:
        model: the model to average.
        device: where the copy lives (default: where ``model`` is).
        avg_fn: ``(averaged, current, n_averaged) -> new averaged``, applied to each tensor.
        multi_avg_fn: ``(averaged_list, current_list, n_averaged)`` updating the averaged tensors in place.
        use_buffers: average the buffers too (otherwise they are copied from ``model`` at each update).

    Example::

        ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
        ema_model.update_parameters(model)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _pairs(self, model):
        """(averaged, current) tensors, detached: parameters, plus buffers when ``use_buffers``."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        return [(a.detach(), b.detach().to(a.device)) for a, b in zip(mine, theirs)]

    @no_grad()
    def update_parameters(self, model):
        """Average ``model``'s weights into this copy (the first call copies them) and count the update."""
        pairs = self._pairs(model)
        n = self.n_averaged
        if int(n) == 0:
            for averaged, current in pairs:
                averaged.copy_(current)
        elif self.multi_avg_fn is not None:
            for averaged, current in _group_by_device_and_dtype(pairs):
                self.multi_avg_fn(averaged, current, n)
        else:
            avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
            for averaged, current in pairs:
                averaged.copy_(avg_fn(averaged, current, n))
        if not self.use_buffers:  # buffers are not averaged: keep them in sync with the source model
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged.add_(1)


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute the BatchNorm running statistics of ``model`` with one pass over ``loader``.

    Each BatchNorm's statistics are reset and accumulated as a cumulative average (``momentum=None``); momenta and
    the model's train/eval mode are restored afterwards. A batch that is a list or tuple contributes its first
    element. A model without BatchNorm is left untouched.

    Example::

        update_bn(train_loader, swa_model)
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal every group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs, then hold it.

    Args:
        optimizer: the wrapped optimizer.
        swa_lr: the target learning rate, or one per parameter group.
        anneal_epochs: epochs of the annealing (``0``: jump to ``swa_lr`` at once).
        anneal_strategy: ``"cos"`` or ``"linear"``.
        last_epoch: index of the last epoch (``-1`` starts the schedule).

    Example::

        sched = SWALR(opt, swa_lr=0.05, anneal_epochs=5, anneal_strategy="linear")
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for value, group in zip(format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The learning rate the annealing started from, given the current one at progress ``alpha``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def _progress(self, step):
        return self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))

    def get_lr(self):
        warn_if_called_outside_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha, alpha = self._progress(step - 1), self._progress(step)
        groups = self.optimizer.param_groups
        starts = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, starts)]

    def state_dict(self):
        """The scheduler's state: every attribute but the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
