#!/bin/sh
# Run a command, then print how long it took and add the seconds to
# build/logs/NAME.time, a line a run, for tools/lib/summary.py's table of
# stage times (make test's tree step runs once for it and once inside
# each stage that needs the tree).  Passes the command's exit status on.
#
# usage: tools/lib/timed.sh NAME COMMAND [ARG...]
set -eu

name=$1
shift
mkdir -p build/logs
start=$(date +%s)
rc=0
"$@" || rc=$?
secs=$(($(date +%s) - start))
echo "$secs" >>"build/logs/$name.time"
echo "$name: wall time $((secs / 60)) min $((secs % 60)) s"
exit "$rc"
