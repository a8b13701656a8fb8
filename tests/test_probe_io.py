"""Regression tests from differential probing of printing, ``utils.data`` and ``save``/``load`` against PyTorch."""
from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import torchish
from oracle import error_family, needs_torch, torch


def _saved(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


def _outcome(fn):
    """``("ok", value)`` or ``("raise", exception family names)``."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the outcome is data
        return "raise", {c.__name__ for c in type(e).__mro__}


# ----------------------------------------------------------------------------------------------------------------
# save / load


@needs_torch
def test_parameter_comes_back_as_parameter():
    for lib in (torch, torchish):
        p = lib.nn.Parameter(lib.ones(2))
        frozen = lib.nn.Parameter(lib.zeros(1), requires_grad=False)
        got = lib.load(io.BytesIO(_saved(lib, [p, p, frozen, lib.ones(1, requires_grad=True)])))
        assert [type(t).__name__ for t in got] == ["Parameter", "Parameter", "Parameter", "Tensor"], lib
        assert [t.requires_grad for t in got] == [True, True, False, True]
        assert got[0] is got[1]
        assert repr(got[0]) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
    # a PyTorch checkpoint's Parameters, read by torchish
    got = torchish.load(io.BytesIO(_saved(torch, {"p": torch.nn.Parameter(torch.ones(2))})))
    assert type(got["p"]) is torchish.nn.Parameter and got["p"].requires_grad


@needs_torch
@pytest.mark.parametrize("value", [np.arange(3, dtype=np.int16), np.float64(1.5), np.array(2.0)])
def test_numpy_values_need_weights_only_false(value):
    for lib in (torch, torchish):
        blob = _saved(lib, {"v": value, "t": lib.ones(1)})
        for reader in (torch, torchish) if lib is torch else (torchish,):
            for kw in ({}, {"weights_only": True}):
                with pytest.raises(pickle.UnpicklingError):
                    reader.load(io.BytesIO(blob), **kw)
            got = reader.load(io.BytesIO(blob), weights_only=False)["v"]
            assert type(got) is type(value) and got.dtype == value.dtype
            np.testing.assert_array_equal(got, value)


def test_load_reads_one_object_from_a_stream_holding_several():
    # PyTorch reads the first of two small objects saved into one stream (and fails on some others); torchish
    # reads each in turn, and raises EOFError at the end as PyTorch does on an exhausted stream
    buf = io.BytesIO()
    torchish.save(1, buf)
    torchish.save([2], buf)
    buf.seek(0)
    assert (torchish.load(buf), torchish.load(buf)) == (1, [2])
    status, families = _outcome(lambda: torchish.load(buf))   # at the end of the stream, as PyTorch
    assert status == "raise" and "EOFError" in families


@needs_torch
def test_empty_and_unknown_files_raise_pytorchs_exception_families():
    for blob, family in ((b"", "EOFError"), (b"not a checkpoint at all", "UnpicklingError")):
        ref = _outcome(lambda: torch.load(io.BytesIO(blob)))
        got = _outcome(lambda: torchish.load(io.BytesIO(blob)))
        assert ref[0] == got[0] == "raise" and family in ref[1] and family in got[1]
        assert "RuntimeError" in got[1]  # and still the RuntimeError torchish documents
        with pytest.raises(Exception) as ref_err:
            torch.load(io.BytesIO(blob))
        with pytest.raises(Exception) as got_err:
            torchish.load(io.BytesIO(blob))
        assert error_family(got_err.value) is error_family(ref_err.value)  # (the first builtin class: PyTorch's)


# ----------------------------------------------------------------------------------------------------------------
# printing (a sample of the probed cases, all matching)


_REPRS = [
    lambda T: T.tensor([[1, -2, 3], [0, 5, 7]], dtype=T.int8),
    lambda T: T.tensor([float("inf"), float("nan"), -0.0, 1.5], dtype=T.float16),
    lambda T: T.tensor([1e-10, 1.0], dtype=T.bfloat16),
    lambda T: T.tensor([[1 + 2j, 3.33 - 4j], [5j, -6]]),
    lambda T: T.arange(3000.).reshape(10, 10, 30),
    lambda T: T.zeros(2, 0, 3, dtype=T.int32),
    lambda T: T.tensor([1., 2.], dtype=T.float64, requires_grad=True) * 3,
    lambda T: T.tensor(-0.0, dtype=T.float16),
    lambda T: T.nn.Parameter(T.zeros(0)),
]


@needs_torch
@pytest.mark.parametrize("make", _REPRS)
def test_repr_matches_torch(make):
    assert repr(make(torchish)) == repr(make(torch))


@needs_torch
def test_printoptions_match_torch():
    def text(T):
        out = []
        try:
            T.set_printoptions(precision=2, threshold=10, edgeitems=2, linewidth=30)
            out += [str(T.arange(60).reshape(3, 4, 5)), str(T.arange(30.) / 7)]
            T.set_printoptions(profile="short")
            out.append(str(T.arange(2000.)))
            T.set_printoptions(profile="default", sci_mode=True)
            out.append(str(T.tensor([1.5, 2.])))
        finally:
            T.set_printoptions(profile="default")
            T.set_printoptions(sci_mode=None)
        return out
    assert text(torchish) == text(torch)


# ----------------------------------------------------------------------------------------------------------------
# utils.data (a sample of the probed cases, all matching)


@needs_torch
def test_default_collate_types_match_torch():
    def run(T):
        c = T.utils.data.default_collate
        out = []
        for batch in ([1, 2], [1.5, 2.5], [True, False], [np.float32(1.5)] * 2, [np.array([1, 2], np.uint8)] * 2,
                      [{"a": 1, "b": (np.zeros(1), "s")}] * 2):
            out.append(repr(c(batch)))
        for bad in ([[1, 2], [3]], [None, None], [np.array(["a"])] * 2):
            out.append(_outcome(lambda: c(bad))[1] & {"RuntimeError", "TypeError"})
        return out
    assert run(torchish) == run(torch)
