"""python -m pycgstream export on the host (the emulation: fallback mode on
the host's cgroup2 mount): the values kept per cycle, the metrics and
their names, both formats, a scrape that never reads cgroupfs, removed
cgroups gone from the next cycle's scrape, the flush age of an idle
subtree (the tree's publications), a subtree read at scrapes as in the
kernel's modes (under libcgstream's fake kernel), the command with
systemd's notifications and SIGTERM, prometheus_client 0.16 (Debian's,
for the installed service) and the errors."""

from __future__ import annotations

import errno
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest  # noqa: E402
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families as parse_text  # noqa: E402

import pycgstream  # noqa: E402
from pycgstream import (Added, Failed, Io, IoDevice, Memory, Publication, Removed,  # noqa: E402
                        Sample, export)
from conftest import CHECKOUT, Cgroups, as_nobody, python_env  # noqa: E402
from promcheck import CliExporter, fetch, in_process, promtool_check  # noqa: E402,F401 (a fixture)

pytestmark = pytest.mark.usefixtures("library")

OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


# --- --listen ----------------------------------------------------------------

@pytest.mark.parametrize("text, host, port", [
    ("127.0.0.1:10340", "127.0.0.1", 10340),
    ("[::1]:0", "::1", 0),
    (":9", "", 9),
    ("localhost:65535", "localhost", 65535),
    ("[::]:80", "::", 80),
])
def test_listen_addresses(text: str, host: str, port: int) -> None:
    assert export.parse_listen(text) == export.Listen(host, port)


@pytest.mark.parametrize("text, why", [
    ("", "no port"), ("10340", "no port"), ("127.0.0.1", "no port"),
    ("::1:80", "brackets"), ("[::1]", "no port"), ("[nope]:1", "not an IPv6 address"),
    ("h:-1", "not a port number"), ("h:65536", "not a port number"), ("h:", "not a port"),
    ("h: 1", "not a port"), ("a b:1", "not a host name"), ("h:１２", "not a port number"),
])
def test_bad_listen_addresses(text: str, why: str) -> None:
    with pytest.raises(Exception) as e:
        export.parse_listen(text)
    assert why in str(e.value) and repr(text)[1:-1] in str(e.value)


def test_default_listen_is_loopback() -> None:
    args = export.parser().parse_args(["export", "/"])
    assert args.listen == export.Listen("127.0.0.1", export.DEFAULT_PORT)
    assert args.mode == "auto" and args.controllers is None, "the library's default set"
    assert args.stats == "default"


@pytest.mark.parametrize("argv", [["watch", "/"], ["interval"], ["export"],
                                  ["export", "--controllers", "cpu,disk", "/"],
                                  ["export", "--controllers", "", "/"],
                                  ["export", "--fallback-interval", "0", "/"],
                                  ["export", "--stats", "some", "/"]])
def test_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """watch and interval are the C command's: pycgstream has only export."""
    with pytest.raises(SystemExit) as e:
        export.main(argv)
    assert e.value.code == export.EXIT_USAGE
    err = capsys.readouterr().err
    assert "usage: pycgstream" in err and "Traceback" not in err
    if argv[0] != "export":
        assert "invalid choice" in err


def test_help_names_the_c_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        export.main(["--help"])
    assert "'cgstream' command" in capsys.readouterr().out


def test_controllers_option() -> None:
    args = export.parser().parse_args(["export", "--controllers", "memory,cpu,memory", "/"])
    assert args.controllers == ("cpu", "memory")
    assert export.parser().parse_args(["export", "--controllers", "all", "/"]).controllers == (
        "cpu", "memory", "io", "pressure")


# --- subtrees and the scrape, from made-up cycles ----------------------------

MOUNT = "/sys/fs/cgroup"
MEMORY_NAMES = ("anon", "file", "inactive_file", "pgfault", "pgmajfault", "workingset_refault_anon",
                "current", "swap.current", "events.low", "events.high", "events.max",
                "events.oom", "events.oom_kill")


def now_usec() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def memory(base: int, names: tuple[str, ...] = MEMORY_NAMES) -> Memory:
    return Memory(names, [base + i for i in range(len(names))], 7,
                  time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000)


def sample(path: str, cid: int, seq: int, usage: int, **more: Any) -> Sample:
    return Sample(MOUNT + path if path != "/" else MOUNT, cgroup_id=cid, parent_id=0,
                  seq=seq, flush_time_usec=time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000,
                  usage_usec=usage, user_usec=usage // 4, system_usec=usage - usage // 4,
                  nice_usec=0, flush_missed=2, **more)


class FakeTree:
    """What a Subtree uses of a Tree: path, modes, sync() handing out
    the batches queued in ``batches`` (counted in ``syncs``), and
    publications(): ``published``, what the library would say of the
    tree's last cycle (set by the test)."""

    def __init__(self, path: str, modes: dict[str, str]) -> None:
        self.path = MOUNT + path if path != "/" else MOUNT
        self.modes = modes
        self.batches: list[list[Any]] = []
        self.syncs = 0
        self.closed = False
        self.published: dict[str, Publication] = {}

    def sync(self, timeout: Optional[float] = None) -> list[Any]:
        self.syncs += 1
        return self.batches.pop(0) if self.batches else []

    def publications(self) -> dict[str, Publication]:
        return dict(self.published)

    def close(self) -> None:
        self.closed = True


STREAMED = {"cpu": "subtree", "memory": "subtree", "io": "subtree"}
EMULATED = {"cpu": "fallback", "memory": "fallback", "io": "fallback"}


def fake_subtree(path: str = "/", modes: Optional[dict[str, str]] = None) -> export.Subtree:
    tree: Any = FakeTree(path, modes or STREAMED)
    return export.Subtree(tree, MOUNT)


def publish(st: export.Subtree, cpu: Optional[int] = None, memory: Optional[int] = None,
            io: Optional[int] = None, at: Optional[int] = None, skipped: int = 2) -> None:
    """The fake tree's publications from now on: each controller's seq,
    as of @at (CLOCK_MONOTONIC usec; now)."""
    at = now_usec() if at is None else at
    st.tree.published = {c: Publication(seq, at, skipped)  # type: ignore[attr-defined]
                         for c, seq in (("cpu", cpu), ("memory", memory), ("io", io))
                         if seq is not None}


def served(st: export.Subtree) -> dict[str, Sample]:
    """The cgroups a subtree serves now, by label value, with their samples."""
    return {row.label[len('cgroup="'):-1]: row.sample for row in st._rows.values()}


def test_subtree_per_cycle(capsys: pytest.CaptureFixture[str]) -> None:
    st = fake_subtree("/a")
    assert served(st) == {} and st.flushes == {} and st.cycles == 0
    publish(st, cpu=5)
    st.apply([Added(MOUNT + "/a", 10, 0), Added(MOUNT + "/a/b", 11, 10),
              sample("/a", 10, 5, 1000), sample("/a/b", 11, 5, 500)])
    assert [(label, s.cgroup_id) for label, s in served(st).items()] == [("/a", 10), ("/a/b", 11)]
    assert (st.flushes["cpu"][0], st.cycles, st.flush_missed) == (5, 1, 2)
    label_a = st._rows[10].label
    # a cycle later: b removed, c added and failed, a again
    st.apply([Removed(MOUNT + "/a/b", cgroup_id=11, parent_id=10),
              Added(MOUNT + "/a/c", 12, 10), sample("/a", 10, 6, 1500)])
    publish(st, cpu=9)
    st.apply([Failed(MOUNT + "/a/c", OSError(errno.EMFILE, "x"), cgroup_id=12, parent_id=10),
              sample("/a", 10, 9, 2000)])
    assert [s.usage_usec for s in served(st).values()] == [2000]
    assert capsys.readouterr().err.count("/a/c: Too many open files (left out") == 1
    st.apply([Failed(MOUNT + "/a/c", OSError(errno.EMFILE, "x"), cgroup_id=12, parent_id=10)])
    assert capsys.readouterr().err == "", "a failing cgroup is said once, not every cycle"
    assert st.errors == 2 and list(served(st)) == ["/a"]
    st.apply([sample("/a", 10, 9, 2000)])
    assert st._rows[10].label is label_a, "labels are made once per cgroup"
    assert (st.flushes["cpu"][0], st.cycles, st.errors) == (9, 5, 2)
    # a failing cgroup is back with its next values
    st.apply([sample("/a/c", 12, 11, 7)])
    assert list(served(st)) == ["/a", "/a/c"]
    # the same path made again: a new id, a new series
    st.apply([Added(MOUNT + "/a/b", 13, 10), sample("/a", 10, 10, 2500),
              sample("/a/b", 13, 10, 0)])
    assert set(served(st)) == {"/a", "/a/b", "/a/c"} and 13 in st._rows


def test_several_cycles_in_one_batch_keep_the_latest() -> None:
    st = fake_subtree()
    st.apply([sample("/", 1, 3, 10), sample("/", 1, 4, 20)])
    assert [(s.seq, s.usage_usec) for s in served(st).values()] == [(4, 20)]


def test_a_batch_without_changes_is_a_cycle_that_keeps_the_values() -> None:
    """A tree with changes=True hands out nothing of the cgroups whose
    values stayed: an empty batch is a cycle in which none moved, and
    the values served are as of its publication all the same."""
    st = fake_subtree()
    publish(st, cpu=3)
    st.apply([sample("/", 1, 3, 10)])
    publish(st, cpu=4)
    st.apply([])
    assert (st.flushes["cpu"][0], st.cycles, list(served(st))) == (4, 2, ["/"])
    publish(st, cpu=5)
    st.published()  # the emulation's cycle with no change: no batch, no cycle counted
    assert (st.flushes["cpu"][0], st.cycles) == (5, 2)


def test_flushes_are_the_trees_publications() -> None:
    """Per controller, the tree's word (Tree.publications()), not the
    newest sample's: those may be older (a cgroup that did not change)."""
    st = fake_subtree()
    publish(st, cpu=3, memory=7, io=11, at=99, skipped=5)
    st.apply([sample("/", 1, 1, 10, memory=memory(0), io=Io([IoDevice(7, 0, 1)], 2, 2))])
    assert st.flushes == {"cpu": (3, 99), "memory": (7, 99), "io": (11, 99)}
    assert st.flush_missed == 5
    publish(st, memory=8)   # a tree without cpu: no flush_missed
    st.apply([])
    assert st.flushes == {"memory": (8, st.flushes["memory"][1])} and st.flush_missed is None


def test_flush_age_of_an_idle_subtree() -> None:
    """Scrapes of a streamed subtree in which nothing changes (every sync
    an empty batch) serve a flush age that stays small and a seq that
    moves on, as the tree's publications do."""
    st = fake_subtree("/idle")
    tree: Any = st.tree
    tree.batches = [[Added(MOUNT + "/idle", 5, 0), sample("/idle", 5, 10, 100)]]
    scraper = Scraper(st)
    seqs = []
    for i in range(5):
        publish(st, cpu=10 + i)     # what the sync will find
        got = families(scraper)
        seqs.append(got["cgstream_flush_seq"].samples[0].value)
        age = got["cgstream_flush_age_seconds"].samples[0].value
        assert 0 <= age < 1, age
        time.sleep(0.2)
    assert seqs == [10, 11, 12, 13, 14] and tree.syncs == 5


class Scraper:
    """The exporter's /metrics for made-up subtrees: a Scrape and a
    registry with the exporter's own collector, kept across scrapes (as
    the exporter keeps them: what is rendered once is reused)."""

    def __init__(self, *subtrees: export.Subtree, every_stat: bool = False) -> None:
        self.registry = prometheus_client.CollectorRegistry()
        self.registry.register(export.OwnCollector(lambda: subtrees))
        self.scrape = export.Scrape(lambda: subtrees, export.Render(every_stat))

    def text(self, openmetrics: bool = False) -> str:
        encoder = openmetrics_latest if openmetrics else prometheus_client.generate_latest
        return self.scrape.body(self.registry, encoder, openmetrics).decode()


def families(scraper: Scraper, openmetrics: bool = False) -> dict[str, Any]:
    text = scraper.text(openmetrics)
    if openmetrics:
        assert text.endswith("# EOF\n") and text.count("# EOF") == 1
        return {f.name: f for f in parse_om(text)}
    return {f.name: f for f in parse_text(text)}


@pytest.mark.parametrize("openmetrics", [False, True], ids=["text", "openmetrics"])
@pytest.mark.parametrize("every_stat", [False, True], ids=["default", "all"])
def test_metrics(openmetrics: bool, every_stat: bool) -> None:
    busy, capped = fake_subtree("/busy.slice"), fake_subtree("/capped", EMULATED)
    publish(busy, cpu=41, memory=7, io=0)
    publish(capped, cpu=3)
    busy.apply([sample("/busy.slice", 7, 41, 2_500_000, memory=memory(1 << 20),
                       io=Io([IoDevice(7, 0, 4096, 8192, 1, 2, 0, 0),
                              IoDevice(259, 3, 1, 2, 3, 4, 5, 6)], 0, now_usec())),
                sample("/busy.slice/x.service", 8, 41, 1_000_000)])
    capped.apply([sample("/capped", 9, 3, 4_000_000, nr_periods=50, nr_throttled=20,
                         throttled_usec=1_500_000, nr_bursts=1, burst_usec=250)])
    got = families(Scraper(busy, capped, every_stat=every_stat), openmetrics)

    def values(name: str, label: str = "cgroup") -> dict[str, float]:
        return {s.labels[label]: s.value for s in got[name].samples
                if not s.name.endswith("_created")}

    # the parsers name a counter family without _total, its samples with
    usage = "cgroup_cpu_usage_seconds"
    assert got[usage].type == "counter"
    assert values(usage) == {"/busy.slice": 2.5, "/busy.slice/x.service": 1.0, "/capped": 4.0}
    # the bandwidth fields exist only where the cpu controller is on
    assert values("cgroup_cpu_periods") == {"/capped": 50}
    assert values("cgroup_cpu_throttled_periods") == {"/capped": 20}
    assert values("cgroup_cpu_throttled_seconds") == {"/capped": 1.5}
    every_cpu = {"cgroup_cpu_user_seconds", "cgroup_cpu_system_seconds",
                 "cgroup_cpu_nice_seconds", "cgroup_cpu_bursts", "cgroup_cpu_burst_seconds"}
    if every_stat:
        assert values("cgroup_cpu_user_seconds")["/busy.slice"] == 0.625
        assert values("cgroup_cpu_system_seconds")["/busy.slice"] == 1.875
        assert values("cgroup_cpu_nice_seconds")["/capped"] == 0
        assert values("cgroup_cpu_bursts") == {"/capped": 1}
        assert values("cgroup_cpu_burst_seconds") == {"/capped": 0.00025}
    else:
        assert not every_cpu & set(got), "the default set: usage and throttling"
    assert all(s.name == usage + "_total" for s in got[usage].samples)
    if openmetrics:
        assert got[usage].unit == "seconds"
    # memory: the default set, only for the cgroup that has memory values
    base = 1 << 20
    expect = {"cgroup_memory_anon_bytes": ("gauge", base + 0),
              "cgroup_memory_file_bytes": ("gauge", base + 1),
              "cgroup_memory_inactive_file_bytes": ("gauge", base + 2),
              "cgroup_memory_pgfault": ("counter", base + 3),
              "cgroup_memory_pgmajfault": ("counter", base + 4),
              "cgroup_memory_current_bytes": ("gauge", base + 6),
              "cgroup_memory_swap_current_bytes": ("gauge", base + 7),
              "cgroup_memory_events_high": ("counter", base + 9),
              "cgroup_memory_events_max": ("counter", base + 10),
              "cgroup_memory_events_oom_kill": ("counter", base + 12),
              # current - inactive_file, as cAdvisor's working set
              "cgroup_memory_working_set_bytes": ("gauge", 4)}
    memory_families = {n for n in got if n.startswith("cgroup_memory_")}
    if every_stat:
        assert memory_families == {export.memory_metric(k).name +
                                   ("" if export.memory_metric(k).counter else "_bytes")
                                   for k in MEMORY_NAMES} | {"cgroup_memory_working_set_bytes"}
    else:
        assert memory_families == set(expect)
    for name, (kind, value) in expect.items():
        assert got[name].type == kind, name
        assert values(name) == {"/busy.slice": value}, name
        if kind == "counter":
            assert all(s.name == name + "_total" for s in got[name].samples)
        if openmetrics and kind == "gauge":
            assert got[name].unit == "bytes"
    # io: per device, "MAJ:MIN"
    def io(name: str) -> dict[tuple[str, str], float]:
        return {(s.labels["cgroup"], s.labels["device"]): s.value for s in got[name].samples
                if not s.name.endswith("_created")}
    assert io("cgroup_io_read_bytes") == {("/busy.slice", "7:0"): 4096,
                                          ("/busy.slice", "259:3"): 1}
    assert io("cgroup_io_written_bytes") == {("/busy.slice", "7:0"): 8192,
                                             ("/busy.slice", "259:3"): 2}
    assert io("cgroup_io_reads")[("/busy.slice", "259:3")] == 3
    assert io("cgroup_io_writes")[("/busy.slice", "259:3")] == 4
    if every_stat:
        assert io("cgroup_io_discarded_bytes")[("/busy.slice", "259:3")] == 5
        assert io("cgroup_io_discards")[("/busy.slice", "259:3")] == 6
    else:
        assert "cgroup_io_discards" not in got
    # the exporter's own
    def own(name: str) -> dict[tuple[str, str], float]:
        return {(s.labels["subtree"], s.labels["controller"]): s.value
                for s in got[name].samples}
    assert own("cgstream_flush_seq") == {("/busy.slice", "cpu"): 41, ("/busy.slice", "memory"): 7,
                                         ("/busy.slice", "io"): 0, ("/capped", "cpu"): 3}
    assert values("cgstream_exporter_cgroups", "subtree") == {"/busy.slice": 2, "/capped": 1}
    assert values("cgstream_flush_missed", "subtree") == {"/busy.slice": 2, "/capped": 2}
    # the streamed subtree's scrape synced: a cycle too, though nothing changed
    assert values("cgstream_exporter_cycles", "subtree") == {"/busy.slice": 2, "/capped": 1}
    assert values("cgstream_exporter_read_errors", "subtree")["/capped"] == 0
    ages = own("cgstream_flush_age_seconds")
    assert all(0 <= age < 60 for age in ages.values()), ages
    modes = {(s.labels["subtree"], s.labels["controller"], s.labels["mode"]): s.value
             for s in got["cgstream_exporter_mode"].samples}
    assert modes == {**{("/busy.slice", c, "subtree"): 1 for c in STREAMED},
                     **{("/capped", c, "fallback"): 1 for c in EMULATED}}


def test_every_memory_key() -> None:
    """--stats all: a family for every name of every cgroup, sizes
    as _bytes gauges, events as _total counters; promtool-clean."""
    st = fake_subtree()
    other = ("anon", "hugetlb", "thp_fault_alloc", "zswap", "zswpout")
    st.apply([sample("/", 1, 3, 10, memory=memory(100)),
              sample("/x", 2, 3, 10, memory=memory(200, other))])
    scraper = Scraper(st, every_stat=True)
    got = families(scraper)
    names = {n for n in got if n.startswith("cgroup_memory_")}
    assert names == {
        "cgroup_memory_anon_bytes", "cgroup_memory_file_bytes",
        "cgroup_memory_inactive_file_bytes", "cgroup_memory_pgfault",
        "cgroup_memory_pgmajfault", "cgroup_memory_workingset_refault_anon",
        "cgroup_memory_current_bytes", "cgroup_memory_swap_current_bytes",
        "cgroup_memory_events_low", "cgroup_memory_events_high", "cgroup_memory_events_max",
        "cgroup_memory_events_oom", "cgroup_memory_events_oom_kill",
        "cgroup_memory_hugetlb_bytes", "cgroup_memory_thp_fault_alloc",
        "cgroup_memory_zswap_bytes", "cgroup_memory_zswpout", "cgroup_memory_working_set_bytes"}
    assert {s.labels["cgroup"]: s.value for s in got["cgroup_memory_anon_bytes"].samples} == {
        "/": 100, "/x": 200}
    assert {s.labels["cgroup"] for s in got["cgroup_memory_zswpout"].samples} == {"/x"}
    assert got["cgroup_memory_zswpout"].type == "counter"
    promtool_check(scraper.text().encode())


@pytest.mark.parametrize("key, name, counter", [
    ("anon", "cgroup_memory_anon_bytes", False),
    ("swapcached", "cgroup_memory_swapcached_bytes", False),
    ("swpin_zero", "cgroup_memory_swpin_zero", True),
    ("anon_thp", "cgroup_memory_anon_thp_bytes", False),
    ("pgdemote_kswapd", "cgroup_memory_pgdemote_kswapd", True),
    ("numa_hint_faults", "cgroup_memory_numa_hint_faults", True),
    ("events.oom_group_kill", "cgroup_memory_events_oom_group_kill", True),
    ("swap.current", "cgroup_memory_swap_current_bytes", False),
    ("odd-key/x", "cgroup_memory_odd_key_x_bytes", False),
])
def test_memory_names(key: str, name: str, counter: bool) -> None:
    m = export.memory_metric(key)
    assert (m.name + ("" if counter else "_bytes"), m.counter) == (name, counter)


def test_no_samples_yet_and_gone_subtrees() -> None:
    waiting, gone = fake_subtree("/w"), fake_subtree("/g")
    gone.apply([sample("/g", 3, 1, 10)])
    gone.gone = True
    got = families(Scraper(waiting, gone))
    assert not any(name.startswith("cgroup_") for name in got)
    assert [s.labels["subtree"] for s in got["cgstream_exporter_cgroups"].samples] == ["/w"]
    assert got["cgstream_flush_seq"].samples == []


def test_a_scrape_syncs_streamed_subtrees_only() -> None:
    """Kernel-streamed subtrees are read at each scrape, once (not
    between scrapes); emulated ones never at a scrape."""
    streamed, emulated = fake_subtree("/s"), fake_subtree("/e", EMULATED)
    assert streamed.on_scrape and not emulated.on_scrape
    mixed = fake_subtree("/m", {"cpu": "subtree", "memory": "fallback"})
    assert not mixed.on_scrape, "a controller in the emulation: the timer reads the tree"
    tree: Any = streamed.tree
    tree.batches = [[Added(MOUNT + "/s", 5, 0), sample("/s", 5, 10, 100)],
                    [sample("/s", 5, 11, 200)]]
    scraper = Scraper(streamed, emulated)
    first = families(scraper)
    assert {s.value for s in first["cgroup_cpu_usage_seconds"].samples} == {0.0001}
    assert (tree.syncs, emulated.tree.syncs) == (1, 0)  # type: ignore[attr-defined]
    second = families(scraper)
    assert {s.value for s in second["cgroup_cpu_usage_seconds"].samples} == {0.0002}
    time.sleep(0.2)
    assert tree.syncs == 2, "nothing read between scrapes"
    # a sync that brings nothing (no flush since): the last values stay
    assert {s.value for s in families(scraper)["cgroup_cpu_usage_seconds"].samples} == {0.0002}


def test_scrapes_at_once_share_a_sync() -> None:
    st = fake_subtree("/s")
    tree: Any = st.tree
    gate = threading.Event()
    real_sync = tree.sync

    def slow_sync(timeout: Optional[float] = None) -> list[Any]:
        gate.wait(10)
        return real_sync(timeout)

    tree.sync = slow_sync
    tree.batches = [[sample("/s", 5, 10, 100)], [sample("/s", 5, 11, 200)]]
    scraper = Scraper(st)
    threads = [threading.Thread(target=scraper.text) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.3)     # all four in collect(): one syncing, three waiting for it
    gate.set()
    for t in threads:
        t.join(10)
    # the first scrape's sync began before the others asked: they share
    # the one that began after all of them had
    assert tree.syncs == 2, "scrapes that waited for a sync begun after them share it"
    families(scraper)
    assert tree.syncs == 3, "a scrape after the sync syncs again"


def test_a_failing_tree_is_served_no_more(capsys: pytest.CaptureFixture[str]) -> None:
    st = fake_subtree("/s")
    tree: Any = st.tree

    def fail(timeout: Optional[float] = None) -> list[Any]:
        raise pycgstream.CgroupRemovedError(errno.ENODEV, "gone", tree.path)

    tree.sync = fail
    got = families(Scraper(st))
    assert st.gone and got["cgstream_exporter_cgroups"].samples == []
    assert "/s: removed; no longer served" in capsys.readouterr().err


# --- real cgroups, the emulation ---------------------------------------------

def label(mount: Path, cgroup: Path) -> str:
    return "/" + str(cgroup.relative_to(mount))


# Paths opened through Python (open(), os.open, listdir, scandir...) below
# the cgroup2 mount while `watching` is set.  Audit hooks cannot be removed:
# one for the whole session.
_watching: list[str] = []
_opened: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _watching and event in ("open", "os.listdir", "os.scandir") and args:
        path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)):
            path = os.fsdecode(path)
            if path.startswith(_watching[0]):
                _opened.append(f"{event} {path}")


sys.addaudithook(_audit)


def test_a_scrape_never_reads_cgroupfs(cgroups: Cgroups, mount: Path, in_process: Any,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """An emulated tree whose timer fires once an hour: its first cycle at
    open, then nothing.  Scrapes (many, with a busy cgroup in the subtree)
    serve that cycle's numbers and never read the tree or cgroupfs: no
    tree read, no file below the mount opened, the same values, and a
    cgroup removed meanwhile still served as of that cycle."""
    top = cgroups.make("top")
    busy, leaf = cgroups.make("busy", parent=top), cgroups.make("leaf", parent=top)
    cgroups.burn(busy)
    tree = pycgstream.Tree(str(top), mode="fallback", fallback_interval_ms=3_600_000)
    reads = []
    real_read = tree.read
    monkeypatch.setattr(tree, "read", lambda: reads.append(1) or real_read())
    e = in_process([tree], mount)
    first = e.wait("the first cycle", lambda u: len(u) == 3)
    assert reads, "the first cycle came through Tree.read"
    before = len(reads)
    cgroups.remove(leaf)
    _watching.append(str(mount))
    try:
        scrapes = [e.scrape() for _ in range(20)]
    finally:
        _watching.clear()
    assert _opened == [], "a scrape opened files below the cgroup2 mount"
    assert len(reads) == before, "a scrape read the tree"
    for got in scrapes:
        usage = {s.labels["cgroup"]: s.value for s in got["cgroup_cpu_usage_seconds"].samples}
        assert usage == first, "the values of the one cycle, whatever the busy cgroup did since"
        assert got["cgstream_exporter_cycles"].samples[0].value == 1
    assert label(mount, leaf) in first


def test_removed_cgroups_leave_with_the_next_cycle(cgroups: Cgroups, mount: Path,
                                                   in_process: Any) -> None:
    top = cgroups.make("top")
    stay, go = cgroups.make("stay", parent=top), cgroups.make("go", parent=top)
    tree = pycgstream.Tree(str(top), mode="fallback", fallback_interval_ms=100)
    e = in_process([tree], mount)
    e.wait("three cgroups", lambda u: len(u) == 3)
    cgroups.remove(go)
    e.wait("the removed cgroup gone", lambda u: label(mount, go) not in u)
    got = e.scrape()
    assert got["cgstream_exporter_cgroups"].samples[0].value == 2
    assert label(mount, stay) in e.usage()
    go.mkdir()  # the same path again: back, as a new cgroup
    e.wait("the cgroup made again", lambda u: label(mount, go) in u)


def test_flush_age_of_an_idle_emulated_subtree(cgroups: Cgroups, mount: Path,
                                               in_process: Any) -> None:
    """An idle subtree (changes only: no cycle brings a change, no batch
    is applied) keeps a flush age of about an interval, scrape after
    scrape, and its seq moves on: the emulation's cycles are its
    publications (Tree.publications()), changes or not."""
    top = cgroups.make("top")
    cgroups.make("idle", parent=top)
    tree = pycgstream.Tree(str(top), mode="fallback", fallback_interval_ms=200,
                           controllers=("cpu",), changes=True)
    e = in_process([tree], mount)
    e.wait("both cgroups", lambda u: len(u) == 2)
    seqs, ages, cycles = [], [], set()
    for _ in range(6):
        time.sleep(0.5)
        got = e.scrape()
        seqs.append(got["cgstream_flush_seq"].samples[0].value)
        ages.append(got["cgstream_flush_age_seconds"].samples[0].value)
        cycles.add(got["cgstream_exporter_cycles"].samples[0].value)
    assert len(cycles) == 1, "idle: no cycle brought a change, none was applied"
    assert seqs == sorted(seqs) and seqs[-1] - seqs[0] >= 5, seqs
    # 3 s in: an interval, or a few on a busy host; not the time since the last change
    assert max(ages) < 1.0, ages


def test_every_subtree_removed_ends_run(cgroups: Cgroups, mount: Path, in_process: Any) -> None:
    top = cgroups.make("top")
    e = in_process([pycgstream.Tree(str(top), mode="fallback", fallback_interval_ms=100)], mount)
    e.wait("the subtree", lambda u: len(u) == 1)
    cgroups.remove(top)
    e.thread.join(60)
    assert e.result == [False], "run() says every subtree is gone"
    assert "cgstream_exporter_cgroups" not in {n for n, f in e.scrape().items() if f.samples}


# --- the kernel's modes, under libcgstream's fake kernel ----------------------

FAKE_KERNEL = CHECKOUT / "libcgstream" / "build" / "tests" / "fake-kernel.so"

# Run under fake-kernel.so (an LD_PRELOAD emulation of cpu.stat.stream and
# .subtree, libcgstream/tests/fake-kernel.c): a Subtree read at scrapes, as
# the exporter reads a kernel-streamed one; what it served, as JSON lines.
FAKE_SCRAPES = r"""
import ctypes, errno, json, sys, time
import prometheus_client
from prometheus_client.parser import text_string_to_metric_families as parse
import pycgstream
from pycgstream import export

mode, mount, top, kid = sys.argv[1:]
fail = ctypes.CDLL(None).fake_kernel_fail
fail.argtypes = [ctypes.c_char_p, ctypes.c_int]
tree = pycgstream.Tree(top, mode=mode, controllers=("cpu",), changes=True)
st = export.Subtree(tree, mount)
registry = prometheus_client.CollectorRegistry()
registry.register(export.OwnCollector(lambda: [st]))
scrape = export.Scrape(lambda: [st], export.Render())

def scraped(what):
    began = time.monotonic()
    text = scrape.body(registry, prometheus_client.generate_latest, False).decode()
    took = time.monotonic() - began
    got = {f.name: f for f in parse(text)}
    one = lambda n: got[n].samples[0].value if n in got and got[n].samples else None
    cgroups = sorted(s.labels["cgroup"] for s in got["cgroup_cpu_usage_seconds"].samples)
    print(json.dumps({"what": what, "took": took, "cgroups": cgroups,
                      "seq": one("cgstream_flush_seq"), "age": one("cgstream_flush_age_seconds"),
                      "cycles": one("cgstream_exporter_cycles"),
                      "errors": one("cgstream_exporter_read_errors")}), flush=True)

deadline = time.monotonic() + 10
while len(tree) < 2 or not st.served == 2:      # both published and served
    scraped("start")
    assert time.monotonic() < deadline
    time.sleep(0.05)
for _ in range(5):
    time.sleep(0.2)
    scraped("idle")
if mode == "kernel":
    fail(kid.encode(), errno.EIO)
    time.sleep(0.1)
    scraped("failing")
    fail(None, 0)
    time.sleep(0.1)
    scraped("recovered")
tree.close()
"""


@pytest.mark.parametrize("mode", ["subtree", "kernel"])
def test_streamed_subtree_under_the_fake_kernel(mode: str, cgroups: Cgroups,
                                                mount: Path) -> None:
    """A subtree read at scrapes (the kernel's modes, the fake kernel
    publishing every 50 ms), idle: each scrape syncs and returns at once
    (an empty batch is a complete cycle), flush_seq moves on and the age
    stays within a few publications although no cgroup changed.  Kernel
    mode: a cgroup whose read fails is left out, and served again once it
    reads, with the same values as before."""
    if not FAKE_KERNEL.exists():
        pytest.skip(f"{FAKE_KERNEL} is not built (make -C libcgstream)")
    if (mount / "cpu.stat.stream").exists():
        pytest.skip("this kernel has the stream files: tests/vm covers it")
    top = cgroups.make("top")
    kid = cgroups.make("kid", top)
    env = {**os.environ, "LD_PRELOAD": str(FAKE_KERNEL), "FAKE_INTERVAL_MS": "50"}
    r = subprocess.run([sys.executable, "-c", FAKE_SCRAPES, mode, str(mount), str(top),
                        str(kid)], env=python_env(env), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    both = sorted([label(mount, top), label(mount, kid)])
    idle = [x for x in lines if x["what"] == "idle"]
    assert len(idle) == 5 and all(x["cgroups"] == both for x in idle)
    assert len({x["cycles"] for x in idle}) == 5, "each scrape synced: a cycle"
    assert all(x["took"] < 2 for x in idle), "a sync of an idle subtree waits for nothing"
    seqs = [x["seq"] for x in idle]
    assert seqs == sorted(set(seqs)), seqs
    assert all(0 <= x["age"] < 1 for x in idle), [x["age"] for x in idle]
    if mode == "kernel":
        by = {x["what"]: x for x in lines}
        assert by["failing"]["cgroups"] == [label(mount, top)]
        assert by["failing"]["errors"] == 1
        assert "(left out until it can be read)" in r.stderr
        assert by["recovered"]["cgroups"] == both, "back once read, though its values stayed"


# --- the command ----------------------------------------------------------------

def system_python() -> str:
    """/usr/bin/python3 with Debian's prometheus_client (0.16 on Debian 12):
    what the installed service runs."""
    python = "/usr/bin/python3"
    if not os.access(python, os.X_OK):
        pytest.skip("no /usr/bin/python3")
    import subprocess
    r = subprocess.run([python, "-I", "-c", "import prometheus_client, importlib.metadata as m; "
                        "print(m.version('prometheus_client'))"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("/usr/bin/python3 has no prometheus_client (apt-get install "
                    "python3-prometheus-client; make deps installs it)")
    major, minor = (int(x) for x in r.stdout.split(".")[:2])
    assert (major, minor) >= (0, 16), r.stdout
    return python


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[socket.socket]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(tmp_path / "notify"))
    s.settimeout(120)
    yield s
    s.close()


@pytest.mark.parametrize("interpreter", ["venv", "system"])
def test_command(interpreter: str, cgroups: Cgroups, mount: Path, tmp_path: Path,
                 notify_socket: socket.socket) -> None:
    """python -m pycgstream export: READY=1 once it serves, the text format
    (promtool-clean) or OpenMetrics by Accept, gzip, the process metrics,
    a page at /, 404 elsewhere; SIGTERM: STOPPING=1 and exit 0."""
    python = sys.executable if interpreter == "venv" else system_python()
    top = cgroups.make("top")
    busy = cgroups.make("busy", parent=top)
    cgroups.burn(busy)
    env = {"NOTIFY_SOCKET": notify_socket.getsockname()}
    e = CliExporter(tmp_path, python, ["--listen", "127.0.0.1:0", "--fallback-interval", "100",
                                       str(top)], env)
    try:
        assert notify_socket.recv(4096).startswith(b"READY=1\n")
        assert "cpu fallback" in e.stderr() and "at the emulation's timer" in e.stderr()
        status, headers, body = fetch(e.url)
        assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
        promtool_check(body)
        got = {f.name: f for f in parse_text(body.decode())}
        for name in ("process_cpu_seconds", "process_resident_memory_bytes",
                     "cgroup_cpu_usage_seconds", "cgstream_exporter_cgroups"):
            assert got[name].samples, name
        status, headers, om = fetch(e.url, accept=OPENMETRICS, gzip_ok=True)
        assert status == 200 and headers["content-type"].startswith("application/openmetrics-text")
        assert headers.get("content-encoding") == "gzip"
        om_families = {f.name: f for f in parse_om(om.decode())}
        assert om_families["cgroup_cpu_usage_seconds"].unit == "seconds"
        # the busy cgroup's counter moves from cycle to cycle
        first = {s.labels["cgroup"]: s.value for s in got["cgroup_cpu_usage_seconds"].samples}
        busy_label = label(mount, busy)
        deadline = time.monotonic() + 60
        while True:
            now = {s.labels["cgroup"]: s.value for s in {f.name: f for f in parse_text(
                fetch(e.url)[2].decode())}["cgroup_cpu_usage_seconds"].samples}
            if now[busy_label] > first[busy_label]:
                break
            assert time.monotonic() < deadline, "the busy cgroup's usage never grew"
            time.sleep(0.1)
        base = e.url.rsplit("/", 1)[0]
        status, headers, page = fetch(base + "/")
        assert status == 200 and b'href="metrics"' in page
        assert fetch(base + "/nothing")[0] == 404
        e.proc.send_signal(signal.SIGTERM)
        assert e.proc.wait(60) == 0, e.stderr()
        assert notify_socket.recv(4096) == b"STOPPING=1"
        assert "Traceback" not in e.stderr()
    finally:
        e.stop()


def run_main(*args: str) -> int:
    try:
        return export.main(["export", *args])
    except SystemExit as e:
        return int(e.code or 0)


def test_more_cgroups_than_fds(cgroups: Cgroups, tmp_path: Path) -> None:
    """2,000 cgroups under a limit of 256 open files (issue 42: 30,000
    under 20,000 killed the exporter at start, EMFILE in getaddrinfo()
    after the emulated tree took every fd): the library keeps within its fd
    budget, the exporter starts, listens and serves every cgroup."""
    top = cgroups.make("many")
    for i in range(2000):
        (top / f"c{i}").mkdir()
    try:
        def low_limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

        log = tmp_path / "exporter.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "pycgstream", "export", "--listen", "127.0.0.1:0",
                 "--fallback-interval", "500", str(top)], env=python_env(),
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, preexec_fn=low_limit)
        try:
            deadline = time.monotonic() + 120
            port = None
            while port is None:
                m = re.search(r"serving http://127.0.0.1:(\d+)/metrics", log.read_text())
                port = int(m[1]) if m else None
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
            while True:
                status, _, body = fetch(f"http://127.0.0.1:{port}/metrics")
                assert status == 200
                fams = {f.name: f for f in parse_text(body.decode())}
                usage = fams.get("cgroup_cpu_usage_seconds")
                if usage is not None and len(usage.samples) == 2001:
                    break
                assert time.monotonic() < deadline, f"{len(usage.samples) if usage else 0} served"
                time.sleep(0.2)
        finally:
            proc.terminate()
            assert proc.wait(60) == 0, log.read_text()
        text = log.read_text()
        assert "Traceback" not in text and "Too many open files" not in text, text
    finally:
        for i in range(2000):
            (top / f"c{i}").rmdir()


def test_port_in_use(cgroup: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert run_main("--listen", f"127.0.0.1:{port}", "--mode", "fallback",
                        str(cgroup)) == export.EXIT_FAILURE
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in err, err


@pytest.mark.parametrize("listen, status, message", [
    ("127.0.0.1", export.EXIT_USAGE, "argument --listen: --listen wants HOST:PORT"),
    ("192.0.2.1:10340", export.EXIT_FAILURE, "not an address of this host"),
    ("no-such-host.invalid:10340", export.EXIT_USAGE, "cannot resolve 'no-such-host.invalid'"),
])
def test_bad_addresses(listen: str, status: int, message: str, cgroup: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main("--listen", listen, "--mode", "fallback", str(cgroup)) == status
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


def test_missing_cgroup(mount: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main("--listen", "127.0.0.1:0", "pycgstream-no-such-cgroup") == export.EXIT_NO_CGROUP
    assert "pycgstream: /pycgstream-no-such-cgroup: no such cgroup\n" == capsys.readouterr().err


CGSTREAM = Path(os.environ.get("CGSTREAM_LIBRARY", "/nonexistent")).parent / "cgstream"


def same_as_cgstream(cli: list[str], exporter: list[str],
                     capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exporter's exit status and message are the cgstream command's
    (one table, the library's): both, and the message."""
    if not CGSTREAM.exists():
        pytest.skip(f"no {CGSTREAM} (libcgstream's build) to compare with")
    r = subprocess.run([str(CGSTREAM), *cli], capture_output=True, text=True, timeout=60)
    status = run_main("--listen", "127.0.0.1:0", *exporter)
    err = capsys.readouterr().err
    assert err.startswith("pycgstream: ") and r.stderr.startswith("cgstream: "), (err, r.stderr)
    assert (status, err[len("pycgstream: "):]) == (r.returncode, r.stderr[len("cgstream: "):])
    return status, err


@pytest.mark.parametrize("controller", ["memory", "io"])
def test_controllers_the_hierarchy_lacks(controller: str, mount: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--controllers memory where cgroup2 has no memory: exit 5 and the
    CLI's message (it used to serve cpu and exit 0)."""
    if (mount / f"{controller}.stat").exists():
        pytest.skip(f"this cgroup2 has {controller}")
    status, err = same_as_cgstream(["watch", "--controllers", controller, "/"],
                                   ["--controllers", controller, "/"], capsys)
    assert status == export.EXIT_NO_KERNEL == 5
    assert f"the {controller} controller is not available" in err


def test_errors_as_cgstream_says_them(capsys: pytest.CaptureFixture[str]) -> None:
    same_as_cgstream(["watch", "--recursive", "pycgstream-no-such-cgroup"],
                     ["pycgstream-no-such-cgroup"], capsys)
    same_as_cgstream(["watch", "--recursive", "../x"], ["../x"], capsys)
    if not Path("/sys/fs/cgroup/unified/cpu.stat.stream").exists():
        same_as_cgstream(["watch", "--recursive", "--mode", "kernel", "/"],
                         ["--mode", "kernel", "/"], capsys)


@pytest.mark.parametrize("option, value, message", [
    ("--fallback-interval", "5", "--fallback-interval wants 10..3600000 ms, not '5'"),
    ("--fallback-interval", "3600001", "not '3600001'"),
    ("--controllers", "cpu,,io", "--controllers is a comma-separated list of cpu, memory, io and "
     "pressure (or all), not 'cpu,,io'"),
    ("--mode", "streams", "--mode is auto, subtree, kernel or fallback, not 'streams'"),
])
def test_shared_options_are_the_libraries(option: str, value: str, message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(option, value, "/") == export.EXIT_USAGE
    assert message in capsys.readouterr().err


def test_without_prometheus_client(cgroup: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    assert run_main(str(cgroup)) == export.EXIT_NO_CLIENT
    err = capsys.readouterr().err
    assert "needs the Python package prometheus_client" in err
    assert "apt-get install python3-prometheus-client" in err


@pytest.mark.other_user
def test_permission_denied(cgroups: Cgroups) -> None:
    """uid 65534: a port below ip_unprivileged_port_start, a cgroup below a
    mode-000 directory: exit 4."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run as another user")
    parent = cgroups.make("private")
    child = cgroups.make("child", parent=parent)
    open_cgroup = cgroups.make("open")
    start = int(Path("/proc/sys/net/ipv4/ip_unprivileged_port_start").read_text())
    low = None
    for port in range(min(start, 1024) - 1, 0, -1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                low = port
                break
            except OSError:
                continue
    parent.chmod(0)
    try:
        assert as_nobody(lambda: run_main("--listen", "127.0.0.1:0", "--mode", "fallback",
                                          str(child))) == export.EXIT_PERMISSION
    finally:
        parent.chmod(0o755)
    if low is None:
        pytest.skip(f"no privileged port to try (ip_unprivileged_port_start is {start})")
    assert as_nobody(lambda: run_main("--listen", f"127.0.0.1:{low}", "--mode", "fallback",
                                      str(open_cgroup))) == export.EXIT_PERMISSION


@pytest.mark.parametrize("header, gzipped", [
    ("gzip", True), ("deflate, gzip;q=0.5", True), ("GZIP", True), ("gzip;q=0", False),
    ("identity", False), ("", False), ("gzip;q=x", False)])
def test_gzip_by_accept_encoding(header: str, gzipped: bool) -> None:
    assert export._accepts_gzip({"HTTP_ACCEPT_ENCODING": header}) == gzipped
