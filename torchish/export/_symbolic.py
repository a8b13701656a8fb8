"""The numbers an exported forward computes with that the graph must compute again: a dynamic size
(:class:`SymInt`, read by ``sym_size_int``) and a tensor's value read as a number (``x.item()``, ``float(x)``:
a data-dependent :class:`SymInt`/:class:`SymFloat`). Each is a Python ``int``/``float`` holding its example value
and the node computing it; arithmetic with plain numbers records ``operator`` nodes, so ``x / s.item()`` or
``x.view(n * 2, -1)`` goes into the graph as a computation, not as the example's number. Comparing a
data-dependent number (``if x.sum().item() > 0``) raises :class:`GuardOnDataDependentSymNode`: the graph could
not follow another input; comparing a size specialises, as export does."""
from __future__ import annotations

import operator

from ..fx.node import Node


class GuardOnDataDependentSymNode(RuntimeError):
    """``torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode``: the traced code needs a tensor's
    value (``if x.sum() > 0``), which an exported graph cannot depend on."""


def data_dependent_error(what: str) -> GuardOnDataDependentSymNode:
    return GuardOnDataDependentSymNode(
        f"Could not guard on data-dependent expression ({what}). torchish.export records one graph for every "
        f"input, so Python control flow cannot depend on a tensor's values; use torchish.where / torchish.cond "
        f"for value-dependent branches.")


class _Sym:
    """What SymInt and SymFloat share: ``node``, whether the value is data-dependent, recorded arithmetic."""
    node: Node
    data_dependent: bool

    def plain(self):
        raise NotImplementedError

    def _apply(self, fn, other, reverse: bool = False):
        if isinstance(other, bool) or not isinstance(other, (int, float)):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        value = fn(_plain(a), _plain(b))
        args = tuple(x.node if isinstance(x, _Sym) else x for x in (a, b))
        node = self.node.graph.call_function(fn, args)
        dependent = any(isinstance(x, _Sym) and x.data_dependent for x in (a, b))
        kind = SymInt if type(value) is int else SymFloat
        return kind(value, node, dependent)

    def _compare(self, fn, other):
        if self.data_dependent or isinstance(other, _Sym) and other.data_dependent:
            raise data_dependent_error(f"{fn.__name__} of a value read from a tensor")
        return fn(_plain(self), _plain(other))

    __add__ = lambda self, o: self._apply(operator.add, o)  # noqa: E731
    __radd__ = lambda self, o: self._apply(operator.add, o, True)  # noqa: E731
    __sub__ = lambda self, o: self._apply(operator.sub, o)  # noqa: E731
    __rsub__ = lambda self, o: self._apply(operator.sub, o, True)  # noqa: E731
    __mul__ = lambda self, o: self._apply(operator.mul, o)  # noqa: E731
    __rmul__ = lambda self, o: self._apply(operator.mul, o, True)  # noqa: E731
    __truediv__ = lambda self, o: self._apply(operator.truediv, o)  # noqa: E731
    __rtruediv__ = lambda self, o: self._apply(operator.truediv, o, True)  # noqa: E731
    __floordiv__ = lambda self, o: self._apply(operator.floordiv, o)  # noqa: E731
    __rfloordiv__ = lambda self, o: self._apply(operator.floordiv, o, True)  # noqa: E731
    __mod__ = lambda self, o: self._apply(operator.mod, o)  # noqa: E731
    __pow__ = lambda self, o: self._apply(operator.pow, o)  # noqa: E731
    __lt__ = lambda self, o: self._compare(operator.lt, o)  # noqa: E731
    __le__ = lambda self, o: self._compare(operator.le, o)  # noqa: E731
    __gt__ = lambda self, o: self._compare(operator.gt, o)  # noqa: E731
    __ge__ = lambda self, o: self._compare(operator.ge, o)  # noqa: E731
    __eq__ = lambda self, o: self._compare(operator.eq, o)  # noqa: E731
    __ne__ = lambda self, o: self._compare(operator.ne, o)  # noqa: E731

    def __neg__(self):
        return self._apply(operator.mul, -1)

    def __bool__(self):
        if self.data_dependent:
            raise data_dependent_error("bool of a value read from a tensor")
        return bool(self.plain())


def _plain(x):
    return x.plain() if isinstance(x, _Sym) else x


class SymInt(_Sym, int):
    """An ``int`` the graph computes: a dynamic size (``sym_size_int``) or an integer tensor's ``item()``."""

    def __new__(cls, value: int, node: Node, data_dependent: bool = False):
        out = int.__new__(cls, value)
        out.node = node
        out.data_dependent = data_dependent
        return out

    def plain(self) -> int:
        return int.__int__(self)

    def __hash__(self) -> int:
        return int.__hash__(self)

    def __index__(self) -> int:
        if self.data_dependent:
            raise data_dependent_error("a value read from a tensor used as an index or size")
        return int.__index__(self)


class SymFloat(_Sym, float):
    """A ``float`` the graph computes: a floating tensor's ``item()`` and arithmetic on it."""

    def __new__(cls, value: float, node: Node, data_dependent: bool = True):
        out = float.__new__(cls, value)
        out.node = node
        out.data_dependent = data_dependent
        return out

    def plain(self) -> float:
        return float.__float__(self)

    def __hash__(self) -> int:
        return float.__hash__(self)
