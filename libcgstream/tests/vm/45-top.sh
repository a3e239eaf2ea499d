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
# back.  Memory and io: a subtree with a cgroup holding memory and one
# doing I/O on a loop device: the MEM and IO/s columns in each mode, --sort
# mem and io, "-" where a cgroup lacks the controllers, the subtree total,
# and in the pane (80x24, every line within it) the m and i keys.
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
saved=()
for f in {cpu,memory,io}.stat.stream_interval pressure.stream_interval; do
	[[ -e $root/$f ]] && saved+=("$f" "$(cat "$root/$f")")
done
bg=
cleanup() {
	tmux_stop
	[[ -n $bg ]] && kill "$bg" 2>/dev/null && wait "$bg" 2>/dev/null
	burners_stop
	loads_stop
	for ((i = 0; i < ${#saved[@]}; i += 2)); do
		echo "${saved[i + 1]}" >"$root/${saved[i]}"
	done
	for d in "$parent/plain/leaf" "$parent/plain" "$parent/bw" "$parent/busy" \
		"$parent/victim" "$mio/memhog" "$mio/iohog" "$mio/idle/leaf" "$mio/idle" "$mio" \
		"$parent"; do
		rmdir "$d" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

mio=$root/cgstest-vmtop-mio-$$
"$cgstream" interval 500 || fail "cannot set the interval"
# the cpu controller for parent's children; not for plain's (plain/leaf: "-")
mkdir "$parent" || fail "mkdir $parent"
echo +cpu >"$root/cgroup.subtree_control" && echo +cpu >"$parent/cgroup.subtree_control" ||
	fail "cannot enable the cpu controller"
mkdir "$parent/busy" "$parent/bw" "$parent/plain" "$parent/plain/leaf" || fail "mkdir under $parent"
echo "20000 100000" >"$parent/bw/cpu.max" || fail "cpu.max"
burn "$parent/busy"
burn "$parent/bw"

# auto: the subtree file (of each controller read by default: an earlier
# test may have left memory and io enabled at the root; pressure where the
# kernel has PSI, emulated where it has no pressure.stream.subtree)
expect 0 '' "$cgstream" top -b -n 3 "$parent"
tables "$tmp/out" 3 "mode=$(mode_line "$parent" auto)" interval=500 first=busy \
	seqs=1 rows=busy,bw,plain,plain/leaf num=bw:THR% num=bw:THR-MS num=busy:THR% \
	dash=plain/leaf:THR% dash=plain/leaf:THR-MS anypos=bw:THR-MS || fail "subtree mode"
echo "ok: subtree mode: busy first, bw throttled, plain/leaf without the cpu controller: -"
sed -n '1,/^$/p' "$tmp/out" | sed 's/^/  | /'
expect 0 '' "$cgstream" top -b -n 1 --sort throttled "$parent"
tables "$tmp/out" 1 "sort=THR-MS (highest first)" first=bw || fail "--sort throttled"
echo "ok: --sort throttled: bw first"

expect 0 '' "$cgstream" top -b -n 2 --mode kernel "$parent"
tables "$tmp/out" 2 "mode=$(mode_line "$parent" kernel)" interval=500 first=busy seqs=1 \
	num=bw:THR% dash=plain/leaf:THR% || fail "--mode kernel"
expect 0 '' "$cgstream" top -b -n 2 --mode fallback "$parent"
tables "$tmp/out" 2 "mode=$(mode_line "$parent" fallback)" interval=500 first=busy \
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
[[ $(cat "$tmp/gone.err") == "cgstream: ${parent#"$root"}/victim: the watched cgroup was removed" ]] ||
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
	pane_wait_check 300 80 24 first=busy text='^mode (kernel subtree|cpu subtree)' \
		text='^interval 500 ms' \
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

# the busy loops have done their part: the rest runs on both vCPUs (with
# them, each check of the memory and io tables took twice as long under TCG)
burners_stop

# memory and io: their own subtree (the CPU checks above stay as they are)
echo "+memory +io" >"$root/cgroup.subtree_control" && mkdir "$mio" &&
	echo "+memory +io" >"$mio/cgroup.subtree_control" &&
	mkdir "$mio/memhog" "$mio/iohog" "$mio/idle" "$mio/idle/leaf" ||
	fail "cannot enable the memory and io controllers"
loop_start "$tmp/loop" || fail "no loop device"
hold_memory "$mio/memhog" 48
do_io "$mio/iohog"
for _ in $(seq 300); do
	(($(cat "$mio/memhog/memory.current") > 40 << 20)) && break
	sleep 0.1
done
for mode in auto kernel fallback; do
	m=$(mode_line "$mio" $mode)
	# (IO/s is "-" until io has had two flushes since top began: in the
	# first table of the stream mode, whose first cycle may read the flush
	# before)
	expect 0 '' "$cgstream" top -b -n 3 --mode $mode --sort mem "$mio"
	tables "$tmp/out" 3 "mode=$m" cols=MEM,IO/s top=memhog sorted=MEM "sort=MEM (highest first)" \
		num=memhog:MEM num=iohog:MEM num=idle:MEM dash=idle/leaf:MEM dash=idle/leaf:IO/s \
		'total=  mem [0-9.]+[KMG]  io ([0-9.]+[BKMG]|-)/s' anyabove=memhog:MEM:41943040 \
		anyabove=iohog:IO/s:100000 || fail "MEM and IO/s, --mode $mode"
	echo "ok: --mode $mode: MEM and IO/s, --sort mem"
done
sed -n '1,/^$/p' "$tmp/out" | sed 's/^/  | /'
# four tables: the load's I/O comes in bursts (a dd of 4 MiB at a time,
# each a process start under TCG), and once two 500 ms flushes in a row
# saw none of it (a run of make check, 2026-11-25)
expect 0 '' "$cgstream" top -b -n 4 --sort io "$mio"
tables "$tmp/out" 4 sorted=IO/s "sort=IO/s (highest first)" anyabove=iohog:IO/s:100000 ||
	fail "--sort io"
expect 0 '' "$cgstream" top -b -n 1 --controllers cpu,io "$mio"
tables "$tmp/out" 1 cols=IO/s 'mode=kernel subtree ({cpu,io}.stat.stream.subtree)' ||
	fail "--controllers cpu,io"
expect 0 '' "$cgstream" top -b -n 1 --controllers cpu "$mio"
tables "$tmp/out" 1 cols= 'mode=kernel subtree (cpu.stat.stream.subtree)' || fail "--controllers cpu"
echo "ok: --sort io, --controllers"

# (the pane of the cpu checks, if tmux is here)
if [[ -n ${tmux_sock:-} ]]; then
	# memory and io in the pane: the columns fit, m and i sort by them
	tmux_type "clear; $cgstream top $mio; echo TOP-EXIT=\$?"
	pane_wait_check 300 80 24 cols=MEM,IO/s num=memhog:MEM dash=idle/leaf:MEM || fail "MEM, IO/s in the pane"
	tmux_keys m
	pane_wait_check 120 80 24 top=memhog "sort=MEM (highest first)" || fail "m: memhog not first"
	pane | sed 's/^/  | /'
	tmux_keys i
	pane_wait_check 120 80 24 top=iohog "sort=IO/s (highest first)" num=iohog:IO/s || fail "i: iohog not first"
	tmux_keys q
	pane_wait '^TOP-EXIT=0$' 120 || fail "q: top did not exit 0"
	echo "ok: in an 80x24 pane: MEM and IO/s columns within 80 columns, m and i sort by them"
fi

# streaming off: said; the one flush an open may still read gives no table
echo 0 >"$root/cpu.stat.stream_interval"
expect 124 "^cgstream: the kernel's flush interval is 0 \(streaming off\)" \
	timeout 8 "$cgstream" top -b -n 1 "$parent"
[[ ! -s $tmp/out ]] || fail "a table with the interval at 0: $(cat "$tmp/out")"
echo "ok: interval 0: said, no table"
echo "top-vm: all passed"
