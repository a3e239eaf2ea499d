"""The exporter against a real Prometheus server (host and VM tests):
start Debian's prometheus on loopback with a 1 s scrape interval against
an exporter, query it through its HTTP API, check a scrape with promtool,
and compare a busy cgroup's rate() with its CPU share measured from the
process itself.

Never port 9090 or the system's data directory: the server listens on a
free loopback port of its own and keeps its data in the test's directory.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest
from prometheus_client.parser import text_string_to_metric_families as parse_text

import pycgstream
from pycgstream import export
from conftest import Cgroups, python_env

SCRAPE_INTERVAL = 1.0       # seconds: the brief's, and quick to converge


def tool(name: str) -> str:
    path = shutil.which(name) or f"/usr/bin/{name}"
    if not os.access(path, os.X_OK):
        pytest.skip(f"no {name} (Debian: apt-get install prometheus; make deps installs it)")
    return path


def free_port() -> int:
    """A loopback port nothing listens on now (the kernel's pick, so never
    9090: that is below the ephemeral range)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fetch(url: str, accept: Optional[str] = None, timeout: float = 30,
          gzip_ok: bool = False) -> tuple[int, dict[str, str], bytes]:
    """GET @url: status, headers (lower-case names), body (un-gzipped)."""
    headers = {}
    if accept:
        headers["Accept"] = accept
    if gzip_ok:
        headers["Accept-Encoding"] = "gzip"
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, got, body = r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        status, got, body = e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()
    if got.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    return status, got, body


def promtool_check(text: bytes) -> None:
    """`promtool check metrics` on a scrape (text format): no problem
    reported, exit 0."""
    r = subprocess.run([tool("promtool"), "check", "metrics"], input=text,
                       capture_output=True, timeout=120)
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), (
        f"promtool check metrics: exit {r.returncode}\n{r.stdout.decode()}{r.stderr.decode()}")


def cpu_seconds(pid: int) -> float:
    """CPU time of process @pid, from the process itself (not its cgroup):
    /proc/PID/schedstat (ns) where the kernel has it, else utime + stime."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (FileNotFoundError, IndexError, ValueError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def terminate(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, a minute to go, then SIGKILL."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class InProcess:
    """An Exporter of the test's own in this process (a new interpreter is
    slow to start in a TCG guest): the HTTP server on a free loopback port
    in its thread, run() in another, its result in ``result``."""

    def __init__(self, trees: list[pycgstream.Tree], mount: Path) -> None:
        self.exporter = export.Exporter(trees, str(mount))
        self.port = self.exporter.listen(export.Listen("127.0.0.1", 0)).port
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self.result: list[bool] = []
        self.thread = threading.Thread(target=lambda: self.result.append(self.exporter.run()))
        self.thread.start()

    def scrape(self, timeout: float = 30) -> dict[str, Any]:
        """The families of a scrape in the text format, by name (counters
        without _total, as the parser names them); @timeout: a bound for
        a hang, not for speed."""
        status, _, body = fetch(self.url, timeout=timeout)
        assert status == 200
        return {f.name: f for f in parse_text(body.decode())}

    def usage(self) -> dict[str, float]:
        """cgroup_cpu_usage_seconds_total by cgroup label, in a scrape."""
        family = self.scrape().get("cgroup_cpu_usage_seconds")
        return {s.labels["cgroup"]: s.value for s in family.samples} if family else {}

    def wait(self, what: str, ok: Callable[[dict[str, float]], bool],
             timeout: float = 120) -> dict[str, float]:
        """Scrape until @ok(usage()); fail with @what after @timeout s."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.usage()
            if ok(got):
                return got
            assert time.monotonic() < deadline, f"{what}: still {got} after {timeout} s"
            time.sleep(0.05)

    def close(self) -> None:
        self.exporter.stop()
        self.thread.join(60)
        assert not self.thread.is_alive(), "run() did not return after stop()"
        self.exporter.close()


@pytest.fixture
def in_process() -> Iterator[Callable[[list[pycgstream.Tree], Path], InProcess]]:
    """Makes InProcess exporters, closed after the test."""
    made: list[InProcess] = []

    def make(trees: list[pycgstream.Tree], mount: Path) -> InProcess:
        made.append(InProcess(trees, mount))
        return made[-1]

    yield make
    for e in made:
        e.close()


class CliExporter:
    """python -m pycgstream export ARGS... run by @python (from src/),
    its stderr in workdir/exporter.log; ``url`` is its /metrics once it
    said where it serves."""

    def __init__(self, workdir: Path, python: str, args: list[str],
                 env: Optional[dict[str, str]] = None, timeout: float = 300) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.log = workdir / "exporter.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([python, "-m", "pycgstream", "export", *args],
                                         env={**python_env(), **(env or {})},
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while True:
            m = re.search(r"serving http://(\S+):(\d+)/metrics:", self.stderr())
            if m:
                host = m[1].strip("[]")
                host = {"::": "::1", "0.0.0.0": "127.0.0.1"}.get(host, host)
                self.port = int(m[2])
                self.url = (f"http://[{host}]:{self.port}/metrics" if ":" in host
                            else f"http://{host}:{self.port}/metrics")
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the exporter did not start: {self.stderr()}")
            time.sleep(0.05)

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        terminate(self.proc)


class Prometheus:
    """A Prometheus server of the test's own, scraping @target every
    SCRAPE_INTERVAL as job "cgstream"."""

    def __init__(self, workdir: Path, target: str) -> None:
        self.binary = tool("prometheus")
        self.dir = workdir
        self.target = target
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.url = ""

    def start(self, timeout: float = 300) -> None:
        """Start it and wait until it is ready (a port taken meanwhile by
        someone else: try another)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        config = self.dir / "prometheus.yml"
        config.write_text(
            "global:\n"
            f"  scrape_interval: {SCRAPE_INTERVAL:g}s\n"
            f"  scrape_timeout: {SCRAPE_INTERVAL:g}s\n"
            f"  evaluation_interval: {SCRAPE_INTERVAL:g}s\n"
            "scrape_configs:\n"
            "  - job_name: cgstream\n"
            "    static_configs:\n"
            f"      - targets: ['{self.target}']\n")
        for _ in range(3):
            port = free_port()
            self.url = f"http://127.0.0.1:{port}"
            log = open(self.dir / "prometheus.log", "ab")
            self.proc = subprocess.Popen(
                [self.binary, f"--config.file={config}",
                 f"--storage.tsdb.path={self.dir / 'data'}",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL)
            log.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    if fetch(f"{self.url}/-/ready", timeout=5)[0] == 200:
                        return
                except OSError:
                    pass
                time.sleep(0.5)
            if self.proc.poll() is None:
                self.stop()
                pytest.fail(f"prometheus not ready after {timeout} s: {self.log()}")
            if b"address already in use" not in self.log().encode():
                pytest.fail(f"prometheus exited with {self.proc.returncode}: {self.log()}")
        pytest.fail(f"prometheus found no free port: {self.log()}")

    def log(self) -> str:
        try:
            return (self.dir / "prometheus.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None:
            terminate(self.proc)

    def query(self, expr: str, at: Optional[float] = None) -> list[dict[str, Any]]:
        """An instant query's result vector (at @at, else now)."""
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        status, _, body = fetch(f"{self.url}/api/v1/query?{urllib.parse.urlencode(params)}")
        reply = json.loads(body)
        assert status == 200 and reply["status"] == "success", (expr, reply)
        result: list[dict[str, Any]] = reply["data"]["result"]
        return result

    def value(self, expr: str, at: Optional[float] = None) -> Optional[float]:
        """The single value of @expr, None when it has none."""
        result = self.query(expr, at)
        assert len(result) <= 1, (expr, result)
        return float(result[0]["value"][1]) if result else None

    # A scrape that overruns its timeout (1 s: TCG, a busy guest) makes up
    # 0 and marks every series of the target stale, so an instant query at
    # that moment finds nothing, though the exporter served the series a
    # second before (a make check run, 2026-11-26).  Range selections skip
    # the staleness markers: latest() asks for the last value scraped.
    LATEST_WINDOW = 10

    def latest(self, selector: str) -> Optional[float]:
        """The last value scraped for @selector (a series selector) in the
        last LATEST_WINDOW seconds, None when there is none."""
        return self.value(f"last_over_time({selector}[{self.LATEST_WINDOW}s])")

    def latest_all(self, selector: str) -> list[dict[str, Any]]:
        """Every series of @selector scraped in the last LATEST_WINDOW
        seconds, each with its last value (no __name__)."""
        return self.query(f"last_over_time({selector}[{self.LATEST_WINDOW}s])")

    def scrapes_failed(self, seconds: int = 60) -> str:
        """How many of the target's scrapes failed lately (for a message)."""
        failed = self.value(f'count_over_time(up{{job="cgstream"}}[{seconds}s]) - '
                            f'sum_over_time(up{{job="cgstream"}}[{seconds}s])')
        if failed is None:
            return f"no scrape of the target in the last {seconds} s"
        return f"{failed:.0f} of the scrapes in the last {seconds} s failed"

    def wait_for(self, expr: str, ok: Callable[[list[dict[str, Any]]], bool],
                 what: str, timeout: float = 120) -> list[dict[str, Any]]:
        """Query @expr until @ok(result); fail with @what after @timeout s
        (a generous limit against a hang, not a speed requirement)."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(expr)
            if ok(result):
                return result
            if time.monotonic() > deadline:
                pytest.fail(f"{what}: still {result} after {timeout} s\n{self.log()}")
            time.sleep(0.5)


@dataclass
class RateCheck:
    share: float        # CPU seconds per second of the busy process, from /proc
    rate: float         # rate(cgroup_cpu_usage_seconds_total[window]) over the same window
    lag: float          # the oldest flush a scrape in the window served, seconds
    tolerance: float
    window: float

    def __str__(self) -> str:
        return (f"rate {self.rate:.3f} vs share {self.share:.3f} over {self.window:g} s "
                f"(flush age up to {self.lag:.2f} s: tolerance {self.tolerance:.3f})")


def check_rate(prom: Prometheus, cgroup: str, pid: int, window: int) -> RateCheck:
    """rate(cgroup_cpu_usage_seconds_total{cgroup=@cgroup}[@window s]) at a
    time t1 against the CPU share of process @pid (the only task in it)
    over [t1 - window, t1], read from /proc/PID before and after.

    The tolerance is worked out, not tuned.  A scraped value is the
    cgroup's usage as of a flush up to ``lag`` before the scrape: the
    exporter's cgstream_flush_age_seconds, which Prometheus stored with
    every scrape; lag is its largest value in the window, so however late
    the flushes or the exporter were on a loaded host, it is measured, not
    assumed.  The window's first and last scrapes lie within a scrape
    interval of its ends.  So the usage difference behind rate() spans an
    interval that starts up to lag earlier or a scrape interval later
    than the window, and ends up to lag + a scrape interval earlier.  A
    single-threaded busy loop burns at most 1 CPU-second per second, so
    whatever the host does to it meanwhile, |rate - share| <=
    (lag + 2 scrape intervals) / window.  (A steady loop comes far closer:
    the lags at both ends cancel.)"""
    c0, t0 = cpu_seconds(pid), time.time()
    time.sleep(window)
    c1, t1 = cpu_seconds(pid), time.time()
    share = (c1 - c0) / (t1 - t0)
    series = f'cgroup_cpu_usage_seconds_total{{cgroup="{cgroup}"}}'
    # everything up to t1 is stored once a later scrape is
    prom.wait_for(f"timestamp({series})",
                  lambda r: bool(r) and float(r[0]["value"][1]) > t1 + SCRAPE_INTERVAL,
                  f"a scrape of {cgroup} after the window")
    rate = prom.value(f"rate({series}[{window}s])", at=t1)
    assert rate is not None, f"no rate of {series} at {t1}\n{prom.log()}"
    lag = prom.value(f"max(max_over_time(cgstream_flush_age_seconds[{window + 2}s]))", at=t1)
    assert lag is not None, f"no cgstream_flush_age_seconds at {t1}"
    return RateCheck(share, rate, lag, (lag + 2 * SCRAPE_INTERVAL) / window, window)


def scenario(prom: Prometheus, exporter_url: str, mount: Path, cgroups: Cgroups,
             modes: dict[str, str], busy: Path, busy_pid: int, idle: Path, doomed: Path,
             window: int, more: Callable[[], None] = lambda: None, served: int = 4) -> RateCheck:
    """What the host and the VM tests ask a Prometheus server scraping an
    exporter of subtree @busy's parent, which has @busy (with @busy_pid,
    the process burning CPU), @idle and @doomed below it, and @served
    cgroups in all (the parent included): up is 1, promtool is clean, each
    controller's mode (@modes) and the number of cgroups, @busy's rate()
    against @busy_pid's CPU share (check_rate), @idle's rate() 0, then
    @more(), then @doomed removed and gone from the server's results (every
    series of it) and the exporter's scrape, up still 1."""
    def label(cgroup: Path) -> str:
        return "/" + str(cgroup.relative_to(mount))

    def one(expected: str) -> Callable[[list[dict[str, Any]]], bool]:
        return lambda r: len(r) == 1 and r[0]["value"][1] == expected

    prom.wait_for('up{job="cgstream"}', one("1"), "up == 1")
    promtool_check(fetch(exporter_url)[2])
    prom.wait_for("cgstream_exporter_cgroups", one(str(served)), f"{served} cgroups served")
    assert sorted((m["metric"]["controller"], m["metric"]["mode"], m["value"][1])
                  for m in prom.latest_all("cgstream_exporter_mode")) == sorted(
        (c, m, "1") for c, m in modes.items())

    rc = check_rate(prom, label(busy), busy_pid, window)
    print(rc)
    assert abs(rc.rate - rc.share) <= rc.tolerance, rc
    assert prom.value(f'rate(cgroup_cpu_usage_seconds_total{{cgroup="{label(idle)}"}}'
                      f'[{window}s])') == 0
    more()

    gone = f'{{cgroup="{label(doomed)}"}}'
    assert prom.latest_all(gone), "the cgroup to remove is there first"
    cgroups.remove(doomed)
    prom.wait_for(gone, lambda r: r == [], "the removed cgroup's series gone from Prometheus")
    prom.wait_for("cgstream_exporter_cgroups", one(str(served - 1)),
                  f"{served - 1} cgroups served")
    assert f'cgroup="{label(doomed)}"' not in fetch(exporter_url)[2].decode()
    prom.wait_for('up{job="cgstream"}', one("1"), "up == 1 after the removal")
    return rc
