#!/bin/bash
# The longest interrupts-off section of the stream flusher's publish, with
# N cgroups (default 20,000) changed in one cycle, for the first version's
# lock-break policy and for the bounded one, side by side in one boot.
#
# Needs a test kernel with rstat-irqoff-measure.patch applied on top of the
# series (measurement only; the patch is not part of the series):
#
#   git -C build/linux apply ../../bench/irqoff/rstat-irqoff-measure.patch
#   scripts/kernel-build.sh build/linux build/obj scripts/vm/kernel.config \
#       ~/.cache/cgstream/ccache   # builds the tree as checked out
#   make vm-run CMD=bench/irqoff/measure.sh
#   git -C build/linux checkout kernel/cgroup/rstat.c
#
# Each cgroup changes because this shell moves itself through all of them
# while the flusher waits out a long interval; a short interval then makes
# the next cycle publish them all at once.
set -eu
N=${N:-20000}
root=/sys/fs/cgroup
param=/sys/module/kernel/parameters/rstat_publish_unbounded
[[ -w $param ]] || { echo "no $param: kernel without the measurement patch" >&2; exit 1; }
top=$root/irqoff-measure
mkdir -p "$top"
for ((i = 0; i < N / 100; i++)); do mkdir -p "$top/p$i/c"{0..99}; done
echo "$N cgroups made"
echo 3600000 >"$root/cpu.stat.stream_interval"
exec 3<"$root/cpu.stat.stream"
sleep 3	# the first cycle publishes every cgroup
for mode in Y N; do
	echo $mode >"$param"
	echo 3600000 >"$root/cpu.stat.stream_interval"
	start=$SECONDS
	for d in "$top"/p[0-9]*/c[0-9]*; do echo $BASHPID >"$d/cgroup.procs"; done
	echo $BASHPID >"$root/cgroup.procs"
	echo "visited $N cgroups in $((SECONDS - start)) s (unbounded=$mode)"
	echo 10 >"$root/cpu.stat.stream_interval"
	sleep 2
	echo 3600000 >"$root/cpu.stat.stream_interval"
	dmesg | grep 'rstat publish:' | tail -1
done
exec 3<&-
echo 0 >"$root/cpu.stat.stream_interval"
for ((i = 0; i < N / 100; i++)); do rmdir "$top/p$i/c"{0..99} "$top/p$i"; done
rmdir "$top"
