"""Memory and io values: the Memory and Io mappings, the decode of the
library's struct cgstream_memory / cgstream_io behind an event's pointers
(made here with ctypes, so no kernel is needed), the controllers option;
and, on the host's cgroup2 (the emulation), samples with memory and io
where the cgroup has the controllers (skipped where it has not)."""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path
from typing import Any

import pytest

import pycgstream
from pycgstream import Io, IoDevice, Memory, Sample, _lib, _stream
from conftest import Cgroups

NAMES = ("anon", "file", "pgfault", "current", "events.oom_kill")


def test_memory_is_a_read_only_mapping() -> None:
    m = Memory(NAMES, [1, 2, 3, 4, 5], seq=9, flush_time_usec=77)
    assert list(m) == list(NAMES) and len(m) == 5 and m.names == NAMES
    assert m["current"] == 4 and m.get("swap.current") is None and "anon" in m
    assert dict(m) == dict(zip(NAMES, [1, 2, 3, 4, 5]))
    assert (m.seq, m.flush_time_usec) == (9, 77)
    assert m == Memory(NAMES, [1, 2, 3, 4, 5]) and hash(m) == hash(Memory(NAMES, [1, 2, 3, 4, 5]))
    with pytest.raises(KeyError):
        m["nope"]
    with pytest.raises(TypeError):
        m["anon"] = 3  # type: ignore[index]
    with pytest.raises(ValueError):
        Memory(NAMES, [1, 2])


def test_memory_pick() -> None:
    m = Memory(NAMES, [1, 2, 3, 4, 5])
    assert m.pick(("current", "nope", "anon")) == (4, None, 1)
    assert m.pick(("file",)) == (2,)
    assert m.pick(("nope",)) == (None,)
    assert m.pick(()) == ()
    other = Memory(NAMES[::-1], [1, 2, 3, 4, 5])
    assert other.pick(("current", "anon")) == (2, 5), "positions are per set of names"
    assert Memory(NAMES, [6, 7, 8, 9, 10]).names is m.names, "names are shared"


def test_io_is_a_mapping_of_devices() -> None:
    io = Io([IoDevice(7, 0, 1, 2, 3, 4, 5, 6), IoDevice(259, 1)], seq=3, flush_time_usec=4)
    assert list(io) == ["7:0", "259:1"] and io["7:0"].wios == 4 and io["259:1"].rbytes == 0
    assert io["7:0"].device == "7:0" and (io.seq, io.flush_time_usec) == (3, 4)
    assert io == Io([IoDevice(7, 0, 1, 2, 3, 4, 5, 6), IoDevice(259, 1)]) and hash(io)


def test_sample_with_memory_and_io_is_hashable_and_frozen() -> None:
    s = Sample("/x", cgroup_id=1, memory=Memory(NAMES, [1, 2, 3, 4, 5]),
               io=Io([IoDevice(8, 0, 1)]))
    assert hash(s) and s.memory is not None and s.memory["anon"] == 1
    assert Sample("/x").memory is None and Sample("/x").io is None
    with pytest.raises(AttributeError):
        s.memory = None  # type: ignore[misc]


class Batch:
    """A struct cgstream_event array as the library hands it out, with
    memory and io behind the pointers (kept alive here)."""

    def __init__(self) -> None:
        self.keep: list[Any] = []
        self.events: list[_lib.EventStruct] = []

    def c_names(self, names: tuple[str, ...]) -> Any:
        arr = (ctypes.c_char_p * len(names))(*(n.encode() for n in names))
        self.keep.append(arr)
        return ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p))

    def sample(self, path: str, cid: int, names: Any = None, values: tuple[int, ...] = (),
               devices: tuple[tuple[int, ...], ...] = (), parent: int = 1) -> None:
        ev = _lib.EventStruct()
        ev.type = _lib.EVENT_SAMPLE
        p = ctypes.create_string_buffer(path.encode())
        self.keep.append(p)
        ev.path = ctypes.cast(p, ctypes.c_char_p)
        ev.sample.present = _lib.F_CGROUP_ID | _lib.F_SEQ | _lib.F_USAGE
        ev.sample.cgroup_id, ev.sample.seq, ev.sample.usage_usec = cid, 5, 1000 + cid
        ev.parent_id = parent
        ev.controllers = _lib.CTRL_CPU
        if names is not None:
            m = _lib.MemoryStruct(seq=6, flush_time_usec=60, nr=len(values))
            m.names = names
            vals = (ctypes.c_uint64 * len(values))(*values)
            m.values = ctypes.cast(vals, ctypes.POINTER(ctypes.c_uint64))
            self.keep += [m, vals]
            ev.memory = ctypes.pointer(m)
            ev.controllers |= _lib.CTRL_MEMORY
        if devices:
            devs = (_lib.IoDeviceStruct * len(devices))(*(_lib.IoDeviceStruct(*d)
                                                           for d in devices))
            io = _lib.IoStruct(seq=7, flush_time_usec=70, nr_devices=len(devices))
            io.devices = ctypes.cast(devs, ctypes.POINTER(_lib.IoDeviceStruct))
            self.keep += [devs, io]
            ev.io = ctypes.pointer(io)
            ev.controllers |= _lib.CTRL_IO
        self.events.append(ev)

    def raw(self) -> bytes:
        return b"".join(bytes(ev) for ev in self.events)


def test_decode_memory_and_io_behind_the_event() -> None:
    batch = Batch()
    shared = batch.c_names(NAMES)
    batch.sample("/a", 10, shared, (1, 2, 3, 4, 5), ((7, 0, 4096, 8192, 1, 2, 0, 0),))
    batch.sample("/a/b", 11, shared, (6, 7, 8, 9, 10))
    batch.sample("/a/c", 12, batch.c_names(("anon", "current")), (11, 12),
                 ((8, 16, 1, 2, 3, 4, 5, 6), (259, 0, 0, 0, 0, 0, 0, 0)))
    batch.sample("/a/d", 13)
    a, b, c, d = _stream._decode_events(batch.raw(), tree=True)
    assert isinstance(a, Sample) and a.memory is not None and a.io is not None
    assert (a.cgroup, a.cgroup_id, a.parent_id, a.usage_usec) == ("/a", 10, 1, 1010)
    assert dict(a.memory) == dict(zip(NAMES, (1, 2, 3, 4, 5)))
    assert (a.memory.seq, a.memory.flush_time_usec) == (6, 60)
    assert (a.io.seq, a.io.flush_time_usec) == (7, 70)
    assert list(a.io.values()) == [IoDevice(7, 0, 4096, 8192, 1, 2, 0, 0)]
    assert isinstance(b, Sample) and b.memory is not None and b.io is None
    assert b.memory["events.oom_kill"] == 10 and b.memory.names is a.memory.names
    assert isinstance(c, Sample) and c.memory is not None and c.io is not None
    assert dict(c.memory) == {"anon": 11, "current": 12}
    assert list(c.io) == ["8:16", "259:0"] and c.io["8:16"].dios == 6
    assert isinstance(d, Sample) and d.memory is None and d.io is None
    assert d.system_usec is None, "absent cpu fields stay None"


def test_struct_sizes_match_the_header_layout() -> None:
    """The Python tables' struct sizes (the header test compiles the C
    ones: test_library.test_struct_layout_matches_the_header)."""
    assert ctypes.sizeof(_lib.IoDeviceStruct) == 56
    assert ctypes.sizeof(_lib.MemoryStruct) == 40
    assert ctypes.sizeof(_lib.IoStruct) == 56  # 1.3: each device's values by name


@pytest.mark.usefixtures("library")
@pytest.mark.parametrize("controllers, error", [
    (("disk",), ValueError), ((), ValueError), ("cpu", TypeError), ((1,), ValueError)])
def test_bad_controllers_never_reach_c(cgroup: Path, controllers: Any, error: type) -> None:
    with pytest.raises(error):
        pycgstream.Stream(cgroup, controllers=controllers)
    with pytest.raises(error):
        pycgstream.Tree(cgroup, controllers=controllers)


# --- the emulation on the host's cgroup2 ------------------------------------

def has_controller(cgroup: Path, controller: str) -> bool:
    return (cgroup / f"{controller}.stat").exists()


def enable(cgroups: Cgroups, controller: str) -> Path:
    """A scratch cgroup with @controller's stat file, or a skip."""
    parent = cgroups.make(controller)
    try:
        (parent / "cgroup.subtree_control").write_text(f"+{controller}")
    except OSError as e:
        pytest.skip(f"cannot enable {controller} below {cgroups.mount}: {e.strerror}")
    child = cgroups.make("leaf", parent=parent)
    if not has_controller(child, controller):
        pytest.skip(f"no {controller}.stat in {child}")
    return child


@pytest.mark.usefixtures("library")
def test_a_cgroup_without_the_controllers_files(cgroups: Cgroups) -> None:
    """memory and io asked of a cgroup without memory.stat and io.stat (the
    controllers not enabled for it): ENOMEDIUM, never made-up zeros; the
    default (cpu, and pressure where the kernel has PSI) carries no memory
    or io."""
    top = cgroups.make("plain")
    child = cgroups.make("child", parent=top)
    if has_controller(top, "memory") or has_controller(top, "io"):
        pytest.skip("memory or io enabled here")
    for make in (pycgstream.Stream, pycgstream.Tree):
        with pytest.raises(OSError) as e:
            make(top, mode="fallback", controllers=pycgstream.CONTROLLERS)
        assert e.value.errno == errno.ENOMEDIUM
    psi = ("pressure",) if (top / "cpu.pressure").exists() else ()
    with pycgstream.Tree(top, mode="fallback", fallback_interval_ms=50) as tree:
        assert tree.controllers == ("cpu", *psi)
        samples = [ev for ev in next(tree) if isinstance(ev, Sample)]
        assert {s.cgroup for s in samples} == {str(top), str(child)}
        assert all(s.usage_usec is not None and s.memory is None and s.io is None
                   for s in samples)


@pytest.mark.usefixtures("library")
def test_memory_in_the_emulation(cgroups: Cgroups) -> None:
    leaf = enable(cgroups, "memory")
    with pycgstream.Stream(leaf, mode="fallback", fallback_interval_ms=50,
                           controllers=("memory",)) as stream:
        assert stream.controllers == ("memory",) and stream.modes == {"memory": "fallback"}
        s = next(stream)
        assert s.usage_usec is None, "cpu not asked for"
        assert s.memory is not None
        stat = dict(line.split() for line in (leaf / "memory.stat").read_text().splitlines())
        assert list(s.memory)[:len(stat)] == list(stat), "memory.stat's keys, in its order"
        assert "current" in s.memory and "events.oom_kill" in s.memory
        assert s.memory["current"] >= 0


@pytest.mark.usefixtures("library")
def test_tree_sync_in_the_emulation(cgroups: Cgroups) -> None:
    """Tree.sync(): a batch now, however long the timer's period."""
    top = cgroups.make("sync")
    cgroups.make("a", parent=top)
    with pycgstream.Tree(top, mode="fallback", fallback_interval_ms=3_600_000) as tree:
        first = tree.sync(timeout=30)
        assert sum(isinstance(ev, Sample) for ev in first) == 2
        again = tree.sync(timeout=30)
        assert sum(isinstance(ev, Sample) for ev in again) == 2
        seqs = {ev.seq for ev in again if isinstance(ev, Sample)}
        assert seqs and min(seqs) > max(ev.seq or 0 for ev in first if isinstance(ev, Sample))


@pytest.mark.usefixtures("library")
def test_interval_of_a_controller_without_the_feature(mount: Path) -> None:
    if (mount / "memory.stat.stream_interval").exists():
        pytest.skip("this kernel streams memory")
    with pytest.raises(OSError) as e:
        pycgstream.get_interval(controller="memory")
    assert e.value.errno == errno.EOPNOTSUPP, os.strerror(e.value.errno or 0)
    with pytest.raises(ValueError):
        pycgstream.get_interval(controller="disk")
