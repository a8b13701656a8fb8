"""cumsum/cumprod check what PyTorch checks before their kernel runs, in PyTorch's order: ``out=`` with an input that
requires grad, then the kernel's lack of a Bool version — both before autograd refuses an integer result (found by
tests/test_fuzz_math.py --compile at seed 20,000,000: ``cumprod(x, -1, dtype=torch.bool)`` of a float input that
requires grad raised "Autograd not support dtype: Bool", where PyTorch's kernel raises NotImplementedError)."""
import warnings

import pytest

from oracle import needs_torch, same, same_error

pytestmark = needs_torch
warnings.filterwarnings("ignore", category=UserWarning)

INPUTS = {
    "matrix": lambda T, rg: T.tensor([[-1.0, 2.0], [0.5, -1.5]], requires_grad=rg),
    "scalar": lambda T, rg: T.tensor(1.5, requires_grad=rg),
    "empty": lambda T, rg: T.zeros(0, 2, requires_grad=rg),
}
RAISES = {  # (input, requires grad, keyword): PyTorch raises
    ("matrix", False, "dtype"), ("matrix", False, "out"), ("matrix", True, "dtype"), ("matrix", True, "out"),
    ("scalar", True, "dtype"), ("scalar", True, "out"), ("empty", True, "dtype"), ("empty", True, "out"),
}


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("kw", ["dtype", "out"])
@pytest.mark.parametrize("rg", [False, True])
@pytest.mark.parametrize("inp", list(INPUTS))
def test_bool_scan_checks_in_pytorch_order(op, kw, rg, inp):
    def f(T):
        x = INPUTS[inp](T, rg)
        kwargs = {"dtype": T.bool} if kw == "dtype" else {"out": T.empty(0, dtype=T.bool)}
        return getattr(T, op)(x, -1, **kwargs)
    if (inp, rg, kw) in RAISES:
        same_error(f)
    else:
        same(f)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_integer_dtype_of_a_grad_input(op):
    same_error(lambda T: getattr(T, op)(T.tensor([1.0, 2.0], requires_grad=True), 0, dtype=T.int64))
    same(lambda T: getattr(T, op)(T.tensor([1.0, 2.0], requires_grad=True).detach(), 0, dtype=T.int64))
