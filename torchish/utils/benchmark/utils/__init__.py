"""``torchish.utils.benchmark.utils``: PyTorch's module paths for the benchmark pieces, so that
``from torch.utils.benchmark.utils.common import Measurement`` (or ``...utils.timer``, ``...utils.compare``) finds
the same modules as ``torchish.utils.benchmark`` (kept flat here)."""
import importlib as _importlib
import sys as _sys

_package = __name__.rsplit(".", 1)[0]
for _name in ("common", "compare", "timer"):  # (``benchmark.timer`` is the clock function: go by module path)
    globals()[_name] = _sys.modules[f"{__name__}.{_name}"] = _importlib.import_module(f"{_package}.{_name}")
