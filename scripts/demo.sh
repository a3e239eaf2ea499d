#!/bin/bash
# The cgstream demo, run as root inside the VM by 'make demo': a subtree
# of 50 cgroups (three slices of services, four of them loaded, one capped
# by cpu.max so throttling shows, the rest idle), streamed by
# 'cgstream watch --recursive' through one read of the slice root's
# cpu.stat.stream.subtree per flush, for four flushes of 500 ms.
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
loaded=(web.slice/busy web.slice/light db.slice/capped batch.slice/busy)

cleanup() {
	local p d i
	# cgroup.kill: every process in the cgroup, the loads' children (light's
	# sleep) too, which killing the loads' pids leaves behind for a moment
	for d in "${loaded[@]}"; do
		[[ -d $demo/$d ]] && echo 1 >"$demo/$d/cgroup.kill"
	done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	for d in "${loaded[@]}"; do
		[[ -d $demo/$d ]] || continue
		for ((i = 0; i < 50; i++)); do
			grep -q '^populated 0' "$demo/$d/cgroup.events" && break
			sleep 0.1
		done
	done
	# deepest first
	[[ -d $demo ]] && find "$demo" -mindepth 1 -depth -type d -exec rmdir {} +
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
# 3 slices, each with 15 services (1 + 3 + 3*15 = 49 cgroups below demo)
for slice in web.slice db.slice batch.slice; do
	mkdir "$demo/$slice" || exit 1
	[[ -n $capped ]] && echo +cpu >"$demo/$slice/cgroup.subtree_control"
	mkdir "$demo/$slice"/{busy,light,capped} || exit 1
	for ((i = 0; i < 12; i++)); do mkdir "$demo/$slice/idle$i" || exit 1; done
done
if [[ -n $capped ]]; then
	echo "10000 100000" >"$demo/db.slice/capped/cpu.max"
else
	echo "demo: the cpu controller is not available: no throttling shown"
fi

load "$demo/web.slice/busy" sh -c 'while :; do :; done'
load "$demo/web.slice/light" bash -c 'while :; do i=0; while ((i < 2000)); do ((i++)); done; sleep 0.1; done'
load "$demo/db.slice/capped" sh -c 'while :; do :; done'
load "$demo/batch.slice/busy" sh -c 'while :; do :; done'

echo "cgstream demo: $(find "$demo" -type d | wc -l) cgroups under $demo; the kernel flushes cpu.stat every" \
	"$interval ms and cgstream reads the whole subtree once per flush (one read of" \
	"cpu.stat.stream.subtree). Loaded: web.slice/busy and batch.slice/busy spin," \
	"web.slice/light works in short bursts, db.slice/capped spins under cpu.max 10% (throttled);" \
	"the rest are idle."
"$cgstream" watch --recursive --count 4 "$demo" | cat
rc=${PIPESTATUS[0]}
exit "$rc"
