"""``torch.nn.utils.stateless``: the deprecated home of :func:`torchish.func.functional_call`."""
from __future__ import annotations

import warnings

__all__ = ["functional_call"]

_DEPRECATED = ("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
               "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
               "replacement.")


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Deprecated (warns ``FutureWarning``): :func:`torchish.func.functional_call`.

    Example::

        >>> lin = torchish.nn.Linear(2, 1)
        >>> params = {"weight": torchish.ones(1, 2), "bias": torchish.zeros(1)}
        >>> out = torchish.nn.utils.stateless.functional_call(lin, params, torchish.ones(1, 2))  # doctest: +SKIP
    """
    warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
    from ...func import functional_call as _functional_call   # torchish.func imports torchish.nn
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
