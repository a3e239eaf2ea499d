#!/bin/bash
# cgstream top on the patched kernel (root, in the VM): the header names
# the mode the kernel gives (the subtree file; --mode kernel: a stream per
# cgroup; --mode fallback: the emulation), the interval as set and the
# kernel's flush_seq; a busy cgroup is the first row; a cgroup capped by
# cpu.max shows its throttling (THR%, THR-MS) and --sort throttled puts it
# first, while a cgroup without the cpu controller shows "-"; the interval
# at 0 is said and no table comes; the watched cgroup removed: exit 3.  In
# a tmux pane (80x24): busy first, the throttling columns, the t key, the
# header following the interval set to 0 and back, q gives the terminal
# back.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${CGSTREAM_BUILD:-$(cd "$here/../.." && pwd)}
cgstream=$build/cgstream
python=$(command -v python3 || echo /usr/bin/python3)
[[ -x $cgstream ]] || { echo "FAIL: $cgstream not built"; exit 1; }
. "$build/tests/top-checks.sh" || { echo "FAIL: $build/tests/top-checks.sh missing"; exit 1; }
root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[[ -n $root && -e $root/cpu.stat.stream ]] || { echo "SKIP: no cpu.stat.stream"; exit 77; }

tmp=$(mktemp -d /tmp/cgstream-vmtop.XXXXXX)
parent=$root/cgstest-vmtop-$$
saved=$(cat "$root/cpu.stat.stream_interval")
bg=
cleanup() {
	tmux_stop
	[[ -n $bg ]] && kill "$bg" 2>/dev/null && wait "$bg" 2>/dev/null
	burners_stop
	echo "$saved" >"$root/cpu.stat.stream_interval"
	for d in "$parent/plain/leaf" "$parent/plain" "$parent/bw" "$parent/busy" \
		"$parent/victim" "$parent"; do
		rmdir "$d" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

echo 500 >"$root/cpu.stat.stream_interval" || fail "cannot set the interval"
# the cpu controller for parent's children; not for plain's (plain/leaf: "-")
mkdir "$parent" || fail "mkdir $parent"
echo +cpu >"$root/cgroup.subtree_control" && echo +cpu >"$parent/cgroup.subtree_control" ||
	fail "cannot enable the cpu controller"
mkdir "$parent/busy" "$parent/bw" "$parent/plain" "$parent/plain/leaf" || fail "mkdir under $parent"
echo "20000 100000" >"$parent/bw/cpu.max" || fail "cpu.max"
burn "$parent/busy"
burn "$parent/bw"

# auto: the subtree file
expect 0 '' "$cgstream" top -b -n 3 "$parent"
tables "$tmp/out" 3 "mode=kernel subtree (cpu.stat.stream.subtree)" interval=500 first=busy \
	seqs=1 rows=busy,bw,plain,plain/leaf num=bw:THR% num=bw:THR-MS num=busy:THR% \
	dash=plain/leaf:THR% dash=plain/leaf:THR-MS anypos=bw:THR-MS || fail "subtree mode"
echo "ok: subtree mode: busy first, bw throttled, plain/leaf without the cpu controller: -"
sed -n '1,/^$/p' "$tmp/out" | sed 's/^/  | /'
expect 0 '' "$cgstream" top -b -n 1 --sort throttled "$parent"
tables "$tmp/out" 1 "sort=THR-MS (highest first)" first=bw || fail "--sort throttled"
echo "ok: --sort throttled: bw first"

expect 0 '' "$cgstream" top -b -n 2 --mode kernel "$parent"
tables "$tmp/out" 2 "mode=streams (cpu.stat.stream per cgroup)" interval=500 first=busy seqs=1 \
	num=bw:THR% dash=plain/leaf:THR% || fail "--mode kernel"
expect 0 '' "$cgstream" top -b -n 2 --mode fallback "$parent"
tables "$tmp/out" 2 "mode=emulation (cpu.stat read on a timer)" interval=500 first=busy \
	num=bw:THR% dash=plain/leaf:THR% || fail "--mode fallback"
echo "ok: --mode kernel (streams), --mode fallback (emulation)"

# the watched cgroup removed: exit 3, said
mkdir "$parent/victim" || fail "mkdir $parent/victim"
"$cgstream" top -b "$parent/victim" >"$tmp/gone" 2>"$tmp/gone.err" &
bg=$!
for _ in $(seq 1200); do grep -qs '^CGROUP' "$tmp/gone" && break; sleep 0.1; done
grep -qs '^CGROUP' "$tmp/gone" || fail "no table of $parent/victim: $(cat "$tmp/gone.err")"
rmdir "$parent/victim"
for _ in $(seq 1200); do kill -0 $bg 2>/dev/null || break; sleep 0.1; done
wait $bg; rc=$?
bg=
[[ $rc == 3 ]] || fail "top of a removed cgroup exited $rc, want 3"
[[ $(cat "$tmp/gone.err") == "cgstream: $parent/victim: the watched cgroup was removed" ]] ||
	fail "message: $(cat "$tmp/gone.err")"
echo "ok: the watched cgroup removed: exit 3"

# in a terminal
if ! command -v tmux >/dev/null; then
	echo "note: no tmux in the guest: the pane checks are the host's (56-top-tmux)"
else
	tmux_start "$tmp" || fail "no tmux session"
	tmux_type "echo MARK-BEFORE"
	pane_wait '^MARK-BEFORE$' 120 || fail "the shell in the pane does not answer"
	tmux_type "$cgstream top $parent; echo TOP-EXIT=\$?"
	pane_wait_check 300 80 24 first=busy text='^mode kernel subtree' text='^interval 500 ms' \
		num=bw:THR% dash=plain/leaf:THR% || fail "in the pane: busy is not first"
	pane | sed 's/^/  | /'
	tmux_keys t
	pane_wait_check 120 80 24 first=bw "sort=THR-MS (highest first)" || fail "t: bw not first"
	# streaming stopped and started again: the header follows (no flush says so)
	echo 0 >"$root/cpu.stat.stream_interval"
	pane_wait_check 60 80 24 'text=^interval 0 \(streaming off\)' || fail "interval 0 not shown"
	echo 500 >"$root/cpu.stat.stream_interval"
	pane_wait_check 60 80 24 'text=^interval 500 ms' || fail "interval 500 not shown again"
	tmux_keys q
	pane_wait '^TOP-EXIT=0$' 120 || fail "q: top did not exit 0"
	pane_flag_wait '#{alternate_on}' 0 || fail "q: the alternate screen is still on"
	pane_wait '^MARK-BEFORE$' 10 || fail "q: the shell's screen did not come back"
	echo "ok: in an 80x24 pane: busy first, t sorts by throttling, q gives the terminal back"
fi

# streaming off: said; the one flush an open may still read gives no table
echo 0 >"$root/cpu.stat.stream_interval"
expect 124 "^cgstream: the kernel's flush interval is 0 \(streaming off\)" \
	timeout 8 "$cgstream" top -b -n 1 "$parent"
[[ ! -s $tmp/out ]] || fail "a table with the interval at 0: $(cat "$tmp/out")"
echo "ok: interval 0: said, no table"
echo "top-vm: all passed"
