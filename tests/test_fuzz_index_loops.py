"""Differential fuzz of LOOPS over indices: one random program structure run for several iterations, each
iteration with OTHER Python integers (indices, negative indices, slice starts and stops, narrow starts, the entries
of index lists), so the kernels cached on the first iteration are reused with new values (integer indices are
values of the eager kernels: ``torchish/ops/dynamic.py``). Run in lockstep with PyTorch (the oracle).

A program is Python source: a few setup lines (a leaf ``w`` that requires grad, a buffer ``b`` that does not, views
of ``b`` that stay alive across iterations), then a body run ``ITERS`` times: ``y = w * 1.0``, reads through chains
of views (ints, negative ints, slices with starts and steps, None, Ellipsis, select, narrow, ``t()``, ``permute``;
index tensors and bool masks with ints), views kept alive while other views of the same base are written, in-place
ops on views (``add_``, ``mul_``, ``zero_``, ``fill_``, ``copy_``), ``x[...] = v`` and ``+=``, ``index_put_`` with
and without accumulate, iteration and ``unbind`` (more and fewer than 8 rows), writes to the leaf under
``no_grad``, and a ``loss.backward()`` per iteration, so ``w.grad`` accumulates. The integers are drawn anew each
iteration, now and then out of range (the error family is compared). Each program runs on one backward path —
node by node (``lowered_backward="never"``), lowered (``"always"``) or ``"auto"`` (lowered from a structure's
second sighting) — and some with ``torchish.config.lazy``.

After every line (at the end of each iteration under lazy) the line's results, the live views, the bases and the
leaf's ``.grad`` are compared: values, dtype, shape, strides, storage offset, ``requires_grad``. On a mismatch the
program is printed as the source both libraries ran (``T`` is the library)::

    python tests/test_fuzz_index_loops.py 400            # programs 0..399, then a summary
    python tests/test_fuzz_index_loops.py 1 --seed 17 -v  # replay one program, printing each line
"""
from __future__ import annotations

import random
import re
import warnings

import numpy as np

import fuzz_harness as harness
from fuzz_harness import error_family
from oracle import assert_same, needs_torch, torch, torchish

warnings.filterwarnings("ignore")

N_PROGRAMS = 9         # programs per pytest run (seeds 0..N-1)
ITERS = 4              # iterations of each program's body
SHAPES = ((6, 5), (4, 3, 5), (10, 4))  # the leaf's shape (few: kernels are shared between programs)
PATHS = ("auto", "never", "always")    # lowered_backward, by seed
BAD = 0.02             # how often a drawn integer is out of range


# ----------------------------------------------------------------------------------------------------------------
# integers drawn per iteration: each drawer is ``r -> source text``


class Draws(random.Random):
    """The integers of one iteration (``bad``: how often one is out of range; 0 for the setup lines, which run
    once: an error there would void the program)."""

    def __init__(self, seed, bad):
        super().__init__(seed)
        self.bad = bad


def d_int(n):
    def draw(r):
        v = r.choice([n, -n - 1]) if r.random() < r.bad else r.randrange(-n, n)
        return f"np.int64({v})" if r.random() < 0.08 else str(v)
    return draw


def d_slice(n, length, step):
    """``start:stop[:step]`` giving ``length`` elements of a dim of ``n`` (starts from 0 now and then: a static
    kernel), in positive or negative form, the stop past the end or left out where that gives the same length."""
    span = (length - 1) * step + 1

    def draw(r):
        start = r.randrange(0, n - span + 1)
        stop = start + span + r.randrange(step)
        if stop >= n and r.random() < 0.5:
            stop = n + r.randrange(3)
        a = "" if start == 0 and r.random() < 0.5 else str(start - n if r.random() < 0.3 else start)
        if len(range(start, n, step)) == length and r.random() < 0.4:
            b = ""
        else:
            b = str(stop - n if stop < n and r.random() < 0.3 else stop)
        return f"{a}:{b}" + (f":{step}" if step > 1 else "")
    return draw


def d_start(n, length, neg=True):
    """A narrow start for ``length`` elements of a dim of ``n``, positive or (``neg``) negative."""
    def draw(r):
        if r.random() < r.bad:
            return str(r.choice([n - length + 1, n + 1, -n - 1]))
        s = r.randrange(0, n - length + 1)
        return str(s - n if neg and r.random() < 0.3 else s)
    return draw


def d_list(n, m, unique=False):
    """A list literal of ``m`` indices into a dim of ``n`` (negative ones too)."""
    def draw(r):
        vals = r.sample(range(n), m) if unique else [r.randrange(n) for _ in range(m)]
        vals = [v - n if r.random() < 0.3 else v for v in vals]
        if r.random() < r.bad:
            vals[0] = n
        return str(vals)
    return draw


def d_float(r):
    return repr(r.choice([0.5, -1.5, 2.0, 0.25, -0.75]))


def d_small_int(r):
    return str(r.choice([-3, -1, 2, 3, 5]))


# ----------------------------------------------------------------------------------------------------------------
# one link of a chain: ``op(rng, shape) -> (text with {} for drawn integers, drawers, new shape, is a view)`` or
# None where it does not apply; the new shape None: it depends on the drawn integers (only at a chain's end)


def op_int(rng, s):
    return ("[{}]", [d_int(s[0])], s[1:], True) if s else None


def op_int1(rng, s):
    return ("[:, {}]", [d_int(s[1])], s[:1] + s[2:], True) if len(s) >= 2 else None


def op_ellipsis(rng, s):
    return ("[..., {}]", [d_int(s[-1])], s[:-1], True) if s else None


def op_none_int(rng, s):
    if not s:
        return None
    return ("[None, {}]", [d_int(s[0])], (1,) + s[1:], True) if rng.random() < 0.5 else \
        ("[{}, None]", [d_int(s[0])], (1,) + s[1:], True)


def _slice_args(rng, n):
    step = rng.choice([1, 1, 2]) if n >= 3 else 1
    length = rng.randint(1, min(3, (n - 1) // step + 1))
    return length, step


def op_slice(rng, s):
    if not s:
        return None
    length, step = _slice_args(rng, s[0])
    return "[{}]", [d_slice(s[0], length, step)], (length,) + s[1:], True


def op_slice1(rng, s):
    if len(s) < 2:
        return None
    length, step = _slice_args(rng, s[1])
    return "[:, {}]", [d_slice(s[1], length, step)], s[:1] + (length,) + s[2:], True


def op_int_slice(rng, s):
    if len(s) < 2:
        return None
    length, step = _slice_args(rng, s[1])
    if rng.random() < 0.5:
        return "[{}, {}]", [d_int(s[0]), d_slice(s[1], length, step)], (length,) + s[2:], True
    length, step = _slice_args(rng, s[0])
    return "[{}, {}]", [d_slice(s[0], length, step), d_int(s[1])], (length,) + s[2:], True


def _dim(rng, nd):
    d = rng.randrange(nd)
    return d, (d - nd if rng.random() < 0.3 else d)


def op_select(rng, s):
    if not s:
        return None
    d, dd = _dim(rng, len(s))
    return f".select({dd}, {{}})", [d_int(s[d])], s[:d] + s[d + 1:], True


def op_narrow(rng, s):
    if not s:
        return None
    d, dd = _dim(rng, len(s))
    length = rng.randint(1, min(3, s[d]))
    return f".narrow({dd}, {{}}, {length})", [d_start(s[d], length)], s[:d] + (length,) + s[d + 1:], True


def op_narrow_tensor(rng, s):
    """narrow with its start a 0-d tensor, or narrow_copy (not a view)."""
    if not s:
        return None
    d, dd = _dim(rng, len(s))
    length = rng.randint(1, min(3, s[d]))
    if rng.random() < 0.5:  # (PyTorch's narrow_copy gradient is zero for a negative start whose slice reaches the
        # end: its backward slices [start, start + length), [-1, 0) is empty. Not drawn)
        return (f".narrow_copy({dd}, {{}}, {length})", [d_start(s[d], length, neg=False)],
                s[:d] + (length,) + s[d + 1:], False)
    return f".narrow({dd}, T.tensor({{}}), {length})", [d_start(s[d], length)], s[:d] + (length,) + s[d + 1:], True


def op_t(rng, s):
    if len(s) == 2:
        return ".t()", [], s[::-1], True
    if len(s) >= 2:
        return ".transpose(0, -1)", [], (s[-1],) + s[1:-1] + (s[0],), True
    return None


def op_permute(rng, s):
    if len(s) != 3:
        return None
    p = rng.choice([(1, 0, 2), (2, 0, 1), (0, 2, 1), (1, 2, 0)])
    return f".permute{p}", [], tuple(s[i] for i in p), True


def op_list_int(rng, s):
    if len(s) < 2:
        return None
    m = rng.randint(1, 3)
    if rng.random() < 0.5:
        return "[T.tensor({}), {}]", [d_list(s[0], m), d_int(s[1])], (m,) + s[2:], False
    return "[{}, T.tensor({})]", [d_int(s[0]), d_list(s[1], m)], (m,) + s[2:], False


def op_mask_int(rng, s):
    if len(s) < 2:
        return None
    mask = [rng.random() < 0.5 for _ in range(s[0])]
    return f"[T.tensor({mask}), {{}}]", [d_int(s[1])], (sum(mask),) + s[2:], False


def op_0d(rng, s):
    return ("[T.tensor({})]", [d_int(s[0])], s[1:], False) if s else None


def op_tail(rng, s):
    """``x[i:]`` and a slice whose stop is past the end: their length depends on the drawn start."""
    if not s:
        return None
    n = s[0]
    if rng.random() < 0.5:
        return "[{}:]", [lambda r: str(r.randrange(-n - 1, n + 2))], None, True
    k = rng.randint(1, 3)
    return f"[{{}}:{{}}]", [lambda r: str(r.randrange(n)), lambda r: str(r.randrange(n, n + k + 1))], None, True


VIEW_OPS = [(op_int, 3), (op_int1, 2), (op_ellipsis, 1), (op_none_int, 1), (op_slice, 3), (op_slice1, 2),
            (op_int_slice, 2), (op_select, 2), (op_narrow, 2), (op_t, 1), (op_permute, 1)]
COPY_OPS = [(op_list_int, 2), (op_mask_int, 1), (op_0d, 1), (op_narrow_tensor, 1)]


def chain(rng, shape, n_ops, views_only=True, tail=False):
    """``(text, drawers, shape)`` of a chain of up to ``n_ops`` links from a tensor of ``shape`` (a 0-d result
    ends it); ``views_only``: every link a view; ``tail``: the last link may have a length that depends on the
    drawn integers (shape None)."""
    text, drawers = "", []
    table = VIEW_OPS + ([] if views_only else COPY_OPS)
    for k in range(n_ops):
        if shape == () or 0 in shape:  # (a mask that keeps nothing: an empty dim ends the chain)
            break
        last = k == n_ops - 1
        if last and tail and rng.random() < 0.15:
            found = op_tail(rng, shape)
        else:
            found = None
            while found is None:
                found = rng.choices([o for o, _ in table], [w for _, w in table])[0](rng, shape)
        t, ds, shape, _ = found
        text, drawers = text + t, drawers + ds
        if shape is None:
            break
    return text, drawers, shape


# ----------------------------------------------------------------------------------------------------------------
# a program: lines of source with ``{}`` for the integers drawn each iteration


class Line:
    """One line of source: ``text`` with ``{}`` for what ``drawers`` draw each time it runs; ``names``: what to
    compare after it; ``live``: its result is a view compared after every later line too."""

    def __init__(self, text, drawers=(), names=(), live=False):
        self.text, self.drawers, self.names, self.live = text, list(drawers), list(names), live

    def source(self, r):
        return self.text.format(*[d(r) for d in self.drawers])


def _data(shape, dtype, seed, how=None):
    """Source of a tensor of ``shape`` from a formula, in the memory layout ``how``: as made (None), ``transposed``
    (dims reversed in memory), ``strided`` (every other element of a longer last dim), ``offset`` (a storage
    offset of 1)."""
    n = int(np.prod(shape))
    if dtype == "int64":
        x = f"T.tensor((np.arange({n}) * {seed % 5 + 3} % 11 - 5).reshape{shape})"
    else:
        x = f"T.tensor(np.cos(np.arange({n}) * 0.417 + {seed % 7}).astype(np.float32).reshape{shape})"
    rev = tuple(range(len(shape)))[::-1]
    if how == "transposed":
        return f"{x}.permute{rev}.contiguous().permute{rev}"
    if how == "strided":
        return f"T.stack([{x}, T.zeros{shape}.to({x}.dtype)], -1).flatten(-2)[..., ::2]"
    if how == "offset":
        return f"T.cat([T.zeros(1).to({x}.dtype), {x}.flatten()])[1:].view{shape}"
    return x


LAYOUTS = (None, None, None, "transposed", "strided", "offset")


class Program:
    """The lines of one program, drawn from ``seed``; what the body's results are called."""

    def __init__(self, seed):
        rng = random.Random(seed)
        self.seed = seed
        self.path = PATHS[seed % len(PATHS)]
        self.lazy = seed % 4 == 3
        self.shape = shape = rng.choice(SHAPES)
        self.bdtype = rng.choice(["float32", "int64"])
        self.setup = [Line(f"w = {_data(shape, 'float32', seed, rng.choice(LAYOUTS))}.requires_grad_()", names=["w"]),
                      Line(f"b = {_data(shape, self.bdtype, seed + 1, rng.choice(LAYOUTS))}", names=["b"])]
        self.bases = {}  # live view -> its base (y or b)
        self.shapes = {}  # live view -> its shape
        for k in range(rng.randrange(3)):
            text, ds, self.shapes[f"p{k}"] = chain(rng, shape, rng.randint(1, 2))
            self.bases[f"p{k}"] = "b"
            self.setup.append(Line(f"p{k} = b{text}", ds, [f"p{k}"], live=True))
        self.body = [Line("y = w * 1.0" if rng.random() < 0.7 else "y = w.clone()", names=["y"])]
        self.terms = ["(y * y).sum()"]
        self.counter = 0
        for _ in range(rng.randint(4, 8)):
            gen = rng.choices(GENS, [w for _, w in GEN_WEIGHTS])[0]
            line = gen(self, rng)
            if line is not None:
                self.body.append(line)
        loss = "loss = " + " + ".join(self.terms)
        k = rng.random()
        if k < 0.15:  # a gradient of the gradient: the VJPs run as ops
            self.body.append(Line(loss + "; g, = T.autograd.grad(loss, w, create_graph=True); "
                                  "(g * g * 0.5).sum().backward()", names=["g", "w.grad"]))
        elif k < 0.25:
            self.body.append(Line(loss + "; loss.backward(retain_graph=True); (loss * 0.5).backward()",
                                  names=["w.grad"]))
        else:
            self.body.append(Line(loss + "; loss.backward()", names=["w.grad"]))
        self.live = [n for line in self.setup + self.body if line.live for n in line.names]

    def name(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def base(self, rng, grad_ok=True):
        """A tensor of the program's shape to read or write: ``y`` (requires grad) or the buffer ``b``."""
        return "y" if grad_ok and rng.random() < 0.6 else "b"

    def is_int(self, target):
        """Whether ``target`` (``y``, ``b`` or a live view) holds integers."""
        return self.bases.get(target, target) == "b" and self.bdtype == "int64"

    def value(self, rng, target, shape, src_chain=None):
        """A value of ``shape`` to write into ``target``: a number, a full tensor, or (``src_chain``: the target's
        own chain, the integers drawn anew) a view of ``w`` times a number."""
        is_int = self.is_int(target)
        draw = d_small_int if is_int else d_float
        u = rng.random()
        if u < 0.4 or shape is None:
            return "{}", [draw]
        if u < 0.7 or src_chain is None or is_int:
            return f"T.full({shape}, {{}}{', dtype=T.int64' if is_int else ''})", [draw]
        text, ds = src_chain
        return f"w{text} * {{}}", ds + [draw]


# ----------------------------------------------------------------------------------------------------------------
# the kinds of body lines


def gen_read(p, rng):
    base = rng.choice(["y", "y", "b", "w"])
    text, ds, shape = chain(rng, p.shape, rng.randint(1, 3), views_only=False, tail=True)
    name = p.name("r")
    if base != "b" and rng.random() < 0.7:
        p.terms.append(f"({name} * {rng.choice([0.5, -2.0, 1.5])}).sum()")
    return Line(f"{name} = {base}{text}", ds, [name])


def gen_live(p, rng):
    """A view kept alive (compared after every later line), of ``y`` (maybe with its gradient retained) or of
    ``b``."""
    base = p.base(rng)
    text, ds, shape = chain(rng, p.shape, rng.randint(1, 3))
    name = p.name("v")
    p.bases[name], p.shapes[name] = base, shape
    extra, names = "", [name]
    if base == "y":
        p.terms.append(f"({name} * {rng.choice([0.5, -1.0, 3.0])}).sum()")
        k = rng.random()
        # (no tensor hook: a hook on a view later written in place changes the gradient in torchish, not in
        # PyTorch, a known gap)
        if k < 0.2:
            extra, names = f"; {name}.retain_grad()", [name, f"{name}.grad"]
    return Line(f"{name} = {base}{text}{extra}", ds, names, live=True)


def _targets(p):
    return [line.names[0] for line in p.body if line.live] + [line.names[0] for line in p.setup if line.live]


def gen_inplace(p, rng):
    """An in-place op on a view of ``y``, ``b`` or of a live view."""
    lives = _targets(p)
    base = rng.choice(lives) if lives and rng.random() < 0.35 else p.base(rng)
    shape = p.shape if base in ("y", "b") else p.shapes[base]
    if not shape:
        text, ds = "", []
    else:
        text, ds, shape = chain(rng, shape, rng.randint(0 if base[0] in "vp" else 1, 2))
    is_int = p.is_int(base)
    k = rng.random()
    if k < 0.25:
        op, ods = "add_({})", [d_small_int if is_int else d_float]
    elif k < 0.45:
        op, ods = "mul_({})", [d_small_int if is_int else d_float]
    elif k < 0.6:
        op, ods = "zero_()", []
    elif k < 0.75:
        op, ods = "fill_({})", [d_small_int if is_int else d_float]
    elif base in ("y", "b") and not is_int:
        src = "w" if base == "y" else "b"
        op, ods = f"copy_({src}{text} * {{}})", ds + [d_float]  # the same chain, other integers
    else:
        op, ods = "sub_(1)", []
    return Line(f"{base}{text}.{op}", ds + ods, [base] if base in ("y", "b") else [])


def gen_setitem(p, rng):
    """``x[...] = v`` or ``x[...] += v`` through a chain of views, the last index maybe an index tensor or mask."""
    base = p.base(rng)
    pre, pds, shape = chain(rng, p.shape, rng.randint(0, 1))
    if not shape or 0 in shape:
        pre, pds, shape = "", [], p.shape
    found = None
    table = VIEW_OPS[:7] + COPY_OPS[:3]  # (bracket indices only: an assignment's target)
    while found is None:
        found = rng.choices([o for o, _ in table], [w for _, w in table])[0](rng, shape)
    last, lds, vshape, _ = found
    src = (last, lds) if not pre and base == "y" else None
    if "T.tensor([" in last and "True" not in last and "False" not in last:
        vshape = None  # (other values at a repeated index: which write wins is unspecified; a number is the same)
    vtext, vds = p.value(rng, base, vshape, src)
    op = rng.choice(["=", "=", "+=", "*="])
    return Line(f"{base}{pre}{last} {op} {vtext}", pds + lds + vds, [base])


def gen_index_put(p, rng):
    base = p.base(rng)
    s = p.shape
    acc = rng.random() < 0.6
    m = rng.randint(1, 4)
    two = rng.random() < 0.5
    idx = "(T.tensor({}), T.tensor({}))" if two else "(T.tensor({}),)"
    ids = [d_list(s[0], m, unique=not acc), d_list(s[1], m, unique=not acc)] if two else \
        [d_list(s[0], m, unique=not acc)]
    vshape = (m,) + s[(2 if two else 1):]
    is_int = p.is_int(base)
    dt = ", dtype=T.int64" if is_int else ""
    if rng.random() < 0.5:
        val, vds = f"T.tensor({{}}{dt})", [d_small_int if is_int else d_float]
    else:
        val, vds = f"T.full({vshape}, {{}}{dt})", [d_small_int if is_int else d_float]
    if two and not acc and m > 1:
        ids = [d_list(s[0], m, unique=True), d_list(s[1], 1)]  # (pairs repeat only when both lists repeat)
        idx = "(T.tensor({}), T.tensor({}))"
    return Line(f"{base}.index_put_({idx}, {val}, accumulate={acc})", ids + vds, [base])


def gen_iterate(p, rng):
    base = p.base(rng)
    text, ds, shape = chain(rng, p.shape, rng.randint(0, 1))
    if not shape:
        text, ds, shape = "", [], p.shape
    name = p.name("u")
    k = rng.random()
    is_int = p.is_int(base)
    if k < 0.3:
        if base == "y" and rng.random() < 0.7:
            base, is_int = "b", p.is_int("b")  # (rows of y written in place: PyTorch's error, now and then)
        return Line(f"for r in {base}{text}: r.add_({{}})", ds + [d_small_int if is_int else d_float],
                    [base])
    if k < 0.55:
        d = rng.randrange(len(shape))
        if base == "y":  # (the rows' sum taken at once: a later write to y would fail the backward)
            p.terms.append(f"{name}s")
            return Line(f"{name} = {base}{text}.unbind({d}); "
                        f"{name}s = sum((q * (i + 1.0)).sum() for i, q in enumerate({name}))", ds, [name])
        return Line(f"{name} = {base}{text}.unbind({d})", ds, [name])
    if len(shape) >= 2:
        inner = rng.choice([("[{}]", [d_int(shape[1])]), (".narrow(0, {}, 1)", [d_start(shape[1], 1)])])
        if base == "y":
            p.terms.append(f"{name}.sum()")
        return Line(f"{name} = T.stack([r{inner[0]} * 2 for r in {base}{text}])", inner[1] + ds, [name])
    if base == "y":
        p.terms.append(f"{name}.sum()")
    return Line(f"{name} = T.stack(list({base}{text}))", ds, [name])


def gen_nograd(p, rng):
    text, ds, _ = chain(rng, p.shape, rng.randint(1, 2))
    return Line(f"with T.no_grad(): w{text}.mul_({{}})", ds + [lambda r: repr(r.choice([0.5, 1.5, -1.0]))],
                ["w"])


def gen_saved(p, rng):
    """A product that saves a view of ``y``: a later write to ``y`` makes the backward fail (as in PyTorch)."""
    text, ds, _ = chain(rng, p.shape, 1)
    name = p.name("s")
    p.terms.append(f"{name}.sum()")
    return Line(f"{name} = y{text}; {name} = {name} * {name}", ds, [name])


def d_range(n, k):
    """``a, a + k`` for ``range``: ``k`` rows of a dim of ``n`` from a drawn start."""
    def draw(r):
        a = r.randrange(n - k + 1)
        return f"{a}, {a + k}"
    return draw


def gen_pyloop(p, rng):
    """A Python loop over rows inside one line (``sparse_``-style per-row writes and reads), its range drawn."""
    base = p.base(rng)
    n, m = p.shape[0], p.shape[1]
    k = rng.randint(2, min(4, n))
    name = p.name("l")
    kind = rng.random()
    if kind < 0.35:
        by = "(i + 1)" if p.is_int(base) else "(i * 0.5 - 1)"
        return Line(f"for i in range({{}}): {base}[i].mul_({by})", [d_range(n, k)], [base])
    if kind < 0.6:
        return Line(f"for i in range({{}}): {base}[:, i % {m}] += {base}[(i + 1) % {n}, i % {m}] * 2",
                    [d_range(n, k)], [base])
    if base == "y":
        p.terms.append(f"{name}.sum()")
    return Line(f"{name} = T.stack([{base}[i, (i * 3) % {m}] + {base}[-i - 1].sum() for i in range({{}})])",
                [d_range(n, k)], [name])


def gen_selfwrite(p, rng):
    """A view written from another view of the same base (the same chain, other integers: the same shape). The
    source is a new tensor computed from that view: an in-place op whose operand overlaps the written memory in
    part gives results that depend on PyTorch's loop order (undefined)."""
    base = p.base(rng)
    text, ds, _ = chain(rng, p.shape, rng.randint(1, 2))
    k = rng.random()
    if k < 0.4:
        return Line(f"{base}{text}.copy_({base}{text} * 2)", ds + ds, [base])
    if k < 0.7:
        if text.endswith(")"):  # (a call is no target of ``+=``)
            return Line(f"{base}{text}.add_({base}{text}.clone())", ds + ds, [base])
        return Line(f"{base}{text} += {base}{text}.clone()", ds + ds, [base])
    if base == "y":  # writes through an alias that shares y's storage and version counter
        return Line(f"y.detach(){text}.mul_(2)", ds, [base])
    return Line(f"{base}{text}.sub_({base}{text} * 3)", ds + ds, [base])


def d_bounds(n, length, step):
    """``start, end[, step]`` of slice_scatter: ``length`` elements of a dim of ``n``."""
    span = (length - 1) * step + 1

    def draw(r):
        a = r.randrange(n - span + 1)
        return f"{a}, {a + span}" + (f", {step}" if step > 1 else "")
    return draw


def gen_scatter(p, rng):
    """select_scatter / slice_scatter of a view of ``w`` into ``y`` (both differentiable), their ints drawn."""
    d = rng.randrange(len(p.shape))
    n = p.shape[d]
    name = p.name("c")
    p.terms.append(f"({name} * {name}).sum()")
    if rng.random() < 0.5:
        return Line(f"{name} = T.select_scatter(y, w.select({d}, {{}}) * 0.5, {d}, {{}})",
                    [d_int(n), d_int(n)], [name])
    step = rng.choice([1, 2]) if n >= 3 else 1
    length = rng.randint(1, (n - 1) // step + 1)
    return Line(f"{name} = T.slice_scatter(y, w.narrow({d}, {{}}, {length}) * 0.5, {d}, {{}})",
                [d_start(n, length), d_bounds(n, length, step)], [name])


GEN_WEIGHTS = [(gen_scatter, 1), (gen_pyloop, 2), (gen_selfwrite, 2), (gen_read, 4), (gen_live, 3), (gen_inplace, 3),
               (gen_setitem, 3), (gen_index_put, 2),
               (gen_iterate, 2), (gen_nograd, 1), (gen_saved, 1)]
GENS = [g for g, _ in GEN_WEIGHTS]


# ----------------------------------------------------------------------------------------------------------------
# running a program in both libraries


def _env(lib):
    return {"T": lib, "np": np}


def _get(env, name):
    obj = env
    head, *rest = name.split(".")
    obj = env.get(head, _MISSING)
    for attr in rest:
        obj = getattr(obj, attr) if obj is not _MISSING else _MISSING
    return obj


_MISSING = object()


# results whose strides are not compared: autograd.grad's gradient of a leaf whose memory is not in row-major order
# is row-major in torchish (PyTorch's follows the computation; ``.grad`` has the leaf's strides in both)
UNSTRIDED = ("g",)


def compare(ref, got, path):
    if ref is _MISSING or got is _MISSING:
        assert (ref is _MISSING) == (got is _MISSING), f"{path}: defined in one library only"
        return
    if isinstance(ref, torch.Tensor):
        assert_same(ref, got, path)
        if path in UNSTRIDED:
            return
        assert tuple(got.stride()) == tuple(ref.stride()), f"{path}: strides {got.stride()} != torch's {ref.stride()}"
        assert got.storage_offset() == ref.storage_offset(), \
            f"{path}: storage offset {got.storage_offset()} != torch's {ref.storage_offset()}"
        assert got.requires_grad == ref.requires_grad, f"{path}: requires_grad {got.requires_grad}"
    elif isinstance(ref, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(ref), f"{path}: {type(got)} of {len(got)}"
        for i, (a, b) in enumerate(zip(ref, got)):
            compare(a, b, f"{path}[{i}]")
    else:
        assert got == ref, f"{path}: {got!r} != torch's {ref!r}"


def _run_line(src, env):
    try:
        exec(src, env)  # noqa: S102 - the program is the fuzzer's own source
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return e
    return None


ERRORS: dict = {}  # torch's exception type -> lines that raised it in both libraries (the command line prints it)


def run_program(seed, verbose=False):
    """Run program ``seed``; None, or ``(kind, description with the program's source)`` of the first mismatch."""
    prog = Program(seed)
    saved = torchish.config.lowered_backward, torchish.config.lazy
    torchish.config.lowered_backward, torchish.config.lazy = prog.path, prog.lazy
    try:
        return _run(prog, verbose)
    finally:
        torchish.config.lowered_backward, torchish.config.lazy = saved


def _run(prog, verbose):
    envs = _env(torch), _env(torchish)
    ran = [f"# seed {prog.seed}: lowered_backward={prog.path!r} lazy={prog.lazy}; T is torch or torchish",
           "import numpy as np", "import torch as T"]
    body_names = sorted({line.text.split(" = ")[0] for line in prog.body if re.match(r"\w+ = ", line.text)})
    setup_r = Draws(prog.seed * 31 + 7, 0.0)
    for it in range(-1, ITERS):
        if it == -1:
            lines, r = prog.setup, setup_r
        else:
            lines, r = prog.body, Draws(prog.seed * 1009 + it, BAD)
            for env in envs:
                for n in body_names:
                    env.pop(n, None)
            ran.append(f"# iteration {it}")
        for line in lines:
            src = line.source(r)
            ran.append(src)
            if verbose:
                print(src)
            errs = [_run_line(src, env) for env in envs]
            kind = src.split("=")[0].split("(")[0].strip()[:24]
            if errs[0] is not None or errs[1] is not None:
                if errs[0] is None or errs[1] is None or not issubclass(error_family(errs[1]),
                                                                         error_family(errs[0])):
                    return kind, _report(ran, f"torch: {errs[0]!r}\ntorchish: {errs[1]!r}")
                ERRORS[type(errs[0]).__name__] = ERRORS.get(type(errs[0]).__name__, 0) + 1
                if verbose:
                    print("   both raised", type(errs[0]).__name__, str(errs[0])[:100])
            if prog.lazy and line is not lines[-1]:
                continue
            names = list(line.names) + [n for n in prog.live] + ["y", "b", "w", "w.grad"]
            for n in dict.fromkeys(names):
                try:
                    compare(_get(envs[0], n), _get(envs[1], n), n)
                except AssertionError as e:
                    return kind, _report(ran, str(e)[:1500])
    return None


def _report(ran, what):
    return "\n".join(ran) + "\n# --> " + what.replace("\n", "\n# ")


def fuzz(n, start=0, verbose=False, live=False):
    return harness.fuzz(run_program, n, start, verbose, live)


@needs_torch
def test_fuzz_index_loops():
    harness.assert_none_differ(fuzz(N_PROGRAMS), N_PROGRAMS)


if __name__ == "__main__":
    import argparse
    import time
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int, nargs="?", default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    res = fuzz(a.n, a.seed, a.v, live=True)
    harness.print_summary(res, a.n, {})
    print("lines that raised in both:", ERRORS)
    print(f"{time.time() - t0:.1f} s")


# ----------------------------------------------------------------------------------------------------------------
# regressions: one test per root cause the fuzzer found


@needs_torch
def test_create_graph_gradient_of_unbinds_with_another_number_of_outputs():
    """unbind's backward op (create_graph=True) was cached without the number of outputs: after an unbind of 3
    rows, the gradients of a 5-row unbind's last 2 rows were dropped (zeros)."""
    def grads(T):
        out = []
        for n in (3, 5):
            w = T.tensor(np.arange(2 * n, dtype=np.float32).reshape(n, 2), requires_grad=True)
            loss = sum((q * q * (i + 1.0)).sum() for i, q in enumerate(w.unbind(0)))
            g, = T.autograd.grad(loss, w, create_graph=True)
            (g * g).sum().backward()
            out += [g, w.grad]
        return out
    assert_same(grads(torch), grads(torchish))


@needs_torch
def test_scatter_results_keep_the_inputs_strides_and_offset():
    """slice/select/diagonal_scatter return a clone of the input that keeps its strides and storage offset, dense
    or not (an expanded input: contiguous); torchish's were contiguous."""
    def strides(T):
        y = T.cat([T.zeros(1), T.arange(40.)])[1:].view(10, 4)
        inputs = [y, T.stack([y, y], -1).flatten(-2)[..., ::2], T.arange(4.).expand(3, 4), y.t().contiguous().t()]
        out = []
        for x in inputs:
            for r in (T.slice_scatter(x, T.ones(x.shape[0], 2), 1, 0, 2), T.select_scatter(x, T.ones(x.shape[0]), 1, 1),
                      T.diagonal_scatter(x, T.ones(min(x.shape)))):
                out.append((r, r.stride(), r.storage_offset(), r.is_contiguous()))
        return out
    assert_same(strides(torch), strides(torchish))


@needs_torch
def test_scatters_take_their_index_as_a_value():
    """select_scatter's index and slice_scatter's start are values of the eager kernels, as select's and narrow's
    (a loop over rows compiled one kernel per index): once warm, new indices compile nothing and give torch's
    values and gradients."""
    from torchish import _executables

    def run(T, starts):
        x = T.tensor(np.arange(48, dtype=np.float32).reshape(12, 4), requires_grad=True)
        out = []
        for i in starts:
            src = T.tensor(np.arange(8, dtype=np.float32).reshape(2, 4) + i, requires_grad=True)
            a = T.select_scatter(x * 1.0, src[0] * 2, 0, i)
            b = T.slice_scatter(x * 1.0, src, 0, i, i + 2)
            c = T.slice_scatter(x * 1.0, src, 0, i, i + 3, 2)
            ((a + b + c) * T.arange(48.).reshape(12, 4)).sum().backward()
            out += [a, b, c, src.grad]
        return out + [x.grad]
    for warm in ((1, 2, 4), (2, 1)):  # (the backward's lowered program, for a fresh .grad and for accumulating
        run(torchish, warm)           # into one, compiles on a structure's second sighting)
    before = _executables.stats()["compiles"]
    got = run(torchish, (3, 7, 9, 5))
    assert _executables.stats()["compiles"] == before
    assert_same(run(torch, (3, 7, 9, 5)), got)
