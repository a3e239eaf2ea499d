#!/usr/bin/env python3
"""Runs INSIDE the VM (as root): sets up cgroups and load, runs the cgbench
scenarios both ways (classic cpu.stat vs cpu.stat.stream) and appends raw
results to OUT/results.jsonl (one JSON object per measurement).

usage: driver.py --out DIR --scenarios s1,s2,... [--quick]

Only the Python standard library (the guest runs the host's /usr/bin/python3).
Timing is never judged here: there are no thresholds, only numbers.
"""
import argparse
import contextlib
import errno
import fcntl
import glob
import gzip
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
CGBENCH = os.path.join(HERE, "build", "cgbench")
CGBENCH_LIB = os.path.join(HERE, "build", "cgbench-lib")
LATENCY_PY = os.path.join(HERE, "latency_py.py")
ROOT = os.environ.get("CGBENCH_ROOT", "/sys/fs/cgroup")  # override: host smoke tests only
os.environ["CGBENCH_ROOT"] = ROOT
BASE = "cgsbench"            # everything lives under /sys/fs/cgroup/cgsbench
CTRLS = "cpu,memory"

QUICK = False
OUT = None
END = float("inf")           # time.time() after which no new measurement starts
NCPU = os.cpu_count() or 1
CG = None                    # cgroup helper, set in main()


def log(*a):
    msg = time.strftime("%H:%M:%S ") + f"[{NCPU} vCPU] " + " ".join(str(x) for x in a)
    print(msg, flush=True)
    with open(os.path.join(OUT, "driver.log"), "a") as f:
        f.write(msg + "\n")


RESERVE = 0                  # seconds kept for what runs last


def left():
    return END - time.time() - RESERVE


def have_time(need, what):
    """False (and the skip recorded) when a measurement needing about
    `need` seconds would run past the budget"""
    if left() >= need:
        return True
    log(f"skipped (time budget, {left():.0f} s left, ~{need:.0f} s needed): {what}")
    record("skipped", {"what": what, "need_s": need, "left_s": round(left())}, {})
    return False


def record(scenario, params, result):
    rec = {"cpus": NCPU, "scenario": scenario, "quick": QUICK, "time": time.time(),
           "params": params, "result": result}
    with open(os.path.join(OUT, "results.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


# --- cgroups: libcgroup's cgcreate/cgexec when they work on this v2 mount --

class Cgroups:
    """Creates cgroups and starts processes in them.  Uses libcgroup's
    cgcreate/cgexec (Debian cgroup-tools) when a probe shows that they work
    on this cgroup2-only system, else the kernel's cgroupfs directly
    (mkdir + a write to cgroup.procs between fork and exec)."""

    def __init__(self):
        self.tool = None
        self.note = ""
        self.enable_controllers(ROOT)

    @staticmethod
    def path(rel):
        return os.path.join(ROOT, rel)

    def enable_controllers(self, d):
        have = read(os.path.join(d, "cgroup.controllers")).split()
        want = [c for c in CTRLS.split(",") if c in have]
        try:
            write(os.path.join(d, "cgroup.subtree_control"),
                  " ".join("+" + c for c in want))
        except OSError as e:
            log(f"enabling {want} in {d}: {e}")

    def probe(self):
        probe = f"{BASE}/probe"
        info = {"cgcreate": shutil.which("cgcreate"), "cgexec": shutil.which("cgexec")}
        try:
            info["version"] = subprocess.run(
                ["dpkg-query", "-W", "-f=${Version}", "cgroup-tools"],
                capture_output=True, text=True).stdout
        except OSError:
            pass
        ok = False
        if info["cgcreate"] and info["cgexec"]:
            r1 = subprocess.run(["cgcreate", "-g", f"{CTRLS}:{probe}"],
                                capture_output=True, text=True)
            info["cgcreate_rc"] = r1.returncode
            info["cgcreate_err"] = r1.stderr.strip()
            info["created"] = os.path.isdir(self.path(probe))
            if info["created"]:
                info["probe_controllers"] = read(
                    os.path.join(self.path(probe), "cgroup.controllers")).split()
            r2 = subprocess.run(["cgexec", "-g", f"{CTRLS}:{probe}", "cat", "/proc/self/cgroup"],
                                capture_output=True, text=True)
            info["cgexec_rc"] = r2.returncode
            info["cgexec_out"] = r2.stdout.strip()
            info["cgexec_err"] = r2.stderr.strip()
            ok = (r1.returncode == 0 and info["created"] and r2.returncode == 0
                  and r2.stdout.strip() == f"0::/{probe}")
            subprocess.run(["cgdelete", "-g", f"{CTRLS}:{probe}"], capture_output=True)
            if os.path.isdir(self.path(probe)):
                os.rmdir(self.path(probe))
            # on a hybrid v1/v2 host (smoke tests) cgcreate used the v1 trees
            for d in glob.glob(f"/sys/fs/cgroup/*/{BASE}/probe") + glob.glob(f"/sys/fs/cgroup/*/{BASE}"):
                if not d.startswith(ROOT + "/"):
                    try:
                        os.rmdir(d)
                    except OSError:
                        pass
        self.tool = "libcgroup" if ok else "cgroupfs"
        info["used"] = self.tool
        log("cgroup tooling:", json.dumps(info))
        return info

    def create(self, rels, bulk=False):
        """bulk: plain mkdir even when libcgroup is used: cgcreate starts one
        process per cgroup (25 took 0.6-2.9 s in the TCG guests of the
        14:55 run), too slow for 1000 idle ones"""
        rels = [r for r in rels if not os.path.isdir(self.path(r))]
        t0 = time.time()
        if self.tool == "libcgroup" and not bulk:
            for i in range(0, len(rels), 200):
                args = ["cgcreate"]
                for r in rels[i:i + 200]:
                    args += ["-g", f"{CTRLS}:{r}"]
                subprocess.run(args, check=True)
        else:
            for r in rels:
                os.makedirs(self.path(r), exist_ok=True)
        for r in rels:
            if not os.path.isdir(self.path(r)):
                raise RuntimeError(f"cgroup {r} was not created")
        if len(rels) > 1:
            how = "mkdir" if bulk or self.tool != "libcgroup" else "cgcreate"
            log(f"created {len(rels)} cgroups with {how} in {time.time() - t0:.1f} s")

    def parent_ready(self, rel):
        """make sure rel exists and hands cpu+memory to its children (never
        for a cgroup that will hold processes: cgroup v2's no-internal-
        process rule makes cgexec fail there)"""
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i])
            self.create([sub])
            self.enable_controllers(self.path(sub))

    def cmd(self, rel, argv):
        if self.tool == "libcgroup":
            return ["cgexec", "-g", f"{CTRLS}:{rel}"] + argv
        # cgroupfs: the shell moves itself, then execs the program
        return ["sh", "-c", f'echo $$ > {self.path(rel)}/cgroup.procs && exec "$@"', "sh"] + argv

    def popen(self, rel, argv, **kw):
        return subprocess.Popen(self.cmd(rel, argv), **kw)

    def run_json(self, rel, argv, timeout=None):
        t0 = time.time()
        if timeout is not None:
            timeout = max(10, min(timeout, left() + 30))
        try:
            r = subprocess.run(self.cmd(rel, argv), capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            log(f"timed out after {time.time() - t0:.0f} s: {' '.join(argv)[:200]}")
            return None
        if r.stderr.strip():
            log("stderr:", r.stderr.strip()[:2000])
        out = [l for l in r.stdout.splitlines() if l.startswith("{")]
        if r.returncode != 0 or not out:
            log(f"command failed rc={r.returncode}: {' '.join(argv)[:300]}")
            return None
        return json.loads(out[-1])

    def remove_tree(self, rel):
        top = self.path(rel)
        if not os.path.isdir(top):
            return
        for d, subdirs, _ in os.walk(top, topdown=False):
            try:
                os.rmdir(d)
            except OSError as e:
                log(f"rmdir {d}: {e}")


# --- the kernel knob ------------------------------------------------------

HAVE_STREAM = False


SMOKE = bool(os.environ.get("CGBENCH_STREAM_FILE"))  # host smoke tests: fake stream file


# each controller's stream files are named after its stem: <stem>.stream
# (every cgroup), <stem>.stream.subtree, <stem>.stream_interval (the root)
STREAM_STEMS = {"cpu": "cpu.stat", "memory": "memory.stat", "io": "io.stat",
                "pressure": "pressure"}


def stream_file(ctrl, suffix=".stream"):
    return STREAM_STEMS[ctrl] + suffix


def set_interval(ms, ctrls=("cpu",)):
    """the flushers' interval (0: off) of each controller in ctrls whose
    stream this kernel has"""
    if not HAVE_STREAM or SMOKE:
        return
    for c in ctrls:
        knob = os.path.join(ROOT, stream_file(c, ".stream_interval"))
        if c == "cpu" or os.path.exists(knob):
            write(knob, f"{ms}\n")


# --- load -----------------------------------------------------------------

def stop_procs(procs):
    """SIGTERM, then SIGKILL after 10 s"""
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def stop_proc_output(proc, timeout):
    """SIGTERM (if still running), then SIGKILL after timeout seconds; its
    (stdout, stderr)"""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


class Load:
    """24 sibling cgroups churning CPU and memory (so rstat updates are
    pending on every CPU), plus one busy child running a CPU hog."""

    def __init__(self, nchurn=24):
        self.procs = []
        self.nchurn = nchurn

    def start(self):
        CG.parent_ready(f"{BASE}/load")
        names = [f"{BASE}/load/c{i:02d}" for i in range(self.nchurn)] + [f"{BASE}/load/busy"]
        CG.create(names)
        # each churner: short CPU bursts + 256 KiB mmap/touch/munmap every
        # 10 ms; together about half of the vCPUs' time.
        duty = min(0.9, 0.5 * NCPU / self.nchurn)
        work_us = int(10000 * duty)
        for n in names[:-1]:
            self.procs.append(CG.popen(n, [CGBENCH, "churn", "--work-us", str(work_us),
                                           "--period-us", "10000", "--mem-kb", "256"]))
        self.procs.append(CG.popen(f"{BASE}/load/busy", [CGBENCH, "hog"]))
        # cgexec moves itself, then execs: give it time under TCG
        for _ in range(60):
            time.sleep(0.5)
            placed = 0
            for p in self.procs:
                try:
                    placed += f"/{BASE}/load/" in read(f"/proc/{p.pid}/cgroup")
                except OSError:
                    pass
            if placed == len(self.procs):
                break
        log(f"load: {self.nchurn} churners (work {work_us} us / 10 ms, 256 KiB) + 1 hog; "
            f"{placed}/{len(self.procs)} processes in their cgroups")
        return {"churners": self.nchurn, "churn_work_us": work_us, "churn_period_us": 10000,
                "churn_mem_kb": 256, "hog": 1, "placed": placed}

    def stop(self):
        stop_procs(self.procs)
        self.procs = []


def tele_cgroups(n):
    CG.parent_ready(f"{BASE}/tele")
    names = [f"{BASE}/tele/t{i:04d}" for i in range(n)]
    CG.create(names, bulk=True)
    return [CG.path(x) for x in names]


def tele_tree(m):
    """a parent holding exactly m idle children, so that a whole-subtree
    read (subtree, bpf) takes the same cgroups as m per-cgroup reads"""
    parent = f"{BASE}/tree{m}"
    CG.parent_ready(parent)
    CG.create([f"{parent}/t{i:05d}" for i in range(m)], bulk=True)
    return CG.path(parent), [CG.path(f"{parent}/t{i:05d}") for i in range(m)]


def drop_tele_trees(keep=()):
    """remove the idle trees tele_tree() made (BASE/tree<m>) but those of
    keep's sizes: every stream flusher walks its controller's whole
    hierarchy, so a measurement is to have its own cgroups only (s7 left
    its 11,100 in place for s9 and s8 until 2026-12-02)"""
    for d in sorted(glob.glob(os.path.join(CG.path(BASE), "tree[0-9]*"))):
        m = os.path.basename(d)[4:]
        if not m.isdigit() or int(m) in keep:
            continue
        t0 = time.time()
        CG.remove_tree(f"{BASE}/tree{m}")
        log(f"removed the idle tree of {m} cgroups in {time.time() - t0:.1f} s")


def list_file(name, paths):
    p = os.path.join(OUT, f"list-{NCPU}-{name}.txt")
    write(p, "\n".join(paths) + "\n")
    return p


READERS = f"{BASE}/readers"
FLUSHER_WAYS = ("stream", "stream1", "subtree", "changes")   # the ways the kernel flusher serves
BPF_WAYS = ("bpf", "bpfmap", "bpfshared")
HAVE_SUBTREE = False
HAVE_BPF = False


def reader_run(sub, mode, extra, label, interval_ms=100, timeout=300):
    """one cgbench reader run in the readers' cgroup, with the flusher off
    for classic (today's kernel behaviour) and on for stream"""
    flusher = mode in FLUSHER_WAYS
    if flusher and not HAVE_STREAM:
        return None
    if mode in ("subtree", "changes") and not HAVE_SUBTREE:
        return None
    if mode in BPF_WAYS and not HAVE_BPF:
        return None
    set_interval(interval_ms if flusher else 0)
    res = CG.run_json(READERS, [CGBENCH, sub, "--mode", mode] + extra, timeout=timeout)
    set_interval(0)
    return res


# --- scenarios --------------------------------------------------------------

S1_TARGETS = (
    # the issue's case: a busy leaf, its siblings churning elsewhere
    ("busy", f"{BASE}/load/busy"),
    # what telemetry reads too: a parent (like system.slice) whose children
    # all have updates pending, so the classic read's flush has work to do
    ("parent", f"{BASE}/load"),
)


def s1_reader_cost(seconds, rounds):
    """Reader cost: one reader pread()s a cgroup's file as often as it can;
    the two ways alternate in rounds so drift hits both.  `seconds` is per
    target, both ways together."""
    per = seconds / rounds / 2
    maxs = str(int(1e6 // rounds))
    for r in range(rounds):
        for target, rel in S1_TARGETS:
            if not have_time(2 * per + 20, f"s1 {target} round {r}"):
                return
            for mode in ("classic", "stream"):
                res = reader_run("read", mode, ["--readers", "1", "--seconds", f"{per:.2f}",
                                                 "--max-samples", maxs, CG.path(rel)], "s1")
                if res:
                    record("s1", {"mode": mode, "round": r, "seconds": per, "target": target}, res)
                    pr = res["per_reader"][0]
                    log(f"s1 {target} round {r} {mode}: {pr['samples']} samples, "
                        f"{pr['cpu_ns'] / max(1, pr['samples']):.0f} ns CPU/sample")


TELE_WAYS = ("classic", "stream", "subtree", "bpf", "bpfmap")
# (readers, cgroups) per vCPU count, most wanted first (the budget cuts the
# rest): the issue's 1 x 1,000 target, the per-cgroup cost against M with
# one reader, then more readers; 8 vCPUs adds the 8-reader BPF comparison;
# 32 vCPUs the issue's one point (its ten runs take about 7 minutes under TCG)
TELE_POINTS = {
    2: [(1, 1000), (1, 100), (1, 10000), (1, 10), (4, 1000), (16, 1000), (4, 100),
        (16, 100), (4, 10), (16, 10), (4, 10000), (16, 10000)],
    8: [(1, 1000), (8, 1000), (1, 100), (1, 10000), (4, 1000), (16, 1000), (1, 10),
        (8, 100), (4, 100), (16, 100), (4, 10), (16, 10), (8, 10000), (4, 10000),
        (16, 10000)],
    32: [(1, 1000)],
}


def s2_telemetry(points, period_ms, seconds, rounds, ways=TELE_WAYS):
    """points: (readers, cgroups) in priority order; runs until the budget
    ends.  Every way takes the same m cgroups (a parent's m children) once
    per cycle: classic and stream with m reads, subtree with one, the BPF
    ways with one iterator pass.  Each point runs the ways `rounds` times,
    in alternating order (the report keeps each way's cheapest round: other
    work on the host only ever adds to a TCG guest's times)"""
    trees = {}
    for r, m in points:
        if not have_time(rounds * len(ways) * (seconds + 12) + (m // 40 if m not in trees else 0),
                         f"s2 {r}x{m}"):
            continue
        if m not in trees:
            t0 = time.time()
            trees[m] = tele_tree(m)
            log(f"s2: {m} cgroups ready in {time.time() - t0:.0f} s")
        parent, kids = trees[m]
        lst = list_file(f"tree{m}", kids)
        for mode, rnd in [(w_, k) for k in range(rounds)
                          for w_ in (ways if k % 2 == 0 else ways[::-1])]:
            res = reader_run("telemetry", mode,
                             ["--readers", str(r), "--period-ms", str(period_ms),
                              "--seconds", str(seconds), "--list", lst, "--subtree", parent],
                             "s2", interval_ms=period_ms, timeout=seconds + 240)
            if res:
                record("s2", {"mode": mode, "readers": r, "cgroups": m, "round": rnd,
                              "period_ms": period_ms, "seconds": seconds}, res)
                cyc = sum(p["cycles"] for p in res["per_reader"]) / r
                cpu = sum(p["cpu_ns"] for p in res["per_reader"]) / 1e6
                fails = {p["fail_errno"] for p in res["per_reader"] if p.get("fail_errno")}
                log(f"s2 R={r} M={m} {mode}: {cyc:.1f} cycles/reader, "
                    f"readers {cpu:.1f} ms CPU, kworkers {res['kworker_ns'] / 1e6:.1f} ms"
                    + (f", passes failed: {sorted(os.strerror(e) for e in fails)}" if fails else ""))


def s9_profile(m, seconds):
    """where a reader's time goes, for the issue's 1 x 1,000 row: perf in
    the guest (software cpu-clock sampling: TCG has no PMU; kernel symbols
    from kallsyms) over one telemetry run of classic and of subtree, at the
    shortest interval, so that the reads, not the process's start-up, are
    most of what it samples"""
    perf = perf_setup()
    if not perf or not have_time(2 * seconds + 120, "s9"):
        log("s9: no perf here" if not perf else "s9: no time")
        return
    drop_tele_trees(keep={m})
    parent, kids = tele_tree(m)
    lst = list_file(f"tree{m}", kids)
    period = 10    # the interval's minimum; a classic pass takes longer
    for mode in ("classic", "subtree"):
        # the guest's own tmpfs: perf record cannot write its file on the 9p share
        data = f"/tmp/perf-{mode}.data"
        set_interval(period if mode == "subtree" else 0)
        res = perf_profile(perf, data, [CGBENCH, "telemetry", "--mode", mode,
                                        "--readers", "1", "--period-ms", str(period),
                                        "--seconds", str(seconds),
                                        "--list", lst, "--subtree", parent], seconds + 240)
        set_interval(0)
        record("s9", {"mode": mode, "cgroups": m, "seconds": seconds, "period_ms": period}, res)
        log(f"s9 {mode}: {res['samples']} samples, {len(res['top'])} symbols over 0.7 %")


def perf_setup():
    """perf's path, with kernel symbols and unprivileged-free sampling on;
    None when the guest has no perf"""
    perf = shutil.which("perf")
    for k, v in (("kptr_restrict", "0"), ("perf_event_paranoid", "-1")):
        try:
            write(f"/proc/sys/kernel/{k}", v)
        except OSError:
            pass
    return perf


def perf_profile(perf, data, argv, timeout):
    """perf record (software cpu-clock sampling at 4 kHz, call graphs)
    of argv in the readers' cgroup, then its top symbols (self time, at
    least 0.7 %) and the samples by object; data: a file on the guest's
    own tmpfs (perf record cannot write on the 9p share), removed after"""
    CG.run_json(READERS, [perf, "record", "-e", "cpu-clock", "-F", "4000", "-g",
                          "-o", data, "--"] + argv, timeout=timeout)
    base = [perf, "report", "-i", data, "--stdio", "--no-children", "-g", "none"]
    rep = subprocess.run(base + ["--sort", "sym", "--percent-limit", "0.7"],
                         capture_output=True, text=True)
    top = [l.rstrip() for l in rep.stdout.splitlines() if l.strip() and not l.startswith("#")]
    # samples by object (kernel, cgbench, libc): the total and the split
    by = subprocess.run(base + ["--sort", "dso", "-n"], capture_output=True, text=True)
    samples, dso = 0, []
    for l in by.stdout.splitlines():
        f = l.split(None, 2)
        if len(f) == 3 and f[0].endswith("%") and f[1].isdigit():
            samples += int(f[1])
            dso.append(f"{f[2].strip()} {f[0]}")
    try:
        os.unlink(data)
    except OSError:
        pass
    return {"top": top[:40], "samples": samples, "dso": dso[:8],
            "rc": rep.returncode, "err": (rep.stderr + by.stderr)[-500:]}


def proc_cpu_ns(pid):
    """a process's exact CPU time (all threads): its CPU-time clock
    (MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)), which needs no SCHEDSTATS"""
    return time.clock_gettime_ns(((~pid) << 3) | 2)


def proc_kb(pid, key):
    for line in read(f"/proc/{pid}/status").splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return None


def root_flush_seq():
    """the latest cpu publication's number, from the root's cpu.stat.stream"""
    for line in read(os.path.join(ROOT, "cpu.stat.stream")).splitlines():
        if line.startswith("publication_seq "):
            return int(line.split()[1])
    return None


CGSTREAM_CMD = os.path.join(TOP, "libcgstream", "build", "cgstream")
VENV_PY = os.path.join(TOP, ".venv", "bin", "python")
EXPORTER_PORT = 19753


def _daemon_cgstream(parent):
    if not os.path.exists(CGSTREAM_CMD):
        return None
    return [CGSTREAM_CMD, "watch", "--json", "--recursive", parent]


def _daemon_exporter(parent):
    if not os.path.exists(VENV_PY):
        return None
    return [VENV_PY, "-m", "pycgstream", "export", "--listen", f"127.0.0.1:{EXPORTER_PORT}", parent]


DAEMONS = {"cgstream watch --json --recursive": _daemon_cgstream,
           "exporter": _daemon_exporter}
ONLY_DAEMONS = ()    # --daemons: a subset of DAEMONS' names


def scrape():
    import urllib.request
    t0 = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{EXPORTER_PORT}/metrics", timeout=180) as r:
        body = r.read()
    return time.perf_counter() - t0, body


def run_daemon(name, argv, m, interval_ms, seconds):
    """start it in the readers' cgroup, let it settle, then measure its CPU
    (exact, all threads), RSS and, for the exporter, one scrape per cycle"""
    env = dict(os.environ, CGSTREAM_LIBRARY=os.path.join(TOP, "libcgstream", "build",
                                                         "libcgstream.so.1"),
               PYTHONDONTWRITEBYTECODE="1")
    p = CG.popen(READERS, argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    res = None
    try:
        exporter = name == "exporter"
        started = time.time()
        ready = False
        # a Python exporter over 10,000 cgroups starts slowly under TCG
        while time.time() < started + (600 if exporter else 180) and p.poll() is None:
            time.sleep(1)
            if not exporter:
                # its first walk of the subtree, then a few cycles
                ready = time.time() > started + 3 * interval_ms / 1000 + 5
            else:
                try:
                    _, body = scrape()
                    ready = body.count(b"cgroup_cpu_usage_seconds_total{") >= m
                except OSError:
                    ready = False
            if ready:
                break
        if not ready:
            log(f"s8 {name}: not ready (exit {p.poll()}): {p.stderr.read(2000) if p.poll() is not None else ''}")
            return None
        pid = p.pid
        between = {}
        if exporter:
            # nobody scraping: what it does between scrapes (its emulation
            # timer, if any; on the patched kernel next to nothing)
            cpu_a, t_a = proc_cpu_ns(pid), time.time()
            time.sleep(seconds)
            between = {"between_cpu_ns": proc_cpu_ns(pid) - cpu_a,
                       "between_s": time.time() - t_a}
        seq0, cpu0, t0 = root_flush_seq(), proc_cpu_ns(pid), time.time()
        scrapes = []
        nbytes = series = 0
        while time.time() - t0 < seconds:
            if exporter:
                dt, body = scrape()
                scrapes.append(dt)
                nbytes = len(body)
                series = sum(1 for x in body.split(b"\n") if x and not x.startswith(b"#"))
            time.sleep(interval_ms / 1000)
        cpu1, seq1, wall = proc_cpu_ns(pid), root_flush_seq(), time.time() - t0
        res = {"cpu_ns": cpu1 - cpu0, "wall_s": wall, "cycles": seq1 - seq0,
               "rss_kb": proc_kb(pid, "VmRSS"), "hwm_kb": proc_kb(pid, "VmHWM"),
               "scrape_s": scrapes, "scrape_bytes": nbytes, "series": series, **between}
        log(f"s8 {name}: {(cpu1 - cpu0) / 1e6 / max(1, seq1 - seq0):.1f} ms CPU per cycle, "
            f"RSS {res['rss_kb']} kB" + (f", scrape p50 {sorted(scrapes)[len(scrapes) // 2] * 1e3:.0f} ms"
                                          if scrapes else "")
            + (f", {series} series, between scrapes {between['between_cpu_ns'] / 1e6:.1f} ms "
               f"CPU in {between['between_s']:.0f} s" if between else ""))
    finally:
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return res


TRACEFS = "/sys/kernel/tracing"
WQ_EVENTS = ("workqueue_execute_start", "workqueue_execute_end")
# the kworkers' context switches: a flusher run's wall time minus the
# times its kworker was switched out in it is the run's CPU time (the
# churners and readers preempt a kworker, and TCG makes that common)
SWITCH_EVENT = ("sched", "sched_switch")
SWITCH_FILTER = 'prev_comm ~ "kworker*" || next_comm ~ "kworker*"'
# what the flusher runs' µs are, as of the last flusher_trace(True): "cpu"
# (wall less switched-out spans) or "wall" (sched_switch not traced)
FLUSHER_CLOCK = None


def flusher_trace(on):
    """the workqueue tracepoints around the flusher's work item and the
    kworkers' context switches: together they give each run's CPU time
    (the kworkers' total CPU also holds everything else they did).
    on=False: stop and return the runs' CPU times in µs, or None when
    tracefs is not there"""
    ev = os.path.join(TRACEFS, "events", "workqueue")
    if not os.path.isdir(ev):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], capture_output=True)
    if not os.path.isdir(ev):
        return None
    if on:
        write(os.path.join(TRACEFS, "tracing_on"), "0")
        # timestamps on CLOCK_MONOTONIC: a run's start can be set against a
        # reader's window (cgbench's window_start_ns)
        write(os.path.join(TRACEFS, "trace_clock"), "mono")
        write(os.path.join(TRACEFS, "buffer_size_kb"), "8192")
        write(os.path.join(TRACEFS, "trace"), "")
        for e in WQ_EVENTS:
            try:    # only the flusher's work (kernels that filter on a function's name)
                write(os.path.join(ev, e, "filter"), "function.function == stat_stream_workfn")
            except OSError:
                pass
            write(os.path.join(ev, e, "enable"), "1")
        global FLUSHER_CLOCK
        sw = os.path.join(TRACEFS, "events", *SWITCH_EVENT)
        try:
            write(os.path.join(sw, "filter"), SWITCH_FILTER)
            write(os.path.join(sw, "enable"), "1")
            FLUSHER_CLOCK = "cpu"
        except OSError as e:
            if FLUSHER_CLOCK != "wall":
                log(f"sched_switch not traced ({e}): flusher runs count their wall time")
            FLUSHER_CLOCK = "wall"
        write(os.path.join(TRACEFS, "tracing_on"), "1")
        return None
    return [cpu for _, _, cpu, _ in _flusher_runs(ev)]


def _flusher_runs(ev):
    """stop the trace; (work struct, start on CLOCK_MONOTONIC in s, CPU µs,
    wall µs) of every flusher run in it"""
    write(os.path.join(TRACEFS, "tracing_on"), "0")
    text = read(os.path.join(TRACEFS, "trace"))
    for e in WQ_EVENTS:
        write(os.path.join(ev, e, "enable"), "0")
    try:
        write(os.path.join(TRACEFS, "events", *SWITCH_EVENT, "enable"), "0")
    except OSError:
        pass
    return flusher_runs_from_trace(text)


# "  comm-pid  [cpu] flags  ts: event: rest" (the tgid column and the
# flags are optional; a comm may hold blanks and dashes)
TRACE_LINE = re.compile(r"\s*.*?-(\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[\d+\]\s+(?:\S+\s+)?"
                        r"(\d+\.\d+):\s+(\w+):\s?(.*)$")


def _trace_line(line):
    """(pid, timestamp in s, event name, rest) of one line of the trace
    file, or None"""
    m = TRACE_LINE.match(line)
    return (int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)) if m else None


def flusher_runs_from_trace(text):
    """every stat_stream_workfn run in a trace (workqueue_execute_start /
    _end, and sched_switch of the kworkers when traced): (work struct,
    start in s, CPU µs, wall µs).  CPU is the wall time less the spans in
    which the run's kworker was switched out (between a switch with its
    prev_pid and the next with its next_pid): preemption by the load or
    the readers is not the flusher's cost"""
    start, runs, out_since, off = {}, [], {}, {}
    for line in text.splitlines():
        t = _trace_line(line)
        if t is None:
            continue
        pid, ts, event, rest = t
        if event == "sched_switch":
            kv = dict(x.split("=", 1) for x in rest.replace(" ==> ", " ").split() if "=" in x)
            prev, nxt = kv.get("prev_pid"), kv.get("next_pid")
            if prev and prev.isdigit() and int(prev) != 0:
                out_since[int(prev)] = ts
            if nxt and nxt.isdigit() and int(nxt) in out_since:
                a = out_since.pop(int(nxt))
                for key, acc in off.items():    # the runs of that kworker under way
                    if key[0] == int(nxt):
                        acc.append((a, ts))
            continue
        if "stat_stream_workfn" not in rest or "work struct " not in rest:
            continue
        work = rest.split("work struct ")[1].split(":")[0]
        if event == "workqueue_execute_start":
            start[work] = (ts, pid)
            off[(pid, work)] = []
        elif event == "workqueue_execute_end" and work in start:
            t0, p0 = start.pop(work)
            spans = off.pop((p0, work), [])
            away = sum(max(0.0, min(b, ts) - max(a, t0)) for a, b in spans)
            wall = ts - t0
            runs.append((work, t0, round(max(0.0, wall - away) * 1e6, 1), round(wall * 1e6, 1)))
    return runs


FLUSHER_WORK = None    # work struct (as the trace prints it) -> controller


def flusher_works():
    """which work struct is which controller's flusher: each controller's
    stream is a static object with its own work item, so one short trace
    per controller, streaming alone, names them for the whole boot"""
    global FLUSHER_WORK
    if FLUSHER_WORK is not None:
        return FLUSHER_WORK
    FLUSHER_WORK = {}
    ev = os.path.join(TRACEFS, "events", "workqueue")
    for c in (AGENT_CTRLS if HAVE_MEMIO else ("cpu",)) + (("pressure",) if HAVE_PRESSURE else ()):
        flusher_trace(True)    # (mounts tracefs)
        if not os.path.isdir(ev):
            return FLUSHER_WORK
        with StreamsOpen((c,), 100):
            time.sleep(0.5)
        works = {w for w, _, _, _ in _flusher_runs(ev)}
        if len(works) == 1:
            FLUSHER_WORK[works.pop()] = c
        else:
            log(f"the {c} flusher's work item: {len(works)} seen in its trace, not named")
    log(f"flusher work items: {FLUSHER_WORK}")
    return FLUSHER_WORK


def flusher_trace_by_ctrl(window=None):
    """flusher_trace(False), each run under its controller's name ("?" for
    a work item flusher_works() did not name), only the runs that started
    in window ((start, end) on CLOCK_MONOTONIC in s) when given; None
    without tracefs"""
    ev = os.path.join(TRACEFS, "events", "workqueue")
    if not os.path.isdir(ev):
        return None
    names = FLUSHER_WORK or {}
    out = {}
    for w, t, cpu, _ in _flusher_runs(ev):
        if window is None or window[0] <= t <= window[1]:
            out.setdefault(names.get(w, "?"), []).append(cpu)
    return out


# cgroups changed -> flusher interval: long enough for the hoppers to get
# round them (TCG), short enough for many cycles in the window
S7_INTERVAL = {100: 100, 1000: 500, 10000: 2000}


def s7_flusher(changed, seconds):
    """the flusher's run time per cycle against the number of cgroups that
    changed since its last cycle: `cgbench hop` moves one process per vCPU
    through the cgroups (each visit leaves an rstat update); the workqueue
    tracepoints time every cycle of the flusher's work item"""
    if not HAVE_STREAM:
        return
    for n in changed:
        if not have_time(seconds + 40 + n // 40, f"s7 {n}"):
            continue
        drop_tele_trees(keep={n})
        parent, kids = tele_tree(n)
        lst = list_file(f"tree{n}", kids)
        interval = S7_INTERVAL.get(n, 1000)
        set_interval(interval)
        flusher_trace(True)
        res = CG.run_json(READERS, [CGBENCH, "hop", "--mode", "stream", "--seconds", str(seconds),
                                    "--list", lst], timeout=seconds + 240)
        durs = flusher_trace(False)
        set_interval(0)
        if res:
            res["flusher_us"] = durs
            res["flusher_clock"] = FLUSHER_CLOCK
            record("s7", {"mode": "stream", "cgroups": n, "interval_ms": interval,
                          "seconds": seconds}, res)
            log(f"s7 N={n}: {res['hops']} visits, {res.get('flush_seq_delta', '-')} flushes, "
                f"flusher p50 {sorted(durs)[len(durs) // 2] if durs else '-'} us "
                f"({len(durs or [])} traced)")


def s8_daemons(m, interval_ms, seconds):
    """what the user-facing programs cost watching m cgroups: the cgstream
    daemon (its tree reads the subtree file once per flush) and the
    exporter (pycgstream Tree + prometheus_client: first `seconds` with
    nobody scraping, then scraped once per cycle).  With the memory and io
    streams, over the agent tree (charged memory, I/O, 1 % of it changing:
    the exporter's default set has values to serve), all three flushers on;
    else over m idle cgroups, cpu only"""
    tree = AGENT_TREES.get(m) or AgentTree(m) if HAVE_MEMIO else None
    setup = 0 if tree is None or tree.ready else tree_setup_s(m)
    if not HAVE_SUBTREE or not have_time(3 * seconds + 60 + m // 40 + setup, f"s8 {m}"):
        return
    drop_tele_trees(keep=() if tree else {m})
    if tree:
        AGENT_TREES[m] = tree
        tree.start()
        parent, ctrls = CG.path(tree.parent), AGENT_CTRLS
    else:
        parent, _ = tele_tree(m)
        ctrls = ("cpu",)
    set_interval(interval_ms, ctrls)
    try:
        for name in DAEMONS:
            if ONLY_DAEMONS and name not in ONLY_DAEMONS:
                continue
            argv = DAEMONS[name](parent)
            if argv is None:
                log(f"s8 {name}: not available here")
                continue
            res = run_daemon(name, argv, m, interval_ms, seconds)
            if res:
                record("s8", {"program": name, "cgroups": m, "interval_ms": interval_ms,
                              "seconds": seconds, "tree": "agent" if tree else "idle",
                              "controllers": ",".join(ctrls)}, res)
    finally:
        set_interval(0, ctrls)
        if tree:
            tree.stop()


def s4_parallel(readers, m, seconds):
    lst = list_file(f"par{m}", tele_cgroups(m))
    for r in readers:
        if not have_time(2 * seconds + 30, f"s4 R={r}"):
            break
        for mode in ("classic", "stream"):
            res = reader_run("read", mode, ["--readers", str(r), "--seconds", str(seconds),
                                             "--list", lst], "s4")
            if res:
                record("s4", {"mode": mode, "readers": r, "cgroups": m, "seconds": seconds}, res)
                tput = [p["samples"] / (p["wall_ns"] / 1e9) for p in res["per_reader"]]
                log(f"s4 R={r} {mode}: {sum(tput) / len(tput):.0f} samples/s per reader")


def s5_latency(interval_ms, seconds, m, which=("libcgstream-group", "poll", "pycgstream")):
    if not HAVE_STREAM:
        return
    lst = list_file(f"lat{m}", tele_cgroups(m))
    paths = read(lst).split()
    runs = []
    if "libcgstream-group" in which:
        if os.path.exists(CGBENCH_LIB):
            runs.append(("libcgstream-group", [CGBENCH_LIB, "--seconds", str(seconds)] + paths))
        else:
            log("s5: bench/build/cgbench-lib missing (libcgstream not built): (a) not measured")
    if "poll" in which:
        runs.append(("poll", [CGBENCH, "latency", "--seconds", str(seconds), "--list", lst]))
    if "pycgstream" in which:
        # -S: no site-packages (pycgstream needs only the standard library);
        # Python's start-up over 9p under TCG is slow enough without them
        runs.append(("pycgstream", [sys.executable, "-S", LATENCY_PY, "--seconds", str(seconds)]
                     + paths))
    set_interval(interval_ms)
    for name, argv in runs:
        if not have_time(seconds + 20, f"s5 {name}"):
            continue
        t0 = time.time()
        res = CG.run_json(READERS, argv, timeout=seconds + 240)
        log(f"s5 {name}: {time.time() - t0:.0f} s wall including start-up")
        if res:
            record("s5", {"reader": name, "interval_ms": interval_ms, "cgroups": m,
                          "seconds": seconds}, res)
            lat = sorted(res.get("lat_us", []))
            if lat:
                log(f"s5 {name}: n={len(lat)} p50={lat[len(lat) // 2]} us max={lat[-1]} us")
    set_interval(0)


def s6_updater(readers, m, period_ms, seconds, rounds):
    """CPU-bound workload in one cgroup: throughput with no readers, with
    classic readers, with stream readers at the same rate."""
    CG.parent_ready(f"{BASE}/work")
    CG.create([f"{BASE}/work/w"])
    work = CG.path(f"{BASE}/work/w")
    lst = list_file(f"upd{m}", [work] + tele_cgroups(m - 1))
    for r in range(rounds):
        if not have_time(3 * (seconds + 15), f"s6 round {r}"):
            break
        for phase in ("none", "classic", "stream"):
            if phase == "stream" and not HAVE_STREAM:
                continue
            rd = None
            set_interval(period_ms if phase == "stream" else 0)
            if phase != "none":
                rd = CG.popen(READERS, [CGBENCH, "telemetry", "--mode", phase, "--readers",
                                        str(readers), "--period-ms", str(period_ms),
                                        "--seconds", str(seconds + 1.5), "--list", lst],
                              stdout=subprocess.PIPE, text=True)
                time.sleep(0.5)
            res = CG.run_json(f"{BASE}/work/w", [CGBENCH, "work", "--procs", str(NCPU),
                                                  "--seconds", str(seconds)])
            rres = None
            if rd:
                try:
                    out, _ = rd.communicate(timeout=120)
                    lines = [l for l in out.splitlines() if l.startswith("{")]
                    rres = json.loads(lines[-1]) if lines else None
                except subprocess.TimeoutExpired:
                    rd.kill()
                    rd.communicate()
                    log("s6: readers timed out")
            set_interval(0)
            if res:
                record("s6", {"phase": phase, "round": r, "readers": readers, "cgroups": m,
                              "period_ms": period_ms, "seconds": seconds},
                       {"work": res, "readers": rres})
                log(f"s6 round {r} {phase}: {res['iters_per_s']:.3g} iterations/s")


# --- the agent scenario (s10) and the memory experiment (s11) ---------------
#
# Raw records (record(scenario, params, result)); the report renders them:
#
#   "s10"        one telemetry run of one way at one point.
#                params: way (classic | stream | subtree | bpfmap | bpfmap-noio |
#                  bpfshared | idle: readers that read nothing, no flusher: the kworkers'
#                  background over the same window, under the same load),
#                  mode (cgbench's --mode), controllers ("cpu,memory,io";
#                  bpfmap-noio, bpfshared: "cpu,memory"), readers, cgroups, round,
#                  period_ms, seconds, interval_ms (flusher ways: all three
#                  controllers' flushers at it; else 0), changing_pct (the
#                  change share: percent of the tree's cgroups cgbench
#                  change makes change every cycle; absent in runs before
#                  it, whose tree ran 8 churners)
#                result: cgbench telemetry's JSON (per_reader[]: cpu_ns,
#                  utime_us, stime_us, cycles, values (numbers consumed),
#                  errors, fail_errno, bpf_items, bpf_missing, held (the
#                  changes way: the cgroups its table holds); kworker_ns:
#                  all kworkers over the window, procstat_delta, ...) plus
#                  flusher_us: the CPU time of every stat_stream_workfn run
#                  in the window (cpu, memory and io flushers together;
#                  workqueue tracepoints, less the spans its kworker was
#                  switched out, from sched_switch; flusher_clock "cpu",
#                  or "wall" where sched_switch could not be traced and
#                  in runs before 2026-11-27), None where tracefs is missing or
#                  the way runs no flusher; flusher_us_by_ctrl: the same
#                  runs per controller ({"cpu": [...], "memory": [...],
#                  "io": [...]}; "?" for a work item flusher_works() could
#                  not name).  Both hold only the runs that started in the
#                  readers' window (window_start_ns + wall_ns, monotonic).
#                  bpfshared: collector (cgbench telemetry's: the shared
#                  collector's process CPU, cpu_ns, and its passes over the
#                  window, counted once whatever the readers; null where it
#                  could not be read) and collector_run (cgbench collect's
#                  own JSON over its whole run: passes, pass_us_mean, cpu_ns,
#                  truncated, failed, ...; rc, stderr).  changer: the
#                  share over the run (Changer.share(): pct, cgroups asked,
#                  of, visits_per_period, share_pct, missed, procs,
#                  late_ns_max; visits_per_period None where its counts
#                  could not be read; null in runs before it)
#   "s10check"   agentcheck at a tree: params cgroups, controllers, ways,
#                  changing_pct; result: cgbench agentcheck's JSON
#                  (ways.<way>: usage_usec, anon, current, wbytes of the
#                  tree's first cgroup; ways.changes.changes: cycles,
#                  probe_changed, held, classic_after; failed) and rc (0:
#                  every way agreed with classic)
#   "s10tree"    a tree's set-up: params cgroups; result: fill's JSON,
#                  holder (1: the first cgroup's; runs before the change
#                  shares: active, the churners), seconds
#   "s11"        one memloop run: params mode (text | stream | subtree |
#                  bpf), count, round; result: cgbench memloop's JSON
#                  (cpu_ns, utime_us, stime_us, wall_ns over count reads,
#                  values_per_read, anon, errors) and rc
#   "s12"        one top run (issue 29, 4): params program (systemd-cgtop |
#                  cgstream top), cgroups, tables (asked for), version or
#                  interval_ms; result: wall_s, table_at_s / table_cpu_s /
#                  table_rows / table_mono_s (each table's start: seconds
#                  since the start, the process's CPU seconds so far (its
#                  CPU clock, ns resolution), its non-blank lines, and
#                  CLOCK_MONOTONIC),
#                  cpu_s, utime_s, stime_s (wait4: the whole run),
#                  maxrss_kb, rc, stderr; cgstream top also
#                  flusher_us_by_ctrl (its three flushers at 1 s: the runs
#                  that started between the second table and the last)
#   "s11prof"    perf over one memloop run (text and subtree, after the
#                  measured rounds): params mode, count; result as s9's
#                  (top: symbols over 0.7 % self, samples, dso, rc, err)
#   "s10prof"    perf over one telemetry run of the subtree way, cpu,
#                  memory and io, on the agent tree (1,000 cgroups), the
#                  flushers at 10 ms, then one of the changes way (16
#                  readers, 1 % changing, the flushers and the changer at
#                  100 ms): params way, controllers, cgroups, readers,
#                  changing_pct, seconds, period_ms; result as s9's
#   "s13"        removals (issue 43): short-lived cgroups, each using a known
#                  CPU time and writing known bytes, created and removed under
#                  one parent while every way's accountant runs: params
#                  seconds, period_ms (the accountants' cycle and the
#                  flushers' interval), every_ms (one cgroup started per),
#                  work_us, io_kb; result: churn (cgbench churnrm's JSON:
#                  cgroups, usage_usec, wbytes, the final values read just
#                  before each rmdir; life_ms_avg/max), ways.<way>
#                  (cgbench account's JSON: usage_usec, wbytes attributed
#                  to the parent's children, cgroups_seen_live,
#                  removed_records, lost, dups, passes, errors; rc, stderr)
#   "s14"        one telemetry run by an agent of uid 65534 in a delegated
#                  subtree (issue 43): params and result as s10's, plus uid
#   "s14perm"    the cpu subtree file of the s14 tree read by root and by its
#                  owner (uid), alternately (the permission checks' cost):
#                  params who (root | owner), uid, round, cgroups,
#                  period_ms, seconds; result: cgbench telemetry's JSON
#   "s14refused" a way an unprivileged agent cannot run: params way, uid;
#                  result rc, stderr (the error it gets)
#   "s15"        the streams' kernel memory (issue 40): params cgroups (the
#                  agent tree's), removals_s, interval_ms (the removal
#                  part's); result: off_kb (SUnreclaim, KiB, every stream
#                  off), armed.<ctrl> (after arming cpu, then memory, then
#                  io, each on top of the ones before), off_again_kb,
#                  before_kb / held_kb / dropped_kb (armed at 100 ms:
#                  before the churn, 3 s after it, 8 s later), churn
#                  (cgbench churnrm's JSON)
#   "skipped"    as everywhere (have_time)
#
# "s8" (the daemons) records, per program: cpu_ns over its measured window
# (one scrape per cycle for the exporter), wall_s, cycles, rss_kb, hwm_kb;
# the exporter also scrape_s (each scrape's latency), scrape_bytes, series
# (sample lines of the last scrape), between_cpu_ns / between_s (its CPU
# over a window before, with nobody scraping); params tree ("agent": the
# s10 tree, all three controllers; "idle": idle cgroups, cpu only)

AGENT_CTRLS = ("cpu", "memory", "io")
# (label, cgbench --mode, --controllers)
AGENT_WAYS = (("classic", "classic", "cpu,memory,io"), ("stream", "stream", "cpu,memory,io"),
              ("subtree", "subtree", "cpu,memory,io"),
              # the subtree files' change snapshots (issue 43): each cycle
              # only what changed, every cgroup's state kept by the reader
              ("changes", "changes", "cpu,memory,io"),
              ("bpfmap", "bpfmap", "cpu,memory,io"),
              ("bpfmap-noio", "bpfmap", "cpu,memory"),
              # the maintainer's BPF design (issue 43): one collector pass per
              # cycle for all readers, each reader mapping its records; no io
              # (there are no io kfuncs)
              ("bpfshared", "bpfshared", "cpu,memory"),
              # no reader, no flusher: the background the others run on
              ("idle", "idle", "cpu,memory,io"))
# most wanted first: the issue's 1 x 1,000, then the per-cgroup cost against
# M with one reader, then more readers.  16 x 10,000 is dropped: its
# per-cgroup streams are 480,000 open files, and with the tree's charged
# memory the 2 GiB guest ran out of memory (the OOM killer took the driver,
# run of 2026-11-26); at 4 x 10,000 the classic and stream readers
# already complete a fifth of a cycle in the window (run of 2026-11-27),
# so 16 readers add nothing.  The trees of 100 cgroups (1, 4 and 16
# readers) are dropped too (2026-12-03): the issue's sizes are 1,000 and
# 10,000, and their 5 minutes went to the scenarios the boot did not reach.
AGENT_POINTS = [(1, 1000), (1, 10000), (4, 1000), (16, 1000), (4, 10000)]
# The change share (issue 43): percent of the tree's cgroups whose cpu,
# memory and io values change every cycle (cgbench change); the rest stay
# idle.  1 % is the issue's targets' share; at the others only the ways
# whose cost follows the changes run (SHARE_WAYS: the subtrees, the change
# snapshots, the shared BPF collector they are judged against, and the
# idle way's background); classic and bpfmap read and flush every cgroup
# whatever changed.  The order (agent_grid): the targets' points (1 x
# 1,000, 16 x 1,000, 1 x 10,000 at 1 %) with 1 x 1,000 and 1 x 10,000 at
# the other shares, then the other points at 1 %, then at the other
# shares; within each, one tree size at a time, the smaller first: every
# stream flusher walks its controller's whole hierarchy and would pay for
# another point's idle tree, so s10_agent removes the others when it
# changes size (drop_agent_trees; a tree of 10,000 is made again in about
# a minute under TCG).  100 % of 10,000 cgroups is dropped: 10,000 visits
# a second (each a cgroup migration, a page fault and an O_DIRECT write)
# are more than the two vCPUs do under TCG, so the share would not be
# what is asked.
AGENT_SHARES = (1, 0, 10, 100)
TARGET_SHARE = 1
SHARE_WAYS = ("subtree", "changes", "bpfshared", "idle")
TARGET_POINTS = ((1, 1000), (16, 1000), (1, 10000))
# run with the targets' points at 1 %, on the tree of 10,000 that 1 x
# 10,000 has made (later, the tree would be made again for it alone, and
# the cap cut it in the run of 2026-12-02)
RIDE_POINTS = ((4, 10000),)
# the boots of more vCPUs (8): the targets' two points at 1,000 cgroups at
# 1 %, every way (the issue asks for the agent scenario at 2 and 8 vCPUs;
# under TCG an 8-vCPU guest on the 2-core host does a quarter of the work
# a vCPU, and the rest of the grid does not fit the boot's time)
AGENT_POINTS_BIG = [(1, 1000), (16, 1000)]
CHANGER_WORK_US = 5          # the CPU each visit spins in its cgroup


def agent_grid(points, shares):
    """the (readers, cgroups, percent changing) s10 runs, in order: three
    groups, each by tree size (the smaller first; s10_agent removes the
    other trees when it changes to a size): the targets' points (and
    RIDE_POINTS) at 1 % with 1 x 1,000 and 1 x 10,000 at the other shares
    (the kernel issue's shares), the other points at 1 %, and those at the
    other shares"""
    tp = [p for p in TARGET_POINTS + RIDE_POINTS if p in points]
    rest = [p for p in points if p not in tp]
    others = [s for s in shares if s != TARGET_SHARE]
    one = [TARGET_SHARE] if TARGET_SHARE in shares else []
    first = [(r, m, s) for r, m in tp for s in one]
    first += [(1, m, s) for m in (1000, 10000) for s in others if (1, m) in points]
    second = [(r, m, s) for r, m in rest for s in one]
    third = [(r, m, s) for r, m in tp + rest for s in others
             if (r, m) not in ((1, 1000), (1, 10000))]
    grid = []
    for group in (first, second, third):
        grid += sorted(group, key=lambda p: p[1])
    return [(r, m, s) for r, m, s in grid if not (m >= 10000 and s >= 100)]


def share_ways(ways, pct):
    """the ways run at a share: all at the targets' share, else SHARE_WAYS"""
    return ways if pct == TARGET_SHARE else [w for w in ways if w[0] in SHARE_WAYS]
HAVE_MEMIO = False           # memory.stat.stream* and io.stat.stream* (set in main)
LOOPDEV = None               # cgbench loopdev's JSON
SHM = "/tmp/cgsbench-shm"    # a tmpfs of our own: the agent cgroups' charged files
AGENT_TREES = {}             # cgroups -> AgentTree (set up once, used by s10 and s12)


def agent_ways():
    """the ways this kernel can run"""
    out = []
    for label, mode, ctrls in AGENT_WAYS:
        if mode in FLUSHER_WAYS and not (HAVE_MEMIO and HAVE_SUBTREE):
            continue
        if mode in BPF_WAYS and not HAVE_BPF:
            continue
        if mode == "bpfshared" and not bpffs():
            continue
        out.append((label, mode, ctrls))
    return out


BPFFS = None                 # where the shared collector pins its map (bpffs())


def bpffs():
    """a bpffs for the shared collector's pin: /sys/fs/bpf where it is one,
    else one mounted at /tmp/cgsbench-bpf; "" when none can be had"""
    global BPFFS
    if BPFFS is None:
        mounts = {l.split()[1]: l.split()[2] for l in read("/proc/self/mounts").splitlines()}
        BPFFS = next((d for d in ("/sys/fs/bpf", "/tmp/cgsbench-bpf") if mounts.get(d) == "bpf"), "")
        if not BPFFS:
            os.makedirs("/tmp/cgsbench-bpf", exist_ok=True)
            r = subprocess.run(["mount", "-t", "bpf", "cgsbench", "/tmp/cgsbench-bpf"],
                               capture_output=True, text=True)
            BPFFS = "/tmp/cgsbench-bpf" if r.returncode == 0 else ""
            if not BPFFS:
                log(f"no bpffs ({r.stderr.strip()}): the shared BPF collector is not measured")
    return BPFFS


class SharedCollector:
    """the shared BPF collector (cgbench collect: one pass per period over
    the tree, its map pinned on a bpffs) running in the readers' cgroup for
    the body, started once per run of the bpfshared way at a point; .pin
    (None when it did not start), .result (its JSON, rc and stderr)"""

    def __init__(self, tree, ctrls, period_ms):
        self.tree, self.ctrls, self.period_ms = tree, ctrls, period_ms
        self.pin, self.proc, self.result = None, None, None

    def __enter__(self):
        pin = os.path.join(bpffs(), f"cgbench-shared-{os.getpid()}")
        if os.path.exists(pin):
            os.unlink(pin)       # a collector of an earlier run killed before it unpinned
        self.proc = CG.popen(READERS, [CGBENCH, "collect", "--subtree", CG.path(self.tree.parent),
                                       "--pin", pin, "--period-ms", str(self.period_ms),
                                       "--controllers", self.ctrls],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # the pin appears after the first pass (loading and one pass of
        # 10,000 cgroups took seconds under TCG)
        deadline = time.time() + 60 + self.tree.m // 100
        while time.time() < deadline and self.proc.poll() is None and not os.path.exists(pin):
            time.sleep(0.1)
        if os.path.exists(pin):
            self.pin = pin
            if self.tree.uid is not None:
                # the admin lets the delegated agent open the map (read-write:
                # a BPF map is mmapped through a writable fd only; the map is
                # frozen, so that fd cannot write it)
                os.chmod(pin, 0o666)
        else:
            self.__exit__()
            log(f"the shared BPF collector did not start: {self.result}")
        return self

    def __exit__(self, *exc):
        if self.result is not None:
            return               # stopped already (__enter__: it did not start)
        out, err = stop_proc_output(self.proc, 30)
        lines = [l for l in out.splitlines() if l.startswith("{")]
        self.result = {"collect": json.loads(lines[-1]) if lines else None,
                       "rc": self.proc.returncode, "stderr": err[-2000:]}


def loopdev():
    """one loop device over 64 MiB of memory for the agents' I/O"""
    global LOOPDEV
    if LOOPDEV is None:
        LOOPDEV = CG.run_json(READERS, [CGBENCH, "loopdev", "--mem-kb", "65536"]) or {}
        log(f"agent I/O device: {LOOPDEV or 'none (no loop devices): no io.stat values'}")
    return LOOPDEV.get("dev")


LOOP_CLR_FD, LOOP_CTL_REMOVE = 0x4C01, 0x4C81      # <linux/loop.h>


def loop_release():
    """detach and remove the agents' loop device (loopdev() makes a new one
    when next asked): removing it frees the loop driver's per-blkcg workers
    (lo_free_disk), and with them their references on removed cgroups'
    blkcgs, which it holds otherwise until a worker has been idle 60 s
    (detaching alone keeps them); and the pages of its memfd, charged to
    the cgroups whose writes the workers did, go with the backing file"""
    global LOOPDEV
    dev = (LOOPDEV or {}).get("dev")
    if not dev:
        return
    try:
        fd = os.open(dev, os.O_RDWR | os.O_CLOEXEC)
        try:
            fcntl.ioctl(fd, LOOP_CLR_FD)
        finally:
            os.close(fd)    # the detach completes at the last close
        LOOPDEV = None
        ctl = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)
        try:
            for _ in range(50):     # EBUSY while the detach completes
                try:
                    fcntl.ioctl(ctl, LOOP_CTL_REMOVE, int(dev.removeprefix("/dev/loop")))
                    break
                except OSError as e:
                    if e.errno != errno.EBUSY:
                        raise
                    time.sleep(0.1)
        finally:
            os.close(ctl)
    except OSError as e:
        log(f"detaching and removing the agent I/O device {dev}: {e}")


def enable_io(rel):
    """the io controller for rel's children (and on the way down from the root)"""
    parts = rel.split("/")
    for d in [ROOT] + [CG.path("/".join(parts[:i])) for i in range(1, len(parts) + 1)]:
        try:
            write(os.path.join(d, "cgroup.subtree_control"), "+io")
        except OSError as e:
            log(f"enabling io in {d}: {e}")
            return False
    return True


class Changer:
    """cgbench change over `pct` % of a tree's cgroups, those after its
    first (one process per vCPU, started in a cgroup of its own outside the
    tree): exactly those change every period, in cpu, memory and io (and,
    with stall_us, in pressure: each visit stalls that long).  The
    first, t00000, stays idle below 100 %: it is agent_check()'s probe,
    which the ways read seconds apart at 10,000 cgroups (classic takes
    that long), so a probe that changed meanwhile would differ between
    them by more than the check's tolerance; .counts()
    its visits so far (SIGUSR1: a JSON line), .share(a, b) what it did
    between two counts"""

    def __init__(self, tree, pct, period_ms, stall_us=0):
        self.tree, self.pct, self.period_ms, self.stall_us = tree, pct, period_ms, stall_us
        self.k = round(tree.m * pct / 100)
        self.proc = None

    def start(self):
        if not self.k:
            return self      # 0 %: nothing changes
        CG.create([f"{BASE}/changer"])
        paths = self.tree.paths
        changing = paths[1:self.k + 1] if self.k < len(paths) else paths
        lst = list_file(f"agent{self.tree.m}-changing{self.pct}", changing)
        dev = loopdev()
        argv = [CGBENCH, "change", "--list", lst, "--period-us", str(self.period_ms * 1000),
                "--work-us", str(CHANGER_WORK_US), "--mem-kb", "4"]
        if self.stall_us:
            argv += ["--stall-us", str(self.stall_us)]
        self.proc = CG.popen(f"{BASE}/changer", argv + (["--io-dev", dev, "--io-kb", "4"]
                                                       if dev else []),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        return self

    def counts(self):
        """its counts now (None: not running, or no answer in 10 s)"""
        if not self.proc or self.proc.poll() is not None:
            return None
        self.proc.send_signal(signal.SIGUSR1)
        if not select.select([self.proc.stdout], [], [], 10)[0]:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line.startswith("{") else None

    def share(self, a, b):
        """what it did between counts a and b: the visits per period
        against the cgroups it is to change"""
        out = dict({"pct": self.pct, "cgroups": self.k, "of": self.tree.m},
                   **({"stall_us": self.stall_us} if self.stall_us else {}))
        if not self.k:
            return dict(out, visits_per_period=0, share_pct=0.0)
        if not a or not b:
            return dict(out, visits_per_period=None, share_pct=None,
                        error="no counts from cgbench change")
        # the periods its processes went through (visited, or slept
        # through: missed), not the clock between the two counts, which
        # would count a period cut at either end as a part of one
        periods = (b["periods"] - a["periods"] + b["missed"] - a["missed"]) / b["procs"]
        vpp = (b["visits"] - a["visits"]) / periods if periods > 0 else None
        return dict(out, visits_per_period=vpp,
                    share_pct=vpp * 100 / self.tree.m if vpp is not None else None,
                    missed=b["missed"] - a["missed"], procs=b["procs"],
                    late_ns_max=b["late_ns_max"])

    def stop(self):
        if not self.proc:
            return
        _, err = stop_proc_output(self.proc, 20)
        if self.proc.returncode:
            log(f"cgbench change ({self.pct} % of {self.tree.m}) ended with "
                f"{self.proc.returncode}: {err.strip()[-500:]}")
        self.proc = None


def tree_setup_s(m):
    """what making an agent tree of m cgroups may take, seconds: 5 s for
    1,000 and 44 s for 10,000 in the 2-vCPU TCG guest of 2026-12-02, with
    room for a loaded host (the guesses before, 560-620 s for 10,000, made
    the driver skip s15 and s10's 4 x 10,000 for want of time)"""
    return 30 + m // 50


class AgentTree:
    """a parent holding exactly m cgroups, each holding charged memory (an
    8 KiB tmpfs file) and having written (4 KiB, O_DIRECT, to the loop
    device), under the churn load elsewhere; the first holds 4 MiB of anon
    memory (a process that then sleeps: stable values for the checks);
    the change share (start(pct)): cgbench change makes the first pct %
    of them change every period, the others stay idle"""

    def __init__(self, m, uid=None):
        self.m = m
        self.uid = uid
        self.parent = f"{BASE}/agent{m}" if uid is None else f"{BASE}/deleg{uid}/agent{m}"
        self.procs = []
        self.ready = False
        self.changer = None

    def setup(self):
        t0 = time.time()
        names = [f"{self.parent}/t{i:05d}" for i in range(self.m)]
        if self.uid is None:
            CG.parent_ready(self.parent)
            enable_io(self.parent)
            CG.create(names, bulk=True)
        else:
            # a delegated subtree: its owner makes its own cgroups
            delegate(os.path.dirname(self.parent), self.uid)
            mkdirs_as(self.uid, self.parent, names)
        self.paths = [CG.path(x) for x in names]
        self.lst = list_file(f"agent{self.m}" + ("" if self.uid is None else f"-uid{self.uid}"),
                             self.paths)
        dev = loopdev()
        fill = None
        if dev:
            shm = self.shm_dir()
            os.makedirs(shm, exist_ok=True)
            fill = CG.run_json(READERS, [CGBENCH, "fill", "--list", self.lst, "--io-dev", dev,
                                         "--io-kb", "4", "--mem-kb", "8", "--shm-dir", shm],
                               timeout=600 + self.m // 10)
        self.ready = True
        record("s10tree", dict({"cgroups": self.m}, **({} if self.uid is None else
                                                      {"uid": self.uid})),
               {"fill": fill, "seconds": time.time() - t0, "holder": 1})
        log(f"s10: {self.m} agent cgroups ready in {time.time() - t0:.0f} s "
            f"(fill: {'done' if fill else 'failed'})")

    def start(self, pct=TARGET_SHARE, period_ms=1000, stall_us=0):
        """the holder, and the change share pct % at period_ms (its visits
        stalling stall_us: Changer)"""
        if not self.ready:
            self.setup()
        # the holder naps an hour between wakes (SIGTERM ends the nap): its
        # cgroup changes only where the share includes it
        self.procs.append(CG.popen(f"{self.parent}/t00000",
                                   [CGBENCH, "churn", "--work-us", "0", "--period-us",
                                    "3600000000", "--mem-kb", "0", "--hold-kb", "4096"]))
        self.changer = Changer(self, pct, period_ms, stall_us).start()
        time.sleep(3)    # the holder's memory touched, the changer going

    def set_share(self, pct, period_ms=1000, stall_us=0):
        """the change share now pct % (the holder stays)"""
        if self.changer and (self.changer.pct, self.changer.period_ms,
                             self.changer.stall_us) == (pct, period_ms, stall_us):
            return
        if self.changer:
            self.changer.stop()
        self.changer = Changer(self, pct, period_ms, stall_us).start()
        time.sleep(2 * period_ms / 1000)   # a publication of the new share's changes

    def stop(self):
        if self.changer:
            self.changer.stop()
            self.changer = None
        stop_procs(self.procs)
        self.procs = []

    def shm_dir(self):
        return os.path.join(SHM, f"agent{self.m}" + ("" if self.uid is None else f"-uid{self.uid}"))

    def remove(self):
        """stop it and remove its cgroups with the files charged to them, so
        that they are freed rather than left dying (a dying cgroup is still
        in every walk of the hierarchy)"""
        self.stop()
        shutil.rmtree(self.shm_dir(), ignore_errors=True)
        CG.remove_tree(self.parent)
        self.ready = False


def hierarchy_cgroups():
    """the root's nr_descendants and nr_dying_descendants: what a walk of
    the whole hierarchy visits (a stream's publication walks every css of
    its controller's tree, the BPF iterators every cgroup below their
    start)"""
    st = {}
    try:
        for l in read(os.path.join(ROOT, "cgroup.stat")).splitlines():
            k, _, v = l.partition(" ")
            st[k] = int(v)
    except (OSError, ValueError):
        return None, None
    return st.get("nr_descendants"), st.get("nr_dying_descendants")


def remove_trees(trees):
    """remove these agent trees, and wait (up to 150 s) for their cgroups
    to be freed: the loop driver's per-blkcg workers hold their blkcg
    until they have been idle for 60 s (LOOP_IDLE_WORKER_TIMEOUT, checked
    by a 60 s timer), so a tree's cgroups that wrote to the loop device
    stayed dying a minute or two (201 of 201 after 40 s, 93 after 70 s in a
    check of 2026-12-02; 490 s of waits in the 2-vCPU boot of that day's
    make bench).  When no agent tree is left the loop device is detached
    and removed (loop_release), which frees the workers at once.  A measurement's hierarchy is to hold what it
    measures, not the idle cgroups of an earlier one: every stream flusher
    walks its controller's whole tree, and pays for them"""
    if not trees:
        return
    _, dying0 = hierarchy_cgroups()
    for t in trees:
        t.remove()
    if not AGENT_TREES:
        loop_release()      # no tree left writing to it
    t0 = time.time()
    while True:
        live, dying = hierarchy_cgroups()
        if (not dying or (dying0 is not None and dying <= dying0)
                or time.time() - t0 >= 150):
            break
        time.sleep(1)
    log(f"removed the agent trees of {', '.join(str(t.m) for t in trees)} cgroups (freed in "
        f"{time.time() - t0:.0f} s): the hierarchy holds {live} cgroups, {dying} dying")


def drop_agent_trees(keep=()):
    """remove every agent tree but those of keep's sizes (remove_trees)"""
    remove_trees([AGENT_TREES.pop(m) for m in list(AGENT_TREES) if m not in keep])


class StreamsOpen:
    """the flushers of ctrls on at interval_ms, each kept running (a stream
    file open at the root) for 2.5 intervals before the body, so that the
    streams hold a flush of the values the body compares"""

    def __init__(self, ctrls, interval_ms):
        self.ctrls, self.interval_ms, self.fds = ctrls, interval_ms, []

    def __enter__(self):
        if not self.interval_ms:
            return self
        set_interval(self.interval_ms, self.ctrls)
        for c in self.ctrls:
            try:
                self.fds.append(os.open(os.path.join(ROOT, stream_file(c)), os.O_RDONLY))
            except OSError as e:
                log(f"{stream_file(c)}: {e}")
        time.sleep(2.5 * self.interval_ms / 1000)
        return self

    def __exit__(self, *exc):
        for fd in self.fds:
            os.close(fd)
        if self.interval_ms:
            set_interval(0, self.ctrls)


# the values agentcheck compares, per controller (cgbench's probe_fields[])
CHECKED = ("anon", "current", "wbytes", "usage_usec", "pressure_total")


def agent_check(tree, ways, ctrls=AGENT_CTRLS, scenario="s10"):
    """one cycle of each way against classic (cgbench agentcheck): the tree's
    first cgroup's cpu usage, anon, memory.current, io wbytes (and the sum
    of its pressure totals, with pressure in ctrls), recorded as
    <scenario>check"""
    modes = ",".join(dict.fromkeys(mode for _, mode, _ in ways if mode != "idle"))
    shared = "bpfshared" in modes.split(",")
    with StreamsOpen(ctrls, 1000), (SharedCollector(tree, "cpu,memory", 1000) if shared
                                    else contextlib.nullcontext()) as sc:
        if shared and not sc.pin:
            modes = ",".join(m for m in modes.split(",") if m != "bpfshared")
        pin = ["--pin", sc.pin] if shared and sc.pin else []
        r = subprocess.run(CG.cmd(READERS, [CGBENCH, "agentcheck", "--controllers",
                                            ",".join(ctrls), "--mode", modes, "--subtree",
                                            CG.path(tree.parent), "--list", tree.lst] + pin),
                           capture_output=True, text=True, timeout=300 + tree.m // 20)
    out = [l for l in r.stdout.splitlines() if l.startswith("{")]
    res = json.loads(out[-1]) if out else None
    record(f"{scenario}check", {"cgroups": tree.m, "controllers": ",".join(ctrls), "ways": modes,
                                "changing_pct": tree.changer.pct if tree.changer else None},
           {"check": res, "rc": r.returncode, "stderr": r.stderr[-2000:]})
    if r.returncode or not res:
        log(f"{scenario} CHECK FAILED at {tree.m} cgroups (rc {r.returncode}): a way's values "
            f"disagree with classic or are zero:\n{r.stderr.strip()[-2000:]}")
    else:
        log(f"{scenario} check: every way agrees with classic: " + "; ".join(
            f"{w} " + " ".join(f"{k} {v[k]}" for k in CHECKED if k in v)
            for w, v in res["ways"].items()))
    ch = (res or {}).get("ways", {}).get("changes", {}).get("changes")
    if ch:
        log(f"{scenario} check, changes: {ch['cycles']} cycles, the checked cgroup in "
            f"{ch['probe_changed']} of its change snapshots, {ch['held']} cgroups held, "
            f"classic after them: {ch['classic_after']}")
    return r.returncode == 0


def agent_run(tree, r, label, mode, ctrls, period_ms, seconds, rnd, scenario="s10"):
    """one run of a way at a point, recorded (as scenario's, or s14's for
    the tree of an unprivileged owner); bpfshared with its collector
    around it (started for this run, so counted once, stopped after); the
    agent runs as the tree's owner (tree.uid: s14)"""
    if mode != "bpfshared":
        agent_measure(tree, r, label, mode, ctrls, period_ms, seconds, rnd, [],
                      scenario=scenario)
        return
    with SharedCollector(tree, ctrls, period_ms) as sc:
        if not sc.pin:
            return
        res = agent_measure(tree, r, label, mode, ctrls, period_ms, seconds, rnd,
                            ["--pin", sc.pin], record_it=False)
    if res:
        res["collector_run"] = sc.result
        agent_record(tree, r, label, mode, ctrls, period_ms, seconds, rnd, res, scenario)


def agent_measure(tree, r, label, mode, ctrls, period_ms, seconds, rnd, extra, record_it=True,
                  scenario="s10"):
    """cgbench telemetry of a way, its flushers traced (the flusher ways:
    the streams of the controllers it reads at the cycle's interval), as
    the tree's owner (tree.uid; root where None); recorded unless
    record_it is false; its result (None: no result)"""
    flusher = mode in FLUSHER_WAYS
    interval = period_ms if flusher else 0
    if flusher:
        flusher_works()    # (once a boot, before the interval is set)
    set_interval(interval, ctrls.split(","))
    if flusher:
        flusher_trace(True)
    before = tree.changer.counts() if tree.changer else None
    argv = ["telemetry", "--mode", mode, "--controllers", ctrls, "--readers", str(r),
            "--period-ms", str(period_ms), "--seconds", str(seconds), "--list", tree.lst,
            "--subtree", CG.path(tree.parent)] + extra
    res = CG.run_json(READERS, as_uid(tree.uid, argv),
                      timeout=seconds + 240 + tree.m // 20)
    # the share achieved over the run (its set-up, opens included: the
    # changer's period is the cycle's, so the window's rate is the same)
    changer = tree.changer.share(before, tree.changer.counts()) if tree.changer else None
    # the runs that started in the readers' window (the trace began before
    # the readers opened their files, which at 10,000 cgroups takes cycles)
    window = ((res["window_start_ns"] / 1e9, (res["window_start_ns"] + res["wall_ns"]) / 1e9)
              if res and "window_start_ns" in res else None)
    by_ctrl = flusher_trace_by_ctrl(window) if flusher else None
    set_interval(0, ctrls.split(","))
    if not res:
        return None
    res["changer"] = changer
    res["hierarchy_cgroups"], res["hierarchy_dying"] = hierarchy_cgroups()
    res["flusher_us"] = (sorted(d for v in by_ctrl.values() for d in v)
                         if by_ctrl is not None else None)
    res["flusher_us_by_ctrl"] = by_ctrl
    if flusher:
        res["flusher_clock"] = FLUSHER_CLOCK
    if record_it:
        agent_record(tree, r, label, mode, ctrls, period_ms, seconds, rnd, res, scenario)
    return res


def records_said(pr, cyc):
    """subtree, changes: each controller's records per cycle (and the most
    in one) over the readers"""
    recs = {}
    for p in pr:
        for c, n in p.get("records", {}).items():
            recs.setdefault(c, [0, 0])[0] += n
            recs[c][1] = max(recs[c][1], p.get("records_max", {}).get(c, 0))
    return ", ".join(f"{c} {n / cyc:.1f} (at most {mx})" for c, (n, mx) in recs.items())


def agent_record(tree, r, label, mode, ctrls, period_ms, seconds, rnd, res, scenario="s10"):
    """a record of one run (scenario's, s14's for an unprivileged owner's
    tree), and its line in the log"""
    interval = period_ms if mode in FLUSHER_WAYS else 0
    durs, by_ctrl = res["flusher_us"], res["flusher_us_by_ctrl"]
    pct = tree.changer.pct if tree.changer else None
    sc = scenario if tree.uid is None else "s14"
    record(sc, dict({"way": label, "mode": mode, "controllers": ctrls, "readers": r,
                     "cgroups": tree.m, "round": rnd, "period_ms": period_ms,
                     "seconds": seconds, "interval_ms": interval, "changing_pct": pct},
                    **({} if tree.uid is None else {"uid": tree.uid})), res)
    ch = res.get("changer") or {}
    share = (f" at {pct} % changing ({ch['visits_per_period']:.1f} visits per period of "
             f"{ch['cgroups']} asked)" if ch.get("visits_per_period") is not None else
             f" at {pct} % changing (the changer's share not read)")
    pr = res["per_reader"]
    cyc = max(1, sum(p["cycles"] for p in pr))
    cpu = sum(p["cpu_ns"] for p in pr)
    vals = sum(p.get("values", 0) for p in pr)
    fails = {p["fail_errno"] for p in pr if p.get("fail_errno")}
    errs = sum(p["errors"] for p in pr)
    if mode == "idle":
        n = seconds * 1000 / period_ms
        log(f"{sc} R={r} M={tree.m}{share} idle: kworkers {res['kworker_ns'] / 1e6:.1f} ms in "
            f"{seconds} s, {res['kworker_ns'] / n / 1e6:.2f} ms per {period_ms} ms cycle")
        return
    fl = (f", flusher {sum(durs) / 1e3:.1f} ms ({len(durs)} runs: " + ", ".join(
        f"{c} {sum(v) / 1e3:.1f}" for c, v in sorted(by_ctrl.items())) + ")") if durs else ""
    # the BPF items: the shared collector's, or the reader's own program's
    items = ((res.get("collector_run") or {}).get("collect") or {}) if mode == "bpfshared" else pr[0]
    col = res.get("collector")
    if mode == "bpfshared":
        fl = (f", collector {col['cpu_ns'] / max(1, col['passes']) / 1e6:.2f} ms CPU/pass "
              f"({col['passes']} passes)" if col else ", the collector's CPU not read")
    held = max((p.get("held", 0) for p in pr), default=0)
    log(f"{sc} R={r} M={tree.m}{share} {label}: {cyc / r:.1f} cycles/reader, readers "
        f"{cpu / cyc / 1e6:.2f} ms CPU/cycle, kworkers {res['kworker_ns'] / 1e6:.1f} ms{fl}, "
        f"{vals / cyc / tree.m:.0f} values/cgroup/cycle"
        + (f", {held} cgroups held" if mode == "changes" else "")
        + (f", records per cycle: {records_said(pr, cyc)}" if mode in ("subtree", "changes")
           else "")
        + (f", {errs} errors" if errs else "")
        + (f", passes failed: {sorted(os.strerror(e) for e in fails)}" if fails else "")
        + (f", BPF: {items.get('bpf_items')} items, {items.get('bpf_missing')} keys missing"
           if mode in BPF_WAYS else ""))


def s10_agent(grid, period_ms, seconds, rounds, share_s):
    """What an agent reads (issue 29, 1; issue 43): R readers x M cgroups at
    a change share (grid: agent_grid()'s (R, M, percent changing)), each
    cycle every cgroup's cpu, memory (memory.stat, memory.current,
    memory.events) and io (io.stat), the ways of AGENT_WAYS (at the
    shares other than the targets', SHARE_WAYS), rounds in alternating
    order.  No new point starts after share_s seconds (the rest of the
    run's scenarios keep their time); have_time skips what the budget
    cuts."""
    ways = agent_ways()
    if not HAVE_MEMIO:
        log("s10: this kernel has no memory/io streams: classic and BPF only")
    stop_at = time.time() + share_s
    trees, checked, cur = AGENT_TREES, set(), None
    try:
        for r, m, pct in grid:
            at = share_ways(ways, pct)
            what = f"s10 {r}x{m} at {pct}%"
            need = rounds * len(at) * (seconds + 15) + (0 if m in trees else tree_setup_s(m))
            if time.time() + need > stop_at:
                log(f"skipped (s10's share of the run, {share_s:.0f} s, is spent): {what}")
                record("skipped", {"what": what, "need_s": need, "left_s": 0}, {})
                continue
            if not have_time(need, what):
                continue
            if m not in trees:
                drop_agent_trees(keep={m})
                trees[m] = AgentTree(m)
            if cur is not trees[m]:
                if cur:
                    cur.stop()
                cur = trees[m]
                cur.start(pct, period_ms)
            else:
                cur.set_share(pct, period_ms)
            if m not in checked:
                checked.add(m)
                agent_check(cur, ways)
            for (label, mode, ctrls), rnd in [(w_, k) for k in range(rounds)
                                              for w_ in (at if k % 2 == 0 else at[::-1])]:
                agent_run(cur, r, label, mode, ctrls, period_ms, seconds, rnd)
    finally:
        if cur:
            cur.stop()


def s10_profile(m, seconds):
    """where the agent's readers spend their time (issue 29, 43: a target
    missed is said with a profile): perf in the guest over one telemetry
    run of the subtree way (cpu, memory and io) on the agent tree of m
    cgroups, all three flushers at the interval's minimum so that the
    reads, not the process's start-up, are most of what it samples; then
    one of the changes way as at the 16-agent target's point (16 readers,
    1 % of the tree changing) with the publishers and the changer at
    100 ms, so that each read is of a publication with its changes"""
    perf = perf_setup()
    tree = AGENT_TREES.get(m)
    setup = 0 if tree and tree.ready else tree_setup_s(m)
    if not perf or not (HAVE_MEMIO and HAVE_SUBTREE):
        log("s10prof: " + ("no perf here" if not perf else "no memory and io subtree files"))
        return
    for way, readers, period, pct in (("subtree", 1, 10, TARGET_SHARE),
                                      ("changes", 16, 100, TARGET_SHARE)):
        if not have_time(seconds + 180 + setup, f"s10prof {way}"):
            return
        setup = 0
        tree = AGENT_TREES[m] = AGENT_TREES.get(m) or AgentTree(m)
        # the subtree way's profile keeps the changer at 1 s (what it reads
        # is every cgroup whatever changed); the changes way's changes at
        # the publishers' rate
        tree.start(pct, 1000 if way == "subtree" else period)
        try:
            flusher_works()
            set_interval(period, AGENT_CTRLS)
            res = perf_profile(perf, "/tmp/perf-agent.data",
                               [CGBENCH, "telemetry", "--mode", way, "--controllers",
                                ",".join(AGENT_CTRLS), "--readers", str(readers),
                                "--period-ms", str(period), "--seconds", str(seconds),
                                "--list", tree.lst, "--subtree", CG.path(tree.parent)],
                               seconds + 240 + m // 20)
        finally:
            set_interval(0, AGENT_CTRLS)
            tree.stop()
        record("s10prof", {"way": way, "controllers": ",".join(AGENT_CTRLS), "cgroups": m,
                           "readers": readers, "changing_pct": pct, "seconds": seconds,
                           "period_ms": period}, res)
        log(f"s10prof {way}: {res['samples']} samples, {len(res['top'])} symbols over 0.7 %")


# --- scenario 16: the agent with pressure (issue 44) ------------------------
PSI_CTRLS = AGENT_CTRLS + ("pressure",)
# (label, cgbench --mode, --controllers): the whole agent (cpu, memory, io
# and pressure of every cgroup each cycle) and pressure alone, classic
# (cpu.pressure, memory.pressure, io.pressure, and irq.pressure where the
# kernel shows it, each cgroup's) against the streams (pressure.stream per
# cgroup, pressure.stream.subtree's full and change snapshots).  No BPF
# way: the kernel has no PSI kfuncs (cgbench refuses pressure for them).
PRESSURE_WAYS = (("classic", "classic", "cpu,memory,io,pressure"),
                 ("stream", "stream", "cpu,memory,io,pressure"),
                 ("subtree", "subtree", "cpu,memory,io,pressure"),
                 ("changes", "changes", "cpu,memory,io,pressure"),
                 ("pressure-classic", "classic", "pressure"),
                 ("pressure-stream", "stream", "pressure"),
                 ("pressure-subtree", "subtree", "pressure"),
                 ("pressure-changes", "changes", "pressure"),
                 # no reader, no flusher: the background the others run on
                 ("idle", "idle", "cpu,memory,io,pressure"))
# the issue's target point, at TARGET_SHARE (1 %)
PRESSURE_POINTS = [(1, 1000)]
# what each visit of the changer stalls (cgbench change --stall-us): more
# than a jiffy (1 ms in the bench kernel, HZ=1000), or PSI keeps none of
# it (cgbench.c, run_change); so the changing cgroups' pressure changes
# every cycle, totals and averages (scenario 10's visits, 5 µs and a 4
# KiB write, under a jiffy, would keep little or none of theirs)
STALL_US = 2000
HAVE_PSI = False             # the *.pressure files (set in main)
HAVE_PRESSURE = False        # pressure.stream* (set in main)


def pressure_ways():
    """the ways of PRESSURE_WAYS this kernel can run"""
    out = []
    for label, mode, ctrls in PRESSURE_WAYS:
        need = set(ctrls.split(",")) - {"pressure"}
        if mode in FLUSHER_WAYS and not (HAVE_PRESSURE and HAVE_SUBTREE
                                         and (HAVE_MEMIO or need <= {"cpu"})):
            continue
        out.append((label, mode, ctrls))
    return out


def probe_stall(tree, seconds=0.6):
    """the tree's first cgroup (the values check's probe, idle otherwise)
    stalls a few times, as a changing one does each cycle: a pressure total
    that is not 0 and then stays, for the check (the fill's waits for the
    device are under a jiffy: PSI keeps none of them)"""
    CG.create([f"{BASE}/changer"])
    lst = list_file(f"agent{tree.m}-probe", tree.paths[:1])
    p = CG.popen(f"{BASE}/changer", [CGBENCH, "change", "--list", lst, "--period-us", "100000",
                                     "--work-us", str(CHANGER_WORK_US), "--mem-kb", "0",
                                     "--stall-us", str(STALL_US)],
                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(seconds)
    _, err = stop_proc_output(p, 10)
    if p.returncode:
        log(f"the probe's stalls (cgbench change) ended with {p.returncode}: {err.strip()[-300:]}")


def s16_pressure(points, period_ms, seconds, rounds):
    """The agent with pressure (issue 44): on s10's agent tree, at the
    targets' change share (its visits stalling STALL_US, so pressure
    changes with the rest), R readers x M cgroups (points) each cycle read
    every cgroup's cpu, memory, io and pressure, or pressure alone, each
    way of PRESSURE_WAYS, rounds in alternating order; a values check with
    pressure first.  The tree stays for s10 (it runs next, on the same
    tree of 1,000)."""
    if not HAVE_PSI:
        log("s16: this kernel shows no *.pressure files (PSI is off): not measured")
        record("skipped", {"what": "s16: no *.pressure files (PSI off)", "need_s": 0,
                           "left_s": round(left())}, {})
        return
    ways = pressure_ways()
    if not HAVE_PRESSURE:
        log("s16: this kernel has no pressure stream: classic only")
    for r, m in points:
        what = f"s16 {r}x{m} at {TARGET_SHARE}%"
        need = rounds * len(ways) * (seconds + 15) + 60 + (0 if m in AGENT_TREES
                                                           else tree_setup_s(m))
        if not have_time(need, what):
            continue
        if m not in AGENT_TREES:
            drop_agent_trees(keep={m})
            AGENT_TREES[m] = AgentTree(m)
        tree = AGENT_TREES[m]
        if not tree.ready:
            tree.setup()
        probe_stall(tree)
        tree.start(TARGET_SHARE, period_ms, STALL_US)
        try:
            agent_check(tree, ways, PSI_CTRLS, "s16")
            for (label, mode, ctrls), rnd in [(w_, k) for k in range(rounds)
                                              for w_ in (ways if k % 2 == 0 else ways[::-1])]:
                agent_run(tree, r, label, mode, ctrls, period_ms, seconds, rnd, scenario="s16")
        finally:
            tree.stop()


def s11_memloop(count, rounds):
    """The memory experiment (issue 29, 2): count reads of one leaf's memory
    stats in a tight loop per way (memory.stat text + sscanf,
    memory.stat.stream text + sscanf, the leaf's memory.stat.stream.subtree,
    a one-cgroup pass of the BPF kfuncs); the leaf holds 4 MiB of anon"""
    modes = ["text"] + (["stream", "subtree"] if HAVE_MEMIO and HAVE_SUBTREE else []) \
        + (["bpf"] if HAVE_BPF else [])
    if not have_time(rounds * len(modes) * 30 + 20 + 120, "s11"):
        return
    CG.parent_ready(f"{BASE}/memloop")
    leaf = f"{BASE}/memloop/leaf"
    CG.create([leaf])
    holder = CG.popen(leaf, [CGBENCH, "churn", "--work-us", "0", "--period-us", "100000",
                             "--mem-kb", "0", "--hold-kb", "4096"])
    time.sleep(3)
    try:
        for mode, rnd in [(x, k) for k in range(rounds)
                          for x in (modes if k % 2 == 0 else modes[::-1])]:
            if not have_time(30, f"s11 {mode} round {rnd}"):
                continue
            argv = [CGBENCH, "memloop", "--mode", mode, "--count", str(count), CG.path(leaf)]
            with StreamsOpen(("memory",), 1000 if mode in ("stream", "subtree") else 0):
                r = subprocess.run(CG.cmd(READERS, argv), capture_output=True, text=True,
                                   timeout=600)
            out = [l for l in r.stdout.splitlines() if l.startswith("{")]
            res = json.loads(out[-1]) if out else None
            record("s11", {"mode": mode, "count": count, "round": rnd},
                   {"memloop": res, "rc": r.returncode, "stderr": r.stderr[-1000:]})
            if r.returncode or not res:
                log(f"s11 {mode} FAILED (rc {r.returncode}): {r.stderr.strip()[-1000:]}")
                continue
            log(f"s11 {mode} round {rnd}: {res['cpu_ns'] / count / 1e3:.1f} us CPU/read "
                f"(user {res['utime_us'] / count:.1f}, sys {res['stime_us'] / count:.1f}), "
                f"{res['values_per_read']:.0f} values/read, anon {res['anon']}")
        # where a read's time goes, text + parse against the subtree (the
        # 10x target): perf over the same loop, after the measured rounds
        perf = perf_setup()
        for mode in [x for x in ("text", "subtree") if x in modes] if perf else []:
            if not have_time(60, f"s11 profile {mode}"):
                continue
            with StreamsOpen(("memory",), 1000 if mode == "subtree" else 0):
                res = perf_profile(perf, f"/tmp/perf-memloop-{mode}.data",
                                   [CGBENCH, "memloop", "--mode", mode, "--count", str(count),
                                    CG.path(leaf)], 600)
            record("s11prof", {"mode": mode, "count": count}, res)
            log(f"s11 profile {mode}: {res['samples']} samples, {len(res['top'])} symbols "
                "over 0.7 %")
    finally:
        stop_procs([holder])

# --- removals and the unprivileged agent (issue 43) -------------------------

REMOVAL_WAYS = ("classic", "bpfmap", "subtree", "changes")
CHURN_WORK_US = 20000        # the CPU each short-lived cgroup uses
CHURN_IO_KB = 256            # and the bytes it writes (O_DIRECT, the loop device)
NOBODY = 65534


def s13_removals(seconds, period_ms=1000, every_ms=200):
    """What each way accounts of cgroups that live between two reads: one
    short-lived cgroup started every every_ms under one parent (cgbench
    churnrm: it uses CHURN_WORK_US of CPU, writes CHURN_IO_KB, exits, and
    the cgroup is removed; its final values, read just before the rmdir,
    are the truth), while an accountant of each way (cgbench account)
    charges the parent's children what it sees every period_ms: classic
    and below's BPF collector see the cgroups alive at their reads, the
    subtree and changes ways also every REMOVED record"""
    ways = [w for w in REMOVAL_WAYS
            if (w not in FLUSHER_WAYS or (HAVE_MEMIO and HAVE_SUBTREE))
            and (w not in BPF_WAYS or HAVE_BPF)]
    if not have_time(seconds + 150, "s13"):
        return
    parent = f"{BASE}/removals"
    CG.parent_ready(parent)
    enable_io(parent)
    CG.create([f"{BASE}/churner"])
    dev = loopdev()
    procs, res, churn = {}, {}, None
    params = {"seconds": seconds, "period_ms": period_ms, "every_ms": every_ms,
              "work_us": CHURN_WORK_US, "io_kb": CHURN_IO_KB if dev else 0}
    with StreamsOpen(AGENT_CTRLS, period_ms):
        try:
            for w in ways:
                procs[w] = CG.popen(READERS, [CGBENCH, "account", "--mode", w, "--subtree",
                                              CG.path(parent), "--period-ms", str(period_ms)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    bufsize=1)
            for w, p in procs.items():   # each past its baseline pass
                if not select.select([p.stdout], [], [], 60)[0] or \
                        p.stdout.readline().strip() != "ready":
                    log(f"s13: the {w} accountant did not start")
            churn = CG.run_json(f"{BASE}/churner",
                                [CGBENCH, "churnrm", "--subtree", CG.path(parent), "--seconds",
                                 str(seconds), "--period-us", str(every_ms * 1000), "--work-us",
                                 str(CHURN_WORK_US)]
                                + (["--io-dev", dev, "--io-kb", str(CHURN_IO_KB)] if dev else []),
                                timeout=seconds + 120)
            # the last removals published, and read by every way
            time.sleep(3 * period_ms / 1000)
        finally:
            for w, p in procs.items():
                out, err = stop_proc_output(p, 30)
                lines = [l for l in out.splitlines() if l.startswith("{")]
                res[w] = {"account": json.loads(lines[-1]) if lines else None,
                          "rc": p.returncode, "stderr": err[-1000:]}
    record("s13", params, {"churn": churn, "ways": res})
    if not churn:
        log("s13: cgbench churnrm failed: no truth to account against")
        return
    log(f"s13: {churn['cgroups']} cgroups of {churn['life_ms_avg']:.0f} ms (max "
        f"{churn['life_ms_max']:.0f}) in {churn['wall_s']:.0f} s, {churn['usage_usec']} us "
        f"CPU and {churn['wbytes']} bytes written in all")
    for w, r in res.items():
        a = r["account"]
        if not a:
            log(f"s13 {w}: no result (rc {r['rc']}): {r['stderr'].strip()}")
            continue
        cpu = a["usage_usec"] * 100 / churn["usage_usec"] if churn["usage_usec"] else None
        io = a["wbytes"] * 100 / churn["wbytes"] if churn["wbytes"] else None
        log(f"s13 {w}: accounts for {cpu:.1f} % of the CPU and "
            + (f"{io:.1f} %" if io is not None else "none") + " of the bytes; "
            f"{a['cgroups_seen_live']} cgroups seen alive, {a['removed_records']} REMOVED "
            f"records, {a['lost']} lost, {a['errors']} errors ({a['passes']} passes)")


def slab_kb():
    """the kernel's unreclaimable slab now (/proc/meminfo SUnreclaim, KiB):
    the median of three readings 0.3 s apart"""
    vals = []
    for i in range(3):
        if i:
            time.sleep(0.3)
        for l in read("/proc/meminfo").splitlines():
            if l.startswith("SUnreclaim:"):
                vals.append(int(l.split()[1]))
    return sorted(vals)[len(vals) // 2] if vals else None


def s15_kmem(m, removals_s):
    """What the streams cost in kernel memory (issue 40): the unreclaimable
    slab with every stream off, then with each controller's stream armed
    in turn (its published copies and change tracking, per css of m
    cgroups), then off again (nothing may stay); and the removal records:
    with all three streams armed at 100 ms (kept 5 s: 16 publications are
    1.6 s), cgbench churnrm removes as many cgroups as it can for
    removals_s seconds; the slab 3 s after it (the records held, the
    removed cgroups freed) against 8 s later (the records dropped) is
    what the records of that many removals take"""
    if not (HAVE_MEMIO and HAVE_SUBTREE):
        log("s15: no memory and io streams here")
        return
    tree = AGENT_TREES.get(m)
    if not have_time(90 + removals_s + (0 if tree and tree.ready else tree_setup_s(m)), f"s15 {m}"):
        return
    tree = AGENT_TREES[m] = tree or AgentTree(m)
    if not tree.ready:
        tree.setup()
    # every cgroup of the system has its css's (the tree's m and the run's others)
    n_all = sum(1 for _ in os.walk(ROOT))
    res = {"cgroups": m, "all_cgroups": n_all, "armed": {}}
    set_interval(0, AGENT_CTRLS)
    time.sleep(1)
    res["off_kb"] = prev = off = slab_kb()
    for c in AGENT_CTRLS:
        set_interval(1000, (c,))
        time.sleep(3)    # the arming's allocations, a publication or two
        res["armed"][c] = slab_kb()
        log(f"s15: {c} armed too: slab {res['armed'][c] - prev:+d} KiB "
            f"({(res['armed'][c] - prev) * 1024 / n_all:.0f} bytes per cgroup of {n_all})")
        prev = res["armed"][c]
    set_interval(0, AGENT_CTRLS)
    time.sleep(2)
    res["off_again_kb"] = slab_kb()
    # removal records
    parent = f"{BASE}/kmem-removals"
    CG.parent_ready(parent)
    enable_io(parent)
    CG.create([f"{BASE}/churner"])
    with StreamsOpen(AGENT_CTRLS, 100):
        res["before_kb"] = slab_kb()
        churn = CG.run_json(f"{BASE}/churner",
                            [CGBENCH, "churnrm", "--subtree", CG.path(parent), "--seconds",
                             str(removals_s), "--period-us", "1", "--work-us", "0"],
                            timeout=removals_s + 120)
        time.sleep(3)
        res["held_kb"] = slab_kb()
        time.sleep(8)
        res["dropped_kb"] = slab_kb()
    res["churn"] = churn
    record("s15", {"cgroups": m, "removals_s": removals_s, "interval_ms": 100}, res)
    if churn:
        n = churn["cgroups"]
        held = res["held_kb"] - res["dropped_kb"]
        log(f"s15: {n} removals in {churn['wall_s']:.1f} s ({n / churn['wall_s']:.0f} a second): "
            f"their records held {held:+d} KiB ({held * 1024 / max(1, n):.0f} bytes per removal, "
            f"cpu, memory and io together); off again: {res['off_again_kb'] - off:+d} KiB")


def delegate(rel, uid):
    """rel a delegated subtree of uid (cgroup-v2.rst, "Delegation"): the
    controllers on from the root down to its children, then its directory
    and its cgroup.procs, cgroup.threads and cgroup.subtree_control uid's"""
    CG.parent_ready(rel)
    enable_io(rel)
    d = CG.path(rel)
    for f in (d, f"{d}/cgroup.procs", f"{d}/cgroup.threads", f"{d}/cgroup.subtree_control"):
        os.chown(f, uid, uid)


UNPRIV_DIR = None            # nobody_dir()'s, once made


def nobody_dir():
    """cgbench and libcgstream copied, once a run, where any user may run
    them (the checkout may be under root's mode-0700 home)"""
    global UNPRIV_DIR
    if UNPRIV_DIR:
        return UNPRIV_DIR
    d = "/tmp/cgsbench-unpriv"
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    lib = os.path.join(TOP, "libcgstream", "build", "libcgstream.so.1")
    for src in (CGBENCH, lib):
        if os.path.exists(src):
            shutil.copy2(src, d)
            os.chmod(os.path.join(d, os.path.basename(src)), 0o755)
    UNPRIV_DIR = d
    return d


def as_uid(uid, args):
    """argv running cgbench args as uid (no supplementary groups), from a
    copy it can reach, its list files copied beside it; root's own cgbench
    where uid is None"""
    if uid is None:
        return [CGBENCH] + list(args)
    d = nobody_dir()
    args = list(args)
    for i, a in enumerate(args[:-1]):
        if a == "--list":
            args[i + 1] = shutil.copy2(args[i + 1], d)
            os.chmod(args[i + 1], 0o644)
    # the open-files limit an admin gives such an agent (systemd's
    # LimitNOFILE=): root's soft limit raise in cgbench goes past the hard
    # one, an unprivileged process's cannot (classic at 1,000 cgroups keeps
    # 5,000 files open)
    return [sys.executable, "-c",
            "import os, resource, sys; n = int(open('/proc/sys/fs/nr_open').read()); "
            "resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)); "
            "os.setgroups([]); os.setgid(%d); os.setuid(%d); "
            "os.environ['LD_LIBRARY_PATH'] = sys.argv[1]; "
            "os.execv(sys.argv[2], sys.argv[2:])" % (uid, uid),
            d, os.path.join(d, "cgbench")] + args


def mkdirs_as(uid, parent, names):
    """parent and its children made by uid (in its delegated subtree), the
    controllers on for the children as uid turns them on"""
    code = ("import os, sys; os.setgroups([]); os.setgid(%d); os.setuid(%d)\n"
            "root, p = sys.argv[1], sys.argv[2]\n"
            "os.makedirs(os.path.join(root, p), exist_ok=True)\n"
            "have = open(os.path.join(root, p, 'cgroup.controllers')).read().split()\n"
            "with open(os.path.join(root, p, 'cgroup.subtree_control'), 'w') as f:\n"
            "    f.write(' '.join('+' + c for c in ('cpu', 'memory', 'io') if c in have))\n"
            "for n in sys.stdin.read().split():\n"
            "    os.makedirs(os.path.join(root, n), exist_ok=True)\n" % (uid, uid))
    t0 = time.time()
    r = subprocess.run([sys.executable, "-c", code, ROOT, parent], input="\n".join(names),
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"uid {uid} could not make its cgroups under {parent}: "
                           f"{r.stderr.strip()[-500:]}")
    log(f"uid {uid} made {len(names)} cgroups in its delegated {parent} in "
        f"{time.time() - t0:.1f} s")


def s14_unprivileged(m, seconds):
    """The agent scenario (s10's cpu, memory and io of every cgroup, 1 %
    changing) run by uid 65534 over m cgroups of its own delegated subtree,
    each way that can run there: classic, the stream, subtree and changes
    files, the shared BPF collector's map where the admin opens its pin to
    the agent (and idle, the background); below's BPF collector cannot
    load its program there, and the error it gets is recorded
    (s14refused)"""
    ways = [w for w in agent_ways() if w[1] not in ("bpf", "bpfmap")]
    if not have_time(len(ways) * (seconds + 15) + 90 + m // 20, f"s14 {m}"):
        return
    drop_agent_trees()
    tree = AgentTree(m, uid=NOBODY)
    tree.start(TARGET_SHARE)
    try:
        if HAVE_BPF:
            argv = as_uid(NOBODY, ["telemetry", "--mode", "bpfmap", "--controllers",
                                   "cpu,memory", "--readers", "1", "--period-ms", "1000",
                                   "--seconds", "1", "--list", tree.lst, "--subtree",
                                   CG.path(tree.parent)])
            r = subprocess.run(CG.cmd(READERS, argv), capture_output=True, text=True,
                               timeout=120)
            record("s14refused", {"way": "bpfmap", "uid": NOBODY},
                   {"rc": r.returncode, "stderr": r.stderr[-2000:]})
            log(f"s14: below's BPF collector as uid {NOBODY}: exit {r.returncode}: "
                + (r.stderr.strip().splitlines() or ["(no message)"])[-1])
        for label, mode, ctrls in ways:
            agent_run(tree, 1, label, mode, ctrls, 1000, seconds, 0)
        if HAVE_SUBTREE:
            perm_cost(tree, 5 if not QUICK else 1, seconds)
    finally:
        remove_trees([tree])


def perm_cost(tree, rounds, seconds, period_ms=20):
    """What the subtree walk's permission checks cost (issue 38): the cpu
    subtree file of the same tree read by root (whose CAP_DAC_READ_SEARCH
    skips them) and by the tree's owner (one check per entered directory),
    alternately, the cpu flusher at period_ms, under the run's load (five
    rounds: the report takes each side's cheapest); each run recorded
    (s14perm)"""
    argv = ["telemetry", "--mode", "subtree", "--controllers", "cpu", "--readers", "1",
            "--period-ms", str(period_ms), "--seconds", str(seconds), "--list", tree.lst,
            "--subtree", CG.path(tree.parent)]
    set_interval(period_ms, ("cpu",))
    try:
        for rnd in range(rounds):
            for who in (("root", "owner") if rnd % 2 == 0 else ("owner", "root")):
                if not have_time(seconds + 30, f"s14perm {who} round {rnd}"):
                    continue
                res = CG.run_json(READERS, as_uid(None if who == "root" else tree.uid, argv),
                                  timeout=seconds + 120)
                record("s14perm", {"who": who, "uid": 0 if who == "root" else tree.uid,
                                   "round": rnd, "cgroups": tree.m, "period_ms": period_ms,
                                   "seconds": seconds}, res)
                if res:
                    pr = res["per_reader"][0]
                    log(f"s14perm {who} round {rnd}: {pr['cpu_ns'] / max(1, pr['cycles']) / 1e6:.2f}"
                        f" ms CPU per read of {tree.m + 1} cgroups ({pr['cycles']} reads)")
    finally:
        set_interval(0, ("cpu",))


def top_run(argv, starts_table, tables, timeout):
    """run a top in the readers' cgroup, its tables on a pipe; at the start
    of every table, the time and the process's CPU so far.  starts_table
    (line, previous line was blank) says where a table begins.  Returns
    the per-table times, CPU, rows, its total CPU from wait4 and exit"""
    errf = tempfile.TemporaryFile(mode="w+")    # (a pipe could fill while stdout is read)
    t0 = time.perf_counter()
    p = CG.popen(READERS, argv, stdout=subprocess.PIPE, stderr=errf, text=True)
    killer = threading.Timer(timeout, p.kill)
    killer.start()
    at, cpu, rows, mono = [], [], [], []
    prev_blank = True
    try:
        for line in p.stdout:
            if starts_table(line, prev_blank):
                at.append(time.perf_counter() - t0)
                mono.append(time.clock_gettime(time.CLOCK_MONOTONIC))
                try:
                    cpu.append(proc_cpu_ns(p.pid) / 1e9)
                except OSError:
                    cpu.append(None)
                rows.append(0)
            elif line.strip() and rows:
                rows[-1] += 1
            prev_blank = not line.strip()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    finally:
        killer.cancel()
    errf.seek(0)
    err = errf.read()[-1000:]
    errf.close()
    return {"wall_s": time.perf_counter() - t0, "table_at_s": at, "table_cpu_s": cpu,
            "table_mono_s": mono,
            "table_rows": rows, "cpu_s": ru.ru_utime + ru.ru_stime, "utime_s": ru.ru_utime,
            "stime_s": ru.ru_stime, "maxrss_kb": ru.ru_maxrss, "rc": p.returncode,
            "stderr": err, "tables_asked": tables}


def s12_top(m, tables):
    """systemd-cgtop (Debian's) against `cgstream top -b` with its memory
    and io columns (issue 29, 4): both refreshing every second over the
    same m agent cgroups (charged memory, I/O, 1 % of them changing) for
    the same number of tables; per refresh, each one's CPU (the process's
    clock at each table's start) and the pace it kept; cgstream's kernel
    flushers (all three, 1 s) are timed alongside and are its cost too"""
    cgtop = shutil.which("systemd-cgtop")
    if not have_time(2 * tables * 3 + 180 + m // 10, f"s12 {m}"):
        return
    tree = AGENT_TREES.get(m) or AgentTree(m)
    AGENT_TREES[m] = tree
    tree.start()
    try:
        rel = "/" + tree.parent
        if cgtop:
            # depth 1 below the group named: its m cgroups; raw numbers,
            # as a script would take them
            res = top_run([cgtop, "-b", "-r", "-d", "1s", "-n", str(tables), "--depth=1", rel],
                          lambda line, blank: blank and line.strip() != "", tables,
                          tables * 10 + 60)
            record("s12", {"program": "systemd-cgtop", "cgroups": m, "tables": tables,
                           "version": subprocess.run([cgtop, "--version"], capture_output=True,
                                                     text=True).stdout.split("\n")[0]}, res)
            top_log("systemd-cgtop", m, res)
        else:
            log("s12: no systemd-cgtop here (Debian's systemd package): cgstream top alone")
        if os.path.exists(CGSTREAM_CMD) and HAVE_MEMIO:
            # (its calibration streams each controller alone and then sets
            # the interval to 0: before the streams this run keeps on)
            flusher_works()
            with StreamsOpen(AGENT_CTRLS, 1000):
                flusher_trace(True)
                # -b prints the tables that can show CPU% (from the second
                # flush), -n of them
                res = top_run([CGSTREAM_CMD, "top", "-b", "-n", str(tables), "--controllers",
                               "cpu,memory,io", CG.path(tree.parent)],
                              lambda line, blank: line.startswith("cgstream top:"), tables,
                              tables * 10 + 60)
                # the runs between the second table and the last: the
                # refreshes the steady-state CPU is measured over
                mono = res["table_mono_s"]
                res["flusher_us_by_ctrl"] = flusher_trace_by_ctrl(
                    (mono[1], mono[-1]) if len(mono) >= 3 else None)
                res["flusher_clock"] = FLUSHER_CLOCK
            record("s12", {"program": "cgstream top", "cgroups": m, "tables": tables,
                           "interval_ms": 1000}, res)
            top_log("cgstream top", m, res)
    finally:
        tree.stop()


def top_log(name, m, res):
    at, cpu = res["table_at_s"], res["table_cpu_s"]
    if len(at) < 3 or None in cpu:
        log(f"s12 {name}: {len(at)} tables (exit {res['rc']}): {res['stderr'].strip()}")
        return
    n = len(at) - 2    # from the second table's start to the last's
    log(f"s12 {name} M={m}: {len(at)} tables in {res['wall_s']:.1f} s, "
        f"{(cpu[-1] - cpu[1]) / n * 1e3:.0f} ms CPU per refresh, one every "
        f"{(at[-1] - at[1]) / n:.2f} s, {max(res['table_rows'])} rows, exit {res['rc']}")


# --- environment ------------------------------------------------------------

def environment(cg_info):
    env = {"cpus": NCPU, "uname": os.uname()._asdict() if hasattr(os.uname(), "_asdict")
           else " ".join(os.uname()), "have_stream": HAVE_STREAM, "quick": QUICK,
           "cgroup_tooling": cg_info, "smoke": SMOKE}
    env["uname"] = " ".join(os.uname())
    try:
        env["possible_cpus"] = read("/sys/devices/system/cpu/possible").strip()
    except OSError:
        pass
    try:
        env["cpu_model"] = [l.split(":", 1)[1].strip() for l in read("/proc/cpuinfo").splitlines()
                            if l.startswith("model name")][0]
    except (OSError, IndexError):
        pass
    try:
        env["mem_total"] = [l for l in read("/proc/meminfo").splitlines()
                            if l.startswith("MemTotal")][0].split(":")[1].strip()
    except (OSError, IndexError):
        pass
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            cfg = f.read().splitlines()
        keys = ("CONFIG_HZ=", "CONFIG_NR_CPUS=", "CONFIG_PREEMPT", "CONFIG_PROVE_LOCKING",
                "CONFIG_LOCKDEP=", "CONFIG_DEBUG_LIST", "CONFIG_DEBUG_ATOMIC_SLEEP",
                "CONFIG_SCHEDSTATS", "CONFIG_VIRT_CPU_ACCOUNTING", "CONFIG_IRQ_TIME_ACCOUNTING",
                "CONFIG_KASAN", "CONFIG_MEMCG=", "CONFIG_CGROUP_SCHED=", "CONFIG_FAIR_GROUP_SCHED",
                "CONFIG_CFS_BANDWIDTH", "CONFIG_SCHED_CORE")
        env["kernel_config"] = [l for l in cfg if l.startswith(keys)
                                or any(("# " + k.rstrip("=")) in l for k in keys)]
    except OSError as e:
        env["kernel_config"] = [f"/proc/config.gz: {e}"]
    try:
        env["cmdline"] = read("/proc/cmdline").strip()
    except OSError:
        pass
    write(os.path.join(OUT, f"env-{NCPU}.json"), json.dumps(env, indent=1))
    return env


def main():
    global QUICK, OUT, CG, HAVE_STREAM, HAVE_SUBTREE, HAVE_BPF, HAVE_MEMIO, HAVE_PSI, HAVE_PRESSURE
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--scenarios", default="s1,s2,s4,s5,s6")
    ap.add_argument("--quick", action="store_true", default=os.environ.get("BENCH_QUICK") == "1")
    ap.add_argument("--s1-seconds", type=float, default=40.0,
                    help="scenario 1 time budget, both ways together (half per side)")
    ap.add_argument("--budget", type=float, default=3600,
                    help="seconds after driver start when no new measurement starts")
    ap.add_argument("--deadline", type=float, default=0,
                    help="the same as an absolute time (epoch s, host clock); the earlier wins")
    ap.add_argument("--daemons", default="", help="scenario 8: only these programs "
                    "(comma-separated names of DAEMONS)")
    ap.add_argument("--points", default="", help="scenario 2: only these RxM points "
                    "(e.g. 4x10,16x100), to complete a run the time limit cut short")
    ap.add_argument("--agent-points", default="", help="scenario 10: only these RxM "
                    "points (e.g. 1x1000,4x100)")
    ap.add_argument("--s10-changing", default="", help="scenario 10: the change shares, "
                    "percent of the tree's cgroups changing every cycle (comma-separated, "
                    "e.g. 0,1,10,100; default " + ",".join(map(str, AGENT_SHARES)) + ")")
    ap.add_argument("--pressure-points", default="", help="scenario 16: only these RxM "
                    "points (default " + ",".join(f"{r}x{m}" for r, m in PRESSURE_POINTS) + ")")
    ap.add_argument("--s7-changed", default="", help="scenario 7: only these numbers of "
                    "changed cgroups (comma-separated)")
    a = ap.parse_args()
    global ONLY_DAEMONS
    ONLY_DAEMONS = tuple(x for x in a.daemons.split(",") if x)
    global END
    QUICK, OUT = a.quick, a.out
    END = time.time() + a.budget
    if a.deadline:
        END = min(END, a.deadline)
    os.makedirs(OUT, exist_ok=True)
    sc = set(a.scenarios.split(","))
    try:
        points = [tuple(int(v) for v in x.split("x")) for x in a.points.split(",") if x]
        agent_points = [tuple(int(v) for v in x.split("x")) for x in a.agent_points.split(",") if x]
        pressure_points = [tuple(int(v) for v in x.split("x"))
                           for x in a.pressure_points.split(",") if x]
        s7_changed = [int(x) for x in a.s7_changed.split(",") if x]
        shares = [int(x) for x in a.s10_changing.split(",") if x]
    except ValueError:
        sys.exit(f"driver.py: --points wants RxM,... and --s7-changed N,...: "
                 f"{a.points!r}, {a.s7_changed!r}")
    if any(not 0 <= s <= 100 for s in shares):
        sys.exit(f"driver.py: --s10-changing wants percents 0..100: {a.s10_changing!r}")
    if any(len(x) != 2 or min(x) < 1 for x in points + agent_points + pressure_points):
        sys.exit(f"driver.py: --points, --agent-points and --pressure-points want RxM with R, "
                 f"M >= 1: {a.points!r}, {a.agent_points!r}, {a.pressure_points!r}")
    if os.geteuid() != 0:
        sys.exit("driver.py: run as root inside the VM")
    if not os.path.exists(os.path.join(ROOT, "cgroup.subtree_control")):
        sys.exit(f"driver.py: no cgroup2 mount at {ROOT}")
    if not os.path.exists(CGBENCH):
        sys.exit(f"driver.py: {CGBENCH} missing: make -C bench")
    HAVE_STREAM = SMOKE or os.path.exists(os.path.join(ROOT, "cpu.stat.stream_interval"))
    HAVE_SUBTREE = os.path.exists(os.path.join(ROOT, "cpu.stat.stream.subtree"))
    # the BPF reader needs BTF (CO-RE, the kfunc, the iterator target)
    HAVE_BPF = os.path.exists("/sys/kernel/btf/vmlinux")
    HAVE_MEMIO = not SMOKE and all(os.path.exists(os.path.join(ROOT, f"{c}.stat.stream_interval"))
                                   for c in ("memory", "io"))
    HAVE_PSI = os.path.exists(os.path.join(ROOT, "cpu.pressure"))
    HAVE_PRESSURE = not SMOKE and os.path.exists(
        os.path.join(ROOT, stream_file("pressure", ".stream_interval")))
    if not HAVE_BPF:
        log("this kernel has no BTF (/sys/kernel/btf/vmlinux): the BPF ways are not measured")
    if not HAVE_STREAM:
        log("this kernel has no cpu.stat.stream: only the classic side is measured")
    log(f"driver start, scenarios {sorted(sc)}, quick={QUICK}")

    CG = Cgroups()
    CG.remove_tree(BASE)
    CG.parent_ready(BASE)
    cg_info = CG.probe()
    CG.create([READERS])
    environment(cg_info)
    set_interval(0)

    load = Load(4 if QUICK else 24)
    t0 = time.time()
    try:
        record("load", {}, load.start())
        # most wanted first: the budget cuts from the end; but the telemetry
        # matrix leaves time for the flusher and daemon scenarios
        global RESERVE
        RESERVE = (120 if "s7" in sc else 0) + (100 if "s9" in sc else 0) + (600 if "s8" in sc else 0)
        if QUICK:
            RESERVE = 0
        if sc & {"s10", "s10prof", "s11", "s13", "s14", "s15", "s16"}:
            os.makedirs(SHM, exist_ok=True)
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=768m", "cgsbench", SHM],
                               capture_output=True, text=True)
            if r.returncode:
                log(f"tmpfs at {SHM}: {r.stderr.strip()} (the files go to what is there)")
        # the agent's numbers first (issue 29); its share leaves the rest
        # of the run time for the cpu-only scenarios
        if "s11" in sc:
            s11_memloop(2000 if QUICK else 20000, 1 if QUICK else 2)
        # pressure (issue 44) before s10, on the tree of 1,000 that s10's
        # first points use next: its runs (9 ways, about 4 minutes) come
        # out of what the boot leaves for s2 at its end, not of s10's share
        if "s16" in sc:
            s16_pressure(pressure_points or ([(1, 100)] if QUICK else PRESSURE_POINTS),
                         1000, 3.5 if QUICK else 5, 1)
        if "s10" in sc:
            # quick: 1 x 100 at the targets' share (every way) and at 10 %
            # (SHARE_WAYS); the full grid's share of the boot is 25 minutes
            # (20 before the change shares): the targets' three points,
            # 1 x 1,000 at 0, 10 and 100 % and 1 x 10,000 at 0 and 10 % fit,
            # and most of the rest (agent_grid)
            if QUICK:
                s10_agent(agent_grid(agent_points or [(1, 100)], shares or [TARGET_SHARE, 10]),
                          1000, 3.5, 1, 600)
            elif NCPU > 2:
                s10_agent(agent_grid(agent_points or AGENT_POINTS_BIG,
                                     shares or [TARGET_SHARE]), 1000, 5, 1, 900)
            else:
                s10_agent(agent_grid(agent_points or AGENT_POINTS, shares or AGENT_SHARES),
                          1000, 5, 1, 1500)
        # each measurement over a hierarchy of its own cgroups: the agent
        # trees it does not use are removed before it (drop_agent_trees);
        # s15 first, on s10's tree of 10,000 where s10 ended with it
        if "s15" in sc:
            drop_agent_trees(keep={100 if QUICK else 10000})
            s15_kmem(100 if QUICK else 10000, 3 if QUICK else 8)
        if "s13" in sc:
            drop_agent_trees()
            s13_removals(6 if QUICK else 20)
        if "s14" in sc:
            s14_unprivileged(100 if QUICK else 1000, 3.5 if QUICK else 5)
        if "s10prof" in sc:
            drop_agent_trees(keep={100 if QUICK else 1000})
            s10_profile(100 if QUICK else 1000, 3 if QUICK else 6)
        if "s12" in sc:
            drop_agent_trees(keep={100 if QUICK else 1000})
            s12_top(100 if QUICK else 1000, 4 if QUICK else 12)
        drop_agent_trees()
        RESERVE = 0
        if "s7" in sc:
            s7_flusher([100] if QUICK else s7_changed or [100, 1000, 10000],
                       2 if QUICK else 10)
        if "s9" in sc:
            s9_profile(100 if QUICK else 1000, 3 if QUICK else 6)
        if "s8" in sc:
            for m in [100] if QUICK else [1000, 10000]:
                drop_agent_trees(keep={m})
                s8_daemons(m, 1000, 3 if QUICK else 8)
            drop_agent_trees()
        if "s1" in sc:
            s1_reader_cost(a.s1_seconds if not QUICK else 2.0, 1 if QUICK else 2)
        if "s4" in sc:
            s4_parallel([1, 2, 4, 8] if not QUICK else [1, 4], 100 if not QUICK else 20,
                        4 if not QUICK else 1)
        if "s5" in sc:
            s5_latency(100, 10 if not QUICK else 2, 10)
        # the cpu-only telemetry matrix (issue 29's, before the agent
        # scenario took its place) with what is left, s6's rounds kept
        if "s2" in sc:
            RESERVE = 130 if "s6" in sc and not QUICK else 0
            if QUICK:
                s2_telemetry([(1, 10), (2, 100)], 1000, 1.5, 1)
            else:
                s2_telemetry(points or TELE_POINTS.get(NCPU, TELE_POINTS[32]), 1000, 5, 2)
            RESERVE = 0
            drop_tele_trees()
        if "s6" in sc:
            load.stop()
            if QUICK:
                s6_updater(2, 20, 500, 1.5, 1)
            else:
                s6_updater(4, 100, 500, 4, 2)
    finally:
        load.stop()
        set_interval(0, (AGENT_CTRLS if HAVE_MEMIO else ("cpu",))
                     + (("pressure",) if HAVE_PRESSURE else ()))
        log(f"driver done in {time.time() - t0:.0f} s")
        # the VM is thrown away: removing 1000 cgroups is only worth it
        # when there is time to spare before the boot's deadline
        if left() > 90:
            CG.remove_tree(BASE)


if __name__ == "__main__":
    main()
