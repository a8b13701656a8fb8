"""torchish.optim.swa_utils against PyTorch: AveragedModel (SWA, EMA, avg_fn, use_buffers), SWALR, update_bn."""
import numpy as np
import pytest

from oracle import arr, assert_same, check_raises, needs_torch, run_both, same, to_numpy

pytestmark = needs_torch


def _model(lib):
    """Linear -> BatchNorm1d -> ReLU -> Linear with weights from numpy (identical in both libraries)."""
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.ReLU(), lib.nn.Linear(3, 2))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(arr(*p.shape, seed=10 + i)))
    return model


def _train_and_average(lib, steps=4, **averaged_kw):
    model = _model(lib)
    averaged = lib.optim.swa_utils.AveragedModel(model, **averaged_kw)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        x = lib.tensor(arr(6, 4, seed=100 + step))
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        averaged.update_parameters(model)
    return averaged


def _state(averaged):
    return dict(averaged.state_dict())


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema_avg", "swa_avg", "swa_multi", "use_buffers", "use_buffers_swa"])
def test_update_parameters(kind):
    def fn(lib):
        swa = lib.optim.swa_utils
        kw = {"swa": {}, "ema_multi": {"multi_avg_fn": swa.get_ema_multi_avg_fn(0.9)},
              "ema_avg": {"avg_fn": swa.get_ema_avg_fn(0.8)}, "swa_avg": {"avg_fn": swa.get_swa_avg_fn()},
              "swa_multi": {"multi_avg_fn": swa.get_swa_multi_avg_fn()},
              "use_buffers": {"use_buffers": True, "multi_avg_fn": swa.get_ema_multi_avg_fn(0.5)},
              "use_buffers_swa": {"use_buffers": True}}[kind]
        averaged = _train_and_average(lib, **kw)
        out = averaged.eval()(lib.tensor(arr(5, 4, seed=7)))
        return _state(averaged), out

    same(fn)


def test_state_dict_keys_and_copy():
    def fn(lib):
        model = _model(lib)
        averaged = lib.optim.swa_utils.AveragedModel(model)
        keys = list(averaged.state_dict())
        separate = averaged.module is not model and averaged.module[0].weight is not model[0].weight
        return keys, separate, averaged.n_averaged, type(averaged.module).__name__

    same(fn)


def test_load_state_dict_round_trip():
    def fn(lib):
        source = _train_and_average(lib, steps=3)
        fresh = lib.optim.swa_utils.AveragedModel(_model(lib))
        fresh.load_state_dict(source.state_dict())
        return _state(fresh)

    same(fn)


def test_first_update_copies_and_buffers_follow_model():
    def fn(lib):
        model = _model(lib)
        averaged = lib.optim.swa_utils.AveragedModel(model, avg_fn=lambda a, c, n: a * 0)
        with lib.no_grad():
            model[0].weight.add_(1.0)
        model.train()(lib.tensor(arr(6, 4, seed=3)))  # changes the BatchNorm buffers
        averaged.update_parameters(model)
        first = _state(averaged)
        averaged.update_parameters(model)  # the avg_fn zeroes the parameters; buffers still copied
        return first, _state(averaged)

    same(fn)


def test_forward_passes_through():
    def fn(lib):
        averaged = lib.optim.swa_utils.AveragedModel(_model(lib))
        return averaged.eval()(lib.tensor(arr(3, 4, seed=1)))

    same(fn)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
def test_swalr_learning_rates(strategy, anneal_epochs):
    def fn(lib):
        w = lib.nn.Parameter(lib.zeros(2))
        b = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.2], anneal_epochs=anneal_epochs,
                                          anneal_strategy=strategy)
        lrs = [sched.get_last_lr()]
        for _ in range(7):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        return lrs, [g["swa_lr"] for g in opt.param_groups]

    same(fn, rtol=1e-12, atol=1e-12)


def test_swalr_state_dict():
    def fn(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=3, anneal_strategy="linear")
        opt.step()
        sched.step()
        state = sched.state_dict()
        opt2 = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=1.0)
        other = lib.optim.swa_utils.SWALR(opt2, swa_lr=0.1)
        other.load_state_dict(state)
        return sorted(state), state["_anneal_strategy"], other.anneal_func(0.5), isinstance(
            sched, lib.optim.lr_scheduler.LRScheduler)

    same(fn)


def _bn_model(lib):
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3, momentum=0.3), lib.nn.ReLU(),
                              lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(arr(*p.shape, seed=20 + i)))
    return model


@pytest.mark.parametrize("batches_as", ["tensors", "tuples"])
def test_update_bn(batches_as):
    def fn(lib):
        model = _bn_model(lib)
        model.train()(lib.tensor(arr(5, 4, seed=99)))  # stale statistics that update_bn must reset
        model.eval()
        loader = [lib.tensor(arr(6, 4, seed=s, lo=-2, hi=3)) for s in range(4)]
        if batches_as == "tuples":
            loader = [(x, lib.tensor(arr(6, seed=50))) for x in loader]
        lib.optim.swa_utils.update_bn(loader, model)
        return dict(model.state_dict()), model.training, model[1].momentum, model[4].momentum

    same(fn)


def test_update_bn_on_averaged_model_keeps_train_mode():
    def fn(lib):
        averaged = lib.optim.swa_utils.AveragedModel(_bn_model(lib))
        averaged.train()
        lib.optim.swa_utils.update_bn([lib.tensor(arr(8, 4, seed=s)) for s in range(3)], averaged)
        return dict(averaged.state_dict()), averaged.training, averaged.module.training

    same(fn)


def test_update_bn_without_batchnorm_is_a_no_op():
    def fn(lib):
        model = lib.nn.Linear(4, 2).eval()
        lib.optim.swa_utils.update_bn([lib.tensor(arr(2, 4))], model)
        return model.training

    same(fn)


def test_ema_value_by_hand():
    """EMA after three updates: decay * (decay * w1 + (1 - decay) * w2) + (1 - decay) * w3 (maths reference)."""
    import torchish
    ws = [arr(3, seed=s) for s in range(3)]
    model = torchish.nn.Linear(3, 1, bias=False)
    averaged = torchish.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=torchish.optim.swa_utils.get_ema_multi_avg_fn(0.75))
    for w in ws:
        with torchish.no_grad():
            model.weight.copy_(torchish.tensor(w[None]))
        averaged.update_parameters(model)
    expected = 0.75 * (0.75 * ws[0] + 0.25 * ws[1]) + 0.25 * ws[2]
    np.testing.assert_allclose(to_numpy(averaged.module.weight)[0], expected, rtol=1e-6)
    assert int(averaged.n_averaged) == 3


def test_errors():
    def opt(lib):
        return lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=1.0)

    check_raises(lambda lib: lib.optim.swa_utils.SWALR(opt(lib), swa_lr=0.1, anneal_strategy="bad"),
                 match="anneal_strategy must be one of 'cos' or 'linear'")
    check_raises(lambda lib: lib.optim.swa_utils.SWALR(opt(lib), swa_lr=0.1, anneal_epochs=-1),
                 match="anneal_epochs must be equal or greater than 0")
    check_raises(lambda lib: lib.optim.swa_utils.SWALR(opt(lib), swa_lr=0.1, anneal_epochs=2.5))
    check_raises(lambda lib: lib.optim.swa_utils.SWALR(opt(lib), swa_lr=[0.1, 0.2]))
    check_raises(lambda lib: lib.optim.swa_utils.get_ema_multi_avg_fn(1.5), match="Invalid decay value")
    check_raises(lambda lib: lib.optim.swa_utils.get_ema_avg_fn(-0.1))
    check_raises(lambda lib: lib.optim.swa_utils.AveragedModel(
        lib.nn.Linear(2, 2), avg_fn=lib.optim.swa_utils.get_swa_avg_fn(),
        multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn()))
    check_raises(lambda lib: lib.optim.swa_utils.SWALR(object(), swa_lr=0.1))


def test_swalr_swa_lr_list_broadcasts():
    ref, got = run_both(lambda lib: [g["swa_lr"] for g in lib.optim.swa_utils.SWALR(
        lib.optim.SGD([{"params": [lib.nn.Parameter(lib.zeros(1))]}, {"params": [lib.nn.Parameter(lib.zeros(1))]}],
                      lr=0.3), swa_lr=0.01).optimizer.param_groups])
    assert_same(ref, got)


def test_device_argument():
    def fn(lib):
        model = _bn_model(lib)
        averaged = lib.optim.swa_utils.AveragedModel(model, device="cpu")
        averaged.update_parameters(model)
        lib.optim.swa_utils.update_bn([lib.tensor(arr(4, 4, seed=s)) for s in range(2)], averaged, device="cpu")
        return str(averaged.n_averaged.device), dict(averaged.state_dict())

    same(fn)
