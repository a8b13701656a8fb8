"""``torch.storage``: the storage classes at the path PyTorch defines them (``torch.storage.TypedStorage``)."""
from .ops.storage import TypedStorage, UntypedStorage, _Storage as _StorageBase  # noqa: F401

__all__ = ["TypedStorage", "UntypedStorage"]
