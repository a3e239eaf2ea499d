#!/bin/bash
# Configure (tinyconfig + scripts/vm/kernel.config) and build bzImage out of
# tree, through ccache kept outside the clone.
#
# usage: kernel-build.sh TREE OBJ FRAGMENT[:FRAGMENT...] CCACHE_DIR
#   Several fragments apply in order; for an option set in more than one,
#   the last one wins (scripts/vm/bench.config on top of kernel.config).
set -euo pipefail

tree=$(realpath "${1:?}"); obj=$(realpath -m "${2:?}")
export CCACHE_DIR=${4:?}
# Let clones at different paths share cache entries.
export CCACHE_BASEDIR=$(dirname "$tree") CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=time_macros
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
mkdir -p "$obj" "$CCACHE_DIR"

# one fragment: the given ones in order, each option's last setting kept
IFS=: read -ra fragments <<<"${3:?}"
fragment=$obj/.config.fragment
for f in "${fragments[@]}"; do cat "$(realpath "$f")"; done |
	awk '/^(CONFIG_[A-Za-z0-9_]+)=/ { split($0, kv, "="); last[kv[1]] = $0; order[++n] = kv[1]; next }
	     END { for (i = 1; i <= n; i++) if (!(order[i] in done)) { done[order[i]] = 1; print last[order[i]] } }' \
	>"$fragment.new"
if cmp -s "$fragment.new" "$fragment"; then rm "$fragment.new"; else mv "$fragment.new" "$fragment"; fi

kmake() { make -C "$tree" O="$obj" CC="ccache gcc" HOSTCC="ccache gcc" "$@"; }

if [[ ! -f $obj/.config || ! -f $obj/.config.fragment.sha ||
      $(sha256sum <"$fragment") != "$(cat "$obj/.config.fragment.sha")" ]]; then
	echo ">> configuring: tinyconfig + ${3//:/ + }"
	kmake -s tinyconfig >/dev/null
	(cd "$obj" && "$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$fragment" >/dev/null)
	kmake -s olddefconfig >/dev/null
	# merge_config only warns; an option the fragment asks for and the
	# config does not have is an error here (a dependency is missing).
	missing=0
	while IFS= read -r line; do
		[[ $line =~ ^(CONFIG_[A-Z0-9_]+)=(.*)$ ]] || continue
		opt=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
		if [[ $want == n ]]; then
			grep -qx "$opt=.*" "$obj/.config" && { echo "config: $opt should be off" >&2; missing=1; }
		else
			grep -qxF "$opt=$want" "$obj/.config" || { echo "config: $opt=$want did not take (dependency missing?)" >&2; missing=1; }
		fi
	done <"$fragment"
	((missing == 0)) || exit 1
	sha256sum <"$fragment" >"$obj/.config.fragment.sha"
fi

echo ">> building bzImage ($(nproc) jobs, ccache in $CCACHE_DIR)"
kmake -j"$(nproc)" bzImage
echo ">> $(cat "$obj/include/config/kernel.release"): $obj/arch/x86/boot/bzImage"
ccache -s 2>/dev/null | grep -E 'Hits|Misses' | head -3 || true
