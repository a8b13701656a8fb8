"""Third-party programs, round 68 (helper 185): advanced autograd as libraries and research code use it:
``saved_tensors_hooks`` / ``save_on_cpu`` (pack/unpack hooks that compress, count or offload, nested),
``register_multi_grad_hook`` ("all" and "any"), ``Node.register_hook``/``register_prehook`` and torchviz-style walks
of ``grad_fn.next_functions`` (names, ``metadata``, ``_saved_*``), custom ``autograd.Function``s with
``setup_context``, ``jvp`` (``torch.func.jvp`` and ``forward_ad``), ``vmap`` / ``generate_vmap_rule``,
``save_for_forward``, ``once_differentiable``, ``mark_non_differentiable``, ``set_materialize_grads(False)``;
``gradcheck``/``gradgradcheck`` results and failures; double backward through common ops (gradient penalties and
Hessian-vector products); ``autograd.grad`` with ``is_grads_batched``, ``allow_unused``, ``materialize_grads``;
``retain_grad`` on views and in-place modified tensors; Functions on views and ``mark_dirty``. Re-implemented here,
run with torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).

Fixed here: a Function that ``mark_dirty``s a view it modified in place left its base's history alone (the base's
gradient skipped the Function's backward); ``torch.func.vmap`` ignored a Function's ``vmap`` staticmethod;
``MmBackward0`` lacked ``_saved_self_sym_strides``/``_saved_mat2_sym_strides``. Not matched (see the cases): the
``in_dims`` a ``vmap`` staticmethod gets name batch dim 0 where PyTorch names the physical dim (torchish moves it),
and torchish differentiates ``cdist``'s direct backward again where PyTorch raises NotImplementedError.
"""
import pytest

from oracle import assert_script_matches, formula_data as _data, formula_init as _init, outcome as _family, \
    script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_saved_tensor_hooks_compress_count_nested(lib):
    """Activation-compression style hooks: pack to float16 (counting calls and the shapes packed), unpack back to
    float32; nested contexts (only the innermost applies), ``save_on_cpu`` around a small MLP, and a hook that
    returns the tensor itself."""
    torch = lib
    log = []

    def pack_half(t):
        log.append(("pack16", tuple(t.shape), str(t.dtype)))
        return t.to(torch.float16)

    def unpack_half(t):
        log.append(("unpack16", tuple(t.shape)))
        return t.to(torch.float32)

    def pack_id(t):
        log.append(("packid", tuple(t.shape)))
        return t

    def unpack_id(t):
        log.append(("unpackid", tuple(t.shape)))
        return t

    x = _data(lib, 3, 4).requires_grad_()
    w = _data(lib, 4, 2, seed=1).requires_grad_()
    with torch.autograd.graph.saved_tensors_hooks(pack_half, unpack_half):
        h = torch.tanh(x @ w)
        with torch.autograd.graph.saved_tensors_hooks(pack_id, unpack_id):
            y = (h * h).sum()
    n_packed = len(log)
    y.backward()
    res = {"log_fwd": sorted(log[:n_packed]), "n_unpack": len(log) - n_packed, "gx": x.grad, "gw": w.grad}
    net = _init(lib, torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.GELU(), torch.nn.Linear(6, 1)))
    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        loss = net(x.detach()).pow(2).mean()
    loss.backward()
    res["mlp_grads"] = [p.grad for p in net.parameters()]
    res["loss"] = loss.detach()
    # a hook that keeps only a count: every saved tensor goes through it once
    count = [0]

    def pack_count(t):
        count[0] += 1
        return t.detach().clone()

    a = _data(lib, 5, seed=2).requires_grad_()
    with torch.autograd.graph.saved_tensors_hooks(pack_count, lambda t: t):
        z = torch.sigmoid(a).mul(a.exp()).sum()
    g, = torch.autograd.grad(z, a)
    res["count"] = count[0] > 0
    res["ga"] = g
    return res


def case_multi_grad_hook_all_any(lib):
    """``register_multi_grad_hook`` as FSDP-like code uses it: mode "all" sees every grad (None for inputs the
    backward did not reach), mode "any" fires once with the first grad; hooks on non-leaf tensors; call order as
    strings."""
    torch = lib
    order = []
    a = _data(lib, 3).requires_grad_()
    b = _data(lib, 3, seed=1).requires_grad_()
    c = _data(lib, 3, seed=2).requires_grad_()
    mid = a * 2
    h_all = torch.autograd.graph.register_multi_grad_hook(
        (mid, b, c), lambda gs: order.append("all:" + ",".join("N" if g is None else "T" for g in gs)))
    h_any = torch.autograd.graph.register_multi_grad_hook(
        (a, b), lambda g: order.append("any:" + str(tuple(g.shape))), mode="any")
    mid.register_hook(lambda g: order.append("mid"))
    b.register_hook(lambda g: order.append("b"))
    (mid * b).sum().backward()
    (mid.detach() * b).sum().backward()
    h_all.remove()
    (a * b * c).sum().backward()
    h_any.remove()
    (a + b).sum().backward()
    grads_seen = []
    h = torch.autograd.graph.register_multi_grad_hook((a, c), lambda gs: grads_seen.append(list(gs)))
    leaf_in_grad = _family(lambda: torch.autograd.grad((a * 3 + c * c).sum(), (a, c)))
    h.remove()
    a2, c2 = a * 1, c * 1
    h = torch.autograd.graph.register_multi_grad_hook((a2, c2), lambda gs: grads_seen.append(list(gs)))
    torch.autograd.grad((a2 * 3 + c2 * c2).sum(), (a,))
    h.remove()
    return {"order": order, "seen": grads_seen, "leaf_in_grad": leaf_in_grad, "ga": a.grad, "gb": b.grad, "gc": c.grad}


def _walk(fn, seen, out):
    """torchviz-style walk of the backward graph: name, each saved tensor attribute's shape."""
    if fn is None or fn in seen:
        return
    seen.add(fn)
    entry = [fn.name()]
    for attr in sorted(dir(fn)):
        if attr.startswith("_saved_"):
            v = getattr(fn, attr)
            if hasattr(v, "shape"):
                entry.append((attr, tuple(v.shape)))
            elif isinstance(v, (int, float, bool, tuple, list, type(None))):
                entry.append((attr, v))
    if hasattr(fn, "variable"):
        entry.append(("variable", tuple(fn.variable.shape)))
    out.append(entry)
    for nxt, idx in fn.next_functions:
        _walk(nxt, seen, out)


def case_graph_walk_and_node_hooks(lib):
    """A torchviz-like walk of ``grad_fn.next_functions`` reading names, ``_saved_*`` attributes and
    ``AccumulateGrad.variable``; ``metadata`` dicts; node prehooks and hooks (which may replace grads) with call
    orders; a prehook that rescales the incoming gradient."""
    torch = lib
    x = _data(lib, 2, 3).requires_grad_()
    w = _data(lib, 3, 4, seed=1).requires_grad_()
    y = torch.relu(x @ w).sum(dim=1).pow(3).mean()
    graph = []
    _walk(y.grad_fn, set(), graph)
    y.grad_fn.metadata["tag"] = "root"
    order = []
    mm = y.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions[0][0]
    mm_name = mm.name()
    y.grad_fn.register_prehook(lambda go: order.append("mean_pre"))
    y.grad_fn.register_hook(lambda gi, go: order.append("mean_post"))
    mm.register_prehook(lambda go: (order.append("mm_pre"), (go[0] * 2,))[1])
    mm.register_hook(lambda gi, go: order.append("mm_post:" + ",".join("N" if g is None else "T" for g in gi)))
    acc = mm.next_functions[0][0]
    acc.register_prehook(lambda go: order.append("acc_pre"))
    acc.register_hook(lambda gi, go: order.append("acc_post"))
    x.register_hook(lambda g: order.append("x_tensor"))
    y.backward()
    return {"graph": graph, "meta": dict(y.grad_fn.metadata), "mm": mm_name, "order": order,
            "gx": x.grad, "gw": w.grad, "acc_name": acc.name(), "nf_len": len(mm.next_functions)}


class _Cube:
    """A custom Function with setup_context, jvp and save_for_forward, built for ``lib``."""

    @staticmethod
    def make(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(x, scale):
                return x ** 3 * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, scale = inputs
                ctx.save_for_backward(x)
                ctx.save_for_forward(x)
                ctx.scale = scale

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * 3 * x ** 2 * ctx.scale, None

            @staticmethod
            def jvp(ctx, x_t, scale_t):
                x, = ctx.saved_tensors
                return x_t * 3 * x ** 2 * ctx.scale

        return Cube


def case_custom_function_jvp_forward_ad(lib):
    """A Function with ``setup_context`` and ``jvp`` (``save_for_forward``) used with ``torch.func.jvp``, with
    ``forward_ad.dual_level``/``make_dual``/``unpack_dual``, with ``torch.func.grad``/``jacrev``, and composed with
    ordinary ops (forward over forward ops)."""
    torch = lib
    Cube = _Cube.make(lib)
    x = _data(lib, 4, dtype=torch.float64)
    t = _data(lib, 4, seed=1, dtype=torch.float64)
    out, tan = torch.func.jvp(lambda v: Cube.apply(v, 2.0).sin(), (x,), (t,))
    fa = torch.autograd.forward_ad
    with fa.dual_level():
        d = fa.make_dual(x, t)
        y = Cube.apply(d, 0.5) + d.exp()
        p, tg = fa.unpack_dual(y)
        plain = fa.unpack_dual(Cube.apply(x, 1.0)).tangent
    g = torch.func.grad(lambda v: Cube.apply(v, 1.5).sum())(x)
    jac = torch.func.jacrev(lambda v: Cube.apply(v, 1.0))(x[:3])
    xr = x.clone().requires_grad_()
    Cube.apply(xr, 3.0).sum().backward()
    return {"out": out, "tan": tan, "primal": p, "tangent": tg, "plain_tangent_none": plain is None, "g": g,
            "jac": jac, "xr_grad": xr.grad}


def case_custom_function_vmap(lib):
    """Functions under ``torch.func.vmap``: one with a ``vmap`` staticmethod (its ``in_dims``, batch size and
    ``out_dims``), one with ``generate_vmap_rule = True``; vmap of grad through both (per-sample gradients)."""
    torch = lib
    calls = []

    class ScaledSquare(torch.autograd.Function):
        @staticmethod
        def forward(x, s):
            return x * x * s

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.s = inputs[1]

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g * ctx.s, None

        @staticmethod
        def vmap(info, in_dims, x, s):
            # (which None/int each argument gets; torchish hands a batched argument over with its batch dim moved
            # to 0, where PyTorch keeps the physical dim vmap's in_dims put it at: a rule must move it either way)
            calls.append(("vmap", info.batch_size, tuple(d is None for d in in_dims)))
            xd = in_dims[0]
            x = x.movedim(xd, 0) if xd is not None else x
            return ScaledSquare.apply(x, s), 0

    class SoftClip(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return torch.tanh(x) * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * (2 - y * y / 2)

    xb = _data(lib, 3, 4)
    out1 = torch.func.vmap(lambda v: ScaledSquare.apply(v, 3.0))(xb)
    out1b = torch.func.vmap(lambda v: ScaledSquare.apply(v, 2.0), in_dims=1)(xb)
    out2 = torch.func.vmap(SoftClip.apply)(xb)
    psg = torch.func.vmap(torch.func.grad(lambda v: SoftClip.apply(v).sum()))(xb)
    psg2 = torch.func.vmap(torch.func.grad(lambda v: ScaledSquare.apply(v, 0.5).sum()))(xb)
    return {"out1": out1, "out1b": out1b, "out2": out2, "psg": psg, "psg2": psg2, "calls": calls}


def case_function_flags_once_differentiable_materialize(lib):
    """``once_differentiable`` (double backward raises), ``mark_non_differentiable`` (an index output, its
    ``requires_grad``), ``set_materialize_grads(False)`` (backward receives None for an unused output) vs the default
    (zeros), ``needs_input_grad``."""
    torch = lib
    seen = []

    class MaxWithIndex(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.max(dim=-1)
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(x, i)
            return v, i

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, gv, gi):
            x, i = ctx.saved_tensors
            seen.append(("maxidx", gi is None, ctx.needs_input_grad))
            g = torch.zeros_like(x)
            return g.scatter(-1, i.unsqueeze(-1), gv.unsqueeze(-1))

    class TwoOut(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append(("two", ga is None, gb is None))
            g = 0
            if ga is not None:
                g = g + ga * 2
            if gb is not None:
                g = g + gb * 3
            return g, None

    x = _data(lib, 2, 5).requires_grad_()
    v, i = MaxWithIndex.apply(x)
    res = {"v": v, "i": i, "i_rg": i.requires_grad, "v_rg": v.requires_grad}
    gx, = torch.autograd.grad(v.pow(2).sum(), x, create_graph=True)
    res["gx"] = gx
    res["double"] = _family(lambda: gx.sum().backward())
    a, b = TwoOut.apply(x, False)
    a.sum().backward()
    res["g_nomat"] = x.grad.clone()
    x.grad = None
    a, b = TwoOut.apply(x, True)
    a.sum().backward()
    res["g_mat"] = x.grad
    res["seen"] = seen
    return res


def case_gradcheck_results_and_failures(lib):
    """``gradcheck``/``gradgradcheck`` on small float64 functions (return values), a Function with a wrong backward
    (``raise_exception=False`` returns False, ``True`` raises), float32 inputs (warning-only path), and
    ``fast_mode``."""
    torch = lib
    x = _data(lib, 3, dtype=torch.float64).requires_grad_()
    w = _data(lib, 3, 2, seed=1, dtype=torch.float64).requires_grad_()

    class BadSquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            ctx.save_for_backward(v)
            return v * v

        @staticmethod
        def backward(ctx, g):
            v, = ctx.saved_tensors
            return g * v  # wrong: misses the factor 2

    gc = torch.autograd.gradcheck
    ggc = torch.autograd.gradgradcheck
    res = {
        "ok": gc(lambda a, b: torch.nn.functional.softplus(a @ b).logsumexp(0), (x, w)),
        "ok_fast": gc(lambda a: a.sin() * a, (x,), fast_mode=True),
        "gg": ggc(lambda a, b: (a @ b).tanh(), (x, w)),
        "bad_false": gc(BadSquare.apply, (x,), raise_exception=False),
        "bad_raise": _family(lambda: gc(BadSquare.apply, (x,))),
        "bad_gg_false": ggc(lambda a: BadSquare.apply(a).sum() * a, (x,), raise_exception=False),
        "norm_ok": gc(lambda a: torch.linalg.vector_norm(a), (x,), eps=1e-6, atol=1e-5),
    }
    return res


def case_double_backward_penalties_hvp(lib):
    """WGAN-GP/R1-style gradient penalties and Hessian-vector products through softplus, logsumexp, norm, cdist,
    layer_norm, cross_entropy and conv1d: ``grad(create_graph=True)`` then backward to the parameters."""
    torch = lib
    F = torch.nn.functional
    out = {}
    conv = _init(lib, torch.nn.Conv1d(2, 3, 3, padding=1))
    lin = _init(lib, torch.nn.Linear(15, 4), seed=1)
    xs = _data(lib, 2, 2, 5, dtype=torch.float32).requires_grad_()
    tgt = torch.tensor([1, 3])
    logits = lin(F.softplus(conv(xs)).flatten(1))
    loss = F.cross_entropy(logits, tgt) + logits.logsumexp(-1).mean() * 0.1
    gx, = torch.autograd.grad(loss, xs, create_graph=True)
    penalty = (gx.flatten(1).norm(dim=1) - 1).pow(2).mean()
    penalty.backward()
    out["penalty"] = penalty.detach()
    out["conv_w_grad"] = conv.weight.grad
    out["lin_w_grad"] = lin.weight.grad
    # layer_norm and cdist: Hessian-vector product by double backward
    a = _data(lib, 3, 4, seed=2, dtype=torch.float64).requires_grad_()
    b = _data(lib, 2, 4, seed=3, dtype=torch.float64)
    ln_w = _data(lib, 4, seed=4, dtype=torch.float64).requires_grad_()

    def f(v, mode="use_mm_for_euclid_dist"):
        return (torch.cdist(F.layer_norm(v, (4,), ln_w), b, compute_mode=mode).pow(2).sum()
                + torch.linalg.norm(v, dim=1).sum())


    g, = torch.autograd.grad(f(a), a, create_graph=True)
    vec = _data(lib, 3, 4, seed=5, dtype=torch.float64)
    hvp, gw = torch.autograd.grad((g * vec).sum(), (a, ln_w))
    out["g"] = g.detach()
    out["hvp"] = hvp
    out["gw"] = gw
    _, hvp2 = torch.autograd.functional.hvp(lambda v: F.softplus(v, beta=2).logsumexp(0).sum(), a.detach(), vec)
    out["hvp2"] = hvp2
    return out


def case_grad_batched_unused_materialize(lib):
    """``autograd.grad`` with ``is_grads_batched=True`` (rows of a Jacobian at once), ``allow_unused`` (None) and
    ``materialize_grads`` (zeros), the error without ``allow_unused``, and ``torch.autograd.functional.jacobian``
    with ``vectorize=True`` compared to it."""
    torch = lib
    x = _data(lib, 3).requires_grad_()
    w = _data(lib, 3, 3, seed=1)
    u = _data(lib, 2).requires_grad_()
    y = torch.tanh(w @ x) * 2
    eye = torch.eye(3)
    jac, = torch.autograd.grad(y, x, eye, retain_graph=True, is_grads_batched=True)
    jac2 = torch.autograd.functional.jacobian(lambda v: torch.tanh(w @ v) * 2, x.detach(), vectorize=True)
    gu = torch.autograd.grad(y.sum(), (x, u), allow_unused=True, retain_graph=True)
    gm = torch.autograd.grad(y.sum(), (x, u), materialize_grads=True, retain_graph=True)
    err = _family(lambda: torch.autograd.grad(y.sum(), (x, u), retain_graph=True))
    err2 = _family(lambda: torch.autograd.grad(y.sum(), (x, u), allow_unused=False, materialize_grads=True,
                                                retain_graph=True))
    batched_two, = torch.autograd.grad(y, x, torch.stack([torch.ones(3), torch.arange(3.0)]),
                                       is_grads_batched=True)
    return {"jac": jac, "jac2": jac2, "gu_none": gu[1] is None, "gu0": gu[0], "gm": list(gm), "err": err,
            "err2": err2, "batched_two": batched_two}


def case_retain_grad_views_inplace(lib):
    """``retain_grad`` on a view (slice, transpose), on a tensor then modified in place (its ``.grad`` belongs to
    the new version), on a leaf (no-op), ``retains_grad`` flags, and ``is_leaf``/``grad_fn`` names after in-place
    ops on views of a non-leaf."""
    x = _data(lib, 3, 4).requires_grad_()
    h = x * 2
    v = h[1:]
    v.retain_grad()
    t = h.t()
    t.retain_grad()
    m = h + 1
    m.retain_grad()
    m.mul_(3)
    x.retain_grad()
    base = x.clone()
    base.retain_grad()
    col = base[:, 1]
    col.mul_(5)
    loss = (v.sum() + (t * t).sum() + m.sum() + base.pow(2).sum())
    loss.backward()
    return {"v": v.grad, "t": t.grad, "m": m.grad, "x": x.grad, "base": base.grad,
            "flags": [v.retains_grad, t.retains_grad, m.retains_grad, x.retains_grad, m.is_leaf],
            "m_fn": m.grad_fn.name(), "base_fn": base.grad_fn.name(), "col_fn": col.grad_fn.name()}


def case_function_views_mark_dirty(lib):
    """A Function that modifies its input in place (``mark_dirty``) applied to a non-leaf and to a view of one, a
    Function returning a view of its input, and the error for in-place on a leaf that requires grad."""
    torch = lib

    class ClampInplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, lo):
            ctx.mark_dirty(x)
            mask = x < lo
            ctx.save_for_backward(mask)
            x.clamp_(min=lo)
            return x

        @staticmethod
        def backward(ctx, g):
            mask, = ctx.saved_tensors
            return g.masked_fill(mask, 0), None

    class FirstHalf(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.n = x.shape[0]
            return x[: x.shape[0] // 2]

        @staticmethod
        def backward(ctx, g):
            return torch.cat([g, torch.zeros_like(g)])

    x = _data(lib, 6).requires_grad_()
    y = x * 1.5
    z = ClampInplace.apply(y, 0.0)
    res = {"same": z is y, "z": z.detach().clone(), "fn": type(z.grad_fn).__name__.replace("Backward", "")}
    (z * torch.arange(6.0)).sum().backward()
    res["gx"] = x.grad
    x.grad = None
    base = x * 1.0
    view = base[2:]
    ClampInplace.apply(view, 0.2)
    (base * base).sum().backward()
    res["gx_view"] = x.grad
    res["base"] = base.detach()
    x.grad = None
    h = FirstHalf.apply(x * 2)
    (h ** 2).sum().backward()
    res["gx_half"] = x.grad
    res["h"] = h.detach()
    res["leaf_err"] = _family(lambda: ClampInplace.apply(x, 0.0))
    return res


test_script_matches_torch = script_test(globals())


# --- the fixes


def _dirty_view_program(lib):
    """A Function that modifies a view of a non-leaf in place (``mark_dirty``): PyTorch rebases the base's history
    (CopySlices over the Function's node), so the base's gradient goes through the Function's backward in the
    view's region, and bumps the versions twice (the forward's write, then the rebase)."""
    torch = lib

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.ones(6, requires_grad=True)
    b = x * 1
    v = b[2:]
    y = Double.apply(v)
    res = {"same": y is v, "versions": (b._version, v._version), "b_fn": b.grad_fn.name(),
           "b_next": [n.name() for n, _ in b.grad_fn.next_functions], "v_fn": v.grad_fn.name(), "b": b.detach()}
    (b * torch.arange(6.0)).sum().backward()
    res["gx"] = x.grad
    return res


def test_mark_dirty_view_rebases_base_history():
    assert_script_matches(_dirty_view_program)


def _vmap_staticmethod_program(lib):
    """A Function's own ``vmap`` staticmethod is what ``torch.func.vmap`` runs (also under ``vmap(grad(...))`` and
    once per level of nested vmaps, never where nothing is batched, as in ``jacrev`` and ``hessian``):
    here it counts its calls and scales its own outputs (a rule the plain forward would not give)."""
    torch = lib
    calls = []

    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2

        @staticmethod
        def vmap(info, in_dims, x):
            calls.append((info.batch_size, in_dims[0] is None))
            return Twice.apply(x) + 1, 0

    xb = torch.arange(6.0).reshape(2, 3)
    out = torch.func.vmap(Twice.apply)(xb)
    per_sample = torch.func.vmap(torch.func.grad(lambda v: Twice.apply(v).sum()))(xb)
    nested = torch.func.vmap(torch.func.vmap(Twice.apply))(xb.reshape(2, 3, 1))
    jac = torch.func.jacrev(Twice.apply)(xb[0])  # (the forward is not vmapped here: no rule call)
    hess = torch.func.hessian(lambda v: Twice.apply(v).pow(2).sum())(xb[0])  # (nor here: nothing batched)
    return {"out": out, "per_sample": per_sample, "nested": nested, "jac": jac, "hess": hess, "calls": calls}


def test_function_vmap_staticmethod_runs():
    assert_script_matches(_vmap_staticmethod_program)


def _mm_strides_program(lib):
    """``MmBackward0`` keeps its operands' strides (empty for an operand that needs no gradient)."""
    torch = lib
    x = torch.ones(3, 2, requires_grad=True)
    w = torch.ones(3, 4)
    res = []
    for y in (x.t() @ w, torch.mm(w.t(), x), x.t().mm(x), x @ w.t()[:2]):
        fn = y.grad_fn
        res.append((fn.name(), fn._saved_self_sym_strides, fn._saved_mat2_sym_strides,
                    [a for a in dir(fn) if a.startswith("_saved_")]))
    return res


def test_mm_saved_sym_strides():
    assert_script_matches(_mm_strides_program)
