"""``torch.*`` spellings of nn.functional ops (``torchish/_aliases.py``), with PyTorch's top-level argument orders,
``torch.unravel_index``, the memory-format constants and ``torch.nn.modules.utils``: values, gradients and errors
against torch 2.13."""
import numpy as np
import pytest

import torchish
from oracle import arr, check, check_raises, run_both

X1, X2 = arr(2, 3, 8, seed=1), arr(2, 3, 6, 6, seed=2)
W1, W2 = arr(4, 3, 3, seed=3), arr(4, 3, 3, 3, seed=4)

CASES = {
    "conv1d": (lambda T, x, w: T.conv1d(x, w, None, 1, 1), [X1, W1]),
    "conv2d": (lambda T, x, w: T.conv2d(x, w, None, 2, 1, 1, 1), [X2, W2]),
    "conv_transpose1d": (lambda T, x, w: T.conv_transpose1d(x, w.transpose(0, 1)), [X1, W1]),
    "max_pool1d": (lambda T, x: T.max_pool1d(x, 2), [X1]),
    "max_pool2d": (lambda T, x: T.max_pool2d(x, 3, 2, 1), [X2]),
    "avg_pool1d": (lambda T, x: T.avg_pool1d(x, 3, 2), [X1]),
    "adaptive_avg_pool1d": (lambda T, x: T.adaptive_avg_pool1d(x, 3), [X1]),
    "adaptive_max_pool1d": (lambda T, x: T.adaptive_max_pool1d(x, 3), [X1]),
    "layer_norm": (lambda T, x, w, b: T.layer_norm(x, (8,), w, b, 1e-5, True), [X1, arr(8, seed=5), arr(8, seed=6)]),
    "group_norm": (lambda T, x, w, b: T.group_norm(x, 3, w, b), [X1, arr(3, seed=5), arr(3, seed=6)]),
    "batch_norm": (lambda T, x, w, b: T.batch_norm(x, w, b, T.zeros(3), T.ones(3), True, 0.1, 1e-5, True),
                   [X1, arr(3, seed=5), arr(3, seed=6)]),
    "instance_norm": (lambda T, x, w, b: T.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
                      [X1, arr(3, seed=5), arr(3, seed=6)]),
    "dropout eval": (lambda T, x: T.dropout(x, 0.5, False), [X1]),
    "alpha_dropout eval": (lambda T, x: T.alpha_dropout(x, 0.5, False), [X1]),
    "embedding": (lambda T, w: T.embedding(w, T.tensor([[0, 2], [4, 2]]), 2), [arr(5, 3, seed=7)]),
    "embedding default padding": (lambda T, w: T.embedding(w, T.tensor([1, 3])), [arr(5, 3, seed=7)]),
    "detach": (lambda T, x: T.detach(x * 2), [X1]),
    "selu celu": (lambda T, x: (T.selu(x), T.celu(x, 0.5)), [X1]),
    "prelu": (lambda T, x, w: T.prelu(x, w), [X1, arr(3, seed=8)]),
    "rrelu eval": (lambda T, x: T.rrelu(x, 0.1, 0.3), [X1]),
    "threshold hardshrink": (lambda T, x: (T.threshold(x, 0.1, 20.0), T.hardshrink(x, 0.3)), [X1]),
    "bilinear": (lambda T, a, b, w: T.bilinear(a, b, w, None), [arr(2, 3, seed=9), arr(2, 4, seed=10),
                                                                  arr(5, 3, 4, seed=11)]),
    "pixel shuffles": (lambda T, x: (T.pixel_shuffle(x, 2), T.pixel_unshuffle(x, 2), T.channel_shuffle(x, 2)),
                       [arr(1, 4, 4, 4, seed=12)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_alias_matches_torch(name):
    fn, inputs = CASES[name]
    check(fn, inputs, rtol=2e-5, atol=1e-5)


def test_inplace_aliases():
    def fn(T):
        xs = [T.tensor(arr(5, seed=s)) for s in range(4)]
        outs = [T.relu_(xs[0]), T.sigmoid_(xs[1]), T.tanh_(xs[2]), T.exp_(xs[3])]
        return [o is x for o, x in zip(outs, xs)], [x.tolist() for x in xs], T.dropout_(T.ones(3), 0.5, False)
    ref, got = run_both(fn)
    assert ref[0] == got[0] == [True] * 4
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-6)
    assert got[2].tolist() == ref[2].tolist()


@pytest.mark.parametrize("indices, shape", [([5], (2, 2)), ([-5], (2, 2)), ([-1, 3, 0], (2, 2)), ([[1, 5]], 6),
                                            ([7, 0, 23], (2, 3, 4)), ([], (3,))])
def test_unravel_index(indices, shape):
    def fn(T):
        out = T.unravel_index(T.tensor(indices, dtype=T.int64), shape)
        return [(str(o.dtype), o.tolist()) for o in out]
    ref, got = run_both(fn)
    assert got == ref


@pytest.mark.parametrize("bad", ["float", "bool", "negative shape", "int"])
def test_unravel_index_errors(bad):
    args = {"float": lambda T: (T.tensor([1.0]), (2,)), "bool": lambda T: (T.tensor([True]), (2,)),
            "negative shape": lambda T: (T.tensor([3]), (-2, 2)), "int": lambda T: (4, (3, 2))}[bad]
    check_raises(lambda T: T.unravel_index(*args(T)))


def test_memory_format_constants_and_module_utils():
    def fn(T):
        from importlib import import_module
        u = import_module(T.__name__ + ".nn.modules.utils")
        x = T.ones(1, 2, 3, 3)
        return ([repr(T.channels_last), repr(T.contiguous_format), repr(T.preserve_format),
                 repr(T.channels_last_3d)], x.is_contiguous(), x.clone(memory_format=T.contiguous_format).shape,
                [u._pair(3), u._pair((1, 2)), u._single(4), u._triple(2), u._quadruple(0),
                 u._reverse_repeat_tuple((1, 2), 2)])
    ref, got = run_both(fn)
    assert got == ref
    assert [torchish.e, torchish.pi] == [np.e, np.pi]


def _outcomes(calls):
    """Each call's result as a string, or the name of the exception it raised."""
    out = []
    for f in calls:
        try:
            out.append(str(f()))
        except Exception as e:
            out.append(type(e).__name__)
    return out


def test_legacy_typed_tensor_classes():
    def fn(T):
        x = T.tensor([1.5, -2.0])
        return _outcomes([lambda: T.FloatTensor(2, 3).shape, lambda: T.LongTensor([1, 2]).tolist(),
                          lambda: T.FloatTensor([1, 2]).dtype, lambda: T.LongTensor([1.5, 2.7]).tolist(),
                          lambda: isinstance(x, T.FloatTensor), lambda: isinstance(x, T.LongTensor),
                          lambda: x.type(T.LongTensor).tolist(), lambda: x.type(T.DoubleTensor).dtype,
                          lambda: x.type("torch.IntTensor").dtype, lambda: T.BoolTensor([1, 0]).tolist(),
                          lambda: T.ByteTensor([1, 2]).dtype, lambda: T.FloatTensor().shape,
                          lambda: T.HalfTensor(2).dtype, lambda: isinstance(x, T.cuda.FloatTensor),
                          lambda: repr(T.FloatTensor),
                          lambda: T.FloatTensor(T.Size([2, 2])).shape, lambda: x.type(), lambda: T.FloatTensor("a")])
    ref, got = run_both(fn)
    assert got == ref


def test_legacy_tensor_new():
    def fn(T):
        x, y = T.tensor([1, 2], dtype=T.int32), T.tensor([1.5], dtype=T.float64)
        return _outcomes([lambda: (x.new(2, 3).shape, x.new(2, 3).dtype), lambda: x.new([3.7, 4]).tolist(),
                          lambda: x.new().shape, lambda: y.new(T.Size([2])).dtype, lambda: y.new((1, 2)).tolist(),
                          lambda: x.new("a")])
    ref, got = run_both(fn)
    assert got == ref


_SIZE_ARGS = {"str": "ab", "floats": [1.5], "negative": [2, -1], "bool": [True], "tuple": (2, 3), "empty": (),
              "int_tensor": "t2", "one_element_tensor": "t[2]", "two_element_tensor": "t[1,2]",
              "float_tensor": "t1.5", "numpy_int": [np.int64(3)], "generator": "gen", "mixed": [2, "a"],
              "int": 3, "none": None}


@pytest.mark.parametrize("case", sorted(_SIZE_ARGS))
def test_size_constructor_as_torch(case):
    """``torch.Size(iterable)`` takes ints (bools, numpy integers, one-element integer tensors through
    ``__index__``) and raises PyTorch's TypeError for anything else."""
    def make(lib):
        a = _SIZE_ARGS[case]
        made = {"t2": lambda: [lib.tensor(2)], "t[2]": lambda: [lib.tensor([2])],
                "t[1,2]": lambda: [lib.tensor([1, 2])], "t1.5": lambda: [lib.tensor(1.5)],
                "gen": lambda: (x for x in [1, 2])}
        return lib.Size(made[a]() if isinstance(a, str) and a in made else a)
    if case in ("str", "floats", "two_element_tensor", "float_tensor", "mixed", "int", "none"):
        err = check_raises(make)
        with pytest.raises(type(err)) as got:
            make(torchish)
        assert str(got.value) == str(err)
    else:
        ref, got = run_both(lambda lib: (type(make(lib)).__name__, tuple(make(lib))))
        assert got == ref


def test_size_arithmetic_as_torch():
    """``shape + tuple``, ``tuple + shape``, ``shape * 2``, ``2 * shape`` and slices stay torch.Size; ``shape + list``
    raises PyTorch's TypeError."""
    def ops(lib):
        s = lib.Size([2, 3])
        out = [s + (4,), (4,) + s, s * 2, 2 * s, s[::-1], s[1:]]
        try:
            s + [4]
        except TypeError as e:
            out.append(str(e))
        return [(type(o).__name__, o) if not isinstance(o, str) else o for o in out]
    ref, got = run_both(ops)
    assert got == ref
