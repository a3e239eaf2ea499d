#!/bin/bash
# `make bench`: build the benchmark programs, boot the patched kernel in the
# VM at each size (2, 8, 32 vCPUs), run bench/driver.py inside, collect the
# raw results, then render docs/benchmarks.md and docs/bench/*.png.
#
# env: BENCH_QUICK=1      smoke run (seconds, not minutes; not for the docs)
#      BENCH_SIZES="2 8 32"  vCPU counts to boot
#      BENCH_OUT=DIR      where raw results go (default build/bench/<UTC time>)
#      BENCH_DOCS=DIR     where the report goes (default docs/; quick runs
#                         default to the results folder, so the committed
#                         report is never overwritten by a smoke run)
#      BENCH_LIMIT_MIN=90 wall-clock limit for the whole run: each boot gets a
#                         deadline that leaves room for the later sizes; the
#                         driver starts no measurement past it and says what it
#                         skipped (the report lists it)
#      BENCH_PARALLEL=1   boot all sizes at once, each until the run's deadline
#                         (for an overloaded host, where one TCG boot alone
#                         takes most of the time limit; ratios are still
#                         taken within one boot, but the boots slow each other)
#      BENCH_VM_LOCK=FILE take this flock(1) lock around each boot (when
#                         other VM users share the machine: they get the
#                         time between boots, never the time of one)
#      CGSTREAM_KVM       passed to vm-run.sh; default "no" (KVM guests hang
#                         on these machines, see MACHINE-NOTES) = TCG
#      BENCH_ADD=RUN_DIR  add one boot to an earlier run instead (for what its
#                         time limit cut: the driver logs "skipped"), with its
#                         kernel image: BENCH_SIZES is the one vCPU count,
#                         BENCH_ADD_ARGS the driver's arguments (e.g.
#                         "--scenarios s2 --points 4x10,16x100"), the limit
#                         BENCH_LIMIT_MIN; then the report is rendered again
#      BENCH_ARGS="..."   a new run of a few scenarios: the driver's arguments
#                         in place of each size's (scen_for), e.g. only the
#                         pressure points: BENCH_SIZES=2 BENCH_ARGS="--scenarios
#                         s16" (with BENCH_DOCS elsewhere: docs/ is for whole
#                         runs)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
quick=${BENCH_QUICK:-0}
sizes=${BENCH_SIZES:-"2 8 32"}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=${BENCH_ADD:-${BENCH_OUT:-$top/build/bench/$stamp}}
if [[ $quick == 1 ]]; then
	docs=${BENCH_DOCS:-$out/report}
else
	docs=${BENCH_DOCS:-$top/docs}
fi
export CGSTREAM_KVM=${CGSTREAM_KVM:-no}
py=$top/.venv/bin/python
if [[ -n ${MAKELEVEL:-} ]]; then command="make bench"; else command="bench/run.sh"; fi

echo ">> bench: results in $out, report in $docs (quick=$quick, sizes: $sizes)"
if [[ -n ${BENCH_ADD:-} ]]; then
	[[ -f $out/run.json && -f $out/bzImage ]] ||
		{ echo "bench: BENCH_ADD=$out is not a bench run (no run.json or bzImage)" >&2; exit 1; }
	[[ $sizes =~ ^[0-9]+$ ]] || { echo "bench: BENCH_ADD boots one size: BENCH_SIZES=N" >&2; exit 1; }
	[[ -n ${BENCH_ADD_ARGS:-} ]] || { echo "bench: BENCH_ADD needs BENCH_ADD_ARGS (the driver's --scenarios ...)" >&2; exit 1; }
fi
mkdir -p "$out"
# one kernel for every boot, even if build/obj is rebuilt meanwhile
kernel=${BENCH_KERNEL:-$top/build/obj/arch/x86/boot/bzImage}
if [[ -n ${BENCH_ADD:-} ]]; then
	# the run's kernel; the programs are built as make bench builds them
	kernel=$out/bzImage
	vmlinux=${BENCH_VMLINUX:-$top/build/obj-bench/vmlinux}
else
	[[ -f $kernel ]] || { echo "bench: $kernel missing: make kernel" >&2; exit 1; }
	cp "$kernel" "$out/bzImage"
fi
# the BPF reader is built against that kernel's BTF (bench/Makefile)
vmlinux=${vmlinux:-${BENCH_VMLINUX:-$(dirname "$kernel")/../../../vmlinux}}
make -s -C bench VMLINUX="$(realpath "$vmlinux")" || exit 1
# what the series adds per css (the published copies' header, the css's
# pointer to them) and the structs it sits in, from the BTF of the kernel
# under test
[[ -n ${BENCH_ADD:-} ]] ||
	pahole -C cgroup,cgroup_subsys_state,cgroup_stat_pub,blkcg_gq,blkcg "$vmlinux" >"$out/pahole.txt" 2>&1 ||
	echo "bench: pahole failed on $vmlinux: the report has no struct sizes" >&2
[[ -e libcgstream/build/libcgstream.so.1 ]] || echo "bench: libcgstream not built: scenario 5a/5c will be missing" >&2
"$py" -c 'import matplotlib' 2>/dev/null || { echo "bench: matplotlib missing in $top/.venv: run make deps" >&2; exit 1; }

# what runs where: every size runs the telemetry matrix (s2: its points
# depend on the size) and the reader cost (s1, scenario 3); 2 and 8 vCPUs
# the flusher's cost (s7); the 2-vCPU boot adds the agent scenario (s10:
# cpu, memory and io of every cgroup; s10prof: a perf profile of its
# subtree reader), the agent with pressure (s16: its target's point, 1 x
# 1,000 at 1 %) and the memory experiment (s11), systemd-cgtop against
# cgstream top (s12), a perf profile of the cpu-only readers (s9), the
# daemons and the exporter (s8), latency (s5) and the workload (s6);
# 8 the agent scenario's two targets' points at 1,000 cgroups (s10: 1 and
# 16 agents at 1 % changing; the driver's AGENT_POINTS_BIG) and the
# parallel readers (s4).  The driver runs them in its own order, the
# telemetry matrix (cpu only; the agent scenario took its place) with
# what the others leave of a boot's budget (and at 2 vCPUs before s6)
scen_for() {
	case $1 in
	2) echo "s11,s16,s10,s15,s13,s14,s10prof,s12,s7,s9,s8,s1,s5,s2,s6" ;;
	8) echo "s10,s7,s1,s4,s2" ;;
	*) echo "s2,s1" ;;
	esac
}
s1_for() {	# scenario 1/3 time budget, both ways together, seconds
	case $1 in
	2) echo 24 ;;
	8) echo 16 ;;
	*) echo 16 ;;
	esac
}
# Time per size, from the runs of 2026-11-23 (TCG, 2 host cores): at 2
# vCPUs everything took 23 minutes (the telemetry matrix 17 of them); at 8
# each telemetry point takes 1.5-4 minutes, 15 of them about 40, s7, s1
# and s4 5 more; a 32-vCPU guest boots in 2 minutes on an idle host, 10
# on a busy one, before its points: about 75 minutes for the three boots.
budget_for() {	# the driver's own time cap in the guest, seconds
	case $1 in
	2) echo 3300 ;;	# s11, s16 (about 4 minutes), s10 (at most 25 minutes), s15, s13, s14, s10prof, s12, s7, s9, s8, s1, s5, what is left to s2's points, s6
	8) echo 2400 ;;	# s10's 2 points (at most 15 minutes), s7, s1, s4, what is left to s2's points
	*) echo 600 ;;	# s2's 1 x 1,000 (7 minutes), s1
	esac
}
need_for() {	# least wall time worth booting a size for (boot + a little)
	if [[ $quick == 1 ]]; then echo 120; return; fi
	case $1 in
	2) echo 300 ;;
	8) echo 900 ;;	# s10's two points, s7, s1 and s4
	*) echo 1000 ;;	# the boot alone takes 600
	esac
}
limit=$(( ${BENCH_LIMIT_MIN:-90} * 60 ))
t_start=$(date +%s)
t_end=$((t_start + limit - 60))	# a minute for the report

[[ -n ${BENCH_ADD:-} ]] || {
	echo "{\"started\": \"$(date -u +%FT%TZ)\", \"quick\": $quick, \"kvm\": \"$CGSTREAM_KVM\","
	echo " \"host_kernel\": \"$(uname -r)\", \"host_cpus\": $(nproc),"
	echo " \"host_cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')\","
	echo " \"host_mem_kb\": $(awk '/MemTotal/ {print $2}' /proc/meminfo),"
	echo " \"limit_min\": $((limit / 60)),"
	echo " \"git\": \"$(git describe --always --dirty --abbrev=7 2>/dev/null)\", \"command\": \"$command\","
	echo " \"bzimage_sha256\": \"$(sha256sum "$out/bzImage" | cut -c1-16)\"}"
} >"$out/run.json"

# the host's load during the run: TCG vCPUs are host threads, so other
# work on the host shows up as guest CPU time (there is no steal time)
( while sleep 10; do echo "$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)"; done ) >>"$out/hostload.txt" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT

# boot N DRIVER_DEADLINE TIMEOUT BUDGET PARALLEL: one VM boot running the
# driver; its log goes to vm-N/vm-run.log (and, run alone, to the terminal)
boot() {
	local n=$1 d=$out/vm-$1 t0 t1 rc tag=
	local args=(--scenarios "$(scen_for "$n")" --s1-seconds "$(s1_for "$n")")
	# shellcheck disable=SC2206 # the driver's arguments, split as given
	[[ -n ${BENCH_ARGS:-} ]] && args=(--s1-seconds "$(s1_for "$n")" $BENCH_ARGS)
	if [[ -n ${BENCH_ADD:-} ]]; then
		# vm-Na, vm-Nb, ...: the first boot's results stay as they are
		for x in a b c d e f g h; do [[ -e $d$x ]] || break; done
		d=$d$x
		# shellcheck disable=SC2206 # the driver's arguments, split as given
		args=(--s1-seconds "$(s1_for "$n")" $BENCH_ADD_ARGS)
		tag=", \"added\": true, \"git\": \"$(git describe --always --dirty --abbrev=7 2>/dev/null)\""
	fi
	mkdir -p "$d"
	args=(--out "$d" "${args[@]}" --budget "$4" --deadline "$2")
	[[ $quick == 1 ]] && args+=(--quick)
	local cmd=()
	[[ -n ${BENCH_VM_LOCK:-} ]] && cmd=(flock "$BENCH_VM_LOCK")
	# vm-run.sh's own limit (2400 s by default) just inside this boot's: it
	# cut the 2-vCPU boot of 2026-12-02 ten minutes before its deadline
	cmd+=(env CGSTREAM_VM_TIMEOUT=$(($3 - 15)) scripts/vm/vm-run.sh --kernel "$out/bzImage" --out "$d" --cpus "$n" --memory 2G -- python3 "$top/bench/driver.py" "${args[@]}")
	t0=$(date +%s)
	echo ">> $(date -u +%T) ${cmd[*]}"
	if (($5)); then
		timeout "$3" "${cmd[@]}" >"$d/vm-run.log" 2>&1
		rc=$?
		tag+=', "parallel": true'
	else
		timeout "$3" "${cmd[@]}" 2>&1 | tee "$d/vm-run.log"
		rc=${PIPESTATUS[0]}
	fi
	t1=$(date +%s)
	printf '{"cpus": %d, "rc": %d, "seconds": %d, "start": %d, "end": %d%s, "command": "%s"}\n' \
		"$n" "$rc" $((t1 - t0)) "$t0" "$t1" "$tag" "${cmd[*]}" >>"$out/boots.jsonl"
	return $rc
}

fail=0
if [[ ${BENCH_PARALLEL:-0} == 1 ]]; then
	pids=()
	for n in $sizes; do
		budget=$(( t_end - 90 - $(date +%s) ))
		{
			boot "$n" $((t_end - 90)) $((t_end - $(date +%s))) "$budget" 1
			rc=$?
			echo ">> $(date -u +%T) the $n-vCPU boot ended (rc $rc)"
			exit $rc
		} &
		pids+=($!)
		sleep 5
	done
	for p in "${pids[@]}"; do wait "$p" || fail=1; done
	sizes=""
fi
rest=($sizes)
for n in $sizes; do
	rest=("${rest[@]:1}")
	reserve=0
	for m in "${rest[@]}"; do reserve=$((reserve + $(need_for "$m"))); done
	boot_end=$((t_end - reserve))
	now=$(date +%s)
	if ((boot_end - now < $(need_for "$n"))); then
		mkdir -p "$out/vm-$n"
		echo "bench: no time left for the $n-vCPU boot: skipped" >&2
		printf '{"cpus": %d, "rc": -1, "seconds": 0, "command": "skipped: time limit"}\n' "$n" >>"$out/boots.jsonl"
		fail=1
		continue
	fi
	boot "$n" $((boot_end - 45)) $((boot_end - now + 30)) "$(budget_for "$n")" 0 ||
		{ echo "bench: the $n-vCPU run failed (rc $?); the report says so" >&2; fail=1; }
done

echo ">> $(date -u +%T) report"
"$py" bench/report.py "$out" "$docs" || exit 1
echo ">> bench: done; raw results in $out; report $docs/benchmarks.md"
exit $fail
