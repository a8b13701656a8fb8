"""``torchish.Tag``: PyTorch's operator tags. Custom operators act on two of them (see ``torchish.library``):
``Tag.inplace`` (the op writes its first argument and returns it) and ``Tag.out`` (it writes keyword-only output
buffers and returns them); the others are recorded on the op (``OpOverload.tags``) for code that reads them."""
from __future__ import annotations

import enum

_NAMES = ("core", "cudagraph_unsafe", "data_dependent_output", "dynamic_output_shape", "flexible_layout",
          "generated", "inplace", "inplace_view", "maybe_aliasing_or_mutating", "needs_contiguous_strides",
          "needs_exact_strides", "needs_fixed_stride_order", "nondeterministic_bitwise", "nondeterministic_seeded",
          "out", "out_variant", "pointwise", "pt2_compliant_tag", "reduction", "view_copy")

Tag = enum.Enum("Tag", [(name, i) for i, name in enumerate(_NAMES)], module=__name__)
Tag.__doc__ = "PyTorch's operator tags (``torch.Tag``)."


def normalize(tags):
    """``tags`` (None, one Tag or a sequence) as a tuple without repeats."""
    if tags is None:
        return ()
    if isinstance(tags, Tag):
        tags = (tags,)
    return tuple(dict.fromkeys(tags))
