#!/bin/bash
# The reverse of kernel-tree.sh: after editing and committing in the build
# tree (git commit --fixup + git rebase -i --autosquash pristine there),
# write the series back to this repository as `git format-patch` output:
#   kernel/patches/*.patch       pristine..cgstream
#   kernel/independent/*.patch   pristine..independent
# and refresh the generated copy of the uapi header that userspace builds
# against (include/uapi/linux/cgroup_stat_stream.h; tests/host/05-uapi-copy
# checks that it matches the tree).
#
# usage: kernel-sync.sh TREE REPO
set -euo pipefail
tree=$(realpath "${1:?}"); repo=$(realpath "${2:?}")

if [[ -n $(git -C "$tree" status --porcelain --untracked-files=no) ]]; then
	echo "error: $tree has uncommitted edits: commit them to the right patch first" >&2
	exit 1
fi
if [[ $(git -C "$tree" symbolic-ref -q --short HEAD) != cgstream ]]; then
	echo "error: $tree is not on branch cgstream (a rebase in progress?)" >&2
	exit 1
fi

# format-patch: no numbering in the subjects ([PATCH], as a reviewer's own
# `git format-patch` of one commit gives) and a zero commit id in the From
# line, so that a rebase that changes nothing else changes no patch file
export_series() {
	local range=$1 dir=$2 n
	mkdir -p "$dir"
	rm -f "$dir"/0*.patch
	git -C "$tree" format-patch -q -N --zero-commit --no-signature \
		-o "$dir" "$range"
	n=$(git -C "$tree" rev-list --count "$range")
	echo ">> ${dir#"$repo"/}: $n patches"
}
export_series pristine..cgstream "$repo/kernel/patches"
export_series pristine..independent "$repo/kernel/independent"

uapi=include/uapi/linux/cgroup_stat_stream.h
git -C "$tree" show "cgstream:$uapi" >"$repo/$uapi"
echo ">> $uapi refreshed from the series"
