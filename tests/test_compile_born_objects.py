"""Objects a compiled function creates at every call (``nn.CrossEntropyLoss()(out, y)`` in the step, as the
torch.compile tutorial writes it; a config object built inside): their attributes are the call's own state, not
Python state from outside to guard, and not a side effect. Before, each new module's ``__init__`` read as a change
of plain Python state and every later call ran eagerly (compile.pystate's births)."""
import types

from oracle import compile_three_ways, formula_data as _data, formula_init as _init, needs_torch

pytestmark = needs_torch


def _counts(case):
    return [{k: s[k] for k in ("calls", "eager_calls", "compiled_calls")} for s in compile_three_ways(case)]


def case_loss_module_made_in_the_step(T, jit):
    m = _init(T, T.nn.Linear(3, 4), seed=0)
    opt = T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    y = T.tensor([0, 3, 1, 2])

    @jit
    def step(x):
        opt.zero_grad()
        loss = T.nn.CrossEntropyLoss(label_smoothing=0.1)(m(x), y) + T.nn.MSELoss()(m(x), T.zeros(4, 4))
        loss.backward()
        opt.step()
        return loss
    return [step(_data(T, 4, 3, seed=i)) for i in range(4)] + [m.weight, m.bias]


def case_module_and_namespace_made_in_a_forward(T, jit):
    m = _init(T, T.nn.Linear(3, 3), seed=1)
    scale = [0.5]

    @jit
    def f(x):
        cfg = types.SimpleNamespace(k=scale[0], act=T.nn.GELU(approximate="tanh"))
        block = T.nn.Sequential(m, cfg.act)
        block.train(False)
        return block(x) * cfg.k
    out = [f(_data(T, 2, 3, seed=i)) for i in range(3)]
    scale[0] = 2.0  # (a value from outside that a born object holds: guarded, the next call traces again)
    return out + [f(_data(T, 2, 3, seed=5))]


def test_a_loss_module_made_in_the_step_compiles():
    step, = _counts(case_loss_module_made_in_the_step)
    assert step == {"calls": 4, "eager_calls": 1, "compiled_calls": 3}  # (the first call records, as always)


def test_objects_made_in_the_function_hold_the_values_read_outside():
    f, = _counts(case_module_and_namespace_made_in_a_forward)
    assert f["compiled_calls"] == 3 and f["eager_calls"] == 1


class Out:  # a plain class of the user's (no dataclass), as model outputs are often written
    def __init__(self, loss, logits, extras=None):
        self.loss, self.logits, self.extras = loss, logits, extras


class Inner:
    def __init__(self, h):
        self.h = h


def case_plain_object_returned(T, jit):
    m = _init(T, T.nn.Linear(3, 2), seed=2)

    @jit
    def f(x):
        y = m(x)
        return Out(y.pow(2).sum(), y, extras={"inner": Inner(y.tanh()), "n": 3})
    res = []
    for i in range(3):
        o = f(_data(T, 4, 3, seed=i))
        assert type(o) is Out and type(o.extras["inner"]) is Inner and o.extras["n"] == 3
        m.zero_grad()
        o.loss.backward()  # (through the object's tensor, outside the function)
        res += [o.loss, o.logits, o.extras["inner"].h, m.weight.grad, m.bias.grad]
    assert f(_data(T, 4, 3, seed=0)) is not o  # (a new object at every call, as eager mode makes)
    return res


def case_object_from_outside_returned(T, jit):
    held = Inner(T.ones(2))

    @jit
    def f(x):
        return held, x * held.h
    outs = [f(_data(T, 2, seed=i)) for i in range(3)]
    assert all(o[0] is held for o in outs)  # (an object that existed before the call is returned as itself)
    return [o[1] for o in outs]


def case_returned_object_also_stored(T, jit):
    keep = {}

    @jit
    def f(x):
        o = Out(x.sum(), x * 2)
        keep["last"] = o  # (stored outside too: a side effect; later calls run eagerly, with the same values)
        return o
    res = []
    for i in range(3):
        o = f(_data(T, 3, seed=i))
        res += [o.loss, o.logits, keep["last"].logits]
    return res


def test_plain_objects_the_call_makes_are_returned_compiled():
    f, = _counts(case_plain_object_returned)
    assert f == {"calls": 4, "eager_calls": 1, "compiled_calls": 3}  # (before: 'stores 2 tensor(s)', then eager)


def test_an_object_from_outside_is_returned_as_itself():
    f, = _counts(case_object_from_outside_returned)
    assert f["compiled_calls"] == 2


def test_a_returned_object_also_stored_outside_is_a_side_effect():
    f, = [{k: s[k] for k in ("calls", "eager_calls", "compiled_calls")}
          for s in compile_three_ways(case_returned_object_also_stored, expect="stores")]
    assert f["eager_calls"] == 2
