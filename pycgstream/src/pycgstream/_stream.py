"""Stream, Group and their events: the Pythonic layer over ``_lib``."""

from __future__ import annotations

import asyncio
import ctypes
import errno
import math
import os
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Iterable, Optional, Union

from . import _lib

StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

_MODES = {"auto": _lib.MODE_AUTO, "kernel": _lib.MODE_KERNEL,
          "fallback": _lib.MODE_FALLBACK}
_U32_MAX = 0xFFFFFFFF
_INT_MAX = 0x7FFFFFFF


class CgroupRemovedError(OSError):
    """The cgroup was removed (errno ENODEV).

    Raised by :meth:`Stream.read` and :meth:`Stream.wait`; iterating over a
    :class:`Stream` simply ends instead.
    """


@dataclass(frozen=True, slots=True)
class Sample:
    """A cgroup's cpu.stat as of one flush (one cycle).

    Every field the kernel did not report is None (``nr_periods`` and the
    other bandwidth fields exist only where the cpu controller is enabled),
    never a made-up 0.  Times are microseconds; ``flush_time_usec`` is
    CLOCK_MONOTONIC.  In fallback mode ``seq`` is the library's own cycle
    count, ``flush_time_usec`` the time of its read of cpu.stat and
    ``flush_missed`` the timer periods it skipped.
    """

    cgroup: str
    seq: Optional[int] = None
    flush_time_usec: Optional[int] = None
    usage_usec: Optional[int] = None
    user_usec: Optional[int] = None
    system_usec: Optional[int] = None
    nice_usec: Optional[int] = None
    nr_periods: Optional[int] = None
    nr_throttled: Optional[int] = None
    throttled_usec: Optional[int] = None
    nr_bursts: Optional[int] = None
    burst_usec: Optional[int] = None
    flush_missed: Optional[int] = None

    @classmethod
    def _from_struct(cls, cgroup: str, s: _lib.SampleStruct) -> "Sample":
        present = s.present
        values = {name: (getattr(s, name) if present & bit else None)
                  for name, bit in _lib.SAMPLE_FIELDS}
        return cls(cgroup, **values)


@dataclass(frozen=True, slots=True)
class Removed:
    """Group event: the cgroup was removed and is no longer watched."""

    cgroup: str


@dataclass(frozen=True, slots=True)
class Failed:
    """Group event: reading the cgroup failed with ``error`` (an OSError
    subclass carrying the errno) and it is no longer watched."""

    cgroup: str
    error: OSError


Event = Union[Sample, Removed, Failed]


def cpu_percent(previous: Sample, current: Sample, field: str = "usage_usec") -> Optional[float]:
    """CPU use between two samples of one cgroup in percent of one CPU:
    100 * delta ``field`` / delta flush_time_usec (``field`` may also be
    "user_usec" or "system_usec").  None when a sample lacks a value or no
    time passed; 0.0 when the counter went backwards."""
    before, after = getattr(previous, field), getattr(current, field)
    if None in (before, after, previous.flush_time_usec, current.flush_time_usec):
        return None
    dt = current.flush_time_usec - previous.flush_time_usec  # type: ignore[operator]
    if dt <= 0:
        return None
    return 100.0 * (after - before) / dt if after >= before else 0.0


def _mode_number(mode: str) -> int:
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"mode must be one of {', '.join(_MODES)}, not {mode!r}") from None


def _mode_name(number: int) -> str:
    name = _lib.load().cgstream_mode_name(number)
    return name.decode() if name else str(number)


def _u32(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not 0 <= value <= _U32_MAX:
        raise ValueError(f"{what} out of range: {value}")
    return value


def _make_opts(mode: str, fallback_interval_ms: int,
               cgroup_root: Optional[StrPath]) -> _lib.OptsStruct:
    root = os.fsencode(cgroup_root) if cgroup_root is not None else None
    return _lib.make_opts(_mode_number(mode),
                          _u32(fallback_interval_ms, "fallback_interval_ms"),
                          root)


def _timeout_ms(deadline: Optional[float]) -> int:
    if deadline is None:
        return -1
    left = deadline - time.monotonic()
    return min(_INT_MAX, max(0, math.ceil(left * 1000)))


class _Pollable:
    """What Stream and Group share: the fd, closing, and waiting in a
    blocking loop or in asyncio.

    Not thread-safe beyond this: the C object is only touched under a lock,
    so a close() from another thread waits for a running call instead of
    freeing memory under it.
    """

    _handle: Optional[ctypes._Pointer]  # type: ignore[type-arg]

    def __init__(self) -> None:
        self._handle = None
        self._call_lock = threading.Lock()
        self._async_wait: Optional[tuple[asyncio.AbstractEventLoop, int, asyncio.Future[None]]] = None

    # subclass hooks
    def _free(self, handle: ctypes._Pointer) -> None:  # type: ignore[type-arg]
        raise NotImplementedError

    def _fd(self, handle: ctypes._Pointer) -> int:  # type: ignore[type-arg]
        raise NotImplementedError

    def _c_wait(self, handle: ctypes._Pointer, timeout_ms: int) -> int:  # type: ignore[type-arg]
        raise NotImplementedError

    def _check_open(self) -> ctypes._Pointer:  # type: ignore[type-arg]
        if self._handle is None:
            raise ValueError(f"I/O operation on closed {type(self).__name__}")
        return self._handle

    @property
    def closed(self) -> bool:
        return self._handle is None

    def fileno(self) -> int:
        """The fd to poll: readable when a new sample (batch) can be read."""
        with self._call_lock:
            return self._fd(self._check_open())

    def close(self) -> None:
        """Free the C object and its fds; an async iteration waiting on this
        object ends (StopAsyncIteration).  Closing twice is fine."""
        if self._async_wait is not None:
            loop, fd, fut = self._async_wait
            self._async_wait = None
            loop.remove_reader(fd)
            if not fut.done():
                fut.set_result(None)
        with self._call_lock:
            handle, self._handle = self._handle, None
            if handle is not None:
                self._free(handle)

    def __enter__(self):  # type: ignore[no-untyped-def]
        self._check_open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            warnings.warn(f"unclosed {self!r}", ResourceWarning, source=self)
            self.close()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until something can be read (True) or ``timeout`` seconds
        pass (False); None waits without limit."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                with self._call_lock:
                    return self._c_wait(self._check_open(), _timeout_ms(deadline)) > 0
            except InterruptedError:
                # PEP 475: let Python run its signal handlers (returning
                # here does that), then wait for the rest of the time
                continue

    async def _readable(self) -> bool:
        """Wait in the running loop until the fd is readable.  The reader is
        registered only during this await and removed however it ends
        (readable, cancelled, closed); False when closed meanwhile."""
        if self._async_wait is not None:
            raise RuntimeError(f"another task is already iterating {self!r}")
        loop = asyncio.get_running_loop()
        fd = self.fileno()
        fut: asyncio.Future[None] = loop.create_future()

        def ready() -> None:
            if not fut.done():
                fut.set_result(None)

        loop.add_reader(fd, ready)
        self._async_wait = (loop, fd, fut)
        try:
            await fut
        finally:
            if self._async_wait is not None and self._async_wait[2] is fut:
                self._async_wait = None
                loop.remove_reader(fd)
        return self._handle is not None


class Stream(_Pollable):
    """The cpu.stat of one cgroup, once per flush.

    ``cgroup`` is an absolute path or a path relative to the cgroup2 mount
    (``cgroup_root`` overrides where that is).  ``mode`` is "auto" (kernel
    streaming when the kernel has cpu.stat.stream, else fallback), "kernel"
    (OSError with errno EOPNOTSUPP without it) or "fallback" (the library
    reads cpu.stat on a timer every ``fallback_interval_ms``; 0 means the
    kernel's interval if set, else 1000).

    Iterating (``for sample in stream`` or ``async for``) yields one
    :class:`Sample` per cycle and ends when the cgroup is removed
    (``removed`` is True then).  :meth:`read` never blocks.
    """

    def __init__(self, cgroup: StrPath, mode: str = "auto",
                 fallback_interval_ms: int = 0,
                 cgroup_root: Optional[StrPath] = None) -> None:
        super().__init__()
        self._removed = False
        lib = _lib.load()
        # the library may keep opts->cgroup_root: keep it alive with us
        self._opts = _make_opts(mode, fallback_interval_ms, cgroup_root)
        handle = _lib.StreamPtr()
        lib.cgstream_open(os.fsencode(cgroup), ctypes.byref(self._opts),
                          ctypes.byref(handle))
        self._handle = handle
        self._lib = lib
        self._path = os.fsdecode(lib.cgstream_path(handle))
        self._mode = _mode_name(lib.cgstream_mode(handle))

    def __repr__(self) -> str:
        state = "closed" if self.closed else self._mode
        return f"<pycgstream.Stream {self._path!r} {state}>"

    @property
    def path(self) -> str:
        """Canonical absolute path of the cgroup."""
        return self._path

    @property
    def mode(self) -> str:
        """"kernel" or "fallback": how samples are produced."""
        return self._mode

    @property
    def removed(self) -> bool:
        """True once the library reported that the cgroup is gone."""
        return self._removed

    def _free(self, handle: ctypes._Pointer) -> None:  # type: ignore[type-arg]
        self._lib.cgstream_close(handle)

    def _fd(self, handle: ctypes._Pointer) -> int:  # type: ignore[type-arg]
        return int(self._lib.cgstream_fd(handle))

    def _c_wait(self, handle: ctypes._Pointer, timeout_ms: int) -> int:  # type: ignore[type-arg]
        return int(self._lib.cgstream_wait(handle, timeout_ms))

    def _removed_error(self, e: OSError) -> CgroupRemovedError:
        self._removed = True
        return CgroupRemovedError(errno.ENODEV, os.strerror(errno.ENODEV), self._path)

    def read(self) -> Optional[Sample]:
        """The sample of a cycle not returned before, or None when there is
        none yet.  CgroupRemovedError once the cgroup is gone."""
        s = _lib.SampleStruct()
        try:
            with self._call_lock:
                self._lib.cgstream_read(self._check_open(), ctypes.byref(s),
                                        ctypes.sizeof(s))
        except BlockingIOError:
            return None
        except OSError as e:
            if e.errno == errno.ENODEV:
                raise self._removed_error(e) from None
            if e.filename is None:
                e.filename = self._path
            raise
        return Sample._from_struct(self._path, s)

    def wait(self, timeout: Optional[float] = None) -> bool:
        try:
            return super().wait(timeout)
        except OSError as e:
            if e.errno == errno.ENODEV:
                raise self._removed_error(e) from None
            if e.filename is None:
                e.filename = self._path
            raise

    def __iter__(self) -> "Stream":
        return self

    def __next__(self) -> Sample:
        while True:
            try:
                sample = self.read()
                if sample is not None:
                    return sample
                self.wait()
            except CgroupRemovedError:
                raise StopIteration from None

    def __aiter__(self) -> "Stream":
        return self

    async def __anext__(self) -> Sample:
        while True:
            try:
                sample = self.read()
            except CgroupRemovedError:
                raise StopAsyncIteration from None
            if sample is not None:
                return sample
            if not await self._readable():
                raise StopAsyncIteration


class Group(_Pollable):
    """Many cgroups watched at once (io_uring in the library), one batch per
    cycle through a single fd.

    Options are those of :class:`Stream`.  Iterating yields, per cycle, a
    list of events: a :class:`Sample` for each cgroup with a new sample,
    :class:`Removed` for a removed cgroup, :class:`Failed` for one that
    could not be read (both are dropped from the group).  Iteration ends
    once the group watches no cgroup.  A batch keeps a cycle's samples
    together, which is what per-cycle consumers (sums, one timestamp per
    export) want; flatten it when you want single events.
    """

    def __init__(self, cgroups: Iterable[StrPath] = (), mode: str = "auto",
                 fallback_interval_ms: int = 0,
                 cgroup_root: Optional[StrPath] = None) -> None:
        super().__init__()
        lib = _lib.load()
        self._opts = _make_opts(mode, fallback_interval_ms, cgroup_root)
        handle = _lib.GroupPtr()
        lib.cgstream_group_new(ctypes.byref(self._opts), ctypes.byref(handle))
        self._handle = handle
        self._lib = lib
        self._mode = _mode_name(lib.cgstream_group_mode(handle))
        try:
            for cgroup in cgroups:
                self.add(cgroup)
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        if self.closed:
            return "<pycgstream.Group closed>"
        return f"<pycgstream.Group {len(self)} cgroups {self._mode}>"

    @property
    def mode(self) -> str:
        """"kernel" or "fallback"."""
        return self._mode

    def _free(self, handle: ctypes._Pointer) -> None:  # type: ignore[type-arg]
        self._lib.cgstream_group_free(handle)

    def _fd(self, handle: ctypes._Pointer) -> int:  # type: ignore[type-arg]
        return int(self._lib.cgstream_group_fd(handle))

    def _c_wait(self, handle: ctypes._Pointer, timeout_ms: int) -> int:  # type: ignore[type-arg]
        return int(self._lib.cgstream_group_wait(handle, timeout_ms))

    def add(self, cgroup: StrPath) -> None:
        """Watch one more cgroup: FileExistsError when already watched,
        otherwise the errors of :class:`Stream`."""
        with self._call_lock:
            self._lib.cgstream_group_add(self._check_open(), os.fsencode(cgroup), None)

    def remove(self, cgroup: StrPath) -> None:
        """Stop watching a cgroup: FileNotFoundError when not watched."""
        with self._call_lock:
            self._lib.cgstream_group_remove(self._check_open(), os.fsencode(cgroup))

    def __len__(self) -> int:
        with self._call_lock:
            return int(self._lib.cgstream_group_size(self._check_open()))

    def read(self) -> list[Event]:
        """Non-blocking: the events since the last call (one cycle's batch),
        an empty list when there is nothing new."""
        events: list[Event] = []
        with self._call_lock:
            handle = self._check_open()
            while True:
                room = self._lib.cgstream_group_size(handle) + 8
                array = (_lib.EventStruct * room)()
                n = self._lib.cgstream_group_process(
                    handle, array, room, ctypes.sizeof(_lib.EventStruct))
                for ev in array[:n]:
                    # ev.path is only valid until the next process call
                    path = os.fsdecode(ev.path) if ev.path else ""
                    if ev.type == _lib.EVENT_SAMPLE:
                        events.append(Sample._from_struct(path, ev.sample))
                    elif ev.type == _lib.EVENT_REMOVED:
                        events.append(Removed(path))
                    elif ev.type == _lib.EVENT_ERROR:
                        err = -ev.error
                        events.append(Failed(path, OSError(err, os.strerror(err), path)))
                if n < room:
                    return events

    def __iter__(self) -> "Group":
        return self

    def __next__(self) -> list[Event]:
        while True:
            if len(self) == 0:
                raise StopIteration
            batch = self.read()
            if batch:
                return batch
            self.wait()

    def __aiter__(self) -> "Group":
        return self

    async def __anext__(self) -> list[Event]:
        while True:
            if len(self) == 0:
                raise StopAsyncIteration
            batch = self.read()
            if batch:
                return batch
            if not await self._readable():
                raise StopAsyncIteration


def get_interval(cgroup_root: Optional[StrPath] = None) -> int:
    """The kernel's flush interval in ms (0: streaming off).  OSError with
    errno EOPNOTSUPP on kernels without cpu.stat.stream."""
    lib = _lib.load()
    opts = _make_opts("auto", 0, cgroup_root)
    ms = ctypes.c_uint32()
    lib.cgstream_get_interval(ctypes.byref(opts), ctypes.byref(ms))
    return ms.value


def set_interval(ms: int, cgroup_root: Optional[StrPath] = None) -> None:
    """Set the kernel's flush interval (0 turns streaming off).  OSError:
    EINVAL out of the kernel's range, EPERM/EACCES unprivileged,
    EOPNOTSUPP without the feature; ValueError/TypeError for values that
    are not a 32-bit unsigned int at all."""
    lib = _lib.load()
    opts = _make_opts("auto", 0, cgroup_root)
    lib.cgstream_set_interval(ctypes.byref(opts), _u32(ms, "interval"))


def resolve_path(cgroup: StrPath, cgroup_root: Optional[StrPath] = None) -> str:
    """The canonical absolute path the library would open for ``cgroup``
    (which need not exist).  OSError: EINVAL for a ".." component, ENODEV
    without a cgroup2 mount."""
    lib = _lib.load()
    opts = _make_opts("auto", 0, cgroup_root)
    size = os.pathconf("/", "PC_PATH_MAX") if hasattr(os, "pathconf") else 4096
    while True:
        buf = ctypes.create_string_buffer(size)
        try:
            lib.cgstream_resolve_path(os.fsencode(cgroup), ctypes.byref(opts), buf, size)
        except OSError as e:
            if e.errno == errno.ERANGE:
                size *= 2
                continue
            raise
        return os.fsdecode(buf.value)


def parse(text: Union[str, bytes], cgroup: str = "") -> Sample:
    """Parse cpu.stat or cpu.stat.stream text with the library's parser
    (unknown keys skipped, absent fields None)."""
    lib = _lib.load()
    data = text.encode() if isinstance(text, str) else bytes(text)
    s = _lib.SampleStruct()
    lib.cgstream_parse(data, len(data), ctypes.byref(s), ctypes.sizeof(s))
    return Sample._from_struct(cgroup, s)
