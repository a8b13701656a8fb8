"""``_device.put``: numpy -> device through jaxlib's transfer directly (torchish.tensor's cost), equal to
jax.device_put for every dtype and layout, with jax.device_put taking over where the direct call fails."""
from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import torchish
from torchish import _device

ARRAYS = {
    "float32": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    "float64": np.array([np.nan, -0.0, np.inf, 1e-310]),
    "int64": np.array([-(2 ** 62), 3]),
    "bool": np.array([[True], [False]]),
    "bfloat16": np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16),
    "float16": np.array([6e-8, 65504.0], dtype=np.float16),
    "complex64": np.array([1 + 2j, -3j], dtype=np.complex64),
    "uint8": np.arange(5, dtype=np.uint8),
    "0-d": np.array(3.5, np.float32),
    "empty": np.zeros((0, 3), np.int32),
    "non-contiguous": np.arange(24, dtype=np.float32).reshape(4, 6)[::2, 1::2],
    "transposed": np.arange(6, dtype=np.int16).reshape(2, 3).T,
}


@pytest.mark.parametrize("name", list(ARRAYS))
def test_put_equals_device_put(name):
    a = ARRAYS[name]
    dev = jax.devices("cpu")[0]
    got, want = _device.put(a, dev), jax.device_put(a, dev)
    assert _device._FAST_PUT[0] is True  # (the direct transfer works with this jaxlib)
    assert got.dtype == want.dtype and got.shape == want.shape and got.committed and got.devices() == {dev}
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_the_public_path_takes_over_where_the_direct_call_fails(monkeypatch):
    def broken(arr, jdev):
        raise AttributeError("batched_device_put")
    monkeypatch.setattr(_device, "_fast_put", broken)
    monkeypatch.setattr(_device, "_FAST_PUT", [None])
    t = torchish.tensor(ARRAYS["float32"])
    assert _device._FAST_PUT[0] is False
    np.testing.assert_array_equal(t.numpy(), ARRAYS["float32"])
    np.testing.assert_array_equal(torchish.tensor([1, 2]).numpy(), [1, 2])
