"""``torch.torch_version``: the version string that compares as a version.

``torchish.__version__ >= "2.2"`` compares release numbers as PyTorch's ``TorchVersion`` does (2.13 is newer than
2.2; as plain strings it would not be), also against tuples (``>= (2, 0)``); a string that is not a version
falls back to string comparison.
"""
from __future__ import annotations

from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

__all__ = ["TorchVersion", "Version", "InvalidVersion"]


class TorchVersion(str):
    """A ``str`` whose comparisons parse both sides as versions (``packaging.version.Version``)."""

    def _convert_to_version(self, other):
        if isinstance(other, Version):
            return other
        if isinstance(other, str):
            return Version(other)
        if isinstance(other, Iterable):
            return Version(".".join(str(item) for item in other))
        raise InvalidVersion(other)

    def _compare(self, other, method):
        try:
            return getattr(Version(self), method)(self._convert_to_version(other))
        except InvalidVersion:  # not a version ('parrot'): compare as strings
            return getattr(super(), method)(other)

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    __hash__ = str.__hash__
