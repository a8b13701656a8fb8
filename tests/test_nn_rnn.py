"""Recurrent layers and packed sequences against PyTorch: outputs, final states, input/state/parameter gradients.

Shapes are shared across tests (input 3, hidden 4, 5 steps, batch 2 or 3) so kernels compile once per config.
"""
from __future__ import annotations

import numpy as np
import pytest

from module_oracle import compare, pair
from oracle import arr, check, check_raises, formula_init, needs_torch, same, torch, torchish

pytestmark = needs_torch

I, H, T, B = 3, 4, 5, 2


def _pair(name, *args, **kw):
    return pair(lambda lib: getattr(lib.nn, name)(*args, **kw))


# ----------------------------------------------------------------------------------------------------------------
# RNN / LSTM / GRU

CONFIGS = [
    ("RNN", dict()),
    ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bidirectional=True, batch_first=True)),
    ("RNN", dict(bias=False, num_layers=2, bidirectional=True, nonlinearity="relu")),
    ("LSTM", dict()),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=2)),
    ("LSTM", dict(proj_size=2, num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(bias=False, batch_first=True)),
    ("GRU", dict()),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(bias=False, batch_first=True, num_layers=2)),
]


def _state_shapes(name, kw, batch):
    dirs = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * dirs
    h = (n, batch, kw.get("proj_size") or H)
    return [h, (n, batch, H)] if name == "LSTM" else [h]


def _call(name, with_state):
    def call(lib, m, x, *state):
        if not with_state:
            return m(x)
        return m(x, tuple(state) if name == "LSTM" else state[0])
    return call


@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "h0"])
@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}"
                                                  for n, kw in CONFIGS])
def test_recurrent_module_matches_torch(name, kw, with_state):
    tm, xm = _pair(name, I, H, **kw)
    x = arr(B, T, I) if kw.get("batch_first") else arr(T, B, I)
    states = [arr(*s, seed=i + 1) for i, s in enumerate(_state_shapes(name, kw, B))] if with_state else []
    compare(tm, xm, [x] + states, _call(name, with_state))


def test_lstm_float64_matches_torch_tightly():
    tm, xm = _pair("LSTM", I, H, num_layers=2, bidirectional=True, proj_size=2)
    tm, xm = tm.double(), xm.double()
    x = arr(T, B, I, dtype=np.float64)
    h0, c0 = arr(4, B, 2, seed=1, dtype=np.float64), arr(4, B, H, seed=2, dtype=np.float64)
    compare(tm, xm, [x, h0, c0], lambda lib, m, x, h, c: m(x, (h, c)))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_input(name):
    tm, xm = _pair(name, I, H, num_layers=2)
    states = [arr(*s[::2], seed=3) for s in _state_shapes(name, dict(num_layers=2), B)]  # (L, H): no batch
    compare(tm, xm, [arr(T, I)] + states, _call(name, True))
    compare(tm, xm, [arr(T, I)], _call(name, False))


def test_unbatched_batch_first():
    tm, xm = _pair("GRU", I, H, batch_first=True)
    compare(tm, xm, [arr(T, I)], _call("GRU", False))


def test_train_mode_without_dropout_matches_torch():
    tm, xm = _pair("LSTM", I, H, num_layers=2, dropout=0.0)
    assert xm.training
    compare(tm, xm, [arr(T, B, I)], _call("LSTM", False))


def test_dropout_one_zeroes_the_inputs_of_upper_layers():
    tm, xm = _pair("GRU", I, H, num_layers=2, dropout=1.0)
    compare(tm, xm, [arr(T, B, I)], _call("GRU", False))


def test_dropout_between_layers_uses_torchish_rng_in_training_only():
    tm, xm = _pair("LSTM", I, H, num_layers=2, dropout=0.5)
    x = torchish.tensor(arr(T, B, I))
    with torchish.no_grad():
        torchish.manual_seed(1)
        a = xm(x)[0].numpy()
        torchish.manual_seed(1)
        b = xm(x)[0].numpy()
        c = xm(x)[0].numpy()
        xm.eval()
        tm.eval()
        e = xm(x)[0].numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert not np.allclose(a, e)
    compare(tm, xm, [arr(T, B, I)], _call("LSTM", False))
    # the dropped-out training forward is differentiable all the way to the first layer's weights
    xm.train()
    out = xm(x)[0]
    out.sum().backward()
    assert xm.weight_ih_l0.grad is not None and np.any(xm.weight_ih_l0.grad.numpy())


# ----------------------------------------------------------------------------------------------------------------
# packed sequences

LENGTHS = [3, 5, 2]  # unsorted on purpose


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_packed_unsorted_lengths(name, batch_first):
    kw = dict(num_layers=2, bidirectional=True, batch_first=batch_first)
    tm, xm = _pair(name, I, H, **kw)
    x = arr(3, T, I) if batch_first else arr(T, 3, I)
    states = [arr(*s, seed=i + 1) for i, s in enumerate(_state_shapes(name, kw, 3))]

    def call(lib, m, x, *state):
        rnn_utils = lib.nn.utils.rnn
        packed = rnn_utils.pack_padded_sequence(x, LENGTHS, batch_first=batch_first, enforce_sorted=False)
        out, hidden = m(packed, tuple(state) if name == "LSTM" else state[0])
        padded, lengths = rnn_utils.pad_packed_sequence(out, batch_first=batch_first, padding_value=-2.0)
        return out.data, padded, lengths, hidden

    compare(tm, xm, [x] + states, call)


def test_packed_sorted_without_state_and_unpacked_sequences():
    tm, xm = _pair("LSTM", I, H, bidirectional=True)

    def call(lib, m, a, b, c):
        packed = lib.nn.utils.rnn.pack_sequence([a, b, c])
        out, (h, cell) = m(packed)
        return lib.nn.utils.rnn.unpack_sequence(out), h, cell

    compare(tm, xm, [arr(5, I), arr(4, I, seed=1), arr(2, I, seed=2)], call)


def test_packed_final_state_is_taken_at_each_last_valid_step():
    _, xm = _pair("GRU", I, H)
    x = arr(T, 3, I)
    rnn_utils = torchish.nn.utils.rnn
    packed = rnn_utils.pack_padded_sequence(torchish.tensor(x), LENGTHS, enforce_sorted=False)
    _, h = xm(packed)
    for b, n in enumerate(LENGTHS):  # the same sequence alone, cut at its length
        _, hb = xm(torchish.tensor(x[:n, b:b + 1]))
        np.testing.assert_allclose(h.detach().numpy()[:, b], hb.detach().numpy()[:, 0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lengths", [[11, 7, 3], [8, 8, 2], [13, 1, 1]])
def test_packed_batches_of_many_lengths_with_dropout(lengths):
    """Eager packed batches run on a grid of bucketed length (9..12 steps run 12, 13..16 run 16): outputs, states
    and every gradient as PyTorch's, with dropout between the layers drawn per packed row."""
    kw = dict(num_layers=2, bidirectional=True, dropout=0.5)
    tm, xm = _pair("LSTM", I, H, **kw)
    x = arr(max(lengths), 3, I)
    states = [arr(4, 3, H, seed=i + 1) for i in range(2)]

    def call(lib, m, x, h0, c0):
        lib.manual_seed(3)
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
        out, hidden = m(packed, (h0, c0))
        return out.data, hidden

    compare(tm, xm, [x] + states, call)


def test_packed_lengths_in_one_bucket_share_the_stack_kernels():
    """A new pattern of lengths in a seen bucket compiles no new recurrent kernel, forward or backward (each would
    cost about a second), and the backward is not lowered into a program per pattern."""
    from torchish.nn._functional.rnn import _STACK_OPS
    op = _STACK_OPS["gru"]
    xm = torchish.nn.GRU(I, H)
    rnn_utils = torchish.nn.utils.rnn

    def step(lengths):
        x = torchish.tensor(arr(max(lengths), 3, I), requires_grad=True)
        out, h = xm(rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False))
        (out.data.sum() + h.sum()).backward()
        return x.grad

    def sizes(kernels):
        return sorted(k.args[0]._cache_size() for k in kernels.values())

    g = step([10, 9, 2])
    fwd, bwd = sizes(op.kernels), sizes(op.bwd_kernels)
    for lengths in ([12, 4, 4], [11, 11, 11], [9, 1, 1], [10, 9, 2]):
        g = step(lengths)
        assert sizes(op.kernels) == fwd and sizes(op.bwd_kernels) == bwd, lengths
    assert g.shape == (10, 3, I) and not np.any(g.numpy()[2:, 2])  # (past its length a sequence has no gradient)


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_padded_batches_of_varying_length(name):
    """Padded input whose length varies between calls runs padded to a bucketed length (after the second length
    seen): outputs, final states and gradients as PyTorch's, and lengths in one bucket share the stack's kernels."""
    from torchish.nn._functional.rnn import _STACK_OPS
    tm, xm = _pair(name, I, H, batch_first=True, dropout=0.5, num_layers=2)

    def call(lib, m, x):
        lib.manual_seed(3)
        return m(x)

    for steps in (T, 9, 11, 13):
        compare(tm, xm, [arr(3, steps, I, seed=steps)], call)
    op = _STACK_OPS[name.lower()] if name == "GRU" else None
    if op is not None:
        def sizes():
            return [sorted(k.args[0]._cache_size() for k in ks.values()) for ks in (op.kernels, op.bwd_kernels)]
        seen = sizes()
        x = torchish.tensor(arr(3, 10, I), requires_grad=True)
        out, h = xm(x)  # (gradients for both outputs, as compare's)
        torchish.autograd.grad((out, h), [x] + list(xm.parameters()),
                               (torchish.ones(out.shape), torchish.ones(h.shape)))
        assert sizes() == seen


def test_padded_sequences_keep_the_lowered_backward():
    """Only packed batches are kept off the lowered backward (a program per pattern of lengths): a padded batch's
    backward, seen before, still runs as one program."""
    from torchish.autograd import lowering
    xm = torchish.nn.GRU(I, 7)  # (a stack no other test calls with other lengths: see rnn._varying_steps)
    x = torchish.tensor(arr(T, 5, I))
    saved = torchish.config.lowered_backward
    torchish.config.lowered_backward = "auto"
    try:
        for _ in range(3):
            xm(x)[0].sum().backward()
        before = lowering.STATS["lowered"]
        xm(x)[0].sum().backward()
        assert lowering.STATS["lowered"] == before + 1
    finally:
        torchish.config.lowered_backward = saved


# ----------------------------------------------------------------------------------------------------------------
# the recurrence is one op


def _graph_nodes(*roots):
    seen, stack = [], [r for r in roots if r is not None]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.append(n)
        stack.extend(f for f, _ in n.next_functions if f is not None)
    return [n for n in seen if type(n).__name__ != "AccumulateGrad"]


@pytest.mark.parametrize("steps", [2, 9])
def test_lstm_sequence_is_a_single_grad_fn_node(steps):
    xm = torchish.nn.LSTM(I, H, num_layers=2, bidirectional=True)
    x = torchish.tensor(arr(steps, B, I), requires_grad=True)
    out, (h, c) = xm(x)
    nodes = _graph_nodes(out.grad_fn, h.grad_fn, c.grad_fn)
    # one node for every layer, direction and step; above it only PyTorch's own top nodes (the cat of the two
    # directions' outputs, the stacks of the final states), which torchish runs for real over its outputs
    assert sorted(type(n).__name__ for n in nodes) == ["CatBackward0", "MkldnnRnnLayerBackward0", "StackBackward0",
                                                      "StackBackward0"]
    fused = out.grad_fn.next_functions[0][0]
    tops = (out.grad_fn, h.grad_fn, c.grad_fn)
    assert all(f is fused for top in tops for f, _ in top.next_functions)


def test_cell_step_is_a_single_grad_fn_node():
    cell = torchish.nn.LSTMCell(I, H)
    h, c = cell(torchish.tensor(arr(B, I), requires_grad=True))
    # the step is one node (c's); h = o * tanh(c) is PyTorch's product node over two of its outputs
    nodes = _graph_nodes(h.grad_fn, c.grad_fn)
    assert len(nodes) == 2 and h.grad_fn in nodes and c.grad_fn in nodes
    assert [f for f, _ in h.grad_fn.next_functions] == [c.grad_fn, c.grad_fn]


# ----------------------------------------------------------------------------------------------------------------
# cells

CELLS = [
    ("RNNCell", dict()),
    ("RNNCell", dict(nonlinearity="relu", bias=False)),
    ("LSTMCell", dict()),
    ("LSTMCell", dict(bias=False)),
    ("GRUCell", dict()),
    ("GRUCell", dict(bias=False)),
]


@pytest.mark.parametrize("name,kw", CELLS, ids=[f"{n}-{kw}" for n, kw in CELLS])
def test_cell_matches_torch(name, kw):
    tm, xm = _pair(name, I, H, **kw)
    lstm = name == "LSTMCell"

    def call(lib, m, x, h=None, c=None):
        if h is None:
            return m(x)
        return m(x, (h, c) if lstm else h)

    states = [arr(B, H, seed=1)] + ([arr(B, H, seed=2)] if lstm else [])
    compare(tm, xm, [arr(B, I)] + states, call)
    compare(tm, xm, [arr(B, I)], call)
    compare(tm, xm, [arr(I)] + [s[0] for s in states], call)  # unbatched


def test_gru_cell_gate_equations():
    """GRU: r, z from sigmoid; n = tanh(W_in x + b_in + r * (W_hn h + b_hn)); h' = (1 - z) n + z h."""
    xm = torchish.nn.GRUCell(I, H)
    x, h = arr(B, I), arr(B, H, seed=1)
    w_ih, w_hh = xm.weight_ih.detach().numpy(), xm.weight_hh.detach().numpy()
    b_ih, b_hh = xm.bias_ih.detach().numpy(), xm.bias_hh.detach().numpy()
    gi, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    r, z = sig(gi[:, :H] + gh[:, :H]), sig(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    want = (1 - z) * n + z * h
    got = xm(torchish.tensor(x), torchish.tensor(h)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------------------------------------------
# parameters, init, errors


@pytest.mark.parametrize("name,kw", [("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
                                     ("GRU", dict(bias=False)), ("RNN", dict(num_layers=2))])
def test_parameter_names_shapes_and_init(name, kw):
    tm = getattr(torch.nn, name)(I, H, **kw)
    torchish.manual_seed(0)
    xm = getattr(torchish.nn, name)(I, H, **kw)
    assert [(n, tuple(p.shape)) for n, p in xm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert [[n for n in ws] for ws in xm._all_weights] == [[n for n in ws] for ws in tm._all_weights]
    bound = 1 / np.sqrt(H)
    values = np.concatenate([p.detach().numpy().reshape(-1) for p in xm.parameters()])
    assert np.all(np.abs(values) <= bound)
    assert abs(values.std() - bound / np.sqrt(3)) < 0.2 * bound  # U(-b, b) has std b / sqrt(3)
    assert repr(xm) == repr(tm)
    assert xm.flatten_parameters() is None
    assert [list(map(tuple, (w.shape for w in ws))) for ws in xm.all_weights] == \
        [list(map(tuple, (w.shape for w in ws))) for ws in tm.all_weights]


def _err_cases():
    return [
        lambda T: T.nn.LSTM(4, 5)(T.ones(3, 2, 3)),
        lambda T: T.nn.LSTM(4, 5)(T.ones(3, 2, 4), (T.ones(2, 2, 5), T.ones(1, 2, 5))),
        lambda T: T.nn.LSTM(4, 5)(T.ones(3, 2, 4), (T.ones(1, 2, 5), T.ones(1, 3, 5))),
        lambda T: T.nn.LSTM(4, 5)(T.ones(3, 4), (T.ones(1, 2, 5), T.ones(1, 3, 5))),
        lambda T: T.nn.LSTM(4, 5)(T.ones(3, 2, 4), (T.ones(2, 5), T.ones(1, 3, 5))),
        lambda T: T.nn.LSTM(4, 5)(T.ones(1, 3, 2, 4)),
        lambda T: T.nn.LSTM(4, 5)(T.ones(3, 2, 4, dtype=T.float64)),
        lambda T: T.nn.GRU(4, 5)(T.ones(3, 2, 4), T.ones(1, 3, 5)),
        lambda T: T.nn.RNN(4, 5)(T.ones(3, 2, 4), T.ones(1, 5)),
        lambda T: T.nn.RNN(4, 5)(T.ones(3, 4), T.ones(1, 1, 5)),
        lambda T: T.nn.RNN(4, 5)(T.ones(2, 2, 2, 4)),
        lambda T: T.nn.LSTM(4, 5, proj_size=5),
        lambda T: T.nn.GRU(4, 5, proj_size=2),
        lambda T: T.nn.RNN(4, 5, nonlinearity="gelu"),
        lambda T: T.nn.RNN(4, 5, 2, dropout=1.5),
        lambda T: T.nn.RNN(4, 0),
        lambda T: T.nn.RNNCell(4, 5)(T.ones(2, 3)),
        lambda T: T.nn.GRUCell(4, 5)(T.ones(2, 4), T.ones(3, 5)),
        lambda T: T.nn.LSTMCell(4, 5)(T.ones(2, 4), (T.ones(2, 4), T.ones(2, 4))),
        lambda T: T.nn.LSTMCell(4, 5)(T.ones(1, 2, 4)),
        lambda T: T.nn.RNNCell(4, 5)(T.ones(4), T.ones(1, 1, 5)),
    ]


@pytest.mark.parametrize("case", range(len(_err_cases())))
def test_errors_match_torch(case):
    fn = _err_cases()[case]
    ref = check_raises(fn)
    with pytest.raises(type(ref)) as got:
        fn(torchish)
    assert str(got.value) == str(ref), (str(got.value), str(ref))


def test_dropout_warning_for_one_layer():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        torchish.nn.GRU(I, H, dropout=0.2)


# ----------------------------------------------------------------------------------------------------------------
# torchish.nn.utils.rnn


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [([5, 3, 2], True), ([3, 5, 3], False), ([2, 2, 5], False)])
def test_pack_pad_roundtrip(lengths, enforce_sorted, batch_first):
    x = arr(3, T, 2) if batch_first else arr(T, 3, 2)

    def fn(lib, x):
        u = lib.nn.utils.rnn
        p = u.pack_padded_sequence(x, lib.tensor(lengths), batch_first=batch_first, enforce_sorted=enforce_sorted)
        padded, lens = u.pad_packed_sequence(p, batch_first=batch_first, padding_value=0.5, total_length=T + 1)
        return p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices, padded, lens

    check(fn, [x])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    def fn(lib, a, b, c):
        return lib.nn.utils.rnn.pad_sequence([a, b, c], batch_first=batch_first, padding_value=-1.0,
                                             padding_side=side)

    check(fn, [arr(2, 3), arr(4, 3, seed=1), arr(1, 3, seed=2)])


def test_unpad_and_unpack_sequence():
    def fn(lib, a, b):
        u = lib.nn.utils.rnn
        padded = u.pad_sequence([a, b], batch_first=True)
        parts = u.unpad_sequence(padded, lib.tensor([2, 4]), batch_first=True)
        packed = u.pack_sequence([b, a])
        return parts, u.unpack_sequence(packed), packed.data, packed.batch_sizes

    check(fn, [arr(2, 3), arr(4, 3, seed=1)])


def test_packed_sequence_is_a_namedtuple_with_casts():
    p = torchish.nn.utils.rnn.pack_sequence([torchish.ones(3, 2), torchish.ones(1, 2)])
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert p.data is data and sorted_indices is None and unsorted_indices is None
    assert batch_sizes.tolist() == [2, 1, 1] and batch_sizes.dtype == torchish.int64
    assert p.double().data.dtype == torchish.float64 and p.to(torchish.float32) is p
    assert not p.is_cuda


def _pack_err_cases():
    x = arr(4, 3, 2)
    return [
        lambda T: T.nn.utils.rnn.pack_padded_sequence(T.tensor(x), [1, 2, 3]),
        lambda T: T.nn.utils.rnn.pack_padded_sequence(T.tensor(x), [3, 2]),
        lambda T: T.nn.utils.rnn.pack_padded_sequence(T.tensor(x), [3, 0, 0]),
        lambda T: T.nn.utils.rnn.pad_sequence([T.ones(2, 3), T.ones(1, 2)]),
        lambda T: T.nn.utils.rnn.pad_sequence([T.ones(2, 3)], padding_side="middle"),
        lambda T: T.nn.utils.rnn.pad_sequence([]),
        lambda T: T.nn.utils.rnn.pad_packed_sequence(
            T.nn.utils.rnn.pack_padded_sequence(T.tensor(x), [3, 2, 1]), total_length=2),
    ]


@pytest.mark.parametrize("case", range(len(_pack_err_cases())))
def test_pack_errors_match_torch(case):
    fn = _pack_err_cases()[case]
    ref = check_raises(fn)
    with pytest.raises(type(ref)) as got:
        fn(torchish)
    assert str(got.value) == str(ref)


def test_lengths_longer_than_the_batch_are_an_error():
    with pytest.raises(RuntimeError, match="at most the padded sequence length"):
        torchish.nn.utils.rnn.pack_padded_sequence(torchish.ones(4, 3, 2), [5, 2, 1])


@needs_torch
@pytest.mark.parametrize("kw", [{}, {"num_layers": 2}, {"batch_first": True}, {"bidirectional": True},
                                {"proj_size": 2}, {"dtype": "float64"}, {"packed": True}])
def test_lstm_output_written_in_place_breaks_backward_where_pytorchs_cpu_kernel_saves_it(kw):
    # PyTorch's CPU LSTM (float32, one direction, no projection, padded input) runs oneDNN's kernel, which saves its
    # output; the other configurations save no output and a write in place leaves backward valid
    kw = dict(kw)
    dtype, packed = kw.pop("dtype", "float32"), kw.pop("packed", False)
    got = []
    for lib in (torch, torchish):
        lib.manual_seed(0)
        m = lib.nn.LSTM(3, 4, **kw).to(getattr(lib, dtype))
        x = lib.ones(5, 2, 3, dtype=getattr(lib, dtype), requires_grad=True)
        if packed:
            x = lib.nn.utils.rnn.pack_padded_sequence(x, [5, 3])
        out, (h, c) = m(x)
        o = out.data if packed else out
        o.mul_(2)
        try:
            (o.sum() + h.sum()).backward()
            got.append("ok")
        except RuntimeError as e:
            got.append("modified by an inplace operation" in str(e))
    assert got[0] == got[1]


def test_batch_first_output_is_transposed_time_major_output_as_torch():
    """PyTorch runs batch-first input time-major and hands the output back transposed (RNN.cpp: a view for LSTM,
    ``transpose_`` in place for GRU/RNN), so its strides are (H, B*H, 1): ``view(-1)`` raises and
    ``is_contiguous()`` is False, unbatched input included; values and gradients are unchanged."""
    def run(T):
        out = []
        for cls, kw in ((T.nn.LSTM, {}), (T.nn.GRU, {"num_layers": 2, "bidirectional": True}), (T.nn.RNN, {})):
            m = formula_init(T, cls(3, 4, batch_first=True, **kw))
            for shape in ((5, 2, 3), (2, 3)):
                x = T.cos(T.arange(float(np.prod(shape))) * 0.4).reshape(shape).requires_grad_()
                y = m(x)[0]
                out.append((y.stride(), y.is_contiguous(), y._is_view(), y.grad_fn.name()))
                try:
                    y.view(-1)
                except RuntimeError as e:
                    out.append(str(e))
                (y * y).sum().backward()
                out += [y, x.grad, m.weight_hh_l0.grad]
        return out
    same(run)
