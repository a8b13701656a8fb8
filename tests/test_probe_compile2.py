"""Regressions found by probing torchish.compile with training and evaluation loops against PyTorch (the identity
as ``jit``): value checks on traced tensors (an index out of range in an embedding, indexing or gather, a class
target out of bounds) raise PyTorch's error from a compiled call, before the step runs, so the state is unchanged;
and probe programs kept as guards (train/eval steps with schedulers, hooks, accumulation and freezing)."""
import numpy as np
import pytest

import torchish
from oracle import arr, needs_torch, torch

pytestmark = needs_torch


def _both(case):
    """``case(T, jit)`` with PyTorch (identity) and torchish (``torchish.compile``); the results, as numpy trees."""
    return case(torch, lambda fn=None, **kw: fn), case(torchish, torchish.compile)


def _close(got, ref):
    if isinstance(ref, (list, tuple)):
        assert type(got) is type(ref) and len(got) == len(ref), (got, ref)
        for g, r in zip(got, ref):
            _close(g, r)
    elif isinstance(ref, dict):
        assert set(got) == set(ref)
        for k in ref:
            _close(got[k], ref[k])
    elif isinstance(ref, torch.Tensor):
        assert str(got.dtype) == str(ref.dtype)
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=2e-4, atol=2e-5)
    elif isinstance(ref, float):
        assert np.isclose(got, ref, rtol=2e-4, atol=2e-5), (got, ref)
    else:
        assert got == ref, (got, ref)


def _copy(T, m, seed=0):
    with T.no_grad():
        for i, (_, p) in enumerate(m.named_parameters()):
            p.copy_(T.tensor(arr(*p.shape, seed=seed + i) * 0.5))
    return m


def _outcome(fn, *args):
    try:
        return fn(*args)
    except (IndexError, RuntimeError) as e:
        return type(e).__name__, str(e)


def test_bad_index_in_a_compiled_step_raises_and_leaves_the_state():
    """A batch with a token id past the embedding or a target past the classes, in a compiled Adam step after
    good batches: PyTorch's IndexError from the compiled call (it used to clamp silently and train on), the
    parameters and Adam's moments as they were, and the next good batch trains as in PyTorch."""
    def case(T, jit):
        nn = T.nn
        emb, head = _copy(T, nn.Embedding(6, 3)), _copy(T, nn.Linear(3, 4), seed=3)
        opt = T.optim.Adam(list(emb.parameters()) + list(head.parameters()), lr=0.1)

        @jit
        def step(ids, y):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(head(emb(ids).mean(1)), y)
            loss.backward()
            opt.step()
            return loss
        out = []
        for ids, y in [([[0, 1], [2, 3]], [0, 1]), ([[1, 2], [3, 4]], [2, 3]), ([[1, 9], [3, 4]], [2, 3]),
                       ([[1, 2], [3, 4]], [2, 7]), ([[5, 5], [0, 0]], [1, 1])]:
            out.append(_outcome(step, T.tensor(ids), T.tensor(y)))
            out.append(emb.weight.detach().clone())
        return out, opt.state_dict()["state"][0]["exp_avg"]
    ref, got = _both(case)
    assert ref[0][4] == ("IndexError", "index out of range in self")
    assert ref[0][6] == ("IndexError", "Target 7 is out of bounds.")
    _close(got, ref)


def test_bad_index_in_a_compiled_module_and_function():
    """``jit(module)`` (a program with its VJP) and a compiled function indexing, gathering and taking
    ``index_select`` with an index past the end: PyTorch's exception type and message."""
    def case(T, jit):
        emb = _copy(T, T.nn.Embedding(5, 2))
        cemb = jit(emb)

        @jit
        def f(x, i, j):
            return x[i].sum() + x.gather(1, j).sum() + x.index_select(0, i[:1]).sum()
        x = T.tensor(arr(3, 3))
        out = [cemb(T.tensor([1, 2])), cemb(T.tensor([0, 4])), _outcome(cemb, T.tensor([0, 5])),
               f(x, T.tensor([0, 2]), T.tensor([[0], [1], [2]])), f(x, T.tensor([1, 2]), T.tensor([[2], [1], [0]])),
               _outcome(f, x, T.tensor([0, 3]), T.tensor([[0], [1], [2]])),
               _outcome(f, x, T.tensor([0, 1]), T.tensor([[0], [3], [2]])),
               _outcome(f, x, T.tensor([-4, 1]), T.tensor([[0], [1], [2]]))]
        out[1].sum().backward()
        return out, emb.weight.grad
    ref, got = _both(case)
    assert [r[0] for r in ref[0][5:]] == ["IndexError", "RuntimeError", "IndexError"]
    _close(got, ref)


def test_learning_rate_read_by_the_function_follows_the_scheduler():
    """A step that reads ``param_groups[0]["lr"]`` itself (a manual SGD update, a custom optimizer, the rate
    returned for logging, ``sched.get_last_lr()``) used the rate it was traced with forever: the value is now
    guarded, as PyTorch's compiler guards it, so a scheduler's new rate traces again."""
    def case(T, jit):
        nn = T.nn
        model, other = _copy(T, nn.Linear(3, 2)), _copy(T, nn.Linear(3, 2), seed=4)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        sched = T.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        opt2 = T.optim.Adam(other.parameters(), lr=0.1)
        sched2 = T.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=4)

        @jit
        def manual(x):
            model.zero_grad()
            loss = model(x).pow(2).sum()
            loss.backward()
            lr = opt.param_groups[0]["lr"]
            with T.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
            return loss, lr

        @jit
        def logged(x):
            opt2.zero_grad()
            loss = other(x).pow(2).sum()
            loss.backward()
            opt2.step()
            return {"loss": loss, "lr": sched2.get_last_lr()[0]}
        out = []
        for i in range(3):
            x = T.tensor(arr(2, 3, seed=i))
            out += [manual(x), logged(x)]
            sched.step()
            sched2.step()
        return out, model.weight, other.weight
    ref, got = _both(case)
    _close(got, ref)


def test_state_and_arguments_returned_as_themselves():
    """A compiled call returning a parameter or a buffer it updates, or an argument it normalised in place,
    returns that tensor itself, as PyTorch does (it returned a copy of the value: a list of the returned weights
    no longer followed the training, ``y is x`` was False)."""
    def case(T, jit):
        nn = T.nn
        model = _copy(T, nn.Linear(2, 2))
        opt = T.optim.SGD(model.parameters(), lr=0.5)
        total = T.zeros(())

        @jit
        def step(x):
            opt.zero_grad()
            loss = model(x).square().sum()
            loss.backward()
            opt.step()
            total.add_(loss.detach())
            return model.weight, total, loss

        @jit
        def normalize_(x, mean):
            return x.sub_(mean).div_(2.0)
        outs = [step(T.tensor(arr(2, 2, seed=i))) for i in range(3)]
        xs = [T.tensor(arr(2, 3, seed=i)) for i in range(3)]
        ys = [normalize_(x, T.tensor([0.1, 0.2, 0.3])) for x in xs]
        return outs, [y is x for x, y in zip(xs, ys)], xs, outs[0][0] is model.weight, outs[1][1] is total
    ref, got = _both(case)
    assert ref[1] == [True] * 3 and ref[3] and ref[4]
    _close(got, ref)


def test_custom_optimizer_reads_its_learning_rate_each_call():
    """A user's Optimizer subclass (watched as a user class) reads ``group["lr"]`` as a Python number in its own
    ``step``: a MultiStepLR milestone changes the rate the compiled step uses, as in PyTorch."""
    def case(T, jit):
        class SignSGD(T.optim.Optimizer):
            def __init__(self, params, lr=0.01, momentum=0.9):
                super().__init__(params, dict(lr=lr, momentum=momentum))

            @T.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        st = self.state[p]
                        if "buf" not in st:
                            st["buf"] = T.zeros_like(p)
                        st["buf"].mul_(group["momentum"]).add_(p.grad)
                        p.add_(st["buf"].sign(), alpha=-group["lr"])
        model = _copy(T, T.nn.Linear(3, 2))
        opt = SignSGD(model.parameters(), lr=0.1)
        sched = T.optim.lr_scheduler.MultiStepLR(opt, milestones=[2], gamma=0.1)

        @jit
        def step(x):
            opt.zero_grad()
            loss = model(x).sum()
            loss.backward()
            opt.step()
            return loss
        out = []
        for i in range(4):
            out.append(step(T.tensor(arr(2, 3, seed=i))))
            sched.step()
        return out, model.weight, opt.state[model.weight]["buf"]
    ref, got = _both(case)
    _close(got, ref)


def test_one_hot_class_out_of_range_raises_in_a_compiled_call():
    """``F.one_hot(y, num_classes)`` with a class past the end (or negative) raises PyTorch's RuntimeError from a
    compiled call (it returned an all-zero row)."""
    def case(T, jit):
        @jit
        def f(y):
            return T.nn.functional.one_hot(y, num_classes=3).float().sum(0)
        return [f(T.tensor([0, 2])), f(T.tensor([1, 2])), _outcome(f, T.tensor([0, 3])), _outcome(f, T.tensor([-1, 0]))]
    ref, got = _both(case)
    assert ref[2] == ("RuntimeError", "Class values must be smaller than num_classes.")
    _close(got, ref)


def test_checks_on_indices_computed_from_the_model_are_not_run_before_the_step():
    """An index computed from the model's output (``argmax``: valid by construction) is not checked before each
    call: the check would compute the model again and wait for the previous step's update. The targets, an
    argument, are."""
    def case(T, jit):
        nn = T.nn
        model = _copy(T, nn.Linear(3, 4))
        opt = T.optim.SGD(model.parameters(), lr=0.1)

        @jit
        def step(x, y):
            opt.zero_grad()
            logits = model(x)
            best = logits.gather(1, logits.argmax(1, keepdim=True)).sum()
            loss = nn.functional.cross_entropy(logits, y) - 0.1 * best
            loss.backward()
            opt.step()
            return loss
        out = [step(T.tensor(arr(2, 3, seed=i)), T.tensor([i % 4, 3])) for i in range(3)]
        return out + [_outcome(step, T.tensor(arr(2, 3)), T.tensor([0, 4])), model.weight], step
    (ref, _), (got, step) = _both(case)
    assert ref[3] == ("IndexError", "Target 4 is out of bounds.")
    _close(got, ref)
    (entry,) = step.entries.values()
    assert entry.check[3] == [1]  # the gather's check (0) is not kept; cross_entropy's (1) is


def _batch(T, n, d, k, seed):
    rng = np.random.default_rng(seed)
    return T.tensor(rng.standard_normal((n, d)).astype(np.float32)), T.tensor(rng.integers(0, k, size=n))


def test_guard_train_and_eval_steps_with_batchnorm_accumulation_and_a_smaller_last_batch():
    """Probe program kept as a guard: a compiled train step (BatchNorm, gradient accumulation over 2 calls with
    ``loss / k``, clip_grad_norm_, StepLR between calls) and a compiled ``model.eval()`` + ``no_grad`` eval step
    returning a dict of a tensor, a Python number and a list, over batches whose last one is smaller."""
    def case(T, jit):
        nn = T.nn
        model = _copy(T, nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 3)))
        opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = T.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        @jit
        def train_step(x, y, update: bool):
            model.train()
            loss = nn.functional.cross_entropy(model(x), y, label_smoothing=0.1)
            (loss / 2).backward()
            if update:
                norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
                opt.step()
                opt.zero_grad()
                return loss, norm
            return loss, None

        @jit
        def eval_step(x, y):
            model.eval()
            with T.no_grad():
                logits = model(x)
                return {"correct": (logits.argmax(1) == y).sum(), "n": x.shape[0], "probs": [logits.softmax(1)]}
        out = []
        for i, n in enumerate([6, 6, 6, 3]):
            x, y = _batch(T, n, 4, 3, seed=i)
            out.append(train_step(x, y, i % 2 == 1))
            out.append(eval_step(x, y))
            sched.step()
        return out, model[1].running_var, model[3].weight, model[0].weight.grad
    ref, got = _both(case)
    _close(got, ref)



def test_python_and_numpy_random_numbers_drawn_inside_run_eagerly():
    """Random augmentation with Python's ``random`` (a closure's ``random.Random``, the module's functions) or a
    numpy Generator held by the trainer: the trace's draws were constants of the program, the same at every call.
    The generators are put back after the trace and the call runs eagerly, drawing what PyTorch draws."""
    import random

    def case(T, jit):
        nn = T.nn
        model = _copy(T, nn.Linear(4, 2))
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        rnd = random.Random(0)

        @jit
        def step(x):
            if rnd.random() < 0.5:
                x = x.flip(-1)
            opt.zero_grad()
            loss = model(x).pow(2).sum() * random.uniform(0.5, 1.5)
            loss.backward()
            opt.step()
            return loss

        class Noise:
            def __init__(self):
                self.rng = np.random.default_rng(5)

            def __call__(self, x):
                return x + float(self.rng.normal())
        noise = jit(Noise().__call__)
        random.seed(3)
        out = [(step(T.tensor(arr(2, 4, seed=i))), noise(T.zeros(2))) for i in range(4)]
        return out, model.weight, random.random()
    ref, got = _both(case)
    _close(got, ref)


def test_loss_returned_after_backward_inside_keeps_its_grad_fn():
    """The loss a compiled training step returns after ``loss.backward()`` requires grad and has a ``grad_fn`` of
    its op's name, as in PyTorch (it came back as a leaf without grad); a second backward through it raises
    PyTorch's RuntimeError; an output computed under ``enable_grad()`` inside a call made under ``no_grad`` also
    requires grad."""
    def case(T, jit):
        nn = T.nn
        model = _copy(T, nn.Linear(3, 1))
        opt = T.optim.SGD(model.parameters(), lr=0.1)

        @jit
        def step(x):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), T.zeros(2, 1))
            loss.backward()
            opt.step()
            return loss

        @jit
        def inner(x):
            with T.enable_grad():
                y = model(x).sum()
                g, = T.autograd.grad(y, model.weight)
            return g, y
        out = []
        for i in range(3):
            loss = step(T.tensor(arr(2, 3, seed=i)))
            out.append((loss, loss.requires_grad, loss.is_leaf, loss.grad_fn.name()))
            with T.no_grad():
                g, y = inner(T.tensor(arr(2, 3, seed=i)))
            out.append((g, y, y.requires_grad))
        out.append(_outcome(lambda: loss.backward())[0])
        return out, (loss * 2).requires_grad
    ref, got = _both(case)
    assert ref[0][-1] == "RuntimeError" and ref[0][0][3] == "MseLossBackward0"
    _close(got, ref)


def test_binary_cross_entropy_range_checks_in_a_compiled_call():
    """``F.binary_cross_entropy`` with a probability outside [0, 1] passed in raises PyTorch's RuntimeError from a
    compiled call; on ``sigmoid(model(x))`` (computed from the state the step writes) the check is not run before
    each step."""
    def case(T, jit):
        nn = T.nn

        @jit
        def f(p, y):
            return nn.functional.binary_cross_entropy(p, y)
        model = _copy(T, nn.Linear(3, 1))
        opt = T.optim.SGD(model.parameters(), lr=0.1)

        @jit
        def step(x, y):
            opt.zero_grad()
            loss = nn.functional.binary_cross_entropy(model(x).sigmoid().squeeze(1), y)
            loss.backward()
            opt.step()
            return loss
        p, y = T.tensor([0.2, 0.7]), T.tensor([0.0, 1.0])
        out = [f(p, y), f(p, y), _outcome(f, T.tensor([0.2, 1.5]), y), _outcome(f, p, T.tensor([0.0, -1.0]))]
        out += [step(T.tensor(arr(2, 3, seed=i)), y) for i in range(3)]
        return out, step
    (ref, _), (got, step) = _both(case)
    assert ref[2] == ("RuntimeError", "all elements of input should be between 0 and 1")
    assert ref[3] == ("RuntimeError", "all elements of target should be between 0 and 1")
    _close(got, ref)
    (entry,) = step.entries.values()
    assert entry.check[3] == [1]  # the target's check (an argument) is kept, the input's is not
