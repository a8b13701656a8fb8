"""What PyTorch saves for each op's backward, so that in-place writes and second backwards fail exactly where
PyTorch's do (``derivatives.yaml``: the variables a formula reads become ``SavedVariable``\\s of the node).

An entry maps an op name to one string per input position: what the gradient of that input reads — input
positions as digits, ``o`` for all of the op's outputs, ``o1`` for output 1 only (``max(dim)`` saves its indices,
not its values). The node saves the union over the inputs that require grad (as
PyTorch's generated code saves under ``should_compute_output``). An empty union means nothing is saved: writing
any input or output in place leaves the backward valid, and backward may run twice without ``retain_graph``.

Ops without an entry save every Tensor input (and their outputs when they have a custom VJP); linear ops save
nothing. The VJPs themselves always read the forward's values, which JAX never mutates.
"""
from __future__ import annotations

import re


_TOKEN = re.compile(r"o\d*|\d")


def needed(spec, mask, n_out):
    """``(input positions, output positions)`` saved by a node whose inputs requiring grad are ``mask``."""
    ins, outs = set(), set()
    for i, m in enumerate(mask):
        if m and i < len(spec):
            for tok in _TOKEN.findall(spec[i]):
                if tok == "o":
                    outs.update(range(n_out))
                elif tok[0] == "o":
                    outs.add(int(tok[1:]))
                else:
                    ins.add(int(tok))
    return sorted(ins), sorted(outs)


SELF, RESULT, BOTH = ("0",), ("o",), ("0o",)

SAVED = {
    # unary maths whose derivative reads the result
    **{n: RESULT for n in ("exp", "exp2", "expm1", "sigmoid", "tanh", "sqrt", "rsqrt", "relu", "reciprocal")},
    # unary maths whose derivative reads the input
    **{n: SELF for n in ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "sin", "sinh",
                         "tan", "log", "log10", "log1p", "log2", "erf", "erfc", "erfinv", "digamma", "lgamma",
                         "sgn", "i0", "sinc", "logit", "frac", "clamp", "clamp_min", "clamp_max")},
    # rounding and sign: zero gradient, nothing read
    **{n: ("",) for n in ("ceil", "floor", "round", "trunc", "sign")},
    "mul": ("1", "0"),
    "div": ("1", "01"),
}
