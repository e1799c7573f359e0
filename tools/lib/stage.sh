#!/bin/sh
# Run one test stage, keep its output in build/logs/NAME.log and its exit
# status in build/logs/NAME.rc for tools/lib/summary.py, and pass the status on.
#
# usage: tools/lib/stage.sh NAME COMMAND [ARG...]
set -eu

name=$1
shift
logs=build/logs
mkdir -p "$logs"
rm -f "$logs/$name.rc"
rc=0
# The pipeline's status is tee's; the command's own goes through a file.
{ "$@" 2>&1 || echo $? >"$logs/$name.rc.tmp"; } | tee "$logs/$name.log"
[ -f "$logs/$name.rc.tmp" ] && rc=$(cat "$logs/$name.rc.tmp")
rm -f "$logs/$name.rc.tmp"
echo "$rc" >"$logs/$name.rc"
exit "$rc"
