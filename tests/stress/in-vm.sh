#!/bin/bash
# One `make stress` boot: the randomized stress, then the 10,000-file scale
# test, the kselftest's cases (as make check runs them), its 10,000-cgroup
# subtree reads (one run of test_stat_stream_subtree's subtree_10k: its cpu,
# memory and io variants),
# libcgstream's large trees (10,000 cgroups of cpu in subtree mode and of
# cpu, memory and io in each mode; 3,000 in kernel mode), pycgstream's
# large and long Tree tests (10,000 and 3,000 cgroups, 1,000 cycles
# without growth) and the exporter's scrape of 10,000 cgroups (too slow
# for make check under TCG), and the interval fuzzer, each logged to
# OUT/<name>.log with its exit status and duration in OUT/results (lines
# "name rc seconds"), and the kernel release in OUT/release.  Runs inside
# the VM as root.
#
# SCOPE "all" (the lockdep kernel) runs all of it; "kernel" (the KASAN and
# KCSAN kernels) leaves out the 10,000-cgroup programs: they take the same
# kernel paths as the kselftest's 1,000-cgroup cases and cgstress, at sizes
# that matter to userspace's growth and time (checked on lockdep), and at
# the sanitizers' speed under TCG they would take hours.  OUT/scope says
# which ran.
#
# SLOW: how many times slower than the lockdep kernel this one runs
# (cgstress --slow: its time bounds; 1 on lockdep, 3 on KASAN and KCSAN).
#
# usage: in-vm.sh OUT STRESS_SECONDS FUZZ_SECONDS [all|kernel [SLOW]]
set -u
out=${1:?usage: in-vm.sh OUT STRESS_SECONDS FUZZ_SECONDS [all|kernel [SLOW]]}
stress_seconds=${2:?} fuzz_seconds=${3:?} scope=${4:-all} slow=${5:-1}
case $scope in all | kernel) ;; *) echo "in-vm.sh: scope '$scope' is not all or kernel" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
. "$here/programs.sh"
bin=$(stress_programs "$here/../..") || exit 1
uname -r >"$out/release"
echo "$scope" >"$out/scope"
: >"$out/results"
fail=0
run() {
	local name=$1 start=$SECONDS rc
	shift
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$out/$name.log"
	rc=${PIPESTATUS[0]}
	echo "$name $rc $((SECONDS - start))" >>"$out/results"
	echo "=== $name: exit $rc after $((SECONDS - start)) s"
	((rc == 0)) || fail=1
}
run stress env CGSTREAM_STRESS_BIN="$bin/cgstress" "$here/run-stress.sh" --seconds "$stress_seconds" \
	--slow "$slow"
run scale "$bin/scale"
run kselftest "$here/../vm/20-kselftest-stat-stream"
if [[ $scope == all ]]; then
	run subtree-10k env STAT_STREAM_10K=1 "$here/../kselftest/build/test_stat_stream_subtree" \
		-t subtree_10k
	# (their 1,000-cgroup runs again first: make check runs those)
	run libcgstream-tree-scale env CGSTREAM_TEST_SCALE=1 "$here/../../libcgstream/build/tests/vm/50-tree-subtree"
	run libcgstream-streams-scale env CGSTREAM_TEST_SCALE=1 "$here/../../libcgstream/build/tests/vm/51-tree-streams"
	run libcgstream-memio-scale env CGSTREAM_TEST_SCALE=1 "$here/../../libcgstream/build/tests/vm/53-tree-memio"
	run pycgstream-scale "$here/../vm/40-pycgstream" tests/vm/test_tree.py -k "10000 or 3000 or growth"
	run pycgstream-export-scale "$here/../vm/40-pycgstream" tests/vm/test_export.py -rP -k 10000
fi
run interval-fuzz "$bin/interval-fuzz" --seconds "$fuzz_seconds"
exit $fail
