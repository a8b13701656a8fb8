"""Printing tensors exactly as PyTorch does: ``repr(t)`` / ``str(t)`` and ``torchish.set_printoptions``.

The layout rules are PyTorch's: one formatter per tensor decides between integer mode (``1.``), fixed point
(``precision`` digits) and scientific notation from the nonzero finite values, pads every element to one width,
wraps rows at ``linewidth`` and summarizes tensors of more than ``threshold`` elements with ``...``. The values
are read once into numpy; all formatting is plain Python.
"""
from __future__ import annotations

import contextlib
import math

import jax
import numpy as np


class _PrintOptions:
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set how tensors print (PyTorch's ``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point of floating-point values (default 4).
        threshold: tensors with more elements than this are summarized with ``...`` (default 1000).
        edgeitems: items kept at each end of each dimension when summarizing (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``: a preset of the options above; explicit ones win.
        sci_mode: True/False forces scientific notation on/off; None (default) decides per tensor.

    Example:
        >>> torchish.set_printoptions(precision=2)
        >>> torchish.tensor([1.12345])
        tensor([1.12])
        >>> torchish.set_printoptions(profile="default")
    """
    if profile is not None:
        for k, v in _PROFILES[profile].items():
            setattr(PRINT_OPTS, k, v)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            setattr(PRINT_OPTS, k, v)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as keyword arguments for :func:`set_printoptions`."""
    return {k: getattr(PRINT_OPTS, k) for k in _PrintOptions.__slots__}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Change the print options inside a ``with`` block only."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ----------------------------------------------------------------------------------------------------------------
# element formatting


class _Formatter:
    """Decides how every element of one (real) tensor prints, from the values it will show."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        nz = flat[np.isfinite(flat) & (flat != 0)]
        if nz.size == 0:
            return
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        absv = np.abs(nz.astype(np.float64))
        lo, hi = float(absv.min()), float(absv.max())
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        vals = nz.tolist()
        if self.sci_mode:
            width = max(len(f"{v:.{p}e}") for v in vals)
        elif self.int_mode:
            width = max(len(f"{v:.0f}") for v in vals) + 1  # room for the trailing "."
        else:
            width = max(len(f"{v:.{p}f}") for v in vals)
        self.max_width = max(self.max_width, width)

    def format(self, v) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                s = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = str(v)
        return (self.max_width - len(s)) * " " + s


class _Formatters:
    """One formatter for real tensors; a (real, imaginary) pair for complex ones."""

    def __init__(self, shown: np.ndarray):
        if shown.dtype.kind == "c":
            self.real, self.imag = _Formatter(shown.real), _Formatter(shown.imag)
        else:
            self.real, self.imag = _Formatter(shown), None

    def element_width(self) -> int:
        w = self.real.max_width + 2  # ", " between elements
        if self.imag is not None:
            w += self.imag.max_width + 1  # the "j"
        return w

    def format(self, v) -> str:
        if self.imag is None:
            return self.real.format(v)
        re = self.real.format(v.real)
        im = (self.imag.format(v.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im


# ----------------------------------------------------------------------------------------------------------------
# layout


def _summarized(a: np.ndarray) -> np.ndarray:
    """The values a summarized tensor shows: ``edgeitems`` from each end of every dimension."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:  # PyTorch keeps a[:0] and a[-0:] (the whole vector) when edgeitems is 0
        return np.concatenate([a[:e], a[-e:]]) if a.shape[0] > 2 * e else a
    if not e:
        return a[tuple(slice(0, 0) for _ in a.shape)]
    for ax in range(a.ndim):
        if a.shape[ax] > 2 * e:
            idx = np.r_[0:e, a.shape[ax] - e:a.shape[ax]]
            a = np.take(a, idx, axis=ax)
    return a


def _vector_str(a, indent, summarize, fmt):
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / fmt.element_width()))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = ([fmt.format(v) for v in a[:e].tolist()] + [" ..."]
                + [fmt.format(v) for v in a[-e:].tolist()])
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a, indent, summarize, fmt):
    """The nested-bracket text of ``a`` (recursion depth is the number of dimensions)."""
    if a.ndim == 0:
        return fmt.format(a.tolist())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        rows = [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."] + \
               [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - e, a.shape[0])]
    else:
        rows = [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def format_values(a: np.ndarray, indent: int) -> str:
    """The bracketed body of a tensor's repr for the values ``a``, laid out from column ``indent``."""
    if a.size == 0:
        return "[]"
    if a.dtype.name == "bfloat16" or a.dtype.name.startswith("float8"):  # numpy sees an opaque type; float32
        a = a.astype(np.float32)                                            # holds every value exactly
    summarize = a.size > PRINT_OPTS.threshold
    fmt = _Formatters(_summarized(a) if summarize else a)
    return _nested_str(a, indent, summarize, fmt)


def _add_suffixes(text, suffixes, indent, force_newline=False):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if force_newline or last_line_len + len(s) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            last_line_len = indent + len(s)
            force_newline = False
        else:
            parts.append(", " + s)
            last_line_len += len(s) + 2
    parts.append(")")
    return "".join(parts)


def sparse_parts(t, indent, components, nnz):
    """The lines PyTorch prints for a sparse tensor's ``components`` (``(name, tensor)``: its indices and values,
    each as ``name=tensor(...)``) and the suffixes after them: size, nnz, a dtype other than the defaults, layout."""
    from . import _dtype
    parts = []
    for name, part in components:
        head = f"{name}=tensor("
        a = np.asarray(part.detach()._d)
        text = format_values(a, indent + len(head)) if a.size else "[]"
        if a.size == 0:
            text += f", size={tuple(a.shape)}"
        parts.append(head + text + ")")
    suffixes = [f"size={tuple(t.shape)}", f"nnz={nnz}"]
    if t.dtype not in (_dtype.DEFAULTS.float, _dtype.DEFAULTS.complex, _dtype.int64, _dtype.bool):
        suffixes.append(f"dtype={t.dtype}")
    suffixes.append(f"layout={t.layout}")
    return parts, suffixes


def _sparse_repr(t, prefix, suffixes) -> str:
    """A sparse COO tensor as PyTorch prints it: its raw indices and values, then size, nnz, dtype and layout."""
    indent = len(prefix)
    coo = t._coo
    parts, more = sparse_parts(t, indent, (("indices", coo.indices), ("values", coo.values)), coo.indices.shape[1])
    suffixes += more
    if t._gfn is not None:
        suffixes.append(f"grad_fn=<{type(t._gfn).__name__}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + (",\n" + " " * indent).join(parts), suffixes, indent, force_newline=True)


def _printing_in_compiled_trace():
    """Printing a tensor that ``torchish.compile`` is tracing is a graph break, as in ``torch.compile``: the
    function then runs eagerly and prints its real values on every call (a program would print once, at trace time,
    and never again). Tensors traced by ``torchish.func`` transforms or a user's ``jax.jit`` still print as
    ``tensor(<traced>, size=...)``."""
    from .autograd.grad_mode import STATE
    rec = STATE.recorder
    if rec is not None and rec.mode == "trace":
        from .ops.tracing import concrete_error
        raise concrete_error("printing a tensor (print, str, repr, an f-string)")


def tensor_repr(t, tensor_contents=None) -> str:
    """``repr(t)`` as PyTorch prints it."""
    from . import _device, _dtype
    from ._tensor import Tensor
    plain = type(t) is Tensor or type(t).__name__ in ("Parameter", "_SparseTensor")
    prefix = "tensor(" if plain else f"{type(t).__name__}("
    indent = len(prefix)
    suffixes = []
    d = t._d
    traced = isinstance(d, jax.core.Tracer)
    if traced and tensor_contents is None:
        _printing_in_compiled_trace()
    dev = t.device
    default_dev = _device.get_default_device()
    if dev.type != default_dev.type or (dev.type == "cuda" and dev.index != _device.current_index()):
        suffixes.append(f"device='{dev}'")
    if t._coo is not None:
        return _sparse_repr(t, prefix, suffixes)
    dt = t.dtype
    default_float = _dtype.DEFAULTS.float
    has_default_dtype = dt in (default_float, _dtype.DEFAULTS.complex, _dtype.int64, _dtype.bool)
    if type(d).__name__ == "MetaArray":  # no data: PyTorch's meta form
        suffixes.append(f"size={tuple(d.shape)}")
        if dt is not default_float:
            suffixes.append(f"dtype={dt}")
        body = "..."
    elif traced:
        suffixes.append(f"size={tuple(d.shape)}")
        if not has_default_dtype:
            suffixes.append(f"dtype={dt}")
        body = "<traced>"
    elif d.size == 0:
        if d.ndim != 1:
            suffixes.append(f"size={tuple(d.shape)}")
        if dt is not default_float:
            suffixes.append(f"dtype={dt}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(d.shape)}")
        if not has_default_dtype:
            suffixes.append(f"dtype={dt}")
        body = None
    if tensor_contents is not None:
        body = tensor_contents
    elif body is None:
        body = format_values(np.asarray(d), indent)
    if t._gfn is not None:
        suffixes.append(f"grad_fn=<{type(t._gfn).__name__}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
