#!/bin/sh
# Apply each deliberate bug in kunit/mutants/ to the series tree, rebuild
# incrementally in the `make kunit` build directory, run the suites the
# mutant names, and revert it.  A mutant is killed when a case of those
# suites fails or the kernel crashes or splats; it survives when they pass.
# A mutant that does not apply or build is an error, never a kill.
#
# Each mutant is a `git diff` with a header line "Kunit-suites: GLOB"
# (a kunit.py filter glob) and a "Bug:" line saying what it breaks.
#
# usage: tools/mutants.sh TREE BUILD_DIR FRAGMENTS MUTANT...
# FRAGMENTS is one word: the configuration fragments separated by spaces,
# as `make kunit` uses them.
set -eu

tree=$(realpath "$1")
build_dir=$2
fragments=$3
shift 3
top=$(realpath "$(dirname "$0")/..")
out=build/mutants
mkdir -p "$out"
killed=0
survived=0
errors=0
applied=""

revert() {
	[ -n "$applied" ] && git -C "$tree" apply -R "$applied"
	applied=""
}
trap revert EXIT INT TERM

for m in "$@"; do
	name=$(basename "$m" .patch)
	m=$(realpath "$m")
	suites=$(sed -n 's/^Kunit-suites: //p' "$m")
	echo "mutants: $name: $(sed -n 's/^Bug: //p' "$m")"
	if [ -z "$suites" ] || ! git -C "$tree" apply --check "$m" 2>/dev/null; then
		echo "mutants: ERROR $name: no Kunit-suites line, or it does not apply"
		errors=$((errors + 1))
		continue
	fi
	git -C "$tree" apply "$m"
	applied=$m
	# shellcheck disable=SC2086 # $fragments is a list of files
	"$top/tools/kunit.sh" "$tree" "$build_dir" "$out/$name.json" "$suites" \
		$fragments >"$out/$name.log" 2>&1
	revert
	if [ ! -s "$build_dir/test.log" ]; then
		echo "mutants: ERROR $name: the kernel did not build (see $out/$name.log)"
		errors=$((errors + 1))
		continue
	fi
	if "$top/tools/kunit_report.py" --stage "$name" \
		--log "$build_dir/test.log" --json "$out/$name.json" \
		--console-out "$out/$name.console.log" \
		--ktap-out "$out/$name.ktap" >"$out/$name.report" 2>&1; then
		echo "mutants: SURVIVED $name: suites '$suites' all pass"
		survived=$((survived + 1))
	elif grep -q 'no test case ran\|did not boot' "$out/$name.report"; then
		echo "mutants: ERROR $name: suites '$suites' did not run"
		errors=$((errors + 1))
	else
		echo "mutants: killed $name: $(tail -n 1 "$out/$name.report")"
		killed=$((killed + 1))
	fi
done
echo "mutants: $killed killed, $survived survived, $errors errors"
[ "$survived" -eq 0 ] && [ "$errors" -eq 0 ]
