"""The function forms of what PyTorch runs on COO tensors: ``torch.abs(s)``, ``torch.permute(s, (1, 0))``,
``torch.sum(s, 0)``, ``torch.add(s, s2)``, ``torch.zeros_like(s)``, ``torch.cat([s, s2])``, ``F.relu(s)``... give the
COO result the method gives (PyTorch dispatches the function and the method to one sparse kernel), and those it has
no sparse kernel for (``torch.exp(s)``, ``torch.where(m, s, x)``, ``torch.ones_like(s)``, ``F.gelu(s)``,
``F.softmax(s, 1)``) raise its error. The method aliases PyTorch has (``s.negative()``, ``s.multiply(2)``,
``s.swapaxes(0, 1)``) answer as the method they stand for.

With ``out=``: a sparse ``out`` receives the result (PyTorch's sparse kernels write into it); a strided one is
PyTorch's RuntimeError (its sparse kernels need a sparse result), where torchish wrote the dense value into it.

:func:`functions` wraps the ``torchish`` namespace's functions and :func:`functional` those of
``torchish.nn.functional``: a call whose ``input`` is a COO tensor calls its sparse form, any other call the
function itself (a dense call pays one class test). ``torchish/__init__.py`` and ``torchish/nn/functional.py``
put the wrappers in their namespaces.

Example:
    >>> import torchish as torch
    >>> torch.abs(torch.tensor([[0., -2.], [3., 0.]]).to_sparse()).layout
    torch.sparse_coo
"""
from __future__ import annotations

import functools
import inspect

from . import _layout
from ._sparse_coo_ops import zeros_like as _zeros_like
from ._sparse_coo_refused import NOT_IMPLEMENTED, RUNTIME_ERRORS, aten_name
from ._sparse_coo_unary import _OPS, ALIASES
from ._tensor import Tensor
from .sparse import _SparseTensor, dispatch_error

# function name -> the method of a sparse tensor it calls
METHODS = {
    **{name: name for name in _OPS}, **ALIASES,
    "neg": "neg", "negative": "neg", "mul": "mul", "multiply": "mul", "div": "div", "divide": "div",
    "true_divide": "div", "floor_divide": "floor_divide", "clone": "clone", "t": "t", "transpose": "transpose",
    "swapaxes": "transpose", "swapdims": "transpose", "permute": "permute", "unsqueeze": "unsqueeze",
    "select": "select", "narrow_copy": "narrow_copy", "index_select": "index_select", "sum": "sum",
    "unbind": "unbind", "movedim": "movedim", "moveaxis": "moveaxis", "adjoint": "adjoint", "relu_": "relu_",
    "tanh_": "tanh_", "flatten": "flatten", "reshape": "reshape", "squeeze": "squeeze",
    **{name: name for name in (*NOT_IMPLEMENTED, *RUNTIME_ERRORS) if not name.startswith("__")},
}


def _is_sparse(t):
    return t.__class__ is _SparseTensor and t._coo is not None


def _refuse(aten_name):
    def refuse(input, *args, **kwargs):
        raise NotImplementedError(dispatch_error(aten_name))
    return refuse


def _added(method):
    def add(input, *args, other=None, alpha=1):  # (torch.add(input, other, alpha=) and its keyword ``other``)
        other = args[0] if args else other
        return getattr(input, method)(other, *args[1:], alpha=alpha)
    return add


def _like_refused(aten_name, layout_at=None):
    """``torch.ones_like(s)`` and the other fills: PyTorch's error (its sparse tensors have no fill kernel), or
    the dense function's result (None) where a strided layout is asked for (``layout_at``: its position)."""
    def like(input, *args, **kwargs):
        layout = kwargs.get("layout", args[layout_at] if layout_at is not None and len(args) > layout_at else None)
        if layout is _layout.strided:
            return None
        raise NotImplementedError(dispatch_error(aten_name))
    return like


def _empty_like(input, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, **kwargs):
    if layout is _layout.strided:  # (a dense tensor asked for: the dense function's)
        return None
    return _zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


# function name -> its form for a COO input (None from it: the dense function's result after all)
FUNCTIONS = {
    "add": _added("add"), "sub": _added("sub"), "subtract": _added("sub"),
    "zeros_like": _empty_like, "empty_like": _empty_like,
    "ones_like": _like_refused("fill_.Scalar", 1), "full_like": _like_refused("fill_.Scalar"),
    "rand_like": _like_refused("uniform_"), "randn_like": _like_refused("normal_"),
    "randint_like": _like_refused("random_.from"),
    "selu": _refuse("elu"), "celu": _refuse("elu"), "threshold": _refuse("threshold"),
    "threshold_": _refuse("threshold_"), "prelu": _refuse("_prelu_kernel"),
}

# the unary ops whose sparse kernel checks its result's layout in these words (a strided out=)
_RESULT_NOT_SPARSE = "Expected self.is_sparse() && result.is_sparse() to be true, but got false."


def _out_error(name):
    if name in ("neg", "negative"):
        return RuntimeError("Tensor should be sparse")
    if name in METHODS and METHODS[name] in _OPS:
        return RuntimeError(_RESULT_NOT_SPARSE)
    return RuntimeError(f"{name}(): a sparse input needs a sparse out= tensor, got one with layout torch.strided")


def _into(name, result, out):
    """``result`` written into ``out=``: a sparse ``out`` takes its value and entries (resized to it, as PyTorch's
    sparse kernels resize their result); a strided one is PyTorch's error."""
    if out.__class__ is not _SparseTensor or out._coo is None:
        raise _out_error(name)
    if tuple(out.shape) != tuple(result.shape):
        Tensor.resize_(out, result.shape)
    return out.copy_(result)


def _sparse_form(name):
    """The form of function ``name`` for a COO ``input``: ``(input, *args, out=None, **kwargs)``."""
    fn = FUNCTIONS.get(name)
    if fn is None:
        method = METHODS[name]

        def fn(input, *args, **kwargs):
            return getattr(input, method)(*args, **kwargs)

    def form(input, *args, out=None, **kwargs):
        if out is not None and name in NOT_IMPLEMENTED:  # (PyTorch's error names the op's out= overload)
            aten = aten_name(name, args, kwargs)
            raise NotImplementedError(dispatch_error(aten + ("_out" if "." in aten else ".out")))
        result = fn(input, *args, **kwargs)
        return result if out is None or result is None else _into(name, result, out)
    return form


def _sparse_aware(name, dense):
    """``dense`` with a first test: a COO ``input`` goes to its sparse form. Written with ``dense``'s own
    parameters (as ``dataclasses`` writes its methods), so that a dense call pays one class test, not the packing
    of ``*args, **kwargs``."""
    signature = inspect.signature(dense, follow_wrapped=False)
    sparse = _sparse_form(name)
    if next(iter(signature.parameters)) != "input":  # (a wrapper taking ``*args, **kwargs``)
        return _stands_for(_sparse_aware_any(sparse, dense), dense)
    env = {"_dense": dense, "_sparse": _SparseTensor, "_form": sparse}
    params, passed, given, optional, star = [], [], [], [], False
    for p in list(signature.parameters.values())[1:]:
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
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and (type(p.default) is object or optional):
            optional.append(p.name)  # (a sentinel default, "not given", and those after it: passed on by keyword,
        else:                        # only when given)
            given.append(passed[-1])
    lines = [f"def {dense.__name__}({', '.join(['input', *params])}):",
             "    if input.__class__ is _sparse and input._coo is not None:"]
    if optional:
        lines.append("        _given = {}")
        for n in optional:
            lines += [f"        if {n} is not _default_{n}:", f"            _given[{n!r}] = {n}"]
        given.append("**_given")
    lines += [f"        result = _form({', '.join(['input', *given])})",
              "        if result is not None:",
              "            return result",
              f"    return _dense({', '.join(['input', *passed])})"]
    exec(compile("\n".join(lines) + "\n", f"<torchish sparse-aware {dense.__name__}>", "exec"), env)  # noqa: S102
    return _stands_for(env[dense.__name__], dense)


def _sparse_aware_any(sparse, dense):
    def function(*args, **kwargs):
        input = args[0] if args else kwargs.get("input")
        if _is_sparse(input):
            if not args:
                kwargs = {k: v for k, v in kwargs.items() if k != "input"}
            result = sparse(input, *args[1:], **kwargs)
            if result is not None:
                return result
        return dense(*args, **kwargs)
    return function


def _stands_for(function, dense):
    functools.update_wrapper(function, dense)
    function._torchish_stands_for = dense  # (torchish.overrides: internal calls of ``dense`` dispatch as this)
    return function


def _where(dense):
    def where(condition, input=None, other=None, *, out=None):
        if any(isinstance(t, Tensor) and _is_sparse(t) for t in (condition, input, other)) and input is not None:
            raise NotImplementedError(dispatch_error("where.self"))
        return dense(condition, input, other, out=out)
    return _stands_for(where, dense)


def _joined(name, dense, stacked):
    def join(tensors, *args, **kwargs):  # (the dense function's signature: dim, axis=, out=, its errors)
        if type(tensors) not in (list, tuple) or not any(isinstance(t, Tensor) and _is_sparse(t) for t in tensors):
            return dense(tensors, *args, **kwargs)
        from ._sparse_coo_join import cat_sparse
        dim = args[0] if args else kwargs.get("dim", kwargs.get("axis", 0))
        result = cat_sparse(tensors, dim, stacked)
        out = kwargs.get("out")
        return result if out is None else _into(name, result, out)
    return _stands_for(join, dense)


def functions(namespace):
    """The wrappers of ``namespace``'s functions (torchish's), by name."""
    out = {name: _sparse_aware(name, namespace[name]) for name in {*METHODS, *FUNCTIONS} if name in namespace}
    out["where"] = _where(namespace["where"])
    for name, stacked in (("cat", False), ("concat", False), ("concatenate", False), ("stack", True)):
        out[name] = _joined(name, namespace[name], stacked)
    return out


# torch.nn.functional: name -> (the sparse method it is, "!" and the ATen op PyTorch's NotImplementedError names, or
# "=" and its RuntimeError; the position of its ``inplace`` argument after ``input``, or None)
_FUNCTIONAL = {
    "relu": ("relu", 0), "relu_": ("relu_", None), "tanh": ("tanh", None), "sigmoid": ("!sigmoid", None),
    "gelu": ("!gelu", None), "silu": ("!silu", 0), "selu": ("!elu", 0), "celu": ("!elu", 1), "elu": ("!elu", 1),
    "elu_": ("!elu_", None), "leaky_relu": ("!leaky_relu", 1), "leaky_relu_": ("!leaky_relu_", None),
    "hardtanh": ("!hardtanh", 2), "hardtanh_": ("!hardtanh_", None), "relu6": ("!hardtanh", 0),
    "softplus": ("!softplus", None), "mish": ("!mish", 0), "hardswish": ("!hardswish", 0),
    "hardsigmoid": ("!hardsigmoid", 0), "logsigmoid": ("!log_sigmoid_forward", None),
    "softshrink": ("!softshrink", None), "hardshrink": ("!hardshrink", None), "threshold": ("!threshold", 2),
    "threshold_": ("!threshold_", None), "glu": ("!glu", None), "softmax": ("!_softmax", None),
    "softmin": ("!_softmax", None), "log_softmax": ("!_log_softmax", None), "prelu": ("!_prelu_kernel", None),
    "mse_loss": ("!mse_loss", None),
    "normalize": ("=norm_sparse currently only supports full reductions, so 'dim' must either be empty or contain all "
                  "dimensions of the input", None),
}


def _functional_form(target, inplace_at):
    def form(input, *args, **kwargs):
        inplace = kwargs.get("inplace", args[inplace_at] if inplace_at is not None and len(args) > inplace_at
                             else False)
        if target.startswith("!"):
            raise NotImplementedError(dispatch_error(target[1:] + ("_" if inplace else "")))
        if target.startswith("="):
            raise RuntimeError(target[1:])
        return getattr(input, target + "_" if inplace else target)()
    return form


def functional(namespace):
    """The wrappers of ``torchish.nn.functional``'s functions (``namespace``), by name."""
    out = {}
    for name, (target, inplace_at) in _FUNCTIONAL.items():
        dense = namespace.get(name)
        if dense is not None:
            out[name] = _stands_for(_sparse_aware_any(_functional_form(target, inplace_at), dense), dense)
    return out


def _alias(method):
    def alias(self, *args, **kwargs):
        return getattr(self, method)(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = method
    return alias


for _name in ("negative", "multiply", "divide", "true_divide", "swapaxes", "swapdims"):
    setattr(_SparseTensor, _name, _alias(METHODS[_name]))
