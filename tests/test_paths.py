"""Results are identical on every execution path: node-by-node backward, lowered backward (from the first
sighting), and lazy capture. The autograd cases of the shared parity sample (PyTorch-API programs judged against
real PyTorch) run under each path and are compared with PyTorch's results."""
import importlib.util
import os

import numpy as np
import pytest

import torchish
from oracle import torch

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "parity")
RUNNER = os.path.join(SHARED, "run.py")

pytestmark = pytest.mark.skipif(torch is None or not os.path.exists(RUNNER),
                                reason="needs PyTorch and the shared parity sample")


def _runner():
    spec = importlib.util.spec_from_file_location("parity_run", RUNNER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _cases():
    if not os.path.exists(RUNNER):
        return []
    return _runner().load_cases("seed_backward")


CASES = _cases()
PATHS = {
    "node_by_node": dict(lowered_backward="never", lazy=False),
    "dispatch": dict(lowered_backward="auto", lazy=False),
    "lowered": dict(lowered_backward="always", lazy=False),
    "lazy": dict(lowered_backward="auto", lazy=True),
}


@pytest.fixture(params=list(PATHS))
def path(request):
    saved = (torchish.config.lowered_backward, torchish.config.lazy)
    for k, v in PATHS[request.param].items():
        setattr(torchish.config, k, v)
    yield request.param
    torchish.config.lowered_backward, torchish.config.lazy = saved


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_case_on_path(path, name, fn):
    run = _runner()
    ref = run.run_one(fn, torch, lambda f, **kw: f)
    got = run.run_one(fn, torchish, torchish.compile)
    # run twice so the lowered/lazy caches are hit on the second run
    got = run.run_one(fn, torchish, torchish.compile)
    why = run.compare(ref, got)
    assert why is None, why


def test_lazy_fuses_forward_into_one_program():
    from torchish.ops import lazy
    saved = torchish.config.lazy
    torchish.config.lazy = True
    try:
        x = torchish.tensor(np.arange(6, dtype=np.float32))
        before = dict(lazy.STATS)
        y = ((x * 2).sin() + 1).exp().sum()
        assert lazy.STATS["materialisations"] == before["materialisations"]
        value = y.item()
        assert lazy.STATS["materialisations"] == before["materialisations"] + 1
        np.testing.assert_allclose(value, np.exp(np.sin(np.arange(6) * 2) + 1).sum(), rtol=1e-5)
    finally:
        torchish.config.lazy = saved


def _train(lazy_mode, steps=4):
    from torchish.ops import lazy
    torchish.config.lazy = lazy_mode
    torchish.manual_seed(0)
    model = torchish.nn.Sequential(torchish.nn.Linear(4, 8), torchish.nn.ReLU(), torchish.nn.Linear(8, 3))
    opt = torchish.optim.Adam(model.parameters(), lr=1e-2)
    x = torchish.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))
    y = torchish.tensor(np.array([0, 1, 2, 1, 0]))
    mats = []
    for _ in range(steps):
        before = lazy.STATS["materialisations"]
        opt.zero_grad()
        loss = torchish.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        mats.append(lazy.STATS["materialisations"] - before)
    return [p.detach().numpy() for p in model.parameters()], float(loss), mats


def test_lazy_training_step_runs_as_one_program():
    saved = (torchish.config.lowered_backward, torchish.config.lazy)
    try:
        ref_params, ref_loss, _ = _train(False)
        params, loss, mats = _train(True)
    finally:
        torchish.config.lowered_backward, torchish.config.lazy = saved
    # forward, backward (lowered from its second sighting) and Adam's update: one program per step
    assert mats[-2:] == [1, 1]
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-6)
    for p, r in zip(params, ref_params):
        np.testing.assert_allclose(p, r, rtol=1e-6, atol=1e-7)


def test_lowered_backward_is_used_for_repeated_structure():
    from torchish.autograd import lowering
    w = torchish.tensor(np.ones((3, 2), np.float32), requires_grad=True)
    # inputs where tanh is not saturated: 1 - tanh(12)**2 is all cancellation, and a fused XLA tanh rounds there
    # differently from NumPy's (lazy capture fuses it with the matmul)
    x = torchish.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 8)
    before = lowering.STATS["lowered"]
    for _ in range(4):  # sightings: grad None (1st), grad present (2nd); the 3rd and 4th are lowered
        (x @ w).tanh().sum().backward()
    assert lowering.STATS["lowered"] >= before + 2
    ref = 4 * (x.numpy().T @ (1 - np.tanh(x.numpy() @ np.ones((3, 2), np.float32)) ** 2))  # float32, as computed
    np.testing.assert_allclose(w.grad.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_a_new_structure_is_lowered_at_once_only_where_its_kernels_are_new():
    """The first backward of a structure whose nodes' kernels would all be compiled anew runs as one lowered
    program; a new structure whose nodes' kernels ran before goes node by node. Same gradients either way."""
    from torchish.autograd import lowering
    x = torchish.tensor(np.linspace(-1, 1, 35, dtype=np.float32).reshape(7, 5), requires_grad=True)
    saved = torchish.config.lowered_backward
    try:
        torchish.config.lowered_backward = "never"
        (x * 1.25).sin().exp().sum().backward()
        ref = x.grad.numpy()
        torchish.config.lowered_backward = "auto"
        lowering._COMPILED.clear()
        x.grad = None
        n = lowering.STATS["lowered"]
        (x * 1.25).sin().exp().sum().backward()  # a new structure, 4 nodes, no kernel noted: lowered at once
        assert lowering.STATS["lowered"] == n + 1
        np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-6)
        x.grad = None
        x.sum().backward()  # one new kernel: node by node, and noted
        x.sum().backward()  # another structure (x.grad exists now) of noted kernels: node by node
        assert lowering.STATS["lowered"] == n + 1
        x.sum().backward()  # a structure seen before: lowered
        assert lowering.STATS["lowered"] == n + 2
        np.testing.assert_array_equal(x.grad.numpy(), np.full((7, 5), 3, np.float32))
    finally:
        torchish.config.lowered_backward = saved


def test_a_seen_structure_runs_in_the_order_its_nodes_were_made():
    """Among nodes ready at once the engine runs the latest made first (PyTorch's ready queue), so the order in
    which a leaf's gradients are summed depends on the order the forward made the ops, not only on the graph's
    shape: two graphs of one shape made in different orders are two lowered programs, each summing as the
    node-by-node run (and PyTorch) does. Here (1 - 1e8) + 1e8 is 0 in float32, (-1e8 + 1e8) + 1 is 1."""
    def grad(x, c_first):  # (x: a torchish or a torch tensor)
        x.grad = None
        if c_first:
            c = x * 1.0
            a, b = x * 1e8, x * -1e8
        else:
            a, b = x * 1e8, x * -1e8
            c = x * 1.0
        ((a + b) + c).sum().backward()
        return x.grad.numpy().copy()

    x = torchish.tensor([1.0], requires_grad=True)
    saved = torchish.config.lowered_backward
    try:
        torchish.config.lowered_backward = "never"
        ref = [grad(x, False), grad(x, True)]
        torchish.config.lowered_backward = "always"
        got = [grad(x, False), grad(x, True), grad(x, False), grad(x, True)]
    finally:
        torchish.config.lowered_backward = saved
    assert ref[0] != ref[1]  # (the order matters for these numbers)
    np.testing.assert_array_equal(got, ref + ref)
    xt = torch.tensor([1.0], requires_grad=True)
    np.testing.assert_array_equal([grad(xt, False), grad(xt, True)], ref)


def test_lazy_capture_is_opt_in():
    """Per-op dispatch is the default path (``torchish.config.lazy = True`` turns lazy capture on): a fused lazy
    program may round differently in the last bit from the same ops run one by one, so results would depend on
    whether a structure had been seen before; with ``exact_programs`` it gives the same bits (test_path_identity.py)
    but, without fusion across ops, is no faster than per-op dispatch."""
    assert torchish._config.Config().lazy is False
    with pytest.raises(ValueError, match="must be one of"):
        torchish.config.lazy = "yes"
