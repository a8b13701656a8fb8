"""What ``__torch_function__(func, types, args, kwargs)`` receives (torchish/_torch_function_call.py), compared with
torch 2.13 call by call through a logging subclass: ``func`` (the very object the program reaches: ``func is
torch.norm``, ``func is Tensor.split``, ``func == Tensor.shape.__get__``, and its ``__name__``), ``types``, and the
arguments: PyTorch's Python functions (``torch.functional``, ``torch._tensor``, ``torch.autograd``) hand the
parameters without a default positionally and the others by keyword with their defaults filled in (``torch.norm(x)``:
``p='fro', dim=None, keepdim=False, out=None, dtype=None``), its C++ builtins hand the call as written (``kwargs``
None without keywords); properties hand their ``__get__``/``__set__``. Then every call a logging subclass sees
through modules, autograd and Python's protocols (``iter``, ``reversed``, ``format``), and handlers registered in a
dict before the class that turns dispatch on (``HANDLED = {torch.mean: ...}`` at a module's top): ``func`` is the
object registered.
"""
import copy

import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch, torch_one_thread  # noqa: F401
from torchish import _subclass

_one_thread = pytest.fixture(autouse=True)(torch_one_thread)

# built when this module is imported, before any class with __torch_function__ exists
_ACTIVE_AT_IMPORT = _subclass._ACTIVE[0]
_BEFORE = {torchish.mean: "mean", torchish.add: "add", torchish.Tensor.add: "Tensor.add",
           torchish.Tensor.mul: "Tensor.mul", torchish.Tensor.split: "Tensor.split", torchish.norm: "norm",
           torchish.nn.functional.relu: "F.relu", torchish.linalg.norm: "linalg.norm", torchish.relu: "relu",
           torchish.Tensor.shape.__get__: "shape", torchish.autograd.grad: "autograd.grad"}


def _rep(lib, v):
    """An argument as text the two libraries share (tensors as "T", lists and tuples by their items)."""
    if isinstance(v, lib.Tensor):
        return "T"
    if isinstance(v, (list, tuple)):
        return f"{type(v).__name__}({', '.join(_rep(lib, x) for x in v)})"
    if isinstance(v, lib.dtype):
        return str(v)
    return repr(v) if not callable(v) else "<callable>"


def _logging_class(lib, log):
    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((func, [t.__name__ for t in types], args, kwargs))
            return super().__torch_function__(func, types, args, kwargs)
    return Logged


# name -> (call(lib, x) with x the 2x2 logged tensor, the object PyTorch hands as func (None: not checked))
_CALLS = {
    # torch.functional and torch._lowrank: Python functions
    "norm": (lambda T, x: T.norm(x), lambda T: T.norm),
    "norm_positional": (lambda T, x: T.norm(x, 2, 1), lambda T: T.norm),
    "split": (lambda T, x: T.split(x, 1), lambda T: T.split),
    "split_sections_dim": (lambda T, x: T.split(x, [1, 1], 1), lambda T: T.split),
    "tensordot": (lambda T, x: T.tensordot(x, x, 1), lambda T: T.tensordot),
    "tensordot_dims": (lambda T, x: T.tensordot(x, x, dims=([1], [0])), lambda T: T.tensordot),
    "einsum": (lambda T, x: T.einsum("ij,jk->ik", x, x), lambda T: T.einsum),
    "einsum_list": (lambda T, x: T.einsum("ij,jk->ik", [x, x]), lambda T: T.einsum),
    "stft": (lambda T, x: T.stft(x.reshape(4), 4, 1, window=T.ones(4), return_complex=True), lambda T: T.stft),
    "unique": (lambda T, x: T.unique(x), lambda T: T.unique),
    "unique_inverse": (lambda T, x: T.unique(x, return_inverse=True), lambda T: T.unique),
    "unique_consecutive": (lambda T, x: T.unique_consecutive(x), lambda T: T.unique_consecutive),
    "cdist": (lambda T, x: T.cdist(x, x), lambda T: T.cdist),
    "meshgrid": (lambda T, x: T.meshgrid(x[0], x[1], indexing="ij"), lambda T: T.meshgrid),
    "broadcast_tensors": (lambda T, x: T.broadcast_tensors(x, T.ones(2)), lambda T: T.broadcast_tensors),
    "atleast_1d": (lambda T, x: T.atleast_1d(x), lambda T: T.atleast_1d),
    "atleast_2d_many": (lambda T, x: T.atleast_2d(x, x), lambda T: T.atleast_2d),
    "atleast_3d": (lambda T, x: T.atleast_3d(x), lambda T: T.atleast_3d),
    "block_diag": (lambda T, x: T.block_diag(x, x), lambda T: T.block_diag),
    "cartesian_prod": (lambda T, x: T.cartesian_prod(x[0], x[1]), lambda T: T.cartesian_prod),
    "chain_matmul": (lambda T, x: T.chain_matmul(x, x), lambda T: T.chain_matmul),
    "lu": (lambda T, x: T.lu(x), lambda T: T.lu),
    "lu_infos": (lambda T, x: T.lu(x, get_infos=True), lambda T: T.lu),
    "unravel_index": (lambda T, x: T.unravel_index(x, (2, 2)), lambda T: T.unravel_index),
    "pca_lowrank": (lambda T, x: T.pca_lowrank(x, q=2), lambda T: T.pca_lowrank),
    # torch.autograd
    "autograd.grad": (lambda T, x: T.autograd.grad(x.sum(), x), lambda T: T.autograd.grad),
    "autograd.grad_lists": (lambda T, x: T.autograd.grad([x.sum()], [x], retain_graph=True),
                            lambda T: T.autograd.grad),
    "autograd.backward": (lambda T, x: T.autograd.backward(x.sum(), inputs=[x]), lambda T: T.autograd.backward),
    # torch._tensor: Tensor methods written in Python
    "Tensor.split": (lambda T, x: x.split(1), lambda T: T.Tensor.split),
    "Tensor.split_dim": (lambda T, x: x.split([1, 1], dim=1), lambda T: T.Tensor.split),
    "Tensor.norm": (lambda T, x: x.norm(), lambda T: T.Tensor.norm),
    "Tensor.norm_dim": (lambda T, x: x.norm(1, dim=0), lambda T: T.Tensor.norm),
    "Tensor.unique": (lambda T, x: x.unique(), lambda T: T.Tensor.unique),
    "Tensor.unique_consecutive": (lambda T, x: x.unique_consecutive(return_counts=True),
                                  lambda T: T.Tensor.unique_consecutive),
    "Tensor.stft": (lambda T, x: x.reshape(4).stft(4, center=False, return_complex=True, align_to_window=True),
                    lambda T: T.Tensor.stft),
    "Tensor.lu": (lambda T, x: x.lu(), lambda T: T.Tensor.lu),
    "Tensor.backward": (lambda T, x: x.sum().backward(), lambda T: T.Tensor.backward),
    "Tensor.__rsub__": (lambda T, x: 1 - x, lambda T: T.Tensor.__rsub__),
    "Tensor.__rpow__": (lambda T, x: 2 ** x, lambda T: T.Tensor.__rpow__),
    "Tensor.__pow__": (lambda T, x: x ** 2, lambda T: T.Tensor.__pow__),
    "Tensor.__rtruediv__": (lambda T, x: 1 / x, lambda T: T.Tensor.__rtruediv__),
    "Tensor.__floordiv__": (lambda T, x: x // 2, lambda T: T.Tensor.__floordiv__),
    "Tensor.__rmatmul__": (lambda T, x: x.__rmatmul__(x), lambda T: T.Tensor.__rmatmul__),
    "Tensor.__format__": (lambda T, x: x.__format__(".2f"), lambda T: T.Tensor.__format__),
    "Tensor.__reversed__": (lambda T, x: reversed(x), lambda T: T.Tensor.__reversed__),
    "Tensor.__len__": (lambda T, x: len(x), lambda T: T.Tensor.__len__),
    "Tensor.__contains__": (lambda T, x: 2.0 in x, lambda T: T.Tensor.__contains__),
    "Tensor.__repr__": (lambda T, x: repr(x), lambda T: T.Tensor.__repr__),
    "Tensor.__array__": (lambda T, x: np.asarray(x), lambda T: T.Tensor.__array__),
    "Tensor.unflatten": (lambda T, x: x.reshape(4).unflatten(0, (2, 2)), lambda T: T.Tensor.unflatten),
    "Tensor.register_hook": (lambda T, x: x.register_hook(lambda g: g), lambda T: T.Tensor.register_hook),
    "Tensor.dim_order": (lambda T, x: x.dim_order(), lambda T: T.Tensor.dim_order),
    # builtins, as written
    "add": (lambda T, x: T.add(x, 1), lambda T: T.add),
    "add_alpha": (lambda T, x: T.add(x, x, alpha=2), lambda T: T.add),
    "mean": (lambda T, x: T.mean(x), lambda T: T.mean),
    "cat": (lambda T, x: T.cat([x, x], 0), lambda T: T.cat),
    "stack_dim": (lambda T, x: T.stack([x, x], dim=1), lambda T: T.stack),
    "vstack": (lambda T, x: T.vstack([x, x]), lambda T: T.vstack),
    "row_stack": (lambda T, x: T.row_stack([x, x]), lambda T: T.row_stack),
    "det": (lambda T, x: T.det(x), lambda T: T.det),
    "linalg.det": (lambda T, x: T.linalg.det(x), lambda T: T.linalg.det),
    "softmax": (lambda T, x: T.softmax(x, 0), lambda T: T.softmax),
    "F.relu": (lambda T, x: T.nn.functional.relu(x), lambda T: T.nn.functional.relu),
    "Tensor.add": (lambda T, x: x.add(1), lambda T: T.Tensor.add),
    "Tensor.sum_dim": (lambda T, x: x.sum(0, keepdim=True), lambda T: T.Tensor.sum),
    "Tensor.reshape": (lambda T, x: x.reshape(4), lambda T: T.Tensor.reshape),
    "Tensor.to": (lambda T, x: x.to(T.float64), lambda T: T.Tensor.to),
    "Tensor.max_dim": (lambda T, x: x.max(dim=0), lambda T: T.Tensor.max),
    "Tensor.numel": (lambda T, x: x.numel(), lambda T: T.Tensor.numel),
    "Tensor.nelement": (lambda T, x: x.nelement(), lambda T: T.Tensor.numel),  # (PyTorch hands numel)
    # operators and indexing
    "mul": (lambda T, x: x * 2, lambda T: T.Tensor.mul),
    "radd": (lambda T, x: 2 + x, lambda T: T.Tensor.add),
    "eq": (lambda T, x: x == 1, lambda T: T.Tensor.__eq__),
    "ne": (lambda T, x: x != 1, lambda T: T.Tensor.ne),
    "neg": (lambda T, x: -x, lambda T: T.Tensor.neg),
    "getitem": (lambda T, x: x[0], lambda T: T.Tensor.__getitem__),
    "setitem": (lambda T, x: x.__setitem__(0, 1.0), lambda T: T.Tensor.__setitem__),
    # properties: their __get__ (and __set__ for the ones PyTorch dispatches)
    **{f".{p}": ((lambda p: lambda T, x: getattr(x, p))(p), (lambda p: lambda T: getattr(T.Tensor, p).__get__)(p))
       for p in ("shape", "T", "grad", "requires_grad", "data", "dtype", "is_leaf", "grad_fn", "ndim", "device",
                 "mT", "real")},
    ".requires_grad=": (lambda T, x: setattr(x, "requires_grad", False), lambda T: T.Tensor.requires_grad.__set__),
    ".grad=": (lambda T, x: setattr(x, "grad", T.ones(2, 2)), lambda T: T.Tensor.grad.__set__),
    ".data=": (lambda T, x: setattr(x, "data", T.zeros(2, 2)), lambda T: T.Tensor.data.__set__),
}


def _first_calls(lib):
    """name -> what the first ``__torch_function__`` call of ``_CALLS[name]`` received."""
    log = []
    Logged = _logging_class(lib, log)
    out = {}
    for name, (call, expected) in _CALLS.items():
        if name == "unravel_index":
            x = lib.tensor([[0, 1], [3, 3]])
        else:
            x = lib.tensor([[1.0, 2.0], [2.0, 5.0]], requires_grad=name.startswith(
                ("autograd", "Tensor.backward", "Tensor.register_hook")))
        x = x.as_subclass(Logged)
        log.clear()
        try:
            call(lib, x)
            error = None
        except Exception as e:  # noqa: BLE001 - the error's type is compared too
            error = type(e).__name__
        func, types, args, kwargs = log[0]
        target = expected(lib) if expected is not None else None
        same = None if target is None else "is" if func is target else "==" if func == target else "other"
        out[name] = (getattr(func, "__name__", None), same, types, [_rep(lib, a) for a in args],
                     None if kwargs is None else sorted((k, _rep(lib, v)) for k, v in kwargs.items()), error)
    return out


@needs_torch
def test_torch_function_receives_pytorch_func_and_arguments():
    ref, got = _first_calls(torch), _first_calls(torchish)
    assert {k: v for k, v in got.items() if v != ref[k]} == {k: v for k, v in ref.items() if v != got[k]}


def _declined_accessors(lib):
    """Every handler declines a property read or assignment: PyTorch's TypeError names the accessor."""
    class Declines(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    x = lib.ones(2).as_subclass(Declines)
    out = []
    for call in (lambda: x.shape, lambda: x.grad, lambda: setattr(x, "requires_grad", True)):
        try:
            call()
            out.append(None)
        except TypeError as e:
            out.append(str(e).split("\n\nFor more information")[0])
    return out


@needs_torch
def test_declined_accessors_name_themselves_as_pytorch():
    assert _declined_accessors(torchish) == _declined_accessors(torch)


def _whole_logs(lib):
    """Every call a logging subclass sees, by name (properties as ``name.__get__``), for programs whose inner calls
    PyTorch's Python code makes through the protocol too (``iter``: ``dim`` then ``unbind``) or its C++ does not
    (an nn module's forward, ``backward``)."""
    log = []
    Logged = _logging_class(lib, log)

    def name(func):
        if getattr(func, "__name__", None) in ("__get__", "__set__"):
            owner = next(k for k in dir(lib.Tensor) if getattr(lib.Tensor, k, None) is func.__self__)
            return f"{owner}.{func.__name__}"
        return func.__name__

    def mk(requires_grad=False):
        return lib.ones(2, 2, requires_grad=requires_grad).as_subclass(Logged)
    lib.manual_seed(0)
    programs = {
        "modules": lambda: lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh(), lib.nn.ReLU())(mk()),
        "backward": lambda: (lambda a: ((a * 2).sum().backward(), a.grad))(mk(True)),
        "autograd.grad": lambda: (lambda a: lib.autograd.grad((a * 2).sum(), a))(mk(True)),
        "iter": lambda: list(mk()),
        "reversed": lambda: reversed(mk()),
        "format": lambda: f"{mk()[0, 0]}",
        "item_tolist": lambda: (mk()[0, 0].item(), mk().tolist()),
        "size": lambda: (lambda a: (a.size(), a.shape, a.dim(), a.ndim, a.numel()))(mk()),
        "metadata": lambda: (lambda a: (a.dtype, a.device, a.is_leaf, a.grad_fn, a.requires_grad, a.layout))(mk()),
        "inplace": lambda: mk().add_(1).mul_(2),
        "loss": lambda: lib.nn.functional.cross_entropy(mk(), lib.tensor([0, 1])),
        "repr": lambda: repr(mk()),
    }
    out = {}
    for key, program in programs.items():
        mk()  # (made before the log starts)
        log.clear()
        program()
        out[key] = [name(entry[0]) for entry in log]
    return out


@needs_torch
def test_a_logging_subclass_sees_the_calls_pytorch_makes():
    ref, got = _whole_logs(torch), _whole_logs(torchish)
    assert {k: v for k, v in got.items() if v != ref[k]} == {k: v for k, v in ref.items() if v != got[k]}


def _registered_before(lib, handled):
    """Handlers keyed on the library's functions in ``handled``, built before the class: the names of the handlers
    ``__torch_function__`` finds for a few calls."""
    found = []

    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            found.append(handled.get(func))
            return super().__torch_function__(func, types, args, kwargs)
    x = lib.ones(2, 2, requires_grad=True).as_subclass(Sub)
    for call in (lambda: lib.mean(x), lambda: lib.add(x, 1), lambda: x.add(1), lambda: x * 2, lambda: x.split(1),
                 lambda: lib.norm(x), lambda: lib.nn.functional.relu(x), lambda: lib.linalg.norm(x),
                 lambda: lib.relu(x), lambda: lib.nn.ReLU()(x), lambda: x.shape,
                 lambda: lib.autograd.grad(x.sum(), x)):
        found.clear()
        call()
        yield found[0]


def _handlers(lib):
    return {lib.mean: "mean", lib.add: "add", lib.Tensor.add: "Tensor.add", lib.Tensor.mul: "Tensor.mul",
            lib.Tensor.split: "Tensor.split", lib.norm: "norm", lib.nn.functional.relu: "F.relu",
            lib.linalg.norm: "linalg.norm", lib.relu: "relu", lib.Tensor.shape.__get__: "shape",
            lib.autograd.grad: "autograd.grad"}


_EXPECTED = ["mean", "add", "Tensor.add", "Tensor.mul", "Tensor.split", "norm", "F.relu", "linalg.norm", "relu",
             "F.relu", "shape", None]  # (nn.ReLU calls F.relu; autograd.grad's first call is x.sum())


def test_handlers_registered_at_import_find_the_functions_dispatched():
    """A dict built when this module was imported (dispatch off), the class statement after: ``func`` is each
    registered object, as in PyTorch (torchish swaps the functions' code, not the functions)."""
    assert not _ACTIVE_AT_IMPORT
    assert list(_registered_before(torchish, _BEFORE)) == _EXPECTED


def test_handlers_registered_before_and_after_the_class_find_the_functions():
    before = _handlers(torchish)
    assert not _subclass._ACTIVE[0]
    assert list(_registered_before(torchish, before)) == _EXPECTED
    assert _subclass._ACTIVE[0] and _handlers(torchish) == before  # (after: the same objects)
    assert list(_registered_before(torchish, _handlers(torchish))) == _EXPECTED


@needs_torch
def test_handlers_registered_before_the_class_as_in_pytorch():
    assert list(_registered_before(torch, _handlers(torch))) == _EXPECTED


def test_a_duck_type_finds_handlers_registered_before_its_class():
    handled = {torchish.mean: lambda d: ("mean of", d.value), torchish.Tensor.add: lambda d, o: ("add", o)}

    class Duck:
        def __init__(self, value):
            self.value = value

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func not in handled:
                return NotImplemented
            return handled[func](*args, **(kwargs or {}))
    assert torchish.mean(Duck(3)) == ("mean of", 3)
    assert torchish.ones(1).add(Duck(2))[0] == "add"


def test_dispatch_off_again_puts_each_function_back():
    """After ``deactivate`` (the conftest's, after each test) the functions run their own code; aliases that are
    two functions in PyTorch are two in torchish (``import torchish`` copies them), so each hands itself; a reversed
    tensor is a tensor."""
    funcs = (torchish.norm, torchish.Tensor.split, torchish.autograd.grad, torchish.Tensor.shape.fget)
    codes = [f.__code__ for f in funcs]

    class Sub(torchish.Tensor):
        pass
    assert [f.__code__ for f in funcs] != codes
    _subclass.deactivate()
    assert [f.__code__ for f in funcs] == codes
    assert torchish.row_stack is not torchish.vstack and torchish.Tensor.arccosh_ is not torchish.Tensor.acosh_
    assert torchish.Tensor.nelement is torchish.Tensor.numel  # (PyTorch's nelement hands Tensor.numel)
    r = reversed(torchish.tensor([1.0, 2.0]))
    assert type(r) is torchish.Tensor and r.tolist() == [2.0, 1.0]
    assert copy.copy(torchish.ones(1)).tolist() == [1.0]
