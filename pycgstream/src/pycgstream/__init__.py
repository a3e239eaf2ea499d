"""pycgstream: cgroup v2 CPU statistics once per kernel flush, from Python.

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

    with pycgstream.Tree("system.slice") as tree:   # a whole subtree
        for batch in tree:               # Added/Removed/Failed, then a Sample per cgroup
            ...

Errors from the library are OSError subclasses carrying the errno
(FileNotFoundError for a missing cgroup, PermissionError, OSError with
errno.EOPNOTSUPP for kernel mode on a kernel without cpu.stat.stream).
Any thread may close() an object; a wait or iteration on it elsewhere ends.
"""

from ._lib import LibraryNotFoundError, load as load_library
from ._stream import (
    Added,
    CgroupRemovedError,
    Event,
    Failed,
    Group,
    Removed,
    Sample,
    Stream,
    Tree,
    cpu_percent,
    get_interval,
    library_version,
    parse,
    resolve_path,
    set_interval,
)

__all__ = [
    "Added",
    "CgroupRemovedError",
    "Event",
    "Failed",
    "Group",
    "LibraryNotFoundError",
    "Removed",
    "Sample",
    "Stream",
    "Tree",
    "cpu_percent",
    "get_interval",
    "library_version",
    "load_library",
    "parse",
    "resolve_path",
    "set_interval",
]

__version__ = "1.1.0"
