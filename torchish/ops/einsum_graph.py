"""``einsum`` where autograd records: ATen's einsum op by op, so ``grad_fn`` and the graph below it are PyTorch's.

ATen aligns every operand to one layout (the output's labels, then the contracted ones, in label order: capitals
first): a diagonal moved into place for each repeated label (``DiagonalBackward0``/``PermuteBackward0``), a size-1
dim unsqueezed for each missing label (``UnsqueezeBackward0``), then one ``permute`` (``PermuteBackward0``, even an
identity one). It contracts the operands pairwise (from the left, or in opt_einsum's order for three or more):
labels left in one operand alone are summed there first (``SumBackward1``), then ``sumproduct_pair`` multiplies
(``MulBackward0``) where nothing is contracted, else permutes both to (batch, kept, contracted) and reshapes them
for one ``bmm``, whose result is viewed and permuted back. Finally the contracted dims are dropped by a ``view`` (a
single operand: ``sum``).

The steps are the Tensor methods themselves (``unsqueeze``, ``diagonal``, ``permute``, ``sum``, ``mul``,
``reshape``, ``bmm``, ``view``): their values, dtypes and gradients are theirs.
"""
from __future__ import annotations


def _terms(equation):
    """The labels of each operand and of the output (None when implicit): a label is a letter or ``...``."""
    def labels(term):
        return [t for part in term.split("...") for t in (*part, "...")][:-1] if "..." in term else list(term)
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    return [labels(t) for t in lhs.split(",")], (labels(rhs) if arrow else None)


def _layout(terms, out, ndims):
    """ATen's index of each label in the aligned layout, where the ellipsis dims start, the number of output dims
    and of all dims, and the number of ellipsis dims."""
    ell = max([n - len(t) + 1 for t, n in zip(terms, ndims) if "..." in t], default=0)
    seen = sorted({lb for t in terms for lb in t if lb != "..."})
    counts = {lb: sum(t.count(lb) for t in terms) for lb in seen}
    index, n, ell_at, found = {}, 0, 0, False
    if out is None:
        n, found = ell, True
        for lb in seen:
            if counts[lb] == 1:
                index[lb], n = n, n + 1
    else:
        for lb in out:
            if lb == "...":
                ell_at, n, found = n, n + ell, True
            else:
                index[lb], n = n, n + 1
    n_out = n
    if not found:
        ell_at, n = n, n + ell
    for lb in seen:
        if lb not in index:
            index[lb], n = n, n + 1
    return index, ell_at, n_out, n, ell


def _align(x, labels, index, ell_at, n, ell, counts):
    """One operand in the aligned layout (ATen's per-operand loop); ``counts[i]`` counts the operands whose dim
    ``i`` has a size other than 1."""
    perm, dim, n_ell = [-1] * n, 0, x.ndim - len(labels) + 1
    for lb in labels:
        if lb == "...":
            for j in range(ell - n_ell, ell):
                counts[ell_at + j] += x.shape[dim] != 1
                perm[ell_at + j], dim = dim, dim + 1
        elif perm[index[lb]] == -1:
            counts[index[lb]] += x.shape[dim] != 1
            perm[index[lb]], dim = dim, dim + 1
        else:  # a repeated label: its diagonal, moved to the label's first place
            prev = perm[index[lb]]
            x = x.diagonal(0, prev, dim).movedim(-1, prev)
    for i, p in enumerate(perm):
        if p == -1:
            x = x.unsqueeze(dim)
            perm[i], dim = dim, dim + 1
    return x.permute(perm)


def _sumproduct_pair(left, right, sum_dims):
    """ATen's sumproduct_pair with keepdim: ``(left * right).sum(sum_dims, keepdim=True)`` as one bmm."""
    if not sum_dims:
        return left.mul(right)
    lro, lo, ro, summed = [], [], [], set(sum_dims)
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    if lo and ro and ro[-1] < lo[0]:  # (the right's kept dims all first: the operands swap places)
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = [left.shape[d] for d in lro + lo] + [1] * len(sum_dims) + [right.shape[d] for d in ro]
    order = lro + lo + list(sum_dims) + ro
    operm = [0] * len(order)
    for k, d in enumerate(order):
        operm[d] = k
    left = left.permute(lro + lo + list(sum_dims) + ro).reshape(lro_size, lo_size, sum_size)
    right = right.permute(lro + list(sum_dims) + ro + lo).reshape(lro_size, sum_size, ro_size)
    return left.bmm(right).view(out_size).permute(operm)


def einsum_graph(equation, operands, path=None):
    """``einsum(equation, *operands)`` op by op as ATen runs it (``path``: opt_einsum's pairs, flattened)."""
    terms, out = _terms(equation)
    index, ell_at, n_out, n, ell = _layout(terms, out, [x.ndim for x in operands])
    counts = [0] * n
    ops = [_align(x, t, index, ell_at, n, ell, counts) for x, t in zip(operands, terms)]
    steps = iter(path or ())
    while len(ops) > 1:
        i, j = (0, 1) if path is None else sorted((next(steps), next(steps)))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(n_out, n):
            if a.shape[d] != 1 and b.shape[d] != 1:
                counts[d] -= 1
                if counts[d] == 1:
                    sum_dims.append(d)
                    counts[d] = 0
            elif counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    counts[d] = 0
        if a_sum:
            a = a.sum(a_sum, True)
        if b_sum:
            b = b.sum(b_sum, True)
        if path is None:
            ops.insert(0, _sumproduct_pair(a, b, sum_dims))
        else:
            ops.append(_sumproduct_pair(a, b, sum_dims))
    if n > n_out:
        if len(operands) > 1:
            return ops[0].view(list(ops[0].shape[:n_out]))
        return ops[0].sum(list(range(n_out, n)))
    return ops[0]
