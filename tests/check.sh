#!/bin/bash
# `make check` after the set-up and the userspace build: every stage runs
# even when an earlier one failed, and the last line sums them up.
#   kernel     the patched test kernel (`make kernel`), built at nice 19
#              while the host stage runs (the host tests need no kernel:
#              a cold build takes 13 minutes on 2 cores, the host stage 8)
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
	return "$rc"
}
# the kernel build, beside the host stage; its log is build/kernel-build.log
# (the last lines of it are shown when it fails)
mkdir -p "$top/build"
klog=$top/build/kernel-build.log kstart=$SECONDS
nice -n 19 ${MAKE:-make} -s -C "$top" kernel >"$klog" 2>&1 &
kpid=$!
echo "=== kernel: building in the background at nice 19 ($klog)"
# the bench for the host's own kernel (its BTF), so that the host stage's
# tests of cgbench (tests/host/84, 86) run; make bench builds its own
if [[ -r /sys/kernel/btf/vmlinux ]]; then
	make -s -C "$top/bench" OUT=build-host VMLINUX=/sys/kernel/btf/vmlinux >"$top/build/bench-host.log" 2>&1 ||
		echo "the bench does not build for the host (build/bench-host.log): tests/host/84, 86 skip"
fi
stage host tests/host/run.sh
kernel_built() {
	wait "$kpid"
	local rc=$?
	((rc == 0)) || { tail -n 40 "$klog"; return "$rc"; }
	grep -E '^>> ' "$klog"
}
stage kernel kernel_built
krc=$?
echo "(the kernel: $((SECONDS - kstart)) s from the start of its build, beside the host stage)"
if ((krc != 0)); then
	# no kernel of this checkout to boot: the VM stages fail without a boot
	for s in harness vm systemd; do
		echo; echo "=== $s: FAILED, not run: the kernel did not build"
		fail=$((fail + 1))
	done
else
	stage harness scripts/vm/selftest-warning.sh --cpus "$cpus" --memory "$memory"
	# the stress programs tests/vm/26-28 run (else they build in the guest, slowly)
	make -s -C "$top/tests/stress" >/dev/null ||
		echo "tests/stress does not build on the host: tests/vm/26-28 will try in the guest"
	stage vm env CGSTREAM_VM_SETTLE=12 CGSTREAM_VM_TIMEOUT=${CGSTREAM_VM_TIMEOUT:-3600} scripts/vm/vm-run.sh --cpus "$cpus" --memory "$memory" \
		--out "$top/build/vm-check" -- tests/vm/run.sh
	stage systemd env CGSTREAM_VM_TIMEOUT=${CGSTREAM_VM_TIMEOUT:-1500} tests/vm-systemd/run.sh \
		--out "$top/build/vm-systemd"
fi
echo
echo "check: $pass passed, $fail failed, $skip skipped"
((fail == 0))
