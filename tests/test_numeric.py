"""cov, corrcoef, vander, combinations, renorm and frexp against PyTorch (values, dtypes, gradients, errors)."""
import numpy as np
import pytest

from oracle import arr, check, check_fd, check_raises, same, same_error, torchish

X = arr(3, 5, seed=4)
FW = np.array([1, 2, 1, 3, 1])
AW = np.array([0.5, 1.0, 2.0, 1.0, 0.3], np.float32)

CASES = {
    "cov": lambda t, x: t.cov(x),
    "cov_correction0": lambda t, x: t.cov(x, correction=0),
    "cov_1d": lambda t, x: t.cov(x[0]),
    "cov_fweights": lambda t, x: t.cov(x, fweights=t.tensor(FW)),
    "cov_aweights": lambda t, x: t.cov(x, aweights=t.tensor(AW)),
    "cov_both_weights": lambda t, x: t.cov(x, fweights=t.tensor(FW), aweights=t.tensor(AW), correction=2),
    "cov_method": lambda t, x: x.cov(),
    "corrcoef": lambda t, x: t.corrcoef(x),
    "corrcoef_1d": lambda t, x: t.corrcoef(x[0]),
    "combinations": lambda t, x: t.combinations(x[0]),
    "combinations_replacement": lambda t, x: t.combinations(x[0], 3, with_replacement=True),
    "renorm": lambda t, x: t.renorm(x, 2, 0, 1.0),
    "renorm_method_p1": lambda t, x: x.renorm(1, 1, 0.5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients(name):
    check(CASES[name], [X])


def test_cov_finite_differences():
    check_fd(lambda x: torchish.cov(x, aweights=torchish.tensor(AW.astype(np.float64))), X.astype(np.float64))


def test_values():
    # torch.vander's own backward fails in PyTorch 2.13 (an in-place cumprod): values only
    same(lambda t: [t.vander(t.tensor(X[0])), t.vander(t.tensor(X[0]), N=3, increasing=True),
                    t.vander(t.tensor([1, 2, 3]), 4), t.vander(t.tensor(X[0]), N=0), t.vander(t.tensor(X[0]), N=1),
                    t.combinations(t.tensor([1, 2, 3]), 0), t.cov(t.tensor([[1, 2, 3], [2, 5, 1]])),
                    tuple(t.frexp(t.tensor([8.0, 0.3, -5.0, 0.0])))])


ERRORS = {
    "cov_3d": lambda t: t.cov(t.ones(3, 5, 1)),
    "cov_float_fweights": lambda t: t.cov(t.ones(3, 5), fweights=t.ones(5)),
    "cov_fweights_numel": lambda t: t.cov(t.ones(3, 5), fweights=t.ones(4, dtype=t.int64)),
    "cov_int_aweights": lambda t: t.cov(t.ones(3, 5), aweights=t.ones(5, dtype=t.int64)),
    "cov_float_correction": lambda t: t.cov(t.ones(3, 2), correction=1.5),
    "cov_bool_correction": lambda t: t.cov(t.ones(3, 2), correction=True),
    "cov_float_tensor_correction": lambda t: t.cov(t.ones(3, 2), correction=t.tensor(1.0)),
    "cov_negative_fweights": lambda t: t.cov(t.ones(3, 2), fweights=t.tensor([-1, 2])),
    "cov_negative_aweights": lambda t: t.cov(t.ones(3, 2), aweights=t.tensor([2.0, -0.5])),
    "cov_negative_aweights_with_fweights": lambda t: t.cov(t.ones(3, 2), fweights=t.tensor([1, 2]),
                                                           aweights=t.tensor([-2.0, 1.0])),
    "corrcoef_3d": lambda t: t.corrcoef(t.ones(2, 2, 2)),
    "vander_2d": lambda t: t.vander(t.ones(2, 2)),
    "combinations_2d": lambda t: t.combinations(t.ones(2, 2)),
    "renorm_1d": lambda t: t.renorm(t.ones(3), 2, 0, 1.0),
    "renorm_p0": lambda t: t.renorm(t.ones(3, 3), 0, 0, 1.0),
    "frexp_int": lambda t: t.frexp(t.ones(3, dtype=t.int64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check_raises(ERRORS[name])


@pytest.mark.parametrize("p, maxnorm", [(2, -1), (2, -1.5), (2, -1e-7), (2, float("nan")), (float("nan"), 1.0),
                                         (-1.5, 1.0)])
def test_renorm_argument_messages_match_torch(p, maxnorm):
    """NaN fails renorm's checks, and maxnorm prints as PyTorch prints a double ('-1', not '-1.0')."""
    same_error(lambda t: t.renorm(t.ones(2, 3), p, 0, maxnorm))


def test_cov_degrees_of_freedom_warns():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        torchish.cov(torchish.ones(3, 1))


def test_frexp_of_subnormals_normalises_the_mantissa():
    # XLA:CPU reads subnormals as zero in arithmetic: jnp.frexp gave 0.5 * 2**-149 for every float32 subnormal
    def subnormals(t, dtype):
        tiny = np.finfo(dtype).tiny
        v = np.array([tiny / 3, -tiny / 1000, tiny * 0.5, -tiny * 2.0 ** -9, tiny, 0.0, -0.0, np.inf, 6.0], dtype)
        return t.tensor(v)
    same(lambda t: [tuple(t.frexp(subnormals(t, dt))) for dt in (np.float16, np.float32, np.float64)]
         + [tuple(t.frexp(t.tensor(np.array([43, -32768, 1, 0x3F80], np.int16)).view(t.bfloat16)))])
    check(lambda t, x: t.frexp(x * 1e3)[0] * 3.0, [X])  # the mantissa's gradient, grad / 2 ** exponent


@pytest.mark.parametrize("name", ["cov_negative_fweights", "cov_negative_aweights", "cov_float_correction",
                                  "cov_bool_correction"])
def test_cov_argument_errors_have_pytorchs_message(name):
    """A negative weight is refused with PyTorch's message (before, torchish returned a covariance of -inf or a
    negative variance), and so is a correction that is not an int (before, 1.5 and True were used as numbers)."""
    same_error(ERRORS[name])
