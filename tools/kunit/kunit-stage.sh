#!/bin/sh
# One `make kunit` run: build the series kernel, run its KUnit suites in
# QEMU (all of them, or those FILTER names) and judge the run.  The full
# x86_64 run first checks the in-tree kunitconfigs (the one-suite loop
# leaves that to it, to stay short), and then runs the suites again as
# modules (tools/kunit/kunit-modules.sh), all but those kunit/builtin-only
# names.
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
name=$(basename "$out")
full=""
[ -z "$filter" ] && [ "$arch" = x86_64 ] && full=-builtin
# shellcheck disable=SC2086 # $suites is a list of names
tools/kunit/kunit_report.py --stage "$name$full" --arch "$arch" \
	--log "$build/test.log" --json "$out.json" \
	--console-out "$out-console.log" --ktap-out "$out.ktap" \
	--cases-out "$out-cases.txt" --skips kunit/skips.txt \
	--filter "$filter" --suites $suites >"$out.verdict" || rc=1
cat "$out.verdict"
[ -n "$full" ] || exit "$rc"

# The full x86_64 run also runs the xfs suite again on the same kernel with
# every xfs tracepoint enabled (the trace classes follow the harness's
# m_super and i_sb), and loads the suites as modules.  Its verdict line sums
# the three.
# tp_printk prints each event on the console, which proves they fired.
rm -f "$out-xfs-trace.json"
/usr/bin/python3 "$tree/tools/testing/kunit/kunit.py" exec --arch=x86_64 \
	--build_dir "$(realpath "$build")" --timeout 600 \
	--json="$(realpath -m "$out-xfs-trace.json")" \
	--kernel_args rcupdate.rcu_cpu_stall_timeout=300 --qemu_args '-smp 2' \
	--kernel_args i8042.noaux --kernel_args i8042.nokbd \
	--kernel_args 'trace_event=xfs:*' --kernel_args tp_printk \
	xfs_bmap_shift >/dev/null 2>&1 || true
# shellcheck disable=SC2086 # $suites is a list of names
tools/kunit/kunit_report.py --stage "$name-xfs-trace" --arch "$arch" \
	--log "$build/test.log" --json "$out-xfs-trace.json" \
	--console-out "$out-xfs-trace-console.log" \
	--ktap-out "$out-xfs-trace.ktap" --cases-out "$out-xfs-trace-cases.txt" \
	--skips kunit/skips.txt --filter xfs_bmap_shift \
	--suites $suites >"$out-xfs-trace.verdict" || rc=1
cat "$out-xfs-trace.verdict"
events=$(grep -cE '^(\[[ 0-9.]*\] )?xfs_[a-z0-9_]+: dev [0-9]+:[0-9]+ ' \
	"$out-xfs-trace-console.log" || true)
echo "$name-xfs-trace: $events xfs trace events printed"
if [ "$events" -eq 0 ]; then
	echo "$name: ERROR: the xfs tracepoint run printed no xfs trace event"
	rc=1
fi

# shellcheck disable=SC2086 # $suites is a list of names
KUNIT_MODULES_SEED=$build tools/kunit/kunit-modules.sh "$tree" "$build-modules" "$out-modules" \
	"$(echo $suites | tr ' ' '\n' | grep -vxF -f kunit/builtin-only | tr '\n' ' ')" \
	"$@" kconfig/kunit-modules.config >"$out-modules.verdict" || rc=1
cat "$out-modules.verdict"
tail -q -n 1 "$out.verdict" "$out-xfs-trace.verdict" "$out-modules.verdict" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' |
	awk -v name="$name" -v rc="$rc" '{ p += $1; f += $2; s += $3 }
		END { if (rc != 0 && f == 0) f = 1
		      printf "%s: %d passed, %d failed, %d skipped\n", name, p, f, s }'
exit "$rc"
