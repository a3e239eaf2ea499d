#!/bin/bash
# `make check` after the builds: every stage runs even when an earlier one
# failed, and the last line sums them up.
#   host       tests/host/*  on the host kernel (fallback mode, units, parsers)
#   harness    a deliberate kernel WARNING must fail a VM run
#   vm         tests/vm/*    in one boot of the patched kernel
#   systemd    tests/vm-systemd: the units installed into a systemd boot of
#              the patched kernel, then of Debian's stock kernel (skips)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cpus=${VM_CPUS:-2} memory=${VM_MEMORY:-2G}
pass=0 fail=0 skip=0
stage() {
	local name=$1; shift
	echo
	echo "=== $name: $*"
	local start=$SECONDS
	"$@"
	local rc=$?
	case $rc in
	0) pass=$((pass + 1)); echo "=== $name: passed ($((SECONDS - start)) s)" ;;
	77) skip=$((skip + 1)); echo "=== $name: skipped ($((SECONDS - start)) s)" ;;
	*) fail=$((fail + 1)); echo "=== $name: FAILED, exit $rc ($((SECONDS - start)) s)" ;;
	esac
}
# the bench for the host's own kernel (its BTF), so that the host stage's
# tests of cgbench (tests/host/84, 86) run; make bench builds its own
if [[ -r /sys/kernel/btf/vmlinux ]]; then
	make -s -C "$top/bench" OUT=build-host VMLINUX=/sys/kernel/btf/vmlinux >"$top/build/bench-host.log" 2>&1 ||
		echo "the bench does not build for the host (build/bench-host.log): tests/host/84, 86 skip"
fi
stage host tests/host/run.sh
stage harness scripts/vm/selftest-warning.sh --cpus "$cpus" --memory "$memory"
# the stress programs tests/vm/26-28 run (else they build in the guest, slowly)
make -s -C "$top/tests/stress" >/dev/null ||
	echo "tests/stress does not build on the host: tests/vm/26-28 will try in the guest"
stage vm env CGSTREAM_VM_SETTLE=12 CGSTREAM_VM_TIMEOUT=${CGSTREAM_VM_TIMEOUT:-3600} scripts/vm/vm-run.sh --cpus "$cpus" --memory "$memory" \
	--out "$top/build/vm-check" -- tests/vm/run.sh
stage systemd env CGSTREAM_VM_TIMEOUT=${CGSTREAM_VM_TIMEOUT:-1500} tests/vm-systemd/run.sh \
	--out "$top/build/vm-systemd"
echo
echo "check: $pass passed, $fail failed, $skip skipped"
((fail == 0))
