#!/bin/sh
# Every mutant in kunit/mutants/ must still apply to the series tree: one
# written against code the series later rewrote would otherwise only show
# up as an error of `make mutants`, which is not part of `make test`, and
# the bug it stands for would go untested.  Each must also carry the
# header tools/kunit/mutants.sh needs to run it.
#
# usage: tools/kunit/check_mutants_apply.sh TREE MUTANT...
set -eu

tree=$1
shift
passed=0
failed=0
for m in "$@"; do
	name=$(basename "$m" .patch)
	if ! grep -q '^Bug: ' "$m" || ! grep -q '^Kunit-suites: \|^Vmtest-fs: \|^Crashreplay-fs: ' "$m"; then
		echo "mutants-apply: $name: no Bug: line, or none of Kunit-suites:, Vmtest-fs:, Crashreplay-fs:"
		failed=$((failed + 1))
	elif err=$(git -C "$tree" apply --check "$(realpath "$m")" 2>&1); then
		passed=$((passed + 1))
	else
		echo "mutants-apply: $name: does not apply to $tree:"
		echo "$err" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done
echo "mutants-apply: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
