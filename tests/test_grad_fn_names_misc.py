"""``grad_fn`` names PyTorch shows for calls a survey of its OpInfo samples found torchish naming otherwise, with
the values and gradients alongside: the inverse FFTs of a real input (PyTorch conjugates a forward real-to-complex
transform: ConjBackward0, and ihfft2/ihfftn a physical conjugate then a complex inverse: FftC2CBackward0),
``special.ndtr`` (its composite's mul.Scalar: MulBackward1), ``to_sparse`` (ToSparseBackward1 / ToSparseBackward0 by
overload), ``squeeze_copy`` (SqueezeBackward{0,1,2}_copy by overload), ``torch.fill`` (FillBackward0 / FillBackward1,
not fill_'s 2 / 3) and ``gather`` with an empty index (GatherBackward0)."""
import warnings

import numpy as np
import pytest

from oracle import run_both, same_error, tol

torch = pytest.importorskip("torch")


def _chain(t):
    """The grad_fn names from ``t`` down its first inputs to the leaf."""
    names, node = [], t.grad_fn
    while node is not None:
        names.append(type(node).__name__)
        node = next((n for n, _ in node.next_functions if n is not None), None)
    return names


def _result(lib, out, x):
    """The chain, conj flag, values and ``x``'s gradient of a weighted sum of ``out`` (real and imaginary parts)."""
    w = lib.arange(1., out.numel() + 1).reshape(out.shape)
    loss = (out.real * w).sum() + (out.imag * w * 0.5).sum() if out.is_complex() else (out * w).sum()
    loss.backward()
    return _chain(out), out.is_conj(), _np(out.detach().resolve_conj()), _np(x.grad)


def _np(t):
    """``t`` as a float64 (complex128) numpy array (bfloat16 through float32, which numpy lacks)."""
    t = t.float() if str(t.dtype).endswith("bfloat16") else t
    return t.numpy().astype(np.complex128 if t.is_complex() else np.float64)


_FFT = {
    "ifft": lambda F, x: F.ifft(x),
    "ifft n norm": lambda F, x: F.ifft(x, n=6, norm="ortho"),
    "ifft dim0": lambda F, x: F.ifft(x, dim=0),
    "ihfft": lambda F, x: F.ihfft(x),
    "ihfft forward": lambda F, x: F.ihfft(x, n=3, norm="forward"),
    "ihfft2": lambda F, x: F.ihfft2(x),
    "ihfftn": lambda F, x: F.ihfftn(x),
    "ihfftn one dim": lambda F, x: F.ihfftn(x, dim=(0,)),
    "ihfftn s": lambda F, x: F.ihfftn(x, s=(3, 2)),
    "ifft2": lambda F, x: F.ifft2(x),
    "fftn s (trim and pad)": lambda F, x: F.fftn(x, s=(3, 2)),
    "fft": lambda F, x: F.fft(x),
    "rfft": lambda F, x: F.rfft(x),
}


@pytest.mark.parametrize("case", list(_FFT))
def test_inverse_ffts_of_a_real_input(case):
    def fn(lib):
        x = lib.tensor([[1., 2., 0.5, -1.], [3., -2., 0., 4.]], requires_grad=True)
        return _result(lib, _FFT[case](lib.fft, x), x)
    ref, got = run_both(fn)
    assert got[:2] == ref[:2]
    for r, g in zip(ref[2:], got[2:]):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


def test_inverse_fft_into_out():
    def fn(lib):
        x = lib.tensor([1., 2., 0.5, -1.])
        out = lib.empty(4, dtype=lib.complex64)
        res = lib.fft.ifft(x, out=out)
        return res is out, out.is_conj(), out.numpy()
    ref, got = run_both(fn)
    assert got[:2] == ref[:2]
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_ndtr(dtype):
    def fn(lib):
        x = lib.tensor([1., -2., -7.5, 0.3], dtype=getattr(lib, dtype), requires_grad=True)
        return _result(lib, lib.special.ndtr(x), x)
    ref, got = run_both(fn)
    assert got[0] == ref[0]
    np.testing.assert_array_equal(got[2], ref[2])
    # (the gradient: float64's last bit differs in the erf chain's backward, as before these names changed)
    np.testing.assert_allclose(got[3], ref[3], **tol(dtype))


_TO_SPARSE = {
    "to_sparse()": lambda lib, x: x.to_sparse(),
    "to_sparse(1)": lambda lib, x: x.to_sparse(1),
    "to_sparse(2)": lambda lib, x: x.to_sparse(2),
    "to_sparse(sparse_dim=1)": lambda lib, x: x.to_sparse(sparse_dim=1),
    "to_sparse(layout=sparse_coo)": lambda lib, x: x.to_sparse(layout=lib.sparse_coo),
    "to_sparse(layout=sparse_csr)": lambda lib, x: x.to_sparse(layout=lib.sparse_csr),
    "to_sparse_csr()": lambda lib, x: x.to_sparse_csr(),
    "to_sparse().coalesce()": lambda lib, x: x.to_sparse().coalesce(),
}


@pytest.mark.parametrize("case", list(_TO_SPARSE))
def test_to_sparse(case):
    def fn(lib):
        x = lib.tensor([[1., 0.], [0., 0.], [2., 3.]], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = _TO_SPARSE[case](lib, x)
            (out.to_dense() * lib.arange(1., 7.).reshape(3, 2)).sum().backward()
        return type(out.grad_fn).__name__, str(out.layout), x.grad.tolist()
    ref, got = run_both(fn)
    assert got == ref


def test_coalesce_of_an_uncoalesced_tensor():
    def fn(lib):
        v = lib.tensor([1., 2., 3.], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.sparse_coo_tensor([[1, 0, 1]], v, (3,)).coalesce()
        return type(s.grad_fn).__name__, s.indices().tolist(), s.values().tolist()
    ref, got = run_both(fn)
    assert got == ref


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2), [0]])
def test_squeeze_copy(dim):
    def fn(lib):
        x = lib.tensor([[[1., 2.]], [[3., 4.]]]).reshape(1, 2, 1, 2).requires_grad_()
        out = lib.squeeze_copy(x) if dim is None else lib.squeeze_copy(x, dim)
        (out * lib.arange(1., 5.).reshape(out.shape)).sum().backward()
        return type(out.grad_fn).__name__, tuple(out.shape), out.tolist(), x.grad.tolist()
    ref, got = run_both(fn)
    assert got == ref


@pytest.mark.parametrize("value", [True, False, 1, 1.5, "tensor", "tensor requiring grad"])
def test_torch_fill(value):
    def fn(lib):
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        v = value
        if isinstance(value, str):
            v = lib.tensor(2.5, requires_grad=value.endswith("grad"))
        out = lib.fill(x * 2, v)
        (out * lib.tensor([1., 2., 3.])).sum().backward()
        grads = [x.grad.tolist(), v.grad.tolist() if isinstance(v, lib.Tensor) and v.requires_grad else None]
        return _chain(out), out.tolist(), out.dtype == lib.float32, grads
    ref, got = run_both(fn)
    assert got == ref


def test_torch_fill_errors():
    same_error(lambda lib: lib.fill(lib.ones(2), "a"))
    same_error(lambda lib: lib.fill(lib.ones(2), lib.ones(2)))
    same_error(lambda lib: lib.fill(lib.ones(2, dtype=lib.int8), 300))


@pytest.mark.parametrize("case", ["0-d input", "float index", "fewer dims", "more dims", "int32", "int16"])
def test_gather_with_an_empty_index(case):
    def fn(lib):
        x = lib.tensor(2.) if case == "0-d input" else lib.tensor([[1., 0.], [2., 3.]])
        x.requires_grad_()
        index = {"0-d input": lib.zeros(0, dtype=lib.long), "float index": lib.zeros(2, 0),
                 "fewer dims": lib.zeros(0, dtype=lib.long), "more dims": lib.zeros(0, 1, 1, dtype=lib.long),
                 "int32": lib.zeros(0, 2, dtype=lib.int32), "int16": lib.zeros(0, 2, dtype=lib.int16)}[case]
        out = lib.gather(x, 0, index)
        out.sum().backward()
        return _chain(out), tuple(out.shape), out._is_view(), x.grad.tolist()
    ref, got = run_both(fn)
    assert got == ref
