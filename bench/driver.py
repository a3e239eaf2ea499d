#!/usr/bin/env python3
"""Runs INSIDE the VM (as root): sets up cgroups and load, runs the cgbench
scenarios both ways (classic cpu.stat vs cpu.stat.stream) and appends raw
results to OUT/results.jsonl (one JSON object per measurement).

usage: driver.py --out DIR --scenarios s1,s2,... [--quick]

Only the Python standard library (the guest runs the host's /usr/bin/python3).
Timing is never judged here: there are no thresholds, only numbers.
"""
import argparse
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
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
            import glob
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


def set_interval(ms):
    if HAVE_STREAM and not SMOKE:
        write(os.path.join(ROOT, "cpu.stat.stream_interval"), f"{ms}\n")


# --- load -----------------------------------------------------------------

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
        for p in self.procs:
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []


def tele_cgroups(n):
    CG.parent_ready(f"{BASE}/tele")
    names = [f"{BASE}/tele/t{i:04d}" for i in range(n)]
    CG.create(names, bulk=True)
    return [CG.path(x) for x in names]


def list_file(name, paths):
    p = os.path.join(OUT, f"list-{NCPU}-{name}.txt")
    write(p, "\n".join(paths) + "\n")
    return p


READERS = f"{BASE}/readers"


def reader_run(sub, mode, extra, label, interval_ms=100, timeout=300):
    """one cgbench reader run in the readers' cgroup, with the flusher off
    for classic (today's kernel behaviour) and on for stream"""
    if mode != "classic" and not HAVE_STREAM:
        return None
    set_interval(interval_ms if mode != "classic" else 0)
    res = CG.run_json(READERS, [CGBENCH, sub, "--mode", mode] + extra, timeout=timeout)
    set_interval(0)
    return res


# --- scenarios --------------------------------------------------------------

S1_TARGETS = (
    # the case: a busy leaf, its siblings churning elsewhere
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


def s2_telemetry(points, period_ms, seconds):
    """points: (readers, cgroups) in priority order; runs until the budget ends"""
    tele = []
    for r, m in points:
        if not have_time(3 * seconds + 40 + (m // 15 if m > len(tele) else 0), f"s2 {r}x{m}"):
            continue
        if m > len(tele):
            t0 = time.time()
            tele = tele_cgroups(m)
            log(f"s2: {m} cgroups ready in {time.time() - t0:.0f} s")
        lst = list_file(f"tele{m}", tele[:m])
        # stream: epoll on every cgroup's fd (what libcgstream's group
        # does); stream1: epoll on one, read all (one flush wakes them all)
        for mode in ("classic", "stream", "stream1"):
            res = reader_run("telemetry", mode,
                             ["--readers", str(r), "--period-ms", str(period_ms),
                              "--seconds", str(seconds), "--list", lst],
                             "s2", interval_ms=period_ms)
            if res:
                record("s2", {"mode": mode, "readers": r, "cgroups": m,
                              "period_ms": period_ms, "seconds": seconds}, res)
                cyc = sum(p["cycles"] for p in res["per_reader"]) / r
                cpu = sum(p["cpu_ns"] for p in res["per_reader"]) / 1e6
                log(f"s2 R={r} M={m} {mode}: {cyc:.1f} cycles/reader, "
                    f"readers {cpu:.1f} ms CPU, kworkers {res['kworker_ns'] / 1e6:.1f} ms")


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
    global QUICK, OUT, CG, HAVE_STREAM
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
    a = ap.parse_args()
    global END
    QUICK, OUT = a.quick, a.out
    END = time.time() + a.budget
    if a.deadline:
        END = min(END, a.deadline)
    os.makedirs(OUT, exist_ok=True)
    sc = set(a.scenarios.split(","))
    if os.geteuid() != 0:
        sys.exit("driver.py: run as root inside the VM")
    if not os.path.exists(os.path.join(ROOT, "cgroup.subtree_control")):
        sys.exit(f"driver.py: no cgroup2 mount at {ROOT}")
    if not os.path.exists(CGBENCH):
        sys.exit(f"driver.py: {CGBENCH} missing: make -C bench")
    HAVE_STREAM = SMOKE or os.path.exists(os.path.join(ROOT, "cpu.stat.stream_interval"))
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
        if sc & {"s1", "s2", "s4", "s5"}:
            record("load", {}, load.start())
        # most wanted first: the budget cuts from the end
        if "s1" in sc:
            s1_reader_cost(a.s1_seconds if not QUICK else 2.0, 1 if QUICK else 2)
        if "s4" in sc:
            s4_parallel([1, 2, 4, 8] if not QUICK else [1, 4], 100 if not QUICK else 20,
                        4 if not QUICK else 1)
        if "s5" in sc:
            s5_latency(100, 10 if not QUICK else 2, 10, ("libcgstream-group", "poll"))
        if "s6" in sc:
            load.stop()
            if QUICK:
                s6_updater(2, 20, 500, 1.5, 1)
            else:
                s6_updater(4, 100, 500, 4, 2)
            load.start()
        global RESERVE
        if "s5" in sc:
            RESERVE = 60 if QUICK else 200     # pycgstream's start-up is slow in the VM
        if "s2" in sc:
            if QUICK:
                s2_telemetry([(1, 10), (4, 100)], 500, 1)
            else:
                s2_telemetry([(1, 100), (4, 100), (16, 100), (1, 1000), (4, 1000),
                              (1, 10), (4, 10), (16, 10), (2, 100), (8, 100),
                              (2, 1000), (8, 1000), (2, 10), (8, 10), (16, 1000)], 500, 6)
        RESERVE = 0
        if "s5" in sc:
            s5_latency(100, 10 if not QUICK else 2, 10, ("pycgstream",))
    finally:
        load.stop()
        set_interval(0)
        log(f"driver done in {time.time() - t0:.0f} s")
        # the VM is thrown away: removing 1000 cgroups is only worth it
        # when there is time to spare before the boot's deadline
        if left() > 90:
            CG.remove_tree(BASE)


if __name__ == "__main__":
    main()
