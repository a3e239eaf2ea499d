# Sourced by the scripts that run the stress programs inside the VM.
# stress_programs TOP: prints the directory holding up-to-date cgstress,
# scale and interval-fuzz: tests/stress/build when the host built it from
# the current sources (make -s -C tests/stress), else a build made now in
# the guest's /tmp (the checkout is read-only in the guest; a stale or
# missing host build is never run).
stress_programs() {
	local src b=/tmp/cgstress-build
	src=$(cd "$1/tests/stress" && pwd) || return 1
	if make -q -C "$src" build/cgstress build/scale build/interval-fuzz >/dev/null 2>&1; then
		echo "$src/build"
		return 0
	fi
	echo "tests/stress: the host build is missing or stale: building in $b" >&2
	make -s -C "$src" B="$b" >&2 || return 1
	echo "$b"
}
