"""Which ATen products PyTorch runs for a torchish op: the decompositions :class:`FlopCounterMode` counts.

PyTorch counts FLOPs at the ATen level, after its own decomposition: ``F.linear`` on a contiguous 3-d input with a
bias is one ``addmm`` on the flattened input, ``matmul`` of a 3-d by a 2-d tensor folds into one ``mm`` (or runs a
``bmm`` when it cannot fold without a copy), ``einsum`` contracts each pair of operands with a ``bmm``, the CPU's
``scaled_dot_product_attention`` runs either its flash kernel (which no formula counts) or the math path's two
``bmm``... torchish runs each of these as ONE registry op, so this module maps an op and its operands to the calls
PyTorch would make: ``(packet name, args, kwargs, out)`` with :class:`Meta` stand-ins for the tensors, for the
forward, and for the backward the calls each input's gradient costs (``mm`` backward: one ``mm`` per input that
requires grad; convolution: one ``convolution_backward`` with its ``output_mask``).

``RULES[op name](op, args, static, result) -> (forward calls, backward calls)``.
"""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from .._tensor_meta import Size


class Meta:
    """A tensor's shape and dtype, standing for an operand of an ATen call that torchish never makes."""

    __slots__ = ("shape", "dtype", "requires_grad")

    def __init__(self, shape, dtype=None, requires_grad=False):
        self.shape = Size(int(s) for s in shape)
        self.dtype = dtype
        self.requires_grad = requires_grad

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)

    def __repr__(self):
        return f"Meta({list(self.shape)})"


def _m(t):
    return None if t is None else Meta(t.shape, getattr(t, "dtype", None))


def _rg(t):
    return isinstance(t, (Tensor, Meta)) and t.requires_grad


def mm(m, k, n):
    return ("mm", (Meta((m, k)), Meta((k, n))), {}, Meta((m, n)))


def bmm(b, m, k, n):
    return ("bmm", (Meta((b, m, k)), Meta((b, k, n))), {}, Meta((b, m, n)))


def _product_backward(kind, b, m, k, n, a_rg, b_rg):
    """The products the backward of one ``mm`` (``b`` None) or ``bmm`` runs: one per operand that needs a gradient
    (``grad_a = g @ B^T``, ``grad_b = A^T @ g``)."""
    out = []
    if a_rg:
        out.append(mm(m, n, k) if kind == "mm" else bmm(b, m, n, k))
    if b_rg:
        out.append(mm(k, m, n) if kind == "mm" else bmm(b, k, m, n))
    return out


# ------------------------------------------------------------------------------------------------------------
# matmul and its kin


def _foldable_strides(t):
    """``t.view(-1, t.size(-1))`` needs no copy: each of the leading dims is contiguous with the next."""
    shape, strides = tuple(t.shape), tuple(t.stride())
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _should_fold(a, b, b_rg):
    """PyTorch's ``should_fold`` (``a``/``b`` may be Meta stand-ins of the operands only for the shape checks)."""
    larger = a if a.ndim >= b.ndim else b
    smaller = b if larger is a else a
    if not (larger.ndim >= 3 and smaller.ndim <= 2):
        return False
    if (b_rg if smaller is b else _rg(a)):
        return True
    if a.ndim == 2:
        return False
    if larger.numel() == 0:
        return True
    return _foldable_strides(larger) if isinstance(larger, Tensor) else True


def matmul_calls(a, b, a_rg, b_rg):
    """PyTorch's ``matmul`` dispatch (``dot``/``mv``: not counted; ``mm``; fold into one ``mm``; batched ``bmm``) for
    operands ``a``/``b`` (Tensors or Meta): (forward calls, backward calls)."""
    da, db = a.ndim, b.ndim
    sa, sb = tuple(a.shape), tuple(b.shape)
    if da == 1 and db == 1 or da == 2 and db == 1:
        return [], []
    if da <= 2 and db == 2:
        m, k = (1, sa[0]) if da == 1 else sa
        n = sb[1]
        return [mm(m, k, n)], _product_backward("mm", None, m, k, n, a_rg, b_rg)
    if _should_fold(a, b, b_rg):
        if db > da:  # PyTorch folds b^T and multiplies by a^T: (b^T folded) @ a^T
            if da == 1:
                return [], []
            k = sb[-2]
            m = math.prod(sb[:-2]) * sb[-1]
            return [mm(m, k, sa[0])], _product_backward("mm", None, m, k, sa[0], b_rg, a_rg)
        if db == 1:
            return [], []
        m, k, n = math.prod(sa[:-1]), sa[-1], sb[-1]
        return [mm(m, k, n)], _product_backward("mm", None, m, k, n, a_rg, b_rg)
    n = sa[-2] if da > 1 else 1
    k = sa[-1]
    p = sb[-1] if db > 1 else 1
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2] if db > 1 else ()))
    bt = math.prod(batch)
    return [bmm(bt, n, k, p)], _product_backward("bmm", bt, n, k, p, a_rg, b_rg)


def _matmul(op, args, st, res):
    a, b = args
    return matmul_calls(a, b, _rg(a), _rg(b))


def _tensordot(op, args, st, res):
    a, b = args
    axes = st["axes"]
    if isinstance(axes, int):
        da = tuple(range(a.ndim - axes, a.ndim))
    else:
        da = tuple(d % a.ndim if a.ndim else d for d in (axes[0] if isinstance(axes[0], (tuple, list)) else
                                                          (axes[0],)))
    k = math.prod(a.shape[d] for d in da)
    m = a.numel() // k if k else 0
    n = b.numel() // k if k else 0
    return [mm(m, k, n)], _product_backward("mm", None, m, k, n, _rg(a), _rg(b))


def _inner(op, args, st, res):
    a, b = args
    if a.ndim == 1 and b.ndim == 1:
        return [], []  # (a dot)
    k = a.shape[-1]
    m, n = a.numel() // max(k, 1), b.numel() // max(k, 1)
    return [mm(m, k, n)], _product_backward("mm", None, m, k, n, _rg(a), _rg(b))


def _add_products(op, args, st, res):
    """addmm / baddbmm (counted), addbmm (its backward's ``bmm`` only), addmv and addr (never counted). The in-place
    forms (``addmm_``) are packets of their own, with no formula: only their backward counts."""
    from ..ops.inplace import writing
    c, a, b = args[:3]
    name = op.name
    inplace = isinstance(c, Tensor) and writing(c)
    if name == "addmm":
        m, k = a.shape
        n = b.shape[1]
        fwd = [] if inplace else [("addmm", (_m(c), _m(a), _m(b)), {}, _m(res))]
        return fwd, _product_backward("mm", None, m, k, n, _rg(a), _rg(b))
    if name in ("baddbmm", "addbmm"):
        bt, m, k = a.shape
        n = b.shape[2]
        fwd = [("baddbmm", (_m(c), _m(a), _m(b)), {}, _m(res))] if name == "baddbmm" and not inplace else []
        return fwd, _product_backward("bmm", bt, m, k, n, _rg(a), _rg(b))
    return [], []


def _chain_order(dims):
    """PyTorch's multi_dot order for matrices ``dims[i] x dims[i + 1]``: as a nested pair of index ranges."""
    n = len(dims) - 1
    if n == 3:
        a, b, c, d = dims
        return ((0, 0), ((1, 1), (2, 2))) if (a * c) * (b + d) > (b * d) * (a + c) else (((0, 0), (1, 1)), (2, 2))
    from ..ops.contraction_graph import chain_split_points
    split = chain_split_points(dims)

    def nest(i, j):
        return (i, i) if i == j else (nest(i, split[i][j]), nest(split[i][j] + 1, j))
    return nest(0, n - 1)


def _multi_dot(op, args, st, res):
    """linalg.multi_dot: one ``mm`` per product, in PyTorch's order (a 1-d first/last operand as a row/column)."""
    shapes = [tuple(t.shape) for t in args]
    shapes[0] = (1,) + shapes[0] if len(shapes[0]) == 1 else shapes[0]
    shapes[-1] = shapes[-1] + (1,) if len(shapes[-1]) == 1 else shapes[-1]
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    fwd, bwd = [], []

    def run(node):  # -> (rows, cols, requires grad)
        if node[0] == node[1] and isinstance(node[0], int):
            s = shapes[node[0]]
            return s[0], s[1], _rg(args[node[0]])
        (m, k, l_rg), (_, n, r_rg) = run(node[0]), run(node[1])
        fwd.append(mm(m, k, n))
        bwd.extend(_product_backward("mm", None, m, k, n, l_rg, r_rg))
        return m, n, l_rg or r_rg
    if len(shapes) == 2:
        run(((0, 0), (1, 1)))
    else:
        run(_chain_order(dims))
    return fwd, bwd


def _scaled_mm(op, args, st, res):
    a, b, sa, sb, bias = args[:5]
    return [("_scaled_mm", (_m(a), _m(b), _m(sa), _m(sb), _m(bias)), {}, _m(res))], []


def _cdist_mm(op, args, st, res):
    """cdist by matrix products (p=2, more than 25 rows): PyTorch's forward kernel (_euclidean_dist) has no formula;
    its backward's two products (``ratio @ x2``, ``ratio^T @ x1`` over the flattened batch) count, both whichever
    input needs the gradient."""
    x1, x2 = args
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    bt, (P, M), R = math.prod(batch), x1.shape[-2:], x2.shape[-2]
    if x1.ndim == 2 and x2.ndim == 2:
        return [], [mm(P, R, M), mm(R, P, M)]
    return [], [bmm(bt, P, R, M), bmm(bt, R, P, M)]


# ------------------------------------------------------------------------------------------------------------
# linear


def _linear_kinds():
    from ..nn._functional import linear as _linear
    return {id(op): kind for kind, op in _linear._BY_KIND.items()}


_LINEAR_KIND: dict = {}


def linear_calls(x, w_shape, addmm, x_rg, w_rg):
    """``F.linear(x, w)``: one ``addmm`` on the input flattened to 2-d (``addmm``: at::linear's path for a 2-d input,
    or a contiguous one, with a bias), else ``matmul(x, w.t())``."""
    n, k = w_shape
    if addmm:
        m = x.numel() // k if k else 0
        fwd = ("addmm", (Meta((n,)), Meta((m, k)), Meta((k, n))), {}, Meta((m, n)))
        return [fwd], _product_backward("mm", None, m, k, n, x_rg, w_rg)
    return matmul_calls(x, Meta((k, n)), x_rg, w_rg)  # (w.t() is 2-d: its strides never decide a fold)


def _linear(op, args, st, res):
    if not _LINEAR_KIND:
        _LINEAR_KIND.update(_linear_kinds())
    x, w, bias = args
    kind = _LINEAR_KIND.get(id(op), "addmm" if bias is not None else "mm")
    if kind in ("addmm", "view"):
        (name, (_, a, b), kw, out), = linear_calls(x, tuple(w.shape), True, _rg(x), _rg(w))[0]
        fwd = (name, (_m(bias), Meta(a.shape, x.dtype), Meta(b.shape, w.dtype)), kw, Meta(out.shape, res.dtype))
        return [fwd], linear_calls(x, tuple(w.shape), True, _rg(x), _rg(w))[1]
    return linear_calls(x, tuple(w.shape), False, _rg(x), _rg(w))


# ------------------------------------------------------------------------------------------------------------
# recurrent layers


def _contiguous(t):
    return not isinstance(t, Tensor) or t.is_contiguous()


def _recurrent(op, args, st, res):
    """nn.RNN / GRU (and LSTM where PyTorch does not run oneDNN's kernel) on padded input, as PyTorch's CPU layers:
    per layer and direction the input projection of every step at once (``F.linear`` on the 3-d input), then one
    linear of the hidden state per step; the backward's products for what requires grad."""
    if op.grad_name != "StackBackward0":
        return [], []  # (oneDNN's LSTM kernel and packed sequences: not counted here)
    x, h0 = args[0], args[1]
    weights = args[7:]
    gates = {"lstm": 4, "gru": 3}.get(st["mode"], 1)
    H, out_size, dirs = st["hidden_size"], st["out_size"], st["num_dirs"]
    per = 2 + 2 * st["has_bias"] + st["has_proj"]
    T, B = x.shape[0], x.shape[1]
    fwd, bwd = [], []
    layer_in, in_rg = x, _rg(x)
    chain_rg = in_rg or _rg(h0) or any(_rg(w) for w in weights)
    for layer in range(st["num_layers"]):
        for d in range(dirs):
            group = weights[(layer * dirs + d) * per:(layer * dirs + d + 1) * per]
            w_ih, w_hh, w_hr = group[0], group[1], group[-1] if st["has_proj"] else None
            f, b = linear_calls(layer_in, (gates * H, layer_in.shape[-1]), st["has_bias"] and _contiguous(layer_in),
                                in_rg, _rg(w_ih))
            fwd += f
            bwd += b
            for t in range(T):
                f, b = linear_calls(Meta((B, out_size)), (gates * H, out_size), st["has_bias"],
                                    chain_rg if t else _rg(h0), _rg(w_hh))
                fwd += f
                bwd += b
                if w_hr is not None:  # (LSTM's projection of each step's hidden state: matmul(h, w_hr.t()))
                    fwd.append(mm(B, H, out_size))
                    bwd += _product_backward("mm", None, B, H, out_size, chain_rg, _rg(w_hr))
        layer_in, in_rg = Meta((T, B, dirs * out_size)), chain_rg
    return fwd, bwd


def _cell(op, args, st, res):
    """nn.RNNCell / GRUCell / LSTMCell: a linear of the hidden state, then one of the input (2-d: addmm, mm
    without biases)."""
    x, h, _, w_ih, w_hh, b_ih = args[:6]
    fwd, bwd = [], []
    for t, w in ((h, w_hh), (x, w_ih)):
        f, b = linear_calls(t, tuple(w.shape), b_ih is not None, _rg(t), _rg(w))
        fwd += f
        bwd += b
    return fwd, bwd


# ------------------------------------------------------------------------------------------------------------
# convolution


def _conv(op, args, st, res):
    x, w, bias = args
    batched = st.get("batched", True)
    xs = tuple(x.shape) if batched else (1,) + tuple(x.shape)
    os_ = tuple(res.shape) if batched else (1,) + tuple(res.shape)
    transposed = bool(st.get("transposed", False))
    nd = len(xs) - 2
    dilation = list(st.get("dilation", (1,) * nd))
    groups = int(st.get("groups", 1))
    if transposed:
        stride = list(st.get("lhs_dilation", (1,) * nd))
        kernel = w.shape[2:]
        padding = [d * (k - 1) - lo for (lo, _), k, d in zip(st["pads"], kernel, dilation)]
        out_pad = [hi - lo for lo, hi in st["pads"]]
    else:
        stride = list(st.get("stride", (1,) * nd))
        padding = [lo for lo, _ in st["pads"]]
        out_pad = [0] * nd
    bias_m = _m(bias)
    fwd = ("convolution", (Meta(xs, x.dtype), _m(w), bias_m, stride, padding, dilation, transposed, out_pad,
                           groups), {}, Meta(os_, res.dtype))
    mask = [_rg(x), _rg(w), _rg(bias)]
    if not any(mask):
        return [fwd], []
    bias_sizes = [int(bias.shape[0])] if bias is not None else [0]
    outs = (Meta(xs) if mask[0] else None, _m(w) if mask[1] else None, bias_m if mask[2] else None)
    bwd = ("convolution_backward", (Meta(os_), Meta(xs), _m(w), bias_sizes, stride, padding, dilation, transposed,
                                    out_pad, groups, mask), {}, outs)
    return [fwd], [bwd]


# ------------------------------------------------------------------------------------------------------------
# attention


def _attention_products(bt, L, S, E, Ev, q_rg, k_rg, v_rg, first="bmm", mm_only=False):
    """The math attention path: ``scores = q @ k^T`` (``first``: ``bmm`` or ``baddbmm`` with a mask), then
    ``scores @ v``; the backward's products for the inputs that need gradients."""
    def prod(b, m, k, n):
        return mm(m, k, n) if mm_only else bmm(b, m, k, n)
    scores = prod(bt, L, E, S)
    if first == "baddbmm":
        scores = ("baddbmm", (Meta((bt, L, S)),) + scores[1], {}, scores[3])
    fwd = [scores, prod(bt, L, S, Ev)]
    bwd = []
    if v_rg:
        bwd.append(prod(bt, S, L, Ev))  # attn^T @ grad
    if q_rg or k_rg:
        bwd.append(prod(bt, L, Ev, S))  # grad @ v^T
    if q_rg:
        bwd.append(prod(bt, L, S, E))  # grad_scores @ k
    if k_rg:
        bwd.append(prod(bt, E, L, S))  # q^T @ grad_scores
    return fwd, bwd


def _sdpa(op, args, st, res):
    q, k, v = args[:3]
    if "FlashAttentionForCpu" in op.grad_name:
        return [], []  # (PyTorch has no formula for _scaled_dot_product_flash_attention_for_cpu)
    L, E = q.shape[-2], q.shape[-1]
    S, Ev = k.shape[-2], v.shape[-1]
    if q.ndim == 2 and k.ndim == 2:
        return _attention_products(1, L, S, E, Ev, _rg(q), _rg(k), _rg(v), mm_only=True)
    kb = list(k.shape[:-2])
    if st.get("rep", 1) > 1 and kb:
        kb[-1] *= st["rep"]
    bt = math.prod(np.broadcast_shapes(tuple(q.shape[:-2]), tuple(kb)))
    return _attention_products(bt, L, S, E, Ev, _rg(q), _rg(k), _rg(v))


def _mha(op, args, st, res):
    """multi_head_attention_forward's core on projected (L, B, E) / (S, B, E) tensors: with ``need_weights`` its
    explicit ``bmm`` (``baddbmm`` when a mask is merged in) and ``bmm``; else scaled_dot_product_attention (the CPU
    flash kernel, not counted, or its math path)."""
    q, k, v, bias_k, bias_v, attn_mask, kpm = args[:7]
    if not st["need_weights"] and st.get("flash"):
        return [], []
    L, B, E = q.shape
    heads = st["heads"]
    hd = E // heads
    S = k.shape[0] + (bias_k is not None) + bool(st.get("zero_attn"))
    masked = st["need_weights"] and (attn_mask is not None or kpm is not None)
    return _attention_products(B * heads, L, S, hd, hd, _rg(q), _rg(k) or _rg(bias_k), _rg(v) or _rg(bias_v),
                               first="baddbmm" if masked else "bmm")


# ------------------------------------------------------------------------------------------------------------
# einsum


def _contraction_path(specs, shapes, out):
    """The pairs PyTorch's einsum contracts, in order: opt_einsum's path for three or more operands (where PyTorch
    asks it), else left to right."""
    from .. import backends
    n = len(specs)
    if n >= 3 and backends.opt_einsum.enabled:
        try:
            import opt_einsum
            eq = ",".join(specs) + "->" + out
            path, _ = opt_einsum.contract_path(eq, *shapes, shapes=True, optimize=backends.opt_einsum.strategy)
            return [tuple(sorted(p)) for p in path]
        except Exception:  # noqa: BLE001 - (opt_einsum missing or refusing: PyTorch's own order)
            pass
    return [(0, 1)] * (n - 1)


def _einsum(op, args, st, res):
    lhs, out = st["eq"].split("->")
    specs = lhs.split(",")
    shapes = [tuple(s) for s in st["shapes"]]
    if len(specs) < 2:
        return [], []
    ops = [({c: s for c, s in zip(spec, shape)}, _rg(a)) for spec, shape, a in zip(specs, shapes, args)]
    fwd, bwd = [], []
    for i, j in _contraction_path(specs, shapes, out):
        (left, l_rg), (right, r_rg) = ops[i], ops[j]
        rest = [o for t, o in enumerate(ops) if t not in (i, j)]
        kept = set(out).union(*(o[0] for o in rest)) if rest else set(out)
        labels = list(dict.fromkeys(list(left) + list(right)))
        summed = [c for c in labels if c not in kept]
        joined = {c: max(left.get(c, 1), right.get(c, 1)) for c in labels if c in kept}
        if summed:  # (no label summed: PyTorch multiplies, which no formula counts)
            bt = m = k = n = 1
            for c in labels:
                sl, sr = left.get(c, 1) != 1, right.get(c, 1) != 1
                if c in summed:
                    k *= left[c] if sl and sr else 1
                elif sl and sr:
                    bt *= left[c]
                elif sl:
                    m *= left[c]
                elif sr:
                    n *= right[c]
            fwd.append(bmm(bt, m, k, n))
            bwd.extend(_product_backward("bmm", bt, m, k, n, l_rg, r_rg))
        ops = rest + [(joined, l_rg or r_rg)]
    return fwd, bwd


RULES = {
    "linear": _linear, "linear_nobias": _linear,
    "tensordot": _tensordot, "inner": _inner,
    "addmm": _add_products, "baddbmm": _add_products, "addbmm": _add_products,
    "scaled_mm": _scaled_mm, "linalg_multi_dot": _multi_dot, "cdist_mm": _cdist_mm,
    "convolution": _conv,
    "scaled_dot_product_attention": _sdpa, "scaled_dot_product_attention_copied_value": _sdpa,
    "scaled_dot_product_attention_flash_reduced": _sdpa,
    "multi_head_attention": _mha,
    "rnn_tanh": _recurrent, "rnn_relu": _recurrent, "gru": _recurrent, "lstm": _recurrent,
    "rnn_tanh_cell": _cell, "rnn_relu_cell": _cell, "gru_cell": _cell, "lstm_cell": _cell,
}


def rule(name):
    """The rule for the op ``name`` (None: PyTorch counts nothing for it)."""
    r = RULES.get(name)
    if r is None:
        if name.endswith("_backward"):  # (a VJP run as an op, create_graph=True: the node hook counted it)
            return None
        if name.startswith("matmul_"):
            r = _matmul
        elif name.startswith("tensordot"):
            r = _tensordot
        elif name.startswith("einsum_"):
            r = _einsum
        else:
            return None
        RULES[name] = r
    return r


def backward_of(node, needed=None):
    """The backward calls of a node recorded while no FlopCounterMode was active (its forward ran outside one), or
    of one whose backward computes fewer gradients than its inputs require (``backward(inputs=...)``, ``grad()``:
    ``needed`` holds the ids of the nodes a gradient must reach): derived from what the node keeps, its inputs'
    shapes and which of them get a gradient; strides are not kept, so a matmul is taken to fold wherever PyTorch's
    shape rules allow."""
    op = getattr(node, "op", None)
    r = rule(op.name) if op is not None else None
    if r is None:
        return []
    mask = [m and (needed is None or (e is not None and id(e[0]) in needed))
            for m, e in zip(node.mask, node.next_edges)]
    args = tuple(Meta(v.shape, v.dtype, m) if hasattr(v, "shape") else v for v, m in zip(node.vals, mask))
    shape, dtype = node.out_meta[0]
    return r(op, args, dict(node.static), Meta(shape, dtype))[1]
