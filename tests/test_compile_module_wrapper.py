"""``torchish.compile(module)`` returns PyTorch's ``OptimizedModule``: the original as its child ``_orig_mod``
(state_dict keys and parameter names with that prefix, PyTorch's repr, no indexing), attributes read from and
written to the original, ``training`` shared, hooks on the wrapper around the compiled call, copies and pickles
compiling a copy again. Before, torchish returned the module itself (a subclass instance sharing its ``__dict__``),
so a state dict saved from a compiled model lacked PyTorch's ``_orig_mod.`` keys and loaded where PyTorch's raises.
PyTorch runs with ``backend="eager"`` (no inductor compile); torchish ignores the backend."""
import copy
import io

import pytest

from oracle import run_both

torch = pytest.importorskip("torch")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are compared with PyTorch's
        return type(e).__name__, str(e)[:400]
    return None


def _structure(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    cm = lib.compile(m, backend="eager")
    out = [type(cm).__name__, repr(cm), isinstance(cm, lib.nn.Sequential), isinstance(cm, lib.nn.Module),
           [n for n, _ in cm.named_parameters()], [n for n, _ in cm.named_modules()],
           [n for n, _ in cm.named_children()], list(cm.state_dict()), cm._orig_mod is m, len(cm),
           _error(lambda: cm[0]), _error(lambda: cm.load_state_dict(m.state_dict())),
           _error(lambda: m.load_state_dict(cm.state_dict())), _error(lambda: cm.nope),
           repr(cm.get_submodule("_orig_mod")), sum(p.numel() for p in cm.parameters())]
    cm.load_state_dict(cm.state_dict())
    out.append(cm.training)
    cm.eval()
    out.append((cm.training, m.training, m[0].training))
    cm.train()
    out.append((cm.training, m.training))
    cm.note = 3  # (written to the original)
    out.append((hasattr(m, "note"), cm.note))
    lin = lib.nn.Linear(2, 2)
    cl = lib.compile(lin, backend="eager")
    out += [cl.weight is lin.weight, cl.in_features, _error(lambda: len(cl))]
    cl.weight = lib.nn.Parameter(lib.ones(2, 2))
    out += [lin.weight.sum().item(), list(cl.state_dict())]
    out.append(type(lib.compile(lin, disable=True)).__name__)
    return out


def test_optimized_module_structure_matches_torch():
    ref, got = run_both(_structure)
    assert got == ref


def _copies(lib):
    lin = lib.nn.Linear(2, 2)
    cl = lib.compile(lin, backend="eager")
    d = copy.deepcopy(cl)
    buf = io.BytesIO()
    lib.save(cl, buf)
    buf.seek(0)
    r = lib.load(buf, weights_only=False)
    return [type(d).__name__, d._orig_mod is not lin, type(d._orig_mod).__name__, type(r).__name__,
            list(r.state_dict()), d.weight is not lin.weight]


def test_copies_and_pickles_are_optimized_modules():
    ref, got = run_both(_copies)
    assert got == ref


def test_compiled_module_trains_as_the_module_and_hooks_run_around_it():
    import torchish
    results = []
    for lib in (torch, torchish):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
        cm = lib.compile(m, backend="eager")
        seen = []
        h = cm.register_forward_hook(lambda mod, i, o: seen.append(type(mod).__name__))
        opt = lib.optim.SGD(cm.parameters(), lr=0.1)
        x = lib.randn(5, 3, generator=lib.Generator().manual_seed(1))
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = cm(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        h.remove()
        results.append((losses, seen, m[0].weight.detach().reshape(-1).tolist()))
    (ref_l, ref_s, ref_w), (got_l, got_s, got_w) = results
    assert got_s == ref_s
    assert got_l == pytest.approx(ref_l, rel=1e-5)
    assert got_w == pytest.approx(ref_w, rel=1e-5, abs=1e-6)
    stats = cm._compiled_call.stats
    assert stats["compiled_calls"] == 3 and stats["eager_calls"] == 1
