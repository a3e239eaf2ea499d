"""pycgstream export: the cpu, memory and io statistics and the pressure
stall information of every cgroup of some subtrees, served to Prometheus.

The exporter works at Prometheus' pace, not the kernel's.  A scrape asks
each subtree's :class:`~pycgstream.Tree` for the latest completed flush
(:meth:`Tree.sync`: in subtree mode one read of each controller's subtree
file, whatever the number of cgroups; no flush, no file per cgroup), turns
that batch into metric families through prometheus_client's public API
(:class:`CgroupCollector`, a custom collector) and serves them.  Between
scrapes it does nothing: no thread wakes, nothing is read.  Scrapes that
arrive together share one sync.  The emulation (a controller in fallback
mode, on kernels without its stream) is the exception: reading its
statistics files makes the kernel flush, so it keeps its timer, one thread
reads each cycle as it comes, and a scrape serves the latest.

Built on the official client library, prometheus_client (0.16, Debian 12's,
or later): its registry, the process and Python collectors, the text
format and OpenMetrics (by the scraper's Accept header), gzip.  The HTTP
server is the standard library's WSGI server with a thread per request, as
prometheus_client's own, with clearer errors and a clean stop.

This is pycgstream's only command: ``python -m pycgstream export`` (the
``pycgstream`` script once installed).  Watching cgroups and setting the
kernel's interval from a shell is the C ``cgstream`` command's job.
"""

from __future__ import annotations

import argparse
import errno
import fnmatch
import gc
import gzip
import ipaddress
import os
import select
import signal
import socket
import socketserver
import sys
import threading
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, NoReturn, Optional, Sequence
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from . import _front, _lib
from ._lib import LibraryNotFoundError
from ._stream import (
    CONTROLLERS,
    CgroupRemovedError,
    Event,
    Failed,
    Removed,
    Sample,
    Tree,
    _make_opts,
    _MODES,
    resolve_path,
    shown_path,
)

PROG = "pycgstream"

# Not (yet) in Prometheus' "Default port allocations" wiki page: its
# 9100-9999 range has been full since 2023 and allocations went on above
# 10000 (10019 in 2024).  10340 is well above where those had got to, and
# is not any Prometheus component's or common exporter's port.  Register it
# on that page before announcing a release.
DEFAULT_PORT = 10340
# Loopback unless the admin says otherwise: per-service numbers of a host
# are not for every network it is on.
DEFAULT_LISTEN = f"127.0.0.1:{DEFAULT_PORT}"
METRICS_PATH = "/metrics"

# The exit statuses are the cgstream command's, read through libcgstream
# (its table: _front.exit_statuses(); EXIT_OK, EXIT_FAILURE, EXIT_USAGE,
# EXIT_NO_CGROUP, EXIT_PERMISSION, EXIT_NO_KERNEL as attributes of this
# module), plus the exporter's own: prometheus_client is not installed.
# cgstream-exporter.service's RestartPreventExitStatus= lists the
# configuration errors, 2-6.
EXIT_NO_CLIENT = 6
# When libcgstream itself cannot be loaded its table cannot be read: the
# failure status every Unix command has
EXIT_NO_LIBRARY = 1


def __getattr__(name: str) -> int:
    """EXIT_OK, EXIT_USAGE, ...: the library's exit statuses by name."""
    if name.startswith("EXIT_"):
        try:
            return _front.exit_status(name[5:].lower().replace("_", "-"))
        except KeyError:
            pass
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def status(name: str) -> int:
    """The exit status the library's table names @name."""
    return _front.exit_status(name)

NO_CLIENT = ("the exporter needs the Python package prometheus_client (>= 0.16): "
             "apt-get install python3-prometheus-client, or pip install prometheus_client")

# How long a scrape waits for a batch (the emulation's io_uring reads, a
# tree of many cgroups in kernel mode): Prometheus' default scrape timeout.
SYNC_TIMEOUT = 10.0


class Exit(Exception):
    """Stop with a message on stderr and an exit status."""

    def __init__(self, status: int, message: Optional[str] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Stop(Exception):
    """SIGTERM: stop like Ctrl-C does."""


def client() -> ModuleType:
    """prometheus_client, or Exit(EXIT_NO_CLIENT) saying how to get it."""
    try:
        import prometheus_client
        import prometheus_client.core  # noqa: F401 (the metric families)
        import prometheus_client.exposition  # noqa: F401 (choose_encoder)
    except ImportError:
        raise Exit(EXIT_NO_CLIENT, NO_CLIENT) from None
    return prometheus_client


def log(message: str) -> None:
    print(f"{PROG} export: {message}", file=sys.stderr, flush=True)


# --- what is exported: one table per controller ----------------------------

@dataclass(frozen=True)
class Metric:
    """One per-cgroup metric family: its name (without the unit suffix
    and, for counters, without _total), help, unit ("seconds", "bytes" or
    ""), whether it is a counter, what it is made of (a Sample field and
    its divisor to the base unit; a memory key; an io field), and whether
    the default set has it (``--stats all`` serves every one)."""

    name: str
    help: str
    unit: str
    counter: bool
    source: str
    divisor: int = 1
    default: bool = True

    @property
    def family(self) -> str:
        """The family's name, as prometheus_client makes it (the unit appended)."""
        if self.unit and not self.name.endswith("_" + self.unit):
            return f"{self.name}_{self.unit}"
        return self.name

    @property
    def sample(self) -> str:
        """Its samples' name: a counter's ends in _total."""
        return self.family + "_total" if self.counter else self.family


# cpu.stat's fields: the library's table (_lib.SAMPLE_FIELDS, checked against
# cgstream_sample_field() at load), those that are statistics each with the
# name and help Prometheus shows it under, in seconds where it is a time; by
# default usage and throttling (which exists only where the cpu controller is
# enabled).  (The table's seq, flush times and id are the exporter's own
# metrics or labels.)
_CPU_NAMES = {
    "usage_usec": ("cgroup_cpu_usage_seconds", "CPU time the cgroup's tasks used", True),
    "user_usec": ("cgroup_cpu_user_seconds", "CPU time the cgroup's tasks used in user mode",
                  False),
    "system_usec": ("cgroup_cpu_system_seconds", "CPU time the cgroup's tasks used in kernel "
                    "mode", False),
    "nice_usec": ("cgroup_cpu_nice_seconds", "CPU time the cgroup's tasks used at a positive "
                  "nice value", False),
    "nr_periods": ("cgroup_cpu_periods", "Bandwidth enforcement periods elapsed (cpu "
                   "controller on)", True),
    "nr_throttled": ("cgroup_cpu_throttled_periods", "Enforcement periods in which the cgroup "
                     "was throttled", True),
    "throttled_usec": ("cgroup_cpu_throttled_seconds", "Time the cgroup's tasks were "
                       "throttled", True),
    "nr_bursts": ("cgroup_cpu_bursts", "Enforcement periods in which the cgroup used burst "
                  "time", False),
    "burst_usec": ("cgroup_cpu_burst_seconds", "Burst time the cgroup used", False),
}
CPU_METRICS = tuple(
    Metric(name, f"{what} (cpu.stat {field})", "seconds" if field.endswith("_usec") else "",
           True, field, 1_000_000 if field.endswith("_usec") else 1, default)
    for field, _ in _lib.SAMPLE_FIELDS if field in _CPU_NAMES
    for name, what, default in [_CPU_NAMES[field]])

# The memory values served by default: what fleet dashboards chart (usage,
# the working set's inputs, swap, OOM kills and limit hits, page faults).
# --stats all serves every value the kernel names.
MEMORY_DEFAULT = ("current", "swap.current", "anon", "file", "inactive_file", "pgfault",
                  "pgmajfault", "events.oom_kill", "events.max", "events.high")

# memory.stat prints sizes in bytes and events as counts; its counts are
# the page and swap events and the workingset and NUMA counters, and
# memory.events' keys are counts of events.  Every other value is a size.
MEMORY_COUNT_PREFIXES = ("pg", "swp", "zswp", "thp_", "numa_", "workingset_", "events.")


def memory_metric(key: str) -> Metric:
    """The metric family of one memory value, named after the kernel's key:
    sizes are gauges ``cgroup_memory_<key>_bytes``, counts counters
    ``cgroup_memory_<key>_total`` ("." becomes "_")."""
    base = "cgroup_memory_" + "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_"
                                      for c in key)
    if key.startswith(MEMORY_COUNT_PREFIXES):
        if key.startswith("events."):
            what = f"memory.events {key[7:]} (hierarchical): times it happened"
        else:
            what = f"memory.stat {key}: events"
        return Metric(base, what, "", True, key)
    if key == "current":
        what = "memory.current: memory the cgroup uses"
    elif key == "swap.current":
        what = "memory.swap.current: swap the cgroup uses"
    else:
        what = f"memory.stat {key}"
    return Metric(base, what + " (bytes)", "bytes", False, key)


# io.stat's counters, per device: the library's table (_lib.IO_FIELDS, checked
# against cgstream_io_field() at load), each with the name, help and unit
# Prometheus shows it under; by default bytes and operations read and written
_IO_NAMES = {
    "rbytes": ("cgroup_io_read_bytes", "Bytes read", "bytes", True),
    "wbytes": ("cgroup_io_written_bytes", "Bytes written", "bytes", True),
    "rios": ("cgroup_io_reads", "Read operations", "", True),
    "wios": ("cgroup_io_writes", "Write operations", "", True),
    "dbytes": ("cgroup_io_discarded_bytes", "Bytes discarded", "bytes", False),
    "dios": ("cgroup_io_discards", "Discard operations", "", False),
}
IO_METRICS = tuple(
    Metric(name, f"{what} (io.stat {field})", unit, True, field, default=default)
    for field in _lib.IO_FIELDS
    for name, what, unit, default in [_IO_NAMES[field]])


# Pressure stall information: the kernel's totals (usec) of the time some of
# a cgroup's tasks waited for a resource ("some": waiting) and all of its
# non-idle tasks did at once ("full": stalled), as counters in seconds, named
# beside cAdvisor's container_pressure_<resource>_{waiting,stalled}_seconds_total.
# The kernel's averages (avg10, ...) are not served: rate() of the totals is
# the share of time over any window.  irq has only "full" (and only where
# the kernel has irq.pressure).
_PSI_RESOURCES = (("cpu", "the CPU"), ("memory", "memory"), ("io", "io"),
                  ("irq", "IRQ handling"))
PRESSURE_METRICS = tuple(
    Metric(f"cgroup_pressure_{res}_{'waiting' if kind == 'some' else 'stalled'}_seconds",
           (f"Time in which at least one of the cgroup's tasks was stalled on {what}"
            if kind == "some" else
            f"Time in which all of the cgroup's non-idle tasks were stalled on {what} at once") +
           f" ({res}.pressure {kind} total)", "seconds", True, f"{res}.{kind}.total", 1_000_000)
    for res, what in _PSI_RESOURCES for kind in ("some", "full")
    if (res, kind) != ("irq", "some"))


# The working set as cAdvisor computes it (container_memory_working_set_bytes):
# memory.current less the inactive page cache, which reclaim takes first;
# 0 rather than negative when inactive_file runs ahead of current (they are
# not read in the same instant)
WORKING_SET = Metric("cgroup_memory_working_set", "memory.current - memory.stat inactive_file, "
                     "floored at 0 (cAdvisor's working set; bytes)", "bytes", False,
                     "working_set")


# --- which cgroups of a subtree are served: --max-depth, --include, --exclude -------

@dataclass(frozen=True)
class Filters:
    """``max_depth``: levels below the watched cgroup (0: itself only;
    None: every level).  ``include``/``exclude``: fnmatch globs on the path
    relative to the watched cgroup ("." for itself; ``*`` matches "/" too),
    as the name's bytes are (os.fsdecode()d), not the escaped label.  A
    cgroup is served when it is within the depth, matches an include (or
    there are none) and no exclude."""

    max_depth: Optional[int] = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.max_depth is not None or bool(self.include or self.exclude)

    def serves(self, relative: str) -> bool:
        depth = 0 if relative == "." else relative.count("/") + 1
        if self.max_depth is not None and depth > self.max_depth:
            return False
        if self.include and not any(fnmatch.fnmatchcase(relative, g) for g in self.include):
            return False
        return not any(fnmatch.fnmatchcase(relative, g) for g in self.exclude)

    def __str__(self) -> str:
        said = [f"--max-depth {self.max_depth}"] if self.max_depth is not None else []
        said += [f"--include '{g}'" for g in self.include]
        said += [f"--exclude '{g}'" for g in self.exclude]
        return " ".join(said)


# --- rendering: a cgroup's series lines, made when its values change ---------

def _label_value(text: str) -> str:
    """Prometheus' escaping of a label value (both formats): \\, \\n, \"."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class _One:
    """A collector of one family, for prometheus_client's encoders."""

    def __init__(self, family: Any) -> None:
        self._family = family

    def collect(self) -> list[Any]:
        return [self._family]


class Render:
    """What a cgroup's values become: per metric family, its lines (the
    same in the text format and OpenMetrics: ``name{labels} value``, the
    value as prometheus_client's floatToGoString writes it), and each
    family's HELP/TYPE/UNIT header in each format, rendered once by
    prometheus_client itself from an empty family.  Families are listed in
    the order they were first met (``families``)."""

    def __init__(self, every_stat: bool = False) -> None:
        prom = client()
        from prometheus_client.openmetrics.exposition import generate_latest as om_latest
        from prometheus_client.utils import floatToGoString
        self._core: Any = prom.core
        self._text_latest: Any = prom.generate_latest
        self._om_latest: Any = om_latest
        self._fmt: Any = floatToGoString
        self._memory_keys: Optional[tuple[str, ...]] = None if every_stat else MEMORY_DEFAULT
        self._cpu_metrics = tuple(m for m in CPU_METRICS if every_stat or m.default)
        self._io_metrics = tuple(m for m in IO_METRICS if every_stat or m.default)
        self._pressure_keys = tuple(m.source for m in PRESSURE_METRICS)
        self._memory_metrics: dict[str, Metric] = {}
        self._headers: dict[Metric, tuple[str, str]] = {}
        self._lock = threading.Lock()
        # every family any cgroup had, in the order first met; the default
        # set's fixed ones first, so that output order does not depend on
        # which cgroup came first
        self.families: dict[Metric, None] = dict.fromkeys(self._cpu_metrics)
        if self._memory_keys is not None:
            self.families.update(dict.fromkeys(map(self._memory_metric, self._memory_keys)))
        self.families[WORKING_SET] = None
        self.families.update(dict.fromkeys(self._io_metrics))
        self.families.update(dict.fromkeys(PRESSURE_METRICS))

    def _memory_metric(self, key: str) -> Metric:
        m = self._memory_metrics.get(key)
        if m is None:
            m = self._memory_metrics[key] = memory_metric(key)
        return m

    def header(self, m: Metric, openmetrics: bool) -> str:
        """@m's HELP, TYPE (and UNIT) lines as prometheus_client writes them."""
        known = self._headers.get(m)
        if known is None:
            make = self._core.CounterMetricFamily if m.counter else self._core.GaugeMetricFamily
            labels = ("cgroup", "device") if m in self._io_metrics else ("cgroup",)
            family = make(m.name, m.help, labels=labels, unit=m.unit)
            om = self._om_latest(_One(family)).decode()
            assert om.endswith("# EOF\n"), om
            known = self._headers[m] = (self._text_latest(_One(family)).decode(),
                                        om[:-len("# EOF\n")])
        return known[openmetrics]

    def cgroup(self, label: str, s: Sample) -> dict[Metric, str]:
        """One cgroup's lines, per family: @label is its escaped
        ``cgroup="..."``."""
        fmt, out = self._fmt, {}
        for m in self._cpu_metrics:
            value = getattr(s, m.source)
            if value is not None:
                out[m] = f"{m.sample}{{{label}}} {fmt(value / m.divisor)}\n"
        memory = s.memory
        if memory is not None:
            keys = self._memory_keys if self._memory_keys is not None else memory.names
            for key, value in zip(keys, memory.pick(keys)):
                if value is not None:
                    m = self._memory_metric(key)
                    out[m] = f"{m.sample}{{{label}}} {fmt(value)}\n"
            current, inactive = memory.pick(("current", "inactive_file"))
            if current is not None and inactive is not None:
                out[WORKING_SET] = (f"{WORKING_SET.sample}{{{label}}} "
                                    f"{fmt(max(0, current - inactive))}\n")
        if s.io:
            devices = [(f'{label},device="{name}"}} ', dev) for name, dev in s.io.items()]
            for m in self._io_metrics:
                attr, name = m.source, m.sample
                out[m] = "".join(f"{name}{{{labels}{fmt(getattr(dev, attr))}\n"
                                 for labels, dev in devices)
        if s.pressure is not None:
            for m, value in zip(PRESSURE_METRICS, s.pressure.pick(self._pressure_keys)):
                if value is not None:
                    out[m] = f"{m.sample}{{{label}}} {fmt(value / m.divisor)}\n"
        if not out.keys() <= self.families.keys():
            with self._lock:
                self.families.update(dict.fromkeys(out))
        return out

    def family_list(self) -> list[Metric]:
        """The families met so far, in order."""
        with self._lock:
            return list(self.families)


# --- state: per subtree, each served cgroup's values and lines --------------

class _Row:
    """A served cgroup: its escaped label, latest sample, and lines per
    family (None: to render, its values changed since)."""

    __slots__ = ("label", "sample", "lines")

    def __init__(self, label: str, sample: Sample) -> None:
        self.label = label
        self.sample = sample
        self.lines: Optional[dict[Metric, str]] = None


def _values(s: Sample) -> tuple[Any, ...]:
    """What a sample's lines are made of, to compare two samples: the cpu
    fields, the memory and pressure values' names and bytes, io's devices."""
    memory, pressure = s.memory, s.pressure
    return (s.usage_usec, s.user_usec, s.system_usec, s.nice_usec, s.nr_periods,
            s.nr_throttled, s.throttled_usec, s.nr_bursts, s.burst_usec,
            None if memory is None else (memory.names, memory._raw),
            None if s.io is None else tuple(s.io.values()),
            None if pressure is None else (pressure.names, pressure._raw))


class Subtree:
    """One watched subtree: its Tree (opened with ``changes=True``: a
    batch has a Changed for each cgroup whose values changed), the cgroups
    served (those the filters let through, in the order first seen) with
    their latest values, and their rendered lines, kept per family across
    scrapes: a scrape renders only the cgroups whose values changed.

    ``on_scrape`` (every controller streamed by the kernel): a scrape
    syncs the tree.  Otherwise (some controller emulated) the exporter's
    main thread applies each cycle as the tree's timer brings it."""

    def __init__(self, tree: Tree, mount: str, filters: Filters = Filters()) -> None:
        self.tree = tree
        self.modes = tree.modes
        self.on_scrape = "fallback" not in self.modes.values()
        self._mount = mount
        self.label = self.cgroup_label(tree.path)
        self.filters = filters
        self.gone = False
        # each controller's latest publication as of the tree's last cycle
        # (Tree.publications()): (seq, CLOCK_MONOTONIC usec)
        self.flushes: dict[str, tuple[int, int]] = {}
        self.flush_missed: Optional[int] = None     # the cpu flusher's skipped cycles
        self.cycles = 0                             # batches read
        self.errors = 0                             # cgroups that could not be read
        self._rows: dict[int, _Row] = {}            # served, by cgroup id
        self._serves: dict[int, bool] = {}          # the filters' answer, by cgroup id
        self._said_none = False
        self._failing: set[int] = set()     # said once, until they read again
        self._dirty: dict[int, None] = {}   # rows to render, in order
        self._fallen: set[int] = set()      # gone since the last render
        # per family: each row's lines (in row order), and their
        # concatenation as of the last render (None: to join again)
        self._lines: dict[Metric, dict[int, str]] = {}
        self._joined: dict[Metric, Optional[str]] = {}
        self._lock = threading.Lock()       # one sync at a time
        self._state = threading.Lock()      # the rows and lines
        self._synced_from = -1.0            # when the latest sync began (monotonic)

    def cgroup_label(self, path: str) -> str:
        """A cgroup's path as every cgstream output shows it (below the
        mount, escaped: a name of any bytes makes a valid label)."""
        return shown_path(path, self._mount)

    def _relative(self, path: str) -> str:
        rest = path[len(self.tree.path):].strip("/")
        return rest or "."

    def _served(self, key: int, path: str) -> bool:
        serves = self._serves.get(key)
        if serves is None:
            serves = self._serves[key] = (not self.filters
                                          or self.filters.serves(self._relative(path)))
        return serves

    def _drop(self, key: int) -> None:
        if self._rows.pop(key, None) is not None:
            self._dirty.pop(key, None)
            self._fallen.add(key)

    def apply(self, batch: Sequence[Event]) -> None:
        """One cycle's events (several cycles' in a row: each cgroup's
        latest sample).  A cgroup removed, or that could not be read, is
        left out: never served stale.  A sample whose values are those
        already served is no change."""
        with self._state:
            self.cycles += 1
            for ev in batch:
                if isinstance(ev, Sample):
                    self._take(ev)
                elif isinstance(ev, (Removed, Failed)):
                    key = ev.cgroup_id or 0
                    self._drop(key)
                    if isinstance(ev, Removed):
                        self._serves.pop(key, None)
                        self._failing.discard(key)
                        continue
                    self.errors += 1
                    if key not in self._failing:    # not a line per cycle
                        self._failing.add(key)
                        log(f"{self.cgroup_label(ev.cgroup)}: {os.strerror(ev.error.errno or 0)} "
                            "(left out until it can be read)")
            if self.filters and not self._rows and self._serves and not self._said_none:
                self._said_none = True
                log(f"{self.label}: {self.filters} leave none of its {len(self._serves)} "
                    "cgroups; serving none of them")
            self._published()

    def published(self) -> None:
        """The tree read a cycle that changed nothing (an empty batch):
        its publications moved on all the same."""
        with self._state:
            self._published()

    def _published(self) -> None:
        # The tree's own word (the library's cgstream_tree_publication()),
        # not the newest sample's: with changes only an idle subtree hands
        # out no sample, yet what is served is as of its latest publication.
        pubs = self.tree.publications()
        self.flushes = {c: (p.seq, p.time_usec) for c, p in pubs.items()}
        cpu = pubs.get("cpu")
        self.flush_missed = None if cpu is None else cpu.skipped

    def _take(self, s: Sample) -> None:
        key = s.cgroup_id or 0
        if not self._served(key, s.cgroup):
            return
        self._failing.discard(key)
        row = self._rows.get(key)
        if row is None:
            self._rows[key] = _Row(f'cgroup="{_label_value(self.cgroup_label(s.cgroup))}"', s)
            self._dirty[key] = None
        elif _values(row.sample) != _values(s):
            row.sample = s
            self._dirty[key] = None
        else:
            row.sample = s

    @property
    def served(self) -> int:
        """Cgroups served."""
        return len(self._rows)

    def render(self, render: Render) -> dict[Metric, str]:
        """The lines of every family (that has any), those of the cgroups
        whose values changed since the last render made again, the others'
        as they were."""
        with self._state:
            lines, joined = self._lines, self._joined
            for key in self._fallen:
                for m, per_row in lines.items():
                    if per_row.pop(key, None) is not None:
                        joined[m] = None
            self._fallen.clear()
            reorder: set[Metric] = set()
            last = next(reversed(self._rows), None)
            for key in self._dirty:
                row = self._rows[key]
                new = render.cgroup(row.label, row.sample)
                old = row.lines or {}
                for m in old.keys() - new.keys():
                    del lines[m][key]
                    joined[m] = None
                for m, text in new.items():
                    family = lines.get(m)
                    if family is None:
                        family = lines[m] = {}
                    if m not in old and key != last and family:
                        reorder.add(m)  # a family new to a cgroup not the last: keep row order
                    family[key] = text
                    joined[m] = None
                row.lines = new
            self._dirty.clear()
            for m in reorder:
                lines[m] = {key: row.lines[m] for key, row in self._rows.items()
                            if row.lines is not None and m in row.lines}
            out = {}
            for m, family in lines.items():
                together = joined.get(m)
                if together is None:
                    together = joined[m] = "".join(family.values())
                if together:
                    out[m] = together
            return out

    def close(self) -> None:
        with self._lock:    # not under a scrape's sync
            self.tree.close()
            self.gone = True

    def sync(self, asked_at: float) -> None:
        """Bring the subtree up to the latest completed flush, for a scrape
        that began at @asked_at (monotonic): unless a sync that began after
        it already did (scrapes at once share one).  A tree that fails is
        logged and its subtree served no more; its root's removal too."""
        with self._lock:
            if self.gone or self._synced_from >= asked_at:
                return
            began = time.monotonic()
            try:
                batch = self.tree.sync(SYNC_TIMEOUT)
            except CgroupRemovedError:
                self.gone = True
                log(f"{self.label}: removed; no longer served")
                return
            except (OSError, ValueError) as e:
                self.gone = True
                log(f"{self.label}: {getattr(e, 'strerror', None) or e}; no longer served")
                return
            self.apply(batch)
            self._synced_from = began


# --- a scrape: sync, the cgroups' lines, the exporter's own metrics ----------

class Scrape:
    """What /metrics serves.  ``body()`` syncs the subtrees read at
    scrapes (a sync already under way for an earlier scrape is shared),
    renders the cgroups whose values changed, and returns every family's
    lines under its header, then @registry's own families (the exporter's,
    the process and Python collectors) in the same format by
    prometheus_client's encoder.  OwnCollector in @registry reports the
    subtrees as they are after the sync."""

    def __init__(self, subtrees: Callable[[], Sequence[Subtree]], render: Render,
                 on_gone: Callable[[], None] = lambda: None) -> None:
        self._subtrees = subtrees
        self.render = render
        self._on_gone = on_gone

    def cgroups(self, openmetrics: bool) -> str:
        """The cgroups' families, after a sync."""
        asked_at = time.monotonic()
        subtrees = [st for st in self._subtrees() if not st.gone]
        for st in subtrees:
            if st.on_scrape:
                st.sync(asked_at)
                if st.gone:
                    self._on_gone()
        parts = [st.render(self.render) for st in subtrees if not st.gone]
        header, out = self.render.header, []
        for m in self.render.family_list():
            texts = [p[m] for p in parts if m in p]
            if texts:
                out.append(header(m, openmetrics))
                out.extend(texts)
        return "".join(out)

    def body(self, registry: Any, encoder: Callable[[Any], bytes], openmetrics: bool) -> bytes:
        cgroups = self.cgroups(openmetrics).encode()
        own = encoder(registry)
        return cgroups + own


class OwnCollector:
    """prometheus_client collector of the exporter's own metrics: per
    subtree, the flushes served, cycles, errors, cgroups served, modes."""

    def __init__(self, subtrees: Callable[[], Sequence[Subtree]]) -> None:
        self._subtrees = subtrees
        self._core = client().core

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Iterator[Any]:
        core = self._core
        counter, gauge = core.CounterMetricFamily, core.GaugeMetricFamily
        seq = gauge("cgstream_flush_seq", "Sequence number of the latest flush served, per "
                    "controller (kernel streaming: the kernel's; emulation: its own cycle "
                    "count)", labels=["subtree", "controller"])
        age = gauge("cgstream_flush_age_seconds", "Time from the latest flush served to the "
                    "scrape, per controller (CLOCK_MONOTONIC)", labels=["subtree", "controller"],
                    unit="seconds")
        missed = counter("cgstream_flush_missed", "Cycles the cpu flusher skipped because the "
                         "previous one was late (cpu.stat.stream flush_missed)",
                         labels=["subtree"])
        cycles = counter("cgstream_exporter_cycles", "Batches the exporter read (at scrapes, "
                         "or at the emulation's timer)", labels=["subtree"])
        errors = counter("cgstream_exporter_read_errors", "Cgroups that could not be read "
                         "in a cycle (left out until they can be)", labels=["subtree"])
        cgroups = gauge("cgstream_exporter_cgroups", "Cgroups served", labels=["subtree"])
        mode = gauge("cgstream_exporter_mode", "How each controller of the subtree is read: "
                     "subtree or kernel (the kernel's stat streams, at scrapes), fallback "
                     "(the userspace emulation: a timer and reads of the statistics files)",
                     labels=["subtree", "controller", "mode"])
        now_usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        for st in self._subtrees():
            if st.gone:
                continue
            where = [st.label]
            for controller, (flush_seq, flush_time) in sorted(st.flushes.items()):
                seq.add_metric([st.label, controller], flush_seq)
                age.add_metric([st.label, controller], max(0, now_usec - flush_time) / 1e6)
            if st.flush_missed is not None:
                missed.add_metric(where, st.flush_missed)
            cycles.add_metric(where, st.cycles)
            errors.add_metric(where, st.errors)
            cgroups.add_metric(where, st.served)
            for controller, how in st.modes.items():
                mode.add_metric([st.label, controller, how], 1)
        yield from (seq, age, missed, cycles, errors, cgroups, mode)


# --- HTTP --------------------------------------------------------------------

@dataclass(frozen=True)
class Listen:
    """Where to listen: host "" is every address (IPv6 and IPv4)."""

    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_listen(text: str) -> Listen:
    """HOST:PORT, [IPV6]:PORT or :PORT (every address); PORT 0 picks a free
    one.  argparse type: ArgumentTypeError with what is wrong."""
    def bad(why: str) -> NoReturn:
        raise argparse.ArgumentTypeError(
            f"--listen wants HOST:PORT, [IPV6]:PORT or :PORT, not '{text}': {why}")

    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket:
            bad("no ']' after the IPv6 address")
        if not rest.startswith(":"):
            bad("no port")
        port = rest[1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            bad(f"'{host}' is not an IPv6 address")
    else:
        host, sep, port = text.rpartition(":")
        if not sep:
            bad("no port")
        if ":" in host:
            bad("put an IPv6 address in brackets")
        if any(c.isspace() or c in "/[]" for c in host):
            bad(f"'{host}' is not a host name or address")
    if not port.isascii() or not port.isdigit() or int(port) > 65535:
        bad(f"'{port}' is not a port number (0..65535)")
    return Listen(host, int(port))


class _Handler(WSGIRequestHandler):
    # a scraper that stops talking does not keep a thread forever
    timeout = 60

    def log_message(self, format: str, *args: Any) -> None:
        pass    # no line per scrape in the journal


def _server_class(family: int, dual_stack: bool) -> type[WSGIServer]:
    class Server(socketserver.ThreadingMixIn, WSGIServer):
        address_family = family
        daemon_threads = True
        allow_reuse_address = True

        def server_bind(self) -> None:
            if dual_stack:
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            socketserver.TCPServer.server_bind(self)
            # not HTTPServer's: it looks up the host's DNS name, which can
            # take long and does not matter here
            self.server_name = str(self.server_address[0])
            self.server_port = int(self.server_address[1])
            self.setup_environ()

        def handle_error(self, request: Any, client_address: Any) -> None:
            e = sys.exc_info()[1]
            if not isinstance(e, (ConnectionError, TimeoutError)):
                log(f"serving {client_address[0]}: {e!r}")

    return Server


def _addresses(listen: Listen) -> list[tuple[int, str, bool]]:
    """(family, address, dual stack) to try in order."""
    if listen.host == "":
        return [(socket.AF_INET6, "::", True), (socket.AF_INET, "0.0.0.0", False)]
    try:
        infos = socket.getaddrinfo(listen.host, listen.port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise Exit(status("usage"), f"--listen {listen}: cannot resolve "
                   f"'{listen.host}': {e.strerror}") from None
    except OSError as e:    # EMFILE, ENOMEM: said in one line, not a traceback
        raise Exit(status("failure"), f"--listen {listen}: {e.strerror}") from None
    return [(fam, str(addr[0]), False) for fam, _, _, _, addr in infos
            if fam in (socket.AF_INET, socket.AF_INET6)]


def bind(listen: Listen, app: Callable[..., Any]) -> WSGIServer:
    """A WSGI server listening at @listen; Exit with a clear message when
    it cannot."""
    err: Optional[OSError] = None
    for family, address, dual in _addresses(listen):
        try:
            server = _server_class(family, dual)((address, listen.port), _Handler)
        except OSError as e:
            if e.errno == errno.EAFNOSUPPORT:   # no IPv6 in this kernel
                err = err or e
                continue
            err = e
            break
        server.set_app(app)
        return server
    where = f"cannot listen on {listen}"
    code = err.errno if err is not None else None
    if code == errno.EADDRINUSE:
        raise Exit(status("failure"), f"{where}: the port is in use (another exporter "
                   "running?); choose another with --listen")
    if code in (errno.EACCES, errno.EPERM):
        raise Exit(status("permission"), f"{where}: permission denied (ports below 1024 "
                   "need CAP_NET_BIND_SERVICE)")
    if code == errno.EADDRNOTAVAIL:
        raise Exit(status("failure"), f"{where}: not an address of this host")
    raise Exit(status("failure"),
               f"{where}: {err.strerror if err is not None else 'no usable address'}")


LANDING = (b"<html><head><title>cgstream exporter</title></head><body>"
           b"<h1>cgstream exporter</h1><p>cgroup cpu, memory, io and pressure statistics: "
           b"<a href=\"metrics\">metrics</a></p></body></html>\n")


class _NoGC:
    """The cycle collector off while a scrape runs (any number at once).
    A scrape makes a few objects per sample (150,000 samples at 10,000
    cgroups) that refcounting frees; none of them is in a cycle, and
    collections triggered by their allocation cost some 15% of the
    scrape."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scrapes = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._scrapes == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._scrapes += 1

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._scrapes -= 1
            if self._scrapes == 0 and self._was_enabled:
                gc.enable()


# gzip as fast as it goes: prometheus_client compresses at level 9, which
# costs several times level 1 for a reply of megabytes that compresses
# about as well either way (the text repeats itself)
GZIP_LEVEL = 1


def _accepts_gzip(environ: dict[str, Any]) -> bool:
    """Accept-Encoding names gzip (with a q above 0)."""
    for coding in str(environ.get("HTTP_ACCEPT_ENCODING", "")).split(","):
        name, *params = coding.split(";")
        if name.strip().lower() != "gzip":
            continue
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        return q > 0
    return False


def wsgi_app(scrape: Scrape, registry: Any) -> Callable[..., Iterable[bytes]]:
    """/metrics: the cgroups' lines and @registry's families, in the text
    format or OpenMetrics as prometheus_client chooses by the Accept
    header (its choose_encoder()), gzipped by Accept-Encoding; /: a page
    that links to it; else 404."""
    choose_encoder = client().exposition.choose_encoder
    no_gc = _NoGC()

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if path == METRICS_PATH:
            method = environ.get("REQUEST_METHOD", "GET")
            if method not in ("GET", "HEAD"):
                start_response("405 Method Not Allowed", [("Allow", "GET, HEAD")])
                return [f"# use GET, not {method}\n".encode()]
            encoder, content_type = choose_encoder(str(environ.get("HTTP_ACCEPT", "")))
            openmetrics = content_type.startswith("application/openmetrics-text")
            with no_gc:     # the reply is made in this call
                body = scrape.body(registry, encoder, openmetrics)
            headers = [("Content-Type", content_type)]
            if _accepts_gzip(environ):
                body = gzip.compress(body, GZIP_LEVEL)
                headers.append(("Content-Encoding", "gzip"))
            start_response("200 OK", headers)
            return [body]
        if path == "/":
            start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
            return [LANDING]
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [f"not found: the metrics are at {METRICS_PATH}\n".encode()]

    return app


# --- the exporter --------------------------------------------------------------

# serve_forever() wakes this often to see whether it is to stop: rarely,
# so that between scrapes the exporter does not run at all; stop_serving()
# wakes it at once instead
SERVE_POLL = 3600.0


def stop_serving(server: WSGIServer) -> None:
    """shutdown() without waiting for serve_forever()'s next poll: a
    connection of our own makes its select() return (again, should the
    first come before shutdown() asked)."""
    stopping = threading.Thread(target=server.shutdown)
    stopping.start()
    host, port = server.server_address[:2]
    while stopping.is_alive():
        try:
            socket.create_connection((str(host), int(port)), timeout=5).close()
        except OSError:
            pass    # it stops at its next poll
        stopping.join(0.2)


class Exporter:
    """Subtrees, their collector in a registry of their own (with the
    process and Python collectors that the default registry has), and an
    HTTP server for it.

    ``listen()`` starts serving in a thread of its own; ``run()`` reads the
    emulated subtrees' cycles as their timers bring them and otherwise
    sleeps, until ``stop()`` (any thread) or until every subtree's root is
    gone; ``close()`` stops serving and closes the trees.
    """

    def __init__(self, trees: Sequence[Tree], mount: str,
                 every_stat: bool = False, filters: Filters = Filters()) -> None:
        prom = client()
        self.subtrees = [Subtree(t, mount, filters) for t in trees]
        self.registry = prom.CollectorRegistry()
        prom.ProcessCollector(registry=self.registry)
        prom.PlatformCollector(registry=self.registry)
        prom.GCCollector(registry=self.registry)
        self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.registry.register(OwnCollector(lambda: self.subtrees))
        self.scrape = Scrape(lambda: self.subtrees, Render(every_stat), self._wake)
        self._stopping = False
        self._server: Optional[WSGIServer] = None
        self._serving: Optional[threading.Thread] = None

    def listen(self, listen: Listen) -> Listen:
        """Start serving; the address really listened on (port 0: the one
        picked)."""
        server = bind(listen, wsgi_app(self.scrape, self.registry))
        self._server = server
        self._serving = threading.Thread(target=server.serve_forever, args=(SERVE_POLL,),
                                         name="cgstream-http", daemon=True)
        self._serving.start()
        host, port = server.server_address[:2]
        return Listen(str(host), int(port))

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass    # already told (the pipe is full), or closed

    def stop(self) -> None:
        """Make run() return (from any thread, or a signal handler)."""
        self._stopping = True
        self._wake()

    def run(self) -> bool:
        """Read the emulated subtrees' cycles as they come, sleep
        otherwise; True when stopped, False when every subtree's root is
        gone.  Exit when reading a tree fails as a whole."""
        poller = select.poll()
        poller.register(self._wake_r, select.POLLIN)
        by_fd: dict[int, Subtree] = {}
        for st in self.subtrees:
            if not st.gone and not st.on_scrape:
                by_fd[st.tree.fileno()] = st
                poller.register(st.tree.fileno(), select.POLLIN)
        while not all(st.gone for st in self.subtrees):
            for fd, _ in poller.poll():
                if fd == self._wake_r:
                    try:
                        os.read(self._wake_r, 4096)
                    except BlockingIOError:
                        pass
                    if self._stopping:
                        return True
                    continue
                st = by_fd[fd]
                try:
                    batch = st.tree.read()
                except CgroupRemovedError:
                    st.gone = True
                    del by_fd[fd]
                    poller.unregister(fd)
                    log(f"{st.label}: removed; no longer served")
                    continue
                except OSError as e:
                    raise Exit(status("failure"), f"reading {st.label}: {e.strerror}") from None
                if batch:   # (empty: no value changed, or the cycle is not complete)
                    st.apply(batch)
                else:
                    st.published()
        return self._stopping

    def close(self) -> None:
        if self._server is not None:
            stop_serving(self._server)
            self._server.server_close()
            self._server = None
        for st in self.subtrees:
            st.close()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1


def sd_notify(state: str) -> None:
    """Tell systemd (Type=notify) about @state, when it asked to know."""
    err = _front.sd_notify(state)
    if err is not None:
        log(f"telling systemd '{state}': {err.strerror}")


def tree_opts(args: argparse.Namespace) -> _lib.OptsStruct:
    """The options the trees are opened with, for the library's messages."""
    return _make_opts(args.mode, args.fallback_interval, None, _MODES, args.controllers)


def open_error(arg: str, e: OSError, args: argparse.Namespace) -> Exit:
    """The exit status and message for a cgroup (or tree) that could not
    be opened: the library's, as the cgstream command says them."""
    code, message = _front.explain(e.errno or errno.EIO, "open", arg, tree_opts(args))
    return Exit(code, message)


def open_trees(args: argparse.Namespace) -> list[Tree]:
    """A tree for each argument not inside another one's; closed again on
    failure.  Each reads the controllers asked for (each must be enabled
    there: the cgstream command's rule), else the default set (cpu, and
    memory, io and pressure where the cgroup has them)."""
    paths = []
    for arg in args.cgroups:
        try:
            paths.append(resolve_path(arg))
        except OSError as e:
            raise open_error(arg, e, args) from None
    trees: list[Tree] = []
    try:
        for arg, path, keep in zip(args.cgroups, paths, _front.distinct_subtrees(paths)):
            if not keep:
                continue    # a cgroup below another argument is in that one's tree
            try:
                trees.append(Tree(path, mode=args.mode, controllers=args.controllers,
                                  fallback_interval_ms=args.fallback_interval, changes=True))
            except OSError as e:
                raise open_error(arg, e, args) from None
        return trees
    except BaseException:
        for t in trees:
            t.close()
        raise


def say_notices(subtrees: Sequence[Subtree], args: argparse.Namespace) -> None:
    """The library's notices, once: a controller emulated (how often it is
    read), a streamed one whose kernel interval is 0 (its values do not
    change until it is set)."""
    modes: dict[str, str] = {}
    for st in subtrees:
        for controller, how in st.modes.items():
            if modes.get(controller) != "fallback":
                modes[controller] = how
    for line in _front.notices(modes, _lib.NOTICE_EMULATION | _lib.NOTICE_STREAMING_OFF,
                               args.mode, args.fallback_interval):
        log(line)


def _on_sigterm(signum: int, frame: object) -> NoReturn:
    raise Stop


def run(args: argparse.Namespace) -> int:
    client()    # before anything else: a missing package is the first thing to fix
    try:
        mount = resolve_path("/")
    except OSError as e:
        raise open_error("/", e, args) from None
    _front.raise_fd_limit()
    trees = open_trees(args)
    try:
        exporter = Exporter(trees, mount, args.stats == "all",
                            Filters(args.max_depth, tuple(args.include), tuple(args.exclude)))
    except BaseException:
        for t in trees:
            t.close()
        raise
    previous_term = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        say_notices(exporter.subtrees, args)
        # The subtrees read at the emulation's timer: their first cycle
        # before the first scrape, so that READY=1 means values are served
        # (those read at scrapes sync at each one).
        for st in exporter.subtrees:
            if not st.on_scrape:
                st.sync(time.monotonic())
        # The serving threads (and the thread per request they start)
        # inherit a mask without SIGTERM and SIGINT, so these come to this
        # thread: a signal taken by another thread would leave this one
        # asleep in poll(2), never to run the handler.
        stop_signals = {signal.SIGTERM, signal.SIGINT}
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
        try:
            where = exporter.listen(args.listen)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for st in exporter.subtrees:
            how = ", ".join(f"{c} {m}" for c, m in st.modes.items())
            log(f"{st.label}: {how}; read " + ("at each scrape" if st.on_scrape
                                               else "at the emulation's timer"))
        log(f"serving http://{where}{METRICS_PATH}: "
            f"{', '.join(st.label for st in exporter.subtrees)}")
        sd_notify(f"READY=1\nSTATUS=serving {where}{METRICS_PATH}")
        if exporter.run():
            return status("ok")
        log("no cgroups left to watch")
        return status("failure")
    except (KeyboardInterrupt, Stop):
        return status("ok")
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        sd_notify("STOPPING=1")
        exporter.close()


def _option(what: str) -> Callable[[str], int]:
    """An argparse type for a shared option: the library parses it, and
    says what is wrong as the cgstream command does."""
    def parse(text: str) -> int:
        try:
            return _front.parse_option(what, text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    parse.__name__ = what
    return parse


def _mode(text: str) -> str:
    return _front.mode_name(_option("mode")(text))


def _controllers(text: str) -> tuple[str, ...]:
    return _front.controller_names(_option("controllers")(text))


def _depth(text: str) -> int:
    """--max-depth: levels below each CGROUP, 0 for CGROUP itself."""
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(
            f"--max-depth wants a number of levels below CGROUP (0: only CGROUP itself), "
            f"not '{text}'")
    return int(text)


def _glob(option: str) -> Callable[[str], str]:
    """--include, --exclude: a glob on the path below CGROUP."""
    def parse(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError(f"{option} wants a glob, not an empty string")
        if text.startswith("/"):
            raise argparse.ArgumentTypeError(
                f"{option} '{text}': the glob is matched against the path below CGROUP "
                "(such as 'system.slice/*.service', '.' for CGROUP itself), which never "
                "starts with '/'")
        return text
    parse.__name__ = option[2:]
    return parse


def _epilog() -> str:
    try:
        statuses = ", ".join(f"{n} {text}" for n, _, text in _front.exit_statuses())
    except LibraryNotFoundError:
        statuses = "see cgstream(1)"
    return (f"Exit status: {statuses}; {EXIT_NO_CLIENT} prometheus_client missing. Also 0: "
            "stopped (SIGTERM, Ctrl-C); 1: every subtree removed, the port in use.")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="pycgstream's one command: the Prometheus exporter. The "
        "command line for watching cgroups and setting the kernel's interval is the C "
        "'cgstream' command (cgstream watch, cgstream interval).")
    sub = p.add_subparsers(dest="command", required=True, metavar="export")
    e = sub.add_parser(
        "export", help="serve the cpu, memory, io and pressure statistics of every cgroup to "
        "Prometheus",
        description="Serve the cpu, memory and io statistics and the pressure stall "
        "information of every cgroup of each "
        "CGROUP's subtree at http://LISTEN/metrics, in the Prometheus text format or "
        "OpenMetrics (as the scraper asks). A scrape takes the latest completed flush of "
        "each subtree, in one read per controller where the kernel has the subtree files; "
        "between scrapes the exporter does nothing (the emulation keeps its timer).",
        epilog=_epilog())
    e.add_argument("--listen", type=parse_listen, default=parse_listen(DEFAULT_LISTEN),
                   metavar="HOST:PORT",
                   help=f"where to serve (default {DEFAULT_LISTEN}, loopback only; "
                   f":{DEFAULT_PORT} for every address; port 0 picks a free one)")
    e.add_argument("--controllers", type=_controllers, default=None,
                   metavar="LIST", help=f"what to serve, of {','.join(CONTROLLERS)} (or "
                   "all); each must be there for every CGROUP (default: cpu, and memory, "
                   "io and pressure where the cgroups have them)")
    e.add_argument("--stats", choices=("default", "all"), default="default",
                   help="default: the set for a fleet (cpu usage and throttling; memory "
                   "usage, anon, file, inactive_file, swap, OOM kills and limit events, page "
                   "faults; io bytes and operations; pressure's waiting and stalled "
                   "seconds); all: every cpu.stat field, every memory value the kernel "
                   "names, discards")
    e.add_argument("--mode", type=_mode, default="auto",
                   metavar="auto|subtree|kernel|fallback",
                   help="auto (default): per controller, the subtree file, else a stream per "
                   "cgroup, else the emulation (fallback)")
    e.add_argument("--fallback-interval", type=_option("fallback-interval"), default=0,
                   metavar="MS", help="timer period of the emulation (default: the kernel's "
                   "interval if set, else 1000)")
    e.add_argument("--max-depth", type=_depth, default=None, metavar="N",
                   help="serve cgroups down to N levels below each CGROUP (0: CGROUP "
                   "itself only; default: every level)")
    e.add_argument("--include", type=_glob("--include"), action="append", default=[],
                   metavar="GLOB", help="serve only the cgroups whose path below CGROUP "
                   "matches one of these globs ('.' is CGROUP itself; * matches / too; "
                   "repeatable)")
    e.add_argument("--exclude", type=_glob("--exclude"), action="append", default=[],
                   metavar="GLOB", help="serve none of the cgroups whose path below CGROUP "
                   "matches one of these globs (such as '*run-*.scope'; repeatable)")
    e.add_argument("cgroups", nargs="+", metavar="CGROUP",
                   help="subtrees to serve, absolute or relative to the cgroup2 mount "
                   "(/ is every cgroup)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        args = parser().parse_args(argv)
        return run(args)
    except Exit as e:
        if e.message:
            print(f"{PROG}: {e.message}", file=sys.stderr)
        return e.status
    except LibraryNotFoundError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return EXIT_NO_LIBRARY
    except KeyboardInterrupt:
        return 0
