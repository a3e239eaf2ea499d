"""The ctypes layer over libcgstream.so.1: structs, one signature table, errors.

Nothing here is Pythonic on purpose; ``_stream.py`` builds the objects users
see.  Every int-returning function gets an errcheck that turns the library's
``-errno`` into ``OSError(errno, os.strerror(errno), path)``, which Python
maps to the matching subclass (FileNotFoundError, PermissionError, ...).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import os
import struct
import threading
from ctypes import (
    POINTER,
    Structure,
    c_char_p,
    c_int,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Any, Callable, Optional

SONAME = "libcgstream.so.1"
LIBRARY_ENV = "CGSTREAM_LIBRARY"

# enum cgstream_mode
MODE_AUTO = 0
MODE_KERNEL = 1
MODE_FALLBACK = 2
MODE_SUBTREE = 3

# enum cgstream_field: bits of cgstream_sample.present
F_SEQ = 1 << 0
F_FLUSH_TIME = 1 << 1
F_USAGE = 1 << 2
F_USER = 1 << 3
F_SYSTEM = 1 << 4
F_NICE = 1 << 5
F_NR_PERIODS = 1 << 6
F_NR_THROTTLED = 1 << 7
F_THROTTLED = 1 << 8
F_NR_BURSTS = 1 << 9
F_BURST = 1 << 10
F_FLUSH_MISSED = 1 << 11
F_CGROUP_ID = 1 << 12

# enum cgstream_controller (since 1.2): the controllers an object reads, in
# the library's order (the first one an object reads leads its cycles);
# load() checks them against the library's (cgstream_controller_name())
CTRL_CPU = 1 << 0
CTRL_MEMORY = 1 << 1
CTRL_IO = 1 << 2
CTRL_PRESSURE = 1 << 3  # (since 1.4) pressure stall information
CONTROLLERS: tuple[tuple[str, int], ...] = (("cpu", CTRL_CPU), ("memory", CTRL_MEMORY),
                                           ("io", CTRL_IO), ("pressure", CTRL_PRESSURE))
# (since 1.4) cpu, and memory, io and pressure where the cgroup has them: the
# front ends' default (1.3's value, 1 << 31, means 1.3's set: no pressure)
CTRL_DEFAULT = 1 << 30
CTRL_SLOTS = 8

# enum cgstream_what (since 1.3): what cgstream_explain() explains
WHAT_OPEN = 0
WHAT_GET_INTERVAL = 1
WHAT_SET_INTERVAL = 2
WHAT_MODE = 3
WHAT_CONTROLLERS = 4
WHAT_FALLBACK_INTERVAL = 5
WHAT_INTERVAL = 6
PROBE_TREE = 1 << 0
NOTICE_EMULATION = 1 << 0
NOTICE_STREAMING_OFF = 1 << 1

# enum cgstream_event_type
EVENT_SAMPLE = 1
EVENT_REMOVED = 2
EVENT_ERROR = 3
EVENT_ADDED = 4
EVENT_CHANGED = 5       # (since 1.3) a SAMPLE of a cgroup whose values changed

# enum cgstream_report (since 1.3): what a Group's and a Tree's batches carry
REPORT_ALL = 0
REPORT_CHANGES = 1
# cgstream_event.flags (since 1.3)
EVENT_F_PARTIAL = 1 << 0


class LibraryNotFoundError(ImportError):
    """libcgstream.so.1 could not be loaded (or lacks a function we need).

    Raised on first use of anything that needs the C library, not at
    ``import pycgstream``, so the package (and this exception) can always be
    imported.  It is an ImportError because the cure is the same as for a
    missing module: build or install the library, or point
    ``CGSTREAM_LIBRARY`` at it.
    """


# The one Python table of struct cgstream_sample's fields (after .present),
# in the struct's order, with the present bit that says the kernel
# reported each one.  SampleStruct is made from it, and load() checks it
# against the library's own table (cgstream_sample_field()).
SAMPLE_FIELDS: tuple[tuple[str, int], ...] = (
    ("seq", F_SEQ),
    ("flush_time_usec", F_FLUSH_TIME),
    ("usage_usec", F_USAGE),
    ("user_usec", F_USER),
    ("system_usec", F_SYSTEM),
    ("nice_usec", F_NICE),
    ("nr_periods", F_NR_PERIODS),
    ("nr_throttled", F_NR_THROTTLED),
    ("throttled_usec", F_THROTTLED),
    ("nr_bursts", F_NR_BURSTS),
    ("burst_usec", F_BURST),
    ("flush_missed", F_FLUSH_MISSED),
    ("cgroup_id", F_CGROUP_ID),
)


class SampleStruct(Structure):
    """struct cgstream_sample"""

    _fields_ = [("present", c_uint64)] + [(name, c_uint64) for name, _ in SAMPLE_FIELDS]


class FieldInfoStruct(Structure):
    """struct cgstream_field_info"""

    _fields_ = [
        ("name", c_char_p),
        ("key", c_char_p),
        ("unit", c_char_p),
        ("bit", c_uint64),
        ("offset", c_size_t),
    ]


def _named_values(time_field: str) -> list[tuple[str, Any]]:
    """The fields of struct cgstream_memory and struct cgstream_values: one
    layout, the time's field named by its header"""
    return [("seq", c_uint64), (time_field, c_uint64), ("nr", c_uint32),
            ("reserved", c_uint32), ("names", POINTER(c_char_p)),
            ("values", POINTER(c_uint64))]


class MemoryStruct(Structure):
    """struct cgstream_memory: names[i] labels values[i]"""

    _fields_ = _named_values("flush_time_usec")


class ValuesStruct(Structure):
    """struct cgstream_values (since 1.3; struct cgstream_memory's layout):
    a controller's values by the kernel's names"""

    _fields_ = _named_values("time_usec")


# The one Python table of struct cgstream_io_device's counters after major
# and minor, in its order: IoDeviceStruct is made from it, the exporter's io
# metrics follow it, and load() checks it against the library's own table
# (cgstream_io_field()).
IO_FIELDS = ("rbytes", "wbytes", "rios", "wios", "dbytes", "dios")


class IoDeviceStruct(Structure):
    """struct cgstream_io_device"""

    _fields_ = [("major", c_uint32), ("minor", c_uint32)] + [(f, c_uint64) for f in IO_FIELDS]


class IoStruct(Structure):
    """struct cgstream_io (1.3: and each device's values by name)"""

    _fields_ = [
        ("seq", c_uint64),
        ("flush_time_usec", c_uint64),
        ("nr_devices", c_uint32),
        ("reserved", c_uint32),
        ("devices", POINTER(IoDeviceStruct)),
        ("nr_values", c_uint32),
        ("reserved2", c_uint32),
        ("names", POINTER(c_char_p)),
        ("values", POINTER(c_uint64)),
    ]


class RecordStruct(Structure):
    """struct cgstream_record (1.2's format 1: its calls fail on format 2)"""

    _fields_ = [
        ("size", c_uint32),
        ("type", c_uint32),
        ("flags", c_uint32),
        ("decoded", c_uint32),
        ("cgroup_id", c_uint64),
        ("parent_id", c_uint64),
        ("seq", c_uint64),
        ("flush_time_usec", c_uint64),
        ("data", c_void_p),
        ("count", c_uint32),
        ("for_type", c_uint32),
        ("items", c_void_p),
        ("sample", SampleStruct),
    ]


class RecStruct(Structure):
    """struct cgstream_rec (since 1.3): one record of a format-2 snapshot,
    as cgstream_decoder_next() gives it"""

    _fields_ = [
        ("size", c_uint32),
        ("type", ctypes.c_uint16),
        ("flags", ctypes.c_uint16),
        ("decoded", c_uint32),
        ("controller", c_uint32),
        ("data", c_void_p),
        ("version", ctypes.c_uint16),
        ("snapshot_flags", ctypes.c_uint16),
        ("reserved", c_uint32),
        ("seq", c_uint64),
        ("time_usec", c_uint64),
        ("base_seq", c_uint64),
        ("skipped", c_uint64),
        ("schema_values", c_uint32),
        ("device_values", c_uint32),
        ("device_size", c_uint32),
        ("reserved2", c_uint32),
        ("names", POINTER(c_char_p)),
        ("device_names", POINTER(c_char_p)),
        ("id", c_uint64),
        ("parent_id", c_uint64),
        ("nr_values", c_uint32),
        ("nr_devices", c_uint32),
    ]


class DecoderHandle(Structure):
    """opaque struct cgstream_decoder"""


DecoderPtr = POINTER(DecoderHandle)


class OptsStruct(Structure):
    """struct cgstream_opts (set .sz, zero the rest)"""

    _fields_ = [
        ("sz", c_size_t),
        ("mode", c_int),
        ("fallback_interval_ms", c_uint32),
        ("cgroup_root", c_char_p),
        ("controllers", c_uint32),
        ("report", c_uint32),
    ]


class EventStruct(Structure):
    """struct cgstream_event"""

    _fields_ = [
        ("type", c_int),
        ("error", c_int),
        ("path", c_char_p),
        ("userdata", c_void_p),
        ("sample", SampleStruct),
        ("parent_id", c_uint64),
        ("controllers", c_uint32),
        ("reserved", c_uint32),
        ("memory", POINTER(MemoryStruct)),
        ("io", POINTER(IoStruct)),
        ("changed", c_uint32),
        ("final", c_uint32),
        ("cpu", POINTER(ValuesStruct)),
        ("flags", c_uint32),
        ("reserved2", c_uint32),
        ("pressure", POINTER(ValuesStruct)),
    ]


class IoFieldInfoStruct(Structure):
    """struct cgstream_io_field_info (since 1.3)"""

    _fields_ = [("name", c_char_p), ("unit", c_char_p), ("offset", c_size_t)]


class ProbeStruct(Structure):
    """struct cgstream_probe (since 1.3)"""

    _fields_ = [
        ("error", c_int),
        ("controllers", c_uint32),
        ("modes", ctypes.c_int32 * CTRL_SLOTS),
    ]


class PublicationStruct(Structure):
    """struct cgstream_publication (since 1.3)"""

    _fields_ = [("seq", c_uint64), ("time_usec", c_uint64), ("skipped", c_uint64)]


class ExitInfoStruct(Structure):
    """struct cgstream_exit_info (since 1.3)"""

    _fields_ = [("status", c_int), ("name", c_char_p), ("text", c_char_p)]


class StreamHandle(Structure):
    """opaque struct cgstream"""


class GroupHandle(Structure):
    """opaque struct cgstream_group"""


class TreeHandle(Structure):
    """opaque struct cgstream_tree"""


StreamPtr = POINTER(StreamHandle)
GroupPtr = POINTER(GroupHandle)
TreePtr = POINTER(TreeHandle)

# struct cgstream_event as Python's struct module reads an array of them
# (the decode of a whole batch in one pass): type, error, path, userdata,
# the sample's present and its fields in SAMPLE_FIELDS order, parent_id,
# controllers, reserved, the memory and io pointers, then (1.3) changed,
# final, the cpu pointer, flags, reserved2, then (1.4) the pressure pointer
EVENT_LAYOUT = struct.Struct("@iiPP" + "Q" * len(SampleStruct._fields_) + "QIIPP" + "IIPII" + "P")
# struct cgstream_memory (and cgstream_values) and struct cgstream_io read
# the same way: seq, flush_time_usec, nr, reserved, names, values /
# devices, and io's nr_values, reserved2, names, values
MEMORY_LAYOUT = struct.Struct("@QQIIPP")
IO_LAYOUT = struct.Struct("@QQIIPIIPP")
# struct cgstream_io_device: major, minor, then IO_FIELDS
IO_DEVICE_LAYOUT = struct.Struct("@II" + "Q" * len(IO_FIELDS))
for _layout, _struct in ((EVENT_LAYOUT, EventStruct), (MEMORY_LAYOUT, MemoryStruct),
                         (MEMORY_LAYOUT, ValuesStruct), (IO_LAYOUT, IoStruct),
                         (IO_DEVICE_LAYOUT, IoDeviceStruct)):
    if _layout.size != ctypes.sizeof(_struct):
        raise ImportError(f"pycgstream: {_struct.__doc__} layout mismatch")

def _raise_errno(result: int, path: Any) -> None:
    err = -result
    filename = os.fsdecode(path) if isinstance(path, (bytes, str)) else None
    raise OSError(err, os.strerror(err), filename)


def _errno_check(path_arg: Optional[int]) -> Callable[..., Any]:
    """errcheck raising OSError for a negative return; the argument at
    index @path_arg (a cgroup path) becomes the exception's filename."""

    def check(result: int, func: Any, args: tuple[Any, ...]) -> int:
        if result < 0:
            _raise_errno(result, args[path_arg] if path_arg is not None else None)
        return result

    return check


# name: (restype, argtypes, path_arg) -- path_arg is None for functions that
# take no cgroup path, and "raw" marks functions without an errno return.
_RAW = "raw"
SIGNATURES: dict[str, tuple[Any, list[Any], Any]] = {
    "cgstream_open": (c_int, [c_char_p, POINTER(OptsStruct), POINTER(StreamPtr)], 0),
    "cgstream_close": (None, [StreamPtr], _RAW),
    "cgstream_fd": (c_int, [StreamPtr], None),
    "cgstream_mode": (c_int, [StreamPtr], None),
    "cgstream_path": (c_char_p, [StreamPtr], _RAW),
    "cgstream_wait": (c_int, [StreamPtr, c_int], None),
    "cgstream_read": (c_int, [StreamPtr, POINTER(SampleStruct), c_size_t], None),
    "cgstream_read_event": (c_int, [StreamPtr, POINTER(EventStruct), c_size_t], None),
    "cgstream_ctrl_mode": (c_int, [StreamPtr, ctypes.c_uint], None),
    "cgstream_group_new": (c_int, [POINTER(OptsStruct), POINTER(GroupPtr)], None),
    "cgstream_group_free": (None, [GroupPtr], _RAW),
    "cgstream_group_add": (c_int, [GroupPtr, c_char_p, c_void_p], 1),
    "cgstream_group_remove": (c_int, [GroupPtr, c_char_p], 1),
    "cgstream_group_size": (c_size_t, [GroupPtr], _RAW),
    "cgstream_group_fd": (c_int, [GroupPtr], None),
    "cgstream_group_mode": (c_int, [GroupPtr], None),
    "cgstream_group_ctrl_mode": (c_int, [GroupPtr, ctypes.c_uint], None),
    "cgstream_group_wait": (c_int, [GroupPtr, c_int], None),
    "cgstream_group_process": (
        c_int,
        [GroupPtr, POINTER(EventStruct), c_size_t, c_size_t],
        None,
    ),
    "cgstream_tree_open": (c_int, [c_char_p, POINTER(OptsStruct), POINTER(TreePtr)], 0),
    "cgstream_tree_close": (None, [TreePtr], _RAW),
    "cgstream_tree_fd": (c_int, [TreePtr], None),
    "cgstream_tree_mode": (c_int, [TreePtr], None),
    "cgstream_tree_ctrl_mode": (c_int, [TreePtr, ctypes.c_uint], None),
    "cgstream_tree_sync": (c_int, [TreePtr], None),
    "cgstream_tree_publication": (
        c_int, [TreePtr, ctypes.c_uint, POINTER(PublicationStruct), c_size_t], None),
    "cgstream_tree_path": (c_char_p, [TreePtr], _RAW),
    "cgstream_tree_size": (c_size_t, [TreePtr], _RAW),
    "cgstream_tree_wait": (c_int, [TreePtr, c_int], None),
    "cgstream_tree_process": (
        c_int,
        [TreePtr, POINTER(EventStruct), c_size_t, c_size_t],
        None,
    ),
    "cgstream_get_interval": (c_int, [POINTER(OptsStruct), POINTER(c_uint32)], None),
    "cgstream_set_interval": (c_int, [POINTER(OptsStruct), c_uint32], None),
    "cgstream_get_ctrl_interval": (
        c_int, [POINTER(OptsStruct), ctypes.c_uint, POINTER(c_uint32)], None),
    "cgstream_set_ctrl_interval": (c_int, [POINTER(OptsStruct), ctypes.c_uint, c_uint32], None),
    "cgstream_parse": (
        c_int,
        [c_char_p, c_size_t, POINTER(SampleStruct), c_size_t],
        None,
    ),
    "cgstream_records_next": (
        c_int,
        [c_void_p, c_size_t, POINTER(c_size_t), POINTER(RecordStruct), c_size_t],
        None,
    ),
    "cgstream_record_value": (
        c_int, [POINTER(RecordStruct), ctypes.c_uint, POINTER(c_uint64)], None),
    "cgstream_record_device": (
        c_int, [POINTER(RecordStruct), ctypes.c_uint, POINTER(IoDeviceStruct)], None),
    "cgstream_decoder_new": (c_int, [POINTER(DecoderPtr)], None),
    "cgstream_decoder_free": (None, [DecoderPtr], _RAW),
    "cgstream_decoder_next": (
        c_int, [DecoderPtr, c_void_p, c_size_t, POINTER(c_size_t), POINTER(RecStruct), c_size_t],
        None),
    "cgstream_rec_value": (c_int, [POINTER(RecStruct), ctypes.c_uint, POINTER(c_uint64)], None),
    "cgstream_rec_get": (c_int, [POINTER(RecStruct), c_char_p, POINTER(c_uint64)], None),
    "cgstream_rec_device": (
        c_int, [POINTER(RecStruct), ctypes.c_uint, POINTER(c_uint32), POINTER(c_uint32),
                POINTER(c_uint64), ctypes.c_uint], None),
    "cgstream_rec_io_device": (
        c_int, [POINTER(RecStruct), ctypes.c_uint, POINTER(IoDeviceStruct)], None),
    "cgstream_memory_get": (c_int, [POINTER(MemoryStruct), c_char_p, POINTER(c_uint64)], None),
    "cgstream_values_get": (c_int, [POINTER(ValuesStruct), c_char_p, POINTER(c_uint64)], None),
    "cgstream_controller_name": (c_char_p, [ctypes.c_uint], _RAW),
    "cgstream_controller_file": (c_char_p, [ctypes.c_uint, ctypes.c_uint], _RAW),
    "cgstream_sample_field": (
        c_int,
        [ctypes.c_uint, POINTER(FieldInfoStruct), c_size_t],
        _RAW,
    ),
    "cgstream_mode_name": (c_char_p, [c_int], _RAW),
    "cgstream_version": (c_char_p, [], _RAW),
    "cgstream_resolve_path": (
        c_int,
        [c_char_p, POINTER(OptsStruct), c_char_p, c_size_t],
        0,
    ),
    "cgstream_escape_name": (c_int, [c_char_p, c_char_p, c_size_t], None),
    "cgstream_shown_path": (c_int, [c_char_p, c_char_p, c_char_p, c_size_t], None),
    "cgstream_probe": (c_int, [c_char_p, POINTER(OptsStruct), ctypes.c_uint,
                               POINTER(ProbeStruct), c_size_t], 0),
    "cgstream_exit_status": (c_int, [ctypes.c_uint, POINTER(ExitInfoStruct), c_size_t], _RAW),
    "cgstream_explain": (c_int, [c_int, c_int, c_char_p, POINTER(OptsStruct), c_char_p,
                                 c_size_t], None),
    "cgstream_parse_option": (c_int, [c_int, c_char_p, POINTER(c_uint32)], _RAW),
    "cgstream_notices": (c_int, [c_uint32, POINTER(c_int), POINTER(OptsStruct), ctypes.c_uint,
                                 c_char_p, c_size_t], None),
    "cgstream_distinct_subtrees": (c_size_t, [POINTER(c_char_p), c_size_t,
                                              POINTER(ctypes.c_uint8)], _RAW),
    "cgstream_raise_fd_limit": (c_int, [POINTER(c_uint64)], None),
    "cgstream_sd_notify": (c_int, [c_char_p], None),
    "cgstream_io_field": (c_int, [ctypes.c_uint, POINTER(IoFieldInfoStruct), c_size_t], _RAW),
}

_HOW_TO_GET_IT = (
    "build it with 'make -C libcgstream' in the cgstream checkout (and "
    "'make install' plus ldconfig to install it), or set "
    f"{LIBRARY_ENV}=/full/path/to/{SONAME}"
)

_lib: Optional[ctypes.CDLL] = None
_lib_lock = threading.Lock()


def _beside() -> Optional[str]:
    """The library that came with this copy of the package, if it is there:
    the one ``make install`` put in LIBDIR (pycgstream's Makefile records it
    in ``_install.py``), or in a checkout the build next to the sources
    (libcgstream/build), as the in-tree ``cgstream`` command finds its own."""
    try:
        libdir = importlib.import_module("._install", __package__).LIBDIR
        path = os.path.join(libdir, SONAME)
    except ImportError:
        parents = Path(__file__).resolve().parents
        if len(parents) < 4 or not (parents[2] / "pyproject.toml").is_file():
            return None
        path = str(parents[3] / "libcgstream" / "build" / SONAME)
    return path if os.path.isfile(path) else None


def _candidates() -> tuple[list[str], bool]:
    """Where to look, and whether the user chose the place explicitly."""
    override = os.environ.get(LIBRARY_ENV)
    if override:
        return [override], True
    names = []
    beside = _beside()
    if beside:
        names.append(beside)
    found = ctypes.util.find_library("cgstream")
    if found:
        names.append(found)
    if SONAME not in names:
        names.append(SONAME)
    return names, False


def _bind(lib: ctypes.CDLL, where: str) -> None:
    for name, (restype, argtypes, path_arg) in SIGNATURES.items():
        try:
            func = getattr(lib, name)
        except AttributeError:
            raise LibraryNotFoundError(
                f"{where} has no function {name}(): not libcgstream "
                f"{SONAME}, or an older one; {_HOW_TO_GET_IT}",
                name=SONAME,
                path=where,
            ) from None
        func.restype = restype
        func.argtypes = argtypes
        if path_arg != _RAW:
            func.errcheck = _errno_check(path_arg)


def _check_fields(lib: ctypes.CDLL, where: str) -> None:
    """SAMPLE_FIELDS and IO_FIELDS are the library's tables of a sample's
    fields and of an io device's counters, in its order."""
    theirs: list[tuple[str, int, int]] = []
    info = FieldInfoStruct()
    while lib.cgstream_sample_field(len(theirs), ctypes.byref(info), ctypes.sizeof(info)) == 0:
        theirs.append((info.name.decode(), info.bit, info.offset))
    ours = [(name, bit, getattr(SampleStruct, name).offset) for name, bit in SAMPLE_FIELDS]
    io_theirs: list[tuple[str, int]] = []
    io_info = IoFieldInfoStruct()
    while lib.cgstream_io_field(len(io_theirs), ctypes.byref(io_info),
                                ctypes.sizeof(io_info)) == 0:
        io_theirs.append((io_info.name.decode(), io_info.offset))
    io_ours = [(name, getattr(IoDeviceStruct, name).offset) for name in IO_FIELDS]
    # CONTROLLERS: the library's controllers, by bit
    ctrl_theirs = [(name.decode(), 1 << i) for i in range(CTRL_SLOTS)
                   if (name := lib.cgstream_controller_name(1 << i))]
    if theirs != ours or io_theirs != io_ours or ctrl_theirs != list(CONTROLLERS):
        raise LibraryNotFoundError(
            f"{where}: its sample fields {theirs}, io counters {io_theirs} and controllers "
            f"{ctrl_theirs} are not pycgstream's {ours}, {io_ours}, {list(CONTROLLERS)}; "
            f"{_HOW_TO_GET_IT}", name=SONAME, path=where)


def load() -> ctypes.CDLL:
    """Load and bind libcgstream once; LibraryNotFoundError if impossible.

    Order: $CGSTREAM_LIBRARY (a full path; when set, nothing else is
    tried), then the library that came with this copy of the package
    (installed with it, or built in the same checkout), then
    ctypes.util.find_library("cgstream"), then the soname through the
    dynamic loader's search path.
    """
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        names, explicit = _candidates()
        failures = []
        for name in names:
            try:
                lib = ctypes.CDLL(name)
            except OSError as e:
                failures.append(f"{name}: {e}")
                continue
            _bind(lib, name)
            _check_fields(lib, name)
            _lib = lib
            return lib
        if explicit:
            msg = (f"cannot load libcgstream from {LIBRARY_ENV}={names[0]} "
                   f"({'; '.join(failures)}); {_HOW_TO_GET_IT}")
        else:
            msg = (f"libcgstream ({SONAME}) not found on the library search "
                   f"path; {_HOW_TO_GET_IT}")
        raise LibraryNotFoundError(msg, name=SONAME, path=names[0])


def make_opts(mode: int = MODE_AUTO, fallback_interval_ms: int = 0,
              cgroup_root: Optional[bytes] = None, controllers: int = 0,
              report: int = REPORT_ALL) -> OptsStruct:
    opts = OptsStruct()
    opts.sz = ctypes.sizeof(OptsStruct)
    opts.mode = mode
    opts.fallback_interval_ms = fallback_interval_ms
    opts.cgroup_root = cgroup_root
    opts.controllers = controllers
    opts.report = report
    return opts
