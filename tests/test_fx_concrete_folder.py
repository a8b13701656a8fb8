"""``torchish.fx`` against ``torch.fx`` for what ``test_fx``/``test_fx_graph`` leave out: ``concrete_args`` with
``fx.PH`` placeholders inside structures (the graph's placeholders, the generated ``tree_flatten_spec`` /
``tree_unflatten`` code, values, and torch's IndexError for a shorter list), ``GraphModule.to_folder`` (the written
module's code, importable and computing what the GraphModule does), ``print_readable``'s ``include_stride`` /
``include_device`` / ``colored`` (the same text, ANSI codes included, with no meta, ShapeProp's ``tensor_meta``
and tensor ``meta['val']``), and the in-place functionals (``F.relu_``, ``F.elu_``, ``F.hardtanh_``, ``F.rrelu_``,
...) recorded as torch.fx records its builtins (``torch._C._nn.elu_``), with the same values."""
import copy
import importlib
import pickle
import sys

import numpy as np
import pytest

from oracle import assert_same
import torchish

torch = pytest.importorskip("torch")


def _ph_cases(lib):
    PH = lib.fx.PH

    def dict_arg(x, y):
        return x["a"] + x["b"] * y

    def tuple_and_flag(x, flag):
        return x[0] * 2 if flag else x[1]

    class ListArg(lib.nn.Module):
        def forward(self, xs):
            return xs[0] - xs[1]

    one, two = lib.ones(2), lib.ones(2) * 2
    return {
        "dict": (dict_arg, {"x": {"a": PH, "b": PH}}, ({"a": one, "b": two}, two * 1.5)),
        "tuple_flag": (tuple_and_flag, {"x": (PH, PH), "flag": True}, ((one, two), True)),
        "module_list": (ListArg(), {"xs": [PH, PH]}, ([two, one],)),
    }


@pytest.mark.parametrize("case", ["dict", "tuple_flag", "module_list"])
def test_concrete_args_with_placeholders_match_torch_fx(case):
    (tf, tconcrete, targs), (xf, xconcrete, xargs) = _ph_cases(torch)[case], _ph_cases(torchish)[case]
    tgm, xgm = torch.fx.symbolic_trace(tf, tconcrete), torchish.fx.symbolic_trace(xf, xconcrete)
    assert xgm.code == tgm.code
    assert [(n.op, n.name, str(n.args)) for n in xgm.graph.nodes] == \
        [(n.op, n.name, str(n.args)) for n in tgm.graph.nodes]
    assert_same(tgm(*targs), xgm(*xargs))
    assert repr(torchish.fx.PH) == repr(torch.fx.PH) == "PH"
    for copied in (copy.deepcopy(xgm), pickle.loads(pickle.dumps(xgm))):  # (the structure travels with the graph)
        assert copied.code == tgm.code
        assert_same(tgm(*targs), copied(*xargs))


def test_concrete_args_structure_errors_and_ph_meta_match_torch_fx():
    errors = []
    for lib in (torch, torchish):
        gm = lib.fx.symbolic_trace(_ph_cases(lib)["module_list"][0], {"xs": [lib.fx.PH, lib.fx.PH]})
        with pytest.raises(Exception) as e:
            gm([lib.ones(1)])
        errors.append((type(e.value), str(e.value)))
        with_meta = importlib.import_module(lib.__name__ + ".fx._symbolic_trace").PHWithMeta
        keyed = lib.fx.symbolic_trace(lambda x: x["a"] * 2, {"x": {"a": with_meta("key_a")}})
        errors.append([getattr(n, "ph_key", None) for n in keyed.graph.nodes])
    assert errors[2] == errors[0] and errors[0][0] is IndexError
    assert errors[3] == errors[1] == ["key_a", None, None]


def _folder_model(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 2)
            self.act = lib.nn.ReLU()
            self.w = lib.nn.Parameter(lib.ones(2) * 0.5)
            self.register_buffer("b", lib.arange(2.0))

        def forward(self, x):
            return self.act(self.lin(x)) * self.w + self.b + lib.nn.functional.gelu(x).sum()
    return Net()


def test_to_folder_writes_torch_fx_code_and_an_importable_module(tmp_path, monkeypatch):
    texts = {}
    for lib in (torch, torchish):
        gm = lib.fx.symbolic_trace(_folder_model(lib))
        name = f"fx_folder_{lib.__name__}"
        with pytest.warns(UserWarning, match=r"saved as pickled files instead: \['act'\]"):
            gm.to_folder(tmp_path / name, "MyModule")
        src = (tmp_path / name / "module.py").read_text()
        texts[lib.__name__] = src[src.index("class MyModule"):].replace(str(tmp_path / name), "<folder>")
        assert (tmp_path / name / "__init__.py").read_text() == "from .module import *"
        monkeypatch.syspath_prepend(str(tmp_path))
        module = importlib.import_module(name).MyModule()
        x = lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
        out, ref = module(x), gm(x)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-6)
        sys.modules.pop(name, None)
        sys.modules.pop(name + ".module", None)
    assert texts["torchish"] == texts["torch"]


def _readable_texts(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 2)

        def forward(self, x):
            return lib.relu(self.lin(x)).transpose(0, 1) * 2.5
    gm = lib.fx.symbolic_trace(Net())
    plain = gm.print_readable(print_output=False, include_stride=True, include_device=True, colored=True)
    importlib.import_module(lib.__name__ + ".fx.passes.shape_prop").ShapeProp(gm).propagate(lib.ones(4, 3))
    shaped = gm.print_readable(print_output=False, include_stride=True, include_device=True)
    for n in gm.graph.nodes:
        if n.op != "output":
            n.meta["val"] = lib.ones(2, 3).t() if n.op == "placeholder" else lib.zeros(4, 2)
    with_val = [gm.print_readable(print_output=False, include_stride=s, include_device=d, colored=c)
                for s, d, c in ((True, True, True), (True, False, False), (False, True, False), (False, False, False))]
    return [plain, shaped] + with_val


def test_print_readable_options_match_torch_fx():
    assert _readable_texts(torchish) == _readable_texts(torch)


def _inplace_calls(lib):
    F = lib.nn.functional
    return {"relu_": lambda x: F.relu_(x), "elu_": lambda x: F.elu_(x, 0.5), "leaky_relu_": lambda x: F.leaky_relu_(x),
            "hardtanh_": lambda x: F.hardtanh_(x, -0.5, 0.5), "rrelu_": lambda x: F.rrelu_(x, training=False),
            "celu_": lambda x: F.celu_(x), "threshold_": lambda x: F.threshold_(x, 0.5, 0.0),
            "selu_": lambda x: F.selu_(x), "torch.relu_": lambda x: lib.relu_(x)}


@pytest.mark.parametrize("name", sorted(_inplace_calls(torch)))
def test_inplace_functionals_trace_as_torch_fx_builtins(name):
    tgm = torch.fx.symbolic_trace(_inplace_calls(torch)[name])
    xgm = torchish.fx.symbolic_trace(_inplace_calls(torchish)[name])
    assert xgm.code == tgm.code
    assert [(n.op, n.name, n.target.__name__ if callable(n.target) else n.target) for n in xgm.graph.nodes] == \
        [(n.op, n.name, n.target.__name__ if callable(n.target) else n.target) for n in tgm.graph.nodes]
    values = np.array([-1.5, -0.2, 0.3, 2.0], dtype=np.float32)
    tx, xx = torch.tensor(values), torchish.tensor(values)
    assert_same(tgm(tx), xgm(xx))
    assert_same(tx, xx)  # (written in place, as torch's)
