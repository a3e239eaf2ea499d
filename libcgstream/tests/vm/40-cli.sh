#!/bin/bash
# The cgstream command on the patched kernel (root, in the VM): interval
# get/set and its errors, per controller too (one value for all, CTRL=MS,
# --controller), watch in kernel mode with --json (kernel seq, bandwidth
# fields, cpu_percent), --recursive (subtree and kernel modes), removal,
# plain lines, exit codes; memory and io (a cgroup holding memory, one
# doing I/O on a loop device) in subtree, stream and emulation modes:
# every memory.stat key by name, the loop device's counters, null for a
# cgroup without the controllers, --controllers and its errors, memory's
# interval at 0.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${CGSTREAM_BUILD:-$(cd "$here/../.." && pwd)}
cgstream=$build/cgstream
python=$(command -v python3 || echo /usr/bin/python3)
[[ -x $cgstream ]] || { echo "FAIL: $cgstream not built"; exit 1; }
. "$build/tests/other-user.sh" || { echo "FAIL: $build/tests/other-user.sh missing"; exit 1; }
. "$build/tests/cli-lib.sh" || { echo "FAIL: $build/tests/cli-lib.sh missing"; exit 1; }
root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[[ -n $root && -e $root/cpu.stat.stream ]] || { echo "SKIP: no cpu.stat.stream"; exit 77; }

tmp=$(mktemp -d /tmp/cgstream-vmcli.XXXXXX)
parent=$root/cgstest-vmcli-$$
rel=${parent#"$root"}	# as every output shows it: below the cgroup2 mount
saved=()
for f in {cpu,memory,io}.stat.stream_interval pressure.stream_interval; do
	[[ -e $root/$f ]] && saved+=("$f" "$(cat "$root/$f")")
done
# pressure: streamed by this kernel (the pressure patches), or skipped
psi_streamed=false
[[ -e $root/pressure.stream_interval ]] && psi_streamed=true
burner= nobody_dir=
cleanup() {
	[[ -n $burner ]] && kill "$burner" 2>/dev/null && wait "$burner" 2>/dev/null
	loads_stop
	for ((i = 0; i < ${#saved[@]}; i += 2)); do
		echo "${saved[i + 1]}" >"$root/${saved[i]}"
	done
	for d in "$parent/bw" "$parent/a/x" "$parent/a" "$parent/b" "$parent/mio/plain/leaf" \
		"$parent/mio/plain" "$parent/mio/mem" "$parent/mio/io" "$parent/mio" "$parent"; do
		rmdir "$d" 2>/dev/null
	done
	rm -rf "$tmp" ${nobody_dir:+"$nobody_dir"}
}
trap cleanup EXIT

# interval
expect 0 '' "$cgstream" interval 300
if $psi_streamed; then
	[[ $(cat "$root/pressure.stream_interval") == 300 ]] || fail "interval 300 left pressure at $(cat "$root/pressure.stream_interval")"
else
	grep -q '^cgstream: this kernel does not stream pressure (no pressure.stream_interval): skipped$' "$tmp/err" ||
		fail "interval 300 did not say pressure is skipped: $(cat "$tmp/err")"
fi
expect 0 '' "$cgstream" interval
[[ $(cat "$tmp/out") == 300 ]] || fail "interval printed '$(cat "$tmp/out")'"
[[ $(cat "$root/cpu.stat.stream_interval") == 300 ]] || fail "the kernel has $(cat "$root/cpu.stat.stream_interval")"
expect 2 '^cgstream: 5 is not a valid interval: use 0 \(off\) or 10\.\.3600000 ms$' "$cgstream" interval 5
expect 2 'not a valid interval' "$cgstream" interval 12abc
# as nobody: a copy of the command (the checkout may be out of its reach)
nobody_dir=$(nobody_copy "$build") || fail "no copy of cgstream that uid 65534 can run"
expect 4 '^cgstream: setting the interval needs root \(CAP_SYS_ADMIN\)$' \
	as_nobody "$nobody_dir/cgstream" interval 200
expect 0 '' as_nobody "$nobody_dir/cgstream" interval
[[ $(cat "$tmp/out") == 300 ]] || fail "interval as nobody printed '$(cat "$tmp/out")'"

# per controller: one value sets all three; CTRL=MS one; --controller
# limits; lines 'CTRL MS' once they differ; nothing written on a bad value
intervals() { cat "$root"/{cpu,memory,io}.stat.stream_interval | paste -sd " "; }
[[ $(intervals) == "300 300 300" ]] || fail "interval 300 set $(intervals)"
expect 0 '' "$cgstream" interval memory=600
[[ $(intervals) == "300 600 300" ]] || fail "memory=600 set $(intervals)"
expect 0 '' "$cgstream" interval
want=$'cpu 300\nmemory 600\nio 300'
$psi_streamed && want+=$'\npressure 300'
[[ $(cat "$tmp/out") == "$want" ]] || fail "interval printed '$(cat "$tmp/out")'"
expect 0 '' "$cgstream" interval --controller memory
[[ $(cat "$tmp/out") == 600 ]] || fail "--controller memory printed '$(cat "$tmp/out")'"
expect 0 '' "$cgstream" interval --controller cpu,io
[[ $(cat "$tmp/out") == 300 ]] || fail "--controller cpu,io printed '$(cat "$tmp/out")'"
expect 0 '' "$cgstream" interval 400 io=700
[[ $(intervals) == "400 400 700" ]] || fail "400 io=700 set $(intervals)"
expect 0 '' "$cgstream" interval --controller cpu,io 300
[[ $(intervals) == "300 400 300" ]] || fail "--controller cpu,io 300 set $(intervals)"
expect 0 '' "$cgstream" interval 300 cpu= memory= io=
[[ $(intervals) == "300 300 300" ]] || fail "empty overrides: $(intervals)"
expect 2 '^cgstream: 5 is not a valid interval' "$cgstream" interval 1000 memory=5
expect 2 '^cgstream: 1x is not a valid interval' "$cgstream" interval io=1x 1000
expect 2 'not a valid interval' "$cgstream" interval memory=3600001
[[ $(intervals) == "300 300 300" ]] || fail "a bad value changed $(intervals)"
expect 4 '^cgstream: setting the interval needs root \(CAP_SYS_ADMIN\)$' \
	as_nobody "$nobody_dir/cgstream" interval memory=200
[[ $(intervals) == "300 300 300" ]] || fail "nobody changed $(intervals)"
if $psi_streamed; then
	expect 0 '' "$cgstream" interval pressure=250
	[[ $(cat "$root/pressure.stream_interval") == 250 && $(intervals) == "300 300 300" ]] ||
		fail "pressure=250 set $(intervals) $(cat "$root/pressure.stream_interval")"
	expect 0 '' "$cgstream" interval --controller pressure
	[[ $(cat "$tmp/out") == 250 ]] || fail "--controller pressure printed '$(cat "$tmp/out")'"
	expect 0 '' "$cgstream" interval pressure=300
else
	expect 5 '^cgstream: this kernel has no pressure.stream_interval' "$cgstream" interval pressure=250
fi
echo "ok: intervals per controller"
expect 3 "^cgstream: /cgstest-none: no such cgroup$" "$cgstream" watch cgstest-none

# cgroups: a throttled burner (cpu controller, cpu.max) and an idle one
mkdir "$parent" "$parent/a" "$parent/b" || fail "mkdir under $root"
echo +cpu >"$root/cgroup.subtree_control" && echo +cpu >"$parent/cgroup.subtree_control" &&
	mkdir "$parent/bw" && echo "20000 100000" >"$parent/bw/cpu.max" ||
	fail "cannot enable the cpu controller"
sh -c 'echo $$ > '"$parent/bw/cgroup.procs"'; exec sh -c "while :; do :; done"' &
burner=$!
for _ in $(seq 100); do grep -q . "$parent/bw/cgroup.procs" && break; sleep 0.1; done
grep -q . "$parent/bw/cgroup.procs" || fail "the burner did not join $parent/bw"

# --json, auto mode picks the kernel
mkdir "$parent/a/x" || fail "mkdir $parent/a/x"
expect 0 '' "$cgstream" watch --json --count 4 "$parent/bw" "$parent/a" "$parent/a/x" /
"$python" - "$tmp/out" "$rel" "/" <<'PY' || fail "--json in kernel mode"
import json, sys
out, parent, root = sys.argv[1:]
objs = [json.loads(l) for l in open(out).read().splitlines()]
by = {}
for o in objs:
    assert o["mode"] == "kernel", o
    by.setdefault(o["cgroup"], []).append(o)
assert set(by) == {parent + "/bw", parent + "/a", parent + "/a/x", root}, set(by)
for cg, l in by.items():
    assert 3 <= len(l) <= 4, (cg, len(l))
    seqs = [o["seq"] for o in l]
    assert seqs == sorted(set(seqs)), seqs
    assert l[0]["cpu_percent"] is None
    assert all(isinstance(o["cpu_percent"], float) for o in l[1:]), l
bw = by[parent + "/bw"]
assert all(isinstance(o[k], int) for o in bw for k in ("nr_periods", "nr_throttled", "throttled_usec", "nr_bursts", "burst_usec")), bw[0]
assert bw[-1]["nr_throttled"] > bw[0]["nr_throttled"], bw
# cpu.max: 20% of one CPU.  One cycle can show more (usage lands in bursts
# at period starts); over all cycles the cap holds.  No lower bound: on a
# TCG guest of a loaded host the burner may hardly run at all.
rate = 100.0 * (bw[-1]["usage_usec"] - bw[0]["usage_usec"]) / (bw[-1]["flush_time_usec"] - bw[0]["flush_time_usec"])
assert 0 <= rate <= 35, rate
# a cgroup without the cpu controller has no bandwidth fields: null
assert all(by[parent + "/a/x"][0][k] is None for k in ("nr_periods", "nr_throttled", "throttled_usec", "nr_bursts", "burst_usec")), by[parent + "/a/x"][0]
assert all(isinstance(by[parent + "/a/x"][0][k], int) for k in ("usage_usec", "user_usec", "system_usec", "nice_usec"))
print("ok: --json kernel mode: seqs, bandwidth fields, cpu.max 20%% -> %.1f%%" % rate)
PY

# --recursive: the whole subtree through cpu.stat.stream.subtree, and
# through a stream per cgroup with --mode kernel; ids and parents
for mode in auto kernel; do
	expect 0 '' "$cgstream" watch --recursive --json --count 3 --mode $mode "$parent"
	"$python" - "$tmp/out" "$parent" "$mode" "$root" <<'PY' || fail "--recursive --mode $mode"
import json, os, sys
out, parent, mode, root = sys.argv[1:]
want = {parent, parent + "/a", parent + "/a/x", parent + "/b", parent + "/bw"}
added, seen = {}, {}
for o in map(json.loads, open(out).read().splitlines()):
    o["cgroup"] = os.path.normpath(root + o["cgroup"])     # shown below the mount
    assert o["cgroup_id"] == os.stat(o["cgroup"]).st_ino, o
    if o.get("event") == "added":
        added[o["cgroup"]] = o
        continue
    assert "event" not in o, o
    assert o["mode"] == ("subtree" if mode == "auto" else "kernel"), o
    seen.setdefault(o["cgroup"], []).append(o["seq"])
assert set(added) == want and set(seen) == want, (set(added), set(seen))
assert added[parent]["parent_id"] == 0
assert added[parent + "/a/x"]["parent_id"] == os.stat(parent + "/a").st_ino
assert all(len(q) >= 2 for q in seen.values()), seen
print("ok: --recursive (%s): %d cgroups added, sampled" % (mode, len(seen)))
PY
done

# plain lines show throttling
expect 0 '' "$cgstream" watch --mode kernel --count 3 "$parent/bw"
grep -Eq "^seq [0-9]+ /cgstest-vmcli-$$/bw: cpu [0-9.]+% \(user [0-9.]+%, system [0-9.]+%\), throttled [0-9]+ times for [0-9.]+ ms(; pressure .*)?$" "$tmp/out" ||
	fail "plain lines: $(cat "$tmp/out")"
echo "ok: plain lines with throttling"

# removal while watched
"$cgstream" watch --json "$parent/a/x" "$parent/b" >"$tmp/rm" 2>"$tmp/rm.err" &
pid=$!
wait_for 600 grep -qs "\"cgroup\": \"$rel/b\", .*\"seq\"" "$tmp/rm" ||
	fail "no sample of $parent/b in 60 s: $(cat "$tmp/rm" "$tmp/rm.err")"
rmdir "$parent/b"
wait_for 600 grep -qs '"event": "removed"' "$tmp/rm" ||
	fail "no removal event for $parent/b in 60 s: $(cat "$tmp/rm" "$tmp/rm.err")"
# a cycle more: a sample of b after its removal would show now (lines_at,
# not n: wait_for's own locals would hide a global of that name)
lines_at=$(wc -l <"$tmp/rm")
more_lines() { (($(wc -l <"$tmp/rm") > lines_at)); }
wait_for 600 more_lines || fail "no sample of $parent/a/x after the removal in 60 s: $(cat "$tmp/rm")"
kill -TERM $pid
wait $pid; rc=$?
[[ $rc == 0 ]] || fail "watch exited $rc on SIGTERM"
n=$(grep -Ec "\"cgroup\": \"$rel/b\", \"cgroup_id\": [0-9]+, \"event\": \"removed\"" "$tmp/rm")
[[ $n == 1 ]] || fail "$n removal events: $(cat "$tmp/rm")"
n=$(sed -n '/"event": "removed"/,$p' "$tmp/rm" | grep -c "\"cgroup\": \"$rel/b\"")
[[ $n == 1 ]] || fail "samples of $parent/b after its removal"
echo "ok: removal event once"

# memory and io: a cgroup holding 48 MiB, one doing I/O on a loop device,
# one with neither controller (plain/leaf: plain does not pass them on)
echo "+memory +io" >"$root/cgroup.subtree_control" &&
	mkdir "$parent/mio" && echo "+memory +io" >"$parent/cgroup.subtree_control" &&
	echo "+memory +io" >"$parent/mio/cgroup.subtree_control" &&
	mkdir "$parent/mio/mem" "$parent/mio/io" "$parent/mio/plain" "$parent/mio/plain/leaf" ||
	fail "cannot enable the memory and io controllers"
loop_start "$tmp/loop" || fail "no loop device"
hold_memory "$parent/mio/mem" 48
do_io "$parent/mio/io"
for _ in $(seq 300); do
	(($(cat "$parent/mio/mem/memory.current") > 40 << 20)) && grep -q "^$loop_majmin .*wbytes=[1-9]" "$parent/mio/io/io.stat" && break
	sleep 0.1
done
grep -q "^$loop_majmin .*wbytes=[1-9]" "$parent/mio/io/io.stat" || fail "no I/O on $loop_dev in io.stat"
echo "loads: mem holds $(($(cat "$parent/mio/mem/memory.current") >> 20)) MiB, io on $loop_dev ($loop_majmin)"

# --json of the tree in each mode: memory by name (memory.stat's keys in
# its order, then current, events.*), io per device, each controller's mode
# and seq; null where a cgroup lacks the controller
for mode in auto kernel fallback; do
	expect 0 '' "$cgstream" watch --recursive --json --count 3 --mode $mode "$parent/mio"
	"$python" - "$tmp/out" "$parent/mio" "$mode" "$loop_majmin" "$root" <<'PY' || fail "memory and io, --mode $mode"
import json, os, sys
out, top, mode, majmin, root = sys.argv[1:]
want = {"auto": "subtree", "kernel": "kernel", "fallback": "fallback"}[mode]
major, minor = map(int, majmin.split(":"))
by = {}
for o in map(json.loads, open(out).read().splitlines()):
    o["cgroup"] = os.path.normpath(root + o["cgroup"])     # shown below the mount
    if "event" in o:
        continue
    assert o["mode"] == o["memory_mode"] == o["io_mode"] == want, o
    by.setdefault(o["cgroup"], []).append(o)
assert set(by) == {top, top + "/mem", top + "/io", top + "/plain", top + "/plain/leaf"}, set(by)
for cg in (top, top + "/mem", top + "/io", top + "/plain"):
    stat = [l.split()[0] for l in open(cg + "/memory.stat")]
    events = ["events." + l.split()[0] for l in open(cg + "/memory.events")]
    for o in by[cg]:
        names = list(o["memory"])
        assert names[:len(stat)] == stat, (cg, names[:len(stat)], stat)
        rest = names[len(stat):]
        assert rest[0] == "current" and rest[-len(events):] == events, (cg, rest)
        assert all(isinstance(v, int) for v in o["memory"].values()), o["memory"]
        assert isinstance(o["io"], list), o
    mseq = [o["memory_seq"] for o in by[cg]]
    assert mseq == sorted(mseq) and len(by[cg]) >= 2, (cg, mseq)
for o in by[top + "/plain/leaf"]:
    assert o["memory"] is None and o["io"] is None and o["memory_seq"] is None, o
    assert isinstance(o["usage_usec"], int), o
mem = by[top + "/mem"][-1]["memory"]
assert mem["current"] > 40 << 20 and mem["anon"] > 40 << 20, mem
ios = [[d for d in o["io"] if (d["major"], d["minor"]) == (major, minor)] for o in by[top + "/io"]]
assert all(len(d) == 1 for d in ios), by[top + "/io"]
first, last = ios[0][0], ios[-1][0]
assert last["wbytes"] >= first["wbytes"] > 0 and last["rbytes"] > 0 and last["wios"] > 0, (first, last)
assert set(last) == {"major", "minor", "rbytes", "wbytes", "rios", "wios", "dbytes", "dios"}, last
# the parent counts its children's io
assert any((d["major"], d["minor"]) == (major, minor) for d in by[top][-1]["io"]), by[top][-1]
print("ok: %s mode: memory %d values by name, mem current %d MiB, io %s wbytes %d"
      % (want, len(mem), mem["current"] >> 20, majmin, last["wbytes"]))
PY
done

# plain lines; a group of one cgroup without cpu (its keys left out)
expect 0 '' "$cgstream" watch --count 3 "$parent/mio/io"
grep -Eq "^seq [0-9]+ /cgstest-vmcli-$$/mio/io: cpu [0-9.]+% \(user [0-9.]+%, system [0-9.]+%\); memory [0-9.]+[BKMG] \(anon [0-9.]+[BKMG], file [0-9.]+[BKMG]\); io read [0-9.]+[BKMG]/s, write [0-9.]+[BKMG]/s(; pressure cpu-some [0-9.]+%, .*)?$" "$tmp/out" ||
	fail "plain lines with memory and io: $(cat "$tmp/out")"
expect 0 '' "$cgstream" watch --json --count 2 --controllers memory "$parent/mio/mem"
"$python" - "$tmp/out" <<'PY' || fail "--controllers memory"
import json, sys
for o in map(json.loads, open(sys.argv[1]).read().splitlines()):
    assert list(o) == ["cgroup", "cgroup_id", "changed", "mode", "memory_mode", "memory_seq",
                       "memory_flush_time_usec", "memory"], list(o)
    assert o["mode"] == o["memory_mode"] == "kernel", o
print("ok: --controllers memory: memory's keys only, kernel mode")
PY
expect 5 "^cgstream: $rel/mio/plain/leaf: the memory controller is not enabled for this cgroup" \
	"$cgstream" watch --controllers cpu,memory "$parent/mio/plain/leaf"
expect 5 'the io controller is not enabled' "$cgstream" watch --recursive --controllers io "$parent/mio/plain/leaf"
expect 5 'the io controller is not enabled' "$cgstream" top -b --controllers io "$parent/mio/plain/leaf"
# by default a cgroup without them is watched for cpu alone
expect 0 '' "$cgstream" watch --json --count 1 "$parent/mio/plain/leaf"
grep -q '"memory"' "$tmp/out" && fail "memory of a cgroup without it: $(cat "$tmp/out")"
echo "ok: plain lines, --controllers, not enabled: exit 5"

# pressure in each mode the kernel offers (the subtree file, a stream per
# cgroup; the emulation on any kernel): its values by the SCHEMA's names
# (SPEC.md's list, irq's where the kernel has irq.pressure), the io cgroup
# waiting for io at some time, none for a cgroup whose pressure is off
if [[ -e $parent/cpu.pressure ]]; then
	echo 0 >"$parent/mio/plain/cgroup.pressure" || fail "cgroup.pressure"
	modes="fallback"
	$psi_streamed && modes="auto kernel fallback"
	for mode in $modes; do
		expect 0 '' "$cgstream" watch --recursive --json --count 3 --mode $mode \
			--controllers cpu,pressure "$parent/mio"
		"$python" - "$tmp/out" "$parent/mio" "$mode" "$root" <<'PY' || fail "pressure, --mode $mode"
import json, os, sys
out, top, mode, root = sys.argv[1:]
want = {"auto": "subtree", "kernel": "kernel", "fallback": "fallback"}[mode]
names = ["%s.%s.%s" % (r, k, v) for r in ("cpu", "memory", "io") for k in ("some", "full")
         for v in ("avg10", "avg60", "avg300", "total")]
if os.path.exists("/proc/pressure/irq"):
    names += ["irq.full.%s" % v for v in ("avg10", "avg60", "avg300", "total")]
by = {}
for o in map(json.loads, open(out).read().splitlines()):
    o["cgroup"] = os.path.normpath(root + o["cgroup"])
    if "event" not in o:
        by.setdefault(o["cgroup"], []).append(o)
for cg in (top, top + "/mem", top + "/io"):
    for o in by[cg]:
        assert o["pressure_mode"] == want, o
        assert list(o["pressure"]) == names, (cg, list(o["pressure"]))
    totals = [o["pressure"]["io.some.total"] for o in by[cg]]
    assert totals == sorted(totals), (cg, totals)
assert by[top + "/io"][-1]["pressure"]["io.some.total"] > 0, by[top + "/io"][-1]
for o in by[top + "/plain"]:
    assert o["pressure"] is None and o["pressure_seq"] is None, o
    assert isinstance(o["usage_usec"], int), o
print("ok: %s mode: pressure's %d values by name; io waited %d us for io"
      % (want, len(names), by[top + "/io"][-1]["pressure"]["io.some.total"]))
PY
	done
	echo 1 >"$parent/mio/plain/cgroup.pressure"
else
	echo "note: no $parent/cpu.pressure (no PSI in this kernel): pressure not checked"
fi

# memory's interval at 0: said; cpu and io samples go on
echo 0 >"$root/memory.stat.stream_interval"
expect 0 'flush interval is 0 \(streaming off\) for memory: its values stay as of its last flush' \
	"$cgstream" watch --json --count 2 "$parent/mio/mem"
echo 300 >"$root/memory.stat.stream_interval"
echo "ok: memory's interval 0 said"

# streaming off: watch says so and waits.  A new open file has seen no
# flush yet, so the last flush made before streaming stopped is readable
# once (at most one sample); then nothing comes.
echo 0 >"$root/cpu.stat.stream_interval"
timeout 8 "$cgstream" watch --json --count 2 "$parent/a/x" >"$tmp/off" 2>"$tmp/off.err"
rc=$?
[[ $rc == 124 ]] || fail "watch with interval 0 exited $rc"
(($(grep -c '"seq"' "$tmp/off") <= 1)) || fail "interval 0: more than the last flush: $(cat "$tmp/off")"
grep -q "flush interval is 0" "$tmp/off.err" || fail "no interval-0 warning: $(cat "$tmp/off.err")"
echo "ok: interval 0 warns and waits"
echo "cli-vm: all passed"
