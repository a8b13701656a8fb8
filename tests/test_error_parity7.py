"""User mistakes compared with PyTorch, continued from tests/test_error_parity6.py: wrong arguments to top-level
functions and Tensor methods that PyTorch's argument parser refuses before any kernel runs (found by a survey of
~150 functions and methods with missing, extra and wrongly typed arguments). torchish took most of them (a Tensor of
one element where an ``int`` is declared, spread dims given to ``torch.permute``, an unknown keyword of
``torch.zeros``), or raised another type (ValueError from ``int('a')``, RuntimeError from a Tensor's truth value).
Each case is ``fn(lib)`` run with PyTorch and with torchish and must raise the same builtin exception type with the
same message (``same_error``), or the same type (``check_raises``), or give the same results (``same``).
"""
import numpy as np
import pytest

from oracle import check_raises, needs_torch, same, same_error

pytestmark = [needs_torch]


def _x(lib):
    return lib.arange(6.0).reshape(2, 3)


def _i(lib):
    return lib.tensor([[0, 1, 0], [1, 0, 1]])


def _t1(lib):
    """An integer Tensor of one element and one dim: PyTorch's ``int`` takes it only without dims (a ``SymInt``, an
    item of a list of ints, takes it)."""
    return lib.tensor([0])


WORDING = {
    # the function forms take one list (the methods spread ints too)
    "permute_spread": lambda lib: lib.permute(_x(lib), 1, 0),
    "reshape_spread": lambda lib: lib.reshape(_x(lib), 3, 2),
    "permute_lone_int": lambda lib: lib.permute(lib.ones(3), 0),
    "reshape_lone_int": lambda lib: lib.reshape(_x(lib), 6),
    "reshape_tensor": lambda lib: lib.reshape(_x(lib), _t1(lib)),
    "permute_missing": lambda lib: lib.permute(_x(lib)),
    "permute_method_tensor": lambda lib: _x(lib).permute(lib.tensor([1, 0])),
    "view_method_big_tensor_item": lambda lib: _x(lib).view(3, 2, _x(lib)),
    # F.softmax calls the method: its errors count positions from the dim
    "F_softmax_str": lambda lib: lib.nn.functional.softmax(_x(lib), "a"),
    "F_softmax_tensor_dim": lambda lib: lib.nn.functional.softmax(_x(lib), _t1(lib)),
    "F_log_softmax_dtype": lambda lib: lib.nn.functional.log_softmax(_x(lib), 0, 3, "a"),
    "F_softmin_str": lambda lib: lib.nn.functional.softmin(_x(lib), "a"),
    # in-place views name themselves
    "t__3d": lambda lib: lib.ones(2, 3, 4).t_(),
    "t__argument": lambda lib: _x(lib).t_(1),
    "t_keyword": lambda lib: _x(lib).t(foo=1),
    "squeeze__str": lambda lib: lib.ones(2, 1).squeeze_("a"),
    "transpose__missing": lambda lib: _x(lib).transpose_(0),
    "unsqueeze__float": lambda lib: _x(lib).unsqueeze_(1.5),
    "swapdims__missing": lambda lib: _x(lib).swapaxes_(0),
    "transpose__tensor_dim": lambda lib: _x(lib).transpose_(0, _t1(lib)),
    # a Tensor with dims is no int
    "mode_tensor_dim": lambda lib: lib.mode(_x(lib), _t1(lib)),
    "argmax_method_tensor_dim": lambda lib: _x(lib).argmax(_t1(lib)),
    "cumsum_tensor_dim": lambda lib: lib.cumsum(_x(lib), _t1(lib)),
    "unsqueeze_tensor_dim": lambda lib: lib.unsqueeze(_x(lib), _t1(lib)),
    "squeeze_function_tensor_dim": lambda lib: lib.squeeze(_x(lib), _t1(lib)),
    "prod_tensor_dim": lambda lib: lib.prod(_x(lib), _t1(lib)),
    "all_tensor_dim": lambda lib: lib.all(_x(lib), _t1(lib)),
    "size_tensor_dim": lambda lib: _x(lib).size(_t1(lib)),
    "chunk_tensor_chunks": lambda lib: lib.chunk(_x(lib), _t1(lib)),
    "diagonal_tensor_offset": lambda lib: _x(lib).diagonal(_t1(lib)),
    "diff_tensor_n": lambda lib: lib.diff(_x(lib), _t1(lib)),
    "histc_tensor_bins": lambda lib: lib.histc(_x(lib), _t1(lib)),
    "unfold_tensor_step": lambda lib: _x(lib).unfold(1, 2, _t1(lib)),
    # int arguments given a str, float or bool
    "diag_embed_float": lambda lib: lib.diag_embed(_x(lib), 1.5),
    "diag_embed_method_str": lambda lib: _x(lib).diag_embed("a"),
    "rot90_float_k": lambda lib: lib.rot90(_x(lib), 1.5),
    "rot90_str_dims": lambda lib: _x(lib).rot90(1, "a"),
    "round_decimals_none": lambda lib: lib.round(_x(lib), decimals=None),
    "round_method_decimals_str": lambda lib: _x(lib).round(decimals="a"),
    "tril_indices_float": lambda lib: lib.tril_indices(3, 1.5),
    "triu_indices_offset_kw": lambda lib: lib.triu_indices(3, 3, offset="a"),
    # float and Number arguments: a Tensor only without dims
    "logit_tensor_eps": lambda lib: lib.logit(_x(lib), _t1(lib)),
    "logit_kw_str": lambda lib: lib.logit(_x(lib), eps="a"),
    "isclose_tensor_rtol": lambda lib: lib.isclose(_x(lib), _x(lib), _x(lib)),
    "allclose_method_tensor_rtol": lambda lib: _x(lib).allclose(_x(lib), _x(lib)),
    "allclose_missing": lambda lib: lib.allclose(_x(lib)),
    "histc_tensor_min": lambda lib: lib.histc(_x(lib), 4, _x(lib)),
    "renorm_tensor_maxnorm": lambda lib: lib.renorm(_x(lib), 2, 0, _t1(lib)),
    "add_tensor_alpha": lambda lib: lib.add(_x(lib), _x(lib), alpha=lib.tensor([2])),
    "uniform__tensor_from": lambda lib: _x(lib).uniform_(_t1(lib), 1.0),
    "uniform__unknown_keyword": lambda lib: _x(lib).uniform_(0.0, 1.0, foo=1),
    "uniform__too_many": lambda lib: _x(lib).uniform_(1, 2, 3),
    "normal__kw_str": lambda lib: _x(lib).normal_(mean="a"),
    "dropout_tensor_p": lambda lib: lib.nn.functional.dropout(_x(lib), _t1(lib)),
    "cdist_tensor_p": lambda lib: lib.cdist(_x(lib), _x(lib), _x(lib)),
    # lists of ints
    "split_str": lambda lib: lib.split(_x(lib), "a", 1),
    "split_method_bad_item": lambda lib: _x(lib).split((1, "a"), 1),
    "tensor_split_str": lambda lib: lib.tensor_split(_x(lib), "a", 1),
    "tensor_split_dim_none": lambda lib: lib.tensor_split(_x(lib), 2, None),
    "tensor_split_bad_item": lambda lib: lib.tensor_split(_x(lib), (0, "a")),
    "hsplit_str": lambda lib: lib.hsplit(_x(lib), "a"),
    "hsplit_method_str": lambda lib: _x(lib).hsplit("a"),
    "as_strided_int_size": lambda lib: lib.as_strided(_x(lib), 2, (1,)),
    "as_strided__method_int_stride": lambda lib: _x(lib).as_strided_((2,), 1),
    "as_strided_bad_item": lambda lib: _x(lib).as_strided((2, 2), (1, "a")),
    "empty_strided_str": lambda lib: lib.empty_strided((2,), "a"),
    "unflatten_int_sizes": lambda lib: lib.unflatten(_x(lib), 1, 3),
    "unflatten_method_bool_sizes": lambda lib: _x(lib).unflatten(1, True),
    "F_pad_int": lambda lib: lib.nn.functional.pad(_x(lib), 1),
    "F_pad_int_mode": lambda lib: lib.nn.functional.pad(_x(lib), (1, 1), 1),
    "F_layer_norm_str": lambda lib: lib.nn.functional.layer_norm(_x(lib), "a"),
    "F_layer_norm_bool": lambda lib: lib.nn.functional.layer_norm(_x(lib), True),
    "F_max_pool2d_bool": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), True),
    "LayerNorm_bool": lambda lib: lib.nn.LayerNorm(True),
    # unknown keywords, extra positional arguments
    "zeros_misspelt_keyword": lambda lib: lib.zeros(3, dtpye=lib.float64),
    "empty_unknown_keyword": lambda lib: lib.empty(2, foo=1),
    "new_zeros_unknown_keyword": lambda lib: _x(lib).new_zeros(2, foo=1),
    "copy__int_non_blocking": lambda lib: _x(lib).copy_(_x(lib), 1),
    "type_unknown_keyword": lambda lib: _x(lib).type(lib.float64, foo=1),
    # None where PyTorch declares no default None, and other types
    "clamp_min_none": lambda lib: lib.clamp_min(_x(lib), None),
    "clamp_max_method_none": lambda lib: _x(lib).clamp_max(None),
    "repeat_interleave_none": lambda lib: lib.repeat_interleave(_x(lib), None, 1),
    "var_tensor_correction": lambda lib: lib.var(_x(lib), correction=_t1(lib)),
    "meshgrid_int": lambda lib: lib.meshgrid(lib.ones(2), 1, indexing="ij"),
    "meshgrid_float_indexing": lambda lib: lib.meshgrid(lib.ones(2), indexing=1.5),
    "bincount_int_weights": lambda lib: lib.bincount(lib.tensor([0, 1]), 1),
    "bce_with_logits_int_weight": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(_x(lib), _x(lib), 1),
    "scatter_add_float_src": lambda lib: lib.scatter_add(_x(lib), 1, _i(lib), 1.5),
    "linspace_tensor_start": lambda lib: lib.linspace(_t1(lib), 1, 3),
    "logspace_tensor_end": lambda lib: lib.logspace(0, lib.ones(2), 3),
}


@pytest.mark.parametrize("name", sorted(WORDING))
def test_calls_pytorchs_parser_refuses_say_what_it_says(name):
    same_error(WORDING[name])


# the same exception type (PyTorch's wording for these lists overloads that torchish does not model)
TYPE_ONLY = {
    "scatter_extra_positional": lambda lib: lib.scatter(_x(lib), 1, _i(lib), _x(lib), 1),
    "contiguous_positional": lambda lib: _x(lib).contiguous(1),
    "div_float_rounding_mode": lambda lib: lib.div(_x(lib), 2, rounding_mode=1.5),
    "quantile_int_keepdim": lambda lib: lib.quantile(_x(lib), 0.5, 1, 1),
    "linspace_none_end": lambda lib: lib.linspace(0, None, 5),
    "arange_tensor_end": lambda lib: lib.arange(0, _t1(lib)),
    "sort_tensor_dim": lambda lib: lib.sort(_x(lib), _t1(lib)),
    "gather_tensor_dim": lambda lib: lib.gather(_x(lib), _t1(lib), _i(lib)),
    "index_select_tensor_dim": lambda lib: _x(lib).index_select(_t1(lib), lib.tensor([0])),
    "cat_tensor_dim": lambda lib: lib.cat([_x(lib), _x(lib)], _t1(lib)),
    "interpolate_str_scale": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), scale_factor="a"),
    "max_pool2d_tensor_stride": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), 2, _x(lib)),
}


@pytest.mark.parametrize("name", sorted(TYPE_ONLY))
def test_calls_pytorchs_parser_refuses_raise_its_type(name):
    check_raises(TYPE_ONLY[name])


def test_valid_calls_keep_working():
    """What the parser takes: a Tensor of one integer element for a list's item, a lone dim of a sized list of dims,
    a ``SymInt``; the methods' spread forms; F.softmax's third argument is ``_stacklevel`` (never a dtype)."""
    def calls(lib):
        x, t = _x(lib), _t1(lib)
        f = lib.nn.functional
        return [lib.sum(x, t), x.mean(t), lib.std(x, t), lib.amax(x, [t]), x.squeeze(t), x.count_nonzero(t),
                lib.permute(x, (1, 0)), lib.permute(x, dims=[1, 0]), x.permute(1, 0), x.reshape(3, 2),
                lib.reshape(x, (lib.tensor([6]),)), x.reshape(lib.tensor([6])), x.view(lib.tensor([6])),
                lib.narrow(x, 1, 0, lib.tensor([2])), lib.topk(x, lib.tensor([1])).values, lib.tril(x, t),
                lib.kthvalue(x, lib.tensor([1])).values, lib.select(x, 1, t), lib.split(x, lib.tensor([2]), 1),
                lib.ones(1, 2, 1).squeeze_(0, 2), lib.ones(2, 3).t_(), lib.ones(2, 3).swapdims_(dim0=0, dim1=1),
                f.softmax(x, 0, lib.float64), f.softmax(x, 0, dtype=lib.float64), f.softmin(x, 1),
                lib.round(x, decimals=1), lib.logit(x / 10, np.float32(0.1)), lib.isclose(x, x, lib.tensor(0.1)),
                lib.as_strided(x, (2,), (1,), lib.tensor([1])), lib.tensor_split(x, [1], 1),
                x.tensor_split(indices=[1]), x.hsplit(1, 2), lib.unflatten(x, 1, (3, 1)),
                lib.empty_strided((2, 3), (3, 1)).stride(), lib.zeros(size=(2,)), lib.clamp_min(x, 1),
                lib.meshgrid(lib.ones(2), indexing="xy"), x.type(lib.float64, True), lib.rot90(x, 1, [0, 1]),
                lib.add(x, x, alpha=lib.tensor(2.0)), lib.var(x, correction=lib.tensor(0))]
    same(calls)


def test_softmax_without_dim_warns_at_the_callers_line():
    """``F.softmax``/``log_softmax``/``softmin`` without a dim warn as PyTorch's do, at the line that called them."""
    import warnings

    import torch
    import torchish
    for lib in (torch, torchish):
        for name in ("softmax", "log_softmax", "softmin"):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                getattr(lib.nn.functional, name)(lib.ones(2, 2))
            assert len(w) == 1 and "Implicit dimension" in str(w[0].message), (lib.__name__, name)
            assert w[0].filename == __file__, (lib.__name__, name, w[0].filename)
