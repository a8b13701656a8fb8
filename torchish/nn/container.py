"""Module containers: ``Sequential``, ``ModuleList``, ``ModuleDict`` (``ParameterList``/``ParameterDict`` are in
:mod:`.param_container` and re-exported here).

Entries are registered under their index (``"0"``, ``"1"``...) or key, so parameter names, ``state_dict`` keys and
printing match PyTorch's.
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ..autograd.graph import STRUCT_EPOCH
from .module import Module, _addindent


def _abs_index(idx, size) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size if size else idx


def _renumber(module):
    module._modules = OrderedDict((str(i), m) for i, m in enumerate(module._modules.values()))


def _no_digit_dir(module):
    return [k for k in Module.__dir__(module) if not k.isdigit()]


class Sequential(Module):
    """Modules applied one after the other.

    Example:
        >>> import torchish as torch
        >>> class Double(torch.nn.Module):
        ...     def forward(self, x):
        ...         return x * 2
        >>> torch.nn.Sequential(Double(), Double())(torch.ones(1))
        tensor([4.])
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_abs_index(idx, len(self))]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_abs_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        doomed = keys[idx] if isinstance(idx, slice) else [keys[_abs_index(idx, len(self))]]
        for key in doomed:
            delattr(self, key)
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __dir__(self):
        return _no_digit_dir(self)

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        out = Sequential()
        for layer in list(self) + list(other):
            out.append(layer)
        return out

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def _check_factor(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other):
        self._check_factor(other)
        out = Sequential()
        mods = list(self)
        for i, module in enumerate(mods * other):
            out.add_module(str(i), module)
        return out

    __rmul__ = __mul__

    def __imul__(self, other):
        self._check_factor(other)
        mods = list(self)
        for i, module in enumerate(mods * (other - 1)):
            self.add_module(str(len(mods) + i), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        STRUCT_EPOCH[0] += 1
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, each registered (indexable, iterable, printable like PyTorch's)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def _key(self, idx):
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._key(idx))
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        out = ModuleList()
        for i, module in enumerate(list(self) + list(other)):
            out.add_module(str(i), module)
        return out

    def __dir__(self):
        return _no_digit_dir(self)

    def __repr__(self):
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = []  # [start, end, repr] of consecutive equal reprs
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for start, end, r in runs:
            head = f"({start}): {r}" if start == end else f"({start}-{end}): {end - start + 1} x {r}"
            lines.append(_addindent(head, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def insert(self, index, module):
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        STRUCT_EPOCH[0] += 1

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


def _pairs(items, owner):
    """Key/value pairs from a mapping or an iterable of pairs, with PyTorch's errors."""
    for j, p in enumerate(items):
        if not isinstance(p, Iterable):
            raise TypeError(f"{owner} update sequence element #{j} should be Iterable; is" + type(p).__name__)
        if len(p) != 2:
            raise ValueError(f"{owner} update sequence element #{j} has length {len(p)}; 2 is required")
        yield p[0], p[1]


class ModuleDict(Module):
    """An ordered dictionary of registered modules."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]
        STRUCT_EPOCH[0] += 1

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()
        STRUCT_EPOCH[0] += 1

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        pairs = modules.items() if isinstance(modules, (Mapping, ModuleDict)) else _pairs(modules, "ModuleDict")
        for key, module in pairs:
            self[key] = module


from .param_container import ParameterDict, ParameterList  # noqa: E402,F401  (re-exported)
