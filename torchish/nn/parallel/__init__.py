"""``torchish.nn.parallel``: data parallelism over a device mesh (see :mod:`torchish.distributed`)."""
from __future__ import annotations

from .distributed import DistributedDataParallel as DistributedDataParallel  # noqa: F401
from .data_parallel import DataParallel as DataParallel, data_parallel as data_parallel  # noqa: F401
