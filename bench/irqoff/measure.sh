#!/bin/bash
# The interrupts-off sections of the cpu stream's publisher with 10,000 and
# 100,000 open stream files polled through one epoll set (a thread
# waiting in epoll_wait, so that every wake-up does its work), with idle
# cgroups and with all N cgroups changed in one publication; the files on
# wait queues of 64 (the series) and, for comparison, all on one queue
# (a single wait queue per stream, as a first version of the series had);
# one boot, side by side.  Needs the measurement kernel (make
# kernel-irqoff: the series, stream-irqoff-measure.patch, the irqsoff
# tracer):
#
#   make kernel-irqoff
#   scripts/vm/vm-run.sh --kernel build/obj-irqoff/arch/x86/boot/bzImage \
#       --memory 4G -- bench/irqoff/measure.sh
#
# Per phase (ten publications at 200 ms): the longest and the mean
# section of the publication's lock sections (32 css's each at most) and
# of one wake-up of a wait queue, timed by the measurement patch with
# local_clock(); and, for context, the irqsoff tracer's longest section
# anywhere in the system, with where it began and ended.  Under TCG a
# vCPU can be descheduled by the host at any point, irqs off or not: the
# longest sections carry that noise (the system-wide figure shows its
# size); the means and the one-queue rows show what the queues bound.
set -eu
N=${N:-1000} FILES=${FILES:-"10000 100000"} SHARDS=${SHARDS:-"64 1000000"}
root=/sys/fs/cgroup
tr=/sys/kernel/tracing
par=/sys/module/kernel/parameters
[[ -w $par/stat_stream_wake_max_ns ]] || { echo "no $par/stat_stream_wake_max_ns: not the measurement kernel" >&2; exit 1; }
[[ -d $tr/events ]] || mount -t tracefs tracefs $tr
here=$(cd "$(dirname "$0")" && pwd)
top=$root/irqoff-measure
mkdir -p "$top"
for ((i = 0; i < N; i++)); do mkdir -p "$top/c$i"; done
echo "$N cgroups made (TCG, $(nproc) vCPUs); times in us: longest / mean"
echo 0 >$tr/tracing_on
echo irqsoff >$tr/current_tracer
echo 200 >"$root/cpu.stat.stream_interval"

us() { echo $(($1 / 1000)); }
mean() { local n; n=$(cat $par/stat_stream_$1_nr); ((n)) && echo $(($(cat $par/stat_stream_$1_sum_ns) / n / 1000)) || echo -; }
phase() {	# NAME: reset, ten publications, print
	local p
	for p in publish wake; do
		echo 0 >$par/stat_stream_${p}_max_ns
		echo 0 >$par/stat_stream_${p}_sum_ns
		echo 0 >$par/stat_stream_${p}_nr
	done
	echo 0 >$tr/tracing_max_latency
	echo 1 >$tr/tracing_on
	sleep 2.2
	echo 0 >$tr/tracing_on
	printf '%-52s publish %5d / %4s  wake %6d / %5s  | system-wide %6s, %s\n' "$1" \
		"$(us "$(cat $par/stat_stream_publish_max_ns)")" "$(mean publish)" \
		"$(us "$(cat $par/stat_stream_wake_max_ns)")" "$(mean wake)" \
		"$(cat $tr/tracing_max_latency)" \
		"$(grep -E '=> (started|ended) at:' $tr/trace | sed 's/.*at: *//' | paste -sd' ' | sed 's/ / to /')"
}
for f in $FILES; do
	for s in $SHARDS; do
		echo "$s" >$par/stat_stream_shard_files
		python3 "$here/pollers.py" "$top" "$f" &
		pid=$!
		while [[ ! -e /tmp/irqoff-ready.$pid ]]; do
			kill -0 $pid 2>/dev/null || { echo "pollers.py failed" >&2; exit 1; }
			sleep 0.5
		done
		q=$([[ $s == 64 ]] && echo "queues of 64" || echo "one queue")
		phase "$f polled files, $q, idle cgroups"
		# every cgroup changes in one interval: a task visits each of them
		echo 3600000 >"$root/cpu.stat.stream_interval"
		for ((i = 0; i < N; i++)); do echo $BASHPID >"$top/c$i/cgroup.procs"; done
		echo $BASHPID >"$root/cgroup.procs"
		echo 200 >"$root/cpu.stat.stream_interval"
		phase "$f polled files, $q, $N cgroups changed"
		kill $pid; wait $pid 2>/dev/null || true
		rm -f /tmp/irqoff-ready.$pid
	done
done
echo 64 >$par/stat_stream_shard_files
echo 0 >"$root/cpu.stat.stream_interval"
echo nop >$tr/current_tracer
for ((i = 0; i < N; i++)); do rmdir "$top/c$i"; done
rmdir "$top"
