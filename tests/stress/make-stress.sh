#!/bin/bash
# `make stress`: for each of the lockdep, KASAN and KCSAN test kernels,
# build it (timed), boot it (2 vCPUs, TCG unless KVM works) and run
# tests/stress/in-vm.sh in it: the randomized stress (cgstress) for 10
# minutes, the 10,000-file scale test, the kselftest's cases, the
# 10,000-cgroup scale tests (kselftest, libcgstream's trees with
# CGSTREAM_TEST_SCALE, pycgstream; on the lockdep kernel only, see
# in-vm.sh) and the interval fuzzer.  A
# kernel's run fails on any failed program and on any WARNING, BUG,
# lockdep or sanitizer report in its kernel log (scripts/vm/dmesg-check.sh
# via vm-run.sh).  The raw results stay in build/stress/<kernel>/;
# tests/stress/report.sh reduces each kernel's to what the report shows,
# a digest in docs/reliability/<kernel>/, and writes docs/reliability.md
# from the digests there.  The digests are committed: build/ does not
# outlive a machine, and a run of some kernels (CGSTREAM_STRESS_KERNELS,
# one kernel's run takes hours) keeps the other kernels' digests and so
# their rows in the report.
#
# env: CGSTREAM_STRESS_SECONDS         cgstress per kernel (600)
#      CGSTREAM_INTERVAL_FUZZ_SECONDS  interval fuzzer per kernel (60)
#      CGSTREAM_STRESS_KERNELS         which ones ("lockdep kasan kcsan")
#      CGSTREAM_STRESS_RESULTS         where the kernels' digests are (docs/reliability)
#      CGSTREAM_STRESS_DOC             where the report goes (docs/reliability.md)
#      CGSTREAM_STRESS_VM_TIMEOUT      seconds before a boot counts as hung
#                                      (default: the stress, the fuzzing and
#                                      2 h for the rest on lockdep, 1.5 h on
#                                      KASAN and KCSAN)
#      MAKE                            the make that builds the kernels
# Exit: 0 when every kernel's run passed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
make=${MAKE:-make}
seconds=${CGSTREAM_STRESS_SECONDS:-600}
fuzz_seconds=${CGSTREAM_INTERVAL_FUZZ_SECONDS:-60}
kernels=${CGSTREAM_STRESS_KERNELS:-lockdep kasan kcsan}
results=${CGSTREAM_STRESS_RESULTS:-$top/docs/reliability}
doc=${CGSTREAM_STRESS_DOC:-$top/docs/reliability.md}
out=$top/build/stress

# the programs, built on the host (the guest's checkout is read-only)
"$make" -s -C tests/stress || { echo "stress: tests/stress does not build" >&2; exit 1; }
"$make" -s -C tests/kselftest || { echo "stress: tests/kselftest does not build" >&2; exit 1; }
"$make" -s -C libcgstream || { echo "stress: libcgstream does not build" >&2; exit 1; }

# a run of some kernels (CGSTREAM_STRESS_KERNELS) replaces their results
# and keeps the others'; each kernel's run file says when and at which
# commit it ran, the report names both
mkdir -p "$out"
for k in $kernels; do rm -rf "${out:?}/$k"; done
run_info=$(
	# the command as run: make stress, with the overrides it was given
	echo "command: $(for v in CGSTREAM_STRESS_SECONDS CGSTREAM_INTERVAL_FUZZ_SECONDS CGSTREAM_STRESS_KERNELS; do
		[[ -n ${!v:-} ]] && echo -n "$v='${!v}' "; done)make stress"
	echo "seconds: $seconds"
	echo "fuzz_seconds: $fuzz_seconds"
	echo "started: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "host: $(nproc) cores, $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "commit: $(git rev-parse --short=12 HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "kernel_tree: $(git -C build/linux rev-parse --short=12 HEAD 2>/dev/null)"
)

fail=0
for k in $kernels; do
	case $k in
	# rest: a hang guard for what follows the stress and the fuzzing;
	# slow: how many times slower than lockdep (cgstress's time bounds)
	lockdep) target=kernel obj=build/obj memory=2G scope=all rest=7200 slow=1 ;;
	kasan) target=kernel-kasan obj=build/obj-kasan memory=3G scope=kernel rest=5400 slow=3 ;;
	kcsan) target=kernel-kcsan obj=build/obj-kcsan memory=2G scope=kernel rest=5400 slow=3 ;;
	*) echo "stress: unknown kernel '$k' (lockdep, kasan, kcsan)" >&2; exit 2 ;;
	esac
	dir=$out/$k
	mkdir -p "$dir"
	echo "$run_info" >"$dir/run"
	[[ -f $obj/vmlinux ]] && echo incremental >"$dir/build-kind" || echo cold >"$dir/build-kind"
	echo
	echo "=== stress: $k kernel: make $target ($(cat "$dir/build-kind") build)"
	start=$SECONDS
	"$make" -s -C "$top" "$target" 2>&1 | tee "$dir/build.log" | grep -E '^>>|error|config:'
	build_rc=${PIPESTATUS[0]}
	echo "$((SECONDS - start))" >"$dir/build-seconds"
	if ((build_rc)); then
		echo "build-failed" >"$dir/verdict"
		echo "finished: $(date -u '+%Y-%m-%d %H:%M UTC')" >>"$dir/run"
		echo "=== stress: $k: the kernel did not build (exit $build_rc, $dir/build.log)"
		fail=1
		continue
	fi

	echo "=== stress: $k kernel: booting for ${seconds} s of stress, the scale tests ($scope), ${fuzz_seconds} s of fuzzing"
	start=$SECONDS
	# a guard against a hung guest, not a time limit: the scale programs'
	# latest times add up to about 80 minutes on the lockdep kernel under
	# TCG (2026-11-25/26; 53-tree-memio's 10,000-cgroup trees half of it);
	# the sanitizer kernels run the kselftest's cases and the 10,000 files,
	# two to three times slower
	CGSTREAM_VM_SETTLE=12 \
		CGSTREAM_VM_TIMEOUT=${CGSTREAM_STRESS_VM_TIMEOUT:-$((seconds + fuzz_seconds + rest))} \
		scripts/vm/vm-run.sh --kernel "$obj/arch/x86/boot/bzImage" --cpus 2 --memory "$memory" \
		--out "$dir" -- "tests/stress/in-vm.sh $dir $seconds $fuzz_seconds $scope $slow" 2>&1 |
		tee "$dir/console.log"
	rc=${PIPESTATUS[0]}
	echo "$((SECONDS - start))" >"$dir/boot-seconds"
	if [[ -f $dir/dmesg ]] && ! scripts/vm/dmesg-check.sh "$dir/dmesg" >"$dir/dmesg-check" 2>&1; then
		echo "kernel-report" >"$dir/verdict"
	elif ((rc)); then
		echo "failed" >"$dir/verdict"
	else
		echo "passed" >"$dir/verdict"
	fi
	echo "finished: $(date -u '+%Y-%m-%d %H:%M UTC')" >>"$dir/run"
	echo "=== stress: $k: $(cat "$dir/verdict") ($((SECONDS - start)) s)"
	[[ $(cat "$dir/verdict") == passed ]] || fail=1
done

# this run's kernels' digests, whatever their verdict; the others' stay
for k in $kernels; do
	tests/stress/report.sh --digest "$out/$k" "$results/$k" || fail=1
done
tests/stress/report.sh "$results" "$doc" && echo "stress: wrote $doc from the digests in $results"
((fail == 0)) && echo "stress: all kernels passed" || echo "stress: FAILED (see $doc and $out)"
((fail == 0))
