"""python -m pycgstream: the cgstream command's JSON lines, messages and
exit statuses (no tracebacks) for the usual failures."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from conftest import CHECKOUT, Cgroups, kernel_has_stream, python_env

pytestmark = pytest.mark.usefixtures("library")

SAMPLE_KEYS = ["cgroup", "cgroup_id", "seq", "flush_time_usec", "usage_usec", "user_usec",
               "system_usec", "nice_usec", "nr_periods", "nr_throttled",
               "throttled_usec", "nr_bursts", "burst_usec", "cpu_percent", "mode"]
C_COMMAND = CHECKOUT / "libcgstream" / "build" / "cgstream"


def sample_line_pattern(cgroup: str, mode: str) -> re.Pattern[str]:
    """A sample line exactly as cgstream watch --json prints it."""
    ints = ", ".join(f'"{k}": (?:\\d+|null)' for k in SAMPLE_KEYS[2:13])
    return re.compile(f'^{{"cgroup": {re.escape(json.dumps(cgroup))}, "cgroup_id": \\d+, {ints}, '
                      f'"cpu_percent": (?:null|\\d+\\.\\d\\d), "mode": "{mode}"}}$')


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycgstream", *args], env=python_env(),
                          text=True, capture_output=True, timeout=timeout)


def fallback_watch(*args: str) -> list[str]:
    return ["watch", "--json", "--mode", "fallback", "--fallback-interval", "50", *args]


def test_watch_json_lines(cgroups: Cgroups) -> None:
    a, b = cgroups.make(), cgroups.make()
    cgroups.burn(a)
    r = cli(*fallback_watch("--count", "3", str(a), b.name))
    assert r.returncode == 0, r.stderr
    text = r.stdout.splitlines()
    lines = [json.loads(line) for line in text]
    assert len(lines) == 6
    for raw, line in zip(text, lines):
        assert sample_line_pattern(line["cgroup"], "fallback").match(raw), raw
        assert list(line) == SAMPLE_KEYS
        # no cpu controller on these cgroups: absent, so null, not 0
        if "cpu" not in (a / "cgroup.controllers").read_text().split():
            assert line["nr_periods"] is None and line["burst_usec"] is None
        for key in ("seq", "flush_time_usec", "usage_usec", "user_usec",
                    "system_usec", "nice_usec"):
            assert isinstance(line[key], int), key
    per_cgroup: dict[str, list[dict[str, object]]] = {}
    for line in lines:
        per_cgroup.setdefault(line["cgroup"], []).append(line)
    assert set(per_cgroup) == {str(a), str(b)}
    for got in per_cgroup.values():
        assert len(got) == 3
        assert got[0]["cpu_percent"] is None          # first sample of a cgroup
        for prev, cur in zip(got, got[1:]):
            expected = 100 * (cur["usage_usec"] - prev["usage_usec"]) / (  # type: ignore[operator]
                cur["flush_time_usec"] - prev["flush_time_usec"])  # type: ignore[operator]
            assert cur["cpu_percent"] == pytest.approx(expected, abs=0.006)
    # the burner used CPU (how much, in a 50 ms period, depends on the
    # machine's load), the empty cgroup none
    assert max(x["cpu_percent"] or 0 for x in per_cgroup[str(a)]) > 0  # type: ignore[operator]
    assert [x["cpu_percent"] for x in per_cgroup[str(b)]] == [None, 0, 0]


def test_json_lines_match_the_c_command(cgroup: Path) -> None:
    """Both commands, same cgroup: the same line format, key for key."""
    if not C_COMMAND.exists():
        pytest.skip(f"{C_COMMAND} is not built")
    args = ["watch", "--json", "--mode", "fallback", "--fallback-interval", "50",
            "--count", "2", str(cgroup)]
    c = subprocess.run([str(C_COMMAND), *args], capture_output=True, text=True, timeout=30)
    py = cli(*args)
    assert c.returncode == py.returncode == 0, (c.stderr, py.stderr)
    pattern = sample_line_pattern(str(cgroup), "fallback")
    for out in (c.stdout, py.stdout):
        lines = out.splitlines()
        assert len(lines) == 2 and all(pattern.match(x) for x in lines), out
        assert json.loads(lines[0])["cpu_percent"] is None
        assert json.loads(lines[1])["cpu_percent"] is not None


def test_watch_reports_removal_and_ends(cgroups: Cgroups, cgroup: Path) -> None:
    cgroup_id = cgroup.stat().st_ino
    p = subprocess.Popen([sys.executable, "-m", "pycgstream", *fallback_watch(str(cgroup))],
                         env=python_env(), text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        assert p.stdout is not None
        first = p.stdout.readline()            # watching: now remove it
        cgroups.remove(cgroup)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0, err
    assert sample_line_pattern(str(cgroup), "fallback").match(first.rstrip("\n")), first
    assert json.loads(first)["cgroup_id"] == cgroup_id
    assert out.splitlines()[-1] == (f'{{"cgroup": "{cgroup}", "cgroup_id": {cgroup_id}, '
                                    '"event": "removed"}')
    assert err == "pycgstream: no cgroups left to watch\n"


def test_watch_plain_lines(cgroups: Cgroups, cgroup: Path, mount: Path) -> None:
    r = cli("watch", "--count", "2", "--mode", "fallback", "--fallback-interval", "50",
            str(cgroup))
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    shown = "/" + cgroup.name
    assert re.match(rf"^seq \d+ {shown}: first sample, \d+\.\d{{3}} s of CPU so far$", first), first
    assert re.match(rf"^seq \d+ {shown}: cpu \d+\.\d% \(user \d+\.\d%, system \d+\.\d%\)$",
                    second), second


def test_duplicate_arguments_are_watched_once(cgroup: Path) -> None:
    r = cli(*fallback_watch("--count", "1", str(cgroup), cgroup.name))
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 1


def test_watch_missing_cgroup(mount: Path) -> None:
    r = cli("watch", "--mode", "fallback", "pycgstream-no-such-cgroup")
    assert r.returncode == 3
    assert r.stderr == f"pycgstream: {mount}/pycgstream-no-such-cgroup: no such cgroup\n"
    assert r.stdout == ""


def test_watch_dotdot(mount: Path) -> None:
    r = cli("watch", "a/../../b")
    assert r.returncode == 2
    assert "not a cgroup path" in r.stderr


def test_watch_kernel_mode_without_the_feature(mount: Path) -> None:
    if kernel_has_stream(mount):
        pytest.skip("this kernel has cpu.stat.stream")
    r = cli("watch", "--mode", "kernel", "/")
    assert r.returncode == 5
    assert r.stderr.startswith("pycgstream: this kernel has no cpu.stat.stream")


def test_interval_without_the_feature(mount: Path) -> None:
    if kernel_has_stream(mount):
        pytest.skip("this kernel has cpu.stat.stream")
    for args in (["interval"], ["interval", "100"]):
        r = cli(*args)
        assert r.returncode == 5
        assert "this kernel has no cpu.stat.stream" in r.stderr


@pytest.mark.parametrize("arg", ["abc", "+5", "0x10", "5", "3600001", str(2**32), " 10"])
def test_interval_rejects_junk_before_the_kernel(arg: str) -> None:
    r = cli("interval", "--", arg)
    assert r.returncode == 2
    assert r.stderr == (f"pycgstream: {arg} is not a valid interval: "
                        "use 0 (off) or 10..3600000 ms\n")


def test_watch_every(cgroup: Path) -> None:
    """--every 3: one line per 3 cycles (seq 3, 6), each with a CPU% (the
    first sample seen is its base); --count counts printed cycles."""
    r = cli(*fallback_watch("--every", "3", "--count", "2", str(cgroup)))
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert [line["seq"] for line in lines] == [3, 6], lines
    assert all(isinstance(line["cpu_percent"], float) for line in lines), lines


@pytest.mark.parametrize("args", [["--count", "0"], ["--count", "x"], ["--every", "0"],
                                  ["--every", "-1"], ["--mode", "fast"],
                                  ["--fallback-interval", "5"], []])
def test_watch_usage_errors(args: list[str]) -> None:
    r = cli("watch", *args, *(["/"] if args else []))
    assert r.returncode == 2
    assert "usage:" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signals_end_the_watch_quietly(cgroup: Path, sig: signal.Signals) -> None:
    p = subprocess.Popen([sys.executable, "-m", "pycgstream", "watch", "--json", "--mode",
                          "fallback", "--fallback-interval", "60000", str(cgroup)],
                         env=python_env(), text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        assert p.stdout is not None
        assert p.stdout.readline()          # the first sample: set up and waiting
        time.sleep(0.3)
        p.send_signal(sig)
        out, err = p.communicate(timeout=10)
        assert p.returncode == 0
        assert err == ""
    finally:
        p.kill()
        p.wait()


def both(*args: str) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """The C command and the Python one with the same arguments."""
    if not C_COMMAND.exists():
        pytest.skip(f"{C_COMMAND} is not built")
    c = subprocess.run([str(C_COMMAND), *args], capture_output=True, text=True, timeout=60)
    return c, cli(*args)


def same_lines(out: str) -> list[str]:
    """Output lines with the flush times (of each command's own reads) out."""
    return [re.sub(r'"flush_time_usec": \d+', '"flush_time_usec": T', x) for x in out.splitlines()]


def subtree(cgroups: Cgroups) -> Path:
    top = cgroups.make()
    (top / "a" / "b").mkdir(parents=True)
    cgroups.made += [top / "a", top / "a" / "b"]
    return top


@pytest.mark.parametrize("json_lines", [True, False])
def test_recursive_output_matches_the_c_command(cgroups: Cgroups, json_lines: bool) -> None:
    """--recursive: added events (parents first), then every cgroup's
    samples, with parent_id in JSON; an argument inside another's subtree
    is watched once.  Line for line what cgstream prints (empty cgroups:
    no CPU use to differ)."""
    top = subtree(cgroups)
    args = ["watch", "--recursive", "--mode", "fallback", "--fallback-interval", "50",
            "--count", "2", str(top), str(top / "a")] + (["--json"] if json_lines else [])
    c, py = both(*args)
    assert c.returncode == py.returncode == 0, (c.stderr, py.stderr)
    assert same_lines(py.stdout) == same_lines(c.stdout)
    assert len(py.stdout.splitlines()) == 9
    if json_lines:
        lines = [json.loads(x) for x in py.stdout.splitlines()]
        ids = {p: Path(p).stat().st_ino for p in (str(top), str(top / "a"), str(top / "a" / "b"))}
        for line in lines:
            assert line["cgroup_id"] == ids[line["cgroup"]]
            parent = str(Path(line["cgroup"]).parent)
            assert line["parent_id"] == (0 if line["cgroup"] == str(top) else ids[parent])
        assert [x["event"] for x in lines[:3]] == ["added"] * 3
        assert list(lines[3]) == SAMPLE_KEYS[:2] + ["parent_id"] + SAMPLE_KEYS[2:]


@pytest.mark.parametrize("args, status", [
    (["--mode", "subtree"], 2),
    (["--recursive", "--mode", "kernel"], 5),
    (["--recursive", "--mode", "subtree"], 5),
])
def test_recursive_errors_match_the_c_command(mount: Path, cgroup: Path, args: list[str],
                                              status: int) -> None:
    if kernel_has_stream(mount):
        pytest.skip("this kernel has cpu.stat.stream")
    c, py = both("watch", *args, str(cgroup))
    assert c.returncode == py.returncode == status
    assert py.stderr == c.stderr.replace("cgstream:", "pycgstream:")


def test_mode_names_subtree() -> None:
    r = cli("watch", "--recursive", "--mode", "fast", "/")
    assert r.returncode == 2
    assert "--mode is auto, subtree, kernel or fallback, not 'fast'" in r.stderr


def test_recursive_watch_follows_the_subtree(cgroups: Cgroups) -> None:
    """A cgroup made while watching is added, one removed is removed, and
    when the whole subtree goes the watch ends."""
    top = subtree(cgroups)
    p = subprocess.Popen([sys.executable, "-m", "pycgstream", "watch", "--recursive",
                          *fallback_watch(str(top))[1:]],
                         env=python_env(), text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    seen: list[dict[str, object]] = []
    try:
        assert p.stdout is not None

        def until(pred: Callable[[dict[str, object]], bool]) -> dict[str, object]:
            for raw in p.stdout:  # type: ignore[union-attr]
                seen.append(json.loads(raw))
                if pred(seen[-1]):
                    return seen[-1]
            pytest.fail(f"the watch ended: {seen[-5:]}")

        until(lambda x: x.get("seq") == 1)
        (top / "new").mkdir()
        cgroups.made.append(top / "new")
        added = until(lambda x: x.get("event") == "added")
        assert (added["cgroup"], added["parent_id"]) == (str(top / "new"), top.stat().st_ino)
        b_id = (top / "a" / "b").stat().st_ino
        (top / "a" / "b").rmdir()
        removed = until(lambda x: x.get("event") == "removed")
        assert (removed["cgroup"], removed["cgroup_id"]) == (str(top / "a" / "b"), b_id)
        for d in (top / "new", top / "a", top):
            d.rmdir()
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0, err
    gone = [json.loads(x) for x in out.splitlines() if '"event"' in x]
    assert sorted(x["cgroup"] for x in gone) == sorted(str(d) for d in (top / "new", top / "a", top))
    assert all(x["event"] == "removed" for x in gone)
    assert gone[-1]["cgroup"] == str(top)
    assert err == "pycgstream: no cgroups left to watch\n"
