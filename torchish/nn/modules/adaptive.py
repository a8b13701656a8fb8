"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016), with PyTorch's parameters, outputs,
errors and gradients.

PyTorch evaluates each tail cluster only on the rows whose target falls in it (a data-dependent ``nonzero``).
Here every cluster runs on the whole batch and the rows outside it are masked out with ``where``: the values are
the same (each row's log-softmax does not depend on the other rows), the masked rows contribute exact zeros to
the gradients, and the computation keeps static shapes, so it also runs inside ``torchish.compile``.
"""
from __future__ import annotations

from collections import namedtuple

import jax

from ...ops import tracing
from ...ops.creation import full_like, zeros
from ...ops.join import cat
from ...ops.ternary import where
from .._functional.activation import log_softmax
from ..container import ModuleList, Sequential
from ..module import Module
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _check_cutoffs(cutoffs, n_classes):
    if len(cutoffs) == 0:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
        raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
                         "where each value is between 1 and n_classes-1")


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: frequent classes in a ``head`` softmax, rare ones in smaller ``tail`` clusters.

    Args:
        in_features: size of each input sample.
        n_classes: number of classes.
        cutoffs: increasing class boundaries of the clusters (``[10, 100]``: classes 0-9 in the head, 10-99 in the
            first cluster, 100..n_classes-1 in the second).
        div_value: cluster ``i`` projects to ``in_features // div_value ** (i + 1)`` features.
        head_bias: give the head ``Linear`` a bias.

    ``forward(input, target)`` returns ``_ASMoutput(output, loss)``: the log-probability of each target and the
    mean negative log-likelihood; :meth:`log_prob` gives the full distribution and :meth:`predict` its argmax.

    Example::

        >>> asm = torchish.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7])
        >>> out = asm(torchish.randn(3, 8), torchish.tensor([0, 5, 9]))
        >>> out.output.shape, out.loss.shape
        (torch.Size([3]), torch.Size([]))
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        _check_cutoffs(cutoffs, n_classes)
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def _check_shapes(self, input, target):
        if target.dim() == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input.size()}")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def _check_range(self, target):
        """PyTorch's error for targets outside ``[0, n_classes)`` (concrete values only)."""
        if tracing.active() or isinstance(target._d, jax.core.Tracer) or target.numel() == 0:
            return
        if bool(((target < 0) | (target >= self.n_classes)).any()):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")

    def forward(self, input_, target_):
        self._check_shapes(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        self._check_range(target)
        output = zeros(target.size(0), dtype=input.dtype, device=input.device)
        gather_inds = target
        for i in range(1, len(self.cutoffs)):
            low, high = self.cutoffs[i - 1], self.cutoffs[i]
            in_cluster = (target >= low) & (target < high)
            relative = (target - low).clamp(0, high - low - 1)
            cluster_logprob = log_softmax(self.tail[i - 1](input), dim=1)
            local = cluster_logprob.gather(1, relative.unsqueeze(1)).squeeze(1)
            output = where(in_cluster, local, output)
            gather_inds = where(in_cluster, full_like(target, self.shortlist_size + i - 1), gather_inds)
        head_logprob = log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        """The log of the full distribution, given ``input`` and ``self.head(input)``."""
        head_logprob = log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = log_softmax(self.tail[i](input), dim=1)
            pieces.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(pieces, dim=1)

    def log_prob(self, input):
        """Log-probabilities of all ``n_classes`` classes: ``(N, in_features)`` -> ``(N, n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row: ``log_prob(input).argmax(dim=1)``, computed from the head alone
        for the rows whose head argmax is a shortlist class."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not tracing.active() and not isinstance(output._d, jax.core.Tracer) and not bool(not_in_shortlist.any()):
            return output
        full = self._get_full_log_prob(input, head_output).argmax(dim=1)
        return where(not_in_shortlist, full, output)
