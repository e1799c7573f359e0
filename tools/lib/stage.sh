#!/bin/sh
# Run one test stage, keep its output in build/logs/NAME.log, its exit
# status in build/logs/NAME.rc and its wall time in build/logs/NAME.time
# for tools/lib/summary.py, and pass the status on.  The log ends with the
# wall time, after the stage's result line.  Under make test (TEST_RUN,
# its id) the log starts with "NAME: a stage of make test run ID", which
# tools/tree/cover_letter.py requires of every log it quotes.
#
# usage: tools/lib/stage.sh NAME COMMAND [ARG...]
set -eu

name=$1
shift
logs=build/logs
mkdir -p "$logs"
rm -f "$logs/$name.rc" "$logs/$name.time"
rc=0
# The pipeline's status is tee's; the command's own goes through a file.
{ [ -z "${TEST_RUN:-}" ] || echo "$name: a stage of make test run $TEST_RUN"
  "$(dirname "$0")/timed.sh" "$name" "$@" 2>&1 || echo $? >"$logs/$name.rc.tmp"; } | tee "$logs/$name.log"
[ -f "$logs/$name.rc.tmp" ] && rc=$(cat "$logs/$name.rc.tmp")
rm -f "$logs/$name.rc.tmp"
echo "$rc" >"$logs/$name.rc"
exit "$rc"
