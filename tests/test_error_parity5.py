"""User mistakes compared with PyTorch, continued from tests/test_error_parity4.py: calls PyTorch's argument parser
refuses before any kernel runs (torchish/ops/parser_errors.py), and the out= error PyTorch raises before refusing
an integer dtype for a grad input. Each case is ``fn(lib)`` run with PyTorch and with torchish and must raise the
same builtin exception type with the same message (``same_error``), or give the same results (``same``).
"""
import pytest

from oracle import needs_torch, same, same_error

pytestmark = [needs_torch]


def _x(lib):
    return lib.arange(6.0).reshape(2, 3)


# A bad dim: where one overload takes that many arguments PyTorch names the op, the argument, its declared type
# ("tuple of ints" for sum-like reductions) and its position (none for a keyword); otherwise it lists the
# overloads, some with why they did not match. torchish said "argument 'dim' must be int, not bool" (no op) for
# the functions and "must be int" for the methods.
PARSER_REFUSED = {
    **{f"{op}_{form}_{kind}": (lambda op, form, bad: lambda lib: (
        getattr(lib, op)(_x(lib), bad) if form == "fn" else
        getattr(lib, op)(_x(lib), dim=bad) if form == "fn_kw" else
        getattr(_x(lib), op)(bad) if form == "method" else getattr(_x(lib), op)(dim=bad)))(op, form, bad)
       for op in ("sum", "mean", "prod", "amax", "nansum", "logsumexp", "argmax", "max", "all", "cumsum", "median")
       for form in ("fn", "fn_kw", "method", "method_kw")
       for kind, bad in (("bool", True), ("str", "a"))},
    "count_nonzero_method_bool": lambda lib: _x(lib).count_nonzero(True),
    "count_nonzero_method_kw_float": lambda lib: _x(lib).count_nonzero(dim=1.5),
    "squeeze_method_str": lambda lib: _x(lib).squeeze("a"),
    "movedim_method_mixed": lambda lib: _x(lib).movedim(True, (0,)),
    "transpose_method_kw": lambda lib: _x(lib).transpose(dim=0),
    "aminmax_kw_bool": lambda lib: lib.aminmax(_x(lib), dim=True),
    "keepdim_before_missing_dim": lambda lib: lib.median(_x(lib), keepdim=1),
    "list_dim_bad_first_item": lambda lib: lib.sum(_x(lib), (1.5, 0)),
    "list_dim_bad_first_item_kw": lambda lib: _x(lib).nansum(dim=(1.5, 0)),
    "list_dim_bad_later_item": lambda lib: _x(lib).mean((0, 1.5)),
    "list_bad_later_items_last_reported": lambda lib: _x(lib).roll((0, 1.5), (0, 1.5)),
    "spread_dims_bad_later": lambda lib: _x(lib).flip(0, 1.5),
    "too_many_positionals": lambda lib: _x(lib).unbind(0, 1),
    "dtype_object_named_as_torch": lambda lib: _x(lib).sum(lib.float64),
    "sum_out_without_dim": lambda lib: lib.sum(_x(lib), out=lib.zeros(())),
    "sum_out_dtype_without_dim": lambda lib: lib.sum(_x(lib), dtype=lib.float32, out=lib.zeros(())),
    "prod_float_dim": lambda lib: lib.prod(_x(lib), 1.5),
    # view takes a dtype or sizes; torchish read a string as a dtype's name ("invalid dtype 'a'")
    "view_str": lambda lib: _x(lib).view("a"),
    "view_float": lambda lib: _x(lib).view(1.5),
    "view_dtype_kw_str": lambda lib: _x(lib).view(dtype="a"),
    # arange's bounds are Numbers: torchish said "must be real number, not str"
    "arange_str": lambda lib: lib.arange("a"),
    "arange_str_end_kw": lambda lib: lib.arange(end="a"),
    "arange_str_end": lambda lib: lib.arange(0, "a"),
    "arange_str_step": lambda lib: lib.arange(0, 5, "a"),
    "arange_none": lambda lib: lib.arange(None),
    # a Tensor method's argument given by keyword has no position (torchish kept the function's "(position 2)")
    "roll_shifts_kw": lambda lib: _x(lib).roll(shifts="a"),
    "roll_dims_kw": lambda lib: _x(lib).roll(1, dims="a"),
}


@pytest.mark.parametrize("name", sorted(PARSER_REFUSED))
def test_calls_the_parser_refuses_say_what_pytorch_says(name):
    same_error(PARSER_REFUSED[name])


# Not numbers or dtypes: torchish took None as the default dtype (x.view(None) gave a float64 view) and a numpy type
# as its dtype; PyTorch's parser refuses both
@pytest.mark.parametrize("value", ["none", "numpy_type", "object"])
def test_view_refuses_what_is_no_dtype(value):
    import numpy as np
    bad = {"none": None, "numpy_type": np.float32, "object": object}[value]
    same_error(lambda lib: _x(lib).view(bad))


def test_view_takes_dtypes_and_python_types():
    """(x.view(int) and x.view(bool) raised "argument 'size' must be tuple of ints, not type": the type int has an
    ``__index__``, so torchish read it as a size)"""
    same(lambda lib: [_x(lib).view(lib.int32), lib.ones(2, 2).view(int), lib.ones(2, 2).view(bool), _x(lib).view(3, 2),
                      _x(lib).view((3, 2))])


# With out= and an input that requires grad PyTorch's out= variant refuses first; torchish said "Autograd not
# support dtype: Long" for an integer dtype=
OUT_GRAD = {
    "sum": lambda lib, x, o: lib.sum(x, 0, dtype=lib.int64, out=o),
    "nansum": lambda lib, x, o: lib.nansum(x, 0, dtype=lib.int64, out=o),
    "prod": lambda lib, x, o: lib.prod(x, 0, dtype=lib.int64, out=o),
    "cumsum": lambda lib, x, o: lib.cumsum(x, 0, dtype=lib.int64, out=o),
}


@pytest.mark.parametrize("name", sorted(OUT_GRAD))
def test_out_with_a_grad_input_refuses_before_the_integer_dtype(name):
    same_error(lambda lib: OUT_GRAD[name](lib, lib.ones(2, 3, requires_grad=True), lib.zeros(3, dtype=lib.int64)))


def test_an_integer_dtype_without_out_still_says_autograd_does_not_support_it():
    same_error(lambda lib: lib.sum(lib.ones(2, requires_grad=True), dtype=lib.int64))


def test_valid_calls_keep_working():
    same(lambda lib: [_x(lib).sum((0, 1)), _x(lib).amax(dim=[0]), lib.sum(_x(lib), 1, True),
                      _x(lib).flip(0, 1), _x(lib).squeeze(), lib.arange(1, 4, 0.5), lib.arange(3),
                      _x(lib).roll(1, 0), lib.nansum(_x(lib), dim=None)])
