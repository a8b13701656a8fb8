"""``torchish.library.infer_schema``: an operator schema from a function's type annotations, as PyTorch infers it.

    >>> def f(x: torchish.Tensor, n: int = 2) -> torchish.Tensor: ...
    >>> infer_schema(f, mutates_args=())
    '(Tensor x, SymInt n=2) -> Tensor'

The accepted annotations and the ValueErrors for the others follow ``torch/_library/infer_schema.py``.
"""
from __future__ import annotations

import collections.abc
import inspect
import typing
from types import GenericAlias

from .._device import device as _device
from .._dtype import dtype as _dtype
from .._tensor import Tensor
from ..types import Number


def _derived(base, name, list_base, optional_base_list, optional_list_base):
    seqs = lambda t: (typing.Sequence[t], typing.List[t], GenericAlias(collections.abc.Sequence, (t,)),  # noqa: E731
                      GenericAlias(list, (t,)))
    out = [(base, name), (typing.Optional[base], f"{name}?")]
    if list_base:
        out += [(s, f"{name}[]") for s in seqs(base)]
    if optional_base_list:
        out += [(s, f"{name}?[]") for s in seqs(typing.Optional[base])]
    if optional_list_base:
        out += [(typing.Optional[s], f"{name}[]?") for s in seqs(base)]
    return out


SUPPORTED_PARAM_TYPES = dict(
    pair for row in ((Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
                     (float, "float", True, False, True), (bool, "bool", True, False, True),
                     (str, "str", False, False, False), (Number, "Scalar", True, False, False),
                     (_dtype, "ScalarType", False, False, False), (_device, "Device", False, False, False))
    for pair in _derived(*row))
SUPPORTED_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",
                          int: "SymInt", float: "float", bool: "bool", Number: "Scalar"}


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    from .._tags import Tag, normalize
    sig = inspect.signature(prototype_function)
    tags = normalize(tags)
    is_inplace, is_out = Tag.inplace in tags, Tag.out in tags
    if is_inplace and is_out:
        raise AssertionError("torch.Tag.inplace and torch.Tag.out are mutually exclusive")
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)
    first = None  # (name, schema type, alias) of the first positional-or-keyword argument
    out_aliases, out_names = [], []

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(annotation):
        """A string annotation (``from __future__ import annotations``, ``list["Tensor"]``) evaluated in the
        function's module, as PyTorch does."""
        if isinstance(annotation, str):
            try:
                return eval(annotation, prototype_function.__globals__)  # noqa: S307  (PyTorch does the same)
            except NameError as e:
                error_fn(f"Unsupported type annotation {annotation}. It is not a type. ({e}). If you are using "
                         "'from __future__ import annotations', note that annotations are evaluated lazily as "
                         "strings; make sure all types referenced in annotations are importable at module scope, "
                         "not only inside a local function.")
            except Exception as e:  # noqa: BLE001
                error_fn(f"Unsupported type annotation {annotation}. It is not a type. ({type(e).__name__}: {e})")
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is not None and any(isinstance(a, str) for a in args):
            return GenericAlias(origin, tuple(resolve(a) for a in args))
        return annotation

    params, seen = [], set()
    star = False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        ann = resolve(param.annotation)
        if ann not in SUPPORTED_PARAM_TYPES:
            if typing.get_origin(ann) is tuple:
                error_fn(f"Parameter {name} has unsupported type {param.annotation}. We do not support Tuple inputs "
                         f"in schema. As a workaround, please try to use List instead. \n\nThe valid types are: "
                         f"{SUPPORTED_PARAM_TYPES.keys()}.")
            error_fn(f"Parameter {name} has unsupported type {param.annotation}. The valid types are: "
                     f"{SUPPORTED_PARAM_TYPES.keys()}.")
        schema_type = SUPPORTED_PARAM_TYPES[ann]
        if param.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and first is None:
            first = (name, schema_type, f"a{idx}")
        mutated = type(mutates_args) is str or name in mutates_args
        if type(mutates_args) is str:
            if mutates_args != "unknown":
                raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                                 "mutated or the string 'unknown'. ")
            if schema_type.startswith("Tensor"):
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        elif name in mutates_args:
            if not schema_type.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                         "mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        if is_out and mutated and schema_type.startswith("Tensor"):
            if param.kind != inspect.Parameter.KEYWORD_ONLY:
                error_fn("torch.Tag.out requires mutable arguments to be keyword-only.")
            if schema_type != f"Tensor(a{idx}!)":
                error_fn("torch.Tag.out only supports mutable keyword-only Tensor arguments.")
            out_aliases.append(f"a{idx}")
            out_names.append(name)
        seen.add(name)
        params.append(f"{schema_type} {name}" if param.default is inspect.Parameter.empty
                      else f"{schema_type} {name}={_default_repr(name, param.default, error_fn)}")
    if mutates_args != "unknown":
        missing = set(mutates_args) - seen
        if missing:
            error_fn(f"{missing} in mutates_args were not found in the custom op's signature. mutates_args should "
                     "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                     "don't know.")
    if is_inplace:
        if first is None:
            error_fn("torch.Tag.inplace requires a positional Tensor argument.")
        if first[1] != "Tensor":
            error_fn("torch.Tag.inplace requires the first positional argument to be a Tensor.")
        if type(mutates_args) is str or set(mutates_args) != {first[0]}:
            error_fn(f"torch.Tag.inplace requires mutates_args to contain exactly the first positional argument, "
                     f"got {mutates_args}.")
    if is_out and not out_aliases:
        error_fn("torch.Tag.out requires at least one mutable keyword-only Tensor argument.")
    annotation = resolve(sig.return_annotation)
    if is_out:
        ret = _out_return(annotation, out_aliases, out_names, error_fn)
    else:
        ret = _parse_return(annotation, error_fn)
    if is_inplace:
        if ret != "Tensor":
            error_fn("torch.Tag.inplace requires the return annotation to be torch.Tensor.")
        ret = f"Tensor({first[2]}!)"
    return f"{op_name or ''}({', '.join(params)}) -> {ret}"


def _out_return(annotation, aliases, names, error_fn):
    """``Tag.out``: the op returns its keyword-only output buffers, aliased in the schema."""
    if len(aliases) == 1:
        matches = annotation is Tensor
    else:
        matches = typing.get_origin(annotation) is tuple and typing.get_args(annotation) == (Tensor,) * len(aliases)
    if not matches:
        error_fn(f"torch.Tag.out requires the return annotation to match the mutable keyword-only Tensor arguments "
                 f"{tuple(names)}.")
    rets = [f"Tensor({a}!)" for a in aliases]
    return rets[0] if len(rets) == 1 else f"({', '.join(rets)})"


def _default_repr(name, default, error_fn):
    if default is None or isinstance(default, (int, float, bool)):
        return str(default)
    if isinstance(default, (str, _device)):
        return f'"{default}"'
    if isinstance(default, _dtype):
        return str(default).split(".")[-1]
    error_fn(f"Parameter {name} has an unsupported default value type {type(default)}. Please file an issue on "
             "GitHub so we can prioritize this.")


def _parse_return(annotation, error_fn):
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is not tuple:
        if annotation not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
        return SUPPORTED_RETURN_TYPES[annotation]
    args = typing.get_args(annotation)
    for arg in args:
        if arg not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
    out = ", ".join(SUPPORTED_RETURN_TYPES[a] for a in args)
    return f"(({out}))" if len(args) == 1 else f"({out})"
