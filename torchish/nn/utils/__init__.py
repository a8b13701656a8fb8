"""``torchish.nn.utils``: gradient clipping, parameter/vector conversion, parametrizations, the legacy
weight/spectral norm hooks, conv/linear + batch-norm fusion and ``skip_init``."""
from __future__ import annotations

from .clip_grad import (clip_grad_norm_ as clip_grad_norm_, clip_grad_norm as clip_grad_norm,  # noqa: F401
                        clip_grad_value_ as clip_grad_value_, get_total_norm as get_total_norm,
                        clip_grads_with_norm_ as clip_grads_with_norm_)
from .convert_parameters import (parameters_to_vector as parameters_to_vector,  # noqa: F401
                                 vector_to_parameters as vector_to_parameters)
from . import clip_grad as clip_grad, convert_parameters as convert_parameters  # noqa: F401
from . import rnn as rnn  # noqa: F401
from . import parametrize as parametrize, parametrizations as parametrizations  # noqa: F401
from .weight_norm import weight_norm as weight_norm, remove_weight_norm as remove_weight_norm  # noqa: F401
from .spectral_norm import (spectral_norm as spectral_norm,  # noqa: F401
                            remove_spectral_norm as remove_spectral_norm)
from .fusion import (fuse_conv_bn_eval as fuse_conv_bn_eval, fuse_conv_bn_weights as fuse_conv_bn_weights,  # noqa: F401
                     fuse_linear_bn_eval as fuse_linear_bn_eval, fuse_linear_bn_weights as fuse_linear_bn_weights)
from .init import skip_init as skip_init  # noqa: F401
from . import fusion as fusion, init as init, stateless as stateless  # noqa: F401
from . import memory_format as memory_format  # noqa: F401
from .memory_format import (convert_conv2d_weight_memory_format as convert_conv2d_weight_memory_format,  # noqa: F401
                            convert_conv3d_weight_memory_format as convert_conv3d_weight_memory_format)
