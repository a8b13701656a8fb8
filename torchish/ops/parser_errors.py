"""PyTorch's argument-parser TypeErrors, for the calls its parser refuses before any kernel runs.

PyTorch checks a call's arguments against the op's overloads first: where exactly one overload takes that many
arguments it names the argument that does not fit (``nansum(): argument 'dim' (position 2) must be tuple of ints,
not bool``), otherwise it lists the overloads (``sum() received an invalid combination of arguments - got (Tensor,
bool), but expected one of: ...``), some with the reason they did not match. torchish's functions check their
arguments as they use them, so a bad one raises some TypeError there; on that error path (never on a call that
succeeds) the functions listed in :data:`SIGNATURES` ask :func:`message` for PyTorch's wording, which returns None
when PyTorch's parser would have taken the call (the error is then the op's own).

The "didn't match because" lines follow what PyTorch 2.13 prints: its second, simpler parser of the printed
signatures reads the last word of each argument as its name and gives a reason only for an overload with as many
arguments as the call (a ``*`` and each argument counted), which is why ``int dim = None`` refuses ``dim=``.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .elementwise import type_name as _type_name

_OUT = "Tensor out = None"
_OUTS = "tuple of Tensors out = None"
# each op's overloads as PyTorch prints them (its function form: a method's drop ``Tensor input`` and ``out``; a
# ``?`` marks a parameter that takes None though its printed form does not say so, ``[]`` a list of ints of no size
# (``int[]`` in PyTorch's schema, not ``int[1]``), which takes neither a lone int nor None)
SIGNATURES = {
    "sum": ("(Tensor input, *, torch.dtype dtype = None)",
            f"(Tensor input, tuple of ints? dim, bool keepdim = False, *, torch.dtype dtype = None, {_OUT})"),
    "mean": (f"(Tensor input, *, torch.dtype dtype = None, {_OUT})",
             f"(Tensor input, tuple of ints? dim, bool keepdim = False, *, torch.dtype dtype = None, {_OUT})"),
    "prod": ("(Tensor input, *, torch.dtype dtype = None)",
             f"(Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, {_OUT})"),
    "nansum": (f"(Tensor input, tuple of ints dim = None, bool keepdim = False, *, torch.dtype dtype = None, {_OUT})",),
    "nanmean": (f"(Tensor input, tuple of ints dim = None, bool keepdim = False, *, torch.dtype dtype = None, "
                f"{_OUT})",),
    "amax": (f"(Tensor input, tuple of ints dim = (), bool keepdim = False, *, {_OUT})",),
    "amin": (f"(Tensor input, tuple of ints dim = (), bool keepdim = False, *, {_OUT})",),
    "logsumexp": (f"(Tensor input, tuple of ints dim, bool keepdim = False, *, {_OUT})",),
    "argmax": (f"(Tensor input, int dim = None, bool keepdim = False, *, {_OUT})",),
    "argmin": (f"(Tensor input, int dim = None, bool keepdim = False, *, {_OUT})",),
    "aminmax": (f"(Tensor input, *, int dim = None, bool keepdim = False, {_OUTS})",),
    "max": (f"(Tensor input, *, {_OUT})", f"(Tensor input, Tensor other, *, {_OUT})",
            f"(Tensor input, int dim, bool keepdim = False, *, {_OUTS})"),
    "min": (f"(Tensor input, *, {_OUT})", f"(Tensor input, Tensor other, *, {_OUT})",
            f"(Tensor input, int dim, bool keepdim = False, *, {_OUTS})"),
    "median": ("(Tensor input)", f"(Tensor input, int dim, bool keepdim = False, *, {_OUTS})"),
    "nanmedian": ("(Tensor input)", f"(Tensor input, int dim, bool keepdim = False, *, {_OUTS})"),
    **{n: (f"(Tensor input, *, {_OUT})", f"(Tensor input, tuple of ints[] dim = None, bool keepdim = False, *, {_OUT})",
           f"(Tensor input, int dim, bool keepdim = False, *, {_OUT})") for n in ("all", "any")},  # (int[]? dim)
    "cumsum": (f"(Tensor input, int dim, *, torch.dtype dtype = None, {_OUT})",),
    "cumprod": (f"(Tensor input, int dim, *, torch.dtype dtype = None, {_OUT})",),
    "cummax": (f"(Tensor input, int dim, *, {_OUTS})",),
    "cummin": (f"(Tensor input, int dim, *, {_OUTS})",),
    "count_nonzero": ("(Tensor input, int dim = None)", "(Tensor input, tuple of ints[] dim)"),
    "mode": (f"(Tensor input, int dim = -1, bool keepdim = False, *, {_OUTS})",),
    "logcumsumexp": (f"(Tensor input, int dim, *, {_OUT})",),
    "unsqueeze": ("(Tensor input, int dim)",),
    "squeeze": ("(Tensor input)", "(Tensor input, int dim)", "(Tensor input, tuple of ints[] dim)"),
    "transpose": ("(Tensor input, int dim0, int dim1)",),
    "t": ("(Tensor input)",),
    "movedim": ("(Tensor input, int source, int destination)",
                "(Tensor input, tuple of ints[] source, tuple of ints[] destination)"),
    "moveaxis": ("(Tensor input, int source, int destination)",
                 "(Tensor input, tuple of ints[] source, tuple of ints[] destination)"),
    "swapaxes": ("(Tensor input, int axis0, int axis1)",),
    "swapdims": ("(Tensor input, int dim0, int dim1)",),
    "flip": ("(Tensor input, tuple of ints[] dims)",),
    "roll": ("(Tensor input, tuple of ints shifts, tuple of ints dims = ())",),
    "unbind": ("(Tensor input, int dim = 0)",),
    "round": (f"(Tensor input, *, {_OUT})", f"(Tensor input, *, int decimals, {_OUT})"),
    "diag_embed": ("(Tensor input, int offset = 0, int dim1 = -2, int dim2 = -1)",),
    "rot90": ("(Tensor input, int k = 1, tuple of ints[] dims = [0,1])",),
    "logit": (f"(Tensor input, float eps = None, *, {_OUT})",),
    **{n: ("(Tensor input, Tensor other, float rtol = 1e-05, float atol = 1e-08, bool equal_nan = False)",)
       for n in ("isclose", "allclose")},
    "histc": (f"(Tensor input, int bins = 100, Number min = 0, Number max = 0, *, {_OUT})",),
    "renorm": (f"(Tensor input, Number p, int dim, Number maxnorm, *, {_OUT})",),
    **{n: ("(Tensor input, tuple of ints[] size, tuple of ints[] stride, int? storage_offset = None)",)
       for n in ("as_strided", "as_strided_")},
    "tensor_split": ("(Tensor input, tuple of ints[] indices, int dim = 0)",
                     "(Tensor input, Tensor tensor_indices_or_sections, int dim = 0)",
                     "(Tensor input, int sections, int dim = 0)"),
    **{n: ("(Tensor input, int sections)", "(Tensor input, tuple of ints[] indices)") for n in ("hsplit", "vsplit",
                                                                                             "dsplit")},
    **{f"clamp_{n}": (f"(Tensor input, Tensor {n}, *, {_OUT})", f"(Tensor input, Number {n}, *, {_OUT})")
       for n in ("min", "max")},
    "repeat_interleave": ("(Tensor input, Tensor repeats, int dim = None, *, int output_size = None)",
                          "(Tensor repeats, *, int output_size = None)",
                          "(Tensor input, int repeats, int dim = None, *, int output_size = None)"),
    **{n: ("(int row, int col, int offset = 0, *, torch.dtype dtype = None, torch.layout layout = None, "
           "torch.device device = None, bool pin_memory = False)",) for n in ("tril_indices", "triu_indices")},
    "narrow": ("(Tensor input, int dim, Tensor start, int length)", "(Tensor input, int dim, int start, int length)"),
    "permute": ("(Tensor input, tuple of ints[] dims)",),
    "reshape": ("(Tensor input, tuple of ints[] shape)",),
    **{n: (f"(Tensor input, tuple of ints? dim, bool unbiased = True, bool keepdim = False{o})",  # (int[1]? dim)
           f"(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False{k})",
           "(Tensor input, bool unbiased = True)")
       for n, o, k in (("std", f", *, {_OUT}", f", {_OUT}"), ("var", f", *, {_OUT}", f", {_OUT}"),
                       ("std_mean", "", ""), ("var_mean", "", ""))},
    "softmax": (f"(Tensor input, int dim, torch.dtype dtype = None, *, {_OUT})",),
    "log_softmax": (f"(Tensor input, int dim, torch.dtype dtype = None, *, {_OUT})",),
    # (torch.norm calls these with its arguments: see stats.norm)
    "linalg_vector_norm": (f"(Tensor input, Number ord = 2, tuple of ints dim = None, bool keepdim = False, *, "
                           f"torch.dtype dtype = None, {_OUT})",),
    "linalg_matrix_norm": tuple(f"(Tensor input, {o}, tuple of ints[] dim = {{-2,-1}}, bool keepdim = False, *, "
                                f"torch.dtype dtype = None, {_OUT})" for o in ("Number ord", 'str ord = "fro"')),
    "arange": tuple(f"({s}*, {o}torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
                    "bool pin_memory = False, bool requires_grad = False)"
                    for s, o in (("Number end, ", _OUT + ", "), ("Number start, Number end, ", ""),
                                 ("Number start, Number end, Number step = 1, ", _OUT + ", "))),
    "eye": tuple(f"(int n, {m}*, {_OUT}, torch.dtype dtype = None, torch.layout layout = None, "
                 "torch.device device = None, bool pin_memory = False, bool requires_grad = False)"
                 for m in ("", "int m, ")),
    # (the overloads with a generator want it: PyTorch prints it without a default)
    "randint": tuple(f"({s}tuple of ints size, *, {g}{_OUT}, torch.dtype dtype = None, torch.layout layout = None, "
                     "torch.device device = None, bool pin_memory = False, bool requires_grad = False)"
                     for s in ("int high, ", "int low, int high, ") for g in ("torch.Generator generator, ", "")),
    **{f"linalg_{n}": tuple(f"(Tensor input, *, {t} atol = None, {t} rtol = None, bool hermitian = False, {_OUT})"
                            for t in ("Tensor", "float")) +
       tuple(f"(Tensor input, {t} {tol}, bool hermitian = False, *, {_OUT})" for t in ("Tensor", "float"))
       for n, tol in (("matrix_rank", "tol"), ("pinv", "rcond"))},
    "randperm": tuple(f"(int n, *, {g}{_OUT}, torch.dtype dtype = None, torch.layout layout = None, torch.device "
                      "device = None, bool pin_memory = False, bool requires_grad = False)"
                      for g in ("torch.Generator generator, ", "")),
    "where": ("(Tensor condition)", f"(Tensor condition, Tensor input, Tensor other, *, {_OUT})",
              "(Tensor condition, Number self, Tensor other)", "(Tensor condition, Tensor input, Number other)",
              "(Tensor condition, Number self, Number other)"),
    "randint_like": tuple(f"(Tensor input, {s}*, {g}torch.memory_format memory_format = None, torch.dtype dtype = "
                          "None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
                          "bool requires_grad = False)"
                          for s in ("int low, int high, ", "Tensor high, ", "int high, ")
                          for g in ("torch.Generator generator, ", "")),
}
METHOD_SIGNATURES = {  # (methods only: as printed)
    "view": ("(torch.dtype dtype)", "(tuple of ints size)"),
    "uniform_": ("(float from = 0, float to = 1, *, torch.Generator generator = None)",),
    "normal_": ("(float mean = 0, float std = 1, *, torch.Generator generator = None)",),
    "cauchy_": ("(float median = 0, float sigma = 1, *, torch.Generator generator = None)",),
    "log_normal_": ("(float mean = 1, float std = 2, *, torch.Generator generator = None)",),
    "exponential_": ("(float lambd = 1, *, torch.Generator generator = None)",),
    "geometric_": ("(float p, *, torch.Generator generator = None)",),
    "random_": ("(*, torch.Generator generator = None)", "(int from, int? to, *, torch.Generator generator = None)",
                "(int to, *, torch.Generator generator = None)"),
}


def type_name(v):
    """The name PyTorch's parser gives ``v``'s type (``torch.dtype``, ``numpy.float64``, ``list``)."""
    if isinstance(v, _dtype.dtype):
        return "torch.dtype"
    return _type_name(v)


class _Param:
    __slots__ = ("type", "name", "required", "nullable", "keyword_only", "sized")

    def __init__(self, text, keyword_only):
        head, _, default = text.partition(" = ")
        ptype, _, self.name = head.rpartition(" ")
        self.sized = not ptype.rstrip("?").endswith("[]")  # (a list of ints that takes a lone int too)
        self.type = ptype.rstrip("?").removesuffix("[]")
        # None is taken where the default is None, by a sized list of ints with any default, and where the table
        # says "?"
        self.nullable = default == "None" or ptype.endswith("?") or \
            bool(default) and self.type == "tuple of ints" and self.sized
        self.required = not default
        self.keyword_only = keyword_only


class _Overload:
    """One of PyTorch's signatures: its printed text and its parameters."""

    def __init__(self, text):
        self.text = text.replace("? ", " ").replace("[] ", " ")
        self.params = []
        star = False
        for token in text[1:-1].split(", ") if text != "()" else ():
            if token == "*":
                star = True
            else:
                self.params.append(_Param(token, star))
        self.positional = [p for p in self.params if not p.keyword_only]
        self.min_args = sum(p.required for p in self.params)


def _method_text(text):
    """A function's printed signature as its method's: without ``Tensor input`` and ``out``."""
    tokens = [t for t in text[1:-1].split(", ") if t and t != "Tensor input" and not t.endswith(" out = None")]
    if tokens and tokens[-1] == "*":
        tokens.pop()
    return "(" + ", ".join(tokens) + ")"


_CACHE: dict = {}


def _overloads(name, method):
    key = (name, method)
    if key not in _CACHE:
        if name in METHOD_SIGNATURES:
            texts = METHOD_SIGNATURES[name] if method else None
        else:  # (an in-place method has its function's overloads: ``squeeze_(int dim)``)
            texts = SIGNATURES.get(name, SIGNATURES.get(name[:-1]) if method and name.endswith("_") else None)
            if texts is not None and method:
                texts = tuple(_method_text(t) for t in texts)
        _CACHE[key] = None if texts is None else [_Overload(t) for t in texts]
    return _CACHE[key]


def _int_like(v, zero_dim=False):
    if isinstance(v, Tensor):  # (one integer element; no dims for an ``int`` parameter)
        return (v.ndim == 0 if zero_dim else v.numel() == 1) and v.dtype.category == _dtype._INT
    return not isinstance(v, (bool, np.bool_)) and (isinstance(v, (int, np.integer)) or
                                                    hasattr(type(v), "__index__"))


def _fits(ptype, v):
    """Whether PyTorch's parser takes ``v`` for a parameter of type ``ptype`` (leniently: types not modelled
    pass, so that a call PyTorch takes is never reported)."""
    if ptype == "Tensor":
        return isinstance(v, Tensor)
    if ptype == "int":
        return _int_like(v, zero_dim=True)
    if ptype == "tuple of ints":  # (its parser reads the first item as the list's type: see _unpacked)
        if isinstance(v, (tuple, list)):
            return not v or _int_like(v[0])
        return _int_like(v)
    if ptype == "bool":
        return isinstance(v, (bool, np.bool_))
    if ptype in ("Number", "float"):  # (a Tensor only with no dims, not requiring grad; complex only as a Number)
        if isinstance(v, Tensor):
            return v.ndim == 0 and not v.requires_grad
        return isinstance(v, (int, float, np.integer, np.floating, np.bool_)) or \
            ptype == "Number" and isinstance(v, (complex, np.complexfloating))
    if ptype == "torch.dtype":
        return is_dtype(v)
    if ptype == "str":
        return isinstance(v, str)
    return True


def is_dtype(v):
    """Whether PyTorch's parser takes ``v`` as a dtype: a dtype or the Python type float, int, bool or complex (no
    name, numpy type or Tensor)."""
    return isinstance(v, _dtype.dtype) or v is float or v is int or v is bool or v is complex


def _fits_param(p, v):
    """:func:`_fits` for the parameter ``p`` (a list of ints of no size takes no lone int)."""
    if not p.sized and not isinstance(v, (tuple, list)):
        return False
    return _fits(p.type, v)


def _varargs(o, args):
    """``args`` as the overload reads them: a method whose one positional parameter is a required list of ints takes
    them spread out (``x.flip(0, 1)``, ``x.view(2, 3)``, one alone too: ``x.flip(0)``; not ``x.std(0, 1)``, whose
    ``dim`` has a default) when the first is an int (a list or float first: too many)."""
    if args and len(o.positional) == 1 and o.positional[0].type == "tuple of ints" and o.positional[0].required \
            and _int_like(args[0]):
        return (args,)
    return args


def _takes(o, args, kwargs):
    args = _varargs(o, args)
    if len(args) > len(o.positional):
        return False
    given = {p.name for p in o.positional[:len(args)]}
    names = {p.name: p for p in o.params}
    if any(k not in names or k in given for k in kwargs):
        return False
    for p, v in zip(o.positional, args):
        if not (v is None and p.nullable or _fits_param(p, v)):
            return False
    for k, v in kwargs.items():
        if not (v is None and names[k].nullable or _fits_param(names[k], v)):
            return False
    return all(not p.required or p.name in given or p.name in kwargs for p in o.params)


def _unpacked(p, v):
    """The index of the first item of a list of ints that is no int (PyTorch fails to unpack it only after every
    parameter was read), or None."""
    if p.type == "tuple of ints" and isinstance(v, (tuple, list)):
        return next((i for i, x in enumerate(v) if not (_int_like(x) or (i and isinstance(x, bool)))), None)
    return None


def _unpack_error(name, o, args, kwargs):
    """PyTorch's error for a list of ints with an item that is no int, in the overload ``o`` its parser chose."""
    args = _varargs(o, args)
    for i, p in reversed(list(enumerate(o.params))):  # (the binding unpacks its arguments last to first)
        v = args[i] if i < len(args) and not p.keyword_only else kwargs.get(p.name)
        bad = _unpacked(p, v)
        if bad is not None:
            return (f"{name}(): argument '{p.name}' failed to unpack the object at pos {bad + 1} with error \"type "
                    f"must be tuple of ints,but got {type_name(v[bad])}\"")
    return None


def _argument(name, p, v, position):
    where = f" (position {position})" if position else ""
    if p.type == "tuple of ints" and isinstance(v, (tuple, list)) and position:
        return (f"{name}(): argument '{p.name}'{where} must be tuple of ints, but found element of type "
                f"{type_name(v[0])} at pos 0")
    return f"{name}(): argument '{p.name}'{where} must be {p.type}, not {type_name(v)}"


def _specific(name, o, args, kwargs):
    """PyTorch's error for the one overload that takes this many arguments (None where it is none of these)."""
    args = _varargs(o, args)
    n, most = len(args), len(o.positional)
    if n > most:
        least = sum(p.required for p in o.positional)
        takes = f"{most}" if least == most else f"from {least} to {most}"
        return (f"{name}() takes {takes} positional argument{'' if least == most == 1 else 's'} but {n} "
                f"{'was' if n == 1 else 'were'} given")
    positions = {p.name: i for i, p in enumerate(o.positional[:n])}
    for p in o.params:  # (in the signature's order, as PyTorch's parser reads them)
        if p.name in positions:
            v, position = args[positions[p.name]], positions[p.name] + 1
        elif p.name in kwargs:
            v, position = kwargs[p.name], None
        elif p.required:  # (PyTorch names every required parameter from this one on, given by keyword or not)
            missing = [q.name for q in o.params[o.params.index(p):] if q.required]
            # (PyTorch's plural: "1 required positional arguments", "2 required positional argument")
            return (f"{name}() missing {len(missing)} required positional argument{'s' if len(missing) == 1 else ''}"
                    ": " + ", ".join(f'"{m}"' for m in missing))
        else:
            continue
        if not (v is None and p.nullable) and not _fits_param(p, v):
            return _argument(name, p, v, position)
    names = {p.name for p in o.params}
    for k in kwargs:  # (then the keywords left over, in the call's order; a list is unpacked after that)
        if k not in names:
            return f"{name}() got an unexpected keyword argument '{k}'"
        if k in positions:
            return f"{name}() got multiple values for argument '{k}'"
    return _unpack_error(name, o, args, kwargs)


def _described(args, kwargs, bad=(), in_order=False):
    """The call as PyTorch's listing shows it: ``(Tensor, bool)``, ``(dim=bool, )``; the arguments in ``bad``
    (positions and keyword names) marked ``!...!`` (a tuple then shows its items' types). The keywords come last to
    first: PyTorch's parser lists them from a hash map, which gives that order for two (for more it depends on
    their hashes); ``in_order``: as ``kwargs`` has them (a "didn't match" line lists them in its overload's
    order)."""
    def show(key, v):
        text = type_name(v)
        if key in bad and type(v) is tuple:
            text = "tuple of (" + ", ".join(type_name(x) for x in v) + ("," if len(v) == 1 else "") + ")"
        elif key in bad and type(v) is list:
            text = "list of [" + ", ".join(type_name(x) for x in v) + "]"
        return text
    items = [show(i, v) for i, v in enumerate(args)]
    items = [f"!{t}!" if i in bad else t for i, t in enumerate(items)]
    keys = list(kwargs) if in_order else list(reversed(kwargs))
    kws = [f"!{k}={show(k, kwargs[k])}!" if k in bad else f"{k}={show(k, kwargs[k])}" for k in keys]
    return "(" + (", ".join(items + kws) if items else "".join(k + ", " for k in kws)) + ")"


def _fits_simply(ptype, v):
    """Whether the second parser takes ``v`` for ``ptype``: a Python int for ``int``, and only the types it knows
    (no list of ints: ``tuple of ints`` refuses everything)."""
    if ptype == "int":
        return type(v) is int
    return ptype in ("Tensor", "bool", "Number", "float", "torch.dtype", "str") and _fits(ptype, v)


def _reason(o, args, kwargs):
    """The "didn't match because" line PyTorch prints under overload ``o``, or None (see the module docstring)."""
    tokens = o.text[1:-1].split(", ")
    if len(tokens) != len(args) + len(kwargs):
        return None
    names = [t.rpartition(" ")[2] for t in tokens]
    types = [t.rpartition(" ")[0] for t in tokens]
    # (a keyword is wrong where no parameter has its name, or one does at a position the call fills; in the order
    # _described lists them)
    wrong = [k for k in reversed(kwargs) if k not in names or names.index(k) < len(args)]
    if wrong:
        return "some of the keywords were incorrect: " + ", ".join(wrong)
    bad = {i for i, v in enumerate(args) if not _fits_simply(types[i], v)}
    bad |= {k for k, v in kwargs.items() if not _fits_simply(types[names.index(k)], v)}
    # (the keywords fill the overload's parameters after the positional ones: listed in the overload's order)
    ordered = {k: kwargs[k] for k in names[len(args):]}
    return "some of the arguments have invalid types: " + _described(args, ordered, bad, True) if bad else None


def message(name, args, kwargs, method=False):
    """PyTorch's TypeError text for the call ``name(*args, **kwargs)`` (``args`` without ``self`` for a
    ``method``), or None where PyTorch's parser takes the call or ``name`` is not in the tables."""
    overloads = _overloads(name, method)
    if overloads is None:
        return None
    if method and len(overloads) == 1 and not overloads[0].params and (args or kwargs):
        # (a method of no parameters is a plain Python method to PyTorch: Python's words, with its class)
        return (f"TensorBase.{name}() takes no keyword arguments" if kwargs else
                f"TensorBase.{name}() takes no arguments ({len(args)} given)")
    for o in overloads:
        if _takes(o, args, kwargs):  # (the overload PyTorch's parser picks: fine unless a list fails to unpack)
            return _unpack_error(name, o, args, kwargs)
    n = len(args) + len(kwargs)
    plausible = overloads if len(overloads) == 1 else [o for o in overloads if o.min_args <= n <= len(o.params)]
    if len(plausible) == 1:
        return _specific(name, plausible[0], args, kwargs)
    return _listing(name, overloads, args, kwargs)


def _listing(name, overloads, args, kwargs, got=None):
    """PyTorch's "received an invalid combination of arguments" text: the call (``got``: as shown, else as
    :func:`_described` shows it), then each overload with the reason it did not match, where PyTorch gives one."""
    lines = []
    for o in overloads:
        lines.append(f" * {o.text}\n")
        reason = _reason(o, args, kwargs)
        if reason:
            lines.append(f"      didn't match because {reason}\n")
    return (f"{name}() received an invalid combination of arguments - got {got or _described(args, kwargs)}, but "
            "expected one of:\n" + "".join(lines))


def listing(name, texts, args, kwargs=None, got=None):
    """:func:`_listing` for overloads given as printed (``texts``): for the ops that check their arguments
    themselves (``Tensor.set_``) and want the parser's words for a call none of them takes."""
    return _listing(name, [_Overload(t) for t in texts], args, kwargs or {}, got)


def reword(e, name, args, kwargs, method=False):
    """Give the TypeError ``e`` PyTorch's parser's wording where its parser refuses the call."""
    text = message(name, args, kwargs, method)
    if text is not None:
        e.args = (text,)


def refused(e, name, args, kwargs, method=False):
    """The exception to raise for ``e``, which the call ``name(*args, **kwargs)`` raised: where PyTorch's parser
    refuses the call, its TypeError (``e`` reworded, or a new one in place of another type: the parser runs before
    any check of the op, ``torch.norm(x, 'a', True)`` refuses the bool dim before the order), else ``e``."""
    text = message(name, args, kwargs, method)
    if text is None:
        return e
    if isinstance(e, TypeError):
        e.args = (text,)
        return e
    return TypeError(text)
