"""The exporter on the patched kernel (root, in the VM), in this process
(a new interpreter is slow to start under TCG): scraped by a real
Prometheus server while it reads the subtree file once per flush
(promcheck.scenario: up, a busy cgroup's rate() against its process's CPU
share, an idle one's 0, a removed cgroup gone, promtool; here also the
throttling counters of the busy cgroup, held to half a CPU by cpu.max); a
kernel-mode tree (a stream per cgroup); scrapes that never read the
tree."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("prometheus_client")

import pycgstream  # noqa: E402
from conftest import Cgroups  # noqa: E402
from promcheck import Prometheus, in_process, scenario, tool  # noqa: E402,F401 (a fixture)
from vmfixtures import interval, patched_kernel, time_limit  # noqa: E402,F401 (fixtures)

RATE_WINDOW = 30        # seconds (promcheck.check_rate: the tolerance)


@pytest.fixture(scope="module", autouse=True)
def loopback() -> None:
    """127.0.0.1 reachable: the guest's lo may come up down."""
    def works() -> bool:
        with socket.socket() as server, socket.socket() as client:
            server.bind(("127.0.0.1", 0))
            server.listen()
            client.settimeout(5)
            try:
                client.connect(server.getsockname())
                return True
            except OSError:
                return False
    if not works():
        subprocess.run(["ip", "link", "set", "dev", "lo", "up"], check=True)
        assert works(), "no loopback network in the guest"


def label(mount: Path, cgroup: Path) -> str:
    return "/" + str(cgroup.relative_to(mount))


@pytest.mark.time_limit(600)
def test_prometheus_scrapes_subtree_mode(interval: int, cgroups: Cgroups, mount: Path,
                                         in_process: Any, tmp_path: Path) -> None:
    tool("prometheus")
    if not (mount / "cpu.stat.stream.subtree").exists():
        pytest.fail("no cpu.stat.stream.subtree on the patched kernel")
    (mount / "cgroup.subtree_control").write_text("+cpu")
    top = cgroups.make("prom")
    (top / "cgroup.subtree_control").write_text("+cpu")
    busy, idle = cgroups.make("busy", parent=top), cgroups.make("idle", parent=top)
    doomed = cgroups.make("doomed", parent=top)
    # half a CPU at most: throttled in every period the loop runs in
    (busy / "cpu.max").write_text("50000 100000")
    burner = cgroups.burn(busy)
    e = in_process([pycgstream.Tree(str(top), mode="subtree")], mount)
    e.wait("four cgroups", lambda u: len(u) == 4)
    prom = Prometheus(tmp_path / "prometheus", f"127.0.0.1:{e.port}")
    busy_is = f'{{cgroup="{label(mount, busy)}"}}'

    def throttling() -> None:
        # the cpu controller is on: periods, throttled periods and time
        for counter in ("periods", "throttled_periods", "throttled_seconds"):
            rate = prom.value(f"rate(cgroup_cpu_{counter}_total{busy_is}[{RATE_WINDOW}s])")
            assert rate is not None and rate > 0, (counter, rate)
        # flushes at the kernel's interval, read as they come
        assert (prom.value(f"delta(cgstream_flush_seq[{RATE_WINDOW}s])") or 0) > 0

    try:
        started = time.monotonic()
        prom.start()
        print(f"prometheus ready after {time.monotonic() - started:.1f} s")
        rc = scenario(prom, e.url, mount, cgroups, "subtree", busy, burner.pid, idle, doomed,
                      RATE_WINDOW, throttling)
        assert rc.share <= 0.5 + rc.tolerance, "cpu.max holds the loop to half a CPU"
    finally:
        prom.stop()


@pytest.mark.time_limit(300)
def test_kernel_mode(interval: int, cgroups: Cgroups, mount: Path, in_process: Any) -> None:
    top = cgroups.make("kernel")
    busy = cgroups.make("busy", parent=top)
    cgroups.make("idle", parent=top)
    cgroups.burn(busy)
    e = in_process([pycgstream.Tree(str(top), mode="kernel")], mount)
    first = e.wait("three cgroups", lambda u: len(u) == 3)
    e.wait("the busy cgroup's usage growing",
           lambda u: u[label(mount, busy)] > first[label(mount, busy)])
    got = e.scrape()
    assert [(s.labels["mode"], s.value) for s in got["cgstream_exporter_mode"].samples] == [
        ("kernel", 1)]
    assert got["cgstream_flush_seq"].samples[0].value > 0


@pytest.mark.time_limit(300)
def test_a_scrape_never_reads_the_tree(interval: int, cgroups: Cgroups, mount: Path,
                                       in_process: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Flushes an hour apart once the first cycles are in: many scrapes,
    no tree read, the same numbers, though a cgroup in the subtree burns
    CPU all along."""
    top = cgroups.make("still")
    busy = cgroups.make("busy", parent=top)
    cgroups.burn(busy)
    tree = pycgstream.Tree(str(top), mode="subtree")
    reads = []
    real_read = tree.read
    monkeypatch.setattr(tree, "read", lambda: reads.append(1) or real_read())
    e = in_process([tree], mount)
    e.wait("two cgroups", lambda u: len(u) == 2)
    pycgstream.set_interval(3_600_000)      # the interval fixture puts it back
    time.sleep(1)   # a flush under way, and its read, are over
    before, first = len(reads), e.usage()
    for _ in range(20):
        assert e.usage() == first
    assert len(reads) == before, "a scrape read the tree"
