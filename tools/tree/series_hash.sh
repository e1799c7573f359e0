#!/bin/sh
# Print one hash of patches/series and every patch it names, so that any
# change in patches/ is seen by tools/tree/tree.sh.
#
# usage: tools/tree/series_hash.sh PATCH_DIR
set -eu

patches=$1
# The cover letter changes no tree (git am drops it as empty): its figures
# are written after each run, and must not make the tree apply again.
{
	grep -vx '0000-cover-letter.patch' "$patches/series"
	sed -e '/^#/d' -e '/^$/d' -e '/^0000-cover-letter\.patch$/d' "$patches/series" | while read -r p; do
		cat "$patches/$p" 2>/dev/null || echo "missing $p"
	done
} | sha256sum | cut -d' ' -f1
