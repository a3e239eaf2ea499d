"""The exporter's cost, measured (root, on the patched kernel): CPU between
scrapes, CPU and wall time per scrape, RSS, for subtrees of N idle cgroups
with the memory and io controllers on.  Not a test (no pass or fail, and
not collected by pytest): numbers for docs/exporter.md, printed and
written as JSON lines.

    bench_export.py [--src DIR] [--lib SO] [--label NAME] [--cgroups 1000,10000]
                    [--idle 30] [--scrapes 3] [--gap 5] [--out FILE]

--src and --lib pick the exporter to measure (default: this checkout's
pycgstream/src and libcgstream build), so the same script measures an
older exporter from another copy of the sources; --python the interpreter
(default /usr/bin/python3, Debian's prometheus_client 0.16, as the unit
runs it; prometheus_client's own cost differs by version: 0.26's
OpenMetrics output escapes every sample's name character by character).  The exporter runs as
``python -m pycgstream export`` in a cgroup of its own outside the
subtree, so its CPU is that cgroup's usage_usec (every thread, those of
finished requests too).  Each scrape asks as Prometheus 2.42 does
(OpenMetrics first, gzip); one more asks for the text format.  The
kernel's intervals are 1 s for every controller.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

MOUNT = Path("/sys/fs/cgroup")
TOP = MOUNT / "cgsbench-export"
HOME = MOUNT / "cgsbench-exporter"      # the exporter's own cgroup
HERE = Path(__file__).resolve()
CHECKOUT = HERE.parents[3]
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                     "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def log(msg: str) -> None:
    print(f"bench_export: {msg}", flush=True)


def usage_usec(cgroup: Path) -> int:
    for line in (cgroup / "cpu.stat").read_text().splitlines():
        key, value = line.split()
        if key == "usage_usec":
            return int(value)
    raise RuntimeError(f"no usage_usec in {cgroup}/cpu.stat")


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(port: int, accept: str) -> tuple[float, bytes]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                 headers={"Accept": accept, "Accept-Encoding": "gzip"})
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=600) as r:
        body = r.read()
        if r.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
    return time.monotonic() - t0, body


def make_tree(n: int) -> None:
    """TOP with n - 1 idle children: n cgroups, memory and io on."""
    (MOUNT / "cgroup.subtree_control").write_text("+memory +io")
    TOP.mkdir()
    (TOP / "cgroup.subtree_control").write_text("+memory +io")
    for i in range(n - 1):
        (TOP / f"c{i}").mkdir()


def remove_tree() -> None:
    if TOP.exists():
        for child in TOP.iterdir():
            if child.is_dir():
                child.rmdir()
        TOP.rmdir()


def set_intervals(ms: int) -> None:
    for c in ("cpu", "memory", "io"):
        knob = MOUNT / f"{c}.stat.stream_interval"
        if knob.exists():
            knob.write_text(str(ms))


def loopback() -> None:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", 0))
            s.listen()
            with socket.create_connection(s.getsockname(), timeout=5):
                return
        except OSError:
            pass
    subprocess.run(["ip", "link", "set", "dev", "lo", "up"], check=True)


def measure(args: argparse.Namespace, n: int) -> dict[str, Any]:
    make_tree(n)
    HOME.mkdir(exist_ok=True)
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(args.src), CGSTREAM_LIBRARY=str(args.lib),
               PYTHONDONTWRITEBYTECODE="1")
    errlog = open(f"/tmp/bench-export-{args.label}-{n}.log", "wb")
    python = str(args.python)
    started = time.monotonic()
    proc = subprocess.Popen(
        ["sh", "-c", f'echo $$ > {HOME}/cgroup.procs && exec "$@"', "exporter", python, "-m",
         "pycgstream", "export", "--listen", f"127.0.0.1:{port}", str(TOP)],
        env=env, stdin=subprocess.DEVNULL, stdout=errlog, stderr=errlog)
    result: dict[str, Any] = {"label": args.label, "cgroups": n}
    try:
        # ready: a scrape with every cgroup's cpu usage
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"exporter exited with {proc.returncode}: "
                                   f"{Path(errlog.name).read_text()[-2000:]}")
            if time.monotonic() - started > 900:
                raise RuntimeError("exporter not ready after 900 s")
            try:
                took, body = scrape(port, PROMETHEUS_ACCEPT)
            except OSError:
                time.sleep(1)
                continue
            if body.count(b"cgroup_cpu_usage_seconds_total{") >= n:
                break
            time.sleep(1)
        result["ready_s"] = round(time.monotonic() - started, 1)
        result["first_scrape_s"] = round(took, 3)
        time.sleep(args.gap)
        # between scrapes: nothing asks
        c0, t0 = usage_usec(HOME), time.monotonic()
        time.sleep(args.idle)
        c1, t1 = usage_usec(HOME), time.monotonic()
        idle_rate = (c1 - c0) / 1e6 / (t1 - t0)
        result["idle_cpu_s_per_s"] = round(idle_rate, 5)
        result["idle_window_s"] = round(t1 - t0, 1)
        log(f"{args.label} {n}: ready after {result['ready_s']} s, between scrapes "
            f"{idle_rate * 1000:.2f} ms CPU per s over {t1 - t0:.0f} s, RSS "
            f"{status_kb(proc.pid, 'VmRSS')} kB")
        scrapes = []
        for i in range(args.scrapes + 1):
            accept = PROMETHEUS_ACCEPT if i < args.scrapes else "text/plain"
            c0 = usage_usec(HOME)
            took, body = scrape(port, accept)
            c1 = usage_usec(HOME)
            cpu = (c1 - c0) / 1e6 - idle_rate * took
            scrapes.append({"format": "openmetrics" if i < args.scrapes else "text",
                            "wall_s": round(took, 3), "cpu_s": round(cpu, 3),
                            "bytes": len(body), "lines": body.count(b"\n")})
            log(f"{args.label} {n}: scrape {i + 1}: {took:.2f} s, {cpu:.2f} s CPU, "
                f"{len(body)} bytes")
            time.sleep(args.gap)
        result["scrapes"] = scrapes
        result["rss_kb"] = status_kb(proc.pid, "VmRSS")
        result["hwm_kb"] = status_kb(proc.pid, "VmHWM")
        # once more between scrapes, after them
        c0, t0 = usage_usec(HOME), time.monotonic()
        time.sleep(min(args.idle, 10))
        result["idle_after_cpu_s_per_s"] = round(
            (usage_usec(HOME) - c0) / 1e6 / (time.monotonic() - t0), 5)
        # before the clean-up, which takes minutes at 10,000 cgroups under TCG
        print(json.dumps(result), flush=True)
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        errlog.close()
        remove_tree()
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", type=Path, default=CHECKOUT / "pycgstream" / "src")
    p.add_argument("--lib", type=Path,
                   default=CHECKOUT / "libcgstream" / "build" / "libcgstream.so.1")
    p.add_argument("--python", type=Path, default=Path("/usr/bin/python3"),
                   help="the interpreter (default: the system's, with Debian's "
                   "prometheus_client, as cgstream-exporter.service runs it)")
    p.add_argument("--label", default="this")
    p.add_argument("--cgroups", default="1000,10000")
    p.add_argument("--idle", type=float, default=30)
    p.add_argument("--scrapes", type=int, default=3)
    p.add_argument("--gap", type=float, default=5)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    if os.geteuid() != 0 or not (MOUNT / "cpu.stat.stream").exists():
        log("needs root on the patched kernel")
        return 77
    loopback()
    set_intervals(1000)
    remove_tree()
    for n in (int(x) for x in args.cgroups.split(",")):
        res = measure(args, n)
        line = json.dumps(res)
        if args.out:
            with open(args.out, "a") as f:
                f.write(line + "\n")
    if HOME.exists():
        HOME.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
