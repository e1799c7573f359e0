#!/bin/sh
# Build the guest's initramfs for `make vmtest` and `make bench`:
# busybox-static, the guest init, the static guest programs (fcheck,
# bench: each in /bin under its own name), and the host's own xfs_io and
# fallocate with the shared libraries ldd finds for them.
#
# usage: tools/vmtest/vmtest-initramfs.sh OUT.cpio.gz CONF PROGRAM...
set -eu

out=$(realpath -m "$1")
conf=$2
shift 2
here=$(dirname "$0")
stage=$out.d

rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/etc" "$stage/proc" "$stage/sys" "$stage/dev" \
	"$stage/mnt" "$stage/tmp"
cp "$(command -v busybox)" "$stage/bin/busybox"
cp "$here/guest/init" "$stage/init"
cp "$conf" "$stage/etc/vmtest.conf"
for prog in "$@"; do
	cp "$prog" "$stage/bin/${prog##*/}"
done
for tool in xfs_io fallocate; do
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
