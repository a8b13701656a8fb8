"""Anomaly detection against PyTorch: NaN in backward raises naming the node, and the warning carries the
traceback of the forward call that created it."""
import warnings

from oracle import assert_same, check_raises, run_both, torchish, same


def flags(T):
    """(anomaly enabled, NaN check enabled): PyTorch has them at top level, torchish in torchish.autograd."""
    if T is torchish:
        return T.autograd.is_anomaly_enabled(), T.autograd.is_anomaly_check_nan_enabled()
    return T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()


def raised_and_warned(fn, T):
    """(exception type name, message, [warning categories and first lines], whether a warning shows fn's line)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn(T)
            err = None
        except RuntimeError as e:
            err = e
    msgs = [str(x.message) for x in w]
    lines = [(x.category.__name__, m.split("\n")[0]) for x, m in zip(w, msgs)]
    shows_forward_line = any("y = (x / x).sum()" in m or "y = x.exp()" in m for m in msgs)
    return (type(err).__name__ if err else None), (str(err)[:120] if err else None), lines, shows_forward_line


def nan_in_div(T):
    x = T.tensor([0.0, 1.0], requires_grad=True)
    with T.autograd.detect_anomaly():
        y = (x / x).sum()
        y.backward()


def test_nan_in_backward_raises_with_forward_traceback():
    same(lambda T: raised_and_warned(nan_in_div, T))


def test_error_in_backward_warns_with_forward_traceback():
    def inplace(T):
        x = T.tensor([0.0, 1.0], requires_grad=True)
        with T.autograd.detect_anomaly():
            y = x.exp()
            y.add_(1)
            y.sum().backward()
    ref, got = run_both(lambda T: raised_and_warned(inplace, T))
    assert ref[0] == got[0] == "RuntimeError"
    assert ref[2] == got[2] and ref[3] and got[3]


def test_nan_without_anomaly_mode_passes_through():
    def f(T):
        x = T.tensor([0.0, 1.0], requires_grad=True)
        (x / x).sum().backward()
        return x.grad, flags(T)
    same(f)


def test_check_nan_false():
    def f(T):
        x = T.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with T.autograd.detect_anomaly(check_nan=False):
                (x / x).sum().backward()
                inside = flags(T)
        return x.grad, inside, flags(T)
    same(f)


def test_set_detect_anomaly_function_and_context():
    def f(T):
        x = T.tensor([0.0, 1.0], requires_grad=True)
        T.autograd.set_detect_anomaly(True)
        try:
            (x / x).sum().backward()
        finally:
            T.autograd.set_detect_anomaly(False)
    check_raises(f, match=r"^Function 'DivBackward0' returned nan values in its 1th output\.$")

    def g(T):
        with T.autograd.set_detect_anomaly(True, check_nan=False):
            inside = flags(T)
        return inside, flags(T)
    same(g)


def test_nan_from_custom_function_and_sqrt():
    def custom(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")

        x = T.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with T.autograd.detect_anomaly():
                F.apply(x).sum().backward()
    check_raises(custom, match=r"^Function 'FBackward' returned nan values in its 0th output\.$")

    def sqrt(T):
        x = T.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with T.autograd.detect_anomaly():
                (x.sqrt() * 0).sum().backward()
    check_raises(sqrt, match=r"^Function 'SqrtBackward0' returned nan values in its 0th output\.$")


def test_detect_anomaly_warns_on_entry():
    def f(T):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.autograd.detect_anomaly()
        return [(x.category.__name__, str(x.message)) for x in w]
    same(f)


def test_anomaly_state_is_restored():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with torchish.autograd.detect_anomaly():
                raise ValueError("inside")
        except ValueError:
            pass
    assert torchish.autograd.is_anomaly_enabled() is False
