"""``torchish.utils.benchmark``: ``Timer``, ``Measurement`` and ``Compare``, as ``torch.utils.benchmark``.

Example:
    >>> from torchish.utils import benchmark
    >>> t = benchmark.Timer("x * 2", setup="x = torch.ones(100)", label="mul", description="cpu")
    >>> m = t.blocked_autorange(min_run_time=0.05)
    >>> m.median > 0
    True
"""
from .common import (Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads, trim_sigfig,  # noqa: F401
                     unit_to_english)
from .compare import Colorize, Compare  # noqa: F401
from .timer import Language, Timer, timer  # noqa: F401

__all__ = ["Timer", "Measurement", "TaskSpec", "Compare", "Colorize", "Language", "timer", "select_unit",
           "unit_to_english", "trim_sigfig", "ordered_unique", "set_torch_threads"]

from . import utils  # noqa: E402,F401  (``torch.utils.benchmark.utils.common`` and friends)
