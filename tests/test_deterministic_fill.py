"""Memory allocated without initialisation under ``use_deterministic_algorithms(True)``: PyTorch fills it with NaN
(floating and complex dtypes), the integer maximum or True unless ``torch.utils.deterministic.
fill_uninitialized_memory`` is False (torchish: zeros then, JAX having no uninitialised memory); and the factories'
``out=`` resizing without PyTorch's deprecation warning (``arange`` warns). Each case against torch 2.13."""
from __future__ import annotations

import warnings

import pytest

from oracle import check_raises, needs_torch, same, torch, torchish

LIBS = [m for m in (torch, torchish) if m is not None]


@pytest.fixture(autouse=True)
def _restore_flags():
    yield
    for lib in LIBS:
        lib.use_deterministic_algorithms(False)
        lib.utils.deterministic.fill_uninitialized_memory = True


def deterministic(lib, fill=True, warn_only=False):
    import importlib
    importlib.import_module(lib.__name__ + ".utils.deterministic")
    lib.use_deterministic_algorithms(True, warn_only=warn_only)
    lib.utils.deterministic.fill_uninitialized_memory = fill


DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128", "bool", "uint8", "int8", "int16",
          "int32", "int64", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"]


def _plain(x):  # (float8 has no repr comparison: compare as float32)
    return x.float() if "float8" in str(x.dtype) else x


@needs_torch
@pytest.mark.parametrize("dt", DTYPES)
def test_empty_fill_by_dtype(dt):
    def f(lib):
        deterministic(lib)
        d = getattr(lib, dt)
        return [_plain(lib.empty(3, dtype=d)), _plain(lib.empty_like(lib.ones(2, 2), dtype=d)),
                _plain(lib.ones(1).new_empty((2,), dtype=d))]
    same(f)


@needs_torch
@pytest.mark.parametrize("make", [
    lambda lib: lib.empty(2, 3),
    lambda lib: lib.empty((2, 3), requires_grad=True).detach(),
    lambda lib: lib.empty(1, 2, 2, 2, memory_format=lib.channels_last).flatten(),
    lambda lib: lib.empty_strided((2, 2), (1, 2)),
    lambda lib: lib.empty_strided((2, 2), (3, 1)),  # (a storage with gaps)
    lambda lib: lib.ones(2, dtype=lib.float64).new_empty_strided((2,), (1,)),
    lambda lib: lib.empty_permuted((2, 3), (1, 0)),
    lambda lib: lib.empty_like(lib.ones(2, 3).t()),
    lambda lib: lib.Tensor(3),
    lambda lib: lib.Tensor(lib.Size([2, 2])),
    lambda lib: lib.ones(2, dtype=lib.int32).new(3),
    lambda lib: lib.FloatTensor(2),
    lambda lib: lib.IntTensor(2),
    lambda lib: lib.BoolTensor(2),
    lambda lib: lib.empty(3, out=lib.zeros(2)),
    lambda lib: lib.empty(70000)[-3:],  # (filled on the device, not from a host buffer)
    lambda lib: lib.empty(0),
], ids=["empty", "requires_grad", "channels_last", "strided_dense", "strided_gaps", "new_empty_strided",
        "empty_permuted", "empty_like_transposed", "Tensor_n", "Tensor_size", "new", "FloatTensor", "IntTensor",
        "BoolTensor", "out", "large", "zero_size"])
def test_allocations_filled(make):
    def f(lib):
        deterministic(lib)
        return make(lib)
    same(f)


@needs_torch
def test_resize_fills_only_new_storage():
    def f(lib):
        deterministic(lib)
        a = lib.tensor([1.0, 2.0])
        view = a[:1]
        a.resize_(4)  # grown: the two new elements
        b = lib.zeros(4)
        b.resize_(2)
        b.resize_(4)  # within its storage: the old zeros come back
        c = lib.zeros(2, 2, dtype=lib.int16)
        c.resize_as_(lib.ones(3, 3))
        return a, view, b, c
    same(f)


@needs_torch
def test_fill_switched_off_and_warn_only():
    def f(lib):
        deterministic(lib, fill=False)
        off = [lib.utils.deterministic.fill_uninitialized_memory, lib.empty(2)[:0]]
        deterministic(lib, fill=True, warn_only=True)  # (warn_only still fills)
        on = [lib.utils.deterministic.fill_uninitialized_memory, lib.empty(2),
              lib.is_deterministic_algorithms_warn_only_enabled()]
        lib.use_deterministic_algorithms(False)
        return off + on + [lib.empty(0, 2)]
    same(f)


def test_off_by_default_gives_zeros():
    torchish.use_deterministic_algorithms(False)
    assert torchish.empty(3).tolist() == [0.0, 0.0, 0.0]
    assert torchish.utils.deterministic.fill_uninitialized_memory is True
    torchish.utils.deterministic.fill_uninitialized_memory = False
    torchish.use_deterministic_algorithms(True)
    assert torchish.empty(2, dtype=torchish.int64).tolist() == [0, 0]


@needs_torch
@pytest.mark.parametrize("value", [1, 0, None, "yes", 1.0])
def test_fill_flag_takes_only_bool(value):
    def f(lib):
        import importlib
        importlib.import_module(lib.__name__ + ".utils.deterministic")
        lib.utils.deterministic.fill_uninitialized_memory = value
    err = check_raises(f)
    torchish_err = pytest.raises(RuntimeError, f, torchish)
    assert str(torchish_err.value) == str(err)


FACTORIES = {
    "empty": lambda lib, o: lib.empty(3, out=o).shape,  # (torch's values: whatever the memory held)
    "zeros": lambda lib, o: lib.zeros(3, out=o),
    "ones": lambda lib, o: lib.ones(3, out=o),
    "full": lambda lib, o: lib.full((3,), 2.0, out=o),
    "arange": lambda lib, o: lib.arange(3.0, out=o),
    "linspace": lambda lib, o: lib.linspace(0, 1, 3, out=o),
    "logspace": lambda lib, o: lib.logspace(0, 1, 3, out=o),
    "eye": lambda lib, o: lib.eye(3, out=o),
    "rand": lambda lib, o: lib.rand(3, out=o).shape,
    "randn": lambda lib, o: lib.randn(3, out=o).shape,
    "range": lambda lib, o: lib.range(0, 2, out=o),
    "range_int": lambda lib, o: lib.range(0, 3, out=o.long()),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("size", [(2,), (0,), (4,), (1, 3), (3, 1)])
def test_factory_out_resize_warning(name, size):
    """Range factories (arange, linspace, logspace, range) compare element counts: an ``out`` of 3 elements keeps
    its shape; the others resize it. Only arange warns, in words of its own."""
    def f(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = FACTORIES[name](lib, lib.zeros(size))
        # (torch's C++ warnings end with where they were raised: "(Triggered internally at ...)")
        return out, [str(x.message).split(" (Triggered internally")[0] for x in w if "resized" in str(x.message)]
    same(f)


@needs_torch
def test_range_factory_out_keeps_strides():
    def f(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = lib.arange(4.0, out=lib.zeros(2, 2).t())
            b = lib.linspace(0, 1, 4, out=lib.zeros(2, 3)[:, :2])
        return a, a.stride(), b, b.stride()
    same(f)


NORMAL_OUT = {
    "float_float": lambda lib, o: lib.normal(0.0, 1.0, (3,), out=o),
    "tensor_mean": lambda lib, o: lib.normal(lib.arange(3.0), 2.0, out=o),
    "tensor_std": lambda lib, o: lib.normal(0.5, lib.ones(3), out=o),
    "tensors": lambda lib, o: lib.normal(lib.arange(3.0), lib.ones(3), out=o),
}


@needs_torch
@pytest.mark.parametrize("form", sorted(NORMAL_OUT))
@pytest.mark.parametrize("size", [(2,), (0,), (3,), (2, 3), (1, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_normal_out(form, size, dtype):
    """``normal(..., out=)`` draws into ``out`` (its dtype; with a Tensor mean and a float std, its shape: the mean
    must broadcast to it); the other forms resize ``out`` (with the deprecation warning where a Tensor is given)."""
    def f(lib):
        lib.manual_seed(0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                out = NORMAL_OUT[form](lib, lib.zeros(size, dtype=getattr(lib, dtype)))
            except Exception as e:  # noqa: BLE001 - compared by type and message
                return type(e).__name__, str(e)
        return out, len([x for x in w if "resized" in str(x.message)])
    same(f)
