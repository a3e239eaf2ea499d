"""The exporter's incremental render (no cgroupfs, made-up cycles): after
any sequence of value changes, additions, removals and failures, what a
scrape serves (only the cgroups whose values changed rendered again, the
others' lines reused) equals a full render of the same values by a fresh
exporter, and equals, family by family and byte for byte, what
prometheus_client itself renders for the same values through its metric
families; both parsers read it the same.  Both formats, the default set
and --stats all, names that need escaping."""

from __future__ import annotations

import os
import random
from typing import Any

import pytest

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families as parse_text  # noqa: E402

from pycgstream import (Added, Failed, Io, IoDevice, Memory, Pressure, Removed, Sample,  # noqa: E402
                        export)
from rendercheck import blocks, check_render, oracle  # noqa: E402

pytestmark = pytest.mark.usefixtures("library")

MOUNT = "/sys/fs/cgroup"
MEMORY_NAMES = ("anon", "file", "inactive_file", "pgfault", "pgmajfault", "workingset_refault_anon",
                "current", "swap.current", "events.low", "events.high", "events.max",
                "events.oom", "events.oom_kill")
# the kernel's SCHEMA names of pressure (irq's where the kernel has irq.pressure)
PRESSURE_NAMES = tuple(f"{r}.{k}.{v}" for r in ("cpu", "memory", "io") for k in ("some", "full")
                       for v in ("avg10", "avg60", "avg300", "total"))
IRQ_NAMES = tuple(f"irq.full.{v}" for v in ("avg10", "avg60", "avg300", "total"))
# names as data: what a cgroup may be called (bytes), escaped by the
# library's rule, then by Prometheus' label escaping
NAMES = [b"a.service", b'quo"te', b"back\\slash", b"bad\xff", b"cut\xe2\x82", b"tab\tbed",
         b"esc\x1b", b"\xc2\x85c1", b"x" * 255, b"run-u7.scope", "d\u00e9j\u00e0".encode()]


class FakeTree:
    def __init__(self, path: str) -> None:
        self.path = path
        self.modes = {"cpu": "fallback", "memory": "fallback", "io": "fallback",
                      "pressure": "fallback"}

    def publications(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


def make_sample(rng: random.Random, path: str, cid: int, seq: int) -> Sample:
    """Values of any size; the bandwidth fields, memory, io and pressure
    only sometimes (as where the controllers are off), pressure's irq
    values sometimes (a kernel with irq.pressure), a cpu.pressure without
    its full line sometimes (a kernel before 5.13)."""
    def big() -> int:
        return rng.choice([0, 1, rng.randrange(1 << 20), rng.randrange(1 << 40),
                           rng.randrange(1 << 64)])

    capped = rng.random() < 0.3
    memory = None
    if rng.random() < 0.7:
        names = MEMORY_NAMES if rng.random() < 0.8 else MEMORY_NAMES[:5] + ("hugetlb", "zswpout")
        values = [big() for _ in names]
        if "current" in names and rng.random() < 0.3:     # inactive_file above current
            values[names.index("inactive_file")] = values[names.index("current")] + 5
        memory = Memory(names, values, seq, 1000 + seq)
    io = None
    if rng.random() < 0.5:
        io = Io([IoDevice(rng.choice([7, 8, 259]), minor, *(big() for _ in range(6)))
                 for minor in range(rng.randrange(1, 3))], seq, 1000 + seq)
    pressure = None
    if rng.random() < 0.6:
        names = PRESSURE_NAMES + (IRQ_NAMES if rng.random() < 0.5 else ())
        if rng.random() < 0.2:
            names = PRESSURE_NAMES[:4] + PRESSURE_NAMES[8:]
        pressure = Pressure(names, [big() for _ in names], seq, 1000 + seq)
    return Sample(path, cgroup_id=cid, parent_id=1, seq=seq, flush_time_usec=1000 + seq,
                  usage_usec=big(), user_usec=big(), system_usec=big(), nice_usec=big(),
                  nr_periods=big() if capped else None, nr_throttled=big() if capped else None,
                  throttled_usec=big() if capped else None,
                  nr_bursts=big() if capped else None, burst_usec=big() if capped else None,
                  flush_missed=0, memory=memory, io=io, pressure=pressure)


class Model:
    """The subtree's cgroups as the test made them: path and latest
    sample by id, in the order first seen; failing ones left out."""

    def __init__(self, rng: random.Random, top: str) -> None:
        self.rng = rng
        self.top = top
        self.rows: dict[int, Sample] = {}
        self.known: dict[int, str] = {}
        self.next_id = 100
        self.seq = 0

    def new_path(self) -> str:
        parent = self.rng.choice([self.top, *self.known.values()])
        name = os.fsdecode(self.rng.choice(NAMES) + str(self.next_id).encode())
        return f"{parent}/{name}"

    def step(self) -> list[Any]:
        """One cycle's events: some values change, cgroups come, go or
        fail; changed samples only (a tree with changes=True), sometimes
        an unchanged one again (it compares)."""
        rng, batch = self.rng, []
        self.seq += 1
        for cid, path in list(self.known.items()):
            r = rng.random()
            if r < 0.05 and cid != 1:
                batch.append(Removed(path, cgroup_id=cid, parent_id=1))
                del self.known[cid]
                self.rows.pop(cid, None)
            elif r < 0.08 and cid != 1:
                batch.append(Failed(path, OSError(13, "Permission denied"), cgroup_id=cid,
                                    parent_id=1))
                self.rows.pop(cid, None)
            elif r < 0.25 or cid not in self.rows and r < 0.5:
                s = make_sample(rng, path, cid, self.seq)
                batch.append(s)
                self.rows[cid] = s      # in its place; a failed one back at the end
            elif r < 0.3 and cid in self.rows:
                batch.append(self.rows[cid])    # the same values again
        for _ in range(rng.choice([0, 0, 1, 3])):
            cid, path = self.next_id, self.new_path()
            self.next_id += 1
            self.known[cid] = path
            s = make_sample(rng, path, cid, self.seq)
            batch += [Added(path, cid, 1), s]
            self.rows[cid] = s
        return batch


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("every_stat", [False, True], ids=["default", "all"])
def test_incremental_equals_full_and_prometheus_client(seed: int, every_stat: bool,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(seed)
    top = MOUNT + "/t"
    model = Model(rng, top)
    model.known[1] = top
    st = export.Subtree(FakeTree(top), MOUNT)  # type: ignore[arg-type]
    scrape = export.Scrape(lambda: [st], export.Render(every_stat))
    st.apply([Added(top, 1, 0), make_sample(rng, top, 1, 0)])
    model.rows[1] = st._rows[1].sample
    checked = 0
    for step in range(40):
        st.apply(model.step())
        if rng.random() < 0.4:
            continue    # several cycles between two scrapes
        # the order served: that of first sight, a failed cgroup back at the end
        order = [st._rows[k].sample for k in st._rows]
        assert [s.cgroup_id for s in order] == list(model.rows), f"step {step}"
        assert all(s is model.rows[s.cgroup_id] or export._values(s) == export._values(
            model.rows[s.cgroup_id]) for s in order), f"step {step}"
        check_render(st, scrape, every_stat, MOUNT, f"seed {seed} step {step}")
        checked += 2    # both formats
    assert checked > 10
    capsys.readouterr()


def test_only_changed_cgroups_are_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scrape renders the cgroups whose values changed since the last
    one, and nothing else: a sample with the same values is no change."""
    rng = random.Random(7)
    top = MOUNT + "/t"
    st = export.Subtree(FakeTree(top), MOUNT)  # type: ignore[arg-type]
    render = export.Render()
    scrape = export.Scrape(lambda: [st], render)
    samples = {cid: make_sample(rng, f"{top}/c{cid}", cid, 1) for cid in range(1, 101)}
    st.apply(list(samples.values()))
    rendered: list[str] = []
    real = render.cgroup
    monkeypatch.setattr(render, "cgroup", lambda label, s: rendered.append(s.cgroup) or real(label, s))
    first = scrape.cgroups(False)
    assert len(rendered) == 100
    rendered.clear()
    assert scrape.cgroups(True) and rendered == [], "the other format reuses the lines"
    assert scrape.cgroups(False) == first and rendered == []
    st.apply([samples[5], make_sample(rng, f"{top}/c9", 9, 2)])   # 5: the same values
    st.apply([make_sample(rng, f"{top}/c17", 17, 3)])
    scrape.cgroups(False)
    assert rendered == [f"{top}/c9", f"{top}/c17"]


def test_sample_lines_are_prometheus_clients() -> None:
    """The line of one sample with every character a label escapes, in
    both formats, is what prometheus_client writes: the two formats share
    a cgroup's lines."""
    s = Sample(MOUNT + '/q"\\\n', cgroup_id=3, usage_usec=1_234_567_890)
    st = export.Subtree(FakeTree(MOUNT), MOUNT)  # type: ignore[arg-type]
    st.apply([s])
    for openmetrics in (False, True):
        mine = export.Scrape(lambda: [st], export.Render()).cgroups(openmetrics)
        assert blocks(mine) == blocks(oracle([s], False, openmetrics, MOUNT))
        assert '{cgroup="/q\\"' in mine, mine


def label_values(text: str) -> set[str]:
    return {s.labels["cgroup"] for f in parse_text(text) if f.name == "cgroup_cpu_usage_seconds"
            for s in f.samples}


@pytest.mark.parametrize("filters, want", [
    (export.Filters(), {".", "a", "a/b", "a/b/c", "run-1.scope", "a/run-2.scope"}),
    (export.Filters(max_depth=0), {"."}),
    (export.Filters(max_depth=1), {".", "a", "run-1.scope"}),
    (export.Filters(exclude=("*run-*.scope",)), {".", "a", "a/b", "a/b/c"}),
    (export.Filters(include=("a", "a/*")), {"a", "a/b", "a/b/c", "a/run-2.scope"}),
    (export.Filters(max_depth=2, include=("a*",), exclude=("*.scope",)), {"a", "a/b"}),
])
def test_filters(filters: export.Filters, want: set[str],
                 capsys: pytest.CaptureFixture[str]) -> None:
    top = MOUNT + "/t"
    rel = [".", "a", "a/b", "a/b/c", "run-1.scope", "a/run-2.scope"]
    st = export.Subtree(FakeTree(top), MOUNT, filters)  # type: ignore[arg-type]
    st.apply([Sample(top if r == "." else f"{top}/{r}", cgroup_id=i + 1, usage_usec=i)
              for i, r in enumerate(rel)])
    got = label_values(export.Scrape(lambda: [st], export.Render()).cgroups(False))
    assert got == {"/t" if r == "." else f"/t/{r}" for r in want}
    assert st.served == len(want)
    assert capsys.readouterr().err == ""


def test_filters_matching_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """Served empty, and said once on stderr."""
    top = MOUNT + "/t"
    st = export.Subtree(FakeTree(top), MOUNT,  # type: ignore[arg-type]
                        export.Filters(include=("nothing*",)))
    scrape = export.Scrape(lambda: [st], export.Render())
    for seq in range(3):
        st.apply([Sample(top, cgroup_id=1, usage_usec=seq),
                  Sample(top + "/a", cgroup_id=2, usage_usec=seq)])
        assert scrape.cgroups(False) == ""
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "/t: --include 'nothing*' leave none of its 2 cgroups; serving none" in err


def test_filters_on_names_of_any_bytes() -> None:
    """A glob is matched against the name as it is (os.fsdecode()d), the
    label shows it escaped."""
    top = MOUNT + "/t"
    bad = os.fsdecode(b"bad\xff")
    st = export.Subtree(FakeTree(top), MOUNT,  # type: ignore[arg-type]
                        export.Filters(include=(os.fsdecode(b"*\xff"),)))
    st.apply([Sample(f"{top}/{bad}", cgroup_id=2, usage_usec=1),
              Sample(f"{top}/good", cgroup_id=3, usage_usec=1)])
    assert label_values(export.Scrape(lambda: [st], export.Render()).cgroups(False)) == {
        "/t/bad\\xff"}


@pytest.mark.parametrize("argv, message", [
    (["--max-depth", "-1"], "--max-depth wants a number of levels below CGROUP"),
    (["--max-depth", "x"], "not 'x'"),
    (["--include", ""], "--include wants a glob, not an empty string"),
    (["--exclude", "/system.slice/*"], "matched against the path below CGROUP"),
])
def test_bad_filters(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        export.main(["export", *argv, "/"])
    assert e.value.code == export.EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


def test_filter_options() -> None:
    args = export.parser().parse_args(["export", "--max-depth", "0", "--include", "a*",
                                       "--include", "b", "--exclude", "*.scope", "/"])
    assert (args.max_depth, args.include, args.exclude) == (0, ["a*", "b"], ["*.scope"])
    args = export.parser().parse_args(["export", "/"])
    assert (args.max_depth, args.include, args.exclude) == (None, [], [])
