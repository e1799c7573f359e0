#!/bin/sh
# Run COMMAND with everything it prints on stdout and also in LOG, and
# exit with its status (a pipe into tee alone would give tee's).
#
# usage: tools/lib/logged.sh LOG COMMAND [ARG...]
set -eu

log=$1
shift
mkdir -p "$(dirname "$log")"
status=$(mktemp)
{ "$@" 2>&1 || echo $? >"$status"; } | tee "$log"
rc=$(cat "$status")
rm -f "$status"
exit "${rc:-0}"
