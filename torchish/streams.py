"""Streams and events: ``torch.Stream``/``torch.Event`` and ``torch.cuda.Stream``/``Event``/``current_stream``/
``stream``, ``torch.cpu.Stream``...

JAX runs each device's work in the order it was queued, as if on one stream. A torchish stream is a name for that
queue: work "on" another stream runs in the same order, which is one of the orders PyTorch allows (code that is
correct with several CUDA streams stays correct), so ``wait_stream``/``wait_event`` have nothing to wait for. An event
records the work queued on its device so far: ``query()`` says whether it has finished and ``synchronize()`` waits for
it. With ``enable_timing=True``, ``record()`` waits for that work and stamps the host's clock, so
``start.elapsed_time(end)`` is the milliseconds between the two points where the device had caught up, the pattern
benchmark scripts use::

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(); step(); end.record(); torch.cuda.synchronize(); ms = start.elapsed_time(end)

Without an accelerator the CUDA classes raise as in a CPU-only PyTorch build; CPU streams exist and CPU events
cannot be recorded (PyTorch: "cpu backend doesn't support events.").
"""
from __future__ import annotations

import itertools
import threading
import time

import jax

from . import _device

_TYPES = {"cpu": 0, "cuda": 1}  # PyTorch's DeviceType numbers, shown as Stream.device_type
_NO_EVENTS = "cpu backend doesn't support events."
_EVENT_IDS = itertools.count(1)


def pending(jdev) -> list:
    """The arrays on ``jdev`` whose computation is still queued or running."""
    return [a for a in jax.live_arrays() if not a.is_ready() and jdev in a.devices()]  # (is_ready is the cheap test)


def wait_for(jdev) -> None:
    """Wait until all work queued on ``jdev`` has finished."""
    for a in pending(jdev):
        a.block_until_ready()


def _resolve(device):
    """``(torchish device, JAX device)`` of a stream or event: ``device`` (a device, string or index), else the
    current accelerator, else the CPU."""
    if device is None:
        device = "cuda" if _device.accelerators() else "cpu"
    elif isinstance(device, int):
        device = _device.device("cuda", device)
    dev = _device.device(device)
    if dev.type == "cuda" and not _device.accelerators():
        raise RuntimeError("PyTorch is not linked with support for cuda devices")
    if dev.type not in _TYPES:
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    if dev.type == "cpu":
        return _device.device("cpu"), _device.cpu()
    index = dev.index if dev.index is not None else _device.current_index()
    return _device.device("cuda", index), _device.accelerators()[index]


class Stream:
    """A device's queue of work (``torch.Stream``). ``priority`` is accepted and ignored (one queue per device)."""

    def __init__(self, device=None, *, priority=0, _stream_id=None):
        self.device, self._jdev = _resolve(device)
        self.device_type = _TYPES[self.device.type]
        self.device_index = -1 if self.device.type == "cpu" else self.device.index
        self.stream_id = 0 if self.device.type == "cpu" or _stream_id == 0 else next(_EVENT_IDS)
        self.priority = priority

    def query(self) -> bool:
        """Whether all work queued on the device has finished."""
        return not pending(self._jdev)

    def synchronize(self) -> None:
        wait_for(self._jdev)

    def wait_event(self, event) -> None:
        """Nothing to wait for: the device runs its work in the order it was queued."""

    def wait_stream(self, stream) -> None:
        if self.device.type == "cpu":
            raise RuntimeError(_NO_EVENTS)

    def record_event(self, event=None):
        if self.device.type == "cpu":
            raise RuntimeError(_NO_EVENTS)
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device, self.stream_id) == (other.device, other.stream_id)

    def __hash__(self):
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device.type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """A point in a device's queue of work (``torch.Event``); see the module's docstring for what timing measures."""

    _error = ValueError  # (the device-neutral class raises ValueError for misuse; torch.cuda.Event RuntimeError)

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device, self._jdev = _resolve(device)
        self.enable_timing = bool(enable_timing)
        self.event_id = 0
        self._waiting = None  # the arrays the recorded work produces (None: not recorded)
        self._time = None

    def record(self, stream=None) -> None:
        if self.device.type == "cpu":
            raise RuntimeError(_NO_EVENTS)
        if self.event_id == 0:
            self.event_id = next(_EVENT_IDS)
        self._waiting = pending(self._jdev)
        if self.enable_timing:
            self.synchronize()
            self._time = time.perf_counter()

    def query(self) -> bool:
        """Whether the recorded work has finished (True if nothing was recorded)."""
        if self._waiting:
            self._waiting = [a for a in self._waiting if not a.is_ready()]
        return not self._waiting

    def synchronize(self) -> None:
        for a in self._waiting or ():
            a.block_until_ready()
        if self._waiting is not None:
            self._waiting = []

    def wait(self, stream=None) -> None:
        """Nothing to wait for: the device runs its work in the order it was queued."""

    def elapsed_time(self, end_event) -> float:
        """Milliseconds from this event to ``end_event``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise self._error("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise self._error("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1e3

    def __repr__(self):
        return (f"torch.Event device_type={self.device.type}, device_index={self.device.index or -1}, "
                f"event_flag={int(self.enable_timing)}, event_id={self.event_id}")


# ----------------------------------------------------------------------------------------------------------------
# torch.cuda's classes: a stream or event of the current accelerator


class CudaStream(Stream):
    """``torch.cuda.Stream``."""

    def __init__(self, device=None, priority=0, **kwargs):
        if not _device.accelerators():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        super().__init__(_cuda_device(device), priority=priority, **kwargs)

    def __repr__(self):
        return f"<torch.cuda.Stream device={self.device} cuda_stream={hex(self.stream_id)}>"


class CudaEvent(Event):
    """``torch.cuda.Event``."""

    _error = RuntimeError

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if not _device.accelerators():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        super().__init__("cuda", enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)

    def record(self, stream=None) -> None:
        if stream is not None and stream.device != self.device:  # (the event takes its stream's device)
            self.device, self._jdev = stream.device, stream._jdev
        super().record(stream)

    def __repr__(self):
        return f"<torch.cuda.Event {self.event_id if self.event_id else 'uninitialized'}>"


def _cuda_device(device):
    if device is None or isinstance(device, int):
        return _device.device("cuda", _device.current_index() if device is None else device)
    return device


_CURRENT = threading.local()  # the stream torch.cuda.stream(...) made current, per thread and device index


def default_stream(device=None) -> CudaStream:
    """The accelerator's default stream (``stream_id`` 0)."""
    from . import cuda
    cuda._require()
    return CudaStream(device, _stream_id=0)


def current_stream(device=None) -> CudaStream:
    """The stream made current by ``torch.cuda.stream``/``set_stream`` (the default stream otherwise)."""
    from . import cuda
    cuda._require()
    dev = _device.device(_cuda_device(device))
    return getattr(_CURRENT, "streams", {}).get(dev.index) or default_stream(device)


def set_stream(stream) -> None:
    if stream is None or not isinstance(stream, CudaStream):
        return
    if not hasattr(_CURRENT, "streams"):
        _CURRENT.streams = {}
    _CURRENT.streams[stream.device.index] = stream


class StreamContext:
    """``with torch.cuda.stream(s):`` makes ``s`` the current stream inside the block (None, or a non-CUDA stream,
    changes nothing)."""

    def __init__(self, stream):
        self.stream = stream if isinstance(stream, CudaStream) else None
        self.previous = None

    def __enter__(self):
        if self.stream is not None:
            self.previous = current_stream(self.stream.device)
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self.previous)
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)


# ----------------------------------------------------------------------------------------------------------------
# torch.cpu's: names for device-agnostic code (the CPU has one queue; PyTorch's classes do nothing either)


class CpuStream:
    """``torch.cpu.Stream``."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream) -> None:
        pass

    def record_event(self) -> None:
        pass

    def wait_event(self, event) -> None:
        pass


class CpuEvent:
    """``torch.cpu.Event``."""

    def query(self) -> bool:
        return True

    def record(self, stream=None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass


_CPU = {"default": CpuStream()}
_CPU["current"] = _CPU["default"]


def cpu_current_stream(device=None) -> CpuStream:
    return _CPU["current"]


class CpuStreamContext:
    """``torch.cpu.stream(s)``: ``s`` is ``torch.cpu.current_stream()`` inside the block (None changes nothing)."""

    def __init__(self, stream):
        self.stream = stream
        self.previous = _CPU["default"]

    def __enter__(self):
        if self.stream is not None:
            self.previous, _CPU["current"] = _CPU["current"], self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            _CPU["current"] = self.previous
        return False


def cpu_stream(stream) -> CpuStreamContext:
    return CpuStreamContext(stream)
