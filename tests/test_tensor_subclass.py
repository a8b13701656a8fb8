"""Tensor subclasses and the ``__torch_function__`` protocol (torchish/_subclass.py), compared with torch 2.13 by
``assert_script_matches``: a subclass stays itself through operators, methods, ``torch.*``, ``F.*``, ``linalg``/
``fft``/``special`` functions and nn modules (Tensor's default ``__torch_function__``: results converted, an
``AliasBackward0`` node on each), a logging subclass sees the functions PyTorch hands it (``Tensor.mul`` for
``x * 2``), a subclass can intercept a function (``func is torch.add``), ``torch._C._disabled_torch_function_impl``
and ``DisableTorchFunctionSubclass`` take it out, ``Tensor._make_subclass`` and ``Sub([1., 2.])`` construct
one, Parameter and its subclasses give plain Tensors, gradients of leaves reached through a subclass are plain
Tensors, and a non-Tensor class with ``__torch_function__`` (PyTorch's ``ScalarTensor`` example) is dispatched
to (more in test_torch_function_ducktype.py). Each case defines its own classes (``lib.Tensor`` differs between the libraries).

Dispatch costs nothing until the first subclass exists (the conftest turns it off again after each test).
"""
import numpy as np

from oracle import script_test, torch_one_thread  # noqa: F401
import pytest

_one_thread = pytest.fixture(autouse=True)(torch_one_thread)


class _SavedSub:
    """Pickling names a class by its module and qualified name: one subclass per library, defined at module
    level (``_SavedSub.of(lib)``), the same name in both."""
    classes = {}

    @classmethod
    def of(cls, lib):
        if lib.__name__ not in cls.classes:
            sub = type("SavedSub", (lib.Tensor,), {"__module__": __name__, "__qualname__": "SavedSub"})
            cls.classes[lib.__name__] = sub
        globals()["SavedSub"] = cls.classes[lib.__name__]  # (what pickle finds while this library runs)
        return cls.classes[lib.__name__]


def _names(v):
    """Class names, through tuples and lists (a tuple of the subclass compares by its class names)."""
    if isinstance(v, (tuple, list)):
        return [_names(x) for x in v]
    return type(v).__name__


def case_default_subclass_stays_itself(lib):
    class Sub(lib.Tensor):
        pass
    x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    a = x.as_subclass(Sub)
    results = {
        "ops": [a * 2, 2 * a, a + 1, a - x, 1 - a, a / 3, -a, a ** 2, abs(a), a @ a.T, a > 0, a[0], a.T, a.mT,
                a.data, a.real],
        "methods": [a.sum(0), a.exp(), a.reshape(3, 2), a.clone(), a.detach(), a.float(), a.to(lib.float64),
                    a.new_zeros(2), a.softmax(1), a.clamp(min=0)],
        "functions": [lib.cat([a, x]), lib.cat([x, a]), lib.stack([a, a]), lib.where(a > 0, a, 0.0), lib.zeros_like(a),
                      lib.linalg.norm(a), lib.special.expit(a), lib.nn.functional.relu(a),
                      lib.nn.functional.linear(a, lib.ones(4, 3))],
        "tuples": [a.max(1), a.split(1), a.unbind(0), a.sort(1), lib.linalg.svd(a[:, :2])],
    }
    names = {k: _names(v) for k, v in results.items()}
    values = [v.as_subclass(lib.Tensor) for v in results["ops"] + results["methods"] + results["functions"]]
    return names, values, _names(a.sum().item()), _names(a.tolist()), _names(a.shape), a.dim()


def case_subclass_autograd(lib):
    class Sub(lib.Tensor):
        pass
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    a = x.as_subclass(Sub)
    b = a * a + a.sin()
    out = (b * lib.tensor([0.5, 1.0, 2.0])).sum()
    out.backward()
    return (a.grad_fn.name(), a.is_leaf, a.requires_grad, _names(b), b.grad_fn.name(), b._is_view(),
            _names(out), _names(x.grad), x.grad, repr(a), str(b))


def case_subclass_through_modules(lib):
    class Sub(lib.Tensor):
        pass
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.LayerNorm(4), lib.nn.Linear(4, 2))
    x = lib.cos(lib.arange(6.0).reshape(2, 3)).as_subclass(Sub)
    y = model(x)
    loss = lib.nn.functional.cross_entropy(y, lib.tensor([0, 1]))
    loss.backward()
    return (_names(y), _names(loss), y.as_subclass(lib.Tensor), loss.as_subclass(lib.Tensor),
            _names(model[0].weight.grad), model[0].weight.grad, _names(model[0].weight * 2))


def case_logging_subclass_sees_the_calls(lib):
    log = []

    class Logging(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})
    x = lib.tensor([1.0, 2.0, 3.0]).as_subclass(Logging)
    y = lib.exp(x * 2 + 1).sum()
    z = lib.nn.functional.relu(x - 2)
    w = x.mean() / x.std()
    v = lib.nn.Linear(3, 1)(x)
    return log, _names(y), _names(z), _names(w), _names(v)


def case_intercepting_subclass(lib):
    class Intercept(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is lib.Tensor.add or func is lib.add:
                return "intercepted"
            with lib._C.DisableTorchFunctionSubclass():
                return func(*args, **(kwargs or {}))
    u = lib.ones(2).as_subclass(Intercept)
    return u + 1, lib.add(u, 1), u.add(1), _names(u * 2), u * 2


def case_disabled_impl_and_parameters(lib):
    class Disabled(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

    class MyParam(lib.nn.Parameter):
        pass
    d = lib.ones(2).as_subclass(Disabled)
    p = lib.nn.Parameter(lib.ones(2))
    q = MyParam(lib.ones(2))
    return (_names(d + 1), _names(d.sum()), _names(p * 2), _names(p.data), _names(p.detach()), _names(q),
            _names(q * 2), q.requires_grad, lib._C._is_torch_function_enabled())


def case_constructing_subclasses(lib):
    class WithExtra(lib.Tensor):
        @staticmethod
        def __new__(cls, x, extra):
            r = lib.Tensor._make_subclass(cls, x, True)
            r.extra = extra
            return r

        def __init__(self, x, extra):
            pass

    class Sub(lib.Tensor):
        pass
    m = WithExtra(lib.ones(2), 5)
    s = Sub([1.0, 2.0])
    s2 = Sub(lib.tensor([3.0, 4.0]))
    return (_names(m), m.extra, m.requires_grad, m.is_leaf, _names(m + 1), getattr(m + 1, "extra", None),
            _names(s), s.as_subclass(lib.Tensor), _names(s2), repr(s))


def case_scalar_tensor_duck_type(lib):
    """PyTorch's "Extending torch with a Tensor-like type" example: a class that is not a Tensor."""
    handled = {}

    class ScalarTensor:
        def __init__(self, n, value):
            self._n, self._value = n, value

        def tensor(self):
            return self._value * lib.eye(self._n)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func not in handled or not all(issubclass(t, (lib.Tensor, ScalarTensor)) for t in types):
                return NotImplemented
            return handled[func](*args, **(kwargs or {}))

    handled[lib.mean] = lambda s: float(s._value) / s._n
    handled[lib.add] = lambda s, other: ScalarTensor(s._n, s._value + other)
    s = ScalarTensor(5, 2)
    try:
        lib.sum(s)
        failed = None
    except TypeError as e:
        failed = "Multiple dispatch failed for 'torch.sum'" in str(e)
    return lib.mean(s), lib.add(s, 3)._value, failed


def case_compiled_function_called_with_a_subclass(lib, jit):
    """torch.compile keeps a subclass's results its class: torchish.compile runs such a call eagerly (the
    subclass's Python runs at each call), and the same function on plain tensors compiles as before."""
    class Sub(lib.Tensor):
        pass
    step = jit(lambda x: (x * 2).sum())
    a = lib.tensor([1.0, 2.0, 3.0]).as_subclass(Sub)
    out = [step(a) for _ in range(3)] + [step(lib.tensor([1.0, 2.0, 3.0])) for _ in range(3)]
    return _names(out), [o.as_subclass(lib.Tensor) for o in out]


def case_pickling_and_saving_keep_the_class_and_attributes(lib):
    import io
    import pickle
    a = lib.tensor([1.0, 2.0]).as_subclass(_SavedSub.of(lib))
    a.tag = "kept"
    b = lib.tensor([3.0])
    b.meta = {"k": 1}
    c = pickle.loads(pickle.dumps({"a": a, "b": b}))
    buf = io.BytesIO()
    lib.save({"a": a, "b": b, "plain": lib.ones(1)}, buf)
    buf.seek(0)
    d = lib.load(buf, weights_only=False)
    return [(k, type(v).__name__, getattr(v, "tag", None), getattr(v, "meta", None), v.as_subclass(lib.Tensor))
            for k, v in sorted({**c, **{"saved_" + k: v for k, v in d.items()}}.items())]


test_script_matches_torch = script_test(globals())


def test_dispatch_is_off_until_a_subclass_and_off_again_after(request):
    """Plain programs run the functions' own code; the first subclass makes the functions themselves dispatch (their
    code is swapped, the objects stay, so references taken before still dispatch and are ``func``), operators get
    wrappers, and ``deactivate`` (the conftest's, after each test) puts everything back."""
    import torchish
    from torchish import _subclass
    assert not _subclass._ACTIVE[0]
    funcs = (torchish.exp, torchish.Tensor.mul, torchish.nn.functional.linear, torchish.Tensor.shape.fget,
             torchish.Tensor.grad.fset)
    codes, mul_operator = [f.__code__ for f in funcs], torchish.Tensor.__mul__

    class Sub(torchish.Tensor):
        pass
    assert _subclass._ACTIVE[0]
    assert (torchish.exp, torchish.Tensor.mul, torchish.nn.functional.linear, torchish.Tensor.shape.fget,
            torchish.Tensor.grad.fset) == funcs
    assert all(f.__code__ is not code for f, code in zip(funcs, codes))
    assert torchish.Tensor.__mul__ is not mul_operator
    a = torchish.ones(2).as_subclass(Sub)
    assert type(torchish.nn.Linear(2, 2)(a)) is Sub and type(funcs[0](a)) is Sub
    _subclass.deactivate()
    assert [f.__code__ for f in funcs] == codes and torchish.Tensor.__mul__ is mul_operator
    assert type(a * 2) is torchish.Tensor
    np.testing.assert_allclose((a * 2).numpy(), [2.0, 2.0])


def test_compiled_function_runs_subclass_calls_eagerly_and_plain_ones_compiled():
    import torchish

    class Sub(torchish.Tensor):
        pass
    step = torchish.compile(lambda x: (x * 2).sum(), fullgraph=False)
    a = torchish.ones(3).as_subclass(Sub)
    assert [type(step(a)) for _ in range(3)] == [Sub] * 3
    assert [type(step(torchish.ones(3))) for _ in range(3)] == [torchish.Tensor] * 3
    assert step.stats["compiled_calls"] == 2 and step.stats["eager_calls"] == 4
