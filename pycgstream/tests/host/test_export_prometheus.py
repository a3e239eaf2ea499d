"""The exporter scraped by a real Prometheus server (Debian's prometheus),
on the host: the emulation (fallback mode) on the host's cgroup2 mount.
The server is the test's own, on a free loopback port with its data in
the test's directory, scraping every second; the test asks it through
its HTTP API (promcheck.scenario): the target is up, a busy cgroup's
rate() is the CPU share of the process in it, an idle one's is 0, a
removed cgroup disappears, and promtool finds nothing wrong with a
scrape."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("prometheus_client")

import pycgstream  # noqa: E402
from conftest import Cgroups  # noqa: E402
from promcheck import CliExporter, Prometheus, scenario, tool  # noqa: E402

pytestmark = pytest.mark.usefixtures("library")

RATE_WINDOW = 30        # seconds (see promcheck.check_rate for the tolerance)


def test_prometheus_scrapes_the_exporter(cgroups: Cgroups, mount: Path, tmp_path: Path) -> None:
    tool("prometheus")
    top = cgroups.make("prom")
    busy, idle = cgroups.make("busy", parent=top), cgroups.make("idle", parent=top)
    doomed = cgroups.make("doomed", parent=top)
    burner = cgroups.burn(busy)
    exporter = CliExporter(tmp_path / "exporter", sys.executable,
                           ["--listen", "127.0.0.1:0", "--fallback-interval", "500", str(top)])
    prom = Prometheus(tmp_path / "prometheus", f"127.0.0.1:{exporter.port}")
    try:
        prom.start()
        # the controllers the subtree's root has (on a host with them on v1
        # only, cpu alone; pressure where the kernel has PSI); the emulation
        # for every one
        modes = {c: "fallback" for c in pycgstream.CONTROLLERS
                 if c == "cpu" or (top / ("cpu.pressure" if c == "pressure" else
                                          f"{c}.stat")).exists()}
        scenario(prom, exporter.url, mount, cgroups, modes, busy, burner.pid, idle, doomed,
                 RATE_WINDOW)
    finally:
        prom.stop()
        exporter.stop()
    assert "Traceback" not in exporter.stderr()
