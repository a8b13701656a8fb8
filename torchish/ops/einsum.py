"""``torchish.einsum``: equations (with ``...`` and the sublist form), PyTorch's operand checks and errors, the
``grad_fn`` names of PyTorch's decomposition (a view, a product, a sum or a permute), the result dtypes, errors and
strides of its pairwise contraction (``sumproduct_pair``: a ``mul`` or a ``bmm``), at the matmul precision of
``torchish/_precision.py``."""
from __future__ import annotations

import jax.numpy as jnp

from .. import _dtype, _precision
from .._tensor import Tensor
from . import registry as _registry
from .contraction_graph import records_graph
from .einsum_graph import einsum_graph
from .inplace import contiguous_strides, view_strides
from .out_layout import output_strides
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public


def _einsum_fwd(*xs, eq, shapes, dtype=None):
    if dtype is not None:
        xs = [x.astype(dtype) for x in xs]
    xs = [jnp.broadcast_to(x, s) if x.shape != s else x for x, s in zip(xs, shapes)]
    return jnp.einsum(eq, *xs, precision=_precision.matmul())


_EINSUM = {n: defop(f"einsum_{n}", _einsum_fwd, grad_name=n)
           for n in ("ViewBackward0", "MulBackward0", "SumBackward1")}


def _einsum_sublist(args):
    """``einsum(op1, [0, 1], op2, [1, 2], [0, 2])`` -> ('ab,bc->ac', operands)."""
    def letters(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < 52:
                out.append("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[s])
            elif isinstance(s, (int, float)) and not 0 <= s < 52:  # (PyTorch's Python wrapper parses them)
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
            else:
                raise TypeError(f"einsum(): subscripts must be integers or Ellipsis, not {type(s).__name__}")
        return "".join(out)
    pairs, out = (args[:-1], args[-1]) if len(args) % 2 else (args, None)
    ops, terms = list(pairs[0::2]), list(pairs[1::2])
    lhs = ",".join(letters(t) for t in terms)
    return (lhs if out is None else lhs + "->" + letters(out)), ops


def _parse_term(term, offset, equation):
    labels, ell, i = [], False, 0
    while i < len(term):
        ch = term[i]
        if ch == "." and term[i:i + 3] == "..." and not ell:
            labels.append("...")
            ell = True
            i += 3
            continue
        if not ch.isascii() or not ch.isalpha():
            raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
        labels.append(ch)
        i += 1
    return labels


def _einsum_plan(equation, operands):
    """Check the equation against the operands as PyTorch does; return (jnp equation, broadcast shapes, out)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(operands) > len(terms):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(operands) < len(terms):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    parsed, offset = [], 0
    for t in terms:
        parsed.append(_parse_term(t, offset, eq))
        offset += len(t) + 1
    sizes, ell_shape, ell_used = {}, (), False
    for k, (labels, x) in enumerate(zip(parsed, operands)):
        shape = tuple(x.shape)
        n_named = len([lb for lb in labels if lb != "..."])
        if "..." not in labels and n_named != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n_named}) does not match the "
                               f"number of dimensions ({len(shape)}) for operand {k} and no ellipsis was given")
        if n_named > len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n_named}) is more than the "
                               f"number of dimensions ({len(shape)}) for operand {k}")
        seen = {}
        dim = 0
        for lb in labels:
            if lb == "...":
                n_ell = len(shape) - n_named
                es = shape[dim:dim + n_ell]
                ell_used = True
                pa, pb = (1,) * (len(es) - len(ell_shape)) + ell_shape, (1,) * (len(ell_shape) - len(es)) + es
                for j, (p, q) in enumerate(zip(pa, pb)):
                    if p != q and 1 not in (p, q):
                        raise RuntimeError(f"einsum(): dimension {j} covered by ellipsis in operand {k}has size {q} "
                                           f"which does not broadcast with previously seen ellipsis with size {p} "
                                           "for the respective dimension")
                ell_shape = tuple(q if p == 1 else p for p, q in zip(pa, pb))  # 1 broadcasts (also to 0)
                dim += n_ell
                continue
            s = shape[dim]
            if lb in seen and seen[lb] != s:
                raise RuntimeError(f"einsum(): subscript {lb} is repeated for operand {k} but the sizes don't match, "
                                   f"{s} != {seen[lb]}")
            seen[lb] = s
            prev = sizes.get(lb)
            if prev is not None and prev != s and 1 not in (prev, s):
                raise RuntimeError(f"einsum(): subscript {lb} has size {s} for operand {k} which does not broadcast "
                                   f"with previously seen size {prev}")
            sizes[lb] = s if prev is None or prev == 1 else prev
            dim += 1
    counts = {}
    for labels in parsed:
        for lb in labels:
            counts[lb] = counts.get(lb, 0) + 1
    if arrow:
        out = _parse_term(rhs, len(lhs) + 2, eq)
        for lb in out:
            if lb != "..." and lb not in sizes:
                raise RuntimeError(f"einsum(): output subscript {lb} does not appear in the equation for any input "
                                   "operand")
            if out.count(lb) > 1:
                raise RuntimeError(f"einsum(): output subscript {lb} appears more than once in the output")
    else:
        out = (["..."] if ell_used else []) + sorted(lb for lb, c in counts.items() if c == 1 and lb != "...")
    # spell the ellipsis dims with unused letters, right-aligned, and broadcast size-1 dims to the full sizes
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in sizes]
    ell_letters = free[:len(ell_shape)]
    sizes.update(zip(ell_letters, ell_shape))

    def spell(labels, n_ell):
        return "".join("".join(ell_letters[len(ell_letters) - n_ell:]) if lb == "..." else lb for lb in labels)

    specs, shapes = [], []
    for labels, x in zip(parsed, operands):
        n_ell = x.ndim - len([lb for lb in labels if lb != "..."])
        spec = spell(labels, n_ell)
        specs.append(spec)
        shapes.append(tuple(sizes[c] for c in spec))
    out_spec = spell(out, len(ell_letters))
    return ",".join(specs) + "->" + out_spec, tuple(shapes), specs, out_spec


def _sum_dtype(d):
    return d if d.is_floating_point or d.is_complex else _dtype.int64


def _einsum_dtype(specs, out_spec, operands):
    """The result dtype of PyTorch's einsum, which contracts the operands pairwise from the left (the order it
    takes without an opt_einsum path) and PyTorch's errors: a pair with no label to contract is a ``mul`` (dtypes
    promote), one with a label of size > 1 in both to contract is a ``bmm`` (dtypes must match; not for bool); a
    label left in one operand alone is summed there first (integers and bool sum to int64), as is every
    contraction label of a single operand."""
    contract = [c for c in dict.fromkeys("".join(specs)) if c not in out_spec]
    if len(operands) == 1:
        return _sum_dtype(operands[0].dtype) if contract else operands[0].dtype
    big = [{c for c, n in zip(spec, x.shape) if n != 1} for spec, x in zip(specs, operands)]
    counts = {c: sum(c in b for b in big) for c in contract}
    ops = [(x.dtype, b) for x, b in zip(operands, big)]
    while len(ops) > 1:
        (da, ba), (db, bb) = ops[0], ops[1]
        summed, a_sum, b_sum = set(), False, False
        for c in contract:
            if c in ba and c in bb:
                counts[c] -= 1
                if counts[c] == 1:
                    summed.add(c)
                    counts[c] = 0
            elif counts[c] == 1 and (c in ba or c in bb):
                a_sum, b_sum = a_sum or c in ba, b_sum or c not in ba
                (ba if c in ba else bb).discard(c)
                counts[c] = 0
        da, db = (_sum_dtype(da) if a_sum else da), (_sum_dtype(db) if b_sum else db)
        if summed:
            if da is _dtype.bool:
                raise NotImplementedError('"bmm" not implemented for \'Bool\'')
            if da is not db:
                raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(da)} but found "
                                   f"{_dtype.scalar_type_name(db)}")
        ops[:2] = [(da if summed else _dtype.promote_types(da, db), (ba | bb) - summed)]
    return ops[0][0]


def _einsum_view(x, spec, out_spec):
    """One operand and no label to sum: PyTorch's einsum returns a view of it, a diagonal (moved to the label's first
    place) for each repeated label, then the permute to the output's order."""
    labels = []
    for c in spec:
        if c in labels:
            prev = labels.index(c)
            x = x.diagonal(0, prev, len(labels)).movedim(-1, prev)
        else:
            labels.append(c)
    return x.permute([labels.index(c) for c in out_spec])


def _einsum_strides(specs, out_spec, operands):
    """The strides of PyTorch's result for two operands (``sumproduct_pair`` over the operands permuted to the output's
    labels then the contracted ones, a missing label a size-1 dim of stride 1, a repeated one its diagonal): a ``mul``
    where no label of size > 1 in both is contracted (TensorIterator's strides over those views), else a view of the
    contiguous ``bmm`` result laid out (dims in both, dims of the left only, dims of the right only), the last two
    swapped where the right's all come first; then viewed without the contracted dims (which sets the strides of
    size-1 dims). None where contiguous, for three or more operands, and for a ``mul`` after a sum over a label of
    one operand alone."""
    if len(operands) != 2:
        return None
    contract = [c for c in dict.fromkeys("".join(specs)) if c not in out_spec]
    order = list(out_spec) + contract
    sizes = [dict(zip(spec, x.shape)) for spec, x in zip(specs, operands)]
    big = [{c for c, n in sz.items() if n != 1} for sz in sizes]
    summed = {c for c in contract if c in big[0] and c in big[1]}
    full = [1 if c in contract else sizes[0].get(c, 1) if sizes[0].get(c, 1) != 1 else sizes[1].get(c, 1)
            for c in order]
    if not summed:
        if any(c in big[0] or c in big[1] for c in contract):
            return None
        views = []
        for spec, x in zip(specs, operands):
            st = {}
            for c, n in zip(spec, x.stride()):
                st[c] = st.get(c, 0) + n
            views.append((tuple(sizes[len(views)].get(c, 1) for c in order), tuple(st.get(c, 1) for c in order)))
        strides = output_strides(views, full) or contiguous_strides(tuple(full))
    else:
        lro, lo, ro = [], [], []
        for i, c in enumerate(order):
            if c in summed:
                continue
            if c in contract:  # summed beforehand in the one operand that has it: size 1 in both now
                ro.append(i)
            elif c in big[0]:
                (lro if c in big[1] else lo).append(i)
            else:
                ro.append(i)
        if lo and ro and ro[-1] < lo[0]:
            lo, ro = ro, lo
        mem = lro + lo + [i for i, c in enumerate(order) if c in summed] + ro
        strides = dict(zip(mem, contiguous_strides(tuple(full[i] for i in mem))))
        strides = tuple(strides[i] for i in range(len(order)))
    if contract:
        strides = view_strides(full, strides, full[:len(out_spec)])  # the view that drops the contracted dims
    return strides


def _einsum_grad_name(specs, out_spec):
    if len(specs) == 1:
        return "SumBackward1"
    summed = set("".join(specs)) - set(out_spec)
    return "ViewBackward0" if summed else "MulBackward0"


def _path_error(equation, operands):
    """Raise the ValueError of opt_einsum's ``contract_path`` where PyTorch's would: with three or more operands and
    ``backends.opt_einsum.enabled``, PyTorch's einsum asks opt_einsum (installed with JAX) for a contraction order
    before its own checks, and opt_einsum's parser refuses a bad equation first, in its words ("Size of label 'i'
    for operand 1 (2) does not match previous terms (3)."). Called where torchish's own check failed, so a valid
    call never pays for the path search."""
    from .. import backends
    if len(operands) < 3 or not backends.opt_einsum.enabled:
        return
    try:
        import opt_einsum
    except ImportError:  # (PyTorch without opt_einsum runs its own checks only)
        return
    try:
        opt_einsum.contract_path(equation, *[tuple(x.shape) for x in operands], shapes=True, optimize="greedy")
    except ValueError as refused:
        raise refused from None
    except Exception:  # noqa: BLE001 - opt_einsum took the equation otherwise: torchish's own error stands
        return


def _opt_path(equation, operands):
    """The contraction order PyTorch's wrapper asks opt_einsum for (three or more operands), flattened."""
    from .. import backends
    if len(operands) < 3 or not backends.opt_einsum.enabled:
        return None
    try:
        import opt_einsum
    except ImportError:  # (PyTorch without opt_einsum contracts from the left)
        return None
    pairs = opt_einsum.contract_path(equation, *[tuple(x.shape) for x in operands], shapes=True,
                                     optimize=backends.opt_einsum.strategy)[0]
    return [i for pair in pairs for i in pair]


def einsum(*args):
    """Einstein summation, with ``...`` broadcasting, size-1 broadcasting of labelled dims, implicit output (labels
    seen once, in alphabetical order) and the sublist format ``einsum(a, [0, 1], b, [1, 2])``.

    Example:
        >>> a, b = torchish.ones(2, 3), torchish.ones(3, 4)
        >>> torchish.einsum("ij,jk->ik", a, b).shape
        torch.Size([2, 4])
    """
    if len(args) < 2:  # (PyTorch's Python wrapper)
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                        "operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):  # the old one-list form: PyTorch
            return einsum(equation, *operands[0])  # calls itself again (an empty list: the ValueError above)
    else:
        equation, operands = _einsum_sublist(args)
    for i, x in enumerate(operands):
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum(): argument 'operands[{i}]' must be Tensor, not {type(x).__name__}")
    if _registry.autocast_hook is not None:  # one op in PyTorch's CUDA list (the CPU casts per plan: see amp.policy)
        operands = _registry.autocast_hook("einsum", tuple(operands))
    try:
        eq, shapes, specs, out_spec = _einsum_plan(equation, operands)
    except RuntimeError:
        _path_error(equation, operands)
        raise
    if len(operands) == 1 and set(specs[0]) == set(out_spec):
        return _einsum_view(operands[0], specs[0], out_spec)
    if records_graph(operands):  # (ATen's shortcut for empty operands returns zeros: the fused kernel)
        return einsum_graph(equation, operands, _opt_path(equation, operands))
    dtype = _einsum_dtype(specs, out_spec, operands)
    op = _EINSUM[_einsum_grad_name(specs, out_spec)]
    cast = None if all(x.dtype is dtype for x in operands) else dtype.np
    out = apply(op, tuple(operands), eq=eq, shapes=shapes, dtype=cast)
    strides = _einsum_strides(specs, out_spec, operands)
    if strides is not None and strides != contiguous_strides(tuple(out.shape)):
        out._layout = (tuple(out.shape), strides, 0)
    return out


_public("einsum", einsum, method=False)
