#!/bin/bash
# dmesg-check.sh LOG: exit 1, printing the reports, when a guest's kernel
# log holds a WARNING, BUG, Oops, lockdep report, RCU splat, hung task or
# panic; exit 0 otherwise.  Used by every VM runner (vm-run.sh,
# tests/vm-systemd/run.sh) so that they all judge a boot the same way.
#
# Real reports only: a lockdep kernel prints "RCU lockdep checking is
# enabled" and "MAX_LOCKDEP_KEYS" at every boot.  Since 7.x a WARN reads
# "WARNING: <file>:<line> at <func>, CPU#N: comm/pid" (older kernels:
# "WARNING: CPU: N PID: ..."), so match the report's line start.
set -u
log=${1:?usage: dmesg-check.sh LOG}
[[ -r $log ]] || { echo "dmesg-check: no kernel log $log" >&2; exit 2; }
pattern='\] WARNING: |\] BUG: |\] Oops|cut here \]|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked for more than|Kernel panic|Call Trace:|kernel BUG at'
if grep -Eq "$pattern" "$log"; then
	echo "the guest kernel reported a problem (full log: $log):" >&2
	grep -En -A12 "$pattern" "$log" | head -60 >&2
	exit 1
fi
exit 0
