"""The model graph for TensorBoard's GRAPHS tab, built from torchish's autograd graph (no TorchScript here).

One forward pass runs with the inputs made to require grad; forward hooks note which autograd nodes each module
created (nodes carry a creation sequence number), so every op node is named ``<module path>/<grad_fn name>_<n>``
and TensorBoard folds it into its module's box. Parameters appear as ``<module path>/<name>`` nodes (op
``Parameter``), inputs and outputs as ``input/<i>`` and ``output/<i>`` (op ``IO Node``), each with its shape.
"""
from __future__ import annotations

from ..._tensor import Tensor
from ...autograd import graph as _graph
from ...autograd.grad_mode import enable_grad


def _shape_attr(shape):
    from tensorboardX.proto import attr_value_pb2, tensor_shape_pb2
    dims = [tensor_shape_pb2.TensorShapeProto.Dim(size=int(s)) for s in shape]
    return attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
        shape=[tensor_shape_pb2.TensorShapeProto(dim=dims)]))


def _flat(x):
    """Tensors in a (nested) tuple/list/dict output, in order."""
    out, stack = [], [x]
    while stack:
        v = stack.pop()
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
    return out


def _run_with_scopes(model, inputs):
    """Run ``model(*inputs)``, returning the output and ``[(first_seq, last_seq, module_path)]`` per module call."""
    spans, starts, handles = [], [], []
    for name, mod in model.named_modules():
        def pre(m, args, _name=name):
            starts.append(next(_graph._SEQ))

        def post(m, args, out, _name=name):
            spans.append((starts.pop(), next(_graph._SEQ), _name))
        handles.append(mod.register_forward_pre_hook(pre))
        handles.append(mod.register_forward_hook(post))
    try:
        with enable_grad():
            out = model(*inputs)
    finally:
        for h in handles:
            h.remove()
    return out, spans


def _scope_of(seq, spans):
    """The innermost (shortest) module span holding ``seq``."""
    best, width = "", None
    for lo, hi, name in spans:
        if lo < seq < hi and (width is None or hi - lo < width):
            best, width = name, hi - lo
    return best


def graph_def(model, input_to_model):
    """A ``GraphDef`` protobuf of one forward pass of ``model``."""
    from tensorboardX.proto import graph_pb2, node_def_pb2, versions_pb2
    if input_to_model is None:
        input_to_model = ()
    args = input_to_model if isinstance(input_to_model, (tuple, list)) else (input_to_model,)
    inputs = []
    for a in args:
        if isinstance(a, Tensor) and a.is_floating_point():
            a = a.detach().requires_grad_(True)
        inputs.append(a)
    out, spans = _run_with_scopes(model, inputs)
    param_names = {id(p): n for n, p in model.named_parameters()}
    input_names = {id(t): f"input/{i}" for i, t in enumerate(inputs) if isinstance(t, Tensor)}

    nodes, names, counts = [], {}, {}

    def add(name, op, inputs_, shape):
        nodes.append(node_def_pb2.NodeDef(name=name, op=op, input=inputs_, attr={"_output_shapes": _shape_attr(shape)}))

    for name in input_names.values():
        t = inputs[int(name.split("/")[1])]
        add(name, "IO Node", [], t.shape)

    def name_of(fn):
        """The graph node standing for ``fn`` (an AccumulateGrad stands for its variable)."""
        key = id(fn)
        if key in names:
            return names[key]
        leaf = getattr(fn, "variable", None)
        if leaf is not None:
            n = input_names.get(id(leaf)) or param_names.get(id(leaf), f"leaf_{len(names)}").replace(".", "/")
            if id(leaf) not in input_names:
                add(n, "Parameter", [], leaf.shape)
        else:
            kind = type(fn).__name__
            counts[kind] = counts.get(kind, 0) + 1
            scope = _scope_of(fn.seq, spans).replace(".", "/")
            n = f"{scope}/{kind}_{counts[kind]}" if scope else f"{kind}_{counts[kind]}"
        names[key] = n
        return n

    outs = _flat(out)
    fns, todo, seen = [], [t.grad_fn for t in outs if t.grad_fn is not None], set()
    while todo:  # iterative walk collecting the op nodes; AccumulateGrad nodes stand for their variables
        fn = todo.pop()
        if id(fn) in seen or getattr(fn, "variable", None) is not None:
            continue
        seen.add(id(fn))
        fns.append(fn)
        todo.extend(_inputs(fn))
    for fn in sorted(fns, key=lambda f: f.seq):  # forward order: numbering follows execution
        preds = _inputs(fn)
        shape = fn.out_meta[0][0] if fn.out_meta else ()
        add(name_of(fn), type(fn).__name__, [name_of(p) for p in preds], shape)
    for i, t in enumerate(outs):
        add(f"output/{i}", "IO Node", [name_of(t.grad_fn)] if t.grad_fn is not None else [], t.shape)
    return graph_pb2.GraphDef(node=nodes, versions=versions_pb2.VersionDef(producer=22))


def _inputs(fn):
    """The nodes ``fn`` takes gradients from: torchish's own edges (the ops that ran; ``next_functions`` shows
    PyTorch's graph, with nodes of its own under a fused ``F.linear``)."""
    return [e[0] for e in fn.next_edges if e is not None and e[0] is not None]
