"""dtypes, promotion, conversions and devices against PyTorch."""
import math

import numpy as np
import pytest

from oracle import run_both, torch, torchish

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")

ALL = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16", "bfloat16",
       "float32", "float64", "complex64", "complex128"]
# dtypes PyTorch has arithmetic kernels for on CPU (uint16/32/64 only promote)
ARITH = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64",
         "complex128"]
SCALARS = [True, 2, 2.5, 1.5j]


def no_complex32(ref):
    """PyTorch promotes float16 with complex to complex32 (ComplexHalf), a dtype JAX does not have; torchish gives
    complex64 there (documented under "Not supported" in the README). Every other entry must match exactly."""
    if isinstance(ref, dict):
        return {k: no_complex32(v) for k, v in ref.items()}
    if isinstance(ref, list):
        return [no_complex32(v) for v in ref]
    return "torch.complex64" if ref == "torch.complex32" else ref


def outcome(f):
    """str(result) or the builtin exception type name."""
    try:
        return str(f())
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        t = type(e)
        while t.__module__ != "builtins":
            t = t.__mro__[1]
        return t.__name__


def test_promote_types_all_pairs():
    ref, got = run_both(lambda T: [outcome(lambda: T.promote_types(getattr(T, a), getattr(T, b)))
                                   for a in ALL for b in ALL])
    assert got == ref


def test_promote_types_error_message():
    def msg(T):
        try:
            T.promote_types(T.uint16, T.int8)
        except RuntimeError as e:
            return str(e)
    ref, got = run_both(msg)
    assert got == ref


def test_can_cast_all_pairs():
    ref, got = run_both(lambda T: [T.can_cast(getattr(T, a), getattr(T, b)) for a in ALL for b in ALL])
    assert got == ref


def _operands(T, name):
    return {"dim": T.ones(1, dtype=getattr(T, name)), "zero": T.ones((), dtype=getattr(T, name))}


def test_result_type_all_pairs():
    def table(T):
        out = []
        for a in ALL:
            for b in ALL:
                oa, ob = _operands(T, a), _operands(T, b)
                out += [outcome(lambda: T.result_type(oa[x], ob[y])) for x in ("dim", "zero") for y in ("dim", "zero")]
            out += [outcome(lambda: T.result_type(_operands(T, a)["dim"], s)) for s in SCALARS]
            out += [outcome(lambda: T.result_type(s, _operands(T, a)["zero"])) for s in SCALARS]
        out += [outcome(lambda: T.result_type(s, u)) for s in SCALARS for u in SCALARS]
        out.append(outcome(lambda: T.result_type(T.ones(1), [1])))
        return out
    ref, got = run_both(table)
    assert got == no_complex32(ref)


@pytest.mark.parametrize("a", ARITH)
def test_arithmetic_result_dtypes(a):
    """tensor-tensor (dimensioned and zero-dim on either side) and tensor-Python-scalar: the dtype of ``+``."""
    def table(T):
        out = {}
        for b in ARITH:
            oa, ob = _operands(T, a), _operands(T, b)
            for x in ("dim", "zero"):
                for y in ("dim", "zero"):
                    out[(b, x, y)] = outcome(lambda: (oa[x] + ob[y]).dtype)
        for s in SCALARS:
            out[(s, "dim")] = outcome(lambda: (_operands(T, a)["dim"] * s).dtype)
            out[(s, "zero")] = outcome(lambda: (s * _operands(T, a)["zero"]).dtype)
        return out
    ref, got = run_both(table)
    assert got == no_complex32(ref)


def test_true_division_and_comparison_dtypes():
    ref, got = run_both(lambda T: [str((T.ones(2, dtype=getattr(T, a)) / 2).dtype) for a in ARITH[:6]] +
                        [outcome(lambda: (T.ones(2, dtype=getattr(T, a)) < 2).dtype) for a in ARITH])
    assert got == ref


def test_default_dtype_float64():
    def probe(T):
        T.set_default_dtype(T.float64)
        try:
            return [str(x) for x in (T.get_default_dtype(), T.tensor([1.0]).dtype, T.tensor([1j]).dtype,
                                     T.ones(2).dtype, T.arange(3.0).dtype, T.linspace(0, 1, 3).dtype,
                                     (T.ones(2, dtype=T.int32) + 1.5).dtype, (T.ones(2, dtype=T.int32) + 1.5j).dtype,
                                     (T.ones(2, dtype=T.float32) + 1.5j).dtype, (T.ones(2, dtype=T.float32) * 2.5).dtype,
                                     T.full((2,), 1.0).dtype, T.rand(2).dtype, T.Tensor(2).dtype, T.tensor(2.5).dtype,
                                     T.result_type(1.0, 2), T.finfo().dtype)]
        finally:
            T.set_default_dtype(T.float32)
    ref, got = run_both(probe)
    assert got == ref
    ref, got = run_both(lambda T: [outcome(lambda: T.set_default_dtype(T.int32)), str(T.get_default_dtype())])
    assert got == ref


FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]


def test_finfo_iinfo():
    def info(T):
        out = []
        for n in FLOATS:
            f = T.finfo(getattr(T, n))
            out.append((f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype, repr(f)))
        for n in INTS:
            i = T.iinfo(getattr(T, n))
            out.append((i.bits, i.max, i.min, i.dtype, repr(i)))
        out.append(repr(T.finfo()))
        out += [outcome(lambda: T.finfo(T.int32)), outcome(lambda: T.iinfo(T.float32)),
                outcome(lambda: T.iinfo(T.bool))]
        return out
    ref, got = run_both(info)
    assert got == ref


def test_dtype_objects():
    def attrs(T):
        out = []
        for n in ALL:
            d = getattr(T, n)
            out.append((str(d), repr(d), d.is_floating_point, d.is_complex, d.is_signed, d.itemsize, str(d.to_real()),
                        outcome(d.to_complex) if n != "float16" else None))
        for alias, n in (("float", "float32"), ("double", "float64"), ("half", "float16"), ("long", "int64"),
                         ("int", "int32"), ("short", "int16"), ("cfloat", "complex64"), ("cdouble", "complex128")):
            out.append(getattr(T, alias) is getattr(T, n))
        out.append(T.float32 == T.float64)
        out.append(len({T.float32, T.float, T.float64}))
        return out
    ref, got = run_both(attrs)
    assert got == ref
    import pickle
    assert pickle.loads(pickle.dumps(torchish.float64)) is torchish.float64


def test_tensor_conversions():
    def conv(T):
        x = T.tensor([1.5, -2.7, 0.0])
        i = T.tensor([1, 0, 3])
        out = [x.to(T.int32), x.to("cpu"), x.to("cpu", T.float64), x.to(device="cpu", dtype=T.int8), x.to(i),
               x.to(T.device("cpu"), T.float16), x.to(dtype=T.bool), x.float(), x.double(), x.half(), x.bfloat16(),
               x.long(), x.int(), x.short(), x.char(), i.byte(), x.bool(), i.float(), x.cfloat(), x.cdouble(),
               x.type(T.float64), x.type("torch.IntTensor"), x.type_as(i), x.cpu()]
        res = [(str(t.dtype), t.tolist()) for t in out]
        res += [x.to(T.float32) is x, x.to("cpu") is x, x.to(T.float32, copy=True) is x, x.float() is x]
        res += [t.type() for t in (x, i, x.double(), x.half(), x.bool(), i.int(), i.short(), i.char(), i.byte(),
                                  x.bfloat16(), x.cfloat())]
        res.append(outcome(lambda: x.to("cpu", T.float64, foo=1)))
        return res
    ref, got = run_both(conv)
    assert got == ref


def test_conversion_grads():
    def grads(T):
        x = T.tensor([1.5, -2.0], requires_grad=True)
        y = (x.double() * 2).float().to(T.float64).sum()
        y.backward()
        return [str(x.grad.dtype), x.grad.tolist(), type(x.double().grad_fn).__name__]
    ref, got = run_both(grads)
    assert got == ref


DEVICES = ["cuda:1", "cpu", "cuda", "cpu:0", "cuda:-1", "gpu", "cuda:x", "cuda:1:2", "CUDA", " cuda", "cuda:01",
           "mps", "meta", "xla:0", "cpu:1", "cuda:0"]


def test_device_parsing():
    def parse(T):
        out = []
        for s in DEVICES:
            out.append(outcome(lambda: repr(T.device(s))))
            out.append(outcome(lambda: (str(T.device(s)), T.device(s).type, T.device(s).index)))
        out += [outcome(lambda: repr(T.device("cuda", 1))), outcome(lambda: T.device("cuda:1", 1)),
                outcome(lambda: T.device("cuda", -1)), outcome(lambda: T.device(1.5)),
                repr(T.device("cpu", 0)), repr(T.device(type="cuda", index=2)), repr(T.device(T.device("cuda:3")))]
        return out
    ref, got = run_both(parse)
    assert got == ref


def test_device_equality_and_messages():
    def eq(T):
        d = T.device
        return [d("cuda:1") == d("cuda", 1), d("cuda") == d("cuda:0"), d("cpu") == d("cpu"), d("cuda:1") == "cuda:1",
                hash(d("cpu")) == hash(d("cpu")), len({d("cpu"), d("cpu"), d("cuda:0")}),
                outcome(lambda: T.device("gpu")), outcome(lambda: T.device("cuda", -1))]
    ref, got = run_both(eq)
    assert got == ref

    def message(T):
        try:
            T.device("gpu")
        except RuntimeError as e:
            return str(e)
    ref, got = run_both(message)
    assert got == ref


needs_cpu_only = pytest.mark.skipif(bool(torchish.cuda.is_available()), reason="an accelerator is present")


@needs_cpu_only
def test_cuda_on_a_cpu_only_build():
    def cuda(T):
        x = T.ones(2)
        out = [T.cuda.is_available(), T.cuda.device_count(), str(x.device), repr(x.device), x.is_cuda,
               x.cpu().tolist(), str(x.cpu().device), T.cuda.memory_allocated(), T.cuda.max_memory_allocated(),
               T.cuda.manual_seed(0), T.cuda.manual_seed_all(0)]
        for f in (x.cuda, lambda: x.to("cuda"), lambda: T.ones(2, device="cuda"), T.cuda.current_device,
                  T.cuda.synchronize, lambda: x.to(0), lambda: x.cuda(1)):
            out.append(outcome(f))
        return out
    ref, got = run_both(cuda)
    assert got == ref
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torchish.ones(2).cuda()


def test_device_context_and_default():
    with torchish.device("cpu"):
        assert torchish.ones(2).device == torchish.device("cpu")
    assert torchish.get_default_device() == torchish.device("cpu")
    assert str(torchish.zeros(1, device=torchish.device("cpu")).device) == "cpu"


def test_finfo_values_usable():
    """finfo numbers behave like PyTorch's in arithmetic on tensors of that dtype."""
    ref, got = run_both(lambda T: [(T.tensor(1.0, dtype=getattr(T, n)) + T.finfo(getattr(T, n)).eps).item()
                                   for n in ("float16", "bfloat16", "float32", "float64")])
    assert got == ref
    assert math.isclose(torchish.finfo(torchish.float32).resolution, 1e-6)
    assert np.float32(torchish.finfo(torchish.float32).max) == np.finfo(np.float32).max


def test_finfo_iinfo_compare_by_dtype_and_take_dtypes_only():
    """PyTorch's finfo/iinfo objects compare equal by dtype (a complex dtype's finfo is its real part's), cannot be
    hashed, and take a torch.dtype only (torchish compared by identity and took names, numpy types and None)."""
    import numpy as np

    def info(T):
        f32 = T.finfo(T.float32)
        return [f32 == T.finfo(T.float32), f32 == T.finfo(), f32 == T.finfo(T.complex64), f32 != T.finfo(T.float64),
                f32 == T.finfo(T.float64), T.iinfo(T.int8) == T.iinfo(T.int8), T.iinfo(T.int8) != T.iinfo(T.uint8),
                f32 == T.iinfo(T.int32), f32 == 3, outcome(lambda: hash(f32)), outcome(lambda: hash(T.iinfo(T.int8))),
                outcome(lambda: T.finfo("float32")), outcome(lambda: T.finfo(None)),
                outcome(lambda: T.finfo(np.float32)), outcome(lambda: T.iinfo("int32")),
                outcome(lambda: T.iinfo(None)), T.finfo(type=T.float16).bits, T.iinfo(type=T.int16).bits]
    ref, got = run_both(info)
    assert got == ref


def test_finfo_iinfo_fields_are_read_only():
    """PyTorch's finfo/iinfo fields are C attributes: assigning or deleting one is an AttributeError (with its
    wording), as is setting a new attribute, and the objects cannot be copied or pickled (torchish's were plain
    Python objects: ``finfo(float32).eps = 1`` changed that object)."""
    import copy
    import pickle

    def info(T):
        f32, i8 = T.finfo(T.float32), T.iinfo(T.int8)
        out = []
        for act in (lambda: setattr(f32, "eps", 1.0), lambda: setattr(f32, "foo", 1), lambda: delattr(f32, "tiny"),
                    lambda: setattr(i8, "max", 1), lambda: setattr(i8, "dtype", "x")):
            try:
                act()
                out.append("ok")
            except AttributeError as e:
                out.append(str(e))
        out += [outcome(lambda: copy.copy(f32)), outcome(lambda: copy.deepcopy(i8)), outcome(lambda: pickle.dumps(f32)),
                f32.eps, i8.max]
        return out
    ref, got = run_both(info)
    assert got == ref
