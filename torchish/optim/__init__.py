"""``torchish.optim``: PyTorch's optimizers (one jitted update per parameter group) and ``lr_scheduler``."""
from __future__ import annotations

from . import optimizer as optimizer
from .optimizer import Optimizer as Optimizer
from .sgd import SGD as SGD
from .adam import Adam as Adam, AdamW as AdamW
from .adam_variants import Adamax as Adamax, NAdam as NAdam, RAdam as RAdam, SparseAdam as SparseAdam
from .adaptive import Adadelta as Adadelta, Adagrad as Adagrad, RMSprop as RMSprop
from .asgd_rprop import ASGD as ASGD, Rprop as Rprop
from .lbfgs import LBFGS as LBFGS
from .adafactor import Adafactor as Adafactor
from .muon import Muon as Muon
from . import lr_scheduler as lr_scheduler
from . import swa_utils as swa_utils


def _class_modules():
    """PyTorch keeps most optimizers in a module of their own (``from torch.optim.adamw import AdamW``): those
    paths, as modules that hold torchish's class (``adam`` and ``sgd`` are real modules here)."""
    import sys
    import types
    for name, cls in (("adadelta", Adadelta), ("adagrad", Adagrad), ("adamax", Adamax), ("adamw", AdamW),
                      ("asgd", ASGD), ("nadam", NAdam), ("radam", RAdam), ("rmsprop", RMSprop), ("rprop", Rprop),
                      ("sparse_adam", SparseAdam)):
        mod = types.ModuleType(f"{__name__}.{name}", f"``torch.optim.{name}``: :class:`torchish.optim.{cls.__name__}`.")
        mod.__all__ = [cls.__name__]
        setattr(mod, cls.__name__, cls)
        mod.Optimizer = Optimizer
        sys.modules[mod.__name__] = mod
        globals()[name] = mod


_class_modules()
