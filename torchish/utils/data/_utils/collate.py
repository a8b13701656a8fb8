"""``torch.utils.data._utils.collate``: the batch-assembly functions, at the path PyTorch keeps them (they live in
:mod:`torchish.utils.data._collate`)."""
from .._collate import (collate, collate_float_fn, collate_int_fn, collate_numpy_array_fn,  # noqa: F401
                        collate_numpy_scalar_fn, collate_str_fn, collate_tensor_fn, default_collate,
                        default_collate_err_msg_format, default_collate_fn_map, default_convert)
