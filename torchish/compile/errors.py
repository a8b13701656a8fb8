"""The errors of ``torchish.compile``."""


class _DeviceChanged(RuntimeError):
    """The program was compiled for another device than its inputs now live on."""


class GraphBreakError(RuntimeError):
    """Something in the compiled function needs concrete values (``.item()``, ``if tensor:``, printing...)."""


class _NeedsRecord(Exception):
    """Raised inside a trace where the function creates state lazily (an optimizer's moments for a parameter that
    gets its first gradient, a group added with ``add_param_group``): a traced value cannot be its initial value,
    so this call runs eagerly under a recorder instead, and the next call traces with the new state known."""
