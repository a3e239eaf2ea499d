#!/bin/bash
# Runs the randomized stress, tests/stress/build/cgstress, inside the VM as
# root, then removes what a crashed run left behind (its private subtree
# <cgroup2>/cgstress.<pid>; its CPU burners die with it).
#
# usage: run-stress.sh [--seconds N] [cgstress options...]
# env:   CGSTREAM_STRESS_SECONDS  duration when --seconds is not given (120)
#        CGSTREAM_STRESS_BIN      the cgstress to run (default: an up-to-date
#                                 build, see programs.sh)
# Exit:  cgstress's: 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [[ -n ${CGSTREAM_STRESS_BIN:-} ]]; then
	bin=$CGSTREAM_STRESS_BIN
else
	. "$here/programs.sh"
	bin=$(stress_programs "$here/../..")/cgstress || exit 1
fi
args=("$@")
[[ " $* " == *" --seconds "* ]] || args=(--seconds "${CGSTREAM_STRESS_SECONDS:-120}" "$@")
"$bin" "${args[@]}"
rc=$?
mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
for d in "${mnt:-/nonexistent}"/cgstress.*; do
	[[ -d $d ]] || continue
	echo "run-stress: removing the leftover $d"
	find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	[[ -d $d ]] && echo "run-stress: could not remove $d"
done
exit $rc
