"""torchish.compile's semantics against PyTorch: eager PyTorch for values, gradients and ``grad_fn`` presence
(``torchish.compile`` must equal it), ``torch.compile(backend="eager")`` for what compiling returns and warns.

Fixed:
- A function called under ``no_grad()`` that makes its output under ``enable_grad()`` inside: the compiled
  program was built without its backward (grad mode was read off outside), so the output got a spent ``grad_fn``
  and ``backward()`` raised "Trying to backward through the graph a second time" from the second call on.
- ``torchish.compile(torchish.compile(f))`` wrapped the compiled function again (``__wrapped__`` was the first
  wrapper); ``torchish.compile(torchish.compile(m))`` nested two OptimizedModules (keys ``_orig_mod._orig_mod.``).
  Both now compile the original once, as PyTorch's unwraps to the innermost callable (for a module PyTorch
  returns a bare function with no ``state_dict``; torchish keeps a module with one ``_orig_mod.`` prefix).
  ``compile(f, disable=True)`` returns ``f`` itself, as PyTorch's.
- Graph-break warnings of a compiled module named ``_call_impl`` and pointed at torchish's ``_module_call.py``;
  they name the module's ``forward`` (``Net.forward``) and the user's line that called it.
- ``warnings.warn`` bound under another name before the call (``from warnings import warn as _warn``) warned
  during the trace only: the compiled calls after it were silent. It now breaks the graph as ``warnings.warn``
  does, so every call warns, as PyTorch's.
- A ``register_post_accumulate_grad_hook`` hook returning a value: PyTorch raises "Tensor post accumulate grad
  hooks should return None."; torchish ignored the value.
- ``__torch_function__`` of a Tensor subclass got the arguments of PyTorch's Python ``torch.nn.functional``
  functions as the caller wrote them (``F.relu(x)``: no ``inplace``; ``F.relu(x, False)``: positional). It now
  gets PyTorch's layout (parameters with defaults by keyword, defaults filled in; ``max_pool2d`` with
  ``return_indices=True`` as ``max_pool2d_with_indices``), and ``F.hardswish``/``F.hardsigmoid`` reach it too.

Verified and kept (values as eager PyTorch): module forward/pre/backward hooks and tensor hooks registered after
the first compiled call run at the next call and stop after ``remove()`` (PyTorch's compiler does not see module
hooks added later: ``skip_nnmodule_hook_guards``); a full backward hook on the OptimizedModule fires and changes
the input's gradient as on an eager module (``torch.compile(backend="eager")`` does not fire it).
"""
import warnings
from warnings import warn as _warn

import pytest

import torchish
from oracle import assert_same, compile_three_ways, formula_data as _data, formula_init as _init, needs_torch

torch = pytest.importorskip("torch")
pytestmark = needs_torch


def _net(T):
    return _init(T, T.nn.Sequential(T.nn.Linear(2, 3), T.nn.Tanh(), T.nn.Linear(3, 1)))


def _desc(x):
    """A tensor as (value, requires_grad, has a grad_fn)."""
    return x.detach().clone(), x.requires_grad, x.grad_fn is not None


# --- grad mode -------------------------------------------------------------------------------------------------------
def case_enable_grad_inside_called_under_no_grad(T, jit):
    w = _data(T, 2).requires_grad_()

    @jit
    def f(x):
        with T.enable_grad():
            y = (x * w).sum()
        return y, x * w
    r = []
    for i in range(3):
        with T.no_grad():
            y, z = f(_data(T, 2, seed=1))
        y.backward()
        r += [_desc(y), _desc(z), w.grad.clone()]
    return r


def case_called_under_no_grad_every_other_call(T, jit):
    w = _data(T, 2).requires_grad_()

    @jit
    def f(x):
        return (x * w).sum()
    r = []
    for i in range(5):
        x = _data(T, 2, seed=1).requires_grad_()
        if i % 2:
            with T.no_grad():
                out = f(x)
        else:
            out = f(x)
            out.backward()
        r += [_desc(out), x.grad, w.grad.clone()]
    return r


def test_grad_mode_around_and_inside_the_compiled_function():
    for case in (case_enable_grad_inside_called_under_no_grad, case_called_under_no_grad_every_other_call):
        compile_three_ways(case)


# --- hooks registered after the first call ---------------------------------------------------------------------------
def case_hooks_registered_after_the_first_call(T, jit):
    m = _net(T)
    cm = jit(m)
    x = _data(T, 2, 2)
    r, handles = [], []
    for i in range(6):
        if i == 2:
            handles.append(m[0].register_forward_hook(lambda mod, a, o: o * 0.5))
        if i == 3:
            handles.append(m[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,)))
            handles.append(m[0].weight.register_hook(lambda g: g + 1))
            handles.append(m[1].register_forward_pre_hook(lambda mod, a: (a[0] + 1,)))
        if i == 4:
            for h in handles:
                h.remove()
        out = cm(x).sum()
        out.backward()
        r += [out.detach(), [p.grad.clone() for p in m.parameters()]]
        m.zero_grad()
    return r


def case_backward_hook_on_the_compiled_module(T, jit):
    m = _net(T)
    cm = jit(m)
    cm.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
    r = []
    for i in range(3):
        x = _data(T, 1, 2).requires_grad_()
        out = cm(x).sum()
        out.backward()
        r += [_desc(out), x.grad, [p.grad.clone() for p in m.parameters()]]
        m.zero_grad()
    return r


def test_hooks_registered_later_and_on_the_wrapper_run_as_in_eager_mode():
    compile_three_ways(case_hooks_registered_after_the_first_call, expect="gradient hook")
    compile_three_ways(case_backward_hook_on_the_compiled_module)


def case_post_accumulate_grad_hook_returning_a_value(T, jit):
    m = _net(T)

    @jit
    def f(x):
        loss = m(x).sum()
        loss.backward()
        return loss.detach()
    r = [f(_data(T, 1, 2))]
    m[2].bias.register_post_accumulate_grad_hook(lambda p: p.grad)
    try:
        f(_data(T, 1, 2))
    except RuntimeError as e:
        r.append(str(e))
    return r


def test_post_accumulate_grad_hook_must_return_none():
    compile_three_ways(case_post_accumulate_grad_hook_returning_a_value)


# --- compiling what is compiled already -----------------------------------------------------------------------------
def _fn(x):
    return (x * 2).sum()


def test_compiling_a_compiled_function_compiles_the_original():
    for lib, kw in ((torch, {"backend": "eager"}), (torchish, {})):
        f1 = lib.compile(_fn, **kw)
        f2 = lib.compile(f1, **kw)
        assert f2.__wrapped__ is _fn and f2 is not f1 and f2.__name__ == "_fn"
        assert lib.compile(_fn, disable=True) is _fn and lib.compile(f1, disable=True) is f1
        x = lib.ones(2, requires_grad=True)
        for _ in range(3):
            f2(x).backward()
        assert x.grad.tolist() == [6.0, 6.0]


def test_compiling_a_compiled_module_wraps_the_original_once():
    m = _init(torchish, torchish.nn.Linear(2, 2))
    c2 = torchish.compile(torchish.compile(m))
    assert type(c2).__name__ == "OptimizedModule" and c2._orig_mod is m
    assert list(c2.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert torchish.compile(m, disable=True) is m
    ref = _init(torch, torch.nn.Linear(2, 2))
    ref_c2 = torch.compile(torch.compile(ref, backend="eager"), backend="eager")
    assert ref_c2.__name__ == "forward"  # (PyTorch's: the module's forward, compiled as a function)
    for _ in range(3):
        assert_same(ref(_data(torch, 2)), c2(_data(torchish, 2)))


# --- warnings ------------------------------------------------------------------------------------------------------
class _Net(torchish.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torchish.nn.Linear(2, 2)

    def forward(self, x):
        y = self.lin(x)
        return y if y.sum() > 0 else -y


def test_graph_break_warning_names_the_forward_and_the_calling_line():
    import inspect
    cm = torchish.compile(_Net())
    x = torchish.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            line = inspect.currentframe().f_lineno + 1
            cm(x)
    breaks = [w for w in caught if "could not trace" in str(w.message)]
    assert len(breaks) == 1
    assert str(breaks[0].message).startswith("torchish.compile could not trace _Net.forward: ")
    assert "`return y if y.sum() > 0 else -y`" in str(breaks[0].message)
    assert (breaks[0].filename, breaks[0].lineno) == (__file__, line)


def case_warn_under_another_name(T, jit):
    @jit
    def f(x):
        _warn("careful", UserWarning)
        return x * 2

    @jit
    def g(x):
        warnings.warn("plain")
        return x + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = [(f(T.ones(2)), g(T.ones(2))) for _ in range(3)]
    return out, [str(w.message) for w in caught if "torchish.compile" not in str(w.message)]


def test_warn_imported_under_another_name_warns_at_every_call():
    ref = case_warn_under_another_name(torch, lambda fn: torch.compile(fn, backend="eager"))
    assert ref[1] == ["careful", "plain"] * 3
    compile_three_ways(case_warn_under_another_name)


# --- __torch_function__ of nn.functional --------------------------------------------------------------------------
def _functional_calls(T):
    log = []

    class Logged(T.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if not getattr(func, "__name__", "").startswith("__"):
                log.append((func.__name__, len(args), sorted((kwargs or {}).items())))
            return super().__torch_function__(func, types, args, kwargs)
    F = T.nn.functional
    x = T.tensor([0.2, 0.7]).as_subclass(Logged)
    x4 = T.arange(16.).reshape(1, 1, 4, 4).as_subclass(Logged)
    calls = [lambda: F.relu(x), lambda: F.relu(x, inplace=False), lambda: F.relu(x, False),
             lambda: F.leaky_relu(x, 0.1), lambda: F.softmax(x, dim=0), lambda: F.hardtanh(x, min_val=-0.5),
             lambda: F.layer_norm(x, (2,)), lambda: F.mse_loss(x, x, reduction="sum"), lambda: F.l1_loss(x, x),
             lambda: F.pad(x, (1, 1)), lambda: F.hardswish(x), lambda: F.hardsigmoid(x, inplace=False),
             lambda: F.max_pool2d(x4, 2), lambda: F.max_pool2d(x4, 2, return_indices=True), lambda: F.gelu(x),
             lambda: F.linear(x, T.ones(2, 2))]
    out = []
    for call in calls:
        log.clear()
        call()
        out.append(log[:1])
    return out


def test_functional_keyword_arguments_reach_torch_function_as_in_pytorch():
    assert _functional_calls(torchish) == _functional_calls(torch)
