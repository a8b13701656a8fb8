"""``torch.fx._pytree``: ``tree_flatten_spec``, which the code of a GraphModule traced with ``PH`` placeholders in
``concrete_args`` calls to take its structured arguments apart, and the record of that structure
(:class:`PyTreeInfo`) a graph keeps for its code generator."""
from __future__ import annotations

import collections
from typing import Any, NamedTuple

from ..utils import _pytree as pytree


class PyTreeInfo(NamedTuple):
    """The traced function's parameter names and the structure of its inputs and outputs."""
    orig_args: list
    in_spec: Any
    out_spec: Any


def tree_flatten_spec(tree, spec) -> list:
    """The leaves of ``tree`` taken as ``spec`` describes it (a list by position, a dict by the spec's keys: a
    shorter list is an IndexError, a missing key a KeyError, as torch.fx's)."""
    if spec.is_leaf():
        return [tree]
    if spec.type in (dict, collections.OrderedDict):
        children = [tree[k] for k in spec.context]
    elif spec.type in (list, tuple):
        children = [tree[i] for i in range(spec.num_children)]
    else:
        children = spec.flatten_up_to(tree)
        return children
    out = []
    for child, child_spec in zip(children, spec.children_specs):
        out.extend(tree_flatten_spec(child, child_spec))
    return out


def in_spec_of(args) -> Any:
    return pytree.tree_flatten(tuple(args))[1]
