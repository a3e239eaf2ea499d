#!/bin/bash
# The systemd units in a real boot, systemd as PID 1 (run from the HOST):
#
#  1. the patched kernel: the units, configuration and cgstream installed
#     as `make install DESTDIR=` stages them, enabled with `systemctl
#     --root= enable`; after boot the interval has the configured value,
#     cgstream.service runs (as a dynamic user, no capabilities) and its
#     JSON samples are in the journal; an admin override applies, a bad
#     value fails the interval unit and keeps the old value, a watch.conf
#     override (--every 4) applies, SIGTERM stops the daemon with exit 0;
#     cgstream-exporter.service serves every cgroup to Prometheus.
#     The guest's dmesg must show no WARNING/BUG.
#  2. Debian's stock kernel (no cgstream): the units skipped by their
#     conditions, none failed.
#
# How: `vng --systemd` boots the host root read-only with systemd as init;
# qemu-wrap (passed as vng's --qemu) puts guest-init in front of systemd
# to give it a writable overlay root with the staged install, and
# guest-check runs the checks after boot (vng --exec, from the serial
# getty).  Under TCG a boot takes 0.5-5 minutes, depending on the host.
#
# usage: run.sh [--kernel BZIMAGE] [--stock-kernel VMLINUZ|none] [--out DIR]
#               [--only patched|stock]
# env:   VNG, CGSTREAM_KVM=auto|yes|no (as scripts/vm/vm-run.sh),
#        CGSTREAM_VM_DEBUG=1 (console log), CGSTREAM_VM_TIMEOUT (s per boot, 1800),
#        CGSTREAM_CACHE (stock kernel cache; default ~/.cache/cgstream)
# exit:  0 both boots passed, 1 a check failed, 77 a boot could not run
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kernel=$top/build/obj/arch/x86/boot/bzImage stock= out= only=
while (($#)); do
	case $1 in
	--kernel) kernel=$2; shift ;;
	--stock-kernel) stock=$2; shift ;;
	--out) out=$2; shift ;;
	--only) only=$2; shift ;;
	*) echo "usage: run.sh [--kernel BZIMAGE] [--stock-kernel VMLINUZ|none] [--out DIR] [--only patched|stock]" >&2; exit 2 ;;
	esac
	shift
done
# what the test's /etc/cgstream/interval.conf sets: not the default (1000),
# and a memory override.  Not shorter: the daemon writes every cgroup's
# cpu, memory and io to the journal once per flush, and at 250 ms that
# took the boot's userspace from 37 s to 3 min 17 s under TCG
interval=2000
memory_interval=3000
cache=${CGSTREAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cgstream}
vng=${VNG:-$top/.venv/bin/vng}
# vng runs virtme-run from PATH
export PATH=$(dirname "$vng"):$PATH

skip() { echo "SKIP: $*"; exit 77; }
[[ -x $vng ]] || skip "$vng missing; run 'make deps'"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
[[ $only == stock || -f $kernel ]] || skip "$kernel missing; run 'make kernel'"

mkdir -p "$top/build"
out=${out:-$top/build/vm-systemd}
rm -rf "$out" && mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)

# --- the install, staged as a distribution package would lay it out ------
# (PREFIX=/usr: /usr/lib is on ld.so's default path, so no ldconfig run)
stage=$out/stage
{
	make -s -C "$top/libcgstream" &&
	make -s -C "$top/libcgstream" install DESTDIR="$stage" PREFIX=/usr &&
	make -s -C "$top/systemd" install DESTDIR="$stage" PREFIX=/usr &&
	make -s -C "$top/pycgstream" install DESTDIR="$stage" PREFIX=/usr &&
	systemctl --root="$stage" --quiet enable cgstream-interval.service cgstream.service \
		cgstream-exporter.service
} >"$out/install.log" 2>&1 || { cat "$out/install.log"; echo "FAIL: staging the install"; exit 1; }
# the admin's configuration: a value that is not the shipped default
printf 'CGSTREAM_INTERVAL_MS=%s\nCGSTREAM_MEMORY_INTERVAL_MS=%s\n' "$interval" "$memory_interval" \
	>"$stage/etc/cgstream/interval.conf"

accel=(--disable-kvm)
case ${CGSTREAM_KVM:-auto} in
yes) accel=() ;;
auto)
	if [[ -w /dev/kvm ]] && timeout 25 "$vng" --run "$kernel" --memory 512M --cpus 1 \
		--exec "echo kvm-ok" </dev/null 2>&1 | grep -q kvm-ok; then
		accel=()
	fi
	;;
esac

# CGSTREAM_VM_DEBUG=1: the kernel's and the journal's messages on the
# serial console, saved as $out/KIND.console
debug=()
[[ ${CGSTREAM_VM_DEBUG:-} == 1 ]] &&
	debug=(--append loglevel=6 --append systemd.journald.forward_to_console=1)

# boot KIND KERNEL ARGS...: one systemd boot running guest-check KIND
boot() {
	local kind=$1 k=$2; shift 2
	echo ">> vm-systemd: $kind boot of $(basename "$k") (${accel[*]:-KVM}), systemd as PID 1"
	local start=$SECONDS
	CGSTREAM_GUEST_INIT=$here/guest-init CGSTREAM_VM_CONSOLE=$out/$kind.console \
		timeout ${CGSTREAM_VM_TIMEOUT:-1800} "$vng" --systemd --qemu "$here/qemu-wrap" "${accel[@]}" \
		--run "$k" --memory 2G --cpus 2 --append "cgstream_stage=$stage" "${debug[@]}" \
		--rwdir "$out" --cwd "$out" --exec "$here/guest-check $kind $out $*" \
		</dev/null 2>&1 | cat >"$out/$kind.vng.log"
	# (a pipe: QEMU opens /proc/self/fd/1 and 2 with O_TRUNC)
	local rc=${PIPESTATUS[0]}
	echo "   vng exit $rc after $((SECONDS - start)) s"
	[[ -f $out/$kind.log ]] && sed 's/^/   /' "$out/$kind.log"
	if [[ ! -f $out/$kind.rc ]]; then
		echo "FAIL: the $kind guest did not finish its checks (console: $out/$kind.console)"
		tail -20 "$out/$kind.vng.log" | sed 's/^/   /'
		return 1
	fi
	"$top/scripts/vm/dmesg-check.sh" "$out/$kind.dmesg" 2>&1 | sed 's/^/   /'
	((PIPESTATUS[0] == 0)) || { echo "FAIL: the $kind guest's kernel reported a problem"; return 1; }
	[[ $(cat "$out/$kind.rc") == 0 ]] || { echo "FAIL: $kind: $(cat "$out/$kind.rc") check(s) failed"; return 1; }
	echo "PASS: $kind boot"
}

result=0
if [[ $only != stock ]]; then
	boot patched "$kernel" "$interval" "$memory_interval" || result=1
fi

if [[ $only == patched ]]; then
	:
elif [[ $stock == none ]]; then
	echo "SKIP: stock kernel boot (--stock-kernel none)"
	((result == 0)) && result=77
else
	if [[ -z $stock ]]; then
		stock=$("$here/stock-kernel.sh" "$cache/stock-kernel" 2>"$out/stock-kernel.log") || stock=
	fi
	if [[ -z $stock || ! -f $stock ]]; then
		cat "$out/stock-kernel.log" 2>/dev/null
		echo "SKIP: no stock kernel to boot"
		((result == 0)) && result=77
	else
		boot stock "$stock" || result=1
	fi
fi
exit $result
