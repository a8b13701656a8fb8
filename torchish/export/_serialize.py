"""``torch.export.save``/``load`` for torchish's exported programs: a zip archive holding the graph and its
signature as JSON (each call's target by its import path, arguments as tagged JSON values) and the tensors
(state dict, constants, example inputs) in PyTorch's tensor format, read back with ``weights_only=True``:
loading never runs pickled code. The format is torchish's own; PyTorch's ``.pt2`` (an ATen-level graph) is
neither written nor read.
"""
from __future__ import annotations

import collections
import importlib
import io
import json
import math
import os
import zipfile

from .._tensor import Tensor
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx.node import Node
from ..nn import Parameter
from ..utils import _pytree as pytree
from .dynamic_shapes import INT_OO, Symbol, ValueRanges
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
                              TensorArgument)

_FORMAT = "torchish.export/1"
_MODULES = ("torchish", "_operator", "operator", "builtins", "math")


def _qualify(fn) -> dict:
    """``{"module", "qualname"}`` that :func:`_resolve` turns back into ``fn``."""
    candidates = [(getattr(fn, "__module__", None), getattr(fn, "__qualname__", None))]
    from ..fx._names import public_name
    public = public_name(fn)
    if public is not None and public.startswith("torch."):
        module, _, name = ("torchish" + public[5:]).rpartition(".")
        candidates.append((module, name))
    candidates.append(("torchish", getattr(fn, "__name__", "")))
    for module, qualname in candidates:
        if module and qualname:
            try:
                if _resolve({"module": module, "qualname": qualname}) is fn:
                    return {"module": module, "qualname": qualname}
            except (ImportError, AttributeError, ValueError):
                pass
    raise ValueError(f"torchish.export.save: cannot serialize the call target {fn!r} (it is not reachable by an "
                     f"import path under {', '.join(_MODULES)})")


def _resolve(ref: dict):
    module = ref["module"]
    if module.split(".")[0] not in _MODULES:
        raise ValueError(f"torchish.export.load: refusing the call target {module}.{ref['qualname']}")
    obj = importlib.import_module(module)
    for part in ref["qualname"].split("."):
        obj = getattr(obj, part)
    return obj


def _encode(a):
    from .. import _aliases, _dtype, _device, _layout
    if isinstance(a, Node):
        return {"$node": a.name}
    if a is None or isinstance(a, (bool, str)) or type(a) is int:
        return a
    if isinstance(a, float):
        return a if math.isfinite(a) else {"$float": repr(a)}
    if isinstance(a, int):
        return int(a)
    if isinstance(a, complex):
        return {"$complex": [a.real, a.imag]}
    if isinstance(a, tuple) and type(a).__name__ == "Size":
        return {"$size": list(a)}
    if isinstance(a, tuple):
        return {"$tuple": [_encode(x) for x in a]}
    if isinstance(a, list):
        return [_encode(x) for x in a]
    if isinstance(a, dict):
        return {"$dict": [[k, _encode(v)] for k, v in a.items()]}
    if isinstance(a, slice):
        return {"$slice": [_encode(a.start), _encode(a.stop), _encode(a.step)]}
    if a is Ellipsis:
        return {"$ellipsis": True}
    if isinstance(a, _dtype.dtype):
        return {"$dtype": str(a).split(".")[-1]}
    if isinstance(a, _device.device):
        return {"$device": str(a)}
    if isinstance(a, (_layout.layout, _aliases.memory_format)):
        return {"$torch": str(a).split(".")[-1]}
    raise ValueError(f"torchish.export.save: cannot serialize the argument {a!r} of type {type(a).__name__}")


def _decode(a, nodes: dict):
    import torchish
    if isinstance(a, list):
        return [_decode(x, nodes) for x in a]
    if not isinstance(a, dict):
        return a
    (tag, v), = a.items()
    if tag == "$node":
        return nodes[v]
    if tag == "$float":
        return float(v)
    if tag == "$complex":
        return complex(*v)
    if tag == "$size":
        return torchish.Size(v)
    if tag == "$tuple":
        return tuple(_decode(x, nodes) for x in v)
    if tag == "$dict":
        return {k: _decode(x, nodes) for k, x in v}
    if tag == "$slice":
        return slice(*(_decode(x, nodes) for x in v))
    if tag == "$ellipsis":
        return Ellipsis
    if tag == "$dtype":
        return getattr(torchish, v)
    if tag == "$device":
        return torchish.device(v)
    if tag == "$torch":
        return getattr(torchish, v)
    raise ValueError(f"torchish.export.load: unknown value tag {tag!r}")


def _encode_spec(spec):
    if spec.is_leaf():
        return None
    kinds = {tuple: "tuple", list: "list", dict: "dict", collections.OrderedDict: "odict"}
    if spec.type not in kinds:
        raise ValueError(f"torchish.export.save: cannot serialize an input/output of type {spec.type.__name__}")
    return {"type": kinds[spec.type], "context": spec.context,
            "children": [_encode_spec(c) for c in spec.children_specs]}


def _decode_spec(d):
    if d is None:
        return pytree.treespec_leaf()
    kinds = {"tuple": tuple, "list": list, "dict": dict, "odict": collections.OrderedDict}
    return pytree.TreeSpec(kinds[d["type"]], d["context"], [_decode_spec(c) for c in d["children"]])


def _encode_dims(dims):
    if dims is None:
        return None
    return [d if isinstance(d, int) else [d[0].name, d[1], None if d[2] == INT_OO else d[2], d[3], d[4]]
            for d in dims]


def _decode_dims(dims, symbols: dict):
    if dims is None:
        return None
    out = []
    for d in dims:
        if isinstance(d, int):
            out.append(d)
        else:
            name, lo, hi, path, dim = d
            out.append((symbols.setdefault(name, Symbol(name)), lo, INT_OO if hi is None else hi, path, dim))
    return out


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol: int = 2) -> None:
    """Write ``ep`` to ``f`` (a path or a writable binary file)."""
    from .. import serialization
    nodes = []
    for node in ep.graph.nodes:
        if node.op == "call_module":
            raise ValueError(f"torchish.export.save: the graph calls the submodule '{node.target}' as a whole (its "
                             f"computation dispatches no recordable call), which this format cannot store; save the "
                             f"module's state_dict and export again after loading it")
        if node.op == "call_function":
            target = _qualify(node.target)
        else:
            target = node.target
        nodes.append({"name": node.name, "op": node.op, "target": target, "args": _encode(node.args),
                      "kwargs": _encode(node.kwargs), "sym_shape": node.meta.get("symbolic_shape"),
                      "val": _encode_val(node.meta.get("val")),
                      "sym": node.meta.get("sym")})
    sig = ep.graph_signature
    program = {
        "format": _FORMAT, "nodes": nodes,
        "inputs": [[s.kind.name, s.arg.name, s.target, s.persistent,
                    _encode(s.arg.value) if isinstance(s.arg, ConstantArgument) else None] for s in sig.input_specs],
        "outputs": [[s.kind.name, s.arg.name, s.target,
                     _encode(s.arg.value) if isinstance(s.arg, ConstantArgument) else None] for s in sig.output_specs],
        "parameters": {k: bool(v.requires_grad) for k, v in ep.state_dict.items() if isinstance(v, Parameter)},
        "range_constraints": [[k.name, v.lower, None if v.upper == INT_OO else v.upper]
                              for k, v in ep.range_constraints.items()],
        "in_spec": _encode_spec(ep._in_spec), "out_spec": _encode_spec(ep._out_spec),
        "guards": [[path, _encode_dims(dims)] for path, dims in ep._guards],
        "user_names": ep._user_names,
    }
    flat_inputs, _ = pytree.tree_flatten(ep.example_inputs)
    tensors = {"state_dict": dict(ep.state_dict), "constants": dict(ep.constants),
               "example_inputs": [x if isinstance(x, Tensor) else None for x in flat_inputs]}
    program["example_scalars"] = [None if isinstance(x, Tensor) else _encode(x) for x in flat_inputs]
    program["example_spec"] = _encode_spec(pytree.tree_structure(ep.example_inputs))
    weights = io.BytesIO()
    serialization.save(tensors, weights)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/program.json", json.dumps(program))
        z.writestr("archive/tensors.pt", weights.getvalue())
        for name, content in (extra_files or {}).items():
            z.writestr(f"archive/extra/{name}", content)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            out.write(buf.getvalue())
    else:
        f.write(buf.getvalue())


def load(f, *, extra_files=None, expected_opset_version=None):
    """Read an ExportedProgram written by :func:`save`."""
    from .. import serialization
    from .exported_program import ExportedProgram
    data = open(f, "rb").read() if isinstance(f, (str, os.PathLike)) else f.read()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        program = json.loads(z.read("archive/program.json"))
        tensors = serialization.load(io.BytesIO(z.read("archive/tensors.pt")), weights_only=True)
        for name in list(extra_files or {}):
            extra_files[name] = z.read(f"archive/extra/{name}").decode()
    if program.get("format") != _FORMAT:
        raise RuntimeError(f"torchish.export.load: not a torchish exported program (format {program.get('format')})")
    graph = Graph()
    nodes: dict = {}
    for spec in program["nodes"]:
        target = _resolve(spec["target"]) if spec["op"] == "call_function" else spec["target"]
        node = graph.create_node(spec["op"], target, _decode(spec["args"], nodes), _decode(spec["kwargs"], nodes),
                                 spec["name"])
        for key, meta in (("symbolic_shape", spec["sym_shape"]), ("sym", spec["sym"]),
                          ("val", _decode_val(spec.get("val")))):
            if meta is not None:
                node.meta[key] = meta
        nodes[spec["name"]] = node
    state_dict = collections.OrderedDict()
    for k, v in tensors["state_dict"].items():
        state_dict[k] = Parameter(v, program["parameters"][k]) if k in program["parameters"] else v
    constants = collections.OrderedDict(tensors["constants"])
    input_specs = [InputSpec(InputKind[kind], ConstantArgument(name, _decode(value, {})) if value is not None
                             and kind == "USER_INPUT" else TensorArgument(name), target, persistent)
                   for kind, name, target, persistent, value in program["inputs"]]
    output_specs = [OutputSpec(OutputKind[kind], TensorArgument(name) if value is None
                               else ConstantArgument(name, _decode(value, {})), target)
                    for kind, name, target, value in program["outputs"]]
    symbols: dict = {}
    range_constraints = {symbols.setdefault(name, Symbol(name)): ValueRanges(lo, INT_OO if hi is None else hi)
                         for name, lo, hi in program["range_constraints"]}
    guards = [(path, _decode_dims(dims, symbols)) for path, dims in program["guards"]]
    flat = [t if t is not None else _decode(s, {})
            for t, s in zip(tensors["example_inputs"], program["example_scalars"])]
    example = _decode_spec(program["example_spec"]).unflatten(flat)
    gm = GraphModule({}, graph, "GraphModule")
    return ExportedProgram(gm, ExportGraphSignature(input_specs, output_specs), state_dict, range_constraints,
                           constants, example, _decode_spec(program["in_spec"]), _decode_spec(program["out_spec"]),
                           guards, program["user_names"])


def _encode_val(val):
    """A node's example value as its dtype, shape and strides (what printing shows)."""
    if not isinstance(val, Tensor):
        return None
    return [str(val.dtype).split(".")[-1], list(val.shape), list(val.stride()), str(val.device)]


def _decode_val(val):
    """The example value back as a ``meta``-device tensor of that dtype, shape and strides (no storage)."""
    if val is None:
        return None
    import torchish
    dtype, shape, stride, _ = val
    return torchish.empty_strided(shape, stride, dtype=getattr(torchish, dtype), device="meta")
