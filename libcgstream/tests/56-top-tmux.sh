#!/bin/bash
# cgstream top as a person uses it, in an 80x24 tmux pane (emulation mode
# on the host): a busy cgroup among idle siblings is the first row once the
# table has data; every line fits the pane; the sort keys (n, r, c) change
# the order as the header says; a long name is cut from the left; a
# resized pane is redrawn to its new size (too small: it says so); and the
# terminal is given back (main screen, cursor, stty modes) after q, ^C,
# SIGTERM, ^Z (and taken again on fg), a SIGSTOP from elsewhere and fg,
# and when the watched cgroup is removed (exit 3, with a message); p
# switches to the pressure view and back, 1-5 sort by its columns.  Not a
# terminal: exit 2.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${CGSTREAM_BUILD:-$(cd "$here/../.." && pwd)}
cgstream=$build/cgstream
[[ -x $cgstream ]] || { echo "FAIL: $cgstream not built"; exit 1; }
. "$build/tests/top-checks.sh" || { echo "FAIL: $build/tests/top-checks.sh missing"; exit 1; }
command -v tmux >/dev/null || { echo "SKIP: no tmux (scripts/deps.sh installs it)"; exit 77; }
root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[[ -n $root ]] || { echo "SKIP: no cgroup2 mount"; exit 77; }

tmp=$(mktemp -d /tmp/cgstream-top-tmux.XXXXXX)
parent=$root/cgstest-top-tmux-$$
long=cache-idle/session-12.scope/worker-with-a-long-name.scope
cleanup() {
	tmux_stop
	burners_stop
	for d in "$parent/$long" "$(dirname "$parent/$long")" "$parent/cache-idle" "$parent/app-idle" "$parent/busy" \
		"$parent/victim" "$parent"; do
		rmdir "$d" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir "$parent" 2>/dev/null || { echo "SKIP: cannot create cgroups under $root"; exit 77; }
mkdir -p "$parent/app-idle" "$parent/busy" "$parent/$long" ||
	fail "mkdir under $parent"
burn "$parent/busy"

tmux_start "$tmp" || fail "no tmux session"
echo "ok: tmux pane 80x24"
tmux_type "stty -g >$tmp/stty.before; echo MARK-BEFORE"
pane_wait '^MARK-BEFORE$' || fail "the shell in the pane does not answer"

# the terminal as it was: main screen, cursor shown, the same stty modes
restored() {
	pane_flag_wait '#{alternate_on}' 0 || fail "$1: the alternate screen is still on"
	[[ $(pane_flag '#{cursor_flag}') == 1 ]] || fail "$1: the cursor is still hidden"
	pane_wait '^MARK-BEFORE$' 10 || fail "$1: the shell's screen did not come back"
	rm -f "$tmp/stty.now"
	tmux_type "stty -g >$tmp/stty.now"
	for _ in $(seq 100); do [[ -s $tmp/stty.now ]] && break; sleep 0.1; done
	cmp -s "$tmp/stty.before" "$tmp/stty.now" ||
		fail "$1: stty modes $(cat "$tmp/stty.now"), were $(cat "$tmp/stty.before")"
	tmux_type "clear; echo MARK-BEFORE"
	pane_wait '^MARK-BEFORE$' 10 || fail "$1: the shell does not answer"
	echo "ok: $1: terminal restored (main screen, cursor, stty modes)"
}

# [--job] ARGS: top in the pane, its exit status printed as TOP-EXIT-N=
# when it ends; --job: a run the test stops (the shell would go on with
# the echo at once), its status printed by job_done once it has ended
run=0
start_top() {
	local echo="; echo TOP-EXIT-$((run + 1))=\$?"
	[[ $1 == --job ]] && { echo=; shift; }
	run=$((run + 1))
	tmux_type "$cgstream top $*$echo"
	pane_flag_wait '#{alternate_on}' 1 || fail "top did not take the screen"
	[[ $(pane_flag '#{cursor_flag}') == 0 ]] || fail "top left the cursor on"
}
job_done() {
	pane_flag_wait '#{alternate_on}' 0 || fail "$1: top did not give the screen back"
	tmux_type "echo TOP-EXIT-$run=\$?"
}
exited() {
	pane_wait "^TOP-EXIT-$run=$1\$" || fail "top (run $run) did not exit with $1"
}
top_pid() {
	local pid
	pid=$(ps -o pid=,comm= --ppid "$(pane_flag '#{pane_pid}')" | awk '$2 == "cgstream" { print $1 }')
	[[ -n $pid ]] || fail "no cgstream process under the pane's shell"
	echo "$pid"
}

# not a terminal: refused, exit 2
tmux_type "$cgstream top $parent </dev/null; echo NOTTY-EXIT=\$?"
pane_wait '^NOTTY-EXIT=2$' || fail "top with stdin not a terminal"
pane_wait 'standard input is not one; use --batch' 5 || fail "no message for stdin"
tmux_type "clear; echo MARK-BEFORE"
echo "ok: not a terminal: exit 2, says so"

# the busy cgroup on top, once there are two samples; lines fit; the
# long name cut from the left, its last part whole
start_top --fallback-interval 200 "$parent"
pane_wait_check 60 80 24 first=busy "sort=CPU% (highest first)" \
	cut=/worker-with-a-long-name.scope text='^mode emulation' ||
	fail "busy is not the first row"
pane_check 80 24 num=app-idle:CPU% dash=busy:THR% dash=busy:THR-MS >/dev/null ||
	fail "$(pane_check 80 24 num=app-idle:CPU% dash=busy:THR% dash=busy:THR-MS)"
echo "ok: busy first, all lines within 80 columns, the long name cut"
pane | sed -n '1,12p;24p' | sed 's/^/  | /'

# sort keys: n (name), r (reverse), c (CPU, reversed: busy last), r
tmux_keys n
pane_wait_check 30 80 24 order=name "sort=CGROUP (a-z)" || fail "n: not sorted by name"
tmux_keys r
pane_wait_check 30 80 24 order=name-rev "sort=CGROUP (z-a)" || fail "r: not reversed"
tmux_keys c
pane_wait_check 30 80 24 last=busy "sort=CPU% (lowest first)" || fail "c after r: busy not last"
tmux_keys r
pane_wait_check 30 80 24 first=busy "sort=CPU% (highest first)" || fail "r: busy not first again"
echo "ok: keys n, r, c, r sort as the header says"

# m and i sort by MEM and IO/s only where those columns are shown
for k in m i; do
	col=MEM
	[[ $k == i ]] && col=IO/s
	if pane | grep -q "^CGROUP .* $col"; then
		tmux_keys $k
		pane_wait_check 30 80 24 "sort=$col (highest first)" || fail "$k: not sorted by $col"
		tmux_keys c
		pane_wait_check 30 80 24 first=busy "sort=CPU% (highest first)" || fail "c after $k"
	else
		tmux_keys $k
		sleep 0.5
		pane_check 80 24 "sort=CPU% (highest first)" >/dev/null ||
			fail "$k without a $col column changed the sort: $(pane | sed -n 4p)"
	fi
done
echo "ok: keys m and i sort only by a column that is shown"

# p: the pressure view (where the kernel has PSI), within 80 columns; 1-5
# sort by its columns; a sort of the general view's (u) goes back to it
if [[ -e $parent/cpu.pressure ]]; then
	tmux_keys p
	pane_wait_check 30 80 24 first=busy 'text=^CGROUP +CPU% +CPU-SOME +MEM-SOME +MEM-FULL +IO-SOME +IO-FULL$' \
		'text=^q quit  p general' 'text=^subtree total: cpu [0-9.]+%  cpu-some ' ||
		fail "p: no pressure view"
	tmux_keys 3
	pane_wait_check 30 80 24 "sort=MEM-FULL (highest first)" || fail "3: not sorted by MEM-FULL"
	tmux_keys p
	pane_wait_check 30 80 24 first=busy "sort=CPU% (highest first)" 'text=^CGROUP +CPU% +USER%' ||
		fail "p again: not the general view sorted by CPU%"
	tmux_keys 1
	pane_wait_check 30 80 24 "sort=CPU-SOME (highest first)" 'text=^CGROUP +CPU% +CPU-SOME' ||
		fail "1: not the pressure view sorted by CPU-SOME"
	tmux_keys u
	pane_wait_check 30 80 24 "sort=USER% (highest first)" 'text=^CGROUP +CPU% +USER%' ||
		fail "u: not the general view sorted by USER%"
	tmux_keys c
	pane_wait_check 30 80 24 first=busy "sort=CPU% (highest first)" || fail "c after u"
	echo "ok: p switches to the pressure view and back, 1-5 sort by its columns"
else
	echo "note: no cpu.pressure (no PSI): the pressure view's keys are not checked"
fi

# a resized pane: redrawn to fit; too small: says so
tm resize-window -t top -x 60 -y 14
pane_wait_check 30 60 14 first=busy cut=.scope joined=0 || fail "not redrawn for 60x14"
tm resize-window -t top -x 40 -y 8
# (not joined: a line of the old width may have wrapped before the redraw)
end=$((SECONDS + 30))
until tm capture-pane -p -t top:0.0 | grep -q '^terminal too small (40x8) *$'; do
	((SECONDS < end)) || { pane_dump; fail "40x8: no 'too small'"; }
	sleep 0.2
done
tm resize-window -t top -x 80 -y 24
pane_wait_check 30 80 24 first=busy joined=0 || fail "not redrawn back at 80x24"
echo "ok: SIGWINCH: redrawn at 60x14, 'too small' at 40x8, back at 80x24"

tmux_keys q
exited 0
restored "q"

start_top --fallback-interval 200 "$parent"
pane_wait_check 60 80 24 first=busy || fail "no table for ^C"
tmux_keys C-c
exited 0
restored "^C"

start_top --fallback-interval 200 "$parent"
pane_wait_check 60 80 24 first=busy || fail "no table for SIGTERM"
kill -TERM "$(top_pid)"
exited 0
restored "SIGTERM"

# ^Z: the shell gets the terminal as it was; fg: top takes it again
start_top --job --fallback-interval 200 "$parent"
pane_wait_check 60 80 24 first=busy || fail "no table for ^Z"
tmux_keys C-z
pane_wait 'Stopped' || fail "^Z did not stop top"
restored "^Z"
tmux_type "fg"
pane_flag_wait '#{alternate_on}' 1 || fail "fg: top did not take the screen again"
pane_wait_check 60 80 24 first=busy || fail "fg: no table"
tmux_keys q
job_done "q after fg"
exited 0
restored "^Z, fg, q"

# SIGSTOP from elsewhere (top cannot see it coming), then fg: top sets its
# modes and screen again (keys work), and q still restores the terminal
start_top --job --fallback-interval 200 "$parent"
pane_wait_check 60 80 24 first=busy || fail "no table for SIGSTOP"
kill -STOP "$(top_pid)"
pane_wait 'Stopped' || fail "SIGSTOP: the shell did not see top stop"
tmux_type "fg"
tmux_keys n
pane_wait_check 60 80 24 order=name "sort=CGROUP (a-z)" || fail "after SIGSTOP and fg: keys do not work"
tmux_keys q
job_done "q after SIGSTOP and fg"
exited 0
restored "SIGSTOP, fg, q"

# the watched cgroup removed: exit 3, the message on the main screen
mkdir "$parent/victim" || fail "mkdir $parent/victim"
start_top --fallback-interval 200 "$parent/victim"
pane_wait_check 60 80 24 'text=^cgroups 0/0 shown' text='^interval 200 ms  flush_seq [0-9]+' ||
	fail "no table for the victim"
rmdir "$parent/victim" || fail "rmdir $parent/victim"
exited 3
pane_wait "^cgstream: ${parent#"$root"}/victim: the watched cgroup was removed\$" 5 ||
	fail "no message for the removed cgroup"
restored "the watched cgroup removed (exit 3)"

echo "top-tmux: all passed"
