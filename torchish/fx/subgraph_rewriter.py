"""``torch.fx.replace_pattern``: find each occurrence of a pattern (a function or module, traced) in a
GraphModule's graph and put a copy of the replacement's graph in its place."""
from __future__ import annotations

from typing import NamedTuple

from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_aggregate


class Match(NamedTuple):
    """``anchor``: the pattern's node whose value it returns (as PyTorch's, a node of the pattern); ``nodes_map``:
    pattern node -> graph node."""
    anchor: Node
    nodes_map: dict


def _graph_of(obj) -> Graph:
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    from ._symbolic_trace import symbolic_trace
    return symbolic_trace(obj).graph


def _outputs(graph: Graph) -> list:
    """The nodes a graph returns, in order."""
    out = next(n for n in reversed(graph.nodes) if n.op == "output")
    found = []
    map_aggregate(out.args[0], lambda a: found.append(a) if isinstance(a, Node) else None)
    return found


def _same_kind(pn: Node, gn: Node) -> bool:
    if pn.op == "placeholder":
        return True
    return pn.op == gn.op and (pn.op == "output" or pn.target == gn.target)


def _flat(args, kwargs) -> list:
    leaves = []
    map_aggregate((args, kwargs), leaves.append)
    return leaves


class _Matcher:
    def __init__(self, pattern: Graph):
        self.pattern = pattern
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]
        self.returning = _outputs(pattern)

    def _match(self, pn: Node, gn: Node, nodes_map: dict) -> bool:
        if pn in nodes_map:
            return nodes_map[pn] is gn
        if any(v is gn for v in nodes_map.values()) or not _same_kind(pn, gn):
            return False
        saved = dict(nodes_map)
        nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        ok = len(pn.args) == len(gn.args) and list(pn.kwargs) == list(gn.kwargs)
        if ok:
            for pa, ga in zip(_flat(pn.args, pn.kwargs), _flat(gn.args, gn.kwargs)):
                if isinstance(pa, Node) and isinstance(ga, Node):
                    ok = self._match(pa, ga, nodes_map)
                else:
                    ok = not isinstance(pa, Node) and not isinstance(ga, Node) and type(pa) is type(ga) \
                        and pa == ga
                if not ok:
                    break
        if not ok:
            nodes_map.clear()
            nodes_map.update(saved)
        return ok

    def _contained(self, nodes_map: dict) -> bool:
        """The pattern's inner values are used only inside the match."""
        matched = set(nodes_map.values())
        for pn, gn in nodes_map.items():
            if pn.op == "placeholder" or pn in self.returning:
                continue
            if any(user not in matched for user in gn.users):
                return False
        return True

    def matches(self, graph: Graph) -> list:
        """Non-overlapping matches, in graph order of the first anchor (a returned pattern node that only the
        output uses), each as a dict pattern node -> graph node."""
        anchors = [n for n in self.returning if len(n.users) == 1] or self.returning[:1]
        found, taken = [], set()
        for gn in graph.nodes:
            nodes_map: dict = {}
            if not self._match(anchors[0], gn, nodes_map):
                continue
            if not all(self._match_somewhere(a, graph, nodes_map) for a in anchors[1:]):
                continue
            if any(pr not in nodes_map for pr in self.returning):
                continue
            inner = {g for p, g in nodes_map.items() if p.op != "placeholder"}
            if inner & taken or not self._contained(nodes_map):
                continue
            taken |= inner
            found.append((anchors[0], nodes_map))
        return found

    def _match_somewhere(self, pn: Node, graph: Graph, nodes_map: dict) -> bool:
        return pn in nodes_map or any(self._match(pn, cand, nodes_map) for cand in graph.nodes)


def replace_pattern(gm: GraphModule, pattern, replacement) -> list:
    """Replace each non-overlapping occurrence of ``pattern`` in ``gm.graph`` by ``replacement`` (both
    functions, modules or graphs taking the same inputs); recompiles ``gm`` and returns the matches.

    Example::

        >>> def pattern(x):
        ...     return torchish.relu(x)
        >>> def replacement(x):
        ...     return torchish.sigmoid(x)
        >>> torchish.fx.replace_pattern(gm, pattern, replacement)  # doctest: +SKIP
    """
    pattern_graph = _graph_of(pattern)
    replacement_graph = _graph_of(replacement)
    graph = gm.graph
    matcher = _Matcher(pattern_graph)
    matches = []
    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    changed: dict = {}  # graph node replaced by an earlier match -> its replacement
    for anchor, nodes_map in matcher.matches(graph):
        for pn, gn in list(nodes_map.items()):  # (a placeholder's value may be an earlier match's result)
            if pn.op == "placeholder" and gn in changed:
                nodes_map[pn] = changed[gn]
        val_map = {rp: nodes_map[pp] for rp, pp in zip(replacement_placeholders, matcher.placeholders)}
        returning = [nodes_map[pn] for pn in matcher.returning]
        users = {u for n in returning for u in n.users}
        first_user = next((n for n in graph.nodes if n in users), None)
        with graph.inserting_before(first_user):
            copied = graph.graph_copy(replacement_graph, val_map)
        copied = list(copied) if isinstance(copied, (tuple, list)) else [copied]
        for old, new in zip(returning, copied):
            old.replace_all_uses_with(new)
            changed[old] = new
        for pn in reversed(list(pattern_graph.nodes)):
            if pn.op in ("placeholder", "output") or pn not in nodes_map:
                continue
            gn = nodes_map[pn]
            if not gn.users:
                graph.erase_node(gn)
        matches.append(Match(anchor=anchor, nodes_map=nodes_map))
    gm.recompile()
    return matches
