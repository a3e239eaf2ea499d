#!/bin/bash
# The longest interrupts-off section while the cpu stream publishes, with
# 0, 10,000 and 100,000 open stream files polled through one epoll set
# (a thread waiting in epoll_wait, so that every wake-up does its work),
# and with every one of N cgroups changed in one publication; one boot,
# side by side.  Needs the measurement kernel (make kernel-irqoff):
#
#   make kernel-irqoff
#   scripts/vm/vm-run.sh --kernel build/obj-irqoff/arch/x86/boot/bzImage \
#       --memory 4G -- bench/irqoff/measure.sh
#
# The irqsoff tracer keeps the longest section system-wide, with the
# functions where it began and ended: each phase resets it, runs ten
# publications, and prints it with those two places, so that a long
# section of something else (the emulated timer, say) is told apart.
set -eu
N=${N:-1000} FILES=${FILES:-"0 10000 100000"}
root=/sys/fs/cgroup
tr=/sys/kernel/tracing
[[ -d $tr/events ]] || mount -t tracefs tracefs $tr
grep -qw irqsoff $tr/available_tracers || { echo "no irqsoff tracer: not the measurement kernel" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
top=$root/irqoff-measure
mkdir -p "$top"
for ((i = 0; i < N; i++)); do mkdir -p "$top/c$i"; done
echo "$N cgroups made"
echo 0 >$tr/tracing_on
echo irqsoff >$tr/current_tracer
echo 200 >"$root/cpu.stat.stream_interval"

phase() {	# NAME: reset, ten publications, print
	echo 0 >$tr/tracing_max_latency
	echo 1 >$tr/tracing_on
	sleep 2.2
	echo 0 >$tr/tracing_on
	printf '%-36s longest irqs-off %6s us, from %s\n' "$1" "$(cat $tr/tracing_max_latency)" \
		"$(grep -E '=> (started|ended) at:' $tr/trace | sed 's/.*at: *//' | paste -sd' ' | sed 's/ / to /')"
}
for f in $FILES; do
	python3 "$here/pollers.py" "$top" "$f" &
	pid=$!
	while [[ ! -e /tmp/irqoff-ready.$pid ]]; do sleep 0.5; done
	phase "$f polled files, idle cgroups"
	# every cgroup changes in one interval: a task visits each of them
	echo 3600000 >"$root/cpu.stat.stream_interval"
	for ((i = 0; i < N; i++)); do echo $BASHPID >"$top/c$i/cgroup.procs"; done
	echo $BASHPID >"$root/cgroup.procs"
	echo 200 >"$root/cpu.stat.stream_interval"
	phase "$f polled files, $N cgroups changed"
	kill $pid; wait $pid 2>/dev/null || true
	rm -f /tmp/irqoff-ready.$pid
done
echo 0 >"$root/cpu.stat.stream_interval"
echo nop >$tr/current_tracer
for ((i = 0; i < N; i++)); do rmdir "$top/c$i"; done
rmdir "$top"
