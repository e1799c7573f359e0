#!/bin/sh
# Run several make stage targets, going on past a failing one, then sum
# their results into one line.
#
# usage: tools/lib/run_stages.sh TOTAL STAGE...
# Environment: TIMED_BEFORE, the steps timed before the stages whose times
# head the summary's table (comma separated; make test: deps,tree).
set -eu

total=$1
shift
for stage in "$@"; do
	echo "== $total: make $stage"
	${MAKE:-make} --no-print-directory "$stage" || true
done
exec tools/lib/summary.py --timed-before "${TIMED_BEFORE:-}" "$total" "$@"
