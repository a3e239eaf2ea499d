"""pycgstream: cgroup v2 cpu, memory and io statistics and pressure stall
information once per kernel flush, from Python.

A binding of libcgstream (ctypes, no compiler needed).  The C library is
loaded on first use: from $CGSTREAM_LIBRARY when set, else the one that
came with the package (installed with it, or built in the same checkout),
else from the dynamic loader's path (libcgstream.so.1);
LibraryNotFoundError (an ImportError) says how to get it otherwise.

    with pycgstream.Stream("system.slice") as stream:
        for sample in stream:            # one Sample per flush
            print(sample.usage_usec)

    async with pycgstream.Group(["a", "b"]) as group:
        async for batch in group:        # one list of events per flush
            ...

    with pycgstream.Tree("system.slice", controllers=("cpu", "memory", "io")) as tree:
        for batch in tree:               # Added/Removed/Failed, then a Sample per cgroup
            ...                          # sample.memory["anon"], sample.io["7:0"].wbytes

    with pycgstream.Tree("/", controllers=("cpu", "pressure")) as tree:
        for batch in tree:               # sample.pressure["memory.some.total"] (usec),
            ...                          # pycgstream.pressure_percent(before, after, "io.full")

    with pycgstream.Tree("/", controllers=("memory",)) as tree:
        batch = tree.sync()              # now: the latest completed flush, no waiting

    with pycgstream.Tree("/", changes=True) as tree:
        for batch in tree:               # Changed for what changed, Removed with its
            ...                          # final values (removed.values, removed.final)

Errors from the library are OSError subclasses carrying the errno
(FileNotFoundError for a missing cgroup, PermissionError, OSError with
errno.EOPNOTSUPP for kernel mode on a kernel without cpu.stat.stream).
Any thread may close() an object; a wait or iteration on it elsewhere ends.
"""

from ._lib import LibraryNotFoundError, load as load_library
from ._stream import (
    CONTROLLERS,
    Added,
    CgroupRemovedError,
    Changed,
    Event,
    Failed,
    Group,
    Io,
    IoDevice,
    Memory,
    Pressure,
    Probe,
    Publication,
    Removed,
    Sample,
    Stream,
    Tree,
    Values,
    cpu_percent,
    escape_name,
    get_interval,
    library_version,
    parse,
    pressure_percent,
    probe,
    resolve_path,
    set_interval,
    shown_path,
)

__all__ = [
    "CONTROLLERS",
    "Added",
    "CgroupRemovedError",
    "Changed",
    "Event",
    "Failed",
    "Group",
    "Io",
    "IoDevice",
    "LibraryNotFoundError",
    "Memory",
    "Pressure",
    "Probe",
    "Publication",
    "Removed",
    "Sample",
    "Stream",
    "Tree",
    "Values",
    "cpu_percent",
    "escape_name",
    "get_interval",
    "library_version",
    "load_library",
    "parse",
    "pressure_percent",
    "probe",
    "resolve_path",
    "set_interval",
    "shown_path",
]

__version__ = "1.4.0"
