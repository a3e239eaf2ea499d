"""Pressure stall information on the host (the emulation: each cgroup's
cpu.pressure, memory.pressure, io.pressure, irq.pressure on a timer),
where the kernel has PSI (else a skip, after the objects say ENOMEDIUM):
Sample.pressure by the kernel's names in SPEC.md's SCHEMA order, a busy
cgroup's totals against its files, pressure_percent(), none for a cgroup
whose cgroup.pressure is 0 (not zeros); and the exporter's pressure
counters: made-up samples in both formats (every family, seconds, the
cAdvisor-like names), and a busy cgroup's cpu.some total served in
seconds as its file has it."""

from __future__ import annotations

import errno
import os
import re
import time
from pathlib import Path
from typing import Any, Optional

import pytest

import pycgstream
from pycgstream import Changed, Pressure, Sample, export, pressure_percent
from conftest import Cgroups

pytestmark = pytest.mark.usefixtures("library")

KEYS = ("avg10", "avg60", "avg300", "total")


def schema_names(cgroup: Path) -> list[str]:
    """SPEC.md's SCHEMA names of this kernel: cpu, memory and io some and
    full, irq full where the kernel has irq.pressure."""
    names = [f"{r}.{k}.{v}" for r in ("cpu", "memory", "io") for k in ("some", "full")
             for v in KEYS]
    if (cgroup / "irq.pressure").exists():
        names += [f"irq.full.{v}" for v in KEYS]
    return names


def file_total(cgroup: Path, resource: str = "cpu", kind: str = "some") -> int:
    for line in (cgroup / f"{resource}.pressure").read_text().splitlines():
        if line.startswith(kind + " "):
            return int(re.search(r"total=(\d+)", line).group(1))  # type: ignore[union-attr]
    raise AssertionError(f"no {kind} line in {cgroup}/{resource}.pressure")


@pytest.fixture
def psi(mount: Path) -> Path:
    if not (mount / "cpu.pressure").exists():
        with pytest.raises(OSError) as e:
            pycgstream.Stream("/", mode="fallback", controllers=("pressure",))
        assert e.value.errno == errno.ENOMEDIUM
        pytest.skip("the host's kernel has no PSI (ENOMEDIUM checked)")
    return mount


def busy_cgroup(cgroups: Cgroups, name: str = "busy") -> Path:
    """A cgroup whose tasks wait for the CPUs: more busy loops than CPUs."""
    cg = cgroups.make(name)
    for _ in range((os.cpu_count() or 1) + 1):
        cgroups.burn(cg)
    return cg


def test_stream_pressure(psi: Path, cgroups: Cgroups) -> None:
    busy = busy_cgroup(cgroups)
    samples: list[Sample] = []
    with pycgstream.Stream(busy, mode="fallback", fallback_interval_ms=100,
                           controllers=("cpu", "pressure")) as st:
        assert st.controllers == ("cpu", "pressure")
        assert st.modes["pressure"] == "fallback"
        for _ in range(6):
            before = file_total(busy)
            st.wait(5)
            s = st.read()
            after = file_total(busy)
            assert s is not None and isinstance(s.pressure, Pressure)
            assert list(s.pressure) == schema_names(busy)
            assert before <= s.pressure["cpu.some.total"] <= after
            assert s.pressure.stalled_usec("cpu.some") == s.pressure["cpu.some.total"]
            assert s.pressure.stalled_usec("irq.some") is None     # irq has no some
            assert all(0 <= v <= 10000 for k, v in s.pressure.items() if ".avg" in k)
            samples.append(s)
    pct = pressure_percent(samples[0], samples[-1], "cpu.some")
    assert pct is not None and 0 < pct <= 100, pct
    assert pressure_percent(samples[0], samples[-1], "gpu.some") is None
    assert pressure_percent(samples[-1], samples[-1]) is None   # no time passed


def test_pressure_off_carries_none(psi: Path, cgroups: Cgroups) -> None:
    top = cgroups.make("top")
    on, off = cgroups.make("on", top), cgroups.make("off", top)
    (off / "cgroup.pressure").write_text("0")
    with pytest.raises(OSError) as e:
        pycgstream.Stream(off, mode="fallback", controllers=("cpu", "pressure"))
    assert e.value.errno == errno.ENOMEDIUM
    with pycgstream.Tree(top, mode="fallback", fallback_interval_ms=50) as tree:
        assert tree.controllers == ("cpu", "pressure")     # the default set, here
        samples = {s.cgroup: s for s in next(tree) if isinstance(s, Sample)}
    assert samples[str(on)].pressure is not None
    assert samples[str(off)].pressure is None and samples[str(off)].usage_usec is not None
    assert pressure_percent(samples[str(off)], samples[str(off)]) is None


def test_group_changes_with_pressure(psi: Path, cgroups: Cgroups) -> None:
    """changes=True: the busy cgroup's pressure moves (its cpu.some total),
    an idle one's never after its first values."""
    busy, idle = busy_cgroup(cgroups), cgroups.make("idle")
    with pycgstream.Group([busy, idle], mode="fallback", fallback_interval_ms=100,
                          controllers=("pressure",), changes=True) as group:
        first = next(group)
        assert {ev.cgroup for ev in first} == {str(busy), str(idle)}
        moved = 0
        for batch in (next(group) for _ in range(4)):
            assert all(isinstance(ev, Changed) for ev in batch)
            assert {ev.cgroup for ev in batch} <= {str(busy)}, batch
            moved += sum("pressure" in ev.changed for ev in batch if isinstance(ev, Changed))
    assert moved >= 2


# --- the exporter's pressure counters ------------------------------------------

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.openmetrics.exposition import generate_latest as om_latest  # noqa: E402
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families as parse_text  # noqa: E402

MOUNT = "/sys/fs/cgroup"
# the names the exporter serves them under, beside cAdvisor's
# container_pressure_<resource>_{waiting,stalled}_seconds_total
SERVED = {"cpu.some.total": "cgroup_pressure_cpu_waiting_seconds",
          "cpu.full.total": "cgroup_pressure_cpu_stalled_seconds",
          "memory.some.total": "cgroup_pressure_memory_waiting_seconds",
          "memory.full.total": "cgroup_pressure_memory_stalled_seconds",
          "io.some.total": "cgroup_pressure_io_waiting_seconds",
          "io.full.total": "cgroup_pressure_io_stalled_seconds",
          "irq.full.total": "cgroup_pressure_irq_stalled_seconds"}


class FakeTree:
    def __init__(self, path: str) -> None:
        self.path = path
        self.modes = {"cpu": "subtree", "pressure": "subtree"}

    def sync(self, timeout: Optional[float] = None) -> list[Any]:
        return []

    def publications(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


def scrape(st: export.Subtree, openmetrics: bool) -> dict[str, Any]:
    registry = prometheus_client.CollectorRegistry()
    text = export.Scrape(lambda: [st], export.Render()).body(
        registry, om_latest if openmetrics else prometheus_client.generate_latest,
        openmetrics).decode()
    return {f.name: f for f in (parse_om if openmetrics else parse_text)(text)}


@pytest.mark.parametrize("openmetrics", [False, True], ids=["text", "openmetrics"])
def test_exporter_pressure_counters(openmetrics: bool) -> None:
    names = [f"{r}.{k}.{v}" for r in ("cpu", "memory", "io") for k in ("some", "full")
             for v in KEYS] + [f"irq.full.{v}" for v in KEYS]
    values = [3_000_000 * (i + 1) if n.endswith(".total") else 150 + i for i, n in enumerate(names)]
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    st = export.Subtree(FakeTree(MOUNT), MOUNT)  # type: ignore[arg-type]
    st.apply([Sample(MOUNT + "/a", cgroup_id=5, parent_id=0, seq=1, flush_time_usec=now,
                     usage_usec=1, pressure=Pressure(names, values, 1, now)),
              Sample(MOUNT + "/off", cgroup_id=6, parent_id=5, seq=1, flush_time_usec=now,
                     usage_usec=1)])
    got = scrape(st, openmetrics)
    for key, family in SERVED.items():
        f = got[family]
        assert f.type == "counter" and f.documentation.endswith(f"{key.split('.')[0]}.pressure "
                                                                f"{key.split('.')[1]} total)")
        if openmetrics:
            assert f.unit == "seconds"
        series = {s.labels["cgroup"]: s.value for s in f.samples if s.name.endswith("_total")}
        # in seconds; the cgroup without pressure has no series, not a 0
        assert series == {"/a": values[names.index(key)] / 1e6}, (family, series)
    assert not [n for n in got if n.startswith("cgroup_pressure_") and
                n not in SERVED.values()], sorted(got)


def test_exporter_serves_a_busy_cgroups_pressure(psi: Path, cgroups: Cgroups) -> None:
    busy = busy_cgroup(cgroups)
    with pycgstream.Tree(busy, mode="fallback", fallback_interval_ms=100,
                         changes=True) as tree:
        st = export.Subtree(tree, str(psi))
        before = file_total(busy)
        st.sync(time.monotonic())
        after = file_total(busy)
        text = export.Scrape(lambda: [st], export.Render()).cgroups(False)
    label = pycgstream.shown_path(str(busy), str(psi))
    line = re.search(r'^cgroup_pressure_cpu_waiting_seconds_total\{cgroup="(.*)"\} (\S+)$', text,
                     re.M)
    assert line and line.group(1) == label, text[:2000]
    assert before / 1e6 <= float(line.group(2)) <= after / 1e6
    assert "cgroup_pressure_memory_stalled_seconds_total{" in text
