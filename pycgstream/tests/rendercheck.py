"""What the exporter's incremental render is checked against, shared by
the host tests (made-up cycles, tests/host/test_export_render.py) and the
VM tests (the patched kernel's change snapshots, tests/vm/test_export.py):
a scrape's cgroup_* families, a full render of the same samples by a
fresh Subtree, and prometheus_client's own rendering of them."""

from __future__ import annotations

from typing import Any, Sequence

import prometheus_client
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om
from prometheus_client.parser import text_string_to_metric_families as parse_text

import pycgstream
from pycgstream import Sample, export


def blocks(text: str) -> dict[str, str]:
    """The cgroup_* families of a scrape, each its header and lines."""
    out: dict[str, str] = {}
    name = ""
    for line in text.splitlines(keepends=True):
        if line.startswith("# HELP "):
            name = line.split()[2]
            out[name] = ""
        if name.startswith("cgroup_") and line != "# EOF\n":
            out[name] += line
    return {n: b for n, b in out.items() if n.startswith("cgroup_")}


def parsed(text: str, openmetrics: bool) -> dict[str, Any]:
    fams = (parse_om if openmetrics else parse_text)(text)
    return {f.name: (f.type, f.documentation, f.unit if openmetrics else "",
                     sorted((s.name, tuple(sorted(s.labels.items())), s.value)
                            for s in f.samples))
            for f in fams if f.name.startswith("cgroup_")}


def oracle(rows: Sequence[Sample], every_stat: bool, openmetrics: bool, mount: str) -> str:
    """prometheus_client's own rendering of @rows' values (in that order):
    CounterMetricFamily/GaugeMetricFamily and add_metric, as the exporter
    did before it wrote the lines itself."""
    core = prometheus_client.core
    fams: list[Any] = []

    def family(m: export.Metric, labels: tuple[str, ...] = ("cgroup",)) -> Any:
        make = core.CounterMetricFamily if m.counter else core.GaugeMetricFamily
        fams.append(make(m.name, m.help, labels=labels, unit=m.unit))
        return fams[-1]

    label = {s.cgroup_id: pycgstream.shown_path(s.cgroup, mount) for s in rows}
    for m in export.CPU_METRICS:
        if every_stat or m.default:
            fam = family(m)
            for s in rows:
                if getattr(s, m.source) is not None:
                    fam.add_metric([label[s.cgroup_id]], getattr(s, m.source) / m.divisor)
    keys: tuple[str, ...] = export.MEMORY_DEFAULT
    if every_stat:
        keys = tuple(dict.fromkeys(k for s in rows if s.memory for k in s.memory.names))
    for key in keys:
        fam = family(export.memory_metric(key))
        for s in rows:
            if s.memory is not None and key in s.memory:
                fam.add_metric([label[s.cgroup_id]], s.memory[key])
    fam = family(export.WORKING_SET)
    for s in rows:
        if s.memory is not None and "current" in s.memory and "inactive_file" in s.memory:
            fam.add_metric([label[s.cgroup_id]],
                           max(0, s.memory["current"] - s.memory["inactive_file"]))
    for m in export.IO_METRICS:
        if every_stat or m.default:
            fam = family(m, ("cgroup", "device"))
            for s in rows:
                for name, dev in (s.io or {}).items():
                    fam.add_metric([label[s.cgroup_id], name], getattr(dev, m.source))
    for m in export.PRESSURE_METRICS:
        fam = family(m)
        for s in rows:
            if s.pressure is not None and m.source in s.pressure:
                fam.add_metric([label[s.cgroup_id]], s.pressure[m.source] / m.divisor)
    fams = [f for f in fams if f.samples]

    class Collector:
        def collect(self) -> list[Any]:
            return fams

    encode = openmetrics_latest if openmetrics else prometheus_client.generate_latest
    return encode(Collector()).decode()  # type: ignore[no-any-return]


def check_render(st: export.Subtree, scrape: export.Scrape, every_stat: bool, mount: str,
                 what: str = "") -> list[Sample]:
    """@scrape's (incremental) render of @st, in both formats (a scrape
    each: a subtree read at scrapes syncs for each), equals a fresh
    Subtree's full render of the samples @st serves after it, and
    prometheus_client's rendering of them, family by family and byte for
    byte, read alike by its parsers.  Returns those samples (the last
    scrape's), in the order served.  Nothing else may read @st meanwhile."""
    order: list[Sample] = []
    for openmetrics in (False, True):
        incremental = scrape.cgroups(openmetrics)
        order = [row.sample for row in st._rows.values()]
        fresh = export.Subtree(st.tree, mount)
        fresh.on_scrape = False     # rendered from @order, never synced
        fresh.apply(order)
        full = export.Scrape(lambda: [fresh], export.Render(every_stat)).cgroups(openmetrics)
        assert blocks(incremental) == blocks(full), f"{what}: incremental != full"
        theirs = oracle(order, every_stat, openmetrics, mount)
        assert blocks(incremental) == blocks(theirs), f"{what}: != prometheus_client's"
        mine = incremental + ("# EOF\n" if openmetrics else "")
        assert parsed(mine, openmetrics) == parsed(theirs, openmetrics), what
    return order
