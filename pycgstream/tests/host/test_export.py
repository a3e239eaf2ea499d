"""python -m pycgstream export on the host (the emulation: fallback mode on
the host's cgroup2 mount): the snapshot kept per cycle, the metrics and
their names, both formats, a scrape that never reads cgroupfs, removed
cgroups gone from the next cycle's scrape, the command with systemd's
notifications and SIGTERM, prometheus_client 0.16 (Debian's, for the
installed service) and the errors."""

from __future__ import annotations

import errno
import os
import signal
import socket
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import pytest

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest  # noqa: E402
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families as parse_text  # noqa: E402

import pycgstream  # noqa: E402
from pycgstream import Added, Failed, Removed, Sample, cli, export  # noqa: E402
from conftest import Cgroups, as_nobody  # noqa: E402
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
    args = cli.parser().parse_args(["export", "/"])
    assert args.listen == export.Listen("127.0.0.1", export.DEFAULT_PORT)
    assert args.recursive and args.mode == "auto"


# --- snapshots and the collector, from made-up cycles ------------------------

MOUNT = "/sys/fs/cgroup"


def sample(path: str, cid: int, seq: int, usage: int, **more: int) -> Sample:
    return Sample(MOUNT + path if path != "/" else MOUNT, cgroup_id=cid, parent_id=0,
                  seq=seq, flush_time_usec=time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000,
                  usage_usec=usage, user_usec=usage // 4, system_usec=usage - usage // 4,
                  nice_usec=0, flush_missed=2, **more)


def fake_subtree(path: str = "/", mode: str = "subtree") -> export.Subtree:
    tree: Any = SimpleNamespace(path=MOUNT + path if path != "/" else MOUNT, mode=mode)
    return export.Subtree(tree, MOUNT)


def test_snapshot_per_cycle(capsys: pytest.CaptureFixture[str]) -> None:
    st = fake_subtree("/a")
    first = st.snapshot
    assert first.cgroups == {} and first.seq is None and first.cycles == 0
    st.apply([Added(MOUNT + "/a", 10, 0), Added(MOUNT + "/a/b", 11, 10),
              sample("/a", 10, 5, 1000), sample("/a/b", 11, 5, 500)])
    one = st.snapshot
    assert one is not first and first.cgroups == {}, "a snapshot is never changed"
    assert {k: labels["cgroup"] for k, (labels, _) in one.cgroups.items()} == {10: "/a", 11: "/a/b"}
    assert (one.seq, one.cycles, one.skipped, one.flush_missed) == (5, 1, 0, 2)
    # a cycle later: b removed, c failed, a again; then three flushes unread
    st.apply([Removed(MOUNT + "/a/b", cgroup_id=11, parent_id=10),
              Added(MOUNT + "/a/c", 12, 10), sample("/a", 10, 6, 1500)])
    st.apply([Failed(MOUNT + "/a/c", OSError(errno.EMFILE, "x"), cgroup_id=12, parent_id=10),
              sample("/a", 10, 9, 2000)])
    last = st.snapshot
    assert set(last.cgroups) == {10} and last.cgroups[10][1].usage_usec == 2000
    assert capsys.readouterr().err.count("/a/c: Too many open files (left out") == 1
    st.apply([Failed(MOUNT + "/a/c", OSError(errno.EMFILE, "x"), cgroup_id=12, parent_id=10)])
    assert capsys.readouterr().err == "", "a failing cgroup is said once, not every cycle"
    assert st.snapshot.errors == 2
    st.apply([sample("/a", 10, 9, 2000)])
    last = st.snapshot
    assert last.cgroups[10][0] is one.cgroups[10][0], "labels are made once per cgroup"
    assert (last.seq, last.cycles, last.skipped, last.errors) == (9, 5, 2, 2)
    # the same path made again: a new id, a new series
    st.apply([Added(MOUNT + "/a/b", 13, 10), sample("/a", 10, 10, 2500),
              sample("/a/b", 13, 10, 0)])
    assert {labels["cgroup"] for labels, _ in st.snapshot.cgroups.values()} == {"/a", "/a/b"}
    assert st.snapshot.skipped == 2


def test_an_empty_batch_keeps_the_cycle_state() -> None:
    st = fake_subtree()
    st.apply([sample("/", 1, 3, 10)])
    st.apply([])
    assert (st.snapshot.seq, st.snapshot.cycles, len(st.snapshot.cgroups)) == (3, 2, 1)


def families(registry: Any, openmetrics: bool = False) -> dict[str, Any]:
    if openmetrics:
        text = openmetrics_latest(registry).decode()
        assert text.endswith("# EOF\n")
        return {f.name: f for f in parse_om(text)}
    return {f.name: f for f in parse_text(prometheus_client.generate_latest(registry).decode())}


def registry_of(*subtrees: export.Subtree) -> Any:
    registry = prometheus_client.CollectorRegistry()
    registry.register(export.CgroupCollector(lambda: subtrees))
    return registry


@pytest.mark.parametrize("openmetrics", [False, True], ids=["text", "openmetrics"])
def test_metrics(openmetrics: bool) -> None:
    busy, capped = fake_subtree("/busy.slice"), fake_subtree("/capped", mode="fallback")
    busy.apply([sample("/busy.slice", 7, 41, 2_500_000),
                sample("/busy.slice/x.service", 8, 41, 1_000_000)])
    capped.apply([sample("/capped", 9, 3, 4_000_000, nr_periods=50, nr_throttled=20,
                         throttled_usec=1_500_000, nr_bursts=1, burst_usec=250)])
    got = families(registry_of(busy, capped), openmetrics)

    def values(name: str, label: str = "cgroup") -> dict[str, float]:
        return {s.labels[label]: s.value for s in got[name].samples
                if not s.name.endswith("_created")}

    # the parsers name a counter family without _total, its samples with
    usage = "cgroup_cpu_usage_seconds"
    assert got[usage].type == "counter"
    assert values(usage) == {"/busy.slice": 2.5, "/busy.slice/x.service": 1.0, "/capped": 4.0}
    assert values("cgroup_cpu_user_seconds")["/busy.slice"] == 0.625
    assert values("cgroup_cpu_system_seconds")["/busy.slice"] == 1.875
    assert values("cgroup_cpu_nice_seconds")["/capped"] == 0
    # the bandwidth fields exist only where the cpu controller is on
    assert values("cgroup_cpu_periods") == {"/capped": 50}
    assert values("cgroup_cpu_throttled_periods") == {"/capped": 20}
    assert values("cgroup_cpu_throttled_seconds") == {"/capped": 1.5}
    assert values("cgroup_cpu_bursts") == {"/capped": 1}
    assert values("cgroup_cpu_burst_seconds") == {"/capped": 0.00025}
    assert all(s.name == usage + "_total" for s in got[usage].samples)
    if openmetrics:
        assert got[usage].unit == "seconds"
    assert values("cgstream_flush_seq", "subtree") == {"/busy.slice": 41, "/capped": 3}
    assert values("cgstream_exporter_cgroups", "subtree") == {"/busy.slice": 2, "/capped": 1}
    assert values("cgstream_flush_missed", "subtree") == {"/busy.slice": 2, "/capped": 2}
    assert values("cgstream_exporter_cycles", "subtree") == {"/busy.slice": 1, "/capped": 1}
    assert values("cgstream_exporter_missed_cycles", "subtree")["/capped"] == 0
    assert values("cgstream_exporter_read_errors", "subtree")["/capped"] == 0
    ages = values("cgstream_flush_age_seconds", "subtree")
    assert all(0 <= age < 60 for age in ages.values()), ages
    modes = {(s.labels["subtree"], s.labels["mode"]): s.value
             for s in got["cgstream_exporter_mode"].samples}
    assert modes == {("/busy.slice", "subtree"): 1, ("/capped", "fallback"): 1}


def test_no_samples_yet_and_gone_subtrees() -> None:
    waiting, gone = fake_subtree("/w"), fake_subtree("/g")
    gone.apply([sample("/g", 3, 1, 10)])
    gone.gone = True
    got = families(registry_of(waiting, gone))
    assert not any(name.startswith("cgroup_") for name in got)
    assert [s.labels["subtree"] for s in got["cgstream_exporter_cgroups"].samples] == ["/w"]
    assert got["cgstream_flush_seq"].samples == []


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


def test_every_subtree_removed_ends_run(cgroups: Cgroups, mount: Path, in_process: Any) -> None:
    top = cgroups.make("top")
    e = in_process([pycgstream.Tree(str(top), mode="fallback", fallback_interval_ms=100)], mount)
    e.wait("the subtree", lambda u: len(u) == 1)
    cgroups.remove(top)
    e.thread.join(60)
    assert e.result == [False], "run() says every subtree is gone"
    assert "cgstream_exporter_cgroups" not in {n for n, f in e.scrape().items() if f.samples}


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
        assert f"({'fallback'} mode)" in e.stderr()
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
        return cli.main(["export", *args])
    except SystemExit as e:
        return int(e.code or 0)


def test_port_in_use(cgroup: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert run_main("--listen", f"127.0.0.1:{port}", "--mode", "fallback",
                        str(cgroup)) == cli.EXIT_RUNTIME
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in err, err


@pytest.mark.parametrize("listen, status, message", [
    ("127.0.0.1", cli.EXIT_USAGE, "argument --listen: --listen wants HOST:PORT"),
    ("192.0.2.1:10340", cli.EXIT_RUNTIME, "not an address of this host"),
    ("no-such-host.invalid:10340", cli.EXIT_USAGE, "cannot resolve 'no-such-host.invalid'"),
])
def test_bad_addresses(listen: str, status: int, message: str, cgroup: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main("--listen", listen, "--mode", "fallback", str(cgroup)) == status
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


def test_missing_cgroup(mount: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main("--listen", "127.0.0.1:0", "pycgstream-no-such-cgroup") == cli.EXIT_NO_CGROUP
    assert f"{mount}/pycgstream-no-such-cgroup: no such cgroup" in capsys.readouterr().err


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
                                          str(child))) == cli.EXIT_PERMISSION
    finally:
        parent.chmod(0o755)
    if low is None:
        pytest.skip(f"no privileged port to try (ip_unprivileged_port_start is {start})")
    assert as_nobody(lambda: run_main("--listen", f"127.0.0.1:{low}", "--mode", "fallback",
                                      str(open_cgroup))) == cli.EXIT_PERMISSION
