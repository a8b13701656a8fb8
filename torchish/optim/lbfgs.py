"""L-BFGS with PyTorch's algorithm: the two-loop recursion over a bounded history, the first step scaled by
``1 / |g|_1``, termination on ``tolerance_grad`` / ``tolerance_change`` / ``max_iter`` / ``max_eval``, and an
optional strong-Wolfe line search (cubic interpolation with bracketing and zoom).

The algorithm is value-dependent control flow, so it runs eagerly on the flat parameter vector (jax arrays,
float32 scalars where PyTorch holds 0-d tensors, Python floats where PyTorch does); inside ``torchish.compile``
it runs eagerly (a graph break). The state keeps PyTorch's keys, with Tensors where PyTorch has tensors.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ._arith import complex_back, real_view
from .optimizer import Optimizer, check_lr


def _dot(a, b):
    """A 1-D dot product in full precision (PyTorch's ``dot`` never takes a TF32 pass)."""
    return jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST)


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to ``bounds``."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = jnp.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search for a step ``t`` along ``d`` meeting the strong Wolfe conditions; returns
    ``(f_new, g_new, t, evaluations)``."""
    d_norm = jnp.max(jnp.abs(d))
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # bracketing phase
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom phase: shrink the bracket until a point satisfies the conditions
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # keep away from the bracket's ends unless progress stalls
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


def _unwrap(x):
    if isinstance(x, Tensor):
        return x._d
    if isinstance(x, list):
        return [_unwrap(v) for v in x]
    return x


def _wrap(x):
    if isinstance(x, list):
        return [_wrap(v) for v in x]
    if x is not None and hasattr(x, "shape") and not isinstance(x, (int, float)):
        return Tensor._make(jnp.asarray(x))
    return x


class LBFGS(Optimizer):
    """L-BFGS (PyTorch's ``torch.optim.LBFGS``); one parameter group, real parameters, ``step(closure)``.

    Args:
        lr: step length (1 by default). max_iter: iterations per ``step``. max_eval: closure evaluations per
            ``step`` (``max_iter * 5 // 4`` by default). tolerance_grad / tolerance_change: termination tolerances.
        history_size: number of curvature pairs kept. line_search_fn: ``None`` or ``"strong_wolfe"``.

    Example::

        opt = torchish.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        def closure():
            opt.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); return loss
        opt.step(closure)
    """

    _tensor_step = False

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        """The gradients as one real vector: a complex parameter counts as its view_as_real (PyTorch's layout)."""
        return jnp.concatenate([real_view(jnp.zeros(p._v.shape, p._v.dtype) if p.grad is None else p.grad._d)
                                .reshape(-1) for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            v = real_view(p._d)
            n = v.size
            v = v + step_size * update[offset:offset + n].reshape(v.shape)
            p._set_value(complex_back(v, p._d))
            offset += n

    def _set_param(self, values):
        for p, v in zip(self._params, values):
            p._set_value(v)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @no_grad()
    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` re-evaluates the model (zero_grad, forward,
        backward) and returns the loss. Returns the loss of the first evaluation."""
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr = group["lr"].item() if isinstance(group["lr"], Tensor) else group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if jnp.max(jnp.abs(flat_grad)) <= tolerance_grad:
            return orig_loss

        d, t = _unwrap(state.get("d")), _unwrap(state.get("t"))
        old_dirs, old_stps, ro = _unwrap(state.get("old_dirs")), _unwrap(state.get("old_stps")), \
            _unwrap(state.get("ro"))
        H_diag, prev_flat_grad = _unwrap(state.get("H_diag")), _unwrap(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        al = _unwrap(state.get("al"))
        opt_cond = False
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                # update the curvature history, then the two-loop recursion for d = -H g
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _dot(y, y)
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                    state["al"] = None  # (PyTorch adds the key here: it comes before the keys set at the end)
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q = q + (-al[i]) * old_dirs[i]
                r = q * H_diag
                for i in range(num_old):
                    be_i = _dot(old_dirs[i], r) * ro[i]
                    r = r + (al[i] - be_i) * old_stps[i]
                d = r
            prev_flat_grad = flat_grad
            prev_loss = loss
            t = min(1.0, 1.0 / jnp.sum(jnp.abs(flat_grad))) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(flat_grad, d)
            if gtd > -tolerance_change:  # directional derivative below tolerance
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._d for p in self._params]

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = jnp.max(jnp.abs(flat_grad)) <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = jnp.max(jnp.abs(flat_grad)) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if jnp.max(jnp.abs(d * t)) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=_wrap(d), t=_wrap(t), old_dirs=_wrap(old_dirs), old_stps=_wrap(old_stps), ro=_wrap(ro),
                     H_diag=_wrap(H_diag), prev_flat_grad=_wrap(prev_flat_grad), prev_loss=prev_loss)
        if al is not None:
            state["al"] = _wrap(al)
        return orig_loss
