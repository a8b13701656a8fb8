"""User mistakes compared with PyTorch, continued from tests/test_error_parity5.py: calls of the reductions that no
overload of PyTorch's argument parser takes (torchish took them, or raised another type), the function forms that
had no wrapper asking ``torchish/ops/parser_errors.py`` for PyTorch's wording, and the Python 2 division dunders.
Each case is ``fn(lib)`` run with PyTorch and with torchish and must raise the same builtin exception type with the
same message (``same_error``), or give the same results (``same``).
"""
import numpy as np
import pytest

from oracle import needs_torch, same, same_error

pytestmark = [needs_torch]


def _x(lib):
    return lib.arange(6.0).reshape(2, 3)


# Accepted by torchish (or refused with another type) where PyTorch's parser refuses the call: keepdim without a dim
# (sum/mean/prod have no overload taking it), a dtype that is no dtype (torchish: ValueError/AttributeError from its
# conversion), max/min's (Tensor other) overload given more, None for std's ``unbiased`` (torchish's "not given") or
# median's ``keepdim``, torch.norm's arguments as the linalg norm it calls refuses them, and function forms that
# take what only the method takes (spread dims) or a list where PyTorch wants an int.
REFUSED = {
    **{f"{op}_{form}_keepdim_{v}": (lambda op, form, v: lambda lib: (
        getattr(lib, op)(_x(lib), keepdim=v) if form == "fn" else getattr(_x(lib), op)(keepdim=v)))(op, form, v)
       for op in ("sum", "mean", "prod") for form in ("fn", "method") for v in (True, False)},
    **{f"{op}_dtype_{kind}": (lambda op, bad: lambda lib: getattr(lib, op)(_x(lib), dtype=bad(lib)))(op, bad)
       for op in ("sum", "mean", "prod", "nansum", "nanmean")
       for kind, bad in (("tensor", lambda lib: lib.ones(2)), ("name", lambda lib: "float32"),
                         ("numpy_type", lambda lib: np.float32), ("bool", lambda lib: True))},
    "mean_method_dtype_tensor": lambda lib: _x(lib).mean(dtype=lib.ones(2)),
    "sum_dim_dtype_tensor": lambda lib: lib.sum(_x(lib), 1, dtype=lib.ones(())),
    "cumsum_dtype_tensor": lambda lib: lib.cumsum(_x(lib), 0, dtype=lib.ones(2)),
    "max_other_then_tensor": lambda lib: lib.max(_x(lib), lib.ones(()), lib.ones(())),
    "max_other_then_bool": lambda lib: lib.max(_x(lib), lib.ones(3), True),
    "min_method_other_then_int": lambda lib: _x(lib).min(lib.ones(3), 1),
    "min_method_1d_int_tensor_dim": lambda lib: _x(lib).min(lib.tensor([0]), True),
    "std_unbiased_none": lambda lib: lib.std(_x(lib), 1, None),
    "var_unbiased_none_kw": lambda lib: lib.var(_x(lib), 1, unbiased=None),
    "std_method_none_none": lambda lib: _x(lib).std(None, None),
    "var_mean_keepdim_none": lambda lib: lib.var_mean(_x(lib), 1, True, None),
    "std_keepdim_float": lambda lib: lib.std(_x(lib), keepdim=1.5),
    "std_method_dtype": lambda lib: _x(lib).std(dtype=lib.float32),
    "std_method_two_ints": lambda lib: _x(lib).std(1, 2),
    "std_method_correction_tensor": lambda lib: _x(lib).std((0, "a"), correction=lib.ones(2)),
    "std_mean_bad_dim": lambda lib: lib.std_mean(_x(lib), "a"),
    "median_keepdim_none": lambda lib: lib.median(_x(lib), keepdim=None),
    "nanmedian_dim_keepdim_none": lambda lib: lib.nanmedian(_x(lib), 1, None),
    "norm_dtype_tensor": lambda lib: lib.norm(_x(lib), dtype=lib.ones(2)),
    "norm_method_dtype_str": lambda lib: _x(lib).norm(2, 0, True, "a"),
    "norm_nuc_dtype_tensor": lambda lib: lib.norm(_x(lib), "nuc", dtype=lib.ones(1)),
    "norm_str_order_bool_dim": lambda lib: lib.norm(_x(lib), "a", True),
    "norm_order_tensor_with_dims": lambda lib: lib.norm(_x(lib), lib.ones(2)),
    "norm_keepdim_float": lambda lib: lib.norm(_x(lib), keepdim=1.5),
    "norm_bool_dim": lambda lib: lib.norm(_x(lib), 2, True),
    "norm_list_dim_bad_item": lambda lib: lib.norm(_x(lib), 2, [0, "a"]),
    "flip_spread_dims": lambda lib: lib.flip(_x(lib), 0, 1),
    "flip_lone_int": lambda lib: lib.flip(_x(lib), 0),
    "movedim_int_and_list": lambda lib: lib.movedim(_x(lib), 0, (1,)),
    "moveaxis_named_as_itself": lambda lib: lib.moveaxis(_x(lib), 1.5, 0),
    "softmax_int_third": lambda lib: lib.softmax(_x(lib), 0, 3),
    "softmax_stacklevel": lambda lib: lib.softmax(_x(lib), dim=0, _stacklevel=3),
    "count_nonzero_function_spread": lambda lib: lib.count_nonzero(_x(lib), 0, 1),
    # the parser's order: a keyword also given by position, an unknown keyword, the required ones missing
    "keyword_also_positional": lambda lib: lib.amin(_x(lib), 0, dim=1, foo=1),
    "unknown_keyword_before_list_item": lambda lib: lib.amin(_x(lib), (0, "a"), foo=1),
    "missing_names_keyword_given_too": lambda lib: lib.swapdims(_x(lib), dim1=1),
    "argmax_multiple_values": lambda lib: lib.argmax(_x(lib), 0, dim=None),
    "keyword_at_filled_position_listed": lambda lib: _x(lib).all(1.5, dim=0),
    "two_keywords_listed_last_first": lambda lib: lib.all(_x(lib), dim=[0], keepdim=None),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_calls_no_overload_takes_raise_pytorchs_type_error(name):
    same_error(REFUSED[name])


# Function forms that had no wrapper: PyTorch names the op, the argument and its position (none for a keyword);
# torchish said "argument 'dim' must be int, not bool" (no op), "dim must be an int, got str", or kept a position
WORDING = {
    "mode_bool_dim": lambda lib: lib.mode(_x(lib), True),
    "mode_keepdim_int": lambda lib: lib.mode(_x(lib), 0, 1),
    "mode_kw": lambda lib: lib.mode(_x(lib), dim="a"),
    "roll_shifts_kw": lambda lib: lib.roll(_x(lib), shifts="a"),
    "count_nonzero_bool": lambda lib: lib.count_nonzero(_x(lib), True),
    "count_nonzero_kw_float": lambda lib: lib.count_nonzero(_x(lib), dim=1.5),
    "softmax_str_dim": lambda lib: lib.softmax(_x(lib), "a"),
    "log_softmax_kw_dtype": lambda lib: lib.log_softmax(_x(lib), 0, dtype="a"),
    "softmax_method_dtype_position": lambda lib: _x(lib).softmax(0, lib.ones(2)),
    "transpose_str": lambda lib: lib.transpose(_x(lib), "a", 0),
    "transpose_kw": lambda lib: lib.transpose(_x(lib), 0, dim1=1.5),
    "transpose_missing": lambda lib: lib.transpose(_x(lib), 0),
    "squeeze_str": lambda lib: lib.squeeze(_x(lib), "a"),
    "squeeze_kw_float": lambda lib: lib.squeeze(_x(lib), dim=1.5),
    "flip_str": lambda lib: lib.flip(_x(lib), "a"),
    "flip_kw_int": lambda lib: lib.flip(_x(lib), dims=0),
    "movedim_str": lambda lib: lib.movedim(_x(lib), "a", 0),
    "movedim_kw": lambda lib: lib.movedim(_x(lib), 0, destination=1.5),
    "logcumsumexp_bool": lambda lib: lib.logcumsumexp(_x(lib), True),
    "logcumsumexp_missing": lambda lib: lib.logcumsumexp(_x(lib)),
    "unsqueeze_str": lambda lib: lib.unsqueeze(_x(lib), "a"),
    "unbind_str": lambda lib: lib.unbind(_x(lib), "a"),
    "swapaxes_float": lambda lib: lib.swapaxes(_x(lib), 1.5, 0),
    "swapdims_method_float": lambda lib: _x(lib).swapdims(1.5, 0),
}


@pytest.mark.parametrize("name", sorted(WORDING))
def test_function_forms_say_what_pytorchs_parser_says(name):
    same_error(WORDING[name])


def test_spread_dims_of_the_methods_reach_the_op():
    """``x.count_nonzero(1, True)`` and ``x.squeeze(1, 1)`` are lists of dims with a repeat (RuntimeError), as
    PyTorch's methods read them; torchish raised TypeErrors."""
    same_error(lambda lib: _x(lib).count_nonzero(1, True))
    same_error(lambda lib: lib.ones(2, 1).squeeze(1, 1))


def test_valid_calls_keep_working():
    same(lambda lib: [
        lib.sum(_x(lib), None, True), lib.mean(_x(lib), dim=None, keepdim=True), lib.sum(_x(lib), dtype=float),
        lib.max(_x(lib), lib.tensor(1), False), lib.max(_x(lib), other=lib.ones(3)), _x(lib).min(0, True),
        lib.std(_x(lib), 1, True, True), _x(lib).var(False), lib.std(_x(lib), correction=0), lib.var_mean(_x(lib), 1),
        lib.median(_x(lib), 1, keepdim=True), lib.norm(_x(lib)), lib.norm(_x(lib), "fro", 1), lib.norm(_x(lib), "nuc"),
        lib.norm(_x(lib), 1, [0], True), _x(lib).norm(2, 0, dtype=lib.float64), lib.norm(_x(lib), lib.tensor(3.0)),
        lib.flip(_x(lib), (0, 1)), _x(lib).flip(0, 1), _x(lib).flip(1), lib.movedim(_x(lib), lib.tensor(1), 0),
        lib.moveaxis(_x(lib), [0], [1]), lib.swapdims(_x(lib), 0, 1), lib.softmax(_x(lib), 0, lib.float64),
        lib.log_softmax(_x(lib), dim=1), lib.count_nonzero(_x(lib), (0, 1)), _x(lib).count_nonzero(0, 1),
        lib.ones(2, 1).squeeze(1), lib.ones(1, 2, 1).squeeze(0, 2), lib.mode(_x(lib), 0), lib.cumsum(_x(lib), 1),
        # (std/var's first overload takes dim=None with unbiased: int[1]? in PyTorch's schema)
        lib.std_mean(_x(lib), None, keepdim=False, unbiased=True), lib.var(_x(lib), None, True, True)])


def test_std_of_integers_with_dim_none_is_the_dtype_error():
    same_error(lambda lib: lib.std_mean(lib.tensor([[1, 2]], dtype=lib.int8), None, keepdim=False, unbiased=True))


def test_python2_division_dunders_are_true_division():
    """``Tensor.__div__``/``__rdiv__``/``__idiv__``: PyTorch keeps them as aliases of ``/`` (torchish had none)."""
    import torch
    import torchish
    for name in ("__div__", "__rdiv__", "__idiv__"):
        assert hasattr(torch.Tensor, name) and hasattr(torchish.Tensor, name)

    def use(lib):
        i, f = lib.tensor([1, 2]), lib.tensor([1.0, 2.0], requires_grad=True)
        d, r = f.__div__(2), f.__rdiv__(3)
        inplace = lib.tensor([1.0, 4.0])
        inplace.__idiv__(2)
        return [i.__div__(2), i.__rdiv__(2), i.__div__(lib.tensor(2)), d, r, inplace, d.grad_fn.name(),
                r.grad_fn.name(), i.__div__("a") is NotImplemented, i.__rdiv__([1, 2]) is NotImplemented]
    same(use)
