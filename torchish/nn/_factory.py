"""``torchish.nn.factory_kwargs``: PyTorch's helper that canonicalises the factory arguments of a module."""
from __future__ import annotations

_SIMPLE_KEYS = ("device", "dtype", "memory_format")


def factory_kwargs(kwargs):
    """The ``device``/``dtype``/``memory_format`` entries of ``kwargs`` (and of its nested ``factory_kwargs``
    dict) as one dict to pass to factory functions; unknown or doubly given keys raise ``TypeError``.

    Example::

        >>> torchish.nn.factory_kwargs({"dtype": torchish.float64})
        {'dtype': torch.float64}
    """
    if kwargs is None:
        return {}
    unexpected = kwargs.keys() - set(_SIMPLE_KEYS) - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in _SIMPLE_KEYS:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
