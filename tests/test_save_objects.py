"""``save`` of arbitrary picklable objects (whole modules, optimizers, schedulers, dataclasses, Namespaces,
``defaultdict``...) and ``load``'s weights-only allow-list and safe globals, against torch 2.13."""
from __future__ import annotations

import argparse
import collections
import dataclasses
import io
import os
import pickle

import numpy as np
import pytest

from oracle import arr, needs_torch, to_numpy, torch, torchish


@dataclasses.dataclass
class Config:
    lr: float = 0.1
    layers: tuple = (3, 4)


Point = collections.namedtuple("Point", "x y")


class _NetBody:
    def build(self, T):
        self.fc = T.nn.Linear(3, 4)
        self.bn = T.nn.BatchNorm1d(4)
        self.out = T.nn.Linear(4, 2)
        self.alias = self.out  # one submodule reached twice
        self.register_buffer("scale", T.tensor([2.0]))
        for i, p in enumerate(self.parameters()):
            with T.no_grad():
                p.copy_(T.tensor(arr(*p.shape, seed=i)))

    def forward(self, x):
        return self.out(self.bn(self.fc(x)).relu()) * self.scale


class XNet(_NetBody, torchish.nn.Module):
    def __init__(self):
        super().__init__()
        self.build(torchish)


if torch is not None:
    class TNet(_NetBody, torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.build(torch)


_HOOK = lambda *args: None  # noqa: E731 - a lambda at module level: pickle's PicklingError


def _blob(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


def _outcome(lib, blob, **kw):
    """``("ok", loaded)`` or ``("raise", (exception type name, message before the global's name))``."""
    try:
        return "ok", lib.load(io.BytesIO(blob), **kw)
    except Exception as e:  # noqa: BLE001 - the outcome is data
        return "raise", (type(e).__mro__, str(e))


OBJECTS = {
    "slice": lambda T: slice(1, 5, 2), "range": lambda T: range(3), "bytearray": lambda T: bytearray(b"ab"),
    "ellipsis": lambda T: ..., "set": lambda T: {1, 2}, "frozenset": lambda T: frozenset({"a"}),
    "defaultdict": lambda T: collections.defaultdict(list, a=[T.ones(2)]),
    "ordereddict": lambda T: collections.OrderedDict(b=1, a=T.zeros(1)), "counter": lambda T: collections.Counter("aab"),
    "namespace": lambda T: argparse.Namespace(lr=0.5, w=T.ones(2)), "dataclass": lambda T: Config(),
    "namedtuple": lambda T: Point(1, 2), "deque": lambda T: collections.deque([1, 2]), "complex": lambda T: 1 - 2j,
    "bigint": lambda T: 2 ** 70, "size": lambda T: T.Size([2, 3]), "dtype": lambda T: T.float16,
    "nested": lambda T: {"cfg": Config(lr=0.2), "w": [T.ones(1)], "s": slice(None)},
}


def _same(a, b):
    if torch is not None and isinstance(a, torch.Tensor):
        return isinstance(b, torchish.Tensor) and np.array_equal(to_numpy(a), to_numpy(b))
    if isinstance(a, (dict, argparse.Namespace)) or dataclasses.is_dataclass(a):
        da, db = (x if isinstance(x, dict) else vars(x) for x in (a, b))
        return type(a).__name__ == type(b).__name__ and list(da) == list(db) and all(
            _same(da[k], db[k]) for k in da)
    if isinstance(a, (list, tuple, collections.deque)):
        return type(a).__name__ == type(b).__name__ and len(a) == len(b) and all(map(_same, a, b))
    return type(a).__name__ == type(b).__name__ and (str(a) == str(b) if "dtype" in type(a).__name__ else a == b)


@needs_torch
@pytest.mark.parametrize("name", list(OBJECTS))
def test_objects_round_trip_and_weights_only_as_torch(name):
    make = OBJECTS[name]
    ref_blob, blob = _blob(torch, make(torch)), _blob(torchish, make(torchish))
    for kw in ({}, {"weights_only": True}, {"weights_only": False}):
        ref, got = _outcome(torch, ref_blob, **kw), _outcome(torchish, blob, **kw)
        assert ref[0] == got[0], (kw, ref, got)
        if ref[0] == "ok":
            assert _same(ref[1], got[1]), (kw, ref[1], got[1])
            if name == "defaultdict":
                assert got[1].default_factory is list
        else:
            assert pickle.UnpicklingError in got[1][0]
            assert got[1][1] == ref[1][1]  # the same message, global named alike (no torch class involved)
        # torchish reads torch's file the same way
        if ref[0] == "ok":
            assert _same(ref[1], torchish.load(io.BytesIO(ref_blob), **kw))
        else:
            assert _outcome(torchish, ref_blob, **kw)[1][1] == ref[1][1]


@needs_torch
def test_safe_globals_let_classes_through_as_torch():
    obj = {"cfg": Config(), "args": argparse.Namespace(a=1)}
    for lib in (torch, torchish):
        blob = _blob(lib, obj)
        ser = lib.serialization
        assert sorted(ser.get_unsafe_globals_in_checkpoint(io.BytesIO(blob))) == [
            "argparse.Namespace", "test_save_objects.Config"]
        with ser.safe_globals([Config]):
            assert Config in ser.get_safe_globals()
            assert ser.get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == ["argparse.Namespace"]
            with pytest.raises(pickle.UnpicklingError, match="GLOBAL argparse.Namespace was not an allowed"):
                lib.load(io.BytesIO(blob))
        assert Config not in ser.get_safe_globals()
        before = ser.get_safe_globals()
        try:
            ser.add_safe_globals([Config, (argparse.Namespace, "argparse.Namespace")])
            got = lib.load(io.BytesIO(blob))
            assert got["cfg"] == Config() and got["args"].a == 1
        finally:
            ser.clear_safe_globals()
            ser.add_safe_globals(before)
        assert Config not in ser.get_safe_globals()


def _train(lib, model, opt, sched, steps=2):
    x = lib.tensor(arr(5, 3, seed=9))
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        sched.step()
    return to_numpy(model(x))


def _setup(lib, net):
    model = net()
    opt = lib.optim.Adam(model.parameters(), lr=0.05)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    _train(lib, model, opt, sched, steps=1)
    return model, opt, sched


@needs_torch
def test_whole_model_optimizer_and_scheduler_round_trip(tmp_path):
    results = {}
    for lib, net in ((torch, TNet), (torchish, XNet)):
        model, opt, sched = _setup(lib, net)
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({"model": model, "opt": opt, "sched": sched, "epoch": 1}, path)
        with pytest.raises(pickle.UnpicklingError, match="^Weights only load failed"):
            lib.load(path)
        ck = lib.load(path, weights_only=False)
        m2, o2, s2 = ck["model"], ck["opt"], ck["sched"]
        assert type(m2) is net and m2.alias is m2.out and ck["epoch"] == 1
        assert [type(p).__name__ for p in m2.parameters()] == ["Parameter"] * 6
        assert all(p.requires_grad for p in m2.parameters())
        assert o2.param_groups[0]["params"][0] is m2.fc.weight and s2.optimizer is o2
        for (k, a), (k2, b) in zip(model.state_dict().items(), m2.state_dict().items()):
            assert k == k2 and np.array_equal(to_numpy(a), to_numpy(b)), k
        model.eval(), m2.eval()
        x = lib.tensor(arr(4, 3, seed=3))
        np.testing.assert_array_equal(to_numpy(model(x)), to_numpy(m2(x)))
        model.train(), m2.train()
        after = _train(lib, m2, o2, s2)
        np.testing.assert_allclose(after, _train(lib, model, opt, sched), rtol=1e-6, atol=1e-7)
        assert o2.param_groups[0]["lr"] == opt.param_groups[0]["lr"] == 0.05 / 8
        results[lib.__name__] = after
    np.testing.assert_allclose(results["torchish"], results["torch"], rtol=1e-4, atol=1e-5)


@needs_torch
def test_unpicklable_hook_fails_at_save_and_keeps_the_old_file(tmp_path):
    for lib, net in ((torch, TNet), (torchish, XNet)):
        path = tmp_path / "m.pt"
        lib.save({"v": 1}, path)
        model = net()
        handle = model.register_forward_hook(_HOOK)
        with pytest.raises(pickle.PicklingError, match="Can't pickle <function <lambda>"):
            lib.save(model, path)
        handle.remove()
        model.register_forward_pre_hook(lambda *a: None)  # a local lambda: pickle's AttributeError
        with pytest.raises(AttributeError, match="Can't pickle local object"):
            lib.save(model, path)
        if lib is torchish:  # torch writes in place and leaves a broken file; torchish's saves are atomic
            assert lib.load(path) == {"v": 1} and os.listdir(tmp_path) == ["m.pt"]
        os.remove(path)


@needs_torch
def test_torch_saved_model_loads_into_torchish_classes():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    blob = _blob(torch, {"model": model, "args": argparse.Namespace(lr=0.1)})
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.container.Sequential"):
        torchish.load(io.BytesIO(blob))
    got = torchish.load(io.BytesIO(blob), weights_only=False)
    assert type(got["model"]) is torchish.nn.Sequential and got["args"].lr == 0.1
    x = arr(2, 3, seed=4)
    # float32 a @ w.T + b cancels (terms ~0.5, result ~0.05): the two libraries' summation orders differ by a few
    # float32 ulps of the terms, so the absolute tolerance is set by the terms, not the result.
    np.testing.assert_allclose(to_numpy(got["model"](torchish.tensor(x))), to_numpy(model(torch.tensor(x))),
                               rtol=1e-6, atol=1e-6)


@needs_torch
def test_shared_tensors_and_parameters_stay_shared_in_a_pickled_object():
    for lib in (torch, torchish):
        p = lib.nn.Parameter(lib.ones(2))
        t = lib.zeros(3, requires_grad=True)
        got = lib.load(io.BytesIO(_blob(lib, argparse.Namespace(a=p, b=[p, t], c=t))), weights_only=False)
        assert got.a is got.b[0] and got.c is got.b[1]
        assert type(got.a).__name__ == "Parameter" and got.c.requires_grad and type(got.c).__name__ == "Tensor"


@needs_torch
def test_skip_data_and_namespace_as_torch():
    for lib in (torch, torchish):
        with lib.serialization.skip_data():
            blob = _blob(lib, {"w": lib.ones(2, 2)})
        got = lib.load(io.BytesIO(blob))["w"]
        assert tuple(got.shape) == (2, 2) and not to_numpy(got).any()
        assert lib.serialization.location_tag(lib.ones(1)) == "cpu"
        assert lib.serialization.DEFAULT_PROTOCOL == 2
    wanted = {"add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals", "skip_data",
              "get_unsafe_globals_in_checkpoint", "default_restore_location", "location_tag", "register_package",
              "LoadEndianness", "SourceChangeWarning", "get_crc32_options", "set_crc32_options",
              "get_default_load_endianness", "set_default_load_endianness", "get_default_mmap_options",
              "set_default_mmap_options", "check_module_version_greater_or_equal", "UNSAFE_MESSAGE", "MAGIC_NUMBER",
              "PROTOCOL_VERSION", "DEFAULT_PROTOCOL", "save", "load"}
    assert wanted <= set(dir(torch.serialization)) and wanted <= set(dir(torchish.serialization))
    assert torchish.serialization.UNSAFE_MESSAGE == torch.serialization.UNSAFE_MESSAGE


def test_plain_checkpoints_name_only_allowed_globals():
    # a state_dict-like object names only the globals weights_only allows (torch.load reads it by default); a
    # custom object is named with its class path and needs weights_only=False
    from torchish import serialization
    plain = _blob(torchish, {"sd": XNet().state_dict(), "epoch": 3, "fs": {1}})
    assert serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(plain)) == []
    custom = serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_blob(torchish, {"cfg": Config()})))
    assert custom and all(name.endswith("Config") for name in custom)
