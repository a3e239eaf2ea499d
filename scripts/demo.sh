#!/bin/bash
# The cgstream demo, run as root inside the VM by 'make demo': a subtree
# of 50 cgroups (three slices of services, six of them loaded: three spin,
# one capped by cpu.max so throttling shows, one holds 64 MiB of memory,
# one reads and writes a loop device; the rest idle), streamed by
# 'cgstream watch --recursive' through one read of the slice root's
# cpu.stat.stream.subtree, memory.stat.stream.subtree and
# io.stat.stream.subtree per flush, for four flushes of 500 ms; then one
# table of 'cgstream top' (CPU, MEM, IO/s).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cgstream=$top/libcgstream/build/cgstream
interval=500
[[ -x $cgstream ]] || { echo "demo: $cgstream is not built (make userspace)" >&2; exit 1; }
root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[[ -n $root ]] || { echo "demo: no cgroup2 mount" >&2; exit 1; }
demo=$root/demo
# each controller's interval as it was (the ones the kernel streams)
saved=()
for c in cpu memory io; do
	v=$("$cgstream" interval --controller $c 2>/dev/null) && saved+=("$c=$v")
done
pids=()
loaded=(web.slice/busy web.slice/light db.slice/capped batch.slice/busy batch.slice/light db.slice/busy)
mnt= loop=

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
	[[ -n $loop ]] && losetup -d "$loop"
	[[ -n $mnt ]] && umount "$mnt" && rmdir "$mnt"
	((${#saved[@]})) && "$cgstream" interval "${saved[@]}"
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
# memory and io for every cgroup of the demo, where the kernel has them
ctrls=
for c in memory io; do
	echo "+$c" >"$root/cgroup.subtree_control" 2>/dev/null && ctrls+=" +$c"
done
[[ -n $capped ]] && ctrls="+cpu$ctrls"
mkdir "$demo" || exit 1
enable() { # enable DIR: the controllers for DIR's children
	local c
	for c in $ctrls; do
		echo "$c" >"$1/cgroup.subtree_control" 2>/dev/null ||
			{ [[ $c == +cpu ]] && capped=; }
	done
}
enable "$demo"
# 3 slices, each with 15 services (1 + 3 + 3*15 = 49 cgroups below demo)
for slice in web.slice db.slice batch.slice; do
	mkdir "$demo/$slice" || exit 1
	enable "$demo/$slice"
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
# memory: 64 MiB written (so charged) and held
load "$demo/batch.slice/light" python3 -c 'import time; b = b"m" * (64 << 20); time.sleep(3600)'
# io: a loop device over a file in a tmpfs of its own (so the only block
# I/O is the loop device's), read and written with O_DIRECT in a loop
mnt=$(mktemp -d /tmp/cgstream-demo.XXXXXX) && mount -t tmpfs -o size=80M cgstream-demo "$mnt" &&
	truncate -s 64M "$mnt/disk" && loop=$(losetup -f --show "$mnt/disk") ||
	{ echo "demo: no loop device: no io shown"; loop=; }
if [[ -n $loop ]]; then
	load "$demo/db.slice/busy" sh -c 'while :; do
		dd if=/dev/zero of="$0" bs=1M count=16 oflag=direct 2>/dev/null
		dd if="$0" of=/dev/null bs=1M count=16 iflag=direct 2>/dev/null
		sleep 0.05; done' "$loop"
fi

# until the loads are under way (a TCG guest starts python slowly)
for ((i = 0; i < 600; i++)); do
	(($(cat "$demo/batch.slice/light/memory.current" 2>/dev/null || echo 0) > 60 << 20)) &&
		{ [[ -z $loop ]] || grep -qs 'wbytes=[1-9]' "$demo/db.slice/busy/io.stat"; } && break
	sleep 0.1
done

echo "cgstream demo: $(find "$demo" -type d | wc -l) cgroups under $demo; the kernel flushes cpu, memory" \
	"and io statistics every $interval ms and cgstream reads the whole subtree once per flush" \
	"(one read of each controller's *.stat.stream.subtree). Loaded: web.slice/busy and" \
	"batch.slice/busy spin, web.slice/light works in short bursts, db.slice/capped spins under" \
	"cpu.max 10% (throttled), batch.slice/light holds 64 MiB, db.slice/busy reads and writes" \
	"${loop:-a loop device} (16 MiB each way per round); the rest are idle."
"$cgstream" watch --recursive --count 4 "$demo" | cat
rc=${PIPESTATUS[0]}
((rc == 0)) || exit "$rc"
echo
echo "cgstream top -b -n 1 $demo (the same tree as a table: CPU, MEM = memory.current, IO/s = bytes read and written per second):"
"$cgstream" top -b -n 1 "$demo"
