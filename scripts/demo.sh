#!/bin/bash
# The cgstream demo, run as root inside the VM by 'make demo': three
# cgroups with different CPU loads (one capped by cpu.max, so throttling
# shows), streamed by 'cgstream watch' for ten flushes of 500 ms.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cgstream=$top/libcgstream/build/cgstream
interval=500
[[ -x $cgstream ]] || { echo "demo: $cgstream is not built (make userspace)" >&2; exit 1; }
root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[[ -n $root ]] || { echo "demo: no cgroup2 mount" >&2; exit 1; }
demo=$root/demo
saved=$("$cgstream" interval 2>/dev/null) || saved=
pids=()

cleanup() {
	local p d i
	# cgroup.kill: every process in the cgroup, the loads' children (light's
	# sleep) too, which killing the loads' pids leaves behind for a moment
	for d in busy light capped; do
		[[ -d $demo/$d ]] && echo 1 >"$demo/$d/cgroup.kill"
	done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	for d in busy light capped; do
		[[ -d $demo/$d ]] || continue
		for ((i = 0; i < 50; i++)); do
			grep -q '^populated 0' "$demo/$d/cgroup.events" && break
			sleep 0.1
		done
		rmdir "$demo/$d"
	done
	[[ -d $demo ]] && rmdir "$demo"
	[[ -n $saved ]] && "$cgstream" interval "$saved"
}
trap cleanup EXIT

# start CMD in cgroup $1 (the shell moves itself in, then becomes CMD)
load() {
	local cg=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@" &
	pids+=($!)
}

"$cgstream" interval "$interval" || exit 1
capped=yes
echo +cpu >"$root/cgroup.subtree_control" 2>/dev/null || capped=
mkdir "$demo" || exit 1
[[ -n $capped ]] && { echo +cpu >"$demo/cgroup.subtree_control" 2>/dev/null || capped=; }
mkdir "$demo/busy" "$demo/light" "$demo/capped" || exit 1
if [[ -n $capped ]]; then
	echo "10000 100000" >"$demo/capped/cpu.max"
else
	echo "demo: the cpu controller is not available: no throttling shown"
fi

load "$demo/busy" sh -c 'while :; do :; done'
load "$demo/light" bash -c 'while :; do i=0; while ((i < 2000)); do ((i++)); done; sleep 0.1; done'
load "$demo/capped" sh -c 'while :; do :; done'

echo "cgstream demo: the kernel flushes cpu.stat every $interval ms and wakes cgstream once per flush;" \
	"busy spins, light works in short bursts, capped spins under cpu.max 10% of a CPU (throttled)."
"$cgstream" watch --count 10 "$demo/busy" "$demo/light" "$demo/capped" | cat
rc=${PIPESTATUS[0]}
exit "$rc"
