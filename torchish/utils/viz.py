"""Pictures of the autograd graph, as torchviz draws them: :func:`make_dot`.

Each ``grad_fn`` is a box named like PyTorch's (``AddmmBackward0``, ``ReluBackward0``); a leaf that requires grad
shows as its ``AccumulateGrad`` box fed by a light-blue box with the parameter's name (from ``params``) and shape;
the output tensors are green boxes with their shapes. Edges point the way the forward ran (inputs to outputs).

The result is a ``graphviz.Digraph`` when the ``graphviz`` Python package is installed
(``pip install torchish[viz]``), else a small built-in :class:`Digraph` with the same surface (``source``,
``render``, ``_repr_svg_``). Rendering needs Graphviz's ``dot`` program; without it the DOT text is still there
and ``render`` raises a clear error.

torchish's graph is drawn as it is: where torchish fuses what PyTorch records as several nodes (``nn.Linear`` is
one ``AddmmBackward0`` that takes the weight directly, without PyTorch's ``TBackward0``), the picture shows the
fused node.

Example:
    >>> import torchish
    >>> from torchish.utils.viz import make_dot
    >>> model = torchish.nn.Linear(3, 2)
    >>> dot = make_dot(model(torchish.ones(1, 3)).sum(), params=dict(model.named_parameters()))
    >>> "AddmmBackward0" in dot.source
    True
"""
from __future__ import annotations

import os
import shutil
import subprocess

_NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1", height="0.2",
                  fontname="monospace")


def _quote(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(kw: dict) -> str:
    return " ".join(f"{k}={_quote(v)}" for k, v in kw.items())


class Digraph:
    """A minimal stand-in for ``graphviz.Digraph``: collects nodes and edges, writes DOT, renders with ``dot``.

    Example:
        >>> g = Digraph()
        >>> g.node("a", "A"); g.node("b", "B"); g.edge("a", "b")
        >>> print(g.source.splitlines()[0])
        digraph {
    """

    def __init__(self, node_attr=None, graph_attr=None):
        self.node_attr = dict(node_attr or {})
        self.graph_attr = dict(graph_attr or {})
        self.body = []

    def node(self, name, label=None, **attrs):
        if label is not None:
            attrs = {"label": label, **attrs}
        self.body.append(f"\t{_quote(name)} [{_attrs(attrs)}]" if attrs else f"\t{_quote(name)}")

    def edge(self, tail, head, **attrs):
        line = f"\t{_quote(tail)} -> {_quote(head)}"
        self.body.append(f"{line} [{_attrs(attrs)}]" if attrs else line)

    @property
    def source(self) -> str:
        lines = ["digraph {"]
        if self.graph_attr:
            lines.append(f"\tgraph [{_attrs(self.graph_attr)}]")
        if self.node_attr:
            lines.append(f"\tnode [{_attrs(self.node_attr)}]")
        return "\n".join(lines + self.body + ["}"]) + "\n"

    def pipe(self, format="svg") -> bytes:
        """The rendered picture as bytes (needs Graphviz's ``dot`` program)."""
        exe = shutil.which("dot")
        if exe is None:
            raise RuntimeError("rendering the graph needs Graphviz's 'dot' program, which is not on PATH: install "
                               "Graphviz (e.g. 'apt-get install graphviz' or 'brew install graphviz'), or use "
                               ".source for the DOT text")
        res = subprocess.run([exe, f"-T{format}"], input=self.source.encode(), capture_output=True, check=False)
        if res.returncode != 0:
            raise RuntimeError(f"dot failed: {res.stderr.decode(errors='replace').strip()}")
        return res.stdout

    def render(self, filename="Digraph.gv", directory=None, view=False, cleanup=False, format="pdf") -> str:
        """Write the DOT text to ``filename`` and the picture to ``filename.<format>``; returns the picture's path.

        ``directory`` is prepended to ``filename``; ``cleanup=True`` removes the DOT file afterwards; ``view`` is
        accepted for ``graphviz`` compatibility and ignored (no viewer is opened).
        """
        data = self.pipe(format)
        path = os.path.join(directory, filename) if directory else filename
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(self.source)
        out = f"{path}.{format}"
        with open(out, "wb") as f:
            f.write(data)
        if cleanup:
            os.remove(path)
        return out

    def _repr_svg_(self) -> str:
        return self.pipe("svg").decode()

    def __str__(self):
        return self.source


def _new_graph():
    try:
        import graphviz
    except ImportError:
        return Digraph(node_attr=_NODE_ATTR, graph_attr=dict(size="12,12"))
    return graphviz.Digraph(node_attr=_NODE_ATTR, graph_attr=dict(size="12,12"))


def _size_str(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _fn_attrs(fn) -> dict:
    """What a node keeps besides tensors: an op's static arguments, a custom Function's ctx attributes."""
    static = getattr(fn, "static", None)
    if static is not None:
        return {k: str(v) for k, v in static}
    extra = getattr(fn, "__dict__", {})
    return {k: str(v) for k, v in extra.items() if not k.startswith("_") and k not in ("fn_cls", "input_slots",
                                                                                       "out_meta", "needs_input_grad",
                                                                                       "materialize_grads")}


def _fn_label(fn, show_attrs, max_attr_chars) -> str:
    name = type(fn).__name__
    attrs = _fn_attrs(fn) if show_attrs else {}
    if not attrs:
        return name
    width = max(max_attr_chars, 3)
    col1 = max(len(k) for k in attrs)
    col2 = min(max(len(v) for v in attrs.values()), width)
    rows = [f"{k:<{col1}}: {(v if len(v) <= col2 else v[:col2 - 3] + '...'):>{col2}}" for k, v in attrs.items()]
    return "\n".join([name, "-" * max(col1 + col2 + 2, len(name))] + rows)


def _saved_values(fn):
    """(label, shape, object) for what a node saved for backward (nothing once backward freed it)."""
    if getattr(fn, "_released", False):
        return []
    saved = getattr(fn, "_saved", None)  # custom autograd.Function
    if saved is not None:
        return [(f"saved[{i}]", t.shape, t) for i, t in enumerate(saved) if t is not None]
    if getattr(fn, "_saves", False) and getattr(fn, "vals", None) is not None:
        return [(f"input[{i}]", v.shape, v) for i, v in enumerate(fn.vals) if hasattr(v, "shape")]
    return []


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """The autograd graph that produced ``var`` as a Graphviz digraph (torchviz's ``make_dot``).

    Args:
        var: an output Tensor, or a tuple of them.
        params: optional ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``) naming the leaves.
        show_attrs: list each node's non-tensor attributes (an op's static arguments) under its name.
        show_saved: draw what each node saved for backward (orange boxes) while it is still held.
        max_attr_chars: the widest attribute value shown before it is cut with ``...``.

    Returns:
        A ``graphviz.Digraph`` (or torchish's :class:`Digraph` without that package): ``.source`` is the DOT
        text, ``.render(filename, format="png")`` writes a picture, notebooks show it inline.
    """
    from .._tensor import Tensor
    if params is not None:
        for k, v in params.items():
            if not isinstance(v, Tensor):
                raise TypeError(f"make_dot(): params[{k!r}] is a {type(v).__name__}, not a Tensor")
    names = {id(v): k for k, v in (params or {}).items()}
    dot = _new_graph()
    seen = set()

    def var_label(t, name=None):
        return f"{name if name else names.get(id(t), '')}\n {_size_str(t.shape)}"

    outputs = var if isinstance(var, tuple) else (var,)
    stack = []
    for out in outputs:
        if id(out) in seen:
            continue
        seen.add(id(out))
        dot.node(str(id(out)), var_label(out), fillcolor="darkolivegreen1")
        if out.grad_fn is not None:
            stack.append(out.grad_fn)
            dot.edge(str(id(out.grad_fn)), str(id(out)))
    while stack:  # iterative walk over grad_fn.next_functions
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if show_saved:
            for label, shape, obj in _saved_values(fn):
                dot.edge(str(id(fn)), str(id(obj)), dir="none")
                dot.node(str(id(obj)), f"{label}\n {_size_str(shape)}", fillcolor="orange")
        leaf = getattr(fn, "variable", None)
        if leaf is not None:
            seen.add(id(leaf))
            dot.node(str(id(leaf)), var_label(leaf), fillcolor="lightblue")
            dot.edge(str(id(leaf)), str(id(fn)))
        dot.node(str(id(fn)), _fn_label(fn, show_attrs, max_attr_chars))
        for nxt, _ in reversed(fn.next_functions):
            if nxt is not None:
                dot.edge(str(id(nxt)), str(id(fn)))
                stack.append(nxt)
    return dot
