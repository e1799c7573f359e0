#!/bin/sh
# Unpack the arm64 userland the guest of `make vmtest ARCH=arm64` needs
# besides the programs built here: Debian's busybox-static, xfs_io and
# fallocate, with the shared libraries they load, downloaded for arm64
# (dpkg's foreign architecture, which `make deps` adds) and unpacked into
# DIR/root.  Does nothing when DIR already holds this package list.
#
# usage: tools/vmtest/arm64-userland.sh DIR
set -eu

dir=$1
pkgs="busybox-static xfsprogs util-linux libc6 libedit2 libdevmapper1.02.1
libtinfo6 libbsd0 libselinux1 libudev1 libmd0 libpcre2-8-0"
pkgs=$(echo $pkgs)

if [ "$(cat "$dir/packages" 2>/dev/null)" = "$pkgs" ]; then
	exit 0
fi
dpkg --print-foreign-architectures | grep -qx arm64 ||
	{ echo "arm64-userland: dpkg has no arm64 architecture: run 'make deps'" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/root"
# apt's unprivileged downloader must be able to write there.
chmod 777 "$dir/debs"
echo "arm64-userland: downloading $pkgs (arm64)"
# shellcheck disable=SC2046 # one argument a package
(cd "$dir/debs" && apt-get download -q $(for p in $pkgs; do echo "$p:arm64"; done)) >/dev/null
for deb in "$dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$dir/root"
done
echo "$pkgs" >"$dir/packages"
