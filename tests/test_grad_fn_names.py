"""The ``grad_fn`` names PyTorch shows (``type(out.grad_fn).__name__``, what scripts print and torchviz draws) for
calls torchish runs as one fused node: the node is named per call after the op PyTorch's composite ends in (a
loss's last elementwise op, its mean or sum; nll_loss2d's kernel and its view; the squeeze of an unbatched input),
and recurrent modules run PyTorch's own ``stack``/``cat`` over their fused node. Names are compared against PyTorch
for every tensor output (the cases a survey of PyTorch's OpInfo samples found differing, /work/scratch/s43)."""
import pytest

from oracle import run_both

torch = pytest.importorskip("torch")


def _names(res):
    """The grad_fn class name of every tensor in ``res`` (None where it has none; other values as they are)."""
    if isinstance(res, (tuple, list)):
        return [n for r in res for n in _names(r)]
    if not hasattr(res, "grad_fn"):
        return [res]
    return [type(res.grad_fn).__name__ if res.grad_fn is not None else None]


def _x(lib, *shape, seed=0):
    return lib.randn(shape, generator=lib.Generator().manual_seed(seed)).requires_grad_()


def _check(cases):
    ref, got = run_both(lambda lib: [(k, _names(f())) for k, f in cases(lib)])
    assert got == ref


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
def test_kl_div_names_per_reduction_and_log_target():
    def cases(lib):
        t = lib.rand(3, 4, generator=lib.Generator().manual_seed(1))
        for red in ("none", "mean", "sum", "batchmean"):
            for lt in (False, True):
                tt = t.log() if lt else t
                yield (red, lt), lambda: lib.nn.functional.kl_div(_x(lib, 3, 4), tt, reduction=red, log_target=lt)
                yield (red, lt, 0), lambda: lib.nn.functional.kl_div(_x(lib), tt[0, 0], reduction=red, log_target=lt)
        for red in (0, 1, 2):
            yield ("torch.kl_div", red), lambda: lib.kl_div(_x(lib, 3, 4), t, red)
    _check(cases)


@pytest.mark.parametrize("ndim", [2, 3, 4, 5])
def test_nll_and_cross_entropy_names_per_rank(ndim):
    def cases(lib):
        F = lib.nn.functional
        shape = (2, 3) + (2,) * (ndim - 2)
        tg = lib.randint(0, 3, (2,) + (2,) * (ndim - 2), generator=lib.Generator().manual_seed(2))
        probs = lib.rand(shape, generator=lib.Generator().manual_seed(3)).softmax(1)
        w = lib.tensor([1.0, 2.0, 3.0])
        for red in ("none", "mean", "sum"):
            yield ("nll", red), lambda: F.nll_loss(_x(lib, *shape), tg, reduction=red)
            yield ("nll w", red), lambda: F.nll_loss(_x(lib, *shape), tg, w, reduction=red, ignore_index=1)
            yield ("ce", red), lambda: F.cross_entropy(_x(lib, *shape), tg, reduction=red)
            yield ("ce ls", red), lambda: F.cross_entropy(_x(lib, *shape), tg, reduction=red, label_smoothing=0.1)
            yield ("ce probs", red), lambda: F.cross_entropy(_x(lib, *shape), probs, reduction=red)
            yield ("ce probs ls", red), lambda: F.cross_entropy(_x(lib, *shape), probs, w, reduction=red,
                                                                label_smoothing=0.2)
    _check(cases)


def test_nll_loss_node_lists_only_the_input():
    """The class weights are no input of PyTorch's NllLossBackward0 / NllLoss2DBackward0: next_functions lists the
    input alone, and a hook on the node gets one gradient."""
    def run(lib):
        F = lib.nn.functional
        w, out = lib.tensor([1.0, 2.0, 3.0]), []
        for shape, tshape in (((2, 3), (2,)), ((2, 3, 2, 2), (2, 2, 2))):
            x = _x(lib, *shape)
            y = F.nll_loss(x, lib.zeros(tshape, dtype=lib.long), w)
            seen = []
            y.grad_fn.register_hook(lambda gin, gout: seen.append(len(gin)))
            y.backward()
            out.append(([type(f).__name__ for f, _ in y.grad_fn.next_functions], seen))
        return out
    ref, got = run_both(run)
    assert got == ref


def test_ctc_loss_names_per_reduction():
    def cases(lib):
        F = lib.nn.functional
        for red in ("none", "mean", "sum"):
            for zi in (False, True):
                yield (red, zi), lambda: F.ctc_loss(_x(lib, 5, 2, 4).log_softmax(2), lib.tensor([[1, 2], [3, 3]]),
                                                    lib.tensor([5, 4]), lib.tensor([2, 2]), reduction=red,
                                                    zero_infinity=zi)
                if not zi:  # (unbatched: squeezed where unreduced)
                    yield (red, "unbatched"), lambda: F.ctc_loss(_x(lib, 5, 4).log_softmax(1), lib.tensor([1, 2]),
                                                                 lib.tensor([5]), lib.tensor([2]), reduction=red)
    _check(cases)


def test_composite_loss_names_per_reduction():
    def cases(lib):
        F = lib.nn.functional
        a, b, v = _x(lib, 4, 5), _x(lib, 4, 5, seed=1), _x(lib, 5, seed=2)
        p = lib.rand(4, 5, generator=lib.Generator().manual_seed(3))
        for red in ("none", "mean", "sum"):
            yield ("margin_ranking", red), lambda: F.margin_ranking_loss(v, v.flip(0), lib.ones(5), reduction=red)
            yield ("cosine_embedding", red), lambda: F.cosine_embedding_loss(a, b, lib.ones(4), reduction=red)
            yield ("hinge_embedding", red), lambda: F.hinge_embedding_loss(a, lib.ones(4, 5), reduction=red)
            yield ("multilabel_soft_margin", red), lambda: F.multilabel_soft_margin_loss(a, p, reduction=red)
            for full in (False, True):
                yield ("gaussian_nll", red, full), lambda: F.gaussian_nll_loss(a, b, p + 0.1, full=full,
                                                                               reduction=red)
                for log_input in (False, True):
                    yield ("poisson_nll", red, full, log_input), lambda: F.poisson_nll_loss(
                        p + 0.5 if not log_input else a, p, log_input=log_input, full=full, reduction=red)
    _check(cases)


@pytest.mark.filterwarnings("ignore:LSTM with projections")
def test_recurrent_module_output_and_state_names():
    """PyTorch's CPU stacks: each output shows its own node (the time steps' stack, the directions' cat, oneDNN's
    LSTM layer, the packed steps' cat; the stacks of h_n and c_n), and one level down what they combine."""
    def cases(lib):
        x = _x(lib, 3, 2, 4)
        pack = lib.nn.utils.rnn.pack_padded_sequence
        for mod in ("RNN", "GRU", "LSTM"):
            for kw in ({}, {"bidirectional": True, "num_layers": 2}, {"batch_first": True}):
                lib.manual_seed(0)
                m = getattr(lib.nn, mod)(4, 3, **kw)
                yield (mod, kw), lambda: m(x)
                if not kw:
                    yield (mod, "unbatched"), lambda: m(x[:, 0])
                    yield (mod, "packed"), lambda: (lambda r: (r[0].data, r[1]))(m(pack(x, [3, 2])))
        lib.manual_seed(0)
        yield "LSTM proj", lambda: lib.nn.LSTM(4, 3, proj_size=2)(x)
    # (h_n and c_n: a stack of one entry per layer and direction)
    ref, got = run_both(lambda lib: [(k, _names(r), [[type(f).__name__ for f, _ in t.grad_fn.next_functions]
                                                     for t in _flat(r)[1:]]) for k, f in cases(lib) for r in [f()]])
    assert [(k, n) for k, n, _ in got] == [(k, n) for k, n, _ in ref]
    assert [[len(s) for s in states] for _, _, states in got] == [[len(s) for s in states] for _, _, states in ref]


def _flat(res):
    if isinstance(res, (tuple, list)):
        return [t for r in res for t in _flat(r)]
    return [res]


def test_recurrent_cell_names():
    def cases(lib):
        x = _x(lib, 2, 4)
        for cell, kw in (("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("GRUCell", {}),
                         ("LSTMCell", {}), ("LSTMCell", {"bias": False})):
            lib.manual_seed(0)
            m = getattr(lib.nn, cell)(4, 3, **kw)
            yield (cell, kw), lambda: m(x)
            yield (cell, kw, "unbatched"), lambda: m(x[0])
    _check(cases)


def test_one_dimensional_pooling_and_unbatched_convolution_names():
    """PyTorch pools a 1-d input, and convolves an unbatched one, between an unsqueeze and a squeeze."""
    def cases(lib):
        F = lib.nn.functional
        for x in (_x(lib, 2, 3, 6), _x(lib, 3, 6)):
            yield ("max_pool1d", x.ndim), lambda: F.max_pool1d(x, 2)
            yield ("max_pool1d indices", x.ndim), lambda: F.max_pool1d(x, 2, return_indices=True)
            yield ("avg_pool1d", x.ndim), lambda: F.avg_pool1d(x, 2)
            yield ("adaptive_avg_pool1d", x.ndim), lambda: F.adaptive_avg_pool1d(x, 4)
            yield ("adaptive_max_pool1d", x.ndim), lambda: F.adaptive_max_pool1d(x, 4, return_indices=True)
            yield ("max_unpool1d", x.ndim), lambda: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2)
            if x.ndim == 3:
                yield "interpolate area", lambda: F.interpolate(x, size=4, mode="area")
            yield ("conv1d", x.ndim), lambda: F.conv1d(x, _x(lib, 4, 3, 3, seed=1), _x(lib, 4, seed=2))
            yield ("conv_transpose1d", x.ndim), lambda: F.conv_transpose1d(x, _x(lib, 3, 2, 3, seed=1))
        for x in (_x(lib, 2, 3, 4, 4), _x(lib, 3, 4, 4)):
            yield ("max_pool2d", x.ndim), lambda: F.max_pool2d(x, 2)
            yield ("avg_pool2d", x.ndim), lambda: F.avg_pool2d(x, 2)
            yield ("conv2d", x.ndim), lambda: F.conv2d(x, _x(lib, 2, 3, 3, 3, seed=1))
    _check(cases)


def test_overload_names_chosen_by_arguments():
    """``round(decimals=...)`` is PyTorch's round.decimals (even for 0); ``sum``/``mean`` with ``dim=()`` reduce
    everything through the dim overload; ``sort(stable=...)`` is sort.stable; conj_physical of a real tensor is
    the tensor itself; atleast_3d of a 1-d or 2-d input is PyTorch's unsqueeze."""
    def cases(lib):
        x = _x(lib, 2, 3)
        yield "round", lambda: x.round()
        for d in (0, 2, -1):
            yield ("round decimals", d), lambda: lib.round(x, decimals=d)
            yield ("round_ decimals", d), lambda: (x * 1).round_(decimals=d)
        for fn in ("sum", "mean"):
            yield fn, lambda: getattr(x, fn)()
            yield (fn, "dim=()"), lambda: getattr(lib, fn)(x, ())
            yield (fn, "dim=1"), lambda: getattr(x, fn)(1)
        yield "sort", lambda: x.sort(1)
        for stable in (False, True):
            yield ("sort stable", stable), lambda: lib.sort(x, dim=0, stable=stable)
        yield "conj_physical real", lambda: (lib.conj_physical(x) is x, x.conj_physical())  # (x itself)
        yield "conj_physical complex", lambda: lib.conj_physical(_x(lib, 2).to(lib.complex64))
        for shape in ((), (3,), (2, 3)):  # (atleast_3d unsqueezes: a view of a 0-d input only)
            yield ("atleast_3d", shape), lambda: lib.atleast_3d(_x(lib, *shape))
    _check(cases)
