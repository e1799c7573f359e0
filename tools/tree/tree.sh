#!/bin/sh
# Lay out the kernel tree: extract the pinned linux-source tarball into
# build/linux, commit it as the base of a git repository and apply
# patches/series on top with git am.  Work in the tree is never thrown
# away unasked:
#  - a mutant that an interrupted `make mutants` left applied is reverted,
#    and nothing else (tools/tree/mutant.sh recover);
#  - while patches/ is as it was when the tree last matched it (applied
#    or exported), the tree is built as it stands, with any commits and
#    edits beyond patches/ (tools/tree/local_work.sh lists them);
#  - when patches/ changed and the tree holds such work, it stops, names
#    the work and the two ways on: `make export` keeps it, FORCE=1 drops it;
#  - otherwise, or with FORCE=1, it resets to base and applies patches/.
#
# usage: tools/tree/tree.sh TARBALL TREE_DIR PATCH_DIR
# Environment: FORCE=1 resets the tree over any work in it.
set -eu

tarball=$1
tree=$2
patches=$3
tools=$(dirname "$0")

# "1 commit", "2 commits".
plural() {
	[ "$1" = 1 ] && echo "$1 $2" || echo "$1 $2s"
}

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

"$tools/mutant.sh" recover "$tree"

want=$("$tools/series_hash.sh" "$patches")
stamp="$tree/.git/series.sha256"
have=$(cat "$stamp" 2>/dev/null || true)
work=$("$tools/local_work.sh" "$tree" "$patches")
commits=$(printf '%s' "$work" | grep -c '^commit ' || true)
files=$(printf '%s' "$work" | grep -c '^file ' || true)

if [ "$want" = "$have" ]; then
	if [ -z "$work" ]; then
		echo "tree: $tree is up to date with patches/series"
	else
		echo "tree: $tree has $(plural "$commits" commit) and $(plural "$files" "edited file") beyond patches/: building them; 'make export' saves them"
	fi
	exit 0
fi

if [ -n "$work" ] && [ "${FORCE:-}" != 1 ]; then
	{
		echo "tree: patches/ changed since $tree was made, and the tree holds work patches/ does not:"
		printf '%s\n' "$work" | sed 's/^/tree:   /'
		echo "tree: nothing was changed.  Either keep the work: commit the edits in $tree and"
		echo "tree: 'make export' (patches/ then holds it; merge it with the change to patches/),"
		echo "tree: or throw the work away and apply patches/: 'make tree FORCE=1'."
	} >&2
	exit 1
fi

echo "tree: resetting $tree to base and applying patches/series"
rm -f "$stamp" "$tree/.git/series.head"
git_tree am --abort >/dev/null 2>&1 || true
git_tree checkout -q -f --detach base
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
git_tree rev-parse HEAD >"$tree/.git/series.head"
