"""Third-party programs, round 69 (helper 186): numerical linear algebra and signal processing as scientific and
robotics code writes it in pure PyTorch (orthogonal Procrustes and Kabsch alignment by SVD with the det-sign
reflection fix; ``linalg.lstsq`` on tall and wide systems with its ``solution``/``residuals``/``rank``/
``singular_values`` fields per driver; ``pinv`` with ``rtol``/``hermitian``; rotations from so(3) by ``matrix_exp``
against Rodrigues; ``lu_factor``/``lu_solve``/``lu_unpack``, ``solve_triangular`` with ``left=False`` and
``unitriangular``, ``cholesky_ex``/``cholesky_inverse``/``cholesky_solve``; ``eigh`` with ``UPLO``, ``eigvalsh``,
``eig``/``eigvals`` of non-symmetric matrices; ``slogdet``, ``matrix_rank``, ``matrix_norm`` orders, ``cond``,
``householder_product`` with ``geqrf``; a float64 Kalman filter; Gauss-Newton and Levenberg-Marquardt steps through
``autograd.functional.jacobian``; ``stft``/``istft`` round trips with windows and their options, FFT convolution by
``rfft``/``irfft`` against ``conv1d``, ``fftshift``/``fftfreq``/``rfftfreq``, ``fft2``/``ifftn`` with ``norm=`` and a
grouped ``conv1d`` filter bank; jacobians, hessians and ``vmap`` through linalg ops), re-implemented here, run with torch 2.13 and torchish and compared by
``assert_script_matches`` (tests/oracle.py). Only well-defined quantities are compared: reconstructions, projectors
and sorted eigenvalues, never singular-vector signs or eigenvector phases.
"""
import math

import pytest

from oracle import formula_data, outcome as _family, script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _mat(torch, *shape, seed=0, dtype=None):
    """Deterministic full-rank matrices: ``sin`` of a quadratic in the flat index, computed in float64 in both
    libraries and cast (``formula_data``'s ``cos(a + k d)`` rows span only two dimensions: every matrix it gives has
    rank <= 2, which makes singular vectors, eigenvectors and Householder reflectors non-unique)."""
    n = math.prod(shape)
    i = torch.arange(n, dtype=torch.float64)
    return torch.sin(i * i * 0.37 + i * 1.1 + seed).reshape(shape).to(dtype or torch.get_default_dtype())


def _skew(torch, w):
    """so(3) hat map of a batch of 3-vectors, as robotics code writes it (stack of zeros and components)."""
    z = torch.zeros_like(w[..., 0])
    return torch.stack([torch.stack([z, -w[..., 2], w[..., 1]], -1),
                        torch.stack([w[..., 2], z, -w[..., 0]], -1),
                        torch.stack([-w[..., 1], w[..., 0], z], -1)], -2)


def case_kabsch_procrustes_alignment(lib):
    """Kabsch alignment of point clouds (batched, float32 and float64): centre, ``H = P^T Q``, ``svd``, the
    reflection fix ``d = sign(det(V U^T))`` in a diagonal, ``R = V D U^T``, translation and RMSD; orthogonal
    Procrustes by ``linalg.svd(full_matrices=False)``; a reflected target whose fix flips the sign; gradients of the
    RMSD wrt the source points through svd (a well-separated spectrum)."""
    torch = lib
    outs = []
    for dt in (torch.float32, torch.float64):
        P = _mat(torch, 2, 7, 3, seed=1, dtype=dt) * torch.tensor([2.0, 1.0, 0.5], dtype=dt)
        w = torch.tensor([[0.3, -0.5, 0.8], [1.1, 0.2, -0.4]], dtype=dt)
        Rtrue = torch.linalg.matrix_exp(_skew(torch, w))
        t = torch.tensor([[0.5, -1.0, 2.0], [0.0, 0.3, -0.2]], dtype=dt)
        Q = P @ Rtrue.transpose(-1, -2) + t[:, None, :] + 0.01 * _mat(torch, 2, 7, 3, seed=5, dtype=dt)
        P = P.clone().requires_grad_(True)
        pc, qc = P.mean(-2, keepdim=True), Q.mean(-2, keepdim=True)
        H = (P - pc).transpose(-1, -2) @ (Q - qc)
        U, S, Vh = torch.linalg.svd(H)
        V = Vh.transpose(-1, -2)
        d = torch.sign(torch.linalg.det(V @ U.transpose(-1, -2)))
        D = torch.diag_embed(torch.stack([torch.ones_like(d), torch.ones_like(d), d], -1))
        R = V @ D @ U.transpose(-1, -2)
        tt = qc.squeeze(-2) - (R @ pc.transpose(-1, -2)).squeeze(-1)
        aligned = P @ R.transpose(-1, -2) + tt[:, None, :]
        rmsd = ((aligned - Q) ** 2).sum(-1).mean(-1).sqrt()
        g, = torch.autograd.grad(rmsd.sum(), P)
        # reflected target: without the fix the det is -1
        Qr = Q * torch.tensor([1.0, 1.0, -1.0], dtype=dt)
        Hr = (P.detach() - pc.detach()).transpose(-1, -2) @ (Qr - Qr.mean(-2, keepdim=True))
        Ur, Sr, Vhr = torch.linalg.svd(Hr)
        raw = Vhr.transpose(-1, -2) @ Ur.transpose(-1, -2)
        # orthogonal Procrustes: argmin ||A Omega - B||
        A, B = P.detach()[0], Q[0]
        u, s, vh = torch.linalg.svd(A.T @ B, full_matrices=False)
        omega = u @ vh
        outs.append((R, Rtrue, tt, rmsd, g, S, torch.linalg.det(R), torch.linalg.det(raw).round(), d,
                     (omega.T @ omega - torch.eye(3, dtype=dt)).abs().max() < 1e-4, s, torch.dist(A @ omega, B),
                     R.dtype, S.dtype))
    return outs


def case_lstsq_fields_and_pinv(lib):
    """``torch.linalg.lstsq`` as regression code uses it: the default driver on CPU (gelsy) for tall, wide and
    batched systems (``solution`` shape, empty ``residuals`` for gelsy, ``rank``), ``driver="gelsd"``/``"gelss"``
    with ``residuals`` and ``singular_values``, ``"gels"`` on a full-rank tall system (residuals filled), a rank
    deficient design with ``rcond``, gradients through the solution; ``pinv`` with ``rtol``, ``atol`` and
    ``hermitian=True``, the pinv identities, and ``lstsq`` against ``pinv @ b``."""
    torch = lib
    A = _mat(torch, 6, 3, seed=2, dtype=torch.float64) + torch.eye(6, 3, dtype=torch.float64)
    b = _mat(torch, 6, 2, seed=3, dtype=torch.float64)
    res = {}
    for drv in (None, "gelsy", "gelsd", "gelss", "gels"):
        r = torch.linalg.lstsq(A, b) if drv is None else torch.linalg.lstsq(A, b, driver=drv)
        res[str(drv)] = (r.solution, r.residuals, r.rank, r.singular_values, r[0].shape, r.residuals.shape,
                         r.singular_values.shape, r.rank.dtype if r.rank.numel() else r.rank.shape)
    Aw = A.T[:, :5].contiguous()  # 3 x 5 (wide)
    bw = b[:3]
    wide = {}
    for drv in ("gelsy", "gelsd", "gelss", "gels"):
        r = torch.linalg.lstsq(Aw, bw, driver=drv)
        wide[drv] = (r.solution, r.residuals.shape, r.rank, r.singular_values)
    # rank-deficient: last column = sum of the first two
    Ad = torch.cat([A[:, :2], A[:, :1] + A[:, 1:2]], 1)
    deficient = [torch.linalg.lstsq(Ad, b, rcond=1e-10, driver=drv) for drv in ("gelsy", "gelsd", "gelss")]
    deficient = [(Ad @ r.solution, r.rank, r.singular_values) for r in deficient]
    # batched + broadcasting b
    Ab = torch.stack([A, A * 2 + 0.1])
    rb = torch.linalg.lstsq(Ab, b.expand(2, 6, 2))
    no_bcast = _family(lambda: torch.linalg.lstsq(Ab, b))
    rb32 = torch.linalg.lstsq(Ab.float(), b.float().expand(2, 6, 2), driver="gelsd")
    # gradient through the solution
    Ag = A.clone().requires_grad_(True)
    bg = b.clone().requires_grad_(True)
    x = torch.linalg.lstsq(Ag, bg).solution
    gA, gb = torch.autograd.grad((x ** 2).sum(), (Ag, bg))
    # pinv
    P = torch.linalg.pinv(A)
    Pd = torch.linalg.pinv(Ad)
    Pr = torch.linalg.pinv(Ad, rtol=1e-6)
    Pa = torch.linalg.pinv(Ad, atol=1e-3)
    S = A.T @ A
    Ph = torch.linalg.pinv(S, hermitian=True)
    ident = ((A @ P @ A - A).abs().max() < 1e-10, (P @ A - torch.eye(3, dtype=A.dtype)).abs().max() < 1e-10,
             (Ph @ S - torch.eye(3, dtype=A.dtype)).abs().max() < 1e-9)
    vs = torch.dist(P @ b, res["None"][0])
    # per-matrix tolerances (PyTorch's Tensor overload): one atol/rtol per matrix of a batch, broadcast
    Bm = torch.stack([A.T @ A, Ad.T @ Ad, torch.diag(torch.tensor([5.0, 0.5, 0.05], dtype=A.dtype))])
    per = (torch.linalg.matrix_rank(Bm, atol=torch.tensor([0.1, 1e-8, 0.6], dtype=A.dtype)),
           torch.linalg.matrix_rank(Bm, rtol=torch.tensor([0.5, 0.0, 0.05], dtype=A.dtype), hermitian=True),
           torch.linalg.pinv(Bm, atol=torch.tensor([0.0, 1e-8, 0.6], dtype=A.dtype)),
           torch.linalg.pinv(Bm, rtol=torch.tensor([1e-3, 1e-8, 0.5], dtype=A.dtype), hermitian=True),
           _family(lambda: torch.linalg.pinv(Bm, atol=torch.tensor([0.0, 1e-8, 0.6]), rtol=0.5)))
    return res, wide, deficient, rb.solution, rb.rank, no_bcast, rb32.solution, rb32.singular_values, gA, gb, P, Pr, Pa, \
        Ad @ Pd @ Ad, Ph, ident, vs < 1e-10, A.dtype, per


def case_so3_exp_rodrigues(lib):
    """Rotations from axis-angle: Rodrigues' formula ``I + sin(t)/t K + (1 - cos t)/t^2 K^2`` against
    ``torch.linalg.matrix_exp`` of the hat matrix (batched, float32 and float64, including a near-zero angle through
    a Taylor branch by ``torch.where``), orthogonality and det checks, the log map back by ``acos`` of the trace,
    composition, ``matrix_exp`` of a general (non-skew) matrix and of a 1x1, the gradient of a rotated point wrt the
    axis-angle through matrix_exp, and ``matrix_power``."""
    torch = lib
    outs = []
    for dt in (torch.float32, torch.float64):
        w = torch.tensor([[0.1, 0.2, -0.3], [1.0, -2.0, 0.5], [1e-9, 0.0, 2e-9], [0.0, 0.0, 3.0]], dtype=dt)
        theta = w.norm(dim=-1, keepdim=True)
        K = _skew(torch, w)
        small = theta < 1e-6
        th = torch.where(small, torch.ones_like(theta), theta)
        A = torch.where(small, 1 - theta ** 2 / 6, torch.sin(th) / th)[..., None]
        B = torch.where(small, 0.5 - theta ** 2 / 24, (1 - torch.cos(th)) / th ** 2)[..., None]
        R_rod = torch.eye(3, dtype=dt) + A * K + B * (K @ K)
        R_exp = torch.linalg.matrix_exp(K)
        R_exp2 = torch.matrix_exp(K)
        ortho = (R_exp.transpose(-1, -2) @ R_exp - torch.eye(3, dtype=dt)).abs().amax((-1, -2))
        cos_t = ((R_exp.diagonal(dim1=-2, dim2=-1).sum(-1) - 1) / 2).clamp(-1, 1)
        ang = torch.acos(cos_t[:2])
        comp = R_exp[0] @ R_exp[1]
        M = _mat(torch, 2, 4, 4, seed=4, dtype=dt)
        wg = w[:2].clone().requires_grad_(True)
        p = torch.tensor([1.0, 2.0, 3.0], dtype=dt)
        rp = torch.linalg.matrix_exp(_skew(torch, wg)) @ p
        g, = torch.autograd.grad((rp * torch.tensor([1.0, -1.0, 0.5], dtype=dt)).sum(), wg)
        outs.append((R_rod, R_exp, R_exp2, ortho.amax() < 1e-5, torch.linalg.det(R_exp), ang, comp,
                     torch.linalg.matrix_exp(M), torch.linalg.matrix_exp(torch.tensor([[0.7]], dtype=dt)), rp, g,
                     torch.linalg.matrix_power(R_exp[1], 3), torch.linalg.matrix_power(M[0] + 3 * torch.eye(4, dtype=dt), -2)))
    return outs


def case_lu_triangular_cholesky(lib):
    """Dense solves as circuit and FEM code writes them: ``lu_factor`` then ``lu_solve`` (also ``adjoint=True`` and
    ``left=False``), ``lu_unpack`` reconstructing ``P @ L @ U``, ``linalg.lu``, ``lu_factor_ex`` info,
    ``solve_triangular`` with ``upper=``, ``left=False`` and ``unitriangular=True``, ``cholesky_ex`` of SPD and of
    indefinite matrices (``info``), ``cholesky(upper=True)``, ``cholesky_solve``/``cholesky_inverse`` (lower and
    upper), and gradients through ``lu_solve`` and ``cholesky``."""
    torch = lib
    A = _mat(torch, 2, 4, 4, seed=6, dtype=torch.float64) + 3 * torch.eye(4, dtype=torch.float64)
    B = _mat(torch, 2, 4, 3, seed=7, dtype=torch.float64)
    LU, piv = torch.linalg.lu_factor(A)
    x = torch.linalg.lu_solve(LU, piv, B)
    xa = torch.linalg.lu_solve(LU, piv, B, adjoint=True)
    Bt = B.transpose(-1, -2)
    xl = torch.linalg.lu_solve(LU, piv, Bt, left=False)
    Pm, L, U = torch.lu_unpack(LU, piv)
    P2, L2, U2 = torch.linalg.lu(A)
    LUe, pive, info = torch.linalg.lu_factor_ex(A)
    recon = (Pm @ L @ U - A).abs().max() < 1e-12
    T = torch.triu(A) + torch.eye(4, dtype=A.dtype)
    Lt = torch.tril(A) + torch.eye(4, dtype=A.dtype)
    st = (torch.linalg.solve_triangular(T, B, upper=True),
          torch.linalg.solve_triangular(Lt, B, upper=False),
          torch.linalg.solve_triangular(T, Bt, upper=True, left=False),
          torch.linalg.solve_triangular(Lt, B, upper=False, unitriangular=True),
          torch.linalg.solve_triangular(T, Bt, upper=True, left=False, unitriangular=True))
    S = A @ A.transpose(-1, -2) + 0.5 * torch.eye(4, dtype=A.dtype)
    Lc, infoc = torch.linalg.cholesky_ex(S)
    bad = S.clone()
    bad[1, 2, 2] = -50.0
    Lb, infob = torch.linalg.cholesky_ex(bad)
    Uc = torch.linalg.cholesky(S, upper=True)
    cs = (torch.cholesky_solve(B, Lc), torch.cholesky_solve(B, Uc, upper=True), torch.cholesky_inverse(Lc[0]),
          torch.cholesky_inverse(Uc[1], upper=True), torch.linalg.inv(S[0]))
    err = _family(lambda: torch.linalg.cholesky(bad))
    Ag = A.clone().requires_grad_(True)
    Sg = S.clone().requires_grad_(True)
    LUg, pivg = torch.linalg.lu_factor(Ag)
    xg = torch.linalg.lu_solve(LUg, pivg, B)
    Lg = torch.linalg.cholesky(Sg)
    gA, gS = torch.autograd.grad(xg.sum() + (Lg * torch.arange(16.0, dtype=A.dtype).view(4, 4)).sum(), (Ag, Sg))
    return (x, xa, xl, LU, piv, piv.dtype, Pm, L, U, P2, L2, U2, LUe, pive, info, recon, st, Lc, infoc, infob,
            Lb[0], Uc, cs, err, gA, gS)


def case_eigen_decompositions(lib):
    """Eigen problems: ``eigh`` with ``UPLO="L"``/``"U"`` of a matrix with garbage in the other triangle
    (eigenvalues and the projector ``V diag(f(w)) V^T`` as a matrix function), ``eigvalsh``, a gradient of a
    spectral loss through eigh, ``eig``/``eigvals`` of a non-symmetric real matrix (complex dtypes, eigenvalues
    sorted by real then imaginary part, ``A V = V diag(w)`` residual), a real-eigenvalue companion matrix (polynomial
    roots), and covariance PCA explained-variance ratios."""
    torch = lib
    M = _mat(torch, 5, 5, seed=8, dtype=torch.float64)
    Sfull = M @ M.T + torch.eye(5, dtype=torch.float64)
    garbage = torch.triu(torch.full((5, 5), 7.0, dtype=torch.float64), 1)
    SL = torch.tril(Sfull) + garbage
    SU = torch.triu(Sfull) + garbage.T
    wL, VL = torch.linalg.eigh(SL, UPLO="L")
    wU, VU = torch.linalg.eigh(SU, UPLO="U")
    sqrtm = VL @ torch.diag(wL.sqrt()) @ VL.T
    proj = VU[:, -2:] @ VU[:, -2:].T
    ev = (torch.linalg.eigvalsh(SL), torch.linalg.eigvalsh(SU, UPLO="U"), torch.linalg.eigvalsh(Sfull.float()))
    Sg = Sfull.clone().requires_grad_(True)
    w, V = torch.linalg.eigh(Sg)
    loss = w.log().sum() + (w[-1] - w[0])
    g, = torch.autograd.grad(loss, Sg)
    N = _mat(torch, 4, 4, seed=9, dtype=torch.float64) + torch.diag(torch.tensor([3.0, 1.0, -2.0, 0.5],
                                                                                        dtype=torch.float64))
    lam, vec = torch.linalg.eig(N)
    lam_v = torch.linalg.eigvals(N)
    key = lam.real * 1000 + lam.imag

    def srt(z):
        k = (z.real * 1000 + z.imag)
        return z[torch.argsort(k)]
    resid = (N.to(lam.dtype) @ vec - vec * lam).abs().max() < 1e-10
    coeffs = torch.tensor([-6.0, 11.0, -6.0], dtype=torch.float64)  # x^3 - 6x^2 + 11x - 6
    comp = torch.diag(torch.ones(2, dtype=torch.float64), -1)
    comp[:, -1] = -coeffs
    roots = torch.linalg.eigvals(comp)
    N32 = N.float()
    lam32 = torch.linalg.eigvals(N32)
    X = _mat(torch, 20, 3, seed=10) * torch.tensor([3.0, 1.0, 0.2])
    Xc = X - X.mean(0)
    C = Xc.T @ Xc / (X.shape[0] - 1)
    evals = torch.linalg.eigvalsh(C).flip(0)
    ratio = evals / evals.sum()
    return (wL, wU, sqrtm, proj, ev, g, srt(lam), srt(lam_v), lam.dtype, vec.dtype, resid, srt(roots).real,
            roots.imag.abs().max() < 1e-8, srt(lam32), lam32.dtype, key.dtype, C, ratio, torch.cov(X.T))


def case_det_rank_norms_cond(lib):
    """Scalar matrix diagnostics: ``slogdet`` (sign and logabsdet of a negative-det, a singular and a batched
    matrix; complex sign), ``det`` and its gradient, ``matrix_rank`` with ``atol``/``rtol``/``hermitian``,
    ``matrix_norm`` with ``ord`` in fro/nuc/1/-1/2/-2/inf/-inf, ``vector_norm`` orders, ``cond`` for p in None/2/
    -2/fro/nuc/1/inf, and ``householder_product`` of ``geqrf`` reproducing ``Q`` of ``linalg.qr`` (``Q R == A``,
    ``Q^T Q == I``) plus ``ormqr``."""
    torch = lib
    A = _mat(torch, 4, 4, seed=11, dtype=torch.float64) + torch.diag(torch.tensor(
        [2.0, -1.0, 1.5, 0.7], dtype=torch.float64))
    sing = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=torch.float64)
    batch = torch.stack([A, -A, A @ A])
    sl = (torch.linalg.slogdet(A), torch.linalg.slogdet(sing), torch.linalg.slogdet(batch), torch.slogdet(A),
          torch.logdet(A @ A.T), torch.linalg.slogdet(A.to(torch.complex128) * (1 + 1j)))
    Ag = A.clone().requires_grad_(True)
    d = torch.linalg.det(Ag)
    gd, = torch.autograd.grad(d, Ag)
    sA = A[:3, :3].clone().requires_grad_(True)
    sign, logabs = torch.linalg.slogdet(sA)
    gl, = torch.autograd.grad(logabs, sA)
    rk = (torch.linalg.matrix_rank(A), torch.linalg.matrix_rank(sing), torch.linalg.matrix_rank(sing, atol=1.0),
          torch.linalg.matrix_rank(A, rtol=0.5), torch.linalg.matrix_rank(A @ A.T, hermitian=True),
          torch.linalg.matrix_rank(batch.float()), torch.linalg.matrix_rank(sing, tol=1e-3))
    norms = [torch.linalg.matrix_norm(A, ord=o) for o in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)]
    norms.append(torch.linalg.matrix_norm(batch.float(), ord=2, keepdim=True))
    norms.append(torch.linalg.norm(A, ord="nuc"))
    v = A[0]
    vn = [torch.linalg.vector_norm(v, ord=o) for o in (0, 1, 2, 3.5, math.inf, -math.inf)]
    conds = [torch.linalg.cond(A, p=p) for p in (None, 2, -2, "fro", "nuc", 1, math.inf)]
    conds.append(torch.linalg.cond(batch.float()))
    T = _mat(torch, 5, 3, seed=12, dtype=torch.float64)
    a, tau = torch.geqrf(T)
    Q = torch.linalg.householder_product(a, tau)
    R = torch.triu(a[:3])
    Q2, R2 = torch.linalg.qr(T)
    Qc = torch.linalg.qr(T, mode="complete").Q
    y = _mat(torch, 5, 2, seed=13, dtype=torch.float64)
    om = torch.ormqr(a, tau, y, transpose=True)
    checks = ((Q @ R - T).abs().max() < 1e-12, (Q.T @ Q - torch.eye(3, dtype=T.dtype)).abs().max() < 1e-12,
              (Q @ Q.T - Q2 @ Q2.T).abs().max() < 1e-12, (R.abs() - R2.abs()).abs().max() < 1e-12)
    return (sl, gd, gl, sign, logabs, rk, [r.dtype for r in rk], norms, vn, conds, Q.shape, Qc.shape, checks,
            om.abs(), (Qc.T @ y).abs())


def case_kalman_gauss_newton_lm(lib):
    """Estimation loops in float64: a constant-velocity Kalman filter (predict ``F P F^T + Q``, update with ``S``,
    the gain by ``linalg.solve`` on the transposed system, the Joseph-form covariance update) over a short
    measurement sequence; Gauss-Newton and Levenberg-Marquardt on an exponential fit with the Jacobian from
    ``torch.autograd.functional.jacobian`` and the step from ``linalg.solve`` / ``lstsq`` (damping adapted on the
    cost), and a ``vectorize=True`` jacobian."""
    torch = lib
    dt = 0.1
    F = torch.tensor([[1.0, dt], [0.0, 1.0]], dtype=torch.float64)
    H = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    Q = 0.01 * torch.tensor([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]], dtype=torch.float64)
    R = torch.tensor([[0.25]], dtype=torch.float64)
    x = torch.zeros(2, 1, dtype=torch.float64)
    P = torch.eye(2, dtype=torch.float64)
    zs = torch.sin(torch.arange(12, dtype=torch.float64) * 0.3) + 0.1 * torch.cos(torch.arange(12.0) * 2.1)
    xs, Ps, innov = [], [], []
    I2 = torch.eye(2, dtype=torch.float64)
    for z in zs:
        x = F @ x
        P = F @ P @ F.T + Q
        y = z.view(1, 1) - H @ x
        S = H @ P @ H.T + R
        K = torch.linalg.solve(S.T, (P @ H.T).T).T
        x = x + K @ y
        IKH = I2 - K @ H
        P = IKH @ P @ IKH.T + K @ R @ K.T
        xs.append(x.squeeze(-1))
        Ps.append(P.diagonal())
        innov.append(y.squeeze())
    t = torch.linspace(0, 2, 15, dtype=torch.float64)
    obs = 2.0 * torch.exp(-1.3 * t) + 0.3 + 0.01 * torch.sin(7 * t)

    def resid(p):
        return p[0] * torch.exp(-p[1] * t) + p[2] - obs

    p = torch.tensor([1.0, 0.5, 0.0], dtype=torch.float64)
    gn = []
    for _ in range(4):
        J = torch.autograd.functional.jacobian(resid, p)
        r = resid(p)
        p = p - torch.linalg.solve(J.T @ J, J.T @ r)
        gn.append((p.clone(), (r ** 2).sum()))
    p = torch.tensor([1.0, 0.5, 0.0], dtype=torch.float64)
    lam = 1e-2
    lm = []
    for _ in range(5):
        J = torch.autograd.functional.jacobian(resid, p)
        r = resid(p)
        A = J.T @ J
        step = torch.linalg.solve(A + lam * torch.diag(A.diagonal()), -J.T @ r)
        cost_new = (resid(p + step) ** 2).sum()
        if cost_new < (r ** 2).sum():
            p, lam = p + step, lam / 10
        else:
            lam = lam * 10
        lm.append((p.clone(), lam, cost_new))
    Jv = torch.autograd.functional.jacobian(resid, p, vectorize=True)
    step_ls = torch.linalg.lstsq(Jv, -resid(p).unsqueeze(-1)).solution
    return torch.stack(xs), torch.stack(Ps), torch.stack(innov), gn, lm, Jv, step_ls


def case_stft_istft_round_trips(lib):
    """Spectrograms as torchaudio/librosa-style code writes them: ``stft`` with ``hann_window`` (periodic and
    symmetric) and ``hamming_window``, ``center=True`` with ``pad_mode`` reflect/constant, ``center=False``,
    ``onesided`` false on a real input, ``normalized=True``, ``win_length < n_fft``, the magnitude and power
    spectrogram, ``istft`` round trips with ``length=``, batched input, a complex input, float64, and gradients of a
    spectral loss back to the waveform."""
    torch = lib
    n = 200
    tt = torch.arange(n, dtype=torch.float32)
    x = torch.sin(tt * 0.21) + 0.5 * torch.sin(tt * 0.83 + 0.4) + 0.05 * torch.cos(tt * 2.7)
    win = torch.hann_window(64)
    spec = torch.stft(x, 64, hop_length=16, window=win, return_complex=True)
    back = torch.istft(spec, 64, hop_length=16, window=win, length=n)
    outs = [spec, back, spec.abs(), spec.abs() ** 2, spec.shape, spec.dtype]
    sym = torch.hann_window(64, periodic=False)
    ham = torch.hamming_window(48, periodic=True)
    hamf = torch.hamming_window(48, periodic=False, alpha=0.5, beta=0.5)
    outs += [sym, ham, hamf]
    s2 = torch.stft(x, 64, hop_length=16, window=sym, center=True, pad_mode="constant", return_complex=True)
    s3 = torch.stft(x, 64, hop_length=32, window=win, center=False, return_complex=True)
    s4 = torch.stft(x, 64, hop_length=16, window=win, onesided=False, return_complex=True)
    s5 = torch.stft(x, 64, hop_length=16, window=win, normalized=True, return_complex=True)
    s6 = torch.stft(x, 64, hop_length=12, win_length=48, window=ham, return_complex=True)
    b5 = torch.istft(s5, 64, hop_length=16, window=win, normalized=True, length=n)
    b6 = torch.istft(s6, 64, hop_length=12, win_length=48, window=ham, length=n)
    b4 = torch.istft(s4, 64, hop_length=16, window=win, onesided=False, length=n)
    nola = _family(lambda: torch.istft(s3, 64, hop_length=32, window=win, center=False))
    hw = torch.hamming_window(64)
    b3 = torch.istft(torch.stft(x, 64, hop_length=32, window=hw, center=False, return_complex=True), 64,
                     hop_length=32, window=hw, center=False)
    outs += [s2, s3, s4, s5, s6, b5, b6, b4, nola, b3, b3.shape, (b6 - x).abs().max() < 1e-4]
    xb = torch.stack([x, x.flip(0)])
    sb = torch.stft(xb, 32, hop_length=8, window=torch.hann_window(32), return_complex=True)
    bb = torch.istft(sb, 32, hop_length=8, window=torch.hann_window(32), length=n)
    xc = torch.complex(x, x.roll(3))
    sc = torch.stft(xc, 32, hop_length=8, window=torch.hann_window(32), return_complex=True)
    bc = torch.istft(sc, 32, hop_length=8, window=torch.hann_window(32), onesided=False, return_complex=True,
                     length=n)
    t64 = torch.arange(n, dtype=torch.float64)
    x64 = torch.sin(t64 * 0.21) + 0.5 * torch.sin(t64 * 0.83 + 0.4)
    s64 = torch.stft(x64, 64, hop_length=16, window=torch.hann_window(64, dtype=torch.float64), return_complex=True)
    outs += [sb, bb, sc.shape, bc, s64.dtype, s64[:, 3]]
    xg = x.clone().requires_grad_(True)
    sg = torch.stft(xg, 64, hop_length=16, window=win, return_complex=True)
    power = sg.real ** 2 + sg.imag ** 2
    loss = torch.log1p(power).sum() + (sg.abs() + 1e-3).sqrt()[2:6].sum() + (sg.real * torch.linspace(0, 1, sg.shape[-1])).sum()
    g, = torch.autograd.grad(loss, xg)
    xg2 = x.clone().requires_grad_(True)
    yg = torch.istft(torch.stft(xg2, 32, hop_length=8, window=torch.hann_window(32), return_complex=True) * 0.5,
                     32, hop_length=8, window=torch.hann_window(32), length=n)
    g2, = torch.autograd.grad((yg * tt).sum(), xg2)
    outs += [g, g2]
    return outs


def case_fft_convolution_and_freqs(lib):
    """FFT convolution by ``rfft(n=)``/``irfft(n=)`` (full and same-mode slices) against ``F.conv1d`` with the
    flipped kernel (cross-correlation), ``fft``/``ifft`` of complex, ``fftshift``/``ifftshift`` on odd and even
    lengths and on chosen dims, ``fftfreq``/``rfftfreq`` with ``d=``, ``fft2``/``ifft2``/``fftn``/``ifftn``/``rfft2``/
    ``irfftn`` with ``norm`` in backward/ortho/forward and ``s=``/``dim=``, Parseval's identity under ``ortho``,
    ``hfft``/``ihfft``, and the gradient of an FFT-convolution loss."""
    torch = lib
    F = torch.nn.functional
    sig = formula_data(torch, 2, 37, seed=14)
    ker = torch.tensor([0.25, 0.5, 1.0, -0.5, 0.125])
    n = sig.shape[-1] + ker.shape[-1] - 1
    full = torch.fft.irfft(torch.fft.rfft(sig, n=n) * torch.fft.rfft(ker, n=n), n=n)
    conv = F.conv1d(sig.unsqueeze(1), ker.flip(0).view(1, 1, -1), padding=ker.shape[-1] - 1).squeeze(1)
    same = full[..., 2:2 + sig.shape[-1]]
    conv_same = F.conv1d(sig.unsqueeze(1), ker.flip(0).view(1, 1, -1), padding="same").squeeze(1)
    # n shorter than the signal crops; odd n
    crop = torch.fft.irfft(torch.fft.rfft(sig, n=20), n=19)
    z = torch.complex(sig[0], sig[1])
    zf = torch.fft.fft(z)
    shifts = (torch.fft.fftshift(torch.arange(7)), torch.fft.fftshift(torch.arange(8)),
              torch.fft.ifftshift(torch.fft.fftshift(torch.arange(7))), torch.fft.fftshift(torch.arange(12).view(3, 4), dim=-1),
              torch.fft.fftshift(torch.arange(12).view(3, 4)), torch.fft.ifftshift(torch.arange(12).view(3, 4), dim=(0,)))
    freqs = (torch.fft.fftfreq(8), torch.fft.fftfreq(7, d=0.5), torch.fft.rfftfreq(8, d=1 / 16000),
             torch.fft.rfftfreq(9), torch.fft.fftfreq(5, dtype=torch.float64), torch.fft.fftshift(torch.fft.fftfreq(6)))
    img = formula_data(torch, 2, 6, 5, seed=15)
    ffts = {}
    for norm in ("backward", "ortho", "forward"):
        f2 = torch.fft.fft2(img, norm=norm)
        ffts[norm] = (f2, torch.fft.ifft2(f2, norm=norm).real, torch.fft.fftn(img, s=(8, 4), norm=norm),
                      torch.fft.ifftn(f2, dim=(-1,), norm=norm), torch.fft.rfft2(img, norm=norm),
                      torch.fft.irfftn(torch.fft.rfftn(img, norm=norm), s=img.shape[-2:], norm=norm),
                      torch.fft.rfft(sig, norm=norm), torch.fft.hfft(zf[:6], n=10, norm=norm),
                      torch.fft.ihfft(sig[0], norm=norm))
    pars = ((img[0] ** 2).sum(), (torch.fft.fft2(img[0], norm="ortho").abs() ** 2).sum())
    sg = sig.clone().requires_grad_(True)
    out = torch.fft.irfft(torch.fft.rfft(sg, n=n) * torch.fft.rfft(ker, n=n), n=n)
    g, = torch.autograd.grad((out ** 2).sum(), sg)
    sg2 = sig.clone().requires_grad_(True)
    g2, = torch.autograd.grad(torch.fft.fft2(sg2.view(2, 37, 1).expand(2, 37, 3), norm="ortho").abs().sum(), sg2)
    return (full, conv, same, conv_same, crop, zf, shifts, freqs, ffts, pars, g, g2,
            [f.dtype for f in freqs], full.dtype, zf.dtype)


def case_filter_bank_grouped_conv(lib):
    """A filter bank as audio front-ends write it: windowed-sinc band-pass FIR filters built from ``sinc`` and a
    ``hamming_window`` (SincNet style), applied per channel by ``conv1d`` with ``groups=channels`` and
    ``padding="same"``, a depthwise bank with ``groups`` > 1 and several filters per group, ``stride``/``dilation``,
    per-band energies by ``avg_pool1d``, a mel-like triangular matrix on an rfft power spectrum, and gradients wrt the
    cutoff frequencies through the sinc construction."""
    torch = lib
    F = torch.nn.functional
    fs = 16000.0
    L = 31
    n = torch.arange(L, dtype=torch.float32) - (L - 1) / 2
    win = torch.hamming_window(L, periodic=False)
    lo = torch.tensor([100.0, 600.0, 1500.0, 3000.0], requires_grad=True)
    bw = torch.tensor([400.0, 700.0, 1200.0, 2000.0])
    hi = lo + bw

    def lowpass(fc):
        return 2 * fc[:, None] / fs * torch.sinc(2 * fc[:, None] / fs * n)
    filt = (lowpass(hi) - lowpass(lo)) * win
    filt = filt / filt.abs().sum(-1, keepdim=True)
    t = torch.arange(400, dtype=torch.float32) / fs
    x = torch.sin(2 * math.pi * 440 * t) + 0.5 * torch.sin(2 * math.pi * 2500 * t)
    xb = x.view(1, 1, -1).expand(2, 4, -1) * torch.tensor([1.0, 0.5]).view(2, 1, 1)
    y = F.conv1d(xb, filt.unsqueeze(1), groups=4, padding="same")
    energy = F.avg_pool1d(y ** 2, 50, stride=50)
    g, = torch.autograd.grad(energy.sum(), lo)
    w2 = formula_data(torch, 6, 2, 5, seed=16)
    y2 = F.conv1d(formula_data(torch, 1, 4, 30, seed=17), w2, groups=2, stride=2, dilation=2, bias=torch.arange(6.0))
    frames = x[:384].view(-1, 64) * torch.hann_window(64)
    power = torch.fft.rfft(frames).abs() ** 2
    nb = 5
    edges = torch.linspace(0, 32, nb + 2)
    k = torch.arange(33, dtype=torch.float32)
    up = (k[None] - edges[:-2, None]) / (edges[1:-1, None] - edges[:-2, None])
    down = (edges[2:, None] - k[None]) / (edges[2:, None] - edges[1:-1, None])
    fb = torch.clamp(torch.minimum(up, down), min=0)
    mel = torch.log(power @ fb.T + 1e-6)
    dct = torch.cos(math.pi / nb * (torch.arange(nb)[:, None] + 0.5) * torch.arange(nb)[None])
    mfcc = mel @ dct
    return filt, y, energy, g, y2, fb, mel, mfcc, y.shape, y2.shape


def case_jacobians_through_linalg(lib):
    """Sensitivities as estimation code takes them: ``autograd.functional.jacobian`` (reverse, ``vectorize=True``
    and ``strategy="forward-mode"``, a tuple of inputs, ``create_graph=True`` then a second grad), ``hessian`` of a
    least-squares cost (both outer strategies), ``jvp``/``vjp``/``hvp``, the jacobian of an ``lstsq`` solution and of
    ``eigvalsh`` wrt the matrix, ``torch.func.jacrev``/``jacfwd``/``hessian``, and ``vmap`` of ``svdvals``, of
    ``jacrev(det)`` and of an ``stft`` magnitude."""
    torch = lib
    tt = torch.linspace(0, 2, 7, dtype=torch.float64)

    def res(p):
        return p[0] * torch.exp(-p[1] * tt) + p[2]

    def cost(p):
        return (res(p) ** 2).sum()
    p0 = torch.tensor([1.0, 0.5, 0.1], dtype=torch.float64)
    fn = torch.autograd.functional
    jac = (fn.jacobian(res, p0), fn.jacobian(res, p0, vectorize=True),
           fn.jacobian(res, p0, vectorize=True, strategy="forward-mode"),
           fn.jacobian(lambda a, b: (a * b, a.sum() * b), (p0, p0 * 2)))
    pg = p0.clone().requires_grad_(True)
    g2, = torch.autograd.grad(fn.jacobian(res, pg, create_graph=True).sum(), pg)
    hess = (fn.hessian(cost, p0), fn.hessian(cost, p0, vectorize=True, outer_jacobian_strategy="forward-mode"))
    ones = torch.ones(3, dtype=torch.float64)
    prods = (fn.jvp(res, p0, ones), fn.vjp(res, p0, torch.ones(7, dtype=torch.float64)), fn.hvp(cost, p0, ones),
             fn.vhp(cost, p0, ones))
    A = _mat(torch, 5, 2, dtype=torch.float64)
    b = _mat(torch, 5, 1, seed=4, dtype=torch.float64)
    lin = (fn.jacobian(lambda a: torch.linalg.lstsq(a, b).solution, A),
           fn.jacobian(lambda a: torch.linalg.eigvalsh(a + a.T), _mat(torch, 3, 3, dtype=torch.float64)))
    func = (torch.func.jacrev(res)(p0), torch.func.jacfwd(res)(p0), torch.func.hessian(cost)(p0))
    vm = (torch.vmap(torch.linalg.svdvals)(_mat(torch, 4, 3, 2)),
          torch.vmap(torch.func.jacrev(torch.linalg.det))(_mat(torch, 2, 3, 3, dtype=torch.float64)),
          torch.vmap(lambda s: torch.stft(s, 16, hop_length=4, window=torch.hann_window(16),
                                          return_complex=True).abs())(_mat(torch, 2, 40)))
    return jac, g2, hess, prods, lin, func, vm


test_script_matches_torch = script_test(globals())


# --- the fixes


def test_matrix_rank_and_pinv_take_per_matrix_tensor_tolerances():
    """``linalg.matrix_rank``/``linalg.pinv`` with a 1-d (or larger) Tensor ``atol``/``rtol``: PyTorch's Tensor
    overload compares each matrix's singular values with ``max(atol.unsqueeze(-1), rtol.unsqueeze(-1) * max(S))``,
    so one tolerance per matrix of a batch. torchish turned
    the tolerance into a Python float and raised 'a Tensor with 2 elements cannot be converted to Scalar'. Mixing a
    non-0-dim Tensor with a float tolerance is PyTorch's parser TypeError."""
    import torch
    import torchish
    from oracle import assert_same

    def prog(lib):
        A = lib.stack([lib.diag(lib.tensor([4.0, 1.0, 0.25, 0.0])), lib.diag(lib.tensor([2.0, 2.0, 1.0, 0.5]))])
        return (lib.linalg.matrix_rank(A, atol=lib.tensor([0.5, 1.5])),
                lib.linalg.matrix_rank(A, rtol=lib.tensor([0.1, 0.6])),
                lib.linalg.matrix_rank(A, lib.tensor([0.3, 0.7]), True),
                lib.linalg.pinv(A, atol=lib.tensor([0.5, 1.5])),
                lib.linalg.pinv(A, rtol=lib.tensor([0.1, 0.6]), hermitian=True),
                _family(lambda: lib.linalg.matrix_rank(A, atol=lib.tensor([0.5, 1.5]), rtol=0.1)),
                _family(lambda: lib.linalg.pinv(A, atol=0.1, rtol=lib.tensor([0.5, 1.5]))),
                lib.linalg.matrix_rank(A, atol=lib.tensor(0.3), rtol=0.1))
    assert_same(prog(torch), prog(torchish))
    assert prog(torchish)[0].tolist() == [2, 2]
    a = torchish.stack([torchish.eye(3, dtype=torchish.float64) * 2] * 2).requires_grad_(True)
    g, = torchish.autograd.grad(torchish.linalg.pinv(a, atol=torchish.tensor([0.0, 5.0], dtype=torchish.float64)).sum(), a)
    at = torch.stack([torch.eye(3, dtype=torch.float64) * 2] * 2).requires_grad_(True)
    gt, = torch.autograd.grad(torch.linalg.pinv(at, atol=torch.tensor([0.0, 5.0], dtype=torch.float64)).sum(), at)
    assert_same(gt, g)
