"""Stream, Group, Tree and their events: the Pythonic layer over ``_lib``."""

from __future__ import annotations

import asyncio
import ctypes
import errno
import os
import select
import struct
import threading
import time
import warnings
from collections.abc import Iterator, Mapping
from operator import itemgetter as _itemgetter
from dataclasses import dataclass, field, fields, replace
from typing import Any, Generic, Iterable, NamedTuple, Optional, Sequence, TypeVar, Union

from . import _lib

StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

_MODES = {"auto": _lib.MODE_AUTO, "subtree": _lib.MODE_SUBTREE,
          "kernel": _lib.MODE_KERNEL, "fallback": _lib.MODE_FALLBACK}
_STREAM_MODES = ("auto", "kernel", "fallback")
_U32_MAX = 0xFFFFFFFF


class CgroupRemovedError(OSError):
    """The cgroup was removed (errno ENODEV).

    Raised by :meth:`Stream.read` and :meth:`Stream.wait` once a stream's
    cgroup is gone, and by :meth:`Tree.read` once a tree's root is gone;
    iterating over them simply ends instead.
    """


class Values(Mapping[str, int]):
    """A controller's values of a cgroup as of one publication of that
    controller: a read-only mapping of each value's name to its value, in
    the kernel's order.  The names are the kernel's (its SCHEMA record in
    subtree mode, the keys of the text elsewhere), so a statistic a kernel
    adds shows up here as is (cpu.stat's ``core_sched.force_idle_usec``).
    ``seq`` and ``flush_time_usec`` (CLOCK_MONOTONIC) say which
    publication; in fallback mode the library's cycle count and the time
    of its read."""

    __slots__ = ("_names", "_index", "_raw", "seq", "flush_time_usec")

    def __init__(self, names: Sequence[str], values: Sequence[int], seq: int = 0,
                 flush_time_usec: int = 0) -> None:
        if len(names) != len(values):
            raise ValueError(f"{len(names)} names for {len(values)} values")
        self._names, self._index = _name_index(tuple(names))
        try:
            self._raw = _u64s(len(values)).pack(*values)
        except struct.error as e:
            raise ValueError(f"memory values are unsigned 64-bit integers: {e}") from None
        self.seq = seq
        self.flush_time_usec = flush_time_usec

    # The values stay as the library's u64 array (bytes) until asked for:
    # a tree makes a Memory per cgroup per cycle, and most readers want a
    # few of its 60-70 values.
    def __getitem__(self, name: str) -> int:
        return _U64_AT(self._raw, 8 * self._index[name])[0]  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __hash__(self) -> int:
        return hash((self._names, self._raw))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seq={self.seq}, {dict(self)!r})"

    @property
    def names(self) -> tuple[str, ...]:
        """The names, in the kernel's order (shared by every Memory with the
        same names)."""
        return self._names

    def pick(self, names: tuple[str, ...]) -> tuple[Optional[int], ...]:
        """The values of @names, in that order, None for a name it lacks:
        for readers of a few values of many cgroups (an exporter), one call
        per cgroup that makes only those values."""
        if not names:
            return ()
        key = (self._names, names)
        picker = _PICKERS.get(key)
        if picker is None:
            if len(_PICKERS) >= 256:
                _PICKERS.clear()
            picker = _PICKERS[key] = _picker(self._index, names)
        read, order = picker
        got = order(read(self._raw) + (None,))
        return got if len(names) > 1 else (got,)


class Memory(Values):
    """A cgroup's memory values (a :class:`Values`): every key memory.stat
    prints (spelled and ordered as it prints them, in its units: bytes for
    sizes, counts for events), then ``current`` (memory.current),
    ``swap.current`` where the kernel accounts swap, and ``events.`` +
    each key of memory.events (hierarchical)."""

    __slots__ = ()


class Pressure(Values):
    """A cgroup's pressure stall information (a :class:`Values`), named as
    the kernel's SCHEMA names it: ``<resource>.<kind>.<key>`` for the
    resources cpu, memory, io and (where the kernel has irq.pressure) irq,
    the kinds ``some`` (some task waited) and ``full`` (all non-idle tasks
    did; irq has only full), the keys ``avg10``, ``avg60``, ``avg300`` in
    hundredths of a percent (the kernel's ``avg10=1.23`` is 123) and
    ``total`` in microseconds: ``pressure["memory.full.total"]``.  Find the
    values by name; a kernel may add some."""

    __slots__ = ()

    def stalled_usec(self, stall: str) -> Optional[int]:
        """The total of @stall ("cpu.some", "io.full", ...) in
        microseconds, None where this kernel or cgroup has none."""
        return self.get(stall + ".total")


_U64_AT = struct.Struct("@Q").unpack_from
_U64S: dict[int, struct.Struct] = {}


def _u64s(n: int) -> struct.Struct:
    """The struct of @n native u64 values (cached)."""
    layout = _U64S.get(n)
    if layout is None:
        layout = _U64S[n] = struct.Struct(f"@{n}Q")
    return layout


def _picker(index: dict[str, int], names: tuple[str, ...]) -> tuple[Any, Any]:
    """What Memory.pick() calls for @names of values laid out as @index
    says: an unpack of just those u64s (in array order, skipping the rest)
    and the getter that puts them in the order of @names (a name not in
    @index: the None after them)."""
    where = sorted({index[n] for n in names if n in index})
    layout, at = "@", 0
    for pos in where:
        layout += "x" * (8 * (pos - at)) + "Q"
        at = pos + 1
    order = _itemgetter(*(where.index(index[n]) if n in index else len(where) for n in names))
    return struct.Struct(layout).unpack_from, order


# names -> their positions, shared by every Memory with the same names (in
# subtree mode every cgroup of every cycle): one dict, not one per sample
_NAME_INDEXES: dict[tuple[str, ...], tuple[tuple[str, ...], dict[str, int]]] = {}
# (a Memory's names, names picked) -> _picker()'s
_PICKERS: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[Any, Any]] = {}


def _name_index(names: tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, int]]:
    """The one copy of @names and their positions."""
    known = _NAME_INDEXES.get(names)
    if known is None:
        if len(_NAME_INDEXES) >= 64:    # kernels do not change their keys often
            _NAME_INDEXES.clear()
        known = _NAME_INDEXES[names] = (names, {name: i for i, name in enumerate(names)})
    return known


@dataclass(frozen=True, slots=True)
class IoDevice:
    """One device of a cgroup's io.stat: bytes and operations read,
    written and discarded."""

    major: int
    minor: int
    rbytes: int = 0
    wbytes: int = 0
    rios: int = 0
    wios: int = 0
    dbytes: int = 0
    dios: int = 0

    @property
    def device(self) -> str:
        """"MAJ:MIN", as io.stat names it."""
        return f"{self.major}:{self.minor}"


class Io(Mapping[str, IoDevice]):
    """A cgroup's io.stat as of one flush of the io controller: a read-only
    mapping of "MAJ:MIN" to :class:`IoDevice`, the devices io.stat lists
    for the cgroup, in its order.  ``seq`` and ``flush_time_usec`` as for
    :class:`Memory`."""

    __slots__ = ("_devices", "seq", "flush_time_usec")

    def __init__(self, devices: Iterable[IoDevice] = (), seq: int = 0,
                 flush_time_usec: int = 0) -> None:
        self._devices = {d.device: d for d in devices}
        self.seq = seq
        self.flush_time_usec = flush_time_usec

    def __getitem__(self, device: str) -> IoDevice:
        return self._devices[device]

    def __iter__(self) -> Iterator[str]:
        return iter(self._devices)

    def __len__(self) -> int:
        return len(self._devices)

    def __hash__(self) -> int:
        return hash(tuple(self._devices.values()))

    def __repr__(self) -> str:
        return f"Io(seq={self.seq}, {list(self._devices.values())!r})"


@dataclass(frozen=True, slots=True)
class Sample:
    """A cgroup's statistics as of one cycle: cpu.stat's fields, and with
    the memory, io and pressure controllers asked for, ``memory``, ``io``
    and ``pressure``.

    Every field the kernel did not report is None (``nr_periods`` and the
    other bandwidth fields exist only where the cpu controller is enabled),
    never a made-up 0.  Times are microseconds; ``flush_time_usec`` is
    CLOCK_MONOTONIC.  In fallback mode ``seq`` is the library's own cycle
    count, ``flush_time_usec`` the time of its read of cpu.stat and
    ``flush_missed`` the timer periods it skipped.

    ``cgroup_id`` is the cgroup's id (the inode number of its directory):
    a cgroup removed and made again under the same path has a new one.
    Every sample of a Stream, Group or Tree has it (:func:`parse` has no
    cgroup: None).  ``parent_id`` is, in a :class:`Tree`, the parent's id
    (0 for the tree's root), None elsewhere.  Both are keyword-only.

    Without the cpu controller asked for, the cpu fields are None.
    ``memory`` (a :class:`Memory`), ``io`` (an :class:`Io`) and
    ``pressure`` (a :class:`Pressure`) are None unless their controller
    was asked for and the cgroup has it (a cgroup without ``memory.stat``
    because the controller is not enabled for it carries no memory values;
    one whose cgroup.pressure is 0 no pressure, not zeros); keyword-only
    too.  ``cpu`` (a
    :class:`Values`) has every cpu value by the kernel's names, those the
    fields above lack included.  ``changed`` names the controllers whose
    values changed since the cgroup's previous sample (all of them in its
    first).
    """

    cgroup: str
    cgroup_id: Optional[int] = field(default=None, kw_only=True)
    parent_id: Optional[int] = field(default=None, kw_only=True)
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
    memory: Optional[Memory] = field(default=None, kw_only=True)
    io: Optional[Io] = field(default=None, kw_only=True)
    cpu: Optional[Values] = field(default=None, kw_only=True)
    changed: frozenset[str] = field(default=frozenset(), kw_only=True)
    pressure: Optional[Pressure] = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Changed(Sample):
    """The sample of a cgroup whose values changed since its previous one
    (a Group's or a Tree's with ``changes=True``, which hand out nothing
    of the cgroups whose values stayed).  A :class:`Sample`: code that
    reads samples reads these."""


@dataclass(frozen=True, slots=True)
class Added:
    """Tree event: the cgroup appeared (or was there when the tree was
    opened); it comes before the cgroup's first sample, a parent before its
    children."""

    cgroup: str
    cgroup_id: int
    parent_id: int


@dataclass(frozen=True, slots=True)
class Removed:
    """The cgroup was removed.  In a Group it is no longer watched; in a
    Tree it may come back under the same path with a new ``cgroup_id``
    (an :class:`Added` in the same batch).

    ``values`` (a :class:`Sample`, None if it was never read) has its last
    values; ``final`` names the controllers whose values there are the
    kernel's as of its removal, after its last task left (subtree mode:
    the kernel's REMOVED records); the others' are the last read before
    it went, and what it used after that read is lost."""

    cgroup: str
    cgroup_id: Optional[int] = field(default=None, kw_only=True)
    parent_id: Optional[int] = field(default=None, kw_only=True)
    values: Optional[Sample] = field(default=None, kw_only=True)
    final: frozenset[str] = field(default=frozenset(), kw_only=True)


@dataclass(frozen=True, slots=True)
class Failed:
    """Reading the cgroup failed with ``error`` (an OSError subclass
    carrying the errno).  A Group drops the cgroup; a Tree keeps it and its
    samples come back once it can be read again."""

    cgroup: str
    error: OSError
    cgroup_id: Optional[int] = field(default=None, kw_only=True)
    parent_id: Optional[int] = field(default=None, kw_only=True)


Event = Union[Sample, Changed, Added, Removed, Failed]


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


def pressure_percent(previous: Sample, current: Sample, stall: str = "cpu.some") -> Optional[float]:
    """The share of the time between two samples of one cgroup in which
    @stall ("cpu.some", "memory.full", ...) held, in percent (below's
    pressure columns): 100 * delta total / delta of pressure's publication
    time.  None when a sample has no pressure or lacks @stall, or no time
    passed; 0.0 when the total went backwards."""
    before, after = previous.pressure, current.pressure
    if before is None or after is None:
        return None
    a, b = before.stalled_usec(stall), after.stalled_usec(stall)
    dt = after.flush_time_usec - before.flush_time_usec
    if a is None or b is None or dt <= 0:
        return None
    return min(100.0, 100.0 * (b - a) / dt) if b >= a else 0.0


def _mode_number(mode: str, allowed: Iterable[str]) -> int:
    if not isinstance(mode, str) or mode not in allowed:
        raise ValueError(f"mode must be one of {', '.join(allowed)}, not {mode!r}")
    return _MODES[mode]


def _mode_name(number: int) -> str:
    name = _lib.load().cgstream_mode_name(number)
    return name.decode() if name else str(number)


def _u32(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not 0 <= value <= _U32_MAX:
        raise ValueError(f"{what} out of range: {value}")
    return value


_CONTROLLER_BITS = dict(_lib.CONTROLLERS)
CONTROLLERS = tuple(name for name, _ in _lib.CONTROLLERS)


def _controller_bits(controllers: Optional[Iterable[str]]) -> int:
    """The library's bits of @controllers; None: its default set (cpu, and
    memory, io and pressure where the cgroup has them)."""
    if controllers is None:
        return _lib.CTRL_DEFAULT
    if isinstance(controllers, (str, bytes)):
        raise TypeError("controllers is a collection of names, e.g. ('cpu', 'memory'), "
                        f"not {controllers!r}")
    bits = 0
    for name in controllers:
        bit = _CONTROLLER_BITS.get(name) if isinstance(name, str) else None
        if bit is None:
            raise ValueError(f"controllers are {', '.join(CONTROLLERS)}, not {name!r}")
        bits |= bit
    if not bits:
        raise ValueError("no controller asked for")
    return bits


def _make_opts(mode: str, fallback_interval_ms: int, cgroup_root: Optional[StrPath],
               allowed: Iterable[str] = _STREAM_MODES,
               controllers: Optional[Iterable[str]] = None,
               changes: bool = False) -> _lib.OptsStruct:
    root = os.fsencode(cgroup_root) if cgroup_root is not None else None
    return _lib.make_opts(_mode_number(mode, allowed),
                          _u32(fallback_interval_ms, "fallback_interval_ms"),
                          root, _controller_bits(controllers),
                          _lib.REPORT_CHANGES if changes else _lib.REPORT_ALL)


_CTRL_SETS: dict[int, frozenset[str]] = {}


def _controller_set(bits: int) -> frozenset[str]:
    """The names of the controllers of a mask (one frozenset per mask)."""
    names = _CTRL_SETS.get(bits)
    if names is None:
        names = _CTRL_SETS[bits] = frozenset(n for n, b in _lib.CONTROLLERS if bits & b)
    return names


# A Tree makes a Sample for every cgroup every cycle: they are filled
# through their slots by a function made once from the field tables (a
# frozen dataclass's __init__ goes through object.__setattr__ for each
# field, and a loop over the fields costs as much again).
def _make_sample_filler() -> Any:
    cpu = {name: (i, bit) for i, (name, bit) in enumerate(_lib.SAMPLE_FIELDS)}
    env: dict[str, Any] = {"_new": object.__new__, "_Sample": Sample,
                           "_none": frozenset()}
    lines = ["def _sample(path, values, present, parent_id=None, memory=None, io=None,",
             "            cpu=None, changed=_none, cls=_Sample, pressure=None):",
             "    s = _new(cls)"]
    for f in fields(Sample):
        env[f"_set_{f.name}"] = Sample.__dict__[f.name].__set__
        if f.name in cpu:
            i, bit = cpu[f.name]
            value = f"values[{i}] if present & {bit} else None"
        else:
            value = {"cgroup": "path"}.get(f.name, f.name)
        lines.append(f"    _set_{f.name}(s, {value})")
    lines.append("    return s")
    exec("\n".join(lines), env)
    return env["_sample"]


_sample_filler = _make_sample_filler()


def _sample(path: str, values: Sequence[int], present: int,
            parent_id: Optional[int] = None, memory: Optional[Memory] = None,
            io: Optional[Io] = None, cpu: Optional[Values] = None,
            changed: frozenset[str] = frozenset(), cls: type = Sample,
            pressure: Optional[Pressure] = None) -> Sample:
    """A Sample (or a Changed: @cls) from the fields of a struct
    cgstream_sample after ``present``, in SAMPLE_FIELDS order (absent ones
    None)."""
    return _sample_filler(path, values, present, parent_id, memory, io, cpu,  # type: ignore[no-any-return]
                          changed, cls, pressure)


class _Decoder:
    """struct cgstream_memory, struct cgstream_io and struct cgstream_values
    (behind an event's pointers, valid until the next process or read
    call) as Memory, Io, Values and Pressure.
    A decoder lives for one batch: it reads each array of names once (in
    subtree mode every cgroup's values share the snapshot's names)."""

    def __init__(self) -> None:
        self._names: dict[tuple[int, int], tuple[tuple[str, ...], dict[str, int]]] = {}

    def values(self, address: int, cls: type = Values) -> Values:
        """struct cgstream_values (or struct cgstream_memory: @cls Memory)"""
        seq, flush_time, nr, _, names_at, values_at = _lib.MEMORY_LAYOUT.unpack(
            ctypes.string_at(address, _lib.MEMORY_LAYOUT.size))
        known = self._names.get((names_at, nr))
        if known is None:
            pointers = (ctypes.c_void_p * nr).from_address(names_at) if nr else ()
            known = self._names[(names_at, nr)] = _name_index(
                tuple(os.fsdecode(ctypes.string_at(p)) for p in pointers))
        values: Values = object.__new__(cls)
        values._names, values._index = known
        values._raw = ctypes.string_at(values_at, 8 * nr) if nr else b""
        values.seq = seq
        values.flush_time_usec = flush_time
        return values

    def memory(self, address: int) -> Memory:
        return self.values(address, Memory)  # type: ignore[return-value]

    def pressure(self, address: int) -> Pressure:
        return self.values(address, Pressure)  # type: ignore[return-value]

    def io(self, address: int) -> Io:
        seq, flush_time, nr, _, devices_at, *_ = _lib.IO_LAYOUT.unpack(
            ctypes.string_at(address, _lib.IO_LAYOUT.size))
        raw = ctypes.string_at(devices_at, nr * _lib.IO_DEVICE_LAYOUT.size) if nr else b""
        return Io((IoDevice(*d) for d in _lib.IO_DEVICE_LAYOUT.iter_unpack(raw)), seq, flush_time)


def _decode_events(raw: Union[bytes, memoryview], tree: bool) -> list[Event]:
    """struct cgstream_event array bytes as Python events (their paths and
    the memory and io they point to are valid until the next process or
    read call)."""
    out: list[Event] = []
    decoder = _Decoder()
    for (etype, error, path_ptr, _userdata, present, *values, parent_id, controllers, _,
         memory_at, io_at, changed, final, cpu_at, _flags, _,
         pressure_at) in _lib.EVENT_LAYOUT.iter_unpack(raw):
        path = os.fsdecode(ctypes.string_at(path_ptr)) if path_ptr else ""
        parent = parent_id if tree else None
        if etype in (_lib.EVENT_SAMPLE, _lib.EVENT_CHANGED) or (
                etype == _lib.EVENT_REMOVED and controllers):
            sample = _sample(path, values, present, parent,
                             decoder.memory(memory_at) if memory_at else None,
                             decoder.io(io_at) if io_at else None,
                             decoder.values(cpu_at) if cpu_at else None,
                             _controller_set(changed),
                             Changed if etype == _lib.EVENT_CHANGED else Sample,
                             decoder.pressure(pressure_at) if pressure_at else None)
            if etype != _lib.EVENT_REMOVED:
                out.append(sample)
                continue
        else:
            sample = None
        cgroup_id = values[-1] if present & _lib.F_CGROUP_ID else None
        if etype == _lib.EVENT_ADDED:
            out.append(Added(path, cgroup_id or 0, parent_id))
        elif etype == _lib.EVENT_REMOVED:
            out.append(Removed(path, cgroup_id=cgroup_id, parent_id=parent, values=sample,
                               final=_controller_set(final)))
        elif etype == _lib.EVENT_ERROR:
            err = -error
            out.append(Failed(path, OSError(err, os.strerror(err), path),
                              cgroup_id=cgroup_id, parent_id=parent))
    return out


def _poll_zero(fd: int) -> bool:
    """Is @fd readable right now?"""
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(0))


_P = TypeVar("_P", bound="_Pollable[Any]")
_Item = TypeVar("_Item")
_AsyncWait = tuple[asyncio.AbstractEventLoop, int, "asyncio.Future[None]"]


class _Pollable(Generic[_Item]):
    """What Stream, Group and Tree share: the fd, closing, waiting in a
    blocking loop or in asyncio, and iterating over what read() returns
    (a Sample, a batch) until nothing more can come.

    Threads: the C object is only called under ``_lock``, and only with
    calls that do not wait (read, process, add, ...), so a close() from
    another thread never frees memory under a running call and never waits
    longer than such a call.  Waiting happens here, in poll(2) on the
    library's fd and an eventfd that close() makes readable (made at the
    first wait, kept until close: one fd per object that waits): a thread
    blocked in wait() or a blocking iteration wakes at once when another
    thread closes the object (wait() raises ValueError, iteration ends).
    """

    _handle: Optional[ctypes._Pointer]  # type: ignore[type-arg]

    def __init__(self) -> None:
        self._handle = None
        self._fd = -1
        self._removed = False              # the (root) cgroup is gone
        self._lock = threading.Lock()
        self._wake: Optional[int] = None   # the eventfd close() writes to
        self._waiters = 0                  # threads in poll() on it
        self._async_wait: Optional[_AsyncWait] = None

    # subclass hooks
    def _free(self, handle: ctypes._Pointer) -> None:  # type: ignore[type-arg]
        raise NotImplementedError

    def read(self) -> Optional[_Item]:
        """Non-blocking: what a cycle brought, or nothing (None, [])."""
        raise NotImplementedError

    def _more(self) -> bool:
        """Can anything come still?  (Not once the cgroup is gone.)"""
        return not self._removed

    def _opened(self, handle: ctypes._Pointer, fd: int,  # type: ignore[type-arg]
                mode: int, opts: _lib.OptsStruct,
                ctrl_mode: Any) -> None:
        """Set up with a new C object, its fd (which never changes), its
        mode and each controller's (``ctrl_mode(handle, bit)``)."""
        self._fd = fd
        self._mode = _mode_name(mode)
        self._modes = {}
        for name, bit in _lib.CONTROLLERS:
            try:
                self._modes[name] = _mode_name(ctrl_mode(handle, bit))
            except OSError:
                pass    # ENOENT: not read (not asked for, or not in the default set here)
        self._handle = handle

    @property
    def mode(self) -> str:
        """How samples are produced: "kernel" or "fallback", a Tree's also
        "subtree" (the first controller's of :attr:`controllers`, which
        leads the cycles; :attr:`modes` has each one's)."""
        return self._mode

    @property
    def modes(self) -> dict[str, str]:
        """Each controller read and its mode: with ``mode="auto"`` cpu may
        stream while memory is emulated, on a kernel that streams only cpu."""
        return dict(self._modes)

    @property
    def controllers(self) -> tuple[str, ...]:
        """The controllers read ("cpu", "memory", "io", "pressure"), in that order."""
        return tuple(self._modes)

    def _check_open(self) -> ctypes._Pointer:  # type: ignore[type-arg]
        if self._handle is None:
            raise ValueError(f"I/O operation on closed {type(self).__name__}")
        return self._handle

    @property
    def closed(self) -> bool:
        return self._handle is None

    def fileno(self) -> int:
        """The fd to poll: readable when a new sample (batch) can be read."""
        with self._lock:
            self._check_open()
            return self._fd

    def close(self) -> None:
        """Free the C object and its fds.  Waiters end: a wait() in another
        thread raises ValueError, a blocking iteration ends (StopIteration),
        an ``async for`` ends (StopAsyncIteration).  Closing twice is fine;
        any thread may close."""
        with self._lock:
            handle, self._handle = self._handle, None
            if self._wake is not None:
                os.eventfd_write(self._wake, 1)
                if self._waiters == 0:
                    os.close(self._wake)
                    self._wake = None
        # after the handle is gone: a task woken now finds it closed, and
        # does not wait again on an fd about to be closed
        self._end_async_wait()
        # no call can start any more, and none is running: free it outside
        # the lock (freeing may wait for io_uring reads in flight)
        if handle is not None:
            self._free(handle)

    def __enter__(self: _P) -> _P:
        self._check_open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self: _P) -> _P:
        self._check_open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        # the library may wait for io_uring reads in flight: not on the loop
        self._end_async_wait()
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            warnings.warn(f"unclosed {self!r}", ResourceWarning, source=self)
            self.close()

    def _poll(self, timeout: Optional[float]) -> Optional[bool]:
        """Block until the fd is readable (True), ``timeout`` seconds pass
        (False) or another thread closes this object (None)."""
        with self._lock:
            self._check_open()
            if self._wake is None:
                self._wake = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
            wake, fd = self._wake, self._fd
            self._waiters += 1
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            poller.register(wake, select.POLLIN)
            # PEP 475: signal handlers run, then poll goes on with the time left
            ready = poller.poll(None if timeout is None else max(0.0, timeout * 1000))
        finally:
            with self._lock:
                self._waiters -= 1
                closed = self._handle is None
                if closed and self._waiters == 0 and self._wake is not None:
                    os.close(self._wake)
                    self._wake = None
        return None if closed else bool(ready)

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until something can be read (True) or ``timeout`` seconds
        pass (False); None waits without limit.  ValueError when the
        object is (or gets, from another thread) closed."""
        if self._removed:
            self._check_open()
            return True     # the next read says so at once
        ready = self._poll(timeout)
        if ready is None:
            raise ValueError(f"{type(self).__name__} closed while waiting")
        return ready

    def _end_async_wait(self) -> None:
        """End a task's wait in _readable(), from any thread."""
        aw = self._async_wait
        if aw is None:
            return
        loop, fd, fut = aw

        def end() -> None:
            if self._async_wait is aw:
                self._async_wait = None
                loop.remove_reader(fd)
            if not fut.done():
                fut.set_result(None)

        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            end()
            return
        try:
            # the fd may be closed before the loop runs this: the loop's
            # selector forgets a closed fd quietly
            loop.call_soon_threadsafe(end)
        except RuntimeError:
            pass    # that loop is closed: nothing waits in it

    async def _readable(self) -> bool:
        """Wait in the running loop until the fd is readable.  The reader is
        registered only during this await and removed however it ends
        (readable, cancelled, closed); False when closed meanwhile."""
        if self._async_wait is not None:
            raise RuntimeError(f"another task is already iterating {self!r}")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()

        def ready() -> None:
            if not fut.done():
                fut.set_result(None)

        with self._lock:
            if self._handle is None:
                return False
            fd = self._fd
            aw = self._async_wait = (loop, fd, fut)
        try:
            try:
                loop.add_reader(fd, ready)
            except OSError:
                if self._handle is None:    # closed by another thread meanwhile
                    return False
                raise
            await fut
        finally:
            if self._async_wait is aw:
                self._async_wait = None
                loop.remove_reader(fd)
        return self._handle is not None

    def _gone(self, path: str) -> CgroupRemovedError:
        self._removed = True
        return CgroupRemovedError(errno.ENODEV, os.strerror(errno.ENODEV), path)

    def __iter__(self: _P) -> _P:
        return self

    def __next__(self) -> _Item:
        while self._more():
            try:
                item = self.read()
            except CgroupRemovedError:
                break
            if item:
                return item
            if self._poll(None) is None:
                break       # closed by another thread
        raise StopIteration

    def __aiter__(self: _P) -> _P:
        return self

    async def __anext__(self) -> _Item:
        # only read() on the loop, and only once the fd is readable
        while self._more():
            if not await self._readable():
                break
            try:
                item = self.read()
            except CgroupRemovedError:
                break
            if item:
                return item
        raise StopAsyncIteration


class _Rooted:
    """Stream and Tree: one cgroup (a tree's root), which may go away."""

    _path: str
    _removed: bool

    @property
    def path(self) -> str:
        """Canonical absolute path of the cgroup (a tree's root)."""
        return self._path

    @property
    def removed(self) -> bool:
        """True once the library said that the cgroup (a tree's root) is
        gone (a tree: after the batch with its Removed)."""
        return self._removed


class Stream(_Rooted, _Pollable[Sample]):
    """The cpu.stat of one cgroup, once per flush.

    ``cgroup`` is an absolute path or a path relative to the cgroup2 mount
    (``cgroup_root`` overrides where that is).  ``mode`` is "auto" (kernel
    streaming when the kernel has cpu.stat.stream, else fallback), "kernel"
    (OSError with errno EOPNOTSUPP without it) or "fallback" (the library
    reads cpu.stat on a timer every ``fallback_interval_ms``; 0 means the
    kernel's interval if set, else 1000).

    ``controllers`` names what to read: "cpu", "memory"
    (:attr:`Sample.memory`), "io" (:attr:`Sample.io`), "pressure"
    (:attr:`Sample.pressure`), any of them; None (the default) is every
    cgstream front end's default set: cpu, and memory, io and pressure
    where the cgroup has them (a Group: the cgroup2 hierarchy;
    :attr:`controllers` says which).  OSError ENOMEDIUM when a controller
    named is not enabled for the cgroup (pressure: its cgroup.pressure is 0),
    EOPNOTSUPP when a mode other than "auto" is not there for one of them,
    FileNotFoundError... as for a missing cgroup.

    Iterating (``for sample in stream`` or ``async for``) yields one
    :class:`Sample` per cycle and ends when the cgroup is removed
    (``removed`` is True then) or the stream is closed.  :meth:`read` never
    blocks.
    """

    def __init__(self, cgroup: StrPath, mode: str = "auto",
                 fallback_interval_ms: int = 0,
                 cgroup_root: Optional[StrPath] = None,
                 controllers: Optional[Iterable[str]] = None) -> None:
        super().__init__()
        lib = _lib.load()
        # the library may keep opts->cgroup_root: keep it alive with us
        self._opts = _make_opts(mode, fallback_interval_ms, cgroup_root,
                                controllers=controllers)
        self._event = _lib.EventStruct()  # every read's, reused
        handle = _lib.StreamPtr()
        lib.cgstream_open(os.fsencode(cgroup), ctypes.byref(self._opts),
                          ctypes.byref(handle))
        self._lib = lib
        self._path = os.fsdecode(lib.cgstream_path(handle))
        self._opened(handle, int(lib.cgstream_fd(handle)), lib.cgstream_mode(handle),
                     self._opts, lib.cgstream_ctrl_mode)

    def __repr__(self) -> str:
        state = "closed" if self.closed else self._mode
        return f"<pycgstream.Stream {self._path!r} {state}>"

    def _free(self, handle: ctypes._Pointer) -> None:  # type: ignore[type-arg]
        self._lib.cgstream_close(handle)

    def read(self) -> Optional[Sample]:
        """The sample of a cycle not returned before, or None when there is
        none yet.  CgroupRemovedError once the cgroup is gone."""
        ev = self._event
        try:
            with self._lock:
                self._lib.cgstream_read_event(self._check_open(), ctypes.byref(ev),
                                              ctypes.sizeof(ev))
                # decoded under the lock: memory and io point into the
                # stream, valid until its next read
                events = _decode_events(bytes(ev), tree=False)
        except BlockingIOError:
            return None
        except OSError as e:
            if e.errno == errno.ENODEV:
                raise self._gone(self._path) from None
            if e.filename is None:
                e.filename = self._path
            raise
        for event in events:
            if isinstance(event, Sample):
                # the stream's canonical path, whatever the event says
                return event if event.cgroup == self._path else replace(event, cgroup=self._path)
            if isinstance(event, Removed):
                raise self._gone(self._path)
        return None


class _Batches(_Pollable[list[Event]]):
    """What Group and Tree share: one batch of events per cycle from a
    process call, into an event array kept from call to call."""

    _MIN_ROOM = 64

    def __init__(self) -> None:
        super().__init__()
        self._events = (_lib.EventStruct * self._MIN_ROOM)()

    def _process(self, handle: ctypes._Pointer, events: ctypes.Array,  # type: ignore[type-arg]
                 room: int) -> int:
        raise NotImplementedError

    def _size(self, handle: ctypes._Pointer) -> int:  # type: ignore[type-arg]
        raise NotImplementedError

    def __len__(self) -> int:
        """The cgroups watched (a tree: it knows) now."""
        with self._lock:
            return self._size(self._check_open())

    def _decode(self, n: int, tree: bool) -> list[Event]:
        """The first @n events of the array as Python events."""
        size = ctypes.sizeof(_lib.EventStruct)
        return _decode_events(memoryview(self._events).cast("B")[:n * size], tree)

    def _read_batch(self, tree: bool) -> list[Event]:
        """One cycle's batch, over as many process calls as it takes."""
        events: list[Event] = []
        with self._lock:
            handle = self._check_open()
            # room for the whole batch as a rule: every cgroup's sample
            # and some events (it grows, and stays grown, when that was short)
            want = self._size(handle) * 5 // 4 + self._MIN_ROOM
            if len(self._events) < want:
                self._events = (_lib.EventStruct * want)()
            while True:
                room = len(self._events)
                n = self._process(handle, self._events, room)
                events += self._decode(n, tree)
                if n < room:
                    return events
                # Full: the rest of the batch comes from the next calls.
                # The fd polls readable while some of it is left; when it
                # does not, the batch is complete.
                self._events = (_lib.EventStruct * (2 * room))()
                if not _poll_zero(self._fd):
                    return events


class Group(_Batches):
    """Many cgroups watched at once, one batch per cycle through a single
    fd.

    Options are those of :class:`Stream`, and ``changes`` as for
    :class:`Tree`.  Iterating yields, per cycle, a list of events: a
    :class:`Sample` for each cgroup with a new sample (with ``changes``, a
    :class:`Changed` for each one whose values changed),
    :class:`Removed` for a removed cgroup, :class:`Failed` for one that
    could not be read (both are dropped from the group).  Iteration ends
    once the group watches no cgroup, or it is closed.  A batch keeps a
    cycle's samples together, which is what per-cycle consumers (sums, one
    timestamp per export) want; flatten it when you want single events.
    """

    def __init__(self, cgroups: Iterable[StrPath] = (), mode: str = "auto",
                 fallback_interval_ms: int = 0,
                 cgroup_root: Optional[StrPath] = None,
                 controllers: Optional[Iterable[str]] = None,
                 changes: bool = False) -> None:
        super().__init__()
        lib = _lib.load()
        self._opts = _make_opts(mode, fallback_interval_ms, cgroup_root,
                                controllers=controllers, changes=changes)
        handle = _lib.GroupPtr()
        lib.cgstream_group_new(ctypes.byref(self._opts), ctypes.byref(handle))
        self._lib = lib
        self._opened(handle, int(lib.cgstream_group_fd(handle)), lib.cgstream_group_mode(handle),
                     self._opts, lib.cgstream_group_ctrl_mode)
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

    def _free(self, handle: ctypes._Pointer) -> None:  # type: ignore[type-arg]
        self._lib.cgstream_group_free(handle)

    def _process(self, handle: ctypes._Pointer, events: ctypes.Array,  # type: ignore[type-arg]
                 room: int) -> int:
        return int(self._lib.cgstream_group_process(
            handle, events, room, ctypes.sizeof(_lib.EventStruct)))

    def _size(self, handle: ctypes._Pointer) -> int:  # type: ignore[type-arg]
        return int(self._lib.cgstream_group_size(handle))

    def add(self, cgroup: StrPath) -> None:
        """Watch one more cgroup: FileExistsError when already watched,
        otherwise the errors of :class:`Stream`."""
        with self._lock:
            self._lib.cgstream_group_add(self._check_open(), os.fsencode(cgroup), None)

    def remove(self, cgroup: StrPath) -> None:
        """Stop watching a cgroup: FileNotFoundError when not watched."""
        with self._lock:
            self._lib.cgstream_group_remove(self._check_open(), os.fsencode(cgroup))

    def read(self) -> list[Event]:
        """Non-blocking: the events since the last call (one cycle's batch),
        an empty list when there is nothing new."""
        return self._read_batch(tree=False)

    def _more(self) -> bool:
        return len(self) > 0


class Tree(_Rooted, _Batches):
    """A cgroup and every cgroup below it, those made while it is watched
    included, one batch per cycle through a single fd.

    ``mode``: "auto" (the best the kernel has), "subtree" (the whole
    subtree in one read per flush through cpu.stat.stream.subtree; OSError
    EOPNOTSUPP on kernels without it), "kernel" (each cgroup's
    cpu.stat.stream) or "fallback" (a timer and each cgroup's cpu.stat,
    every ``fallback_interval_ms``); "kernel" and "fallback" hold an fd
    per cgroup.  Other options as for :class:`Stream`.

    Iterating yields, per cycle, a list of events: :class:`Removed` for
    cgroups gone since the last cycle (with their last values, final ones
    where the kernel gave them) and :class:`Failed` for those that could
    not be read, :class:`Added` for cgroups seen for the first time
    (parents first), then a :class:`Sample` for every cgroup of the
    subtree, or with ``changes=True`` a :class:`Changed` for each cgroup
    whose values changed (every new one's first too): the tree keeps every
    cgroup's values, and in subtree mode reads only what changed (the
    kernel's change snapshots), so that a cycle costs what changed.  A
    batch may then be empty of samples: iteration skips empty batches.
    Every event has ``cgroup_id`` and ``parent_id``: a cgroup
    removed and made again under the same path is a Removed (old id) and an
    Added (new id).  Iteration ends after the batch that reports the root's
    own removal (``removed`` is True then), or when the tree is closed.
    """

    def __init__(self, cgroup: StrPath, mode: str = "auto",
                 fallback_interval_ms: int = 0,
                 cgroup_root: Optional[StrPath] = None,
                 controllers: Optional[Iterable[str]] = None,
                 changes: bool = False) -> None:
        super().__init__()
        lib = _lib.load()
        self._opts = _make_opts(mode, fallback_interval_ms, cgroup_root, _MODES, controllers,
                                changes)
        handle = _lib.TreePtr()
        lib.cgstream_tree_open(os.fsencode(cgroup), ctypes.byref(self._opts),
                               ctypes.byref(handle))
        self._lib = lib
        self._path = os.fsdecode(lib.cgstream_tree_path(handle))
        self._opened(handle, int(lib.cgstream_tree_fd(handle)), lib.cgstream_tree_mode(handle),
                     self._opts, lib.cgstream_tree_ctrl_mode)

    def __repr__(self) -> str:
        if self.closed:
            return f"<pycgstream.Tree {self._path!r} closed>"
        return f"<pycgstream.Tree {self._path!r} {len(self)} cgroups {self._mode}>"

    def _free(self, handle: ctypes._Pointer) -> None:  # type: ignore[type-arg]
        self._lib.cgstream_tree_close(handle)

    def _process(self, handle: ctypes._Pointer, events: ctypes.Array,  # type: ignore[type-arg]
                 room: int) -> int:
        return int(self._lib.cgstream_tree_process(
            handle, events, room, ctypes.sizeof(_lib.EventStruct)))

    def _size(self, handle: ctypes._Pointer) -> int:  # type: ignore[type-arg]
        return int(self._lib.cgstream_tree_size(handle))

    def read(self) -> list[Event]:
        """Non-blocking: the current cycle's batch, an empty list when
        there is nothing new.  CgroupRemovedError once the root is gone
        (after the batch with its Removed)."""
        if self._removed:
            self._check_open()
            raise self._gone(self._path)
        try:
            return self._read_batch(tree=True)
        except OSError as e:
            raise self._failed(e) from None

    def _failed(self, e: OSError) -> OSError:
        if e.errno == errno.ENODEV:
            return self._gone(self._path)
        if e.filename is None:
            e.filename = self._path
        return e

    def sync(self, timeout: Optional[float] = None) -> list[Event]:
        """Begin a cycle now, instead of at the next flush (or tick), and
        return its batch: every controller's values as of its latest
        completed flush, for callers that want values when they need them
        (an exporter at a scrape) rather than at every flush.  In subtree
        mode that is one read of each controller's subtree file, in kernel
        mode each cgroup's stream files: nothing is flushed.  In fallback
        mode the statistics files are read now (the kernel flushes as for
        any read of them).

        Events of an earlier cycle not read yet come first in the list (a
        sync never loses a Removed).  Blocks until the batch is complete
        (fallback mode with io_uring reads in the kernel's workers), or
        ``timeout`` seconds, then returns what came; None waits without
        limit.  With ``changes=True`` the batch of a cycle in which nothing
        changed is empty: returned as soon as that cycle is read.
        CgroupRemovedError once the root is gone."""
        if self._removed:
            self._check_open()
            raise self._gone(self._path)
        events: list[Event] = []
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                before = self._emulated_cycles()
                try:
                    with self._lock:
                        self._lib.cgstream_tree_sync(self._check_open())
                    break
                except OSError as e:
                    if e.errno != errno.EBUSY:
                        raise
                # a batch still being handed out or read: take it first
                events += self._read_batch(tree=True)
                if not self._wait_until(deadline):
                    return events
            while True:
                batch = self._read_batch(tree=True)
                events += batch
                if (batch or before is None or self._emulated_cycles() != before
                        or not self._wait_until(deadline)):
                    return events
        except OSError as e:
            raise self._failed(e) from None

    def _emulated_cycles(self) -> Optional[dict[str, int]]:
        """Whether the cycle a sync began is read (its batch may be empty):
        the kernel's modes read a cycle within the sync call itself (None:
        read); the emulation's reads may go on after it, and its
        publication is its cycle count, which moves on once the cycle is
        read."""
        emulated = [name for name, mode in self._modes.items() if mode == "fallback"]
        if not emulated:
            return None
        pubs = self.publications()
        return {name: pubs[name].seq if name in pubs else -1 for name in emulated}

    def publications(self) -> dict[str, Publication]:
        """Each controller's latest publication as of the tree's last
        cycle (the last batch read, events in it or not; the library's
        cgstream_tree_publication()), for the controllers that have had
        one.  With ``changes=True`` a cycle hands out nothing of the
        cgroups that did not change: this says how fresh the values held
        are all the same (an exporter's flush age).  Any thread: it takes
        the tree's lock, as read() does."""
        pub = _lib.PublicationStruct()
        out: dict[str, Publication] = {}
        with self._lock:
            handle = self._check_open()
            for name in self._modes:
                try:
                    self._lib.cgstream_tree_publication(handle, _CONTROLLER_BITS[name],
                                                        ctypes.byref(pub), ctypes.sizeof(pub))
                except OSError as e:
                    if e.errno == errno.ENODATA:
                        continue    # none yet (or the kernel publishes none)
                    raise
                out[name] = Publication(pub.seq, pub.time_usec, pub.skipped)
        return out

    def _wait_until(self, deadline: Optional[float]) -> bool:
        """Wait for the fd until @deadline (monotonic; None: no limit);
        False when the time is up."""
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return False
        return self.wait(left)


class Publication(NamedTuple):
    """A controller's latest publication as of a tree's last cycle
    (:meth:`Tree.publications`): ``seq`` the kernel's publication_seq (the
    emulation: its cycle count), ``time_usec`` its CLOCK_MONOTONIC time
    (the emulation: when the cycle's reads began), ``skipped`` the
    publications the kernel skipped since boot (the emulation: the ticks
    it missed)."""

    seq: int
    time_usec: int
    skipped: int


@dataclass(frozen=True)
class Probe:
    """What a cgroup offers (:func:`probe`): ``error`` is None when an
    object opened with those options works there, else the OSError its
    open would raise; ``controllers`` what it would read; ``modes`` each
    controller the library knows (asked for or not) and the mode it would
    be read in there ("subtree", "kernel", "fallback"), or the OSError
    (ENOMEDIUM: the cgroup lacks it; EOPNOTSUPP: the kernel lacks the
    file of the mode asked for)."""

    error: Optional[OSError]
    controllers: tuple[str, ...]
    modes: dict[str, Union[str, OSError]]


def probe(cgroup: StrPath, mode: str = "auto", controllers: Optional[Iterable[str]] = None,
          tree: bool = False, cgroup_root: Optional[StrPath] = None) -> Probe:
    """What @cgroup offers a Stream (or with ``tree`` a Tree; a Group: the
    cgroup2 root) opened with these options, the library's own choices
    (cgstream_probe()), without opening anything that stays open."""
    lib = _lib.load()
    opts = _make_opts(mode, 0, cgroup_root, _MODES, controllers)
    p = _lib.ProbeStruct()
    lib.cgstream_probe(os.fsencode(cgroup), ctypes.byref(opts), _lib.PROBE_TREE if tree else 0,
                       ctypes.byref(p), ctypes.sizeof(p))

    def error(err: int) -> OSError:
        return OSError(-err, os.strerror(-err), os.fsdecode(cgroup))

    modes: dict[str, Union[str, OSError]] = {
        name: _mode_name(p.modes[i]) if p.modes[i] > 0 else error(p.modes[i])
        for i, (name, _) in enumerate(_lib.CONTROLLERS)}
    return Probe(error(p.error) if p.error else None,
                 tuple(name for name, bit in _lib.CONTROLLERS if p.controllers & bit), modes)


def get_interval(cgroup_root: Optional[StrPath] = None, controller: str = "cpu") -> int:
    """The kernel's flush interval of @controller ("cpu", "memory", "io",
    "pressure"; the root's <controller>.stat.stream_interval,
    pressure.stream_interval) in ms (0: streaming off).  OSError with
    errno EOPNOTSUPP on kernels that do not stream it."""
    lib = _lib.load()
    opts = _make_opts("auto", 0, cgroup_root)
    ms = ctypes.c_uint32()
    lib.cgstream_get_ctrl_interval(ctypes.byref(opts), _controller_bits((controller,)),
                                   ctypes.byref(ms))
    return ms.value


def set_interval(ms: int, cgroup_root: Optional[StrPath] = None,
                 controller: str = "cpu") -> None:
    """Set the kernel's flush interval of @controller (0 turns its
    streaming off).  OSError: EINVAL out of the kernel's range, EPERM/EACCES
    unprivileged, EOPNOTSUPP without the feature; ValueError/TypeError for
    values that are not a 32-bit unsigned int at all, or an unknown
    controller."""
    lib = _lib.load()
    opts = _make_opts("auto", 0, cgroup_root)
    lib.cgstream_set_ctrl_interval(ctypes.byref(opts), _controller_bits((controller,)),
                                   _u32(ms, "interval"))


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


def escape_name(name: StrPath) -> str:
    """@name (a str as the library's paths are decoded, surrogates and
    all, or bytes) as every cgstream output shows it: printable UTF-8 where
    each byte that is not valid UTF-8 and each control character is
    ``\\xHH`` (the library's rule, cgstream.h "names are data"), so that
    it can go into JSON, a Prometheus label or a terminal whatever the
    cgroup is called."""
    raw = os.fsencode(name)
    buf = ctypes.create_string_buffer(4 * len(raw) + 1)
    n = _lib.load().cgstream_escape_name(raw, buf, len(buf))
    return buf.raw[:n].decode()


def shown_path(path: StrPath, mount: Optional[StrPath] = None) -> str:
    """The one form in which cgstream shows a cgroup's path: below the
    cgroup2 mount (``mount``; None: the one the library finds), "/" for
    its root, escaped as :func:`escape_name` does.  ``path`` as the
    library hands it out (``Sample.cgroup``, ``Tree.path``)."""
    raw = os.fsencode(path)
    where = os.fsencode(mount if mount is not None else resolve_path("/"))
    buf = ctypes.create_string_buffer(4 * len(raw) + 1)
    n = _lib.load().cgstream_shown_path(raw, where, buf, len(buf))
    return buf.raw[:n].decode()


def parse(text: Union[str, bytes], cgroup: str = "") -> Sample:
    """Parse cpu.stat or cpu.stat.stream text with the library's parser
    (unknown keys skipped, absent fields None)."""
    lib = _lib.load()
    data = text.encode() if isinstance(text, str) else bytes(text)
    s = _lib.SampleStruct()
    lib.cgstream_parse(data, len(data), ctypes.byref(s), ctypes.sizeof(s))
    return _sample(cgroup, tuple(getattr(s, name) for name, _ in _lib.SAMPLE_FIELDS),
                   s.present)


def library_version() -> str:
    """The loaded libcgstream's version, "MAJOR.MINOR.PATCH"."""
    return os.fsdecode(_lib.load().cgstream_version())
