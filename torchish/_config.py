"""The one visible place for torchish's switches (``torchish.config``).

Attributes:
    lowered_backward: "auto" (default) runs a backward whose graph structure was seen before as ONE jitted
        function, and a new structure too where running it node by node would compile many new kernels;
        "always" lowers from the first sighting; "never" always runs node by node.
    lazy: True records ops instead of dispatching them one by one; pending work runs as fused programs when a
        value is needed (see ``torchish/ops/lazy.py``): a chain or a training step costs less, a lone op read at
        once more. False (default) dispatches every op to its cached kernel at once. Not the default yet: a fused
        program can round differently (in the last bit) from the same ops run one by one, so results would depend
        on whether a structure had been seen before (``exact_programs`` trades that away for speed).
    exact_programs: True compiles the programs made of recorded ops (lazy segments, the lowered backward) so that
        they give the same bits as the ops run one by one: on CPU each op stays a computation of its own, which XLA
        cannot fuse with its neighbours (``torchish/ops/nesting.py``); slower where fusion across ops pays (a
        convolution's backward: 2x on the benchmark's video model). False (default): fused, faster, and possibly
        different in the last bit from the same ops run one by one.
    lazy_compile: "auto" (default) runs pending work whose structure was seen before as ONE compiled program and
        a new structure call by call through the ops' cached kernels; "always" compiles from the first sighting;
        "never" always runs call by call.
"""
from __future__ import annotations


class Config:
    _CHOICES = {"lowered_backward": ("auto", "always", "never"), "lazy": (True, False),
                "lazy_compile": ("auto", "always", "never"), "exact_programs": (True, False)}

    def __init__(self):
        self.lowered_backward = "auto"
        self.lazy = False
        self.lazy_compile = "auto"
        self.exact_programs = False

    def __setattr__(self, name, value):
        choices = self._CHOICES.get(name)
        if choices is None:
            raise AttributeError(f"torchish.config has no setting {name!r}")
        if value not in choices:
            raise ValueError(f"torchish.config.{name} must be one of {choices}, got {value!r}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return "torchish.config(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._CHOICES) + ")"


config = Config()
