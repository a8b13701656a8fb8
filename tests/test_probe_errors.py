"""Regression tests from probing error parity and the less common corners of the Tensor API against PyTorch: where
PyTorch raises, torchish raises the same builtin exception type; where it accepts a call, so does torchish."""
import warnings

import numpy as np
import pytest

from oracle import arr, check_raises, needs_torch, same, torchish

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore::UserWarning")]


def _t(lib, *shape, seed=0):
    return lib.tensor(arr(*shape, seed=seed))


def test_add_deprecated_alpha_with_keyword_other():
    # old optimizer code: p.data.add_(-lr, other=grad) is the deprecated add(Number alpha, Tensor other)
    def f(lib):
        x, y = _t(lib, 3), _t(lib, 3, seed=1)
        c = x.clone()
        c.add_(0.5, other=y)
        i = lib.tensor([1, 2, 3])
        return [x.add(2, other=y), lib.add(x, 2, other=y), c, x.sub(2, other=y), x.add(2, y), x.add(2, other=3),
                i.add(2, other=3.5), lib.add(2, other=y), lib.add(x, y, alpha=2)]
    same(f)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _t(torchish, 3).add(2, other=_t(torchish, 3))
    assert any("deprecated" in str(m.message) for m in w)
    for bad in (lambda lib: _t(lib, 3).add(_t(lib, 3), 2),
                lambda lib: _t(lib, 3).add(2, other=_t(lib, 3), alpha=3),
                lambda lib: _t(lib, 3).add(_t(lib, 3), other=_t(lib, 3)),
                lambda lib: lib.subtract(_t(lib, 3), 2, other=_t(lib, 3)),
                lambda lib: lib.add(_t(lib, 3))):
        check_raises(bad)


def test_split_family_refuses_indices_or_sections_keyword():
    # the documentation's parameter name is no keyword of PyTorch's overloads
    for bad in (lambda lib: lib.hsplit(_t(lib, 4, 4), indices_or_sections=2),
                lambda lib: lib.vsplit(_t(lib, 4, 4), indices_or_sections=2),
                lambda lib: lib.dsplit(_t(lib, 2, 2, 4), indices_or_sections=2),
                lambda lib: lib.tensor_split(_t(lib, 6), indices_or_sections=3),
                lambda lib: _t(lib, 6).tensor_split(indices_or_sections=3),
                lambda lib: lib.tensor_split(_t(lib, 6), 3, 0, dim=0),
                lambda lib: lib.tensor_split(_t(lib, 6), 2, 0, 1),
                lambda lib: lib.hsplit(_t(lib, 4, 4), 2, 1),
                lambda lib: lib.tensor_split(_t(lib, 6))):
        check_raises(bad)
    same(lambda lib: [lib.tensor_split(input=_t(lib, 6), sections=3), lib.tensor_split(_t(lib, 6, 4), 3, dim=1),
                      lib.tensor_split(_t(lib, 6, 4), [1, 2], 1), lib.tensor_split(_t(lib, 6, 4), indices=[2], dim=1),
                      lib.hsplit(input=_t(lib, 4, 4), sections=2), _t(lib, 4, 4).hsplit([1]),
                      lib.tensor_split(_t(lib, 6), lib.tensor([1, 3])), _t(lib, 4, 6).tensor_split(2, 1)])
