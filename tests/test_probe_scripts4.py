"""Regression tests from running sequence-model / NLP programs (embeddings, RNNs, packing, attention,
transformers, decoding, sequence losses) on torchish and on PyTorch."""
import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else x


@needs_torch
def test_unpad_sequence_transposes_in_place_as_torch():
    # PyTorch's unpad_sequence turns a time-major batch batch-major with padded.transpose_(0, 1) on the caller's
    # tensor, zips the lengths strictly and keeps min(length, T) steps of each sequence
    a = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    for lib in (torch, torchish):
        p = lib.tensor(a)
        out = lib.nn.utils.rnn.unpad_sequence(p, lib.tensor([4, 1, 3]))
        res = [tuple(p.shape)] + [_np(u) for u in out]
        res += [_np(u) for u in lib.nn.utils.rnn.unpad_sequence(lib.tensor(a), lib.tensor([9, -1, 2]))]
        if lib is torch:
            ref = res
        with pytest.raises(ValueError):
            lib.nn.utils.rnn.unpad_sequence(lib.tensor(a), lib.tensor([4, 1]))
        with pytest.raises(RuntimeError):
            lib.nn.utils.rnn.unpad_sequence(lib.tensor(a, requires_grad=True), lib.tensor([4, 1, 3]))
    assert res[0] == ref[0] == (3, 4, 2)
    for r, g in zip(ref[1:], res[1:]):
        np.testing.assert_array_equal(g, r)
