#!/bin/sh
# Print the QEMU cache mode under which a guest's flushes reach images in
# DIR: none (O_DIRECT) where the host filesystem allows it, else
# writethrough.
#
# usage: tools/lib/flush_cache_mode.sh DIR
set -eu

probe=$1/direct-io.probe
if dd if=/dev/zero of="$probe" bs=4096 count=1 oflag=direct 2>/dev/null; then
	echo none
else
	echo writethrough
fi
rm -f "$probe"
