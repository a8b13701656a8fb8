"""``torch.nn.utils.prune``: masking parameters by a forward pre-hook, as PyTorch's pruning tutorial uses it.

Pruning ``module.<name>`` moves the Parameter to ``<name>_orig``, stores the mask as the buffer ``<name>_mask`` and
sets ``module.<name> = <name>_orig * <name>_mask`` (a plain tensor attribute, recomputed by a forward pre-hook before
each call). Pruning the same tensor again combines the masks through a :class:`PruningContainer` (the new method
only sees the entries the earlier masks kept); :func:`remove` makes the pruning permanent.

Example::

    >>> lin = torchish.nn.Linear(4, 3)
    >>> prune.l1_unstructured(lin, name="weight", amount=0.5)     # the 6 smallest |w| masked
    >>> int(lin.weight_mask.sum())
    6
    >>> prune.remove(lin, "weight")                               # lin.weight is a Parameter again
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ...ops.creation import ones_like, zeros_like
from ...ops.random import rand, rand_like
from ...ops.sort import kthvalue, topk
from ...ops.stats import norm
from .convert_parameters import parameters_to_vector


class BasePruningMethod(ABC):
    """A pruning method: ``compute_mask`` says which entries to keep; the instance is the module's pre-hook."""

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for ``t`` (same shape), starting from ``default_mask``."""

    def apply_mask(self, module):
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, combined with any earlier pruning of it."""
        old, old_keys = None, [k for k, h in module._forward_pre_hooks.items()
                                if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        if len(old_keys) > 1:
            raise RuntimeError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                               "Use a PruningContainer.")
        for k in old_keys:
            old = module._forward_pre_hooks.pop(k)
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            method = old
        elif old is not None:
            container = PruningContainer(old)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(orig.shape):
            raise ValueError(f"importance_scores should have the same shape as parameter {name} of {module}")
        scores = orig if importance_scores is None else importance_scores
        if old is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            module.register_buffer(name + "_mask", method.compute_mask(scores, default_mask=default_mask))
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if old is None:  # put the Parameter back as it was
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` with the entries this method drops set to zero (no module involved)."""
        scores = t if importance_scores is None else importance_scores
        if tuple(scores.shape) != tuple(t.shape):
            raise ValueError("importance_scores should have the same shape as tensor t")
        mask = self.compute_mask(scores, default_mask=ones_like(t) if default_mask is None else default_mask)
        return t * mask

    def remove(self, module):
        """Make the pruning permanent: ``module.<name>`` becomes the Parameter ``<name>_orig * <name>_mask``."""
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters.pop(name + "_orig")
        orig.data = weight.data
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied to one tensor; each new one acts on what the earlier kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], Iterable):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in (args[0] if len(args) == 1 else args):
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' "
                             f"to PruningContainer. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The latest method's mask, computed only over the entries (or slices) the current mask keeps."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            where = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")
            dim = method.dim + t.dim() if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor of size {t.shape}")
            keep = default_mask.sum(dim=[d for d in range(t.dim()) if d != dim]) != 0
            where = tuple(keep if d == dim else slice(None) for d in range(t.dim()))
        elif kind == "global":
            where = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[where], default_mask=default_mask[where])
        new_mask[where] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Keeps everything (adds the ``_orig``/``_mask`` reparametrization only)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Drops ``amount`` single entries (a count, or a fraction of the tensor), those ``_order`` ranks lowest (or
    highest, with ``_largest``)."""

    PRUNING_TYPE = "unstructured"
    _largest = False

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        n = _count(self.amount, t.nelement())
        _check_count(n, t.nelement())
        mask = default_mask.clone()
        if n:
            mask.view(-1)[topk(self._order(t).view(-1), k=n, largest=self._largest).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomUnstructured(_Unstructured):
    """Drops ``amount`` entries chosen at random: as PyTorch, the ``amount`` largest of ``rand_like(t)``."""

    _largest = True

    def _order(self, t):
        return rand_like(t)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount)


class L1Unstructured(_Unstructured):
    """Drops the ``amount`` entries of smallest absolute value."""

    def _order(self, t):
        return t.abs()


class _Structured(BasePruningMethod):
    """Drops ``amount`` whole slices along ``dim`` (those ``_keep`` does not pick), within the default mask."""

    PRUNING_TYPE = "structured"

    def compute_mask(self, t, default_mask):
        if t.dim() <= 1:
            raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                             f"shape {t.shape} with {t.dim()} dims")
        if self.dim >= t.dim():
            raise IndexError(f"Invalid index {self.dim} for tensor of size {t.shape}")
        size = t.shape[self.dim]
        n = _count(self.amount, size)
        _check_count(n, size)
        if n == 0:
            return default_mask
        mask = zeros_like(t)
        mask[tuple(self._keep(t, size, n) if d == self.dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
        return mask * default_mask.to(dtype=mask.dtype)


class RandomStructured(_Structured):
    """Drops ``amount`` slices along ``dim`` chosen at random."""

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def _keep(self, t, size, n):
        prob = rand(size)
        return prob > kthvalue(prob, k=n).values

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """Drops the ``amount`` slices along ``dim`` of smallest L``n`` norm."""

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def _keep(self, t, size, n):
        dim = self.dim % t.dim()
        norms = norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        return topk(norms, k=size - n, largest=True).indices

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Applies a given mask."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):  # (PyTorch asserts it)
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# ----------------------------------------------------------------------------------------------------------------
# functional interface (each returns the module)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the ``(module, name)`` pairs together, as one concatenated tensor, with an unstructured method."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    scores = {} if importance_scores is None else importance_scores
    if not isinstance(scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    flat_scores = parameters_to_vector([scores.get((m, n), getattr(m, n)) for m, n in parameters])
    flat_mask = parameters_to_vector([getattr(m, n + "_mask", ones_like(getattr(m, n))) for m, n in parameters])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    method._tensor_name = "temp"
    container = PruningContainer(method)
    final = container.compute_mask(flat_scores, flat_mask)
    start = 0
    for m, n in parameters:
        p = getattr(m, n)
        custom_from_mask(m, n, mask=final[start:start + p.numel()].view_as(p))
        start += p.numel()


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent and drop its hook; returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether any submodule of ``module`` carries a pruning hook."""
    return any(isinstance(h, BasePruningMethod) for _, sub in module.named_modules()
               for h in sub._forward_pre_hooks.values())


def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or (not integral and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _count(amount, size):
    return amount if isinstance(amount, numbers.Integral) else round(amount * size)


def _check_count(n, size):
    if n > size:
        raise ValueError(f"amount={n} should be smaller than the number of parameters to prune={size}")
