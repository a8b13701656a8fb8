"""What the differential fuzzers (tests/test_fuzz_*.py) share: the exception family a result is compared by, the
loop over seeded programs, the pytest assertion and the command line's summary, ``agree`` for the regression
tests below each fuzzer, and ``traced`` for their compile mode (every torchish op call run by torchish.compile)."""
from __future__ import annotations

from oracle import assert_same, error_family, torch, torchish  # noqa: F401 (error_family: the fuzzers' import)


def fuzz(run_program, n, start=0, verbose=False, live=False):
    """Run programs ``start .. start+n-1``; ``{mismatch name: [descriptions]}``."""
    failures = {}
    for seed in range(start, start + n):
        r = run_program(seed, verbose=verbose)
        if r is not None:
            failures.setdefault(r[0], []).append(r[1])
            if live:
                print(f"MISMATCH {r[0]}: {str(r[1])[:1500]}", flush=True)
    return failures


def assert_none_differ(failures, n):
    msg = "\n".join(f"{k} ({len(v)}): {v[0]}" for k, v in sorted(failures.items()))
    assert not failures, f"{sum(map(len, failures.values()))} of {n} programs differ from torch:\n{msg}"


def assert_compiled_none_differ(monkeypatch, namespace, fuzz, seeds):
    """Run one program per seed with the fuzzer module's ``COMPILED`` switch on (every torchish op traced by
    torchish.compile) and assert none differs from torch."""
    monkeypatch.setitem(namespace, "COMPILED", True)
    failures = {}
    for seed in seeds:
        for name, found in fuzz(1, seed).items():
            failures.setdefault(name, []).extend(found)
    assert_none_differ(failures, len(seeds))


def print_summary(res, n, known, per_kind=4):
    print(f"{sum(map(len, res.values()))} of {n} programs differ; skipped draws for known gaps: {known}")
    for k, v in sorted(res.items(), key=lambda kv: -len(kv[1])):
        print(f"\n== {k}: {len(v)}")
        for line in v[:per_kind]:
            print("   ", line)


def agree(*fns):
    """Every ``fn(T)`` gives the same result in both libraries, or raises the same builtin exception family."""
    for fn in fns:
        ref_err = got_err = ref = got = None
        try:
            ref = fn(torch)
        except Exception as e:  # noqa: BLE001
            ref_err = e
        try:
            got = fn(torchish)
        except Exception as e:  # noqa: BLE001
            got_err = e
        if ref_err is not None:
            assert got_err is not None, f"torch raised {ref_err!r}; torchish returned {got!r}"
            assert issubclass(error_family(got_err), error_family(ref_err)), f"{got_err!r} != torch's {ref_err!r}"
        else:
            assert got_err is None, f"torch returned {ref!r}; torchish raised {got_err!r}"
            assert_same(ref, got)


def traced(fn, vals):
    """``fn(torchish, *vals)`` run by a compiled function's traced program. A compiled function's first call per
    signature runs eagerly, so it is called on copies first (its errors ignored: the traced call must raise them)."""
    cf = torchish.compile(lambda *v: fn(torchish, *v))
    try:
        cf(*[copy(v) for v in vals])
    except Exception:  # noqa: BLE001
        pass
    return cf(*vals)


def copy(v):
    """A copy of an argument with the signature of the original: a tensor keeps its strides where they are a
    permutation of contiguous ones (``x.t()``), the layout a compiled program depends on, and requires grad if it
    does."""
    if isinstance(v, (list, tuple)):
        return type(v)(map(copy, v))
    if not isinstance(v, torchish.Tensor):
        return v
    order = sorted(range(v.ndim), key=lambda d: -v.stride(d))
    c = v.detach().permute(order).clone().permute([order.index(d) for d in range(v.ndim)])
    return c.requires_grad_() if v.requires_grad else c


# ----------------------------------------------------------------------------------------------------------------
# memory layouts (the widened draws: programs from seed ``WIDE_FROM`` on; older seeds draw none and replay as before)

WIDE_FROM = 100000
WIDE2_FROM = 120000  # the second widening (ops, dtypes and index forms never drawn before), from the same second
                     # stream: programs from WIDE_FROM up to here replay unchanged
LAYOUTS = ("transposed", "strided", "expanded", "channels_last", "conj", "offset")


def wide_rng(seed):
    """The second stream a program from ``WIDE_FROM`` on draws its widened choices from (None before): the first
    stream, and so every older program, stays as it was."""
    import random
    return random.Random(seed * 2654435761 % (1 << 61)) if seed >= WIDE_FROM else None


def draw_layout(wrng, shape, dtype_name, p=0.35, shape_kept=True):
    """A layout for a tensor of ``shape`` (None: as made), drawn from ``wrng``; ``shape_kept=False`` also allows
    ``expanded`` (size-1 dims broadcast to 2 or 3, which changes the shape)."""
    if wrng is None or wrng.random() >= p:
        return None
    nd = len(shape)
    cands = []
    if nd >= 2:
        cands.append("transposed")
    if nd >= 1:
        cands += ["strided", "offset"]
    if not shape_kept and 1 in shape:
        cands.append("expanded")
    if nd == 4:
        cands.append("channels_last")
    if dtype_name.startswith("complex"):
        cands.append("conj")
    return (wrng.choice(cands), wrng.randrange(1 << 30)) if cands else None


def layout(T, t, how):
    """``t``'s values in the layout ``how`` (from :func:`draw_layout`), built the same way in both libraries:
    ``transposed`` (dims reversed in memory), ``strided`` (every other element of a contiguous tensor twice as long
    in the last dim), ``offset`` (a storage offset), ``expanded`` (a size-1 dim broadcast, stride 0),
    ``channels_last`` (4-d), ``conj`` (a complex tensor with the conjugate bit set)."""
    if how is None:
        return t
    kind, seed = how
    if kind == "transposed":
        rev = list(range(t.dim()))[::-1]
        return t.permute(rev).contiguous().permute(rev)
    if kind == "strided":
        return T.stack([t, T.zeros_like(t)], -1).flatten(-2)[..., ::2]
    if kind == "offset":
        return T.cat([T.zeros(1, dtype=t.dtype), t.flatten()])[1:].view(t.shape)
    if kind == "expanded":
        import random
        r = random.Random(seed)
        return t.expand(*[r.choice([2, 3]) if s == 1 else s for s in t.shape])
    if kind == "channels_last":
        return t.contiguous(memory_format=T.channels_last)
    if kind == "conj":
        return t.conj_physical().conj()
    raise ValueError(kind)
