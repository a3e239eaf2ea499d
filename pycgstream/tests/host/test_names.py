"""Names are data (shared rule: libcgstream's cgstream_escape_name()): a
cgroup may be named with any bytes a directory may have.  pycgstream's
paths are os.fsdecode()d (invalid UTF-8 as surrogates): Stream, Group and
Tree hand them out and take them back without failing, escape_name() and
shown_path() give the one shown form, and the exporter serves such a
cgroup escaped, with the scrape answering 200 in both formats, read back
by prometheus_client's parsers and passed by promtool."""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from pathlib import Path
from typing import Iterator

import pytest

import pycgstream
from conftest import Cgroups

pytestmark = pytest.mark.usefixtures("library")

# the names that break formats when copied raw (the kernel refuses "\n")
NAMES = [b"bad\xff", b"cut\xe2\x82", b'quo"te', b"back\\slash", b"back\\xffslash",
         b"trail\\", b"tab\there", b"esc\x1b[31mred", b"csi\xc2\x9bx", b"del\x7f",
         b"caf\xc3\xa9", b"system-systemd\\x2dfsck.slice", b"x" * 255]
SHOWN = {b"bad\xff": "bad\\xff", b"cut\xe2\x82": "cut\\xe2\\x82", b'quo"te': 'quo"te',
         b"back\\slash": "back\\slash", b"back\\xffslash": "back\\\\xffslash",
         b"trail\\": "trail\\", b"tab\there": "tab\\x09here",
         b"esc\x1b[31mred": "esc\\x1b[31mred", b"csi\xc2\x9bx": "csi\\xc2\\x9bx",
         b"del\x7f": "del\\x7f", b"caf\xc3\xa9": "caf\xe9",
         b"system-systemd\\x2dfsck.slice": "system-systemd\\x2dfsck.slice", b"x" * 255: "x" * 255}


def printable(text: str) -> bool:
    return not any(unicodedata.category(c) in ("Cc", "Cs") for c in text)


@pytest.mark.parametrize("raw", NAMES + [b"new\nline"], ids=repr)
def test_escape_name(raw: bytes) -> None:
    want = SHOWN.get(raw, "new\\x0aline")
    assert pycgstream.escape_name(raw) == want
    # the same from the fsdecoded str the library's paths become
    assert pycgstream.escape_name(os.fsdecode(raw)) == want
    assert printable(want)
    want.encode("utf-8")    # no surrogate left


def test_shown_path() -> None:
    assert pycgstream.shown_path("/sys/fs/cgroup", "/sys/fs/cgroup") == "/"
    assert pycgstream.shown_path(os.fsdecode(b"/m/a/bad\xff"), "/m") == "/a/bad\\xff"
    assert pycgstream.shown_path(b"/m/tab\tx", b"/m/") == "/tab\\x09x"


@pytest.fixture
def named(cgroups: Cgroups) -> Iterator[tuple[Path, dict[int, bytes]]]:
    """A scratch cgroup holding one cgroup per name; their ids."""
    top = cgroups.make("names")
    ids = {}
    for raw in NAMES:
        path = top / os.fsdecode(raw)
        path.mkdir()
        cgroups.made.append(path)
        ids[path.stat().st_ino] = raw
    yield top, ids


def test_tree_stream_group(named: tuple[Path, dict[int, bytes]], mount: Path) -> None:
    """Sync objects hand out the names (fsdecoded), take them back, and
    nothing made of them fails: repr, str, JSON, the shown form."""
    top, ids = named
    with pycgstream.Tree(top, mode="fallback", fallback_interval_ms=100) as tree:
        batch = tree.sync(10)
    samples = [e for e in batch if isinstance(e, pycgstream.Sample)]
    got = {s.cgroup_id: s for s in samples if s.cgroup_id in ids}
    assert set(got) == set(ids), "a sample per cgroup"
    for cid, s in got.items():
        assert os.fsencode(s.cgroup) == os.fsencode(str(top)) + b"/" + ids[cid]
        shown = pycgstream.shown_path(s.cgroup, mount)
        assert shown == pycgstream.shown_path(top, mount) + "/" + SHOWN[ids[cid]]
        assert printable(shown)
        json.loads(json.dumps({"cgroup": shown, "repr": repr(s), "str": str(s)}))
        print(s, file=open(os.devnull, "w", encoding="utf-8", errors="strict"))
    for cid, raw in ids.items():
        path = os.fsencode(str(top)) + b"/" + raw
        with pycgstream.Stream(path, mode="fallback", fallback_interval_ms=100) as st:
            assert st.wait(10)
            s = st.read()
            assert s is not None and s.cgroup_id == cid and os.fsencode(st.path) == path
            repr(st)
    with pycgstream.Group([os.fsencode(str(top)) + b"/" + raw for raw in ids.values()],
                          mode="fallback", fallback_interval_ms=100) as group:
        assert len(group) == len(ids)
        events = next(iter(group))
        group.remove(os.fsdecode(os.fsencode(str(top)) + b"/" + NAMES[0]))   # by its str too
    assert {e.cgroup_id for e in events if isinstance(e, pycgstream.Sample)} == set(ids)


prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families as parse_text  # noqa: E402
from promcheck import fetch, in_process, promtool_check  # noqa: E402,F401 (a fixture)

OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


def test_exporter_serves_names(named: tuple[Path, dict[int, bytes]], mount: Path,
                               in_process: object) -> None:
    """The scrape answers 200 (text, OpenMetrics, gzip), each cgroup's
    label is its shown form, both of prometheus_client's parsers read it
    back, and promtool finds nothing wrong."""
    top, ids = named
    tree = pycgstream.Tree(top, mode="fallback", fallback_interval_ms=100)
    exporter = in_process([tree], mount)  # type: ignore[operator]
    base = pycgstream.shown_path(top, mount)
    want = {base} | {base + "/" + SHOWN[raw] for raw in ids.values()}
    exporter.wait("every cgroup served", lambda got: set(got) >= want)
    for accept, parse in ((None, parse_text), (OPENMETRICS, parse_om)):
        status, headers, body = fetch(exporter.url, accept, gzip_ok=True)
        assert status == 200, body[:300]
        text = body.decode("utf-8")
        fams = {f.name: f for f in parse(text)}
        labels = {s.labels["cgroup"] for s in fams["cgroup_cpu_usage_seconds"].samples}
        assert labels == want, labels ^ want
        if accept is None:
            promtool_check(body)
    print(f"served {len(want)} cgroups named to break formats", file=sys.stderr)
