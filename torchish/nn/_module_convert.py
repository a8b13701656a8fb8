"""Modes and conversions for :class:`~torchish.nn.Module`: ``train``/``eval``, ``requires_grad_``, ``zero_grad``,
``apply``, and ``to``/``float``/``double``/``half``/``cpu``/... which convert parameters IN PLACE (the Parameter
objects keep their identity, so optimizers holding them keep working) and replace buffers, as PyTorch does."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad


class ConvertMixin:
    """The mode and conversion half of :class:`~torchish.nn.Module`."""

    def train(self, mode: bool = True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p._gval is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p._gval
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn):
        """Call ``fn`` on every submodule (children first) and then on self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Convert every parameter, gradient and buffer. By default the Parameter objects keep their identity and
        take the converted values; ``torch.__future__`` switches to swapping their contents
        (``torch.utils.swap_tensors``) or to new Parameter objects, as in PyTorch."""
        from .. import __future__ as future
        from .parameter import Parameter
        if recurse:
            for m in self.children():
                m._apply(fn)
        swap = future.get_swap_module_params_on_conversion()
        overwrite = future.get_overwrite_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            g = param._gval
            if swap:
                from ..utils._swap import swap_tensors
                param.grad = None
                try:
                    swap_tensors(param, Parameter(applied, requires_grad=param.requires_grad))
                except Exception as e:
                    param.grad = g
                    raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") from e
            elif overwrite:
                param = self._parameters[key] = Parameter(applied, param.requires_grad)
            else:
                param.data = applied  # (the Parameter keeps its identity; a new dtype or shape drops its grad sink)
            if g is not None:
                with no_grad():
                    g_applied = fn(g)
                if swap:
                    g_applied.requires_grad_(g.requires_grad)
                    swap_tensors(g, g_applied)
                    param.grad = g
                elif overwrite:
                    param.grad = g_applied.requires_grad_(g.requires_grad)
                else:
                    g.data = g_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``: floating-point parameters and
        buffers take the dtype; everything moves to the device."""
        from .. import _dtype, _meta
        from ..ops.convert import _parse_to
        dtype, device, _ = _parse_to(args, dict(kwargs))
        if dtype is not None:
            dtype = _dtype.as_dtype(dtype)
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype={dtype}")
            if dtype.is_complex:
                import warnings
                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as parameters "
                              "or buffers. Please file an issue at https://github.com/pytorch/pytorch/issues/new?"
                              "template=bug-report.yml if a complex module does not work as expected.", stacklevel=2)

        memory_format = kwargs.get("memory_format")

        def convert(t):
            cast = dtype if (t.is_floating_point() or t.is_complex()) else None
            if device is not None and t.is_meta and not _meta.is_meta_device(device):
                raise NotImplementedError(_meta.TO_REAL)
            if memory_format is not None and t.dim() in (4, 5):
                return t.to(device, cast, memory_format=memory_format)
            return t.to(device, cast)

        return self._apply(convert)

    def _cast_floats(self, dt):
        return self._apply(lambda t: t.to(dt) if t.is_floating_point() else t)

    def float(self):
        from .. import _dtype
        return self._cast_floats(_dtype.float32)

    def double(self):
        from .. import _dtype
        return self._cast_floats(_dtype.float64)

    def half(self):
        from .. import _dtype
        return self._cast_floats(_dtype.float16)

    def bfloat16(self):
        from .. import _dtype
        return self._cast_floats(_dtype.bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def to_empty(self, *, device=None, recurse: bool = True):
        from ..ops.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self):
        """A no-op (JAX arrays are immutable and shared between threads already), except that uninitialized
        parameters and buffers raise as in PyTorch."""
        from .parameter import is_lazy
        for t in (*self.parameters(), *self.buffers()):
            if is_lazy(t):
                t.share_memory_()
        return self
