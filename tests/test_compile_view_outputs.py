"""Outputs of a ``torchish.compile``d function that are views of its arguments or of its state (``return x[0]``,
``x.t()``, ``self.weight.t()``), differentiated outside it, against PyTorch eager: they are views sharing the
input's storage (``_base``, ``_is_view()``, the view op's grad_fn), an in-place write into one reaches the input
and its gradient, and a write into an input the compiled graph saved makes a later backward raise PyTorch's error.
Each function is called three times (the first call runs eagerly, the later ones run the traced program)."""
import contextlib

import pytest

import torchish
from oracle import assert_same, needs_torch, run_both

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore:torchish.compile")]

VIEWS = {
    "select_and_linear": lambda x, m: (x[0], m(x)),
    "transpose": lambda x, m: (x.t(),),
    "view": lambda x, m: (x.view(3, 2),),
    "slice": lambda x, m: (x[:, 1:],),
    "unbind": lambda x, m: x.unbind(0),
    "diagonal": lambda x, m: (x.diagonal(),),
    "weight_t": lambda x, m: (m.weight.t(), m(x).sum()),
    "same_view_twice": lambda x, m: (x[1], x[1]),
    "detached_select": lambda x, m: (x[0].detach(), x * 2),
}


def _describe(T, o, refs):
    """What of an output PyTorch's contract fixes: value, requires_grad, whether it is a view and of what, and
    (for views) the grad_fn's name; the compiled graph's node is named CompiledFunctionBackward otherwise."""
    base = o._base
    return (o.detach().clone(), o.requires_grad, o._is_view(), [i for i, r in enumerate(refs) if base is r],
            type(o.grad_fn).__name__ if o.grad_fn is not None and o._is_view() else None)


def _run(T, name, leaf, write):
    jit = torchish.compile if T is torchish else (lambda f: f)
    x = T.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], requires_grad=True)
    m = T.nn.Linear(3, 2)
    with T.no_grad():
        m.weight.copy_(T.arange(6.0).reshape(2, 3))
        m.bias.fill_(1.0)
    xx = x if leaf else x * 1
    f = jit(lambda a: VIEWS[name](a, m))
    results = []
    for _ in range(3):
        try:
            outs = f(xx)
            seen = [_describe(T, o, [x, xx, m.weight]) for o in outs]
            if write:
                with T.no_grad() if write == "no_grad" else contextlib.nullcontext():
                    outs[0].mul_(2)
            loss = sum((o * T.arange(1.0, 1 + o.numel()).reshape(o.shape)).sum() for o in outs if o.requires_grad)
            loss.backward(retain_graph=True)
            grads = [None if t.grad is None else t.grad.clone() for t in (x, m.weight, m.bias)]
            x.grad = None
            m.zero_grad()
        except RuntimeError as e:
            seen, grads = "RuntimeError", str(e).split(":")[0]
        results.append((seen, grads, xx.detach().clone(), m.weight.detach().clone()))
    return results


@pytest.mark.parametrize("write", [None, "grad", "no_grad"])
@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("name", list(VIEWS))
def test_view_outputs_of_a_compiled_forward_match_eager(name, leaf, write):
    ref, got = run_both(lambda T: _run(T, name, leaf, write))
    assert_same(ref, got)
