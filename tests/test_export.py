"""``torchish.export`` against ``torch.export`` (2.13, CPU): the same module exported by both gives the same graph
signature (placeholder names p_/b_/user inputs, kinds, targets), state dict and parameter/buffer names, the same
``forward(...)`` line of ``print(ep)`` (placeholder annotations ``x: "f32[4, 3]"``), and ``ep.module()`` computes
the same outputs, gradients and buffer updates as torch's and as the eager module. Guards: a static size, a
dynamic one out of its ``Dim`` range, two inputs sharing a ``Dim`` and a changed input structure raise what torch
raises, with its message. Python control flow on shapes specialises; on values it raises (RuntimeError family).
``save``/``load`` round-trip, ``Dim`` reprs, ``unflatten`` and ``run_decompositions``. (The graph's body uses
torchish's functions, not ATen ops, so its lines are not compared.)"""
import copy
import io

import numpy as np
import pytest

from oracle import assert_same, error_family, tol
import torchish

torch = pytest.importorskip("torch")
F32 = tol("float32")


def _model(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 2)
            self.bn = lib.nn.BatchNorm1d(2)
            self.register_buffer("scale", lib.ones(2) * 1.5)

        def forward(self, x, y=None):
            if x.shape[0] > 1:  # (a branch on a shape: export specialises it)
                z = self.bn(self.fc(x)) * self.scale
            else:
                z = self.fc(x)
            return z.relu(), z.sum()
    torch.manual_seed(0)
    m = Net()
    return m


def _copy_params(tm, xm):
    xm.load_state_dict({k: torchish.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)


@pytest.fixture(scope="module")
def exported():
    tm, xm = _model(torch), _model(torchish)
    _copy_params(tm, xm)
    tep = torch.export.export(tm, (torch.tensor(X),))
    xep = torchish.export.export(xm, (torchish.tensor(X),))
    return tm, xm, tep, xep


def test_signature_state_and_printed_forward_match_torch(exported):
    tm, xm, tep, xep = exported
    assert str(xep.graph_signature) == str(tep.graph_signature)
    sig, ref = xep.graph_signature, tep.graph_signature
    for attr in ("parameters", "buffers", "user_inputs", "inputs_to_parameters", "inputs_to_buffers",
                 "buffers_to_mutate", "non_persistent_buffers"):
        assert getattr(sig, attr) == getattr(ref, attr), attr
    assert [s.kind.name for s in sig.input_specs] == [s.kind.name for s in ref.input_specs]
    assert list(xep.state_dict) == list(tep.state_dict)
    assert xep.state_dict["fc.weight"] is xm.fc.weight  # (the module's own tensors, as torch's)
    assert [n for n, _ in xep.named_parameters()] == [n for n, _ in tep.named_parameters()]
    assert [n for n, _ in xep.named_buffers()] == [n for n, _ in tep.named_buffers()]
    assert xep.range_constraints == {} and tep.range_constraints == {}
    assert_same(tep.example_inputs, xep.example_inputs)
    forward_line = [ln.strip() for ln in str(tep).splitlines() if "def forward" in ln]
    assert [ln.strip() for ln in str(xep).splitlines() if "def forward" in ln] == forward_line
    text = str(xep)
    assert text.startswith("ExportedProgram:") and "Graph signature:" in text and "Range constraints: {}" in text
    assert 'linear: "f32[4, 2]" = ' in text

    def user_lines(ep):  # (the "# File: ...test_export.py:N in forward, code: ..." comments, as torch writes them)
        return [ln.strip() for ln in str(ep).splitlines() if "# File: " in ln and __file__ in ln]
    assert user_lines(xep) == user_lines(tep) and len(user_lines(tep)) == 2
    assert [n.op for n in xep.graph.nodes if n.op == "placeholder"] == \
        [n.op for n in tep.graph.nodes if n.op == "placeholder"]
    assert xep.graph is xep.graph_module.graph


def test_module_outputs_grads_and_buffer_updates_match_torch_and_eager(exported):
    tm, xm, tep, xep = exported
    tmod, xmod = tep.module(), xep.module()
    assert [n for n, _ in xmod.named_parameters()] == [n for n, _ in tmod.named_parameters()]
    assert [n for n, _ in xmod.named_buffers()] == [n for n, _ in tmod.named_buffers()]
    # export ran forward once, but the module's state is as before (running stats untouched)
    assert_same(tm.bn.running_mean, xm.bn.running_mean)
    assert int(xm.bn.num_batches_tracked) == 0
    tx = torch.tensor(X * 0.5, requires_grad=True)
    xx = torchish.tensor(X * 0.5, requires_grad=True)
    tout, xout = tmod(tx), xmod(xx)
    assert_same(tout, xout, **F32)
    eager = copy.deepcopy(xm)(torchish.tensor(X * 0.5))  # (a copy: its running stats move on their own)
    assert_same(tout, eager, **F32)
    (tout[0].sum() * 2 + tout[1]).backward()
    (xout[0].sum() * 2 + xout[1]).backward()
    assert_same(tx.grad, xx.grad, **F32)
    assert_same(tm.fc.weight.grad, xm.fc.weight.grad, **F32)
    assert_same(tm.bn.running_mean, xm.bn.running_mean, **F32)
    assert int(xm.bn.num_batches_tracked) == int(tm.bn.num_batches_tracked)
    assert xout[0].grad_fn.name() == tout[0].grad_fn.name()


def test_static_guards_and_input_structure_errors_match_torch(exported):
    _, _, tep, xep = exported
    for lib, ep in ((torch, tep), (torchish, xep)):
        ep.__dict__.setdefault("_test_module", ep.module())
    errors = []
    for lib, ep in ((torch, tep), (torchish, xep)):
        mod = ep._test_module
        got = []
        for call in (lambda: mod(lib.randn(5, 3)), lambda: mod(lib.randn(4, 3), lib.randn(1), lib.randn(1)),
                     lambda: ep(lib.randn(4, 3))):
            with pytest.raises(Exception) as e:
                call()
            got.append((error_family(e.value), str(e.value).split("\n")[0]))
        errors.append(got)
    assert errors[1][0] == errors[0][0] == (AssertionError, "Guard failed: x.size()[0] == 4")
    assert errors[1][1][0] is errors[0][1][0] is ValueError
    assert errors[1][1][1] == errors[0][1][1]
    assert errors[1][2] == errors[0][2]


def _dyn_model(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 2)

        def forward(self, x, ys):
            h = self.fc(x).view(x.shape[0], -1)
            return {"a": h + ys[0], "b": [h.sum(0), ys[1] * 2]}
    return Net()


def _dyn_inputs(lib, n):
    rng = np.random.default_rng(n)
    return (lib.tensor(rng.standard_normal((n, 3)).astype(np.float32)),
            (lib.tensor(rng.standard_normal((n, 2)).astype(np.float32)), lib.tensor(np.arange(3.0, dtype=np.float32))))


def test_dynamic_dim_runs_other_sizes_and_guards_like_torch():
    tm, xm = _dyn_model(torch), _dyn_model(torchish)
    _copy_params(tm, xm)
    results = []
    for lib, m in ((torch, tm), (torchish, xm)):
        batch = lib.export.Dim("batch", min=2, max=8)
        ep = lib.export.export(m, _dyn_inputs(lib, 4), dynamic_shapes={"x": {0: batch}, "ys": ({0: batch}, None)})
        mod = ep.module()
        out = mod(*_dyn_inputs(lib, 6))
        errs = []
        for n, n2, k in ((9, 9, 3), (6, 5, 3), (6, 6, 4)):
            x, (y0, _) = _dyn_inputs(lib, n)
            with pytest.raises(Exception) as e:
                mod(x, (_dyn_inputs(lib, n2)[1][0], lib.ones(k)))
            errs.append((error_family(e.value), str(e.value)))
        with pytest.raises(Exception) as e:
            lib.export.export(m, _dyn_inputs(lib, 4), dynamic_shapes={"x": {0: lib.export.Dim("b", min=5, max=8)},
                                                                      "ys": ({0: batch}, None)})
        errs.append((error_family(e.value), str(e.value).split("\n")[0]))
        ranges = [str(v) for v in ep.range_constraints.values()]
        results.append((out, errs, ranges, ep))
    assert_same(results[0][0], results[1][0], **F32)
    assert results[1][1] == results[0][1]
    assert results[1][2] == results[0][2] == ["VR[2, 8]"]
    text = str(results[1][3])
    assert 'x: "f32[s0, 3]"' in text and 'view: "f32[s0, 2]" = linear.view(sym_size_int, -1)' in text


def test_control_flow_on_values_raises_like_torch():
    def program(lib):
        class Branchy(lib.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x + 1
                return x - 1
        with pytest.raises(Exception) as e:
            lib.export.export(Branchy(), (lib.ones(2),))
        return e.value
    ref, got = program(torch), program(torchish)
    assert isinstance(got, RuntimeError) and isinstance(ref, RuntimeError)
    assert type(got).__name__ == type(ref).__name__ == "GuardOnDataDependentSymNode"
    assert str(got).startswith("Could not guard on data-dependent expression")


def test_export_argument_errors_match_torch():
    for bad in ((lambda lib: lib.export.export(lambda x: x, (lib.ones(1),))),):
        types = []
        for lib in (torch, torchish):
            with pytest.raises(Exception) as e:
                bad(lib)
            types.append((error_family(e.value), str(e.value)[:60]))
        assert types[0][0] is types[1][0]


def test_save_load_round_trip(tmp_path):
    m = _dyn_model(torchish)
    batch = torchish.export.Dim("batch", max=8)
    ep = torchish.export.export(m, _dyn_inputs(torchish, 4), dynamic_shapes={"x": {0: batch},
                                                                             "ys": ({0: batch}, None)})
    buf = io.BytesIO()
    torchish.export.save(ep, buf)
    buf.seek(0)
    loaded = torchish.export.load(buf)
    torchish.export.save(ep, tmp_path / "m.pt2")
    for other in (loaded, torchish.export.load(tmp_path / "m.pt2")):
        assert str(other.graph_signature) == str(ep.graph_signature)
        assert [str(v) for v in other.range_constraints.values()] == ["VR[0, 8]"]  # (torch's for Dim(max=8))
        assert other.state_dict["fc.weight"].requires_grad
        args = _dyn_inputs(torchish, 5)
        np.testing.assert_array_equal(other.module()(*args)["a"].detach().numpy(),
                                      ep.module()(*args)["a"].detach().numpy())
        with pytest.raises(AssertionError, match=r"ys\[1\].size\(\)\[0\] == 3"):
            other.module()(args[0], (args[1][0], torchish.ones(4)))
        np.testing.assert_array_equal(other.example_inputs[0][0].numpy(), ep.example_inputs[0][0].numpy())
    assert str(loaded).splitlines()[2] == str(ep).splitlines()[2]


def test_dim_reprs_and_hints_match_torch():
    def reprs(lib):
        Dim = lib.export.Dim
        return [repr(d) for d in (Dim("b"), Dim("b", min=3), Dim("b", max=5), Dim("b", min=2, max=9),
                                  Dim.AUTO, Dim.STATIC, Dim.DYNAMIC)] + \
            [(d.__name__, d.min) for d in lib.export.dims("p", "q", min=1)]
    assert reprs(torchish) == reprs(torch)
    with pytest.raises(AssertionError, match="inconsistent min=5, max=3"):
        torchish.export.Dim("b", min=5, max=3)


def test_unflatten_and_run_decompositions_keep_the_numbers(exported):
    _, xm, tep, xep = exported
    x = torchish.tensor(X)
    ref = xep.module()(x)
    unflat = torchish.export.unflatten(xep)
    assert unflat.fc.weight is xm.fc.weight
    assert_same(tep.module()(torch.tensor(X))[0].detach(), ref[0].detach(), **F32)
    dec = xep.run_decompositions()
    assert str(dec.graph_signature) == str(xep.graph_signature)
    np.testing.assert_allclose(dec.module()(x)[0].detach().numpy(), ref[0].detach().numpy(), **F32)


def test_in_place_write_to_an_input_matches_torch_and_leaves_the_example_alone():
    def program(lib):
        class Scale(lib.nn.Module):
            def forward(self, x):
                x.mul_(2)
                return x + 1
        example = lib.ones(3)
        ep = lib.export.export(Scale(), (example,))
        y = lib.arange(3.0)
        return example, ep.module()(y), y, str(ep.graph_signature)
    ref, got = program(torch), program(torchish)
    assert_same(ref[:3], got[:3])
    assert got[3] == ref[3]


def test_a_no_grad_block_in_forward_keeps_its_mode_in_the_module_and_after_save(tmp_path):
    def program(lib):
        class Half(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(2) * 3)

            def forward(self, x):
                with lib.no_grad():
                    frozen = x * self.w
                return frozen + x * self.w, frozen
        ep = lib.export.export(Half(), (lib.ones(2),))
        if lib is torchish:
            lib.export.save(ep, tmp_path / "half.pt2")
            ep = lib.export.load(tmp_path / "half.pt2")
        out = ep.module()(lib.arange(2.0, requires_grad=True))
        return out, [o.requires_grad for o in out], lib.is_grad_enabled()
    ref, got = program(torch), program(torchish)
    assert_same(ref[0], got[0])
    assert got[1:] == ref[1:] == ([True, False], True)


@pytest.mark.filterwarnings("ignore:The tensor attributes:UserWarning")  # (torch.export's, about its LSTM)
def test_a_submodule_whose_computation_dispatches_nothing_runs_whole_and_keeps_the_numbers():
    """torchish's LSTM computes in one fused kernel no dispatched call makes: export records the submodule call
    (``lstm = self.lstm(embedding)``), where a lifted constant would have frozen the example's result."""
    rng = np.random.default_rng(1)
    outs = []
    for lib in (torch, torchish):
        class Tagger(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = lib.nn.Embedding(10, 3)
                self.lstm = lib.nn.LSTM(3, 4, batch_first=True)

            def forward(self, idx):
                out, (h, _) = self.lstm(self.emb(idx))
                return out[:, -1] + h[0]
        m = Tagger()
        if lib is torchish:
            m.load_state_dict({k: lib.tensor(v.detach().numpy()) for k, v in outs[0][0].state_dict().items()})
        batch = lib.export.Dim("batch", max=8)
        ep = lib.export.export(m, (lib.tensor([[1, 2, 3], [4, 5, 6]]),), dynamic_shapes=({0: batch},))
        idx = lib.tensor(rng.integers(0, 10, (3, 3)) if lib is torch else outs[0][2])
        outs.append((m, ep.module()(idx), idx.numpy()))
    assert_same(outs[0][1], outs[1][1], **F32)
    with pytest.raises(ValueError, match="calls the submodule 'lstm' as a whole"):
        torchish.export.save(ep, io.BytesIO())


def test_item_arithmetic_is_recorded_and_branching_on_it_raises_like_torch():
    def program(lib):
        class Normalise(lib.nn.Module):
            def forward(self, x):
                s = x.abs().max().item()
                return x / s, x * (s * 2 + 1)

        class Branch(lib.nn.Module):
            def forward(self, x):
                return x if x.sum().item() > 0 else -x

        class AsInt(lib.nn.Module):
            def forward(self, x):
                return x + int(x.sum())
        ep = lib.export.export(Normalise(), (lib.tensor([1.0, -4.0, 2.0]),))
        errors = []
        for bad in (Branch(), AsInt()):
            with pytest.raises(RuntimeError) as e:
                lib.export.export(bad, (lib.ones(2),))
            errors.append(type(e.value).__name__)
        return ep.module()(lib.tensor([2.0, 3.0, -8.0])), errors
    ref, got = program(torch), program(torchish)
    assert_same(ref[0], got[0])
    assert got[1] == ref[1] == ["GuardOnDataDependentSymNode"] * 2


def test_range_constraints_of_dims_and_hints_match_torch():
    def ranges(lib):
        Dim, out = lib.export.Dim, []
        for spec in (Dim("b"), Dim("b", max=8), Dim("b", min=1, max=8), Dim.AUTO, Dim.DYNAMIC(max=9)):
            lin = lib.nn.Linear(2, 2)
            ep = lib.export.export(lin, (lib.ones(3, 2),), dynamic_shapes=({0: spec},))
            out.append([str(v) for v in ep.range_constraints.values()])
        return out
    assert ranges(torchish) == ranges(torch)


def test_a_tensor_made_outside_any_dispatched_call_warns_that_it_stays_a_constant():
    jnp = pytest.importorskip("jax.numpy")
    from torchish._tensor import wrap

    class Raw(torchish.nn.Module):
        def forward(self, x):
            return x + wrap(jnp.sin(x._v))  # (a value computed with no torchish call: nothing records it)
    with pytest.warns(UserWarning, match=r"made 1 tensor\(s\) through code that dispatches no call"):
        ep = torchish.export.export(Raw(), (torchish.ones(2),))
    assert ep.graph_signature.lifted_tensor_constants == ("lifted_tensor_0",)
