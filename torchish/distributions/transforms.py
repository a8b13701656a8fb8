"""Transforms between constrained and unconstrained spaces (``torch.distributions.transforms``).

Example::

    >>> import torchish as torch
    >>> from torchish.distributions.transforms import TanhTransform
    >>> t = TanhTransform()
    >>> x = torch.tensor([0.0, 1.0])
    >>> t.inv(t(x))
    tensor([0.0000, 1.0000])
"""
from ._transform import (ComposeTransform as ComposeTransform, IndependentTransform as IndependentTransform,  # noqa
                         ReshapeTransform as ReshapeTransform, Transform as Transform,
                         _InverseTransform as _InverseTransform, identity_transform as identity_transform)
from ._transform_maps import (AbsTransform as AbsTransform, AffineTransform as AffineTransform,  # noqa
                              CumulativeDistributionTransform as CumulativeDistributionTransform,
                              ExpTransform as ExpTransform, LowerCholeskyTransform as LowerCholeskyTransform,
                              PositiveDefiniteTransform as PositiveDefiniteTransform, PowerTransform as PowerTransform,
                              SigmoidTransform as SigmoidTransform, SoftmaxTransform as SoftmaxTransform,
                              SoftplusTransform as SoftplusTransform, StickBreakingTransform as StickBreakingTransform,
                              TanhTransform as TanhTransform, _clipped_sigmoid as _clipped_sigmoid)
from ._transform_structured import (CatTransform as CatTransform,  # noqa
                                    CorrCholeskyTransform as CorrCholeskyTransform, StackTransform as StackTransform)

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "SoftmaxTransform",
           "StickBreakingTransform", "Transform", "identity_transform", "CatTransform", "StackTransform",
           "CorrCholeskyTransform"]
