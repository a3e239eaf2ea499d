#!/bin/bash
# Export the kernel changes as a mailing-list-ready series (cover letter
# included) and run checkpatch --strict on every patch.
#
# usage: kernel-series.sh TREE OUTDIR
set -euo pipefail
tree=$(realpath "${1:?}"); out=$(realpath -m "${2:?}")
top=$(cd "$(dirname "$0")/.." && pwd)

rm -rf "$out"; mkdir -p "$out"
fail=0

# export_series RANGE DIR COVER PREFIX [IGNORE]: `git format-patch --cover-letter`
# of RANGE into DIR with the cover letter's text from COVER (subject on the
# first line, body after a blank line), checkpatch --strict on each patch,
# and `git am` of the result on the pristine tree, which must give RANGE's
# tree exactly; IGNORE: more checkpatch types to ignore (",TYPE...")
export_series() {
	local range=$1 dir=$2 cover=$3 prefix=$4 extra_ignore=${5:-} p check
	mkdir -p "$dir"
	git -C "$tree" format-patch -q --cover-letter --thread=shallow \
		--subject-prefix="$prefix" -o "$dir" "$range"
	if [[ -f $cover ]]; then
		python3 - "$dir/0000-cover-letter.patch" "$cover" <<'PY'
import sys
cover, text = sys.argv[1], open(sys.argv[2]).read().split("\n", 2)
subject, body = text[0], text[2] if len(text) > 2 else ""
c = open(cover).read()
c = c.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", body.rstrip("\n"))
open(cover, "w").write(c)
PY
	else
		echo ">> no cover letter text at ${cover#"$top"/}"; fail=1
	fi
	echo ">> $range in $dir:"
	ls "$dir" | sed 's/^/   /'
	for p in "$dir"/0*.patch; do
		[[ $p == *0000-cover-letter.patch ]] && continue
		# FILE_PATH_CHANGES only asks whether MAINTAINERS covers new files:
		# answered below with get_maintainer.pl instead of on every patch.
		# UNKNOWN_COMMIT_ID: the tree is Debian's linux-source tarball with
		# no upstream history, so a commit id cannot be looked up in it.
		# MISSING_FIXES_TAG: checkpatch asks for Fixes: when a message
		# quotes a "BUG: KCSAN:" report; the independent annotations quote
		# the reports they silence and fix no bug (data_race() on reads
		# that may be stale), so none is owed there (not in the series).
		# spdxcheck.py needs python3-ply and python3-git: Debian's python3
		if ! (cd "$tree" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --no-signoff -q \
			--ignore "FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID$extra_ignore" "$p") >"$p.checkpatch" 2>&1; then
			fail=1
		fi
		if [[ -s $p.checkpatch ]]; then
			echo ">> checkpatch $(basename "$p"):"; sed 's/^/   /' "$p.checkpatch"
		else
			echo ">> checkpatch $(basename "$p"): clean"
		fi
		rm -f "$p.checkpatch"
	done
	check=$(mktemp -d)
	git -C "$tree" worktree add -q --detach "$check/am" pristine
	mapfile -t ps < <(ls "$dir"/0*.patch | grep -v 0000-cover-letter)
	if git -C "$check/am" -c user.name=cgstream -c user.email=cgstream@localhost \
		am -q "${ps[@]}"; then
		if [[ $(git -C "$check/am" rev-parse HEAD^{tree}) == $(git -C "$tree" rev-parse "${range#*..}^{tree}") ]]; then
			echo ">> git am: $range applies to pristine $(git -C "$tree" log -1 --format=%s pristine | cut -d' ' -f2) and gives the build tree"
		else
			echo ">> git am: $range applied, but the result differs from the build tree"; fail=1
		fi
	else
		echo ">> git am: $range does not apply to the pristine tree"; fail=1
	fi
	git -C "$tree" worktree remove --force "$check/am"; rm -rf "$check"
}

export_series pristine..cgstream "$out" "$top/kernel/cover-letter.txt" "RFC PATCH"
export_series pristine..independent "$out/independent" \
	"$top/kernel/independent/cover-letter.txt" "PATCH" ",MISSING_FIXES_TAG"

for f in $(git -C "$tree" diff --diff-filter=A --name-only pristine..cgstream); do
	if (cd "$tree" && scripts/get_maintainer.pl --no-git --no-rolestats -f "$f") | grep -q '@'; then
		echo ">> maintained: $f ($(cd "$tree" && scripts/get_maintainer.pl --no-git --no-rolestats --no-email --subsystem -f "$f" | head -n1))"
	else
		echo ">> no MAINTAINERS entry covers new file $f"; fail=1
	fi
done

# BUILD_EACH=1: build every commit of both series (bisectability): bzImage
# with the test kernel's configuration (scripts/kernel-build.sh, so the
# ccache entries of `make kernel` serve every file a commit leaves as the
# head has it), and the stat stream selftests at each commit that has them.
# It works in a worktree and object folder of its own, build/each/{linux,obj}
# (the same depth as build/linux and build/obj, so ccache's relative paths
# match theirs): the build tree, its object folder and any build running on
# them are never touched.  A failing commit's log stays in OUTDIR.
if [[ ${BUILD_EACH:-0} == 1 ]]; then
	each=${EACH_DIR:-$(dirname "$tree")/each}
	ccache_dir=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cgstream/ccache}
	mkdir -p "$each"
	if [[ ! -e $each/linux/.git ]]; then
		git -C "$tree" worktree prune
		git -C "$tree" worktree add -q --detach "$each/linux" pristine
	fi
	# the feature series, then the independent one (its own branch on pristine)
	for c in $(git -C "$tree" rev-list --reverse pristine..cgstream) \
		$(git -C "$tree" rev-list --reverse pristine..independent); do
		name=$(git -C "$tree" log -1 --format='%h %s' "$c")
		log=$out/build-$(git -C "$tree" rev-parse --short "$c").log
		git -C "$each/linux" checkout -q --detach "$c"
		start=$SECONDS
		if ! "$top/scripts/kernel-build.sh" "$each/linux" "$each/obj" \
			"$top/scripts/vm/kernel.config" "$ccache_dir" >"$log" 2>&1; then
			echo ">> BUILD FAILS at $name: $log"; fail=1; continue
		fi
		what=bzImage
		if compgen -G "$each/linux/tools/testing/selftests/cgroup/test_stat_stream*.c" >/dev/null; then
			if ! make -s -C "$top/tests/kselftest" KSRC="$each/linux" OUT="$each/kselftest" \
				>>"$log" 2>&1; then
				echo ">> SELFTESTS FAIL TO BUILD at $name: $log"; fail=1; continue
			fi
			what="bzImage, selftests"
		fi
		echo ">> builds ($what, $((SECONDS - start)) s): $name"
		rm -f "$log"
	done
fi
exit $fail
