"""Running a fake (meta) implementation, and ``torchish.library.get_ctx()`` for the ones with data-dependent output
shapes (``ctx.new_dynamic_size()``, as in PyTorch's ``nonzero`` example).

A fake implementation runs in three places: on meta tensors (PyTorch refuses a data-dependent size there, and so
does torchish), inside a ``torchish.compile`` trace (an XLA program has static shapes: the trace stops as for any
value-dependent code, and torchish.compile runs the function eagerly unless ``fullgraph=True``), and in opcheck's
``test_faketensor`` (a dynamic size is then a placeholder and only the outputs' ranks and dtypes are compared).
"""
from __future__ import annotations

import contextlib
import threading

_LOCAL = threading.local()


class FakeImplCtx:
    """What :func:`get_ctx` returns inside a fake implementation."""

    def __init__(self, e, mode):
        self._entry, self._mode = e, mode
        self.used_dynamic_size = False

    def new_dynamic_size(self, *, min=0, max=None):  # noqa: A002  (PyTorch's keyword names)
        e = self._entry
        if self._mode == "meta":
            raise RuntimeError(
                f"{e.qualname} ({_source(e)}): You're trying to run this operator with meta Tensors (as opposed to "
                "FakeTensors), but this operator may return an output Tensor with data-dependent shape. Meta Tensors "
                "don't support operators with outputs that have data-dependent shapes but FakeTensors do. If your "
                "operator does not return an output with data-dependent shape, make sure the FakeTensor and/or meta "
                "kernel does not call torch.library.get_ctx(). Otherwise, please use FakeTensors.")
        if self._mode == "trace":
            from ..ops.tracing import concrete_error
            raise concrete_error(f"the operator {e.qualname}, whose output shape depends on its input values "
                                 "(its fake impl calls torch.library.get_ctx().new_dynamic_size()),")
        self.used_dynamic_size = True
        return min

    create_unbacked_symint = new_dynamic_size


def _source(e):
    fn = e.custom._init_fn if e.custom is not None else e.fake
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "unknown"


def get_ctx():
    """The context of the fake implementation running now (None outside one)."""
    return getattr(_LOCAL, "ctx", None)


@contextlib.contextmanager
def fake_context(e, mode):
    prev = get_ctx()
    _LOCAL.ctx = ctx = FakeImplCtx(e, mode)
    try:
        yield ctx
    finally:
        _LOCAL.ctx = prev


def fake_impl(e):
    """The fake implementation of ``e`` (or its Meta kernel; for a custom op tagged ``inplace``/``out`` the one
    PyTorch generates: the written arguments are the results), None without one."""
    if e.fake is not None:
        return e.fake
    kernel = e.kernels.get("Meta")
    if kernel is not None:
        return kernel[0]
    if e.custom is not None and e.has_tag("inplace"):
        return lambda *args, **kwargs: args[0]
    if e.custom is not None and e.has_tag("out"):
        from .dispatch import out_names
        names = out_names(e)
        return lambda *args, **kwargs: kwargs[names[0]] if len(names) == 1 else tuple(kwargs[n] for n in names)
    return None


def run_fake(e, pos, kw, mode="meta"):
    from ..autograd.grad_mode import no_grad
    fake = fake_impl(e)
    if fake is None:
        raise NotImplementedError(
            f"{e.qualname}: attempted to run this operator with Meta tensors, but there was no fake impl or Meta "
            "kernel registered. You may have run into this message while using an operator with PT2 compilation "
            "APIs (torch.compile/torch.export); in order to use this operator with those APIs you'll need to add a "
            "fake impl. Please see the following for next steps:  https://pytorch.org/tutorials/advanced/"
            "custom_ops_landing_page.html")
    from .dispatch import kernel_args
    pos, kw = kernel_args(e, pos, kw)
    with no_grad(), fake_context(e, mode):
        return fake(*pos, **kw)

