#!/bin/sh
# Make one scratch filesystem image for `make vmtest`, on the host, as a
# sparse regular file (nothing is mounted here).
#
# usage: tools/vmtest/vmtest-mkfs.sh TYPE MB IMAGE [MKFS-OPTION...]
set -eu

type=$1
mb=$2
img=$3
shift 3
rm -f "$img"
truncate -s "${mb}M" "$img"
"mkfs.$type" "$@" "$img" >"$img.mkfs.log" 2>&1 || {
	cat "$img.mkfs.log" >&2
	echo "vmtest: mkfs.$type $* $img failed" >&2
	exit 1
}
