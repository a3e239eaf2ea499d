#!/bin/bash
# Boot a kernel in a virtme-ng VM (host root shared read-only, this checkout
# visible at the same path), run one command as root, and fail when the
# command fails or when the guest's kernel log shows a WARNING, BUG,
# lockdep report or hung task.
#
# usage: vm-run.sh [--shell] [--cpus N] [--memory M] [--kernel BZIMAGE]
#                  [--out DIR] [--] CMD...
# env:   VNG (path to vng), CGSTREAM_KVM=auto|yes|no (default auto),
#        CGSTREAM_VM_TIMEOUT (seconds for the whole boot, default 2400)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cpus=2 memory=2G shell=0 out= kernel=$top/build/obj/arch/x86/boot/bzImage extra=()
while (($#)); do
	case $1 in
	--shell) shell=1 ;;
	--cpus) cpus=$2; shift ;;
	--memory) memory=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--out) out=$2; shift ;;
	--append) extra+=(--append "$2"); shift ;;
	--) shift; break ;;
	*) break ;;
	esac
	shift
done
vng=${VNG:-$top/.venv/bin/vng}
# vng runs its sibling virtme-run through PATH
export PATH=$(dirname "$vng"):$PATH

[[ -x $vng ]] || { echo "vm-run: $vng missing; run 'make deps'" >&2; exit 2; }
[[ -f $kernel ]] || { echo "vm-run: $kernel missing; run 'make kernel'" >&2; exit 2; }

# KVM: /dev/kvm exists on these machines but guests hang in early boot, so
# use it only when a short probe boot proves it works.
accel=(--disable-kvm)
case ${CGSTREAM_KVM:-auto} in
yes) accel=() ;;
auto)
	if [[ -w /dev/kvm ]]; then
		probe=$(mktemp -d)
		if timeout 25 "$vng" --run "$kernel" --memory 512M --cpus 1 \
			--exec "echo kvm-ok" </dev/null >"$probe/log" 2>&1 &&
			grep -q kvm-ok "$probe/log"; then
			accel=()
		fi
		rm -rf "$probe"
	fi
	;;
esac

if ((shell)); then
	exec "$vng" "${accel[@]}" --run "$kernel" --memory "$memory" --cpus "$cpus" "${extra[@]}" --rwdir "$top/build"
fi

(($#)) || { echo "usage: vm-run.sh [options] -- CMD..." >&2; exit 2; }
mkdir -p "$top/build"
out=${out:-$(mktemp -d "$top/build/vm-run.XXXXXX")}
mkdir -p "$out"
rm -f "$out/rc" "$out/dmesg"

# one argument is a shell command line; several are one quoted command
if (($# == 1)); then printf '%s\n' "$1"; else printf '%q ' "$@"; fi >"$out/cmd"
echo ">> vm: $(basename "$(dirname "$(dirname "$(dirname "$(dirname "$kernel")")")")")/$(basename "$kernel"), $cpus vCPUs, ${accel[*]:-KVM}: $*"
# a guest that hangs (a kernel deadlock, say) must not hang the caller
timeout -k 30 "${CGSTREAM_VM_TIMEOUT:-2400}" \
	"$vng" "${accel[@]}" --run "$kernel" --memory "$memory" --cpus "$cpus" "${extra[@]}" \
	--rwdir "$out" --cwd "$PWD" \
	--exec "$here/guest.sh $out" </dev/null 2>&1 | cat
# (through a pipe: QEMU opens /proc/self/fd/1 and 2 as files, with
# O_TRUNC, so a caller's log file would be emptied at every boot)
vng_rc=${PIPESTATUS[0]}

if [[ ! -f $out/rc ]]; then
	why="vng exit $vng_rc"
	((vng_rc == 124)) && why="timed out after ${CGSTREAM_VM_TIMEOUT:-2400} s"
	echo "vm-run: the guest did not finish the command ($why)" >&2
	exit 1
fi
rc=$(cat "$out/rc")

"$here/dmesg-check.sh" "$out/dmesg" || exit 1
if [[ $rc != 0 ]]; then
	echo "vm-run: command exited $rc" >&2
	exit "$rc"
fi
exit 0
