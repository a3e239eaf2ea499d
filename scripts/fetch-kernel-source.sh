#!/bin/bash
# Fetch Debian's linux-source-$SERIES through an apt configuration of our own,
# so the machine's apt sources and state are never touched (adding sid to the
# system sources once left a machine half-upgraded).  The .deb and the tarball
# are cached in $CACHE; a second call is a no-op.
#
# usage: fetch-kernel-source.sh SERIES CACHE
# prints the path of linux-source-SERIES.tar.xz on success.
set -euo pipefail

series=${1:?usage: fetch-kernel-source.sh SERIES CACHE}
cache=${2:?usage: fetch-kernel-source.sh SERIES CACHE}
pkg=linux-source-$series
tarball=$cache/$pkg.tar.xz

if [[ -s $tarball ]]; then
	echo "$tarball"
	exit 0
fi

apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" \
	"$apt_dir/parts.d" "$apt_dir/debs"
cat >"$apt_dir/sources.list" <<SOURCES
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
SOURCES

apt_opts=(
	-o "Dir::Etc::SourceList=$apt_dir/sources.list"
	-o "Dir::Etc::SourceParts=$apt_dir/parts.d"
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::Cache=$apt_dir/cache"
	-o "Debug::NoLocking=1"
	-o "APT::Sandbox::User=root"
)

echo ">> updating a private apt index for Debian sid (system apt untouched)" >&2
apt-get -q "${apt_opts[@]}" update >&2

if ! apt-cache "${apt_opts[@]}" show "$pkg" >/dev/null 2>&1; then
	{
		echo "error: Debian sid no longer carries $pkg."
		echo "       Available linux-source packages there:"
		apt-cache "${apt_opts[@]}" search --names-only '^linux-source-[0-9]' | sed 's/^/         /'
		echo "       Rebase kernel/patches onto a carried series and change"
		echo "       KERNEL_SERIES in the top-level Makefile."
	} >&2
	exit 1
fi

echo ">> downloading $pkg" >&2
(cd "$apt_dir/debs" && apt-get -q "${apt_opts[@]}" download "$pkg" >&2)
deb=$(ls -t "$apt_dir"/debs/"${pkg}"_*.deb | head -n1)

extract=$(mktemp -d "$cache/extract.XXXXXX")
trap 'rm -rf "$extract"' EXIT
version=$(dpkg-deb -f "$deb" Version 2>/dev/null) || version=$(basename "$deb")
dpkg -x "$deb" "$extract"
mv "$extract/usr/src/$pkg.tar.xz" "$tarball.tmp"
mv "$tarball.tmp" "$tarball"
rm -f "$deb"
echo ">> $pkg $version unpacked to $tarball" >&2
echo "$tarball"
