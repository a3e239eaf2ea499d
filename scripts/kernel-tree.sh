#!/bin/bash
# Prepare the kernel build tree: a git repository whose base commit (tag
# `pristine`) is Debian's linux-source-$SERIES as shipped, with
#   branch cgstream     pristine + kernel/patches/*.patch (the series)
#   branch independent  pristine + kernel/independent/*.patch (the KCSAN
#                       annotations that go upstream on their own)
# and, with --kcsan, a second work tree TREE-kcsan on branch cgstream-kcsan:
# the series with the independent patches on top, for the KCSAN kernel.
#
# usage: kernel-tree.sh [--kcsan] SERIES CACHE TREE REPO
#   SERIES  kernel series, e.g. 7.2
#   CACHE   cache folder outside the clone (source tarball, base repository)
#   TREE    the build tree to create or update
#   REPO    the cgstream checkout (holds kernel/patches, kernel/independent)
#
# The patches are `git format-patch` output and the only source of the
# kernel side: each is applied as `git am` would (author and date from the
# patch), committed with a fixed committer and the author's date, so the
# same patches on the same base always give the same commit ids and the
# kernel's local-version marker (-g<id>) names exactly what was built.
# Only files whose content changed are rewritten in the work tree, so the
# kernel rebuilds incrementally after an edit of one patch.
set -euo pipefail

kcsan=0
[[ ${1:-} == --kcsan ]] && { kcsan=1; shift; }
series=${1:?}; cache=${2:?}; tree=$(realpath -m "${3:?}"); repo=$(realpath "${4:?}")
here=$(cd "$(dirname "$0")" && pwd)

export GIT_COMMITTER_NAME=cgstream GIT_COMMITTER_EMAIL=cgstream@localhost

base_git=$cache/linux-$series-base.git
if [[ ! -d $base_git ]]; then
	tarball=$("$here/fetch-kernel-source.sh" "$series" "$cache")
	work=$(mktemp -d "$cache/base.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	echo ">> unpacking $(basename "$tarball") into a pristine base repository (once)"
	tar -xJf "$tarball" -C "$work"
	src=$work/linux-source-$series
	git -C "$src" init -q -b pristine
	git -C "$src" -c core.autocrlf=false add -A -f .
	GIT_AUTHOR_NAME=cgstream GIT_AUTHOR_EMAIL=cgstream@localhost \
	GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" \
		git -C "$src" commit -q -m "Linux $(make -s -C "$src" kernelversion) (Debian linux-source-$series, pristine)"
	git clone -q --bare "$src" "$base_git.tmp"
	mv "$base_git.tmp" "$base_git"
	rm -rf "$work"
	trap - EXIT
fi
base=$(git -C "$base_git" rev-parse pristine)

if [[ ! -d $tree/.git ]]; then
	echo ">> checking out the pristine tree into $tree"
	rm -rf "$tree"
	git clone -q --shared --no-checkout "$base_git" "$tree"
	git -C "$tree" tag -f pristine "$base" >/dev/null
	git -C "$tree" checkout -q -b cgstream "$base"
	git -C "$tree" branch -q -D pristine 2>/dev/null || true
fi
export GIT_DIR=$tree/.git

# apply_patches HEAD PATCH...: commit each patch on HEAD as `git am` would,
# on a private index (the work tree is not touched); prints the last commit
apply_patches() {
	local head=$1 p info index subject
	shift
	index=$(mktemp)
	info=$(mktemp -d)
	for p in "$@"; do
		GIT_INDEX_FILE=$index git read-tree "$head"
		git mailinfo -b "$info/msg" "$info/diff" <"$p" >"$info/meta"
		if ! GIT_INDEX_FILE=$index git apply --cached "$info/diff"; then
			echo "error: ${p#"$repo"/} does not apply to Linux $series + the patches before it" >&2
			rm -rf "$index" "$info"
			return 1
		fi
		subject=$(sed -n 's/^Subject: //p' "$info/meta")
		head=$(printf '%s\n\n%s\n' "$subject" "$(cat "$info/msg")" |
			GIT_AUTHOR_NAME=$(sed -n 's/^Author: //p' "$info/meta") \
			GIT_AUTHOR_EMAIL=$(sed -n 's/^Email: //p' "$info/meta") \
			GIT_AUTHOR_DATE=$(sed -n 's/^Date: //p' "$info/meta") \
			GIT_COMMITTER_DATE=$(sed -n 's/^Date: //p' "$info/meta") \
			git commit-tree "$(GIT_INDEX_FILE=$index git write-tree)" -p "$head")
	done
	rm -rf "$index" "$info"
	echo "$head"
}

# set_branch BRANCH COMMIT [WORKTREE]: point BRANCH at COMMIT; move the work
# tree that has it checked out, refusing to drop uncommitted edits
set_branch() {
	local branch=$1 commit=$2 wt=${3:-}
	if [[ -z $wt ]]; then
		git update-ref "refs/heads/$branch" "$commit"
		return
	fi
	[[ $(git -C "$wt" rev-parse -q --verify HEAD || true) == "$commit" ]] && return
	if [[ -n $(git -C "$wt" status --porcelain --untracked-files=no) ]]; then
		echo "error: $wt has uncommitted edits; commit them there and run" >&2
		echo "       'make kernel-sync' to bring them back to kernel/, or discard them" >&2
		exit 1
	fi
	git -C "$wt" checkout -q -B "$branch" "$commit"
}

shopt -s nullglob
patches=("$repo"/kernel/patches/*.patch)
independent=("$repo"/kernel/independent/0*.patch)
shopt -u nullglob
((${#patches[@]})) || { echo "error: no patches in kernel/patches" >&2; exit 1; }

head=$(apply_patches "$base" "${patches[@]}")
ind=$base
((${#independent[@]})) && ind=$(apply_patches "$base" "${independent[@]}")
set_branch independent "$ind"
unset GIT_DIR
set_branch cgstream "$head" "$tree"
echo ">> kernel tree at $(git -C "$tree" log --oneline -1 | cut -c1-72)"

if ((kcsan)); then
	export GIT_DIR=$tree/.git
	kc=$head
	((${#independent[@]})) && kc=$(apply_patches "$head" "${independent[@]}")
	unset GIT_DIR
	if [[ ! -d $tree-kcsan/.git && ! -f $tree-kcsan/.git ]]; then
		echo ">> checking out the KCSAN tree (the series + kernel/independent) into $tree-kcsan"
		git -C "$tree" worktree add -q -f --detach "$tree-kcsan" "$kc"
	fi
	set_branch cgstream-kcsan "$kc" "$tree-kcsan"
	echo ">> KCSAN tree at $(git -C "$tree-kcsan" log --oneline -1 | cut -c1-72)"
fi
