# Sourced (not run) by the tests that run the cgstream command as another
# user, uid/gid 65534.  That user may not reach the build output at all: a
# checkout in a home of mode 0700 (root's /root on a fresh machine, or a
# user's home under sudo) is out of its reach, and the command would die in
# the dynamic loader ("error while loading shared libraries", exit 127)
# instead of doing what the test asks.  So the other user runs a copy: the
# command and libcgstream.so.1 in a fresh directory under /tmp (not
# $TMPDIR, which may be as private as the checkout) that every user may
# enter.  The command finds the library beside it through its rpath
# ($ORIGIN), exactly as in the build directory, so the copy is the program
# under test, moved.
#
#   nobody_dir=$(nobody_copy "$build") || fail "..."
#   as_nobody "$nobody_dir/cgstream" watch ...
#   rm -rf "$nobody_dir"		# in the caller's cleanup

# as_nobody CMD ARGS...: CMD as uid and gid 65534, no supplementary groups
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# nobody_copy BUILD: copies BUILD/cgstream and BUILD/libcgstream.so.1 into
# a new directory and prints its path; fails (with the reason on stderr)
# unless uid 65534 can run the copy.
nobody_copy() {
	local build=$1 dir err
	dir=$(mktemp -d /tmp/cgstream-nobody.XXXXXX) || return 1
	if ! cp "$build/cgstream" "$build/libcgstream.so.1" "$dir/" ||
		! chmod 0755 "$dir" "$dir/cgstream" "$dir/libcgstream.so.1"; then
		rm -rf "$dir"
		return 1
	fi
	if ! err=$(as_nobody "$dir/cgstream" --version 2>&1 >/dev/null); then
		echo "uid 65534 cannot run $dir/cgstream (a noexec /tmp?): $err" >&2
		rm -rf "$dir"
		return 1
	fi
	echo "$dir"
}
