"""Process-wide settings, tensor predicates, ``torchish.backends`` flags and ``torchish.testing.assert_close``
against PyTorch: values read back, error types, and assert_close's verdicts and messages."""
from __future__ import annotations

import re

import numpy as np
import pytest

from oracle import arr, check_raises, needs_torch, run_both, torch, torchish

CPU_ONLY = pytest.mark.skipif(torchish.cuda.is_available() or (torch is not None and torch.cuda.is_available()),
                              reason="compares with PyTorch's CPU-only build (this machine has an accelerator)")


@pytest.fixture(autouse=True)
def _restore_settings():
    libs = [torchish] + ([torch] if torch is not None else [])
    saved = [(lib.get_num_threads(), lib.are_deterministic_algorithms_enabled(),
              lib.is_deterministic_algorithms_warn_only_enabled(), lib.get_float32_matmul_precision(),
              lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic, lib.backends.cudnn.allow_tf32)
             for lib in libs]
    yield
    for lib, (n, det, warn, prec, bench, cdet, tf32) in zip(libs, saved):
        lib.set_num_threads(n)
        lib.use_deterministic_algorithms(det, warn_only=warn)
        lib.set_float32_matmul_precision(prec)
        lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic = bench, cdet
        lib.backends.cudnn.allow_tf32 = tf32


@needs_torch
def test_settings_read_back_as_in_pytorch():
    for lib in (torch, torchish):
        lib.set_num_threads(3)
        lib.use_deterministic_algorithms(True, warn_only=True)
        lib.set_float32_matmul_precision("high")
    for getter in ("get_num_threads", "are_deterministic_algorithms_enabled",
                   "is_deterministic_algorithms_warn_only_enabled", "get_float32_matmul_precision"):
        assert getattr(torchish, getter)() == getattr(torch, getter)(), getter
    for lib in (torch, torchish):
        lib.use_deterministic_algorithms(False)
        with pytest.warns(UserWarning, match="has no effect"):
            lib.set_float32_matmul_precision("fastest")
    assert torchish.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "high"
    assert torchish.are_deterministic_algorithms_enabled() is torch.are_deterministic_algorithms_enabled()


def _precisions(text, op):
    """The precisions of every ``op`` (dot_general, convolution) in StableHLO text (DEFAULT where the printer
    leaves the attribute out)."""
    lines = [line for line in text.splitlines() if f"stablehlo.{op}" in line]
    assert lines, op
    found = [re.search(r"precision = \[(\w+),|precision (\w+)>", line) for line in lines]
    return {(m[1] or m[2]) if m else "DEFAULT" for m in found}


def test_precision_settings_choose_the_programs_precision():
    """PyTorch's defaults: matrix products in full float32, convolutions allowed TF32; its switches change them —
    in eager kernels already cached (JAX's caches are cleared) and in torchish.compile programs."""
    from torchish.nn._functional.linear import _LINEAR
    from torchish.ops import registry
    lin, conv = torchish.nn.Linear(4, 3), torchish.nn.Conv1d(2, 2, 3)
    x, s = torchish.tensor(arr(2, 4)), torchish.tensor(arr(1, 2, 5, seed=1))

    def programs():
        lin(x)
        kernel = next(v[1] for k, v in registry._DISPATCH.items() if k[0] is _LINEAR)
        eager = kernel.lower(x._v, lin.weight._v, lin.bias._v).as_text()
        step = torchish.compile(lambda x, s: lin(x).sum() + conv(s).sum())
        step(x, s)
        step(x, s)
        compiled = step.lower(x, s).as_text()
        return _precisions(eager, "dot_general"), _precisions(compiled, "dot_general"), \
            _precisions(compiled, "convolution")
    assert programs() == ({"HIGHEST"}, {"HIGHEST"}, {"DEFAULT"})
    assert not torchish.backends.cuda.matmul.allow_tf32 and torchish.backends.cudnn.allow_tf32
    torchish.set_float32_matmul_precision("high")
    assert torchish.backends.cuda.matmul.allow_tf32
    torchish.backends.cudnn.allow_tf32 = False
    assert programs() == ({"DEFAULT"}, {"DEFAULT"}, {"HIGHEST"})
    torchish.backends.cuda.matmul.allow_tf32 = False
    assert torchish.get_float32_matmul_precision() == "highest"
    assert programs()[:2] == ({"HIGHEST"}, {"HIGHEST"})


@needs_torch
def test_tf32_switches_read_back_as_in_pytorch():
    for lib in (torch, torchish):
        lib.backends.cuda.matmul.allow_tf32 = True
    assert torchish.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "high"
    for lib in (torch, torchish):
        lib.set_float32_matmul_precision("medium")
    assert torchish.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32 is True
    for lib in (torch, torchish):
        lib.set_float32_matmul_precision("highest")
        lib.backends.cudnn.allow_tf32 = False
    assert torchish.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32 is False
    assert torchish.backends.cudnn.allow_tf32 is torch.backends.cudnn.allow_tf32 is False


def test_matmul_precision_setting_keeps_float32_exact_on_cpu():
    """'medium' permits lower-precision passes; XLA's CPU kernels compute float32 in full (the numbers do not
    change on this backend)."""
    a, b = arr(16, 16), arr(16, 16, seed=1)
    before = (torchish.tensor(a) @ torchish.tensor(b)).numpy()
    torchish.set_float32_matmul_precision("medium")
    after = (torchish.tensor(a) @ torchish.tensor(b)).numpy()
    np.testing.assert_array_equal(before, after)
    np.testing.assert_allclose(after, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("call", [
    lambda T: T.set_num_threads(1.5),
    lambda T: T.use_deterministic_algorithms(1),
    lambda T: T.is_floating_point(3),
    lambda T: T.numel([1, 2]),
    lambda T: T.is_complex("x"),
    lambda T: T.is_nonzero(T.ones(2)),
    lambda T: T.is_nonzero(T.ones(0)),
])
def test_errors_match_pytorch(call):
    check_raises(call)


@needs_torch
def test_predicates_match_pytorch():
    for make in (lambda T: T.ones(2, 3), lambda T: T.zeros(1, dtype=T.int64), lambda T: T.zeros((), dtype=T.bool),
                 lambda T: T.ones(2, dtype=T.complex64), lambda T: T.nn.Parameter(T.ones(2))):
        t, r = make(torchish), make(torch)
        assert torchish.is_tensor(t) is torch.is_tensor(r) is True
        assert torchish.is_floating_point(t) == torch.is_floating_point(r)
        assert torchish.is_complex(t) == torch.is_complex(r)
        assert torchish.numel(t) == torch.numel(r)
        assert torchish.typename(t) == torch.typename(r)
    assert torchish.is_tensor(np.ones(2)) is torch.is_tensor(np.ones(2)) is False
    assert torchish.is_nonzero(torchish.tensor([0.5])) is torch.is_nonzero(torch.tensor([0.5])) is True
    assert torchish.is_nonzero(torchish.tensor(0)) is torch.is_nonzero(torch.tensor(0)) is False
    assert torchish.typename(3) == torch.typename(3) == "int"
    assert torchish.typename(torchish.nn.Linear).endswith(".nn.modules.linear.Linear")


@needs_torch
@CPU_ONLY
def test_backends_flags_as_in_pytorch_cpu_build():
    import torchish.backends.cudnn as cudnn  # importable as a module, as in PyTorch
    assert cudnn is torchish.backends.cudnn
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(cudnn, name) == getattr(torch.backends.cudnn, name), name
    assert torchish.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    # without an accelerator, as PyTorch's CPU build
    assert cudnn.is_available() is torch.backends.cudnn.is_available() is False
    assert cudnn.version() is torch.backends.cudnn.version() is None
    assert torchish.backends.mps.is_available() is torch.backends.mps.is_available() is False
    assert torchish.backends.opt_einsum.enabled is torch.backends.opt_einsum.enabled
    cudnn.benchmark = True
    assert torchish.backends.cudnn.benchmark is True
    with cudnn.flags(enabled=False, deterministic=True):
        assert cudnn.enabled is False and cudnn.deterministic is True
    assert cudnn.enabled is True and cudnn.deterministic is False


CLOSE_CASES = [
    ("same", lambda T: (T.ones(2), T.ones(2)), {}),
    ("within float32 tolerance", lambda T: (T.ones(3), T.ones(3) + 1e-6), {}),
    ("outside", lambda T: (T.ones(2), T.ones(2) + 1e-3), {}),
    ("one of four off", lambda T: (T.arange(4.0), T.tensor([0.0, 1.0, 2.5, 3.0])), {}),
    ("shape", lambda T: (T.ones(2), T.ones(3)), {}),
    ("dtype", lambda T: (T.ones(2), T.ones(2, dtype=T.float64)), {}),
    ("dtype ignored", lambda T: (T.ones(2), T.ones(2, dtype=T.float64)), {"check_dtype": False}),
    ("float64 tight", lambda T: (T.ones(2, dtype=T.float64), T.ones(2, dtype=T.float64) + 1e-6), {}),
    ("ints exact", lambda T: (T.tensor([1, 2]), T.tensor([1, 3])), {}),
    ("explicit tolerances", lambda T: (T.ones(2), T.ones(2) + 1e-3), {"rtol": 0.0, "atol": 1e-2}),
    ("only rtol", lambda T: (T.ones(2), T.ones(2)), {"rtol": 0.1}),
    ("nan", lambda T: (T.tensor([float("nan")]), T.tensor([float("nan")])), {}),
    ("nan equal", lambda T: (T.tensor([float("nan")]), T.tensor([float("nan")])), {"equal_nan": True}),
    ("scalars", lambda T: (1.0, 1.0001), {}),
    ("scalars close", lambda T: (1.0, 1.0 + 1e-9), {}),
    ("list item", lambda T: ([T.ones(1), T.ones(1)], [T.ones(1), T.zeros(1)]), {}),
    ("dict", lambda T: ({"a": T.ones(2)}, {"a": T.ones(2)}), {}),
    ("dict keys", lambda T: ({"a": T.ones(2)}, {"b": T.ones(2)}), {}),
    ("sequence length", lambda T: ([T.ones(1)], [T.ones(1), T.ones(1)]), {}),
    ("custom msg", lambda T: (T.ones(2), T.zeros(2)), {"msg": "custom"}),
    ("complex", lambda T: (T.ones(2, dtype=T.complex64), T.ones(2, dtype=T.complex64) * 1j), {}),
    ("bool", lambda T: (T.tensor([True, False]), T.tensor([True, True])), {}),
    ("0-dim", lambda T: (T.tensor(1.0), T.tensor(2.0)), {}),
    ("0-dim ints", lambda T: (T.tensor(1), T.tensor(3)), {}),
    ("int scalars", lambda T: (1, 2), {}),
]


@needs_torch
@pytest.mark.parametrize("name,make,kw", CLOSE_CASES, ids=[c[0] for c in CLOSE_CASES])
def test_assert_close_matches_pytorch(name, make, kw):
    def outcome(lib):
        try:
            lib.testing.assert_close(*make(lib), **kw)
            return None
        except Exception as e:  # noqa: BLE001 - the outcome (type and message) is what is compared
            return type(e), str(e)
    got, want = outcome(torchish), outcome(torch)
    if want is None:
        assert got is None, got
        return
    assert got is not None and got[0] is want[0], (got, want)
    if want[0] is AssertionError:
        assert got[1] == want[1].replace("torch.", "torchish.") or got[1] == want[1], (got[1], want[1])


def test_vmap_is_func_vmap():
    assert torchish.vmap is torchish.func.vmap
    out = torchish.vmap(lambda r: r.sum())(torchish.ones(3, 2))
    assert out.tolist() == [2.0, 2.0, 2.0]


@needs_torch
@CPU_ONLY
def test_pin_memory_without_accelerator_matches_pytorch():
    check_raises(lambda T: T.ones(2).pin_memory())
    assert torchish.ones(2).is_pinned() is torch.ones(2).is_pinned() is False


@needs_torch
def test_constants_and_version_as_scripts_read_them():
    """torch.pi/e/inf/nan are Python floats; torch.__version__ names the API level (scripts branch on it), with
    torchish's release as the local label; torch.version.cuda is None on a CPU build."""
    import math
    assert [torchish.pi, torchish.e, torchish.inf] == [torch.pi, torch.e, torch.inf]
    assert type(torchish.nan) is type(torch.nan) is float and math.isnan(torchish.nan)
    api = torchish.__version__.split("+")[0]
    assert api.split(".")[:2] == torch.__version__.split("+")[0].split(".")[:2]
    assert torchish.__version__.split("+")[1].startswith("torchish.") and torchish.__version__ >= "2"
    assert torchish.version.__version__ == torchish.__version__ and torchish.version.cuda is None


@needs_torch
def test_version_compares_as_a_version():
    """``torch.__version__ >= "2.2"`` compares release numbers (2.13 > 2.2, which plain strings get wrong), also
    against tuples; an operand that is no version compares as a string; a number is a TypeError."""
    for lib in (torch, torchish):
        v = lib.__version__
        assert type(v).__name__ == "TorchVersion" and isinstance(v, str)
        got = [v >= "2.2", v > "2.13.0a0", v < "2.13.1", v >= (2, 13, 0), v < (2, 14), v == "2.13.0", v < "abc",
               hash(v) == hash(str(v)), {v: 1}[str(v)]]
        assert got == [True, True, True, True, True, False, True, True, 1], (lib.__name__, got)
        with pytest.raises(TypeError):
            v < 2  # noqa: B015
    tv = torchish.torch_version.TorchVersion
    assert tv("1.10") > "1.9" and tv("2.0.0rc1") < "2.0.0" and tv("2.0") == "2.0.0"


def test_get_device_and_conj_match_torch():
    def fn(lib):
        x = lib.tensor([1.0, -2.0])
        c = lib.tensor([1 + 2j, 3 - 1j])
        return [x.get_device(), x.conj() is x, lib.conj(x) is x, c.conj().tolist(), lib.conj(c).tolist(),
                x.resolve_conj().tolist(), c.conj().resolve_conj().tolist(), x.is_conj()]
    ref, got = run_both(fn)
    assert got == ref


def test_data_ptr_relations_match_torch():
    """Absolute addresses differ between libraries; what scripts test does not: offsets of views from their base,
    tied weights sharing one address, a clone having another."""
    def fn(lib):
        x = lib.arange(12.).reshape(3, 4)
        emb, lin = lib.nn.Embedding(5, 3), lib.nn.Linear(3, 5, bias=False)
        lin.weight = emb.weight
        return [x[1].data_ptr() - x.data_ptr(), x[:, 2].data_ptr() - x.data_ptr(), x.view(-1).data_ptr() == x.data_ptr(),
                lin.weight.data_ptr() == emb.weight.data_ptr(), x.clone().data_ptr() == x.data_ptr(),
                lib.ones(0).data_ptr()]
    ref, got = run_both(fn)
    assert got == ref


@needs_torch
def test_deterministic_debug_mode_and_openmp():
    for lib in (torch, torchish):
        try:
            got = []
            for mode in ("warn", 2, "default", 1, 0):
                lib.set_deterministic_debug_mode(mode)
                got.append((lib.get_deterministic_debug_mode(), lib.are_deterministic_algorithms_enabled(),
                            lib.is_deterministic_algorithms_warn_only_enabled()))
            assert got == [(1, True, True), (2, True, False), (0, False, False), (1, True, True), (0, False, False)]
            for bad, err in (("x", RuntimeError), (3, RuntimeError), (1.0, TypeError)):
                with pytest.raises(err, match="debug_mode"):
                    lib.set_deterministic_debug_mode(bad)
            assert lib.backends.openmp.is_available()
        finally:
            lib.set_deterministic_debug_mode(0)
