"""``torchish.fx`` tracing INTO the standard layers (a Tracer whose ``is_leaf_module`` says no, or a user subclass
of a layer, which fx traces through): the layers' forwards must call what PyTorch's call (``torch.sigmoid``,
``F.conv2d``, ``F.max_pool2d``...) through the dispatch proxies see, so the generated code is torch.fx's and the
GraphModule computes the layer's values. Compared with torch.fx on the same layers."""
import numpy as np
import pytest

from oracle import assert_same
import torchish

torch = pytest.importorskip("torch")

LAYERS = {
    "sigmoid_tanh": (lambda nn: nn.Sequential(nn.Sigmoid(), nn.Tanh()), (2, 3)),
    "f_sigmoid_tanh": (lambda nn: _Fn(lambda F, x: F.sigmoid(F.tanh(x))), (2, 3)),
    "linear_relu_softmax": (lambda nn: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Softmax(1)), (2, 3)),
    "layer_norm_gelu_dropout": (lambda nn: nn.Sequential(nn.LayerNorm(3), nn.GELU(), nn.Dropout(0.0)), (2, 3)),
    "embedding": (lambda nn: nn.Sequential(nn.Embedding(5, 2)), "ints"),
    "flatten_upsample": (lambda nn: nn.Sequential(nn.Upsample(scale_factor=2), nn.Flatten()), (1, 1, 2, 2)),
    "group_norm_prelu_hardtanh": (lambda nn: nn.Sequential(nn.GroupNorm(1, 2), nn.PReLU(), nn.Hardtanh()),
                                  (1, 2, 2, 2)),
    "conv_pools_2d": (lambda nn: nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.MaxPool2d(2), nn.ReLU(),
                                               nn.Conv2d(3, 2, 1, bias=False), nn.AvgPool2d(2, ceil_mode=True)),
                      (1, 2, 6, 6)),
    "conv_reflect_and_transposed": (lambda nn: nn.Sequential(nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect"),
                                                             nn.ConvTranspose2d(2, 3, 2, stride=2)), (1, 2, 4, 4)),
    "conv_pools_1d_3d": (lambda nn: nn.Sequential(nn.Conv1d(2, 2, 2, padding_mode="circular", padding=1),
                                                  nn.MaxPool1d(2), nn.AvgPool1d(2)), (1, 2, 8)),
    "pools_3d": (lambda nn: nn.Sequential(nn.Conv3d(1, 2, 1), nn.MaxPool3d(2), nn.AvgPool3d(1)), (1, 1, 2, 4, 4)),
}


class _Fn:
    """A module (made in each library) whose forward is ``fn(F, x)``."""

    def __init__(self, fn):
        self.fn = fn


def _build(lib, name):
    make, shape = LAYERS[name]
    lib.manual_seed(0)
    built = make(lib.nn)
    if isinstance(built, _Fn):
        fn, F = built.fn, lib.nn.functional

        class Fn(lib.nn.Module):
            def forward(self, x):
                return fn(F, x)
        built = Fn()

    class Tracer(lib.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return False
    graph = Tracer().trace(built)
    gm = lib.fx.GraphModule(built, graph)
    x = lib.tensor(np.arange(5) % 5) if shape == "ints" else \
        lib.tensor(np.linspace(-1.5, 2.0, int(np.prod(shape)), dtype=np.float32).reshape(shape))
    return built, gm, x


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_tracing_into_layers_matches_torch_fx(name):
    ref_mod, ref_gm, ref_x = _build(torch, name)
    got_mod, got_gm, got_x = _build(torchish, name)
    with torchish.no_grad():
        for key, value in ref_mod.state_dict().items():
            got_mod.state_dict()[key].copy_(torchish.tensor(value.detach().numpy()))
    assert got_gm.code == ref_gm.code
    assert_same(ref_gm(ref_x), got_gm(got_x))
