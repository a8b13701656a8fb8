"""Third-party programs, round 58 (helper 169): scientific computing written in PyTorch the way lecture notebooks
write it (finite-difference heat and wave solvers by ``conv1d``/``conv2d`` stencils and ``roll``, spectral
derivatives by ``torch.fft``, RK4 with autograd sensitivities, Sobol and ``torch.distributions`` Monte Carlo,
Newton's method with ``autograd.functional``, bisection by ``torch.where``, ``vander`` polynomial fits, trapezoid
rules, ``torch.special``, histograms, ``bucketize`` and quantiles), often in float64 through
``torch.set_default_dtype`` (restored by each case), run with torch 2.13 and torchish and compared by
``assert_script_matches`` (tests/oracle.py).
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _float64(torch, body):
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return body()
    finally:
        torch.set_default_dtype(old)


def case_heat_equation_stencils(lib):
    """1-D heat equation with explicit Euler: the Laplacian as a ``conv1d`` with a ``[1, -2, 1]`` kernel and
    ``F.pad(mode="circular")``, the same step through ``torch.roll``; 2-D heat with a 5-point ``conv2d`` stencil and
    Dirichlet zeros via ``padding=1``; total heat and the max norm per step, in float64 via the default dtype."""
    torch, F = lib, lib.nn.functional

    def body():
        nx, dx, alpha = 16, 1.0 / 16, 0.01
        dt = 0.4 * dx * dx / alpha
        x = torch.arange(nx) * dx
        u = torch.exp(-100 * (x - 0.5) ** 2)
        u_roll = u.clone()
        kern = torch.tensor([[[1.0, -2.0, 1.0]]])
        mass, peak = [], []
        for _ in range(3):
            lap = F.conv1d(F.pad(u.view(1, 1, -1), (1, 1), mode="circular"), kern).view(-1) / dx ** 2
            u = u + dt * alpha * lap
            u_roll = u_roll + dt * alpha * (torch.roll(u_roll, 1) - 2 * u_roll + torch.roll(u_roll, -1)) / dx ** 2
            mass.append((u.sum() * dx).item())
            peak.append(u.abs().max().item())
        g = torch.zeros(1, 1, 6, 6)
        g[0, 0, 2:4, 2:4] = 1.0
        k2 = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]).view(1, 1, 3, 3)
        for _ in range(2):
            g = g + 0.1 * F.conv2d(g, k2, padding=1)
        return u, u_roll, torch.allclose(u, u_roll), mass, peak, g.squeeze(), u.dtype, torch.get_default_dtype()

    return _float64(torch, body)


def case_wave_equation_leapfrog(lib):
    """1-D wave equation by leapfrog on a float32 string with fixed ends: ``u_next = 2u - u_prev + c^2 (u[2:] -
    2u[1:-1] + u[:-2])`` written into slices, energy from ``torch.diff`` and ``gradient``, and a 2-D membrane
    step by ``conv2d`` with ``padding_mode``-free zero padding and ``unfold``."""
    torch, F = lib, lib.nn.functional
    n, c2 = 12, 0.25
    x = torch.linspace(0, 1, n)
    u = torch.sin(math.pi * x)
    u_prev = u.clone()
    energies = []
    for _ in range(3):
        u_next = torch.zeros_like(u)
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u = u, u_next
        vel = u - u_prev
        energies.append((0.5 * vel.pow(2).sum() + 0.5 * c2 * torch.diff(u).pow(2).sum()).item())
    grad_u, = torch.gradient(u, spacing=(x,))
    grad2 = torch.gradient(u, spacing=1.0 / (n - 1), edge_order=2)[0]
    m = torch.zeros(1, 1, 5, 5)
    m[0, 0, 2, 2] = 1.0
    patches = F.unfold(m, kernel_size=3, padding=1)
    lap = torch.tensor([0.0, 1.0, 0.0, 1.0, -4.0, 1.0, 0.0, 1.0, 0.0]) @ patches
    return u, energies, grad_u, grad2, lap.view(5, 5)


def case_spectral_derivative_fft(lib):
    """Spectral differentiation of a periodic function: ``torch.fft.rfft`` times ``1j * k`` with wavenumbers from
    ``rfftfreq``, ``irfft(n=...)``; the second derivative and a spectral Poisson solve dividing by ``-k^2`` with the
    zero mode masked; ``fftfreq``/``fftshift`` and the power spectrum peak; complex dtype of the spectrum."""
    torch = lib

    def body():
        n, L = 16, 2 * math.pi
        x = torch.arange(n) * (L / n)
        f = torch.sin(3 * x) + 0.5 * torch.cos(x)
        fh = torch.fft.rfft(f)
        k = torch.fft.rfftfreq(n, d=L / n) * 2 * math.pi
        df = torch.fft.irfft(1j * k * fh, n=n)
        d2f = torch.fft.irfft(-(k ** 2) * fh, n=n)
        exact = 3 * torch.cos(3 * x) - 0.5 * torch.sin(x)
        k2 = k ** 2
        k2[0] = 1.0
        uh = -fh / k2
        uh[0] = 0
        u = torch.fft.irfft(uh, n=n)
        kf = torch.fft.fftshift(torch.fft.fftfreq(n, d=1.0 / n))
        power = torch.fft.fft(f).abs() ** 2
        return (fh.dtype, (df - exact).abs().max() < 1e-10, df, d2f, u, kf, power.argmax(), k.dtype,
                torch.fft.ifft(torch.fft.fft(f)).real)

    return _float64(torch, body)


def case_rk4_lorenz_sensitivities(lib):
    """RK4 on the Lorenz system and a damped pendulum in float64, with parameters as leaves requiring grad; the
    final state's sensitivity to sigma/rho/beta by ``torch.autograd.grad``, the pendulum's by ``backward`` through
    all steps, and the Jacobian of one step by ``torch.autograd.functional.jacobian``."""
    torch = lib

    def body():
        params = torch.tensor([10.0, 28.0, 8.0 / 3.0], requires_grad=True)

        def lorenz(s, p):
            x, y, z = s.unbind(-1)
            return torch.stack([p[0] * (y - x), x * (p[1] - z) - y, x * y - p[2] * z], -1)

        def rk4(f, s, h, p):
            k1 = f(s, p)
            k2 = f(s + h / 2 * k1, p)
            k3 = f(s + h / 2 * k2, p)
            k4 = f(s + h * k3, p)
            return s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

        s = torch.tensor([1.0, 1.0, 1.0])
        traj = [s]
        for _ in range(3):
            s = rk4(lorenz, s, 0.01, params)
            traj.append(s)
        sens, = torch.autograd.grad(s.sum(), params)
        g = torch.tensor(9.81)
        damping = torch.tensor(0.3, requires_grad=True)

        def pendulum(state, p):
            th, om = state[0], state[1]
            return torch.stack([om, -g * torch.sin(th) - p * om])

        st = torch.tensor([math.pi / 4, 0.0])
        for _ in range(3):
            st = rk4(pendulum, st, 0.05, damping)
        st[1].backward()
        J = torch.autograd.functional.jacobian(lambda v: rk4(lorenz, v, 0.01, params.detach()), traj[0])
        return torch.stack(traj).detach(), sens, st.detach(), damping.grad, J, st.grad_fn is not None

    return _float64(torch, body)


def case_monte_carlo_sobol(lib):
    """Monte Carlo integration: ``torch.quasirandom.SobolEngine`` (scrambled with a seed and plain) drawing points
    for the integral of ``exp(-|x|^2)`` over the unit square, ``fast_forward`` and ``draw_base2``; plain MC with
    ``torch.rand``; importance sampling from ``distributions.Normal`` / ``Uniform`` with ``log_prob``; estimate and
    standard error."""
    torch, D = lib, lib.distributions
    torch.manual_seed(11)
    sob = torch.quasirandom.SobolEngine(dimension=2)
    pts = sob.draw(8)
    sob.fast_forward(4)
    more = sob.draw(4, dtype=torch.float64)
    scr = torch.quasirandom.SobolEngine(dimension=2, scramble=True, seed=3)
    spts = scr.draw_base2(3)
    f = lambda p: torch.exp(-(p ** 2).sum(-1))
    qmc = f(spts).mean()
    mc = f(torch.rand(16, 2))
    q = D.Normal(torch.tensor(0.0), torch.tensor(1.0))
    z = q.sample((16,))
    w = torch.exp(-z ** 2) / q.log_prob(z).exp()
    iso = w.mean()
    se = w.std() / math.sqrt(16)
    u = D.Uniform(torch.tensor([0.0, -1.0]), torch.tensor([1.0, 1.0]))
    us = u.rsample((4,))
    return pts, more, more.dtype, spts, qmc, mc.mean(), mc.std(), iso, se, us, u.log_prob(us), u.entropy(), sob.num_generated


def case_newton_autograd_functional(lib):
    """Newton's method for a 2-D nonlinear system with ``autograd.functional.jacobian`` and ``linalg.solve``,
    for minimising Rosenbrock with ``autograd.functional.hessian`` (and ``vhp``/``hvp``), residual norms per step;
    the ``create_graph`` second derivative of a scalar function; float64 default dtype."""
    torch = lib
    AF = torch.autograd.functional

    def body():
        def F_(v):
            x, y = v[0], v[1]
            return torch.stack([x ** 2 + y ** 2 - 4, torch.exp(x) + y - 1])

        v = torch.tensor([1.0, -1.0])
        res = []
        for _ in range(3):
            J = AF.jacobian(F_, v)
            v = v - torch.linalg.solve(J, F_(v))
            res.append(torch.linalg.norm(F_(v)).item())

        def rosen(p):
            return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2

        p = torch.tensor([-1.2, 1.0])
        vals = []
        for _ in range(3):
            g = AF.jacobian(rosen, p)
            H = AF.hessian(rosen, p)
            p = p - torch.linalg.solve(H, g)
            vals.append(rosen(p).item())
        _, hv = AF.hvp(rosen, p, torch.tensor([1.0, 0.0]))
        _, vh = AF.vhp(rosen, p, torch.tensor([0.0, 1.0]))
        x = torch.tensor(0.7, requires_grad=True)
        y = torch.sin(x) * x ** 3
        d1, = torch.autograd.grad(y, x, create_graph=True)
        d2, = torch.autograd.grad(d1, x)
        return v, res, J, p, vals, H, hv, vh, d1.detach(), d2

    return _float64(torch, body)


def case_bisection_and_polyfit(lib):
    """Vectorised bisection for roots of ``x^3 - a`` for a batch of ``a`` by ``torch.where`` on sign changes;
    Newton-Raphson polish; polynomial least squares with ``torch.vander(increasing=True)`` + ``linalg.lstsq`` and the
    same through ``numpy``-style decreasing powers, ``torch.polyval``-free evaluation by Horner in a loop, R^2."""
    torch = lib
    torch.manual_seed(12)
    a = torch.tensor([2.0, 5.0, 10.0, 0.5])
    lo, hi = torch.zeros_like(a), torch.full_like(a, 3.0)
    for _ in range(12):
        mid = (lo + hi) / 2
        fm = mid ** 3 - a
        left = (lo ** 3 - a) * fm <= 0
        hi = torch.where(left, mid, hi)
        lo = torch.where(left, lo, mid)
    root = (lo + hi) / 2
    for _ in range(2):
        root = root - (root ** 3 - a) / (3 * root ** 2)
    x = torch.linspace(-1, 1, 10)
    y = 1 - 2 * x + 0.5 * x ** 3 + 0.05 * torch.randn(10)
    V = torch.vander(x, N=4, increasing=True)
    coef = torch.linalg.lstsq(V, y.unsqueeze(1)).solution.squeeze(1)
    Vd = torch.vander(x, N=4)
    coef_d = torch.linalg.pinv(Vd) @ y
    yhat = torch.zeros_like(x)
    for c in coef_d:
        yhat = yhat * x + c
    r2 = 1 - ((y - yhat) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    return root, (root - a ** (1 / 3)).abs().max() < 1e-5, V[:2], coef, coef_d, yhat, r2


def case_quadrature_special(lib):
    """Quadrature and special functions in float64: ``torch.trapezoid`` with ``x=`` and ``dx=``,
    ``cumulative_trapezoid`` of a Gaussian against ``special.erf``; ``special.gammaln``/``lgamma`` for log
    binomial coefficients, ``special.i0``/``i0e``/``i1``, ``xlogy``/``xlog1py`` entropies with zeros, ``logit`` with
    ``eps``, ``expit``, ``ndtr``/``ndtri``, ``log_ndtr``, ``digamma``/``polygamma``, ``sinc`` and ``entr``."""
    torch, sp = lib, lib.special

    def body():
        x = torch.linspace(0, 2, 9)
        g = 2 / math.sqrt(math.pi) * torch.exp(-x ** 2)
        tz = torch.trapezoid(g, x=x)
        tz_dx = torch.trapezoid(g, dx=0.25)
        ct = torch.cumulative_trapezoid(g, x=x)
        err = (ct - sp.erf(x[1:])).abs().max()
        n = torch.tensor([5.0, 10.0, 20.0])
        k = torch.tensor([2.0, 3.0, 10.0])
        logbinom = sp.gammaln(n + 1) - sp.gammaln(k + 1) - sp.gammaln(n - k + 1)
        p = torch.tensor([0.0, 0.25, 0.5, 1.0])
        ent = -(sp.xlogy(p, p) + sp.xlogy(1 - p, 1 - p))
        z = torch.tensor([-2.0, -0.5, 0.0, 1.5])
        return (tz, tz_dx, ct, err, torch.exp(logbinom).round(), torch.lgamma(n), sp.i0(z), sp.i0e(z), sp.i1(z),
                ent, sp.xlog1py(p, p), sp.logit(p, eps=1e-6), sp.expit(z), sp.ndtr(z), sp.ndtri(p[1:3]),
                sp.log_ndtr(z), sp.digamma(n), sp.polygamma(1, n), sp.sinc(z), sp.entr(p), sp.erfcx(z),
                sp.erfinv(torch.tensor([-0.5, 0.0, 0.9])))

    return _float64(torch, body)


def case_histograms_quantiles(lib):
    """Data summaries: ``torch.histc`` with fixed range, ``torch.histogram`` with a bin count and with explicit
    edges plus ``density=True`` and ``weight=``, ``bucketize`` (``right`` both ways) and ``searchsorted`` of sorted
    edges, ``quantile`` with each interpolation, ``nanquantile`` and ``nanmedian`` with NaNs, an empirical CDF."""
    torch = lib
    torch.manual_seed(13)
    x = torch.randn(20)
    hc = torch.histc(x, bins=5, min=-2, max=2)
    h = torch.histogram(x, bins=4)
    edges = torch.tensor([-3.0, -1.0, 0.0, 1.0, 3.0])
    hd = torch.histogram(x, bins=edges, density=True)
    hw = torch.histogram(x, bins=edges, weight=torch.arange(20.0))
    b_l = torch.bucketize(x, edges)
    b_r = torch.bucketize(x, edges, right=True)
    ss = torch.searchsorted(edges, torch.tensor([0.0, 0.5, 3.0]), side="right")
    qs = torch.tensor([0.1, 0.5, 0.9])
    quants = [torch.quantile(x, qs, interpolation=m) for m in ("linear", "lower", "higher", "midpoint", "nearest")]
    xn = x.clone()
    xn[::4] = float("nan")
    nq = torch.nanquantile(xn.view(4, 5), 0.5, dim=1, keepdim=True)
    nm = torch.nanmedian(xn.view(4, 5), dim=1)
    sx, _ = x.sort()
    ecdf = torch.arange(1, 21) / 20.0
    ecdf_at = ecdf[torch.searchsorted(sx, torch.tensor([-1.0, 0.0, 1.0]), right=True) - 1]
    return hc, h.hist, h.bin_edges, hd.hist, hw.hist, b_l, b_r, ss, quants, nq, nm.values, nm.indices, ecdf_at


def case_gradient_descent_least_squares_f64(lib):
    """A float64 scientific fit: parameters of a damped oscillator ``A exp(-g t) cos(w t + phi)`` fitted to noisy
    samples by Adam, then polished by Gauss-Newton using ``autograd.functional.jacobian`` of the residuals and
    ``linalg.lstsq``; parameter covariance from ``inverse(J^T J)`` and its ``diagonal().sqrt()``."""
    torch = lib
    AF = torch.autograd.functional

    def body():
        torch.manual_seed(14)
        t = torch.linspace(0, 4, 16)
        true = torch.tensor([1.5, 0.4, 2.0, 0.3])
        model = lambda p: p[0] * torch.exp(-p[1] * t) * torch.cos(p[2] * t + p[3])
        y = model(true) + 0.02 * torch.randn(16)
        p = torch.tensor([1.2, 0.3, 2.1, 0.2], requires_grad=True)
        opt = torch.optim.Adam([p], lr=0.01)
        losses = []
        for _ in range(3):
            loss = ((model(p) - y) ** 2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
            losses.append(loss.item())
        q = p.detach().clone()
        for _ in range(3):
            r = model(q) - y
            J = AF.jacobian(lambda v: model(v) - y, q)
            q = q - torch.linalg.lstsq(J, r.unsqueeze(1)).solution.squeeze(1)
        J = AF.jacobian(model, q)
        s2 = ((model(q) - y) ** 2).sum() / (16 - 4)
        cov = torch.linalg.inv(J.T @ J) * s2
        return losses, p.detach(), p.dtype, q, cov.diagonal().sqrt(), opt.state[p]["exp_avg_sq"]

    return _float64(torch, body)


def case_diffusion_sde_euler_maruyama(lib):
    """Ornstein-Uhlenbeck paths by Euler-Maruyama: ``torch.randn`` increments scaled by ``sqrt(dt)``, ``cumsum`` of a
    Brownian motion, paths stored with ``torch.stack``, empirical mean/variance against the closed form; a
    geometric Brownian motion by ``cumprod`` and ``exp`` of ``cumsum``; ``torch.distributions.LogNormal`` moments
    and ``cdf`` of a ``Normal`` for a Black-Scholes price."""
    torch, D = lib, lib.distributions
    torch.manual_seed(15)
    n_paths, n_steps, dt, theta, mu, sigma = 6, 4, 0.1, 1.5, 0.5, 0.3
    x = torch.zeros(n_paths)
    path = [x]
    for _ in range(n_steps):
        x = x + theta * (mu - x) * dt + sigma * math.sqrt(dt) * torch.randn(n_paths)
        path.append(x)
    path = torch.stack(path, 1)
    T = n_steps * dt
    mean_exact = mu * (1 - math.exp(-theta * T))
    W = torch.cat([torch.zeros(n_paths, 1), torch.randn(n_paths, n_steps).mul(math.sqrt(dt)).cumsum(1)], 1)
    S0, r, vol = 100.0, 0.05, 0.2
    tgrid = torch.arange(n_steps + 1) * dt
    gbm = S0 * torch.exp((r - 0.5 * vol ** 2) * tgrid + vol * W)
    gbm2 = S0 * torch.cumprod(torch.cat([torch.ones(n_paths, 1), (gbm[:, 1:] / gbm[:, :-1])], 1), 1)
    ln = D.LogNormal(torch.tensor(math.log(S0) + (r - 0.5 * vol ** 2) * T), torch.tensor(vol * math.sqrt(T)))
    K = torch.tensor([95.0, 100.0, 105.0])
    d1 = (torch.log(S0 / K) + (r + 0.5 * vol ** 2) * T) / (vol * math.sqrt(T))
    d2 = d1 - vol * math.sqrt(T)
    N = D.Normal(0.0, 1.0)
    call = S0 * N.cdf(d1) - K * math.exp(-r * T) * N.cdf(d2)
    return (path, path[:, -1].mean() - mean_exact, path[:, -1].var(), W, gbm, (gbm - gbm2).abs().max() < 1e-3,
            ln.mean, ln.variance, call, N.icdf(torch.tensor([0.025, 0.975])))


def case_implicit_heat_sparse_cg(lib):
    """Crank-Nicolson for the 1-D heat equation with the Laplacian built by ``torch.sparse.spdiags`` (Dirichlet ends),
    the implicit system solved by a hand-written conjugate gradient on ``torch.sparse.mm`` products (residual norms
    per iteration) and checked against ``linalg.solve`` of the dense matrix; a weighted ``torch.cov`` of the final
    profile's samples."""
    torch = lib

    def body():
        n, r = 6, 0.5
        ones = torch.ones(n)
        L = torch.sparse.spdiags(torch.stack([ones, -2 * ones, ones]), torch.tensor([-1, 0, 1]), (n, n))
        eye = torch.eye(n)
        A = (eye - 0.5 * r * L.to_dense()).to_sparse()
        u = torch.sin(torch.pi * torch.linspace(0, 1, n + 2)[1:-1])
        residuals = []
        for _ in range(2):
            b = u + 0.5 * r * torch.sparse.mm(L, u.unsqueeze(1)).squeeze(1)
            x = torch.zeros(n)
            res = b - torch.sparse.mm(A, x.unsqueeze(1)).squeeze(1)
            p, rs = res.clone(), res @ res
            for _ in range(3):
                Ap = torch.sparse.mm(A, p.unsqueeze(1)).squeeze(1)
                alpha = rs / (p @ Ap)
                x, res = x + alpha * p, res - alpha * Ap
                rs_new = res @ res
                p, rs = res + rs_new / rs * p, rs_new
                residuals.append(rs.sqrt().item())
            exact = torch.linalg.solve(A.to_dense(), b)
            u = x
        w = torch.tensor([1.0, 2.0, 2.0, 1.0, 0.5, 0.5])
        return (L._indices(), L._values(), L.is_coalesced(), A.coalesce().values(), residuals, u, exact,
                torch.cov(torch.stack([u, exact]), aweights=w), L.dtype)

    return _float64(torch, body)


test_script_matches_torch = script_test(globals())
