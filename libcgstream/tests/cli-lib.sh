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
