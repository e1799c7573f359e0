#!/bin/sh
# Write the commits of the series tree (base..HEAD) back to patches/ as
# git format-patch files and rewrite patches/series.  Output is stable
# (zero commit ids, no signature), so re-exporting an unchanged series
# changes no file and does not force `make tree` to re-apply.
#
# usage: tools/tree/export.sh TREE PATCH_DIR
set -eu

tree=$1
patches=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git -C "$tree" format-patch -q -N --zero-commit --no-signature -o "$tmp" base..HEAD
# Every patch but the cover letter, which make cover-letter writes.
find "$patches" -maxdepth 1 -name '*.patch' ! -name 0000-cover-letter.patch -delete
{
	echo "# The series, in order. One git format-patch file a line."
	# The cover letter (make cover-letter) heads it, as git format-patch
	# --cover-letter numbers it; git am applies it as nothing.
	[ -f "$patches/0000-cover-letter.patch" ] && echo 0000-cover-letter.patch
	for p in "$tmp"/*.patch; do
		[ -e "$p" ] || continue
		cp "$p" "$patches/"
		basename "$p"
	done
} >"$patches/series.new"
mv "$patches/series.new" "$patches/series"
# The tree now matches patches/: record that, and the commit it stands
# at, so that `make tree` keeps it and counts only later work as unsaved.
"$(dirname "$0")/series_hash.sh" "$patches" >"$tree/.git/series.sha256"
git -C "$tree" rev-parse HEAD >"$tree/.git/series.head"
echo "export: $(grep -v '^#' "$patches/series" | grep -vc '^0000-cover-letter') patches in $patches"
