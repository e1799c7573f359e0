#!/bin/sh
# Lay out the kernel tree: extract the pinned linux-source tarball into
# build/linux, commit it as the base of a throwaway git repository and apply
# patches/series on top with git am.  The tree is re-made from the base
# whenever anything in patches/ changed since the last application, or the
# tree has uncommitted changes (an interrupted mutant run, a hand edit).
#
# usage: tools/tree/tree.sh TARBALL TREE_DIR PATCH_DIR
set -eu

tarball=$1
tree=$2
patches=$3

git_tree() {
	git -C "$tree" -c user.name=collapse-range-tree \
		-c user.email=tree@collapse-range.invalid "$@"
}

if [ ! -f "$tarball" ]; then
	echo "tree: $tarball is missing: run 'make deps'" >&2
	exit 1
fi

if ! git_tree rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	echo "tree: extracting $tarball into $tree (about a minute)"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xJf "$tarball" -C "$tree.tmp" --strip-components=1
	mv "$tree.tmp" "$tree"
	echo "tree: committing the pristine tree as tag 'base'"
	git_tree init -q
	# Debian's top-level .gitignore ignores everything: add with -f.
	git_tree add -A -f .
	# Dated as the tarball, not now: the same package gives the same base
	# commit on every machine, and the cover letter's base-commit names it.
	date=$(stat -c %Y "$tarball")
	GIT_AUTHOR_DATE="@$date +0000" GIT_COMMITTER_DATE="@$date +0000" \
		git_tree commit -q -m "base: $(basename "$tarball")"
	git_tree tag base
fi

want=$("$(dirname "$0")/series_hash.sh" "$patches")
stamp="$tree/.git/series.sha256"
have=$(cat "$stamp" 2>/dev/null || true)

if [ "$want" = "$have" ] && [ -z "$(git_tree status --porcelain)" ]; then
	echo "tree: $tree is up to date with patches/series"
	exit 0
fi

echo "tree: resetting $tree to base and applying patches/series"
rm -f "$stamp"
git_tree am --abort >/dev/null 2>&1 || true
git_tree checkout -q --detach base
git_tree reset -q --hard base
git_tree clean -q -fdx
sed -e '/^#/d' -e '/^$/d' "$patches/series" | while read -r p; do
	if [ ! -f "$patches/$p" ]; then
		echo "tree: patches/series names $p, which does not exist" >&2
		exit 1
	fi
	# --empty=drop: the cover letter, first in the series, has no diff.
	if ! git_tree am -q --keep-cr --empty=drop "$(realpath "$patches/$p")" >/dev/null 2>&1; then
		git_tree am --abort >/dev/null 2>&1 || true
		echo "tree: patch $p does not apply" >&2
		exit 1
	fi
	echo "tree:   applied $p"
done
echo "$want" >"$stamp"
