#!/bin/sh
# Print one hash of patches/series and every patch it names, so that any
# change in patches/ is seen by tools/tree/tree.sh.
#
# usage: tools/tree/series_hash.sh PATCH_DIR
set -eu

patches=$1
{
	cat "$patches/series"
	sed -e '/^#/d' -e '/^$/d' "$patches/series" | while read -r p; do
		cat "$patches/$p" 2>/dev/null || echo "missing $p"
	done
} | sha256sum | cut -d' ' -f1
