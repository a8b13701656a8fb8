"""Functions PyTorch removed after deprecating them in 1.9 and keeps as stubs that raise, with the messages that
tell a user what to call instead (``torch.eig``, ``torch.symeig``, ``torch.lstsq``, ``torch.solve`` and their
Tensor methods): old scripts meet PyTorch's RuntimeError here too, not an AttributeError."""
from __future__ import annotations

_GONE = "This function was deprecated since version 1.9 and is now removed. "
_MESSAGES = {
    "eig": "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
           "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
           "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
           "L_complex, V_complex = torch.linalg.eig(A)",
    "symeig": "The default behavior has changed from using the upper triangular portion of the matrix by default to "
              "using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
              "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, "
              "eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    "lstsq": "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
             "arguments and does not return the QR decomposition in the returned tuple (although it returns other "
             "information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
             "The returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns "
             "of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
             "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = "
             "torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution",
    "solve": "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments "
             "reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, which "
             "can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
             "replaced with:\nX = torch.linalg.solve(A, B)",
}


def _removed(name):
    def gone(*args, **kwargs):
        raise RuntimeError(_GONE + _MESSAGES[name])
    gone.__name__ = name
    gone.__doc__ = f"Removed from PyTorch: raises its RuntimeError. {_MESSAGES[name].splitlines()[0]}"
    return gone


eig, symeig, lstsq, solve = (_removed(n) for n in ("eig", "symeig", "lstsq", "solve"))
METHODS = {"eig": eig, "symeig": symeig, "lstsq": lstsq, "solve": solve}
