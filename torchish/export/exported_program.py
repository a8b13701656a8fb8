"""``torch.export.export`` and ``ExportedProgram``: a module's forward recorded once (see :mod:`._capture`) as
a flat fx graph whose placeholders are the parameters, buffers, lifted constants and flattened user inputs,
with its signature, state and the input guards that make ``ep.module()`` refuse inputs the graph was not
recorded for (``AssertionError: Guard failed: x.size()[0] == 4``, as PyTorch's).

Example::

    >>> ep = torchish.export.export(model, (torchish.randn(4, 3),))   # doctest: +SKIP
    >>> ep.module()(torchish.randn(4, 3))                            # doctest: +SKIP
"""
from __future__ import annotations

import collections
import copy
import warnings

from .. import _random
from ..autograd import grad_mode
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..nn import Module, Parameter
from .._tensor import Tensor
from ..utils import _pytree as pytree
from ._capture import ConstraintViolationError, Recorder, UserError, leaf_paths, user_input_names
from .dynamic_shapes import INT_OO, Symbol, ValueRanges, dim_spec
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
                              TensorArgument)


class ExportedProgram:
    """What :func:`export` returns: ``graph_module``/``graph`` (flat: parameters, buffers, constants, then the
    user inputs), ``graph_signature``, ``state_dict``, ``constants``, ``range_constraints``, ``example_inputs``;
    ``module()`` gives a Module to call with the original arguments."""

    def __init__(self, graph_module, graph_signature, state_dict, range_constraints, constants, example_inputs,
                 in_spec, out_spec, guards, user_names):
        self._graph_module = graph_module
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._range_constraints = range_constraints
        self._constants = constants
        self._example_inputs = example_inputs
        self._in_spec = in_spec
        self._out_spec = out_spec
        self._guards = guards
        self._user_names = user_names

    graph_module = property(lambda self: self._graph_module)
    graph_signature = property(lambda self: self._graph_signature)
    state_dict = property(lambda self: self._state_dict)
    range_constraints = property(lambda self: self._range_constraints)
    constants = property(lambda self: self._constants)
    tensor_constants = constants
    example_inputs = property(lambda self: self._example_inputs)
    verifiers = property(lambda self: [])
    dialect = "TRAINING"

    @property
    def graph(self) -> Graph:
        return self._graph_module.graph

    @property
    def call_spec(self):
        return collections.namedtuple("CallSpec", ["in_spec", "out_spec"])(self._in_spec, self._out_spec)

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_parameters(self):
        for target in self._graph_signature.parameters:
            yield target, self._state_dict[target]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        non_persistent = set(self._graph_signature.non_persistent_buffers)
        for target in self._graph_signature.buffers:
            yield target, self._constants[target] if target in non_persistent else self._state_dict[target]

    def module(self) -> Module:
        """A Module taking the exported forward's arguments: the graph with its parameters and buffers as
        attributes (the same tensors as ``state_dict``), after checking each input against the guards."""
        return _module_of(self)

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops: bool = False):
        """A copy of the program. torchish's graph holds its own functions (``F.linear``, ``Tensor.add``), which
        do not decompose further: no ATen core-op set exists to decompose to."""
        modules = {n.target: self._graph_module.get_submodule(n.target) for n in self.graph.nodes
                   if n.op == "call_module"}
        gm = GraphModule(modules, copy.deepcopy(self.graph), "GraphModule")
        return ExportedProgram(gm, self._graph_signature, self._state_dict, self._range_constraints,
                               self._constants, self._example_inputs, self._in_spec, self._out_spec, self._guards,
                               self._user_names)

    def validate(self) -> None:
        self.graph.lint()

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use `exported_program.module()` "
                           "instead.")

    def __str__(self) -> str:
        code = self._graph_module.print_readable(print_output=False).replace("\n", "\n    ")
        sig = str(self._graph_signature).replace("\n", "\n    ")
        return f"ExportedProgram:\n    {code}\nGraph signature: {sig}\nRange constraints: {self._range_constraints}\n"

    __repr__ = __str__


# -- export ---------------------------------------------------------------------------------------------------

def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict: bool = False, preserve_module_call_signature=(),
           prefer_deferred_runtime_asserts_over_guards: bool = False):
    """Record ``mod(*args, **kwargs)`` as an :class:`ExportedProgram` (``torch.export.export``).

    Python control flow on shapes follows the example (the graph is specialised to it); control flow on tensor
    values raises. ``dynamic_shapes`` (a dict by argument name, or a tuple by position, of ``{dim: Dim}``) says
    which sizes may change; the other sizes are checked when ``ep.module()`` is called.
    """
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    kwargs = {} if kwargs is None else dict(kwargs)
    names = user_input_names(mod.forward, args, kwargs)
    values = list(args) + list(kwargs.values())
    specs = _dynamic_specs(dynamic_shapes, names, len(args))

    flat_in, in_spec = pytree.tree_flatten((args, kwargs))
    graph = Graph()
    state_dict = collections.OrderedDict()
    constants = collections.OrderedDict()
    input_specs = []
    attr_paths = _tensor_attr_paths(mod)

    def constant_name(t, i):
        return attr_paths.get(id(t), f"lifted_tensor_{i}")

    recorder = Recorder(graph, constant_name)
    persistent = {name for name, _ in mod.state_dict(keep_vars=True).items()}
    for name, p in mod.named_parameters():
        node = graph.placeholder("p_" + name.replace(".", "_"))
        recorder.bind(p, node)
        input_specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(node.name), name))
        state_dict[name] = p
    for name, b in mod.named_buffers():
        node = graph.placeholder("b_" + name.replace(".", "_"))
        recorder.bind(b, node)
        input_specs.append(InputSpec(InputKind.BUFFER, TensorArgument(node.name), name, name in persistent))
        (state_dict if name in persistent else constants)[name] = b

    guards, symbols, range_constraints = [], {}, {}
    flat_names = []
    for name, value, spec in zip(names, values, specs):
        flat_specs = _flat_dim_specs(spec, value, name)
        for (pname, gpath), leaf, dspec in zip(leaf_paths(name, value), pytree.tree_leaves(value), flat_specs):
            flat_names.append(pname)
            if not isinstance(leaf, Tensor):
                input_specs.append(InputSpec(InputKind.USER_INPUT, ConstantArgument(pname, leaf), None))
                guards.append((gpath, None))
                continue
            node = graph.placeholder(pname)
            node.meta["kind"] = "user_input"
            recorder.bind(leaf, node)
            input_specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(node.name), None))
            dims = []
            for d, size in enumerate(leaf.shape):
                found = dim_spec(dspec.get(d)) if isinstance(dspec, dict) else None
                if found is None:
                    dims.append(int(size))
                    continue
                key, lo, hi = found
                if not lo <= size <= hi:
                    raise _constraint_violation(f"{size} not in range [{lo}, {hi}]")
                key = key if key is not None else (gpath, d)
                if key not in symbols:
                    symbols[key] = (Symbol(f"s{len(symbols)}"), lo, hi, gpath, d)
                    range_constraints[symbols[key][0]] = ValueRanges(lo, hi)
                dims.append(symbols[key])
                recorder.dynamic.setdefault(id(leaf), {})[d] = symbols[key]
            guards.append((gpath, dims))

    rng = _random.get_rng_state()
    # (the capture runs the real forward: what it writes in place, running stats, an input, is put back after)
    written = [t for _, t in mod.named_buffers()] + [t for t in flat_in if isinstance(t, Tensor)]
    saved = [(t, t._version, t.detach().clone()) for t in written]
    try:
        grad_on = grad_mode.is_grad_enabled()
        recorder.module_paths = {id(m): name for name, m in mod.named_modules() if name}
        module_call, own_call = Module.__call__, "__call__" in vars(Module)

        def recording_call(self, *a, **k):
            return recorder.module_call(module_call, self, a, k)
        Module.__call__ = recording_call
        with recorder:  # (in the caller's grad mode: a no_grad block of forward records its switches)
            out = mod(*args, **kwargs)
            flat_out, out_spec = pytree.tree_flatten(out)
            out_args = tuple(recorder.node_of(o) if isinstance(o, Tensor) else o for o in flat_out)
        recorder.sync_grad_mode(grad_on)
    finally:
        if own_call:
            Module.__call__ = module_call
        elif "__call__" in vars(Module):
            del Module.__call__
        _random.set_rng_state(rng)
        with grad_mode.no_grad():
            for t, version, value in saved:
                if t._version != version:
                    t.copy_(value)
    if recorder.orphans:
        warnings.warn(f"torchish.export: forward made {len(recorder.orphans)} tensor(s) through code that dispatches "
                      f"no call outside any submodule; they are kept as constants (lifted_tensor_*), so the graph "
                      f"gives their example values for every input")
    graph.output(out_args)
    for pname, (target, t) in recorder.constants.items():
        input_specs.insert(_first_user(input_specs), InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(pname),
                                                               target))
        constants[target] = t
    output_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(a.name) if hasattr(a, "name")
                               else ConstantArgument("", a), None) for a in out_args]
    _annotate(graph, recorder)
    gm = GraphModule(dict(recorder.called_modules), graph, "GraphModule")
    sig = ExportGraphSignature(input_specs, output_specs)
    example = (tuple(args), kwargs)
    return ExportedProgram(gm, sig, state_dict, range_constraints, constants, example, in_spec, out_spec, guards,
                           flat_names)


def _first_user(input_specs) -> int:
    for i, spec in enumerate(input_specs):
        if spec.kind is InputKind.USER_INPUT:
            return i
    return len(input_specs)


def _constraint_violation(msg):
    return ConstraintViolationError(msg + "\n\nThe error above occurred when calling torch.export.export.")


def _tensor_attr_paths(mod) -> dict:
    """id(tensor) -> its attribute path, for plain tensor attributes (not parameters or buffers)."""
    out = {}
    for prefix, m in mod.named_modules():
        for k, v in vars(m).items():
            if isinstance(v, Tensor) and not isinstance(v, Parameter):
                out.setdefault(id(v), f"{prefix}.{k}" if prefix else k)
    return out


def _dynamic_specs(dynamic_shapes, names: list, nargs: int) -> list:
    """One spec per argument (None: all static)."""
    if dynamic_shapes is None:
        return [None] * len(names)
    if isinstance(dynamic_shapes, dict):
        unknown = [k for k in dynamic_shapes if k not in names]
        if unknown:
            raise _user_error(f"When `dynamic_shapes` is specified as a dict, its top-level keys must be the "
                              f"arg names {names} of `inputs`, but here they are {list(dynamic_shapes)}.")
        return [dynamic_shapes.get(n) for n in names]
    if isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(names):
            raise _user_error(f"dynamic_shapes has {len(dynamic_shapes)} entries but the inputs have {len(names)}")
        return list(dynamic_shapes)
    raise _user_error(f"dynamic_shapes must be a dict, tuple or list, got {type(dynamic_shapes)}")


def _user_error(msg):
    return UserError(msg)


def _flat_dim_specs(spec, value, name) -> list:
    """The spec of each tensor leaf of one argument (a dict ``{dim: Dim}``, or None)."""
    leaves = pytree.tree_leaves(value)
    if spec is None:
        return [None] * len(leaves)
    if isinstance(value, Tensor):
        if isinstance(spec, (tuple, list)):
            spec = dict(enumerate(spec))
        return [spec]
    if isinstance(value, dict):
        return [s for k in value for s in _flat_dim_specs(spec.get(k), value[k], name)]
    if isinstance(value, (tuple, list)):
        return [s for v, sp in zip(value, spec) for s in _flat_dim_specs(sp, v, name)]
    return [None] * len(leaves)


def _annotate(graph, recorder) -> None:
    """Each tensor node's example value (``meta['val']``, whose dtype and shape ``print(ep)`` shows) and, where
    sizes are dynamic, its symbolic shape."""
    for tensor in recorder.keep:
        node = recorder.nodes.get(id(tensor))
        if node is not None:
            node.meta.setdefault("val", tensor.detach())
            syms = recorder.dynamic.get(id(tensor))
            if syms:
                node.meta["symbolic_shape"] = [syms[d][0].name if d in syms else int(s)
                                               for d, s in enumerate(tensor.shape)]
    for node in graph.nodes:
        if node.op == "call_function" and node.target.__name__ == "sym_size_int":
            src = node.args[0].meta.get("symbolic_shape")
            if src is not None:
                node.meta["sym"] = src[node.args[1]]


# -- ep.module() ----------------------------------------------------------------------------------------------

def _module_of(ep: ExportedProgram) -> Module:
    graph = copy.deepcopy(ep.graph)
    sig = ep.graph_signature
    attrs = {}
    by_name = {s.arg.name: s for s in sig.input_specs}
    first = None
    for node in list(graph.nodes):
        if node.op != "placeholder":
            continue
        spec = by_name.get(node.name)
        if spec is None or spec.kind is InputKind.USER_INPUT:
            first = first or node
            continue
        tensor = (ep.state_dict.get(spec.target) if spec.target in ep.state_dict else ep.constants[spec.target])
        attrs[spec.target] = tensor
        with graph.inserting_before(node):
            getter = graph.get_attr(spec.target)
        node.replace_all_uses_with(getter)
        graph.erase_node(node)
        getter.name = spec.target.replace(".", "_")
    for node in graph.nodes:
        if node.op == "call_module":  # (a submodule whose calls dispatch nothing: see _capture.module_call)
            attrs[node.target] = ep.graph_module.get_submodule(node.target)
    module = _ExportedModule(attrs, graph, ep)
    return module


class _ExportedModule(GraphModule):
    """``ep.module()``: takes the exported forward's arguments, checks the guards, runs the graph on the
    flattened inputs and gives back the outputs in the forward's structure."""

    def __init__(self, attrs: dict, graph: Graph, ep: ExportedProgram):
        self.__dict__["_ep_specs"] = (ep._in_spec, ep._out_spec, ep._guards)
        super().__init__(attrs, graph, "GraphModule")

    def recompile(self):
        code = super().recompile()
        inner = type(self).forward
        in_spec, out_spec, guards = self.__dict__["_ep_specs"]

        def forward(self, *args, **kwargs):
            flat, spec = pytree.tree_flatten((args, kwargs))
            if spec != in_spec:
                raise ValueError(f"Trying to flatten user inputs with exported input tree spec: \n{in_spec}\nbut "
                                 f"actually got inputs with tree spec of: \n{spec}.\nPlease check that the inputs "
                                 f"have the same number and type of args and kwargs as the ones you used when "
                                 f"tracing.")
            _check_guards(flat, guards)
            out = inner(self, *[v for v, (_, dims) in zip(flat, guards) if dims is not None])
            return pytree.tree_unflatten(list(out), out_spec)
        type(self).forward = forward
        return code


def _check_guards(flat: list, guards: list) -> None:
    seen = {}
    for value, (path, dims) in zip(flat, guards):
        if dims is None:
            continue
        if not isinstance(value, Tensor):
            raise AssertionError(f"Guard failed: isinstance({path}, torch.Tensor)")
        shape = value.shape
        for d, want in enumerate(dims):
            if d >= len(shape):
                break
            size = shape[d]
            where = f"{path}.size()[{d}]"
            if isinstance(want, int):
                if size != want:
                    raise AssertionError(f"Guard failed: {where} == {want}")
                continue
            sym, lo, hi, _, _ = want
            if sym.name in seen:
                if size != seen[sym.name][0]:
                    raise AssertionError(f"Guard failed: {where} == {seen[sym.name][1]}")
                continue
            seen[sym.name] = (size, where)
            if hi != INT_OO and size > hi:
                raise AssertionError(f"Guard failed: {where} <= {hi}")
            if lo > 2 and size < lo:
                raise AssertionError(f"Guard failed: {where} >= {lo}")
