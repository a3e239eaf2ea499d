#!/bin/bash
# Fetch Debian's own kernel (no cgstream series) for the "kernel without the
# feature" boot, unpacked as a tree with boot/vmlinuz-* and lib/modules/*:
# virtme-ng finds the modules beside the image.  Downloads the .deb with
# apt (nothing is installed on the host) into DIR and prints the vmlinuz.
#
# usage: stock-kernel.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
meta=linux-image-amd64
pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}') || true
if [[ -z $pkg ]]; then
	apt-get update -qq >/dev/null 2>&1 || true
	pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}') || true
fi
[[ -n $pkg ]] || { echo "stock-kernel: apt knows no $meta" >&2; exit 1; }
ver=${pkg#linux-image-}
img=$dir/root/boot/vmlinuz-$ver
if [[ ! -f $img || ! -d $dir/root/lib/modules/$ver ]]; then
	rm -rf "$dir/root" "$dir"/*.deb
	(cd "$dir" && apt-get download -q "$pkg" >&2) || { echo "stock-kernel: cannot download $pkg" >&2; exit 1; }
	dpkg -x "$dir"/"$pkg"_*.deb "$dir/root"
	rm -f "$dir"/*.deb
fi
echo "$img"
