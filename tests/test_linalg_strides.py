"""Strides of linear-algebra and indexing results as PyTorch's: the results its LAPACK kernels write are batches of
column-major matrices (``torch.linalg.inv(a).stride()`` is ``(16, 1, 4)`` for a (3, 4, 4) input), advanced indexing
follows its input's layout, so ``stride()``, ``is_contiguous()`` and whether ``view()`` raises agree with PyTorch;
plus PyTorch's wording of messages users search for (losses, nn.Unflatten, optimizer hooks and loaded state), and the
legacy typed storage classes (``torch.FloatStorage(2)``)."""
import math
import warnings

import numpy as np
import pytest

from oracle import assert_same, needs_torch, run_both, same, same_error

pytestmark = needs_torch


def _mat(T, *shape):
    """A well-conditioned (batch of) matrices: square ones get 3 on the diagonal. The values are computed by numpy
    (float32) and given to both libraries: building them with the library's ops compiled five kernels per shape."""
    a = np.sin(np.arange(math.prod(shape), dtype=np.float32) ** 2 * np.float32(0.37)).reshape(shape)  # (full rank)
    return T.tensor(a + 3 * np.eye(shape[-1], dtype=np.float32) if shape[-1] == shape[-2] else a)


def _spd(T, *batch):
    a = _mat(T, *batch, 4, 4)
    return a @ a.mT + 4 * T.eye(4)


_LINALG = {
    "inv": lambda T, L, a, r: L.inv(a), "inv_ex": lambda T, L, a, r: L.inv_ex(a),
    "inverse": lambda T, L, a, r: T.inverse(a),
    "solve": lambda T, L, a, r: L.solve(a, a[..., :2]), "solve_vector": lambda T, L, a, r: L.solve(a, a[..., 0]),
    "solve_left_false": lambda T, L, a, r: L.solve_ex(a, a[..., :2, :], left=False),
    "lstsq": lambda T, L, a, r: L.lstsq(r, r[..., :2], driver="gelsd"),
    "lstsq_wide": lambda T, L, a, r: L.lstsq(r.mT, r.mT[..., :2]),
    "lstsq_vector": lambda T, L, a, r: L.lstsq(r, r[..., 0]),
    "qr": lambda T, L, a, r: L.qr(r), "qr_complete": lambda T, L, a, r: L.qr(r, mode="complete"),
    "qr_r": lambda T, L, a, r: L.qr(r.mT, mode="r"), "qr_old": lambda T, L, a, r: T.qr(r),
    "svd": lambda T, L, a, r: L.svd(r, full_matrices=False), "svd_full": lambda T, L, a, r: L.svd(r.mT),
    "svd_old": lambda T, L, a, r: T.svd(r), "svd_old_no_uv": lambda T, L, a, r: T.svd(r, compute_uv=False),
    "svdvals": lambda T, L, a, r: L.svdvals(r),
    "eigh": lambda T, L, a, r: L.eigh(a + a.mT), "eig": lambda T, L, a, r: L.eig(a),
    "eigvals": lambda T, L, a, r: L.eigvals(a),
    "cholesky": lambda T, L, a, r: L.cholesky(_spd(T, *a.shape[:-2]), upper=True),
    "cholesky_ex": lambda T, L, a, r: L.cholesky_ex(_spd(T, *a.shape[:-2])),
    "cholesky_old": lambda T, L, a, r: T.cholesky(_spd(T, *a.shape[:-2])),
    "cholesky_inverse": lambda T, L, a, r: T.cholesky_inverse(L.cholesky(_spd(T, *a.shape[:-2]))),
    "cholesky_solve": lambda T, L, a, r: T.cholesky_solve(a[..., :2], L.cholesky(_spd(T, *a.shape[:-2]))),
    "lu_factor": lambda T, L, a, r: L.lu_factor_ex(a), "lu_old": lambda T, L, a, r: T.lu(a),
    "lu": lambda T, L, a, r: L.lu(r), "lu_unpack": lambda T, L, a, r: T.lu_unpack(*L.lu_factor(a)),
    "lu_solve": lambda T, L, a, r: L.lu_solve(*L.lu_factor(a), a[..., :2], adjoint=True),
    "lu_solve_left_false": lambda T, L, a, r: L.lu_solve(*L.lu_factor(a), a[..., :2, :], left=False),
    "ldl": lambda T, L, a, r: L.ldl_factor(_spd(T, *a.shape[:-2])),
    "ldl_solve": lambda T, L, a, r: L.ldl_solve(*L.ldl_factor(_spd(T, *a.shape[:-2])), a[..., :2]),
    "solve_triangular": lambda T, L, a, r: L.solve_triangular(a.triu(), a[..., :2, :], upper=True, left=False),
    "triangular_solve": lambda T, L, a, r: T.triangular_solve(a[..., :2], a.tril(), upper=False),
    "householder_product": lambda T, L, a, r: L.householder_product(*T.geqrf(r)),
    "geqrf": lambda T, L, a, r: T.geqrf(r),
    "ormqr": lambda T, L, a, r: T.ormqr(*T.geqrf(r), r.mT[..., :2, :], left=False),
    "det_slogdet": lambda T, L, a, r: (L.det(a), *L.slogdet(a)), "matrix_exp": lambda T, L, a, r: L.matrix_exp(a),
    "pinv": lambda T, L, a, r: L.pinv(r), "matrix_power_m1": lambda T, L, a, r: L.matrix_power(a, -1),
    "matrix_power_m2": lambda T, L, a, r: L.matrix_power(a, -2),
    "matrix_power_1": lambda T, L, a, r: L.matrix_power(a, 1),
    "tensorinv": lambda T, L, a, r: L.tensorinv(_mat(T, 8, 8).reshape(4, 2, 2, 4), ind=2),
    # results that follow a column-major one: an elementwise op keeps its layout, reshape copies, mT is contiguous
    "follow_ups": lambda T, L, a, r: (L.inv(a) * 2, L.inv(a).reshape(-1, 4), L.inv(a).mT, L.qr(r).Q.contiguous()),
}


# the values compared where a decomposition is unique only up to signs (phases): the strides are the outputs'
_VALUES = {"eig": lambda w, v: (w,), "eigh": lambda w, v: (w, v.abs()),
           "svd_full": lambda u, s, vh: (u.abs(), s, vh[..., :s.shape[-1], :].abs())}


def _strides(name, out):
    outs = out if isinstance(out, tuple) else (out,)
    info = []
    for t in outs:
        try:
            t.view(-1)
            viewable = True
        except RuntimeError:
            viewable = False
        info.append((tuple(t.stride()), t.is_contiguous(), viewable))
    return info, [t.detach() for t in _VALUES.get(name, lambda *o: o)(*outs)]


@pytest.mark.parametrize("name", sorted(_LINALG))
def test_linalg_result_strides_match_pytorch(name):
    def run(T):
        res = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for batch, transposed in (((), False), ((3,), False), ((3,), True)):
                a, r = _mat(T, *batch, 4, 4), _mat(T, *batch, 5, 3)
                if transposed:  # (the layout of the input does not matter)
                    a, r = a.mT.contiguous().mT, r.mT.contiguous().mT
                res.append(_strides(name, _LINALG[name](T, T.linalg, a, r)))
        return [r[0] for r in res], [r[1] for r in res]
    ref, got = run_both(run)
    assert got[0] == ref[0]
    assert_same(ref[1], got[1], rtol=1e-3, atol=1e-4)  # (float32 decompositions: LAPACK's and XLA's rounding)


def test_linalg_column_major_edge_shapes():
    """Batches of one, 1x1 and empty matrices, four dimensions and batch broadcasting take PyTorch's strides."""
    def run(T):
        L = T.linalg
        outs = [L.inv(_mat(T, 2, 3, 4, 4)), L.inv(_mat(T, 1, 4, 4)), L.inv(_mat(T, 3, 1, 1)), L.inv(T.zeros(3, 0, 0)),
                L.inv(T.zeros(0, 4, 4)), L.solve(_mat(T, 3, 4, 4), _mat(T, 4, 2)),
                L.solve(_mat(T, 4, 4), _mat(T, 4, 4)[:, :1]), L.solve(_mat(T, 2, 3, 4, 4), _mat(T, 2, 3, 4, 4)[..., 0]),
                L.lstsq(T.zeros(2, 0, 3), T.zeros(2, 0, 2)).solution,
                L.solve_triangular(_mat(T, 4, 4).tril(), _mat(T, 3, 4, 2), upper=False)]
        return [tuple(t.stride()) for t in outs]
    ref, got = run_both(run)
    assert got == ref


# ----------------------------------------------------------------------------------------------------------------
# indexing: x[index tensors] is a TensorIterator over x restrided to the result (it follows x's layout and the index
# tensors'); index_fill/index_put/put write into a clone (preserve_format); sort and flip allocate like the input,
# size-1 dims' strides included


_INDEX = {
    "adv_first": lambda T, x: x[T.tensor([1, 0])], "adv_middle": lambda T, x: x[:, T.tensor([1, 0])],
    "adv_last": lambda T, x: x[..., T.tensor([1, 0])],
    "adv_transposed_index": lambda T, x: x[T.tensor([[1, 0], [0, 1], [1, 1]]).t()],
    "adv_separated": lambda T, x: x[T.tensor([1, 0]), :, T.tensor([0, 1])],
    "adv_broadcast": lambda T, x: x[:, T.tensor([[0], [1]]), T.tensor([0, 1, 1])],
    "adv_int_none_step": lambda T, x: (x[1, :, T.tensor([1, 0])], x[:, None, T.tensor([1, 0])],
                                       x[:, ::2, T.tensor([1, 0])]),
    "adv_bool": lambda T, x: (x[T.tensor([True] + [False] * (x.shape[0] - 1))], x[T.tensor([1]), True]),
    "index_fill": lambda T, x: x.index_fill(1, T.tensor([0]), 2.0),
    "index_put": lambda T, x: x.index_put((T.tensor([0]),), T.tensor(1.0)),
    "put": lambda T, x: x.put(T.tensor([0]), T.tensor([1.0])),
    "sort_flip_rot90": lambda T, x: (*x[:1, :1].sort(1), x[:1, :1].flip(0), x[:1, :1].rot90(2, (2, 3))),
    "sort_flip_size_one": lambda T, x: (*T.arange(6.0).reshape(6, 1).t().sort(1),
                                        T.arange(6.0).reshape(6, 1).t().flip(0), T.zeros(0, 3).t().sort(1)[0],
                                        T.zeros(0, 3).t().flip(1)),
}


@pytest.mark.parametrize("name", sorted(_INDEX))
def test_index_result_strides_match_pytorch(name):
    def run(T):
        x = T.arange(120.0).reshape(2, 3, 4, 5)
        res = [_strides(name, _INDEX[name](T, s)) for s in (
            x, x.transpose(1, 3), x.permute(3, 1, 0, 2), x.contiguous(memory_format=T.channels_last), x[:, ::2])]
        return [r[0] for r in res], [r[1] for r in res]
    ref, got = run_both(run)
    assert got[0] == ref[0]
    assert_same(ref[1], got[1])


# ----------------------------------------------------------------------------------------------------------------
# messages


def _loss_mismatch(name):
    return lambda T: getattr(T.nn.functional, name)(T.ones(2, 3).sigmoid(), T.ones(2, 4).sigmoid())


def _loaded_state_mismatch(cls, foreach):
    def run(T):
        a, b = T.nn.Parameter(T.ones(3)), T.nn.Parameter(T.ones(4))
        a.grad, b.grad = T.ones(3), T.ones(4)
        oa, ob = getattr(T.optim, cls)([a], foreach=foreach), getattr(T.optim, cls)([b], foreach=foreach)
        oa.step()
        ob.load_state_dict(oa.state_dict())
        ob.step()
    return run


def _pre_hook_returns_five(T):
    p = T.nn.Parameter(T.ones(3))
    p.grad = T.ones(3)
    opt = T.optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 5)
    try:
        opt.step()
    except RuntimeError as e:  # (the function's address differs: compare the rest)
        raise RuntimeError(str(e).split(" at 0x")[0] + " " + str(e).split(">", 1)[1]) from None


_MESSAGES = {
    # PyTorch's loss formulas start from the target (target * (target.log() - input), ...): it is 'tensor a'
    **{f"{n}_broadcast": _loss_mismatch(n) for n in ("kl_div", "poisson_nll_loss", "hinge_embedding_loss",
                                                     "multilabel_soft_margin_loss", "mse_loss")},
    # multilabel_margin_loss checks the shapes before the dtypes
    "multilabel_margin_shape_first": lambda T: T.nn.functional.multilabel_margin_loss(T.ones(2, 3), T.ones(2, 4)),
    "multilabel_margin_3d": lambda T: T.nn.functional.multilabel_margin_loss(T.ones(2, 3, 2), T.ones(2, 3, 2).long()),
    "multilabel_margin_dtype": lambda T: T.nn.functional.multilabel_margin_loss(T.ones(2, 3), T.ones(2, 3)),
    # nn.Unflatten checks only the sizes (a dim name fails in forward, as Tensor.unflatten's int argument)
    "unflatten_named_sizes": lambda T: T.nn.Unflatten("features", (("C", 2), ("H", 3))),
    "unflatten_name_forward": lambda T: T.nn.Unflatten("features", (2, 3))(T.ones(2, 6)),
    "unflatten_function_dim": lambda T: T.unflatten(T.ones(2, 6), "f", (2, 3)),
    "cholesky_solve_int": lambda T: T.cholesky_solve(T.ones(3, 2, dtype=T.int64), T.eye(3, dtype=T.int64)),
    "optimizer_pre_hook_names_step": _pre_hook_returns_five,
    "rprop_loaded_state_mismatch": _loaded_state_mismatch("Rprop", False),
    "asgd_foreach_loaded_state_mismatch": _loaded_state_mismatch("ASGD", True),
    "asgd_loaded_state_mismatch": _loaded_state_mismatch("ASGD", False),
    # the legacy typed storage classes
    "float_storage_float_size": lambda T: T.FloatStorage(2.5),
    "float_storage_two_sizes": lambda T: T.FloatStorage(2, 3),
    "float_storage_keyword": lambda T: T.FloatStorage(size=2),
    "tensor_of_long_storage": lambda T: T.tensor(T.LongStorage([1, 2])),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(_MESSAGES))
def test_error_messages_match_pytorch(name):
    same_error(_MESSAGES[name])


@pytest.mark.filterwarnings("ignore")
def test_legacy_storage_classes():
    """``torch.FloatStorage(2)`` and its kin make TypedStorages of their dtype (of a size, or holding data), which
    ``torch.tensor`` reads."""
    same(lambda T: (T.FloatStorage(3).size(), T.FloatStorage().size(), T.LongStorage([1, 2]).tolist(),
                    T.BoolStorage([1, 0]).tolist(), T.DoubleStorage([0.5]).dtype, T.HalfStorage(2).element_size(),
                    isinstance(T.FloatStorage(2), T.FloatStorage), isinstance(T.FloatStorage(2), T.LongStorage),
                    isinstance(T.FloatStorage(2), T.TypedStorage), type(T.FloatStorage(2)).__name__,
                    str(T.FloatStorage([1, 2])), T.tensor(T.FloatStorage([1.5, 2])),
                    T.tensor(T.DoubleStorage([1.5]), dtype=T.float64), T.tensor(T.arange(3.0).storage())))
