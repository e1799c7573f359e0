#!/bin/sh
# checkpatch.pl --strict on every patch of the series, with the tree's own
# checkpatch.  One type is ignored: UNKNOWN_COMMIT_ID, because the tree is
# a release tarball committed without history, so no mainline commit id a
# changelog cites (Fixes:, "commit 00f5e61998dd (...)") can be found in it.
# Any other warning passes only where the patch's own changelog names its
# type (as checkpatch --show-types prints it) and so justifies it for the
# reviewer; the line then says which types were justified.
#
# usage: tools/check/checkpatch.sh TREE PATCH_DIR
set -eu

tree=$(realpath "$1")
patches=$(realpath "$2")
passed=0
failed=0

for p in $(sed -e '/^#/d' -e '/^$/d' "$patches/series"); do
	out=$(cd "$tree" && PATH="/usr/bin:$PATH" perl scripts/checkpatch.pl --strict --terse \
		--show-types --ignore UNKNOWN_COMMIT_ID "$patches/$p" 2>&1 |
		grep -E 'ERROR|WARNING|CHECK|Traceback|No such file' || true)
	# The changelog: the message, before the "---" that starts the diffstat.
	log=$(sed -n '/^$/,/^---$/p' "$patches/$p")
	justified=""
	for type in $(echo "$out" | sed -n 's/.*: \(WARNING\|CHECK\):\([A-Z_]*\):.*/\2/p' | sort -u); do
		if echo "$log" | grep -qw "$type"; then
			out=$(echo "$out" | grep -v ":$type:" || true)
			justified="$justified $type"
		fi
	done
	if [ -z "$out" ]; then
		echo "checkpatch: ok $p${justified:+ (justified in the changelog:$justified)}"
		passed=$((passed + 1))
	else
		echo "checkpatch: FAIL $p"
		echo "$out" | sed 's/^/  /'
		failed=$((failed + 1))
	fi
done
echo "checkpatch: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
