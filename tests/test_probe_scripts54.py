"""Third-party programs, round 54: training-loop utilities, data pipelines and checkpoints as training scripts write
them (scheduler zoos read through ``get_last_lr()``, swa_utils, gradient accumulation under bf16 autocast with
``torch.amp.GradScaler("cpu")`` and no-decay parameter groups; Dataset subclasses with seeded DataLoaders, samplers,
splits and collate functions; a checkpoint to ``io.BytesIO`` with the RNG state whose resumed run equals the
uninterrupted one), seeded by ``torch.manual_seed``, run with torch 2.13 and torchish and compared by
``assert_script_matches`` (tests/oracle.py).
"""
import collections
import io

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_scheduler_zoo_get_last_lr(lib):
    """Schedulers as recipes combine them, read by ``get_last_lr()`` each step: ``SequentialLR`` of a ``LinearLR``
    warm-up and ``CosineAnnealingWarmRestarts(T_0, T_mult=2)``; ``ChainedScheduler`` of ``ExponentialLR`` and
    ``MultiStepLR`` over two parameter groups; ``OneCycleLR`` cycling Adam's ``betas``; ``ReduceLROnPlateau`` on a
    plateauing metric with ``cooldown`` and ``min_lr``; ``CosineAnnealingWarmRestarts.step(epoch + i / iters)``
    fractional steps; and ``state_dict()['last_epoch']``."""
    torch, nn = lib, lib.nn
    optim, sch = lib.optim, lib.optim.lr_scheduler
    torch.manual_seed(60)
    w, b = nn.Parameter(torch.randn(2)), nn.Parameter(torch.zeros(1))
    out = {}
    o1 = optim.SGD([w], lr=0.1, momentum=0.9)
    s1 = sch.SequentialLR(o1, [sch.LinearLR(o1, start_factor=0.1, total_iters=2),
                               sch.CosineAnnealingWarmRestarts(o1, T_0=2, T_mult=2, eta_min=0.01)], milestones=[2])
    lrs = []
    for _ in range(7):
        o1.step(); s1.step(); lrs.append(s1.get_last_lr())
    out["sequential"] = lrs
    o2 = optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    s2 = sch.ChainedScheduler([sch.ExponentialLR(o2, gamma=0.9), sch.MultiStepLR(o2, milestones=[2, 3], gamma=0.5)])
    lrs = []
    for _ in range(4):
        o2.step(); s2.step(); lrs.append(s2.get_last_lr())
    out["chained"] = lrs
    o3 = optim.Adam([w, b], lr=1e-3)
    s3 = sch.OneCycleLR(o3, max_lr=0.01, total_steps=6, pct_start=0.3, div_factor=10, final_div_factor=100)
    lrs = []
    for _ in range(5):
        o3.step(); s3.step(); lrs.append((s3.get_last_lr()[0], o3.param_groups[0]["betas"]))
    out["onecycle"] = lrs
    o4 = optim.SGD([w], lr=1.0)
    s4 = sch.ReduceLROnPlateau(o4, mode="min", factor=0.5, patience=1, cooldown=1, min_lr=0.2)
    lrs = []
    for metric in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.95, 0.9]:
        o4.step(); s4.step(metric); lrs.append((s4.get_last_lr(), s4.num_bad_epochs, s4.cooldown_counter))
    out["plateau"] = lrs
    o5 = optim.AdamW([w], lr=0.1)
    s5 = sch.CosineAnnealingWarmRestarts(o5, T_0=3, eta_min=0.001)
    lrs, iters = [], 2
    for epoch in range(3):
        for i in range(iters):
            o5.step(); s5.step(epoch + i / iters); lrs.append(s5.get_last_lr()[0])
    out["warm_restarts"] = (lrs, s5.T_cur, s5.T_i)
    out["states"] = (s1.state_dict()["last_epoch"], s3.state_dict()["last_epoch"], s3.state_dict()["total_steps"])
    return out


def case_accumulation_gradscaler_bf16_nodecay_swa(lib):
    """A trainer loop: parameter groups with no weight decay for biases and norm weights (by ``ndim <= 1``), AdamW,
    gradient accumulation over two micro-batches under ``torch.autocast("cpu", dtype=torch.bfloat16)`` with
    ``torch.amp.GradScaler("cpu")`` (``scale``, ``unscale_``, ``clip_grad_norm_``, ``step``, ``update``,
    ``get_scale``), then ``swa_utils.AveragedModel`` + ``SWALR(anneal_strategy='linear')`` for two more epochs and
    ``update_bn`` over a DataLoader."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    swa_utils = lib.optim.swa_utils
    torch.manual_seed(61)
    model = nn.Sequential(nn.Linear(4, 6, bias=False), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=1)
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    log = []
    for step in range(2):
        for micro in range(2):
            xb, yb = x[micro * 4:(micro + 1) * 4], y[micro * 4:(micro + 1) * 4]
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = model(xb)
                loss = F.cross_entropy(logits, yb) / 2
            scaler.scale(loss).backward()
        scaler.unscale_(opt)
        norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        log.append((logits.dtype, loss.dtype, norm, scaler.get_scale()))
    swa_model = swa_utils.AveragedModel(model)
    swa_sched = swa_utils.SWALR(opt, swa_lr=0.005, anneal_epochs=2, anneal_strategy="linear")
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4)
    for _ in range(2):
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad(); loss.backward(); opt.step()
        swa_model.update_parameters(model)
        swa_sched.step()
        log.append([g["lr"] for g in opt.param_groups])
    swa_utils.update_bn(loader, swa_model)
    bn = swa_model.module[1]
    return (log, [len(g["params"]) for g in opt.param_groups], list(model.parameters()), bn.running_mean,
            bn.running_var, swa_model.n_averaged, swa_model(x))


def case_dataset_loader_samplers_collate(lib):
    """Data plumbing: a ``Dataset`` subclass returning dicts of variable-length sequences with a custom
    ``collate_fn`` (``pad_sequence(batch_first=True, padding_value=-1)`` and lengths), ``DataLoader(shuffle=True,
    generator=g, drop_last=True)`` over two epochs, ``WeightedRandomSampler`` with a generator, ``random_split`` with
    fractions and a generator, ``Subset`` and ``ConcatDataset`` indexing, ``default_collate`` of dicts, tuples and
    namedtuples, and a ``BatchSampler`` over a ``SequentialSampler``."""
    torch = lib
    data = lib.utils.data
    torch.manual_seed(62)

    class Seqs(data.Dataset):
        def __init__(self, n):
            self.lens = torch.randint(1, 5, (n,)).tolist()
            self.items = [torch.arange(k) * (i + 1) for i, k in enumerate(self.lens)]

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return {"ids": self.items[i], "label": i % 3}

    def collate(batch):
        ids = [b["ids"] for b in batch]
        return (torch.nn.utils.rnn.pad_sequence(ids, batch_first=True, padding_value=-1),
                torch.tensor([len(s) for s in ids]), torch.tensor([b["label"] for b in batch]))

    ds = Seqs(7)
    g = torch.Generator().manual_seed(5)
    dl = data.DataLoader(ds, batch_size=3, shuffle=True, generator=g, drop_last=True, collate_fn=collate)
    epochs = [list(dl) for _ in range(2)]
    weights = torch.tensor([0.1, 0.5, 0.1, 0.1, 2.0, 0.1, 0.1])
    sampler = data.WeightedRandomSampler(weights, num_samples=6, replacement=True,
                                         generator=torch.Generator().manual_seed(3))
    weighted = [b[2] for b in data.DataLoader(ds, batch_size=2, sampler=sampler, collate_fn=collate)]
    tr, va, te = data.random_split(ds, [0.5, 0.25, 0.25], generator=torch.Generator().manual_seed(1))
    sub = data.Subset(ds, [6, 0, 3])
    cat = data.ConcatDataset([sub, va])
    Point = collections.namedtuple("Point", "x y")
    dc = data.default_collate
    collated = (dc([{"a": torch.ones(2), "b": 1.5}, {"a": torch.zeros(2), "b": 2.5}]),
                dc([(torch.tensor(1), 2), (torch.tensor(3), 4)]),
                dc([Point(torch.tensor([1.0]), 0), Point(torch.tensor([2.0]), 1)]))
    batches = list(data.BatchSampler(data.SequentialSampler(range(5)), batch_size=2, drop_last=False))
    return (epochs, weighted, list(sampler), tr.indices, va.indices, te.indices, len(cat), cat[3]["ids"],
            cat[0]["label"], collated, type(collated[2]).__name__, batches)


def case_checkpoint_resume_equals_uninterrupted(lib):
    """The resume recipe: train a dropout MLP under a StepLR schedule, ``torch.save({'model', 'optimizer',
    'scheduler', 'epoch', 'rng_state': torch.get_rng_state()})`` into ``io.BytesIO`` at epoch 2, keep training;
    then rebuild, ``torch.load`` (``weights_only=False``), restore every state and ``torch.set_rng_state``, and
    finish the run: the losses and parameters must equal the uninterrupted run's."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    def build():
        m = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Dropout(0.3), nn.Linear(5, 1))
        o = torch.optim.Adam(m.parameters(), lr=0.05)
        return m, o, torch.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.7)

    def epoch(m, o, s, x, y):
        perm = torch.randperm(x.size(0))
        loss = F.mse_loss(m(x[perm]), y[perm])
        o.zero_grad(); loss.backward(); o.step(); s.step()
        return loss.item()

    torch.manual_seed(63)
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    model, opt, sched = build()
    buf, losses = io.BytesIO(), []
    for ep in range(4):
        if ep == 2:
            torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                        "epoch": ep, "rng_state": torch.get_rng_state()}, buf)
        losses.append(epoch(model, opt, sched, x, y))
    torch.manual_seed(0)
    model2, opt2, sched2 = build()
    buf.seek(0)
    ck = torch.load(buf, weights_only=False)
    model2.load_state_dict(ck["model"]); opt2.load_state_dict(ck["optimizer"]); sched2.load_state_dict(ck["scheduler"])
    torch.set_rng_state(ck["rng_state"])
    resumed = [epoch(model2, opt2, sched2, x, y) for _ in range(ck["epoch"], 4)]
    same = all(torch.equal(a, b) for a, b in zip(model.parameters(), model2.parameters()))
    return (losses, resumed, same, ck["epoch"], ck["rng_state"].dtype, ck["rng_state"].shape, sched2.get_last_lr(),
            opt2.state_dict()["state"][0]["step"], list(model2.parameters()))


test_script_matches_torch = script_test(globals())
