"""Argument-parser parity with PyTorch 2.13, continued from tests/test_error_parity7.py: calls torchish took or
answered with another error than PyTorch's. ``tensordot`` is Python code in PyTorch (``a.dim()`` before its
builtin's parser: an AttributeError for a non-Tensor); ``einsum`` with three or more operands asks opt_einsum for a
contraction path first (its ValueErrors); ``arange``/``eye``/``randint``/``randint_like`` have no None overload
(torchish used None for "not given"); ``zeros_like``/``ones_like``/``empty_like`` take ``input`` only
positionally; ``x.to(True)`` is ``to(Tensor other)`` with a bool number; ``narrow_copy`` has no Tensor ``start``
overload but takes SymInts, and checks as its own kernel does; ``index_copy`` checks in its meta function's
order; the 2-d/3-d adaptive pools read a Tensor ``output_size`` as a sequence (their ``_list_with_default``);
``nn.RNN(3, True)`` makes its weights with a bool size, and ``F.rms_norm`` takes no lone int.

Each case runs ``fn(lib)`` with PyTorch and with torchish and compares the outcome: the result (shape, dtype,
values) or the error (type and message).
"""
import numpy as np
import pytest

from oracle import needs_torch, run_both, same_draws, torch, torchish

pytestmark = [needs_torch]


def _x(lib):
    return lib.arange(6.0).reshape(2, 3)


def _v(lib, n):
    return lib.ones(n)


def _outcome(lib, fn):
    """``fn(lib)``'s result (Tensors as shape, dtype and values), or its error: type and message."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return type(e).__name__, str(e)
    if isinstance(out, lib.Tensor):
        return "ok", tuple(out.shape), str(out.dtype), np.asarray(out.tolist())
    if isinstance(out, (tuple, list)):
        return "ok", [_outcome(lib, lambda _, o=o: o) for o in out]
    return "ok", str(out) if isinstance(out, (lib.dtype, lib.device, lib.Size)) else out


def _assert_same(ref, got):
    if isinstance(ref, np.ndarray):  # (float values within a few ulps: the kernels may round the last bit apart)
        assert isinstance(got, np.ndarray) and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)
    elif isinstance(ref, (tuple, list)):
        assert type(got) is type(ref) and len(got) == len(ref), (got, ref)
        for r, g in zip(ref, got):
            _assert_same(r, g)
    else:
        assert got == ref


def _same_outcome(fn):
    ref, got = run_both(lambda lib: _outcome(lib, fn))
    _assert_same(ref, got)


CASES = {
    # 1. tensordot: dims' type, an int dims against a.dim() and b.dim(), then the builtin's parser
    "tensordot_str_other": lambda lib: lib.tensordot(_x(lib), "a", 1),
    "tensordot_str_input": lambda lib: lib.tensordot("a", _x(lib), 1),
    "tensordot_list_other_default_dims": lambda lib: lib.tensordot(_x(lib), [1.0]),
    "tensordot_int_operands": lambda lib: lib.tensordot(1, 2, dims=0),
    "tensordot_negative_dims_first": lambda lib: lib.tensordot(_x(lib), "a", -1),
    "tensordot_str_dims_first": lambda lib: lib.tensordot("a", _x(lib), "q"),
    "tensordot_float_dims": lambda lib: lib.tensordot(_x(lib), _x(lib).T, 1.5),
    "tensordot_list_dims_str_other": lambda lib: lib.tensordot(_x(lib), "a", ([1], [0])),
    "tensordot_list_dims_str_input": lambda lib: lib.tensordot("a", _x(lib), [[1], [0]]),
    "tensordot_tensor_dims_str_other": lambda lib: lib.tensordot(_x(lib), "a", lib.tensor(1)),
    "tensordot_tensor_dims_past_the_dims": lambda lib: lib.tensordot(_x(lib), _x(lib).T, lib.tensor(5)),
    "tensordot_dims_past_the_dims": lambda lib: lib.tensordot(_x(lib), _x(lib).T, 5),
    "tensordot_works": lambda lib: lib.tensordot(_x(lib), _x(lib).T, 1),
    # 2. einsum: opt_einsum's parser first with three operands or more, PyTorch's own checks with fewer
    "einsum_3_sizes_differ": lambda lib: lib.einsum("i,i,i->", _v(lib, 2), _v(lib, 3), _v(lib, 2)),
    "einsum_3_sizes_differ_last": lambda lib: lib.einsum("i,i,i->", _v(lib, 2), _v(lib, 2), _v(lib, 3)),
    "einsum_4_operands_3_terms": lambda lib: lib.einsum("i,i,i->", *[_v(lib, 2)] * 4),
    "einsum_2_operands_3_terms": lambda lib: lib.einsum("i,i,i->", _v(lib, 2), _v(lib, 2)),
    "einsum_3_output_repeated": lambda lib: lib.einsum("i,i,i->ii", *[_v(lib, 2)] * 3),
    "einsum_2_output_repeated": lambda lib: lib.einsum("i,j->ii", _v(lib, 2), _v(lib, 2)),
    "einsum_3_output_unknown": lambda lib: lib.einsum("i,i,i->j", *[_v(lib, 2)] * 3),
    "einsum_3_too_many_subscripts": lambda lib: lib.einsum("ij,i,i->", *[_v(lib, 2)] * 3),
    "einsum_3_invalid_subscript": lambda lib: lib.einsum("i1,i,i->", *[_v(lib, 2)] * 3),
    "einsum_sublist_3_sizes_differ": lambda lib: lib.einsum(_v(lib, 2), [0], _v(lib, 3), [0], _v(lib, 2), [0], []),
    "einsum_one_list_3_sizes_differ": lambda lib: lib.einsum("i,i,i->", [_v(lib, 2), _v(lib, 3), _v(lib, 2)]),
    "einsum_3_works": lambda lib: lib.einsum("i,i,i->", _x(lib)[0], _x(lib)[1], _x(lib)[0]),
    # 3. no None overloads
    "arange_end_none": lambda lib: lib.arange(0, None),
    "arange_end_keyword_none": lambda lib: lib.arange(0, end=None),
    "arange_none": lambda lib: lib.arange(None),
    "arange_nothing": lambda lib: lib.arange(),
    "arange_step_without_end": lambda lib: lib.arange(3, step=2),
    "arange_end_keyword_and_step": lambda lib: lib.arange(end=3, step=2),
    "arange_end_none_out": lambda lib: lib.arange(0, None, out=lib.zeros(3)),
    "arange_end_keyword": lambda lib: lib.arange(end=3),
    "arange_start_end_step_keywords": lambda lib: lib.arange(start=1, end=4, step=2),
    "eye_m_none": lambda lib: lib.eye(2, None),
    "eye_m_keyword_none": lambda lib: lib.eye(2, m=None),
    "eye_none": lambda lib: lib.eye(None),
    "eye_m_str": lambda lib: lib.eye(2, "a"),
    "eye_m_none_out": lambda lib: lib.eye(2, None, out=lib.zeros(2, 2)),
    "eye_n_m": lambda lib: lib.eye(2, 3),
    "eye_m_keyword": lambda lib: lib.eye(2, m=3),
    "randint_high_none": lambda lib: lib.randint(0, None, (3,)),
    "randint_high_keyword_none": lambda lib: lib.randint(0, high=None, size=(3,)),
    "randint_low_keyword_none": lambda lib: lib.randint(low=None, high=3, size=(3,)),
    "randint_lone_high_none": lambda lib: lib.randint(None, (3,)),
    "randint_size_none": lambda lib: lib.randint(3, None),
    "randint_size_keyword_none": lambda lib: lib.randint(3, size=None),
    "randint_three_size_none": lambda lib: lib.randint(0, 3, None),
    "randint_no_size": lambda lib: lib.randint(3),
    "randint_high_none_out": lambda lib: lib.randint(0, None, (2,), out=lib.zeros(2, dtype=lib.int64)),
    "randint_like_high_none": lambda lib: lib.randint_like(_x(lib), 0, None),
    "randint_like_lone_none": lambda lib: lib.randint_like(_x(lib), None),
    "randint_like_nothing": lambda lib: lib.randint_like(_x(lib)),
    # 4. *_like take input only positionally; to(True); narrow_copy; index_copy (below)
    "zeros_like_second_tensor": lambda lib: lib.zeros_like(_x(lib), _x(lib)),
    "ones_like_positional_dtype": lambda lib: lib.ones_like(_x(lib), lib.float64),
    "empty_like_second_tensor": lambda lib: lib.empty_like(_x(lib), _x(lib)).shape,
    "zeros_like_keyword_dtype": lambda lib: lib.zeros_like(_x(lib), dtype=lib.float64),
    "to_true": lambda lib: _x(lib).to(True),
    "to_false_non_blocking": lambda lib: _x(lib).to(False, True),
    "to_true_copy": lambda lib: _x(lib).to(True, copy=True),
    "to_device_index_and_bool_is_a_tensor": lambda lib: _x(lib).to(0, True),
    "to_numpy_float32_is_a_double": lambda lib: _x(lib).to(np.float32(2)),
    "to_numpy_bool_is_a_double": lambda lib: _x(lib).to(np.bool_(True)),
    "to_numpy_complex128": lambda lib: _x(lib).to(np.complex128(1)),
    "to_none_and_bool": lambda lib: _x(lib).to(None, True),
    "to_dtype_keyword_bool": lambda lib: _x(lib).to(dtype=True),
    "narrow_copy_one_element_start": lambda lib: lib.narrow_copy(_x(lib), 0, lib.tensor([1]), 1),
    "narrow_copy_method_2d_one_element_start": lambda lib: _x(lib).narrow_copy(0, lib.tensor([[1]]), 1),
    "narrow_copy_0d_start": lambda lib: lib.narrow_copy(_x(lib), 0, lib.tensor(0), 1),
    "narrow_copy_float_tensor_start": lambda lib: lib.narrow_copy(_x(lib), 0, lib.tensor(0.0), 1),
    "narrow_copy_method_two_element_start": lambda lib: _x(lib).narrow_copy(0, lib.tensor([0, 1]), 1),
    "narrow_copy_bool_length": lambda lib: lib.narrow_copy(_x(lib), 0, 0, True),
    "narrow_copy_dim_past_the_dims": lambda lib: lib.narrow_copy(_x(lib), 2, 0, 1),
    "narrow_copy_negative_length": lambda lib: lib.narrow_copy(_x(lib), 0, 1, -1),
    "narrow_copy_start_out_of_range": lambda lib: lib.narrow_copy(_x(lib), 0, -3, 1),
    "narrow_copy_negative_start": lambda lib: lib.narrow_copy(_x(lib), 1, -2, 2),
    "narrow_float_start": lambda lib: lib.narrow(_x(lib), 0, 0.5, 1),
    "narrow_method_none_start": lambda lib: _x(lib).narrow(0, None, 1),
    "narrow_float_tensor_length": lambda lib: lib.narrow(_x(lib), 0, 0, lib.tensor(1.0)),
    "narrow_one_element_start": lambda lib: lib.narrow(_x(lib), 0, lib.tensor([0]), 1),
    "narrow_0d_start": lambda lib: lib.narrow(_x(lib), 0, lib.tensor(1), 1),
    # 5. adaptive pools' Tensor output_size, RNN's bool hidden_size, rms_norm's normalized_shape
    "adaptive_avg_pool2d_one_element_tensor": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_v(lib, (1, 2, 2)),
                                                                                             lib.tensor([0])),
    "adaptive_max_pool2d_one_element_tensor": lambda lib: lib.nn.functional.adaptive_max_pool2d(_v(lib, (1, 2, 2)),
                                                                                             lib.tensor([1])),
    "adaptive_avg_pool3d_two_element_tensor": lambda lib: lib.nn.functional.adaptive_avg_pool3d(
        _v(lib, (1, 2, 2, 2)), lib.tensor([1, 1])),
    "adaptive_max_pool3d_0d_tensor": lambda lib: lib.nn.functional.adaptive_max_pool3d(_v(lib, (1, 2, 2, 2)),
                                                                                     lib.tensor(1)),
    "adaptive_avg_pool2d_float_tensor": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_v(lib, (1, 2, 2)),
                                                                                       lib.tensor([1.0, 1.0])),
    "adaptive_avg_pool2d_long_tensor": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_v(lib, (1, 2, 2)),
                                                                                      lib.tensor([1, 1, 1])),
    "adaptive_avg_pool2d_2x1_tensor": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_x(lib)[None],
                                                                                     lib.tensor([[1], [2]])),
    "adaptive_avg_pool2d_pair_tensor": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_x(lib)[None],
                                                                                      lib.tensor([1, 2])),
    "adaptive_avg_pool2d_float": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_v(lib, (1, 2, 2)), 1.5),
    "adaptive_avg_pool2d_bool_first": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_v(lib, (1, 2, 2)),
                                                                                     (True, 1)),
    "adaptive_avg_pool2d_float_second": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_v(lib, (1, 2, 2)),
                                                                                       (1, 1.5)),
    "adaptive_avg_pool2d_float_tensor_second": lambda lib: lib.nn.functional.adaptive_avg_pool2d(
        _v(lib, (1, 2, 2)), (1, lib.tensor(1.0))),
    "adaptive_max_pool1d_two_element_tensor": lambda lib: lib.nn.functional.adaptive_max_pool1d(_v(lib, (1, 2, 2)),
                                                                                             lib.tensor([1, 1])),
    "adaptive_avg_pool1d_one_element_tensor": lambda lib: lib.nn.functional.adaptive_avg_pool1d(_x(lib)[None],
                                                                                             lib.tensor([2])),
    "rnn_bool_hidden_size": lambda lib: lib.nn.RNN(3, True),
    "rnn_relu_bool_hidden_size": lambda lib: lib.nn.RNN(3, True, nonlinearity="relu"),
    "gru_bool_hidden_size": lambda lib: [p.shape for p in lib.nn.GRU(3, True).parameters()],
    "lstm_bool_hidden_size": lambda lib: [p.shape for p in lib.nn.LSTM(3, True).parameters()],
    "rms_norm_int": lambda lib: lib.nn.functional.rms_norm(_x(lib), 3),
    "rms_norm_keyword_int": lambda lib: lib.nn.functional.rms_norm(_x(lib), normalized_shape=3),
    "rms_norm_tensor": lambda lib: lib.nn.functional.rms_norm(_x(lib), lib.tensor([3])),
    "rms_norm_float_item": lambda lib: lib.nn.functional.rms_norm(_x(lib), (3.0,)),
    "rms_norm_none": lambda lib: lib.nn.functional.rms_norm(_x(lib), None),
    "rms_norm_non_tensor_input_first": lambda lib: lib.nn.functional.rms_norm("a", 3),
    "rms_norm_size": lambda lib: lib.nn.functional.rms_norm(_x(lib), _x(lib).shape[1:]),
    "rms_norm_module_int": lambda lib: lib.nn.RMSNorm(3)(_x(lib)),
    "layer_norm_int": lambda lib: lib.nn.functional.layer_norm(_x(lib), 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_outcome(name):
    _same_outcome(CASES[name])


def test_einsum_without_opt_einsum_keeps_its_own_errors():
    """``backends.opt_einsum.enabled = False``: PyTorch skips the path search, and its own RuntimeErrors stand."""
    saved = torch.backends.opt_einsum.enabled, torchish.backends.opt_einsum.enabled
    try:
        torch.backends.opt_einsum.enabled = torchish.backends.opt_einsum.enabled = False
        _same_outcome(lambda lib: lib.einsum("i,i,i->", _v(lib, 2), _v(lib, 3), _v(lib, 2)))
        _same_outcome(lambda lib: lib.einsum("i,i,i->ii", *[_v(lib, 2)] * 3))
    finally:
        torch.backends.opt_einsum.enabled, torchish.backends.opt_einsum.enabled = saved


@pytest.mark.parametrize("args", [(4,), (1, 3, (4,))], ids=["high_size", "low_high_size"])
def test_randint_draws_unchanged(args):
    """The overloads that remain draw as PyTorch's (the same stream from the same seed)."""
    size = args[-1] if len(args) == 3 else (4,)
    same_draws(lambda lib: lib.randint(*args[:2], size) if len(args) == 3 else lib.randint(args[0], size))


# index_copy: the meta function's order (index dims, a scalar source's index length, the source's dims, the index
# dtype, the dtypes, the slice shapes, the index length against the source) on every pair of wrong things
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("index_shape", [(2,), (2, 1), (3,)], ids=["idx2", "idx2x1", "idx3"])
@pytest.mark.parametrize("source_shape", [(2, 3), (2, 2), (3,), ()], ids=["src2x3", "src2x2", "src3", "src0d"])
@pytest.mark.parametrize("source_dtype", ["float32", "float64"])
def test_index_copy_check_order(index_dtype, index_shape, source_shape, source_dtype):
    def fn(lib):
        index = lib.zeros(index_shape, dtype=getattr(lib, index_dtype))
        return lib.zeros(3, 3).index_copy(0, index, lib.ones(source_shape, dtype=getattr(lib, source_dtype)))
    _same_outcome(fn)


@pytest.mark.parametrize("case", ["dims_3d", "scalar_into_0d", "0d_into_1d"])
def test_index_copy_slice_shapes(case):
    fn = {"dims_3d": lambda lib: lib.zeros(3, 4, 5).index_copy(1, lib.zeros(2, dtype=lib.int64), lib.ones(3, 2, 6)),
          "scalar_into_0d": lambda lib: lib.zeros(()).index_copy(0, lib.zeros(1, dtype=lib.int64), lib.ones(())),
          "0d_into_1d": lambda lib: lib.zeros(()).index_copy(0, lib.zeros(1, dtype=lib.int64), lib.ones(2))}[case]
    _same_outcome(fn)
