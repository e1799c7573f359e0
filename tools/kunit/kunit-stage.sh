#!/bin/sh
# One `make kunit` run: build the series kernel, run its KUnit suites in
# QEMU (all of them, or those FILTER names) and judge the run.  The full
# x86_64 run first checks the in-tree kunitconfigs (the one-suite loop
# leaves that to it, to stay short).
#
# usage: tools/kunit/kunit-stage.sh TREE BUILD_DIR OUT FILTER SUITES KUNITCONFIG_DIRS FRAGMENT...
# FILTER is kunit.py's filter glob, empty for every suite.  SUITES is the
# list of suites the full run must hold (kunit/suites); a filtered run must
# hold those FILTER matches.  KUNITCONFIG_DIRS: the directories of the
# in-tree kunitconfigs, whose union the first FRAGMENT is.  Writes OUT.json,
# OUT-console.log, OUT.ktap and OUT-cases.txt.  KUNIT_ARCH as for
# tools/kunit/kunit.sh.
set -eu

tree=$1
build=$2
out=$3
filter=$4
suites=$5
dirs=$6
shift 6
arch=${KUNIT_ARCH:-x86_64}
rc=0

if [ -z "$filter" ] && [ "$arch" = x86_64 ]; then
	# shellcheck disable=SC2086 # $dirs is a list of directories
	tools/kunit/check_kunitconfigs.py "$tree" build/kunitconfigs "$1" $dirs || rc=1
fi
tools/kunit/kunit.sh "$tree" "$build" "$out.json" "$filter" "$@"
# shellcheck disable=SC2086 # $suites is a list of names
tools/kunit/kunit_report.py --stage "$(basename "$out")" --arch "$arch" \
	--log "$build/test.log" --json "$out.json" \
	--console-out "$out-console.log" --ktap-out "$out.ktap" \
	--cases-out "$out-cases.txt" --skips kunit/skips.txt \
	--filter "$filter" --suites $suites || rc=1
exit "$rc"
