#!/bin/bash
# Install what cgstream builds and tests need: Debian bookworm packages
# (only the missing ones; apt is not touched when all are there) and a
# project virtualenv from PyPI.  Idempotent; a second run takes seconds.
#
# usage: deps.sh VENV
set -euo pipefail
venv=${1:-.venv}
here=$(cd "$(dirname "$0")" && pwd)

packages=(
	# kernel build
	build-essential flex bison bc libelf-dev libssl-dev cpio xz-utils kmod
	ccache rsync
	# checkpatch.pl's spdxcheck.py
	python3-ply python3-git
	# VM: qemu, and udev for virtme-ng-init's virtio-serial ports
	qemu-system-x86 udev busybox-static
	# userspace; python3-pip builds pycgstream offline for `make install`
	pkg-config liburing-dev valgrind python3-venv python3-pip
	# host fuzzers (tests/fuzz): clang and its libFuzzer/sanitizer runtimes
	clang libclang-rt-14-dev
	# systemd integration tests (systemd-analyze, systemd as guest init)
	systemd systemd-container dbus
	# benchmarks: cgcreate/cgexec; pahole for the bench kernel's BTF, libcap
	# for the kernel tree's bpftool
	cgroup-tools dwarves libcap-dev
	# the exporter: its client library for the system python3 (the service),
	# a real Prometheus server and promtool for its tests; tmux for `cgstream top`'s test
	prometheus python3-prometheus-client tmux
)

missing=()
for p in "${packages[@]}"; do
	[[ $p == \#* ]] && continue
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	echo ">> installing from Debian: ${missing[*]}"
	SUDO=; ((EUID == 0)) || SUDO=sudo
	$SUDO apt-get update -q
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

req=$here/requirements.txt
stamp=$venv/.requirements.sha
if [[ ! -x $venv/bin/python || ! -f $stamp || $(sha256sum <"$req") != "$(cat "$stamp")" ]]; then
	echo ">> setting up $venv from PyPI"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q --upgrade pip
	"$venv/bin/pip" install -q -r "$req"
	sha256sum <"$req" >"$stamp"
fi

# pycgstream itself, editable: `.venv/bin/python -m pycgstream` and the
# tests run the checkout's code as it is.  What an editable install takes
# from the package is pyproject.toml (metadata, the command): reinstalled
# when that changes, or when the venv cannot import it.
pkg=$here/../pycgstream
pstamp=$venv/.pycgstream.sha
if [[ ! -f $pstamp || $(sha256sum <"$pkg/pyproject.toml") != "$(cat "$pstamp")" ]] ||
	! "$venv/bin/python" -I -c 'import pycgstream' 2>/dev/null; then
	echo ">> installing pycgstream into $venv (editable)"
	"$venv/bin/pip" install -q --no-deps -e "$pkg"
	sha256sum <"$pkg/pyproject.toml" >"$pstamp"
fi
echo ">> dependencies ready"
