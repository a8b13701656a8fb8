"""Shape ops against PyTorch: values, dtypes, gradients, grad_fn names, strides/contiguity, and errors."""
import warnings

import numpy as np
import pytest

from oracle import arr, check, check_raises, run_both, torchish

warnings.filterwarnings("ignore", category=UserWarning)

A = arr(2, 3)
B = arr(2, 3, seed=1)
C = arr(2, 3, 4, seed=2)
V = arr(5, seed=3)
S = np.array(1.5, np.float32)
I = arr(2, 3, lo=-5, hi=5, dtype=np.int64)
SQ = arr(3, 3, seed=4)


def same_error(fn, *args):
    """Both libraries raise the same builtin exception type with the same message (first line)."""
    ref = check_raises(fn, *args)
    with pytest.raises(Exception) as got:
        fn(torchish, *args)
    assert str(got.value).split("\n")[0] == str(ref).split("\n")[0]


# (id, fn(T, *tensors), inputs): values, dtypes, shapes and gradients against PyTorch
CASES = [
    # view / reshape
    ("view_flat", lambda T, x: x.view(6), [A]),
    ("view_infer", lambda T, x: x.view(-1, 2), [A]),
    ("view_tuple", lambda T, x: x.view((3, 2)), [A]),
    ("view_size", lambda T, x: x.view(T.Size([3, 2])), [A]),
    ("view_0d", lambda T, x: x.view(1, 1), [S]),
    ("view_as", lambda T, x, y: x.view_as(y), [A, arr(3, 2)]),
    ("reshape", lambda T, x: x.reshape(3, -1), [A]),
    ("reshape_fn", lambda T, x: T.reshape(x, (-1,)), [C]),
    ("reshape_nc", lambda T, x: x.t().reshape(6), [A]),
    ("reshape_as", lambda T, x, y: x.reshape_as(y), [A, arr(6)]),
    ("reshape_0d", lambda T, x: x.reshape(()), [np.array([2.0], np.float32)]),
    ("flatten", lambda T, x: x.flatten(), [C]),
    ("flatten_range", lambda T, x: T.flatten(x, 1, 2), [C]),
    ("flatten_neg", lambda T, x: x.flatten(-3, -2), [C]),
    ("flatten_0d", lambda T, x: x.flatten(), [S]),
    ("flatten_same", lambda T, x: x.flatten(1, 1), [C]),
    ("unflatten", lambda T, x: x.unflatten(2, (2, -1)), [C]),
    ("unflatten_fn", lambda T, x: T.unflatten(x, 0, (1, 2)), [A]),
    ("ravel", lambda T, x: T.ravel(x.t()), [A]),
    # permutations
    ("permute", lambda T, x: x.permute(2, 0, 1), [C]),
    ("permute_tuple", lambda T, x: T.permute(x, (1, -1, 0)), [C]),
    ("transpose", lambda T, x: x.transpose(0, 2), [C]),
    ("transpose_fn", lambda T, x: T.transpose(x, -1, -2), [C]),
    ("swapaxes", lambda T, x: x.swapaxes(0, 1), [A]),
    ("swapdims", lambda T, x: T.swapdims(x, 0, 1), [A]),
    ("t", lambda T, x: x.t(), [A]),
    ("t_1d", lambda T, x: T.t(x), [V]),
    ("T", lambda T, x: x.T, [A]),
    ("T_3d", lambda T, x: x.T, [C]),
    ("mT", lambda T, x: x.mT, [C]),
    ("mH", lambda T, x: x.mH, [C]),
    ("H", lambda T, x: x.H, [A]),
    ("movedim", lambda T, x: x.movedim(0, 2), [C]),
    ("movedim_seq", lambda T, x: T.movedim(x, (0, 1), (2, 0)), [C]),
    ("moveaxis", lambda T, x: T.moveaxis(x, -1, 0), [C]),
    # squeeze / unsqueeze / expand
    ("squeeze_all", lambda T, x: x.view(2, 1, 3, 1).squeeze(), [A]),
    ("squeeze_dim", lambda T, x: x.view(2, 1, 3, 1).squeeze(1), [A]),
    ("squeeze_noop", lambda T, x: x.squeeze(0), [A]),
    ("squeeze_tuple", lambda T, x: x.view(1, 2, 1, 3).squeeze((0, 2)), [A]),
    ("squeeze_tuple_neg", lambda T, x: T.squeeze(x.view(1, 2, 1, 3), (-2, 1)), [A]),
    ("squeeze_0d", lambda T, x: x.squeeze(0), [S]),
    ("unsqueeze", lambda T, x: x.unsqueeze(1), [A]),
    ("unsqueeze_neg", lambda T, x: T.unsqueeze(x, -1), [A]),
    ("unsqueeze_0d", lambda T, x: x.unsqueeze(0), [S]),
    ("expand", lambda T, x: x.view(2, 1, 3).expand(2, 4, 3), [A]),
    ("expand_lead", lambda T, x: x.expand(3, -1, -1), [A]),
    ("expand_0d", lambda T, x: x.expand(2, 2), [S]),
    ("expand_as", lambda T, x, y: x.view(1, 3).expand_as(y), [arr(3), B]),
    ("broadcast_to", lambda T, x: T.broadcast_to(x, (4, 2, 3)), [A]),
    ("broadcast_tensors", lambda T, x, y: T.broadcast_tensors(x, y), [arr(3, 1), arr(1, 4)]),
    ("broadcast_tensors3", lambda T, x, y, z: T.broadcast_tensors(x, y, z), [arr(3), arr(2, 1), S]),
    # repeat / tile / repeat_interleave
    ("repeat", lambda T, x: x.repeat(2, 3), [A]),
    ("repeat_more", lambda T, x: x.repeat(2, 1, 2), [A]),
    ("repeat_0d", lambda T, x: x.repeat(3), [S]),
    ("repeat_zero", lambda T, x: x.repeat(0, 2), [A]),
    ("tile", lambda T, x: x.tile((2,)), [A]),
    ("tile_more", lambda T, x: T.tile(x, (2, 1, 2)), [A]),
    ("repeat_interleave", lambda T, x: x.repeat_interleave(2), [A]),
    ("repeat_interleave_dim", lambda T, x: T.repeat_interleave(x, 3, dim=1), [A]),
    ("repeat_interleave_t", lambda T, x: x.repeat_interleave(T.tensor([1, 0, 2]), dim=1), [A]),
    ("repeat_interleave_t1", lambda T, x: x.repeat_interleave(T.tensor([2]), dim=0), [A]),
    ("repeat_interleave_flat", lambda T, x: x.repeat_interleave(T.tensor(2)), [A]),
    ("repeat_interleave_out", lambda T, x: x.repeat_interleave(2, dim=0, output_size=4), [A]),
    ("repeat_interleave_idx", lambda T: T.repeat_interleave(T.tensor([1, 3, 0, 2])), []),
    # cat / stack family
    ("cat", lambda T, x, y: T.cat([x, y]), [A, B]),
    ("cat_dim1", lambda T, x, y: T.cat((x, y), dim=1), [A, arr(2, 1)]),
    ("cat_neg", lambda T, x, y: T.cat([x, y], -1), [A, B]),
    ("cat_empty1d", lambda T, x: T.cat([x, T.zeros(0)]), [A]),
    ("cat_one", lambda T, x: T.cat([x]), [A]),
    ("concat", lambda T, x, y: T.concat([x, y]), [A, B]),
    ("concatenate", lambda T, x, y: T.concatenate([x, y], 1), [A, B]),
    ("cat_promote", lambda T, x, y: T.cat([x, y.double()]), [A, B]),
    ("cat_promote_int", lambda T, x, y: T.cat([y, x]), [A, I]),
    ("cat_promote_bool", lambda T, x: T.cat([x > 3, x]), [I]),
    ("cat_promote_half", lambda T, x, y: T.cat([y.int(), x.half()]), [A, B]),
    ("stack", lambda T, x, y: T.stack([x, y]), [A, B]),
    ("stack_dim", lambda T, x, y: T.stack((x, y), dim=2), [A, B]),
    ("stack_neg", lambda T, x, y: T.stack([x, y], -2), [A, B]),
    ("stack_promote", lambda T, x, y: T.stack([x, y]), [A, I]),
    ("stack_0d", lambda T, x: T.stack([x, x * 2]), [S]),
    ("hstack", lambda T, x, y: T.hstack([x, y]), [A, B]),
    ("hstack_1d", lambda T, x: T.hstack([x, x[:2]]), [V]),
    ("hstack_0d", lambda T, x, y: T.hstack([x, y]), [S, V]),
    ("vstack", lambda T, x, y: T.vstack([x, y]), [arr(3), B]),
    ("dstack", lambda T, x, y: T.dstack([x, y]), [A, B]),
    ("dstack_1d", lambda T, x, y: T.dstack([x, y]), [arr(3), arr(1, 3)]),
    ("column_stack", lambda T, x, y: T.column_stack([x, y]), [arr(2), B]),
    ("column_stack_0d", lambda T, x, y: T.column_stack([x, y]), [S, arr(1, 2)]),
    ("atleast_1d", lambda T, x: T.atleast_1d(x), [S]),
    ("atleast_2d", lambda T, x, y: T.atleast_2d(x, y), [S, V]),
    ("atleast_3d", lambda T, x, y, z: T.atleast_3d([x, y, z]), [S, V, A]),
    # split family
    ("split", lambda T, x: x.split(2), [V]),
    ("split_sizes", lambda T, x: T.split(x, [1, 3], dim=2), [C]),
    ("split_with_sizes", lambda T, x: x.split_with_sizes([2, 1], 1), [A]),
    ("split_big", lambda T, x: x.split(10), [V]),
    ("chunk", lambda T, x: x.chunk(2), [V]),
    ("chunk_more", lambda T, x: T.chunk(x, 4, 1), [arr(2, 5)]),
    ("chunk_dim", lambda T, x: x.chunk(3, dim=-1), [C]),
    ("tensor_split_n", lambda T, x: x.tensor_split(3), [arr(7)]),
    ("tensor_split_idx", lambda T, x: T.tensor_split(x, [1, 5]), [arr(7)]),
    ("tensor_split_unordered", lambda T, x: T.tensor_split(x, [5, 2]), [arr(7)]),
    ("tensor_split_neg", lambda T, x: T.tensor_split(x, (-2, 9)), [arr(7)]),
    ("tensor_split_t", lambda T, x: T.tensor_split(x, T.tensor([1, 2]), dim=1), [A]),
    ("tensor_split_t0", lambda T, x: T.tensor_split(x, T.tensor(2), dim=1), [C]),
    ("unbind", lambda T, x: x.unbind(), [A]),
    ("unbind_dim", lambda T, x: T.unbind(x, 2), [C]),
    ("iter", lambda T, x: list(x), [A]),
    # narrow / select
    ("narrow", lambda T, x: x.narrow(1, 1, 2), [A]),
    ("narrow_neg", lambda T, x: T.narrow(x, -1, -2, 2), [A]),
    ("narrow_tensor_start", lambda T, x: x.narrow(0, T.tensor(1), 1), [A]),
    ("narrow_empty", lambda T, x: x.narrow(1, 3, 0), [A]),
    ("select", lambda T, x: x.select(1, 2), [C]),
    ("select_neg", lambda T, x: T.select(x, -1, -4), [C]),
    # flips / rolls / rotations
    ("flip", lambda T, x: x.flip(0), [C]),
    ("flip_multi", lambda T, x: T.flip(x, (0, 2)), [C]),
    ("flip_neg", lambda T, x: x.flip(-1, 0), [C]),
    ("flip_none", lambda T, x: x.flip(()), [A]),
    ("flip_0d", lambda T, x: x.flip(0), [S]),
    ("fliplr", lambda T, x: T.fliplr(x), [C]),
    ("flipud", lambda T, x: x.flipud(), [V]),
    ("roll", lambda T, x: x.roll(1), [A]),
    ("roll_dim", lambda T, x: T.roll(x, -1, 1), [A]),
    ("roll_dims", lambda T, x: x.roll((1, 2), (0, 2)), [C]),
    ("roll_big", lambda T, x: x.roll(7, 1), [A]),
    ("roll_empty_dims", lambda T, x: x.roll((2,), ()), [A]),
    # numpy integers (and integer 0-d tensors) are ints to PyTorch's parser
    ("roll_numpy_ints", lambda T, x: x.roll((np.int64(1), 2), (np.int32(0), T.tensor(1))), [A]),
    ("roll_numpy_int_shift", lambda T, x: T.roll(x, np.int8(-1), dims=np.int64(1)), [A]),
    ("rot90", lambda T, x: x.rot90(), [A]),
    ("rot90_k", lambda T, x: T.rot90(x, 2, (1, 2)), [C]),
    ("rot90_neg", lambda T, x: T.rot90(x, -1, (2, 0)), [C]),
    ("rot90_k5", lambda T, x: x.rot90(5, (0, 1)), [A]),
    # diagonals / triangles
    ("diagonal", lambda T, x: x.diagonal(), [A]),
    ("diagonal_offset", lambda T, x: T.diagonal(x, 1), [A]),
    ("diagonal_neg", lambda T, x: x.diagonal(-1), [SQ]),
    ("diagonal_dims", lambda T, x: x.diagonal(1, 2, 0), [C]),
    ("diagonal_empty", lambda T, x: x.diagonal(5), [A]),
    ("diag_1d", lambda T, x: T.diag(x), [arr(3)]),
    ("diag_1d_off", lambda T, x: x.diag(2), [arr(3)]),
    ("diag_1d_neg", lambda T, x: T.diag(x, -1), [arr(3)]),
    ("diag_2d", lambda T, x: T.diag(x), [A]),
    ("diag_2d_off", lambda T, x: x.diag(1), [A]),
    ("diag_2d_neg", lambda T, x: T.diag(x, -1), [A]),
    ("diag_int", lambda T, x: T.diag(x), [I]),
    ("diag_embed", lambda T, x: T.diag_embed(x), [A]),
    ("diag_embed_off", lambda T, x: x.diag_embed(1, 0, 2), [A]),
    ("diag_embed_neg", lambda T, x: T.diag_embed(x, -1, -1, 0), [A]),
    ("diagflat", lambda T, x: T.diagflat(x), [A]),
    ("diagflat_off", lambda T, x: x.diagflat(-2), [arr(3)]),
    ("trace", lambda T, x: T.trace(x), [A]),
    ("trace_sq", lambda T, x: x.trace(), [SQ]),
    ("trace_int", lambda T, x: x.trace(), [I]),
    ("tril", lambda T, x: x.tril(), [SQ]),
    ("tril_k", lambda T, x: T.tril(x, -1), [C]),
    ("triu", lambda T, x: x.triu(1), [A]),
    ("triu_neg", lambda T, x: T.triu(x, -1), [C]),
    ("tril_int", lambda T, x: x.tril(), [I]),
    # meshgrid / unfold
    ("meshgrid_ij", lambda T, x, y: T.meshgrid(x, y, indexing="ij"), [arr(2), arr(3)]),
    ("meshgrid_xy", lambda T, x, y: T.meshgrid([x, y], indexing="xy"), [arr(2), arr(3)]),
    ("meshgrid_3", lambda T, x, y, z: T.meshgrid(x, y, z, indexing="xy"), [arr(2), arr(3), S]),
    ("meshgrid_one", lambda T, x: T.meshgrid(x, indexing="ij"), [arr(3)]),
    ("unfold", lambda T, x: x.unfold(1, 2, 1), [A]),
    ("unfold_step", lambda T, x: x.unfold(0, 2, 2), [V]),
    ("unfold_dim", lambda T, x: x.unfold(-1, 3, 1), [C]),
    ("unfold_0d", lambda T, x: x.unfold(0, 1, 1), [S]),
    # integer / bool inputs keep their dtype
    ("int_permute", lambda T, x: x.permute(1, 0).reshape(-1), [I]),
    ("bool_flip", lambda T, x: (x > 0).flip(1), [I]),
    ("int_roll", lambda T, x: x.roll(1, 0), [I]),
]


@pytest.mark.parametrize("fn,inputs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_shape_op(fn, inputs):
    check(fn, inputs)


# grad_fn names: what type(out.grad_fn).__name__ shows
GRAD_FN = [
    ("view", lambda T, x: x.view(6)), ("reshape", lambda T, x: x.reshape(3, 2)),
    ("reshape_copy", lambda T, x: x.t().reshape(6)), ("flatten", lambda T, x: x.flatten()),
    ("unflatten", lambda T, x: x.unflatten(1, (3, 1))), ("permute", lambda T, x: x.permute(1, 0)),
    ("transpose", lambda T, x: x.transpose(0, 1)), ("t", lambda T, x: x.t()), ("T", lambda T, x: x.T),
    ("mT", lambda T, x: x.mT), ("movedim", lambda T, x: x.movedim(0, 1)),
    ("squeeze0", lambda T, x: x.view(2, 1, 3).squeeze()), ("squeeze1", lambda T, x: x.view(2, 1, 3).squeeze(1)),
    ("squeeze2", lambda T, x: x.view(2, 1, 3).squeeze((1,))), ("unsqueeze", lambda T, x: x.unsqueeze(0)),
    ("expand", lambda T, x: x.expand(2, 2, 3)), ("broadcast_to", lambda T, x: T.broadcast_to(x, (2, 2, 3))),
    ("narrow", lambda T, x: x.narrow(1, 0, 2)), ("select", lambda T, x: x.select(0, 1)),
    ("split", lambda T, x: x.split(1)[0]), ("split_sizes", lambda T, x: x.split([1, 2], 1)[1]),
    ("chunk", lambda T, x: x.chunk(2)[1]), ("tensor_split", lambda T, x: x.tensor_split(2, 1)[0]),
    ("unbind", lambda T, x: x.unbind(1)[2]), ("diagonal", lambda T, x: x.diagonal()),
    ("unfold", lambda T, x: x.unfold(1, 2, 1)), ("contiguous_copy", lambda T, x: x.t().contiguous()),
    ("contiguous_same", lambda T, x: x.contiguous()), ("repeat", lambda T, x: x.repeat(2, 1)),
    ("tile", lambda T, x: x.tile(2)), ("repeat_interleave", lambda T, x: x.repeat_interleave(2)),
    ("repeat_interleave_t", lambda T, x: x.repeat_interleave(T.tensor([1, 2]), 0)),
    ("cat", lambda T, x: T.cat([x, x])), ("stack", lambda T, x: T.stack([x, x])),
    ("flip", lambda T, x: x.flip(0)), ("fliplr", lambda T, x: x.fliplr()), ("roll", lambda T, x: x.roll(1)),
    ("rot90", lambda T, x: x.rot90()), ("tril", lambda T, x: x.tril()), ("triu", lambda T, x: x.triu()),
    ("diag2d", lambda T, x: T.diag(x)), ("diag1d", lambda T, x: T.diag(x[0])),
    ("diag_embed", lambda T, x: T.diag_embed(x)), ("diagflat", lambda T, x: T.diagflat(x)),
    ("trace", lambda T, x: T.trace(x)), ("meshgrid", lambda T, x: T.meshgrid(x[0], x[1], indexing="ij")[0]),
]


@pytest.mark.parametrize("fn", [g[1] for g in GRAD_FN], ids=[g[0] for g in GRAD_FN])
def test_grad_fn_name(fn):
    def name(T):
        x = T.tensor(A, requires_grad=True) * 1
        return type(fn(T, x).grad_fn).__name__
    ref, got = run_both(name)
    assert got == ref


# strides, contiguity and whether the result shares storage with the input (a view) or is a copy
LAYOUT = [
    ("base", lambda T, x: x), ("t", lambda T, x: x.t()), ("t_t", lambda T, x: x.t().t()),
    ("slice_step", lambda T, x: x[:, ::2]), ("select", lambda T, x: x[:, 1]), ("none", lambda T, x: x[None]),
    ("none_mid", lambda T, x: x[:, None, 1:]), ("ellipsis", lambda T, x: x[..., 1]),
    ("narrow", lambda T, x: x.narrow(1, 1, 2)), ("diagonal", lambda T, x: x.diagonal()),
    ("diag_off", lambda T, x: x.diagonal(1)), ("diag_neg", lambda T, x: x.diagonal(-1)),
    ("unfold", lambda T, x: x.unfold(1, 2, 1)), ("expand", lambda T, x: x[:1].expand(3, 3)),
    ("expand_new", lambda T, x: x.expand(2, 2, 3)), ("squeeze", lambda T, x: x.view(2, 1, 3).squeeze(1)),
    ("unsqueeze", lambda T, x: x.t().unsqueeze(1)), ("unsqueeze_end", lambda T, x: x.t().unsqueeze(2)),
    ("permute_view", lambda T, x: x.view(2, 3, 1).permute(2, 0, 1).view(1, 6)),
    ("permute_reshape", lambda T, x: x.t().reshape(6)), ("view_split", lambda T, x: x.t().view(3, 2, 1)),
    ("slice_view", lambda T, x: x[1:].view(3)), ("split", lambda T, x: x.split(1, 1)[2]),
    ("unbind", lambda T, x: x.unbind(1)[1]), ("chunk", lambda T, x: x.chunk(2, 1)[1]),
    ("transpose_reshape", lambda T, x: x.view(2, 3, 1).transpose(0, 1).reshape(3, 2)),
    ("contiguous", lambda T, x: x.t().contiguous()), ("reshape_ok", lambda T, x: x[:, :2].reshape(4)),
    ("flatten_t", lambda T, x: x.t().flatten()), ("mT", lambda T, x: x.mT), ("view_dtype", lambda T, x: x.view(T.int32)),
    ("getitem_adv", lambda T, x: x[[0, 1]]), ("T_slice", lambda T, x: x.T[1:, :1]),
    # empty views keep the offset of where they start (PyTorch does not reset it to 0)
    ("empty_slice", lambda T, x: x[1:1]), ("empty_slice_end", lambda T, x: x[:, 3:]),
    ("empty_slice_reversed", lambda T, x: x[:, 2:1]), ("empty_narrow", lambda T, x: x.narrow(1, 2, 0)),
    ("empty_split", lambda T, x: x.split([2, 0, 1], 1)[1]), ("empty_t_slice", lambda T, x: x.t()[2:2]),
]


@pytest.mark.parametrize("fn", [v[1] for v in LAYOUT], ids=[v[0] for v in LAYOUT])
def test_layout(fn):
    def info(T):
        base = T.tensor(A)
        y = fn(T, base)
        y_is_view = y._base is not None
        before = base.clone()
        y.add_(0.5) if y.dtype.is_floating_point and 0 not in y.stride() else None
        wrote = not T.equal(base, before)
        return tuple(y.shape), y.stride(), y.storage_offset(), y.is_contiguous(), y_is_view, wrote
    ref, got = run_both(info)
    assert got == ref


def test_reshape_copy_does_not_alias():
    def f(T):
        x = T.arange(6.).view(2, 3)
        y = x.t().reshape(6)
        y[0] = 100.
        z = x.reshape(3, 2)
        z[0, 0] = -1.
        c = x.t().contiguous()
        c[0, 0] = 50.
        return x, y, z, c
    ref, got = run_both(f)
    from oracle import assert_same
    assert_same(ref, got)


VIEW_DTYPE = [
    ("f32_i32", lambda T, x: x.view(T.int32)), ("f32_f16", lambda T, x: x.view(T.float16)),
    ("f32_u8", lambda T, x: x.view(T.uint8)), ("f32_f64", lambda T, x: x.view(2, 2).view(T.float64)),
    ("f32_same", lambda T, x: x.view(T.float32)), ("i64_f64", lambda T, x: x.long().view(T.float64)),
    ("bool_u8", lambda T, x: (x > 0).view(T.uint8)), ("u8_bool", lambda T, x: (x > 0).byte().view(T.bool)),
    # complex <-> real: the last dim doubles or halves, the (real, imag) pairs as view_as_real lays them out
    ("c64_f32", lambda T, x: T.complex(x, x.flip(0)).view(T.float32)),
    ("f32_c64", lambda T, x: x.view(T.complex64)), ("f32_c64_2d", lambda T, x: x.view(2, 2).view(T.complex64)),
    ("c128_f64", lambda T, x: T.complex(x, -x).double().view(T.float64)),
    ("f64_c128", lambda T, x: x.double().view(T.complex128)), ("f64_c64", lambda T, x: x.double().view(T.complex64)),
    ("c64_i64", lambda T, x: T.complex(x, x).view(T.int64)), ("c64_f16", lambda T, x: T.complex(x, x).view(T.float16)),
    ("c128_c64", lambda T, x: T.complex(x, x).double().view(T.complex64)),
    ("c64_roundtrip", lambda T, x: T.complex(x, 2 * x).view(T.float32).view(T.complex64)),
]


@pytest.mark.parametrize("fn", [v[1] for v in VIEW_DTYPE], ids=[v[0] for v in VIEW_DTYPE])
def test_view_dtype(fn):
    check(fn, [arr(4, seed=9)])


def test_view_dtype_complex_write_through():
    def f(T):
        z = T.zeros(2, 2, dtype=T.complex128)
        v = z.view(T.float64)
        v[:, 1] = 3.
        v.mul_(2)
        r = T.zeros(2, 4)
        c = r.view(T.complex64)
        c += 1j
        return z, v, r, c
    ref, got = run_both(f)
    from oracle import assert_same
    assert_same(ref, got)


VIEW_DTYPE_ERRORS = [
    ("odd_size", lambda T: T.ones(3).view(T.complex64)), ("0d_to_complex", lambda T: T.tensor(1.).view(T.complex64)),
    ("0d_from_complex", lambda T: T.tensor(1j).view(T.float32)),
    ("last_stride", lambda T: T.ones(2, 4)[:, ::2].view(T.complex64)),
    ("size_before_stride", lambda T: T.ones(3, 4).t().view(T.complex64)),
    ("offset", lambda T: T.ones(3, 8)[:, 1:7].view(T.complex64)),
    ("offset_before_stride", lambda T: T.ones(3, 9)[:, 1::2].view(T.complex64)),
    ("lead_stride", lambda T: T.ones(3, 7)[:, 2:6].view(T.complex64)),
    ("complex_last_stride", lambda T: T.ones(3, 2, dtype=T.complex64).t().view(T.float32)),
    ("f64_c128_stride", lambda T: T.ones(4, 4, dtype=T.float64).t().view(T.complex128)),
    ("i8_c64", lambda T: T.ones(4, dtype=T.int8).view(T.complex64)),
]


@pytest.mark.parametrize("fn", [v[1] for v in VIEW_DTYPE_ERRORS], ids=[v[0] for v in VIEW_DTYPE_ERRORS])
def test_view_dtype_errors(fn):
    ref = check_raises(fn)
    with pytest.raises(RuntimeError) as got:
        fn(torchish)
    assert str(got.value) == str(ref)


def test_view_dtype_write_through():
    def f(T):
        x = T.tensor([1.0, 2.0, -3.0, 4.5])
        y = x.view(T.int32)
        y[1] = 0
        h = x.view(T.int16)
        h[0] = 0
        return x, y, h
    ref, got = run_both(f)
    from oracle import assert_same
    assert_same(ref, got)


ERRORS = [
    ("view_size", lambda T: T.zeros(2, 3).view(4)),
    ("view_two_infer", lambda T: T.zeros(2, 3).view(-1, -1)),
    ("view_neg", lambda T: T.zeros(2, 3).view(-2, 3)),
    ("view_zero_infer", lambda T: T.zeros(0, 3).view(-1, 0)),
    ("view_noncontig", lambda T: T.zeros(2, 3).t().view(6)),
    ("view_expanded", lambda T: T.zeros(1, 3).expand(2, 3).view(6)),
    ("view_dtype_div", lambda T: T.zeros(2, 3).view(T.float64)),
    ("view_dtype_stride", lambda T: T.zeros(2, 3).t().view(T.float16)),
    ("view_dtype_0d", lambda T: T.zeros(()).view(T.float16)),
    ("reshape_size", lambda T: T.zeros(2, 3).reshape(-1, 4)),
    ("reshape_neg", lambda T: T.zeros(2, 3).reshape(-2, 3)),
    ("flatten_order", lambda T: T.zeros(2, 3).flatten(1, 0)),
    ("flatten_dim", lambda T: T.zeros(2, 3).flatten(0, 5)),
    ("unflatten_prod", lambda T: T.zeros(2, 6).unflatten(1, (4, -1))),
    ("unflatten_prod2", lambda T: T.zeros(2, 6).unflatten(1, (5, 1))),
    ("unflatten_empty", lambda T: T.zeros(2, 6).unflatten(1, ())),
    ("unflatten_two_infer", lambda T: T.zeros(2, 6).unflatten(1, (-1, -1))),
    ("permute_dim", lambda T: T.zeros(2, 3).permute(2, 0)),
    ("permute_dup", lambda T: T.zeros(2, 3).permute(0, 0)),
    ("permute_len", lambda T: T.zeros(2, 3).permute(0)),
    ("transpose_dim", lambda T: T.zeros(2, 3).transpose(0, 2)),
    ("t_3d", lambda T: T.zeros(2, 3, 4).t()),
    ("mT_1d", lambda T: T.zeros(3).mT),
    ("movedim_len", lambda T: T.zeros(2, 3).movedim((0, 1), (1,))),
    ("movedim_src_dup", lambda T: T.zeros(2, 3).movedim((0, 0), (1, 0))),
    ("movedim_dst_dup", lambda T: T.zeros(2, 3).movedim((0, 1), (1, 1))),
    ("squeeze_dim", lambda T: T.zeros(2, 3).squeeze(5)),
    ("squeeze_dup", lambda T: T.zeros(2, 3).squeeze((0, 0))),
    ("unsqueeze_dim", lambda T: T.zeros(2, 3).unsqueeze(3)),
    ("expand_few", lambda T: T.zeros(2, 3).expand(3)),
    ("expand_mismatch", lambda T: T.zeros(2, 3).expand(2, 4)),
    ("expand_lead_neg", lambda T: T.zeros(2, 3).expand(-1, 2, 3)),
    ("broadcast_tensors", lambda T: T.broadcast_tensors(T.zeros(2, 3), T.zeros(4))),
    ("broadcast_tensors3", lambda T: T.broadcast_tensors(T.zeros(2, 3), T.zeros(3), T.zeros(4, 5, 1))),
    ("broadcast_shapes", lambda T: T.broadcast_shapes((2, 3), (4,))),
    ("broadcast_shapes2", lambda T: T.broadcast_shapes((2, 3), (3, 3))),
    ("broadcast_shapes_neg", lambda T: T.broadcast_shapes((2, -1))),
    ("repeat_few", lambda T: T.zeros(2, 3).repeat(2)),
    ("repeat_neg", lambda T: T.zeros(2, 3).repeat(-1, 2)),
    ("ri_size", lambda T: T.zeros(2, 3).repeat_interleave(T.tensor([1, 2]), 1)),
    ("ri_neg", lambda T: T.zeros(2, 3).repeat_interleave(-1)),
    ("ri_neg_t", lambda T: T.zeros(2, 3).repeat_interleave(T.tensor([1, -2]), 0)),
    ("ri_2d", lambda T: T.zeros(2, 2).repeat_interleave(T.tensor([[2]]))),
    ("ri_float", lambda T: T.zeros(2, 2).repeat_interleave(T.tensor([2.]))),
    ("ri_output_size", lambda T: T.zeros(2).repeat_interleave(T.tensor([1, 2]), dim=0, output_size=4)),
    ("cat_sizes", lambda T: T.cat([T.zeros(2, 3), T.zeros(2, 4)])),
    ("cat_ndim", lambda T: T.cat([T.zeros(2, 3), T.zeros(3)])),
    ("cat_dim", lambda T: T.cat([T.zeros(2, 3), T.zeros(2, 3)], 2)),
    ("cat_empty", lambda T: T.cat([])),
    ("cat_0d", lambda T: T.cat([T.zeros(())])),
    ("cat_not_tensor", lambda T: T.cat([T.zeros(2, 3), 1])),
    ("cat_tensor", lambda T: T.cat(T.zeros(2, 3))),
    ("stack_empty", lambda T: T.stack([])),
    ("stack_sizes", lambda T: T.stack([T.zeros(2), T.zeros(3)])),
    ("stack_dim", lambda T: T.stack([T.zeros(2), T.zeros(2)], 3)),
    ("hstack_empty", lambda T: T.hstack([])),
    ("split_zero", lambda T: T.zeros(2, 3).split(0)),
    ("split_neg", lambda T: T.zeros(3).split(-1)),
    ("split_sum", lambda T: T.zeros(2, 3).split([1, 1], 1)),
    ("split_neg_sizes", lambda T: T.zeros(3).split([4, -1])),
    ("chunk_zero", lambda T: T.zeros(2, 3).chunk(0)),
    ("chunk_0d", lambda T: T.zeros(()).chunk(1)),
    ("tensor_split_zero", lambda T: T.zeros(2, 3).tensor_split(0)),
    ("tensor_split_0d", lambda T: T.zeros(()).tensor_split(1)),
    ("tensor_split_float", lambda T: T.tensor_split(T.arange(7), T.tensor([1.5]))),
    ("unbind_0d", lambda T: T.zeros(()).unbind()),
    ("narrow_len", lambda T: T.zeros(2, 3).narrow(1, 2, 2)),
    ("narrow_start", lambda T: T.zeros(2, 3).narrow(1, 4, 0)),
    ("narrow_start_neg", lambda T: T.zeros(2, 3).narrow(1, -4, 0)),
    ("narrow_neg_len", lambda T: T.zeros(2, 3).narrow(1, 0, -1)),
    ("narrow_0d", lambda T: T.zeros(()).narrow(0, 0, 1)),
    ("select_hi", lambda T: T.zeros(2, 3).select(1, 3)),
    ("select_lo", lambda T: T.zeros(2, 3).select(1, -4)),
    ("select_0d", lambda T: T.zeros(()).select(0, 0)),
    ("flip_dup", lambda T: T.zeros(2, 3).flip(0, 0)),
    ("flip_dim", lambda T: T.zeros(()).flip(1)),
    ("fliplr_1d", lambda T: T.zeros(3).fliplr()),
    ("flipud_0d", lambda T: T.zeros(()).flipud()),
    ("roll_align", lambda T: T.zeros(2, 3).roll(1, (0, 1))),
    ("roll_none", lambda T: T.zeros(2, 2).roll((1, 2), None)),
    ("roll_dim", lambda T: T.zeros(2).roll(1, 1)),
    ("roll_float_shift", lambda T: T.zeros(2).roll(1.0)),
    ("roll_float_in_shifts", lambda T: T.zeros(2).roll((1.5,), (0,))),
    ("roll_bool_shift", lambda T: T.zeros(2).roll(True)),
    ("roll_numpy_float_dim", lambda T: T.zeros(2).roll(1, (np.float32(0),))),
    ("rot90_same", lambda T: T.zeros(2, 3).rot90(1, (0, 0))),
    ("rot90_same_wrapped", lambda T: T.zeros(2, 2).rot90(1, (0, -2))),
    ("rot90_one", lambda T: T.zeros(2, 3).rot90(1, (0,))),
    ("rot90_three", lambda T: T.zeros(2, 2).rot90(1, (0, 1, 1))),
    ("rot90_1d", lambda T: T.zeros(3).rot90()),
    ("rot90_dim", lambda T: T.zeros(2, 2).rot90(1, (0, 5))),
    ("diagonal_same", lambda T: T.zeros(2, 3).diagonal(0, 1, 1)),
    ("diagonal_same_wrapped", lambda T: T.zeros(2, 3).diagonal(0, 1, -1)),
    ("diagonal_dim", lambda T: T.zeros(2, 3).diagonal(0, 0, 2)),
    ("diag_3d", lambda T: T.diag(T.zeros(2, 3, 4))),
    ("diag_embed_same", lambda T: T.diag_embed(T.zeros(2, 3), 0, 0, 0)),
    ("diag_embed_dim", lambda T: T.diag_embed(T.zeros(2, 3), 0, 0, 5)),
    ("trace_3d", lambda T: T.trace(T.zeros(2, 3, 4))),
    ("trace_1d", lambda T: T.trace(T.zeros(3))),
    ("trace_bool", lambda T: T.trace(T.ones(2, 3, dtype=T.bool))),
    ("tril_1d", lambda T: T.zeros(3).tril()),
    ("triu_0d", lambda T: T.zeros(()).triu()),
    ("unfold_big", lambda T: T.zeros(2, 3).unfold(1, 4, 1)),
    ("unfold_step", lambda T: T.zeros(2, 3).unfold(1, 2, 0)),
    ("unfold_size", lambda T: T.zeros(2, 3).unfold(1, -1, 1)),
    ("unfold_dim", lambda T: T.zeros(2, 3).unfold(2, 1, 1)),
    ("unfold_0d", lambda T: T.zeros(()).unfold(0, 2, 1)),
    ("meshgrid_2d", lambda T: T.meshgrid(T.zeros(2, 2), T.zeros(3), indexing="ij")),
    ("meshgrid_empty", lambda T: T.meshgrid(indexing="ij")),
    ("meshgrid_dtype", lambda T: T.meshgrid(T.zeros(2), T.zeros(3, dtype=T.float64), indexing="ij")),
    ("meshgrid_indexing", lambda T: T.meshgrid(T.zeros(2), T.zeros(3), indexing="ab")),
]


TYPE_ONLY = {"meshgrid_2d"}  # PyTorch prints the tensor with its C++ formatter


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_shape_error(name, fn):
    if name in TYPE_ONLY:
        check_raises(fn)
    else:
        same_error(fn)


INPLACE_VIEWS = [
    ("unsqueeze_", lambda T, x: x.unsqueeze_(1)), ("squeeze_", lambda T, x: x.unsqueeze_(1).squeeze_()),
    ("squeeze_dim_", lambda T, x: x.unsqueeze_(0).squeeze_(0)), ("t_", lambda T, x: x.t_()),
    ("transpose_", lambda T, x: x.transpose_(0, 1)), ("swapdims_", lambda T, x: x.swapdims_(1, 0)),
    ("swapaxes_", lambda T, x: x.swapaxes_(0, 1)), ("tril_", lambda T, x: x.tril_(-1)),
    ("triu_", lambda T, x: x.triu_()),
]


@pytest.mark.parametrize("fn", [v[1] for v in INPLACE_VIEWS], ids=[v[0] for v in INPLACE_VIEWS])
def test_inplace_shape_ops(fn):
    def f(T, a):
        y = a * 2
        v = y[1:]
        out = fn(T, y)
        assert out is y
        y.mul_(3)
        return y, v, y._version, tuple(y.stride()), y.is_contiguous()
    check(f, [A])


def test_real_imag_views():
    """``.real`` / ``.imag`` of complex tensors are views (values, grads, strides, write-through, setters)."""
    z = (np.arange(6).reshape(2, 3) + 1j * np.arange(6, 12).reshape(2, 3)).astype(np.complex64)
    check(lambda T, a: (a.real * 2, a.imag ** 2, T.real(a), T.imag(a) + 1), [z])

    def writes(T):
        x = T.tensor(z)
        x.real.mul_(2)
        x.imag[0] = 7.0
        y = T.ones(3)
        out = [x.tolist(), y.real is y, x.real.stride(), x.imag.storage_offset(), x.real.is_contiguous()]
        x.imag = T.zeros(2, 3)
        return out + [x.tolist()]
    ref, got = run_both(writes)
    assert got == ref
    check_raises(lambda T: T.ones(2).imag)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int16", "uint8", "bool"])
@pytest.mark.parametrize("form", ["counts", "tensor_repeats", "scalar_tensor_repeats"])
def test_repeat_interleave_repeats_dtypes(dtype, form):
    """The counts-only form returns indices of the counts' dtype (int32 stayed int64); PyTorch's kernel takes int32
    and int64 repeats only (NotImplementedError for the others, which torchish accepted)."""
    def fn(T):
        dt = getattr(T, dtype)
        if form == "counts":
            return T.repeat_interleave(T.tensor([1, 0, 2], dtype=dt))
        if form == "tensor_repeats":
            return T.repeat_interleave(T.arange(3.0), T.tensor([1, 0, 2], dtype=dt))
        return T.repeat_interleave(T.arange(3.0), T.tensor(2, dtype=dt))
    if dtype in ("int32", "int64"):
        ref, got = run_both(fn)
        assert str(got.dtype) == str(ref.dtype) and got.tolist() == ref.tolist()
    else:
        check_raises(fn)


@pytest.mark.parametrize("dtype", ["float16", "int64", "uint8"])
def test_repeat_interleave_counts_checks_the_dtype_before_the_rank(dtype):
    check_raises(lambda T: T.repeat_interleave(T.ones(2, 2, dtype=getattr(T, dtype))))
