"""Argument-parser and dispatch parity with PyTorch 2.13, continued from tests/test_parser_parity2.py.

``arange``'s lone number is ``end`` (``start=`` by keyword wants an ``end``); ``randint_like`` and ``where`` word
their refusals with the call as written (``high=NoneType``), and ``where`` with two arguments or ``None`` is the
parser's TypeError, not ``nonzero``; a "didn't match" line lists the keywords in its overload's order; a kernel
error that shows a tensor prints it as PyTorch's C++ ``operator<<`` does; ``Tensor._grad``/``_grad_fn``/``_cdata``/
``_backward_hooks``/``_post_accumulate_grad_hooks`` exist and reach a subclass's ``__torch_function__`` as PyTorch's
do; and a sweep of wrong argument types whose error TYPE differed (a non-Tensor input, ``dtype='float32'``, a
positional argument to ``x.float()``, ``backward('a')``...) plus a sample of those that already matched; and
``torch.ops.aten.<op>`` calls refuse arguments with a RuntimeError, as PyTorch's schema matching does.

Each case runs ``fn(lib)`` with PyTorch and with torchish and compares the outcome: the result (shape, dtype,
values) or the error (type and message).
"""
import warnings

import numpy as np
import pytest

from oracle import logging_subclass, needs_torch, run_both, same

pytestmark = [needs_torch]


def _x(lib):
    return lib.arange(6.0).reshape(2, 3)


def _v(lib):
    return lib.arange(3.0)


def _outcome(lib, fn):
    """``fn(lib)``'s result (Tensors as shape, dtype and values), or its error: type and message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return type(e).__name__, str(e)
    if isinstance(out, lib.Tensor):
        return "ok", tuple(out.shape), str(out.dtype), out.tolist()
    if isinstance(out, (tuple, list)):
        return "ok", [_outcome(lib, lambda _, o=o: o) for o in out]
    return "ok", out


def _same_outcome(fn):
    ref, got = run_both(lambda lib: _outcome(lib, fn))
    assert got == ref


CASES = {
    # 1. arange: a lone number is `end`; start= by keyword belongs to the overloads that want an end too
    "arange_start_kw": lambda lib: lib.arange(start=3),
    "arange_end_kw": lambda lib: lib.arange(end=3),
    "arange_start_end_kw": lambda lib: lib.arange(start=1, end=4),
    "arange_start_end_step_kw": lambda lib: lib.arange(start=1, end=4, step=2),
    "arange_end_kw_step": lambda lib: lib.arange(1, end=4, step=2),
    "arange_step_kw": lambda lib: lib.arange(step=2),
    "arange_start_step_kw": lambda lib: lib.arange(start=1, step=2),
    "arange_one_and_step": lambda lib: lib.arange(4, step=2),
    "arange_one_and_start": lambda lib: lib.arange(1, start=2),
    "arange_two_and_start": lambda lib: lib.arange(1, 2, start=0),
    "arange_float_start_kw": lambda lib: lib.arange(start=1.0, end=3, step=0.5, dtype=lib.float64),
    # 2. randint_like / randint: None and keywords, shown as written
    "randint_like_high_none": lambda lib: lib.randint_like(_v(lib), 3, high=None),
    "randint_like_low_none": lambda lib: lib.randint_like(_v(lib), low=None, high=3),
    "randint_like_none": lambda lib: lib.randint_like(_v(lib), None),
    "randint_like_keywords": lambda lib: lib.randint_like(_v(lib), low=0, high=1),
    "randint_like_str_dtype": lambda lib: lib.randint_like(_v(lib), 3, dtype="float32"),
    "randint_high_none": lambda lib: lib.randint(3, high=None, size=(2,)),
    "randint_low_none": lambda lib: lib.randint(None, 3, (2,)),
    # 3. narrow: the "didn't match" lines list the keywords in the overload's order
    "narrow_float_start_kw": lambda lib: _v(lib).narrow(0, start=0.5, length=1),
    "narrow_keywords_reversed": lambda lib: _v(lib).narrow(length=1, start=0.5, dim=0),
    "narrow_function_float_length_kw": lambda lib: lib.narrow(_v(lib), length=1.5, start=0, dim=0),
    "narrow_function_float": lambda lib: lib.narrow(_v(lib), 0, 0.5, 1),
    "sum_keywords": lambda lib: lib.sum(_x(lib), keepdim=1, dim=0),
    # 5. meshgrid: the tensor as PyTorch's C++ prints it
    "meshgrid_2d": lambda lib: lib.meshgrid(lib.ones(2, 2), lib.ones(2), indexing="ij"),
    "meshgrid_2d_second": lambda lib: lib.meshgrid(_v(lib), _x(lib) - 2, indexing="xy"),
    "meshgrid_3d": lambda lib: lib.meshgrid(lib.arange(12.0).reshape(2, 3, 2) / 7, indexing="ij"),
    "meshgrid_2d_int": lambda lib: lib.meshgrid(lib.tensor([[-5, -100]]), indexing="ij"),
    # 7. the sweep: error types that differed
    "where_two_arguments": lambda lib: lib.where(_v(lib) > 0, _v(lib)),
    "where_str_other": lambda lib: lib.where(_v(lib), "a"),
    "where_none_other": lambda lib: lib.where(_v(lib) > 0, None),
    "where_none_none": lambda lib: lib.where(_v(lib) > 0, None, None),
    "where_other_kw_only": lambda lib: lib.where(_v(lib) > 0, other=_v(lib)),
    "where_third_none": lambda lib: lib.where(_v(lib) > 0, _v(lib), None),
    "where_condition_only": lambda lib: lib.where(_v(lib) > 0),
    "where_works": lambda lib: lib.where(_v(lib) > 0, _v(lib), 0.5),
    "diagonal_none": lambda lib: lib.diagonal(None),
    "tril_none": lambda lib: lib.tril(None),
    "triu_none": lambda lib: lib.triu(None),
    "trace_none": lambda lib: lib.trace(None),
    "zeros_like_str_dtype": lambda lib: lib.zeros_like(_x(lib), dtype="float32"),
    "ones_like_str_dtype": lambda lib: lib.ones_like(_x(lib), dtype="float32"),
    "empty_like_str_dtype": lambda lib: lib.empty_like(_x(lib), dtype="float32").shape,
    "randperm_str_dtype": lambda lib: lib.randperm(3, dtype="int64"),
    "randperm_tensor": lambda lib: lib.randperm(_v(lib)),
    "randperm_float": lambda lib: lib.randperm(1.5),
    "float_positional": lambda lib: _v(lib).float(1),
    "double_positional": lambda lib: _v(lib).double(1),
    "half_memory_format": lambda lib: _v(lib).half(memory_format=lib.preserve_format),
    "norm_none": lambda lib: lib.norm(None),
    "backward_str_gradient": lambda lib: _x(lib).sum().backward("a"),
    "backward_int_gradient": lambda lib: _x(lib).sum().backward(3),
    "backward_no_grad": lambda lib: _x(lib).sum().backward(),
    "tensordot_tensor_dims_of_3": lambda lib: lib.tensordot(_v(lib), _v(lib), _v(lib), _v(lib)),
    "tensordot_tensor_dims_one_row": lambda lib: lib.tensordot(_x(lib), _x(lib), lib.tensor([[1, 0]])),
    "tensordot_tensor_dims_one_element": lambda lib: lib.tensordot(_x(lib), _x(lib).T, lib.tensor([1])),
    "tensordot_tensor_dims_two_numbers": lambda lib: lib.tensordot(_x(lib), _x(lib).T, lib.tensor([1, 0])),
    "tensordot_tensor_dims_lists": lambda lib: lib.tensordot(_x(lib), _x(lib).T, lib.tensor([[1], [0]])),
    "argwhere_none": lambda lib: lib.argwhere(None),
    "nonzero_str": lambda lib: lib.nonzero("a", as_tuple=True),
    "bernoulli_int": lambda lib: lib.bernoulli(3),
    "poisson_list": lambda lib: lib.poisson([1.0]),
    "fliplr_none": lambda lib: lib.fliplr(None),
    "flipud_int": lambda lib: lib.flipud(3),
    "detach_str": lambda lib: lib.detach("a"),
    "resize_as_none": lambda lib: _x(lib).resize_as_(None),
    "set_none": lambda lib: _x(lib).set_(None),
    "set_nothing": lambda lib: _x(lib).set_().shape,
    "linalg_cond_str": lambda lib: lib.linalg.cond("a"),
    "linalg_norm_none": lambda lib: lib.linalg.norm(None),
    "linalg_vector_norm_str": lambda lib: lib.linalg.vector_norm("a"),
    "linalg_lstsq_str_b": lambda lib: lib.linalg.lstsq(_x(lib), "a"),
    "linalg_solve_float_b": lambda lib: lib.linalg.solve(_x(lib), 1.5),
    "linalg_solve_str_a": lambda lib: lib.linalg.solve("a", _x(lib)),
    "linalg_tensorsolve_str_other": lambda lib: lib.linalg.tensorsolve(_x(lib), "a"),
    "linalg_vecdot_str_y": lambda lib: lib.linalg.vecdot(_x(lib), "a"),
    "linalg_multi_dot_str": lambda lib: lib.linalg.multi_dot("a"),
    "linalg_multi_dot_list_with_str": lambda lib: lib.linalg.multi_dot([_x(lib), "a"]),
    "linalg_eigh_float_uplo": lambda lib: lib.linalg.eigh(_x(lib), 1.5),
    "linalg_qr_float_mode": lambda lib: lib.linalg.qr(_x(lib), 1.5),
    "linalg_svd_float_full_matrices": lambda lib: lib.linalg.svd(_x(lib), 1.5),
    "linalg_matrix_rank_str_tol": lambda lib: lib.linalg.matrix_rank(_x(lib), "a"),
    "linalg_pinv_str_rcond": lambda lib: lib.linalg.pinv(_x(lib), "a"),
    "fft_float_n": lambda lib: lib.fft.fft(_v(lib), 1.5),
    "rfft_str_n": lambda lib: lib.fft.rfft(_v(lib), "a"),
    "fft_int_tensor_n": lambda lib: lib.fft.fft(_v(lib), lib.tensor(2)).shape,
    "fft2_str_s": lambda lib: lib.fft.fft2(_x(lib), "a"),
    "fftn_float_in_s": lambda lib: lib.fft.fftn(_x(lib), (1.5, 2)),
    "fftfreq_float": lambda lib: lib.fft.fftfreq(2.5),
    "rfftfreq_tensor": lambda lib: lib.fft.rfftfreq(_x(lib)),
    "fftshift_none": lambda lib: lib.fft.fftshift(None),
    "cauchy_str": lambda lib: _x(lib).cauchy_("a"),
    "log_normal_tensor": lambda lib: _x(lib).log_normal_(_x(lib)),
    "exponential_tensor": lambda lib: _x(lib).exponential_(_x(lib)),
    "geometric_str": lambda lib: _x(lib).geometric_("a"),
    "random_unknown_keyword": lambda lib: _x(lib).random_(foo=1),
    "can_cast_str": lambda lib: lib.can_cast("a", lib.float32),
    "promote_types_int": lambda lib: lib.promote_types(lib.float32, 1),
    "set_default_dtype_str": lambda lib: lib.set_default_dtype("float64"),
    "special_multigammaln_float_p": lambda lib: lib.special.multigammaln(_x(lib) + 2, 1.5),
    "mvlgamma_float_p": lambda lib: lib.mvlgamma(_x(lib) + 2, 1.5),
    "autograd_grad_str_output": lambda lib: lib.autograd.grad("a", _x(lib)),
    "autograd_backward_str_output": lambda lib: lib.autograd.backward(["a"]),
    "atleast_1d_str": lambda lib: lib.atleast_1d("a"),
    "atleast_2d_list_of_floats": lambda lib: lib.atleast_2d([1.0]),
    "atleast_3d_tensor_and_int": lambda lib: lib.atleast_3d(_x(lib), 1),
    "pad_sequence_str": lambda lib: lib.nn.utils.rnn.pad_sequence("a"),
    # (a sample of the sweep's cases that already matched)
    "sum_float_dim": lambda lib: lib.sum(_x(lib), 1.5),
    "cumsum_str_dim": lambda lib: lib.cumsum(_x(lib), "a"),
    "softmax_unknown_keyword": lambda lib: lib.softmax(_x(lib), foo=1),
    "argmax_tensor_dim": lambda lib: lib.argmax(_x(lib), _x(lib)),
    "add_str_other": lambda lib: lib.add(_v(lib), "a"),
    "mul_none_other": lambda lib: lib.mul(_v(lib), None),
    "zeros_float_size": lambda lib: lib.zeros(1.5),
    "ones_list_with_float": lambda lib: lib.ones([2, 1.5]),
    "eye_none": lambda lib: lib.eye(None),
    "view_str": lambda lib: _x(lib).view("a"),
    "expand_none": lambda lib: _v(lib).expand(None),
    "permute_float": lambda lib: _x(lib).permute(0.5, 1),
    "masked_fill_float_mask": lambda lib: _x(lib).masked_fill(_x(lib), 1.0),
    "getitem_float": lambda lib: _v(lib)[1.5],
    "diagonal_float_dim": lambda lib: lib.diagonal(_x(lib), 1.5),
    "kthvalue_float_k": lambda lib: lib.kthvalue(_x(lib), 1.5),
    "mean_float_dim": lambda lib: lib.mean(_x(lib), 1.5),
    "sum_no_arguments": lambda lib: lib.sum(),
    "median_none": lambda lib: lib.median(None),
    "fill_tensor_with_dims": lambda lib: _x(lib).fill_(_x(lib)),
    "generator_str_device": lambda lib: lib.Generator("foo"),
    "layer_norm_float_shape": lambda lib: lib.nn.functional.layer_norm(_x(lib), 1.5),
    "relu_str": lambda lib: lib.nn.functional.relu("a"),
    "one_hot_float_classes": lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 1]), 1.5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_outcome(name):
    _same_outcome(CASES[name])


@pytest.mark.parametrize("values", [
    [[1e6 + 0.5, 2.5]], [[1e-3, 2.5]], [[np.inf, np.nan], [1.0, -np.inf]], [[1234567.0, 1.0]], [[1e10, -1e10]],
    [[1.5e-5, 2e-5]], [[0.0, 0.0]], [[1.5e9, 1.0]],
], ids=["scaled_up", "wide_range", "non_finite", "general_format", "scientific", "scaled_down", "zeros", "int_sci"])
def test_cpp_print_of_a_tensor_in_a_kernel_error(values):
    """meshgrid's error shows the tensor as PyTorch's C++ prints it: integer, fixed, scaled and scientific modes."""
    _same_outcome(lambda lib: lib.meshgrid(lib.tensor(values, dtype=lib.float64), indexing="ij"))


def test_cpp_print_wraps_columns_and_orders_matrices_as_pytorch():
    """A wide matrix wraps its columns at 80 characters; the matrices of a 4-d tensor come first index fastest."""
    wide = np.random.default_rng(0).normal(size=(2, 12)) * 1e7
    deep = np.random.default_rng(1).normal(size=(2, 3, 2, 2)) * 100
    for values in (wide, deep):
        _same_outcome(lambda lib, values=values: lib.meshgrid(lib.tensor(values), indexing="ij"))


def _logged(lib):
    """A subclass whose ``__torch_function__`` logs each ``func``; returns (class, log)."""
    return logging_subclass(lib)


@pytest.mark.parametrize("attr, handed", [
    ("_grad", "grad"), ("_grad_fn", "grad_fn"), ("_cdata", "_cdata"), ("_backward_hooks", "_backward_hooks"),
    ("_post_accumulate_grad_hooks", "_post_accumulate_grad_hooks"), ("_version", "_version"), ("grad", "grad"),
])
def test_private_attribute_reads_reach_torch_function_as_pytorchs(attr, handed):
    """Reading ``attr`` on a subclass hands ``__torch_function__`` the getter PyTorch hands (``_grad`` and
    ``_grad_fn`` read ``grad`` and ``grad_fn``, whose getters it sees)."""
    def fn(lib):
        cls, log = _logged(lib)
        x = lib.ones(2, requires_grad=True).as_subclass(cls)
        getattr(x, attr)
        return [f == getattr(lib.Tensor, handed).__get__ for f in log]
    ref, got = run_both(fn)
    assert got == ref == [True]


@pytest.mark.parametrize("attr, value, handed", [
    ("_grad", "ones", "grad"), ("_backward_hooks", None, "_backward_hooks"),
    ("_post_accumulate_grad_hooks", None, "_post_accumulate_grad_hooks"),
])
def test_private_attribute_writes_reach_torch_function_as_pytorchs(attr, value, handed):
    def fn(lib):
        cls, log = _logged(lib)
        x = lib.ones(2, requires_grad=True).as_subclass(cls)
        setattr(x, attr, lib.ones(2) if value == "ones" else value)
        return [f == getattr(lib.Tensor, handed).__set__ for f in log]
    ref, got = run_both(fn)
    assert got == ref == [True]


def _private_fields(lib):
    out = {}
    x = lib.ones(2, requires_grad=True)
    out["grad_none"] = x._grad
    x._grad = lib.full((2,), 3.0)
    out["grad_written"] = x.grad.tolist(), x._grad.tolist()
    for name, value in (("shape", lib.ones(3)), ("dtype", lib.ones(2, dtype=lib.float64)), ("type", 3)):
        out["grad_bad_" + name] = _outcome(lib, lambda _, v=value: setattr(x, "_grad", v))
    del x._grad
    out["grad_deleted"] = x.grad
    y = x * 2
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out["nonleaf_grad"] = y._grad, len(w)
    out["grad_fn"] = type(y._grad_fn).__name__, x._grad_fn
    out["grad_fn_set_tensor"] = _outcome(lib, lambda _: setattr(y, "_grad_fn", y))
    y._grad_fn = None  # (detaches y in place)
    out["grad_fn_set_none"] = y.requires_grad, y.is_leaf, y.grad_fn
    out["cdata"] = x._cdata == x._cdata, isinstance(x._cdata, int), x._cdata != lib.ones(1)._cdata
    out["hooks_none"] = x._backward_hooks, x._post_accumulate_grad_hooks
    h = x.register_hook(lambda g: g)
    x.register_post_accumulate_grad_hook(lambda t: None)
    z = x * 3
    z.register_hook(lambda g: g * 2)
    out["hooks"] = (type(x._backward_hooks).__name__, len(x._backward_hooks), type(z._backward_hooks).__name__,
                    len(z._backward_hooks), type(x._post_accumulate_grad_hooks).__name__)
    h.remove()
    out["hooks_removed"] = len(x._backward_hooks)
    w = x * 5
    w.register_hook(lambda g: g * 2)
    x.grad = None
    w.sum().backward()
    out["non_leaf_hook"] = x.grad.tolist()
    x.register_hook(lambda g: g * 7)
    x._backward_hooks = None  # (a leaf's hooks go: its gradient is no longer scaled)
    x.grad = None
    (x * 3).sum().backward()
    out["after_clearing_hooks"] = x.grad.tolist(), x._backward_hooks
    return out


def test_private_grad_fields_behave_as_pytorchs_on_plain_tensors():
    """``_grad`` reads and writes as ``grad`` (checks, the non-leaf warning), ``_grad_fn`` reads ``grad_fn`` and takes
    only None (detaching in place), ``_cdata`` names the tensor, the hook dictionaries are ordered dicts."""
    ref, got = run_both(_private_fields)
    assert got == ref


ATEN_CASES = {  # (PyTorch's first line: the operators with several schemas)
    "sum_str_dim": lambda lib: lib.ops.aten.sum(_x(lib), "a"),
    "mm_list": lambda lib: lib.ops.aten.mm(_x(lib), [[1.0]]),
    "add_str": lambda lib: lib.ops.aten.add(_x(lib), "a"),
    "softmax_float_dim": lambda lib: lib.ops.aten.softmax(_x(lib), 1.5),
    "cat_tensor": lambda lib: lib.ops.aten.cat(_x(lib)),
    "relu_list": lambda lib: lib.ops.aten.relu([1.0]),
    "topk_float_k": lambda lib: lib.ops.aten.topk(_x(lib), 1.5),
    "index_select_list": lambda lib: lib.ops.aten.index_select(_x(lib), 0, [0]),
    "narrow_float_start": lambda lib: lib.ops.aten.narrow(_x(lib), 0, 0.5, 1),
    "arange_str": lambda lib: lib.ops.aten.arange("a"),
    "mm_works": lambda lib: lib.ops.aten.mm(_x(lib), _x(lib).T),
}


@pytest.mark.parametrize("name", sorted(ATEN_CASES))
def test_aten_operator_calls_refuse_arguments_as_pytorchs_schema_matching(name):
    """``torch.ops.aten.<op>(...)`` binds by the operator's schemas: arguments none takes are a RuntimeError (the
    Python API's parser raises TypeError), whose first line is PyTorch's for an overloaded operator."""
    def first_line(lib):
        out = _outcome(lib, ATEN_CASES[name])
        return (out[0], out[1].splitlines()[0]) if out[0] != "ok" else out
    ref, got = run_both(first_line)
    assert got == ref


def test_aten_rms_norm_with_an_int_shape_is_a_runtime_error():
    """``torch.ops.aten.rms_norm(x, 3)``: PyTorch's schema wants ``SymInt[] normalized_shape`` (its RuntimeError
    names the one schema: 'aten::rms_norm() Expected a value of type ...'); the error type matches."""
    ref, got = run_both(lambda lib: _outcome(lib, lambda _: lib.ops.aten.rms_norm(_x(lib), 3))[0])
    assert got == ref == "RuntimeError"


@needs_torch
def test_aten_operators_that_are_tensor_methods_or_functional():
    """``torch.ops.aten.view``/``expand``/``contiguous`` (Tensor methods) and ``aten.linear`` (nn.functional) run
    as PyTorch's do."""
    def calls(lib):
        x, A = lib.arange(6.0).reshape(2, 3), lib.ops.aten
        return (A.view(x, [3, 2]), A.expand(lib.ones(1, 3), [2, 3]), A.linear(x, lib.ones(4, 3)),
                A.view.default(x, [6]), A.contiguous(x.t()), A.t(x), repr(A.view))
    same(calls)
