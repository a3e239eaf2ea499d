#!/bin/bash
# The reverse of kernel-tree.sh: after editing and committing in the build
# tree (git commit --amend / rebase -i there), write the series back to this
# repository: one kernel/patches/NNNN-*.patch per commit (its message and its
# edits of existing files), its new files at their repo paths, and
# kernel/series.
#
# usage: kernel-sync.sh TREE REPO
set -euo pipefail
tree=$(realpath "${1:?}"); repo=$(realpath "${2:?}")
series=$repo/kernel/series

if [[ -n $(git -C "$tree" status --porcelain --untracked-files=no) ]]; then
	echo "error: $tree has uncommitted edits: commit them to the right patch first" >&2
	exit 1
fi

# tree path -> repo path for new files that do not live at their tree path
declare -A repo_path
while read -r _ newfiles; do
	for spec in $newfiles; do
		[[ $spec == *=* ]] && repo_path[${spec%%=*}]=${spec#*=}
	done
done < <(grep -v '^#' "$series" || true)

header=$(grep '^#' "$series" || true)
mapfile -t commits < <(git -C "$tree" rev-list --reverse pristine..cgstream)

# A file the series adds is kept in this repository as of the last commit
# that touches it, and that commit lists it; commits before that carry it
# as diffs (its creation included), so kernel-tree.sh rebuilds every commit.
declare -A added last_touch
for c in "${commits[@]}"; do
	while read -r f; do added[$f]=1; done < <(git -C "$tree" diff-tree --no-commit-id -r --diff-filter=A --name-only "$c")
	while read -r f; do last_touch[$f]=$c; done < <(git -C "$tree" diff-tree --no-commit-id -r --name-only "$c")
done

rm -f "$repo"/kernel/patches/*.patch
n=0
{
	echo "$header"
	for c in "${commits[@]}"; do
		n=$((n + 1))
		excludes=()
		specs=()
		for f in "${!added[@]}"; do
			[[ ${last_touch[$f]} == "$c" ]] || continue
			excludes+=(":(exclude)$f")
			dst=${repo_path[$f]:-$f}
			mkdir -p "$repo/$(dirname "$dst")"
			git -C "$tree" show "$c:$f" >"$repo/$dst"
			[[ $dst == "$f" ]] && specs+=("$f") || specs+=("$f=$dst")
		done
		mapfile -t specs < <(printf '%s\n' "${specs[@]}" | sort)
		name=$(git -C "$tree" log -1 --format=%f "$c" | cut -c1-52)
		patch=$(printf '%04d-%s.patch' "$n" "$name")
		{
			git -C "$tree" log -1 --format=email --no-decorate "$c"
			echo "---"
			git -C "$tree" diff --stat "$c^" "$c" -- . "${excludes[@]}"
			echo
			git -C "$tree" diff "$c^" "$c" -- . "${excludes[@]}"
		} >"$repo/kernel/patches/$patch"
		echo "$patch ${specs[*]}"
	done
} >"$series.new"
mv "$series.new" "$series"
echo ">> kernel/series: $n commits"
