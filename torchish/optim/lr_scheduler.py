"""``torchish.optim.lr_scheduler``: PyTorch's learning-rate schedulers, with the same ``get_last_lr()`` sequences,
``state_dict()`` contents and errors.

Schedulers set ``optimizer.param_groups[i]['lr']`` (and, when cycling momentum, ``'momentum'`` or ``'betas'``) as
Python numbers; under ``torchish.compile`` these are values of the compiled program, so a schedule never retraces.

Example::

    opt = torchish.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torchish.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
    for epoch in range(100):
        train(...); opt.step()
        sched.step()
"""
from __future__ import annotations

from ._schedulers_base import (EPOCH_DEPRECATION_WARNING as EPOCH_DEPRECATION_WARNING, LRScheduler as LRScheduler,
                               _LRScheduler as _LRScheduler)
from ._schedulers_compose import (ChainedScheduler as ChainedScheduler, ReduceLROnPlateau as ReduceLROnPlateau,
                                  SequentialLR as SequentialLR)
from ._schedulers_cyclic import (CosineAnnealingWarmRestarts as CosineAnnealingWarmRestarts, CyclicLR as CyclicLR,
                                 OneCycleLR as OneCycleLR)
from ._schedulers_decay import (ConstantLR as ConstantLR, CosineAnnealingLR as CosineAnnealingLR,
                                ExponentialLR as ExponentialLR, LambdaLR as LambdaLR, LinearLR as LinearLR,
                                MultiplicativeLR as MultiplicativeLR, MultiStepLR as MultiStepLR,
                                PolynomialLR as PolynomialLR, StepLR as StepLR)

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LRScheduler"]
