#!/bin/bash
# Prepare the kernel build tree: a git repository whose base commit is the
# pristine Debian linux-source-$SERIES and whose following commits are
# cgstream's kernel series (kernel/series), one commit per entry.
#
# usage: kernel-tree.sh SERIES CACHE TREE REPO
#   SERIES  kernel series, e.g. 7.2
#   CACHE   cache folder outside the clone (source tarball, base repository)
#   TREE    the build tree to create or update
#   REPO    the cgstream checkout (holds kernel/series and the files it names)
#
# Re-running only rewrites files whose content changed, so `make` in TREE
# rebuilds incrementally after an edit of one kernel file.
set -euo pipefail

series=${1:?}; cache=${2:?}; tree=$(realpath -m "${3:?}"); repo=$(realpath "${4:?}")
here=$(cd "$(dirname "$0")" && pwd)

# Commits are made with fixed identities and dates so that the same series
# on the same base always gives the same commit ids: the kernel's
# local-version marker (-g<id>) then names exactly what was built.
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-cgstream} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-cgstream@localhost}
export GIT_COMMITTER_NAME=cgstream GIT_COMMITTER_EMAIL=cgstream@localhost
export GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"

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
	GIT_AUTHOR_DATE=$GIT_COMMITTER_DATE git -C "$src" commit -q -m "Linux $(make -s -C "$src" kernelversion) (Debian linux-source-$series, pristine)"
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

# Build the series as commits on a private index, never touching the work
# tree, then move the work tree to the result in one checkout.
export GIT_DIR=$tree/.git
index=$(mktemp); trap 'rm -f "$index"' EXIT
head=$base
while read -r patch newfiles; do
	[[ -z $patch || $patch == \#* ]] && continue
	GIT_INDEX_FILE=$index git read-tree "$head"
	pfile=$repo/kernel/patches/$patch
	[[ -f $pfile ]] || { echo "error: kernel/series names $patch, which is missing" >&2; exit 1; }
	info=$(mktemp -d)
	git mailinfo "$info/msg" "$info/diff" <"$pfile" >"$info/meta"
	# a commit that only changes files kept here as a whole has no diff
	if grep -q "^diff --git " "$info/diff"; then
		if ! GIT_INDEX_FILE=$index git apply --cached "$info/diff"; then
			echo "error: $patch does not apply to Linux $series + the patches before it" >&2
			exit 1
		fi
	fi
	for spec in $newfiles; do
		dst=${spec%%=*}; src=${spec#*=}
		[[ $spec == *=* ]] || src=$dst
		[[ -f $repo/$src ]] || { echo "error: kernel/series: $src is missing" >&2; exit 1; }
		blob=$(git hash-object -w "$repo/$src")
		GIT_INDEX_FILE=$index git update-index --add --cacheinfo "100644,$blob,$dst"
	done
	subject=$(sed -n 's/^Subject: //p' "$info/meta")
	author=$(sed -n 's/^Author: //p' "$info/meta")
	email=$(sed -n 's/^Email: //p' "$info/meta")
	treeid=$(GIT_INDEX_FILE=$index git write-tree)
	head=$(printf '%s\n\n%s\n' "$subject" "$(cat "$info/msg")" |
		GIT_AUTHOR_NAME=${author:-$GIT_AUTHOR_NAME} GIT_AUTHOR_EMAIL=${email:-$GIT_AUTHOR_EMAIL} \
		GIT_AUTHOR_DATE=$GIT_COMMITTER_DATE git commit-tree "$treeid" -p "$head")
	rm -rf "$info"
done <"$repo/kernel/series"

old=$(git rev-parse -q --verify HEAD || true)
if [[ $old != "$head" ]]; then
	if [[ -n $(git -C "$tree" status --porcelain --untracked-files=no) ]]; then
		echo "error: $tree has uncommitted edits; commit them there and run" >&2
		echo "       'make kernel-sync' to bring them back to kernel/, or discard them" >&2
		exit 1
	fi
	git -C "$tree" checkout -q -B cgstream "$head"
fi
echo ">> kernel tree at $(git -C "$tree" log --oneline -1 | cut -c1-72)"
