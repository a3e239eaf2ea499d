#!/bin/bash
# Run every executable in a folder as one test each: exit 0 passes, 77
# skips, anything else (or the time limit) fails.  TAP on stdout, then,
# for each failed test, the last lines of its output again (a log cut to
# its end still shows why), and the summary line "N passed, N failed, N
# skipped".  A test that is itself a suite may ask for a longer limit
# with a line "# run-suite: timeout SECONDS" in its first 20 lines.
#
# usage: run-suite.sh DIR [TIMEOUT_SECONDS]
set -u
dir=$1 limit=${2:-900}
tests=()
for t in "$dir"/[0-9]*; do [[ -x $t && -f $t ]] && tests+=("$t"); done
echo "TAP version 13"
echo "1..${#tests[@]}"
pass=0 fail=0 skip=0 n=0 failed=()
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
for t in "${tests[@]}"; do
	n=$((n + 1))
	name=$(basename "$t")
	echo "# --- $name"
	own=$(head -n 20 "$t" | sed -n 's/^# run-suite: timeout \([0-9][0-9]*\)$/\1/p' | head -n 1)
	this=${own:-$limit}
	start=$SECONDS
	timeout --foreground -k 10 "$this" "$t" 2>&1 | sed 's/^/# /' | tee "$out/$n"
	rc=${PIPESTATUS[0]}
	took=$((SECONDS - start))
	case $rc in
	0) echo "ok $n - $name (${took}s)"; pass=$((pass + 1)) ;;
	77) echo "ok $n - $name # SKIP (${took}s)"; skip=$((skip + 1)) ;;
	124) echo "not ok $n - $name # timed out after ${this}s"; fail=$((fail + 1)); failed+=("$n") ;;
	*) echo "not ok $n - $name # exit $rc (${took}s)"; fail=$((fail + 1)); failed+=("$n") ;;
	esac
done
for n in "${failed[@]}"; do
	echo "# === failed: $(basename "${tests[n - 1]}"), the last 40 lines of its output:"
	tail -n 40 "$out/$n"
done
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0))
