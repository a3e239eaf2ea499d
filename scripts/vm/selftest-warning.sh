#!/bin/bash
# Harness self-test, run from the host: a guest command that triggers a
# kernel WARNING (LKDTM) and exits 0 must make vm-run.sh fail, naming the
# WARNING.  Proves that a VM test run cannot pass over a kernel splat.
set -u
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
"$here/vm-run.sh" "$@" -- 'echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT; exit 0' >"$log" 2>&1
rc=$?
if ((rc != 0)) && grep -q '\] WARNING: .*lkdtm' "$log"; then
	echo "ok: a deliberate kernel WARNING fails the VM run (exit $rc)"
	rm -f "$log"; exit 0
fi
echo "FAIL: vm-run exited $rc after a deliberate WARNING; output:"
cat "$log"; rm -f "$log"; exit 1
