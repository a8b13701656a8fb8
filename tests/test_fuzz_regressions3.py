"""Regressions found by the differential fuzzers (tests/test_fuzz_*.py run with seeds from 9,100,000), continued
from tests/test_fuzz_regressions2.py: each test is the minimised program of one mismatch class, compared with
PyTorch (values, dtypes and gradients, or the exception family) — the grad_fn PyTorch rebuilds for a stale view of
a leaf that is itself a view of a tensor that does not require grad."""
import warnings

import pytest

from fuzz_harness import agree
from oracle import needs_torch

warnings.filterwarnings("ignore", category=UserWarning)

# a leaf that requires grad made from a view of a tensor that does not (its autograd base), and one that is its own
LEAVES = {
    "transposed": lambda T: T.arange(40.0).reshape(4, 10).t().requires_grad_(),
    "sliced": lambda T: T.arange(48.0).reshape(12, 4)[1:11].requires_grad_(),
    "reshaped": lambda T: T.arange(40.0).view(10, 4).requires_grad_(),
    "own_base": lambda T: T.arange(40.0).reshape(10, 4).clone().requires_grad_(),
    # detach() makes no autograd view: the detached leaf is its own base (torchish keeps it as an alias)
    "detached": lambda T: T.arange(40.0, requires_grad=True).reshape(10, 4)[:, :].detach().requires_grad_(),
}


def _stale_view(T, make, write):
    w = make(T)
    r = w.select(1, -1)[-8, None]  # a view of the leaf, taken before the write
    with T.no_grad():
        if write == "leaf":
            w.select(-2, 6)[None, -1].mul_(-1.0)
        else:
            r.mul_(2.0)
    loss = (w * w).sum() + (r * 0.5).sum()
    loss.backward()
    return [w.grad, r.detach(), r.grad_fn.name(), r.requires_grad]


@needs_torch
@pytest.mark.parametrize("write", ["leaf", "view"])
@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_stale_view_of_a_leaf_view_rebuilds_its_grad_fn_from_the_base(leaf, write):
    # (index-loop fuzzer seed 9100088) A write made under no_grad moves the version of every view of the storage;
    # PyTorch then rebuilds a view's grad_fn as one AsStridedBackward0 from its autograd base. For a leaf made with
    # requires_grad_() from a view (w = x.t().requires_grad_()), that base is x, which does not require grad: the
    # rebuilt node leads nowhere and the gradient through r is lost (w.grad[2, 3] lacks r's 0.5). torchish rebuilt
    # the node only from a base that requires grad, so r kept its SelectBackward0 and passed the gradient to w.
    # A detached leaf is its own base: the rebuilt node leads to it (torchish did not rebuild it after a write under
    # no_grad; the gradient was the same, the node's name SelectBackward0).
    agree(lambda T: _stale_view(T, LEAVES[leaf], write))
