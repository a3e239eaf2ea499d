#!/bin/bash
# Runs inside the VM: the command from $OUT/cmd, then the kernel log.
out=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo "guest: $(uname -r) ($(nproc) CPUs)"
bash -c "$(cat "$out/cmd")"
rc=$?
# give khungtaskd one check period to report anything left blocked
[[ -n ${CGSTREAM_VM_SETTLE:-} ]] && sleep "$CGSTREAM_VM_SETTLE"
dmesg >"$out/dmesg"
echo "$rc" >"$out/rc"
sync
