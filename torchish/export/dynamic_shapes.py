"""``torch.export.Dim`` and friends: how a caller says which input dimensions may change between calls of an
exported program (``Dim("batch", min=2, max=8)``, ``Dim.AUTO``/``Dim.DYNAMIC``/``Dim.STATIC``), and the ranges an
:class:`ExportedProgram` records for them (``ep.range_constraints``: ``{s0: VR[2, 8]}``).

Example::

    >>> batch = torchish.export.Dim("batch", min=2, max=8)
    >>> ep = torchish.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})  # doctest: +SKIP
"""
from __future__ import annotations

import enum
import math

INT_OO = math.inf  # (PyTorch prints the open upper end of a range as ``int_oo``)


class _DimHintType(enum.Enum):
    AUTO = enum.auto()
    STATIC = enum.auto()
    DYNAMIC = enum.auto()


class _DimHint:
    """``Dim.AUTO``/``Dim.STATIC``/``Dim.DYNAMIC``: a dimension left to export to decide, kept static, or dynamic."""

    def __init__(self, type_: _DimHintType, min=None, max=None):  # noqa: A002  (PyTorch's keyword names)
        self.type = type_
        self.min = min
        self.max = max

    def __call__(self, min=None, max=None) -> "_DimHint":  # noqa: A002
        return _DimHint(self.type, min, max)

    def __repr__(self) -> str:
        parts = [self.type.name] + [f"{k}={v}" for k, v in (("min", self.min), ("max", self.max)) if v is not None]
        return f"DimHint({', '.join(parts)})"

    def __eq__(self, other) -> bool:
        return isinstance(other, _DimHint) and (self.type, self.min, self.max) == (other.type, other.min, other.max)

    def __hash__(self) -> int:
        return hash((self.type, self.min, self.max))


class Dim:
    """A named dynamic dimension with an optional range; the same ``Dim`` on two inputs says their sizes are
    equal."""

    AUTO = _DimHint(_DimHintType.AUTO)
    STATIC = _DimHint(_DimHintType.STATIC)
    DYNAMIC = _DimHint(_DimHintType.DYNAMIC)

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None):  # noqa: A002
        lo = 0 if min is None else min
        hi = INT_OO if max is None else max
        if not isinstance(name, str):
            raise TypeError(f"Dim name must be a string, got {name!r}")
        if hi <= lo:
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        self.__name__ = name
        self.min = lo
        self.max = hi

    def __repr__(self) -> str:
        lo = None if self.min == 2 else self.min
        hi = None if self.max == INT_OO else self.max
        if lo is None and hi is None:
            return f"Dim('{self.__name__}')"
        if lo is None:
            return f"Dim('{self.__name__}', max={hi})"
        if hi is None:
            return f"Dim('{self.__name__}', min={lo})"
        return f"Dim('{self.__name__}', min={lo}, max={hi})"


def dims(*names: str, min: int | None = None, max: int | None = None) -> tuple:  # noqa: A002
    """One :class:`Dim` per name, all with the same range."""
    return tuple(Dim(name, min=min, max=max) for name in names)


class ValueRanges:
    """The range ``[lower, upper]`` a symbolic size may take (printed as PyTorch does: ``VR[2, 8]``)."""

    def __init__(self, lower: int, upper):
        self.lower = lower
        self.upper = upper

    def __repr__(self) -> str:
        upper = "int_oo" if self.upper == INT_OO else self.upper
        return f"VR[{self.lower}, {upper}]"

    def __eq__(self, other) -> bool:
        return isinstance(other, ValueRanges) and (self.lower, self.upper) == (other.lower, other.upper)

    def __hash__(self) -> int:
        return hash((self.lower, self.upper))


class Symbol:
    """A symbolic size (``s0``), the key of ``ep.range_constraints``."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return isinstance(other, Symbol) and other.name == self.name or other == self.name

    def __hash__(self) -> int:
        return hash(self.name)


def dim_spec(spec) -> tuple | None:
    """``(name or None, lower, upper)`` for one entry of a ``dynamic_shapes`` spec, or None for a static dim."""
    if spec is None or spec == Dim.STATIC or isinstance(spec, int) and not isinstance(spec, bool):
        return None
    if isinstance(spec, Dim):
        return spec.__name__, spec.min, spec.max  # (Dim("n") keeps its 0: torch's range is VR[0, int_oo])
    if isinstance(spec, _DimHint):
        lo = 2 if spec.min is None else spec.min
        return None, lo, INT_OO if spec.max is None else spec.max
    raise ValueError(f"Unexpected dimension mapped to index in dynamic_shapes specification: {spec!r}")
