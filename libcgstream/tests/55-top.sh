#!/bin/bash
# cgstream top on the host, batch mode (-b) and its errors: usage errors,
# no terminal, a missing cgroup, a kernel without the stream (exit 5 when
# --mode asks for it; auto falls back to the emulation and the header says
# so), the tables (header, a busy cgroup first among idle ones, full names,
# "-" for throttling without the cpu controller), --sort and --reverse, -n,
# a cgroup removed while shown (its row goes, a note says so), the watched
# cgroup removed (exit 3), permission denied (as uid 65534: exit 4, and an
# unreadable cgroup below: a note and a count), the pressure view (where
# the host has *.pressure files: CPU-SOME .. IO-FULL, a busy cgroup's CPU
# waits, "-" for a cgroup whose pressure is off, --view and the pressure
# sorts and their errors), and the subtree and per-cgroup stream modes
# against fake-kernel.so (cpu and pressure).  The interactive side:
# 56-top-tmux.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${CGSTREAM_BUILD:-$(cd "$here/../.." && pwd)}
cgstream=$build/cgstream
[[ -x $cgstream ]] || { echo "FAIL: $cgstream not built"; exit 1; }
. "$build/tests/other-user.sh" || { echo "FAIL: $build/tests/other-user.sh missing"; exit 1; }
. "$build/tests/top-checks.sh" || { echo "FAIL: $build/tests/top-checks.sh missing"; exit 1; }
tmp=$(mktemp -d /tmp/cgstream-top.XXXXXX)
parent= bg= nobody_dir=
cleanup() {
	[[ -n $bg ]] && kill "$bg" 2>/dev/null && wait "$bg" 2>/dev/null
	burners_stop
	if [[ -n $parent ]]; then
		[[ -d $parent/names ]] && find "$parent/names" -mindepth 1 -depth -type d -exec rmdir {} +
		for d in "$parent/names" "$parent/nopsi" \
			 "$parent/cache-idle/nested" "$parent/cache-idle" "$parent/app-idle" "$parent/busy" \
			"$parent/priv" "$parent/gone/sub" "$parent/gone" "$parent"; do
			rmdir "$d" 2>/dev/null
		done
	fi
	rm -rf "$tmp" ${nobody_dir:+"$nobody_dir"}
}
trap cleanup EXIT


# usage errors need no cgroups
expect 0 '' "$cgstream" top --help
grep -q '^Usage: cgstream top \[OPTIONS\] \[CGROUP\]$' "$tmp/out" || fail "top --help: $(cat "$tmp/out")"
expect 0 '' "$cgstream" --help
grep -q 'cgstream top' "$tmp/out" || fail "--help lacks top"
expect 2 "^cgstream: --iterations wants a number >= 1, not '0'$" "$cgstream" top -b -n 0
expect 2 'iterations' "$cgstream" top -b --iterations x
expect 2 "^cgstream: --sort is cpu, user, sys, throttled, mem, io, name, cpu-some, mem-some, mem-full, io-some or io-full, not 'disk'$" \
	"$cgstream" top -b --sort disk
expect 2 "^cgstream: --view is general or pressure, not 'psi'$" "$cgstream" top -b --view psi
expect 2 "^cgstream: --controllers is a comma-separated list of cpu, memory, io and pressure \(or all\), not 'cpu,disk'$" \
	"$cgstream" top -b --controllers cpu,disk
expect 2 '^cgstream: top shows one subtree: give at most one cgroup$' "$cgstream" top -b a b
expect 2 '--mode is auto, subtree, kernel or fallback' "$cgstream" top -b --mode bogus
expect 2 'fallback-interval' "$cgstream" top -b --fallback-interval 5
expect 2 'Usage' "$cgstream" top --no-such-option
# not a terminal (stdout is a file here): refused, with the way out
expect 2 '^cgstream: top draws on a terminal and standard output is not one; use --batch \(-b\) for plain tables$' \
	"$cgstream" top /

if ! grep -q ' cgroup2 ' /proc/self/mountinfo; then
	echo "SKIP: no cgroup2 mount; the table checks need one"
	exit 77
fi
root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
expect 3 "^cgstream: /cgstest-none: no such cgroup$" "$cgstream" top -b cgstest-none
expect 2 'not a cgroup path' "$cgstream" top -b ../etc
has_stream=false
[[ -e $root/cpu.stat.stream ]] && has_stream=true
if ! $has_stream; then
	expect 5 '^cgstream: this kernel has no cpu.stat.stream \(cgroup stat streaming\)' \
		"$cgstream" top -b --mode kernel
fi
if [[ ! -e $root/cpu.stat.stream.subtree ]]; then
	expect 5 '^cgstream: this kernel has no cpu.stat.stream.subtree' "$cgstream" top -b --mode subtree
fi

parent=$root/cgstest-top-$$
rel=${parent#"$root"}	# as every output shows it
if ! mkdir "$parent" 2>/dev/null; then
	echo "SKIP: cannot create cgroups under $root"
	exit 77
fi
mkdir -p "$parent/busy" "$parent/app-idle" "$parent/cache-idle/nested" || fail "mkdir under $parent"
burn "$parent/busy"

# -n 2: two tables, each with CPU% (the first cycle only gives the base)
expect 0 '' "$cgstream" top -b -n 2 --fallback-interval 200 "$parent"
# the controllers read by default: cpu, and memory and io where enabled
# (MEM and IO/s columns); a hybrid host's cgroup2 may have neither
ctrl_names "$parent" >/dev/null	# (for $ctrl_cols: not in a subshell)
mode=$(mode_line "$parent" auto)
tables "$tmp/out" 2 "mode=$mode" interval=200 first=busy idle=busy nothr=1 seqs=1 "cols=$ctrl_cols" \
	"sort=CPU% (highest first)" rows=busy,app-idle,cache-idle,cache-idle/nested ||
	fail "top -b -n 2"
grep -q "^cgstream top: $rel\$" "$tmp/out" || fail "no title with $rel"
echo "ok: two tables, busy first, idle rows 0.0, no throttling columns, the mode said"
sed -n '1,/^$/p' "$tmp/out" | sed 's/^/  | /'

# relative to the cgroup2 mount, the same; --sort and --reverse
expect 0 '' "$cgstream" top -b -n 1 --fallback-interval 200 -s name "${parent#"$root"/}"
tables "$tmp/out" 1 "sort=CGROUP (a-z)" rows=app-idle,busy,cache-idle,cache-idle/nested || fail "--sort name"
expect 0 '' "$cgstream" top -b -n 1 --fallback-interval 200 --sort name --reverse "$parent"
tables "$tmp/out" 1 "sort=CGROUP (z-a)" rows=cache-idle/nested,cache-idle,busy,app-idle || fail "--reverse"
expect 0 '' "$cgstream" top -b -n 1 --fallback-interval 200 --reverse "$parent"
tables "$tmp/out" 1 "sort=CPU% (lowest first)" rows=app-idle,cache-idle,cache-idle/nested,busy ||
	fail "--reverse by CPU"
expect 0 '' "$cgstream" top -b -n 1 --fallback-interval 200 --sort user "$parent"
tables "$tmp/out" 1 "sort=USER% (highest first)" first=busy || fail "--sort user"
# nothing throttles without the cpu controller: all "-", sorted by name
expect 0 '' "$cgstream" top -b -n 1 --fallback-interval 200 --sort throttled "$parent"
tables "$tmp/out" 1 "sort=THR-MS (highest first)" rows=app-idle,busy,cache-idle,cache-idle/nested ||
	fail "--sort throttled"
echo "ok: --sort name, --reverse, --sort user, --sort throttled"
# --sort by a column that is not shown: said, not done
for c in memory io; do
	k=mem col=MEM
	[[ $c == io ]] && k=io col=IO/s
	[[ $ctrl_cols == *"$col"* ]] && continue
	expect 2 "^cgstream: --sort $k: no $col column \\($c is not read\\)$" \
		"$cgstream" top -b -n 1 --sort $k "$parent"
done
expect 2 "^cgstream: --sort io-some: no IO-SOME column \\(pressure is not read\\)$" \
	"$cgstream" top -b -n 1 --sort io-some --controllers cpu "$parent"
expect 2 "^cgstream: --view pressure: pressure is not read$" \
	"$cgstream" top -b -n 1 --view pressure --controllers cpu "$parent"

# the pressure view, where the kernel has PSI: a busy cgroup whose tasks
# wait for the CPUs (more busy loops than CPUs) first by CPU-SOME, idle
# ones waiting for nothing, and one whose pressure is off ("-")
if [[ ! -e $parent/cpu.pressure ]]; then
	echo "note: no $parent/cpu.pressure (no PSI, or psi=0): the pressure view is not checked"
else
	expect 2 "^cgstream: --sort mem-full is a column of the pressure view, not of the general one$" \
		"$cgstream" top -b -n 1 --sort mem-full --view general "$parent"
	mkdir "$parent/nopsi" && echo 0 >"$parent/nopsi/cgroup.pressure" || fail "mkdir $parent/nopsi"
	for _ in $(seq "$(nproc)"); do burn "$parent/busy"; done
	expect 0 '' "$cgstream" top -b -n 3 --fallback-interval 200 --sort cpu-some "$parent"
	tables "$tmp/out" 3 view=pressure "mode=$mode" "sort=CPU-SOME (highest first)" \
		sorted=CPU-SOME anypos=busy:CPU-SOME zero=app-idle:CPU-SOME zero=app-idle:IO-FULL \
		zero=cache-idle/nested:MEM-FULL dash=nopsi:CPU-SOME dash=nopsi:IO-FULL num=nopsi:CPU% ||
		fail "top -b --sort cpu-some"
	sed -n '1,/^$/p' "$tmp/out" | sed 's/^/  | /'
	expect 0 '' "$cgstream" top -b -n 1 --fallback-interval 200 --view pressure -s name "$parent"
	tables "$tmp/out" 1 view=pressure "sort=CGROUP (a-z)" \
		rows=app-idle,busy,cache-idle,cache-idle/nested,nopsi || fail "--view pressure -s name"
	expect 0 '' "$cgstream" top -b -n 1 --fallback-interval 200 "$parent"
	tables "$tmp/out" 1 view=general || fail "the general view by default"
	rmdir "$parent/nopsi"
	burners_stop
	burn "$parent/busy"
	echo "ok: the pressure view: busy first by CPU-SOME, idle ones 0.0, pressure off: -"
fi

# wait_for FILE REGEX: until a line of FILE matches (a slow host only waits longer)
wait_for() {
	local end=$((SECONDS + 60))
	while ((SECONDS < end)); do
		grep -Eqs -- "$2" "$1" && return 0	# -s: the file may not be there yet
		sleep 0.1
	done
	return 1
}

# a cgroup removed while shown: a note, its last row marked once, then gone
"$cgstream" top -b --fallback-interval 200 "$parent" >"$tmp/rm" 2>"$tmp/rm.err" &
bg=$!
wait_for "$tmp/rm" '^cache-idle/nested ' || fail "no table: $(cat "$tmp/rm.err")"
rmdir "$parent/cache-idle/nested" || fail "rmdir $parent/cache-idle/nested"
wait_for "$tmp/rm" '^flush_seq [0-9]+: removed cache-idle/nested$' || fail "no note of the removal"
# and one more table after that
n=$(grep -c '^cgstream top' "$tmp/rm")
for _ in $(seq 600); do (($(grep -c '^cgstream top' "$tmp/rm") > n)) && break; sleep 0.1; done
kill -TERM $bg
wait $bg; rc=$?
bg=
[[ $rc == 0 ]] || fail "top -b exited $rc on SIGTERM"
python3 - "$tmp/rm" <<'PY' || fail "removal: see above"
import sys
tables = [t for t in open(sys.argv[1]).read().split("\n\n") if t.strip()]
after = 0
for t in tables:
    if "removed cache-idle/nested" in t:
        after += 1
    rows = [l for l in t.split("\n")[6:] if l]
    names = [l.split()[0] for l in rows]
    marked = [l for l in rows if l.startswith("cache-idle/nested (removed) ")]
    if after == 1:
        # the table of the cycle that removed it: its last row, marked
        assert len(marked) == 1, t
    elif after:
        assert "cache-idle/nested" not in names, t
        assert "cache-idle" in names, t
    else:
        assert not marked, t
assert after >= 2
print("ok: a removed cgroup: noted, its last row marked one table, then gone, %d tables" % len(tables))
PY

# the watched cgroup removed: exit 3, said
mkdir -p "$parent/gone/sub" || fail "mkdir $parent/gone/sub"
"$cgstream" top -b --fallback-interval 200 "$parent/gone" >"$tmp/gone" 2>"$tmp/gone.err" &
bg=$!
wait_for "$tmp/gone" '^sub ' || fail "no table of $parent/gone"
rmdir "$parent/gone/sub" "$parent/gone"
for _ in $(seq 600); do kill -0 $bg 2>/dev/null || break; sleep 0.1; done
wait $bg; rc=$?
bg=
[[ $rc == 3 ]] || fail "top of a removed cgroup exited $rc, want 3"
[[ $(cat "$tmp/gone.err") == "cgstream: $rel/gone: the watched cgroup was removed" ]] ||
	fail "message: $(cat "$tmp/gone.err")"
echo "ok: the watched cgroup removed: exit 3, 'the watched cgroup was removed'"

# permission denied, as uid 65534 (a copy of the command it can run)
nobody_dir=$(nobody_copy "$build") || fail "no copy of cgstream that uid 65534 can run"
mkdir "$parent/priv" && chmod 700 "$parent/priv" || fail "mkdir $parent/priv"
expect 4 "^cgstream: $rel/priv: permission denied$" \
	as_nobody "$nobody_dir/cgstream" top -b -n 1 "$parent/priv"
expect 0 '' as_nobody "$nobody_dir/cgstream" top -b -n 1 --fallback-interval 200 "$parent"
tables "$tmp/out" 1 'note=^flush_seq [0-9]+: cannot read priv \(Permission denied\)$' unreadable=1 \
	rows=busy,app-idle,cache-idle || fail "an unreadable cgroup below"
chmod 755 "$parent/priv"
echo "ok: permission denied: exit 4; a cgroup below: noted and counted"

# names that break formats: printable lines, a row per cgroup, aligned
mkdir "$parent/names" || fail "mkdir $parent/names"
python3 "$build/tests/names.py" mkdirs "$parent/names" || fail "making the names"
expect 0 '' "$cgstream" top -b -n 2 --fallback-interval 200 "$parent/names"
python3 "$build/tests/names.py" table "$tmp/out" "$parent/names" || fail "top -b of the names"
expect 0 '' "$cgstream" top -b -n 1 --fallback-interval 200 -s name "$parent/names"
python3 "$build/tests/names.py" table "$tmp/out" "$parent/names" || fail "top -b -s name of the names"
echo "ok: names that break formats"

# the kernel's modes, against fake-kernel.so (an emulation of the cpu and
# pressure files: --controllers cpu,pressure, where the host has memory or io)
if $has_stream; then
	echo "note: this kernel has cpu.stat.stream: the VM test covers the kernel modes"
else
	fake=$build/tests/fake-kernel.so
	[[ -e $fake ]] || fail "$fake not built"
	expect 0 '' env LD_PRELOAD="$fake" FAKE_INTERVAL_MS=300 "$cgstream" top -b -n 2 --controllers cpu "$parent"
	tables "$tmp/out" 2 "mode=kernel subtree (cpu.stat.stream.subtree)" interval=300 first=busy \
		seqs=1 || fail "subtree mode"
	if [[ -e $parent/cpu.pressure ]]; then
		expect 0 '' env LD_PRELOAD="$fake" FAKE_INTERVAL_MS=300 "$cgstream" top -b -n 2 \
			--controllers cpu,pressure --view pressure "$parent"
		tables "$tmp/out" 2 view=pressure \
			"mode=kernel subtree (cpu.stat.stream.subtree and pressure.stream.subtree)" \
			interval=300 num=busy:CPU-SOME zero=app-idle:MEM-SOME || fail "subtree mode, pressure"
		expect 0 '' env LD_PRELOAD="$fake" FAKE_INTERVAL_MS=300 "$cgstream" top -b -n 2 \
			--mode kernel --controllers pressure,cpu --view pressure "$parent"
		tables "$tmp/out" 2 view=pressure \
			"mode=streams (cpu.stat.stream and pressure.stream per cgroup)" num=busy:IO-FULL ||
			fail "stream mode, pressure"
	fi
	expect 0 '' env LD_PRELOAD="$fake" FAKE_INTERVAL_MS=300 "$cgstream" top -b -n 2 --mode kernel \
		--controllers cpu "$parent"
	tables "$tmp/out" 2 "mode=streams (cpu.stat.stream per cgroup)" interval=300 first=busy ||
		fail "stream mode"
	# the interval at 0: said, and no table comes
	expect 124 "^cgstream: the kernel's flush interval is 0 \(streaming off\): no samples until it is set, e.g. 'cgstream interval 1000'$" \
		env LD_PRELOAD="$fake" timeout 3 "$cgstream" top -b -n 1 --controllers cpu "$parent"
	[[ ! -s $tmp/out ]] || fail "a table with the interval at 0: $(cat "$tmp/out")"
	echo "ok: subtree and stream modes (fake-kernel.so), interval 0"
fi
echo "top: all passed"
