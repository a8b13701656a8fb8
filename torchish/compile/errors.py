"""The errors of ``torchish.compile``."""


class _DeviceChanged(RuntimeError):
    """The program was compiled for another device than its inputs now live on."""


class GraphBreakError(RuntimeError):
    """Something in the compiled function needs concrete values (``.item()``, ``if tensor:``, printing...)."""
