# Sourced (not run) by the tests of the cgstream command and of
# `cgstream top` (host and VM, through top-checks.sh), with $tmp set to a
# scratch folder:
#
#   fail MESSAGE                FAIL: MESSAGE, exit 1
#   expect RC REGEX CMD...      CMD exits RC and, unless REGEX is empty, a
#                               line of its stderr matches the extended
#                               REGEX (its output: $tmp/out, $tmp/err)

fail() { echo "FAIL: $*"; exit 1; }

expect() {
	local want=$1 pattern=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[[ $rc == "$want" ]] || fail "'$*' exited $rc, want $want; stderr: $(cat "$tmp/err")"
	if [[ -n $pattern ]] && ! grep -Eq -- "$pattern" "$tmp/err"; then
		fail "'$*': stderr lacks /$pattern/: $(cat "$tmp/err")"
	fi
	echo "ok: $* -> $rc"
}

# Loads for the memory and io checks (VM tests, as root), each in a cgroup
# of its own; loads_stop (the caller's cleanup) ends them and the device:
#   loop_start DIR              a loop device over a file in a tmpfs of its
#                               own mounted on DIR (so the only block I/O is
#                               the device's): $loop_dev, $loop_majmin
#   hold_memory CGROUP MIB      a process that writes (so is charged) and
#                               holds MIB MiB
#   do_io CGROUP                reads and writes $loop_dev with O_DIRECT,
#                               4 MiB each way, 5 times a second
loads=() load_cgs=() loop_dev= loop_mnt=

# wait_for TENTHS CMD...: CMD every 0.1 s until it succeeds, at most
# TENTHS tries; CMD's status (never a fixed sleep: a slow guest only takes
# longer).  Its locals are prefixed: bash scopes dynamically, and a local n
# would hide the caller's n from CMD.
wait_for() {
	local _wf_i _wf_tries=$1
	shift
	for ((_wf_i = 1; _wf_i < _wf_tries; _wf_i++)); do "$@" && return 0; sleep 0.1; done
	"$@"
}

loop_start() {
	loop_mnt=$1
	mkdir -p "$loop_mnt" && mount -t tmpfs -o size=40M cgstest-loop "$loop_mnt" || return 1
	truncate -s 32M "$loop_mnt/disk" && loop_dev=$(losetup -f --show "$loop_mnt/disk") || return 1
	loop_majmin=$(lsblk -dno MAJ:MIN "$loop_dev" | tr -d ' ')
}

# in_cgroup CGROUP CMD...: CMD in CGROUP, in the background (pid in loads)
in_cgroup() {
	local cg=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@" &
	loads+=($!)
	load_cgs+=("$cg")
}

hold_memory() {
	in_cgroup "$1" "${python:-python3}" -c "import time; b = b'm' * ($2 << 20); time.sleep(3600)"
}

do_io() {
	in_cgroup "$1" sh -c 'while :; do
		dd if=/dev/zero of="$0" bs=1M count=4 oflag=direct 2>/dev/null
		dd if="$0" of=/dev/null bs=1M count=4 iflag=direct 2>/dev/null
		sleep 0.2; done' "$loop_dev"
}

loads_stop() {
	local p cg i
	# every process of the load's cgroup (dd below the loop too)
	for cg in "${load_cgs[@]}"; do echo 1 >"$cg/cgroup.kill" 2>/dev/null; done
	for p in "${loads[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for cg in "${load_cgs[@]}"; do
		for ((i = 0; i < 50; i++)); do
			grep -qs '^populated 1' "$cg/cgroup.events" || break
			sleep 0.1
		done
	done
	loads=() load_cgs=()
	[[ -n $loop_dev ]] && losetup -d "$loop_dev"
	[[ -n $loop_mnt ]] && mountpoint -q "$loop_mnt" && umount "$loop_mnt"
	loop_dev= loop_mnt=
}
