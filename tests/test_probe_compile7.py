"""Probes of torchish.compile with PyTorch-style programs, each run three ways — PyTorch eager, torchish eager and
torchish.compile — over several calls (the first records, the next traces, later ones reuse or retrace); the
compiled functions' statistics show which calls ran the program and which ran eagerly.

Fixed:
- Output made while a call was traced (compile.output): ``print("step", x.shape)``, ``sys.stdout``/``sys.stderr``
  writes, ``logging`` records and ``warnings.warn`` in the user's code appeared at the traced call only (twice
  where the state took two traces to settle; ``print("y", y)`` of a tensor wrote ``"y "`` before it broke the
  graph, so the line came out as ``"y y tensor(...)"``), and never at the later calls, which ran the program.
  PyTorch's compiler breaks the graph there, so the text appears at every call; a trace that would write now breaks
  the graph before anything is written, and the function runs eagerly for those inputs (``fullgraph=True`` raises).
"""
import contextlib
import io
import logging
import sys
import warnings

import pytest

from oracle import compile_three_ways, formula_data as _data, formula_init as _init, needs_torch

pytestmark = needs_torch


def _lin(T, i, o, seed=0):
    return _init(T, T.nn.Linear(i, o), seed=seed)


def _three(case, expect=None):
    """:func:`oracle.compile_three_ways`, the statistics cut to the call counts."""
    return [{k: s[k] for k in ("calls", "eager_calls", "compiled_calls", "retraces")}
            for s in compile_three_ways(case, expect=expect)]


# --- output -----------------------------------------------------------------------------------------------------------
def case_output_every_call(T, jit):
    """print of Python values and of a tensor, writes to stdout/stderr, a logger and a warning, in a train step."""
    m = _lin(T, 3, 2)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    log = logging.getLogger("test_probe_compile7")
    log.propagate, log.level = False, logging.INFO
    logged = io.StringIO()
    log.handlers[:] = [logging.StreamHandler(logged)]

    @jit
    def step(x):
        print("step", x.shape, x.dtype)
        opt.zero_grad()
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
        sys.stdout.write(f"batch {x.shape[0]}\n")
        sys.stderr.write("stepped\n")
        log.info("rows %d", x.shape[0])
        warnings.warn("a step")
        return loss

    @jit
    def show(x):
        y = x * 2
        print("y", y)
        return y + 1
    r = []
    for i in range(3):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r += [step(_data(T, 2, 3, seed=i)), show(_data(T, 3, seed=i)), m.weight]
        r += [out.getvalue(), err.getvalue(), [str(c.message) for c in w if str(c.message) == "a step"]]
    return r + [logged.getvalue()]


def test_output_made_by_the_function_appears_at_every_call():
    step, show = _three(case_output_every_call)  # (its graph-break warnings are among those it records)
    assert step == show == {"calls": 3, "eager_calls": 3, "compiled_calls": 0, "retraces": 0}


def test_output_with_fullgraph_is_an_error_that_writes_nothing(capsys):
    import torchish as torch

    def f(x):
        print("hello")
        return x + 1
    c = torch.compile(f, fullgraph=True)
    c(torch.ones(2))  # (the first call runs eagerly)
    assert capsys.readouterr().out == "hello\n"
    with pytest.raises(RuntimeError, match="(?s)test_probe_compile7.py.*print\\(\\) inside the compiled function"):
        c(torch.ones(2))
    assert capsys.readouterr().out == ""
    assert torch.compile(lambda x: x * 2, fullgraph=True)(torch.ones(2)).tolist() == [2.0, 2.0]
