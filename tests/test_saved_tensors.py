"""Saved tensors against PyTorch 2.13, op by op (the table is ``torchish/ops/saved.py``).

A node saves what the gradients of its inputs *that require grad* read (derivatives.yaml), so the same op saves
different tensors depending on which input requires grad: ``mul(x, y)`` with only ``x`` requiring grad saves ``y``
alone. For each op and each single input requiring grad, every Tensor input and every output is written in place
(under ``no_grad``) between the forward and the backward — the backward fails where the node saved that tensor
("... modified by an inplace operation") — and a second backward without ``retain_graph`` fails where the node saved
anything. The in-place forms (``x.exp_()``, ``x.mul_(y)``...) are checked the same way, writing after them.
"""
import numpy as np
import pytest

from oracle import arr, needs_torch, torch, torchish

pytestmark = needs_torch


def _forward(lib, fn, inputs, grad):
    """``fn`` on ``inputs`` with input ``grad`` (an index, or None for all float ones) requiring grad; those are
    non-leaves (``clone()``) so that they may be written in place."""
    ins = []
    for i, x in enumerate(inputs):
        if not isinstance(x, np.ndarray):
            ins.append(x)
            continue
        t = lib.tensor(x)
        wants = x.dtype.kind == "f" and (grad is None or i == grad)
        ins.append(t.requires_grad_(True).clone() if wants else t)
    out = fn(lib, *ins)
    outs = [out] if isinstance(out, lib.Tensor) else [o for o in out if isinstance(o, lib.Tensor)]
    return ins, outs


def _backward(outs):
    sum(o.sum() for o in outs if o.requires_grad).backward()


def _run(thunk):
    """'.' when ``thunk`` runs, 'E' when it raises PyTorch's in-place or second-backward error."""
    try:
        thunk()
    except RuntimeError as e:
        msg = str(e)
        if "modified by an inplace operation" in msg or "backward through the graph a second time" in msg:
            return "E"
        raise
    return "."


def outcomes(lib, fn, inputs, grad=None):
    """``"i0. i1E o0. 2E"``: for each Tensor input (i) and output (o), whether the backward fails after it was
    written in place; then (2) whether a second backward fails."""
    ins, outs = _forward(lib, fn, inputs, grad)
    targets = [("i", k) for k, t in enumerate(ins) if isinstance(t, lib.Tensor)] + [("o", k) for k in range(len(outs))]
    res = []
    for kind, k in targets:
        ins, outs = _forward(lib, fn, inputs, grad)
        t = ins[k] if kind == "i" else outs[k]
        with lib.no_grad():
            t.copy_(t.clone())
        res.append(f"{kind}{k}{_run(lambda: _backward(outs))}")
    ins, outs = _forward(lib, fn, inputs, grad)
    _backward(outs)
    res.append(f"2{_run(lambda: _backward(outs))}")
    return " ".join(res)


def F(T):
    return T.nn.functional


def _pos(*shape, seed=0):
    return arr(*shape, seed=seed, lo=0.5, hi=2.0)


def _probs(*shape, seed=0):
    return arr(*shape, seed=seed, lo=0.05, hi=0.95)


X, Y, Z = arr(2, 3), arr(2, 3, seed=1), arr(2, 3, seed=2)
MASK = np.array([[True, False, True], [False, True, True]])

# name: (fn, inputs). Every float input requires grad on its own in turn.
OPS = {
    # elementwise
    "mul": (lambda T, a, b: a * b, [X, Y]),
    "div": (lambda T, a, b: a / b, [X, _pos(2, 3)]),
    "pow": (lambda T, a, b: a.pow(b), [_pos(2, 3), Y]),
    "pow_scalar_base": (lambda T, b: T.pow(2.0, b), [Y]),
    "pow_scalar": (lambda T, a: a ** 3, [X]),
    "atan2": (lambda T, a, b: T.atan2(a, b), [X, Y]),
    "hypot": (lambda T, a, b: T.hypot(a, b), [X, Y]),
    "maximum": (lambda T, a, b: T.maximum(a, b), [X, Y]),
    "minimum": (lambda T, a, b: T.minimum(a, b), [X, Y]),
    "fmax": (lambda T, a, b: T.fmax(a, b), [X, Y]),
    "fmin": (lambda T, a, b: T.fmin(a, b), [X, Y]),
    "copysign": (lambda T, a, b: T.copysign(a, b), [X, Y]),
    "xlogy": (lambda T, a, b: T.xlogy(a, b), [X, _pos(2, 3)]),
    "remainder": (lambda T, a, b: T.remainder(a, b), [X, _pos(2, 3)]),
    "fmod": (lambda T, a, b: T.fmod(a, b), [X, _pos(2, 3)]),
    "logaddexp": (lambda T, a, b: T.logaddexp(a, b), [X, Y]),
    "ldexp": (lambda T, a, b: T.ldexp(a, b), [X, Y]),
    "where": (lambda T, m, a, b: T.where(m, a, b), [MASK, X, Y]),
    "lerp": (lambda T, a, b: T.lerp(a, b, 0.3), [X, Y]),
    "lerp_tensor": (lambda T, a, b, w: T.lerp(a, b, w), [X, Y, Z]),
    "addcmul": (lambda T, a, b, c: T.addcmul(a, b, c, value=0.5), [X, Y, Z]),
    "addcdiv": (lambda T, a, b, c: T.addcdiv(a, b, c, value=0.5), [X, Y, _pos(2, 3)]),
    "clamp_tensor": (lambda T, a, lo, hi: T.clamp(a, lo, hi), [X, Y - 0.5, Y + 0.5]),
    "clamp_min_tensor": (lambda T, a, lo: T.clamp_min(a, lo), [X, Y]),
    "exp": (lambda T, a: a.exp(), [X]),
    "sin": (lambda T, a: a.sin(), [X]),
    "frac": (lambda T, a: a.frac(), [X]),
    "prod": (lambda T, a: a.prod(1), [X]),
    "max_dim": (lambda T, a: a.max(1), [X]),
    "softmax": (lambda T, a: a.softmax(1), [X]),
    # indexing: integer and boolean index tensors are saved too
    "gather": (lambda T, a, i: a.gather(1, i), [X, np.array([[0, 2], [1, 1]])]),
    "index_select": (lambda T, a, i: a.index_select(1, i), [X, np.array([2, 0])]),
    "scatter": (lambda T, a, i, s: a.scatter(1, i, s), [X, np.array([[0, 2], [1, 0]]), arr(2, 2, seed=3)]),
    "scatter_add": (lambda T, a, i, s: a.scatter_add(1, i, s), [X, np.array([[0, 2], [1, 0]]), arr(2, 2, seed=3)]),
    "index_add": (lambda T, a, i, s: a.index_add(1, i, s), [X, np.array([2, 0]), arr(2, 2, seed=3)]),
    "masked_fill": (lambda T, a, m: a.masked_fill(m, 0.5), [X, MASK]),
    "masked_select": (lambda T, a, m: a.masked_select(m), [X, MASK]),
    "advanced_index": (lambda T, a, i: a[i], [X, np.array([1, 0, 1])]),
    # products
    "matmul": (lambda T, a, b: a @ b, [X, arr(3, 4, seed=1)]),
    "matmul_folded": (lambda T, a, b: a @ b, [arr(2, 2, 3), arr(3, 4, seed=1)]),
    "matmul_transposed_fold": (lambda T, a, b: a @ b, [arr(2, 3), arr(2, 3, 4, seed=1)]),
    "matmul_broadcast": (lambda T, a, b: a @ b, [arr(2, 1, 2, 3), arr(3, 3, 2, seed=1)]),
    "mm": (lambda T, a, b: a.mm(b), [X, arr(3, 4, seed=1)]),
    "bmm": (lambda T, a, b: a.bmm(b), [arr(2, 2, 3), arr(2, 3, 4, seed=1)]),
    "mv": (lambda T, a, b: a.mv(b), [X, arr(3, seed=1)]),
    "dot": (lambda T, a, b: a.dot(b), [arr(3), arr(3, seed=1)]),
    "outer": (lambda T, a, b: a.outer(b), [arr(3), arr(2, seed=1)]),
    "addmm": (lambda T, c, a, b: T.addmm(c, a, b), [arr(2, 4), X, arr(3, 4, seed=1)]),
    "baddbmm": (lambda T, c, a, b: T.baddbmm(c, a, b), [arr(2, 2, 4), arr(2, 2, 3), arr(2, 3, 4, seed=1)]),
    "tensordot_copied": (lambda T, a, b: T.tensordot(a, b, ([1, 2], [1, 0])), [arr(2, 3, 4), arr(4, 3, 2, seed=1)]),
    "linear": (lambda T, x, w, b: F(T).linear(x, w, b), [X, arr(4, 3, seed=1), arr(4, seed=2)]),
    "bilinear": (lambda T, x, y, w: F(T).bilinear(x, y, w), [X, arr(2, 4, seed=1), arr(5, 3, 4, seed=2)]),
    "cross": (lambda T, a, b: T.linalg.cross(a, b), [X, Y]),
    "cdist": (lambda T, a, b: T.cdist(a, b), [X, arr(4, 3, seed=1)]),
    "cdist_mm": (lambda T, a, b: T.cdist(a, b), [arr(26, 3), arr(2, 3, seed=1)]),
    "cosine_similarity": (lambda T, a, b: F(T).cosine_similarity(a, b), [X, Y]),
    "solve": (lambda T, a, b: T.linalg.solve(a, b), [np.eye(3, dtype=np.float32) * 2 + arr(3, 3), arr(3, 2)]),
    # activations, normalization
    "prelu": (lambda T, x, w: F(T).prelu(x, w), [X, arr(1, seed=1)]),
    "gelu": (lambda T, x: F(T).gelu(x), [X]),
    "layer_norm": (lambda T, x, w, b: F(T).layer_norm(x, (3,), w, b), [X, arr(3, seed=1), arr(3, seed=2)]),
    "group_norm": (lambda T, x, w, b: F(T).group_norm(x, 1, w, b), [X, arr(3, seed=1), arr(3, seed=2)]),
    "batch_norm": (lambda T, x, w, b: F(T).batch_norm(x, None, None, w, b, True), [X, arr(3, seed=1), arr(3, seed=2)]),
    "conv1d": (lambda T, x, w, b: F(T).conv1d(x, w, b), [arr(1, 2, 4), arr(3, 2, 2, seed=1), arr(3, seed=2)]),
    "embedding": (lambda T, w, i: F(T).embedding(i, w), [X, np.array([1, 0, 1])]),
    "avg_pool1d": (lambda T, x: F(T).avg_pool1d(x, 2), [arr(1, 2, 4)]),
    "max_pool1d_indices": (lambda T, x: F(T).max_pool1d(x, 2, return_indices=True), [arr(1, 2, 4)]),
    "sdpa": (lambda T, q, k, v: F(T).scaled_dot_product_attention(q, k, v), [arr(1, 2, 3), arr(1, 4, 3, seed=1),
                                                                            arr(1, 4, 2, seed=2)]),
    # losses, with the target requiring grad in turn
    "mse_loss": (lambda T, x, y: F(T).mse_loss(x, y), [X, Y]),
    "mse_loss_weighted": (lambda T, x, y, w: F(T).mse_loss(x, y, weight=w), [X, Y, _pos(2, 3)]),
    "l1_loss": (lambda T, x, y: F(T).l1_loss(x, y), [X, Y]),
    "smooth_l1_loss": (lambda T, x, y: F(T).smooth_l1_loss(x, y), [X, Y]),
    "huber_loss": (lambda T, x, y: F(T).huber_loss(x, y, delta=0.5), [X, Y]),
    "binary_cross_entropy": (lambda T, x, y: F(T).binary_cross_entropy(x, y), [_probs(2, 3), _probs(2, 3, seed=1)]),
    "bce_with_logits": (lambda T, x, y: F(T).binary_cross_entropy_with_logits(x, y), [X, _probs(2, 3, seed=1)]),
    "kl_div": (lambda T, x, y: F(T).kl_div(x, y, reduction="batchmean"), [-_pos(2, 3), _probs(2, 3, seed=1)]),
    "kl_div_log_target": (lambda T, x, y: F(T).kl_div(x, y, reduction="batchmean", log_target=True),
                          [-_pos(2, 3), -_pos(2, 3, seed=1)]),
    "poisson_nll_loss": (lambda T, x, y: F(T).poisson_nll_loss(x, y), [X, _pos(2, 3, seed=1)]),
    "poisson_nll_loss_rate": (lambda T, x, y: F(T).poisson_nll_loss(x, y, log_input=False), [_pos(2, 3), Y]),
    "gaussian_nll_loss": (lambda T, x, y, v: F(T).gaussian_nll_loss(x, y, v), [X, Y, _pos(2, 3)]),
    "soft_margin_loss": (lambda T, x: F(T).soft_margin_loss(x, T.tensor(np.sign(Y))), [X]),
    "multilabel_soft_margin_loss": (lambda T, x, y: F(T).multilabel_soft_margin_loss(x, y),
                                    [X, _probs(2, 3, seed=1)]),
    "cross_entropy_probs": (lambda T, x, y: F(T).cross_entropy(x, y), [X, _probs(2, 3, seed=1)]),
    "cross_entropy_indices": (lambda T, x, t: F(T).cross_entropy(x, t), [X, np.array([2, 0])]),
    "nll_loss": (lambda T, x, t: F(T).nll_loss(x, t), [X, np.array([2, 0])]),
    "cosine_embedding_loss": (lambda T, a, b, y: F(T).cosine_embedding_loss(a, b, y), [X, Y, np.array([1, -1])]),
    "margin_ranking_loss": (lambda T, a, b: F(T).margin_ranking_loss(a, b, T.tensor([1.0, -1.0, 1.0])),
                            [arr(3), arr(3, seed=1)]),
}

def _cases():
    for name, (fn, inputs) in OPS.items():
        for i, x in enumerate(inputs):
            if isinstance(x, np.ndarray) and x.dtype.kind == "f":
                yield pytest.param(name, i, id=f"{name}-grad{i}")


@pytest.mark.parametrize("name,grad", list(_cases()))
def test_saved_per_input(name, grad):
    fn, inputs = OPS[name]
    assert outcomes(torchish, fn, inputs, grad) == outcomes(torch, fn, inputs, grad)


# In-place forms: the written tensor is a non-leaf; a later write to it (or to another input) between the forward
# and the backward fails where the in-place node saved it (its result: exp_; not its overwritten input: sin_).
INPLACE = {
    "exp_": lambda T, t: t.exp_(),
    "sigmoid_": lambda T, t: t.sigmoid_(),
    "tanh_": lambda T, t: t.tanh_(),
    "sqrt_": lambda T, t: t.abs_().add_(1).sqrt_(),
    "sin_": lambda T, t: t.sin_(),
    "abs_": lambda T, t: t.abs_(),
    "clamp_": lambda T, t: t.clamp_(-0.3, 0.3),
    "clamp_min_": lambda T, t: t.clamp_min_(0.1),
    "floor_": lambda T, t: t.floor_(),
    "pow_": lambda T, t: t.pow_(2),
    "mul_scalar": lambda T, t: t.mul_(2.0),
    "relu_": lambda T, t: t.relu_(),
    "elu_": lambda T, t: F(T).elu_(t),
    "leaky_relu_": lambda T, t: F(T).leaky_relu_(t, 0.2),
    "hardtanh_": lambda T, t: F(T).hardtanh_(t, -0.5, 0.5),
    "threshold_": lambda T, t: F(T).threshold_(t, 0.1, 2.0),
    "silu_inplace": lambda T, t: F(T).silu(t, inplace=True),
}

INPLACE_BINARY = {
    "mul_": lambda T, t, o: t.mul_(o),
    "div_": lambda T, t, o: t.div_(o),
    "add_": lambda T, t, o: t.add_(o),
    "atan2_": lambda T, t, o: t.atan2_(o),
    "lerp_": lambda T, t, o: t.lerp_(o, 0.3),
    "addcmul_": lambda T, t, o: t.addcmul_(o, o),
    "clamp_tensor_": lambda T, t, o: t.clamp_(min=o),
    "copy_": lambda T, t, o: t.copy_(o),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_saved_inplace(name):
    def fn(T, x):
        t = x * 1.0
        return INPLACE[name](T, t), t
    assert outcomes(torchish, fn, [X]) == outcomes(torch, fn, [X])


@pytest.mark.parametrize("grad", [0, 1])
@pytest.mark.parametrize("name", sorted(INPLACE_BINARY))
def test_saved_inplace_binary(name, grad):
    def fn(T, x, o):
        t = x * 1.0
        return INPLACE_BINARY[name](T, t, o), t
    inputs = [X, _pos(2, 3, seed=1)]
    assert outcomes(torchish, fn, inputs, grad) == outcomes(torch, fn, inputs, grad)


def test_inplace_write_after_saving_result():
    """``y = x.exp_()`` saves its result, ``x`` itself: writing ``x`` afterwards fails the backward."""
    def fn(T, x):
        t = x * 1.0
        t.exp_()
        with T.no_grad():
            t.add_(1.0)
        return t
    for lib in (torch, torchish):
        x = lib.tensor(X, requires_grad=True)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            fn(lib, x).sum().backward()


def test_second_backward_through_unsaved_nodes():
    """Nodes that save nothing (sum, linear ops, rounding) can be backwarded twice without retain_graph."""
    for lib in (torch, torchish):
        x = lib.tensor(X, requires_grad=True)
        y = (x.floor() + x.t().t() - x.neg()).sum()
        y.backward()
        y.backward()
        assert np.allclose(x.grad.numpy(), 4.0)


def test_a_released_graph_keeps_no_saved_array_alive():
    """After a backward without retain_graph the graph's saved values are freed (PyTorch frees them): the output
    exp saved is no longer referenced by the graph that the loss still holds."""
    import gc
    import weakref
    x = torchish.tensor(arr(3, 4), requires_grad=True)
    y = x.exp()
    ref = weakref.ref(y._d)
    loss = (y * 2).sum()
    del y
    gc.collect()
    assert ref() is not None  # saved by ExpBackward0 (and MulBackward0's input) while the graph is alive
    loss.backward()
    gc.collect()
    assert loss.grad_fn is not None and ref() is None


@needs_torch
def test_backward_again_through_nodes_that_saved_nothing():
    """Nodes that save nothing (add, expand, views, sum) drop their input values when released and still run a
    second backward (PyTorch allows it: nothing was freed), with the same gradients; create_graph too."""
    import gc
    import weakref

    def run(T, probe=False):
        a = T.tensor(arr(2, 3), requires_grad=True)
        h = a.t() + 1.5
        ref = weakref.ref(h._d) if probe else None
        y = (h.unsqueeze(0).expand(2, 3, 2) + a.t()).sum()
        del h
        y.backward()
        if probe:
            gc.collect()
            assert ref() is None  # released: the graph no longer holds the intermediate
        y.backward()
        first = a.grad.clone()
        (g,) = T.autograd.grad(y, a, create_graph=True)
        return first, g
    got, ref = run(torchish, probe=True), run(torch)
    for x, r in zip(got, ref):
        np.testing.assert_allclose(x.detach().numpy(), r.detach().numpy(), rtol=1e-6)


@needs_torch
def test_saved_numbers_of_select_narrow_real_and_imag():
    """``grad_fn._saved_dim/_saved_index/_saved_start/_saved_end/_saved_step/_saved_self_sym_sizes`` of
    SelectBackward0 (``select``, and ``z.real``/``z.imag``, PyTorch's select over view_as_real) and SliceBackward0
    (``narrow``), as PyTorch's nodes keep them. (A negative select index differs: PyTorch shows it wrapped to an
    unsigned 64-bit number, torchish the index it used.)"""
    def saved(lib):
        x = lib.ones(3, 4, requires_grad=True)
        z = lib.tensor([[1 + 1j, 2 - 1j]], requires_grad=True)
        outs = [x.select(1, 2), x.select(0, 1), x.narrow(1, -3, 2), x.narrow(0, 0, 3), (z * 2).real, (z * 2).imag]
        return [(o.grad_fn.name(), {a: getattr(o.grad_fn, a) for a in dir(o.grad_fn) if a.startswith("_saved")})
                for o in outs]
    assert saved(torchish) == saved(torch)
