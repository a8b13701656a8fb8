"""``torchish.fx``: PyTorch's ``torch.fx`` — symbolic tracing of Modules into a :class:`Graph` of nodes,
:class:`GraphModule` (a Module generated from a graph, with its Python source in ``.code``), graph surgery and
``recompile()``, :class:`Interpreter`/:class:`Transformer` passes, ``replace_pattern`` and
``passes.shape_prop.ShapeProp``. Names, printing and generated code follow PyTorch's (``torch.relu(x)``,
``add = x + y``), so a script written for ``torch.fx`` reads the same output.

Example::

    >>> import torchish.fx
    >>> gm = torchish.fx.symbolic_trace(torchish.nn.Sequential(torchish.nn.Linear(3, 3), torchish.nn.ReLU()))
    >>> print(gm.code)  # doctest: +SKIP
"""
from ._symbolic_trace import Tracer as Tracer, symbolic_trace as symbolic_trace, wrap as wrap
from ._symbolic_trace import PH as _PH
from .graph import Graph as Graph
from .graph_module import GraphModule as GraphModule
from .interpreter import Interpreter as Interpreter, Transformer as Transformer
from .node import Node as Node, has_side_effect as has_side_effect, map_arg as map_arg
from .proxy import Proxy as Proxy
from .subgraph_rewriter import replace_pattern as replace_pattern
import importlib as _importlib

from .node import _default_side_effects

_default_side_effects()
del _default_side_effects
PH = _PH  # (concrete_args' placeholder; not in __all__, and PHBase/PHWithMeta stay in _symbolic_trace, as torch.fx's)

_importlib.import_module(".passes", __name__)  # (torchish.fx.passes.shape_prop, as torch.fx.passes)

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter", "Transformer", "Node",
           "Proxy", "replace_pattern", "has_side_effect", "map_arg"]
