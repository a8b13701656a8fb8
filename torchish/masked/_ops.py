"""``torch.masked._ops``: the masked operations under the module path PyTorch's docs and scripts name
(``torch.masked._ops.logaddexp``); ``torchish.masked`` re-exports them."""
from ._mask import canonical_dim as _canonical_dim, input_mask as _input_mask
from ._normalizations import cumprod, cumsum, log_softmax, logaddexp, normalize, softmax, softmin
from ._reductions import amax, amin, argmax, argmin, mean, median, logsumexp, norm, prod, std, sum, var

__all__ = ["_canonical_dim", "_input_mask", "amax", "amin", "argmax", "argmin", "cumprod", "cumsum",
           "log_softmax", "logaddexp", "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax",
           "softmin", "std", "sum", "var"]
