"""torchish.save / torchish.load: round trips, atomic writes, corrupted files, PyTorch zip checkpoints read without
torch or pickle code (and malicious ones refused), safetensors."""
from __future__ import annotations

import copy
import io
import os
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

from oracle import arr, needs_torch, same_error, to_numpy, torch, torchish
from torchish import serialization

try:
    import safetensors.numpy as st_numpy
except ImportError:  # the interop checks need the reference implementation
    st_numpy = None


def roundtrip(obj, **kw):
    buf = io.BytesIO()
    torchish.save(obj, buf)
    buf.seek(0)
    return torchish.load(buf, **kw)


def assert_tensor_equal(a, b):
    assert isinstance(b, torchish.Tensor) and type(b) is torchish.Tensor
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(to_numpy(a).astype(np.float64) if a.dtype == torchish.bfloat16 else to_numpy(a),
                                  to_numpy(b).astype(np.float64) if b.dtype == torchish.bfloat16 else to_numpy(b))


# ----------------------------------------------------------------------------------------------------------------
# torchish's format


DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "int16", "bool",
          "complex64", "complex128"]


@pytest.mark.parametrize("name", DTYPES)
def test_tensor_dtypes_round_trip(name):
    dt = getattr(torchish, name)
    base = arr(2, 3, lo=-5, hi=5)
    t = torchish.tensor(base > 0 if name == "bool" else base).to(dt)
    if name.startswith("uint"):
        t = torchish.tensor(np.abs(base).astype(np.uint8))
    assert_tensor_equal(t, roundtrip(t))
    assert_tensor_equal(t[0, 1], roundtrip(t[0, 1]))            # 0-d, from a view
    assert_tensor_equal(t[:, :0], roundtrip(t[:, :0]))          # empty


def test_nested_containers_scalars_and_types():
    x = torchish.tensor(arr(2, 2), requires_grad=True)
    p = torchish.nn.Parameter(torchish.ones(3))
    obj = {
        "od": OrderedDict([("b", torchish.arange(3)), ("a", 1.5)]),
        "list": [x, 1, -2 ** 70, 2.5, float("inf"), True, None, "s", b"bytes", 3 + 4j],
        "tuple": (1, (2, (3,))), 7: "int key", (1, "t"): "tuple key",
        "set": {1, 2}, "fs": frozenset({"a"}), "dtype": torchish.float16, "device": torchish.device("cpu"),
        "np": np.arange(6, dtype=np.int16).reshape(2, 3), "npscalar": np.float64(0.25), "size": x.shape,
        "param": p, "empty": {}, "nested": {"deep": [[{"x": x}]]},
    }
    got = roundtrip(obj, weights_only=False)  # numpy values load only with weights_only=False, as in PyTorch
    assert list(got) == list(obj)
    assert type(got["od"]) is OrderedDict and list(got["od"]) == ["b", "a"]
    assert got["list"][1:] [:8] == obj["list"][1:][:8] and got["list"][9] == 3 + 4j
    assert got["tuple"] == (1, (2, (3,))) and got[7] == "int key" and got[(1, "t")] == "tuple key"
    assert got["set"] == {1, 2} and got["fs"] == frozenset({"a"})
    assert got["dtype"] is torchish.float16 and got["device"] == torchish.device("cpu")
    np.testing.assert_array_equal(got["np"], obj["np"])
    assert got["np"].dtype == np.int16 and got["npscalar"] == 0.25 and type(got["npscalar"]) is np.float64
    assert type(got["size"]) is torchish.Size and got["size"] == (2, 2)
    assert got["list"][0].requires_grad and got["list"][0].is_leaf
    assert type(got["param"]) is torchish.nn.Parameter and got["param"].requires_grad
    assert got["nested"]["deep"][0][0]["x"] is got["list"][0]   # one tensor saved once, loaded as one object
    assert_tensor_equal(x.detach(), got["list"][0].detach())


def test_state_dict_round_trip_into_module():
    def make(seed):
        m = torchish.nn.Module()
        m.w = torchish.nn.Parameter(torchish.tensor(arr(3, 2, seed=seed)))
        m.register_buffer("count", torchish.tensor(seed))
        m.sub = torchish.nn.Module()
        m.sub.b = torchish.nn.Parameter(torchish.tensor(arr(2, seed=seed + 1)))
        return m
    src, dst = make(1), make(2)
    sd = roundtrip(src.state_dict())
    assert type(sd) is OrderedDict and list(sd) == ["w", "count", "sub.b"]
    assert all(type(v) is torchish.Tensor and not v.requires_grad for v in sd.values())
    assert dst.load_state_dict(sd).missing_keys == []
    for (n, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        assert_tensor_equal(a, b)


def test_optimizer_like_state_dict():
    sd = {"state": {0: {"step": torchish.tensor(3.0), "exp_avg": torchish.ones(2, 2)}, 1: {"momentum_buffer": None}},
          "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1], "foreach": None,
                            "name": "group0"}]}
    got = roundtrip(sd)
    assert list(got["state"]) == [0, 1] and got["state"][1] == {"momentum_buffer": None}
    assert got["param_groups"] == sd["param_groups"]
    assert_tensor_equal(sd["state"][0]["exp_avg"], got["state"][0]["exp_avg"])


def test_paths_bytesio_pathlike_and_map_location(tmp_path):
    obj = {"a": torchish.ones(2)}
    path = tmp_path / "ckpt.pt"
    torchish.save(obj, path)
    assert_tensor_equal(obj["a"], torchish.load(path)["a"])
    torchish.save(obj, str(path))
    with open(path, "rb") as fh:
        assert_tensor_equal(obj["a"], torchish.load(fh)["a"])
    for loc in ("cpu", torchish.device("cpu"), {"cpu": "cpu"}, lambda t, where: t):
        assert torchish.load(path, map_location=loc)["a"].device.type == "cpu"
    seen = []
    torchish.load(path, map_location=lambda t, where: seen.append(where))
    assert seen == ["cpu"]
    assert torchish.load(path, weights_only=False)["a"].shape == (2,)
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
        torchish.save(obj, tmp_path / "missing" / "x.pt")


def test_unsupported_object_raises_and_leaves_old_file(tmp_path):
    path = tmp_path / "m.pt"
    torchish.save({"v": 1}, path)

    class Custom:  # a local class cannot be pickled (pickle's AttributeError, as torch.save raises)
        pass
    with pytest.raises(AttributeError, match="Can't pickle local object"):
        torchish.save({"v": 2, "bad": Custom()}, path)
    with pytest.raises((pickle.PicklingError, AttributeError)):  # a lambda: pickle's error, as torch.save's
        torchish.save({"v": 2, "hook": lambda: None}, path)
    assert torchish.load(path) == {"v": 1}
    lst = []
    lst.append(lst)  # a container holding itself is pickled, cycle kept
    torchish.save(lst, path)
    got = torchish.load(path)
    assert got[0] is got
    assert os.listdir(tmp_path) == ["m.pt"]


def test_atomic_write_survives_a_crash_midway(tmp_path, monkeypatch):
    path = tmp_path / "model.pt"
    old = {"w": torchish.zeros(64)}
    torchish.save(old, path)
    real_open_temp = serialization._open_temp

    class FailingFile:
        def __init__(self, fh):
            self.fh = fh
            self.writes = 0

        def write(self, data):
            self.writes += 1
            if self.writes == 3:
                raise OSError("disk full (simulated)")
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    def failing_open_temp(p):
        fh, tmp = real_open_temp(p)
        return FailingFile(fh), tmp
    monkeypatch.setattr(serialization, "_CHUNK", 32)
    monkeypatch.setattr(serialization, "_open_temp", failing_open_temp)
    with pytest.raises(OSError, match="disk full"):
        torchish.save({"w": torchish.ones(64)}, path)
    assert os.listdir(tmp_path) == ["model.pt"]                 # no temporary file left behind
    assert_tensor_equal(old["w"], torchish.load(path)["w"])     # the old checkpoint is intact
    monkeypatch.setattr(serialization, "_open_temp", real_open_temp)
    torchish.save({"w": torchish.ones(64)}, path)               # small chunks: still a valid file
    assert float(torchish.load(path)["w"].sum()) == 64.0


@pytest.mark.parametrize("zip_format", [True, False])
def test_truncated_and_corrupted_files_raise_clearly(zip_format):
    buf = io.BytesIO()
    torchish.save({"w": torchish.ones(16), "n": [1, 2, 3]}, buf, _use_new_zipfile_serialization=zip_format)
    blob = buf.getvalue()
    for cut in (0, 3, len(serialization.MAGIC) + 4, len(blob) // 2, len(blob) - 1):
        with pytest.raises(RuntimeError, match="truncated|empty|corrupted"):
            torchish.load(io.BytesIO(blob[:cut]))
    flipped = bytearray(blob)
    flipped[-5] ^= 0xFF
    with pytest.raises(RuntimeError, match="corrupted"):
        torchish.load(io.BytesIO(bytes(flipped)))
    with pytest.raises(RuntimeError, match="unrecognized"):
        torchish.load(io.BytesIO(b"hello world, not a checkpoint"))


def test_checksummed_but_malformed_payload_raises_runtime_error():
    import msgpack
    import zlib
    payload = msgpack.packb([msgpack.ExtType(serialization._TENSOR, b""), "float32", [4], False, "cpu", b"\0" * 3])
    blob = serialization.MAGIC + serialization._HEADER.pack(len(payload), zlib.crc32(payload)) + payload
    with pytest.raises(RuntimeError, match="corrupted"):
        torchish.load(io.BytesIO(blob))


# files torchish wrote in its own (msgpack) format before it wrote PyTorch's zip format, by the code of commit
# 646e03e: {"sd": OrderedDict(w=<2x3 float32, 0..5>, b=<bfloat16 [1.5, -2]>) with _metadata, "x": <[1, 2],
# requires_grad>, "again": x, "p": Parameter(ones(2)), "n": [1, 2.5, "a", None, (3,)], "dt": int8, "size": Size}
# and defaultdict(list, a=[x]) (a pickled record)
OLD_FORMAT = (
    "k1RPUkNISVNIAfAAAAAAAAAAtmvnPJ/HAAKic2SW1ANtk8cAAqCTxwACp3ZlcnNpb24BoXeXxwAEp2Zsb2F0MzKSAgPCo2NwdcQYAAAAAAAAgD8AAABA"
    "AABAQAAAgEAAAKBAkgECoWKWxwAEqGJmbG9hdDE2kQLCo2NwdcQEwD8AwKF4lscABKdmbG9hdDMykQLDo2NwdcQIAACAPwAAAEClYWdhaW7XBQIAAAAA"
    "AAAAoXCXxwAEp2Zsb2F0MzKRAsOjY3B1xAgAAIA/AACAP6lwYXJhbWV0ZXKhbpbHAAABy0AEAAAAAAAAoWHAkscAAQOiZHTWCGludDikc2l6ZZPHAA4C"
    "Aw==")
OLD_FORMAT_PICKLED = (
    "k1RPUkNISVNIAXwAAAAAAAAAA2e/fZPHAA+RlscABKdmbG9hdDMykQLDo2NwdcQIAACAPwAAAEDEWIACY2NvbGxlY3Rpb25zCmRlZmF1bHRkaWN0CnEA"
    "Y19fYnVpbHRpbl9fCmxpc3QKcQGFcQJScQNYAQAAAGFxBF1xBVgGAAAAdGVuc29ycQZLAIZxB1Fhcy4=")


def test_files_in_torchishs_old_format_still_load():
    import base64
    import collections
    got = torchish.load(io.BytesIO(base64.b64decode(OLD_FORMAT)))
    sd = got["sd"]
    assert type(sd) is OrderedDict and list(sd) == ["w", "b"] and sd._metadata == {"": {"version": 1}}
    assert_tensor_equal(torchish.arange(6.0).reshape(2, 3), sd["w"])
    assert_tensor_equal(torchish.tensor([1.5, -2.0], dtype=torchish.bfloat16), sd["b"])
    assert got["x"] is got["again"] and got["x"].requires_grad and got["x"].tolist() == [1.0, 2.0]
    assert type(got["p"]) is torchish.nn.Parameter and got["p"].tolist() == [1.0, 1.0]
    assert got["n"] == [1, 2.5, "a", None, (3,)] and got["dt"] is torchish.int8
    assert type(got["size"]) is torchish.Size and got["size"] == (2, 3)
    dd = torchish.load(io.BytesIO(base64.b64decode(OLD_FORMAT_PICKLED)), weights_only=False)
    assert type(dd) is collections.defaultdict and dd["a"][0].tolist() == [1.0, 2.0] and dd["a"][0].requires_grad


# ----------------------------------------------------------------------------------------------------------------
# PyTorch checkpoints


def make_mlp(T):
    class MLP(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = T.nn.Module()
            self.fc1.weight = T.nn.Parameter(T.zeros(4, 3))
            self.fc1.bias = T.nn.Parameter(T.zeros(4))
            self.fc2 = T.nn.Module()
            self.fc2.weight = T.nn.Parameter(T.zeros(2, 4))
            self.register_buffer("shift", T.zeros(2))
            self.register_buffer("steps", T.tensor(0))

        def forward(self, x):
            h = (x @ self.fc1.weight.t() + self.fc1.bias).tanh()
            return h @ self.fc2.weight.t() + self.shift
    return MLP()


@needs_torch
def test_load_pytorch_state_dict_into_torchish_model(tmp_path):
    tm = make_mlp(torch)
    with torch.no_grad():
        for i, p in enumerate(list(tm.parameters()) + [tm.shift]):
            p.copy_(torch.tensor(arr(*p.shape, seed=i)))
        tm.steps.fill_(7)
    path = tmp_path / "torch_model.pth"
    torch.save(tm.state_dict(), path)
    sd = torchish.load(path)
    assert type(sd) is OrderedDict and list(sd) == list(tm.state_dict())
    xm = make_mlp(torchish)
    assert repr(xm.load_state_dict(sd)) == "<All keys matched successfully>"
    x = arr(5, 3, seed=42)
    np.testing.assert_allclose(to_numpy(xm(torchish.tensor(x))), to_numpy(tm(torch.tensor(x))), rtol=1e-5, atol=1e-6)
    assert int(xm.steps) == 7 and xm.steps.dtype == torchish.int64


@needs_torch
def test_load_pytorch_views_dtypes_and_shared_storage():
    w = torch.arange(12.0).reshape(3, 4)
    obj = {"t": w.t(), "row": w[1], "col": w[:, 2], "bf": w.bfloat16(), "half": w.half(), "i": torch.arange(3),
           "b": w > 3, "empty": torch.zeros(0, 3), "scalar": torch.tensor(2.5), "c": torch.tensor([1 + 2j]),
           "w": w, "p": torch.nn.Parameter(torch.ones(2)), "size": w.shape, "dtype": torch.float16,
           "meta": {"epoch": 3, "loss": 0.5, "name": "run", "set": {1, 2}, "bytes": b"ab", "tup": (1, None)}}
    buf = io.BytesIO()
    torch.save(obj, buf)
    got = torchish.load(io.BytesIO(buf.getvalue()))
    for k in ("t", "row", "col", "bf", "half", "i", "b", "empty", "scalar", "c", "w"):
        ref = obj[k]
        g = got[k]
        assert str(g.dtype) == str(ref.dtype) and tuple(g.shape) == tuple(ref.shape), k
        np.testing.assert_array_equal(to_numpy(g), to_numpy(ref), err_msg=k)
    assert type(got["p"]) is torchish.nn.Parameter and got["p"].requires_grad
    assert tuple(got["t"].stride()) == (1, 4)  # a transposed tensor keeps its strides
    assert tuple(got["size"]) == (3, 4) and got["dtype"] is torchish.float16
    assert got["meta"] == obj["meta"]


@needs_torch
def test_loaded_tensors_of_one_storage_alias_it_as_in_torch():
    """Tensors saved from one storage come back sharing one (a write through one shows in the others, storage offsets
    and sizes are the saved ones), whichever library saved the file; a tensor that spans its storage alone stays
    a plain tensor."""
    def load_both(lib_save, make):
        buf = io.BytesIO()
        lib_save.save(make(lib_save), buf)
        return [lib.load(io.BytesIO(buf.getvalue()), weights_only=False) for lib in (torch, torchish)]

    def views(lib):
        w = lib.arange(12.0).reshape(3, 4)
        return {"w": w, "row": w[1], "t": w.t(), "col": w[:, 2], "tail": w.view(-1)[5:], "alone": lib.arange(3.0)[1:]}

    def tied(lib):
        lin, emb = lib.nn.Linear(3, 3), lib.nn.Embedding(3, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.arange(9.0).reshape(3, 3))
        emb.weight = lin.weight
        return lib.nn.ModuleDict({"lin": lin, "emb": emb}).state_dict()

    for saver in (torch, torchish):
        ref, got = load_both(saver, views)
        for d in (ref, got):
            d["w"][1, 2] = 100.0
            d["alone"][0] = -5.0
        for k in ref:
            assert ref[k].tolist() == got[k].tolist(), k
            assert (ref[k].stride(), ref[k].storage_offset(), ref[k].untyped_storage().nbytes()) == \
                (got[k].stride(), got[k].storage_offset(), got[k].untyped_storage().nbytes()), k
            assert got[k]._base is None and not got[k]._is_view(), k
        assert got["row"].untyped_storage().data_ptr() == got["w"].untyped_storage().data_ptr()
        ref, got = load_both(saver, tied)
        for d in (ref, got):
            d["lin.weight"][0, 0] = 50.0
        assert got["emb.weight"].tolist() == ref["emb.weight"].tolist() and got["emb.weight"][0, 0].item() == 50.0
        model = torchish.nn.ModuleDict({"lin": torchish.nn.Linear(3, 3), "emb": torchish.nn.Embedding(3, 3)})
        model.load_state_dict(got)
        assert model["emb"].weight.tolist() == ref["emb.weight"].tolist()
    # parameters of one storage: leaves that require grad, storage offsets kept, their gradients their own
    base = torch.arange(6.0)
    buf = io.BytesIO()
    torch.save([torch.nn.Parameter(base[:3]), torch.nn.Parameter(base[3:])], buf)
    q1, q2 = torchish.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert type(q2) is torchish.nn.Parameter and q2.is_leaf and q2.requires_grad and q2.storage_offset() == 3
    (q1.sum() + (q2 * 2).sum()).backward()
    assert q1.grad.tolist() == [1.0] * 3 and q2.grad.tolist() == [2.0] * 3
    with torchish.no_grad():
        q1.add_(1.0)
    assert q1.tolist() == [1.0, 2.0, 3.0] and q2.tolist() == [3.0, 4.0, 5.0]


@needs_torch
def test_load_pytorch_optimizer_state_dict():
    p = torch.nn.Parameter(torch.tensor(arr(3)))
    opt = torch.optim.Adam([p], lr=0.1)
    p.grad = torch.tensor(arr(3, seed=1))
    opt.step()
    buf = io.BytesIO()
    torch.save(opt.state_dict(), buf)
    got = torchish.load(io.BytesIO(buf.getvalue()))
    ref = opt.state_dict()
    assert got["param_groups"] == ref["param_groups"]
    assert list(got["state"]) == [0]
    for k, v in ref["state"][0].items():
        np.testing.assert_array_equal(to_numpy(got["state"][0][k]), to_numpy(v))


def _zip_with_pickle(data_pkl: bytes, extra=()) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", data_pkl)
        zf.writestr("archive/byteorder", "little")
        for name, blob in extra:
            zf.writestr(name, blob)
    return buf.getvalue()


def test_malicious_pickles_are_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    evil = f"cos\nsystem\n(S'touch {marker}'\ntR.".encode()
    evil_eval = b"cbuiltins\neval\n(S'__import__(\"os\")'\ntR."

    class Reduce:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    evil_proto2 = pickle.dumps({"x": Reduce()}, protocol=2)
    for payload in (evil, evil_eval, evil_proto2):   # weights_only (the default) refuses them as PyTorch does
        with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*Unsupported global"):
            torchish.load(io.BytesIO(_zip_with_pickle(payload)))
        with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*Unsupported global"):
            torchish.load(io.BytesIO(payload), weights_only=False)   # a bare pickle file is never unpickled
        path = tmp_path / "evil.pt"
        path.write_bytes(_zip_with_pickle(payload))
        with pytest.raises(pickle.UnpicklingError):
            torchish.load(path, weights_only=True)
    assert not marker.exists()


def test_out_of_bounds_tensor_geometry_is_refused():
    storage = np.arange(4, dtype=np.float32).tobytes()
    pkl = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
           b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQK\x00K\x03K\x03\x86K\x03K\x01\x86\x89"
           b"ccollections\nOrderedDict\n)RtR.")
    blob = _zip_with_pickle(pkl, [("archive/data/0", storage)])
    with pytest.raises(pickle.UnpicklingError, match="reaches past its storage"):
        torchish.load(io.BytesIO(blob))
    ok = pkl.replace(b"K\x03K\x03\x86K\x03K\x01\x86", b"K\x02K\x02\x86K\x02K\x01\x86")
    got = torchish.load(io.BytesIO(_zip_with_pickle(ok, [("archive/data/0", storage)])))
    np.testing.assert_array_equal(to_numpy(got), np.arange(4, dtype=np.float32).reshape(2, 2))
    with pytest.raises(pickle.UnpicklingError, match="missing from the checkpoint"):
        torchish.load(io.BytesIO(_zip_with_pickle(ok)))


@needs_torch
def test_legacy_and_corrupted_pytorch_files():
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy"):
        torchish.load(io.BytesIO(buf.getvalue()))
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf)
    blob = buf.getvalue()
    with pytest.raises(RuntimeError, match="corrupted|truncated"):
        torchish.load(io.BytesIO(blob[: len(blob) // 2]))
    with pytest.raises(RuntimeError, match="not a PyTorch checkpoint"):
        torchish.load(io.BytesIO(_zip_with_pickle(b"").replace(b"data.pkl", b"other.pk")))


# ----------------------------------------------------------------------------------------------------------------
# torchish.save writes PyTorch's zip format: torch.load reads it


def _interop_object(T):
    """The same checkpoint-like object built with either library."""
    w = T.arange(12.0).reshape(3, 4)
    x = T.tensor([1.0, 2.0], requires_grad=True)
    npdts = {"bool": None, "bfloat16": None, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}
    dtypes = []
    for name in DTYPES + ["uint16", "uint32", "uint64"]:
        if name == "bool":
            dtypes.append(T.tensor(np.arange(6).reshape(2, 3) % 2 == 0))
        elif name == "bfloat16":
            dtypes.append(T.tensor(np.arange(-2.0, 4.0, dtype=np.float32).reshape(2, 3)).to(T.bfloat16))
        elif name in npdts:  # PyTorch has no arithmetic for these: from numpy... through a tensor of bytes
            dtypes.append(T.zeros(2, 3, dtype=getattr(T, name)))
        else:
            npdt = np.dtype(name)
            vals = np.arange(6) - (0 if npdt.kind == "u" else 2)
            dtypes.append(T.tensor((vals + (0.5j if npdt.kind == "c" else 0)).astype(npdt).reshape(2, 3)))
    return {
        "w": w, "t": w.t(), "row": w[1], "col": w[:, 2], "x": x, "x_again": x,
        "p": T.nn.Parameter(T.ones(2)), "frozen": T.nn.Parameter(T.zeros(1), requires_grad=False),
        "cl": T.arange(16.0).reshape(1, 4, 2, 2).contiguous(memory_format=T.channels_last),
        "tt": T.arange(6.0).reshape(3, 2).contiguous().t(), "scalar": T.tensor(2.5), "empty": T.zeros(0, 3),
        "dtypes": dtypes, "dtype": T.bfloat16, "size": w.shape, "device": T.device("cpu"),
        "meta": {"epoch": 3, "lr": 0.1, "name": "run", "none": None, "flag": True, "tup": (1, (2.5, "s")),
                 "big": 2 ** 70, "c": 1 + 2j, "set": {1, 2}, "bytes": b"ab"},
    }


def _tensors_of(obj):
    if isinstance(obj, dict):
        return [t for k in obj for t in _tensors_of(obj[k])]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in _tensors_of(v)]
    return [obj] if hasattr(obj, "untyped_storage") else []


def _storage_groups(tensors):
    """Which of ``tensors`` share a storage: each tensor's index of the first tensor on its storage."""
    firsts = {}
    return [firsts.setdefault(t.untyped_storage().data_ptr(), i) for i, t in enumerate(tensors)]


def _geometry(t):
    return (type(t).__name__, str(t.dtype), tuple(t.shape), tuple(t.stride()), t.storage_offset(),
            t.requires_grad)


@needs_torch
def test_torch_loads_what_torchish_saves_with_storages_shared_as_in_torch():
    ref_buf, buf = io.BytesIO(), io.BytesIO()
    ref = _interop_object(torch)
    torch.save(ref, ref_buf)
    torchish.save(_interop_object(torchish), buf)
    blob = buf.getvalue()
    got = torch.load(io.BytesIO(blob))  # weights_only=True, torch's default
    ref_tensors, got_tensors = _tensors_of(ref), _tensors_of(got)
    assert [_geometry(t) for t in got_tensors] == [_geometry(t) for t in ref_tensors]
    for r, g in zip(ref_tensors, got_tensors):
        np.testing.assert_array_equal(to_numpy(g.detach()), to_numpy(r.detach()))
    assert _storage_groups(got_tensors) == _storage_groups(ref_tensors)  # w, its views share one storage...
    assert got["x"] is got["x_again"]
    plain = lambda o: {k: v for k, v in o.items() if k not in ("dtypes",) and not hasattr(v, "untyped_storage")}
    assert plain(got) == plain(ref) and type(got["size"]) is torch.Size
    # the same records as torch.save writes, storage by storage the same bytes
    with zipfile.ZipFile(io.BytesIO(blob)) as zf, zipfile.ZipFile(ref_buf) as rf:
        names = [n for n in rf.namelist() if n != "archive/.data/serialization_id"]
        assert zf.namelist() == rf.namelist()
        assert [zf.read(n) for n in names if n != "archive/data.pkl"] == [rf.read(n) for n in names
                                                                            if n != "archive/data.pkl"]
    # torchish reads its file back: values, dtypes, requires_grad; dense strides kept (views come back as copies)
    back = torchish.load(io.BytesIO(blob))
    for r, b in zip(ref_tensors, _tensors_of(back)):
        assert _geometry(b)[:3] == _geometry(r)[:3] and b.requires_grad == r.requires_grad
        np.testing.assert_array_equal(to_numpy(b.detach()), to_numpy(r.detach()))
    assert [tuple(back[k].stride()) for k in ("t", "cl", "tt")] == [tuple(ref[k].stride()) for k in ("t", "cl", "tt")]
    assert back["x"] is back["x_again"] and type(back["p"]) is torchish.nn.Parameter and not back["frozen"].requires_grad


@needs_torch
def test_views_of_every_kind_keep_torchs_geometry_in_the_file():
    """Each view is saved on its base's storage as torch.save saves it: sizes, strides, offsets, storage sizes."""
    def build(T):
        grown = T.zeros(6)
        grown.unsqueeze_(0)
        shrunk = T.arange(8.0)
        shrunk.resize_(2, 2)
        b = T.arange(3.0)
        m = T.arange(12.0).reshape(3, 4)
        return [grown, shrunk, b, b.expand(2, 3), m[1:, ::2], T.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
                T.arange(10.0)[2:7].view(5, 1), m.diagonal(), m.unfold(1, 2, 1), m.select(1, 2),
                T.tensor([1 + 2j, 3 + 4j]).real]

    def geometry(t):
        return tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.untyped_storage().nbytes()
    ref_buf, buf = io.BytesIO(), io.BytesIO()
    torch.save(build(torch), ref_buf)
    torchish.save(build(torchish), buf)
    ref, got = torch.load(io.BytesIO(ref_buf.getvalue())), torch.load(io.BytesIO(buf.getvalue()))
    assert [geometry(t) for t in got] == [geometry(t) for t in ref]
    assert all(torch.equal(r, g) for r, g in zip(ref, got))
    assert _storage_groups(got) == _storage_groups(ref)


@needs_torch
def test_conjugate_and_negative_bits_are_saved_and_loaded_as_torch():
    """A conjugate view is saved as torch saves it (its base's storage and ``{'conj': True}`` in the rebuild call)
    and a negated one with ``{'neg': True}``: each loader reads the other's file to the conjugated values, the
    loaded conjugate view still shares its storage with its base, and ``numpy()`` refuses both bits as torch does."""
    def build(T):
        x = T.tensor([1 + 2j, 3 - 1j, -0.5 + 4j])
        c = x.conj()
        return {"x": x, "c": c, "c2": c[1:]}, {"i": c.imag}

    def check(obj, T):
        assert obj["c"].is_conj() and not obj["x"].is_conj()
        np.testing.assert_array_equal(obj["c"].resolve_conj().numpy(), np.array([1 - 2j, 3 + 1j, -0.5 - 4j], "c8"))
        np.testing.assert_array_equal(obj["c2"].resolve_conj().numpy(), np.array([3 + 1j, -0.5 - 4j], "c8"))
        obj["x"][1] = 7 + 7j  # the loaded views still share the storage
        assert obj["c"][1].item() == 7 - 7j and obj["c2"][0].item() == 7 - 7j

    for T, U in ((torch, torchish), (torchish, torch), (torchish, torchish)):
        shared, neg = build(T)
        buf, nbuf = io.BytesIO(), io.BytesIO()
        T.save(shared, buf)
        T.save(neg, nbuf)
        check(U.load(io.BytesIO(buf.getvalue())), U)
        i = U.load(io.BytesIO(nbuf.getvalue()))["i"]
        np.testing.assert_array_equal(i.resolve_neg().numpy(), np.array([-2, 1, -4], "f4"))
    for T in (torch, torchish):
        c = T.tensor([1 + 2j]).conj()
        same = [type(e).__name__ + str(e) for e in (pytest.raises(RuntimeError, c.numpy).value,
                                                    pytest.raises(RuntimeError, c.imag.numpy).value)]
        assert "conjugate bit" in same[0] and "negative bit" in same[1]
        np.testing.assert_array_equal(c.numpy(force=True), np.array([1 - 2j], "c8"))
        np.testing.assert_array_equal(c.imag.numpy(force=True), np.array([-2], "f4"))
        with pytest.raises(BufferError, match="conjugate bit"):
            c.__dlpack__()
        x = T.tensor([1 + 2j, 3 - 1j])
        d = copy.deepcopy({"x": x, "c": x.conj(), "i": x.conj().imag})
        d["x"][0] = 9  # the copies of the views hold their own values, as torch's deepcopy makes them
        assert not d["c"].is_conj() and not d["i"].is_neg()
        np.testing.assert_array_equal(d["c"].numpy(), np.array([1 - 2j, 3 + 1j], "c8"))
        np.testing.assert_array_equal(d["i"].numpy(), np.array([-2, 1], "f4"))


@needs_torch
def test_torch_loads_torchish_state_dicts_and_optimizer_state(tmp_path):
    xm = make_mlp(torchish)
    for i, p in enumerate(xm.parameters()):
        p.data = torchish.tensor(arr(*p.shape, seed=i))
    opt = torchish.optim.Adam(xm.parameters(), lr=0.1)
    x = arr(5, 3, seed=42)
    xm(torchish.tensor(x)).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pth"
    torchish.save({"model": xm.state_dict(), "opt": opt.state_dict(), "epoch": 1}, path)
    ckpt = torch.load(path)
    assert ckpt["model"]._metadata == xm.state_dict()._metadata and ckpt["epoch"] == 1
    tm = make_mlp(torch)
    assert repr(tm.load_state_dict(ckpt["model"])) == "<All keys matched successfully>"
    np.testing.assert_allclose(to_numpy(tm(torch.tensor(x))), to_numpy(xm(torchish.tensor(x))), rtol=1e-5, atol=1e-6)
    topt = torch.optim.Adam(tm.parameters(), lr=0.1)
    topt.load_state_dict(ckpt["opt"])
    assert topt.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    for k, v in opt.state_dict()["state"][0].items():
        np.testing.assert_array_equal(to_numpy(topt.state_dict()["state"][0][k]), to_numpy(v))


@needs_torch
def test_torchish_checkpoints_have_pytorchs_layout(tmp_path, monkeypatch):
    """Named as torch.save names them (the file's stem), every record's data at a multiple of 64 bytes and followed
    by a data descriptor, so that torch.load's mmap and its storage-offset calculation (checked against the real
    offsets with TORCH_SERIALIZATION_DEBUG) work."""
    obj = {"a": torchish.ones(3), "b": torchish.arange(5), "c": torchish.zeros(2, 2, dtype=torchish.float16)}
    path = tmp_path / "model.v1.pt"
    torchish.save(obj, path)
    (tmp_path / "ref").mkdir()
    torch.save({k: torch.tensor(to_numpy(v)) for k, v in obj.items()}, tmp_path / "ref" / "model.v1.pt")
    with zipfile.ZipFile(path) as zf, zipfile.ZipFile(tmp_path / "ref" / "model.v1.pt") as rf:
        assert zf.namelist() == rf.namelist()
        raw = path.read_bytes()
        for info in zf.infolist():
            (name_len, extra_len) = struct.unpack_from("<HH", raw, info.header_offset + 26)
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename
            assert info.flag_bits & 0x08 and info.compress_type == zipfile.ZIP_STORED
        assert zf.read("model.v1/version") == b"3\n" and zf.read("model.v1/.storage_alignment") == b"64"
        assert len(zf.read("model.v1/.data/serialization_id")) == 40
    from torch.utils.serialization import config
    monkeypatch.setenv("TORCH_SERIALIZATION_DEBUG", "1")
    before = config.load.calculate_storage_offsets
    config.load.calculate_storage_offsets = True
    try:
        for kw in ({"mmap": True}, {}, {"map_location": "meta"}):
            got = torch.load(path, **kw)
            if "map_location" not in kw:
                for k, v in obj.items():
                    np.testing.assert_array_equal(to_numpy(got[k]), to_numpy(v))
    finally:
        config.load.calculate_storage_offsets = before


@needs_torch
def test_saving_one_storage_as_two_dtypes_raises_as_torch():
    def save_both(T):
        x = T.arange(4.0)
        T.save([x, x.view(T.int32)], io.BytesIO())
    same_error(save_both)
    buf = io.BytesIO()
    x = torchish.arange(4.0)
    torchish.save(x.view(torchish.int32)[1:], buf)  # one view, in its own dtype: fine
    got = torch.load(io.BytesIO(buf.getvalue()))
    assert got.dtype == torch.int32 and got.storage_offset() == 1 and got.untyped_storage().nbytes() == 16
    assert got.tolist() == x.view(torchish.int32)[1:].tolist()


@needs_torch
def test_other_protocols_objects_and_the_old_format_flag():
    obj = {"w": torchish.ones(2), "dt": torchish.float16, "size": torchish.Size([2]), "p": torchish.nn.Parameter(
        torchish.zeros(1))}
    for protocol in (3, 4, 5):  # torch's weights-only reader knows protocol 2 only: torch.load(weights_only=False)
        buf = io.BytesIO()
        torchish.save(obj, buf, pickle_protocol=protocol)
        got = torch.load(io.BytesIO(buf.getvalue()), weights_only=False)
        assert got["dt"] is torch.float16 and got["size"] == torch.Size([2]) and type(got["p"]) is torch.nn.Parameter
        assert torchish.load(io.BytesIO(buf.getvalue()))["size"] == (2,)
    buf = io.BytesIO()
    torchish.save(obj, buf, _use_new_zipfile_serialization=False)  # torchish's own format, read by torchish only
    assert buf.getvalue().startswith(serialization.MAGIC)
    assert torchish.load(io.BytesIO(buf.getvalue()))["dt"] is torchish.float16
    buf = io.BytesIO()
    torchish.save(obj, buf, _disable_byteorder_record=True)
    assert "archive/byteorder" not in zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert torch.load(io.BytesIO(buf.getvalue()))["w"].tolist() == [1.0, 1.0]


# ----------------------------------------------------------------------------------------------------------------
# safetensors


def _st_tensors():
    return {"w": torchish.tensor(arr(3, 2)), "b": torchish.arange(4), "h": torchish.ones(2, dtype=torchish.bfloat16),
            "flag": torchish.tensor([True, False]), "s": torchish.tensor(1.5, dtype=torchish.float64)}


def test_safetensors_round_trip_and_suffix(tmp_path):
    tensors = _st_tensors()
    path = tmp_path / "m.safetensors"
    torchish.save(tensors, path)
    got = torchish.load(path)
    assert sorted(got) == sorted(tensors)
    for k in tensors:
        assert_tensor_equal(tensors[k], got[k])
    serialization.save_safetensors(tensors, tmp_path / "x.bin", metadata={"format": "pt"})
    got2 = serialization.load_safetensors(tmp_path / "x.bin")
    for k in tensors:
        assert_tensor_equal(tensors[k], got2[k])
    assert torchish.load(tmp_path / "x.bin")["w"].shape == (3, 2)       # recognised by content too
    buf = io.BytesIO()
    serialization.save_safetensors(tensors, buf)
    assert_tensor_equal(tensors["w"], serialization.load_safetensors(buf.getvalue())["w"])
    with pytest.raises(TypeError, match="dict of str -> Tensor"):
        torchish.save({"a": [1]}, tmp_path / "bad.safetensors")


def test_safetensors_corrupted_header_and_offsets(tmp_path):
    buf = io.BytesIO()
    serialization.save_safetensors(_st_tensors(), buf)
    blob = buf.getvalue()
    cases = [blob[:4], blob[:-3], struct.pack("<Q", 10 ** 9) + blob[8:], blob[:8] + b"[" + blob[9:]]
    for bad in cases:
        with pytest.raises(RuntimeError, match="invalid or truncated safetensors"):
            serialization.load_safetensors(bad)
    (n,) = struct.unpack("<Q", blob[:8])
    head = blob[8:8 + n].replace(b'"data_offsets":[0,', b'"data_offsets":[1,')
    with pytest.raises(RuntimeError, match="invalid or truncated safetensors"):
        serialization.load_safetensors(blob[:8] + head + blob[8 + n:])


@pytest.mark.skipif(st_numpy is None, reason="the safetensors package is not installed")
def test_safetensors_interop_with_reference_implementation(tmp_path):
    ref = {"a": arr(2, 3), "i": np.arange(5, dtype=np.int32), "d": arr(4, dtype=np.float64)}
    st_numpy.save_file(ref, str(tmp_path / "ref.safetensors"), metadata={"k": "v"})
    got = torchish.load(tmp_path / "ref.safetensors")
    for k, v in ref.items():
        np.testing.assert_array_equal(to_numpy(got[k]), v)
    from torchish._safetensors import safetensors_metadata
    assert safetensors_metadata(tmp_path / "ref.safetensors") == {"k": "v"}
    serialization.save_safetensors({k: torchish.tensor(v) for k, v in ref.items()}, tmp_path / "mine.safetensors",
                                   metadata={"k": "v"})
    back = st_numpy.load_file(str(tmp_path / "mine.safetensors"))
    for k, v in ref.items():
        np.testing.assert_array_equal(back[k], v)


@needs_torch
@pytest.mark.slow
def test_real_layers_checkpoint_from_torch():
    """A PyTorch model with real layers (conv, batch norm with its running statistics, linear) saved by torch.save
    loads into the same torchish model and gives the same outputs; a torchish round trip keeps them."""
    needed = ("Conv2d", "BatchNorm2d", "ReLU", "Flatten", "Linear", "Sequential")
    if not all(hasattr(torchish.nn, n) for n in needed):
        pytest.skip("the layer families are not all available in this checkout")

    def build(T):
        return T.nn.Sequential(T.nn.Conv2d(2, 3, 3), T.nn.BatchNorm2d(3), T.nn.ReLU(), T.nn.Flatten(),
                               T.nn.Linear(12, 2))
    torch.manual_seed(0)
    tm = build(torch)
    tm.train()
    for s in range(2):  # move the running statistics away from their initial values
        tm(torch.tensor(arr(4, 2, 4, 4, seed=s)))
    tm.eval()
    buf = io.BytesIO()
    torch.save(tm.state_dict(), buf)
    xm = build(torchish)
    res = xm.load_state_dict(torchish.load(io.BytesIO(buf.getvalue())))
    assert res.missing_keys == [] and res.unexpected_keys == []
    xm.eval()
    x = arr(3, 2, 4, 4, seed=9)
    ref = to_numpy(tm(torch.tensor(x)))
    np.testing.assert_allclose(to_numpy(xm(torchish.tensor(x))), ref, rtol=1e-4, atol=1e-5)
    assert int(xm[1].num_batches_tracked) == 2
    again = build(torchish)
    again.load_state_dict(roundtrip(xm.state_dict()))
    again.eval()
    np.testing.assert_allclose(to_numpy(again(torchish.tensor(x))), ref, rtol=1e-4, atol=1e-5)
    assert repr(again) == repr(tm)
