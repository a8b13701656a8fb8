"""Third-party programs, round 65 (helper 182): tensor-manipulation idioms as people write them in puzzles,
competitive notebooks and utility libraries (srush's Tensor Puzzles solved with broadcasting only: ``arange``,
``where``, comparisons and ``[:, None]``; einops-style ``rearrange``/``reduce``/``repeat`` re-implemented with
``view``/``permute``/``expand``/``reshape``; sliding windows by ``as_strided`` and ``Tensor.unfold`` and
``F.unfold``/``F.fold`` round trips; advanced indexing mixing ints, booleans, slices, ``None`` and ``Ellipsis`` with
negative indices and index tensors of different ranks broadcast together, written through ``index_put_(accumulate=
True)`` with duplicate indices, ``take``/``put_``, ``masked_scatter_`` and ``nonzero(as_tuple=True)``;
``tril_indices``/``triu_indices``, ``bucketize``/``searchsorted`` with ``right=``, ``histc``, ``bincount`` with
weights and ``minlength``, ``unique`` with ``return_inverse``/``return_counts``/``dim``, ``unique_consecutive``,
``cummax``/``cummin``, ``diff`` with ``prepend``/``append``, ``kthvalue``, ``topk`` with ties,
``repeat_interleave`` with tensor repeats, ``scatter_reduce(include_self=False)``; ``narrow_copy``, ``roll`` over
several dims, ``flip``/``rot90``, ``block_diag``, ``cartesian_prod``, ``combinations``, ``meshgrid(indexing=...)``,
``chunk``/``tensor_split`` with indices; in-place writes through chains of views, some with gradients flowing
through), re-implemented here, run with torch 2.13 and torchish and compared by ``assert_script_matches``
(tests/oracle.py).
"""
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_tensor_puzzles_broadcasting(lib):
    """srush/Tensor-Puzzles, each solved in one line with ``arange``, ``where``, comparisons, ``[:, None]`` and
    ``@`` only (ones, sum, outer, diag, eye, triu, cumsum, diff, vstack, roll, flip, compress, pad_to,
    sequence_mask, bincount, scatter_add, flatten, linspace, heaviside, repeat, bucketize), checked against the
    library's own functions, and a gradient through the broadcast-only cumsum and sequence mask."""
    torch = lib

    def arange(i):
        return torch.arange(i)

    def where(q, a, b):
        return (q * a) + (~q) * b

    def ones(i):
        return where(arange(i) >= 0, 1, 0)

    def sum_(a):
        return ones(a.shape[0]) @ a[:, None]

    def outer(a, b):
        return a[:, None] * b[None, :]

    def diag(a):
        return a[arange(a.shape[0]), arange(a.shape[0])]

    def eye(j):
        return where(arange(j)[:, None] == arange(j), 1, 0)

    def triu(j):
        return where(arange(j)[:, None] <= arange(j), 1, 0)

    def cumsum(a):
        return a @ where(arange(a.shape[0])[:, None] <= arange(a.shape[0]), 1, 0)

    def diff(a, i):
        return a[arange(i)] - where(arange(i) != 0, a[arange(i) - 1], 0)

    def vstack(a, b):
        return where(arange(2)[:, None] == ones(a.shape[0]), b, a)

    def roll(a, i):
        return a[(arange(i) + 1) % i]

    def flip(a, i):
        return a[i - arange(i) - 1]

    def compress(g, v, i):
        return v @ where(g[:, None], arange(i) == (cumsum(1 * g) - 1)[:, None], 0)

    def pad_to(a, i, j):
        return a @ (1 * (arange(i)[:, None] == arange(j)))

    def sequence_mask(values, length):
        return where(length[:, None] > arange(values.shape[1]), values, 0)

    def bincount(a, j):
        return ones(a.shape[0]) @ eye(j)[a]

    def scatter_add(values, link, j):
        return values @ eye(j)[link]

    def flatten(a, i, j):
        return a[arange(i * j) // j, arange(i * j) % j]

    def linspace(i, j, n):
        return i + (j - i) * arange(n) / max(1, n - 1)

    def heaviside(a, b):
        return where(a == 0, b, a > 0)

    def repeat(a, d):
        return ones(d)[:, None] @ a[None]

    def bucketize(v, boundaries):
        return (1 * (v[:, None] >= boundaries)) @ ones(boundaries.shape[0])

    a = torch.tensor([3, -1, 4, 1, -5, 9, 2])
    b = torch.tensor([2, 7, 1, 8])
    g = torch.tensor([True, False, True, True, False, False, True])
    out = {
        "ones": ones(5), "sum": sum_(a), "outer": outer(a, b), "diag": diag(outer(b, b)),
        "eye": eye(4), "triu": triu(4), "cumsum": cumsum(a), "diff": diff(a, 7),
        "vstack": vstack(b, b * 10), "roll": roll(a, 7), "flip": flip(a, 7), "compress": compress(g, a, 5),
        "pad_to": pad_to(b, 4, 6), "bincount": bincount(torch.tensor([1, 3, 3, 0, 3]), 5),
        "scatter_add": scatter_add(torch.tensor([5, 1, 7, 2]), torch.tensor([0, 2, 0, 1]), 3),
        "flatten": flatten(outer(a[:3], b), 3, 4), "linspace": linspace(0.5, 2.0, 7),
        "heaviside": heaviside(a, torch.tensor(7)), "repeat": repeat(b, 3),
        "bucketize": bucketize(torch.tensor([0, 2, 5, 11, -3]), torch.tensor([1, 2, 6, 10])),
    }
    # the same puzzles against the library's functions
    out["checks"] = [
        bool((cumsum(a) == torch.cumsum(a, 0)).all()), bool((eye(4) == torch.eye(4, dtype=torch.long)).all()),
        bool((triu(4) == torch.ones(4, 4, dtype=torch.long).triu()).all()),
        bool((flip(a, 7) == a.flip(0)).all()), bool((roll(a, 7) == a.roll(-1)).all()),
        bool((bincount(torch.tensor([1, 3, 3, 0, 3]), 5) == torch.bincount(torch.tensor([1, 3, 3, 0, 3]),
                                                                           minlength=5)).all()),
        bool((heaviside(a, torch.tensor(7)) == torch.heaviside(a, torch.tensor(7))).all()),
        bool((bucketize(torch.tensor([0, 2, 5, 11, -3]), torch.tensor([1, 2, 6, 10])) ==
              torch.bucketize(torch.tensor([0, 2, 5, 11, -3]), torch.tensor([1, 2, 6, 10]), right=True)).all()),
    ]
    out["linspace_ref"] = torch.linspace(0.5, 2.0, 7)
    # gradients through float versions of the broadcast-only puzzles
    x = torch.tensor([0.5, -1.0, 2.0, 0.25, 3.0], requires_grad=True)
    m = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]], requires_grad=True)
    tri = (torch.arange(5)[:, None] <= torch.arange(5)).float()
    cs = x @ tri
    masked = torch.where(torch.tensor([2, 4, 1])[:, None] > torch.arange(4), m, torch.zeros(()))
    loss = (cs ** 2).sum() + (masked * torch.arange(4.0)).sum() + outer(x, x).trace()
    loss.backward()
    out["grads"] = (cs, masked, loss.detach(), x.grad, m.grad)
    return out


def case_einops_by_hand(lib, jit):
    """einops-style helpers written with ``view``/``permute``/``expand``/``reshape`` the way utility libraries do
    when they avoid the dependency: ``b c (h p1) (w p2) -> b (h w) (p1 p2 c)`` patchify and its inverse,
    ``b (h w) c -> b c h w``, ``reduce(..., 'b c (h 2) (w 2) -> b c h w', 'max'/'mean')``, ``repeat(x, 'h w -> b h
    w c')`` through ``expand`` and through ``repeat``, space-to-depth vs ``pixel_unshuffle``/``pixel_shuffle``,
    head splitting ``b n (h d) -> b h n d`` and merging back through ``transpose(1, 2).contiguous().view``, with
    gradients through the whole chain and the strides the programs read; then the patchify helper and a
    view-chain write into its input compiled (``jit``), called on two inputs, the returned views written again
    outside."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(0)
    B, C, H, W, P = 2, 3, 4, 6, 2
    x = torch.randn(B, C, H, W, requires_grad=True)

    def patchify(t, p):
        b, c, h, w = t.shape
        t = t.view(b, c, h // p, p, w // p, p)
        t = t.permute(0, 2, 4, 3, 5, 1)
        return t.reshape(b, (h // p) * (w // p), p * p * c)

    def unpatchify(t, p, c, h, w):
        b = t.shape[0]
        t = t.view(b, h // p, w // p, p, p, c)
        t = t.permute(0, 5, 1, 3, 2, 4)
        return t.reshape(b, c, h, w)

    patches = patchify(x, P)
    back = unpatchify(patches, P, C, H, W)
    out = {"patches": patches, "roundtrip": bool(torch.equal(back, x)), "patch_strides": patches.is_contiguous()}

    tokens = x.flatten(2).transpose(1, 2)  # b (h w) c
    out["tokens_stride"] = tokens.stride()
    out["tokens_contig"] = tokens.is_contiguous()
    img = tokens.transpose(1, 2).reshape(B, C, H, W)  # b (h w) c -> b c h w
    out["img_eq"] = bool(torch.equal(img, x))

    pooled_max = x.view(B, C, H // 2, 2, W // 2, 2).amax(dim=(3, 5))
    pooled_mean = x.reshape(B, C, H // 2, 2, W // 2, 2).mean(dim=(-1, -3))
    out["pool_max"] = pooled_max
    out["pool_max_eq"] = bool(torch.allclose(pooled_max, F.max_pool2d(x, 2)))
    out["pool_mean_eq"] = bool(torch.allclose(pooled_mean, F.avg_pool2d(x, 2)))

    base = torch.arange(6.0).view(2, 3)
    rep_expand = base[None, :, :, None].expand(4, -1, -1, 5)
    rep_repeat = base[None, :, :, None].repeat(4, 1, 1, 5)
    out["rep"] = (rep_expand.stride(), rep_repeat.stride(), bool(torch.equal(rep_expand, rep_repeat)),
                  rep_expand.is_contiguous(), rep_expand.reshape(4, -1).shape, rep_expand.contiguous().stride())

    s2d = x.view(B, C, H // 2, 2, W // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(B, C * 4, H // 2, W // 2)
    out["s2d_eq"] = bool(torch.equal(s2d, F.pixel_unshuffle(x, 2)))
    d2s = s2d.view(B, C, 2, 2, H // 2, W // 2).permute(0, 1, 4, 2, 5, 3).reshape(B, C, H, W)
    out["d2s_eq"] = bool(torch.equal(d2s, F.pixel_shuffle(s2d, 2)))

    seq = torch.randn(B, 5, 3 * 4)
    heads = seq.view(B, 5, 3, 4).transpose(1, 2)  # b h n d
    out["heads_stride"] = heads.stride()
    merged = heads.transpose(1, 2).contiguous().view(B, 5, 12)
    out["merged_eq"] = bool(torch.equal(merged, seq))
    try:
        heads.transpose(1, 2).view(B, 5, 12)
        out["view_noncontig"] = "ok"
    except RuntimeError:
        out["view_noncontig"] = "RuntimeError"

    w = torch.linspace(-1, 1, P * P * C)
    loss = (patches * w).sum() + (pooled_max ** 2).sum() + pooled_mean.sum() * 0.5 + (d2s * x).sum()
    loss.backward()
    out["loss"] = loss.detach()
    out["grad"] = x.grad
    out["s2d"] = s2d.detach()

    @jit
    def patchify_and_mark(t, idx):
        p = patchify(t, P)
        t.view(-1)[idx] += 1
        t.transpose(-1, -2)[..., 1:, ::2].mul_(-1)
        return p.amax(-1), t.diagonal(dim1=-2, dim2=-1), t[:, 0, ::2]

    compiled = []
    for k in range(2):
        t = torch.arange(float(B * C * H * W)).view(B, C, H, W) * (k + 1)
        pm, diag, rows = patchify_and_mark(t, torch.tensor([0, 5, 5, 7 + k]))
        diag.fill_(-7.0)
        rows.add_(0.5)
        compiled.append((pm, t, diag.stride(), rows.stride(), rows.storage_offset(), diag._base is t))
    out["compiled"] = compiled
    return out


def case_sliding_windows(lib):
    """Sliding windows the ways notebooks build them: ``as_strided`` over a 1-d signal (frames with hop), over a
    2-d image (all 2x2 patches as a 4-d view) and with ``storage_offset``; ``Tensor.unfold`` in one and two dims
    (patches by chained ``unfold``); a moving average by ``unfold(...).mean`` vs ``conv1d``; ``F.unfold``/``F.fold``
    with stride, padding and dilation and the ``fold(unfold(x)) / fold(unfold(ones))`` round trip, a conv done as
    ``unfold`` + matmul vs ``conv2d``, with gradients through ``unfold`` and ``as_strided``."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(1)
    sig = torch.arange(10.0)
    frames = sig.as_strided((4, 4), (2, 1))
    out = {"frames": frames, "frames_stride": frames.stride()}
    off = sig.as_strided((3, 3), (3, 1), 1)
    out["offset"] = (off, off.storage_offset())
    img = torch.arange(20.0).view(4, 5)
    win = img.as_strided((3, 4, 2, 2), (5, 1, 5, 1))
    out["win"] = win.sum(dim=(-1, -2))
    out["unfold1"] = sig.unfold(0, 3, 2)
    p2 = img.unfold(0, 2, 1).unfold(1, 2, 1)
    out["unfold2"] = (p2.shape, p2.stride(), bool(torch.equal(p2, win)))
    out["unfold_size_eq_dim"] = sig.unfold(0, 10, 3)

    x = torch.randn(7, requires_grad=True)
    ma = x.unfold(0, 3, 1).mean(-1)
    ma_conv = F.conv1d(x.view(1, 1, 7), torch.full((1, 1, 3), 1 / 3)).view(-1)
    out["ma"] = (ma, ma_conv)
    strided = x.as_strided((3, 3), (2, 1))
    (ma.pow(2).sum() + (strided * torch.arange(9.0).view(3, 3)).sum()).backward()
    out["x_grad"] = x.grad

    im = torch.randn(1, 2, 5, 6, requires_grad=True)
    cols = F.unfold(im, kernel_size=(2, 3), padding=1, stride=(2, 1), dilation=1)
    out["cols_shape"] = cols.shape
    ones = torch.ones_like(im)
    kw = dict(output_size=(5, 6), kernel_size=(2, 3), padding=1, stride=(2, 1))
    recon = F.fold(cols, **kw) / F.fold(F.unfold(ones, kernel_size=(2, 3), padding=1, stride=(2, 1)), **kw)
    out["recon"] = recon
    out["recon_close"] = bool(torch.allclose(recon, im))
    cols_d = F.unfold(im, kernel_size=2, dilation=2)
    out["cols_d"] = cols_d
    out["fold_d"] = F.fold(cols_d, (5, 6), kernel_size=2, dilation=2)

    weight = torch.randn(4, 2, 3, 3)
    cols3 = F.unfold(im, 3, padding=1)
    as_mm = (weight.view(4, -1) @ cols3).view(1, 4, 5, 6)
    out["conv_mm"] = as_mm
    out["conv_eq"] = bool(torch.allclose(as_mm, F.conv2d(im, weight, padding=1), atol=1e-5))
    (cols.sum() + (recon * 2).sum() + as_mm.square().mean() + out["fold_d"].sum()).backward()
    out["im_grad"] = im.grad
    out["recon"] = recon.detach()
    out["conv_mm"] = as_mm.detach()
    out["fold_d"] = out["fold_d"].detach()
    out["cols_d"] = cols_d.detach()
    out["ma"] = (ma.detach(), ma_conv.detach())
    return out


def case_advanced_indexing_writes(lib):
    """Advanced-indexing mixes as competitive notebooks write them: int + bool + slice + ``None`` + ``Ellipsis`` in
    one subscript, negative indices and negative index tensors, index tensors of ranks 1 and 2 broadcast together
    (and separated by a slice, which moves the indexed dims to the front), assignments through them,
    ``index_put_(accumulate=True)`` with duplicate indices, ``take``/``put_`` (with ``accumulate``),
    ``masked_scatter_``, ``nonzero(as_tuple=True)`` fed back as an index, ``tril_indices``/``triu_indices`` with
    offsets; in-place writes through chains of views (``x.t()[1:, ::2].fill_()``, ``x.view(-1)[idx] += 1``,
    ``x.diagonal().copy_()``, ``x[:, 1].unsqueeze(0).mul_()``) seen through the base and other views, and gradients
    through indexed reads and through an ``index_put`` with accumulate."""
    torch = lib
    x = torch.arange(60).view(3, 4, 5)
    mask = torch.tensor([True, False, True, True])
    out = {
        "mix1": x[1, mask, None, ::2],
        "mix2": x[..., torch.tensor([-1, 0]), None],
        "mix3": x[-1, ..., torch.tensor([[0], [2]]), torch.tensor([1, -1, 3])],
        "mix4": x[torch.tensor([[0, 2], [1, 1]]), :, torch.tensor([4, -5])],
        "mix5": x[None, torch.tensor([2, 0]), 1:3, torch.tensor([[1], [3]])],
        "mix6": x[:, mask][..., -2:],
        "mix7": x[torch.tensor([True, False, True])][:, None, -1, torch.tensor([0, 0, 4])],
    }
    out["shapes"] = [v.shape for v in out.values()]
    out["mix8"] = x[1:, torch.tensor([0, 3])][:, :, torch.tensor([1, 2])]

    y = torch.zeros(4, 5)
    rows, cols = torch.tensor([0, 1, 1, 3, 0]), torch.tensor([2, 4, 4, 0, 2])
    y.index_put_((rows, cols), torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), accumulate=True)
    out["acc"] = y.clone()
    y[rows[:2], :] = torch.tensor([[-1.0], [-2.0]])
    y[torch.tensor([[2], [3]]), torch.tensor([1, 3])] = 9.0
    y[..., -1] += 0.5
    y[y > 4] = torch.tensor([10.0, 20.0, 30.0, 40.0, 50.0])[: int((y > 4).sum())]
    out["y"] = y

    t = torch.arange(12.0).view(3, 4)
    out["take"] = torch.take(t, torch.tensor([[0, -1], [5, 7]]))
    t.put_(torch.tensor([1, 1, -2]), torch.tensor([10.0, 20.0, 30.0]), accumulate=True)
    out["put_acc"] = t.clone()
    t.put_(torch.tensor([0, 11]), torch.tensor([-1.0, -2.0]))
    out["put"] = t

    ms = torch.zeros(3, 4)
    m = torch.tensor([[True, False, False, True], [False, True, False, False], [True, True, False, True]])
    ms.masked_scatter_(m, torch.arange(1.0, 13.0).view(3, 4))
    out["masked_scatter"] = ms
    nz = m.nonzero(as_tuple=True)
    out["nz"] = nz
    out["nz_gather"] = ms[nz]
    out["argwhere"] = torch.argwhere(m)

    tri = torch.tril_indices(4, 3, offset=-1)
    triu = torch.triu_indices(3, 5, offset=1)
    full = torch.zeros(4, 3, dtype=torch.long)
    full[tri[0], tri[1]] = torch.arange(1, tri.shape[1] + 1)
    out["tri"] = (tri, triu, full, torch.tril_indices(3, 3).dtype)

    z = torch.zeros(4, 6)
    z.t()[1:, ::2].fill_(3.0)
    flat = z.view(-1)
    idx = torch.tensor([0, 7, 7, 23])
    flat[idx] += 1
    z.diagonal().copy_(torch.tensor([-1.0, -2.0, -3.0, -4.0]))
    z.diagonal(offset=2)[1:].zero_()
    z[:, 1].unsqueeze(0).mul_(10)
    z.narrow(1, 4, 2).transpose(0, 1)[0].add_(100)
    out["z"] = z
    out["z_t_stride"] = z.t()[1:, ::2].stride()

    torch.manual_seed(3)
    w = torch.randn(5, 4, requires_grad=True)
    sel = w[torch.tensor([4, 0, 4, -1]), torch.tensor([[1], [3]])]  # shape (2, 4), duplicates
    picked = w[w.detach() > 0]
    h = torch.zeros(3, 4).index_put((torch.tensor([0, 2, 0]),), w[:3] * 2, accumulate=True)
    loss = (sel * torch.arange(8.0).view(2, 4)).sum() + picked.pow(2).sum() + (h * h).sum()
    loss.backward()
    out["grad"] = (sel.detach(), picked.detach(), h.detach(), w.grad)

    v = torch.zeros(6, requires_grad=True)
    u = v * 1
    u[torch.tensor([1, 3])] = torch.tensor([2.0, 3.0])
    u.view(2, 3)[:, 0] *= torch.tensor([5.0, 7.0])
    (u * torch.arange(1.0, 7.0)).sum().backward()
    out["v_grad"] = (u.detach(), v.grad, u.grad_fn.name())

    # notebook leftovers: numpy indices, shifts by overlapping slices, duplicate indices with ``+=``
    import numpy as np
    n = torch.arange(12.0).view(3, 4)
    n[np.array([0, 0, 2]), np.int64(1)] = 5.0
    n[np.array([True, False, True])] += np.float32(1.5)
    sh = torch.arange(6.0)
    sh[1:] = sh[:-1].clone()
    sh2 = torch.arange(6.0)
    sh2[::2].add_(sh2[1::2])
    dup = torch.zeros(3, 3)
    dup[torch.tensor([0, 0]), torch.tensor([1, 1])] += 1
    dup[:, torch.tensor([2, 2])] -= torch.tensor([[1.0, 2.0]])
    out["notebook"] = (n, n[np.arange(2)[:, None], np.array([1, 3])], sh, sh2, dup)
    return out


def case_sort_count_scan(lib):
    """Counting, sorting and scanning idioms from utility libraries: ``bucketize``/``searchsorted`` with
    ``right=`` on ties (and a 2-d sorted sequence, a ``sorter``), ``histc`` with out-of-range values, ``bincount``
    with ``weights`` and ``minlength``, ``unique`` (sorted, ``return_inverse``, ``return_counts``, ``dim=0``/``1``),
    ``unique_consecutive`` with counts, ``cummax``/``cummin`` indices on ties, ``diff`` with ``prepend``/``append``
    and ``n=2``, ``kthvalue`` and ``topk`` over ties (values and which indices), ``sort(stable=True)``,
    ``repeat_interleave`` with tensor repeats and ``output_size``, ``scatter_reduce`` with ``include_self=False``
    for every reduction, with gradients through ``cummax``, ``topk`` and ``scatter_reduce``."""
    torch = lib
    bnd = torch.tensor([1.0, 2.0, 2.0, 4.0, 7.0])
    v = torch.tensor([[0.5, 2.0, 4.0], [7.0, 8.0, 2.0]])
    out = {
        "buck_l": torch.bucketize(v, bnd), "buck_r": torch.bucketize(v, bnd, right=True),
        "ss_l": torch.searchsorted(bnd, v), "ss_r": torch.searchsorted(bnd, v, right=True),
        "ss_side": torch.searchsorted(bnd, v, side="right", out_int32=True),
        "ss_2d": torch.searchsorted(torch.tensor([[1, 3, 5, 7], [2, 2, 4, 6]]), torch.tensor([[3, 6], [2, 9]]),
                                    right=True),
        "ss_sorter": torch.searchsorted(torch.tensor([5.0, 1.0, 3.0]), torch.tensor([2.0, 3.0, 6.0]),
                                        sorter=torch.tensor([1, 2, 0])),
        "ss_scalar": torch.searchsorted(bnd, 2.0),
    }
    hv = torch.tensor([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.0, 3.0, 9.0])
    out["histc"] = torch.histc(hv, bins=4, min=0, max=2)
    out["histc_auto"] = torch.histc(hv, bins=3)
    ids = torch.tensor([1, 4, 1, 0, 4, 4])
    wts = torch.tensor([0.5, 1.0, 1.5, 2.0, -1.0, 0.25])
    out["bincount"] = (torch.bincount(ids), torch.bincount(ids, weights=wts, minlength=7),
                       torch.bincount(ids, weights=wts.double()), torch.bincount(torch.tensor([], dtype=torch.long),
                                                                                minlength=3))
    u = torch.tensor([3, 1, 2, 3, 1, 5, 1])
    out["unique"] = torch.unique(u, return_inverse=True, return_counts=True)
    out["unique_unsorted_len"] = torch.unique(u, sorted=False).numel()
    rows = torch.tensor([[1, 2], [3, 4], [1, 2], [0, 9], [3, 4]])
    out["unique_dim0"] = torch.unique(rows, dim=0, return_inverse=True, return_counts=True)
    out["unique_dim1"] = torch.unique(rows.t(), dim=1, return_counts=True)
    out["uc"] = torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 2, 1, 3, 3]), return_inverse=True,
                                         return_counts=True)
    out["uc_dim"] = torch.unique_consecutive(torch.tensor([[1, 1], [1, 1], [2, 0], [1, 1]]), dim=0,
                                             return_counts=True)

    s = torch.tensor([1.0, 3.0, 3.0, 2.0, 5.0, 5.0, 0.0], requires_grad=True)
    cmx, cmx_i = torch.cummax(s, 0)
    cmn, cmn_i = torch.cummin(s, 0)
    out["cum_idx"] = (cmx_i, cmn_i)
    out["cummax_2d"] = torch.cummax(torch.tensor([[2, 1, 2], [0, 4, 4]]), dim=1)
    d = torch.tensor([1, 4, 9, 16])
    out["diff"] = (torch.diff(d), torch.diff(d, n=2), torch.diff(d, prepend=torch.tensor([0]),
                                                                 append=torch.tensor([20, 30])),
                   torch.diff(torch.tensor([[1, 2, 4], [3, 3, 0]]), dim=0),
                   torch.diff(torch.tensor([True, False, False, True])))
    kt = torch.tensor([[4.0, 1.0, 4.0, 2.0, 1.0], [3.0, 3.0, 3.0, 0.0, 5.0]])
    out["kth"] = (torch.kthvalue(kt, 2, dim=1), torch.kthvalue(kt, 2, dim=0, keepdim=True).values)
    ties = torch.tensor([2.0, 5.0, 5.0, 1.0, 5.0, 2.0])
    tv, ti = torch.topk(ties, 3)
    out["topk"] = (tv, ti)
    out["topk_small"] = torch.topk(ties, 2, largest=False)
    out["sort_stable"] = torch.sort(ties, stable=True, descending=True)
    out["argsort_stable"] = torch.argsort(torch.tensor([1, 0, 1, 0, 1]), stable=True)

    reps = torch.tensor([2, 0, 3])
    out["ri"] = (torch.repeat_interleave(torch.tensor([7, 8, 9]), reps),
                 torch.repeat_interleave(reps), torch.repeat_interleave(torch.tensor([[1, 2], [3, 4]]),
                                                                        torch.tensor([1, 2]), dim=0),
                 torch.tensor([[1, 2], [3, 4]]).repeat_interleave(2),
                 torch.repeat_interleave(torch.tensor([7, 8, 9]), reps, output_size=5))

    src = torch.tensor([1.0, 4.0, -2.0, 3.0, 5.0, 0.5], requires_grad=True)
    index = torch.tensor([0, 1, 0, 1, 3, 3])
    base = torch.tensor([10.0, 20.0, 30.0, 40.0])
    red = {}
    for r in ("sum", "prod", "mean", "amax", "amin"):
        red[r] = base.scatter_reduce(0, index, src, reduce=r, include_self=False)
        red[r + "_self"] = base.scatter_reduce(0, index, src, reduce=r, include_self=True)
    out["scatter_reduce"] = {k: t.detach() for k, t in red.items()}
    ri = torch.tensor([[0, 1, 0], [1, 1, 0]])
    out["scatter_reduce_2d"] = torch.zeros(2, 2).scatter_reduce(1, ri, torch.arange(1.0, 7.0).view(2, 3), "amax",
                                                                include_self=False)
    loss = (cmx * torch.arange(7.0)).sum() + cmn.sum() + (torch.topk(s, 3).values ** 2).sum()
    loss = loss + sum((t * (i + 1)).sum() for i, t in enumerate(red.values()))
    loss.backward()
    out["grads"] = (loss.detach(), s.grad, src.grad)
    return out


def case_combinatorics_and_shapes(lib):
    """Shape and combinatorics helpers: ``narrow_copy`` (contiguous result), ``roll`` over several dims (and
    flattened), ``flip`` over several dims, ``rot90`` with k=1/2/-1/5 and other dims, ``block_diag`` of mixed
    shapes and dtypes, ``cartesian_prod`` (two and three inputs, one input), ``combinations`` with ``r`` and
    ``with_replacement``, ``meshgrid`` with ``indexing='ij'``/``'xy'`` (shapes, strides, that they are expanded
    views), ``chunk`` with uneven sizes, ``tensor_split`` by sections, by an index list and by an index tensor,
    ``split`` with sizes, ``hsplit``/``vsplit``/``dsplit``, ``unbind``; gradients through ``roll``, ``rot90``,
    ``block_diag`` and ``tensor_split``."""
    torch = lib
    x = torch.arange(24).view(2, 3, 4)
    nc = x.narrow_copy(2, 1, 2)
    out = {"narrow_copy": (nc, nc.stride(), nc.is_contiguous()),
           "roll": (torch.roll(x, shifts=(1, -2), dims=(1, 2)), torch.roll(x, 5), x.roll(-1, 0)),
           "flip": (x.flip(0, 2), torch.fliplr(x[0]), torch.flipud(x[0])),
           "rot90": [torch.rot90(x[0], k) for k in (1, 2, -1, 5)] + [torch.rot90(x, 1, (2, 0)).shape,
                                                                       torch.rot90(x, 1, (2, 0))]}
    bd = torch.block_diag(torch.tensor([[1, 2]]), torch.tensor([[3.0], [4.0]]), torch.tensor(5),
                          torch.tensor([6, 7]))
    out["block_diag"] = bd
    a, b, c = torch.tensor([1, 2, 3]), torch.tensor([4, 5]), torch.tensor([6, 7])
    out["cart"] = (torch.cartesian_prod(a, b), torch.cartesian_prod(a, b, c), torch.cartesian_prod(a))
    out["comb"] = (torch.combinations(torch.tensor([1, 2, 3, 4])),
                   torch.combinations(torch.tensor([1, 2, 3]), r=3),
                   torch.combinations(torch.tensor([1, 2, 3]), r=2, with_replacement=True),
                   torch.combinations(torch.tensor([1.0, 2.0]), r=3).shape)
    gi, gj = torch.meshgrid(torch.arange(3), torch.arange(4), indexing="ij")
    gx, gy = torch.meshgrid(torch.arange(3), torch.arange(4), indexing="xy")
    out["mesh"] = (gi, gj, gx, gy, gi.stride(), gj.stride(), gx.stride(), gy.stride(), gx.shape)
    g3 = torch.meshgrid(torch.arange(2), torch.arange(3), torch.arange(4), indexing="xy")
    out["mesh3"] = [g.shape for g in g3] + [g3[2][1, 0]]

    v = torch.arange(10)
    out["chunk"] = (v.chunk(3), v.chunk(4), torch.arange(5).chunk(4), x.chunk(2, dim=2))
    out["tsplit"] = (v.tensor_split(3), v.tensor_split([2, 5, 5, 11]), v.tensor_split(torch.tensor([1, 8])),
                     x.tensor_split(torch.tensor(2), dim=2), torch.tensor_split(x, (1,), dim=1))
    out["split"] = (v.split([3, 3, 4]), v.split(4), torch.hsplit(x, [1]), torch.vsplit(x, [1]),
                    torch.dsplit(x, [1, 3]), x.unbind(1))
    out["view_of"] = [t._base is x for t in x.tensor_split(2, dim=2)]

    torch.manual_seed(5)
    w = torch.randn(3, 4, requires_grad=True)
    parts = w.tensor_split([1, 3], dim=1)
    y = torch.block_diag(torch.roll(w, (1, 1), (0, 1)), torch.rot90(w, 1)[:2])
    y2 = torch.cat([parts[2], parts[0] * 2, parts[1].flip(1)], dim=1)
    loss = (y * torch.arange(float(y.numel())).view(y.shape)).sum() + (y2 ** 2).sum()
    loss.backward()
    out["grads"] = (y.detach(), y2.detach(), w.grad)
    return out


test_script_matches_torch = script_test(globals())
