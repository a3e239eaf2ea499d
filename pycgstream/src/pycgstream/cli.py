"""python -m pycgstream: the ``cgstream`` command's ``watch`` and
``interval`` in Python, with the same output, messages and exit statuses.

``watch --json`` prints byte for byte the JSON lines of
``cgstream watch --json``.  Not mirrored: ``--recursive`` and ``--output``.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
from typing import Callable, NoReturn, Optional, Sequence, TextIO

from ._lib import LibraryNotFoundError
from ._stream import (
    Event,
    Failed,
    Group,
    Removed,
    Sample,
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

# cgstream watch --json: the integer fields of a sample line, in order
JSON_FIELDS = ("seq", "flush_time_usec", "usage_usec", "user_usec", "system_usec",
               "nice_usec", "nr_periods", "nr_throttled", "throttled_usec",
               "nr_bursts", "burst_usec")


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


def sample_json(sample: Sample, percent: Optional[float], mode: str) -> str:
    """One ``cgstream watch --json`` line for a sample (absent fields and
    the first sample's cpu_percent are null)."""
    parts = [f'"cgroup": {json_string(sample.cgroup)}']
    for key in JSON_FIELDS:
        value = getattr(sample, key)
        parts.append(f'"{key}": {"null" if value is None else value}')
    parts.append(f'"cpu_percent": {"null" if percent is None else f"{percent:.2f}"}')
    parts.append(f'"mode": "{mode}"')
    return "{" + ", ".join(parts) + "}"


def gone_json(cgroup: str, error: Optional[OSError] = None) -> str:
    if error is None:
        return f'{{"cgroup": {json_string(cgroup)}, "event": "removed"}}'
    return (f'{{"cgroup": {json_string(cgroup)}, "event": "error", '
            f'"error": "{os.strerror(error.errno or 0)}"}}')


class Watch:
    """State of one watch: the previous sample of each cgroup, the cycle
    count, and the output in the chosen format."""

    def __init__(self, group: Group, out: TextIO, json: bool, root: str,
                 every: int = 1) -> None:
        self.group = group
        self.every = every
        self.out = out
        self.json = json
        self.tty = not json and out.isatty()
        self.root_len = len(root) if root != "/" else 0
        # the last printed sample of each cgroup (with --every: or the first seen)
        self.previous: dict[str, Sample] = {}
        self.window: dict[str, int] = {}  # --every: seq // every of previous
        self.last: dict[str, tuple[Optional[float], Optional[float], Optional[float],
                                   Optional[tuple[int, int]]]] = {}
        self.removed_note: list[str] = []
        self.cycles = 0
        self.last_seq = 0

    def display(self, path: str) -> str:
        return path[self.root_len:] or "/"

    def on_sample(self, s: Sample) -> bool:
        """Print @s; False when --every skips its cycle."""
        p = self.previous.get(s.cgroup)
        if self.every > 1:
            window = (s.seq or 0) // self.every
            if p is None:  # the base of the first printed CPU%
                self.previous[s.cgroup] = s
                self.window[s.cgroup] = window
                return False
            # by window, not seq % N: a missed cycle must not skip one
            if window <= self.window[s.cgroup]:
                return False
            self.window[s.cgroup] = window
        cpu = user = system = None
        if p is not None:
            cpu = cpu_percent(p, s)
            user = cpu_percent(p, s, "user_usec")
            system = cpu_percent(p, s, "system_usec")
        throttled = None
        if (p is not None and cpu is not None and None not in
                (s.nr_throttled, s.throttled_usec, p.nr_throttled, p.throttled_usec)):
            throttled = (max(0, s.nr_throttled - p.nr_throttled),  # type: ignore[operator]
                         max(0, s.throttled_usec - p.throttled_usec))  # type: ignore[operator]
        self.last[s.cgroup] = (cpu, user, system, throttled)
        if self.json:
            print(sample_json(s, cpu, self.group.mode), file=self.out)
        elif not self.tty:
            line = f"seq {s.seq} {self.display(s.cgroup)}: "
            if cpu is None:
                line += f"first sample, {(s.usage_usec or 0) / 1e6:.3f} s of CPU so far"
            else:
                line += f"cpu {cpu:.1f}% (user {user or 0:.1f}%, system {system or 0:.1f}%)"
                if throttled is not None:
                    line += f", throttled {throttled[0]} times for {throttled[1] / 1000:.1f} ms"
            print(line, file=self.out)
        self.previous[s.cgroup] = s
        return True

    def on_gone(self, cgroup: str, error: Optional[OSError]) -> None:
        if error is not None:
            print(f"{PROG}: {cgroup}: {os.strerror(error.errno or 0)}; no longer watched",
                  file=sys.stderr)
        if self.json:
            print(gone_json(cgroup, error), file=self.out)
        elif not self.tty:
            what = "removed" if error is None else "error, no longer watched"
            print(f"{self.display(cgroup)}: {what}", file=self.out)
        else:
            self.removed_note.append(self.display(cgroup))
        self.previous.pop(cgroup, None)
        self.window.pop(cgroup, None)
        self.last.pop(cgroup, None)

    def draw_table(self) -> None:
        f = self.out
        f.write("\033[H\033[2J")
        print(f"{PROG}: {len(self.group)} cgroups, {self.group.mode} mode, seq "
              f"{self.last_seq}  (Ctrl-C quits)\n", file=f)
        print(f"{'CGROUP':<40} {'CPU%':>7} {'USER%':>7} {'SYS%':>7} {'THROTTLED':>10} "
              f"{'THR-MS':>10}", file=f)
        for path in sorted(self.last):
            cpu, user, system, throttled = self.last[path]
            row = f"{self.display(path):<40} "
            if cpu is None:
                row += f"{'-':>7} {'-':>7} {'-':>7} {'-':>10} {'-':>10}"
            else:
                row += f"{cpu:7.1f} {user or 0:7.1f} {system or 0:7.1f} "
                row += (f"{throttled[0]:10d} {throttled[1] / 1000:10.1f}" if throttled
                        else f"{'-':>10} {'-':>10}")
            print(row, file=f)
        if self.removed_note:
            print(f"\nremoved: {', '.join(self.removed_note)}", file=f)
        self.removed_note.clear()

    def batch(self, events: list[Event]) -> None:
        for ev in events:
            if isinstance(ev, Sample):
                if self.on_sample(ev) and ev.seq != self.last_seq:
                    self.last_seq = ev.seq or 0
                    self.cycles += 1
            elif isinstance(ev, Removed):
                self.on_gone(ev.cgroup, None)
            elif isinstance(ev, Failed):
                self.on_gone(ev.cgroup, ev.error)
        if events and self.tty:
            self.draw_table()
        self.out.flush()


def add_error(arg: str, e: OSError) -> Exit:
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
        return Exit(EXIT_NO_KERNEL, MSG_NO_KERNEL)
    if e.errno == errno.ENODEV:
        return Exit(EXIT_RUNTIME, "no cgroup2 file system is mounted")
    return Exit(EXIT_RUNTIME, f"{shown}: {e.strerror}")


def watch(args: argparse.Namespace, out: TextIO) -> int:
    try:
        root = resolve_path("/")
    except OSError as e:
        raise add_error("/", e) from None
    try:
        group = Group(mode=args.mode, fallback_interval_ms=args.fallback_interval)
    except OSError as e:
        if e.errno == errno.EOPNOTSUPP:
            raise Exit(EXIT_NO_KERNEL, MSG_NO_KERNEL) from None
        if e.errno == errno.ENODEV:
            raise Exit(EXIT_RUNTIME, "no cgroup2 file system is mounted") from None
        raise Exit(EXIT_RUNTIME, f"cannot set up the watch: {e.strerror}") from None
    with group:
        for arg in args.cgroups:
            try:
                group.add(resolve_path(arg))
            except FileExistsError:
                continue
            except OSError as e:
                raise add_error(arg, e) from None
        if group.mode == "kernel":
            try:
                off = get_interval() == 0
            except OSError:
                off = False
            if off:
                print(f"{PROG}: the kernel's flush interval is 0 (streaming off): no samples "
                      f"until it is set, e.g. '{PROG} interval 1000'", file=sys.stderr)
        w = Watch(group, out, args.json, root, args.every)
        previous_term = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            for events in group:
                w.batch(events)
                if args.count and w.cycles >= args.count:
                    return EXIT_OK
            print(f"{PROG}: no cgroups left to watch", file=sys.stderr)
        except (KeyboardInterrupt, Stop):
            pass
        finally:
            signal.signal(signal.SIGTERM, previous_term)
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
    if text not in ("auto", "kernel", "fallback"):
        raise argparse.ArgumentTypeError(f"--mode is auto, kernel or fallback, not '{text}'")
    return text


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Read cgroup v2 CPU statistics once per kernel flush "
        "(cpu.stat.stream).",
        epilog="Exit status: 0 ok, 1 failure, 2 usage error, 3 no such cgroup, "
        "4 permission denied, 5 the kernel lacks cpu.stat.stream.")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("watch", help="CPU use of each cgroup once per flush")
    w.add_argument("--json", action="store_true", help="one JSON object per sample per line")
    w.add_argument("--count", type=_cycles("--count"), default=0, metavar="N",
                   help="stop after N cycles (printed ones)")
    w.add_argument("--every", type=_cycles("--every"), default=1, metavar="N",
                   help="print one cycle in N: when flush_seq reaches the next multiple "
                   "of N; CPU%% is the average since the last printed sample")
    w.add_argument("--mode", type=_mode, default="auto", metavar="auto|kernel|fallback",
                   help="kernel: cpu.stat.stream; fallback: a timer and cpu.stat "
                   "reads; auto (default): kernel if there")
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
