"""``torch.nn.modules.utils``: the argument normalisers that layer code (and third-party layers) import."""
from __future__ import annotations

import collections.abc
from itertools import repeat


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``(a, b)`` -> ``(b, b, a, a)`` for n=2: the padding order of ``F.pad`` from a per-dim padding."""
    return tuple(x for x in reversed(t) for _ in range(n))


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from the keys of ``state_dict`` that start with it, in place, and from the keys of its
    ``_metadata`` (a key equal to the prefix without its dot becomes ``''``): a state dict saved from a
    ``DataParallel`` model (``"module."``) or from ``torch.compile(model)`` (``"_orig_mod."``) then loads into the
    bare model.

    Example:
        >>> sd = torchish.compile(model).state_dict()
        >>> consume_prefix_in_state_dict_if_present(sd, "_orig_mod.")
        >>> model.load_state_dict(sd)
    """
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    bare = prefix.replace(".", "")
    for key in list(metadata.keys()):
        if key and (key == bare or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
