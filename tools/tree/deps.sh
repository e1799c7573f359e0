#!/bin/sh
# Install the Debian packages the project needs; skip those already there.
# The kernel source package is pinned: exactly KERNEL_VERSION when apt
# serves it, otherwise the newest version apt has, with a warning.
#
# usage: tools/tree/deps.sh KERNEL_PKG KERNEL_VERSION PACKAGE...
set -eu

kernel_pkg=$1
kernel_version=$2
shift 2

installed_version() {
	dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null |
		sed -n 's/^install ok installed //p'
}

missing=""
for p in "$@"; do
	[ -n "$(installed_version "$p")" ] || missing="$missing $p"
done
have_kernel=$(installed_version "$kernel_pkg")
# make vmtest ARCH=arm64 downloads arm64 packages for its guest
# (tools/vmtest/arm64-userland.sh): apt must know that architecture.
arm64=""
dpkg --print-foreign-architectures | grep -qx arm64 || arm64=missing
if [ -z "$missing" ] && [ -z "$arm64" ] && [ "$have_kernel" = "$kernel_version" ]; then
	echo "deps: all packages present ($kernel_pkg $have_kernel)"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
if [ -n "$arm64" ]; then
	echo "deps: adding the dpkg architecture arm64"
	dpkg --add-architecture arm64
fi
echo "deps: apt-get update"
apt-get update -q >/dev/null

kernel_want="$kernel_pkg=$kernel_version"
if ! apt-cache madison "$kernel_pkg" | grep -q "| $kernel_version |"; then
	echo "deps: WARNING: apt does not serve $kernel_pkg $kernel_version;" \
		"installing the newest $kernel_pkg instead" >&2
	kernel_want=$kernel_pkg
fi

echo "deps: installing$missing $kernel_want"
# shellcheck disable=SC2086 # word splitting of the package list is wanted
if ! apt-get install -y -q --allow-downgrades $missing "$kernel_want" >/dev/null; then
	for p in $missing "$kernel_want"; do
		apt-get install -s -q "$p" >/dev/null 2>&1 ||
			echo "deps: apt-get cannot install $p" >&2
	done
	exit 1
fi
echo "deps: done ($kernel_pkg $(installed_version "$kernel_pkg"))"
