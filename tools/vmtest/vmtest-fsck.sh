#!/bin/sh
# Check one filesystem without changing it; exit non-zero when the checker
# reports any problem.  The host runs it on a scratch image after the
# guest unmounted it; the crash replay's guest on each crash state's block
# device (tools/crashreplay/guest/crashreplay-check).
#
# usage: tools/vmtest/vmtest-fsck.sh TYPE IMAGE
set -eu

type=$1
img=$2
case $type in
ext4)	exec e2fsck -fn "$img" ;;
xfs)
	# -f: the filesystem is in a regular file, not on a block device.
	if [ -f "$img" ]; then
		exec xfs_repair -n -f "$img"
	fi
	exec xfs_repair -n "$img"
	;;
vfat)	exec fsck.fat -n "$img" ;;
f2fs)
	# fsck.f2fs exits 0 on some problems it reports: read its verdicts too.
	out=$(fsck.f2fs -f --dry-run "$img" 2>&1) && rc=0 || rc=$?
	echo "$out"
	if [ "$rc" -ne 0 ] || echo "$out" | grep -q '\[Fail\]'; then
		exit 1
	fi
	;;
*)	echo "vmtest-fsck: no checker for $type" >&2
	exit 1 ;;
esac
