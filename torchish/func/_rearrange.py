"""``torchish.func.rearrange``: einops' ``rearrange`` (PyTorch's native version in ``torch.func``): a pattern such
as ``"b (h1 h) (w1 w) c -> (b h1 w1) h w c"`` names the input's axes, splitting parenthesised groups into
elementary axes, and the output is those axes permuted and merged into the right side's groups; ``...`` stands for
the unnamed axes, ``1`` and ``()`` for a size-1 axis. Done as reshape, permute, reshape. A list or tuple of tensors
is stacked along a new first axis first."""
from __future__ import annotations

import math
import re

_ELLIPSIS = "\u2026"  # one token for '...'


class DimensionBindError(Exception):
    """Axis sizes that do not fit the pattern (PyTorch raises its own class of this name, an Exception)."""


def _parse(side):
    """``side`` of a pattern as a list of groups, each a list of axis names (``[]`` for ``1``/``()``); a bare name
    or ``...`` is a group of one."""
    tokens = re.findall(r"\(|\)|[^\s()]+", side.replace("...", _ELLIPSIS))
    groups, current = [], None
    for tok in tokens:
        if tok == "(":
            if current is not None:
                raise ValueError("Nested parentheses are not allowed in a rearrange pattern")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError("Brackets are not balanced in the rearrange pattern")
            groups.append(current)
            current = None
        else:
            names = [] if tok == "1" else [tok]
            if current is None:
                groups.append(names)
            else:
                current.extend(names)
    if current is not None:
        raise ValueError("Brackets are not balanced in the rearrange pattern")
    return groups


def _names(groups):
    out = [n for g in groups for n in g]
    for n in out:
        if out.count(n) > 1:
            raise ValueError(f"Indexing expression contains duplicate dimension '{n}'")
    return out


def rearrange(tensor, pattern, **axes_lengths):
    """Reorder, merge and split the axes of ``tensor`` as ``pattern`` says (see the module docstring)."""
    import torchish
    if isinstance(tensor, (list, tuple)):
        tensor = torchish.stack(tuple(tensor))
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    left, right = (_parse(s) for s in pattern.split("->"))
    lnames, rnames = _names(left), _names(right)
    only = set(lnames) ^ set(rnames)
    if only:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): {only}")
    ndim = tensor.dim()
    fixed = len(left) - (1 if [_ELLIPSIS] in left else 0)
    if (_ELLIPSIS not in lnames and fixed != ndim) or fixed > ndim:
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the number of dimensions "
                         f"in the tensor ({ndim})")
    left, right = (_expand(side, ndim - fixed) for side in (left, right))
    sizes = dict(axes_lengths)
    for group, n in zip(left, tensor.shape):
        unknown = [a for a in group if a not in sizes]
        known = math.prod(sizes[a] for a in group if a in sizes)
        if len(unknown) > 1:
            raise DimensionBindError("cannot infer the sizes of two dimensions at once " + " and ".join(unknown))
        if unknown:
            if known == 0 or n % known:
                raise DimensionBindError(f"inferred dimension does not evenly fit into larger dimension: {n} vs "
                                         f"{tuple(sizes[a] if a in sizes else '?' for a in group)}")
            sizes[unknown[0]] = n // known
        elif known != n:
            raise DimensionBindError(f"Dimension sizes to do not match ({n} != {known}) when matching dimension pack "
                                     f"{tuple(group)}")
    elementary = [a for g in left for a in g]
    order = [a for g in right for a in g]
    moved = tensor.reshape([sizes[a] for a in elementary]).permute([elementary.index(a) for a in order])
    return moved.reshape([math.prod(sizes[a] for a in g) for g in right])


def _expand(groups, count):
    """``...`` as ``count`` axes: one dim each where it stands alone, merged where it is inside a group."""
    names = [f"{_ELLIPSIS}{k}" for k in range(count)]
    out = []
    for g in groups:
        if g == [_ELLIPSIS]:
            out.extend([n] for n in names)
        else:
            out.append([n for a in g for n in (names if a == _ELLIPSIS else [a])])
    return out
