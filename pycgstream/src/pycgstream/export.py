"""python -m pycgstream export: the latest streamed sample of every cgroup
of some subtrees, served to Prometheus.

One :class:`~pycgstream.Tree` per subtree is read once per cycle (the
kernel's flush, or the emulation's timer on kernels without cgstream), by
one thread: :meth:`Exporter.run`.  Each cycle it builds a new
:class:`Snapshot` of its subtree (the latest sample of every cgroup, by
cgroup id) and swaps it in whole.  A scrape only formats the snapshots it
finds (:class:`CgroupCollector`): it never reads cgroupfs, never calls the
library and never waits for a cycle, so scrapes cost the kernel nothing and
any number of scrapers see the same numbers.  A cgroup removed is dropped
from its snapshot by the cycle that reports it, and so from the next scrape.

Built on the official client library, prometheus_client (0.16, Debian 12's,
or later): its registry, the process and Python collectors, the text
format and OpenMetrics (by the scraper's Accept header), gzip.  The HTTP
server is the standard library's WSGI server with a thread per request, as
prometheus_client's own, with clearer errors and a clean stop.
"""

from __future__ import annotations

import argparse
import errno
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
from typing import Any, Callable, Iterable, Iterator, NoReturn, Optional, Sequence, TextIO
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from . import cli
from ._stream import CgroupRemovedError, Event, Failed, Removed, Sample, Tree, resolve_path

# Not (yet) in Prometheus' "Default port allocations" wiki page: its
# 9100-9999 range has been full since 2023 and allocations went on above
# 10000 (10019 in 2024).  10340 is well above where those had got to, and
# is not any Prometheus component's or common exporter's port.  Register it
# on that page before announcing a release.
DEFAULT_PORT = 10340
# Loopback unless the admin says otherwise: per-service CPU numbers of a
# host are not for every network it is on.
DEFAULT_LISTEN = f"127.0.0.1:{DEFAULT_PORT}"
METRICS_PATH = "/metrics"

# exit status besides the cgstream command's (cli.EXIT_*)
EXIT_NO_CLIENT = 6      # prometheus_client is not installed

NO_CLIENT = ("the exporter needs the Python package prometheus_client (>= 0.16): "
             "apt-get install python3-prometheus-client, or pip install prometheus_client")

# the per-cgroup counters: Sample field, metric family (counters are
# exposed with _total), help, factor to the base unit (usec -> seconds)
CGROUP_COUNTERS = (
    ("usage_usec", "cgroup_cpu_usage_seconds",
     "CPU time the cgroup's tasks used (cpu.stat usage_usec)", 1e-6),
    ("user_usec", "cgroup_cpu_user_seconds",
     "CPU time the cgroup's tasks used in user mode (cpu.stat user_usec)", 1e-6),
    ("system_usec", "cgroup_cpu_system_seconds",
     "CPU time the cgroup's tasks used in kernel mode (cpu.stat system_usec)", 1e-6),
    ("nice_usec", "cgroup_cpu_nice_seconds",
     "CPU time the cgroup's tasks used at a positive nice value (cpu.stat nice_usec)", 1e-6),
    ("nr_periods", "cgroup_cpu_periods",
     "Bandwidth enforcement periods elapsed (cpu.stat nr_periods; cpu controller on)", 1),
    ("nr_throttled", "cgroup_cpu_throttled_periods",
     "Enforcement periods in which the cgroup was throttled (cpu.stat nr_throttled)", 1),
    ("throttled_usec", "cgroup_cpu_throttled_seconds",
     "Time the cgroup's tasks were throttled (cpu.stat throttled_usec)", 1e-6),
    ("nr_bursts", "cgroup_cpu_bursts",
     "Enforcement periods in which the cgroup used burst time (cpu.stat nr_bursts)", 1),
    ("burst_usec", "cgroup_cpu_burst_seconds",
     "Burst time the cgroup used (cpu.stat burst_usec)", 1e-6),
)


def client() -> ModuleType:
    """prometheus_client, or cli.Exit(EXIT_NO_CLIENT) saying how to get it."""
    try:
        import prometheus_client
        import prometheus_client.core  # noqa: F401 (the metric families)
    except ImportError:
        raise cli.Exit(EXIT_NO_CLIENT, NO_CLIENT) from None
    return prometheus_client


def log(message: str) -> None:
    print(f"{cli.PROG} export: {message}", file=sys.stderr, flush=True)


# --- state: one snapshot per subtree, replaced whole every cycle -----------

@dataclass(frozen=True)
class Snapshot:
    """A subtree as of its latest cycle: ``cgroups`` maps each cgroup id to
    its labels ({"cgroup": path below the cgroup2 mount, "/" for the root
    cgroup}: made once per cgroup, shared by its samples in every scrape)
    and its latest sample.  Never changed once made: the collector reads it
    while the next one is being built."""

    cgroups: dict[int, tuple[dict[str, str], Sample]] = field(default_factory=dict)
    seq: Optional[int] = None               # the latest flush seen
    flush_time_usec: Optional[int] = None   # its CLOCK_MONOTONIC time
    flush_missed: Optional[int] = None      # the flusher's skipped cycles (total)
    cycles: int = 0                         # batches read
    skipped: int = 0                        # flushes that came and went unread
    errors: int = 0                         # cgroups that could not be read


class Subtree:
    """One watched subtree: its Tree, and the snapshot the collector reads."""

    def __init__(self, tree: Tree, mount: str) -> None:
        self.tree = tree
        self.mode = tree.mode
        self._mount_len = len(mount) if mount != "/" else 0
        self.label = self.cgroup_label(tree.path)
        self.snapshot = Snapshot()
        self.gone = False
        self._failing: set[int] = set()     # said once, until they read again

    def cgroup_label(self, path: str) -> str:
        return path[self._mount_len:] or "/"

    def apply(self, batch: Sequence[Event]) -> None:
        """A new snapshot from the last one and one cycle's events."""
        old = self.snapshot
        cgroups = dict(old.cgroups)
        errors = old.errors
        newest: Optional[Sample] = None
        for ev in batch:
            if isinstance(ev, Sample):
                key = ev.cgroup_id or 0
                known = cgroups.get(key)
                labels = known[0] if known is not None else {
                    "cgroup": self.cgroup_label(ev.cgroup)}
                cgroups[key] = (labels, ev)
                self._failing.discard(key)
                if ev.seq is not None and (newest is None or ev.seq > (newest.seq or 0)):
                    newest = ev
            elif isinstance(ev, (Removed, Failed)):
                # removed; or unreadable: no stale numbers, it comes back
                # with its next sample
                key = ev.cgroup_id or 0
                cgroups.pop(key, None)
                if isinstance(ev, Removed):
                    self._failing.discard(key)
                    continue
                errors += 1
                if key not in self._failing:    # not a line per cycle
                    self._failing.add(key)
                    log(f"{ev.cgroup}: {os.strerror(ev.error.errno or 0)} (left out "
                        "until it can be read)")
        skipped = old.skipped
        if newest is None:
            seq, flush_time, missed = old.seq, old.flush_time_usec, old.flush_missed
        else:
            seq, flush_time, missed = newest.seq, newest.flush_time_usec, newest.flush_missed
            if old.seq is not None and seq is not None and seq > old.seq + 1:
                skipped += seq - old.seq - 1
        self.snapshot = Snapshot(cgroups, seq, flush_time, missed, old.cycles + 1,
                                 skipped, errors)


# --- the collector: formats snapshots, nothing else ------------------------

class CgroupCollector:
    """prometheus_client collector of the exporter's subtrees: the latest
    sample of every cgroup, and the exporter's own state.  collect() reads
    the current snapshots only (no I/O, no library call)."""

    def __init__(self, subtrees: Callable[[], Sequence[Subtree]]) -> None:
        self._subtrees = subtrees
        self._core = client().core

    def describe(self) -> list[Any]:
        # the families depend on what the cgroups have (the bandwidth
        # fields): nothing to check at registration
        return []

    def collect(self) -> Iterator[Any]:
        core = self._core
        counter, gauge, make_sample = (core.CounterMetricFamily, core.GaugeMetricFamily,
                                       core.Sample)
        subtrees = [st for st in self._subtrees() if not st.gone]
        snapshots = [(st, st.snapshot) for st in subtrees]
        families = []
        for attr, family, help_text, factor in CGROUP_COUNTERS:
            unit = "seconds" if family.endswith("_seconds") else ""
            fam = counter(family, help_text, labels=["cgroup"], unit=unit)
            # what add_metric() appends, without a labels dict per call: a
            # scrape of 10,000 cgroups makes some 40,000 samples
            name = fam.name + "_total"
            append = fam.samples.append
            for _, snap in snapshots:
                for labels, sample in snap.cgroups.values():
                    value = getattr(sample, attr)
                    if value is not None:
                        append(make_sample(name, labels, value * factor))
            if fam.samples:
                families.append(fam)
        yield from families

        seq = gauge("cgstream_flush_seq", "Sequence number of the latest flush the exporter "
                    "read (kernel streaming: the kernel's; emulation: its own cycle count)",
                    labels=["subtree"])
        age = gauge("cgstream_flush_age_seconds", "Time since the latest flush the exporter "
                    "read (CLOCK_MONOTONIC)", labels=["subtree"], unit="seconds")
        missed = counter("cgstream_flush_missed", "Cycles the flusher skipped because the "
                         "previous one was late (cpu.stat.stream flush_missed)",
                         labels=["subtree"])
        skipped = counter("cgstream_exporter_missed_cycles", "Flushes that completed without "
                          "the exporter reading them (it was late)", labels=["subtree"])
        cycles = counter("cgstream_exporter_cycles", "Cycles (batches of samples) the "
                         "exporter read", labels=["subtree"])
        errors = counter("cgstream_exporter_read_errors", "Cgroups that could not be read "
                         "in a cycle (left out until they can be)", labels=["subtree"])
        cgroups = gauge("cgstream_exporter_cgroups", "Cgroups watched (served)",
                        labels=["subtree"])
        mode = gauge("cgstream_exporter_mode", "How the subtree is read: subtree or kernel "
                     "(the kernel's cgroup stat stream), fallback (the userspace emulation: "
                     "a timer and cpu.stat reads)", labels=["subtree", "mode"])
        now_usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        for st, snap in snapshots:
            where = [st.label]
            if snap.seq is not None:
                seq.add_metric(where, snap.seq)
            if snap.flush_time_usec is not None:
                age.add_metric(where, max(0, now_usec - snap.flush_time_usec) / 1e6)
            if snap.flush_missed is not None:
                missed.add_metric(where, snap.flush_missed)
            skipped.add_metric(where, snap.skipped)
            cycles.add_metric(where, snap.cycles)
            errors.add_metric(where, snap.errors)
            cgroups.add_metric(where, len(snap.cgroups))
            mode.add_metric([st.label, st.mode], 1)
        yield from (seq, age, missed, skipped, cycles, errors, cgroups, mode)


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
        raise cli.Exit(cli.EXIT_USAGE, f"--listen {listen}: cannot resolve "
                       f"'{listen.host}': {e.strerror}") from None
    return [(fam, str(addr[0]), False) for fam, _, _, _, addr in infos
            if fam in (socket.AF_INET, socket.AF_INET6)]


def bind(listen: Listen, app: Callable[..., Any]) -> WSGIServer:
    """A WSGI server listening at @listen; cli.Exit with a clear message
    when it cannot."""
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
        raise cli.Exit(cli.EXIT_RUNTIME, f"{where}: the port is in use (another exporter "
                       "running?); choose another with --listen")
    if code in (errno.EACCES, errno.EPERM):
        raise cli.Exit(cli.EXIT_PERMISSION, f"{where}: permission denied (ports below 1024 "
                       "need CAP_NET_BIND_SERVICE)")
    if code == errno.EADDRNOTAVAIL:
        raise cli.Exit(cli.EXIT_RUNTIME, f"{where}: not an address of this host")
    raise cli.Exit(cli.EXIT_RUNTIME,
                   f"{where}: {err.strerror if err is not None else 'no usable address'}")


LANDING = (b"<html><head><title>cgstream exporter</title></head><body>"
           b"<h1>cgstream exporter</h1><p>cgroup CPU statistics, once per flush: "
           b"<a href=\"metrics\">metrics</a></p></body></html>\n")


def wsgi_app(registry: Any) -> Callable[..., Iterable[bytes]]:
    """/metrics: prometheus_client's app (text or OpenMetrics by Accept,
    gzip by Accept-Encoding); /: a page that links to it; else 404."""
    metrics = client().make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if path == METRICS_PATH:
            return metrics(environ, start_response)  # type: ignore[no-any-return]
        if path == "/":
            start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
            return [LANDING]
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [f"not found: the metrics are at {METRICS_PATH}\n".encode()]

    return app


# --- the exporter --------------------------------------------------------------

class Exporter:
    """Subtrees, their collector in a registry of their own (with the
    process and Python collectors that the default registry has), and an
    HTTP server for it.

    ``listen()`` starts serving in a thread of its own; ``run()`` reads the
    trees until ``stop()`` (any thread) or until every subtree's root is
    gone; ``close()`` stops serving and closes the trees.
    """

    def __init__(self, trees: Sequence[Tree], mount: str) -> None:
        prom = client()
        self.subtrees = [Subtree(t, mount) for t in trees]
        self.registry = prom.CollectorRegistry()
        prom.ProcessCollector(registry=self.registry)
        prom.PlatformCollector(registry=self.registry)
        prom.GCCollector(registry=self.registry)
        self.collector = CgroupCollector(lambda: self.subtrees)
        self.registry.register(self.collector)
        self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._server: Optional[WSGIServer] = None
        self._serving: Optional[threading.Thread] = None

    def listen(self, listen: Listen) -> Listen:
        """Start serving; the address really listened on (port 0: the one
        picked)."""
        server = bind(listen, wsgi_app(self.registry))
        self._server = server
        self._serving = threading.Thread(target=server.serve_forever, name="cgstream-http",
                                         daemon=True)
        self._serving.start()
        host, port = server.server_address[:2]
        return Listen(str(host), int(port))

    def stop(self) -> None:
        """Make run() return (from any thread, or a signal handler)."""
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass    # already told, or closed

    def run(self) -> bool:
        """Read every subtree's cycles as they come; True when stopped,
        False when every subtree's root is gone.  cli.Exit when reading a
        tree fails as a whole."""
        poller = select.poll()
        poller.register(self._wake_r, select.POLLIN)
        by_fd: dict[int, Subtree] = {}
        for st in self.subtrees:
            if not st.gone:
                by_fd[st.tree.fileno()] = st
                poller.register(st.tree.fileno(), select.POLLIN)
        while by_fd:
            for fd, _ in poller.poll():
                if fd == self._wake_r:
                    return True
                if fd not in by_fd:
                    continue
                st = by_fd[fd]
                try:
                    batch = st.tree.read()
                except CgroupRemovedError:
                    st.gone = True
                    del by_fd[fd]
                    poller.unregister(fd)
                    log(f"{st.tree.path}: removed; no longer served")
                    continue
                except OSError as e:
                    raise cli.Exit(cli.EXIT_RUNTIME,
                                   f"reading {st.tree.path}: {e.strerror}") from None
                if batch:
                    st.apply(batch)
        return False

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        for st in self.subtrees:
            st.tree.close()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1


def sd_notify(state: str) -> None:
    """Tell systemd (Type=notify) about @state, when it asked to know."""
    path = os.environ.get("NOTIFY_SOCKET", "")
    if not path.startswith(("/", "@")):
        return
    address = "\0" + path[1:] if path[0] == "@" else path
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.sendto(state.encode(), address)
    except OSError as e:
        log(f"telling systemd '{state}': {e.strerror}")


def _on_sigterm(signum: int, frame: object) -> NoReturn:
    raise cli.Stop


def run(args: argparse.Namespace, out: TextIO) -> int:
    client()    # before anything else: a missing package is the first thing to fix
    try:
        mount = resolve_path("/")
    except OSError as e:
        raise cli.add_error("/", e) from None
    cli.raise_fd_limit()
    sources = cli.open_sources(args)     # args.recursive: a Tree each
    try:
        exporter = Exporter([w.source for w in sources if isinstance(w.source, Tree)], mount)
    except BaseException:
        for w in sources:
            w.source.close()
        raise
    previous_term = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        cli.warn_if_streaming_off(w.source for w in sources)
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
        modes = ", ".join(sorted({st.mode for st in exporter.subtrees}))
        log(f"serving http://{where}{METRICS_PATH}: "
            f"{', '.join(st.label for st in exporter.subtrees)} ({modes} mode)")
        sd_notify(f"READY=1\nSTATUS=serving {where}{METRICS_PATH}")
        if exporter.run():
            return cli.EXIT_OK
        log("no cgroups left to watch")
        return cli.EXIT_RUNTIME
    except (KeyboardInterrupt, cli.Stop):
        return cli.EXIT_OK
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        sd_notify("STOPPING=1")
        exporter.close()


def add_parser(sub: Any) -> None:
    """The ``export`` subcommand of ``pycgstream``."""
    e = sub.add_parser(
        "export", help="serve the latest sample of every cgroup to Prometheus",
        description="Serve the latest streamed sample of every cgroup of each CGROUP's "
        "subtree at http://LISTEN/metrics, in the Prometheus text format or OpenMetrics "
        "(as the scraper asks). A scrape never reads cgroupfs: one thread reads each "
        "subtree once per flush.",
        epilog="Exit status: 0 stopped (SIGTERM, Ctrl-C), 1 failure (also: every subtree "
        "removed, the port in use), 2 usage error, 3 no such cgroup, 4 permission denied, "
        "5 the kernel lacks the stream (or subtree) file, 6 prometheus_client missing.")
    e.add_argument("--listen", type=parse_listen, default=parse_listen(DEFAULT_LISTEN),
                   metavar="HOST:PORT",
                   help=f"where to serve (default {DEFAULT_LISTEN}, loopback only; "
                   f":{DEFAULT_PORT} for every address; port 0 picks a free one)")
    e.add_argument("--mode", type=cli._mode, default="auto",
                   metavar="auto|subtree|kernel|fallback",
                   help="as for watch --recursive: auto (default) takes the subtree file, "
                   "else a stream per cgroup, else the emulation (fallback)")
    e.add_argument("--fallback-interval", type=cli._fallback_interval, default=0,
                   metavar="MS", help="timer period of the emulation (default: the kernel's "
                   "interval if set, else 1000)")
    e.add_argument("cgroups", nargs="+", metavar="CGROUP",
                   help="subtrees to serve, absolute or relative to the cgroup2 mount "
                   "(/ is every cgroup)")
    e.set_defaults(run=run, recursive=True)
