#!/bin/sh
# Apply each deliberate bug in kunit/mutants/ to the series tree, rebuild
# incrementally in the `make kunit` build directory, run the tests the
# mutant names, and revert it.  The kernel is rebuilt without mutants at
# the end, so `make vmtest` afterwards boots the series kernel again.
#
# Each mutant is a `git diff` of the kernel source after a header: "Bug:"
# says what it breaks; "Kunit-suites: GLOB" (a kunit.py filter glob) or
# "Vmtest-fs: NAME..." (filesystems of the guest matrix, run with
# tools/vmtest/vmtest.sh on the mutant kernel) or "Crashreplay-fs: NAME..."
# (filesystems of tools/crashreplay/crashreplay.sh, MUTANT_REPLAY_OPS
# operations, default 200, on the mutant kernel) names the tests that must catch it;
# "Kunit-cases: NAME" names a case that must fail, one a line (the line
# repeated for more, since parameter names hold spaces): CASE, PARAM, or
# SUITE.CASE[.PARAM] as kunit.py names them in its JSON; "Expect: hang"
# says the mutant hangs or crashes the kernel (in the named cases).
#
# A kill is exact, so that a mutant is only counted as caught by the tests
# meant to catch it:
#  - First, once for each distinct filter, the same tests run on the
#    unmutated kernel and must pass; otherwise each mutant using the filter
#    is an error.
#  - KUnit: a kill is a failed case of a run that completed; with
#    Kunit-cases, every named case must be among the failures.
#  - Vmtest: a kill is a "not ok" case of the named filesystems, a failed
#    fsck of one of their images, or a program of theirs cut short, whose
#    missing cases the report counts as failed: the guest kernel panics
#    on an oops (a BUG, a DEBUG_VM assertion), so a mutant the kernel's
#    own checks catch ends the guest at once, not by the timeout.
#  - Crashreplay: a kill is a crash state that failed its check (the file,
#    the mount or the fsck); a run that failed otherwise is an error.
#  - Any other run that did not complete (a hang, an RCU stall, a timeout)
#    is a kill only for a mutant that says "Expect: hang", and then only
#    if no named case passed before it stopped; a kernel splat
#    with no failed case, failures other than the named cases, a mutant
#    that does not apply or build, or tests that do not run are errors,
#    each reported with its reason.  A survivor passes every test.
#
# usage: tools/kunit/mutants.sh TREE BUILD_DIR FRAGMENTS MUTANT...
# FRAGMENTS is one word: the configuration fragments separated by spaces,
# as `make kunit` uses them.  Output: build/mutants/ (MUTANTS_OUT).
set -eu

tree=$(realpath "$1")
build_dir=$(realpath -m "$2")
fragments=$3
shift 3
top=$(realpath "$(dirname "$0")/../..")
# Absolute: tools/vmtest/vmtest.sh runs from the top of the project.
out=$(realpath -m "${MUTANTS_OUT:-build/mutants}")
mkdir -p "$out"
killed=0
survived=0
errors=0
applied=""

# tools/tree/mutant.sh leaves a marker while a mutant is applied, so that
# a run killed before its trap (SIGKILL, a crash) is cleaned up by the
# next run or `make tree`: exactly that mutant is reverted.
revert() {
	[ -n "$applied" ] && "$top/tools/tree/mutant.sh" revert "$tree"
	applied=""
}
trap revert EXIT
trap 'exit 130' INT TERM
"$top/tools/tree/mutant.sh" recover "$tree"

header() {
	sed -n "s/^$1: //p" "$2"
}

# Build the current tree and run the KUnit filter $2; outputs under $out/$1.
# A mutant may hang the kernel (a lookup that retries forever): the named
# suites take under two minutes, so 600 s, not the full run's 1500, ends it.
run_kunit() {
	# shellcheck disable=SC2086 # $fragments is a list of files
	KUNIT_TIMEOUT=${MUTANT_TIMEOUT:-600} \
		"$top/tools/kunit/kunit.sh" "$tree" "$build_dir" "$out/$1.json" "$2" \
		$fragments >"$out/$1.log" 2>&1 </dev/null
	[ -s "$build_dir/test.log" ]
}

# The cases named in the file $2 that break the kill rule $1, given the
# "STATUS NAME" lines of the file $3 (tools/kunit/kunit_report.py --cases-out):
# for "fail" those that did not fail, for "hang" those that passed or were
# skipped (a hung case has no result, or an ERROR one).  A name matches a
# case whose name is the same or ends in "." and the name, so "CASE",
# "SUITE.CASE" and "PARAM" all name a case.
offending() {
	awk -v mode="$1" 'NR == FNR { name[++n] = $0; next }
	{
		c = substr($0, length($1) + 2)
		for (i = 1; i <= n; i++) {
			w = name[i]
			if (c == w || substr(c, length(c) - length(w)) == "." w)
				st[i] = st[i] " " $1
		}
	}
	END {
		for (i = 1; i <= n; i++)
			if (mode == "fail" ? st[i] !~ /FAIL/ : st[i] ~ /PASS|SKIP/)
				print name[i]
	}' "$2" "$3"
}

# Judge the KUnit run $1 with tools/kunit/kunit_report.py; $2: the file of the
# named cases (may be empty), $3: the Expect header.  Prints the verdict
# word, a colon and the reason.
judge_kunit() {
	rep=$out/$1.report
	res=$out/$1.results
	if "$top/tools/kunit/kunit_report.py" --stage "$1" \
		--log "$build_dir/test.log" --json "$out/$1.json" \
		--console-out "$out/$1.console.log" --ktap-out "$out/$1.ktap" \
		--cases-out "$res" --skips "$top/kunit/skips.txt" \
		>"$rep" 2>&1; then
		echo "survived: every case passed"
		return
	fi
	failed=$(sed -n 's/^FAIL //p' "$res" 2>/dev/null || true)
	if grep -q 'did not boot\|no console log' "$rep"; then
		echo "error: the kernel did not boot or run KUnit (see $rep)"
	elif grep -q 'incomplete run' "$rep"; then
		if [ "$3" != hang ]; then
			echo "error: the run did not complete: a crash, hang or timeout, not a failed case (see $rep)"
		elif [ -s "$2" ] && bad=$(offending hang "$2" "$res") && [ -n "$bad" ]; then
			echo "error: the run hung, but a named case had passed before: $(echo "$bad" | head -n 1)"
		else
			echo "killed: the run hung, as expected"
		fi
	elif [ "$3" = hang ]; then
		echo "error: Expect: hang, but the run completed (see $rep)"
	elif [ -z "$failed" ]; then
		echo "error: no case failed, only: $(grep -m 1 'ERROR' "$rep")"
	elif [ -s "$2" ] && bad=$(offending fail "$2" "$res") && [ -n "$bad" ]; then
		echo "error: a named case did not fail: $(echo "$bad" | head -n 1); failed instead: $(echo "$failed" | paste -sd '|')"
	else
		echo "killed: $(echo "$failed" | wc -l) failed case(s)$(grep -q 'kernel splat' "$rep" && echo ', with a kernel splat')"
	fi
}

# Run the guest matrix on filesystems $2 with the kernel just built;
# outputs under $out/$1; $3: the Expect header.
judge_vmtest() {
	rep=$out/$1.report
	# A mutant that hangs the guest is only caught by the timeout: make
	# it MUTANT_HANG_TIMEOUT seconds (default 300, about eight times what
	# one tmpfs row takes), not the whole matrix's bound.
	timeout=${VMTEST_TIMEOUT:-}
	[ "$3" = hang ] && timeout=${MUTANT_HANG_TIMEOUT:-300}
	# shellcheck disable=SC2086 # $2 is a list of filesystem names
	if VMTEST_OUT="$out/$1.vmtest" VMTEST_TIMEOUT=$timeout \
		"$top/tools/vmtest/vmtest.sh" \
		"$build_dir/arch/x86/boot/bzImage" $2 >"$rep" 2>&1 </dev/null; then
		echo "survived: every case passed"
	elif grep -q '^vmtest: ERROR: timeout' "$rep"; then
		if [ "$3" = hang ]; then
			echo "killed: the guest timed out, as expected"
		else
			echo "error: the guest timed out, not a failed case (see $rep)"
		fi
	elif [ "$3" = hang ]; then
		echo "error: Expect: hang, but the guest finished (see $rep)"
	elif grep -q '^    not ok \|^vmtest: [a-z0-9-]*: fsck FAILED\|missing cases count as failed$' "$rep"; then
		echo "killed: $(grep -c '^    not ok ' "$rep") failed case(s)$(grep -q 'fsck FAILED' "$rep" && echo ', fsck failed')$(grep -q 'missing cases count as failed$' "$rep" && echo ', a program cut short')$(grep -q '^vmtest: ERROR: kernel splat' "$rep" && echo ' (kernel splat)')"
	else
		echo "error: no case and no fsck failed, only: $(grep -m 1 'ERROR' "$rep")"
	fi
}

# Record and replay the crash workload on filesystems $2 with the kernel
# just built; outputs under $out/$1.  The seed is fixed, so that the
# baseline and the mutant run the same operations.
judge_crashreplay() {
	rep=$out/$1.report
	# shellcheck disable=SC2086 # $2 is a list of filesystem names
	if CRASHREPLAY_OUT="$out/$1.crashreplay" CRASHREPLAY_FS="$2" \
		CRASHREPLAY_SEED=${MUTANT_REPLAY_SEED:-1} \
		"$top/tools/crashreplay/crashreplay.sh" \
		"$build_dir/arch/x86/boot/bzImage" "${MUTANT_REPLAY_OPS:-200}" flush \
		>"$rep" 2>&1 </dev/null; then
		echo "survived: every crash state passed"
	elif grep -q '^crashreplay: [a-z0-9-]*: [0-9]* states passed, [1-9][0-9]* failed' "$rep"; then
		echo "killed: $(sed -n 's/^crashreplay: [a-z0-9-]*: \([0-9]* states passed, [0-9]* failed\).*/\1/p' "$rep" | paste -sd ';'), the first: $(grep -m 1 '^    not ok ' "$rep" | cut -c 5-200)"
	else
		echo "error: no crash state failed, only: $(grep -m 1 'FAILED\|ERROR' "$rep")"
	fi
}

# Baselines: each distinct filter on the unmutated kernel, once.  A guest
# mutant is built through kunit.py with the vfs_fallocate suite, the cheapest,
# so that filter is baselined too.
: >"$out/baselines"
for m in "$@"; do
	suites=$(header Kunit-suites "$m")
	guest_fs=$(header Vmtest-fs "$m")
	replay_fs=$(header Crashreplay-fs "$m")
	[ -n "$guest_fs$replay_fs" ] && suites=${suites:-vfs_fallocate}
	for key in ${suites:+"kunit $suites"} ${guest_fs:+"vmtest $guest_fs"} \
		${replay_fs:+"crashreplay $replay_fs"}; do
		grep -qxF "$key" "$out/baselines" || echo "$key" >>"$out/baselines"
	done
done
i=0
: >"$out/baseline-failed"
# kunit first: the guest runs boot the kernel the first builds.
{ grep '^kunit ' "$out/baselines" || true; grep -v '^kunit ' "$out/baselines" || true; } >"$out/baselines.sorted"
mv "$out/baselines.sorted" "$out/baselines"
while read -r kind filter; do
	i=$((i + 1))
	if [ "$kind" = kunit ]; then
		run_kunit "baseline-$i" "$filter" || true
		verdict=$(judge_kunit "baseline-$i" /dev/null "")
	elif [ "$kind" = crashreplay ]; then
		verdict=$(judge_crashreplay "baseline-$i" "$filter")
	else
		verdict=$(judge_vmtest "baseline-$i" "$filter" "")
	fi
	case $verdict in
	survived*)
		echo "mutants: baseline $kind $filter: passes on the unmutated kernel" ;;
	*)
		echo "mutants: ERROR baseline $kind $filter: does not pass on the unmutated kernel (see $out/baseline-$i.report)"
		echo "$kind $filter" >>"$out/baseline-failed" ;;
	esac
done <"$out/baselines"

for m in "$@"; do
	name=$(basename "$m" .patch)
	m=$(realpath "$m")
	suites=$(header Kunit-suites "$m")
	guest_fs=$(header Vmtest-fs "$m")
	replay_fs=$(header Crashreplay-fs "$m")
	expect=$(header Expect "$m")
	header Kunit-cases "$m" >"$out/$name.cases"
	echo "mutants: $name: $(header Bug "$m")"
	if [ -z "$suites$guest_fs$replay_fs" ] || ! git -C "$tree" apply --check "$m" 2>/dev/null; then
		echo "mutants: ERROR $name: no Kunit-suites, Vmtest-fs or Crashreplay-fs line, or it does not apply"
		errors=$((errors + 1))
		continue
	fi
	if grep -qxF -e "kunit $suites" -e "vmtest $guest_fs" -e "crashreplay $replay_fs" \
		"$out/baseline-failed"; then
		echo "mutants: ERROR $name: its tests fail on the unmutated kernel"
		errors=$((errors + 1))
		continue
	fi
	"$top/tools/tree/mutant.sh" apply "$tree" "$m"
	applied=$m
	if ! run_kunit "$name" "${suites:-vfs_fallocate}"; then
		revert
		echo "mutants: ERROR $name: the kernel did not build (see $out/$name.log)"
		errors=$((errors + 1))
		continue
	fi
	if [ -n "$suites" ]; then
		verdict=$(judge_kunit "$name" "$out/$name.cases" "$expect")
	elif [ -n "$replay_fs" ]; then
		verdict=$(judge_crashreplay "$name" "$replay_fs")
	else
		verdict=$(judge_vmtest "$name" "$guest_fs" "$expect")
	fi
	revert
	case $verdict in
	killed*)
		echo "mutants: killed $name: ${verdict#killed: }"
		killed=$((killed + 1)) ;;
	survived*)
		echo "mutants: SURVIVED $name: ${suites:-${guest_fs:+vmtest $guest_fs}${replay_fs:+crashreplay $replay_fs}} all pass"
		survived=$((survived + 1)) ;;
	*)
		echo "mutants: ERROR $name: ${verdict#error: }"
		errors=$((errors + 1)) ;;
	esac
done
echo "mutants: rebuilding the series kernel without mutants"
run_kunit series vfs_fallocate || true
echo "mutants: $killed killed, $survived survived, $errors errors"
[ "$survived" -eq 0 ] && [ "$errors" -eq 0 ]
