"""Device placement as on a GPU machine, checked on a CPU-only one: ONE subprocess of tests/test_devices.py.

On a machine with an accelerator JAX's own default device is the accelerator, while PyTorch (and torchish) create
tensors on the CPU unless told otherwise. This worker starts JAX with two host devices, makes the second JAX's
default device and ``cuda`` (``TORCHISH_HOST_ACCELERATOR=1``), so every place where a value lands on JAX's default
device instead of the tensor's own shows up as a device mismatch. It prints one JSON object: check name ->
``{"ok": bool, "detail": str}``, and the losses of each training run (the test compares them).
"""
from __future__ import annotations

import json
import os
import traceback

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2").strip()
os.environ["TORCHISH_HOST_ACCELERATOR"] = "1"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402

jax.config.update("jax_default_device", jax.devices("cpu")[1])

import numpy as np  # noqa: E402

import torchish  # noqa: E402
import torchish.nn.functional as F  # noqa: E402

RESULTS, LOSSES = {}, {}


def check(fn):
    try:
        fn()
        RESULTS[fn.__name__] = {"ok": True, "detail": ""}
    except Exception:  # noqa: BLE001 - every failure is reported, the other checks still run
        RESULTS[fn.__name__] = {"ok": False, "detail": traceback.format_exc()[-3000:]}
    return fn


def devices_of(tensors):
    return sorted({str(t.device) for t in tensors if t is not None})


def train(device, mode, steps=3):
    """A small training run with dropout (the RNG) and Adam; returns the losses and every tensor it leaves."""
    torchish.manual_seed(0)
    model = torchish.nn.Sequential(torchish.nn.Linear(6, 16), torchish.nn.ReLU(), torchish.nn.Dropout(0.3),
                                   torchish.nn.Linear(16, 3))
    if device != "cpu":
        model = model.to(device)
    opt = torchish.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    x = torchish.tensor(rng.normal(size=(8, 6)).astype(np.float32), device=device)
    y = torchish.tensor(rng.integers(0, 3, 8), device=device)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    fn = torchish.compile(step) if mode == "compile" else step
    torchish.config.lazy = mode == "lazy"
    try:
        losses = [float(fn()) for _ in range(steps)]
    finally:
        torchish.config.lazy = False
    params = list(model.parameters())
    state = [v for s in opt.state.values() for v in s.values() if isinstance(v, torchish.Tensor)]
    return losses, params + [p.grad for p in params] + state


def expect_runtime_error(fn, fragment):
    """``fn()`` raises RuntimeError with ``fragment`` in its message."""
    try:
        fn()
    except RuntimeError as e:
        assert fragment in str(e), str(e)
    else:
        raise AssertionError(f"no RuntimeError ({fragment!r})")


def expect_devices(tensors, want):
    got = devices_of(tensors)
    assert got == [want], f"tensors on {got}, expected all on {want}"


@check
def default_device_is_cpu():
    """Creation without device= gives CPU tensors (random ones too), device= gives the accelerator."""
    assert torchish.cuda.is_available()
    for t in (torchish.randn(3), torchish.rand(2, 2), torchish.zeros(2), torchish.arange(4), torchish.tensor([1.0]),
              torchish.empty(3).uniform_(), torchish.nn.Linear(2, 2).weight, torchish.randint(0, 5, (3,)),
              torchish.randperm(4), torchish.normal(0.0, 1.0, (2,)), torchish.bernoulli(torchish.full((3,), 0.5))):
        assert str(t.device) == "cpu", (t, t.device)
        assert t._d.devices() == {jax.devices("cpu")[0]}
    for t in (torchish.randn(3, device="cuda"), torchish.zeros(2, device="cuda"), torchish.ones(2).cuda(),
              torchish.empty(3, device="cuda").normal_(), torchish.nn.Linear(2, 2).cuda().weight,
              torchish.arange(3, device="cuda"), torchish.bernoulli(torchish.full((3,), 0.5, device="cuda"))):
        assert str(t.device) == "cuda:0", (t, t.device)
        assert t._d.devices() == {jax.devices("cpu")[1]}


@check
def training_stays_on_its_device():
    for device, want in (("cpu", "cpu"), ("cuda", "cuda:0")):
        for mode in ("eager", "lazy", "compile"):
            losses, tensors = train(device, mode)
            expect_devices(tensors, want)
            LOSSES[f"{device}/{mode}"] = losses


@check
def varied_model_stays_on_its_device():
    """Embedding, GRU, LayerNorm, BatchNorm (buffers), SGD with momentum, clip_grad_norm_, a scheduler, a
    state_dict round trip with map_location: everything stays where the model is (eager and compiled)."""
    import io

    class Net(torchish.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torchish.nn.Embedding(10, 8)
            self.gru = torchish.nn.GRU(8, 8, batch_first=True)
            self.norm = torchish.nn.LayerNorm(8)
            self.bn = torchish.nn.BatchNorm1d(8)
            self.fc = torchish.nn.Linear(8, 2)

        def forward(self, idx):
            h, _ = self.gru(self.emb(idx))
            return self.fc(self.bn(self.norm(h[:, -1])))
    for device, want in (("cpu", "cpu"), ("cuda", "cuda:0")):
        for compiled in (False, True):
            torchish.manual_seed(1)
            model = Net().to(device)
            opt = torchish.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            sched = torchish.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
            idx = torchish.randint(0, 10, (4, 5), device=device)
            y = torchish.tensor([0, 1, 1, 0], device=device)

            def step():
                opt.zero_grad()
                loss = F.cross_entropy(model(idx), y)
                loss.backward()
                torchish.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                return loss
            fn = torchish.compile(step) if compiled else step
            for _ in range(3):
                loss = fn()
                sched.step()
            state = [v for s in opt.state.values() for v in s.values() if isinstance(v, torchish.Tensor)]
            expect_devices([loss] + list(model.parameters()) + [p.grad for p in model.parameters()]
                           + list(model.buffers()) + state, want)
            buf = io.BytesIO()
            torchish.save(model.state_dict(), buf)
            buf.seek(0)
            expect_devices(torchish.load(buf).values(), want)
            buf.seek(0)
            expect_devices(torchish.load(buf, map_location="cpu").values(), "cpu")


@check
def mixed_devices_raise_pytorch_error():
    lin = torchish.nn.Linear(3, 2).cuda()
    for fn in (lambda: lin(torchish.ones(4, 3)), lambda: torchish.ones(2) + torchish.ones(2, device="cuda"),
               lambda: torchish.compile(lambda v: lin(v).sum())(torchish.ones(4, 3))):
        expect_runtime_error(fn, "Expected all tensors to be on the same device")


@check
def pinned_memory_and_type_names():
    """``pin_memory()`` needs an accelerator (here there is one) and a CPU tensor; ``type()`` names cuda tensors
    ``torch.cuda.FloatTensor`` as PyTorch does."""
    x = torchish.ones(2)
    assert not x.is_pinned()
    y = x.pin_memory()
    assert y.is_pinned() and y is not x and str(y.device) == "cpu" and y.tolist() == [1.0, 1.0]
    assert x.type() == "torch.FloatTensor" and x.cuda().type() == "torch.cuda.FloatTensor"
    expect_runtime_error(lambda: x.cuda().pin_memory(), "only dense CPU tensors can be pinned")


@check
def cpu_scalar_joins_accelerator_op():
    """As in PyTorch, a 0-dim CPU tensor may take part in an op on the accelerator."""
    out = torchish.ones(3, device="cuda") * torchish.tensor(2.0)
    assert str(out.device) == "cuda:0" and out.tolist() == [2.0, 2.0, 2.0]


@check
def packed_sequences_keep_metadata_on_cpu():
    """As in PyTorch: ``batch_sizes`` and the lengths ``pad_packed_sequence`` returns stay on the CPU, the sorting
    indices live with the data, and a recurrent layer on the accelerator takes the packed batch."""
    from torchish.nn.utils.rnn import pack_sequence, pad_packed_sequence
    gru = torchish.nn.GRU(3, 4).to("cuda")
    seqs = [torchish.ones(n, 3, device="cuda") * n for n in (2, 4, 3)]
    packed = pack_sequence(seqs, enforce_sorted=False)
    assert str(packed.batch_sizes.device) == "cpu" and packed.batch_sizes.tolist() == [3, 3, 2, 1]
    expect_devices([packed.data, packed.sorted_indices, packed.unsorted_indices], "cuda:0")
    out, h = gru(packed)
    padded, lengths = pad_packed_sequence(out)
    expect_devices([padded, h], "cuda:0")
    assert str(lengths.device) == "cpu" and lengths.tolist() == [2, 4, 3]
    cpu_packed = pack_sequence([torchish.ones(2, 3), torchish.ones(1, 3)])
    expect_devices([cpu_packed.data, cpu_packed.batch_sizes], "cpu")


@check
def compiled_step_follows_model_to_accelerator():
    """A compiled step retraces when the model (state) and its input move to another device together, and the
    generator's key is moved to the program's device when an eager draw left it elsewhere."""
    torchish.manual_seed(0)
    lin = torchish.nn.Linear(4, 2)
    drop = torchish.nn.Dropout(0.5)
    step = torchish.compile(lambda v: drop(lin(v)).sum())
    x = torchish.ones(3, 4)
    for _ in range(2):
        step(x)
    lin.cuda()
    out = step(x.cuda())
    assert str(out.device) == "cuda:0", out.device
    torchish.randn(2)  # an eager CPU draw moves the key back to the CPU
    out = step(x.cuda())
    out = step(x.cuda())
    assert str(out.device) == "cuda:0", out.device


@check
def eig_on_accelerator_keeps_column_major_vectors():
    """linalg.eig runs on the host and moves its results back: the eigenvectors keep LAPACK's column-major strides,
    as the other decompositions' results on the accelerator."""
    a = (torchish.arange(16.0).reshape(4, 4) ** 2 * 0.37).sin().to("cuda")
    w, v = torchish.linalg.eig(a)
    expect_devices([w, v], "cuda:0")
    assert v.stride() == (1, 4) and w.stride() == (1,), (v.stride(), w.stride())
    assert torchish.linalg.inv(a).stride() == (1, 4)


@check
def istft_and_ctc_loss_on_accelerator():
    """istft's frame indices and window envelope, and ctc_loss's lengths and targets (CPU targets, as cuDNN wants
    them, list or CPU-tensor lengths: PyTorch moves them), live beside the input; the values are the CPU's."""
    x = (torchish.arange(40.0) * 0.37).sin().reshape(2, 20)
    win = torchish.hann_window(8)
    spec = torchish.stft(x, 8, 2, window=win, return_complex=True)
    back = torchish.istft(spec.cuda(), 8, 2, window=win.cuda(), length=20)
    expect_devices([back], "cuda:0")
    assert np.allclose(back.cpu().numpy(), torchish.istft(spec, 8, 2, window=win, length=20).numpy())
    lp = torchish.log_softmax((torchish.arange(24.0) * 0.41).cos().reshape(3, 2, 4), -1)
    targets, cat = torchish.tensor([[1, 2], [3, 3]]), torchish.tensor([1, 2, 3])
    ref = [F.ctc_loss(lp, targets, [3, 3], [2, 1]), F.ctc_loss(lp, cat, [3, 3], [2, 1], reduction="none")]
    lpc = lp.cuda().requires_grad_()
    got = [F.ctc_loss(lpc, targets, torchish.tensor([3, 3]), torchish.tensor([2, 1])),
           F.ctc_loss(lpc, cat.cuda(), [3, 3], [2, 1], reduction="none")]
    got[0].backward()
    expect_devices(got + [lpc.grad], "cuda:0")
    for r, g in zip(ref, got):
        assert np.allclose(r.numpy(), g.detach().cpu().numpy())


@check
def streams_and_events_on_accelerator():
    """``torch.cuda.Event(enable_timing=True)`` around queued work: ``record()`` waits for the device, so
    ``elapsed_time`` spans the work; ``query()``/``synchronize()``; the current stream under ``torch.cuda.stream``;
    ``torch.Stream``/``torch.Event`` default to the accelerator, and ``torch.accelerator.current_stream``."""
    import time
    x = torchish.ones(256, 256, device="cuda")
    start, end = torchish.cuda.Event(enable_timing=True), torchish.cuda.Event(enable_timing=True)
    start.record()
    t0 = time.perf_counter()
    for _ in range(5):
        x = (x @ x) * (1 / 256)
    end.record()
    wall = (time.perf_counter() - t0) * 1e3
    torchish.cuda.synchronize()
    ms = start.elapsed_time(end)
    assert 0 < ms <= wall + 1, (ms, wall)
    assert end.query() and x.is_cuda
    untimed = torchish.cuda.Event()
    untimed.record()
    untimed.synchronize()
    assert untimed.query() and untimed.event_id > 0
    for bad in (lambda: untimed.elapsed_time(end), lambda: torchish.cuda.Event(enable_timing=True).elapsed_time(end)):
        try:
            bad()
            raise AssertionError("elapsed_time did not raise")
        except RuntimeError:
            pass
    default = torchish.cuda.current_stream()
    assert default == torchish.cuda.default_stream() and default.stream_id == 0
    side = torchish.cuda.Stream()
    with torchish.cuda.stream(side):
        assert torchish.cuda.current_stream() == side and torchish.accelerator.current_stream() == side
        y = x * 2
        side.record_event().synchronize()
        side.wait_stream(default)
    assert torchish.cuda.current_stream() == default and side.query()
    assert torchish.Stream().device.type == "cuda" and torchish.Event().device.type == "cuda"
    assert float(y.sum()) == float((x * 2).sum())
    nvtx = torchish.cuda.nvtx
    assert nvtx.range_push("outer") == 0 and nvtx.range_push("inner") == 1
    assert nvtx.range_pop() == 1 and nvtx.range_pop() == 0 and nvtx.range_pop() == -1
    with nvtx.range("step {}", 3):
        nvtx.mark("inside")
    nvtx.range_end(nvtx.range_start("across"))
    assert torchish.cuda.can_device_access_peer(0, 0)


if __name__ == "__main__":
    print(json.dumps({"checks": RESULTS, "losses": LOSSES}))
