#!/bin/sh
# Print the work in the series tree that patches/ does not hold, one item
# a line: "commit ID SUBJECT" for each commit since the tree last matched
# patches/ (when it was applied or exported) whose exported form is not a
# file of PATCH_DIR, then "file PATH" for each file edited, added or
# deleted and not committed.  Prints nothing when the tree holds no such
# work.
#
# usage: tools/tree/local_work.sh TREE PATCH_DIR
set -eu

tree=$1
patches=$2

# The commit the tree stood at when it last matched patches/: written by
# tools/tree/tree.sh and tools/tree/export.sh; base for an older tree.
since=$(cat "$tree/.git/series.head" 2>/dev/null || echo base)
git -C "$tree" cat-file -e "$since^{commit}" 2>/dev/null || since=base

# A patch's exported form without its "index" lines, whose abbreviated
# blob ids grow with the size of the repository that wrote them.
exported_sum() {
	sed '/^index [0-9a-f]*\.\.[0-9a-f]*/d' | sha256sum | cut -d' ' -f1
}

for p in "$patches"/*.patch; do
	[ -f "$p" ] && exported_sum <"$p"
done | sort -u >"$tree/.git/local-work.sums"
git -C "$tree" rev-list --reverse HEAD "^$since" | while read -r c; do
	# The same options as tools/tree/export.sh.
	sum=$(git -C "$tree" format-patch -1 --stdout -N --zero-commit --no-signature "$c" |
		exported_sum)
	grep -qxF "$sum" "$tree/.git/local-work.sums" ||
		echo "commit $(git -C "$tree" log -1 --format='%h %s' "$c")"
done
rm -f "$tree/.git/local-work.sums"

# Debian's top-level .gitignore ignores every file, so untracked files are
# listed without the ignore rules; the tree's builds are out of tree, and
# only Python's byte code (kunit.py runs from the tree) is not work.
{
	git -C "$tree" diff --name-only HEAD
	git -C "$tree" ls-files --others | grep -v '__pycache__/' || true
} | sort -u | sed 's/^/file /'
