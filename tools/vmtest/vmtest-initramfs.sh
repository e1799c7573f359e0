#!/bin/sh
# Build the guest's initramfs for `make vmtest` and `make bench`:
# busybox-static, the guest init, the static guest programs (fcheck,
# bench: each in /bin under its own name), and the host's own xfs_io and
# fallocate with the shared libraries ldd finds for them.  VMTEST_HOST_TOOLS
# names more host tools to add the same way (`make crashreplay`: e2fsck,
# xfs_repair, fsck.f2fs); with VMTEST_USERLAND it is refused.
#
# usage: tools/vmtest/vmtest-initramfs.sh OUT.cpio.gz CONF PROGRAM...
# VMTEST_USERLAND=DIR takes busybox, xfs_io, fallocate and their shared
# libraries from DIR, another architecture's packages unpacked there
# (tools/vmtest/arm64-userland.sh), instead of from the host.
set -eu

out=$(realpath -m "$1")
conf=$2
shift 2
here=$(dirname "$0")
stage=$out.d

root=${VMTEST_USERLAND:-}
if [ -n "$root" ] && [ -n "${VMTEST_HOST_TOOLS:-}" ]; then
	echo "vmtest-initramfs: VMTEST_HOST_TOOLS takes host tools, not $root's" >&2
	exit 2
fi

rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/etc" "$stage/proc" "$stage/sys" "$stage/dev" \
	"$stage/mnt" "$stage/tmp"
if [ -n "$root" ]; then
	cp "$root/bin/busybox" "$stage/bin/busybox"
else
	cp "$(command -v busybox)" "$stage/bin/busybox"
fi
cp "$here/guest/init" "$stage/init"
cp "$conf" "$stage/etc/vmtest.conf"
for prog in "$@"; do
	cp "$prog" "$stage/bin/${prog##*/}"
done
if [ -n "$root" ]; then
	cp "$root/usr/sbin/xfs_io" "$root/usr/bin/fallocate" "$stage/bin/"
	# Every shared library the packages hold, and the dynamic loader.
	(cd "$root" && find lib usr/lib -name gconv -prune -o \
		\( -name '*.so*' -o -name 'ld-linux*' \) \( -type f -o -type l \) \
		-print | cpio -pdm --quiet "$stage")
fi
for tool in xfs_io fallocate ${VMTEST_HOST_TOOLS:-}; do
	[ -n "$root" ] && break
	bin=$(command -v "$tool")
	cp "$bin" "$stage/bin/$tool"
	# "lib => /path (addr)" and "/lib64/ld-linux-x86-64.so.2 (addr)"
	ldd "$bin" | sed -n -e 's/.*=> \(\/[^ ]*\) .*/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) .*/\1/p' |
		while read -r lib; do
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib"
		done
done
chmod 755 "$stage/init" "$stage/bin/"*
(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
rm -rf "$stage"
