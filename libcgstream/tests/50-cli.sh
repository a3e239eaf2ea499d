#!/bin/bash
# The cgstream command on the host: exit codes, messages, --json lines
# (with cgroup ids; paths below the cgroup2 mount), plain lines, --output,
# --recursive (a tree: added and removed events), names that break formats
# (names.py: JSON that a parser reads back to each name, plain lines without
# control bytes), sd_notify READY/STOPPING, SIGTERM; --controllers and
# interval's per-controller forms and their errors; memory and io (JSON
# keys, plain lines) where the host's cgroup2 has those controllers;
# pressure (JSON keys and names, plain lines, a cgroup whose pressure is
# off) where the host's kernel has PSI; interval against fake-kernel.so
# (cpu and pressure streamed, memory and io skipped, said with their
# files).  Fallback mode otherwise (the host kernel has no cpu.stat.stream).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${CGSTREAM_BUILD:-$(cd "$here/../.." && pwd)}
cgstream=$build/cgstream
[[ -x $cgstream ]] || { echo "FAIL: $cgstream not built"; exit 1; }
. "$build/tests/other-user.sh" || { echo "FAIL: $build/tests/other-user.sh missing"; exit 1; }
. "$build/tests/cli-lib.sh" || { echo "FAIL: $build/tests/cli-lib.sh missing"; exit 1; }
tmp=$(mktemp -d /tmp/cgstream-cli.XXXXXX)
cgs=()
nobody_dir=
cleanup() {
	local d
	[[ -n ${names_dir:-} ]] && find "$names_dir" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
	for ((i = ${#cgs[@]} - 1; i >= 0; i--)); do rmdir "${cgs[i]}" 2>/dev/null; done
	rm -rf "$tmp" ${nobody_dir:+"$nobody_dir"}
}
trap cleanup EXIT


expect 0 '' "$cgstream" --version
grep -Eq '^cgstream 1\.4 \(libcgstream 1\.4\.[0-9]+\)$' "$tmp/out" || fail "--version printed $(cat "$tmp/out")"
expect 0 '' "$cgstream" --help
grep -q 'cgstream watch' "$tmp/out" || fail "--help lacks the watch usage"
expect 2 'Usage' "$cgstream"
expect 2 "unknown command 'frobnicate'" "$cgstream" frobnicate
expect 2 '^cgstream: 5 is not a valid interval: use 0 \(off\) or 10\.\.3600000 ms$' "$cgstream" interval 5
expect 2 'abc is not a valid interval' "$cgstream" interval abc
expect 2 '^cgstream: -5 is not a valid interval' "$cgstream" interval -5
expect 2 '^cgstream: -5 is not a valid interval' "$cgstream" interval -- -5
expect 2 '3600001 is not a valid interval' "$cgstream" interval 3600001
expect 2 'at most one interval for all controllers' "$cgstream" interval 1 2
# the per-controller forms: bad names, bad values, all refused before
# anything is written
expect 2 "^cgstream: --controllers is a comma-separated list of cpu, memory, io and pressure \(or all\), not 'disk'$" \
	"$cgstream" interval --controller disk
expect 2 "not 'disk'" "$cgstream" interval --controllers=disk
expect 2 "not 'cpu,,'" "$cgstream" interval --controller cpu,,
expect 2 'not ' "$cgstream" interval --controller ''
expect 2 "^cgstream: --controllers is a comma-separated list of cpu, memory, io and pressure \(or all\), not ''$" \
	"$cgstream" interval --controller
expect 2 '^cgstream: abc is not a valid interval' "$cgstream" interval memory=abc
expect 2 '^cgstream: -5 is not a valid interval' "$cgstream" interval io=-5
expect 2 '^cgstream: \+5 is not a valid interval' "$cgstream" interval cpu=+5
expect 2 '^cgstream: 99999999999999999999 is not a valid interval' "$cgstream" interval cpu=99999999999999999999
expect 2 '^cgstream: 4294967296 is not a valid interval' "$cgstream" interval 4294967296
expect 2 '^cgstream: disk=5 is not a valid interval' "$cgstream" interval disk=5
expect 2 "^cgstream: interval: unknown option '--bogus'$" "$cgstream" interval --bogus
expect 2 "^cgstream: 5 is not a valid interval" "$cgstream" interval 1000 memory=5
expect 2 "^cgstream: --controllers is a comma-separated list of cpu, memory, io and pressure \(or all\), not 'mem'$" \
	"$cgstream" watch --controllers mem /
expect 2 '^cgstream: -1 is not a valid interval' "$cgstream" interval pressure=-1
expect 2 "not ''" "$cgstream" watch --controllers '' /
expect 2 'at least one cgroup' "$cgstream" watch
expect 2 "--mode is auto, subtree, kernel or fallback" "$cgstream" watch --mode bogus /
expect 2 "--mode subtree .* needs --recursive" "$cgstream" watch --mode subtree /
expect 2 'count' "$cgstream" watch --count 0 /
expect 2 'count' "$cgstream" watch --count x /
expect 2 'fallback-interval' "$cgstream" watch --fallback-interval 5 /
expect 2 '' "$cgstream" watch --no-such-option /

if ! grep -q ' cgroup2 ' /proc/self/mountinfo; then
	echo "SKIP: no cgroup2 mount; the watch checks need one"
	exit 77
fi
root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)

expect 3 "^cgstream: /cgstest-none: no such cgroup$" "$cgstream" watch --mode fallback cgstest-none
expect 3 'no such cgroup' "$cgstream" watch --mode fallback / cgstest-none
expect 2 'not a cgroup path' "$cgstream" watch ../etc

if [[ -e $root/cpu.stat.stream ]]; then
	echo "note: this kernel has cpu.stat.stream; the exit-5 checks do not apply"
else
	# interval has no --mode: its message offers none
	expect 5 '^cgstream: this kernel has no cpu.stat.stream_interval \(cgroup stat streaming needs a kernel with the cgstream patches\)$' "$cgstream" interval
	expect 5 '^cgstream: this kernel has no cpu.stat.stream \(cgroup stat streaming\); use --mode fallback or a kernel with the cgstream patches$' "$cgstream" watch --mode kernel /
	expect 5 'no cpu.stat.stream' "$cgstream" interval 100
	[[ $(grep -c . "$tmp/err") == 1 ]] || fail "interval 100: more than one message: $(cat "$tmp/err")"
	expect 5 'no cpu.stat.stream' "$cgstream" interval cpu=100 memory=
	expect 5 'no cpu.stat.stream' "$cgstream" interval --controller cpu
	expect 5 'no cpu.stat.stream' "$cgstream" watch --mode kernel /
	expect 5 'no cpu.stat.stream' "$cgstream" watch --mode kernel --recursive /
	expect 5 '^cgstream: this kernel has no pressure.stream_interval \(cgroup stat streaming needs a kernel with the cgstream patches\)$' \
		"$cgstream" interval --controller pressure
	expect 5 'no pressure.stream_interval' "$cgstream" interval pressure=100
fi
if [[ ! -e $root/cpu.stat.stream.subtree ]]; then
	expect 5 '^cgstream: this kernel has no cpu.stat.stream.subtree' \
		"$cgstream" watch --mode subtree --recursive /
fi
# memory and io: the host's cgroup2 may lack them (a hybrid v1/v2 host)
ctrls=()
for c in memory io; do
	if grep -qw "$c" "$root/cgroup.controllers"; then
		ctrls+=("$c")
		continue
	fi
	expect 5 "^cgstream: the $c controller is not available \($root/cgroup.controllers lacks it\)$" \
		"$cgstream" watch --controllers "cpu,$c" /
	expect 5 "the $c controller is not available" "$cgstream" top -b --controllers "$c" /
	expect 5 "the $c controller is not available" "$cgstream" interval --controller "$c"
done
# pressure: where the kernel has PSI (not booted with psi=0)
if [[ -e $root/cpu.pressure ]]; then
	ctrls+=(pressure)
else
	expect 5 "^cgstream: pressure is not available \($root/cpu.pressure is missing: the kernel has no PSI, or was booted with psi=0\)$" \
		"$cgstream" watch --controllers cpu,pressure /
fi
echo "note: this host's cgroup2 has the controllers: cpu ${ctrls[*]}"

# --json: one object per sample per line; by default cpu, and memory, io
# and pressure where the hierarchy has them
expect 0 '' "$cgstream" watch --json --count 3 --fallback-interval 100 /
python3 - "$tmp/out" "$root" "${ctrls[*]}" <<'PY' || fail "--json output: see above"
import json, os, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, lines
keys = ["cgroup", "cgroup_id", "changed", "seq", "flush_time_usec", "usage_usec", "user_usec", "system_usec",
        "nice_usec", "nr_periods", "nr_throttled", "throttled_usec", "nr_bursts",
        "burst_usec", "cpu_percent", "mode"]
for c in sys.argv[3].split():
    keys += [c + "_mode", c + "_seq", c + "_flush_time_usec", c]
objs = [json.loads(l) for l in lines]
for i, o in enumerate(objs):
    assert list(o) == keys, list(o)
    assert o["cgroup"] == "/", o	# below the cgroup2 mount
    assert o["cgroup_id"] == os.stat(sys.argv[2]).st_ino, o
    assert o["mode"] == "fallback", o
    assert o["seq"] == i + 1, o
    assert isinstance(o["usage_usec"], int) and o["usage_usec"] > 0, o
    assert o["nr_periods"] is None or isinstance(o["nr_periods"], int)
    # the first line has every controller; a later one cpu when (and only
    # when) one of its values moved since the line before
    assert set(o["changed"]) <= {"cpu", "memory", "io", "pressure"}, o
    if i == 0:
        assert o["changed"] == ["cpu"] + sys.argv[3].split(), o
    else:
        cpu = keys[keys.index("usage_usec"):keys.index("cpu_percent")]
        moved = any(o[k] != objs[i - 1][k] for k in cpu)
        assert ("cpu" in o["changed"]) == moved, (objs[i - 1], o)
assert objs[0]["cpu_percent"] is None
assert all(isinstance(o["cpu_percent"], float) for o in objs[1:]), objs
assert objs[2]["flush_time_usec"] > objs[1]["flush_time_usec"] > objs[0]["flush_time_usec"]
print("ok: --json lines parse, keys and values as specified")
PY
# plain watch says once that it emulates the stream (and how often)
if [[ ! -e $root/cpu.stat.stream && -e $root/cpu.pressure ]]; then
	expect 0 '^cgstream: this kernel has no cpu.stat.stream and pressure.stream: fallback mode \(the stream emulated: cpu.stat and \*.pressure read every 100 ms\)$' \
		"$cgstream" watch --controllers cpu,pressure --count 1 --fallback-interval 100 /
fi
if [[ ! -e $root/cpu.stat.stream ]]; then
	expect 0 '^cgstream: this kernel has no cpu.stat.stream: fallback mode \(the stream emulated: cpu.stat read every 100 ms\)$' \
		"$cgstream" watch --controllers cpu --count 2 --fallback-interval 100 /
	[[ $(grep -c . "$tmp/err") == 1 ]] || fail "more than one line on stderr: $(cat "$tmp/err")"
	expect 0 '^cgstream: fallback mode, as asked: cpu.stat read every 100 ms$' \
		"$cgstream" watch --mode fallback --controllers cpu --count 1 --fallback-interval 100 /
	echo "ok: watch says once that it runs in fallback mode"
fi
# --controllers cpu: the keys of before
expect 0 '' "$cgstream" watch --json --controllers cpu --count 1 --fallback-interval 100 /
python3 -c 'import json, sys; o = json.loads(open(sys.argv[1]).read()); assert list(o)[-2:] == ["cpu_percent", "mode"], o' \
	"$tmp/out" || fail "--controllers cpu: $(cat "$tmp/out")"
echo "ok: --controllers cpu: cpu's keys only"

# memory and io in the emulation (memory.stat, memory.current,
# memory.events, io.stat read on the timer): the JSON keys, plain lines
if ((${#ctrls[@]} == 2)); then
	expect 0 '' "$cgstream" watch --json --controllers memory,io --count 2 --fallback-interval 100 /
	python3 - "$tmp/out" "$root" <<'PY' || fail "--controllers memory,io: see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
assert len(objs) == 2, objs
stat = [l.split()[0] for l in open(sys.argv[2] + "/memory.stat")]
for i, o in enumerate(objs):
    assert list(o) == ["cgroup", "cgroup_id", "changed", "mode", "memory_mode", "memory_seq",
                       "memory_flush_time_usec", "memory", "io_mode", "io_seq",
                       "io_flush_time_usec", "io"], list(o)
    assert o["mode"] == o["memory_mode"] == o["io_mode"] == "fallback", o
    assert o["memory_seq"] == o["io_seq"] == i + 1, o
    assert list(o["memory"])[:len(stat)] == stat, (list(o["memory"]), stat)
    assert all(isinstance(v, int) for v in o["memory"].values()), o["memory"]
    for d in o["io"]:
        assert list(d) == ["major", "minor", "rbytes", "wbytes", "rios", "wios", "dbytes", "dios"], d
print("ok: memory (%d values by name) and io (%d devices) in the emulation"
      % (len(objs[0]["memory"]), len(objs[0]["io"])))
PY
	expect 0 '' "$cgstream" watch --count 2 --fallback-interval 100 /
	grep -Eq '^seq 2 /: cpu [0-9.]+% \(user [0-9.]+%, system [0-9.]+%\); memory anon [0-9.]+[BKMGTPE], file [0-9.]+[BKMGTPE]; io read [0-9.]+[BKMGTPE]/s, write [0-9.]+[BKMGTPE]/s$' "$tmp/out" ||
		fail "plain lines with memory and io: $(cat "$tmp/out")"
	echo "ok: plain lines with memory and io"
else
	echo "SKIP (part): memory and io in the emulation: the host's cgroup2 lacks them"
fi

# pressure in the emulation (cpu.pressure, memory.pressure, io.pressure,
# irq.pressure read on the timer): its JSON keys and names (the kernel's
# SCHEMA names, in order: SPEC.md's list as the oracle), totals within the
# files' read before and after, plain lines
if [[ -e $root/cpu.pressure ]]; then
	psi_before=$(cat "$root"/{cpu,memory,io}.pressure)
	expect 0 '' "$cgstream" watch --json --controllers pressure --count 2 --fallback-interval 100 /
	psi_after=$(cat "$root"/{cpu,memory,io}.pressure)
	python3 - "$tmp/out" "$root" "$psi_before" "$psi_after" <<'PY' || fail "--controllers pressure: see above"
import json, os, re, sys
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
root = sys.argv[2]
assert len(objs) == 2, objs
names = []
for r in ("cpu", "memory", "io", "irq"):
    path = os.path.join(root, r + ".pressure")
    if not os.path.exists(path):
        continue
    for line in open(path):
        names += ["%s.%s.%s" % (r, line.split()[0], k) for k in ("avg10", "avg60", "avg300", "total")]
def totals(text):
    # "some ... total=N" lines of cpu, memory, io in that order: their totals
    return [int(t) for t in re.findall(r"total=(\d+)", text)]
before, after = totals(sys.argv[3]), totals(sys.argv[4])
for i, o in enumerate(objs):
    assert list(o) == ["cgroup", "cgroup_id", "changed", "mode", "pressure_mode", "pressure_seq",
                       "pressure_flush_time_usec", "pressure"], list(o)
    assert o["pressure_mode"] == "fallback" and o["pressure_seq"] == i + 1, o
    assert list(o["pressure"]) == names, (list(o["pressure"]), names)
    got = [v for k, v in o["pressure"].items() if k.endswith(".total") and not k.startswith("irq.")]
    assert all(b <= g <= a for b, g, a in zip(before, got, after)), (before, got, after)
    assert all(0 <= v <= 10000 for k, v in o["pressure"].items() if ".avg" in k), o
print("ok: pressure in the emulation: %d values by the kernel's names" % len(names))
PY
	expect 0 '' "$cgstream" watch --controllers cpu,pressure --count 2 --fallback-interval 100 /
	grep -Eq '^seq 2 /: cpu [0-9.]+% \(user [0-9.]+%, system [0-9.]+%\); pressure cpu-some [0-9.]+%, mem-some [0-9.]+%, mem-full [0-9.]+%, io-some [0-9.]+%, io-full [0-9.]+%$' "$tmp/out" &&
		grep -Eq '^seq 1 /: first sample, [0-9.]+ s of CPU so far; pressure: first sample$' "$tmp/out" ||
		fail "plain lines with pressure: $(cat "$tmp/out")"
	echo "ok: plain lines with pressure"
else
	echo "SKIP (part): pressure in the emulation: the host's kernel has no PSI"
fi

# interval against fake-kernel.so, whose kernel streams cpu and pressure:
# both set, memory and io skipped (and said, with their files)
fake=$build/tests/fake-kernel.so
if [[ ! -e $root/cpu.stat.stream && -e $fake ]]; then
	expect 0 '' env LD_PRELOAD="$fake" FAKE_INTERVAL_MS=200 "$cgstream" interval
	[[ $(cat "$tmp/out") == 200 ]] || fail "interval (cpu and pressure at 200): $(cat "$tmp/out")"
	expect 0 '^cgstream: this kernel does not stream memory \(no memory.stat.stream_interval\): skipped$' \
		env LD_PRELOAD="$fake" "$cgstream" interval 300
	grep -q '^cgstream: this kernel does not stream io (no io.stat.stream_interval): skipped$' "$tmp/err" ||
		fail "interval 300: $(cat "$tmp/err")"
	grep -q 'pressure' "$tmp/err" && fail "interval 300 skipped pressure: $(cat "$tmp/err")"
	expect 0 '' env LD_PRELOAD="$fake" FAKE_INTERVAL_MS=200 "$cgstream" interval --controllers pressure
	[[ $(cat "$tmp/out") == 200 ]] || fail "interval --controllers pressure: $(cat "$tmp/out")"
	expect 2 '^cgstream: 5 is not a valid interval' env LD_PRELOAD="$fake" "$cgstream" interval pressure=5
	echo "ok: interval with a kernel that streams cpu and pressure (fake-kernel.so)"
fi

# --every N: one cycle in N, when flush_seq reaches a multiple of N; the
# first printed CPU% already has a base (the first sample seen); --count
# counts printed cycles
expect 2 '^cgstream: --every wants a number of cycles >= 1' "$cgstream" watch --every 0 /
expect 2 '^cgstream: --every wants a number of cycles >= 1' "$cgstream" watch --every x /
expect 0 '' "$cgstream" watch --json --every 3 --count 2 --fallback-interval 100 /
python3 - "$tmp/out" <<'PY' || fail "--every 3 output: see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
assert [o["seq"] for o in objs] == [3, 6], objs
assert all(isinstance(o["cpu_percent"], float) for o in objs), objs
print("ok: --every 3 printed seq 3 and 6, both with CPU%")
PY

# plain lines (not a tty), and --output appends to a file
expect 0 '' "$cgstream" watch --count 2 --fallback-interval 100 --output "$tmp/plain" /
[[ ! -s $tmp/out ]] || fail "--output still wrote to stdout"
grep -Eq '^seq 1 /: first sample' "$tmp/plain" || fail "plain line 1: $(cat "$tmp/plain")"
grep -Eq '^seq 2 /: cpu [0-9.]+% \(user [0-9.]+%, system [0-9.]+%\)(; pressure cpu-some .*)?$' "$tmp/plain" ||
	fail "plain line 2: $(cat "$tmp/plain")"
echo "ok: plain lines, --output"
expect 1 'cgstest-nodir' "$cgstream" watch --count 1 --output "$tmp/cgstest-nodir/x" /

# child cgroups: removal, --recursive, permission denied
parent=$root/cgstest-cli-$$
rel=${parent#"$root"}	# as every output shows it
if ! mkdir "$parent" 2>/dev/null; then
	echo "note: cannot create cgroups under $root: removal/recursive checks skipped"
else
	cgs+=("$parent")
	mkdir "$parent/a" "$parent/b" && cgs+=("$parent/a" "$parent/b")

	# a cgroup whose pressure is off: asked for, exit 5 and why; by
	# default, its lines carry none
	if [[ -e $parent/cpu.pressure ]] && echo 0 >"$parent/a/cgroup.pressure"; then
		expect 5 "^cgstream: $rel/a: pressure is off for this cgroup \(no cpu.pressure: its cgroup.pressure is 0\)$" \
			"$cgstream" watch --controllers cpu,pressure "$parent/a"
		expect 0 '' "$cgstream" watch --json --count 1 --fallback-interval 100 "$parent/a"
		grep -q '"pressure' "$tmp/out" && fail "pressure keys of a cgroup without pressure: $(cat "$tmp/out")"
		expect 0 '' "$cgstream" watch --json --count 1 --fallback-interval 100 "$parent/a" "$parent/b"
		python3 -c 'import json, sys
a, b = (json.loads(l) for l in open(sys.argv[1]))
assert a["cgroup"].endswith("/a") and a["pressure"] is None and a["pressure_seq"] is None, a
assert b["cgroup"].endswith("/b") and isinstance(b["pressure"], dict) and "cpu.some.total" in b["pressure"], b' \
			"$tmp/out" || fail "a group of a cgroup with pressure and one without: $(cat "$tmp/out")"
		echo 1 >"$parent/a/cgroup.pressure"
		echo "ok: a cgroup whose pressure is off: exit 5 asked for, none by default"
	fi

	# a removed cgroup: {"event": "removed"}, then it is not watched
	"$cgstream" watch --json --fallback-interval 100 "$parent/a" "$parent/b" >"$tmp/rm" 2>"$tmp/rm.err" &
	pid=$!
	sleep 0.5
	a_id=$(stat -c %i "$parent/a")
	rmdir "$parent/a"
	sleep 0.5
	kill -TERM $pid
	wait $pid; rc=$?
	[[ $rc == 0 ]] || fail "watch exited $rc after SIGTERM: $(cat "$tmp/rm.err")"
	n=$(grep -c "\"cgroup\": \"$rel/a\", \"cgroup_id\": $a_id, \"event\": \"removed\"" "$tmp/rm")
	[[ $n == 1 ]] || fail "$n removal events: $(cat "$tmp/rm")"
	after=$(sed -n "/\"event\": \"removed\"/,\$p" "$tmp/rm" | grep -c "\"cgroup\": \"$rel/a\"")
	[[ $after == 1 ]] || fail "samples of $parent/a after its removal"
	grep -q "\"cgroup\": \"$rel/b\", \"cgroup_id\": $(stat -c %i "$parent/b"), \"changed\": \[.*\"seq\"" \
		"$tmp/rm" || fail "no samples of $parent/b"
	echo "ok: removal event once, SIGTERM exits 0"

	# the only cgroup removed: watch ends by itself
	mkdir "$parent/a"
	"$cgstream" watch --fallback-interval 100 "$parent/a" >"$tmp/rm2" 2>"$tmp/rm2.err" &
	pid=$!
	sleep 0.5
	rmdir "$parent/a"
	for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	kill -0 $pid 2>/dev/null && { kill $pid; fail "watch did not end with no cgroups left"; }
	wait $pid; rc=$?
	[[ $rc == 0 ]] || fail "exit $rc with no cgroups left"
	grep -q "/cgstest-cli-$$/a: removed" "$tmp/rm2" || fail "no removal line: $(cat "$tmp/rm2")"
	echo "ok: watch ends when nothing is left"

	# --recursive: the tree, and cgroups made, removed, and removed and made
	# again while watching: each "added" / "removed" once, by id
	mkdir -p "$parent/b/c/d" && cgs+=("$parent/b/c" "$parent/b/c/d")
	"$cgstream" watch --recursive --json --fallback-interval 100 "$parent" >"$tmp/rec" 2>"$tmp/rec.err" &
	pid=$!
	sleep 0.5
	mkdir "$parent/new" && cgs+=("$parent/new")
	old_id=$(stat -c %i "$parent/b/c/d")
	rmdir "$parent/b/c/d" && mkdir "$parent/b/c/d"
	new_id=$(stat -c %i "$parent/b/c/d")
	sleep 0.5
	kill -TERM $pid; wait $pid
	python3 - "$tmp/rec" "$parent" "$old_id" "$new_id" "$rel" <<'PY' || fail "--recursive: see above"
import json, os, sys
lines = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
parent, old_id, new_id, rel = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
added, removed, sampled, ids = {}, {}, {}, {}
for o in lines:
    i = o["cgroup_id"]
    assert "parent_id" in o, o
    if o.get("event") == "added":
        assert i not in added, ("added twice", o)
        added[i] = o
    elif o.get("event") == "removed":
        assert i not in removed, ("removed twice", o)
        # its last values, as read before it went (the emulation has no final ones)
        assert o["final"] == [] and isinstance(o["usage_usec"], int), o
        removed[i] = o
    else:
        assert "event" not in o, o
        assert i in added and i not in removed, ("sample outside added..removed", o)
        sampled.setdefault(i, []).append(o["seq"])
    ids[i] = o["cgroup"]
want = [parent, parent + "/b", parent + "/b/c", parent + "/b/c/d", parent + "/new", parent + "/a"]
for c in want:
    i = os.stat(c).st_ino if os.path.exists(c) else None
    assert i is None or i in sampled, ("no samples", c)
assert ids[old_id] == ids[new_id] == rel + "/b/c/d", ids
assert old_id in removed and new_id in added, (removed.keys(), added.keys())
assert lines.index(removed[old_id]) < lines.index(added[new_id]), "removed after added"
assert added[os.stat(parent + "/b/c").st_ino]["parent_id"] == os.stat(parent + "/b").st_ino
for i, q in sampled.items():
    assert q == sorted(set(q)), (ids[i], q)
print("ok: --recursive: %d cgroups, made/removed/made again each told once" % len(added))
PY

	# --changes: a cgroup when its values moved ("event": "changed"): at
	# first all of them, then the one a task keeps busy, and its parent
	mkdir "$parent/busy" && cgs+=("$parent/busy")
	sh -c "echo \$\$ >'$parent/busy/cgroup.procs' && exec sh -c 'while :; do :; done'" &
	burner=$!
	"$cgstream" watch --recursive --json --changes --count 4 --fallback-interval 100 \
		"$parent" >"$tmp/chg" 2>"$tmp/chg.err" || fail "watch --changes: $(cat "$tmp/chg.err")"
	kill $burner; wait $burner 2>/dev/null
	python3 - "$tmp/chg" "$rel" <<'PY' || fail "--changes: see above"
import collections, json, sys
rel, by_seq, first = sys.argv[2], collections.defaultdict(set), None
for o in map(json.loads, open(sys.argv[1])):
    if o.get("event") == "added":
        continue
    assert o["event"] == "changed" and o["changed"], o
    first = first or o["seq"]
    by_seq[o["seq"]].add(o["cgroup"])
seqs = sorted(by_seq)
assert len(seqs) == 4 and len(by_seq[first]) > 3, by_seq
for q in seqs[1:]:
    assert rel + "/busy" in by_seq[q] and by_seq[q] <= {rel, rel + "/busy"}, (q, by_seq[q])
print("ok: --changes: all at first (%d), then only what moved" % len(by_seq[first]))
PY

	# two arguments, one below the other: one tree, each cgroup once
	"$cgstream" watch --recursive --json --count 2 --fallback-interval 100 \
		"$parent" "$parent/b" >"$tmp/rec2" 2>/dev/null || fail "watch of nested arguments"
	n=$(grep -c "\"cgroup\": \"$rel/b\", .*\"seq\": 1," "$tmp/rec2")
	[[ $n == 1 ]] || fail "$parent/b sampled $n times in cycle 1"
	echo "ok: nested arguments watched once"

	# more cgroups than fds: 2,000 cgroups under a limit of 256 open files
	# (the library's fd budget: some keep their files open, the rest are
	# opened, read and closed each cycle): every cgroup in every cycle, no
	# error
	many=$parent/many
	mkdir "$many" && cgs+=("$many") || fail "mkdir $many"
	(cd "$many" && mkdir c{1..2000}) || fail "mkdir 2,000 cgroups"
	for mode in io_uring plain; do
		(ulimit -n 256 && if [[ $mode == plain ]]; then export CGSTREAM_NO_IO_URING=1; fi &&
			exec "$cgstream" watch --recursive --json --count 3 --fallback-interval 500 "$many") \
			>"$tmp/many" 2>"$tmp/many.err" || fail "watch of 2,000 cgroups under ulimit -n 256 ($mode): $(tail -3 "$tmp/many.err")"
		python3 - "$tmp/many" <<'PY' || fail "2,000 cgroups under ulimit -n 256 ($mode): see above"
import collections, json, sys
seqs = collections.Counter()
for o in map(json.loads, open(sys.argv[1])):
    assert o.get("event") in (None, "added"), o
    if "event" not in o:
        seqs[o["seq"]] += 1
assert sorted(seqs.values()) == [2001, 2001, 2001], seqs
PY
		grep -v 'fallback mode' "$tmp/many.err" && fail "said on stderr: $(cat "$tmp/many.err")"
		echo "ok: 2,000 cgroups under ulimit -n 256 ($mode): all of them in each of 3 cycles"
	done
	find "$many" -mindepth 1 -maxdepth 1 -type d -exec rmdir {} +

	# names that break formats: the JSON a parser reads back to each name,
	# plain lines without a control byte
	names_dir=$parent/names
	mkdir "$names_dir" && cgs+=("$names_dir") || fail "mkdir $names_dir"
	python3 "$build/tests/names.py" mkdirs "$names_dir" || fail "making the names"
	expect 0 '' "$cgstream" watch --recursive --json --count 2 --fallback-interval 100 "$names_dir"
	python3 "$build/tests/names.py" json "$tmp/out" "$root" "$names_dir" || fail "--json of the names"
	expect 0 '' "$cgstream" watch --recursive --count 2 --fallback-interval 100 "$names_dir"
	python3 "$build/tests/names.py" text "$tmp/out" || fail "plain lines of the names"
	[[ $(grep -c "^seq 2 $rel/names/" "$tmp/out") == $(find "$names_dir" -mindepth 1 -type d | wc -l) ]] ||
		fail "not a line per cgroup: $(cat "$tmp/out")"
	expect 3 "^cgstream: $rel/names/bad\\\\xff-none: no such cgroup$" "$cgstream" watch "$names_dir/bad"$'\xff'"-none"
	echo "ok: names that break formats: JSON, lines, messages"

	# permission denied: a cgroup the nobody user may not open (it runs a
	# copy of the command: the checkout may be out of its reach)
	nobody_dir=$(nobody_copy "$build") || fail "no copy of cgstream that uid 65534 can run"
	chmod 700 "$parent/b"
	expect 4 'permission denied' as_nobody "$nobody_dir/cgstream" watch --count 1 --mode fallback "$parent/b"
	chmod 755 "$parent/b"
fi

# sd_notify: READY=1 once streaming, STOPPING=1 on SIGTERM, exit 0
python3 - "$cgstream" <<'PY' || fail "sd_notify"
import os, signal, socket, subprocess, sys, time
name = "cgstream-test-%d" % os.getpid()
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + name)
s.settimeout(10)
env = dict(os.environ, NOTIFY_SOCKET="@" + name)
p = subprocess.Popen([sys.argv[1], "watch", "--fallback-interval", "100", "/"],
                     env=env, stdout=subprocess.DEVNULL)
msg = s.recv(4096)
assert msg == b"READY=1", msg
time.sleep(0.3)
p.send_signal(signal.SIGTERM)
msg = s.recv(4096)
assert msg == b"STOPPING=1", msg
rc = p.wait(10)
assert rc == 0, rc
# SIGINT: exit 0 too
p = subprocess.Popen([sys.argv[1], "watch", "--fallback-interval", "100", "/"],
                     stdout=subprocess.DEVNULL)
time.sleep(0.3)
p.send_signal(signal.SIGINT)
assert p.wait(10) == 0
print("ok: sd_notify READY=1 / STOPPING=1, SIGTERM and SIGINT exit 0")
PY

echo "cli: all passed"
