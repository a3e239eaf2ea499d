#!/bin/bash
# The report of `make stress` (tests/stress/make-stress.sh), in two steps.
#
# --digest: one kernel's raw results, build/stress/<kernel>/ (its own run
# file, verdict, build and boot times, the programs' exit statuses in
# results, "name rc seconds", their logs, its console and kernel logs),
# reduced to what the report shows of them: a digest of a few kilobytes,
# docs/reliability/<kernel>/, kept in the repository.  build/ does not
# outlive a machine and each kernel's run takes hours, so the kernels run
# in different sessions; their digests keep each one's results until its
# next run replaces them.
#
# Otherwise: docs/reliability.md from the digests of the kernels that have
# one.  Only what is in them goes into the report, and, at its end, the
# hand-kept list of what earlier runs found (tests/stress/findings.md).
#
# usage: report.sh DIGEST_DIR DOC
#        report.sh --digest RAW_KERNEL_DIR DIGEST_KERNEL_DIR
set -uo pipefail
usage() {
	echo "usage: report.sh DIGEST_DIR DOC" >&2
	echo "       report.sh --digest RAW_KERNEL_DIR DIGEST_KERNEL_DIR" >&2
	exit 2
}
# the kernels, in the report's order
all_kernels="lockdep kasan kcsan"

# The logs the report shows: the lines it shows of each (an extended
# regex) and at most how many.  A digest keeps those lines of each log
# (shown_lines()), and the report prints a digest's logs as they are.
declare -A shown_pattern shown_max
shown_logs=()
shows() { shown_logs+=("$1"); shown_max[$1]=$2 shown_pattern[$1]=$3; }
shows stress.log 40 '^cgstress: (ran|PASS|FAIL)|^FAIL|^  \S'
shows scale.log 100 '^(scale|FAIL)'
shows kselftest.log 100 '^(not ok|# Totals|# FAIL)'
shows subtree-10k.log 100 '^# |^(ok|not ok) '
shows libcgstream-tree-scale.log 100 '^== |passed|FAIL'
shows libcgstream-streams-scale.log 100 '^== |passed|FAIL'
shows libcgstream-memio-scale.log 100 '^== |passed|FAIL'
shows pycgstream-scale.log 100 'passed|failed|FAIL|Error'
shows pycgstream-export-scale.log 100 'scrape|passed|failed|FAIL|Error'
shows interval-fuzz.log 100 '^(interval-fuzz|FAIL)'

# the lines the report shows of log file $1: past its limit the first
# ones, a line that says how many were left out, and the last one (a
# program's verdict)
shown_lines() {
	local name=${1##*/} max lines n
	max=${shown_max[$name]}
	lines=$(grep -E "${shown_pattern[$name]}" "$1" 2>/dev/null) || return 0
	n=$(wc -l <<<"$lines")
	if ((n <= max)); then
		echo "$lines"
	else
		head -$((max - 1)) <<<"$lines"
		echo "[... $((n - max)) more lines ...]"
		tail -1 <<<"$lines"
	fi
}

# the digest of raw results $1 in folder $2, which it replaces
digest() {
	local raw=$1 dst=${2%/} f log new
	new=$dst.new
	# (a guard for the rm -rf below: a digest's folder is its kernel's name)
	[[ " $all_kernels " == *" ${dst##*/} "* ]] ||
		{ echo "report: $dst: a digest's folder is named after its kernel ($all_kernels)" >&2; exit 2; }
	[[ -f $raw/run ]] || { echo "report: no $raw/run: not a kernel's results from make stress" >&2; exit 1; }
	rm -rf "$new" && mkdir -p "$new" || exit 1
	for f in run release verdict build-seconds build-kind boot-seconds results scope; do
		[[ ! -f $raw/$f ]] || cp "$raw/$f" "$new/$f" || exit 1
	done
	# the reports' first 40 lines, as the report shows them (the kernel
	# log's path as the checkout's, not this host's)
	[[ ! -f $raw/dmesg-check ]] ||
		sed 's#[^ (]*/\(build/stress/\)#\1#g' "$raw/dmesg-check" | head -40 >"$new/dmesg-check" || exit 1
	if grep -q -- '--disable-kvm' "$raw/console.log" 2>/dev/null; then
		echo TCG >"$new/accel"
	elif [[ -f $raw/console.log ]]; then
		echo KVM >"$new/accel"
	fi
	# the kernel log itself stays in build/: its length says it was there
	[[ ! -f $raw/dmesg ]] || echo "$(wc -l <"$raw/dmesg") lines" >"$new/kernel-log"
	[[ ! -f $raw/stress.log ]] || awk '$1 == "count"' "$raw/stress.log" >"$new/counts"
	for log in "${shown_logs[@]}"; do
		[[ ! -f $raw/$log ]] || shown_lines "$raw/$log" >"$new/$log"
	done
	rm -rf "$dst" && mv "$new" "$dst"
}

if [[ ${1:-} == --digest ]]; then
	(($# == 3)) || usage
	digest "$2" "$3"
	exit 0
fi
(($# == 2)) || usage
res=$1 doc=$2
# the kernels with a digest, in the report's order
kernels=$(for k in $all_kernels; do [[ -f $res/$k/run ]] && echo -n "$k "; done)
kernels=${kernels% }
[[ -n $kernels ]] ||
	{ echo "report: no kernel's digest ($all_kernels) in $res: run make stress first" >&2; exit 1; }

# field $2 of kernel $1's run file: each kernel ran in a make stress of
# its own, or with others
kfield() { sed -n "s/^$2: //p" "$res/$1/run" 2>/dev/null; }
# "V" when every kernel has the same value of field $1, else "k: V; ..."
per_kernel() {
	local k vals
	vals=$(for k in $kernels; do kfield "$k" "$1"; done | sort -u)
	if [[ $(echo "$vals" | wc -l) -le 1 ]]; then
		echo "$vals"
	else
		for k in $kernels; do echo -n "$k: $(kfield "$k" "$1"); "; done | sed 's/; $//'
	fi
}
val() { [[ -f $1 ]] && cat "$1" || echo "${2:--}"; }

# "name rc seconds" of program $2 in kernel $1's results
prog() {
	local r rc seconds
	r=$(awk -v p="$2" '$1 == p { print $2 " " $3 }' "$res/$1/results" 2>/dev/null)
	if [[ -z $r && $(val "$res/$1/scope") == kernel && $2 != @(stress|scale|kselftest|interval-fuzz) ]]; then
		echo "lockdep only"
	elif [[ -z $r ]]; then
		echo "did not run"
	else
		read -r rc seconds <<<"$r"
		case $rc in
		0) echo "passed, $seconds s" ;;
		77) echo "skipped, $seconds s" ;;
		*) echo "**failed** (exit $rc), $seconds s" ;;
		esac
	fi
}

# each kernel's shown lines of log $1 (its digest holds only those), as
# a code block; headed by the program's name too if $2 is "named"
log_lines() {
	local log=$1 k lines
	for k in $kernels; do
		lines=$(cat "$res/$k/$log" 2>/dev/null)
		[[ -n $lines ]] || continue
		echo "$k kernel${2:+, ${log%.log}}:"
		echo
		echo '```'
		echo "$lines"
		echo '```'
		echo
	done
}

{
	echo "# Reliability: randomized stress on the test kernels (${kernels// /, })"
	echo
	echo "Generated by \`$(per_kernel command)\` (tests/stress/make-stress.sh, then"
	echo "tests/stress/report.sh) from the digests in docs/reliability/<kernel>/ it"
	echo "made of each kernel's raw results in build/stress/<kernel>/; do not edit by"
	echo "hand, run it again."
	echo
	echo "- checkout: $(per_kernel commit); kernel tree (build/linux) $(per_kernel kernel_tree)"
	echo "- ran: $(for k in $kernels; do echo -n "$k $(kfield "$k" started) to $(kfield "$k" finished); "; done | sed 's/; $//'), on a host with $(per_kernel host)"
	echo "- per kernel: one boot of 2 vCPUs under QEMU ($(for k in $kernels; do echo -n "$k: $(val "$res/$k/accel"); "; done | sed 's/; $//')),"
	echo "  running \`tests/stress/in-vm.sh\`: cgstress for $(per_kernel seconds) s, the scale test,"
	echo "  the kselftest's cases, the large trees (kselftest, libcgstream, pycgstream,"
	echo "  the exporter; on the lockdep kernel only: on KASAN and KCSAN they would take"
	echo "  hours under TCG and reach no kernel path the kselftest's 1,000-cgroup cases"
	echo "  and cgstress do not), the interval fuzzer for $(per_kernel fuzz_seconds) s. Times are"
	echo "  wall-clock times of emulated guests: they say how long the run took, not"
	echo "  how fast the kernel is."
	echo
	echo "## Results"
	echo
	echo "| kernel | release | verdict | kernel build step | boot | cgstress | scale | kselftest | subtree 10k (cpu, memory, io) | libcgstream 10k | libcgstream streams 3k | libcgstream memio 10k | pycgstream 10k, 3k, growth | exporter 10k | interval fuzz |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for k in $kernels; do
		d=$res/$k
		echo "| $k | $(val "$d/release") | $(val "$d/verdict" "did not run") |" \
			"$(val "$d/build-seconds") s ($(val "$d/build-kind")) | $(val "$d/boot-seconds") s |" \
			"$(prog "$k" stress) | $(prog "$k" scale) | $(prog "$k" kselftest) |" \
			"$(prog "$k" subtree-10k) | $(prog "$k" libcgstream-tree-scale) |" \
			"$(prog "$k" libcgstream-streams-scale) |" \
			"$(prog "$k" libcgstream-memio-scale) | $(prog "$k" pycgstream-scale) |" \
			"$(prog "$k" pycgstream-export-scale) |" \
			"$(prog "$k" interval-fuzz) |"
	done
	echo
	echo "A verdict of \`kernel-report\` means the guest's kernel log held a WARNING,"
	echo "BUG (KASAN and KCSAN reports start with \`BUG: KASAN:\` / \`BUG: KCSAN:\`),"
	echo "lockdep report or hung task, whatever the programs said. A \`cold\` build"
	echo "step built the kernel from scratch (through ccache) on this host's cores;"
	echo "\`incremental\` only rebuilt what changed since an earlier build."
	echo
	echo "## What ran"
	echo
	echo "- **cgstress** (tests/stress/cgstress.c, one table row per stream driving"
	echo "  every role: cpu, memory, io, and pressure where the kernel has it): three"
	echo "  threads make and remove small nested trees of cgroups"
	echo "  (some with \`+cpu\`, \`+memory\` and \`+io\` in \`cgroup.subtree_control\`, a"
	echo "  \`cpu.max\`, some directories 0700), a migrator moves four processes between"
	echo "  leaves that burn CPU, charge and uncharge memory, do O_DIRECT I/O on two"
	echo "  loop devices (one removed and re-created every few seconds) and keep two"
	echo "  threads busy on one CPU (one always waiting: CPU pressure); poll, epoll"
	echo "  (level and edge triggered) and io_uring (one-shot and multishot) readers keep"
	echo "  ten text and subtree files each open on random cgroups and read full and"
	echo "  change snapshots in pieces; a walker, a change reader (changes applied to a"
	echo "  state must equal the next full snapshot of the same publication), REMOVED"
	echo "  accounting (a parent's usage = its live children's + its removed children's"
	echo "  final values, at every publication), a pinning reader (snapshots read up to"
	echo "  their first cgroup and kept open: the dying cgroups must drain), a reader as"
	echo "  uid 65534 (nothing under a 0700 directory), fd storms on removal (every file"
	echo "  reports EPOLLERR; rmdir with 500 and 4,000 files timed), quick opens and"
	echo "  classic \`*.stat\` and \`*.pressure\` reads, and per stream a monitor and an"
	echo "  interval writer (valid, invalid and 0 intervals). Its invariants:"
	echo "  publication_seq and the counters (pressure: its stall totals) never go back"
	echo "  for an open file; no error but ENODEV/EPOLLERR/ENOENT once a"
	echo "  cgroup's rmdir began, ENODATA only where nothing is published; every rmdir"
	echo "  returns within 2 s (a hang bound; three times longer on KASAN and KCSAN,"
	echo "  \`cgstress --slow 3\`); at most one POLLIN wake-up per publication per file,"
	echo "  EPOLLPRI and the STOPPED flag only around a stop, no poller asleep through a"
	echo "  publication, a stop or its cgroup's removal; every record valid, the SCHEMA"
	echo "  naming the text files' keys, snapshots in pre-order, no cgroup twice, the"
	echo "  long-lived cgroups present, REMOVED records once and only for removed ones."
	echo "- **scale** (tests/stress/scale.c): 10,000 open stream files over 2,000"
	echo "  cgroups, the memory an open file costs, one wake-up per file per publication"
	echo "  through epoll, and the publisher stopping once all are closed."
	echo "- **kselftest** (tests/kselftest's test_stat_stream programs, every case make"
	echo "  check runs): the cpu, memory and io stream and subtree files' contract, 1,000-cgroup"
	echo "  subtree reads, bad input, removal, stop and freshness, an unprivileged reader."
	echo "- **subtree 10k** (\`STAT_STREAM_10K=1 test_stat_stream_subtree -t subtree_10k\`):"
	echo "  subtree snapshots of 10,000 cgroups, one run for the cpu, memory and io variants."
	echo "- **libcgstream 10k** (libcgstream/tests/vm/50-tree-subtree and 53-tree-memio with"
	echo "  \`CGSTREAM_TEST_SCALE=1\`): the tree checks (ADDED and REMOVED once with churn,"
	echo "  every cgroup in every batch, no fd or heap growth, the root removed) on"
	echo "  10,000 cgroups: cpu in subtree mode; cpu, memory and io in each mode;"
	echo "  51-tree-streams: cpu in kernel mode (a stream file per cgroup) on 3,000."
	echo "- **pycgstream** (pycgstream/tests/vm/test_tree.py): Trees of 10,000 and"
	echo "  3,000 cgroups, and 1,000 cycles without fd or memory growth; the"
	echo "  exporter (test_export.py) serving a scrape of 10,000 cgroups."
	echo "- **interval-fuzz** (tests/stress/interval-fuzz.c): random bytes and"
	echo "  decorated numbers up to three pages written to"
	echo "  \`cpu.stat.stream_interval\` as root, as root without CAP_SYS_ADMIN and"
	echo "  as uid 65534, every result checked against a model of the interface."
	echo
	echo "## cgstress operation counts"
	echo
	echo -n "| operation |"
	for k in $kernels; do echo -n " $k |"; done
	echo
	echo -n "|---|"
	for k in $kernels; do echo -n "---:|"; done
	echo
	names=$(for k in $kernels; do awk '$1 == "count" { print $2 }' "$res/$k/counts" 2>/dev/null; done |
		awk '!seen[$0]++')
	for n in $names; do
		echo -n "| $n |"
		for k in $kernels; do
			echo -n " $(awk -v n="$n" '$1 == "count" && $2 == n { v = $3 } END { print v == "" ? "-" : v }' \
				"$res/$k/counts" 2>/dev/null || echo -) |"
		done
		echo
	done
	[[ -n $names ]] || echo "| (no counts: cgstress did not finish on any kernel) |"
	echo
	log_lines stress.log
	echo "## 10,000 open files"
	echo
	log_lines scale.log
	echo "## kselftest"
	echo
	log_lines kselftest.log
	echo "## 10,000-cgroup subtree reads"
	echo
	log_lines subtree-10k.log named
	log_lines libcgstream-tree-scale.log named
	log_lines libcgstream-streams-scale.log named
	log_lines libcgstream-memio-scale.log named
	log_lines pycgstream-scale.log named
	log_lines pycgstream-export-scale.log named
	echo "## Interval fuzzer"
	echo
	log_lines interval-fuzz.log
	echo "## Kernel reports"
	echo
	for k in $kernels; do
		if [[ $(val "$res/$k/verdict") == build-failed ]]; then
			echo "- $k: no kernel log (the kernel did not build)"
		elif [[ ! -f $res/$k/kernel-log ]]; then
			echo "- $k: no kernel log (the boot did not finish)"
		elif [[ -s $res/$k/dmesg-check ]]; then
			echo "- $k: **reports** (its run's build/stress/$k/dmesg):"
			echo
			echo '```'
			cat "$res/$k/dmesg-check"
			echo '```'
		else
			echo "- $k: none (no WARNING, BUG, lockdep, KASAN or KCSAN report, no hung task)"
		fi
	done
	echo
	cat "$(dirname "$0")/findings.md"
} >"$doc.new" && mv "$doc.new" "$doc"
