"""``torch.utils.data._utils``: where older data-loading code imports ``collate.default_collate`` from."""
from . import collate  # noqa: F401
