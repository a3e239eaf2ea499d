"""The exporter's cost, measured (root, on the patched kernel): CPU between
scrapes, CPU and wall time per scrape, RSS, for subtrees of N idle cgroups
with the memory and io controllers on.  Not a test (no pass or fail, and
not collected by pytest): numbers for docs/exporter.md, printed and
written as JSON lines.

    bench_export.py [--src DIR] [--lib SO] [--label NAME] [--cgroups 1000,10000]
                    [--idle 30] [--scrapes 3] [--gap 5] [--changing 1,100] [--out FILE]
    bench_export.py --synthetic 2000 [--changing 1,100]     # any host, no kernel

Per size, after the idle scrapes: scrapes with 1 % and with 100 % of the
cgroups changing between them (--changing: a process of the bench's own
moved through that share of the cgroups, burning a little CPU in each, so
their usage moves), each scrape's CPU and their ratio side by side, the
share of it gzip takes (the body compressed at the exporter's level by
this process: an estimate of the exporter's gzip), and RSS.

--synthetic N measures the render alone, in this process, on any host:
a made-up subtree of N cgroups (cpu and a memory.stat-sized set of memory
values each), a full render (every cgroup, prometheus_client's own
families and encoder, as the exporter rendered before issue 42), the
exporter's first render, and its scrapes with each --changing share of
the cgroups changed, gzip apart.

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
CHURN = MOUNT / "cgsbench-churn"        # the churning process between its visits
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


def churn(cgroups: list[Path], burn_s: float = 0.0005) -> None:
    """Move a child process of our own through @cgroups, burning @burn_s of
    CPU in each, so that each one's cpu usage changes; then back out."""
    home = CHURN    # not below HOME: its CPU is not the exporter's
    home.mkdir(exist_ok=True)
    code = ("import os, sys, time\n"
            "for path in sys.argv[2:]:\n"
            "    open(path + '/cgroup.procs', 'w').write('0')\n"
            "    end = time.thread_time() + float(sys.argv[1])\n"
            "    while time.thread_time() < end: pass\n"
            f"open('{home}/cgroup.procs', 'w').write('0')\n")
    # in batches: an argument list of 10,000 paths is fine, but keep it short
    for i in range(0, len(cgroups), 2000):
        subprocess.run([sys.executable, "-c", code, str(burn_s),
                        *map(str, cgroups[i:i + 2000])], check=True)


def gzip_seconds(body: bytes, level: int = 1) -> float:
    """CPU to gzip @body as the exporter does (level 1), in this process."""
    t0 = time.thread_time()
    gzip.compress(body, level)
    return time.thread_time() - t0


def changing_scrapes(args: argparse.Namespace, n: int, port: int, idle_rate: float,
                     pid: int) -> dict[str, Any]:
    """Scrapes with each --changing share of the n cgroups changing before
    each: CPU per scrape, gzip's share, their ratio."""
    # the leaves (TOP has controllers on for its children: no process of its own)
    cgroups = sorted(p for p in TOP.iterdir() if p.is_dir())
    out: dict[str, Any] = {}
    for pct in args.changing:
        k = max(1, round(len(cgroups) * pct / 100))
        cpus, gz = [], []
        for _ in range(args.scrapes):
            churn(cgroups[:k] if k < len(cgroups) else cgroups)
            time.sleep(args.gap)     # a flush or an emulation cycle past the churn
            c0 = usage_usec(HOME)
            took, body = scrape(port, PROMETHEUS_ACCEPT)
            c1 = usage_usec(HOME)
            cpus.append((c1 - c0) / 1e6 - idle_rate * took)
            gz.append(gzip_seconds(body))
        cpu = sorted(cpus)[len(cpus) // 2]
        out[f"{pct}%"] = {"changed": k, "cpu_s": round(cpu, 3),
                          "gzip_s": round(sorted(gz)[len(gz) // 2], 3),
                          "gzip_share": round(sorted(gz)[len(gz) // 2] / cpu, 3) if cpu > 0
                          else None}
    shares = list(out)
    if len(shares) >= 2 and out[shares[-1]]["cpu_s"] > 0:
        out["ratio"] = round(out[shares[0]]["cpu_s"] / out[shares[-1]]["cpu_s"], 3)
    out["rss_kb"] = status_kb(pid, "VmRSS")
    log(f"{args.label} {n}: scrape CPU " + ", ".join(
        f"{s} changing {out[s]['cpu_s']:.3f} s (gzip {out[s]['gzip_s']:.3f} s)" for s in shares)
        + (f"; ratio {shares[0]}/{shares[-1]} {out['ratio']}" if "ratio" in out else "")
        + f"; RSS {out['rss_kb']} kB")
    return out


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
        result["changing"] = changing_scrapes(args, n, port, idle_rate, proc.pid)
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


def synthetic(n: int, changing: list[float], scrapes: int, src: Path) -> dict[str, Any]:
    """The render alone, in this process (see the module's doc)."""
    import random
    sys.path.insert(0, str(src))
    import prometheus_client
    from prometheus_client.openmetrics.exposition import generate_latest as om_latest
    from pycgstream import Memory, Sample, export

    rng = random.Random(42)
    # the names of a memory.stat of Linux 6.1 and the other memory values: 70
    names = tuple(f"stat_{i}" for i in range(57)) + (
        "anon", "file", "inactive_file", "pgfault", "pgmajfault", "current", "swap.current",
        "events.low", "events.high", "events.max", "events.oom", "events.oom_kill",
        "events.oom_group_kill")
    mount = "/sys/fs/cgroup"
    paths = [f"{mount}/top"] + [f"{mount}/top/c{i}.scope" for i in range(n - 1)]

    def make(i: int, seq: int) -> Sample:
        usage = rng.randrange(1 << 40)
        return Sample(paths[i], cgroup_id=i + 1, seq=seq, flush_time_usec=seq, usage_usec=usage,
                      user_usec=usage // 2, system_usec=usage // 2, nice_usec=0,
                      flush_missed=0, memory=Memory(names, [rng.randrange(1 << 34) for _ in names],
                                                    seq, seq))

    class FakeTree:
        path = paths[0]
        modes = {"cpu": "fallback", "memory": "fallback"}

    def cpu(fn: Any) -> tuple[float, Any]:
        t0 = time.thread_time()
        got = fn()
        return time.thread_time() - t0, got

    samples = [make(i, 1) for i in range(n)]
    st = export.Subtree(FakeTree(), mount)  # type: ignore[arg-type]
    st.apply(samples)
    scrape = export.Scrape(lambda: [st], export.Render())
    registry = prometheus_client.CollectorRegistry()
    registry.register(export.OwnCollector(lambda: [st]))

    def body() -> bytes:
        return scrape.body(registry, lambda r: om_latest(r), True)

    # before issue 42: prometheus_client's families of every cgroup, its encoder
    def families() -> bytes:
        render = export.Render()
        core = prometheus_client.core
        fams = []
        for m in render.family_list():
            make_family = core.CounterMetricFamily if m.counter else core.GaugeMetricFamily
            fams.append(make_family(m.name, m.help, labels=("cgroup",), unit=m.unit))
        by = {f.name: f for f in fams}
        for s in samples:
            label = [export.shown_path(s.cgroup, mount)]
            for m in render.family_list():
                fam = by[m.family]
                if m in export.CPU_METRICS:
                    value = getattr(s, m.source)
                    if value is not None:
                        fam.add_metric(label, value / m.divisor)
                elif m is export.WORKING_SET:
                    fam.add_metric(label, max(0, s.memory["current"] - s.memory["inactive_file"]))
                elif m.source in s.memory:
                    fam.add_metric(label, s.memory[m.source])

        class Collector:
            def collect(self) -> list[Any]:
                return fams
        return om_latest(Collector())  # type: ignore[no-any-return]

    from importlib.metadata import version
    result: dict[str, Any] = {"synthetic_cgroups": n, "python": sys.executable,
                              "prometheus_client": version("prometheus_client")}
    took, old = cpu(families)
    result["prometheus_client_full_s"] = round(took, 3)
    took, first = cpu(body)
    result["first_render_s"] = round(took, 3)
    result["series"] = sum(1 for line in first.split(b"\n") if line.startswith(b"cgroup_"))
    result["bytes"] = len(first)
    result["gzip_s"] = round(gzip_seconds(first), 3)
    for pct in changing:
        k = max(1, round(n * pct / 100))
        times = []
        for seq in range(scrapes):
            chosen = rng.sample(range(n), k)
            st.apply([make(i, seq + 2) for i in chosen])
            took, _ = cpu(body)
            times.append(took)
        result[f"scrape_{pct:g}%_s"] = round(sorted(times)[len(times) // 2], 4)
    pcts = [f"scrape_{p:g}%_s" for p in changing]
    if len(pcts) >= 2 and result[pcts[-1]] > 0:
        result["ratio"] = round(result[pcts[0]] / result[pcts[-1]], 3)
    result["rss_kb"] = status_kb(os.getpid(), "VmRSS")
    log(f"synthetic {n} cgroups ({result['series']} series, {len(first)} bytes): "
        f"prometheus_client full {result['prometheus_client_full_s']} s, first render "
        f"{result['first_render_s']} s, " + ", ".join(
            f"{p[7:-2]} changing {result[p]} s" for p in pcts)
        + (f", ratio {result.get('ratio')}" if "ratio" in result else "")
        + f"; gzip {result['gzip_s']} s; RSS {result['rss_kb']} kB")
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
    p.add_argument("--changing", type=lambda t: [float(x) for x in t.split(",")],
                   default=[1.0, 100.0], help="shares of the cgroups (%%) changing between "
                   "scrapes (default 1,100)")
    p.add_argument("--synthetic", type=int, metavar="N",
                   help="measure the render alone, in this process, on a made-up subtree "
                   "of N cgroups (any host)")
    args = p.parse_args()
    if args.synthetic:
        print(json.dumps(synthetic(args.synthetic, args.changing, args.scrapes, args.src)))
        return 0
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
    for cgroup in (HOME, CHURN):
        if cgroup.exists():
            cgroup.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
