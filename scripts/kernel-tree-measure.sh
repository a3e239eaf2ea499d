#!/bin/bash
# A work tree of the build tree's series (branch cgstream) with a
# measurement-only patch applied on top, uncommitted, for a measurement
# kernel (bench/irqoff).  Re-running resets it to the series first.
#
# usage: kernel-tree-measure.sh TREE WORKTREE PATCH
set -euo pipefail
tree=$(realpath "${1:?}"); wt=$(realpath -m "${2:?}"); patch=$(realpath "${3:?}")
if [[ ! -e $wt/.git ]]; then
	git -C "$tree" worktree add -q -f --detach "$wt" cgstream
fi
git -C "$wt" checkout -q --detach cgstream
git -C "$wt" checkout -q -- .
git -C "$wt" apply "$patch"
echo ">> $wt: the series ($(git -C "$wt" log --oneline -1 | cut -c1-60)) + $(basename "$patch")"
