"""Tensor subclasses compared with PyTorch 2.13, continued from tests/test_tensor_subclass.py: the operators that are
their method itself (``Tensor.__neg__ is Tensor.neg``, with a subclass defined too), ``copy.deepcopy`` of a
subclass instance (PyTorch's default refuses a subclass whose ``new_empty`` gives a plain Tensor; Parameter's own
``__deepcopy__`` keeps working), the private properties ``_base`` and ``_version`` handed to
``__torch_function__``, and the line a warning raised inside a dispatched function points at.

Each case defines its own classes (``lib.Tensor`` differs between the libraries); the conftest turns dispatch off
again after each test.
"""
import copy
import inspect
import warnings

import pytest

from oracle import needs_torch, run_both

pytestmark = [needs_torch]

# (operator, method): pairs PyTorch makes one object or two
_PAIRS = [("__neg__", "neg"), ("__abs__", "abs"), ("__pos__", "positive"), ("__invert__", "bitwise_not"),
          ("__div__", "__truediv__"), ("__rdiv__", "__rtruediv__"), ("__idiv__", "__itruediv__"), ("__add__", "add"),
          ("__mul__", "mul"), ("__neg__", "negative"), ("__abs__", "absolute")]


def _identities(lib):
    T = lib.Tensor
    return [getattr(T, a) is getattr(T, b) for a, b in _PAIRS]


def test_operator_is_the_method_where_pytorchs_is():
    ref, got = run_both(_identities)
    assert got == ref


def test_operator_identity_and_dispatch_with_a_subclass():
    """With a logging subclass defined, the identities hold, and ``-t``, ``abs(t)``, ``+t`` hand the method."""
    def fn(lib):
        log = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(func)
                return super().__torch_function__(func, types, args, kwargs or {})
        t = lib.tensor([1.0, -2.0]).as_subclass(Logged)
        results = [-t, abs(t), +t, t.__neg__()]
        T = lib.Tensor
        handed = [f is m for f, m in zip(log, (T.neg, T.abs, T.positive, T.neg))]
        plain = (-lib.tensor([1.0, -2.0])).tolist()
        return (_identities(lib), handed, [type(r).__name__ for r in results],
                [r.as_subclass(lib.Tensor).tolist() for r in results], plain)
    ref, got = run_both(fn)
    assert got == ref


def _deepcopy_case(lib, case):
    class Plain(lib.Tensor):
        pass

    class WithNewEmpty(lib.Tensor):
        def new_empty(self, *args, **kwargs):
            return super().new_empty(*args, **kwargs).as_subclass(WithNewEmpty)

    class Disabled(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    class Param(lib.nn.Parameter):
        pass

    class OwnCopy(lib.Tensor):
        def __deepcopy__(self, memo):
            return "own copy"

    make = {
        "plain": lambda: lib.ones(2).as_subclass(Plain),
        "plain_requires_grad": lambda: Plain._make_subclass(Plain, lib.ones(2), True),
        "new_empty": lambda: lib.ones(2).as_subclass(WithNewEmpty),
        "new_empty_requires_grad": lambda: WithNewEmpty._make_subclass(WithNewEmpty, lib.ones(2), True),
        "disabled": lambda: lib.ones(2).as_subclass(Disabled),
        "logged": lambda: lib.ones(2).as_subclass(Logged),
        "parameter": lambda: lib.nn.Parameter(lib.ones(2)),
        "parameter_subclass": lambda: Param(lib.ones(2)),
        "own_deepcopy": lambda: lib.ones(2).as_subclass(OwnCopy),
        "module_with_parameter_subclass": lambda: _module_with(lib, Param(lib.ones(2))),
        "non_leaf": lambda: (lib.ones(2, requires_grad=True) * 2).as_subclass(Plain),
    }[case]
    try:
        out = copy.deepcopy(make())
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return type(e).__name__, str(e)
    if isinstance(out, lib.nn.Module):
        out = out.w
    if isinstance(out, str):
        return out
    return type(out).__name__, out.requires_grad, out.detach().as_subclass(lib.Tensor).tolist()


def _module_with(lib, p):
    m = lib.nn.Module()
    m.w = p
    return m


@pytest.mark.parametrize("case", ["plain", "plain_requires_grad", "new_empty", "new_empty_requires_grad", "disabled",
                                  "logged", "parameter", "parameter_subclass", "own_deepcopy",
                                  "module_with_parameter_subclass", "non_leaf"])
def test_deepcopy_of_a_subclass(case):
    ref, got = run_both(_deepcopy_case, case)
    assert got == ref


def test_deepcopy_of_torchs_own_subclasses():
    """torchish's own Tensor subclasses keep their copies: an uninitialized buffer refuses (ValueError), an
    uninitialized parameter and a lazy module copy."""
    def fn(lib):
        out = []
        for make in (lib.nn.parameter.UninitializedBuffer, lib.nn.parameter.UninitializedParameter,
                     lambda: lib.nn.LazyLinear(3)):
            try:
                out.append(type(copy.deepcopy(make())).__name__)
            except Exception as e:  # noqa: BLE001 - the error type is the outcome
                out.append(type(e).__name__)
        return out
    ref, got = run_both(fn)
    assert got == ref


@pytest.mark.parametrize("prop", ["_base", "_version", "is_leaf", "grad_fn", "requires_grad", "data", "grad"])
def test_property_reads_handed_to_torch_function(prop):
    """What a logging subclass sees for ``t.<prop>``: the property's ``__get__`` with ``(t,)``, and the result type
    (``_base`` and ``grad`` as stored, plain Tensors or None)."""
    def fn(lib):
        log = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append((func.__name__, len(args), args[0] is t if args else None, kwargs))
                return super().__torch_function__(func, types, args, kwargs or {})
        t = lib.ones(3)[1:].as_subclass(Logged)
        value = getattr(t, prop)
        return log, type(value).__name__
    ref, got = run_both(fn)
    assert got == ref


def _warning_line(lib, with_subclass):
    """Where the warning of a deprecated call points: (file, line) relative to the calling line."""
    if with_subclass:
        class Sub(lib.Tensor):
            pass
    x = lib.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        x.resize(2)
    assert len(caught) == 1
    return caught[0].filename == __file__, caught[0].lineno - line, str(caught[0].message)


@pytest.mark.parametrize("with_subclass", [False, True], ids=["plain", "subclass_defined"])
def test_warning_points_at_the_callers_line(with_subclass):
    ref, got = run_both(_warning_line, with_subclass)
    assert got == ref == (True, 0, "non-inplace resize is deprecated")
