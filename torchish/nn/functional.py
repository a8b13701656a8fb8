"""``torchish.nn.functional``: the functional form of every layer, activation and loss.

A thin namespace: the implementations live in ``torchish/nn/_functional/``, one file per family.
"""
from __future__ import annotations

from ._functional.activation import *  # noqa: F401,F403
from ._functional.activation_smooth import *  # noqa: F401,F403
from ._functional.conv import *  # noqa: F401,F403
from ._functional.conv_tbc import *  # noqa: F401,F403
from . import grad as grad  # noqa: F401  (torch.nn.functional.grad: the convolution gradients)
from ._functional.pooling import *  # noqa: F401,F403
from ._functional.normalization import *  # noqa: F401,F403
from ._functional.dropout import *  # noqa: F401,F403
from ._functional.embedding import *  # noqa: F401,F403
from ._functional.linear import *  # noqa: F401,F403
from ._functional.sampling import *  # noqa: F401,F403
from ._functional.loss import *  # noqa: F401,F403
from ._functional.loss_margin import *  # noqa: F401,F403
from ._functional.linear_cross_entropy import *  # noqa: F401,F403
from ._functional.attention import *  # noqa: F401,F403
from ._functional.rnn import *  # noqa: F401,F403
