"""A class that is not a Tensor but defines ``__torch_function__`` (PyTorch's "Extending torch with a Tensor-like
type": ``ScalarTensor``) takes part in the protocol from its class statement on, with no
``torchish.overrides.enable_dispatch()`` (torchish/_subclass.py: ``_build_class``), compared with torch 2.13 by
``assert_script_matches``: the tutorial's program end to end (results, their types, the function objects and
types handed to ``__torch_function__``, the TypeError when the handler declines), duck types inside list
arguments and as keyword arguments, Tensor methods and operators (a declined binary operator returns
``NotImplemented``, so Python says "unsupported operand type(s)" or uses the other operand's reflected method),
and the same errors' wording. Each case defines its classes inside (``lib.Tensor`` differs between the libraries);
the conftest turns dispatch off again after each test.
"""
import functools

from oracle import raised, script_test
import torchish


def _tutorial_classes(lib):
    """The tutorial's ``ScalarTensor``, ``HANDLED_FUNCTIONS`` and ``implements``, plus a log of each call of
    ``__torch_function__`` (the function's name, whether it is the public function the tutorial registered, the
    types' names)."""
    handled, log = {}, []

    class ScalarTensor(object):
        def __init__(self, N, value):
            self._N = N
            self._value = value

        def __repr__(self):
            return "ScalarTensor(N={}, value={})".format(self._N, self._value)

        def tensor(self):
            return self._value * lib.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((func.__name__, func in handled, [t.__name__ for t in types], len(args), sorted(kwargs or {})))
            if kwargs is None:
                kwargs = {}
            if func not in handled or not all(issubclass(t, (lib.Tensor, ScalarTensor)) for t in types):
                return NotImplemented
            return handled[func](*args, **kwargs)

    def implements(torch_function):
        def decorator(func):
            functools.update_wrapper(func, torch_function)
            handled[torch_function] = func
            return func
        return decorator

    return ScalarTensor, implements, log


def _declined(fn):
    """The TypeError's text up to PyTorch's hint about TORCH_LOGS (which torchish has no use for), the Tensor
    class written the same for both libraries."""
    out = raised(fn)
    return out and (out[0], out[1].split("\n\nFor more information")[0].replace("torchish._tensor.Tensor",
                                                                                  "torch.Tensor"))


def case_tutorial_program(lib):
    ScalarTensor, implements, log = _tutorial_classes(lib)

    @implements(lib.mean)
    def mean(input):
        return float(input._value) / input._N

    d = ScalarTensor(5, 2)
    results = [lib.mean(d), _declined(lambda: lib.add(d, d))]

    def ensure_tensor(data):
        if isinstance(data, ScalarTensor):
            return data.tensor()
        return lib.as_tensor(data)

    @implements(lib.add)
    def add(input, other):
        try:
            if input._N == other._N:
                return ScalarTensor(input._N, input._value + other._value)
            else:
                raise ValueError("Shape mismatch!")
        except AttributeError:
            return lib.add(ensure_tensor(input), ensure_tensor(other))

    s = ScalarTensor(2, 2)
    t = lib.tensor([[1, 1], [1, 1]])
    results += [repr(lib.add(s, s)), lib.add(s, t), lib.add(t, s), lib.add(t, other=s), mean.__name__,
                _declined(lambda: lib.add(s, ScalarTensor(3, 1)))]
    return results, log


def case_lists_methods_and_functional(lib):
    """A duck type inside a list argument (``torch.cat``), as a method's argument (``Tensor.add``: the method is
    what ``__torch_function__`` receives) and to ``torch.nn.functional``; one a handler declines."""
    ScalarTensor, implements, log = _tutorial_classes(lib)
    implements(lib.cat)(lambda tensors, dim=0: lib.cat([x.tensor() if isinstance(x, ScalarTensor) else x
                                                       for x in tensors], dim))
    implements(lib.Tensor.add)(lambda self, other: self + other.tensor())
    implements(lib.nn.functional.relu)(lambda x, inplace=False: ScalarTensor(x._N, max(x._value, 0)))
    s = ScalarTensor(2, 3)
    t = lib.ones(2, 2)
    # (PyTorch's F.relu hands over inplace= always, as its Python passes it; torchish the arguments as given)
    relu = lib.nn.functional.relu(ScalarTensor(2, -1), inplace=False)
    return ([lib.cat([t, s]), lib.cat((s, t), dim=1), t.add(s), repr(relu), _declined(lambda: lib.stack([t, s])),
             _declined(lambda: t.sub(s)), _declined(lambda: s in t)], log)


def case_declined_functions_name_themselves_as_pytorch(lib):
    """Every handler declines: PyTorch's builtins say "Multiple dispatch failed for '<C++ name>'", its Python
    functions "no implementation found for '<module>.<name>'" and list a plain Tensor argument's type too."""
    ScalarTensor, implements, log = _tutorial_classes(lib)
    s = ScalarTensor(2, 3)
    t = lib.ones(2, 2)
    F = lib.nn.functional
    calls = [lambda: F.softsign(s), lambda: F.mse_loss(t, s), lambda: F.threshold(s, 0.5, 0.0),
             lambda: F.gelu(s), lambda: F.pdist(s), lambda: lib.linalg.norm(s), lambda: lib.fft.fft(s),
             lambda: lib.special.expit(s), lambda: lib.einsum("ij->i", s), lambda: t.__rsub__(s)]
    # (the keyword arguments PyTorch's Python functions hand over are their own parameters, spelled out)
    return [_declined(c) for c in calls], [entry[:4] for entry in log]


def case_operators(lib):
    """``t * s`` hands ``Tensor.mul`` to ``__torch_function__``; declined, the operator returns NotImplemented, so
    Python tries the duck type's reflected method (``__rsub__`` here) or raises its own TypeError."""
    ScalarTensor, implements, log = _tutorial_classes(lib)
    implements(lib.Tensor.mul)(lambda self, other: self * other.tensor())

    class WithReflected(ScalarTensor):
        def __rsub__(self, other):
            return ("rsub", other.tolist())

    s = ScalarTensor(2, 2)
    t = lib.ones(2, 2)
    return ([t * s, _declined(lambda: t + s), _declined(lambda: t @ s), _declined(lambda: t ** s),
             _declined(lambda: 2 / s), t == s, t != s, t - WithReflected(2, 1), t.__add__(s), t.__rtruediv__(s),
             t.__ipow__(s)], log)


test_script_matches_torch = script_test(globals())


def test_a_duck_class_statement_turns_dispatch_on_and_classes_without_do_not():
    """Plain programs run the functions' own code: a class without ``__torch_function__`` (or torchish's own, a
    Tensor subclass's from Parameter) changes nothing; the duck class's statement makes the functions dispatch
    (the same objects, their code swapped) and gives ``builtins.__build_class__`` back (no cost per class from then
    on); ``deactivate`` puts the code back and wraps it again."""
    import builtins
    from torchish import _subclass

    assert not _subclass._ACTIVE[0] and builtins.__build_class__ is _subclass._build_class
    plain_mean, plain_code = torchish.mean, torchish.mean.__code__

    class Plain:
        def __init__(self):
            self.x = 1

    class Param(torchish.nn.Parameter):
        pass

    assert not _subclass._ACTIVE[0] and torchish.mean.__code__ is plain_code

    class Duck:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("duck", func is torchish.mean)

    assert _subclass._ACTIVE[0] and torchish.mean is plain_mean and torchish.mean.__code__ is not plain_code
    assert builtins.__build_class__ is _subclass._BUILD_CLASS
    assert torchish.mean(Duck()) == ("duck", True)
    _subclass.deactivate()
    assert builtins.__build_class__ is _subclass._build_class and torchish.mean.__code__ is plain_code
