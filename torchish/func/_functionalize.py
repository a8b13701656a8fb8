"""``functionalize``: PyTorch's transform that rewrites in-place ops and views of a function as out-of-place ops.
torchish's ops already compute new JAX values (an in-place op rebinds its Tensor), so a function runs the same
way functionalized; the argument is still checked as PyTorch checks it."""
from __future__ import annotations

import functools


def functionalize(func, *, remove="mutations"):
    """``func`` itself, wrapped: its mutations are already functional in torchish."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)
    return functionalized
