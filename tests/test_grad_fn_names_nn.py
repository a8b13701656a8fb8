"""The ``grad_fn`` names PyTorch 2.13 shows for circular padding (CopySlices), renorm (its own RenormBackward0),
native_group_norm (one NativeGroupNormBackward0 for its three outputs), stft (its kernel's in-place transpose_ and
squeeze_), combinations(r=1) (a stack, as for every r) and the trapezoid rules (C++ composites ending in the
Scalar overloads MulBackward1 / DivBackward1), found differing by a survey of PyTorch's OpInfo samples; with the
values and gradients of the reworked ops, and F.batch_norm / nn.BatchNorm1d of inputs without elements."""
import numpy as np
import pytest

from oracle import arr, check, check_raises, run_both

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:A window was not provided", "ignore:stft with return_complex=False")


def _names(res):
    if isinstance(res, (tuple, list)):
        return [n for r in res for n in _names(r)]
    return [type(res.grad_fn).__name__ if res.grad_fn is not None else None]


def _x(lib, *shape, seed=0, dtype=None):
    return lib.tensor(arr(*shape, seed=seed)).to(dtype or lib.float32).requires_grad_()


def _check(cases):
    ref, got = run_both(lambda lib: [(k, _names(f())) for k, f in cases(lib)])
    assert got == ref


def test_circular_pad_renorm_and_group_norm_names():
    def cases(lib):
        F = lib.nn.functional
        for pad in ((1, 2), (-1, 2), (0, 0)):
            yield ("pad1d", pad), lambda: F.pad(_x(lib, 1, 2, 4), pad, mode="circular")
        yield "pad2d", lambda: F.pad(_x(lib, 1, 2, 3, 4), (1, 1, 1, 0), mode="circular")
        yield "pad3d", lambda: F.pad(_x(lib, 2, 2, 2, 2), (1, 0, 0, 1, 1, 1), mode="circular")
        yield "renorm", lambda: lib.renorm(_x(lib, 3, 4), 2, 0, 1.0)
        yield "renorm method", lambda: _x(lib, 2, 3, 2).renorm(1, 1, 0.5)
        yield "renorm_", lambda: (_x(lib, 3, 4) * 1).renorm_(float("inf"), 1, 0.3)
        w, b = _x(lib, 6, seed=1), _x(lib, 6, seed=2)
        yield "group_norm", lambda: F.group_norm(_x(lib, 2, 6, 3), 3, w, b)
        yield "native_group_norm", lambda: lib.native_group_norm(_x(lib, 2, 6, 3), w, b, 2, 6, 3, 3, 1e-5)
        yield "native_group_norm 1-d", lambda: lib.native_group_norm(_x(lib, 12), None, None, 2, 6, 1, 3, 1e-5)
    _check(cases)


def test_native_group_norm_next_functions_list_missing_affine():
    ref, got = run_both(lambda lib: [type(f).__name__ if f is not None else None for f, _ in lib.native_group_norm(
        _x(lib, 2, 6, 3), None, None, 2, 6, 3, 3, 1e-5)[0].grad_fn.next_functions])
    assert got == ref


def test_stft_names():
    def cases(lib):
        for ndim in (1, 2):  # (a 1-d signal: squeezed in place, SqueezeBackward4; a batch: TransposeBackward1)
            x = _x(lib, *((16,) if ndim == 1 else (2, 16)))
            yield ("real", ndim), lambda: lib.stft(x, 8, return_complex=True)
            yield ("complex", ndim), lambda: lib.stft(x * (1 + 0.5j), 8, hop_length=3, return_complex=True)
            yield ("real pairs", ndim), lambda: lib.stft(x, 8, return_complex=False)
        x = _x(lib, 16)
        yield "window", lambda: lib.stft(x, 8, window=lib.hann_window(8), return_complex=True)
        yield "short window", lambda: lib.stft(x, 8, win_length=6, return_complex=True)
        yield "no center", lambda: lib.stft(x, 8, center=False, normalized=True, return_complex=True)
    _check(cases)


def test_combinations_and_trapezoid_names():
    def cases(lib):
        c = _x(lib, 4)
        for r in (1, 2):
            for wr in (False, True):
                yield ("combinations", r, wr), lambda: lib.combinations(c, r, with_replacement=wr)
        y, y2, x = _x(lib, 4), _x(lib, 2, 4), lib.tensor([0.0, 1.0, 3.0, 4.0])
        yield "trapz", lambda: lib.trapz(y2, x)
        for fn in ("trapezoid", "cumulative_trapezoid"):
            f = getattr(lib, fn)
            yield fn, lambda: f(y)
            yield (fn, "dx"), lambda: f(y2, dx=2.0)
            yield (fn, "x"), lambda: f(y2, x)
            yield (fn, "x 2-d"), lambda: f(y2, lib.tensor([[0.0], [2.0]]), dim=0)
            yield (fn, "one sample"), lambda: f(_x(lib, 1))
    _check(cases)


# ---------------------------------------------------------------------------------------------------------------
# values and gradients


@pytest.mark.parametrize("dtype,p,dim,maxnorm", [
    (np.float32, 2, 0, 1.0), (np.float32, 1, 1, 0.5), (np.float32, 3, -1, 0.2), (np.float32, 0.5, 0, 1.0),
    (np.float32, float("inf"), 0, 0.3), (np.float32, 2, 1, 0.0), (np.float64, 2, 0, 1.0), (np.complex64, 2, 0, 1.0),
    (np.complex64, 1, 1, 0.5)])
def test_renorm_values_and_grads(dtype, p, dim, maxnorm):
    a = arr(3, 4, seed=1)
    a[1] = 0  # a slice of zeros: scaled by nothing, its gradient the incoming one
    a[2] *= 0.1
    a = (a * (1 + 0.5j)).astype(dtype) if dtype is np.complex64 else a.astype(dtype)
    check(lambda lib, x: lib.renorm(x, p, dim, maxnorm), [a])


def test_renorm_and_native_group_norm_saved_tensors():
    """RenormBackward0 saves the input only; NativeGroupNormBackward0 the input and the mean and rstd outputs:
    writing the output in place leaves the backward valid, writing a saved tensor makes it fail."""
    def run(lib):
        out = []
        for op in ("renorm", "native_group_norm"):
            for write in (0, 1, "input"):
                x = _x(lib, 2, 6, 3) * 1
                res = lib.renorm(x, 2, 0, 1.0) if op == "renorm" else lib.native_group_norm(
                    x, None, None, 2, 6, 3, 3, 1e-5)
                res = res if isinstance(res, tuple) else (res, res)
                (x if write == "input" else res[write]).add_(1)
                try:
                    res[0].sum().backward()
                    out.append("ok")
                except RuntimeError:
                    out.append("RuntimeError")
        return out
    ref, got = run_both(run)
    assert got == ref


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_renorm_half_values_and_grads(dtype):
    check(lambda lib, x: lib.renorm(x.to(getattr(lib, dtype)), 2, 0, 0.5), [arr(3, 4, seed=2)], rtol=1e-2, atol=1e-2)


def test_renorm_integer_input_error():
    check_raises(lambda lib: lib.renorm(lib.ones(2, 3, dtype=lib.long), 2, 0, 1.0))


@pytest.mark.parametrize("shape,affine,n,c,hw,g", [((2, 6, 3), True, 2, 6, 3, 3), ((12,), False, 2, 6, 1, 3),
                                                   ((2, 3, 4), True, 2, 6, 2, 3), ((0, 6, 3), True, 0, 6, 3, 3)])
def test_native_group_norm_values_and_grads_through_all_three_outputs(shape, affine, n, c, hw, g):
    """The mean and rstd outputs are differentiable in PyTorch: the cotangents on all three reach the input."""
    inputs = [arr(*shape, seed=3) * 2 + 0.5] + ([arr(c, seed=4) + 1.5, arr(c, seed=5)] if affine else [None, None])
    check(lambda lib, x, w, b: lib.native_group_norm(x, w, b, n, c, hw, g, 1e-5), inputs)


@pytest.mark.parametrize("args", [(2, 6, 3, 4), (2, 6, 4, 3), (2, 6, 3, 0)])
def test_native_group_norm_argument_errors(args):
    check_raises(lambda lib: lib.native_group_norm(lib.ones(2, 6, 3), None, None, *args, 1e-5))


@pytest.mark.parametrize("case", ["real", "complex", "window", "2-d"])
def test_stft_values_and_grads(case):
    def fn(lib, x, w):
        x = x * (1 + 0.5j) if case == "complex" else x
        window = w if case == "window" else None
        return lib.stft(x, 8, hop_length=3, window=window, return_complex=True)
    check(fn, [arr(*((2, 16) if case == "2-d" else (16,)), seed=6), arr(8, seed=7)], atol=1e-4)


@pytest.mark.parametrize("fn", ["trapezoid", "cumulative_trapezoid"])
@pytest.mark.parametrize("spacing", ["none", "dx", "x", "x 2-d"])
def test_trapezoid_values_and_grads(fn, spacing):
    def run(lib, y, x):
        f = getattr(lib, fn)
        if spacing == "none":
            return f(y)
        if spacing == "dx":
            return f(y, dx=0.5)
        return f(y, x if spacing == "x" else x.unsqueeze(0).expand(2, 4))
    check(run, [arr(2, 4, seed=8), np.array([0.0, 0.5, 2.0, 2.5], np.float32)])


def test_trapezoid_integer_input():
    check(lambda lib, y: (lib.trapezoid(y), lib.cumulative_trapezoid(y, dx=3)), [np.array([1, 4, 2, 7])])


def test_combinations_one_values_and_grads():
    check(lambda lib, c: lib.combinations(c, 1), [arr(4, seed=9)])


def test_circular_pad_values_and_grads():
    check(lambda lib, x: lib.nn.functional.pad(x, (2, -1, 1, 1), mode="circular"), [arr(1, 2, 3, 4, seed=10)])


# ---------------------------------------------------------------------------------------------------------------
# batch_norm of inputs without elements, and of inputs of fewer than 2 dimensions


def _bn_case(lib, case, training):
    F, o = lib.nn.functional, lib.ones
    stats = {"none": (None, None), "empty": (o(0), o(0)), "one": (lib.zeros(1), o(1)), "two": (lib.zeros(2), o(2))}
    shape, st, affine = case
    rm, rv = stats[st]
    w, b = ((o(affine, requires_grad=True), lib.zeros(affine, requires_grad=True)) if affine is not None
            else (None, None))
    x = o(shape, requires_grad=True)
    y = F.batch_norm(x, rm, rv, w, b, training=training)
    y.sum().backward()
    return (tuple(y.shape), str(y.dtype)[-7:], _names(y), [t.grad.tolist() for t in (x, w, b) if t is not None],
            [t.tolist() for t in (rm, rv) if t is not None])


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("case", [((0,), "none", None), ((0,), "empty", None), ((0,), "two", 2), ((0,), "one", 1),
                                  ((2, 0), "none", 3), ((0, 2), "two", 2), ((2, 3, 0), "none", 3)])
def test_batch_norm_of_no_elements(case, training):
    """PyTorch copies the input (times weight[0], plus bias[0]) before any other check, whatever its rank and
    whatever the running statistics; the running statistics stay as they are."""
    ref, got = run_both(_bn_case, case, training)
    assert got == ref


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("case", [((0,), "none", 0), ((3,), "one", None), ((3,), "none", None), ((3,), "empty", None),
                                  ((3,), "empty", 1), ((), "none", None), ((), "one", None), ((1, 1, 1), "none", None)])
def test_batch_norm_errors_of_empty_and_low_rank_inputs(case, training):
    check_raises(_bn_case, case, training)


def test_batch_norm_training_counts_values_per_channel_from_the_batch_and_spatial_sizes():
    """PyTorch's wrapper multiplies size[0] by the spatial sizes: a (1, 0) input has one value per channel."""
    check_raises(_bn_case, ((1, 0), "none", None), True)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 4), (2, 3, 0)])
def test_batchnorm1d_module_without_elements(shape, training):
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.BatchNorm1d(3).train(training)
        y = m(lib.ones(shape, requires_grad=True))
        y.sum().backward()
        return (tuple(y.shape), _names(y), m.running_mean.tolist(), m.running_var.tolist(),
                int(m.num_batches_tracked), m.weight.grad.tolist(), m.bias.grad.tolist())
    ref, got = run_both(run)
    assert got == ref
