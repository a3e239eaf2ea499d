#!/usr/bin/env python3
"""Render docs/benchmarks.md and docs/bench/*.png from a `make bench` run.

usage: report.py RESULTS_DIR DOCS_DIR

RESULTS_DIR is what bench/run.sh wrote (run.json, boots.jsonl, vm-N/ with
env-N.json and results.jsonl).  Markdown tables and matplotlib plots only:
no thresholds, nothing passes or fails here.
"""
import glob
import json
import math
import os
import re
import statistics
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# scenario 10's grid and ways: the driver's, one list (it imports only the standard library)
from driver import (AGENT_CTRLS, AGENT_POINTS, AGENT_SHARES, AGENT_WAYS,  # noqa: E402
                    PRESSURE_POINTS, PRESSURE_WAYS, PSI_CTRLS, SHARE_WAYS, STALL_US,
                    TARGET_SHARE, agent_grid)

MODES = ("classic", "stream")
COLORS = {"classic": "tab:red", "stream": "tab:blue", "stream1": "tab:green",
          "subtree": "tab:green", "bpf": "tab:purple", "bpfmap": "tab:orange"}
S2_MODES = ("classic", "stream", "subtree", "bpf", "bpfmap")
S2_LABEL = {"classic": "1 classic cpu.stat", "stream": "2 cpu.stat.stream",
            "stream1": "stream, one fd polled", "subtree": "3 cpu.stat.stream.subtree",
            "bpf": "4 BPF iterator, seq", "bpfmap": "4m BPF iterator, map"}


def load(results):
    recs, envs = [], {}
    for d in sorted(glob.glob(os.path.join(results, "vm-*"))):
        f = os.path.join(d, "results.jsonl")
        if os.path.exists(f):
            with open(f) as fh:
                recs += [json.loads(l) for l in fh if l.strip()]
        for e in glob.glob(os.path.join(d, "env-*.json")):
            with open(e) as fh:
                env = json.load(fh)
            envs[env["cpus"]] = env
    run = {}
    if os.path.exists(os.path.join(results, "run.json")):
        with open(os.path.join(results, "run.json")) as fh:
            run = json.load(fh)
    boots = []
    if os.path.exists(os.path.join(results, "boots.jsonl")):
        with open(os.path.join(results, "boots.jsonl")) as fh:
            boots = [json.loads(l) for l in fh if l.strip()]
    hostload = []
    if os.path.exists(os.path.join(results, "hostload.txt")):
        with open(os.path.join(results, "hostload.txt")) as fh:
            for l in fh:
                f = l.split()
                if len(f) >= 2:
                    hostload.append((int(f[0]), float(f[1])))
    for b in boots:
        ls = [v for t, v in hostload if b.get("start", 0) <= t <= b.get("end", 0)]
        if ls:
            b["load_mean"] = sum(ls) / len(ls)
            b["load_max"] = max(ls)
    return run, boots, envs, recs


def sel(recs, scenario, **kw):
    out = []
    for r in recs:
        if r["scenario"] != scenario:
            continue
        if all(r["params"].get(k) == v or (k == "cpus" and r["cpus"] == v) for k, v in kw.items()):
            out.append(r)
    return out


def fmt(x, digits=3):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, int):
        return f"{x:,}"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


def table(head, rows, left=False):
    s = "| " + " | ".join(head) + " |\n"
    s += "|" + "|".join("---" if i == 0 or left else "---:" for i in range(len(head))) + "|\n"
    for r in rows:
        s += "| " + " | ".join(r) + " |\n"
    return s


def one_line(s):
    return "; ".join(l.strip() for l in str(s).splitlines() if l.strip())


def pct(vals, p):
    if not vals:
        return None
    v = sorted(vals)
    k = max(0, min(len(v) - 1, math.ceil(p / 100 * len(v)) - 1))
    return v[k]


# --- scenario 1 / 3: reader cost -----------------------------------------

S1_TARGETS = {"busy": "busy child", "parent": "parent of the churners"}


def reader_cost(recs, cpus, target="busy"):
    """per mode: ns CPU/sample (total, user, sys), samples, seconds, kworker"""
    res = {}
    for mode in MODES:
        rs = [r for r in sel(recs, "s1", cpus=cpus, mode=mode)
              if r["params"].get("target", "busy") == target]
        if not rs:
            continue
        samples = sum(p["samples"] for r in rs for p in r["result"]["per_reader"])
        cpu = sum(p["cpu_ns"] for r in rs for p in r["result"]["per_reader"])
        ut = sum(p["utime_us"] for r in rs for p in r["result"]["per_reader"]) * 1000
        st = sum(p["stime_us"] for r in rs for p in r["result"]["per_reader"]) * 1000
        wall = sum(r["result"]["wall_ns"] for r in rs)
        kw = sum(r["result"]["kworker_ns"] for r in rs)
        flushes = sum(r["result"].get("flush_seq_delta", 0) for r in rs)
        if not samples:
            continue
        res[mode] = {"samples": samples, "ns": cpu / samples, "user": ut / samples,
                     "sys": st / samples, "wall_s": wall / 1e9, "rounds": len(rs),
                     "kw_ms_per_s": kw / 1e6 / (wall / 1e9), "flushes": flushes,
                     "errors": sum(p["errors"] for r in rs for p in r["result"]["per_reader"])}
    return res


# --- rendering ----------------------------------------------------------------

class Md(list):
    """a section's markdown: pieces joined by newlines"""

    def __call__(self, piece):
        self.append(piece)

    def text(self):
        return "\n".join(self)


class Run:
    """one run as the sections see it"""

    def __init__(self, results, docs):
        self.results = results
        self.run, self.boots, self.envs, self.recs = load(results)
        self.pngdir = os.path.join(docs, "bench")
        self.sizes = sorted({r["cpus"] for r in self.recs})
        self.s2_sizes = sorted({x["cpus"] for x in sel(self.recs, "s2")})
        self.quick = any(r.get("quick") for r in self.recs)
        self.e0 = self.envs.get(self.sizes[0], {}) if self.sizes else {}


def main():
    results, docs = sys.argv[1], sys.argv[2]
    R = Run(results, docs)
    os.makedirs(R.pngdir, exist_ok=True)
    sections = [intro(R), headline(R), setup(R), METHOD, s10_agent(R), s16_pressure(R),
                s13_removals(R),
                s14_unprivileged(R), s11_memloop(R),
                s12_top(R), s1_reader_cost(R), s2_telemetry(R),
                s9_profile(R), s3_machine_size(R), s4_parallel(R), s5_latency(R),
                s6_updater(R), s7_flusher(R), s8_daemons(R), kernel_memory(R),
                not_measured(R), limits(R)]
    with open(os.path.join(docs, "benchmarks.md"), "w") as f:
        f.write("\n".join(s for s in sections if s))
    print(f"report: {os.path.join(docs, 'benchmarks.md')}, plots in {R.pngdir}")


def intro(R):
    """the title, and what every section compares"""
    quick, envs = R.quick, R.envs
    w = Md()
    w("# cgstream benchmarks\n")
    w("<!-- generated by bench/report.py from a `make bench` run; edit the generator, "
      "not this file -->\n")
    if quick:
        w("> **Smoke run (BENCH_QUICK=1)**: tiny counts, numbers are meaningless.\n")
    if any(e.get("smoke") for e in envs.values()):
        w("> **Host smoke test with a fake stream file**: not a measurement.\n")
    w("The agent scenario, the agent with pressure, the removals, the unprivileged agent, the "
      "memory experiment and the tops (scenarios 10, 16, 13, 14, 11 and 12) come first: what "
      "an agent reads every cycle (cpu, memory and io of every cgroup, and their pressure), "
      "what each way bills to cgroups that "
      "lived between two reads, the agent as an unprivileged user in its delegated subtree, "
      "and one cgroup's memory stats, each way cgstream offers against the classic text "
      "files and BPF, and `cgstream top` against systemd-cgtop. The cpu-only "
      "scenarios follow; each compares, in the same VM "
      "boot, under the same load and with "
      "the same reader code, the classic way (`pread()` of `cpu.stat`: each read runs "
      "`css_rstat_flush()` in the kernel) with `cpu.stat.stream` (the kernel flusher "
      "flushes once per interval; a read copies the flushed values and never flushes). "
      "The VM runs under TCG (software emulation) on a small shared host, so absolute "
      "times are slow and only the **ratios** within one run mean anything.\n")
    return w.text()


def headline(R):
    """the targets, met or missed, then the other headline numbers"""
    sizes, recs, s2_sizes = R.sizes, R.recs, R.s2_sizes
    w = Md()
    w("## Headline\n")
    head = []
    for target, label in S1_TARGETS.items():
        for n in sizes:
            rc = reader_cost(recs, n, target)
            if "classic" in rc and "stream" in rc:
                head.append(f"- reader CPU per sample, {label}, {n} vCPUs: classic "
                            f"{fmt(rc['classic']['ns'])} ns, stream {fmt(rc['stream']['ns'])} ns: "
                            f"classic/stream **{fmt(rc['classic']['ns'] / rc['stream']['ns'])}x**")
    targets = s2_targets(recs, s2_sizes)
    s4h = sel(recs, "s4")
    if s4h:
        rmax = max(x["params"]["readers"] for x in s4h)
        t = {}
        for x in s4h:
            if x["params"]["readers"] == rmax:
                pr = x["result"]["per_reader"]
                t[x["params"]["mode"]] = sum(q["samples"] / (q["wall_ns"] / 1e9) for q in pr) / len(pr)
        if "classic" in t and "stream" in t:
            head.append(f"- {rmax} parallel readers ({s4h[0]['cpus']} vCPUs): "
                        f"samples/s per reader stream/classic **{fmt(t['stream'] / t['classic'])}x**")
    for x in sel(recs, "s5"):
        lat = [v for v in x["result"].get("lat_us", []) if v >= 0]
        if lat:
            head.append(f"- wake latency, {x['params']['reader']}: p50 {fmt(pct(lat, 50))} µs, "
                        f"p99 {fmt(pct(lat, 99))} µs ({len(lat)} wakes)")
    s6h = {}
    for x in sel(recs, "s6"):
        s6h.setdefault(x["params"]["phase"], []).append(x["result"]["work"]["iters_per_s"])
    if "none" in s6h:
        base = sum(s6h["none"]) / len(s6h["none"])
        parts = [f"{ph} readers {sum(v) / len(v) / base * 100:.0f} %" for ph, v in s6h.items()
                 if ph != "none"]
        if parts:
            head.append("- CPU-bound workload throughput vs no readers: " + ", ".join(parts))
    w("The agent's targets (issue 29; what the numbers should show, not pass/fail tests). "
      + ATTRIBUTABLE)
    w("\n".join(agent_targets(recs) + [top_target(recs)]) + "\n")
    w("The pressure targets (issue 44; scenario 16):\n")
    w("\n".join(pressure_targets(recs)) + "\n")
    if targets:
        w("The cpu-only targets (issue 14):\n")
        w("\n".join(targets) + "\n")
        w("Also measured:\n")
    w("\n".join(head) + "\n" if head else "No complete classic/stream pair was measured.\n")
    return w.text()


def setup(R):
    """the host, the guests, the boots"""
    run, boots, envs, sizes, e0 = R.run, R.boots, R.envs, R.sizes, R.e0
    w = Md()
    w("## Setup\n")
    rows = []
    rows.append(["date (UTC)", run.get("started", "–")])
    rows.append(["command", f"`{run.get('command', 'make bench')}` (bench/run.sh)"])
    rows.append(["git", run.get("git", "–")])
    rows.append(["host", f"{run.get('host_cpu', '?')}, {run.get('host_cpus', '?')} CPUs, "
                 f"{fmt(run.get('host_mem_kb', 0) / 1048576 if run.get('host_mem_kb') else None)}"
                 f" GiB, Linux {run.get('host_kernel', '?')}"])
    rows.append(["VM", "virtme-ng (scripts/vm/vm-run.sh), "
                 + ("TCG, no KVM" if run.get("kvm", "no") == "no" else f"KVM={run.get('kvm')}")
                 + ", 2 GiB; host root shared read-only, host-built binaries"])
    for n in sizes:
        e = envs.get(n, {})
        rows.append([f"guest, {n} vCPUs", f"{e.get('uname', '?')}; possible CPUs "
                     f"{e.get('possible_cpus', '?')}; cpu.stat.stream: "
                     f"{'yes' if e.get('have_stream') else '**no**'}"])
    e0 = envs.get(sizes[0], {}) if sizes else {}
    cfg = [c for c in e0.get("kernel_config", [])
           if not c.startswith("#") or any(k in c for k in ("PROVE_LOCKING", "SCHEDSTATS", "KASAN"))]
    if cfg:
        rows.append(["kernel config", "<br>".join(f"`{c}`" for c in cfg)])
    tool = e0.get("cgroup_tooling", {})
    if tool:
        if tool.get("used") == "libcgroup":
            t = (f"libcgroup `cgcreate`/`cgexec` (cgroup-tools {tool.get('version', '?')}): "
                 "the probe created a cgroup and `cgexec` placed a process in it "
                 f"(`{one_line(tool.get('cgexec_out', ''))}`)")
        else:
            t = (f"direct cgroupfs (mkdir, write to cgroup.procs): the libcgroup probe failed "
                 f"(cgroup-tools {tool.get('version', '?')}: cgcreate rc "
                 f"{tool.get('cgcreate_rc')}, created={tool.get('created')}, cgexec printed "
                 f"`{one_line(tool.get('cgexec_out', ''))[:200]}` {one_line(tool.get('cgexec_err', ''))[:200]})")
        if tool.get("used") == "libcgroup":
            t += ("; the idle cgroups the telemetry readers sample (up to 1000) are made "
                  "with plain mkdir: cgcreate starts one process per cgroup (25 took 0.6-2.9 s "
                  "in these TCG guests, so 1000 would take 0.5-2 minutes; mkdir made 900 in "
                  "2-13 s; the driver log's \"created N cgroups\" lines time both)")
        rows.append(["cgroups created with", t])
    first = [b for b in boots if b.get("start") and b.get("end") and not b.get("added")]
    added = [b for b in boots if b.get("added")]
    if first:
        span = max(b["end"] for b in first) - min(b["start"] for b in first)
        rows.append(["whole run", f"{span / 60:.0f} minutes of VM boots (after the builds: "
                     "the bench kernel, about 13 minutes cold on 2 cores with DEBUG_INFO_BTF, "
                     "and the programs)"
                     + (f"; the boots added later {sum(b['seconds'] for b in added) / 60:.0f} "
                        "more" if added else "")])
    for b in boots:
        hl = (f", host load average {b['load_mean']:.1f} (max {b['load_max']:.1f}) on "
                f"{run.get('host_cpus', '?')} host CPUs" if "load_mean" in b else "")
        late = (f" (added to the run later, driver at git {b['git']})"
                if b.get("added") else "")
        rows.append([f"boot {b['cpus']} vCPUs{late}", f"{b['seconds']} s wall{hl}, exit {b['rc']}: "
                     f"`{b['command'].replace(os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + '/', '')}`"])
    w(table(["what", "value"], rows, left=True))
    if any(b.get("parallel") for b in boots):
        w("\n**The boots ran at the same time** (BENCH_PARALLEL=1): the host was overloaded "
          "by other work, and one TCG boot alone took most of the time limit. Each ratio "
          "still compares the two ways within one boot (alternating rounds), but the boots "
          "took CPU from each other, which adds noise to every absolute number.\n")
    w("\nWhat runs in each boot: its `--scenarios` above, in the driver's order (2, 7, 9, 8, "
      "1, 4, 5, 6) until its time budget ends; scenario 3 is scenario 1 at each size. A boot "
      "listed after the three sizes ran later with the same kernel image (`BENCH_ADD`: for "
      "what the time limit cut from the first boot, its `--points` and `--s7-changed`). "
      "Wall times include waiting for "
      "other VM users when BENCH_VM_LOCK was set. Raw results (JSON lines, one object per "
      "measurement) are in the run's folder under `build/bench/`.\n")
    return w.text()


def s1_reader_cost(R):
    """scenario 1: one reader's CPU per sample, classic vs stream"""
    sizes, recs = R.sizes, R.recs
    w = Md()
    w("## 1. Reader cost\n")
    w("One reader process `pread()`s and parses one cgroup's file in a tight loop "
      "(up to 10^6 samples or the time budget per side) while 24 sibling cgroups churn CPU "
      "and memory and the busy child runs a CPU hog. Two targets: the **busy child** (a "
      "leaf: its flush only has the hog's own updates, whatever the siblings do) and the "
      "**parent of the churners** (like reading `system.slice`: every child has updates pending, "
      "so the classic read's flush does real work). The two ways alternate in rounds. "
      "CPU per sample = the reader's CLOCK_THREAD_CPUTIME_ID / samples; user/sys from "
      "getrusage(RUSAGE_THREAD). The stream side runs with a 100 ms interval; the kernel "
      "flusher's CPU is not in the reader's time and is shown separately (kworker CPU per "
      "second of run).\n")
    rows = []
    for target, label in S1_TARGETS.items():
        for n in sizes:
            rc = reader_cost(recs, n, target)
            for mode in MODES:
                if mode not in rc:
                    continue
                v = rc[mode]
                rows.append([f"{label}, {n} vCPUs, {mode}", fmt(v["samples"]), fmt(v["wall_s"]),
                             fmt(v["ns"]), fmt(v["user"]), fmt(v["sys"]),
                             fmt(v["kw_ms_per_s"]), fmt(v["errors"])])
            if "classic" in rc and "stream" in rc:
                c, st = rc["classic"], rc["stream"]
                rows.append([f"**{label}, {n} vCPUs, classic/stream**", "", "",
                             f"**{fmt(c['ns'] / st['ns'])}x**",
                             fmt(ratio(c["user"], st["user"])) + "x",
                             fmt(ratio(c["sys"], st["sys"])) + "x", "", ""])
    w(table(["", "samples", "seconds", "CPU ns/sample", "user ns/sample", "sys ns/sample",
             "kworker ms CPU/s", "read errors"], rows))
    w("")
    return w.text()


def s2_telemetry(R):
    """scenario 2: R readers x M cgroups, the four ways"""
    recs, s2_sizes, pngdir = R.recs, R.s2_sizes, R.pngdir
    w = Md()
    w("## 2. Telemetry: four ways to sample a subtree\n")
    w(S2_METHOD)
    for n2 in s2_sizes:
        s2 = s2_summary(recs, n2)
        period = next(iter(s2.values()))["period"]
        secs = next(iter(s2.values()))["seconds"]
        w(f"### {n2} vCPUs\n")
        w(f"Every {period} ms for {secs} s per run. Per row: CPU per cycle of all R readers "
          f"(their user / system split from getrusage), of the kworkers (all of them: the "
          f"flusher in rows 2 and 3, background in the others), the total, the total per "
          f"cgroup sample (total / M), and per reader the cycles done (of the window's "
          f"{fmt(secs * 1000 / period)}: one that takes longer than the interval does fewer; "
          f"the per-cgroup ways count a cycle cut by the window's end as the part they read, "
          f"M files a cycle), missed (classic grid: deadlines slept through; stream ways: "
          f"flush_seq gaps) and duplicated (a wake with no new flush).\n")
        rows = []
        for (r, m), v in sorted(s2.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            for mode in S2_MODES:
                x = v.get(mode)
                if not x:
                    continue
                if x["fail"]:
                    rows.append([f"{r} x {m}", S2_LABEL[mode], "fails: " + x["fail"]] + [""] * 8)
                    continue
                rows.append([f"{r} x {m}", S2_LABEL[mode],
                             f"{fmt(x['readers_ms'])} ({fmt(x['user_ms'])} / {fmt(x['sys_ms'])})",
                             fmt(x["kw_ms"]), fmt(x["total_ms"]), fmt(x["us_per_cg"]),
                             "**" + fmt(ratio(v.get("classic") and v["classic"]["total_ms"],
                                              x["total_ms"])) + "x**",
                             fmt(x["cycles"]), fmt(x["missed"]), fmt(x["dups"]),
                             fmt(x["errors"])])
        w(table(["R x M", "way", "readers ms/cycle (user / sys)", "kworker ms/cycle",
                 "total ms/cycle", "total µs per cgroup sample", "classic/this",
                 "cycles/reader", "missed cycles/reader", "dup cycles/reader", "errors"],
                rows))
        w("")
        # the grid the issue asks for at 2 and 8 vCPUs (8 adds 8 readers)
        full = set()
        if n2 in (2, 8):
            full = {(r, m) for r in (1, 4, 16) for m in (10, 100, 1000, 10000)}
        if n2 == 8:
            full |= {(8, m) for m in (100, 1000, 10000)}
        miss = sorted(full - set(s2))
        if miss:
            w(f"Not measured (time budget): {', '.join(f'{r}x{m}' for r, m in miss)}.\n")
    if s2_sizes:
        plot_s2(recs, s2_sizes, pngdir)
        w("![per-cgroup cost against M](bench/s2_per_cgroup.png)\n")
        w("![total CPU against readers](bench/s2_readers.png)\n")
        w(S2_PRIVILEGES)
    else:
        w("Not measured in this run.\n")
    return w.text()


def s9_profile(R):
    """scenario 9: perf in the guest (nothing when it did not run)"""
    recs = R.recs
    w = Md()
    s9 = sel(recs, "s9")
    # a profile taken at the short interval (added to an older run) wins
    s9 = [x for x in s9 if x["params"].get("period_ms")] or s9
    if s9:
        w("### Where the time goes: perf in the guest\n")
        p9 = s9[0]["params"]
        if p9.get("period_ms"):
            what = (f"the cgbench process of one {p9['seconds']} s telemetry run of 1 reader x "
                    f"{fmt(p9['cgroups'])} cgroups, {s9[0]['cpus']} vCPUs, every "
                    f"{p9['period_ms']} ms (the subtree's interval set to match; a classic pass "
                    f"takes longer than that, so it reads back to back), classic and subtree: "
                    f"the reads are most of the run, its start-up and the parent's snapshots "
                    f"of the kworkers' CPU clocks the rest")
        else:
            what = (f"one {p9['seconds']} s telemetry run of 1 reader x {fmt(p9['cgroups'])} "
                    f"cgroups, {s9[0]['cpus']} vCPUs, classic and subtree (the whole cgbench "
                    f"run: the readers' window, plus opening the files and the parent's "
                    f"snapshots of the kworkers' CPU clocks through /proc)")
        w(f"`perf record -e cpu-clock -g` (software sampling at 4 kHz: TCG has no PMU) over "
          f"{what}; symbols with at least 0.7 % of the samples, self time. TCG's costs are not "
          f"a real CPU's: atomics, interrupt masking and page-table walks cost relatively "
          f"more.\n")
        for x in s9:
            r9 = x["result"]
            n = r9.get("samples")
            w(f"**{x['params']['mode']}**" + (f" ({n:,} samples" if n else "")
              + (f"; by object: {', '.join(r9['dso'][:4])}" if r9.get("dso") else "")
              + (")" if n else "") + ":\n")
            w("```\n" + "\n".join(r9["top"][:25]) + "\n```\n")
        w(PROFILE_NOTES)
        w(closing_gap(recs))
    return w.text()


def s3_machine_size(R):
    """scenario 3: scenario 1 at each machine size"""
    sizes, recs, pngdir = R.sizes, R.recs, R.pngdir
    w = Md()
    w("## 3. Machine size\n")
    w("Scenario 1 in boots with 2, 8 and 32 vCPUs (same load: 24 churners, whose duty "
      "cycle scales so that they use about half the vCPUs, plus the hog). "
      "`css_rstat_flush()` loops over all possible CPUs, so the classic read cost grows "
      "with the machine; the stream read does not flush. Under TCG more vCPUs than host "
      "cores means each vCPU runs slower in wall time, which inflates both sides alike.\n")
    rows = []
    pts = {t: ([], [], []) for t in S1_TARGETS}    # target: vCPUs, classic ns, stream ns
    for n in sizes:
        cells = [str(n)]
        for t in S1_TARGETS:
            rc = reader_cost(recs, n, t)
            c, s = rc.get("classic"), rc.get("stream")
            cells += [fmt(c and c["ns"]), fmt(s and s["ns"]),
                      "**" + fmt(ratio(c and c["ns"], s and s["ns"])) + "x**"]
            if c and s and (t == "busy" or n in pts["busy"][0]):
                for v, x in zip(pts[t], (n, c["ns"], s["ns"])):
                    v.append(x)
        rows.append(cells)
    w(table(["vCPUs", "busy child: classic CPU ns/sample", "stream", "classic/stream",
             "parent: classic CPU ns/sample", "stream", "classic/stream"], rows))
    xs, yc, ys = pts["busy"]
    pxs, pyc, pys = pts["parent"]
    if xs:
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(xs, yc, "o-", color=COLORS["classic"], label="classic cpu.stat")
        ax.plot(xs, ys, "o-", color=COLORS["stream"], label="cpu.stat.stream")
        if pxs:
            ax.plot(pxs, pyc, "s--", color=COLORS["classic"], label="classic, parent")
            ax.plot(pxs, pys, "s--", color=COLORS["stream"], label="stream, parent")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.set_xlabel("vCPUs")
        ax.set_ylabel("reader CPU per sample (ns, TCG)")
        ax.set_title("Reader cost vs machine size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(pngdir, "s3_machine_size.png"), dpi=100)
        plt.close(fig)
        w("\n![reader cost vs vCPUs](bench/s3_machine_size.png)\n")
        w(f"Ratio at the largest size ({xs[-1]} vCPUs): busy child **{fmt(yc[-1] / ys[-1])}x**"
          + (f", parent **{fmt(pyc[-1] / pys[-1])}x**" if pxs and pxs[-1] == xs[-1] else "")
          + ".\n")
    return w.text()


def s4_parallel(R):
    """scenario 4: parallel readers"""
    recs, pngdir = R.recs, R.pngdir
    w = Md()
    w("## 4. Parallel readers\n")
    s4 = sel(recs, "s4")
    if s4:
        n4 = s4[0]["cpus"]
        m4 = s4[0]["params"]["cgroups"]
        w(f"R reader processes at once, each looping `pread()` + parse over the same {m4} "
          f"cgroups as fast as it can for {s4[0]['params']['seconds']} s, {n4} vCPUs, churn "
          f"load running. Throughput per reader = its samples / its wall time.\n")
        rows, data = [], {}
        for r in sorted({x["params"]["readers"] for x in s4}):
            row = [str(r)]
            for mode in MODES:
                rs = [x for x in s4 if x["params"]["readers"] == r and x["params"]["mode"] == mode]
                if not rs:
                    data[(r, mode)] = None
                    continue
                pr = rs[0]["result"]["per_reader"]
                tput = sum(p["samples"] / (p["wall_ns"] / 1e9) for p in pr) / len(pr)
                ns = sum(p["cpu_ns"] for p in pr) / max(1, sum(p["samples"] for p in pr))
                data[(r, mode)] = (tput, ns)
            c, s = data.get((r, "classic")), data.get((r, "stream"))
            rows.append([str(r), fmt(c and c[0]), fmt(s and s[0]),
                         "**" + fmt(ratio(s and s[0], c and c[0])) + "x**",
                         fmt(c and c[1]), fmt(s and s[1])])
        w(table(["readers", "classic samples/s per reader", "stream samples/s per reader",
                 "stream/classic", "classic CPU ns/sample", "stream CPU ns/sample"], rows))
        fig, ax = plt.subplots(figsize=(6, 4))
        for mode in MODES:
            pts = [(r, data[(r, mode)][0]) for (r, md_), v in data.items()
                   if md_ == mode and v for r in [r]]
            pts.sort()
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=COLORS[mode],
                        label=mode)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("parallel readers")
        ax.set_ylabel("samples/s per reader (TCG)")
        ax.set_title(f"Parallel readers, {m4} cgroups, {n4} vCPUs")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(pngdir, "s4_parallel.png"), dpi=100)
        plt.close(fig)
        w("\n![parallel readers](bench/s4_parallel.png)\n")
    else:
        w("Not measured in this run.\n")
    return w.text()


def s5_latency(R):
    """scenario 5: wake latency"""
    recs, pngdir = R.recs, R.pngdir
    w = Md()
    w("## 5. Wake latency\n")
    s5 = sel(recs, "s5")
    if s5:
        p = s5[0]["params"]
        w(f"Flush interval {p['interval_ms']} ms, {p['cgroups']} cgroups, {p['seconds']} s "
          f"per reader, {s5[0]['cpus']} vCPUs, churn load running; the readers run one after "
          f"the other. Latency = the reader's CLOCK_MONOTONIC right after its wait returns "
          f"minus flush_time_usec of the newest sample in the batch (the kernel stamps it at "
          f"the end of the flush, before it wakes the pollers). (a) `cgstream_group_wait()` "
          f"+ `cgstream_group_process()` (io_uring in the library); (b) `poll()` on the M "
          f"fds + `pread()`; (c) pycgstream `Group.wait()` + `Group.read()` (also shown: "
          f"time when the batch is handed to Python code). \"Overtaken\": wakes where a "
          f"newer flush completed between the wake and the read (the sample is newer than "
          f"the wake), left out of the percentiles. \"Wakes with no new flush\": for the poll "
          f"loop, poll() returned while only some fds had turned readable and the rest "
          f"woke it again for the same flush; \"fds readable with nothing new\" would be a "
          f"kernel duplicate (poll loop only; the library hides fds). \"process() µs\": "
          f"how long each non-empty `cgstream_group_process()` call took, p50 / p99 "
          f"(library only).\n")
        rows = []
        fig, ax = plt.subplots(figsize=(6, 4))
        for x in s5:
            res = x["result"]
            for key, label in (("lat_us", x["params"]["reader"]),
                               ("lat_deliver_us", x["params"]["reader"] + " (delivered)")):
                lat = res.get(key)
                if lat is None:
                    continue
                # negative: a newer flush completed between the wake and the
                # read, so the waking flush's time is unknown: not counted
                over = sum(1 for v in lat if v < 0)
                lat = [v for v in lat if v >= 0]
                proc = res.get("process_us") if key == "lat_us" else None
                rows.append([label, res.get("mode", "kernel"), fmt(len(lat)), fmt(over),
                             fmt(pct(lat, 50)),
                             fmt(pct(lat, 99)), fmt(max(lat) if lat else None),
                             fmt(res.get("missed")), fmt(res.get("repeat_wakes")),
                             fmt(res.get("dups")) if "dups" in res else "–",
                             f"{fmt(pct(proc, 50))} / {fmt(pct(proc, 99))}" if proc else "–"])
                if lat:
                    v = sorted(lat)
                    ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=label)
        w(table(["reader", "mode", "wakes", "overtaken", "p50 µs", "p99 µs", "max µs",
                 "missed cycles", "wakes with no new flush", "fds readable with nothing new",
                 "process() µs"],
                rows))
        ax.set_xscale("log")
        ax.set_xlabel("wake latency after flush (µs, TCG)")
        ax.set_ylabel("fraction of wakes")
        ax.set_title("Wake latency (CDF)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(pngdir, "s5_latency.png"), dpi=100)
        plt.close(fig)
        w("\n![wake latency](bench/s5_latency.png)\n")
        for x in s5:
            st = x["result"].get("startup_s")
            if st:
                w(f"pycgstream start-up in the VM (9p root, TCG): imports {st['imports']} s, "
                  f"Group open {st['group_open']} s, close {st['group_close']} s (not in the "
                  f"latencies).\n")
        names = {x["params"]["reader"] for x in s5}
        for want in ("libcgstream-group", "poll", "pycgstream"):
            if want not in names:
                w(f"Not measured: {want} (see the run's driver.log).\n")
    else:
        w("Not measured in this run.\n")
    return w.text()


def s6_updater(R):
    """scenario 6: updater impact"""
    recs, pngdir = R.recs, R.pngdir
    w = Md()
    w("## 6. Updater impact\n")
    s6 = sel(recs, "s6")
    if s6:
        p = s6[0]["params"]
        n6 = s6[0]["cpus"]
        w(f"A CPU-bound workload ({n6} processes, one per vCPU, counting loop iterations) in "
          f"one cgroup, {p['seconds']} s per phase, phases alternating over "
          f"{1 + max(x['params']['round'] for x in s6)} rounds; the churn load is stopped. "
          f"Readers: {p['readers']} processes x {p['cgroups']} cgroups (the workload's "
          f"among them) every {p['period_ms']} ms, classic or stream (flusher at the same "
          f"interval). The workload shares the vCPUs with the readers and the flusher, so "
          f"its loss is their CPU time plus any contention on the updaters' side "
          f"(`css_rstat_updated()` vs the flush).\n")
        rows, bars = [], []
        base = None
        for phase in ("none", "classic", "stream"):
            rs = [x for x in s6 if x["params"]["phase"] == phase]
            if not rs:
                continue
            ips = sum(x["result"]["work"]["iters_per_s"] for x in rs) / len(rs)
            spread = (max(x["result"]["work"]["iters_per_s"] for x in rs)
                      - min(x["result"]["work"]["iters_per_s"] for x in rs)) / ips * 100
            rcpu = None
            kw = None
            rds = [x["result"]["readers"] for x in rs if x["result"].get("readers")]
            if rds:
                rcpu = sum(sum(q["cpu_ns"] for q in rd["per_reader"]) / (rd["wall_ns"] / 1e9)
                           for rd in rds) / len(rds) / 1e6
                kw = sum(rd["kworker_ns"] / (rd["wall_ns"] / 1e9) for rd in rds) / len(rds) / 1e6
            if phase == "none":
                base = ips
            rows.append([phase, f"{ips:.4g}", f"±{spread / 2:.1f} %",
                         f"{ips / base * 100:.1f} %" if base else "–",
                         fmt(rcpu), fmt(kw)])
            bars.append((phase, ips / base * 100 if base else 0))
        w(table(["readers", "iterations/s (mean)", "round spread", "vs no readers",
                 "readers ms CPU/s", "kworker ms CPU/s"], rows))
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.bar([b[0] for b in bars], [b[1] for b in bars],
               color=["tab:gray", COLORS["classic"], COLORS["stream"]][:len(bars)])
        ax.set_ylabel("workload throughput, % of no readers")
        ax.set_ylim(min(b[1] for b in bars) * 0.9 if bars else 0, 105)
        ax.set_title("Updater impact")
        ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(pngdir, "s6_updater.png"), dpi=100)
        plt.close(fig)
        w("\n![updater impact](bench/s6_updater.png)\n")
    else:
        w("Not measured in this run.\n")
    return w.text()


def s7_flusher(R):
    """scenario 7: the flusher's cost against cgroups changed"""
    recs, pngdir = R.recs, R.pngdir
    w = Md()
    w("## 7. The flusher's cost against cgroups changed\n")
    s7 = [x for x in sel(recs, "s7") if x["result"].get("flusher_us")]
    if s7:
        w("`cgbench hop`: one process per vCPU, pinned, moves itself through its share of N "
          "idle cgroups (a write to cgroup.procs, ~20 µs of work in each), so every cgroup it "
          "visits has an rstat update pending on that CPU when the flusher comes. The "
          "flusher's interval is chosen per N so that the hoppers can get round (TCG makes a "
          "migration cost tens of µs); \"changed per cycle\" is min(N, visits per flush), "
          "what actually changed. Each cycle of the flusher's work item is timed by the "
          "workqueue tracepoints (`workqueue_execute_start`/`_end` for stat_stream_workfn, "
          "tracefs). " + flusher_clock_note(s7))
        rows, pts = [], {}
        for x in sorted(s7, key=lambda x: (x["cpus"], x["params"]["cgroups"])):
            r, p_ = x["result"], x["params"]
            d = r["flusher_us"]
            fl = r.get("flush_seq_delta") or len(d)
            changed = min(p_["cgroups"], r["hops"] / max(1, fl))
            p50 = pct(d, 50)
            pts.setdefault(x["cpus"], []).append((changed, p50))
            rows.append([str(x["cpus"]), fmt(p_["cgroups"]), fmt(p_["interval_ms"]), fmt(len(d)),
                         fmt(changed), f"**{fmt(p50 / 1e3)}**", fmt(pct(d, 90) / 1e3),
                         fmt(max(d) / 1e3), fmt(p50 / changed)])
        w(table(["vCPUs", "cgroups N", "interval ms", "cycles traced", "changed per cycle",
                 "flusher ms per cycle p50", "p90", "max", "µs per changed cgroup (p50)"],
                rows))
        fig, ax = plt.subplots(figsize=(6, 4))
        for n, v in sorted(pts.items()):
            v.sort()
            ax.plot([a_ for a_, _ in v], [b_ / 1e3 for _, b_ in v], "o-", label=f"{n} vCPUs")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("cgroups changed per cycle")
        ax.set_ylabel("flusher run time per cycle, ms (p50, TCG)")
        ax.set_title("Flusher cost")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(pngdir, "s7_flusher.png"), dpi=100)
        plt.close(fig)
        w("\n![flusher cost](bench/s7_flusher.png)\n")
    else:
        w("Not measured in this run.\n")
    return w.text()


def s8_daemons(R):
    """scenario 8: the daemon and the exporter"""
    recs = R.recs
    w = Md()
    w("## 8. The daemon and the exporter watching a large subtree\n")
    s8 = sel(recs, "s8")
    trees = any(x["params"].get("tree") for x in s8)
    if s8:
        w(("Each program watches one parent with M children: the scenario 10 tree (charged "
           "memory, I/O, 1 % of its cgroups changing every second, in runs before the change "
           "shares seven churners; the cpu, memory and io flushers at 1 s) where the "
           "kernel has the memory and io streams, else M idle children (cpu only, flusher at "
           "1 s), as the cgroups column says. It runs "
           if trees else "Each program watches one parent with M idle children (flusher at "
           "1 s) and runs ")
          + "alone in the readers' cgroup, with no other scenario's cgroups in the hierarchy "
          "(until 2026-12-02 the idle trees of earlier scenarios were still there, 11,100 "
          "cgroups of scenario 7's in that run, and every flusher walked them); after it has "
          "settled (its first walk of the subtree, "
          "a few cycles), its CPU (the process CPU clock: all threads, exact) is taken over the "
          "window and divided by the flushes in it. The exporter (`python -m pycgstream "
          "export`: pycgstream's Tree + prometheus_client) is scraped over HTTP during the "
          "window, one scrape after another with a cycle's pause between (the window lasts at "
          "least one scrape), so its CPU includes serving the scrapes; scrape time is the "
          "client's wall time for one `GET /metrics`. RSS is VmRSS at the end (VmHWM: peak).\n")
        rows = []
        for x in s8:
            r = x["result"]
            sc = r.get("scrape_s") or []
            tree = x["params"].get("tree")
            rows.append([x["params"]["program"], fmt(x["params"]["cgroups"])
                         + (f" ({tree}: {x['params'].get('controllers', '?').replace(',', ', ')})"
                            if tree else ""), str(x["cpus"]),
                         fmt(r["cycles"]), f"**{fmt(r['cpu_ns'] / 1e6 / max(1, r['cycles']))}**",
                         fmt(r["rss_kb"] / 1024 if r.get("rss_kb") else None),
                         fmt(r["hwm_kb"] / 1024 if r.get("hwm_kb") else None),
                         f"{fmt(pct(sc, 50) * 1e3)} / {fmt(max(sc) * 1e3)}" if sc else "–",
                         fmt(r.get("scrape_bytes") or None)])
        w(table(["program", "cgroups", "vCPUs", "cycles", "CPU ms per cycle", "RSS MiB",
                 "peak RSS MiB", "scrape ms p50 / max", "scrape bytes"], rows))
        w("")
        if trees:
            w(exporter_scrapes(R, [x for x in s8 if x["params"]["program"] == "exporter"]))
    else:
        w("Not measured in this run.\n")
    return w.text()


S8_COUNTS = (1000, 10000)    # the exporter's cgroup counts (issue 28; bench/driver.py)


def exporter_scrapes(R, ex):
    """the exporter per scrape and between scrapes, per cgroup count"""
    w = Md()
    w("### The exporter: per scrape, and between scrapes\n")
    w("Before the scraped window the exporter runs as long with nobody scraping: its CPU "
      "there, per second, is what it costs between scrapes (its own timers and threads). "
      "CPU per scrape = (its CPU over the scraped window − that rate × the window's wall "
      "time) / the scrapes. Scrape latency: each `GET /metrics`, the client's wall time; "
      "series: the sample lines of the last scrape.\n")
    rows, lats = [], []
    for x in sorted(ex, key=lambda x: (x["cpus"], x["params"]["cgroups"])):
        r, m = x["result"], x["params"]["cgroups"]
        sc = r.get("scrape_s") or []
        rate = (r["between_cpu_ns"] / r["between_s"]
                if r.get("between_cpu_ns") is not None and r.get("between_s") else None)
        per = ((r["cpu_ns"] - rate * r["wall_s"]) / len(sc) / 1e6
               if rate is not None and sc else None)
        rows.append([fmt(m), f"{x['params'].get('tree', '?')}: "
                     f"{x['params'].get('controllers', '?').replace(',', ', ')}", str(x["cpus"]),
                     fmt(len(sc)), f"**{fmt(per)}**",
                     fmt(rate / 1e6 if rate is not None else None),
                     f"{fmt(pct(sc, 50) * 1e3)} / {fmt(max(sc) * 1e3)}" if sc else "–",
                     fmt(r.get("series")),
                     f"{fmt(r['rss_kb'] / 1024 if r.get('rss_kb') else None)} "
                     f"({fmt(r['hwm_kb'] / 1024 if r.get('hwm_kb') else None)})"])
        if sc:
            lats.append(f"- scrape latencies at {fmt(m)} cgroups ({x['cpus']} vCPUs), in order: "
                        + ", ".join(fmt(v * 1e3) for v in sc) + " ms")
    w(table(["cgroups", "tree: controllers", "vCPUs", "scrapes", "CPU ms per scrape",
             "CPU ms per s between scrapes", "scrape ms p50 / max", "series",
             "RSS MiB (peak)"], rows))
    w("\n".join(lats) + "\n" if lats else "")
    have = {x["params"]["cgroups"] for x in ex}
    skipped = {x["params"]["what"] for x in sel(R.recs, "skipped")}
    absent = [f"{fmt(m)} cgroups (" + ("skipped by the time budget" if f"s8 {m}" in skipped
                                       else "not in a quick run" if R.quick else "no record")
              + ")" for m in S8_COUNTS if m not in have]
    if absent:
        w(f"The exporter not measured at {', '.join(absent)}.\n")
    return w.text()


def kernel_memory(R):
    """the kernel memory the series adds (pahole)"""
    results = R.results
    w = Md()
    w("## 9. Kernel memory the series adds\n")
    w(kernel_bytes(results))
    w(stream_slab(R.recs))
    return w.text()


def stream_slab(recs):
    """scenario 15: the unreclaimable slab with the streams off, armed one
    controller after another, off again, and what removal records hold"""
    w = Md()
    w("### The streams' slab, measured (scenario 15)\n")
    runs = sel(recs, "s15")
    if not runs:
        w("Not measured in this run (no scenario 15 record).\n")
        return w.text()
    x = runs[-1]
    r = x["result"]
    m, off = r["cgroups"], r["off_kb"]
    n_all = r.get("all_cgroups", m)
    w(f"`SUnreclaim` of /proc/meminfo (the median of three readings), the {x['cpus']}-vCPU "
      f"boot, with the agent tree of {fmt(m)} cgroups (memory and io on, each cgroup having "
      f"written to the loop device) among the system's {fmt(n_all)}, under the run's load: "
      "every stream off, then each controller's stream armed in turn at 1 s (its published "
      "copies and change tracking for every css), then all off again; bytes per cgroup are "
      f"over the {fmt(n_all)}.\n")
    rows = [["every stream off", fmt(off), "–", "–"]]
    prev = off
    for c in ("cpu", "memory", "io"):
        kb = r["armed"].get(c)
        if kb is None:
            continue
        rows.append([f"{c} armed too", fmt(kb), f"{kb - prev:+,}",
                     fmt((kb - prev) * 1024 / n_all)])
        prev = kb
    rows.append(["all off again", fmt(r["off_again_kb"]), f"{r['off_again_kb'] - off:+,} "
                 "(against the first)", "–"])
    w(table(["state", "SUnreclaim KiB", "KiB more than the row before",
             "bytes per cgroup"], rows))
    ch = r.get("churn")
    if not ch:
        w("The removal records: the churn failed (no cgbench churnrm result).\n")
        return w.text()
    n, held = ch["cgroups"], r["held_kb"] - r["dropped_kb"]
    rate = n / ch["wall_s"] if ch["wall_s"] else 0
    per = held * 1024 / n if n else None
    w(f"Removal records: with the three streams armed at {fmt(x['params']['interval_ms'])} ms "
      f"(records kept for 16 publications and at least 5 s), `cgbench churnrm` removed "
      f"{fmt(n)} cgroups in {fmt(ch['wall_s'])} s ({fmt(rate)} a second, as fast as mkdir, "
      f"a task's move and rmdir go here). 3 s after the churn the slab held "
      f"{fmt(r['held_kb'] - r['before_kb'])} KiB more than before it, 8 s later "
      f"{fmt(r['dropped_kb'] - r['before_kb'])} KiB: the records of {fmt(n)} removals "
      f"(cpu, memory and io) took **{fmt(held)} KiB**"
      + (f", **{fmt(per)} bytes per removal**" if per is not None else "") + ".\n")
    if per:
        kept = 1000 * max(5.0, 16 * 1.0)     # 1,000 a second at a 1 s interval: 16 s
        mib = kept * per / 1048576
        w(f"At 1,000 removals a second with a 1 s interval (kept 16 s: 16,000 removals), "
          f"that is {fmt(mib)} MiB for the three controllers together"
          + (f"; the cap of 4 MiB per controller bounds it at about 12 MiB for the three, and "
             "a reader further behind than the cap gets the LOST flag" if mib > 12 else
             ", whose caps are 4 MiB each (12 MiB for the three; this run does not split the "
             "records' memory by controller)") + ".\n")
    return w.text()


def not_measured(R):
    """failed boots and what the time budget skipped"""
    run, boots, recs, results = R.run, R.boots, R.recs, R.results
    w = Md()
    w("## Not measured in this run\n")
    # what a boot added later (BENCH_ADD) measured is no longer missing
    done = {(f"s2 {r['params']['readers']}x{r['params']['cgroups']}", r["cpus"])
            for r in recs if r["scenario"] == "s2"}
    done |= {(f"s7 {r['params']['cgroups']}", r["cpus"]) for r in recs if r["scenario"] == "s7"}
    done |= {(f"s10 {r['params']['readers']}x{r['params']['cgroups']}"
              + (f" at {r['params']['changing_pct']}%"
                 if r["params"].get("changing_pct") is not None else ""), r["cpus"])
             for r in recs if r["scenario"] == "s10"}
    done |= {(f"{r['scenario']} {r['params']['cgroups']}", r["cpus"])
             for r in recs if r["scenario"] in ("s8", "s12", "s15")}
    done |= {(f"s16 {r['params']['readers']}x{r['params']['cgroups']} at "
              f"{r['params']['changing_pct']}%", r["cpus"]) for r in recs if r["scenario"] == "s16"}
    skipped = [f"{r['params']['what']} ({r['cpus']} vCPUs)" for r in recs
               if r["scenario"] == "skipped" and (r["params"]["what"], r["cpus"]) not in done]
    bad = [b for b in boots if b.get("rc")]
    if skipped or bad:
        for b in bad:
            tail = ""
            try:
                d = re.search(r"--out (\S+)", b.get("command", ""))
                d = d.group(1) if d else os.path.join(results, f"vm-{b['cpus']}")
                with open(os.path.join(d, "vm-run.log")) as fh:
                    ls = [l.strip() for l in fh if "vm-run" in l or "bench:" in l]
                tail = ls[-1][:200] if ls else ""
            except OSError:
                pass
            w(f"- the {b['cpus']}-vCPU boot: exit {b['rc']} (124 = the run's time limit ended "
              f"it; 1 = a failed command or a kernel warning); its vm-run.log ends with: "
              f"`{tail}`")
        if skipped:
            limit = run.get("limit_min")
            w("- skipped by the driver's time budget (the whole run is capped by BENCH_LIMIT_MIN"
              + (f", {limit} minutes in this run" if limit else "") + "): " + ", ".join(skipped))
        w("")
    else:
        w("Everything scheduled ran (the scheduled matrix itself is trimmed as described "
          "in each section).\n")
    return w.text()


def limits(R):
    """the limits of these numbers, for this run's kernel"""
    e0 = R.e0
    w = Md()
    lockdep = any(c == "CONFIG_PROVE_LOCKING=y" for c in e0.get("kernel_config", []))
    w(LIMITS.format(kernel=KERNEL_DEBUG if lockdep else KERNEL_BENCH))
    return w.text()


def s2_summary(recs, cpus):
    return tele_summary(recs, "s2", cpus)


# cgbench's modes that run the stream flushers (the others flush in the
# reader, or not at all)
FLUSHER_MODES = ("stream", "stream1", "subtree", "changes")


def tele_summary(recs, scenario, cpus, by="total_ms"):
    """(readers, cgroups) -> way -> CPU per cycle and friends, for the
    telemetry runs of scenario 2 (way: cgbench's mode) and 10 (way: the
    row's label, e.g. bpfmap-noio; the idle way is not a way to compare:
    agent_background() takes it).  Of several rounds, the one with the
    smaller `by` (total_ms where a round lacks it)"""
    out = {}
    for x in sel(recs, scenario, cpus=cpus):
        p, res = x["params"], x["result"]
        if p["mode"] == "idle":
            continue
        key = (p["readers"], p["cgroups"])
        way = p.get("way", p["mode"])
        expected = p["seconds"] * 1000 / p["period_ms"]
        pr = res["per_reader"]
        fails = sorted({q.get("fail_errno", 0) for q in pr} - {0})
        samples = sum(q["samples"] for q in pr)
        # reader-cycles of work done: a subtree or BPF pass is one read or
        # one iterator pass, all or nothing; the per-cgroup ways read M
        # files a cycle, and the window's end cuts their last cycle short,
        # so they did samples / M (their CPU includes the cut cycle's part)
        if p["mode"] in ("classic", "stream", "stream1"):
            cycles = samples / p["cgroups"]
        else:
            cycles = sum(q["cycles"] for q in pr)
        # readers: CPU per reader-cycle, times R
        per_rc = (sum(q["cpu_ns"] for q in pr) / cycles) if cycles else None
        v = {"fail": (", ".join(os.strerror(e) for e in fails)
                      + (" (a cgroup iterator's pass does not fit the 32 KiB seq buffer and "
                         "cannot continue in another one)" if 95 in fails else ""))
             if fails and not samples else "",
             "readers_ms": per_rc * len(pr) / 1e6 if per_rc is not None else None,
             "user_ms": (sum(q["utime_us"] for q in pr) / cycles * len(pr) / 1e3
                         if cycles else None),
             "sys_ms": (sum(q["stime_us"] for q in pr) / cycles * len(pr) / 1e3
                        if cycles else None),
             "kw_ms": res["kworker_ns"] / expected / 1e6,
             "cycles": cycles / len(pr),
             "missed": sum(q["missed"] for q in pr) / len(pr),
             "dups": (sum(q["dups"] for q in pr) / len(pr) /
                      (p["cgroups"] if p["mode"] in ("stream", "stream1") else 1)
                      if p["mode"] in ("stream", "stream1", "subtree", "changes") else None),
             "flushes": res.get("flush_seq_delta"), "flush_missed": res.get("flush_missed_delta"),
             "errors": sum(q["errors"] for q in pr)}
        # the shared BPF collector (bpfshared): its process's CPU over the
        # window, once whatever the readers; the way's flusher, in effect
        col = res.get("collector")
        v["collector_way"] = p["mode"] == "bpfshared"
        v["collector_ms"] = col["cpu_ns"] / expected / 1e6 if col else None
        v["collector_passes"] = col["passes"] if col else None
        v["retries"] = sum(q.get("retries", 0) for q in pr)
        # the changes way: the cgroups its table held; s10: the change
        # share asked and what the changer did over the run
        v["held"] = max((q.get("held", 0) for q in pr), default=0)
        v["changer"] = res.get("changer")
        # subtree, changes: each controller's records per reader-cycle, and
        # the most one snapshot held
        recs = {}
        for q in pr:
            for c, n in q.get("records", {}).items():
                recs[c] = recs.get(c, 0) + n
        v["records"] = {c: n / cycles for c, n in recs.items()} if cycles else {}
        v["records_max"] = {c: max(q.get("records_max", {}).get(c, 0) for q in pr)
                            for c in recs}
        collector = v["collector_ms"] if v["collector_way"] else 0
        v["total_ms"] = (v["readers_ms"] + v["kw_ms"] + collector
                         if v["readers_ms"] is not None and collector is not None else None)
        v["us_per_cg"] = v["total_ms"] * 1e3 / p["cgroups"] if v["total_ms"] is not None else None
        # one reader's cycle over its M cgroups
        v["reader_us_per_cg"] = per_rc / 1e3 / p["cgroups"] if per_rc is not None else None
        v["values_per_cg"] = (sum(q.get("values", 0) for q in pr) / cycles / p["cgroups"]
                              if cycles else None)
        fl = res.get("flusher_us")     # traced flusher runs (s10's flusher ways)
        v["flusher_ms"] = sum(fl) / expected / 1e3 if fl is not None else None
        v["flusher_runs"] = len(fl) if fl is not None else None
        by_ctrl = res.get("flusher_us_by_ctrl")
        v["flusher_by_ctrl"] = ({c: sum(d) / expected / 1e3 for c, d in by_ctrl.items()}
                                if by_ctrl is not None else None)
        # records without window_start_ns: the trace spans the whole
        # cgbench run, its set-up before the
        # window too: a controller's flusher with more runs than the
        # window holds (one a cycle, one more for the edges) was traced
        # outside it, and the sums above are upper bounds; its mean run,
        # once a cycle per controller, is what the window would hold
        runs = ([len(d) for d in by_ctrl.values()] if by_ctrl is not None else
                [len(fl) / len(p.get("controllers", "cpu").split(","))] if fl else [])
        # (records with window_start_ns hold only the window's runs)
        v["flusher_over"] = ("window_start_ns" not in res and
                             any(n > expected + 1 for n in runs))
        v["flusher_mean_ms"] = (sum(sum(d) / len(d) for d in by_ctrl.values() if d) / 1e3
                                if by_ctrl else None)
        # attributable: the readers and the flushers they make run, not the
        # guest's background; a way without flushers flushes in its readers
        v["flusher_way"] = p["mode"] in FLUSHER_MODES
        flushers = v["flusher_ms"] if v["flusher_way"] else 0
        v["attr_ms"] = (v["readers_ms"] + flushers + collector
                        if v["readers_ms"] is not None and flushers is not None
                        and collector is not None else None)
        run = (res.get("collector_run") or {}).get("collect") or {}
        v["bpf_missing"] = max([q.get("bpf_missing", 0) for q in pr] + [run.get("bpf_missing", 0)])
        # a BPF pass that the window's end cut inside its per-cgroup io.stat
        # reads is in the CPU but not in the cycles (how much of it ran is
        # not recorded): its row's CPU per cycle is an upper bound
        v["cut_pass"] = (p["mode"] in ("bpf", "bpfmap", "bpfshared") and
                         samples > sum(q["cycles"] for q in pr) * (p["cgroups"] + 1))
        if v["fail"]:
            v["total_ms"] = v["us_per_cg"] = v["reader_us_per_cg"] = v["attr_ms"] = None
        d = out.setdefault(key, {"period": p["period_ms"], "seconds": p["seconds"]})
        # the cheapest round: interference from the host only adds
        old = d.get(way)
        v["rounds"] = (old["rounds"] if old else 0) + 1
        cost = v[by] if v[by] is not None else v["total_ms"]
        old_cost = old and (old[by] if old[by] is not None else old["total_ms"])
        if old is None or (cost is not None and (old_cost is None or cost < old_cost)):
            d[way] = v
        else:
            old["rounds"] = v["rounds"]
    return out


def _tot(s2, key, mode):
    v = s2.get(key, {}).get(mode)
    return v and v["total_ms"]


def s2_targets(recs, sizes):
    """the issue's four targets, each said as met / missed with its numbers"""
    out = []
    by = {n: s2_summary(recs, n) for n in sizes}
    s = by.get(2, {})
    c, t = _tot(s, (1, 1000), "classic"), _tot(s, (1, 1000), "subtree")
    if c and t:
        r = c / t
        out.append(f"- subtree vs classic, 1 reader x 1,000 cgroups, 2 vCPUs: total CPU per "
                   f"cycle {fmt(c)} ms vs {fmt(t)} ms: **{fmt(r)}x** less (target: at least "
                   f"20x): **{'met' if r >= 20 else 'missed'}**")
    pts = [(m, s[(1, m)]["subtree"]) for m in (100, 1000, 10000)
           if s.get((1, m), {}).get("subtree") and s[(1, m)]["subtree"]["us_per_cg"]]
    if len(pts) >= 2:
        tot = [v["us_per_cg"] for _, v in pts]
        rd = [v["readers_ms"] * 1e3 / m for m, v in pts]
        r, rr = max(tot) / min(tot), max(rd) / min(rd)
        out.append(f"- subtree per-cgroup cost, 1 reader, {', '.join(fmt(m) for m, _ in pts)} "
                   f"cgroups, 2 vCPUs: total {' / '.join(fmt(x) for x in tot)} µs: max/min "
                   f"**{fmt(r)}x** (target: within 1.5x): **{'met' if r <= 1.5 else 'missed'}**; "
                   f"the reader alone {' / '.join(fmt(x) for x in rd)} µs ({fmt(rr)}x)")
    for n, rdr in ((2, 1), (8, 1)):
        s = by.get(n, {})
        for m in (1000, 10000, 100):
            t, b, bm = (_tot(s, (rdr, m), "subtree"), _tot(s, (rdr, m), "bpf"),
                        _tot(s, (rdr, m), "bpfmap"))
            best = min([x for x in (b, bm) if x] or [None]) if (b or bm) else None
            if t and best:
                out.append(f"- subtree vs BPF, 1 reader x {fmt(m)} cgroups, {n} vCPUs: "
                           f"{fmt(t)} ms vs {fmt(best)} ms per cycle (BPF's cheaper variant"
                           f"{'' if b else '; the seq variant failed'}): "
                           f"**{fmt(best / t)}x** (target: subtree no more than BPF): "
                           f"**{'met' if t <= best else 'missed'}**")
                break
    s = by.get(8, {})
    t = _tot(s, (8, 1000), "subtree")
    b = [x for x in (_tot(s, (8, 1000), "bpf"), _tot(s, (8, 1000), "bpfmap")) if x]
    if t and b:
        r = min(b) / t
        out.append(f"- subtree vs BPF, 8 readers x 1,000 cgroups, 8 vCPUs: {fmt(t)} ms vs "
                   f"{fmt(min(b))} ms per cycle: **{fmt(r)}x** less (target: at least 3x): "
                   f"**{'met' if r >= 3 else 'missed'}**")
    s = by.get(2, {})
    st, t = _tot(s, (1, 1000), "stream"), _tot(s, (1, 1000), "subtree")
    if st and t:
        out.append(f"- a rate-limited cpu.stat flush (row 2: no flush, one text read per "
                   f"cgroup) vs the subtree, 1 x 1,000, 2 vCPUs: {fmt(st)} ms vs {fmt(t)} ms "
                   f"per cycle: **{fmt(st / t)}x**")
    return out


# --- scenarios 10 and 11: the agent and the memory experiment (issue 29) ------

AGENT_SIZE = 2       # the boot that runs them (bench/run.sh)
# the ways to compare (the idle way is the background they run on)
AGENT_ORDER = [label for label, mode, _ in AGENT_WAYS if mode != "idle"]
AGENT_MODE = {label: mode for label, mode, _ in AGENT_WAYS}
S11_MODES = ("text", "stream", "subtree", "bpf")
S11_LABEL = {"text": "memory.stat text + parse", "stream": "memory.stat.stream text + parse",
             "subtree": "memory.stat.stream.subtree, decoded",
             "bpf": "BPF memcg kfuncs, one-cgroup pass"}
S11_SHORT = {"text": "text + parse", "stream": "stream text + parse", "subtree": "subtree",
             "bpf": "BPF"}
# issue 29's targets: subtrees vs classic and vs BPF (times less CPU per
# cycle, 1 x 1,000), the subtrees' per-cgroup cost from 1,000 to 10,000
# cgroups (max/min), text + parse vs the subtree per read; and what the
# seed slides' BPF got in the memory experiment
VS_CLASSIC, VS_BPF, FLAT, MEM_VS_TEXT, SLIDES_BPF = 20, 3, 1.5, 10, 13.7
# issue 43's targets for change snapshots at 1 x 1,000, 1 % changing:
# times less attributable CPU than classic and than bpfmap, no more than
# the shared collector (at least 1x, with 1 reader and with 16), and the
# cost per changed cgroup from 1,000 to 10,000 cgroups (max/min)
CH_VS_CLASSIC, CH_VS_BPF, CH_VS_SHARED, CH_FLAT = 20, 5, 1, 1.5

# how the flusher runs were timed (driver.py's flusher_clock), said once per section
FLUSHER_CLOCK_NOTE = {
    "cpu": ("A flusher run's time is its CPU time: its span between the workqueue "
            "tracepoints less the spans in which its kworker was switched out "
            "(`sched_switch` of the kworkers, traced with them), so that preemption by the "
            "load or the readers does not count; interrupts taken during the run do, and "
            "under TCG so does a vCPU the host descheduled.\n"),
    "wall": ("A flusher run's time is its span between the workqueue tracepoints "
             "(`sched_switch` was not traced in this run): its CPU time unless it was "
             "preempted or interrupted, so an upper bound (the bench kernel is PREEMPT, and "
             "the load and the readers share the vCPUs with the kworkers).\n"),
}


def flusher_clock_note(recs):
    """how the flusher runs in these records were timed (driver.py's
    flusher_clock; records from before it were wall time); "" when none
    has flusher runs"""
    clocks = {x["result"].get("flusher_clock", "wall") for x in recs
              if x["result"].get("flusher_us") or x["result"].get("flusher_us_by_ctrl")}
    if not clocks:
        return ""
    return FLUSHER_CLOCK_NOTE["cpu" if clocks == {"cpu"} else "wall"]


# what the s10 records measure, the names the report gives them: the
# targets' measure first, then the two kept alongside ("also")
S10_MEASURES = (("attr_ms", "attributable (readers + flushers)"),
                ("readers_ms", "the readers' CPU"), ("total_ms", "readers + all kworkers"))
ATTRIBUTABLE = ("They are on **attributable** CPU: the readers' CPU (every reader thread's "
                "CLOCK_THREAD_CPUTIME_ID) plus the stream flushers' runs they make the kernel "
                "do (traced, each run's time as scenario 10 says), per cycle, or, for the "
                "shared BPF collector (bpfshared), plus the collector's CPU, counted once "
                "whatever the number of readers; the guest's "
                "background kworker time is in neither. "
                "Two measures are kept alongside (\"also\"): **the readers' CPU** alone and "
                "**readers + all kworkers** (every kworker's CPU clock over the window, per "
                "cycle of the window: the flushers and the background together; bpfshared "
                "adds its collector).\n")


def agent_sizes(recs):
    return sorted({x["cpus"] for x in sel(recs, "s10")} | {AGENT_SIZE})


def s10_pcts(recs, cpus=None):
    """the change shares of the s10 records, the targets' first (None:
    records from before the change shares, whose tree ran 8 churners)"""
    have = {x["params"].get("changing_pct") for x in recs
            if x["scenario"] == "s10" and (cpus is None or x["cpus"] == cpus)}
    order = [None, TARGET_SHARE] + [s for s in AGENT_SHARES if s != TARGET_SHARE]
    return [p for p in order if p in have] + sorted(p for p in have if p not in order)


def at_pct(recs, pct):
    """the records, the s10 ones only at change share pct"""
    return [x for x in recs if x["scenario"] != "s10" or x["params"].get("changing_pct") == pct]


def agent_summary(recs, cpus, pct):
    """tele_summary of scenario 10 at one change share"""
    return tele_summary(at_pct(recs, pct), "s10", cpus, by="attr_ms")


def target_pct(recs):
    """the share issue 29's and 43's targets are judged at: 1 %, or the
    records from before the shares"""
    return None if None in s10_pcts(recs) and TARGET_SHARE not in s10_pcts(recs) else TARGET_SHARE


def pct_name(pct):
    return "" if pct is None else f" at {fmt(pct)} %"


def agent_missing(recs, cpus, s10, quick, pct=None):
    """what scenario 10 did not measure at cpus and change share pct:
    [(point, why)] of the driver's grid, and point -> [(way, why)] of the
    ways of the points it did measure"""
    if cpus != AGENT_SIZE:
        grid = []
    elif pct is None:
        grid = AGENT_POINTS
    else:
        grid = [(r, m) for r, m, s in agent_grid(AGENT_POINTS, AGENT_SHARES) if s == pct]
    skipped = {x["params"]["what"] for x in sel(recs, "skipped", cpus=cpus)}
    points = [(p, "skipped by the time budget" if f"s10 {p[0]}x{p[1]}"
               + (f" at {pct}%" if pct is not None else "") in skipped else
               "not in a quick run" if quick else "no record")
              for p in grid if p not in s10]
    ways = {}
    for (r, m), v in s10.items():
        chk = [x["params"]["ways"].split(",") for x in sel(recs, "s10check", cpus=cpus, cgroups=m)]
        for label in AGENT_ORDER:
            if label in v:
                continue
            if pct not in (None, TARGET_SHARE) and label not in SHARE_WAYS:
                why = (f"not run at this share (at shares other than {TARGET_SHARE} % only "
                       + ", ".join(x for x in SHARE_WAYS if x != "idle") + ")")
            elif chk and AGENT_MODE[label] not in chk[0]:
                why = f"this kernel cannot (the boot's ways: {', '.join(chk[0])})"
            else:
                why = "no record (the run failed: see the driver's log)"
            ways.setdefault((r, m), []).append((label, why))
    return points, ways


def _measure(v, key):
    return v[key] if v and not v["fail"] else None


def _lacking(rows, key="readers_ms"):
    """why a ratio of these (way, summary) rows on measure key is not
    there ('' when it is)"""
    return ", ".join(f"no {w} row" if not v else f"{w} failed" if v["fail"] else
                     f"{w} did no cycle" if v["readers_ms"] is None else
                     f"no collector CPU in the {w} run" if v.get("collector_way") else
                     f"no flusher trace in the {w} run" for w, v in rows
                     if _measure(v, key) is None)


def _ratios(other, o, t, base="subtree"):
    """'name **Nx**' on each measure of the other way's row o / the
    base way's row t (the subtree's), or why not"""
    return ", ".join(f"{name} " + (f"**{fmt(ratio(o[key], t[key]))}x**"
                                   if ratio(_measure(o, key), _measure(t, key)) is not None else
                                   f"not measured ({_lacking(((other, o), (base, t)), key)})")
                     for key, name in S10_MEASURES)


def _flat(pts, key, at_most=None):
    """the per-cgroup cost on measure key at the points (m, summary) that
    have it: (ms, values in µs, max/min)"""
    have = [(m, v[key] * 1e3 / m) for m, v in pts if _measure(v, key) is not None]
    per = [x for _, x in have]
    return [m for m, _ in have], per, (max(per) / min(per) if len(per) >= 2 and min(per) else None)


def agent_background(recs, cpus, pct=None, scenario="s10"):
    """(readers, cgroups) -> the idle way's kworker time per cycle of the
    window (its readers read nothing and do no cycles: the window's
    kworker_ns / seconds * 1000 / period_ms) at change share pct: mean,
    min, max, rounds"""
    per = {}
    for x in sel(at_pct(recs, pct), scenario, cpus=cpus, mode="idle"):
        p = x["params"]
        cycles = p["seconds"] * 1000 / p["period_ms"]
        per.setdefault((p["readers"], p["cgroups"]), []).append(
            x["result"]["kworker_ns"] / cycles / 1e6)
    return {k: {"ms": sum(v) / len(v), "min": min(v), "max": max(v), "rounds": len(v)}
            for k, v in per.items()}


def _judge(a, b, ok, target):
    """'**Nx**: **met**' for a / b, or None when either is missing"""
    r = ratio(a, b)
    return None if r is None else f"**{fmt(r)}x** (target: {target}): **{'met' if ok(r) else 'missed'}**"


def shared_targets(s):
    """issue 43's strongest BPF design, the shared collector, against the
    subtrees at 1 and 16 readers x 1,000 (s: the s10 summary at
    AGENT_SIZE): the ratios on each measure, and each agent's own read per
    cgroup (what counts with 16); the change snapshots' target against it
    is changes_targets()'s"""
    out = []
    for r in (1, 16):
        pt = s.get((r, 1000), {})
        t, o = pt.get("subtree"), pt.get("bpfshared")
        at = f"{r} reader{'s' if r > 1 else ''} x 1,000 cgroups, {AGENT_SIZE} vCPUs"
        gone = _lacking((("subtree", t), ("bpfshared", o)))
        if gone:
            out.append(f"- the shared BPF collector vs subtrees, {at}: **not measured** ("
                       + (gone if pt else "the point is not in this run") + ")")
            continue
        out.append(f"- the shared BPF collector (bpfshared: its passes and the agents' map "
                   f"reads; cpu and memory, no io) / subtrees (cpu, memory and io), {at}: "
                   + _ratios("bpfshared", o, t) + f"; each agent's own read "
                   f"{fmt(o['reader_us_per_cg'])} µs per cgroup vs the subtree reader's "
                   f"{fmt(t['reader_us_per_cg'])} µs")
    return out


def _changes_vs(pt, at, other, what, factor, target, base="changes", said="change snapshots"):
    """a change-snapshot target (the base way's row, said so) against
    another way at one point, met or missed on each measure (attributable
    first), or why not measured"""
    t, o = pt.get(base), pt.get(other)
    gone = _lacking(((base, t), (other, o)))
    if gone:
        return (f"- {said} vs {what}, {at}: **not measured** ("
                + (gone if pt else "the point is not in this run") + f"; target: {target})")
    parts = []
    for key, name in S10_MEASURES:
        why = _lacking(((base, t), (other, o)), key)
        parts.append(f"{name} **not measured** ({why})" if why else
                     f"{name} {fmt(o[key])} vs {fmt(t[key])} ms per cycle, "
                     + _judge(o[key], t[key], lambda r: r >= factor, target))
    return f"- {said} vs {what}, {at}: " + parts[0] + "; also " + "; ".join(parts[1:])


def changes_targets(s, pct):
    """issue 43's targets for change snapshots (s: the s10 summary at
    AGENT_SIZE and the targets' share pct): against classic, below's BPF
    collector and the shared one at 1 x 1,000 (and 16 x 1,000 for the
    shared one), and their cost per changed cgroup flat from 1,000 to
    10,000 cgroups"""
    share = f", {fmt(pct)} % changing" if pct is not None else ""
    at = f"1 reader x 1,000 cgroups{share}, {AGENT_SIZE} vCPUs"
    pt = s.get((1, 1000), {})
    out = [_changes_vs(pt, at, "classic", "classic", CH_VS_CLASSIC, f"at least {CH_VS_CLASSIC}x"),
           _changes_vs(pt, at, "bpfmap", "BPF (bpfmap: cpu, memory and io, as below ships it)",
                       CH_VS_BPF, f"at least {CH_VS_BPF}x")]
    for r in (1, 16):
        out.append(_changes_vs(s.get((r, 1000), {}),
                               f"{r} reader{'s' if r > 1 else ''} x 1,000 cgroups{share}, "
                               f"{AGENT_SIZE} vCPUs", "bpfshared",
                               "the shared BPF collector (bpfshared: its pass plus the agents' "
                               "reads; cpu and memory, no io)", CH_VS_SHARED,
                               "no more than it: at least 1x"))
    pts = sorted((m, v["changes"]) for (r, m), v in s.items()
                 if r == 1 and 1000 <= m <= 10000 and v.get("changes"))
    parts = []
    for key, name in S10_MEASURES:
        have = [(m, x[key] * 1e3 / changed_cgroups(x, m, pct)) for m, x in pts
                if _measure(x, key) is not None and changed_cgroups(x, m, pct)]
        ms, per = [m for m, _ in have], [u for _, u in have]
        if 1000 in ms and 10000 in ms:
            parts.append(f"{name} {' / '.join(fmt(u) for u in per)} µs at "
                         f"{' / '.join(fmt(m) for m in ms)} cgroups, max/min "
                         + _judge(max(per), min(per), lambda r: r <= CH_FLAT,
                                  f"within {CH_FLAT}x"))
        else:
            parts.append(f"{name} **not measured** (needs 1,000 and 10,000; measured: "
                         f"{', '.join(fmt(m) for m in ms) or 'neither'}; target: within "
                         f"{CH_FLAT}x)")
    out.append(f"- change snapshots' CPU per changed cgroup and cycle, 1 reader{share}, "
               f"1,000 to 10,000 cgroups, {AGENT_SIZE} vCPUs: " + parts[0] + "; also "
               + "; ".join(parts[1:]))
    return out


def agent_targets(recs):
    """issue 29's targets, each said as met / missed on each measure the
    records hold, or as not measured"""
    pct = target_pct(recs)
    s = agent_summary(recs, AGENT_SIZE, pct)
    pt = s.get((1, 1000), {})
    at = f"1 reader x 1,000 cgroups{', ' + fmt(pct) + ' % changing' if pct is not None else ''}, " \
         f"{AGENT_SIZE} vCPUs"
    out = []

    def versus(other, what, factor):
        t, o = pt.get("subtree"), pt.get(other)
        gone = _lacking((("subtree", t), (other, o)))
        if gone:
            return (f"- subtrees vs {what}, {at}: **not measured** ("
                    + (gone if pt else "the point is not in this run")
                    + f"; target: at least {factor}x less)")
        parts = []
        for key, name in S10_MEASURES:
            why = _lacking((("subtree", t), (other, o)), key)
            parts.append(f"{name} **not measured** ({why})" if why else
                         f"{name} {fmt(o[key])} vs {fmt(t[key])} ms per cycle, "
                         + _judge(o[key], t[key], lambda r: r >= factor, f"at least {factor}x"))
        cut = " (the BPF row's CPU per cycle includes a pass cut short: an upper bound)" \
            if o.get("cut_pass") else ""
        cut += (" (the subtrees' flushers per cycle are an upper bound: their trace holds "
                "runs from before the window)" if t.get("flusher_over") else "")
        return f"- subtrees vs {what}, {at}: " + parts[0] + "; also " + "; ".join(parts[1:]) + cut

    out.append(versus("classic", "classic", VS_CLASSIC))
    line = versus("bpfmap", "BPF (bpfmap: cpu, memory and io, as below ships it)", VS_BPF)
    t, n = pt.get("subtree"), pt.get("bpfmap-noio")
    if not _lacking((("subtree", t), ("bpfmap-noio", n))):
        line += "; without io (bpfmap-noio): " + _ratios("bpfmap-noio", n, t)
    out.append(line)
    out.extend(shared_targets(s))
    out.extend(changes_targets(s, pct))
    pts = sorted((m, v["subtree"]) for (r, m), v in s.items()
                 if r == 1 and 1000 <= m <= 10000 and v.get("subtree"))
    parts = []
    for key, name in S10_MEASURES:
        ms, per, r = _flat(pts, key)
        if 1000 in ms and 10000 in ms:
            parts.append(f"{name} {' / '.join(fmt(x) for x in per)} µs at "
                         f"{' / '.join(fmt(m) for m in ms)} cgroups, max/min "
                         + _judge(max(per), min(per), lambda r: r <= FLAT, f"within {FLAT}x"))
        else:
            parts.append(f"{name} **not measured** (needs 1,000 and 10,000; measured: "
                         f"{', '.join(fmt(m) for m in ms) or 'neither'}; target: within {FLAT}x)")
    over = [fmt(m) for m, v in pts if v.get("flusher_over")]
    out.append(f"- the subtrees' CPU per cgroup and cycle, 1 reader, 1,000 to 10,000 cgroups, "
               f"{AGENT_SIZE} vCPUs: "
               + parts[0] + "; also " + "; ".join(parts[1:])
               + (f" (at {', '.join(over)} cgroups the flushers per cycle are an upper bound: "
                  f"their trace holds runs from before the window)" if over else ""))
    s11 = {k: v for k, v in memloop_summary(recs, AGENT_SIZE).items() if not v["fail"]}
    tx, st, bp = (s11.get(k) for k in ("text", "subtree", "bpf"))
    if tx and st:
        line = (f"- the memory experiment, one cgroup's memory stats, {fmt(st['count'])} reads, "
                f"{AGENT_SIZE} vCPUs: text + parse {fmt(tx['us'])} µs vs the subtree read {fmt(st['us'])} µs "
                f"CPU per read, " + _judge(tx["us"], st["us"], lambda r: r >= MEM_VS_TEXT,
                                          f"at least {MEM_VS_TEXT}x"))
        line += (f"; text + parse vs the BPF kfuncs ({fmt(bp['us'])} µs): "
                 f"**{fmt(tx['us'] / bp['us'])}x** (the slides' BPF: {SLIDES_BPF}x)" if bp else
                 f"; the BPF kfuncs: not measured (the slides' BPF: {SLIDES_BPF}x)")
        out.append(line)
    else:
        out.append(f"- the memory experiment, text + parse vs the subtree read, {AGENT_SIZE} vCPUs: "
                   f"**not measured** (no successful "
                   f"{' or '.join(k for k, v in (('text', tx), ('subtree', st)) if not v)} "
                   f"run; target: at least {MEM_VS_TEXT}x)")
    return out


def perf_symbols(top):
    """a perf top list (perf_profile's "top": "  7.03%  [k] symbol") ->
    (share %, "[k]" or "[.]", symbol) for each symbol line"""
    for line in top:
        f = line.split()
        if len(f) >= 3 and f[0].endswith("%"):
            yield float(f[0][:-1]), f[-2], f[-1]


# the subtree reader's profile (s10prof), its kernel symbols by what they
# do; the rest of the kernel's samples are "other kernel" (the syscall,
# kernfs, scheduling), user space's are the decoding
AGENT_PROF_GROUPS = (
    ("the memory records (memory.stat's items per cgroup)", ("memcg_",)),
    ("the io records", ("blkcg", "blkg", "blk_")),
    ("the cpu records", ("cgroup_base_stat", "cputime", "cgroup_rstat", "css_rstat",
                         "cpu_stat_stream")),
    ("the walk over the subtree", ("cgroup_stat_stream", "stat_stream_", "css_next_descendant")),
    ("the copy out", ("rep_movs", "copy_user", "_copy_to_iter", "copy_to_user")),
)


def agent_profile_shares(top, groups=AGENT_PROF_GROUPS,
                         user="user space (decoding the records and using the values)"):
    """a perf top list -> [(group, share %)], then ("other kernel", %) and
    (user, %): every symbol over the list's cut, in the first group whose
    prefixes it has"""
    shares = {g: 0.0 for g, _ in groups}
    other = in_user = 0.0
    for pct, space, name in perf_symbols(top):
        if space != "[k]":
            in_user += pct
            continue
        for g, prefixes in groups:
            if name.startswith(prefixes):
                shares[g] += pct
                break
        else:
            other += pct
    return list(shares.items()) + [
        ("the rest of the kernel (the system call, kernfs, scheduling)", other), (user, in_user)]


def agent_close(recs, n, v):
    """at 1 x 1,000: when the subtrees miss a target against classic or
    BPF, what this run says would close it (the cost's parts, the profile)"""
    t = v.get("subtree")
    if not t or t["fail"] or t["attr_ms"] is None:
        return ""
    missed = []
    for other, factor in (("classic", VS_CLASSIC), ("bpfmap", VS_BPF)):
        o = v.get(other)
        if o and not o["fail"] and o["attr_ms"] and o["attr_ms"] / t["attr_ms"] < factor:
            missed.append((other, factor, o["attr_ms"] / factor))
    if not missed:
        return ""
    need = min(m[2] for m in missed)
    fl = t["flusher_by_ctrl"]
    parts = (f"the reader's {fmt(t['readers_ms'])} ms (user {fmt(t['user_ms'])}, system "
             f"{fmt(t['sys_ms'])}) and the flushers' {fmt(t['flusher_ms'])} ms"
             + (f" ({per_ctrl(fl)} for cpu / memory / io)" if fl else ""))
    flushers = t["flusher_ms"] or 0
    text = (f"What would close the gap: the subtrees' {fmt(t['attr_ms'])} ms per cycle here "
            f"are {parts}. "
            + "; ".join(f"{f}x against {o} needs at most {fmt(lim)} ms" for o, f, lim in missed))
    if flushers >= need:
        text += ": the flushers alone are over that."
    else:
        text += (f", so the reader would have to cost {fmt(t['readers_ms'] / (need - flushers))}x "
                 f"less, the flushers as they are.")
    prof = [x for x in sel(recs, "s10prof", cpus=n) if x["result"].get("top")
            and x["params"].get("way", "subtree") == "subtree"]
    if not prof:
        return text + (" No profile of the subtree reader was taken in this run (`s10prof`): "
                       "what in the read to make cheaper is not measured here.\n")
    r = prof[-1]["result"]
    shares = agent_profile_shares(r["top"])
    text += (f" Where the reader's time goes (`perf record -e cpu-clock -g` over one run of "
             f"the subtree way on the same tree, the flushers at "
             f"{prof[-1]['params'].get('period_ms', '?')} ms so that reads fill the samples; "
             f"{r.get('samples', 0):,} samples, symbols with at least 0.7 % of them): "
             + ", ".join(f"{g} {fmt(p)} %" for g, p in shares if p)
             + ". The biggest part is where a cheaper read has to come from.\n")
    return text + "\n```\n" + "\n".join(r["top"][:25]) + "\n```\n"


# the change reader's profile (s10prof, way changes), its kernel symbols
# by what they do: the walk that steps over the unchanged cgroups, the
# records of the changed ones, the copy out; the rest as for the subtree
CHANGES_PROF_GROUPS = (
    ("the walk over the subtree (stepping over unchanged cgroups)",
     # the walk (stat_stream_fill_cgroups) is inlined into the read itself
     ("cgroup_stat_stream_subtree_read", "stat_stream_skip", "stat_stream_enter",
      "stat_stream_css_listed", "stat_stream_resume", "stat_stream_fill_cgroups",
      "stat_stream_cgroup_css", "css_next_descendant", "css_next_child",
      "css_rightmost_descendant", "css_tryget")),
    ("the permission checks", ("stat_stream_may_", "generic_permission", "inode_permission",
                               "kernfs_iop_permission")),
    ("the changed cgroups' records", ("stat_stream_", "stat_pub_", "memcpy", "__memcpy")),
    ("the copy out", ("rep_movs", "copy_user", "_copy_to_iter", "copy_to_user")),
)


def changes_close(recs, n, s):
    """at 16 x 1,000 and the targets' share: when the change snapshots cost
    more than the shared BPF collector, why (its pass is paid once, each
    agent's own read is what grows with the agents) and where a change
    reader's time goes (s10prof's profile of the changes way)"""
    pt = s.get((16, 1000), {})
    t, o = pt.get("changes"), pt.get("bpfshared")
    if _lacking((("changes", t), ("bpfshared", o))) or not o["attr_ms"] or not t["attr_ms"]:
        return ""
    if o["attr_ms"] / t["attr_ms"] >= CH_VS_SHARED:
        return ""
    per_c, per_o = t["readers_ms"] / 16, o["readers_ms"] / 16
    text = (f"Why the change snapshots lose to the shared BPF collector at 16 readers x 1,000 "
            f"cgroups: the collector's pass costs {fmt(o['collector_ms'])} ms a cycle once, and "
            f"each agent's own read of its map {fmt(per_o)} ms; each change reader's own read "
            f"costs {fmt(per_c)} ms (user {fmt(t['user_ms'] / 16)}, system "
            f"{fmt(t['sys_ms'] / 16)}), {fmt(per_c / per_o) if per_o else '?'}x an agent's map "
            f"read, and the stream's publishers {fmt(t['flusher_ms'])} ms once. With R agents "
            f"the change snapshots cost about {fmt(t['flusher_ms'])} + R x {fmt(per_c)} ms and "
            f"the collector {fmt(o['collector_ms'])} + R x {fmt(per_o)} ms.")
    prof = [x for x in sel(recs, "s10prof", cpus=n, way="changes") if x["result"].get("top")]
    if not prof:
        return text + (" No profile of the change reader was taken in this run (`s10prof`, "
                       "way changes).\n")
    r, p = prof[-1]["result"], prof[-1]["params"]
    parts = agent_profile_shares(r["top"], CHANGES_PROF_GROUPS,
                                 "user space (decoding the records, keeping every cgroup's state)")
    text += (f" Where a change reader's time goes (`perf record -e cpu-clock -g` over one run "
             f"of the changes way, {p.get('readers', 1)} reader{'s' if p.get('readers', 1) > 1 else ''} "
             f"on a tree of {fmt(p.get('cgroups'))} cgroups, "
             f"{fmt(p.get('changing_pct', TARGET_SHARE))} % of them changing, the publishers at "
             f"{p.get('period_ms', '?')} ms; {r.get('samples', 0):,} samples, symbols with at "
             f"least 0.7 % of them): "
             + ", ".join(f"{g} {fmt(v)} %" for g, v in parts if v) + ".")
    big, share = max(parts, key=lambda gv: gv[1])
    if share:
        text += (f" The biggest part, {big}, is where a cheaper change read has to come from"
                 + (": a read that visits only the changed cgroups, not every sibling on the "
                    "way to them" if big == CHANGES_PROF_GROUPS[0][0] else "") + ".")
    text += "\n"
    return text + "\n```\n" + "\n".join(r["top"][:25]) + "\n```\n"


def s10_agent(R):
    """scenario 10: what an agent reads, each way, per point and change share"""
    recs = R.recs
    w = Md()
    w("## What an agent reads: cpu, memory and io (scenario 10)\n")
    w(S10_METHOD)
    w(flusher_clock_note(sel(recs, "s10")))
    for n in agent_sizes(recs):
        w(f"### {n} vCPUs\n")
        listed = []
        pcts = s10_pcts(recs, n) or [target_pct(recs)]
        if n == AGENT_SIZE and any(p is not None for p in pcts):
            # a run of the change shares: the grid's shares it has no record of too
            pcts += [p for p in AGENT_SHARES if p not in pcts]
        for pct in pcts:
            s = agent_summary(recs, n, pct)
            bgs = agent_background(recs, n, pct)
            points, ways = agent_missing(recs, n, s, R.quick, pct)
            listed += [f"{r}x{m}{pct_name(pct)} ({why})" for (r, m), why in points]
            if not s:
                continue
            period, secs = next(iter(s.values()))["period"], next(iter(s.values()))["seconds"]
            w(f"Every {period} ms for {fmt(secs)} s per run (a window of "
              f"{fmt(secs * 1000 / period)} cycles)"
              + (f", {fmt(pct)} % of the tree's cgroups changing every cycle" if pct is not None
                 else "") + ".\n")
            for (r, m), v in sorted(s.items(), key=lambda kv: (kv[0][1], kv[0][0])):
                w(f"#### {r} reader{'s' if r > 1 else ''} x {fmt(m)} cgroups{pct_name(pct)}\n")
                s10_point(w, recs, n, pct, (r, m), v, bgs.get((r, m)), ways)
            s10_flat(w, s, n, pct)
        if not any(agent_summary(recs, n, p) for p in s10_pcts(recs, n)):
            w("Not measured in this run" + (": " + ", ".join(listed) if listed else "") + ".\n")
            continue
        s10_by_share(w, recs, n)
        if n == AGENT_SIZE:
            w(changes_close(recs, n, agent_summary(recs, n, target_pct(recs))))
        s10_checks(w, recs, n)
        if listed:
            w(f"Not measured at {n} vCPUs: {', '.join(listed)}.\n")
    return w.text()


# --- scenario 16: the agent with pressure (issue 44) -------------------------

# the ways to compare (the idle way is the background they run on)
PSI_ORDER = [label for label, mode, _ in PRESSURE_WAYS if mode != "idle"]
PSI_MODE = {label: mode for label, mode, _ in PRESSURE_WAYS}
# issue 44's targets at 1 x 1,000, 1 % changing: pressure alone through the
# stream (change snapshots) against the text files, and the whole agent
# (cpu, memory, io, pressure) against classic: times less attributable CPU
PSI_VS_TEXT, PSI_AGENT_VS_CLASSIC = 10, 20
# a point's ratios: (the other way, the base way), the targets' first
PSI_RATIOS = (("pressure-classic", "pressure-changes"), ("pressure-classic", "pressure-subtree"),
              ("pressure-classic", "pressure-stream"), ("classic", "changes"),
              ("classic", "subtree"), ("classic", "stream"), ("subtree", "changes"))


def psi_summary(recs, cpus):
    """tele_summary of scenario 16 (its runs are at the targets' share)"""
    return tele_summary(recs, "s16", cpus, by="attr_ms")


def pressure_targets(recs):
    """issue 44's two targets at 1 x 1,000, 1 % changing, 2 vCPUs, met or
    missed on each measure, or not measured"""
    pt = psi_summary(recs, AGENT_SIZE).get((1, 1000), {})
    at = f"1 reader x 1,000 cgroups, {fmt(TARGET_SHARE)} % changing, {AGENT_SIZE} vCPUs"
    return [_changes_vs(pt, at, "pressure-classic", "the text files (pressure-classic: "
                        "cpu.pressure, memory.pressure, io.pressure per cgroup)", PSI_VS_TEXT,
                        f"at least {PSI_VS_TEXT}x", base="pressure-changes",
                        said="pressure alone, change snapshots of pressure.stream.subtree"),
            _changes_vs(pt, at, "classic", "classic", PSI_AGENT_VS_CLASSIC,
                        f"at least {PSI_AGENT_VS_CLASSIC}x",
                        said="the whole agent (cpu, memory, io and pressure), change snapshots")]


def psi_records(v, m, pct):
    """what a point's snapshots carried per cycle, each controller, and
    pressure's against cpu's in the change snapshots (its averages decay
    for minutes after a stall)"""
    parts = []
    for label in ("changes", "pressure-changes", "subtree", "pressure-subtree"):
        x = v.get(label)
        if not x or x["fail"] or not x.get("records"):
            continue
        parts.append(f"{label}: " + ", ".join(
            f"{c} {fmt(n)} (at most {fmt(x['records_max'].get(c))})"
            for c, n in x["records"].items()))
    if not parts:
        return ""
    out = ("Records per cycle in the snapshots (per reader and cycle; the most one snapshot "
           "held in brackets; a full snapshot lists every cgroup and the parent, a change "
           "snapshot those whose values changed since the reader's last one): "
           + "; ".join(parts) + ".\n")
    ch = v.get("changes") or {}
    rc = ch.get("records", {}) if not ch.get("fail") else {}
    alone = ((v.get("pressure-changes") or {}).get("records") or {}).get("pressure")
    psi = rc.get("pressure", alone)
    if psi is None:
        return out
    k = changed_cgroups(ch or v.get("pressure-changes"), m, pct)
    cpu = rc.get("cpu")
    decay = ("PSI recomputes a cgroup's averages every 2 s and they decay for minutes after "
             "its last stall (avg300 over about 5 minutes), so a cgroup that stalled keeps "
             "changing in pressure after its other values have stopped")
    out += (f"\nThe change share asks {fmt(k)} cgroups (their parent changes with them). "
            f"A change snapshot of pressure carried **{fmt(psi)} records per cycle**"
            + (f", cpu's {fmt(cpu)}" if cpu is not None else "")
            + (f": more, as {decay}.\n" if cpu is not None and psi > cpu else
               ": no more here (no cgroup outside the share had averages still decaying); "
               f"after a burst of stalls there would be more ({decay}).\n"))
    return out


def psi_point(w, recs, n, point, v, bg, kernel_ways):
    """one point's table of the ways, what the snapshots carried, the ratios"""
    r, m = point
    w(share_said(v, m, TARGET_SHARE))
    w(f"Background (the idle way): **{fmt(bg['ms'])} ms per cycle**.\n" if bg else
      "Background: not measured (no idle-way record at this point).\n")
    hs = hierarchy_said(recs, "s16", n, TARGET_SHARE, point)
    if hs:
        w(hs)
    head = [h.replace("cpu / memory / io", "cpu / memory / io / pressure") for h in AGENT_HEAD]
    rows = []
    for label in PSI_ORDER:
        x = v.get(label)
        if x:
            rows.append(agent_row(label, x, bg, PSI_CTRLS))
            continue
        why = (f"this kernel cannot (the boot's ways: {', '.join(kernel_ways)})"
               if kernel_ways and PSI_MODE[label] not in kernel_ways else
               "no record (the run failed: see the driver's log)")
        rows.append([label, f"not measured: {why}"] + [""] * (len(head) - 2))
    w(table(head, rows))
    rec = psi_records(v, m, TARGET_SHARE)
    if rec:
        w(rec)
    lines = []
    for other, base in PSI_RATIOS:
        o, t = v.get(other), v.get(base)
        gone = _lacking(((other, o), (base, t)))
        lines.append(f"- {other} / {base}: "
                     + (f"not measured ({gone})" if gone else _ratios(other, o, t, base)))
    w("\n".join(lines) + "\n")


def s16_pressure(R):
    """scenario 16: the agent with pressure, classic against the streams"""
    recs = R.recs
    w = Md()
    w("## The agent with pressure: PSI classic against streamed (scenario 16)\n")
    w(PSI_METHOD.format(stall_us=fmt(STALL_US), pct=fmt(TARGET_SHARE)))
    w(flusher_clock_note(sel(recs, "s16")))
    w("The targets (issue 44; attributable CPU first, as in scenario 10):\n")
    w("\n".join(pressure_targets(recs)) + "\n")
    sizes = sorted({x["cpus"] for x in sel(recs, "s16")})
    skipped = [x["params"]["what"] for x in sel(recs, "skipped")
               if x["params"]["what"].startswith("s16")]
    if not sizes:
        w("Not measured in this run" + (": " + ", ".join(skipped) if skipped else
                                        " (no scenario 16 record)") + ".\n")
        return w.text()
    for n in sizes:
        w(f"### {n} vCPUs\n")
        s = psi_summary(recs, n)
        bgs = agent_background(recs, n, TARGET_SHARE, "s16")
        chk = [x["params"]["ways"].split(",") for x in sel(recs, "s16check", cpus=n)]
        for (r, m), v in sorted(s.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            w(f"Every {v['period']} ms for {fmt(v['seconds'])} s per run.\n")
            w(f"#### {r} reader{'s' if r > 1 else ''} x {fmt(m)} cgroups at "
              f"{fmt(TARGET_SHARE)} %\n")
            psi_point(w, recs, n, (r, m), v, bgs.get((r, m)), chk[0] if chk else None)
        absent = [f"{r}x{m}" for r, m in PRESSURE_POINTS if (r, m) not in s]
        if absent or skipped:
            w("Not measured: " + ", ".join(absent + [x for x in skipped if x not in absent])
              + ".\n")
        s10_checks(w, recs, n, "s16")
    return w.text()


S13_WAYS = (("classic", "classic text (cpu.stat, io.stat per child, on the grid)"),
            ("bpfmap", "below's BPF collector (an iterator pass; io.stat per child)"),
            ("subtree", "full subtree snapshots (REMOVED records included)"),
            ("changes", "change snapshots (REMOVED records included)"))


def s13_removals(R):
    """scenario 13: the share of short-lived cgroups' usage each way accounts for"""
    w = Md()
    w("## Cgroups that live between two reads: REMOVED records (scenario 13)\n")
    w("One short-lived cgroup is started every few hundred milliseconds under one parent: "
      "its one task uses a known CPU time (its own CPU clock), writes a known number of "
      "bytes with O_DIRECT to a loop device and exits, and the cgroup is removed. The "
      "truth is each cgroup's `cpu.stat` `usage_usec` and `io.stat` `wbytes` read after its "
      "task exited, just before the rmdir (its final values). Meanwhile one accountant per "
      "way (`cgbench account`, all at once over the same churn) bills the parent's "
      "children what it sees every cycle: the growth of a cgroup's values since its last "
      "read, a new cgroup's whole values, and (the stream ways) each REMOVED record's "
      "final values over the last read. The flushers publish at the accountants' "
      "period. A way without REMOVED records bills only what it saw at its reads: a "
      "cgroup that lived between two of them, and the last part of any other, is lost "
      "to it (the parent's own counters include it, but not as that cgroup's).\n")
    for n in sorted({x["cpus"] for x in sel(R.recs, "s13")}):
        x = sel(R.recs, "s13", cpus=n)[-1]
        p, res = x["params"], x["result"]
        churn = res.get("churn")
        w(f"### {n} vCPUs\n")
        if not churn:
            w("**The churn failed** (cgbench churnrm gave no result): nothing to account "
              "against.\n")
            continue
        w(f"{fmt(churn['cgroups'])} cgroups in {fmt(churn['wall_s'])} s, one started every "
          f"{fmt(p['every_ms'])} ms, each living {fmt(churn['life_ms_avg'])} ms on average "
          f"(at most {fmt(churn['life_ms_max'])}); accountants every {fmt(p['period_ms'])} ms. "
          f"In all they used **{fmt(churn['usage_usec'] / 1e3)} ms** of CPU and wrote "
          f"**{fmt(churn['wbytes'] / 1048576)} MiB**.\n")
        rows = []
        for way, name in S13_WAYS:
            r = res["ways"].get(way)
            a = r and r.get("account")
            if not r:
                rows.append([name, "not run on this kernel"] + [""] * 6)
                continue
            if not a:
                rows.append([name, f"failed (exit {r['rc']}): {one_line(r['stderr'])[-200:]}"]
                            + [""] * 6)
                continue
            share = (lambda got, of: f"**{fmt(got * 100 / of)} %**" if of else "–")
            rows.append([name, share(a["usage_usec"], churn["usage_usec"]),
                         share(a["wbytes"], churn["wbytes"]), fmt(a["cgroups_seen_live"]),
                         fmt(a["removed_records"]), fmt(a["lost"]), fmt(a["errors"]),
                         fmt(a["passes"])])
        w(table(["way", "CPU accounted", "bytes accounted", "cgroups seen alive",
                 "REMOVED records", "removals lost", "errors", "passes"], rows))
    if not sel(R.recs, "s13"):
        w("Not measured in this run (no scenario 13 record: a kernel without the subtree "
          "files, or the time budget; see the driver's log).\n")
    return w.text()


def s14_unprivileged(R):
    """scenario 14: the agent scenario run by uid 65534 in its delegated subtree"""
    recs = R.recs
    w = Md()
    w("## An unprivileged agent in a delegated subtree (scenario 14)\n")
    if not sel(recs, "s14") and not sel(recs, "s14refused"):
        w("Not measured in this run (no scenario 14 record; see the driver's log).\n")
        return w.text()
    w("Scenario 10's agent (cpu, memory and io of every cgroup, 1 % of them changing) run "
      "by uid 65534 (nobody, no supplementary groups) over cgroups it made itself in the "
      "subtree delegated to it (the directory and its `cgroup.procs`, `cgroup.threads` and "
      "`cgroup.subtree_control` chowned to it, as cgroup-v2.rst's delegation has it). The "
      "interval is the admin's (root's knob); the agent only reads. The shared BPF "
      "collector is root's, and the admin opens its pin to the agent (mode 0666: a BPF "
      "map is mmapped through a writable fd; the map is frozen): then the agent sees every "
      "cgroup the collector walks, whatever the directories' permissions, since a map has "
      "no permission model of its own.\n")
    for x in sel(recs, "s14refused"):
        p, r = x["params"], x["result"]
        msg = [l for l in r["stderr"].splitlines() if l.strip()]
        w(f"- {p['way']} as uid {p['uid']}: **cannot run** (exit {r['rc']}): "
          f"`{one_line(msg[-1]) if msg else 'no message'}`.\n")
    for n in sorted({x["cpus"] for x in sel(recs, "s14")}):
        s = tele_summary(recs, "s14", n, by="attr_ms")
        if not s:
            continue
        bgs = agent_background(recs, n, TARGET_SHARE, scenario="s14")
        w(f"### {n} vCPUs\n")
        for (r, m), v in sorted(s.items()):
            bg = bgs.get((r, m))
            w(f"#### {r} reader x {fmt(m)} cgroups, uid 65534\n")
            hs = hierarchy_said(recs, "s14", n, TARGET_SHARE, (r, m))
            if hs:
                w(hs)
            rows = []
            for label in AGENT_ORDER:
                x = v.get(label)
                if not x:
                    continue
                rows.append(agent_row(label, x, bg))
            w(table(AGENT_HEAD, rows))
            lines = []
            for other, base in (("classic", "changes"), ("subtree", "changes"),
                                ("bpfshared", "changes"), ("classic", "subtree")):
                o, t = v.get(other), v.get(base)
                gone = _lacking(((other, o), (base, t)))
                lines.append(f"- {other} / {base}: "
                             + (f"not measured ({gone})" if gone else _ratios(other, o, t, base)))
            w("\n".join(lines) + "\n")
    w(perm_cost(recs))
    return w.text()


def perm_cost(recs):
    """s14perm: the subtree walk's permission checks, root against the owner"""
    runs = sel(recs, "s14perm")
    if not runs:
        return ""
    best, every = {}, {}
    for x in runs:
        r = x["result"]
        pr = (r or {}).get("per_reader") or [{}]
        if not r or not pr[0].get("cycles"):
            continue
        per = pr[0]["cpu_ns"] / pr[0]["cycles"] / 1e3
        who = x["params"]["who"]
        best[who] = min(best.get(who, per), per)
        every.setdefault(who, []).append(per)
    m = runs[0]["params"]["cgroups"]
    w = Md()
    w(f"The permission checks: the cpu subtree file of the same {fmt(m)} cgroups read by "
      "root (`CAP_DAC_READ_SEARCH` skips the checks) and by their owner, uid 65534 (one "
      "search-permission check per entered directory), alternately, the cpu flusher at "
      f"{fmt(runs[0]['params']['period_ms'])} ms; the cheapest round of each:\n")
    if "root" not in best or "owner" not in best:
        w("- not measured (a run failed: " + ", ".join(sorted({"root", "owner"} - set(best)))
          + " has no result)\n")
        return w.text()
    d = best["owner"] - best["root"]
    span = {k: (f" ({len(v)} rounds, {fmt(min(v))}-{fmt(max(v))})" if len(v) > 1 else "")
            for k, v in every.items()}
    w(f"- root {fmt(best['root'])} µs per read{span['root']}, uid 65534 "
      f"{fmt(best['owner'])} µs{span['owner']}: the checks cost **{fmt(d * 1e3 / (m + 1))} ns "
      f"per cgroup** ({fmt(d)} µs per read of {fmt(m + 1)} cgroups, "
      f"{fmt(best['owner'] / best['root'])}x).\n")
    return w.text()


def share_said(v, m, pct):
    """the change share at a point: asked, and what the changer did (its
    visits per period over each way's run)"""
    if pct is None:
        return ""
    got = [x["changer"] for x in v.values() if isinstance(x, dict) and x.get("changer")]
    k = got[0]["cgroups"] if got else round(m * pct / 100)
    vpp = [g["visits_per_period"] for g in got if g.get("visits_per_period") is not None]
    missed = sum(g.get("missed") or 0 for g in got)
    if not k:
        return "The change share: none of the cgroups changes (0 %).\n"
    if not vpp:
        return (f"The change share: {fmt(k)} of the {fmt(m)} cgroups ({fmt(pct)} %) asked to "
                f"change every cycle; **the changer's visits were not read**.\n")
    lo, hi = min(vpp), max(vpp)
    span = (lambda a, b: fmt(a) if fmt(a) == fmt(b) else f"{fmt(a)}-{fmt(b)}")
    return (f"The change share: {fmt(k)} of the {fmt(m)} cgroups ({fmt(pct)} %) asked to "
            f"change every cycle; the changer made {span(lo, hi)} visits per period over the "
            f"runs ({span(lo * 100 / m, hi * 100 / m)} %)"
            + (f", {fmt(missed)} periods it slept through" if missed else "") + ".\n")


def hierarchy_said(recs, scenario, n, pct, point):
    """what the hierarchy held during a point's runs (the root's
    nr_descendants and nr_dying_descendants after each run, which the
    driver records since 2026-12-02): every stream flusher walks its
    controller's whole tree, so its cost follows this number, not the
    point's; "" for a run that did not record it"""
    r, m = point
    got = [(x["result"]["hierarchy_cgroups"], x["result"].get("hierarchy_dying") or 0)
           for x in sel(at_pct(recs, pct), scenario, cpus=n, readers=r, cgroups=m)
           if x["result"].get("hierarchy_cgroups") is not None]
    if not got:
        return ""
    live, dying = [g[0] for g in got], [g[1] for g in got]
    span = (fmt(min(live)) if min(live) == max(live)
            else f"{fmt(min(live))}-{fmt(max(live))}")
    return (f"The hierarchy held {span} cgroups ({fmt(max(dying))} of them dying at most) "
            f"during this point's runs: each flusher's publication walks all of them.\n")


def s10_point(w, recs, n, pct, point, v, bg, ways):
    """one point's table of the ways, its notes and ratios"""
    r, m = point
    secs, period = v["seconds"], v["period"]
    w(share_said(v, m, pct))
    if bg:
        w(f"Background (the idle way: readers that read nothing, no flusher, the "
          f"same window and load; its readers do no cycles, so this is its kworker "
          f"time / the window's {fmt(secs * 1000 / period)} cycles): "
          f"**{fmt(bg['ms'])} ms per cycle**"
          + (f" (mean of {bg['rounds']} rounds, {fmt(bg['min'])}-{fmt(bg['max'])})"
             if bg["rounds"] > 1 else " (one round)") + ".\n")
    else:
        w("Background: not measured (no idle-way record at this point).\n")
    hs = hierarchy_said(recs, "s10", n, pct, point)
    if hs:
        w(hs)
    rows = []
    for label in AGENT_ORDER:
        x = v.get(label)
        if not x:
            why = dict(ways.get((r, m), [])).get(label, "")
            rows.append([label, f"not measured: {why}"] + [""] * (len(AGENT_HEAD) - 2))
        else:
            rows.append(agent_row(label, x, bg))
    w(table(AGENT_HEAD, rows))
    over = [(k, x) for k, x in v.items() if isinstance(x, dict) and x.get("flusher_over")]
    if over:
        mean = [f"{k} {fmt(x['flusher_mean_ms'])} ms" for k, x in over
                if x["flusher_mean_ms"] is not None]
        w("† the flusher trace spans the whole cgbench run, its set-up before the "
          "window included, and holds more runs of a controller's flusher than the "
          "window has cycles: the row's flushers and attributable CPU per cycle are "
          "upper bounds"
          + (f" (at one run a cycle per controller, their mean runs add up to "
             f"{', '.join(mean)} per cycle)" if mean else "") + ".\n")
    if any(x and x.get("cut_pass") for x in v.values() if isinstance(x, dict)):
        w("\\* the window's end cut a BPF pass inside its per-cgroup io.stat reads: "
          "its CPU is in the row, the pass is not in its cycles (how much of it ran "
          "is not recorded), so the row's CPU per cycle is an upper bound.\n")
    miss = [x for x in AGENT_ORDER if x != "subtree" and v.get(x) and v[x]["bpf_missing"]]
    if miss:
        w("BPF keys missing (memory.stat items the kfuncs did not give): "
          + ", ".join(f"{x} {v[x]['bpf_missing']}" for x in miss) + ".\n")
    sh = v.get("bpfshared")
    if sh and not sh["fail"] and sh["retries"]:
        w(f"bpfshared: {fmt(sh['retries'])} reads (all readers) met a pass of the "
          f"collector under way and were taken again.\n")
    lines = []
    every = pct in (None, TARGET_SHARE)     # every way ran at this share
    for base, others in (("subtree", ("classic", "bpfmap", "bpfmap-noio", "bpfshared")),
                         ("changes", ("classic", "bpfmap", "bpfshared", "subtree"))):
        t = v.get(base)
        if base == "changes" and not t and pct is None:
            continue                # a run from before the changes way
        for other in others:
            if not every and other not in SHARE_WAYS:
                continue
            o = v.get(other)
            gone = _lacking(((other, o), (base, t)))
            lines.append(f"- {other} / {base}: "
                         + (f"not measured ({gone})" if gone else _ratios(other, o, t, base)))
    w("\n".join(lines) + "\n")
    if (r, m) == (1, 1000) and every:
        w(agent_close(recs, n, v))


def s10_flat(w, s, n, pct):
    """the subtrees' cost per cgroup against M, per reader count"""
    w("The subtrees' CPU per cgroup and cycle against M" + pct_name(pct) + ":\n")
    grid_pts = (AGENT_POINTS if pct is None else
                [(r, m) for r, m, x in agent_grid(AGENT_POINTS, AGENT_SHARES) if x == pct])
    for r in sorted({r for r, _ in s} | ({1} if n == AGENT_SIZE else set())):
        pts = sorted((m, v["subtree"]) for (rr, m), v in s.items()
                     if rr == r and _measure(v.get("subtree"), "readers_ms") is not None)
        grid = sorted({m for rr, m in grid_pts if rr == r} if n == AGENT_SIZE else set())
        absent = [m for m in grid if m not in {m_ for m_, _ in pts}]
        head = f"- subtrees, {r} reader{'s' if r > 1 else ''}, CPU per cgroup and cycle"
        if len(pts) >= 2:
            parts = []
            for key, name in S10_MEASURES:
                ms, per, mm = _flat(pts, key)
                parts.append(f"{name} " + (
                    f"{' / '.join(fmt(x) for x in per)} µs (max/min **{fmt(mm)}x**)"
                    if mm is not None else "not measured (no flusher trace)")
                    + (f" (at {' / '.join(fmt(m) for m in ms)} only)"
                       if mm is not None and len(ms) < len(pts) else ""))
            line = (f"{head} at {' / '.join(fmt(m) for m, _ in pts)} cgroups: "
                    + "; ".join(parts))
        elif pts:
            line = f"{head}: only at {fmt(pts[0][0])} cgroups, nothing to compare"
        else:
            line = f"{head}: no subtree row"
        w(line + (f"; not measured at {', '.join(fmt(m) for m in absent)} cgroups"
                  if absent else "") + ".")
    w("")


def s10_by_share(w, recs, n):
    """each point measured at more than one change share: the change
    snapshots' and the subtrees' attributable CPU per cycle by share, and
    the change snapshots' per changed cgroup"""
    pcts = [p for p in s10_pcts(recs, n) if p is not None]
    by = {p: agent_summary(recs, n, p) for p in pcts}
    pts = sorted({k for s in by.values() for k in s}, key=lambda k: (k[1], k[0]))
    lines = []
    for r, m in pts:
        have = [p for p in pcts if (r, m) in by[p]]
        if len(have) < 2:
            continue
        parts = []
        for way in ("changes", "subtree", "bpfshared"):
            cells = []
            for p in have:
                x = by[p][(r, m)].get(way)
                cost = _measure(x, "attr_ms")
                k = changed_cgroups(x, m, p)
                cells.append(f"{fmt(p)} % " + ("not measured" if cost is None else fmt(cost)
                             + (f" ({fmt(cost * 1e3 / k)} µs per changed cgroup)"
                                if way == "changes" and k else "")))
            parts.append(f"{way}: " + ", ".join(cells))
        lines.append(f"- {r} reader{'s' if r > 1 else ''} x {fmt(m)} cgroups, attributable "
                     f"ms per cycle by share: " + "; ".join(parts))
    if lines:
        w("By change share (the table of each share above):\n")
        w("\n".join(lines) + "\n")


def changed_cgroups(x, m, pct):
    """the cgroups asked to change every cycle at a row (its changer's
    record, or the share of m)"""
    ch = (x or {}).get("changer") or {}
    return ch.get("cgroups", round(m * pct / 100) if pct is not None else 0)


def s10_checks(w, recs, n, scenario="s10"):
    """the trees (s10's) and the values checks (scenario's)"""
    for x in sel(recs, "s10tree", cpus=n) if scenario == "s10" else []:
        res = x["result"]
        w(f"- the tree of {fmt(x['params']['cgroups'])} cgroups: set up in "
          f"{fmt(res['seconds'])} s (memory charged and I/O done in each: "
          f"{'yes' if res.get('fill') else '**no**, the fill failed'}), "
          + (f"{fmt(res.get('active'))} of them busy" if "active" in res else
             "the first holding 4 MiB of anon memory; which of them change is each run's "
             "share"))
    for x in sel(recs, f"{scenario}check", cpus=n):
        res, chk = x["result"], x["result"].get("check") or {}
        vals = "; ".join(f"{way} usage {fmt(c.get('usage_usec'))} µs, anon {fmt(c.get('anon'))}, "
                         f"current {fmt(c.get('current'))}, wbytes {fmt(c.get('wbytes'))}"
                         + (f", pressure totals {fmt(c['pressure_total'])} µs"
                            if "pressure_total" in c else "")
                         for way, c in chk.get("ways", {}).items())
        ch = chk.get("ways", {}).get("changes", {}).get("changes")
        if ch:
            vals += (f" (changes: its state after {fmt(ch['cycles'])} cycles, against classic "
                     f"then: usage {fmt(ch['classic_after']['usage_usec'])} µs, wbytes "
                     f"{fmt(ch['classic_after']['wbytes'])}; the checked cgroup came in "
                     f"{fmt(ch['probe_changed'])} of its change snapshots; {fmt(ch['held'])} "
                     f"cgroups held)")
        if res.get("rc") == 0 and chk:
            w(f"- the values check at {fmt(x['params']['cgroups'])} cgroups (one cycle of each "
              f"way, the tree's first cgroup, against classic): every way agreed"
              + (f" ({vals})" if vals else ""))
        else:
            w(f"- the values check at {fmt(x['params']['cgroups'])} cgroups **failed** "
              f"(rc {res.get('rc')}: a way's values disagree with classic or are zero): "
              f"{vals or 'no result'}; `{one_line(res.get('stderr', ''))[-300:]}`")
    w("")


def per_ctrl(fl, ctrls=AGENT_CTRLS):
    """flusher ms per controller: 'cpu / memory / io' (ctrls), then any
    other ("?": a work item the driver did not name)"""
    return " / ".join(fmt(fl.get(c, 0)) for c in ctrls) + "".join(
        f", {c} {fmt(v)}" for c, v in sorted(fl.items()) if c not in ctrls)


# the columns of a point's table of the ways (s10, s14): agent_row()'s
AGENT_HEAD = ["way", "readers ms/cycle (user / sys)", "reader µs per cgroup",
              "flushers ms/cycle (runs), or the collector's (passes)",
              "flushers cpu / memory / io ms/cycle",
              "attributable ms/cycle (readers + flushers)", "kworker ms/cycle",
              "background ms/cycle", "kworkers − background ms/cycle",
              "readers + kworkers ms/cycle", "cycles/reader", "missed cycles/reader",
              "errors", "values per cgroup", "cgroups held"]


def agent_row(label, x, bg, ctrls=AGENT_CTRLS):
    """a measured way's row at a point (agent_cells), or its failure"""
    if x["fail"]:
        return [label, "fails: " + x["fail"]] + [""] * (len(AGENT_HEAD) - 2)
    return [label] + agent_cells(x, bg, ctrls)


def agent_cells(x, bg, ctrls=AGENT_CTRLS):
    """a measured way's row at a point whose background is bg (None: no
    idle record there); its flushers per controller of ctrls"""
    fl = x["flusher_by_ctrl"]
    by_ctrl = "–" if fl is None else per_ctrl(fl, ctrls)
    why = "no collector CPU" if x["collector_way"] else "no flusher trace"
    attr = fmt(x["attr_ms"]) if x["attr_ms"] is not None else f"not measured ({why})"
    dag = " †" if x["flusher_over"] else ""
    if x["collector_way"]:
        runs = (f"collector {fmt(x['collector_ms'])} ({fmt(x['collector_passes'])} passes)"
                if x["collector_ms"] is not None else "collector not measured")
    else:
        runs = (f"{fmt(x['flusher_ms'])} ({fmt(x['flusher_runs'])})" + dag
                if x["flusher_ms"] is not None else "–")
    return [f"{fmt(x['readers_ms'])} ({fmt(x['user_ms'])} / {fmt(x['sys_ms'])})",
            fmt(x["reader_us_per_cg"]), runs, by_ctrl, f"**{attr}**" + dag,
            fmt(x["kw_ms"]), fmt(bg["ms"]) if bg else "not measured",
            fmt(x["kw_ms"] - bg["ms"]) if bg else "–",
            fmt(x["total_ms"]) if x["total_ms"] is not None else "not measured",
            fmt(x["cycles"]) + (" *" if x["cut_pass"] else ""),
            fmt(x["missed"]), fmt(x["errors"]), fmt(x["values_per_cg"]),
            fmt(x["held"]) if x["held"] else "–"]


def keep_cheapest(d, key, v, cost):
    """d[key] becomes v when v is its first round, or works and is cheaper
    than d[key] by cost (or d[key] failed): other work on the host only
    ever adds; either way d[key] counts the rounds"""
    old = d.get(key)
    v["rounds"] = (old["rounds"] if old else 0) + 1
    if old is None or (not v["fail"] and (old["fail"] or v[cost] < old[cost])):
        d[key] = v
    else:
        old["rounds"] = v["rounds"]


def memloop_summary(recs, cpus):
    """mode -> the cheapest round's CPU per read and friends; a failed run
    is kept (fail) when no round of its mode succeeded"""
    out = {}
    for x in sel(recs, "s11", cpus=cpus):
        p, res = x["params"], x["result"]
        ml = res.get("memloop")
        if res.get("rc") or not ml or not ml.get("count"):
            v = {"fail": f"rc {res.get('rc')}: "
                         f"{one_line(res.get('stderr', ''))[-300:] or 'no result'}"}
        else:
            n = ml["count"]
            v = {"fail": "", "count": n, "us": ml["cpu_ns"] / n / 1e3,
                 "user": ml["utime_us"] / n, "sys": ml["stime_us"] / n,
                 "values": ml.get("values_per_read"), "errors": ml.get("errors"),
                 "anon": ml.get("anon")}
        keep_cheapest(out, p["mode"], v, "us")
    return out


# a one-cgroup subtree read's kernel symbols by what they do (s11prof):
# format 2 formats a cgroup's values once per publication and its names
# once at boot, so a read is a system call, kernfs' read path, the
# stream's copy of published records and the copy out
READ_BUFFER = "the read buffer's allocation and free (and its memcg charge)"
S11_PROF_GROUPS = (
    ("the system call", ("entry_SYSCALL", "do_syscall", "syscall_exit", "__x64_sys", "ksys_",
                         "vfs_read", "__fdget", "fdget")),
    ("kernfs' read path", ("kernfs_", "seq_read")),
    ("the stream's records", ("stat_stream", "cgroup_stat", "memcg_stat_stream")),
    ("the copy out", ("rep_movs", "copy_user", "_copy_to", "copy_to")),
    # kernfs_file_read_iter() allocates each read's buffer (the read's size
    # up to 64 KiB, charged to the reader's memcg) and frees it after
    (READ_BUFFER, ("kvmalloc", "__kvmalloc", "kvfree", "__kmalloc_large", "___kmalloc_large",
                   "free_large_kmalloc", "__alloc_pages", "__alloc_frozen_pages",
                   "get_page_from_freelist", "rmqueue", "__rmqueue", "post_alloc_hook",
                   "prep_compound_page", "__free_pages", "free_tail_page_prepare",
                   "free_unref_page", "free_frozen_pages", "is_check_pages_enabled",
                   "__memcg_kmem_charge", "__memcg_kmem_uncharge", "obj_cgroup_charge",
                   "obj_cgroup_uncharge", "page_counter_", "refill_stock", "consume_stock",
                   "drain_stock", "memcg_rstat_updated", "__css_rstat_updated", "css_rstat_updated",
                   "mod_memcg_state", "__mod_memcg_state", "lruvec_stat_mod", "memcg_state_val")),
)


def kernel_shares(top):
    """a perf top list's kernel symbols -> their share of the samples (%);
    GCC's suffixes (.constprop.0, .isra.0) dropped"""
    out = {}
    for pct, space, name in perf_symbols(top):
        if space == "[k]":
            name = name.split(".")[0]
            out[name] = out.get(name, 0) + pct
    return out


def s11_close(recs, n, ok):
    """when text + parse / subtree misses its target: what the subtree
    read's profile says would close it (empty if met or not profiled)"""
    tx, st, bp = ok.get("text"), ok.get("subtree"), ok.get("bpf")
    if not tx or not st or tx["us"] / st["us"] >= MEM_VS_TEXT:
        return ""
    prof = [x for x in sel(recs, "s11prof", cpus=n, mode="subtree") if x["result"].get("top")]
    if not prof:
        return (f"The target is missed and no profile of the subtree read was taken in this "
                f"run (`s11prof`): nothing here says what would close it.\n")
    top = prof[-1]["result"]["top"]
    share = kernel_shares(top)
    groups = [(name, sum(v for k, v in share.items() if k.startswith(pre)))
              for name, pre in S11_PROF_GROUPS]
    other = sum(share.values()) - sum(v for _, v in groups)
    user = sum(pct for pct, space, _ in perf_symbols(top) if space != "[k]")
    text = (f"Where the subtree read's time goes, from its profile below (the symbols over "
            f"0.7 % of the samples): " + ", ".join(f"{name} {fmt(v)} %" for name, v in groups
                                                   if v or name != READ_BUFFER)
            + f", the rest of the kernel {fmt(other)} %, user space (the decoder) "
            f"{fmt(user)} %. Format 2 formats nothing at a read (a cgroup's values at each "
            f"publication, the SCHEMA's names at boot), so what is left is a read(2)'s own "
            f"cost, which the emulator makes dear, against a text read whose parse runs in "
            f"user space.")
    buf = dict(groups).get(READ_BUFFER, 0)
    if buf:
        text += (f" Of that cost, {fmt(buf)} % of the samples are kernfs allocating each "
                 f"read's buffer (the read's size up to 64 KiB, charged to the reader's memcg: "
                 f"a 64 KiB read takes pages from the page allocator) and freeing it: a "
                 f"buffer sized to what the file's previous read returned would take most of "
                 f"that away.")
    if bp:
        text += (f" The BPF pass (one program run, its map drained) gets "
                 f"{fmt(tx['us'] / bp['us'])}x here where the seed slides measured "
                 f"{SLIDES_BPF}x (on hardware, and before 6.16 made memory.stat's reads "
                 f"flush less): the {MEM_VS_TEXT}x target comes from those numbers, and this "
                 f"run cannot tell how much of the difference is the emulator's.")
    return text + "\n"


def s11_memloop(R):
    """scenario 11: one cgroup's memory stats read N times each way"""
    recs = R.recs
    w = Md()
    w("## One cgroup's memory stats, read N times (scenario 11)\n")
    w(S11_METHOD)
    for n in sorted({x["cpus"] for x in sel(recs, "s11")} | {AGENT_SIZE}):
        s = memloop_summary(recs, n)
        w(f"### {n} vCPUs\n")
        if not s:
            w("Not measured in this run.\n")
            continue
        rows = []
        for mode in S11_MODES:
            v = s.get(mode)
            if not v:
                rows.append([S11_LABEL[mode], "not measured"] + [""] * 7)
            elif v["fail"]:
                rows.append([S11_LABEL[mode], "fails: " + v["fail"]] + [""] * 7)
            else:
                rows.append([S11_LABEL[mode], fmt(v["count"]), f"**{fmt(v['us'])}**",
                             fmt(v["user"]), fmt(v["sys"]), fmt(v["values"]), fmt(v["errors"]),
                             fmt(v["rounds"]),
                             fmt(ratio(s.get("text", {}).get("us"), v["us"])) + "x"])
        w(table(["way", "reads N", "CPU µs per read", "user µs", "sys µs", "values per read",
                 "failed reads", "rounds", "text + parse / this"], rows))
        ok = {k: v for k, v in s.items() if not v["fail"]}
        lines = []
        for a, b, target in (("text", "subtree", MEM_VS_TEXT), ("text", "bpf", None),
                             ("bpf", "subtree", None)):
            if a in ok and b in ok:
                r = ok[a]["us"] / ok[b]["us"]
                tail = (f" (target: at least {target}x): **{'met' if r >= target else 'missed'}**"
                        if target else f" (the slides' BPF: {SLIDES_BPF}x)" if b == "bpf" else "")
                lines.append(f"- {S11_SHORT[a]} / {S11_SHORT[b]}: **{fmt(r)}x**{tail}")
            else:
                lines.append(f"- {S11_SHORT[a]} / {S11_SHORT[b]}: not measured (no successful "
                             f"{' or '.join(k for k in (a, b) if k not in ok)} run)")
        w("\n".join(lines) + "\n")
        w(s11_close(recs, n, ok))
        profs = sel(recs, "s11prof", cpus=n)
        if profs:
            w("Where a read's time goes: `perf record -e cpu-clock -g` (software sampling "
              "at 4 kHz: TCG has no PMU) over one more loop of each, after the measured "
              "rounds; symbols with at least 0.7 % of the samples, self time.\n")
        for x in profs:
            r = x["result"]
            n_s = r.get("samples")
            w(f"**{S11_LABEL.get(x['params']['mode'], x['params']['mode'])}**, "
              f"{fmt(x['params']['count'])} reads"
              + (f" ({n_s:,} samples; by object: {', '.join(r.get('dso', [])[:4])})"
                 if n_s else " (no samples: " + one_line(r.get("err", ""))[-200:] + ")")
              + ":\n")
            if r.get("top"):
                w("```\n" + "\n".join(r["top"][:25]) + "\n```\n")
    return w.text()


# --- scenario 12: systemd-cgtop against cgstream top (issue 29, 4) ------------

TOPS = ("systemd-cgtop", "cgstream top")
VS_CGTOP = 20        # issue 29's target: systemd-cgtop / cgstream top (its flushers in)
REFRESH_S = 1.0      # both refresh every second
# "keeps 1 s": the median interval between table starts and the longest
PACE_MEDIAN_S, PACE_MAX_S = 1.1, 1.5
TICK_S = 0.01        # /proc/PID/stat's CPU times are in USER_HZ ticks


def top_summary(x):
    """one s12 record: CPU per refresh in steady state, start-up, pace,
    rows, RSS, cgstream's flushers; fail says why it cannot be used"""
    p, res = x["params"], x["result"]
    at, cpu = res.get("table_at_s") or [], res.get("table_cpu_s") or []
    rows, n = res.get("table_rows") or [], len(res.get("table_at_s") or [])
    why = ([f"exit {res.get('rc')}"] if res.get("rc") else []) + (
        [f"{n} table{'' if n == 1 else 's'} of the {res.get('tables_asked', p.get('tables'))} "
         "asked"] if n < 3 else
        ["its CPU was not read at a table's start"] if None in cpu else [])
    err = one_line(res.get("stderr", ""))[-300:]
    v = {"program": p["program"], "cgroups": p["cgroups"], "tables": n,
         "version": p.get("version"),
         "fail": "; ".join(why) + (f": `{err}`" if err else "") if why else ""}
    if why:
        return v
    gaps = [b - a for a, b in zip(at[1:], at[2:])]    # from the 2nd table on
    # table_mono_s: the driver read the process's CPU clock (ns) and cut
    # the flusher trace to the steady-state tables; earlier records took
    # /proc/PID/stat's ticks and traced the whole run
    exact = "table_mono_s" in res
    v.update(startup_ms=cpu[1] * 1e3, ms=(cpu[-1] - cpu[1]) / (n - 2) * 1e3,
             tick_ms=0 if exact else TICK_S / (n - 2) * 1e3, pace_med=statistics.median(gaps), pace_max=max(gaps),
             rows_min=min(rows), rows_max=max(rows), rss_mib=res.get("maxrss_kb", 0) / 1024,
             cpu_s=res.get("cpu_s"), utime_s=res.get("utime_s"), stime_s=res.get("stime_s"))
    v["keeps"] = v["pace_med"] <= PACE_MEDIAN_S and v["pace_max"] <= PACE_MAX_S
    # the flushers' runs between the second table and the last, per
    # refresh; earlier records: their CPU per second of the run, times the
    # refresh
    fl = res.get("flusher_us_by_ctrl")
    per = (1 / (n - 2) / 1e3 if exact else
           REFRESH_S / res["wall_s"] / 1e3 if res.get("wall_s") else None)
    v["flusher_ms"] = sum(sum(d) for d in fl.values()) * per if fl is not None and per else None
    v["flusher_by_ctrl"] = {c: sum(d) * per for c, d in fl.items()} if v["flusher_ms"] is not None \
        else None
    return v


def top_pairs(recs):
    """(vCPUs, cgroups) -> program -> summary (of several records, the
    cheapest that worked; a failure only when none did)"""
    out = {}
    for x in sel(recs, "s12"):
        v = top_summary(x)
        keep_cheapest(out.setdefault((x["cpus"], v["cgroups"]), {}), v["program"], v, "ms")
    return out


def top_versus(d):
    """systemd-cgtop against cgstream top with its flushers, and without:
    (ratio text with the target, ratio text without) or the reason
    neither is there"""
    cg, cs = d.get("systemd-cgtop"), d.get("cgstream top")
    gone = ", ".join(f"no {k} run" if not v else f"{k} failed" for k, v in
                     (("systemd-cgtop", cg), ("cgstream top", cs)) if not v or v["fail"])
    if gone:
        return None, gone
    # a CPU below one clock tick over the run is only bounded from above
    bound = cs["ms"] < cs["tick_ms"]
    own = max(cs["ms"], cs["tick_ms"])
    alone = (f"without the flushers {fmt(cg['ms'])} vs {'< ' if bound else ''}{fmt(own)} ms, "
             f"**{'at least ' if bound else ''}{fmt(cg['ms'] / own)}x**")
    if cs["flusher_ms"] is None:
        return None, f"no flusher trace in the cgstream top run; {alone}"
    r = cg["ms"] / (own + cs["flusher_ms"])
    verdict = ("met" if r >= VS_CGTOP else "not decided: cgstream top's own CPU is below the "
               "clock's tick" if bound else "missed")
    return (f"{fmt(cg['ms'])} vs {'< ' if bound else ''}{fmt(own)} + {fmt(cs['flusher_ms'])} ms "
            f"CPU per refresh, **{'at least ' if bound else ''}{fmt(r)}x** (target: at least "
            f"{VS_CGTOP}x): **{verdict}**; also {alone}"), ""


def top_target(recs):
    """the headline's line for issue 29's top target"""
    d = top_pairs(recs).get((AGENT_SIZE, 1000))
    head = f"- systemd-cgtop vs cgstream top, 1,000 cgroups, {AGENT_SIZE} vCPUs, a table a second"
    if not d:
        return f"{head}: **not measured** (no run at this size; target: at least {VS_CGTOP}x)"
    line, why = top_versus(d)
    return (f"{head}, cgstream top with its flushers: {line}" if line else
            f"{head}: **not measured** with its flushers ({why}; target: at least {VS_CGTOP}x)")


def s12_top(R):
    """scenario 12: systemd-cgtop and cgstream top over the agent tree"""
    recs = R.recs
    w = Md()
    w("## systemd-cgtop against cgstream top (scenario 12)\n")
    w(S12_METHOD)
    w(flusher_clock_note(sel(recs, "s12")))
    pairs = top_pairs(recs)
    skipped = sorted({x["params"]["what"] for x in sel(recs, "skipped")
                      if x["params"]["what"].startswith("s12 ")})
    if not pairs:
        w("Not measured in this run" + (f" ({', '.join(skipped)}: skipped by the time budget)"
                                        if skipped else "") + ".\n")
        return w.text()
    for (n, m), d in sorted(pairs.items()):
        w(f"### {fmt(m)} cgroups, {n} vCPUs\n")
        rows = []
        for prog in TOPS:
            v = d.get(prog)
            if not v:
                rows.append([prog, "not measured: no record (" + (
                    "no systemd-cgtop in the guest, or " if prog == "systemd-cgtop" else
                    "no memory and io streams in the kernel, no `cgstream` built, or ")
                    + "the run stopped before it: see the driver's log)"] + [""] * 10)
                continue
            if v["fail"]:
                rows.append([prog, f"fails: {v['fail']}"] + [""] * 10)
                continue
            fl = v["flusher_by_ctrl"]
            rows.append([prog, fmt(v["tables"]), fmt(v["startup_ms"]), f"**{fmt(v['ms'])}**",
                         "–" if prog != "cgstream top" else "not measured (no trace)"
                         if fl is None else f"{fmt(v['flusher_ms'])} ({per_ctrl(fl)})",
                         f"{fmt(v['pace_med'])} / {fmt(v['pace_max'])}",
                         "yes" if v["keeps"] else "**no**",
                         fmt(v["rows_min"]) + (f"-{fmt(v['rows_max'])}"
                                               if v["rows_max"] != v["rows_min"] else "")
                         + ("" if v["rows_min"] >= m else f" (**fewer than {fmt(m)}**)"),
                         fmt(v["rss_mib"]),
                         f"{fmt(v['cpu_s'])} ({fmt(v['utime_s'])} / {fmt(v['stime_s'])})",
                         "0"])
        w(table(["program", "tables", "start-up CPU ms (to the 2nd table)",
                 "CPU ms per refresh", "flushers ms per refresh (cpu / memory / io)",
                 "interval s, median / max", f"keeps {fmt(REFRESH_S)} s", "rows per table",
                 "max RSS MiB", "whole run CPU s (user / sys)", "exit"], rows))
        line, why = top_versus(d)
        ver = d.get("systemd-cgtop", {}).get("version")
        w("- systemd-cgtop / (cgstream top + its flushers): "
          + (line if line else f"not measured ({why})")
          + (f"\n- systemd-cgtop's version: `{ver}`" if ver else "") + "\n")
    if skipped:
        w(f"Skipped by the time budget: {', '.join(skipped)}.\n")
    return w.text()


S12_METHOD = f"""Debian's `systemd-cgtop -b -r -d 1s -n N --depth=1` on the agent tree's
parent and `cgstream top -b --controllers cpu,memory,io` (its memory and
io columns) on the same parent, one after the other, over the scenario
10 tree (charged memory, I/O, 1 % of its cgroups changing every second;
seven churners in runs before the change shares), each asked for the
same number of tables, a table a second, its output read from a pipe.
At the start of each table the driver takes the time and the process's
CPU so far (its CPU clock, all threads; runs recorded before that was
read `/proc/PID/stat` utime + stime, in ticks of {TICK_S * 1e3:.0f} ms).
CPU per refresh is the steady state: the CPU from the second table's
start to the last one's, over the tables between (the first table
includes the start-up, shown on its own as the CPU at the second table's
start). The interval column is over the same tables ("keeps 1 s": median
at most {PACE_MEDIAN_S} s and none over {PACE_MAX_S} s); rows per table are its
non-blank lines after the first (at least one per cgroup when it shows
them all); max RSS and the whole run's CPU come from wait4. cgstream top
reads the subtree files, so the kernel's three stream flushers (at 1 s)
are its cost too: they are traced while it runs (workqueue tracepoints)
and their runs from the second table's start to the last's count per
refresh (runs recorded before that: their CPU per second of the run); the target
(issue 29: at least {VS_CGTOP}x) is on cgstream top with them, the ratio
without them is also shown. A program that exited non-zero or printed
fewer than 3 tables is shown as failed.
"""


PSI_METHOD = """The agent of scenario 10 (its tree, its changer, its ways' code in
`cgbench telemetry`) with a fourth controller, pressure (PSI): each
cycle, every cgroup's cpu, memory, io and pressure (**the whole agent**),
or its pressure alone. Classic reads and parses `cpu.pressure`,
`memory.pressure` and `io.pressure` of every cgroup (and `irq.pressure`
where the kernel shows it), as kubelet, below or oomd do: each read makes
the kernel aggregate the cgroup's per-CPU stall times. The streams:
`pressure.stream` per cgroup (stream), `pressure.stream.subtree`'s full
snapshots (subtree) and change snapshots (changes), decoded by
libcgstream's decoder, the publisher aggregating once per interval (the
cycle's), for all readers, each cgroup whose pressure may have changed
(PSI's clock running for it, averages not yet 0, or totals moved) and
passing the others over with a lockless test. The BPF ways are not run: the
kernel has no PSI kfuncs, so neither below's collector nor the shared one
can read pressure (`cgbench` refuses pressure for them); an agent built on
them reads the pressure files per cgroup as classic does.

{pct} % of the cgroups change every cycle, as in scenario 10, and their
pressure changes too: each visit of the changer spins {stall_us} µs more
while a second thread of it waits for the CPU on the same vCPU (cpu
pressure, "some"). It has to be longer than a jiffy: PSI weights each
CPU's stall time in a sampling window by the cgroup's non-idle time there
in whole jiffies, so a cgroup busy for less than a jiffy between two
samples (a read of a pressure file, a publication, PSI's own every 2 s)
keeps none of its stall, and scenario 10's visits (5 µs and a 4 KiB write
a cycle, sampled every cycle) would keep little or none of theirs. The
values check (below) compares the sum of
the first cgroup's pressure totals too; that cgroup, idle otherwise,
stalls a few times before it. The runs are at one point, the targets',
before scenario 10 in the same boot, on the same tree.
"""


S10_METHOD = """R reader processes (separate agents) each take the same M cgroups once per
cycle and read each cgroup's cpu, memory (`memory.stat`, `memory.current`,
`memory.events`) and io (`io.stat`), under the churn load (elsewhere).
The M cgroups are the children of one parent; each holds charged memory
(8 KiB in a tmpfs file) and has written 4 KiB to a loop device; the
first holds 4 MiB of anon in a process that sleeps (stable values for the
values check). A **change share** P % of them changes every cycle, the
others stay idle: `cgbench change`, one pinned process per vCPU started
in a cgroup of its own, visits each of the first P % of the cgroups once
a period (the cycle's; since 2026-12-03 those after the first, which
stays idle as the values check's probe, below 100 %), on one grid: it joins the cgroup
(`cgroup.procs`), spins 5 µs there, touches and frees a 4 KiB page there
and writes 4 KiB with O_DIRECT to the loop device, then goes back; each
point's text says the share asked and the visits per period the changer
made over the runs (the share achieved). (Runs from before the change
shares had seven churners in the tree instead.) The points, in the order
they run, the issue's targets first: 1 x 1,000 and 16 x 1,000 at 1 %,
1 x 1,000 at 0, 10 and 100 %, 1 x 10,000 at 1 %, 0 and 10 %; then R = 1,
4 and 16 readers x M = 1,000 and 10,000 cgroups at 1 % (trees of 100
until 2026-12-02), then at the
other shares, as far as scenario 10's 25 minutes of the boot go. Only
the point's own tree exists while it runs: every stream flusher walks
its controller's whole hierarchy, so another point's idle cgroups would
be paid for here (the driver removes the other trees, their charged
files first, and waits up to 150 s for their cgroups to be freed: the
loop driver's per-blkcg workers keep a cgroup that wrote to the loop
device dying for a minute or two, until 2026-12-03, when the driver began
to detach and remove the loop device once no tree is left, which frees
the workers at once; it makes a tree again when a later
point needs it; since 2026-12-02, where a point's text says what the
hierarchy held, dying cgroups included. Before, a run kept
every tree it had made, and each point after the first tree of 10,000
paid for those cgroups too). At shares
other than 1 % only subtree, changes, bpfshared and idle run: classic and
BPF read and flush every cgroup whatever changed. Left out: 16 x 10,000
(its per-cgroup streams are 480,000 open files, with which the 2 GiB
guest ran out of memory, the run of 2026-11-26; at 4 x 10,000 the
classic and stream readers already finish a fraction of a cycle in the
window, so 16 readers add nothing) and 100 % of 10,000 cgroups (10,000
visits a second, each a cgroup migration, a page fault and an O_DIRECT
write, are more than the two vCPUs do under TCG). The ways:

- **classic**: on a fixed grid, `pread()` + parse of `cpu.stat`,
  `memory.stat`, `memory.current`, `memory.events` and `io.stat` of every
  cgroup;
- **stream**: the cpu, memory and io flushers at the cycle's interval;
  each reader epolls its M `cpu.stat.stream` fds and, for each ready one,
  reads that cgroup's `cpu.stat.stream`, `memory.stat.stream`,
  `memory.current`, `memory.events` and `io.stat.stream`;
- **subtree**: the flushers run; one `pread()` per controller per cycle
  of the parent's `cpu.stat.stream.subtree`, `memory.stat.stream.subtree`
  and `io.stat.stream.subtree`, decoded with libcgstream's decoder;
- **changes**: the same three files, each on an open file description of
  its own, read with change snapshots (a `pread()` at
  `CGROUP_STAT_STREAM_CHANGES`: the cgroups whose values changed, or
  that were created, since that file's previous complete snapshot, and a
  REMOVED record for each removed one), after one full snapshot of each
  when the reader starts (before the window); the reader keeps every
  cgroup's values in a table by cgroup id, updates it from the CGROUP
  records, drops what the REMOVED records name, keeps the cgroups a
  change snapshot leaves out (unchanged: the kernel sends nothing for
  them), and reads a full snapshot again where the kernel says it dropped
  removals. Its values per cgroup are those it had to take (the changed
  cgroups'), its **cgroups held** the table's size; the values check
  compares its state of the first cgroup after three publications with a
  classic read taken after them;
- **bpfmap**: below's way: on the classic grid, one sleepable
  `iter/cgroup` pass per reader per cycle (`css_rstat_flush` and
  `bpf_mem_cgroup_flush_stats` at the top; per cgroup the cpu bstat and
  every memory.stat item, the usage and the memory events through the
  memcg kfuncs, into a hash map drained in one batch), then `io.stat`
  read and parsed per cgroup from user space; **bpfmap-noio**: the same
  without io;
- **bpfshared**: the shared BPF collector, the BPF design a maintainer
  would propose against the series (issue 43): one privileged process
  (`cgbench collect`, started for each run) makes one sleepable
  `iter/cgroup` pass per cycle over the tree (one flush at the top, then
  bpfmap's per-cgroup record: the cpu bstat and every memory.stat item,
  the usage and the memory events) into a `BPF_F_MMAPABLE` array, frozen
  and pinned on a bpffs; each reader maps that array and, once per pass
  (it sleeps until the collector's next pass should be done, by the
  pass's sequence number and grid in the array's header), takes every
  cgroup's record without a system call, checking the sequence number
  after the read (a pass that began meanwhile is taken again). cpu and
  memory only: there are no io kfuncs, so its records hold no io and it
  reads no `io.stat` (the subtrees read io too: the comparison favours
  it). Its collector's CPU (its process's CPU clock over the window) is
  counted once per cycle, whatever R, in the flushers' column, in
  attributable CPU and in readers + kworkers; the readers' CPU is the
  readers' map reads alone.

At every point an **idle** way runs too: readers that read nothing, no
flusher, the same window under the same load. Its kworker time is the
**background** (the load's own I/O, vmstat, memcg work, the 9p
filesystem): what the kworkers do whatever way reads. It is not a way to
compare and has no row.

Every value is parsed into a number and consumed. Per way: the readers'
CPU per cycle (all R readers; their CLOCK_THREAD_CPUTIME_ID over the cycles
they did, the user / system split from getrusage) and per cgroup (one
reader's cycle / M); the traced runs of the stream flushers
(`stat_stream_workfn`, workqueue tracepoints), all three together and per
controller ("?": a work item the driver could not name; "–": the way runs
no flusher, or no tracefs), over the window divided by its cycles (the
trace spans the whole cgbench run, its set-up before the window too:
where a controller's flusher ran more often than the window has cycles,
the row is marked † and its flushers are an upper bound);
**attributable** CPU = readers + flushers (classic and BPF flush inside
their reads, so theirs is the readers' CPU; a flusher way without a trace
has none; bpfshared: readers + its collector); every kworker's CPU over the window divided by its cycles (the
flushers included, and the background); the background (the idle way's
kworker time over the same number of cycles: its readers do no cycles,
so the window's cycles are the divisor; the mean where it ran more than
one round, with their spread); kworkers − background: what the way made
the kworkers do beyond the background, which for a flusher way should
come near its flushers; it is the difference of two noisy measurements
of different windows, so it is noise-bound and may be negative; the old
total, readers + all kworkers; cycles done per reader (a per-cgroup way
counts a cycle the window's end cut short as the part it read); missed
cycles (classic grid: deadlines slept through; stream ways: flush_seq
gaps); reads that failed; values consumed per cgroup and cycle (the
ways' files and records carry different sets; changes: only what
changed); the cgroups the changes way holds. Where a point ran more
than one round, the round with the smaller attributable CPU is shown
(readers + kworkers where that is not measured).
"""

S11_METHOD = """A tight loop of N reads of one leaf cgroup's memory statistics (the leaf
holds 4 MiB of anon), each read parsed or decoded and its values consumed,
after one untimed read: `memory.stat` text + scanf-style parse;
`memory.stat.stream` text + the same parse; the leaf's
`memory.stat.stream.subtree` (its SNAPSHOT and SCHEMA records and one CGROUP record)
decoded by libcgstream; a one-cgroup pass of the BPF memcg kfuncs (flush,
every memory.stat item, usage and events, the map drained). The stream
and subtree ways run with the memory flusher at 1 s; none of the loop's
reads waits for it. CPU per read = the process's CPU clock
(CLOCK_PROCESS_CPUTIME_ID) over the loop / N, user / sys from
getrusage(RUSAGE_SELF); of two or more rounds, the cheapest is shown.
"""


def plot_s2(recs, sizes, pngdir):
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        s2 = s2_summary(recs, n)
        for mode in S2_MODES:
            pts = sorted((m, v[mode]["us_per_cg"]) for (r, m), v in s2.items()
                         if r == 1 and v.get(mode) and v[mode]["us_per_cg"])
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=COLORS[mode],
                        label=S2_LABEL[mode])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("cgroups M (1 reader)")
        ax.set_title(f"{n} vCPUs")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("total CPU µs per cgroup sample (TCG)")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(pngdir, "s2_per_cgroup.png"), dpi=100)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        s2 = s2_summary(recs, n)
        m = 1000 if any(mm == 1000 for _, mm in s2) else max((mm for _, mm in s2), default=0)
        for mode in S2_MODES:
            pts = sorted((r, v[mode]["total_ms"]) for (r, mm), v in s2.items()
                         if mm == m and v.get(mode) and v[mode]["total_ms"])
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=COLORS[mode],
                        label=S2_LABEL[mode])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(f"readers R ({m} cgroups each)")
        ax.set_title(f"{n} vCPUs")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("total CPU ms per cycle, readers + kworkers (TCG)")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(pngdir, "s2_readers.png"), dpi=100)
    plt.close(fig)


def kernel_bytes(results):
    """struct sizes from pahole on the bench kernel's vmlinux (bench/run.sh):
    the structs' sizes and, inside them, the size of each `published`
    member (the copies the memory and io streams publish)"""
    try:
        with open(os.path.join(results, "pahole.txt")) as f:
            text = f.read()
    except OSError:
        return "Not measured in this run (no pahole output).\n"
    sizes, published, cur = {}, {}, None
    member = re.compile(r"\bpublished(\[\d+\])?;\s*/\*\s*\d+\s+(\d+)\s*\*/")
    for line in text.splitlines():
        if line.startswith("struct ") and line.rstrip().endswith("{"):
            cur = line.split()[1]
        elif cur and "/* size:" in line:
            sizes[cur] = int(line.split("size:")[1].split(",")[0])
            cur = None
        elif cur and (m := member.search(line)):
            published[cur] = int(m.group(2))
    pub = sizes.get("cgroup_stat_pub")
    if pub:
        # format 2 (2026-12-01 on): one kmalloc'd struct per css of a
        # streaming controller, its two copies of the values after it
        return (f"From the bench kernel's BTF/DWARF (`pahole`): while a controller streams, "
                f"each of its css's has one kmalloc'd `struct cgroup_stat_pub` of "
                f"**{fmt(pub)} bytes** followed by the two published copies of its values, 16 "
                f"bytes per value (8 per copy; how many values each controller has is its "
                f"SCHEMA's, and what it all takes per cgroup in slab is scenario 15's, below), "
                f"freed when the controller stops streaming. While none streams, the series "
                f"adds one pointer per css, `stat_pub` in `struct cgroup_subsys_state` "
                f"({fmt(sizes.get('cgroup_subsys_state'))} bytes in this config; `struct "
                f"cgroup` {fmt(sizes.get('cgroup'))}, `struct blkcg_gq` "
                f"{fmt(sizes.get('blkcg_gq'))}, `struct blkcg` {fmt(sizes.get('blkcg'))}). Each "
                f"controller's publisher is one static hrtimer and work item.\n")
    snap = sizes.get("cgroup_base_stat_snapshot")
    if not snap:
        return ("Not measured in this run (pahole printed neither struct cgroup_stat_pub nor "
                "struct cgroup_base_stat_snapshot).\n")
    out = (f"From the bench kernel's BTF/DWARF (`pahole`): every cgroup carries a "
           f"`struct cgroup_base_stat_snapshot` of **{snap} bytes** inside `struct cgroup` "
           f"(now {fmt(sizes.get('cgroup'))} bytes in this config): the last two published "
           f"base stats, their flush_seq and times, a seqcount and a list node. No per-CPU "
           f"memory. Each open stream file uses the `stream` part of `struct cgroup_file_ctx` "
           f"({fmt(sizes.get('cgroup_file_ctx'))} bytes in all, a union shared with the other "
           f"cgroup files' state), in the kernfs open file it hangs off. Each controller's "
           f"flusher is one static hrtimer and work item.")
    mem, blkg, blkcg = (published.get(k) for k in ("memcg_vmstats", "blkcg_gq", "blkcg"))
    if mem:
        out += (f" Every memcg's `struct memcg_vmstats` holds the memory stream's two published "
                f"copies of its counters, **{fmt(mem)} bytes** of its {fmt(sizes['memcg_vmstats'])} "
                f"(kmalloc'd: {kmalloc_class(sizes['memcg_vmstats'] - mem)} without them, "
                f"{kmalloc_class(sizes['memcg_vmstats'])} with them).")
    if blkg and blkcg:
        out += (f" The io stream publishes **{fmt(blkg)} bytes** per blkg (a cgroup and a device "
                f"it did I/O on; `struct blkcg_gq`, {fmt(sizes['blkcg_gq'])} bytes) and "
                f"**{fmt(blkcg)} bytes** per blkcg (its seqcount and the copies' flush tags; "
                f"`struct blkcg`, {fmt(sizes['blkcg'])} bytes).")
    if not (mem or blkg):
        out += " (pahole printed neither memcg_vmstats nor blkcg_gq: the memory and io streams' copies are not measured in this run.)"
    return out + "\n"


def kmalloc_class(n):
    """the kmalloc size class an object of n bytes falls in (powers of two
    from 8, plus 96 and 192), in words"""
    c = 8
    while c < n:
        if c == 64 and n <= 96:
            return "the 96-byte class"
        if c == 128 and n <= 192:
            return "the 192-byte class"
        c *= 2
    return f"the {fmt(c / 1024) + ' KiB' if c >= 1024 else fmt(c) + '-byte'} class"


S2_METHOD = """R reader processes (separate telemetry agents) each take the same M idle
cgroups (the children of one parent, created for the purpose) once per cycle,
under the churn load, the same cycles for every way. Each point runs the
ways twice, the second time in reverse order, and the tables show each way's
cheaper round (other work on the host only ever adds to a TCG guest's
times; the raw results keep both):

1. **classic**: sleep to a fixed grid, `pread()` + parse every cgroup's
   `cpu.stat` (each read flushes that cgroup's subtree);
2. **stream**: the flusher runs at the cycle's interval; each reader epolls
   its M `cpu.stat.stream` fds and `pread()`s + parses the ready ones. No
   flush, but one text syscall per cgroup: this row is also what a
   rate-limited `cpu.stat` flush (memcg's way) would cost a reader at best;
3. **subtree**: the flusher runs; each reader polls the parent's
   `cpu.stat.stream.subtree` and takes all M+1 cgroups with one `pread()` of
   binary records (a buffer sized for the subtree);
4. **BPF** (below's way, `bench/bpf/cgstat.bpf.c`): on the classic grid,
   each reader runs its own `iter/cgroup` program (sleepable) attached to the
   parent in pre-order; on the first cgroup it calls the `css_rstat_flush`
   kfunc (one flush per reader pass), then it emits each cgroup's counters
   (bstat cputime and the cpu controller's bandwidth counters: 56 bytes).
   **seq**: one binary record per cgroup with `bpf_seq_write()`, read(2)
   from the iterator fd, the way the issue names; **map** (4m): records go to
   a hash map keyed by cgroup id that the reader drains with one
   `bpf_map_lookup_and_delete_batch()`: what below ships, because a cgroup
   iterator pass that overflows the 32 KiB seq buffer fails with EOPNOTSUPP
   (cgroup_iter cannot continue a walk: it held cgroup_mutex for the pass).
   Built with Debian's clang against the bench kernel's BTF, loaded with the
   kernel tree's own libbpf (tools/lib/bpf, skeleton from its bpftool).
"""


def closing_gap(recs):
    """what keeps the subtree from the 20x and flatness targets, in this
    run's numbers: the kworkers' background is in every way's total"""
    s = s2_summary(recs, 2)
    bg = sorted(v["classic"]["kw_ms"] for (r, m), v in s.items() if r == 1 and v.get("classic"))
    c, t = (s.get((1, 1000), {}).get(k) for k in ("classic", "subtree"))
    if not bg or not c or not t or c["total_ms"] is None or t["total_ms"] is None:
        return ""
    med = bg[len(bg) // 2]
    # the subtree profile's shares: the walk, the stats copy, the copy-out
    share = {}
    for x in sel(recs, "s9", mode="subtree"):
        for pct, _, name in perf_symbols(x["result"]["top"]):
            share[name] = pct
    walk = share.get("cgroup_stat_stream_subtree_read", 0) + share.get(
        "css_next_descendant_pre", 0)
    snap = share.get("cgroup_base_stat_snapshot", 0)
    copy = sum(v for k, v in share.items() if "cop" in k or "movs" in k)
    prof = (f" In the profile above, the walk and its records are {walk:.0f} % of the subtree "
            f"reader's samples, the published stats' copy {snap:.0f} % and the copy to user "
            f"space {copy:.0f} %: 112 bytes a cgroup cross the syscall boundary, and under TCG "
            f"a copy costs a software TLB lookup per word. What is left to win in the read is "
            f"fewer records rather than cheaper ones: the flusher knows which cgroups changed "
            f"(it publishes only those), and the sampled cgroups here are idle, so a read of "
            f"only what changed since the reader's last read would skip most of them: the "
            f"change snapshots of patch 11, which scenario 10 measures as its changes way "
            f"(cpu, memory and io). The next profile to take is of a real "
            f"CPU, where a syscall and the flush's cache misses weigh more than in an "
            f"emulator." if walk and copy else "")
    return (f"What would close the gap to the 20x target is fewer instructions per record "
            f"in the kernel, and less background. At 1 x 1,000 on 2 vCPUs the subtree "
            f"reader takes {fmt(t['readers_ms'])} ms per cycle against the classic reader's "
            f"{fmt(c['readers_ms'])} ms ({fmt(c['readers_ms'] / t['readers_ms'])}x); the rest "
            f"of its total is kworker time, the flusher's and the guest's background. That "
            f"background is what the classic rows' kworker column shows (the flusher is off "
            f"there): {fmt(med)} ms per cycle (median of the 1-reader rows, "
            f"{fmt(bg[0])}-{fmt(bg[-1])}), from 9p I/O to the host share, vmstat and memcg "
            f"work in this test VM. It is in every way's total, and by itself caps subtree "
            f"against classic at {fmt(c['total_ms'] / med)}x at 1 x 1,000, whatever the "
            f"reader does. The references the walk no longer takes per record (cgstream "
            f"ae50ecd) were not the gap: a check outside the runs (a tight loop of reads of "
            f"1,001 records, two boots of each kernel alternating, TCG) found each boot's "
            f"cheapest read at 2.5 and 2.4 ms with the old walk and 2.6 and 1.7 ms with the "
            f"new one. The per-cgroup flatness target misses at the small end for the same "
            f"kind of reason: below 1,000 cgroups a cycle's fixed costs (one wake-up, one "
            f"syscall and that background) outweigh the per-record cost.{prof}\n")

PROFILE_NOTES = """Reading the profiles with the table's user / system split: the classic
reader's time is the flush (`css_rstat_flush`, for every cgroup it reads:
it visits that cgroup's per-CPU rstat state on every possible CPU), then
the text (`vsnprintf` and friends in the kernel, the parser in user space)
and the seq_file machinery. The subtree reader's time is the kernel walk:
`cgroup_stat_stream_subtree_read` with what it inlines (the pre-order
step, the online check, the ids, the bandwidth counters, the 112-byte
record written), `cgroup_base_stat_snapshot` (the seqcount-read copy of a
cgroup's published stats) and the copy of the records to user space
(`rep_movs_alternative`, `_copy_to_iter`). cpu-clock samples are taken in
a timer interrupt, so time with interrupts off is charged to where they
come back on: `*_unlock_irq*` and `finish_task_switch` lines are
interrupts-off sections ending there (lock sections, context switches),
not the unlock itself. Profiles of a few thousand samples show where the
time is, not exact shares.
"""

S2_PRIVILEGES = """What each way needs: rows 1-3 read cgroupfs files, so any user who may
read the files (mode 0444; delegation works); the stream rows need the
interval set by root once (`cpu.stat.stream_interval`, a boot-time setting).
The BPF way needs a kernel with BPF_SYSCALL, DEBUG_INFO_BTF and BPF_EVENTS
(tracing programs exist only with it) and, to load a tracing program that
calls a kfunc, CAP_BPF + CAP_PERFMON (here: root); it is built against the
running kernel's BTF (CO-RE) and reads kernel structures (struct cgroup's
bstat, task_group's cfs_bandwidth) whose layout is not an ABI. Each BPF pass
holds cgroup_mutex for the whole walk, so concurrent readers, mkdir, rmdir
and migrations wait for each other, and each pass flushes.
"""


METHOD = """## Method

- **Readers** are forked processes (like separate telemetry daemons) placed in
  their own cgroup; they keep each file open and `pread(fd, buf, 4096, 0)` it
  for every sample (a seq_file re-runs `show()` for a read at offset 0, so a
  classic `pread` flushes every time), then parse it with the same parser both
  ways. Each reader measures its own CPU with `CLOCK_THREAD_CPUTIME_ID`
  (the scheduler's exact runtime) and user/sys with `getrusage(RUSAGE_THREAD)`
  (tick-sampled split of that runtime). Opening the files happens before the
  measured window.
- **Kernel flusher CPU**: the flusher is delayed work, so it runs in whichever
  kworker picks it up. The parent snapshots, before and after the window, every
  `kworker/*` thread's CPU clock (`clock_getcpuclockid(pid)`: a kthread is its
  own thread group, so this is its exact `sum_exec_runtime` in ns; the test
  kernel has no SCHEDSTATS/SCHED_INFO, so `/proc/PID/schedstat` does not exist
  there, and `/proc/stat` system time is tick-sampled and includes the readers'
  own system time). The delta includes all other kworker activity (9p I/O,
  vmstat, memcg work), so the classic runs, where the flusher is off, show that
  background; kworkers that exit during a run lose their share (counted in the
  raw results as `kworkers_gone`). `/proc/stat` deltas are kept in the raw
  results as a cross-check.
- **Classic runs have streaming off** (`cpu.stat.stream_interval` = 0, no
  stream file open: today's kernel behaviour); stream runs set the interval
  (100 ms unless said otherwise) just before and back to 0 just after.
- **Load**: 24 sibling cgroups, each running a churner that spins for a share
  of every 10 ms (together about half of the vCPUs) and maps, touches and
  unmaps 256 KiB (memcg charge/uncharge), so rstat updates are pending on every
  CPU; one "busy child" cgroup runs a CPU hog. The cpu and memory controllers
  are enabled down the tree.
"""

KERNEL_DEBUG = """- This run's kernel has the test suite's debug checks: lockdep
  (PROVE_LOCKING), DEBUG_LIST, DEBUG_ATOMIC_SLEEP. Lock operations cost far
  more than in a production kernel, which penalises the path that takes more
  locks (the classic flush takes the rstat locks for every CPU): expect
  smaller ratios on a production config (`make bench` builds one).
"""

KERNEL_BENCH = """- The kernel is the test kernel without its debug checks
  (scripts/vm/bench.config: no lockdep, DEBUG_LIST or DEBUG_ATOMIC_SLEEP),
  but still a small tinyconfig-based build: no distribution's full set of
  controllers, tracepoints and security modules, which add to both ways.
"""

LIMITS = """## Limits of these numbers

- TCG emulation on a 2-core host: every vCPU is a host thread, so with 8 or 32
  vCPUs each runs several times slower in wall time and a guest task's CPU
  time also counts time its vCPU thread was descheduled on the host. Ratios
  between the two ways measured in the same boot are meaningful; absolute
  times and cross-size absolute comparisons much less so.
{kernel}- The cgroups the telemetry readers sample are idle; the pending updates come
  from the churners elsewhere in the tree. The classic side reads at offset 0
  of an open file, which is the cheapest classic way (no open/close per
  sample, as some agents do).
"""


if __name__ == "__main__":
    main()
