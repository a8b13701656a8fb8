"""The function forms of what PyTorch runs on COO tensors: ``torch.abs(s)``, ``torch.permute(s, (1, 0))``,
``torch.sum(s, 0)``, ``torch.add(s, s2)``, ``torch.zeros_like(s)``, ``torch.cat([s, s2])``, ``F.relu(s)``... give the
COO result the method gives (PyTorch dispatches the function and the method to one sparse kernel), and those it has
no sparse kernel for (``torch.exp(s)``, ``torch.where(m, s, x)``, ``torch.ones_like(s)``, ``F.gelu(s)``,
``F.softmax(s, 1)``) raise its error. The method aliases PyTorch has (``s.negative()``, ``s.multiply(2)``,
``s.swapaxes(0, 1)``) answer as the method they stand for.

With ``out=``: a sparse ``out`` receives the result (PyTorch's sparse kernels write into it); a strided one is
PyTorch's RuntimeError (its sparse kernels need a sparse result), where torchish wrote the dense value into it.

:func:`activate`, run when the first COO tensor is made, makes the ``torchish`` namespace's functions,
``torchish.nn.functional``'s and ``torchish.linalg``'s sparse-aware in place: each function object keeps its
identity, name and signature, and its code is swapped for a check (generated with the function's own parameters)
that hands a call with a COO input to its sparse form and runs the original code, kept in a copy, for any other
call. So references taken before (``from torchish import abs``, torchish's own calls: ``nn.Sigmoid`` calls
``torch.sigmoid``, ``Tensor.exp`` calls ``torch.exp``) see COO tensors too, and a program that never makes one runs
the functions untouched (before, ~275 wrappers in the namespaces cost every dense call a Python frame). Tensor's
own functions of the methods a COO tensor overrides take the same check (``torch.Tensor.exp(s)`` is ``s.exp()``).
The sparse forms and torchish's sparse code run with a mark (``sparse._CODE``) under which the dense functions they
call run their original code. ``__torch_function__`` dispatch (:mod:`torchish._subclass`) swaps the same functions'
code; its check goes outside this one whichever was first.

Example:
    >>> import torchish as torch
    >>> torch.abs(torch.tensor([[0., -2.], [3., 0.]]).to_sparse()).layout
    torch.sparse_coo
"""
from __future__ import annotations

import inspect
import types

from . import _layout
from ._sparse_coo_ops import zeros_like as _zeros_like
from ._sparse_coo_refused import NOT_IMPLEMENTED, RUNTIME_ERRORS, aten_name
from ._sparse_coo_unary import _OPS, ALIASES
from ._tensor import Tensor
from .sparse import _CODE, _SparseTensor, dispatch_error, sparse_code

# function name -> the method of a sparse tensor it calls
METHODS = {
    **{name: name for name in _OPS}, **ALIASES,
    "neg": "neg", "negative": "neg", "mul": "mul", "multiply": "mul", "div": "div", "divide": "div",
    "true_divide": "div", "floor_divide": "floor_divide", "clone": "clone", "t": "t", "transpose": "transpose",
    "swapaxes": "transpose", "swapdims": "transpose", "permute": "permute", "unsqueeze": "unsqueeze",
    "select": "select", "narrow_copy": "narrow_copy", "index_select": "index_select", "sum": "sum",
    "unbind": "unbind", "movedim": "movedim", "moveaxis": "moveaxis", "adjoint": "adjoint", "relu_": "relu_",
    "tanh_": "tanh_", "flatten": "flatten", "reshape": "reshape", "squeeze": "squeeze", "mm": "mm",
    "matmul": "matmul",
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


# -- the swap: a function's code replaced by a check, the function object kept --------------------------------

_PLACEHOLDER = "__torchish_sparse_check__"
_LOCAL = _CODE  # depth: >0 while a sparse form or torchish's sparse code runs (the dense functions it calls run
                # their own code)
# the generated code's file name: ``warnings.warn(..., stacklevel=n)`` steps over frames whose file name holds both
# "importlib" and "_bootstrap" (the import system's), so a warning the dense code raises for its caller
# (``torch.var(x)``'s degrees of freedom) still points at the caller's line once a COO tensor has swapped this check
# in (as ``_torch_function_call._FRAME_NAME``)
_FRAME_NAME = "<torchish sparse-aware {} (a frame warnings skip as importlib._bootstrap's)>"
_SWAPPED: dict = {}  # id(function) -> (function, its original code) of the functions made sparse-aware
_ACTIVE = [False]


def _parameters(code):
    """``code``'s parameters: (positional names, the number positional-only, ``*args`` name or None, keyword-only
    names, ``**kwargs`` name or None)."""
    names, argcount, kwonly = code.co_varnames, code.co_argcount, code.co_kwonlyargcount
    at = argcount + kwonly
    star = names[at] if code.co_flags & inspect.CO_VARARGS else None
    at += star is not None
    starstar = names[at] if code.co_flags & inspect.CO_VARKEYWORDS else None
    return names[:argcount], code.co_posonlyargcount, star, names[argcount:argcount + kwonly], starstar


def _check_code(fn, mode):
    """The code ``fn`` runs once sparse tensors exist: with ``fn``'s own parameters (its defaults stay the
    function's), it hands a call whose input is a COO tensor (``mode`` "input": the first argument's class;
    "test": ``test(...)`` of the call; "either": the first or the second argument's; "second": the second's, the
    first not being one; these two fall back to ``test`` where the function has fewer positional parameters) to ``form`` (outside another form), and any other call, or one whose form
    returns None, to ``plain`` (a copy running ``fn``'s original code). Only the callables are constants."""
    code = fn.__code__  # (the check's own names start with ``_sa_``: no parameter's (``sparse=``) may clash)
    pos, posonly, star, kwonly, starstar = _parameters(code)
    defaults = dict(zip(pos[len(pos) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
    defaults.update(fn.__kwdefaults__ or {})
    params, plain_args, form_args, optional = [], [], [], []
    for i, name in enumerate(pos):
        params.append(name)
        if i + 1 == posonly:
            params.append("/")
        plain_args.append(name)
        if i and (type(defaults.get(name)) is object or optional):  # (a sentinel "not given", and those after
            optional.append(name)                                     # it: passed by keyword, when given)
        elif i or mode != "input":
            form_args.append(name)
    if star is not None:
        params.append("*" + star)
        plain_args.append("*" + star)
        form_args.append(f"*{star}[1:]" if not pos and mode == "input" else "*" + star)
    elif kwonly:
        params.append("*")
    for name in kwonly:
        params.append(name)
        plain_args.append(f"{name}={name}")
        if type(defaults.get(name)) is object:
            optional.append(name)
        else:
            form_args.append(f"{name}={name}")
    if starstar is not None:
        params.append("**" + starstar)
        plain_args.append("**" + starstar)
    if pos:
        first = pos[0]
    else:  # (``(*args, **kwargs)``: the first positional argument, or ``input=``)
        first = f"({star}[0] if {star} else {starstar}.get('input'))" if star and starstar else \
            f"({star}[0] if {star} else None)" if star else f"{starstar}.get('input')"
    if mode == "input":
        if not pos and starstar is not None:
            form_args.append(f"**({starstar} if {star or '()'} else "
                             f"{{k: v for k, v in {starstar}.items() if k != 'input'}})")
        elif starstar is not None:
            form_args.append("**" + starstar)
        form_args.insert(0, "_sa_first")
        test = "_sa_first.__class__ is _sa_class and _sa_first._coo is not None"
    else:
        if starstar is not None:
            form_args.append("**" + starstar)
        test = f"_sa_test({', '.join(form_args)})"
        if mode in ("either", "second") and len(pos) >= 2 and not optional[:1] == [pos[1]]:
            a, b = (f"{n}.__class__ is _sa_class and {n}._coo is not None" for n in pos[:2])
            test = f"{a} or {b}" if mode == "either" else f"{b} and not ({a})"  # (inline: no call on a dense call)
    lines = ["def _outer():"]
    cells = [f"_sa_cell{i}" for i in range(len(code.co_freevars))]
    if cells:
        lines.append(f"    {', '.join(cells)} = {', '.join(['None'] * len(cells))}")
    lines += [f"    def _checked({', '.join(params)}):",
              f"        _sa_plain, _sa_form, _sa_test, _sa_class, _sa_local, _sa_defaults = {_PLACEHOLDER!r}"]
    if mode == "input":
        lines.append(f"        _sa_first = {first}")
    lines += [f"        if {test}:",
              "            if not getattr(_sa_local, 'depth', 0):"]
    if optional:
        lines.append("                _sa_given = {}")
        for name in optional:
            lines += [f"                if {name} is not _sa_defaults[{name!r}]:",
                      f"                    _sa_given[{name!r}] = {name}"]
        form_args.append("**_sa_given")
    lines += ["                _sa_local.depth = 1",
              "                try:",
              f"                    _sa_result = _sa_form({', '.join(form_args)})",
              "                finally:",
              "                    _sa_local.depth = 0",
              "                if _sa_result is not None:",
              "                    return _sa_result",
              f"        return _sa_plain({', '.join(plain_args)})"]
    if cells:
        lines.append(f"        ({', '.join(cells)},)")  # (unreachable: only makes them free variables)
    lines.append("    return _checked")
    space: dict = {}
    exec(compile("\n".join(lines) + "\n", _FRAME_NAME.format(fn.__qualname__), "exec"), space)  # noqa: S102
    return space["_outer"]().__code__, defaults


def _swap(fn, mode, form, test=None):
    """Make ``fn`` itself sparse-aware (its code swapped; the object, its name and signature kept)."""
    from ._torch_function_call import copy_function, swappable
    if not swappable(fn) or id(fn) in _SWAPPED or any(n.startswith("_sa_") for n in fn.__code__.co_varnames):
        return
    plain = copy_function(fn)
    check, defaults = _check_code(fn, mode)
    constants = (plain, form, test, _SparseTensor, _LOCAL, defaults)
    consts = tuple(constants if c == _PLACEHOLDER else c for c in check.co_consts)
    check = check.replace(co_consts=consts, co_name=fn.__code__.co_name)
    if hasattr(check, "co_qualname"):
        check = check.replace(co_qualname=fn.__code__.co_qualname)
    _SWAPPED[id(fn)] = (fn, fn.__code__)
    fn.__code__ = check


def _is_sparse_join(tensors=None, *args, **kwargs):
    if tensors.__class__ is list or tensors.__class__ is tuple:
        for t in tensors:
            if t.__class__ is _SparseTensor and t._coo is not None:
                return True
    return False


def _where_test(condition, input=None, other=None, *, out=None):
    return input is not None and (_is_sparse(condition) or _is_sparse(input) or _is_sparse(other))


def _where_form(condition, input=None, other=None, *, out=None):
    raise NotImplementedError(dispatch_error("where.self"))


def _joined(name, stacked):
    def join(tensors, *args, **kwargs):  # (the dense function's signature: dim, axis=, out=, its errors)
        from ._sparse_coo_join import cat_sparse
        dim = args[0] if args else kwargs.get("dim", kwargs.get("axis", 0))
        result = cat_sparse(tensors, dim, stacked)
        out = kwargs.get("out")
        return result if out is None else _into(name, result, out)
    return join


def _either_sparse(a=None, b=None, *args, **kwargs):
    """Whether one of the first two arguments is a COO tensor (the test of ``torch.mul``, ``kron``...: a dense call
    pays two class tests)."""
    return a.__class__ is _SparseTensor and a._coo is not None or b.__class__ is _SparseTensor and b._coo is not None


def _first_sparse(*args, **kwargs):
    first = args[0] if args else next(iter(kwargs.values()), None)
    return isinstance(first, Tensor) and _is_sparse(first)


def _raising(error, message):
    def form(*args, **kwargs):
        raise error(message)
    return form


_RESHAPE = "reshape is not implemented for sparse tensors"

# torch functions PyTorch refuses when either of their first two arguments is a COO tensor
_REFUSED_EITHER = {
    "tensordot": (RuntimeError, _RESHAPE), "cdist": (NotImplementedError, dispatch_error("_cdist_forward")),
    "kron": (NotImplementedError, "Cannot access storage of SparseTensorImpl"),
}

# torch.linalg's functions of a COO matrix: PyTorch's error (its NotImplementedError names the ATen op)
_LINALG = {
    **{name: (NotImplementedError, dispatch_error(aten)) for name, aten in (
        ("det", "_linalg_det"), ("slogdet", "_linalg_slogdet"), ("inv", "linalg_inv_ex"),
        ("inv_ex", "linalg_inv_ex"), ("svd", "_linalg_svd"), ("svdvals", "_linalg_svd"), ("cond", "_linalg_svd"),
        ("eig", "linalg_eig"), ("eigvals", "linalg_eig"), ("eigh", "_linalg_eigh"), ("eigvalsh", "_linalg_eigh"),
        ("qr", "linalg_qr"), ("norm", "linalg_vector_norm"), ("vector_norm", "linalg_vector_norm"),
        ("matrix_norm", "linalg_vector_norm"), ("cholesky", "linalg_cholesky_ex"),
        ("cholesky_ex", "linalg_cholesky_ex"), ("lu", "linalg_lu"), ("lu_factor", "linalg_lu_factor_ex"),
        ("lu_factor_ex", "linalg_lu_factor_ex"), ("pinv", "linalg_pinv.atol_rtol_tensor"),
        ("matrix_exp", "linalg_matrix_exp"), ("solve", "_linalg_solve_ex"), ("cross", "linalg_cross"),
        ("householder_product", "linalg_householder_product"), ("solve_triangular", "linalg_solve_triangular"),
        ("ldl_factor", "linalg_ldl_factor_ex"))},
    "matrix_rank": (RuntimeError, "full(...) is not implemented for sparse layout"),
    "tensorsolve": (RuntimeError, _RESHAPE), "vander": (RuntimeError, "expand is unsupported for Sparse tensors"),
}


def _mul_form(input, other, *, out=None):
    """``torch.mul(x, s)``/``torch.mul(2, s)``: the COO product ``s.mul(x)`` gives (PyTorch's mul is symmetric)."""
    sparse = _sparse_form("mul")
    return sparse(input, other, out=out) if isinstance(input, Tensor) and _is_sparse(input) else \
        sparse(other, input, out=out)


def _dense_mul_form(self, other):
    """``x.mul(s)`` of a strided ``x``: ``s.mul(x)``."""
    return other.mul(self)


def _dense_self_sparse_other(self, other=None, *args, **kwargs):
    if other is None:
        other = kwargs.get("src")
    return other.__class__ is _SparseTensor and other._coo is not None and not _is_sparse(self)


def _copy_into_dense(self, src=None, *args, **kwargs):
    """``x.copy_(s)`` of a strided ``x``: PyTorch's RuntimeError (as ``s.copy_(x)``)."""
    from ._sparse_coo_ops import _copy_error
    raise _copy_error(self, kwargs.get("src", src))


def _einsum_test(*args):
    """Whether ``torch.einsum(equation, *operands)`` has a COO operand and a label summed over two operands:
    PyTorch's einsum reshapes the operands for its bmm there (its error); an elementwise product or a single
    operand's permute or sum runs its sparse ops."""
    if len(args) < 2 or not isinstance(args[0], str):
        return False
    operands = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
    if len(operands) < 2 or not any(isinstance(t, Tensor) and _is_sparse(t) for t in operands):
        return False
    equation = args[0].replace(" ", "")
    inputs, _, output = equation.partition("->")
    terms = [set(term.replace("...", "")) for term in inputs.split(",")]
    if "->" not in equation:
        counts = {c: sum(c in t for t in terms) for c in set().union(*terms)}
        output = "".join(c for c, n in counts.items() if n == 1)
    return any(sum(c in t for t in terms) > 1 and c not in output for c in set().union(*terms))


def _embedding_form(input, weight, *args, **kwargs):
    """``F.embedding(indices, s)`` of a COO weight: PyTorch's ``s.index_select(0, indices)`` for 1-D indices,
    its refused view of the result otherwise."""
    if input.dim() != 1:
        raise NotImplementedError(dispatch_error("view"))
    return weight.index_select(0, input)


def _embedding_test(input, weight=None, *args, **kwargs):
    return isinstance(weight, Tensor) and _is_sparse(weight) and isinstance(input, Tensor)


def _torch_embedding_form(weight, indices, *args, **kwargs):
    return _embedding_form(indices, weight)


def _torch_embedding_test(weight=None, indices=None, *args, **kwargs):
    return _embedding_test(indices, weight)


def _torch_functions():
    """(name, mode, form, test) of the ``torchish`` namespace's functions that are sparse-aware."""
    out = [("where", "test", _where_form, _where_test), ("mul", "either", _mul_form, _either_sparse),
           ("multiply", "either", _mul_form, _either_sparse), ("einsum", "test", _raising(RuntimeError, _RESHAPE),
                                                          _einsum_test),
           ("embedding", "test", _torch_embedding_form, _torch_embedding_test)]
    out += [(name, "either", _raising(*error), _either_sparse) for name, error in _REFUSED_EITHER.items()]
    for name, stacked in (("cat", False), ("concat", False), ("concatenate", False), ("stack", True)):
        out.append((name, "test", _joined(name, stacked), _is_sparse_join))
    taken = {name for name, *_ in out}
    return out + [(name, "input", _sparse_form(name), None) for name in sorted({*METHODS, *FUNCTIONS} - taken)]


_RECORDED: dict = {}  # name -> the function ``torchish.name`` was while torchish was imported


def record(namespace):
    """Note ``namespace``'s (torchish's) functions as they are before ``import torchish`` gives some names copies
    of their own (``_subclass.separate_aliases``: ``torch.sigmoid`` beside ``special.expit``, the object
    ``nn.Sigmoid`` calls): :func:`activate` makes both sparse-aware."""
    for name, _, _, _ in _torch_functions():
        if name in namespace:
            _RECORDED[name] = namespace[name]


def activate():
    """Make the sparse-aware functions check their input (once, when the first COO tensor is made): their code is
    swapped in place, so references taken before (``from torchish import abs``, torchish's own calls: ``nn.Tanh``
    calls ``torch.tanh``) see COO tensors too, and a program without sparse tensors runs the functions untouched.
    With ``__torch_function__`` dispatch on, it is put back for the swap and turned on again after, so that its
    check comes first and its ``deactivate`` restores the sparse-aware code."""
    if _ACTIVE[0]:
        return
    _ACTIVE[0] = True
    import sys
    from . import _subclass
    dispatching = _subclass._ACTIVE[0]
    if dispatching:
        _subclass.deactivate()
    torchish = sys.modules["torchish"]
    for name, mode, form, test in _torch_functions():
        for fn in (getattr(torchish, name, None), _RECORDED.get(name)):
            if fn is not None:
                _swap(fn, mode, form, test)
    functional = torchish.nn.functional
    for name, (target, inplace_at) in _FUNCTIONAL.items():
        fn = getattr(functional, name, None)
        if fn is not None:
            _swap(fn, "input", _functional_form(target, inplace_at))
    _swap(functional.embedding, "test", _embedding_form, _embedding_test)
    for name, error in _LINALG.items():
        fn = getattr(torchish.linalg, name, None)
        if fn is not None:
            _swap(fn, "test", _raising(*error), _first_sparse)
    for name in ("mul", "multiply"):  # (``x.mul(s)``; a COO ``self`` has its own method)
        _swap(getattr(Tensor, name), "second", _dense_mul_form, _dense_self_sparse_other)
    _swap(Tensor.copy_, "second", _copy_into_dense, _dense_self_sparse_other)
    _guard_methods()
    _unbound_methods()
    if dispatching:
        _subclass.activate()


def _unbound_methods():
    """``torch.Tensor.view(s, -1)``: Tensor's own function of a method a COO tensor overrides hands a COO ``self``
    to that override (as ``s.view(-1)`` calls it). The override's own calls of Tensor's function for the dense
    value run inside it (:func:`torchish.sparse.sparse_code`), so they reach the dense code. A Tensor method that
    calls a sparse-aware function (``Tensor.exp`` calls ``torch.exp``) is left as it is: it acts as the bound
    method already, and a second check would cost each dense call a frame; so are the operators (``x * 2``
    runs ``Tensor.__mul__``: ``Tensor.__mul__(s, 2)`` stays dense)."""
    for name, method in vars(_SparseTensor).items():
        dense = vars(Tensor).get(name)
        if type(method) is types.FunctionType and type(dense) is types.FunctionType and \
                (dense.__code__.co_argcount or dense.__code__.co_flags & inspect.CO_VARARGS) and \
                not _calls_sparse_aware(dense) and not name.startswith("__"):  # (operators: ``x * 2`` is hot)
            _swap(dense, "input", method)


def _calls_sparse_aware(fn):
    """Whether ``fn`` holds a sparse-aware function in its closure (the function it is a method form of)."""
    for cell in fn.__closure__ or ():
        try:
            if id(cell.cell_contents) in _SWAPPED:
                return True
        except ValueError:  # (an empty cell)
            pass
    return False


def _guard_methods():
    for name, method in list(vars(_SparseTensor).items()):
        if type(method) is types.FunctionType:
            setattr(_SparseTensor, name, sparse_code(method))


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


def _alias(method):
    def alias(self, *args, **kwargs):
        return getattr(self, method)(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = method
    return alias


for _name in ("negative", "multiply", "divide", "true_divide", "swapaxes", "swapdims"):
    setattr(_SparseTensor, _name, _alias(METHODS[_name]))
