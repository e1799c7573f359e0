#!/bin/sh
# Refuse to start a long run that the disk cannot hold: a full disk
# half way through fails a stage with errors that name the symptom (dd,
# ld, tee: "No space left on device"), not the cause.
#
# usage: tools/lib/disk_space.sh WHAT DIR GIB
# GIB is what DIR grows to in a cold run; what DIR already holds counts
# towards it.  Prints the space free and needed; exits 1 when the free
# space is short.
set -eu

what=$1 dir=$2 peak=$3
mkdir -p "$dir"
free=$(df -Pk "$dir" | awk 'NR == 2 { print int($4 / 1048576) }')
held=$(du -sk "$dir" | awk '{ print int($1 / 1048576) }')
need=$((peak > held ? peak - held : 0))
if [ "$free" -lt "$need" ]; then
	echo "$what: ERROR: $free GiB free under $dir, $held GiB held there; $what needs about $need GiB more (build trees, disk images)"
	exit 1
fi
echo "$what: $free GiB free under $dir, $held GiB held there (needs about $need GiB more)"
