"""Half-precision training steps run as programs (``torchish.compile``'s step, the lowered backward of the default
path, lazy segments) round to float16/bfloat16 wherever PyTorch's kernels do.

XLA lets a fused program keep float32 where it rounds a value to bfloat16 and widens it again
(``xla_allow_excess_precision``); torchish compiles its programs without that (``ops/nesting.py: AS_WRITTEN``).
With it, a LLaMA step under autocast(bfloat16) summed the two rotary gradient terms of q and k unrounded in the
lowered backward and the compiled step, and its weights drifted from PyTorch's from the first such step. Each
``case_*`` is written against the PyTorch API only; weights and inputs come from formulas (tests/oracle.py). Half
parameters are compared as float32 values (float32 tolerance: the last bit of a half value counts).

The half-parameter LLaMA steps compare the compiled step with torchish's own eager one: eager, a bfloat16/float16
LLaMA already differs from PyTorch in the last bit of a few values (reductions summed in another order, then
rounded to the half type), which three steps amplify."""
import numpy as np
import pytest

from oracle import (assert_script_matches, formula_init as _init, needs_torch, script_test, torchish)
from test_probe_scripts13 import _Cfg, _llama


def _train(lib, jit, dtype=None, autocast=False, steps=3):
    """``steps`` training steps (loss, backward, clip_grad_norm_, optimizer) of a one-block LLaMA (RMSNorm, rotary,
    GQA SDPA, SwiGLU): float32 under autocast(bfloat16) with AdamW, or in ``dtype`` with SGD (momentum); the step
    through ``jit`` (its first call runs eagerly, the next as the compiled program). Returns the losses, gradient
    norms, and the parameters as float32."""
    model = _init(lib, _llama(lib, False)(_Cfg(n_layers=1)))
    if dtype is not None:
        model = model.to(dtype)
        opt = lib.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    else:
        opt = lib.optim.AdamW(model.parameters(), lr=1e-2)
    F = lib.nn.functional

    def step(tokens):
        with lib.autocast("cpu", dtype=lib.bfloat16, enabled=autocast):
            logits, _ = model(tokens)
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, 13), tokens[:, 1:].reshape(-1))
        loss.backward()
        n = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        return loss.detach(), n.float()

    s = jit(step)
    out = [s((lib.arange(10).view(2, 5) * (it + 2)) % 13) for it in range(steps)]
    return out + [{n: p.detach().float() for n, p in model.named_parameters()}]


def case_llama_autocast_bf16_compiled(lib, jit):
    return _train(lib, jit, autocast=True)


def case_llama_autocast_bf16_default_path(lib):
    """The default path: the backward of a structure seen before runs lowered, as one program."""
    return _train(lib, lambda f: f, autocast=True)


def case_rotary_gradient_terms_round(lib, jit):
    """The reduced case: q (bfloat16, from an autocast linear) reaches the loss through q * cos and through a
    rotated copy; its gradient is the bfloat16 sum of two bfloat16-rounded terms computed in float32. The eager
    call, the default path's second backward (lowered) and the compiled step must round both terms."""
    w = (lib.sin(lib.arange(64.) * 0.731) * 0.4).reshape(8, 8).requires_grad_()
    x = lib.cos(lib.arange(32.) * 0.417).reshape(4, 8)
    c, s = lib.cos(lib.arange(32.) * 0.3).reshape(4, 8), lib.sin(lib.arange(32.) * 0.3).reshape(4, 8)

    def f(x):
        w.grad = None
        with lib.autocast("cpu", dtype=lib.bfloat16):
            q = lib.nn.functional.linear(x, w)
            y = q * c + q.flip(-1) * s
        y.pow(2).sum().backward()
        return w.grad

    compiled = jit(f)
    return [f(x), f(x), compiled(x), compiled(x)]


def case_adam_half_parameters(lib, jit):
    """Adam/AdamW on bfloat16 and float16 parameters (decoupled and coupled weight decay, amsgrad, maximize, other
    betas and eps), eager and compiled: PyTorch's single-tensor kernels round each in-place op's result to the half
    type once (float16's eps of 1e-8 is 0 there: the zero denominators give the same infs and NaNs)."""
    out = []
    for dt in (lib.bfloat16, lib.float16):
        for cls, kw in ((lib.optim.AdamW, {}), (lib.optim.Adam, dict(weight_decay=0.1, amsgrad=True)),
                        (lib.optim.Adam, dict(maximize=True, betas=(0.8, 0.99), eps=1e-3))):
            for run in (lambda f: f, jit):
                p = (lib.sin(lib.arange(64.) * 0.731) * 0.4).to(dt).requires_grad_()
                opt = cls([p], lr=1e-2, **kw)

                def step(g):
                    p.grad = g
                    opt.step()
                s = run(step)
                for k in range(3):
                    s((lib.cos(lib.arange(64.) * (0.37 + k)) * 0.01).to(dt))
                st = opt.state[p]
                out.append([p.detach().float()] + [st[k].float() for k in ("exp_avg", "exp_avg_sq")])
    return out


test_script_matches_torch = script_test(globals())


@pytest.fixture
def lazy_mode():
    saved = torchish.config.lazy
    torchish.config.lazy = True
    yield
    torchish.config.lazy = saved


@needs_torch
@pytest.mark.parametrize("case", [case_llama_autocast_bf16_default_path, case_rotary_gradient_terms_round])
def test_lazy_segments_round_as_torch(lazy_mode, case):
    """Lazy capture: from its second sighting the step runs as one compiled segment (forward, lowered backward,
    the optimizer's update)."""
    assert_script_matches(case)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_parameters_compiled_step_equals_eager(dtype):
    """A bfloat16/float16 model (no autocast), SGD: the compiled steps give the eager steps' losses, gradient norms
    and parameters."""
    dt = getattr(torchish, dtype)
    eager, compiled = _train(torchish, lambda f: f, dtype=dt), _train(torchish, torchish.compile, dtype=dt)
    # float16: five of the ~1300 parameters end an ulp apart after three steps, with and without AS_WRITTEN (the
    # fused program computes something else in float32 differently; not traced yet); bfloat16 is exact
    tol = dict(rtol=0, atol=0) if dtype == "bfloat16" else dict(rtol=2e-3, atol=1e-5)
    for a, b in zip(eager[:-1], compiled[:-1]):
        np.testing.assert_allclose([float(v) for v in b], [float(v) for v in a], **tol)
    for k, a in eager[-1].items():
        np.testing.assert_allclose(compiled[-1][k].numpy(), a.numpy(), err_msg=k, **tol)


_HALF_OPTIMIZERS = [
    ("RMSprop", {}), ("RMSprop", dict(momentum=0.9, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr_decay=0.1, weight_decay=0.1)), ("Adagrad", dict(foreach=True)),
    ("Adagrad", dict(foreach=True, maximize=True)), ("RMSprop", dict(foreach=True, momentum=0.9)),
    ("NAdam", dict(weight_decay=0.1)),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01)),
    ("Adamax", dict(weight_decay=0.1, maximize=True)),
    ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.1)), ("SGD", dict(momentum=0.9, dampening=0.1)),
    ("Adadelta", dict(weight_decay=0.1)), ("RAdam", {}), ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(weight_decay=0.1, t0=1)), ("ASGD", dict(weight_decay=0.1, lambd=0.1, t0=1, foreach=True)),
    ("Rprop", {}),
]


@needs_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,kw", _HALF_OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(_HALF_OPTIMIZERS)])
def test_optimizer_half_parameters_bit_for_bit(name, kw, dtype):
    """Optimizers on bfloat16/float16 parameters round as PyTorch's single-tensor kernels: each in-place op
    computes in float32 and rounds its result to the half type once (``optim.optimizer.half_kernels``). Eight
    steps, eager and compiled; parameters and state compared as their bits."""
    def case(lib, jit):
        out = []
        for run in (lambda f: f, jit):
            p = (lib.sin(lib.arange(64.) * 0.731) * 0.4).to(getattr(lib, dtype)).requires_grad_()
            opt = getattr(lib.optim, name)([p], lr=1e-2, **kw)

            def step(g):
                p.grad = g
                opt.step()
            s = run(step)
            for k in range(8):
                s((lib.cos(lib.arange(64.) * (0.37 + k)) * 0.01).to(p.dtype))
            out.append([p.detach().view(lib.int16)]
                       + [v.view(lib.int16) for k, v in sorted(opt.state[p].items()) if v.dtype == p.dtype])
        return out
    assert_script_matches(case)
