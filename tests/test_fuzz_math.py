"""Differential fuzz of MATH ops: elementwise arithmetic with type promotion, in-place and ``out=`` variants, unary
maths, reductions, scans, the matmul family and ``torch.linalg``, run step by step with PyTorch (the oracle) and
torchish on the same inputs. (Shape ops, indexing, gather/scatter, joins, casts and sorting are fuzzed by
tests/test_fuzz_ops.py.)

Each program starts from a few random tensors (every dtype from bool to complex64; 0-d, 0-size and broadcastable
shapes; special values inf, -inf, nan, -0.0 and integers near overflow) and applies a handful of random ops whose
arguments are drawn from the torch operand's metadata, so both libraries run exactly the same call. After every
step the results are compared (dtype name, shape, values; floats within tests/oracle.py's tolerances) and, when torch
raises, torchish must raise the same builtin exception family. On a third of the steps the float32/float64
operands require grad, and the input gradients of a deterministic cotangent are compared too.

``N_PROGRAMS`` seeded programs run under pytest; a longer run and a mismatch summary:

    python tests/test_fuzz_math.py 3000            # programs (default N_PROGRAMS_LONG), then a summary by op
    python tests/test_fuzz_math.py 300 --compile   # every torchish op traced by torchish.compile
    python tests/test_fuzz_math.py 1 --seed 17 -v  # replay one program, printing every step

Known gaps are skipped and counted in ``KNOWN`` (printed by the command line): torchish has no complex32, and
torch-side undefined behaviour (float -> int casts of out-of-range values) is not compared.

The regression tests below the fuzzer each pin one root cause the fuzzer found.

Programs from seed ``fuzz_harness.WIDE_FROM`` (100000) on draw more, from a second random stream (so older seeds
replay unchanged): complex128 operands, operands in other memory layouts (transposed, strided, with a storage offset,
expanded, the conjugate bit), and in-place targets and ``out=`` tensors in those layouts (an expanded target: the
error PyTorch raises for a write through overlapping memory is compared). From seed ``fuzz_harness.WIDE2_FROM``
(120000) on, a quarter of the unary and binary draws take ops no older program drew (``UNARY2``, ``BINARY2``: special
functions, frexp, mvlgamma, igamma, zeta, the orthogonal polynomials, clamp_min/clamp_max).
"""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import fuzz_harness as harness
from fuzz_harness import agree, error_family
from oracle import assert_same, needs_torch, to_numpy, torch, torchish

warnings.filterwarnings("ignore")

N_PROGRAMS = 30           # programs per pytest run (deterministic seeds 0..N-1)
N_PROGRAMS_LONG = 2000    # default for a command-line run
STEPS = 5                 # ops per program
COMPILED = False          # every torchish op call traced by torchish.compile (--compile; test_fuzz_math_compiled)
COMPILED_SEEDS = (0, 1, 40045)  # programs run that way (an XLA compile per op: few); 40045 found a bug
GRAD_P = 0.35             # share of steps whose float32/float64 operands require grad

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64"]
INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
EXACT = INT_DTYPES + ["bool"]


class Skip(Exception):
    """The drawn op does not apply to the drawn operands (or would hit undefined behaviour): draw again."""


# ----------------------------------------------------------------------------------------------------------------
# inputs


def rand_shape(rng, max_dims=3):
    nd = rng.choice([0, 1, 1, 2, 2, 3][: max_dims * 2])
    return tuple(rng.choice([0, 1, 1, 2, 2, 3]) if rng.random() < 0.92 else 1 for _ in range(nd))


def _specials(dt):
    big = {"float16": 2.0 ** 14, "bfloat16": 2.0 ** 100, "float32": 2.0 ** 100, "float64": 2.0 ** 1000}[dt]
    return [np.inf, -np.inf, np.nan, -0.0, 0.0, big, -big, 1.0]


def rand_array(rng, shape, dt, special=None):
    """numpy values for ``dt``: small quarters (exact in every float dtype) or small ints, with special values
    (inf/-inf/nan/-0.0/huge; integers at their limits) now and then."""
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    special = rng.random() < 0.3 if special is None else special
    if dt == "bool":
        return nrng.random(shape) < 0.5
    if dt in INT_DTYPES:
        info = np.iinfo(dt)
        lo = 0 if dt == "uint8" else -6
        a = nrng.integers(lo, 7, size=shape).astype(dt)
        if special and a.size:
            lim = [info.max, info.min, info.max - 1, info.min + 1, 0]
            for _ in range(rng.randrange(1, 3)):
                a.flat[nrng.integers(a.size)] = rng.choice(lim)
        return a
    base = {"bfloat16": "float32", "complex64": "float32", "complex128": "float64"}.get(dt, dt)
    vals = (np.round(nrng.uniform(-4, 4, size=shape) * 4) / 4).astype(base)
    if special and vals.size:
        for _ in range(rng.randrange(1, 3)):
            vals.flat[nrng.integers(vals.size)] = rng.choice(_specials(base))
    if dt.startswith("complex"):
        im = (np.round(nrng.uniform(-4, 4, size=shape) * 4) / 4).astype(base)
        return (vals + 1j * im).astype(dt)
    return vals


def make_tensor(T, a, dt):
    t = T.tensor(a)
    return t.to(T.bfloat16) if dt == "bfloat16" else t


def dtname(t):
    return str(t.dtype).split(".")[-1]


def py_scalar(rng, kinds=("int", "float", "bool", "complex")):
    k = rng.choice(kinds)
    if k == "int":
        return rng.choice([-3, -1, 0, 1, 2, 3, 4, 7])
    if k == "float":
        return rng.choice([-1.5, 0.5, 2.0, 2.5, -0.25, 0.0, -0.0, float("inf"), float("nan")])
    if k == "bool":
        return rng.random() < 0.5
    return complex(rng.choice([1, -0.5, 0]), rng.choice([0.5, 2, 0]))


class Pair:
    """One value in both libraries."""

    def __init__(self, ref, got):
        self.ref, self.got = ref, got

    @property
    def shape(self):
        return tuple(self.ref.shape)

    @property
    def dt(self):
        return dtname(self.ref)

    @property
    def nd(self):
        return self.ref.dim()


def both(fn):
    return Pair(fn(torch), fn(torchish))


def fresh(rng, shape, dt, special=None, shape_kept=True):
    """A new tensor of ``shape`` and ``dt``; from seed ``harness.WIDE_FROM`` on, a complex64 one is complex128 now
    and then, and the tensor comes in a drawn memory layout (``shape_kept=False``: also expanded)."""
    dt = _wide_dtype(dt)
    a = rand_array(rng, shape, dt, special)
    how = harness.draw_layout(WRNG, shape, dt, shape_kept=shape_kept)
    return both(lambda T: harness.layout(T, make_tensor(T, a, dt), how))


WRNG = None  # a program's second stream for its widened draws (harness.wide_rng: None before seed WIDE_FROM)
WIDE2 = False  # the program draws the second widening too (seed >= harness.WIDE2_FROM)


def _wide_dtype(dt):
    return "complex128" if dt == "complex64" and WRNG is not None and WRNG.random() < 0.4 else dt


def _target_layout(shape):
    """The layout an in-place op's target or an ``out=`` tensor comes in (widened draws; None: contiguous)."""
    return harness.draw_layout(WRNG, shape, "", p=0.4, shape_kept=False)


def pick(rng, pool, pred=lambda p: True):
    cands = [p for p in pool if pred(p)]
    if not cands:
        raise Skip
    return rng.choice(cands)


def rdim(rng, nd, bad=0.03):
    n = max(nd, 1)
    if rng.random() < bad:
        return rng.choice([n, -n - 1])
    d = rng.randrange(n)
    return d - n if rng.random() < 0.5 else d


def rdims(rng, nd):
    """A ``dim`` argument for a reduction: None, an int, a tuple (maybe empty) of distinct dims."""
    k = rng.random()
    if k < 0.25:
        return None
    if k < 0.65 or nd == 0:
        return rdim(rng, nd)
    if k < 0.72:
        return ()
    picks = rng.sample(range(nd), rng.randrange(1, nd + 1))
    return tuple(d - nd if rng.random() < 0.3 else d for d in picks)


def _broadcastable(a, b):
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def rand_operand(rng, pool, like, allow_scalar=True):
    """A second operand: a pool tensor that broadcasts with ``like``, a fresh tensor of a drawn dtype (maybe 0-d
    or a broadcastable suffix), or a Python scalar."""
    k = rng.random()
    if allow_scalar and k < 0.3:
        return py_scalar(rng)
    if k < 0.5:
        cands = [p for p in pool if _broadcastable(p.shape, like.shape)]
        if cands:
            return rng.choice(cands)
    shape = tuple(s if rng.random() < 0.75 else 1 for s in like.shape)
    if rng.random() < 0.4:
        shape = shape[rng.randrange(len(shape) + 1):]
    if rng.random() < 0.02:
        shape = (5,) + shape
    dt = like.dt if rng.random() < 0.4 else rng.choice(DTYPES)
    return fresh(rng, shape, dt)


def is_complex(v):
    return isinstance(v, complex) or (isinstance(v, Pair) and v.dt.startswith("complex"))


def is_exact(v):
    return isinstance(v, (bool, int)) or (isinstance(v, Pair) and v.dt in EXACT)


def has_zero(v):
    if isinstance(v, Pair):
        return bool((v.ref == 0).any())
    return v == 0


OPS = {}


def op(weight=1):
    def deco(f):
        OPS[f.__name__[4:]] = (f, weight)
        return f
    return deco


# ----------------------------------------------------------------------------------------------------------------
# elementwise binary and ternary ops with type promotion

BINARY = ["add", "sub", "mul", "div", "div_trunc", "div_floor", "true_divide", "floor_divide", "remainder", "fmod",
          "pow", "float_power", "atan2", "hypot", "copysign", "nextafter", "ldexp", "logaddexp", "logaddexp2", "xlogy",
          "maximum", "minimum", "fmax", "fmin", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
          "bitwise_right_shift", "gcd", "lcm", "heaviside", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
          "logical_or", "logical_xor", "isclose"]
OPERATORS = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "div": "__truediv__", "floor_divide": "__floordiv__",
             "remainder": "__mod__", "pow": "__pow__", "bitwise_and": "__and__", "bitwise_or": "__or__",
             "bitwise_xor": "__xor__", "bitwise_left_shift": "__lshift__", "bitwise_right_shift": "__rshift__",
             "eq": "__eq__", "lt": "__lt__", "ge": "__ge__"}
REVERSED = {"add": "__radd__", "sub": "__rsub__", "mul": "__rmul__", "div": "__rtruediv__",
            "floor_divide": "__rfloordiv__", "remainder": "__rmod__", "pow": "__rpow__", "bitwise_and": "__rand__",
            "bitwise_left_shift": "__rlshift__"}
INT_DIV = {"div_trunc", "div_floor", "floor_divide", "remainder", "fmod"}
ORDERED = {"lt", "le", "gt", "ge", "maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "copysign", "nextafter",
           "logaddexp", "logaddexp2", "xlogy", "heaviside", "remainder", "fmod", "floor_divide", "div_trunc",
           "div_floor", "ldexp", "float_power"}
BITS = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm"}


# drawn from seed ``harness.WIDE2_FROM`` on (a quarter of the binary draws): ops no older program drew
BINARY2 = ["igamma", "igammac", "special.zeta", "clamp_min", "clamp_max", "special.chebyshev_polynomial_t",
           "special.hermite_polynomial_he", "special.xlogy", "special.polygamma"]
ORDERED |= set(BINARY2)


def _call_binary(T, kind, a, b, **kw):
    if kind in ("div_trunc", "div_floor"):
        return T.div(a, b, rounding_mode=kind[4:], **kw)
    if kind == "special.polygamma":  # (an int order first: a small Python int, the tensor second)
        return T.special.polygamma(b % 3 if isinstance(b, int) else 1, a, **kw)
    if kind.startswith("special."):
        return getattr(T.special, kind[8:])(a, b, **kw)
    return getattr(T, kind)(a, b, **kw)


def _binary_operands(rng, pool, kind):
    """Draw (x, y) for ``kind``; mostly valid combinations, invalid ones now and then (their error is compared)."""
    x = pick(rng, pool)
    y = rand_operand(rng, pool, x)
    strict = rng.random() < 0.85
    if strict and kind in ORDERED and (is_complex(x) or is_complex(y)):
        raise Skip
    if strict and kind in BITS and not (is_exact(x) and is_exact(y)):
        raise Skip
    if strict and kind in INT_DIV and is_exact(x) and is_exact(y) and has_zero(y) and rng.random() < 0.7:
        raise Skip  # integer division by zero raises in torch: compared sometimes, not every time
    return x, y


@op(8)
def gen_binary(rng, pool):
    kind = rng.choice(BINARY)
    if WIDE2 and WRNG.random() < 0.25:
        kind = WRNG.choice(BINARY2)
    x, y = _binary_operands(rng, pool, kind)
    form = rng.random()
    if kind in ("add", "sub") and rng.random() < 0.3:
        alpha = rng.choice([2, -1, 0.5, True, 1j]) if rng.random() < 0.9 else 0
        return kind + "_alpha", lambda T, t, u: getattr(T, kind)(t, u, alpha=alpha), [x, y]
    if kind == "isclose":
        if not isinstance(y, Pair):
            raise Skip
        rt, at, en = rng.choice([1e-5, 0.1, 0]), rng.choice([1e-8, 0.5, 0]), rng.random() < 0.5
        fn = rng.choice(["isclose", "allclose"])
        return fn, lambda T, t, u: getattr(T, fn)(t, u, rtol=rt, atol=at, equal_nan=en), [x, y]
    if kind in OPERATORS and form < 0.3:
        return kind + "_op", lambda T, t, u: getattr(t, OPERATORS[kind])(u), [x, y]
    if kind in REVERSED and form < 0.45 and not isinstance(y, Pair):
        return kind + "_rop", lambda T, t, u: getattr(t, REVERSED[kind])(u), [x, y]
    if not isinstance(y, Pair) and kind in ("atan2", "hypot", "nextafter", "ldexp", "logaddexp", "logaddexp2",
                                            "gcd", "lcm", "heaviside", "maximum", "minimum", "fmax", "fmin",
                                            "logical_and", "logical_or", "logical_xor", "copysign"):
        if rng.random() < 0.85:
            y = fresh(rng, (), rng.choice(DTYPES))  # tensor-only ops: a 0-d tensor instead of the number
    return kind, lambda T, t, u: _call_binary(T, kind, t, u), [x, y]


@op(2)
def gen_equal(rng, pool):
    x = pick(rng, pool)
    y = pick(rng, pool) if rng.random() < 0.5 else Pair(x.ref.clone(), x.got.clone())
    return "equal", lambda T, t, u: T.equal(t, u), [x, y]


@op(4)
def gen_ternary(rng, pool):
    x = pick(rng, pool)
    kind = rng.choice(["lerp", "addcmul", "addcdiv", "clamp", "clamp_t", "clip", "where", "where_scalar"])
    if kind == "where_scalar":
        c = fresh(rng, tuple(s if rng.random() < 0.7 else 1 for s in x.shape), "bool")
        s = py_scalar(rng)
        k = rng.randrange(3)
        if k == 0:
            return kind, lambda T, cc, t: T.where(cc, s, t), [c, x]
        if k == 1:
            return kind, lambda T, cc, t: T.where(cc, t, s), [c, x]
        s2 = py_scalar(rng)
        return "where_scalars", lambda T, cc: T.where(cc, s, s2), [c]
    if kind == "where":
        c = fresh(rng, tuple(s if rng.random() < 0.7 else 1 for s in x.shape), "bool")
        y = rand_operand(rng, pool, x, allow_scalar=False)
        return kind, lambda T, cc, t, u: T.where(cc, t, u), [c, x, y]
    if kind in ("clamp", "clip"):
        if is_complex(x) and rng.random() < 0.85:
            raise Skip
        lo = rng.choice([None, -1, 0, 0.5, -2.5, 1, float("nan")])
        hi = rng.choice([None, 2, 3.5, 0, -3]) if lo is not None or rng.random() < 0.8 else None
        return kind, lambda T, t: getattr(T, kind)(t, lo, hi), [x]
    if kind == "clamp_t":
        lo = rand_operand(rng, pool, x, allow_scalar=False)
        hi = rand_operand(rng, pool, x, allow_scalar=False) if rng.random() < 0.6 else None
        if (is_complex(x) or is_complex(lo) or is_complex(hi)) and rng.random() < 0.85:
            raise Skip
        if hi is None:
            return "clamp_t_max", lambda T, t, b: T.clamp(t, max=b), [x, lo]
        return kind, lambda T, t, a, b: T.clamp(t, a, b), [x, lo, hi]
    y = rand_operand(rng, pool, x, allow_scalar=False)
    z = rand_operand(rng, pool, x, allow_scalar=kind == "lerp")
    if kind == "lerp":
        if rng.random() < 0.85:
            if x.dt not in FLOAT_DTYPES + ["complex64"]:
                raise Skip
            y = Pair(y.ref.to(x.ref.dtype), y.got.to(x.got.dtype))
            if isinstance(z, Pair):
                z = Pair(z.ref.to(x.ref.dtype), z.got.to(x.got.dtype))
        return kind, lambda T, t, u, w: T.lerp(t, u, w), [x, y, z]
    value = rng.choice([1, 2, -0.5, 0.5, True]) if rng.random() < 0.9 else 1j
    if kind == "addcdiv" and rng.random() < 0.85 and (is_exact(y) and is_exact(z)):
        raise Skip  # integer addcdiv is an error in torch: compared sometimes
    return kind, lambda T, t, u, w: getattr(T, kind)(t, u, w, value=value), [x, y, z]


INPLACE = ["add_", "sub_", "mul_", "div_", "floor_divide_", "remainder_", "fmod_", "pow_", "atan2_", "hypot_",
           "copysign_", "maximum_out", "bitwise_and_", "lerp_", "clamp_", "addcmul_", "logaddexp_out", "xlogy_",
           "float_power_", "lt_", "where_out", "mul_out", "div_out", "add_out", "sum_out", "exp_", "neg_", "sqrt_",
           "abs_out", "floor_", "sin_out", "round_", "sign_", "nan_to_num_"]


@op(5)
def gen_inplace_out(rng, pool):
    """In-place variants and ``out=``: torch refuses a result type the target cannot hold, and resizes ``out``."""
    x = pick(rng, pool)
    kind = rng.choice(INPLACE)
    base = kind.rstrip("_").replace("_out", "")
    y = rand_operand(rng, pool, x)
    if base in BITS and (not (is_exact(x) and is_exact(y))) and rng.random() < 0.85:
        raise Skip
    if base in ORDERED | {"maximum", "lerp", "clamp", "xlogy"} and (is_complex(x) or is_complex(y)) \
            and rng.random() < 0.85:
        raise Skip
    if base in INT_DIV | {"div"} and is_exact(y) and has_zero(y) and is_exact(x) and rng.random() < 0.85:
        raise Skip
    if kind.endswith("_out"):
        shape = x.shape if rng.random() < 0.6 else rng.choice([(), (0,), (2,), x.shape + (1,)])
        odt = x.dt if rng.random() < 0.4 else rng.choice(DTYPES)
        o = fresh(rng, shape, odt, special=False)
        unary = base in ("abs", "sin", "sum")
        ohow = _target_layout(shape)

        def fn(T, t, u, oo):
            out = harness.layout(T, oo.clone(), ohow)
            if base == "where":
                r = T.where(t != 0, t, u if not isinstance(u, complex) else 0, out=out)
            elif unary:
                r = getattr(T, base)(t, out=out)
            else:
                r = getattr(T, base)(t, u, out=out)
            return out, r is out
        return kind, fn, [x, y, o]
    how = _target_layout(x.shape)
    if base in ("exp", "neg", "sqrt", "floor", "round", "sign", "nan_to_num"):
        return kind, lambda T, t, u: _inplace(T, t, how, kind), [x, y]
    if base in ("lerp", "addcmul"):
        z = rand_operand(rng, pool, x, allow_scalar=base == "lerp")
        return kind, lambda T, t, u, w: _inplace(T, t, how, kind, u, w), [x, y, z]
    if base == "clamp":
        return kind, lambda T, t, u: _inplace(T, t, how, kind, None if isinstance(u, complex) else u), [x, y]
    return kind, lambda T, t, u: _inplace(T, t, how, kind, u), [x, y]


def _inplace(T, t, how, kind, *args):
    """``kind`` written into a copy of ``t`` in the layout ``how`` (an expanded one: PyTorch refuses the write)."""
    out = harness.layout(T, t.clone(), how)
    r = getattr(out, kind)(*args)
    return out, r is out


# ----------------------------------------------------------------------------------------------------------------
# unary math

UNARY = ["abs", "neg", "sign", "sgn", "ceil", "floor", "round", "round_dec", "trunc", "frac", "exp", "exp2", "expm1",
         "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
         "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "nan_to_num",
         "reciprocal", "square", "angle", "real", "imag", "conj", "isnan", "isinf", "isfinite", "isposinf",
         "isneginf", "signbit", "bitwise_not", "logical_not", "positive", "sinc", "deg2rad", "rad2deg", "absolute",
         "negative", "fix", "i0", "logit", "special.expit", "special.ndtr", "special.log_ndtr", "special.entr",
         "special.erfcx", "special.xlog1py"]


# drawn from seed ``harness.WIDE2_FROM`` on (a quarter of the unary draws): ops no older program drew
UNARY2 = ["special.i0e", "special.i1", "special.i1e", "special.ndtri", "special.bessel_j0", "special.bessel_j1",
          "special.spherical_bessel_j0", "special.modified_bessel_i0", "frexp", "isreal", "mvlgamma", "special.sinc",
          "special.log1p", "special.round", "special.exp2", "special.expm1", "special.psi", "special.gammaln"]


@op(8)
def gen_unary(rng, pool):
    x = pick(rng, pool)
    kind = rng.choice(UNARY)
    if WIDE2 and WRNG.random() < 0.25:
        kind = WRNG.choice(UNARY2)
    if kind == "frexp":
        return kind, lambda T, t: tuple(T.frexp(t)), [x]
    if kind == "mvlgamma":
        p = WRNG.choice([1, 2, 3])
        return kind, lambda T, t: T.mvlgamma(t, p), [x]
    if kind == "round_dec":
        d = rng.choice([0, 1, 2, -1])
        return kind, lambda T, t: T.round(t, decimals=d), [x]
    if kind == "nan_to_num":
        kw = {k: rng.choice([None, 0.0, 5.0, -7.0, 1e30]) for k in ("nan", "posinf", "neginf") if rng.random() < 0.5}
        return kind, lambda T, t: T.nan_to_num(t, **kw), [x]
    if kind == "logit":
        eps = rng.choice([None, 0.1])
        return kind, lambda T, t: T.logit(t, eps), [x]
    if kind == "special.xlog1py":
        y = rand_operand(rng, pool, x)
        return kind, lambda T, t, u: T.special.xlog1py(t, u), [x, y]
    if kind.startswith("special."):
        f = kind[8:]
        return kind, lambda T, t: getattr(T.special, f)(t), [x]
    if kind in ("sign", "signbit", "isposinf", "isneginf", "erfinv", "lgamma", "digamma", "frac", "ceil", "floor",
                "trunc", "fix", "i0", "deg2rad", "rad2deg", "erf", "erfc") and is_complex(x) and rng.random() < 0.8:
        raise Skip
    if kind in ("bitwise_not",) and x.dt not in EXACT and rng.random() < 0.8:
        raise Skip
    if rng.random() < 0.2 and kind not in ("real", "imag", "conj", "positive", "angle", "isposinf", "isneginf",
                                           "signbit", "logical_not"):
        return kind + "_method", lambda T, t: getattr(t, kind)(), [x]
    return kind, lambda T, t: getattr(T, kind)(t), [x]


# ----------------------------------------------------------------------------------------------------------------
# reductions and scans


def _kw_dtype(rng, x):
    if rng.random() < 0.2:
        return {"dtype": rng.choice(["int64", "float32", "float64", "complex64", "int32", "float16", "bool"])}
    return {}


def _dt_kw(T, kw):
    return {k: getattr(T, v) if k == "dtype" else v for k, v in kw.items()}


REDUCE = ["sum", "nansum", "prod", "mean", "nanmean", "amax", "amin", "max_dim", "min_dim", "max", "min", "argmax",
          "argmin", "std", "var", "std_mean", "var_mean", "norm", "logsumexp", "cumsum", "cumprod", "cummax",
          "cummin", "logcumsumexp", "all", "any", "count_nonzero", "median", "median_dim", "nanmedian",
          "nanmedian_dim", "mode", "quantile", "nanquantile", "aminmax", "diff", "trace", "vector_norm"]


@op(10)
def gen_reduce(rng, pool):
    x = pick(rng, pool)
    kind = rng.choice(REDUCE)
    nd = x.nd
    keep = rng.random() < 0.3
    if kind in ("sum", "nansum", "mean", "nanmean", "amax", "amin", "logsumexp", "count_nonzero"):
        dim = rdims(rng, nd)
        kw = _kw_dtype(rng, x) if kind in ("sum", "nansum", "mean", "nanmean") else {}
        if kind in ("amax", "amin") and dim is None:
            dim = ()
        if kind == "count_nonzero":
            return kind, lambda T, t: T.count_nonzero(t, dim), [x]
        if kind == "logsumexp" and dim is None:
            dim = rdim(rng, nd)
        if dim is None:
            return kind + "_all", lambda T, t: getattr(T, kind)(t, **_dt_kw(T, kw)), [x]
        return kind, lambda T, t: getattr(T, kind)(t, dim, keepdim=keep, **_dt_kw(T, kw)), [x]
    if kind == "prod":
        kw = _kw_dtype(rng, x)
        if rng.random() < 0.3:
            return "prod_all", lambda T, t: T.prod(t, **_dt_kw(T, kw)), [x]
        d = rdim(rng, nd)
        return kind, lambda T, t: T.prod(t, d, keepdim=keep, **_dt_kw(T, kw)), [x]
    if kind in ("max", "min", "median", "nanmedian"):
        return kind, lambda T, t: getattr(T, kind)(t), [x]
    if kind in ("max_dim", "min_dim", "median_dim", "nanmedian_dim", "mode", "cummax", "cummin"):
        f = kind.replace("_dim", "")
        d = rdim(rng, nd)
        if f in ("cummax", "cummin"):
            return kind, lambda T, t: tuple(getattr(T, f)(t, d)), [x]
        return kind, lambda T, t: tuple(getattr(T, f)(t, d, keepdim=keep)), [x]
    if kind in ("argmax", "argmin"):
        d = rdim(rng, nd) if rng.random() < 0.7 else None
        return kind, lambda T, t: getattr(T, kind)(t, d, keepdim=keep), [x]
    if kind in ("std", "var", "std_mean", "var_mean"):
        dim = rdims(rng, nd)
        k = rng.randrange(3)
        if k == 0:
            kw = {"correction": rng.choice([0, 1, 2, 0.5])}
        elif k == 1:
            kw = {"unbiased": rng.random() < 0.5}
        else:
            kw = {}
        out = lambda T, t: getattr(T, kind)(t, dim, keepdim=keep, **kw)  # noqa: E731
        return kind, (lambda T, t: tuple(out(T, t))) if kind.endswith("_mean") else out, [x]
    if kind == "norm":
        p = rng.choice([2, 1, float("inf"), -float("inf"), 0, 3, "fro", 0.5])
        dim = rdims(rng, nd) if p != "fro" else None
        return kind, lambda T, t: T.norm(t, p, dim, keepdim=keep), [x]
    if kind == "vector_norm":
        p = rng.choice([2, 1, float("inf"), -float("inf"), 0, 3, -1, 0.5])
        dim = rdims(rng, nd)
        kw = {"dtype": rng.choice(["float64", "complex64", "float32"])} if rng.random() < 0.15 else {}
        return kind, lambda T, t: T.linalg.vector_norm(t, p, dim, keep, **_dt_kw(T, kw)), [x]
    if kind in ("cumsum", "cumprod", "logcumsumexp"):
        d = rdim(rng, nd)
        kw = _kw_dtype(rng, x) if kind != "logcumsumexp" else {}
        if rng.random() < 0.2 and kind != "logcumsumexp":
            return kind + "_method", lambda T, t: getattr(t, kind)(d, **_dt_kw(T, kw)), [x]
        return kind, lambda T, t: getattr(T, kind)(t, d, **_dt_kw(T, kw)), [x]
    if kind in ("all", "any"):
        dim = rdims(rng, nd)
        if dim is None:
            return kind + "_all", lambda T, t: getattr(T, kind)(t), [x]
        return kind, lambda T, t: getattr(T, kind)(t, dim, keepdim=keep), [x]
    if kind in ("quantile", "nanquantile"):
        q = rng.choice([0.5, 0.0, 1.0, 0.3, [0.25, 0.75], 1.5])
        d = rdim(rng, nd) if rng.random() < 0.7 else None
        interp = rng.choice(["linear", "lower", "higher", "midpoint", "nearest"])

        def qfn(T, t):
            qq = T.tensor(q, dtype=t.dtype) if isinstance(q, list) else q
            return getattr(T, kind)(t, qq, dim=d, keepdim=keep, interpolation=interp)
        return kind, qfn, [x]
    if kind == "aminmax":
        d = rdim(rng, nd) if rng.random() < 0.7 else None
        return kind, lambda T, t: tuple(T.aminmax(t, dim=d, keepdim=keep)), [x]
    if kind == "diff":
        n = rng.choice([1, 1, 2, 0])
        d = rdim(rng, nd)
        pre = rand_operand(rng, pool, x, allow_scalar=False) if rng.random() < 0.2 else None
        if pre is not None:
            return "diff_prepend", lambda T, t, p: T.diff(t, n, d, prepend=p), [x, pre]
        return kind, lambda T, t: T.diff(t, n, d), [x]
    return "trace", lambda T, t: T.trace(t), [x]


# ----------------------------------------------------------------------------------------------------------------
# matmul family and linalg

LA_DTYPES = ["float32", "float64", "float32", "float64", "complex64"]


def la_dtype(rng):
    return rng.choice(LA_DTYPES) if rng.random() < 0.9 else rng.choice(["int64", "float16", "bfloat16", "int32"])


def mat(rng, shape, dt, well=False, special=False):
    """A matrix (batch) of ``dt``; ``well`` adds a multiple of the identity so that it is well conditioned."""
    dt = _wide_dtype(dt)
    a = rand_array(rng, shape, dt, special=special)
    if well and len(shape) >= 2 and shape[-1] == shape[-2] and shape[-1]:
        a = a + (2 * shape[-1] + 2) * np.eye(shape[-1], dtype=a.dtype)
    how = harness.draw_layout(WRNG, shape, dt)
    return both(lambda T: harness.layout(T, make_tensor(T, a, dt), how))


def batch(rng):
    return tuple(rng.choice([1, 2, 0]) for _ in range(rng.choice([0, 0, 0, 1, 1, 2])))


MATMUL = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "addmm", "addmv", "addbmm", "baddbmm",
          "addr", "tensordot", "kron", "cross", "linalg.cross", "multi_dot", "vecdot", "chain_matmul", "matmul_op"]


@op(6)
def gen_matmul(rng, pool):
    kind = rng.choice(MATMUL)
    dt = la_dtype(rng)
    dt2 = dt if rng.random() < 0.85 else la_dtype(rng)
    n, m, k = (rng.choice([0, 1, 2, 3]) for _ in range(3))
    bad = rng.random() < 0.05
    kk = k + 1 if bad else k
    sp = rng.random() < 0.15
    if kind in ("matmul", "matmul_op"):
        sa = rng.choice([(k,), (n, k), batch(rng) + (n, k)])
        sb = rng.choice([(kk,), (kk, m), batch(rng) + (kk, m)])
        a, b = mat(rng, sa, dt, special=sp), mat(rng, sb, dt2)
        if kind == "matmul_op":
            return kind, lambda T, x, y: x @ y, [a, b]
        return kind, lambda T, x, y: T.matmul(x, y), [a, b]
    if kind == "mm":
        return kind, lambda T, x, y: T.mm(x, y), [mat(rng, (n, k), dt, special=sp), mat(rng, (kk, m), dt2)]
    if kind == "bmm":
        bb = rng.choice([0, 1, 2])
        return kind, lambda T, x, y: T.bmm(x, y), [mat(rng, (bb, n, k), dt), mat(rng, (bb, kk, m), dt2)]
    if kind == "mv":
        return kind, lambda T, x, y: T.mv(x, y), [mat(rng, (n, k), dt, special=sp), mat(rng, (kk,), dt2)]
    if kind in ("dot", "vdot", "inner", "outer"):
        sa = (k,) if kind != "inner" else rng.choice([(k,), (n, k), ()])
        sb = (kk,) if kind != "outer" else (m,)
        if kind == "inner":
            sb = rng.choice([(kk,), (m, kk), ()])
        return kind, lambda T, x, y: getattr(T, kind)(x, y), [mat(rng, sa, dt, special=sp), mat(rng, sb, dt2)]
    alpha = rng.choice([1, 2, 0.5, 0, -1])
    beta = rng.choice([1, 0, 0, 0.5, 2])
    if kind in ("addmm", "addmv", "addbmm", "baddbmm", "addr"):
        bb = rng.choice([1, 2, 0])
        shapes = {"addmm": ((n, m), (n, k), (kk, m)), "addmv": ((n,), (n, k), (kk,)),
                  "addbmm": ((n, m), (bb, n, k), (bb, kk, m)), "baddbmm": ((bb, n, m), (bb, n, k), (bb, kk, m)),
                  "addr": ((n, m), (n,), (m,))}[kind]
        s0 = shapes[0]
        if rng.random() < 0.3:
            s0 = s0[-1:] if kind != "addmv" else ()
        c = mat(rng, s0, dt, special=rng.random() < 0.4)
        a, b = mat(rng, shapes[1], dt2), mat(rng, shapes[2], dt)
        return kind, lambda T, z, x, y: getattr(T, kind)(z, x, y, beta=beta, alpha=alpha), [c, a, b]
    if kind == "tensordot":
        a = mat(rng, (n, k, 2), dt)
        dims = rng.choice([1, 2, 0, ([1, 2], [0, 1]), ([1], [0])])
        b = mat(rng, (k, 2, m) if dims != 1 else (2, m), dt2)
        return kind, lambda T, x, y: T.tensordot(x, y, dims=dims), [a, b]
    if kind == "kron":
        return kind, lambda T, x, y: T.kron(x, y), [mat(rng, (n, k), dt), mat(rng, rng.choice([(m,), (2, m)]), dt2)]
    if kind in ("cross", "linalg.cross"):
        d = rng.choice([-1, 0, None]) if kind == "cross" else rng.choice([-1, 0])
        sa = batch(rng) + (3 if not bad else 2,)
        if d == 0:
            sa = (3,) + batch(rng)
        a, b = mat(rng, sa, dt), mat(rng, sa, dt2)
        if kind == "cross":
            return kind, lambda T, x, y: T.cross(x, y, dim=d), [a, b]
        return kind, lambda T, x, y: T.linalg.cross(x, y, dim=d), [a, b]
    if kind in ("multi_dot", "chain_matmul"):
        shapes = [rng.choice([(n, k), (k,)]), (kk, m), (m, rng.choice([1, 2]))]
        if kind == "chain_matmul":
            shapes[0] = (n, k)
            shapes[2] = (m, 2)
        ms = [mat(rng, s, dt) for s in shapes]
        if kind == "chain_matmul":
            return kind, lambda T, *xs: T.chain_matmul(*xs), ms
        return kind, lambda T, *xs: T.linalg.multi_dot(list(xs)), ms
    d = rng.choice([-1, 0])
    return "vecdot", lambda T, x, y: T.linalg.vecdot(x, y, dim=d), [mat(rng, (n, k), dt), mat(rng, (kk,), dt2)]


LINALG = ["det", "slogdet", "inv", "inv_ex", "solve", "solve_left", "lstsq", "pinv", "matrix_rank", "matrix_power",
          "matrix_exp", "cholesky", "cholesky_upper", "qr", "svd", "svdvals", "eigh", "eigvalsh", "lu_factor", "lu",
          "matrix_norm", "norm", "logdet", "torch.det", "torch.inverse", "cholesky_ex", "solve_triangular"]


def _cholesky_ex(T, x):
    L, info = T.linalg.cholesky_ex(x)
    return L.masked_fill((info != 0)[..., None, None], 0), info


def _recon(T, u, s, vh):
    """U diag(S) Vh: what an SVD/eigh determines uniquely (singular vectors' phases are a free choice)."""
    return (u[..., :, : s.shape[-1]] * s.unsqueeze(-2).to(u.dtype)) @ vh[..., : s.shape[-1], :]


@op(6)
def gen_linalg(rng, pool):
    kind = rng.choice(LINALG)
    dt = la_dtype(rng)
    n = rng.choice([0, 1, 2, 3, 3])
    b = batch(rng)
    sq = b + (n, n if rng.random() > 0.04 else n + 1)
    L = torch.linalg
    if kind in ("det", "slogdet", "logdet", "torch.det"):
        a = mat(rng, sq, dt, well=rng.random() < 0.7)
        f = {"det": lambda T, x: T.linalg.det(x), "slogdet": lambda T, x: tuple(T.linalg.slogdet(x)),
             "logdet": lambda T, x: T.logdet(x), "torch.det": lambda T, x: T.det(x)}[kind]
        return kind, f, [a]
    if kind in ("inv", "inv_ex", "torch.inverse"):
        a = mat(rng, sq, dt, well=rng.random() < 0.9)
        if kind == "inv_ex":
            return kind, lambda T, x: tuple(T.linalg.inv_ex(x)), [a]
        return kind, lambda T, x: T.inverse(x) if kind == "torch.inverse" else T.linalg.inv(x), [a]
    if kind in ("solve", "solve_left"):
        a = mat(rng, sq, dt, well=True)
        k = rng.choice([1, 2])
        left = kind == "solve"
        bs = rng.choice([b + (n, k), (n,), b + (n,)]) if left else rng.choice([b + (k, n), (k, n)])
        rhs = mat(rng, bs, dt if rng.random() < 0.9 else la_dtype(rng))
        return kind, lambda T, x, y: T.linalg.solve(x, y, left=left), [a, rhs]
    if kind == "solve_triangular":
        a = mat(rng, sq, dt, well=True)
        up = rng.random() < 0.5
        rhs = mat(rng, b + (n, 2), dt)
        uni = rng.random() < 0.3
        return kind, lambda T, x, y: T.linalg.solve_triangular(x, y, upper=up, unitriangular=uni), [a, rhs]
    if kind == "lstsq":
        m = rng.choice([n, n + 1, n + 2])
        a = mat(rng, b + (m, n), dt, well=False)
        a = Pair(a.ref + _eye_like(torch, a.ref), a.got + _eye_like(torchish, a.got))
        rhs = mat(rng, b + (m, rng.choice([1, 2])), dt)
        return kind, lambda T, x, y: T.linalg.lstsq(x, y).solution, [a, rhs]
    if kind in ("pinv", "matrix_rank", "svdvals", "svd"):
        m = rng.choice([n, n + 1, max(n - 1, 0)])
        a = mat(rng, b + (m, n), dt)
        if kind == "pinv":
            a = Pair(a.ref + 4 * _eye_like(torch, a.ref), a.got + 4 * _eye_like(torchish, a.got))
            herm = rng.random() < 0.2 and m == n
            if herm:
                a = Pair(a.ref + a.ref.mH, a.got + a.got.mH)
            return kind, lambda T, x: T.linalg.pinv(x, hermitian=herm), [a]
        if kind == "matrix_rank":
            if rng.random() < 0.5 and a.ref.numel() and a.nd >= 2:
                a = Pair(a.ref[..., :1, :].expand(a.ref.shape).clone(), a.got[..., :1, :].expand(a.got.shape).clone())
            return kind, lambda T, x: T.linalg.matrix_rank(x), [a]
        if kind == "svdvals":
            return kind, lambda T, x: T.linalg.svdvals(x), [a]
        full = rng.random() < 0.5

        def svd(T, x):
            u, s, vh = T.linalg.svd(x, full_matrices=full)
            return (u.shape, vh.shape, s, _recon(T, u, s, vh))
        return kind, svd, [a]
    if kind == "matrix_power":
        p = rng.choice([0, 1, 2, 3, -1, -2])
        a = mat(rng, sq, dt if p >= 0 or dt in ("float32", "float64", "complex64") else "float64", well=p < 0)
        return kind, lambda T, x: T.linalg.matrix_power(x, p), [a]
    if kind == "matrix_exp":
        a = mat(rng, sq, dt)
        a = Pair(a.ref * 0.25, a.got * 0.25)
        return kind, lambda T, x: T.linalg.matrix_exp(x), [a]
    if kind in ("cholesky", "cholesky_upper", "cholesky_ex", "eigh", "eigvalsh"):
        a = mat(rng, sq, dt, well=True)
        if a.shape[-1] == a.shape[-2]:
            a = Pair(a.ref + a.ref.mH, a.got + a.got.mH)
        if kind == "cholesky":
            return kind, lambda T, x: T.linalg.cholesky(x), [a]
        if kind == "cholesky_upper":
            return kind, lambda T, x: T.linalg.cholesky(x, upper=True), [a]
        if kind == "cholesky_ex":  # L compared where info == 0: what a failed factorisation leaves is LAPACK's
            return kind, lambda T, x: _cholesky_ex(T, x), [a]  # partial work (undocumented; seed 80112)
        uplo = rng.choice(["L", "U"])
        if kind == "eigvalsh":
            return kind, lambda T, x: T.linalg.eigvalsh(x, UPLO=uplo), [a]

        def eigh(T, x):
            w, v = T.linalg.eigh(x, UPLO=uplo)
            return (w, _recon(T, v, w, v.mH))
        return kind, eigh, [a]
    if kind == "qr":
        m = rng.choice([n, n + 1, max(n - 1, 0)])
        a = mat(rng, b + (m, n), dt)
        mode = rng.choice(["reduced", "complete", "r"])
        return kind, lambda T, x: tuple(T.linalg.qr(x, mode=mode)), [a]
    if kind in ("lu_factor", "lu"):
        m = rng.choice([n, n + 1, max(n - 1, 0)])
        a = mat(rng, b + (m, n), dt, well=True)
        piv = rng.random() < 0.9
        if kind == "lu":
            return kind, lambda T, x: tuple(T.linalg.lu(x, pivot=piv)), [a]
        return kind, lambda T, x: tuple(T.linalg.lu_factor(x)), [a]
    if kind == "matrix_norm":
        o = rng.choice(["fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")])
        m = rng.choice([n, n + 1])
        a = mat(rng, b + (m, n), dt)
        keep = rng.random() < 0.3
        return kind, lambda T, x: T.linalg.matrix_norm(x, o, keepdim=keep), [a]
    o = rng.choice([None, "fro", 2, 1, float("inf"), "nuc"])
    shape = rng.choice([(n,), b + (n, n)])
    dim = None if o in (None, 2, 1, float("inf")) and len(shape) == 1 else (-2, -1)
    if o == "nuc" or o == "fro":
        dim = (-2, -1)
        shape = b + (n, n + 1)
    a = mat(rng, shape, dt)
    return "linalg.norm", lambda T, x: T.linalg.norm(x, o, dim), [a]


def _eye_like(T, x):
    return T.eye(x.shape[-2], x.shape[-1], dtype=x.dtype) if x.dim() >= 2 else T.zeros_like(x)


# ----------------------------------------------------------------------------------------------------------------
# running


# Draws skipped for a known gap, counted (the command line prints them):
# - complex32: torchish has no complex32 (ComplexHalf), which torch makes of float16 meeting a complex number;
# - float->int UB: a float -> integer cast of a value the integer type cannot hold (undefined in torch);
# - empty LAPACK input: torch returns an empty result for an empty float16/bfloat16/integer input of lu, det,
#   solve, cholesky, svd, eigh... without reaching the kernel that raises NotImplementedError for a non-empty one;
#   torchish raises for both;
# - torch half matrix_exp: torch's float16/bfloat16 matrix_exp of a matrix larger than 1x1 returns inf/nan
#   (torchish computes it in float32 and rounds once);
# - signbit of NaN: the sign bit of a NaN made by earlier arithmetic is not specified (XLA canonicalizes NaNs), in
#   signbit and in copysign's sign operand;
# - mode of NaN: torch's index of a NaN mode comes from std::sort over NaNs, an unspecified order (its value,
#   NaN, is compared by the regression test below);
# - std/var grad with dim=(): torch's forward reduces over every dim but its backward reduces over none (inf/nan
#   gradients); torchish differentiates what the forward computed;
# - complex BLAS of inf/nan: torch's complex gemm/gemv scales the products by alpha = 1 + 0j multiplied out in full,
#   so an infinite part of a product makes the other part NaN (mv of a row holding -inf-1.5j is nan+nanj where the
#   sum of products is -inf+infj; dot, which takes no alpha, agrees); not emulated (seed 110246);
# - torch median of overlapping memory: torch's median/nanmedian along a dim of an expanded tensor (a zero stride
#   over a size > 1) returns values read from memory it does not own (6.9e-310 for a tensor of -1.5; seed 120229).
KNOWN: dict = {"complex32": 0, "float->int UB": 0, "empty LAPACK input": 0, "torch half matrix_exp": 0,
               "signbit of NaN": 0, "std/var grad with dim=()": 0, "mode of NaN": 0, "complex BLAS of inf/nan": 0,
               "torch median of overlapping memory": 0}
BLAS = {"matmul", "matmul_op", "mm", "bmm", "mv", "addmm", "addmv", "addbmm", "baddbmm", "tensordot", "multi_dot",
        "chain_matmul", "inner"}
LAPACK = {"det", "slogdet", "logdet", "torch.det", "solve", "solve_left", "solve_triangular", "cholesky",
          "cholesky_upper", "cholesky_ex", "svd", "svdvals", "eigh", "eigvalsh", "lu", "lu_factor", "qr", "inv",
          "inv_ex", "torch.inverse", "matrix_norm", "linalg.norm"}
STATS: dict = {}


def known_gap(name, args, fn, grad):
    """The KNOWN entry a draw falls under before it runs (None when it is compared)."""
    tensors = [a.ref for a in args if isinstance(a, Pair)]
    if name == "matrix_exp" and tensors[0].dtype in (torch.float16, torch.bfloat16) and tensors[0].shape[-1] > 1:
        return "torch half matrix_exp"
    if name == "signbit" and tensors[0].is_floating_point() and bool(tensors[0].isnan().any()):
        return "signbit of NaN"
    if name.startswith("copysign") and len(tensors) > 1 and tensors[1].is_floating_point() and \
            bool(tensors[1].isnan().any()):  # (the sign taken from a NaN: seed 100426)
        return "signbit of NaN"
    if name == "mode" and tensors[0].is_floating_point() and bool(tensors[0].isnan().any()):
        return "mode of NaN"
    if grad and name in ("std", "var", "std_mean", "var_mean") and _closure_vars(fn).get("dim") == ():
        return "std/var grad with dim=()"
    if name in ("median_dim", "nanmedian_dim") and any(st == 0 and n > 1 for st, n in
                                                       zip(tensors[0].stride(), tensors[0].shape)):
        return "torch median of overlapping memory"
    if name in BLAS and any(t.is_complex() for t in tensors) and \
            any(t.numel() and not bool(t.isfinite().all()) for t in tensors):
        return "complex BLAS of inf/nan"
    return None


def _closure_vars(fn):
    """The constants ``fn`` closes over, with those of the functions it closes over."""
    out = {}
    for k, c in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        v = c.cell_contents
        if callable(v) and hasattr(v, "__code__"):
            out.update(_closure_vars(v))
        else:
            out[k] = v
    return out


def _flat(x, T):
    if isinstance(x, T.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for o in x for t in _flat(o, T)]
    return []


def _leaves(args, lib, grad):
    """The library's values of ``args``; float32/float64 tensors become fresh leaves requiring grad when ``grad``."""
    out = []
    for a in args:
        v = (a.ref if lib is torch else a.got) if isinstance(a, Pair) else a
        if grad and isinstance(v, lib.Tensor) and v.dtype in (lib.float32, lib.float64):
            v = v.detach().clone().requires_grad_(True)
        out.append(v)
    return out


def _float_to_int_ub(name, args, ref):
    """A float -> integer cast of a value the integer type cannot hold is undefined behaviour in torch."""
    if not any(isinstance(t, torch.Tensor) and t.dtype in (torch.int8, torch.int16, torch.int32, torch.int64,
                                                           torch.uint8, torch.bool) for t in _flat(ref, torch)):
        return False
    if not ("_out" in name or name.endswith("_") or name.startswith("inplace") or "dtype" in name):
        return False
    for a in args:
        if isinstance(a, Pair) and (a.ref.is_floating_point() or a.ref.is_complex()):
            v = a.ref.detach()
            if v.numel() and not bool(torch.isfinite(v).all() & (v.abs() < 2 ** 31).all()):
                return True
    return False


def run_step(name, fn, args, grad):
    """One op in both libraries; None or a mismatch message."""
    ref_err = got_err = ref = got = None
    gap = known_gap(name, args, fn, grad)
    if gap:
        KNOWN[gap] += 1
        raise Skip
    targs = _leaves(args, torch, grad)
    try:
        ref = fn(torch, *targs)
    except Skip:
        raise
    except Exception as e:  # noqa: BLE001
        ref_err = e
    if any(t.dtype == torch.complex32 for t in _flat(ref, torch)) or "ComplexHalf" in str(ref_err):
        KNOWN["complex32"] += 1  # torchish has no complex32 (float16 meeting a complex number)
        raise Skip
    if ref_err is None and _float_to_int_ub(name, args, ref):
        KNOWN["float->int UB"] += 1
        raise Skip
    xargs = _leaves(args, torchish, grad)
    try:
        got = harness.traced(fn, xargs) if COMPILED else fn(torchish, *xargs)
    except Exception as e:  # noqa: BLE001
        got_err = e
    if ref_err is None and isinstance(got_err, NotImplementedError) and name in LAPACK and any(
            isinstance(a, Pair) and a.ref.numel() == 0 and not (a.ref.dtype in (torch.float32, torch.float64)
                                                                or a.ref.is_complex()) for a in args):
        KNOWN["empty LAPACK input"] += 1
        raise Skip
    STATS[name] = STATS.get(name, 0) + 1
    if ref_err is not None:
        if got_err is None:
            return f"torch raised {type(ref_err).__name__}: {str(ref_err)[:200]} ; torchish returned " \
                   f"{_describe([got])}", ref, got
        if not issubclass(error_family(got_err), error_family(ref_err)):
            return f"torch raised {type(ref_err).__name__}: {str(ref_err)[:200]} ; torchish raised " \
                   f"{type(got_err).__name__}: {str(got_err)[:300]}", ref, got
        return None, ref, got
    if got_err is not None:
        return f"torch returned {_describe([ref])} ; torchish raised {type(got_err).__name__}: " \
               f"{str(got_err)[:300]}", ref, got
    try:
        assert_same(ref, got)
    except AssertionError as e:
        return f"{str(e)[:700]}", ref, got
    if grad:
        msg = _compare_grads(ref, got, targs, xargs)
        if msg:
            return "grad: " + msg, ref, got
    return None, ref, got


def _compare_grads(ref, got, targs, xargs):
    touts = [t for t in _flat(ref, torch) if t.requires_grad]
    xouts = [t for t in _flat(got, torchish) if t.requires_grad]
    if len(touts) != len(xouts):
        return f"{len(xouts)} outputs require grad, torch has {len(touts)}"
    tleaves = [t for t in targs if isinstance(t, torch.Tensor) and t.requires_grad]
    xleaves = [t for t in xargs if isinstance(t, torchish.Tensor) and t.requires_grad]
    if not touts or not tleaves:
        return None
    rng = np.random.default_rng(5)
    cots = [(rng.integers(-4, 5, size=tuple(t.shape)) / 4).astype(to_numpy(t).dtype) for t in touts]
    try:
        tg = torch.autograd.grad(touts, tleaves, [torch.tensor(c) for c in cots], allow_unused=True)
    except Exception:  # noqa: BLE001  (an output torch cannot differentiate: nothing to compare)
        return None
    try:
        xg = torchish.autograd.grad(xouts, xleaves, [torchish.tensor(c) for c in cots], allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return f"torchish backward raised {type(e).__name__}: {str(e)[:300]}"
    for i, (a, b) in enumerate(zip(tg, xg)):
        if a is None:
            if b is not None and np.any(to_numpy(b)):
                return f"grad[{i}]: torch has none, torchish {b}"
            continue
        if b is None:
            if np.any(to_numpy(a)):
                return f"grad[{i}]: torchish returned None, torch {a}"
            continue
        try:
            assert_same(a, b, f"grad[{i}]")
        except AssertionError as e:
            return str(e)[:700]
    return None


def initial_pool(rng):
    pool = []
    for _ in range(rng.randrange(2, 4)):
        dt = rng.choice(DTYPES)
        pool.append(fresh(rng, rand_shape(rng), dt, shape_kept=False))
    if rng.random() < 0.5:  # a broadcasting partner of the first tensor
        x = pool[0]
        shape = tuple(s if rng.random() < 0.6 else 1 for s in x.shape)[rng.randrange(x.nd + 1):]
        pool.append(fresh(rng, shape, rng.choice(DTYPES), shape_kept=False))
    return pool


def run_program(seed, steps=STEPS, verbose=False):
    """Run one program; return None, or (op name, description) of the first mismatch."""
    global WRNG, WIDE2
    rng, WRNG = random.Random(seed), harness.wide_rng(seed)
    WIDE2 = seed >= harness.WIDE2_FROM
    pool = initial_pool(rng)
    names = list(OPS)
    weights = [OPS[n][1] for n in names]
    done = tries = 0
    while done < steps and tries < steps * 10:
        tries += 1
        gen = OPS[rng.choices(names, weights)[0]][0]
        try:
            name, fn, args = gen(rng, pool)
        except Skip:
            continue
        grad = rng.random() < GRAD_P and not name.endswith(("_", "_out")) and name != "equal"
        try:
            msg, ref, got = run_step(name, fn, args, grad)
        except Skip:
            continue
        desc = f"seed={seed} step={done} op={name} grad={grad} args={_describe(args)} {_closure(fn)}"
        if verbose:
            print(desc, "->", _describe([ref]) if ref is not None else "ERR")
        if msg:
            return name, f"{desc}: {msg}"
        pairs = zip(_flat(ref, torch), _flat(got, torchish))
        pool.extend(Pair(r.detach(), _synced(r.detach(), g.detach())) for r, g in pairs
                    if r.numel() <= 36 and (r.dtype != torch.complex128 or WRNG) and r.dim() <= 4)
        done += 1
    return None


def _synced(r, g):
    """torchish's result ``g`` (which matched torch's ``r`` within tolerance) holding torch's exact numbers, its
    layout kept, so that the next steps run on the same inputs: a last-bit float32 difference carried on otherwise
    fails a later float64 comparison (seed 80184: float32 lstsq, then addcmul promoting it to float64)."""
    if not (r.is_floating_point() or r.is_complex()):
        return g
    return g.clone().copy_(torchish.tensor(to_numpy(r)).to(g.dtype))


def _closure(fn):
    cells = zip(fn.__code__.co_freevars, fn.__closure__ or ())
    return " ".join(f"{k}={c.cell_contents!r}" for k, c in cells
                    if not callable(c.cell_contents) and k not in ("T", "rng", "pool"))


def _describe(args):
    out = []
    for a in args:
        if isinstance(a, Pair):
            a = a.ref
        if torch is not None and isinstance(a, torch.Tensor):
            s = f"tensor{tuple(a.shape)}:{dtname(a)}"
            if a.numel() <= 8:
                s += f"={a.detach().resolve_conj().cpu().tolist()}"
            if not a.is_contiguous() or a.storage_offset() or a.is_conj():
                s += f"(strides {a.stride()}, offset {a.storage_offset()}{', conj' if a.is_conj() else ''})"
            out.append(s)
        elif isinstance(a, (list, tuple)):
            out.append("[" + _describe(a) + "]")
        else:
            out.append(repr(a))
    return ", ".join(out)


def fuzz(n, start=0, verbose=False, live=False):
    return harness.fuzz(run_program, n, start, verbose, live)


@needs_torch
def test_fuzz_math_programs():
    harness.assert_none_differ(fuzz(N_PROGRAMS), N_PROGRAMS)


@needs_torch
def test_fuzz_math_compiled(monkeypatch):
    """A few programs with every op traced by torchish.compile."""
    harness.assert_compiled_none_differ(monkeypatch, globals(), fuzz, COMPILED_SEEDS)


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("n", type=int, nargs="?", default=N_PROGRAMS_LONG)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-v", action="store_true")
    p.add_argument("--stats", action="store_true", help="print how many steps each op ran")
    p.add_argument("--compile", action="store_true", help="run every torchish op call traced by torchish.compile")
    a = p.parse_args()
    COMPILED = a.compile
    res = fuzz(a.n, a.seed, a.v, live=True)
    total = sum(map(len, res.values()))
    print(f"{total} of {a.n} programs differ; skipped draws for known gaps: {KNOWN}")
    if a.stats:
        print(", ".join(f"{k}={v}" for k, v in sorted(STATS.items())))
    for k, v in sorted(res.items(), key=lambda kv: -len(kv[1])):
        print(f"\n== {k}: {len(v)}")
        for line in v[:4]:
            print("   ", line)


# ----------------------------------------------------------------------------------------------------------------
# regressions: one test per root cause the fuzzer found (each case is compared with torch: values or error family)


@needs_torch
def test_lapack_kernels_refuse_half_and_integer_inputs_with_not_implemented_error():
    A = lambda T, dt: T.eye(2, dtype=getattr(T, dt))  # noqa: E731
    agree(*[lambda T, f=f, dt=dt: f(T)(A(T, dt)) for dt in ("float16", "bfloat16", "int64")
             for f in (lambda T: T.linalg.det, lambda T: T.det, lambda T: T.linalg.cholesky, lambda T: T.linalg.qr,
                       lambda T: T.linalg.svd, lambda T: T.linalg.svdvals, lambda T: T.linalg.eigh,
                       lambda T: T.linalg.lu_factor, lambda T: T.linalg.lu, lambda T: T.cholesky_inverse,
                       lambda T: (lambda a: T.linalg.solve(a, a)),
                       lambda T: (lambda a: T.linalg.solve_triangular(a, a, upper=True)),
                       lambda T: (lambda a: T.linalg.matrix_norm(a, 2)))])


@needs_torch
def test_matrix_exp_of_half_precision_is_computed():
    agree(lambda T: T.linalg.matrix_exp(T.tensor([[1.5]], dtype=T.float16)),
           lambda T: T.linalg.matrix_exp(T.tensor([[0.5]], dtype=T.bfloat16)))


@needs_torch
def test_lu_based_solvers_of_empty_matrices():
    agree(lambda T: T.linalg.inv(T.zeros(0, 0)), lambda T: T.linalg.solve(T.zeros(0, 0), T.zeros(0)),
           lambda T: tuple(T.linalg.lu_factor(T.zeros(0, 1, dtype=T.float64))),
           lambda T: tuple(T.linalg.lu(T.zeros(0, 2, 1), pivot=False)),
           lambda T: tuple(T.linalg.lu_factor(T.zeros(2, 0, 1), pivot=False)),
           lambda T: T.linalg.matrix_norm(T.zeros(2, 0, 3), 2), lambda T: T.linalg.matrix_norm(T.zeros(2, 0, 3), -2))


@needs_torch
def test_solve_with_left_false_takes_no_vector_b():
    agree(lambda T: T.linalg.solve(T.eye(3).expand(1, 3, 3), T.ones(1, 3), left=False),
           lambda T: T.linalg.solve(T.eye(1), T.ones(1), left=False),
           lambda T: T.linalg.solve(T.eye(3), T.ones(2, 3), left=False))


@needs_torch
def test_unary_kernels_without_complex_versions_raise_not_implemented_error():
    z = lambda T: T.tensor([0.5 + 1j, -1.5j])  # noqa: E731
    fns = [lambda T, f=f: getattr(T, f)(z(T)) for f in ("erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "ceil",
                                                        "floor", "trunc", "frac", "round", "logit", "signbit",
                                                        "isposinf", "isneginf")]
    fns += [lambda T, f=f: getattr(T.special, f)(z(T)) for f in ("ndtr", "log_ndtr", "entr", "erfcx", "i0e", "i1")]
    agree(*fns, lambda T: T.round(z(T), decimals=1), lambda T: T.special.xlog1py(T.ones(2), z(T)))


@needs_torch
def test_dtype_preserving_unary_ops_want_out_of_the_same_dtype():
    fns = [lambda T, f=f, o=o: getattr(T, f)(T.tensor([1.5, -2.0]), out=T.empty(2, dtype=getattr(T, o)))
           for f in ("abs", "neg", "floor", "ceil", "sign", "sgn", "round", "trunc", "frac", "nan_to_num",
                     "conj_physical", "signbit", "isposinf") for o in ("float64", "float32", "bool")]
    agree(*fns, lambda T: T.bitwise_not(T.tensor([1, 2]), out=T.empty(2)))


@needs_torch
def test_where_with_out_wants_tensors_and_the_result_dtype():
    c = lambda T: T.tensor([True, False])  # noqa: E731
    agree(lambda T: T.where(c(T), T.tensor([1, 2], dtype=T.int16), T.tensor([3, 4], dtype=T.int16),
                             out=T.empty(2, dtype=T.int32)),
           lambda T: T.where(c(T), T.tensor([1.0, 2.0]), 0.5, out=T.empty(2)),
           lambda T: T.where(c(T), T.tensor([1.0, 2.0]), T.tensor(0.5), out=T.empty(2)))


@needs_torch
def test_vector_norm_checks_its_input_before_the_dtype_argument():
    agree(lambda T: T.linalg.vector_norm(T.ones(2, dtype=T.bool), dtype=T.float64),
           lambda T: T.linalg.vector_norm(T.ones(2, dtype=T.int32), dtype=T.complex64),
           lambda T: T.linalg.vector_norm(T.ones(2, dtype=T.float64), dtype=T.float32),
           lambda T: T.linalg.vector_norm(T.ones(2), dtype=T.complex64),
           lambda T: T.linalg.vector_norm(T.ones(2, dtype=T.complex64), dtype=T.float64),
           lambda T: T.linalg.vector_norm(T.ones(2, dtype=T.complex64), dtype=T.complex128))


@needs_torch
def test_trace_refuses_bool_before_checking_the_rank():
    agree(lambda T: T.trace(T.tensor(True)), lambda T: T.trace(T.tensor(1.0)))


@needs_torch
def test_addr_promotes_and_checks_alpha_beta():
    agree(lambda T: T.addr(T.ones(2, 3), T.ones(2, dtype=T.float64), T.ones(3)),
           lambda T: T.addr(T.ones(2, 2, dtype=T.int32), T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64),
                            alpha=0.5),
           lambda T: T.addr(T.ones(2, 2), T.ones(2), T.ones(2), alpha=1j),
           lambda T: T.addr(T.ones(2, 2, dtype=T.bool), T.ones(2, dtype=T.bool), T.ones(2, dtype=T.bool), alpha=2))


@needs_torch
def test_addcmul_and_addcdiv_refuse_a_complex_value_for_a_real_result():
    agree(lambda T: T.addcmul(T.ones(2), T.ones(2), T.ones(2), value=1j),
           lambda T: T.addcdiv(T.ones(2), T.ones(2), T.ones(2), value=2 + 0j),
           lambda T: T.addcmul(T.ones(2, dtype=T.complex64), T.ones(2), T.ones(2), value=1j))


@needs_torch
def test_mode_counts_nans_as_one_value():
    # the values only where NaN wins: torch's index of a NaN mode comes from std::sort over NaNs (see KNOWN)
    agree(lambda T: T.mode(T.tensor([[float("nan"), 1.0], [float("nan"), float("nan")], [-0.5, 1.0]]), 0).values,
           lambda T: T.mode(T.tensor([float("nan"), 2.0, float("nan")])).values,
           lambda T: tuple(T.mode(T.tensor([float("nan"), 2.0, float("nan"), 2.0, 2.0]))))


@needs_torch
def test_scans_check_their_dtype_only_for_non_empty_inputs():
    agree(lambda T: T.cumprod(T.ones(2), 0, dtype=T.bool), lambda T: T.cumsum(T.ones(2), 0, dtype=T.bool),
           lambda T: T.cumsum(T.ones(0), 0, dtype=T.bool), lambda T: tuple(T.cummin(T.ones(0, 2, dtype=T.complex64), 1)),
           lambda T: tuple(T.cummax(T.ones(2, dtype=T.complex64), 0)))


@needs_torch
def test_addmv_of_an_empty_matrix_returns_beta_times_input_in_its_own_shape():
    agree(*[lambda T, s=s, m=m, b=b: T.addmv(T.ones(s), T.ones(m), T.ones(m[1]), beta=b)
             for s, m in [((), (0, 0)), ((), (2, 0)), ((1,), (2, 0)), ((), (2, 2))] for b in (0, 1, 2)])


@needs_torch
@pytest.mark.parametrize("s,m,v", [((), (1, 2), (3,)), ((), (0, 2), (3,)), ((), (2, 0), (3,)), ((1,), (1, 2), (3,)),
                                   ((3,), (1, 2), (3,)), ((), (1, 2), (2,))])
def test_addmv_size_mismatch_of_a_zero_dim_input(s, m, v):
    # (math fuzzer seed 70164, --compile and eager) PyTorch's size mismatch message reads input.size(0): a 0-d
    # input makes it an IndexError
    messages = []
    for T in (torch, torchish):
        try:
            T.addmv(T.ones(s, dtype=T.float64, requires_grad=True), T.ones(m, dtype=T.float64),
                    T.ones(v, dtype=T.float64), beta=0.5, alpha=2)
            messages.append(None)
        except Exception as e:  # noqa: BLE001
            messages.append((error_family(e), str(e)))
    assert messages[0] == messages[1]


@needs_torch
@pytest.mark.parametrize("xdt", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("edt", ["int8", "int16", "int32", "uint8"])
@pytest.mark.parametrize("compiled", [False, True])
def test_pow_gradient_takes_exponent_minus_one_in_the_exponents_type(xdt, edt, compiled):
    # (math fuzzer seed 70409) PyTorch's pow_backward computes ``exponent - 1`` in an integer exponent's own type:
    # an int8 exponent of -128 wraps to 127 (torchish took x ** -129, a value 10 ** 150 times smaller)
    def fn(T, x, e):
        x = x.detach().requires_grad_()
        T.pow(x, e).sum().backward()
        return x.grad
    for T in (torch, torchish):
        info = T.iinfo(getattr(T, edt))
        vals = (T.tensor([0.75, 1.25, 1.5, 2.0], dtype=getattr(T, xdt)),
                T.tensor([4, info.min, info.max, 0], dtype=getattr(T, edt)))
        if T is torch:
            ref = fn(T, *vals)
        else:
            got = harness.traced(fn, vals) if compiled else fn(T, *vals)
    assert_same(ref, got)


@needs_torch
def test_rounding_division_of_complex_numbers_is_not_implemented():
    agree(*[lambda T, m=m, a=a, b=b: T.div(a(T), b(T), rounding_mode=m) for m in ("trunc", "floor")
             for a, b in [(lambda T: T.ones(2, dtype=T.complex64), lambda T: T.ones(2)),
                          (lambda T: T.ones(2, dtype=T.int64), lambda T: 0.5 + 0.5j),
                          (lambda T: T.ones(0, dtype=T.complex64), lambda T: 1)]],
           lambda T: T.floor_divide(T.ones(2, dtype=T.complex64), 2),
           lambda T: T.remainder(T.ones(2, dtype=T.complex64), 2), lambda T: T.fmod(T.ones(2, dtype=T.complex64), 2))


@needs_torch
def test_scans_of_empty_and_zero_dim_inputs():
    agree(lambda T: tuple(T.cummin(T.ones(0, 1, 1), -4)), lambda T: tuple(T.cummax(T.ones(0, dtype=T.complex64), 3)),
           lambda T: tuple(T.cummin(T.ones(2, 1, 1), -4)), lambda T: T.cumprod(T.tensor(0.5), 0, dtype=T.bool),
           lambda T: T.linalg.matrix_norm(T.zeros(1, 0, 1, 0, requires_grad=True), 2).requires_grad)


@needs_torch
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("shape,dim,dt", [((1, 1), 2, "complex64"), ((1, 1), 0, "complex64"), ((), 2, "complex64"),
                                          ((), -2, "float32"), ((2,), 1, "float32"), ((), 0, "complex64")])
def test_cummax_cummin_check_the_dim_before_the_dtype(name, shape, dim, dt):
    # (math fuzzer seed 70112) a complex input with a dim out of range raised NotImplementedError, not IndexError;
    # a 0-d input's bad dim has its own message
    messages = []
    for T in (torch, torchish):
        try:
            tuple(getattr(T, name)(T.zeros(shape, dtype=getattr(T, dt)), dim))
            messages.append(None)
        except Exception as e:  # noqa: BLE001
            messages.append((error_family(e), str(e)))
    assert messages[0] == messages[1]


@needs_torch
def test_any_all_over_a_dim_of_complex_numbers_and_lerp_number_weight_checked():
    # (math fuzzer seeds 15208, 15235) jnp.any/all over an axis read a complex value's real part; a number weight
    # of lerp is converted to the input's dtype, checked
    c = np.array([[0.5j, 0], [1 + 0j, -2j]], np.complex64)
    agree(lambda T: T.tensor(c).any(1), lambda T: T.tensor(c).all(1), lambda T: T.tensor(c).any(0, keepdim=True),
          lambda T: T.tensor(c).all(-1, keepdim=True),
          lambda T: T.lerp(T.tensor([0.75], dtype=T.float64), T.tensor([4.0, -2.0], dtype=T.float64), -0.5 + 0.5j),
          lambda T: T.lerp(T.tensor([0.75]), T.tensor([4.0, -2.0]), 0.5 + 0j),
          lambda T: T.lerp(T.tensor([0.75], dtype=T.complex64), T.tensor([4.0, -2.0], dtype=T.complex64), 0.5 + 1j))


@needs_torch
def test_exp2_ldexp_exact_and_round_decimals_aminmax_abs_out_angle_grad():
    # (math fuzzer seeds 16041, 16050, 16067, 16213, 16234) XLA's exp2 is exp(x ln 2): inexact at integers from 13
    # on and, in bfloat16, exp2(5) = 31.625 (ldexp used it); round(int, decimals=0) is PyTorch's decimals kernel,
    # which takes no integers; aminmax checks an empty dim before the dtype; abs(complex, out=complex) is allowed;
    # a real input's angle has zero gradient, NaN included
    e = np.arange(-60, 60, dtype=np.float32)
    a = np.array([[-3.703125, -2.75], [3.0, -3.25]], np.float32)
    n = np.array([[5, 6], [-3, -5]], np.int16)

    def angle_grad(T):
        x = T.tensor([float("nan"), 1.0, -2.0], requires_grad=True)
        T.angle(x).sum().backward()
        return x.grad
    agree(lambda T: T.exp2(T.tensor(e)), lambda T: T.exp2(T.tensor(e, dtype=T.bfloat16)),
          lambda T: T.ldexp(T.tensor(a, dtype=T.bfloat16), T.tensor(n)),
          lambda T: T.ldexp(T.tensor(a), T.tensor(n * 9)), lambda T: T.ldexp(T.tensor(a), T.tensor(n * 9.0)),
          lambda T: T.round(T.tensor(1), decimals=0), lambda T: T.round(T.tensor([1, 2], dtype=T.int32)),
          lambda T: T.tensor([2]).round(decimals=0),
          lambda T: T.aminmax(T.zeros(1, 2, 0, dtype=T.complex64), dim=2),
          lambda T: T.abs(T.tensor([3 + 4j, 1j]), out=T.zeros(2, dtype=T.complex64)),
          lambda T: T.abs(T.tensor([3 + 4j, 1j]), out=T.zeros(2, dtype=T.float16)),
          lambda T: T.abs(T.tensor([3 + 4j, 1j]), out=T.zeros(2, dtype=T.int32)), angle_grad)


@needs_torch
def test_nansum_of_floats_into_an_integer_or_bool_dtype():
    # PyTorch zeroes NaN, converts each element, then sums (torchish refused it with 'nansum_cpu not implemented';
    # math fuzzer seed 40045 under compile)
    nan = float("nan")
    agree(lambda T: T.nansum(T.tensor([0.6, 0.6]), dtype=T.int8),
          lambda T: T.nansum(T.tensor([nan]), dtype=T.bool),
          lambda T: T.nansum(T.tensor([300.0, 300.0]), dtype=T.uint8),
          lambda T: T.nansum(T.tensor([[nan, 2.0], [-1.5, 2.5]], dtype=T.float64), 1, dtype=T.int64),
          lambda T: T.nansum(T.zeros(1, 0, 1), dtype=T.bool),
          lambda T: T.nansum(T.tensor([nan, 0.5], dtype=T.float16), 0, keepdim=True, dtype=T.int32),
          lambda T: T.nansum(T.ones(2), 0, out=T.zeros((), dtype=T.int64)),
          lambda T: T.nanmean(T.tensor(-1.0), dtype=T.bool),  # (math fuzzer seed 40214)
          lambda T: T.nanmean(T.ones(2), dtype=T.int64),
          lambda T: T.nanmean(T.ones(2), out=T.zeros((), dtype=T.int64)))


@needs_torch
def test_nansum_of_floats_into_a_complex_dtype_is_not_implemented():
    # the float input is converted, and nansum's kernel has no complex version (torchish summed it; math fuzzer seed
    # 72364); an integer or bool input is summed by sum's kernel, which has one
    agree(lambda T: T.nansum(T.tensor([[0.0625], [1.0]]), 1, dtype=T.complex64),
          lambda T: T.nansum(T.tensor([1.5], dtype=T.float16), dtype=T.complex128),
          lambda T: T.nansum(T.ones(2), 0, out=T.zeros((), dtype=T.complex64)),
          lambda T: T.nanmean(T.ones(2), dtype=T.complex64),
          lambda T: T.nansum(T.tensor([2, 3]), dtype=T.complex64),
          lambda T: T.nansum(T.tensor([True, True]), dtype=T.complex128))


@needs_torch
def test_addmm_family_truncates_float_alpha_and_beta_for_integer_results():
    # PyTorch converts beta/alpha to an integer result's type (0.5 -> 0, -1.5 -> -1; NaN or out of range raises):
    # math fuzzer seed 50143, addmm of int64 matrices with alpha=0.5 gave input + 0.5 * product
    i, m = [[1, 2], [3, 4]], [[1, 3], [1, 1]]
    for alpha, beta, dt in ((0.5, 1, "int64"), (-1.5, 2.5, "int64"), (2, 0.5, "int8"), (1, float("nan"), "int64"),
                            (300.0, 1, "uint8"), (-1.0, 1, "uint8")):
        agree(lambda T: T.addmm(T.tensor(i, dtype=getattr(T, dt)), T.tensor(m, dtype=getattr(T, dt)),
                                T.tensor(m, dtype=getattr(T, dt)), alpha=alpha, beta=beta),
              lambda T: T.addmv(T.tensor(i[0]), T.tensor(m), T.tensor(m[0]), alpha=alpha, beta=beta),
              lambda T: T.baddbmm(T.tensor([i]), T.tensor([m]), T.tensor([m]), alpha=alpha, beta=beta),
              lambda T: T.addbmm(T.tensor(i), T.tensor([m, m]), T.tensor([m, i]), alpha=alpha, beta=beta))


@needs_torch
def test_isclose_of_integers_measures_the_error_in_the_default_float_dtype():
    # math fuzzer seed 50110: allclose(tensor([0, 0]), tensor(-2**63), atol=0) was True (0 - (-2**63) wrapped)
    agree(lambda T: T.isclose(T.tensor([0, 0, 5]), T.tensor(-2 ** 63), rtol=1e-5, atol=0),
          lambda T: T.allclose(T.tensor([0, 0]), T.tensor(-2 ** 63), atol=0),
          lambda T: T.isclose(T.tensor([2 ** 62]), T.tensor([-2 ** 62]), rtol=0, atol=10),
          lambda T: T.isclose(T.tensor([16777217]), T.tensor([16777216]), rtol=0, atol=0.5),
          lambda T: T.isclose(T.tensor([100], dtype=T.int8), T.tensor([-100], dtype=T.int8), rtol=0, atol=10),
          lambda T: T.isclose(T.tensor([3, 4, -7]), T.tensor([4, 4, -8]), rtol=0.2, atol=0))


@needs_torch
def test_mode_of_an_empty_complex_tensor_is_empty():
    # PyTorch's kernel (which refuses complex) is not reached for an empty input (math fuzzer seed 40181)
    agree(lambda T: T.mode(T.zeros(0, 1, 1, dtype=T.complex64), -1),
          lambda T: T.mode(T.zeros(2, 0, 3, dtype=T.complex64), 2),
          lambda T: T.mode(T.zeros(2, 3, 0, dtype=T.complex64), 1),
          lambda T: T.mode(T.zeros(3, dtype=T.complex64), 0),
          lambda T: T.mode(T.zeros(0, dtype=T.complex64), 0))


@needs_torch
def test_complex_pow_of_a_zero_base_has_glibc_cpow_special_values():
    # pow(tensor([0j]), tensor([1+1j])) is -0j in PyTorch (cexp(y * clog(0))), NaN in jnp.power
    inf, nan = float("inf"), float("nan")
    exps = [1 + 1j, 1 - 1j, -1 + 1j, 2 + 3j, 1j, 0.5j, 0j, 1 + 0j, 2 + 0j, 0.5 + 0j, -1 + 0j, -2 + 0j,
            complex(inf, 0), complex(-inf, 0), complex(nan, 0), complex(3, inf), complex(-0.0, 0)]
    for dt in ("complex64", "complex128"):
        for base in (0j, complex(-0.0, 0), complex(0, -0.0), complex(-0.0, -0.0)):
            agree(lambda T: T.pow(T.tensor([base] * len(exps), dtype=getattr(T, dt)),
                                  T.tensor(exps, dtype=getattr(T, dt))),
                  lambda T: T.pow(base, T.tensor(exps, dtype=getattr(T, dt))),
                  lambda T: T.pow(0, T.tensor(exps, dtype=getattr(T, dt))),
                  *[lambda T, e=e: T.pow(T.tensor([base, 1 + 2j], dtype=getattr(T, dt)), e) for e in exps + [3, -0.5]])


@needs_torch
def test_complex_pow_of_non_finite_operands_has_glibc_cpow_special_values():
    # math fuzzer seed 50215: float_power((-inf+1.75j), (-0.75+3.5j)) is 0 in PyTorch, NaN in jnp.power
    inf, nan = float("inf"), float("nan")
    parts = [0.0, -0.0, 1.0, -1.0, 2.0, inf, -inf, nan]
    values = [complex(r, i) for r in parts for i in parts]
    bases = [a for a in values for _ in values]
    exps = [b for _ in values for b in values]
    agree(lambda T: T.pow(T.tensor(bases), T.tensor(exps)),
          lambda T: T.float_power(T.tensor([complex(-inf, 1.75), 1 + 1j]), T.tensor([-0.75 + 3.5j, 2j])),
          *[lambda T, e=e: T.pow(T.tensor(values, dtype=T.complex128), e) for e in (-1, -2, -0.5, 2, 3, 1, 0, 1.5)],
          lambda T: T.reciprocal(T.tensor(values)), lambda T: T.rsqrt(T.tensor(values, dtype=T.complex128)),
          lambda T: T.sqrt(T.tensor(values)))


@needs_torch
def test_complex_pow_gradients_at_a_zero_base_are_masked_as_pytorch():
    def grads(T, base, e):
        x, y = T.tensor([base], requires_grad=True), T.tensor([e], requires_grad=True)
        T.pow(x, y).real.sum().backward()
        x2 = T.tensor([base], requires_grad=True)
        T.pow(x2, e).real.sum().backward()
        return x.grad, y.grad, x2.grad
    for base, e in ((0j, 1 + 1j), (0j, 2 + 0j), (0j, 0j), (0j, 1 + 0j), (0j, 0.5 + 0j), (0j, -1 + 0j), (0j, 3 + 0j),
                    (0j, 2 + 3j), (1 + 1j, 2 - 1j)):
        agree(lambda T: grads(T, base, e))


@needs_torch
def test_complex_sigmoid_overflow_divides_as_c10():
    # math fuzzer seed 50569: sigmoid(-100+2.25j) in complex64 is NaN in PyTorch (1 / (1 + exp(100-2.25j)) with
    # both parts of the denominator infinite, by c10's division); XLA's division gave -0+0j
    zs = [complex(-100, 2.25), complex(-100, 0), complex(-100, 1), complex(-80, 2.25), complex(-50, 2.25),
          complex(100, 2.25), complex(-710, 1), complex(-700, 1), 0j, complex(1, -2), complex(-3, 0.5),
          complex(float("inf"), 0), complex(-float("inf"), 1), complex(float("nan"), 0), complex(2, float("inf"))]

    def run(T, dt):
        x = T.tensor(zs, dtype=getattr(T, dt), requires_grad=True)
        y = T.sigmoid(x)
        y.real.sum().backward()
        return y, x.grad
    agree(lambda T: run(T, "complex64"), lambda T: run(T, "complex128"))


@needs_torch
def test_addr_refuses_a_boolean_alpha_or_beta_for_a_non_boolean_result():
    # PyTorch's check_addr_scalar on the result's dtype, beta's checks before alpha's; addmm and the others accept
    def addr(T, dt=None, vdt=None, **kw):
        return T.addr(T.ones(2, 2, dtype=dt), T.ones(2, dtype=vdt or dt), T.ones(2, dtype=vdt or dt), **kw)
    cases = [lambda T: addr(T, T.int64, alpha=True), lambda T: addr(T, T.float32, beta=False),
             lambda T: addr(T, T.complex64, alpha=True, beta=True), lambda T: addr(T, T.int8, alpha=False),
             lambda T: addr(T, alpha=True, beta=1j), lambda T: addr(T, beta=True, alpha=1j),
             lambda T: addr(T, T.bool, alpha=1.5, beta=True), lambda T: addr(T, T.bool, beta=1j),
             lambda T: addr(T, T.bool, T.float32, alpha=True), lambda T: addr(T, T.float32, T.bool, alpha=True),
             lambda T: T.ones(2, 2, dtype=T.int64).addr_(T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64),
                                                         beta=True)]
    for fn in cases:
        with pytest.raises(RuntimeError) as ref:
            fn(torch)
        with pytest.raises(RuntimeError) as got:
            fn(torchish)
        assert str(got.value) == str(ref.value)
    agree(lambda T: addr(T, T.bool, alpha=True, beta=False), lambda T: addr(T, T.bool, alpha=2),
          lambda T: T.addmm(T.ones(2, 2), T.ones(2, 2), T.ones(2, 2), alpha=True, beta=False),
          lambda T: T.addmv(T.ones(2, dtype=T.int64), T.ones(2, 2, dtype=T.int64), T.ones(2, dtype=T.int64),
                            alpha=True),
          lambda T: T.addbmm(T.ones(2, 2), T.ones(1, 2, 2), T.ones(1, 2, 2), beta=True),
          lambda T: T.baddbmm(T.ones(1, 2, 2), T.ones(1, 2, 2), T.ones(1, 2, 2), alpha=True),
          lambda T: T.baddbmm(T.ones(1, 2, 2, dtype=T.bool), T.ones(1, 2, 2, dtype=T.bool),
                              T.ones(1, 2, 2, dtype=T.bool), alpha=True))


@needs_torch
def test_norm_without_identity_refuses_an_empty_reduction():
    # (math fuzzer seed 80081) vector_norm(ord < 0 or inf) of an empty tensor or over an empty dim raises PyTorch's
    # RuntimeError naming the dim as written (torchish returned inf, or JAX's "zero-size array" for inf/-inf)
    cases = [(-1, {}), (-0.5, {"dim": 1}), (-1.0, {"dim": -1}), (float("inf"), {"dim": (0, -1)}),
             (float("-inf"), {"dim": ()}), (-3, {"dim": [1, 0]})]
    for p, kw in cases:
        with pytest.raises(RuntimeError) as ref:
            torch.linalg.vector_norm(torch.zeros(2, 0), p, **kw)
        with pytest.raises(RuntimeError) as got:
            torchish.linalg.vector_norm(torchish.zeros(2, 0), p, **kw)
        assert str(got.value) == str(ref.value)
    agree(*[lambda T, p=p, d=d: T.linalg.vector_norm(T.zeros(2, 0, dtype=T.float64), p, dim=d)
            for p in (-1, float("inf"), 0, 2) for d in (0, None)], lambda T: T.norm(T.zeros(0), -2))


@needs_torch
def test_nansum_dtype_dispatch_errors_need_a_non_empty_input():
    # (math fuzzer seed 80098) PyTorch's nansum kernel refuses a complex dtype= of a float input (and an integer out=)
    # only when it runs: an empty input gives zeros, so nanmean(empty, dtype=complex64) is nan+nanj
    agree(lambda T: T.nansum(T.zeros(2, 0), dtype=T.complex64),
          lambda T: T.nansum(T.zeros(2, 0), 1, dtype=T.complex64),
          lambda T: T.nanmean(T.zeros(2, 1, 0, 1, dtype=T.float64), dtype=T.complex64),
          lambda T: T.nanmean(T.zeros(0, 2), 0, dtype=T.complex64),
          lambda T: T.nansum(T.zeros(0, 2), 0, out=T.empty(2, dtype=T.int64)),
          lambda T: T.nanmean(T.zeros(0), out=T.empty((), dtype=T.int64)),
          lambda T: T.nansum(T.zeros(2, 3), dtype=T.complex64),
          lambda T: T.nansum(T.zeros(2), out=T.empty((), dtype=T.int64)))


@needs_torch
def test_cholesky_ex_info_in_a_traced_program_is_the_failing_minors_order():
    # (math fuzzer --compile, seed 80112) in a program traced by torchish.compile, cholesky_ex's info for a matrix
    # that is not positive-definite was -1 (the eager path asks numpy for LAPACK's order, a trace cannot)
    mats = [[[4.0, 1.0, 0.0], [1.0, 0.1, 0.0], [0.0, 0.0, 1.0]], [[-1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]], [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1.0]]]
    for dt in ("float64", "complex64"):
        for upper in (False, True):
            def fn(T, x):
                return T.linalg.cholesky_ex(x, upper=upper).info
            ref = fn(torch, torch.tensor(mats, dtype=getattr(torch, dt)))
            got = harness.traced(fn, [torchish.tensor(mats, dtype=getattr(torchish, dt))])
            assert_same(ref, got, f"{dt} upper={upper}")


@needs_torch
def test_cholesky_of_empty_matrices_eager_and_traced():
    # (math fuzzer seeds 90033, 90101) every Cholesky of a 0x0 matrix raised IndexError: the in-kernel search for
    # the failing minor (traced by fori_loop even for no iterations) indexed the empty diagonal
    agree(lambda T: T.linalg.cholesky(T.zeros(0, 0)), lambda T: T.cholesky(T.zeros(0, 2, 0, 0), upper=True),
          lambda T: tuple(T.linalg.cholesky_ex(T.zeros(2, 0, 0, dtype=T.float64))),
          lambda T: (lambda x: T.autograd.grad(T.linalg.cholesky(x).sum(), x))(T.zeros(0, 0, requires_grad=True)))
    ref = torch.linalg.cholesky_ex(torch.zeros(3, 0, 0)).info
    assert_same(ref, harness.traced(lambda T, x: T.linalg.cholesky_ex(x).info, [torchish.zeros(3, 0, 0)]))


def _div_grads(T, a, b):
    a, b = a.clone().requires_grad_(), b.clone().requires_grad_()
    x = a / b.to(T.complex64) + T.addcdiv(T.zeros(3, dtype=T.complex64), a, b.to(T.complex64) * (1 - 2j), value=2)
    return x, T.autograd.grad(x.abs().sum(), (a, b))


@needs_torch
def test_complex_division_keeps_nan_parts_as_c10():
    # (math fuzzer seed 90134) XLA's complex division recovers infinities as C99 Annex G: (inf + nan j) / (2.5 - 1.25j)
    # was inf + inf j in div and addcdiv, NaN in PyTorch (c10's scaled division); reciprocal already divided as c10
    inf, nan = float("inf"), float("nan")
    num = [complex(inf, nan), complex(inf, 0), complex(1, 2), complex(inf, inf), 0j, complex(nan, 1), 3 + 0j, -2j]
    den = [2.5 - 1.25j, 2.5 - 1.25j, 0j, complex(inf, 1), 0j, 1 + 1j, complex(0, -0.0), complex(-0.0, 0)]
    for dt in ("complex64", "complex128"):
        agree(lambda T: T.tensor(num, dtype=getattr(T, dt)) / T.tensor(den, dtype=getattr(T, dt)),
              lambda T: T.tensor(num, dtype=getattr(T, dt)) / T.tensor(den[0], dtype=getattr(T, dt)),
              lambda T: T.addcdiv(T.ones(8, dtype=getattr(T, dt)), T.tensor(num, dtype=getattr(T, dt)),
                                  T.tensor(den, dtype=getattr(T, dt)), value=0.5),
              lambda T: T.addcdiv(T.tensor([-3.25 + 2.25j, -3 + 0j], dtype=getattr(T, dt)),
                                  T.tensor([inf, 1.0], dtype=T.float64), T.tensor([2.5 - 1.25j], dtype=getattr(T, dt))))
    agree(lambda T: _div_grads(T, T.tensor([1.5, -0.25, 3.0]), T.tensor([0.5, 2.0, -1.25])))


@needs_torch
def test_logsumexp_of_an_empty_half_reduction_is_minus_inf():
    # (math fuzzer seed 90248) the float16/bfloat16 path took the max of the empty reduced dims: RuntimeError
    agree(*[lambda T, dt=dt, kw=kw: T.logsumexp(T.zeros(0, 2, 2, dtype=getattr(T, dt)), **kw)
            for dt in ("float16", "bfloat16") for kw in ({"dim": (0, 1, 2)}, {"dim": 0, "keepdim": True}, {"dim": 1})])


@needs_torch
def test_lapack_info_errors_are_raised_by_a_traced_program():
    # (math fuzzer --compile, seed 90447) inside torchish.compile's program inv, solve and cholesky of a singular or
    # indefinite matrix returned inf/NaN: their LinAlgError (raised eagerly from a concrete info) was skipped
    sing = [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]
    fns = [lambda T, x: T.linalg.inv(x[1]), lambda T, x: T.inverse(x), lambda T, x: T.linalg.solve(x, x[0]),
           lambda T, x: T.linalg.cholesky(x), lambda T, x: T.linalg.cholesky_ex(x, check_errors=True).L]
    for fn in fns:
        try:
            fn(torch, torch.tensor(sing, dtype=torch.float64))
        except Exception as e:  # noqa: BLE001
            ref = str(e)
        for grad in (False, True) if fn is fns[0] else (False,):
            with pytest.raises(torchish.linalg.LinAlgError) as got:
                harness.traced(fn, [torchish.tensor(sing, dtype=torchish.float64, requires_grad=grad)])
            assert str(got.value) == ref, (str(got.value), ref)
    assert_same(torch.linalg.inv(torch.tensor(sing[0])),
                harness.traced(lambda T, x: T.linalg.inv(x), [torchish.tensor(sing[0])]))


@needs_torch
def test_inplace_write_into_an_empty_expanded_tensor_is_allowed():
    # (math fuzzer seed 100159, a widened draw: an in-place target in an expanded layout) an empty tensor is
    # contiguous in PyTorch, so has_internal_overlap says no even with a zero stride over a size > 1
    agree(lambda T: T.zeros(3, 1, 0, dtype=T.bfloat16).expand(3, 3, 0).remainder_(T.zeros(0, dtype=T.uint8)),
          lambda T: T.zeros(3, 1, 0).expand(3, 3, 0).add_(1), lambda T: T.zeros(1, 0).expand(2, 0).copy_(T.ones(2, 0)),
          lambda T: T.zeros(1, 2).expand(2, 2).add_(1))


@needs_torch
def test_ldexp_of_a_floating_exponent_rounds_its_power_as_pytorchs_pow2():
    # (math fuzzer seed 100203) PyTorch's ldexp is mul(input, _pow2(input, other)): 2 ** other in the exponent's
    # dtype for an integer or float32 input (a bfloat16 exponent 2.25 gives 4.75), else in the dtype of a 0-d
    # tensor of the input's dtype raised to it; torchish promoted both first (-1.75 * 2 ** 2.25 = -8.3244, not -8.3125)
    x, e = [-1.75, 0.5, 3.0], [2.25, -1.5, 7.75]
    agree(*[lambda T, a=a, b=b, xs=xs, es=es: T.ldexp(T.tensor(x if xs else x[0]).to(getattr(T, a)),
                                                     T.tensor(e if es else e[0]).to(getattr(T, b)))
            for a in ("float32", "float16", "float64", "int64", "complex64") for b in ("bfloat16", "float32")
            for xs, es in ((1, 1), (1, 0), (0, 1), (0, 0))])


@needs_torch
def test_kron_of_a_transposed_second_operand_fails_its_view_as_pytorch():
    # (math fuzzer seed 100221, a widened draw) PyTorch's kron ends in _unsafe_view, a view: the product, laid out
    # as TensorIterator lays out a row-major input beside a transposed other, cannot be viewed (RuntimeError)
    y = [[-0.5, 1.25], [0.75, 0.0]]
    agree(*[lambda T, f=f: T.kron(*f(T, T.arange(18.0).reshape(3, 6)[:, ::2], T.tensor(y)))
            for f in (lambda T, x, w: (x, w.t()), lambda T, x, w: (x.contiguous(), w.t()), lambda T, x, w: (w.t(), x),
                      lambda T, x, w: (x, w), lambda T, x, w: (w.t(), w.t()), lambda T, x, w: (x[0], w.t()),
                      lambda T, x, w: (x[:0], w.t()), lambda T, x, w: (x.reshape(1, 3, 3), w.t()))])


def _into_view(T, make_out, shape):
    base, out = make_out(T)
    r = T.add(T.ones(shape), T.ones(shape), out=out)
    return base, out, r is out, out.stride(), out.storage_offset()


@needs_torch
def test_out_that_is_a_view_of_another_shape_is_resized_in_its_storage():
    # (math fuzzer seed 100360, a widened draw: an out= tensor in a strided layout) torchish replaced a view out's
    # value with the result's shape but wrote through its view chain (RuntimeError), or broadcast the result into a
    # transposed view of 6 elements; PyTorch resizes the view in place (contiguous at its offset)
    views = [lambda T: (lambda b: (b, b.t()))(T.zeros(2, 3)), lambda T: (lambda b: (b, b[2:4]))(T.zeros(6)),
             lambda T: (lambda b: (b, b[1:3][:0]))(T.zeros(4)), lambda T: (lambda b: (b, b[::2]))(T.zeros(4)),
             lambda T: (lambda b: (b, T.stack([b, b], -1).flatten(-2)[..., ::2]))(T.zeros(0))]
    agree(*[lambda T, v=v, s=s: _into_view(T, v, s) for v in views for s in ((1, 1), (3,))],
          lambda T: T.add(T.ones(3), 1, out=T.zeros(1).expand(2)))  # (an overlapping view is refused, not resized)


@needs_torch
def test_complex_diff_subtracts_as_pytorchs_sub_with_alpha():
    # (math fuzzer seed 110070: diff of a complex128 tensor holding -inf) PyTorch's diff subtracts narrowed views
    # with sub, whose complex kernel adds -1 * lo multiplied out in full: an infinite lo gives a NaN part
    # (1 - (-inf-2.25j) is inf+nanj); torchish subtracted the parts (inf+2.25j)
    x = [complex(-float("inf"), -2.25), 1 + 0j, 2 + 0j, complex(1, float("inf"))]
    agree(*[lambda T, dt=dt, n=n: T.diff(T.tensor(x, dtype=getattr(T, dt)), n) for dt in ("complex64", "complex128")
            for n in (1, 2, 3)],
          lambda T: T.diff(T.ones(2, dtype=T.bool), 2, 0, prepend=T.tensor(x[:2], dtype=T.complex128)),
          lambda T: T.diff(T.tensor(x).reshape(2, 2), dim=0), lambda T: T.diff(T.zeros(0, dtype=T.complex64)))


@needs_torch
def test_bool_times_inf_is_nan_and_integer_ldexp_takes_pytorchs_pow():
    # (math fuzzer seed 110221: ldexp of an int8 tensor by an int64 exponent -2**63) PyTorch's ldexp of an integer
    # or bool input is mul(input, pow(2.0, other)), the power in float32 (2 ** -2**63 is 0, 2 ** 200 is inf);
    # torchish took the float input's std::ldexp kernel, which casts the exponent to int (-2**63 to 0: -2, not -0).
    # Checking it showed bool * inf gave 0, not nan: XLA turns a product with a converted bool into a select
    e = [-9223372036854775808, 200, -200, 3, 2 ** 32 + 1]
    agree(*[lambda T, dt=dt, et=et: T.ldexp(T.tensor([0, 1, 1, 1, 0]).to(getattr(T, dt)),
                                            T.tensor(e).to(getattr(T, et)))
            for dt in ("int8", "bool", "int64", "float32") for et in ("int64", "int32")])
    m = lambda T: T.tensor([False, True, False])  # noqa: E731
    x = lambda T: T.tensor([float("inf"), -float("inf"), float("nan")])  # noqa: E731
    agree(lambda T: m(T) * x(T), lambda T: x(T).half() * m(T), lambda T: T.addcmul(T.zeros(3), m(T), x(T)),
          lambda T: x(T).to(T.complex64) * m(T), lambda T: m(T) * float("inf"),
          lambda T: harness.traced(lambda T, a, b: a.float() * b, [m(T), x(T)]) if T is torchish
          else m(T).float() * x(T))


@needs_torch
def test_complex_mean_divides_by_n_as_c10_complex_division():
    # (math fuzzer --compile, seed 110353: mean of [-inf-0.5j]) PyTorch's mean is sum(...).div_(n), c10's complex
    # division by n + 0j, so an infinite part makes the other part NaN (-inf+nanj); torchish divided the parts
    x = [[complex(-float("inf"), -0.5), 1j], [2 + 1j, complex(1, float("inf"))]]
    agree(*[lambda T, dt=dt, d=d: T.tensor(x, dtype=getattr(T, dt)).mean(*d) for dt in ("complex64", "complex128")
            for d in ((), (0,), (-1, True), ((0, 1),))],
          lambda T: T.tensor(x)[:1, :1].mean(), lambda T: T.zeros(0, 2, dtype=T.complex64).mean(0),
          lambda T: T.tensor([1, 2], dtype=T.int32).mean(dtype=T.complex64))
    agree(lambda T: (lambda a: T.autograd.grad(a.mean(0).real.sum(), a))(T.tensor([[1 + 2j, 3j]], requires_grad=True)))


@needs_torch
def test_complex_exp_and_sigmoid_take_std_exps_special_values():
    # (math fuzzer seed 110270: sigmoid of inf+nanj) PyTorch's complex exp is std::exp (C99 Annex G):
    # exp(-inf + nan j) is 0, exp(inf + nan j) inf + nan j, so sigmoid(inf + nan j) = 1 / (1 + exp(-inf - nan j))
    # is 1; XLA's exp gave NaN
    inf, nan = float("inf"), float("nan")
    z = [complex(-inf, nan), complex(inf, nan), complex(-inf, inf), complex(inf, -inf), complex(nan, 0),
         complex(-inf, 1), complex(inf, 2), 1 + 2j]
    agree(*[lambda T, dt=dt, f=f: getattr(T, f)(T.tensor(z, dtype=getattr(T, dt)))
            for dt in ("complex64", "complex128") for f in ("exp", "sigmoid")],
          lambda T: (lambda a: (a.exp(), T.autograd.grad(a.exp().abs().sum(), a)))(T.tensor([1 + 2j],
                                                                                            requires_grad=True)))


@needs_torch
def test_addbmm_without_batches_and_polynomials_of_a_complex_number_raise_as_pytorch():
    # (math fuzzer seed 120014) addbmm with no batches scales the result in place first (result.mul_(beta)), so an
    # integer input with a float beta raises its cast error even when the result is empty; (seed 120032) a special
    # polynomial of a float tensor and a complex number runs in ComplexFloat: NotImplementedError, as for a complex
    # tensor (torchish dropped the imaginary part)
    i64 = lambda T, *s: T.ones(*s, dtype=T.int64)  # noqa: E731
    agree(*[lambda T, s=s, b=b: T.addbmm(i64(T, *s), i64(T, 0, s[0], 1), i64(T, 0, 1, s[1]), beta=b)
            for s in ((3, 0), (3, 2)) for b in (0.5, 1.0, 0.0, 2)],
          lambda T: T.addbmm(i64(T, 3, 2), i64(T, 1, 3, 0), i64(T, 1, 0, 2), beta=0.5),
          *[lambda T, f=f, n=n: getattr(T.special, f)(T.tensor([0.5, 2.0]), n) for n in (1 + 2j, 2, 2.5)
            for f in ("hermite_polynomial_he", "chebyshev_polynomial_t", "legendre_polynomial_p")],
          lambda T: T.special.laguerre_polynomial_l(1j, T.tensor([2.0])))
