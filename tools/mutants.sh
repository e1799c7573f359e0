#!/bin/sh
# Apply each deliberate bug in kunit/mutants/ to the series tree, rebuild
# incrementally in the `make kunit` build directory, run the tests the
# mutant names, and revert it.  A mutant is killed when a test case fails
# or the kernel crashes or splats; it survives when they pass.  A mutant
# that does not apply or build, or whose tests do not run, is an error,
# never a kill.  The kernel is rebuilt without mutants at the end, so
# `make vmtest` afterwards boots the series kernel again.
#
# Each mutant is a `git diff` with a "Bug:" line saying what it breaks and
# the tests that must catch it: "Kunit-suites: GLOB" (a kunit.py filter
# glob), or "Vmtest-fs: NAME..." (filesystems of the guest matrix, run with
# tools/vmtest.sh on the mutant kernel).
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

# Judge a KUnit run of mutant $1 with tools/kunit_report.py.
judge_kunit() {
	if "$top/tools/kunit_report.py" --stage "$1" \
		--log "$build_dir/test.log" --json "$out/$1.json" \
		--console-out "$out/$1.console.log" \
		--ktap-out "$out/$1.ktap" >"$out/$1.report" 2>&1; then
		echo survived
	elif grep -q 'no test case ran\|did not boot' "$out/$1.report"; then
		echo error
	else
		echo killed
	fi
}

# Run the guest matrix on filesystems $2 with mutant $1's kernel.  A failed
# case, a kernel splat, or a failed fsck of an image after the run kills it.
judge_vmtest() {
	# shellcheck disable=SC2086 # $2 is a list of filesystem names
	if "$top/tools/vmtest.sh" "$build_dir/arch/x86/boot/bzImage" $2 \
		>"$out/$1.report" 2>&1; then
		echo survived
	elif grep -q '^    not ok \|^vmtest: ERROR: kernel splat\|^vmtest: [a-z0-9-]*: fsck FAILED' \
		"$out/$1.report"; then
		echo killed
	else
		echo error
	fi
}

for m in "$@"; do
	name=$(basename "$m" .patch)
	m=$(realpath "$m")
	suites=$(sed -n 's/^Kunit-suites: //p' "$m")
	guest_fs=$(sed -n 's/^Vmtest-fs: //p' "$m")
	echo "mutants: $name: $(sed -n 's/^Bug: //p' "$m")"
	if [ -z "$suites$guest_fs" ] || ! git -C "$tree" apply --check "$m" 2>/dev/null; then
		echo "mutants: ERROR $name: no Kunit-suites or Vmtest-fs line, or it does not apply"
		errors=$((errors + 1))
		continue
	fi
	git -C "$tree" apply "$m"
	applied=$m
	# A guest mutant still goes through kunit.py, for the build; the
	# fallocate suite is the cheapest to run while at it.  A mutant may
	# hang the kernel (a lookup that retries forever): the named suites
	# take under two minutes, so 600 s, not the full run's 1500, ends it.
	# shellcheck disable=SC2086 # $fragments is a list of files
	KUNIT_TIMEOUT=${MUTANT_TIMEOUT:-600} \
		"$top/tools/kunit.sh" "$tree" "$build_dir" "$out/$name.json" \
		"${suites:-fallocate}" $fragments >"$out/$name.log" 2>&1
	if [ ! -s "$build_dir/test.log" ]; then
		revert
		echo "mutants: ERROR $name: the kernel did not build (see $out/$name.log)"
		errors=$((errors + 1))
		continue
	fi
	if [ -n "$suites" ]; then
		verdict=$(judge_kunit "$name")
	else
		verdict=$(judge_vmtest "$name" "$guest_fs")
	fi
	revert
	case $verdict in
	killed)
		echo "mutants: killed $name: $(grep ': [0-9]* passed, [0-9]* failed' "$out/$name.report" | tail -n 1)"
		killed=$((killed + 1)) ;;
	survived)
		echo "mutants: SURVIVED $name: ${suites:-vmtest $guest_fs} all pass"
		survived=$((survived + 1)) ;;
	*)
		echo "mutants: ERROR $name: its tests did not run (see $out/$name.report)"
		errors=$((errors + 1)) ;;
	esac
done
echo "mutants: rebuilding the series kernel without mutants"
# shellcheck disable=SC2086 # $fragments is a list of files
"$top/tools/kunit.sh" "$tree" "$build_dir" "$out/series.json" fallocate \
	$fragments >"$out/series.log" 2>&1
echo "mutants: $killed killed, $survived survived, $errors errors"
[ "$survived" -eq 0 ] && [ "$errors" -eq 0 ]
