"""Two references for every test: real PyTorch (values, gradients, dtypes, shapes, error types) and maths
(finite differences / ``jax.grad``).

``check(fn, inputs)`` runs ``fn(lib, *tensors)`` once with PyTorch and once with torchish on the same numpy
inputs, compares the outputs, then backpropagates the same deterministic cotangent through both and compares the
input gradients. ``check_raises(fn, inputs)`` asserts both raise the same builtin exception type. Without torch
installed, the oracle comparisons skip (``needs_torch``) and the finite-difference checks still run.
"""
from __future__ import annotations

import builtins
import os

import numpy as np
import pytest

import torchish

try:
    import torch
except ImportError:  # the oracle is optional: tests that need it skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")

# The vector ISA PyTorch's CPU kernels were dispatched for on this host ("AVX512", "AVX2", ...). A few of PyTorch's
# results differ with it (8 float lanes instead of 16 change half-precision accumulation orders, its AVX2 logit/sgn
# give other signed zeros and infinities, oneDNN's float8 and bfloat16 LSTM paths exist only with AVX-512); the
# checks torchish was matched against on an AVX-512 host skip elsewhere through :func:`needs_avx512_torch`.
TORCH_CPU = torch.backends.cpu.get_cpu_capability() if torch is not None else None


def needs_avx512_torch(what):
    """Skip the calling check where PyTorch's kernels run below AVX-512 here: ``what`` says which of its results
    differ with the host's ISA (torchish follows PyTorch's AVX-512 build)."""
    if TORCH_CPU is not None and not TORCH_CPU.startswith("AVX512"):
        pytest.skip(f"PyTorch's CPU kernels run at {TORCH_CPU} on this host, where {what} differs from its AVX-512 "
                    "kernels, which torchish follows")


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), None)
    except OSError:
        return None


CPU_FLAGS = _cpu_flags()  # (None where the host does not say)


def needs_avx512_fp16_torch(what):
    """Skip the calling check unless the CPU has AVX-512 FP16 (an Intel Sapphire Rapids class CPU, the host these
    checks were matched on): on an AMD EPYC with AVX-512 but no FP16, PyTorch's float16 products (oneDNN)
    accumulate in another order, ``_scaled_mm`` runs another implementation with other checks and messages, and
    RMSprop's float32 steps round differently. ``what`` says which result differs."""
    needs_avx512_torch(what)
    if CPU_FLAGS is not None and "avx512_fp16" not in CPU_FLAGS:
        pytest.skip(f"this CPU has no AVX-512 FP16, where {what} differs from PyTorch's kernels that torchish follows")


def arr(*shape, seed=0, lo=-1.0, hi=1.0, dtype=np.float32):
    """Deterministic inputs from numpy (never from a framework's RNG)."""
    rng = np.random.default_rng(seed)
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(int(lo), int(hi), size=shape).astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return rng.uniform(size=shape) > 0.5
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def tol(dtype_name):
    if dtype_name in ("float64", "complex128"):
        return dict(rtol=1e-7, atol=1e-9)
    if dtype_name in ("float16", "bfloat16"):
        return dict(rtol=1e-2, atol=1e-2)
    return dict(rtol=2e-4, atol=2e-5)


def to_numpy(x):
    """Tensor (either library) -> numpy, detached."""
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.detach().resolve_conj().resolve_neg()
        if x._is_zerotensor():  # (autograd may return PyTorch's immutable ZeroTensor for a gradient)
            x = torch.zeros(x.shape, dtype=x.dtype)
        if x.dtype == torch.bfloat16:
            x = x.float()
        return x.cpu().numpy()
    if isinstance(x, torchish.Tensor):
        x = x.detach().resolve_conj().resolve_neg()  # (numpy() refuses both bits, as torch's)
        if x.dtype == torchish.bfloat16:
            x = x.float()
        return x.numpy()
    return np.asarray(x)


def dtype_name(x):
    return str(x.dtype).split(".")[-1]


def assert_same(ref, got, path="out", **tols):
    """Compare a torch result with a torchish result: structure, dtype names, shapes and values."""
    if torch is not None and isinstance(ref, torch.Tensor):
        assert isinstance(got, torchish.Tensor), f"{path}: expected a Tensor, got {type(got).__name__}"
        assert dtype_name(got) == dtype_name(ref), f"{path}: dtype {dtype_name(got)} != torch's {dtype_name(ref)}"
        assert tuple(got.shape) == tuple(ref.shape), f"{path}: shape {tuple(got.shape)} != torch's {tuple(ref.shape)}"
        a, b = to_numpy(ref), to_numpy(got)
        if a.dtype.kind in "fc":
            t = {**tol(dtype_name(ref)), **tols}
            np.testing.assert_allclose(b, a, equal_nan=True, err_msg=path, **t)
        else:
            np.testing.assert_array_equal(b, a, err_msg=path)
    elif isinstance(ref, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{path}: expected a sequence, got {type(got).__name__}"
        assert len(ref) == len(got), f"{path}: length {len(got)} != torch's {len(ref)}"
        for i, (r, g) in enumerate(zip(ref, got)):
            assert_same(r, g, f"{path}[{i}]", **tols)
    elif isinstance(ref, dict):
        assert set(ref) == set(got), f"{path}: keys {sorted(got)} != torch's {sorted(ref)}"
        for k in ref:
            assert_same(ref[k], got[k], f"{path}[{k!r}]", **tols)
    elif isinstance(ref, float):
        assert np.isclose(got, ref, rtol=2e-4, atol=2e-5, equal_nan=True), f"{path}: {got} != torch's {ref}"
    elif torch is not None and isinstance(ref, torch.Size):
        assert tuple(got) == tuple(ref), f"{path}: {tuple(got)} != torch's {tuple(ref)}"
    elif torch is not None and isinstance(ref, torch.dtype):
        assert str(got) == str(ref), f"{path}: {got} != torch's {ref}"
    else:
        assert got == ref, f"{path}: {got!r} != torch's {ref!r}"


def _make_inputs(lib, inputs, grad):
    out = []
    for i, x in enumerate(inputs):
        if isinstance(x, np.ndarray):
            t = lib.tensor(x)
            if (grad is True or grad and grad is not False and i in grad) and x.dtype.kind == "f":
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(x)
    return out


def _flat_tensors(out, lib):
    if isinstance(out, lib.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flat_tensors(o, lib)]
    return []


def check(fn, inputs, grad=True, seed=123, **tols):
    """Compare ``fn(lib, *tensors)`` between PyTorch and torchish: outputs, then input gradients.

    ``inputs`` is a list of numpy arrays (become tensors; float ones require grad when ``grad`` is True, or when
    their position is in ``grad``) and plain Python values (passed as they are). Gradients are taken with the same random cotangent on every float output.
    """
    if torch is None:
        pytest.skip("PyTorch (the oracle) is not installed")
    tin = _make_inputs(torch, inputs, grad)
    xin = _make_inputs(torchish, inputs, grad)
    ref = fn(torch, *tin)
    got = fn(torchish, *xin)
    assert_same(ref, got, **tols)
    if not grad:
        return ref, got
    touts = [t for t in _flat_tensors(ref, torch) if t.requires_grad]
    xouts = [t for t in _flat_tensors(got, torchish) if t.requires_grad]
    assert len(touts) == len(xouts), f"{len(xouts)} outputs require grad, torch has {len(touts)}"
    if not touts:
        return ref, got
    rng = np.random.default_rng(seed)
    cots = [rng.uniform(-1, 1, size=tuple(t.shape)).astype(to_numpy(t).dtype) for t in touts]
    tleaves = [t for t in tin if isinstance(t, torch.Tensor) and t.requires_grad]
    xleaves = [t for t in xin if isinstance(t, torchish.Tensor) and t.requires_grad]
    if not tleaves:
        return ref, got
    tg = torch.autograd.grad(touts, tleaves, [torch.tensor(c) for c in cots], allow_unused=True)
    xg = torchish.autograd.grad(xouts, xleaves, [torchish.tensor(c) for c in cots], allow_unused=True)
    for i, (a, b) in enumerate(zip(tg, xg)):
        if a is None:
            assert b is None or not np.any(to_numpy(b)), f"grad[{i}]: torch has none, torchish {b}"
            continue
        assert b is not None, f"grad[{i}]: torchish returned None, torch {a}"
        assert_same(a, b, f"grad[{i}]", **tols)
    if CHECK_SAVED:
        check_saved(fn, inputs)
    return ref, got


# The saved-tensor audit (``check_saved`` after every ``check``) is opt-in: it runs each op's forward and backward
# once per input and output again. TORCHISH_CHECK_SAVED=1 asserts; a path ending in .tsv logs the mismatches there.
# tests/test_saved_tensors.py checks the same per op in every run.
CHECK_SAVED = os.environ.get("TORCHISH_CHECK_SAVED", "")


def _saved_outcomes(lib, fn, inputs):
    """What happens when each Tensor input, then each output, is written in place (under no_grad) between the
    forward and the backward — which of them the op saved for its backward — and on a second backward. One
    entry per target: None (the backward ran) or the exception type's name. Inputs that require grad are given as
    non-leaves (``clone()``), so that writing them is allowed."""
    def forward():
        ins = []
        for x in inputs:
            if isinstance(x, np.ndarray):
                t = lib.tensor(x)
                ins.append(t.requires_grad_(True).clone() if x.dtype.kind == "f" else t)
            else:
                ins.append(x)
        outs = _flat_tensors(fn(lib, *ins), lib)
        return ins, outs

    def backward(outs, **kw):
        loss = sum(o.sum() for o in outs if o.requires_grad)
        loss.backward(**kw)

    ins, outs = forward()
    if not any(o.requires_grad for o in outs):
        return None
    targets = [("in", i) for i, t in enumerate(ins) if isinstance(t, lib.Tensor)]
    targets += [("out", j) for j in range(len(outs))]
    result = {}
    for kind, i in targets:
        ins, outs = forward()
        t = ins[i] if kind == "in" else outs[i]
        try:
            with lib.no_grad():
                t.copy_(t.clone())
        except Exception:  # noqa: BLE001  (an expanded or otherwise unwritable tensor: nothing to compare)
            result[(kind, i)] = "unwritable"
            continue
        try:
            backward(outs)
            result[(kind, i)] = None
        except Exception as e:  # noqa: BLE001
            result[(kind, i)] = type(e).__name__
    ins, outs = forward()
    try:
        backward(outs)
        backward(outs)
        result["twice"] = None
    except Exception as e:  # noqa: BLE001
        result["twice"] = type(e).__name__
    return result


def check_saved(fn, inputs):
    """PyTorch's saved-tensor behaviour: the same in-place writes after the forward make the backward fail (or
    not), and a second backward fails (or not), in both libraries."""
    ref = _saved_outcomes(torch, fn, inputs)
    got = _saved_outcomes(torchish, fn, inputs)
    if ref is None:
        return
    got = {k: v for k, v in (got or {}).items() if ref.get(k) != "unwritable"}
    ref = {k: v for k, v in ref.items() if v != "unwritable"}
    if CHECK_SAVED.endswith(".tsv"):
        if got != ref:
            with open(CHECK_SAVED, "a") as f:
                f.write(f"{os.environ.get('PYTEST_CURRENT_TEST')}\t{got}\t{ref}\n")
        return
    assert got == ref, f"saved tensors: torchish {got} != torch's {ref}"


def run_both(fn, *args):
    """Run ``fn(lib, *args)`` with both libraries; return (torch result, torchish result)."""
    if torch is None:
        pytest.skip("PyTorch (the oracle) is not installed")
    return fn(torch, *args), fn(torchish, *args)


def error_family(e):
    """The builtin exception class an error derives from (what torch and torchish must agree on)."""
    t = type(e)
    while t.__module__ != "builtins":
        t = t.__mro__[1]
    return t


def outcome(fn):
    """The name of the builtin exception family ``fn()`` raises, or "ok": what a script's try/except sees."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the family is the outcome
        return error_family(e).__name__
    return "ok"


def check_raises(fn, *args, match=None):
    """Both libraries raise, with the same builtin exception type (torchish's message optionally matched)."""
    if torch is None:
        pytest.skip("PyTorch (the oracle) is not installed")
    with pytest.raises(Exception) as ref:
        fn(torch, *args)
    ref_type = error_family(ref.value)
    with pytest.raises(ref_type, match=match):
        fn(torchish, *args)
    return ref.value


def numeric_grad(f, x: np.ndarray, eps=1e-6):
    """Central finite differences of scalar ``f`` (numpy float64 in, float out) at ``x``."""
    x = x.astype(np.float64)
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def check_fd(fn, *inputs, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Gradient of ``sum(fn(*tensors) * w)`` from torchish's backward vs central differences, in float64."""
    xs = [np.asarray(x, np.float64) for x in inputs]
    out0 = fn(*[torchish.tensor(x) for x in xs])
    w = np.random.default_rng(7).uniform(-1, 1, size=tuple(out0.shape))

    def scalar(i):
        def f(xi):
            args = [torchish.tensor(xi if j == i else x) for j, x in enumerate(xs)]
            return float((fn(*args) * torchish.tensor(w)).sum())
        return f

    ts = [torchish.tensor(x, requires_grad=True) for x in xs]
    (fn(*ts) * torchish.tensor(w)).sum().backward()
    for i, t in enumerate(ts):
        np.testing.assert_allclose(t.grad.numpy(), numeric_grad(scalar(i), xs[i], eps), rtol=rtol, atol=atol,
                                   err_msg=f"input {i}")


def _formula(dtype, n, fn, step, adds, scale=1.0):
    """``fn(arange(n) * step + adds[0] + adds[1] ...) * scale`` in float32/float64 ``dtype``, computed outside the
    library under test and returned as a numpy array: by PyTorch's CPU ops when PyTorch is installed (the values
    the formula always gave PyTorch), by numpy otherwise. None for other dtypes (float16, bfloat16, complex...),
    whose formulas run in the library."""
    name = str(dtype).split(".")[-1]
    if name not in ("float32", "float64"):
        return None
    if torch is not None:
        x = torch.arange(n, dtype=getattr(torch, name)) * step
        for a in adds:
            x = x + a
        return (getattr(torch, fn)(x) * scale).numpy()
    t = getattr(np, name)
    x = np.arange(n, dtype=t) * t(step)
    for a in adds:
        x = x + t(a)
    return getattr(np, fn)(x) * t(scale)


def formula_init(lib, module, seed=0, scale=0.4, in_library=False):
    """Every parameter of ``module`` from a formula (sin of its flat index), in parameters() order: the same weights
    in both libraries without copying arrays between them. float32/float64 values are computed once outside the
    library under test (:func:`_formula`) and given to both: computing them with each library's ops compiled a
    kernel per parameter shape for each of mul/add/sin/mul/reshape, 7-23% of a probe script's XLA compiles; other
    dtypes (and ``in_library=True``) compute the formula with the library's ops."""
    with lib.no_grad():
        for i, p in enumerate(module.parameters()):
            v = None if in_library else _formula(p.dtype, p.numel(), "sin", 0.731, (1.3 * i, seed), scale)
            if v is None:
                idx = lib.arange(p.numel(), dtype=p.dtype)
                p.copy_((lib.sin(idx * 0.731 + 1.3 * i + seed) * scale).reshape(p.shape))
            else:
                p.copy_(lib.tensor(v.reshape(tuple(p.shape))))
    return module


def formula_data(lib, *shape, seed=0, dtype=None, in_library=False):
    """Deterministic input values from a formula (cos of the flat index); float32/float64 computed outside the
    library, as in :func:`formula_init`."""
    n = int(np.prod(shape))
    v = None if in_library else _formula(dtype or lib.float32, n, "cos", 0.417, (seed,))
    if v is None:
        return lib.cos(lib.arange(n, dtype=dtype or lib.float32) * 0.417 + seed).reshape(shape)
    return lib.tensor(v.reshape(shape))


def _script_outcome(fn, lib, jit):
    try:
        return "ok", (fn(lib, jit) if fn.__code__.co_argcount == 2 else fn(lib))
    except Exception as e:  # noqa: BLE001 - the builtin family is the outcome
        return "raised", error_family(e)


def assert_script_matches(fn, torch_may_raise=True):
    """A probe script ``fn(lib)`` or ``fn(lib, jit)`` (``jit``: torchish.compile, the identity for torch) gives
    torch's results, or raises the builtin exception family torch raises (unless ``torch_may_raise`` is False: a
    program that raises inside torch compares only the error family, which a whole program must not do by
    accident)."""
    ref, got = _script_outcome(fn, torch, lambda f: f), _script_outcome(fn, torchish, torchish.compile)
    assert ref[0] == "ok" or torch_may_raise, \
        f"{fn.__name__} raises {ref[1].__name__} in torch itself: fix the program, or name it *_raises"
    if ref[0] == "raised":
        assert got[0] == "raised" and issubclass(got[1], ref[1]), f"torch raised {ref[1]}, torchish gave {got}"
        return
    assert got[0] == "ok", f"torchish raised {got[1].__name__}"
    assert_same(ref[1], got[1])


def script_test(namespace, avx512=None, avx512_fp16=None):
    """A probe-script module's test: ``test_script_matches_torch`` parametrized over the module's ``case_*``
    functions (defined above the call), each checked by :func:`assert_script_matches`. ``avx512`` (and
    ``avx512_fp16``) map the names of cases whose PyTorch results depend on the host's ISA to what differs (see
    :func:`needs_avx512_torch`, :func:`needs_avx512_fp16_torch`)."""
    cases = {name[5:]: fn for name, fn in sorted(namespace.items()) if name.startswith("case_")}
    avx512, avx512_fp16 = avx512 or {}, avx512_fp16 or {}

    @needs_torch
    @pytest.mark.parametrize("name", sorted(cases))
    def test_script_matches_torch(name):
        if name in avx512:
            needs_avx512_torch(avx512[name])
        if name in avx512_fp16:
            needs_avx512_fp16_torch(avx512_fp16[name])
        assert_script_matches(cases[name], torch_may_raise="raise" in name)
    return test_script_matches_torch


def same(fn, **tols):
    """``fn(lib)`` returns equal results (values, dtypes, shapes, structure) with PyTorch and torchish."""
    ref, got = run_both(fn)
    assert_same(ref, got, **tols)


def torch_one_thread():
    """Generator for an autouse fixture: PyTorch runs single-threaded for the test (its CPU kernels' vectorised
    remainders and reduction order then do not depend on the thread split), restored after."""
    if torch is None:
        yield
        return
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def logging_subclass(lib, record=lambda func, types, args, kwargs: func):
    """``(cls, log)``: a Tensor subclass of ``lib`` whose ``__torch_function__`` appends ``record(func, types, args,
    kwargs)`` to ``log`` and then runs Tensor's default (results as the subclass)."""
    log = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(record(func, types, args, kwargs))
            return super().__torch_function__(func, types, args, kwargs or {})
    return Logged, log


def raised(fn):
    """``(exception type name, message)`` of what ``fn()`` raises, or None: a probe script's outcome for an error."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return type(e).__name__, str(e)
    return None


def same_error(fn):
    """Both libraries raise the same builtin exception type, with the same message."""
    err = check_raises(fn)
    with pytest.raises(Exception) as got:
        fn(torchish)
    assert str(got.value) == str(err), f"message {str(got.value)!r} != torch's {str(err)!r}"


def _drawn(x):
    """``(numpy values, dtype name)`` of a drawn tensor (bfloat16 as float32 values)."""
    x = x.detach()
    if str(x.dtype).endswith("bfloat16"):
        return x.float().numpy(), "bfloat16"
    return x.numpy(), str(x.numpy().dtype)


def same_draws(fn, seed=0, **tols):
    """Seed both libraries with ``seed``, run ``fn(lib)`` (a tensor or a list of tensors) and compare dtypes, shapes and
    values (``tols`` for ``assert_allclose``; complex as their real views), then the next draws, ``rand(3)`` and
    ``randn(1)``: equal ones show that both used as many words of the stream and left the same cached normal."""
    outs = []
    for lib in (torch, torchish):
        lib.manual_seed(seed)
        got = fn(lib)
        got = got if isinstance(got, (list, tuple)) else [got]
        outs.append(([_drawn(g) for g in got], lib.rand(3).numpy(), lib.randn(1).numpy()))
    (ref, *ref_next), (mine, *mine_next) = outs
    assert len(ref) == len(mine)
    for (r, rdt), (m, mdt) in zip(ref, mine):
        assert rdt == mdt and r.shape == m.shape, (rdt, r.shape, mdt, m.shape)
        if r.dtype.kind == "c":
            r, m = r.view(r.real.dtype), m.view(m.real.dtype)
        np.testing.assert_allclose(m.astype(np.float64), r.astype(np.float64), **tols)
    for r, m in zip(ref_next, mine_next):
        np.testing.assert_array_equal(m, r)


__all__ = ["torch", "torchish", "needs_torch", "torch_one_thread", "arr", "check", "check_raises", "check_fd", "run_both",
           "assert_same", "same", "same_error", "raised", "to_numpy", "numeric_grad", "builtins", "formula_init",
           "formula_data", "error_family", "assert_script_matches", "script_test", "same_draws"]


def compile_three_ways(case, eager=True, expect=None):
    """``case(T, jit)`` run by PyTorch (``jit`` the identity), by torchish eagerly (with ``eager``) and by torchish
    with ``torchish.compile``: the results must match PyTorch's. The compiled run may warn only where ``expect`` (a
    regular expression one of its warnings must match) says so. Returns the compiled functions' statistics."""
    import re
    import warnings

    def ident(fn=None, **kw):
        return fn if fn is not None else (lambda f: f)
    made = []

    def jit(fn=None, **kw):
        if fn is None:
            return lambda f: jit(f, **kw)
        made.append(torchish.compile(fn, **kw))
        return made[-1]
    ref = case(torch, ident)
    if eager:
        assert_same(ref, case(torchish, ident), "eager")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always" if expect else "error")  # (no graph break, no retrace warning unless expected)
        got = case(torchish, jit)
    if expect:
        assert any(re.search(expect, str(w.message)) for w in caught), [str(w.message) for w in caught]
    assert_same(ref, got, "compiled")
    return [dict(getattr(c, "stats", None) or c._compiled_call.stats) for c in made]


def graph_walk(fn, depth=6):
    """The names of ``fn``'s autograd graph, depth-first over ``next_functions`` (None for a missing edge, or past
    ``depth``): what graph-walking code (torchviz, the 60-minute blitz's prints) sees."""
    out = []

    def rec(f, d):
        if f is None or d > depth:
            out.append(None)
            return
        out.append(type(f).__name__)
        for nf, _ in f.next_functions:
            rec(nf, d + 1)
    rec(fn, 0)
    return out
