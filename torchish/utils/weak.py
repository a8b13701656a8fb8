"""``torch.utils.weak``: weak references and a weak-keyed dictionary that go by object identity, not ``==``
(a Tensor's ``==`` is elementwise and its hash is its id, so ``weakref.WeakKeyDictionary`` cannot key Tensors)."""
from __future__ import annotations

import weakref
from collections.abc import MutableMapping

from .._tensor import Tensor

__all__ = ["WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary", "TensorWeakRef"]


class WeakIdRef(weakref.ref):
    """A weak reference hashed by its referent's id; two are equal when they reach the same live object (a dead
    one equals only itself, so a new object that reuses a dead one's id is a different key)."""

    __slots__ = ("_id",)

    def __init__(self, key, callback=None):
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        a = self()
        b = other() if isinstance(other, weakref.ref) else None
        if a is not None and b is not None:
            return a is b
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)


class WeakIdKeyDictionary(MutableMapping):
    """A mapping whose keys are held weakly and compared by identity; an entry goes when its key is collected."""

    def __init__(self, dict=None, ref_type=WeakIdRef):  # noqa: A002 - PyTorch's parameter name
        self.data = {}
        self.ref_type = ref_type
        self_ref = weakref.ref(self)

        def remove(k, self_ref=self_ref):
            owner = self_ref()
            if owner is not None:
                owner.data.pop(k, None)
        self._remove = remove
        if dict is not None:
            self.update(dict)

    def _ref(self, key):
        return self.ref_type(key, self._remove)

    def __getitem__(self, key):
        return self.data[self.ref_type(key)]

    def __setitem__(self, key, value):
        self.data[self._ref(key)] = value

    def __delitem__(self, key):
        del self.data[self.ref_type(key)]

    def __contains__(self, key):
        try:
            ref = self.ref_type(key)
        except TypeError:
            return False
        return ref in self.data

    def __len__(self):
        return sum(1 for r in list(self.data) if r() is not None)

    def __iter__(self):
        for ref in list(self.data):
            obj = ref()
            if obj is not None:
                yield obj

    def __repr__(self):
        return f"<{type(self).__name__} at {id(self):#x}>"

    def keyrefs(self):
        return list(self.data)

    def copy(self):
        new = type(self)(ref_type=self.ref_type)
        for key, value in self.items():
            new[key] = value
        return new

    __copy__ = copy

    def __deepcopy__(self, memo):
        from copy import deepcopy
        new = type(self)(ref_type=self.ref_type)
        for key, value in self.items():
            new[key] = deepcopy(value, memo)
        return new

    def __or__(self, other):
        if not isinstance(other, MutableMapping):
            return NotImplemented
        new = self.copy()
        new.update(other)
        return new

    def __ior__(self, other):
        self.update(other)
        return self


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a Tensor (``ref()`` gives the Tensor or None)."""

    def __init__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise AssertionError(f"expected torch.Tensor, got {type(tensor)}.")
        self.ref = weakref.ref(tensor)

    def __call__(self):
        return self.ref()
