"""The function forms of the ops PyTorch runs sparse-to-sparse: ``torch.abs(s)``, ``torch.permute(s, (1, 0))``,
``torch.unsqueeze(s, 0)``, ``torch.mul(s, 2)``... give the COO result the method gives (PyTorch dispatches the
function and the method to one sparse kernel), and the method aliases PyTorch has (``s.negative()``,
``s.multiply(2)``, ``s.swapaxes(0, 1)``) answer as the method they stand for.

:func:`functions` wraps torchish's functions: a call whose ``input`` is a COO tensor (and that has no ``out=``)
calls the tensor's method, any other call the function itself (a dense call pays one class test).
``torchish/__init__.py`` puts the wrappers in its namespace.

Example:
    >>> import torchish as torch
    >>> torch.abs(torch.tensor([[0., -2.], [3., 0.]]).to_sparse()).layout
    torch.sparse_coo
"""
from __future__ import annotations

import functools
import inspect

from ._sparse_coo_unary import _OPS, ALIASES
from .sparse import _SparseTensor

# function name -> the method of a sparse tensor it calls
METHODS = {
    **{name: name for name in _OPS}, **ALIASES,
    "neg": "neg", "negative": "neg", "mul": "mul", "multiply": "mul", "div": "div", "divide": "div",
    "true_divide": "div", "clone": "clone", "t": "t", "transpose": "transpose", "swapaxes": "transpose",
    "swapdims": "transpose", "permute": "permute", "unsqueeze": "unsqueeze", "select": "select",
    "narrow_copy": "narrow_copy", "index_select": "index_select",
}


def _sparse_aware(method, dense):
    """``dense`` with a first test: a COO ``input`` (without ``out=``) goes to its ``method``. Written with
    ``dense``'s own parameters (as ``dataclasses`` writes its methods), so that a dense call pays one class test,
    not the packing of ``*args, **kwargs``."""
    signature = inspect.signature(dense, follow_wrapped=False)
    if next(iter(signature.parameters)) != "input":  # (a wrapper taking ``*args, **kwargs``)
        return _stands_for(_sparse_aware_any(method, dense), dense)
    env = {"_dense": dense, "_sparse": _SparseTensor, "_method": method}
    params, passed, star = [], [], False
    for p in signature.parameters.values():
        default = ""
        if p.default is not p.empty:
            env["_default_" + p.name] = p.default
            default = "=_default_" + p.name
        if p.kind is p.VAR_POSITIONAL:
            params.append("*" + p.name)
            passed.append("*" + p.name)
            star = True
        elif p.kind is p.VAR_KEYWORD:
            params.append("**" + p.name)
            passed.append("**" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            params += [] if star else ["*"]
            star = True
            params.append(p.name + default)
            passed.append(f"{p.name}={p.name}")
        else:
            params.append(p.name + default)
            passed.append(p.name)
    test = "input.__class__ is _sparse and input._coo is not None"
    if "out" in signature.parameters:
        test += " and out is None"
    source = (f"def {dense.__name__}({', '.join(params)}):\n"
              f"    if {test}:\n"
              f"        return getattr(input, _method)({', '.join(a for a in passed[1:] if a != 'out=out')})\n"
              f"    return _dense({', '.join(passed)})\n")
    exec(compile(source, f"<torchish sparse-aware {dense.__name__}>", "exec"), env)  # noqa: S102
    return _stands_for(env[dense.__name__], dense)


def _sparse_aware_any(method, dense):
    def function(*args, **kwargs):
        input = args[0] if args else kwargs.get("input")
        if input.__class__ is _SparseTensor and input._coo is not None and kwargs.get("out") is None:
            if not args:
                kwargs = {k: v for k, v in kwargs.items() if k != "input"}
            return getattr(input, method)(*args[1:], **kwargs)
        return dense(*args, **kwargs)
    return function


def _stands_for(function, dense):
    functools.update_wrapper(function, dense)
    function._torchish_stands_for = dense  # (torchish.overrides: internal calls of ``dense`` dispatch as this)
    return function


def functions(namespace):
    """The wrappers of ``namespace``'s functions (torchish's), by name."""
    return {name: _sparse_aware(method, namespace[name]) for name, method in METHODS.items()}


def _alias(method):
    def alias(self, *args, **kwargs):
        return getattr(self, method)(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = method
    return alias


for _name in ("negative", "multiply", "divide", "true_divide", "swapaxes", "swapdims"):
    setattr(_SparseTensor, _name, _alias(METHODS[_name]))
