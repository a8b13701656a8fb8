"""``torchish.utils.flop_counter``: count FLOPs as PyTorch's ``FlopCounterMode`` does.

PyTorch counts the matrix products its ATen operators run (``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``_scaled_mm``,
``convolution`` and ``convolution_backward``, the fused attention kernels), forward and backward, per module. torchish
runs its own ops, so while a mode is active each op reports the ATen calls PyTorch's decomposition of the same call
would make (``utils/_flop_rules.py``: a 3-d ``F.linear`` with a bias is one flattened ``addmm``, the CPU's
``scaled_dot_product_attention`` runs its flash kernel, which no formula counts, or the math path's ``bmm``), and
each backward node the calls of its gradients, so the same program gives PyTorch's numbers. The counts are keyed
by ``torchish.ops.aten`` packets, which print and compare as PyTorch's (``aten.mm``).

Module scopes come from forward pre/post hooks on every module and multi-grad hooks on their inputs and outputs
(:class:`~torchish.utils.module_tracker.ModuleTracker`), named by the root module's class and the attribute path
(``"Net.fc1"``), plus ``"Global"`` for everything.

While a mode is active, a ``torchish.compile``'d function runs eagerly, so that every call is counted, as
PyTorch's mode counts every call of a ``torch.compile``'d one (a compiled program runs no Python to count). A
custom op
(``torchish.library``) counts by the formula registered for its packet (:func:`register_flop_formula`), never by
the ops inside its kernel, as PyTorch's dispatch sees only the op.

Example::

    >>> from torchish.utils.flop_counter import FlopCounterMode
    >>> with FlopCounterMode(display=False) as fc:
    ...     torchish.mm(torchish.ones(2, 3), torchish.ones(3, 4))
    >>> fc.get_total_flops()
    48
"""
from __future__ import annotations

import contextlib
import warnings
from collections import defaultdict
from functools import wraps
from math import prod

from ..library.aten import ATEN as aten
from ..library.registry import OpOverloadPacket
from . import _flop_rules
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]


def get_shape(i):
    return i.shape if hasattr(i, "shape") and not isinstance(i, tuple) else i


def _shapes(tree):
    if isinstance(tree, (list, tuple)) and not hasattr(tree, "shape"):
        return type(tree)(_shapes(t) for t in tree) if type(tree) in (list, tuple) else tree
    if isinstance(tree, dict):
        return {k: _shapes(v) for k, v in tree.items()}
    return get_shape(tree)


def shape_wrapper(f):
    """``f`` called with the shapes of its tensor arguments and ``out_shape`` (the result's shape)."""
    @wraps(f)
    def nf(*args, out_val=None, **kwargs):
        args, kwargs, out_shape = _shapes((args, kwargs, out_val))
        return f(*args, out_shape=out_shape, **kwargs)
    return nf


flop_registry: dict = {}


def register_flop_formula(targets, get_raw=False):
    """Register ``formula(*shapes, out_shape=..., **kwargs) -> int`` for one packet or a list of them
    (``torchish.ops.aten.mm``, ``torchish.ops.mylib.foo``); ``get_raw``: it receives the arguments themselves."""
    def register_fun(flop_formula):
        if not get_raw:
            flop_formula = shape_wrapper(flop_formula)

        def register(target):
            if not isinstance(target, OpOverloadPacket):
                raise ValueError(f"register_flop_formula(targets): expected each target to be OpOverloadPacket (i.e. "
                                 f"torch.ops.mylib.foo), JitFunction, or HigherOrderOperator, got {target} which is "
                                 f"of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = flop_formula

        for t in (targets if isinstance(targets, (list, tuple)) else [targets]):
            register(t)
        return flop_formula
    return register_fun


# ------------------------------------------------------------------------------------------------------------
# formulas (PyTorch's: multiply-adds count 2, bias additions and elementwise work are not counted)


@register_flop_formula(aten.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """2 * m * k * n for an (m, k) @ (k, n) product."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


@register_flop_formula(aten.addmm)
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    return mm_flop(a_shape, b_shape)


@register_flop_formula(aten.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs) -> int:
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return b * m * n * 2 * k


@register_flop_formula(aten.baddbmm)
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    return bmm_flop(a_shape, b_shape)


@register_flop_formula(aten._scaled_mm)
def _scaled_mm_flop(a_shape, b_shape, scale_a_shape, scale_b_shape, bias_shape=None, scale_result_shape=None,
                    out_dtype=None, use_fast_accum=False, out_shape=None, **kwargs) -> int:
    return mm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False) -> int:
    """Multiplications of a convolution, times 2: for each point of the output (of the input, when transposed),
    the filter times the channels it joins, per batch element."""
    batch_size = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return prod(conv_shape) * prod(filter_size) * batch_size * c_out * c_in * 2


@register_flop_formula([aten.convolution, aten._convolution, aten.cudnn_convolution, aten._slow_conv2d_forward,
                        aten.convolution_overrideable])
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args, out_shape=None,
              **kwargs) -> int:
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


@register_flop_formula(aten.convolution_backward)
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed,
                       _output_padding, _groups, output_mask, out_shape, **kwargs) -> int:
    """grad_input is a transposed convolution of grad_out with the weight (a plain one for a transposed conv);
    grad_weight a convolution of the input with grad_out, batch and channel dims swapped."""
    def t(shape):
        return [shape[1], shape[0]] + list(shape[2:])
    total = 0
    if output_mask[0]:
        total += conv_flop_count(grad_out_shape, w_shape, get_shape(out_shape[0]), not transposed)
    if output_mask[1]:
        gw = get_shape(out_shape[1])
        if transposed:
            total += conv_flop_count(t(grad_out_shape), t(x_shape), t(gw), transposed=False)
        else:
            total += conv_flop_count(t(x_shape), t(grad_out_shape), t(gw), transposed=False)
    return total


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """q @ k^T and scores @ v, per (batch, query head); key/value heads may be fewer (grouped-query attention)."""
    b, h_q, s_q, d_q = query_shape
    _b2, h_kv, s_k, _d2 = key_shape
    _b3, _h3, _s3, d_v = value_shape
    if not (b == _b2 == _b3 and h_kv == _h3 and d_q == _d2 and s_k == _s3):
        raise AssertionError(f"sdpa_flop_count: query/key/value shapes are incompatible: q={query_shape}, "
                             f"k={key_shape}, v={value_shape}")
    if h_q < h_kv or h_q % h_kv != 0:
        raise AssertionError(f"sdpa_flop_count: query heads ({h_q}) must be a multiple of key/value heads ({h_kv})")
    return bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k)) + bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_v))


@register_flop_formula([aten._scaled_dot_product_efficient_attention, aten._scaled_dot_product_flash_attention,
                        aten._scaled_dot_product_cudnn_attention])
def sdpa_flop(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(query_shape, key_shape, value_shape)


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape):
    """The scores recomputed, then grad through scores @ v (two products) and q @ k^T (two)."""
    b, h_q, s_q, d_q = query_shape
    _b2, h_kv, s_k, _d2 = key_shape
    _b3, _h3, _s3, d_v = value_shape
    _b4, _h4, _s4, _d4 = grad_out_shape
    if not (b == _b2 == _b3 == _b4 and h_kv == _h3 and h_q == _h4):
        raise AssertionError("sdpa_backward_flop_count: batch/heads mismatch among tensors")
    if h_q < h_kv or h_q % h_kv != 0:
        raise AssertionError(f"sdpa_backward_flop_count: query heads ({h_q}) must be a multiple of key/value heads "
                             f"({h_kv})")
    if not (d_q == _d2 and d_v == _d4 and s_k == _s3 and s_q == _s4):
        raise AssertionError("sdpa_backward_flop_count: grad_out/value/key/query shapes are incompatible")
    bh = b * h_q
    return (bmm_flop((bh, s_q, d_q), (bh, d_q, s_k)) + bmm_flop((bh, s_q, d_v), (bh, d_v, s_k))
            + bmm_flop((bh, s_k, s_q), (bh, s_q, d_v)) + bmm_flop((bh, s_q, s_k), (bh, s_k, d_q))
            + bmm_flop((bh, d_q, s_q), (bh, s_q, s_k)))


@register_flop_formula([aten._scaled_dot_product_efficient_attention_backward,
                        aten._scaled_dot_product_flash_attention_backward,
                        aten._scaled_dot_product_cudnn_attention_backward])
def sdpa_backward_flop(grad_out_shape, query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)


@register_flop_formula([aten._flash_attention_forward, aten._efficient_attention_forward], get_raw=True)
def _attention_forward_flop(query, key, value, *args, out_val=None, **kwargs) -> int:
    """(dense inputs: torchish has no nested tensors)"""
    return sdpa_flop_count(query.shape, key.shape, value.shape)


@register_flop_formula([aten._flash_attention_backward, aten._efficient_attention_backward], get_raw=True)
def _attention_backward_flop(grad_out, query, key, value, *args, out_val=None, **kwargs) -> int:
    return sdpa_backward_flop_count(grad_out.shape, query.shape, key.shape, value.shape)


# ------------------------------------------------------------------------------------------------------------
# the table


suffixes = ["", "K", "M", "B", "T"]


def get_suffix_str(number):
    """The suffix for ``number``'s magnitude, one step late: 1001M rather than 1.001B."""
    index = max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))
    return suffixes[index]


def convert_num_with_suffix(number, suffix):
    index = suffixes.index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffixes[index]


def convert_to_percent_str(num, denom) -> str:
    if denom == 0:
        return "0%"
    return f"{num / denom:.2%}"


def normalize_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _number(cell):
    try:
        return int(cell)
    except ValueError:
        return float(cell)


def _column(cells):
    """A column as tabulate shows it: cells stripped; where all are numbers, ints as they are and floats in the
    shortest form ("1296.000" shows as 1296)."""
    cells = [c.strip() for c in cells]
    try:
        nums = [_number(c) for c in cells]
    except ValueError:
        return cells
    if all(isinstance(n, int) for n in nums):
        return [str(n) for n in nums]
    return [format(float(n), "g") for n in nums]


def _table(rows, header, align):
    """``rows`` under ``header`` as tabulate's "simple" format prints them (the table PyTorch's get_table returns):
    columns two spaces apart, each at least two wider than its header, aligned as ``align`` says, a dashed rule
    under the header."""
    columns = [_column([r[i] for r in rows]) for i in range(len(header))]
    widths = [max([len(h) + 2] + [len(c) for c in col]) for h, col in zip(header, columns)]

    def line(cells):
        return "  ".join(c.ljust(w) if a == "left" else c.rjust(w) for c, w, a in zip(cells, widths, align))
    body = [line(cells) for cells in zip(*columns)]
    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + body)


# ------------------------------------------------------------------------------------------------------------
# the mode


class FlopCounterMode:
    """Counts the FLOPs run inside its context, per ATen operator and per module.

    Args:
        mods: ignored (modules are tracked without it), with PyTorch's warning.
        depth: how deep :meth:`get_table` (and the display on exit) goes into the module tree.
        display: print the table on exit.
        custom_mapping: ``{packet: formula}`` added to (or replacing entries of) :data:`flop_registry`.

    Example::

        >>> with FlopCounterMode(display=False) as fc:
        ...     model(x).sum().backward()
        >>> fc.get_total_flops(), fc.get_flop_counts()["Global"]
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode = None
        if custom_mapping is None:
            custom_mapping = {}
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        self.flop_registry = {
            **flop_registry,
            **{k: v if getattr(v, "_get_raw", False) else shape_wrapper(v) for k, v in custom_mapping.items()}}
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """``{module name: {packet: flops}}``, ``"Global"`` holding everything."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        """The counts as PyTorch's table: each module down to ``depth`` with its operators, in FLOPs with a
        suffix and as a share of the total; "Global" first unless a module holds all of it."""
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        global_flops = self.get_total_flops()
        global_suffix = get_suffix_str(global_flops)
        is_global_subsumed = False

        def process_mod(mod_name, depth):
            nonlocal is_global_subsumed
            total = sum(self.flop_counts[mod_name].values())
            is_global_subsumed |= total >= global_flops
            padding = " " * depth
            rows = [[padding + mod_name, convert_num_with_suffix(total, global_suffix),
                     convert_to_percent_str(total, global_flops)]]
            for k, v in self.flop_counts[mod_name].items():
                rows.append([padding + " - " + str(k), convert_num_with_suffix(v, global_suffix),
                             convert_to_percent_str(v, global_flops)])
            return rows

        values = []
        for mod in sorted(self.flop_counts.keys()):
            if mod == "Global":
                continue
            mod_depth = mod.count(".") + 1
            if mod_depth > depth:
                continue
            values.extend(process_mod(mod, mod_depth - 1))
        if "Global" in self.flop_counts and not is_global_subsumed:
            for value in values:
                value[0] = " " + value[0]
            values = process_mod("Global", 0) + values
        if not values:
            values = [["Global", "0", "0%"]]
        return _table(values, ["Module", "FLOP", "% Total"], ("left", "right", "right"))

    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args):
        if self.mode is None:
            raise AssertionError("Internal error: FlopCounter.__exit__ called but mode is None")
        self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return False

    def _count_flops(self, func_packet, out, args, kwargs):
        formula = self.flop_registry.get(func_packet)
        if formula is not None:
            flop_count = formula(*args, **kwargs, out_val=out)
            for par in set(self.mod_tracker.parents):
                self.flop_counts[par][func_packet] += flop_count
        return out


class _Hook:
    """What the op registry, the autograd engine and custom ops call while FlopCounterModes are active: each
    call becomes the ATen calls PyTorch would make, counted by every active mode (innermost first, as nested
    dispatch modes count)."""

    def __init__(self):
        self.modes = []
        self.opaque = 0  # inside a custom op's kernel: its ops are not seen, as PyTorch's dispatch does not see them

    def count(self, calls):
        for name, args, kwargs, out in calls:
            packet = getattr(aten, name)
            for mode in reversed(self.modes):
                mode.counter._count_flops(packet, out, args, kwargs)

    def __call__(self, op, args, st, res):
        if self.opaque:
            return
        rule = _flop_rules.rule(op.name)
        if rule is None:
            return
        first = res[0] if isinstance(res, tuple) else res
        fwd, bwd = rule(op, args, dict(st), first)
        self.count(fwd)
        node = first.grad_fn
        if bwd and node is not None and getattr(node, "op", None) is op:
            node._flop_backward = bwd

    def node(self, node, needed=None):
        if self.opaque:
            return
        calls = getattr(node, "_flop_backward", None)
        vals = getattr(node, "vals", None)
        if vals is not None and (calls is None or needed is not None and any(
                m and (e is None or id(e[0]) not in needed) for m, e in zip(node.mask, node.next_edges))):
            calls = _flop_rules.backward_of(node, needed)
        if calls:
            self.count(calls)

    def custom_op(self, e, pos, kw, run):
        from ..library.registry import OpNamespace
        packet = getattr(OpNamespace(e.namespace), e.opname)
        self.opaque += 1
        try:
            out = run(e, pos, kw)
        finally:
            self.opaque -= 1
        if not self.opaque:
            for mode in reversed(self.modes):
                mode.counter._count_flops(packet, out, list(pos), dict(kw))
        return out

    @contextlib.contextmanager
    def hidden(self):
        """Ops run inside are not seen (a fused PyTorch kernel no formula counts, run as several torchish ops)."""
        self.opaque += 1
        try:
            yield
        finally:
            self.opaque -= 1


_HOOK = _Hook()


def _install(on):
    from ..autograd import engine
    from ..ops import registry
    registry.flop_hook = _HOOK if on else None
    engine.node_hook = _HOOK.node if on else None


class _FlopCounterMode:
    """The part of a FlopCounterMode that is entered and left: it joins and leaves the active hook's modes."""

    def __init__(self, counter):
        self.counter = counter

    def __enter__(self):
        _HOOK.modes.append(self)
        _install(True)
        return self

    def __exit__(self, *args):
        if self in _HOOK.modes:
            _HOOK.modes.remove(self)
        if not _HOOK.modes:
            _install(False)
        return False


def hidden():
    """A context in which no active FlopCounterMode sees the ops run (nothing when none is active)."""
    return _HOOK.hidden() if _HOOK.modes else contextlib.nullcontext()

