"""python -m pycgstream: the ``cgstream`` command's ``watch`` and
``interval`` in Python, with the same output, messages and exit statuses.

``watch --json`` prints byte for byte the JSON lines of
``cgstream watch --json`` (``--recursive`` too).  Not mirrored: ``--output``
and the sd_notify messages of the daemon.  ``export`` (export.py, Python
only) serves the samples to Prometheus.
"""

from __future__ import annotations

import argparse
import errno
import os
import resource
import select
import signal
import sys
from dataclasses import dataclass
from typing import Callable, Iterable, NoReturn, Optional, Sequence, TextIO, Union

from . import _lib
from ._lib import LibraryNotFoundError
from ._stream import (
    Added,
    CgroupRemovedError,
    Event,
    Failed,
    Group,
    Removed,
    Sample,
    Tree,
    cpu_percent,
    get_interval,
    resolve_path,
    set_interval,
)

PROG = "pycgstream"
INTERVAL_MIN_MS = 10          # CGROUP_STAT_STREAM_INTERVAL_MIN_MS
INTERVAL_MAX_MS = 3600000     # CGROUP_STAT_STREAM_INTERVAL_MAX_MS

# exit statuses of the cgstream command
EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_NO_CGROUP = 3
EXIT_PERMISSION = 4
EXIT_NO_KERNEL = 5

MSG_NO_KERNEL = ("this kernel has no cpu.stat.stream (cgroup stat streaming); "
                 "use --mode fallback or a kernel with the cgstream patches")
MSG_NO_SUBTREE = ("this kernel has no cpu.stat.stream.subtree (whole subtrees in one read); "
                  "use --mode auto or a kernel with the cgstream patches")

# cgstream watch --json: the integer fields of a sample line, in order: the
# sample's, but the cgroup's id (at the line's head) and flush_missed (a
# count of the stream's, not of the cgroup's), as the C command prints them
JSON_FIELDS = tuple(name for name, _ in _lib.SAMPLE_FIELDS
                    if name not in ("cgroup_id", "flush_missed"))


class Exit(Exception):
    """Stop with a message on stderr and an exit status."""

    def __init__(self, status: int, message: Optional[str] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Stop(Exception):
    """SIGTERM: end the watch like Ctrl-C does."""


def json_string(s: str) -> str:
    """A JSON string escaped as the C command escapes it."""
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def json_head(ev: Event, parents: bool) -> str:
    """'{"cgroup": ..., "cgroup_id": N' and, for trees, ', "parent_id": N'."""
    head = f'{{"cgroup": {json_string(ev.cgroup)}, "cgroup_id": {ev.cgroup_id or 0}'
    if parents:
        head += f', "parent_id": {ev.parent_id or 0}'
    return head


def sample_json(sample: Sample, percent: Optional[float], mode: str, parents: bool = False) -> str:
    """One ``cgstream watch --json`` line for a sample (absent fields and
    the first sample's cpu_percent are null)."""
    parts = [json_head(sample, parents)]
    for key in JSON_FIELDS:
        value = getattr(sample, key)
        parts.append(f'"{key}": {"null" if value is None else value}')
    parts.append(f'"cpu_percent": {"null" if percent is None else f"{percent:.2f}"}')
    parts.append(f'"mode": "{mode}"')
    return ", ".join(parts) + "}"


def change_json(ev: Union[Added, Removed, Failed], parents: bool = False) -> str:
    """The JSON line of an added, removed or error event."""
    line = json_head(ev, parents) + f', "event": "{change_name(ev)}"'
    if isinstance(ev, Failed):
        line += f', "error": "{os.strerror(ev.error.errno or 0)}"'
    return line + "}"


def change_name(ev: Union[Added, Removed, Failed]) -> str:
    return "added" if isinstance(ev, Added) else "removed" if isinstance(ev, Removed) else "error"


Source = Union[Group, Tree]


@dataclass
class Shown:
    """A cgroup as the watch shows it: its path, its last printed sample
    (with --every: or the first seen) and the last printed cycle's
    numbers, for the table."""

    path: str
    previous: Optional[Sample] = None
    window: int = 0                       # --every: seq // every of previous
    cpu: Optional[float] = None
    user: Optional[float] = None
    system: Optional[float] = None
    throttled: Optional[tuple[int, int]] = None


@dataclass
class Watched:
    """One source of the watch (the group of the named cgroups, or a tree
    per argument) and its printed cycles, for --count."""

    source: Source
    cycles: int = 0
    last_seq: int = 0
    done: bool = False


class Watch:
    """The printer of the watch: every cgroup's state by cgroup id (a
    cgroup made again under the same path starts afresh), and the output
    in the chosen format."""

    def __init__(self, out: TextIO, json: bool, root: str, every: int = 1,
                 parents: bool = False) -> None:
        self.every = every
        self.out = out
        self.json = json
        self.parents = parents
        self.tty = not json and out.isatty()
        self.root_len = len(root) if root != "/" else 0
        self.cgroups: dict[int, Shown] = {}
        self.removed_note: list[str] = []

    def display(self, path: str) -> str:
        return path[self.root_len:] or "/"

    def on_sample(self, s: Sample, mode: str) -> bool:
        """Print @s; False when --every skips its cycle."""
        key = s.cgroup_id or 0
        c = self.cgroups.get(key)
        if c is None:
            c = self.cgroups[key] = Shown(s.cgroup)
        p = c.previous
        if self.every > 1:
            window = (s.seq or 0) // self.every
            if p is None:  # the base of the first printed CPU%
                c.previous, c.window = s, window
                return False
            # by window, not seq % N: a missed cycle must not skip one
            if window <= c.window:
                return False
            c.window = window
        cpu = user = system = None
        throttled = None
        if p is not None:
            cpu = cpu_percent(p, s)
            user = cpu_percent(p, s, "user_usec")
            system = cpu_percent(p, s, "system_usec")
            if cpu is not None and None not in (s.nr_throttled, s.throttled_usec,
                                                p.nr_throttled, p.throttled_usec):
                throttled = (max(0, s.nr_throttled - p.nr_throttled),  # type: ignore[operator]
                             max(0, s.throttled_usec - p.throttled_usec))  # type: ignore[operator]
        c.cpu, c.user, c.system, c.throttled = cpu, user, system, throttled
        if self.json:
            print(sample_json(s, cpu, mode, self.parents), file=self.out)
        elif not self.tty:
            line = f"seq {s.seq} {self.display(s.cgroup)}: "
            if cpu is None:
                line += f"first sample, {(s.usage_usec or 0) / 1e6:.3f} s of CPU so far"
            else:
                line += f"cpu {cpu:.1f}% (user {user or 0:.1f}%, system {system or 0:.1f}%)"
                if throttled is not None:
                    line += f", throttled {throttled[0]} times for {throttled[1] / 1000:.1f} ms"
            print(line, file=self.out)
        c.previous = s
        return True

    def on_change(self, ev: Union[Added, Removed, Failed]) -> None:
        if isinstance(ev, Failed):
            print(f"{PROG}: {ev.cgroup}: {os.strerror(ev.error.errno or 0)}", file=sys.stderr)
        if self.json:
            print(change_json(ev, self.parents), file=self.out)
        elif not self.tty:
            print(f"{self.display(ev.cgroup)}: {change_name(ev)}", file=self.out)
        elif not isinstance(ev, Added):
            self.removed_note.append(self.display(ev.cgroup))
        if not isinstance(ev, Added):
            # gone, or (error) starting afresh when it can be read again
            self.cgroups.pop(ev.cgroup_id or 0, None)

    def draw_table(self, mode: str, seq: int) -> None:
        f = self.out
        f.write("\033[H\033[2J")
        print(f"{PROG}: {len(self.cgroups)} cgroups, {mode} mode, seq {seq}  "
              "(Ctrl-C quits)\n", file=f)
        print(f"{'CGROUP':<40} {'CPU%':>7} {'USER%':>7} {'SYS%':>7} {'THROTTLED':>10} "
              f"{'THR-MS':>10}", file=f)
        for c in sorted(self.cgroups.values(), key=lambda c: c.path):
            row = f"{self.display(c.path):<40} "
            if c.cpu is None:
                row += f"{'-':>7} {'-':>7} {'-':>7} {'-':>10} {'-':>10}"
            else:
                row += f"{c.cpu:7.1f} {c.user or 0:7.1f} {c.system or 0:7.1f} "
                row += (f"{c.throttled[0]:10d} {c.throttled[1] / 1000:10.1f}" if c.throttled
                        else f"{'-':>10} {'-':>10}")
            print(row, file=f)
        if self.removed_note:
            print(f"\nremoved: {', '.join(self.removed_note)}", file=f)
        self.removed_note.clear()

    def batch(self, w: Watched, events: list[Event]) -> None:
        mode = w.source.mode
        for ev in events:
            if isinstance(ev, Sample):
                if self.on_sample(ev, mode) and ev.seq != w.last_seq:
                    w.last_seq = ev.seq or 0
                    w.cycles += 1
            else:
                self.on_change(ev)
        if events and self.tty:
            self.draw_table(mode, w.last_seq)


def add_error(arg: str, e: OSError, mode: str = "auto") -> Exit:
    try:
        shown = resolve_path(arg)
    except OSError:
        shown = arg
    if e.errno in (errno.ENOENT, errno.ENOTDIR):
        return Exit(EXIT_NO_CGROUP, f"{shown}: no such cgroup")
    if e.errno in (errno.EACCES, errno.EPERM):
        return Exit(EXIT_PERMISSION, f"{shown}: permission denied")
    if e.errno == errno.EINVAL:
        return Exit(EXIT_USAGE, f'{arg}: not a cgroup path (".." is not allowed)')
    if e.errno == errno.EOPNOTSUPP:
        return Exit(EXIT_NO_KERNEL, MSG_NO_SUBTREE if mode == "subtree" else MSG_NO_KERNEL)
    if e.errno == errno.ENODEV:
        return Exit(EXIT_RUNTIME, "no cgroup2 file system is mounted")
    return Exit(EXIT_RUNTIME, f"{shown}: {e.strerror}")


def under(path: str, root: str) -> bool:
    """@path is @root or below it."""
    return root == "/" or path == root or path.startswith(root + "/")


def open_sources(args: argparse.Namespace) -> list[Watched]:
    """The group of the named cgroups, or (--recursive) a tree for each
    argument not inside another one's; closed again on failure."""
    paths = []
    for arg in args.cgroups:
        try:
            paths.append(resolve_path(arg))
        except OSError as e:
            raise add_error(arg, e, args.mode) from None
    sources: list[Watched] = []
    try:
        if not args.recursive:
            try:
                group = Group(mode=args.mode, fallback_interval_ms=args.fallback_interval)
            except OSError as e:
                raise add_error("/", e, args.mode) from None
            sources.append(Watched(group))
            for arg, path in zip(args.cgroups, paths):
                try:
                    group.add(path)
                except FileExistsError:
                    continue    # named twice
                except OSError as e:
                    raise add_error(arg, e, args.mode) from None
            return sources
        for i, (arg, path) in enumerate(zip(args.cgroups, paths)):
            # a cgroup below another argument is in that one's tree
            if any(j != i and under(path, other) and (path != other or j < i)
                   for j, other in enumerate(paths)):
                continue
            try:
                sources.append(Watched(Tree(path, mode=args.mode,
                                            fallback_interval_ms=args.fallback_interval)))
            except OSError as e:
                raise add_error(arg, e, args.mode) from None
        return sources
    except BaseException:
        for w in sources:
            w.source.close()
        raise


def raise_fd_limit() -> None:
    """Trees in kernel and fallback mode, and groups, hold an fd per cgroup."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


def drain(w: Watched, printer: Watch) -> None:
    """A source's events; done when its tree's root or its group's last
    cgroup went."""
    try:
        events = w.source.read()
    except CgroupRemovedError:
        w.done = True      # a tree's root, after the batch that said so
        return
    except OSError as e:
        raise Exit(EXIT_RUNTIME, f"reading the streams: {e.strerror}") from None
    printer.batch(w, events)
    if isinstance(w.source, Group) and len(w.source) == 0:
        w.done = True


def watch(args: argparse.Namespace, out: TextIO) -> int:
    if args.mode == "subtree" and not args.recursive:
        raise Exit(EXIT_USAGE, "--mode subtree watches whole subtrees: it needs --recursive")
    try:
        root = resolve_path("/")
    except OSError as e:
        raise add_error("/", e) from None
    raise_fd_limit()
    sources = open_sources(args)
    try:
        printer = Watch(out, args.json, root, args.every, args.recursive)
        warn_if_streaming_off(w.source for w in sources)
        previous_term = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            return watch_loop(args, sources, printer, out)
        except (KeyboardInterrupt, Stop):
            return EXIT_OK
        finally:
            signal.signal(signal.SIGTERM, previous_term)
    finally:
        for w in sources:
            w.source.close()


def warn_if_streaming_off(sources: Iterable[Source]) -> None:
    """Kernel-mode sources get no samples while the kernel's interval is 0: say so."""
    if any(source.mode != "fallback" for source in sources):
        try:
            off = get_interval() == 0
        except OSError:
            off = False
        if off:
            print(f"{PROG}: the kernel's flush interval is 0 (streaming off): no samples "
                  f"until it is set, e.g. '{PROG} interval 1000'", file=sys.stderr)


def watch_loop(args: argparse.Namespace, sources: list[Watched], printer: Watch,
               out: TextIO) -> int:
    poller = select.poll()
    by_fd = {}
    for w in sources:
        by_fd[w.source.fileno()] = w
        poller.register(w.source.fileno(), select.POLLIN)
    while True:
        for fd, _ in poller.poll():
            w = by_fd[fd]
            if w.done:
                continue
            drain(w, printer)
            if w.done:
                poller.unregister(fd)
        out.flush()
        live = [w for w in sources if not w.done]
        if args.count and all(w.cycles >= args.count for w in live):
            return EXIT_OK
        if not live:
            print(f"{PROG}: no cgroups left to watch", file=sys.stderr)
            return EXIT_OK


def _on_sigterm(signum: int, frame: object) -> NoReturn:
    raise Stop


def _bad_interval(arg: str) -> Exit:
    return Exit(EXIT_USAGE, f"{arg} is not a valid interval: use 0 (off) or "
                f"{INTERVAL_MIN_MS}..{INTERVAL_MAX_MS} ms")


def interval(args: argparse.Namespace, out: TextIO) -> int:
    if args.ms is None:
        try:
            print(get_interval(), file=out)
            return EXIT_OK
        except OSError as e:
            err = e
            what = "reading"
    else:
        ms = _u32(args.ms)
        if ms is None or not (ms == 0 or INTERVAL_MIN_MS <= ms <= INTERVAL_MAX_MS):
            raise _bad_interval(args.ms)
        try:
            set_interval(ms)
            return EXIT_OK
        except OSError as e:
            if e.errno in (errno.EPERM, errno.EACCES):
                raise Exit(EXIT_PERMISSION, "setting the interval needs root (CAP_SYS_ADMIN)") from None
            if e.errno == errno.EINVAL:
                raise _bad_interval(args.ms) from None
            err = e
            what = "setting"
    if err.errno == errno.EOPNOTSUPP:
        raise Exit(EXIT_NO_KERNEL, MSG_NO_KERNEL)
    if err.errno == errno.ENODEV:
        raise Exit(EXIT_RUNTIME, "no cgroup2 file system is mounted")
    if err.errno in (errno.EACCES, errno.EPERM):
        raise Exit(EXIT_PERMISSION, "reading the interval: permission denied")
    raise Exit(EXIT_RUNTIME, f"{what} the interval: {err.strerror}")


def _u32(text: str) -> Optional[int]:
    """Strict decimal as the C command reads it: digits only, fits in 32 bits."""
    if not text or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value <= 0xFFFFFFFF else None


def _cycles(option: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = _u32(text)
        if not value:
            raise argparse.ArgumentTypeError(
                f"{option} wants a number of cycles >= 1, not '{text}'")
        return value
    return parse


def _fallback_interval(text: str) -> int:
    value = _u32(text)
    if value is None or not INTERVAL_MIN_MS <= value <= INTERVAL_MAX_MS:
        raise argparse.ArgumentTypeError(
            f"--fallback-interval wants {INTERVAL_MIN_MS}..{INTERVAL_MAX_MS} ms, not '{text}'")
    return value


def _mode(text: str) -> str:
    if text not in ("auto", "subtree", "kernel", "fallback"):
        raise argparse.ArgumentTypeError(
            f"--mode is auto, subtree, kernel or fallback, not '{text}'")
    return text


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Read cgroup v2 CPU statistics once per kernel flush "
        "(cpu.stat.stream).",
        epilog="Exit status: 0 ok, 1 failure, 2 usage error, 3 no such cgroup, "
        "4 permission denied, 5 the kernel lacks the stream (or subtree) file, "
        "6 (export) prometheus_client missing.")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("watch", help="CPU use of each cgroup once per flush")
    w.add_argument("--recursive", action="store_true",
                   help="each CGROUP with all below it, those made while watching too: one "
                   "read per flush for a whole subtree (cpu.stat.stream.subtree) where the "
                   "kernel has it")
    w.add_argument("--json", action="store_true",
                   help="one JSON object per sample or event per line (cgroup, cgroup_id, "
                   "with --recursive parent_id)")
    w.add_argument("--count", type=_cycles("--count"), default=0, metavar="N",
                   help="stop after N cycles (printed ones)")
    w.add_argument("--every", type=_cycles("--every"), default=1, metavar="N",
                   help="print one cycle in N: when flush_seq reaches the next multiple "
                   "of N; CPU%% is the average since the last printed sample")
    w.add_argument("--mode", type=_mode, default="auto", metavar="auto|subtree|kernel|fallback",
                   help="subtree (--recursive only): the subtree file; kernel: a "
                   "cpu.stat.stream per cgroup; fallback: a timer and cpu.stat reads; "
                   "auto (default): the first the kernel has")
    w.add_argument("--fallback-interval", type=_fallback_interval, default=0, metavar="MS",
                   help="timer period of fallback mode (default: the kernel's "
                   "interval if set, else 1000)")
    w.add_argument("cgroups", nargs="+", metavar="CGROUP",
                   help="absolute or relative to the cgroup2 mount")
    w.set_defaults(run=watch)
    i = sub.add_parser("interval", help="print the kernel's flush interval in ms "
                       "(0: off), or set it")
    i.add_argument("ms", nargs="?", metavar="MS",
                   help=f"0 (off) or {INTERVAL_MIN_MS}..{INTERVAL_MAX_MS} ms; needs root")
    i.set_defaults(run=interval)
    from .export import add_parser as add_export    # it imports this module
    add_export(sub)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args, sys.stdout))
    except Exit as e:
        if e.message:
            print(f"{PROG}: {e.message}", file=sys.stderr)
        return e.status
    except LibraryNotFoundError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        return EXIT_OK
    except BrokenPipeError:
        # the reader went away (| head): keep Python from complaining again
        # when it flushes stdout at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_RUNTIME
