#!/bin/sh
# `make crashreplay`: every crash state of a collapse/insert workload on
# ext4 (4 KiB and 1 KiB blocks), xfs and f2fs, by dm-log-writes record and replay,
# in QEMU.
#
# For each filesystem the host makes an image (the mkfs options of
# tools/vmtest/guest/filesystems.txt) and a byte-for-byte copy of it, and
# boots KERNEL with both, a log disk and a scratch disk.  In the guest
# (tools/crashreplay/guest/crashreplay-run) fsmodel's crash workload runs
# on the filesystem through a dm-log-writes target, which logs every write,
# flush and FUA the filesystem sends, and a mark after every operation
# starts, ends or is made durable.  Then logreplay applies the log to the
# copy entry by entry and, at every crash state (MODE flush: each flush or
# FUA entry, the states a power cut can leave when the disk honours
# flushes; MODE write: every entry, which adds the states between them),
# crashreplay-check mounts a snapshot of the copy (the journal replays),
# checks the file against the operations durable and in flight with
# fsmodel --crash-check, and runs fsck.  Nothing is mounted on the host;
# the host fscks the recorded image at the end.
#
# usage: tools/crashreplay/crashreplay.sh KERNEL [OPS [MODE]]
# OPS operations per filesystem (default 400), MODE flush (default) or
# write.  Environment: CRASHREPLAY_SEED (default random),
# CRASHREPLAY_FS (default "ext4 ext4-1k xfs f2fs"), CRASHREPLAY_OUT (default
# build/crashreplay), CRASHREPLAY_STATE=N (check only state N of a run: the
# command a failure prints), CRASHREPLAY_FROM=DIR (replay the logs a failed
# run kept in DIR, the OUT of that run, instead of recording: with its
# seed and CRASHREPLAY_STATE, exactly the failed state), CRASHREPLAY_STATES=MAX (check the first MAX
# states of each log, and fail a log with fewer: a count that does not
# vary with the timing of the run, which `make test` quotes),
# CRASHREPLAY_FIRST=N (with CRASHREPLAY_FROM: replay the states before
# N unchecked, so that two guests share the states of one long log).
# Output: OUT.log, OUT/NAME/ (results, console; the images of a failed
# filesystem, its log and first image among them); the last line "crashreplay: N passed, N failed, N
# skipped", N counting crash states.
set -eu

cd "$(dirname "$0")/../.."
out=${CRASHREPLAY_OUT:-build/crashreplay}
if [ -z "${CRASHREPLAY_LOGGING:-}" ]; then
	CRASHREPLAY_LOGGING=1 exec tools/lib/logged.sh "$out.log" "$0" "$@"
fi

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
	echo "usage: tools/crashreplay/crashreplay.sh KERNEL [OPS [MODE]]" >&2
	exit 2
fi
kernel=$1 ops=${2:-400} mode=${3:-flush}
filesystems=${CRASHREPLAY_FS:-ext4 ext4-1k xfs f2fs}
seed=${CRASHREPLAY_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
state=${CRASHREPLAY_STATE:-}
from=${CRASHREPLAY_FROM:-}
start=$(date +%s)

die() {
	echo "crashreplay: ERROR: $*"
	echo "crashreplay: 0 passed, 1 failed, 0 skipped"
	exit 1
}

case $mode in flush|write) ;; *) die "MODE is flush or write, not $mode" ;; esac
states=${CRASHREPLAY_STATES:-}
first=${CRASHREPLAY_FIRST:-}
replay_mode=$mode${state:+:$state}
[ -z "$state" ] && replay_mode=$replay_mode${first:++$first}${states:+/$states}
[ -f "$kernel" ] || die "no kernel at $kernel (build it with 'make kunit')"
for tool in qemu-system-x86_64 busybox gcc mkfs.ext4 e2fsck mkfs.xfs xfs_repair mkfs.f2fs fsck.f2fs python3; do
	command -v "$tool" >/dev/null 2>&1 || die "missing host tool '$tool' (make deps)"
done
rm -rf "$out"
mkdir -p "$out"
for prog in fsmodel:tools/vmtest/guest/fsmodel logreplay:tools/crashreplay/guest; do
	gcc -static -O2 -Wall -Wextra -Werror -o "$out/${prog%%:*}" "${prog#*:}"/*.c ||
		die "cannot build ${prog#*:} statically (gcc, libc6-dev)"
done
# The guest's flushes must reach the images: O_DIRECT where the host allows.
cache=$(tools/lib/flush_cache_mode.sh "$out")
echo "crashreplay: kernel $kernel; $ops operations on each of $filesystems; states at every $replay_mode entry; seed $seed (CRASHREPLAY_SEED=$seed repeats it)"

# A state takes about a second under TCG, a log about half a state an
# operation: two seconds an operation is room for a busy host.
timeout=$((ops * 2 > 5400 ? ops * 2 : 5400))

# One guest per filesystem, two at a time (one CPU each); a filesystem
# whose setup fails says why in NAME/setup.err.
run_fs() {
	name=$1
	dir=$out/$name
	mkdir -p "$dir"
	# shellcheck disable=SC2046 # split the table line into its fields
	set -- $(awk -v n="$name" '$1 == n' tools/vmtest/guest/filesystems.txt)
	[ $# -ge 6 ] || { echo "crashreplay: $name: not in tools/vmtest/guest/filesystems.txt" >"$dir/setup.err"; return 1; }
	type=$2 mb=$3 unit=$4 block=$5
	shift 6
	if [ -n "$from" ]; then
		# Replay a kept log onto the first image it was recorded on.
		cp --sparse=always "$from/$name/$name-first.img" "$dir/$name.img" 2>"$dir/setup.err" &&
			cp --sparse=always "$from/$name/$name-log.img" "$dir/$name-log.img" 2>"$dir/setup.err" ||
			return 1
		step=replay
	else
		tools/vmtest/vmtest-mkfs.sh "$type" "$mb" "$dir/$name.img" "$@" >/dev/null 2>"$dir/setup.err" || return 1
		truncate -s 2G "$dir/$name-log.img"
		step=record
	fi
	# The first image three times: recorded on, replayed onto, and kept.
	cp --sparse=always "$dir/$name.img" "$dir/$name-replay.img"
	cp --sparse=always "$dir/$name.img" "$dir/$name-first.img"
	truncate -s 256M "$dir/$name-cow.img"
	{
		echo "$name raw - crashreplay-run $name $type $unit $block $seed $ops $replay_mode $step"
		for disk in log replay cow; do
			echo "$name-$disk disk -"
		done
	} >"$dir/vmtest.conf"
	VMTEST_HOST_TOOLS="e2fsck xfs_repair fsck.f2fs" tools/vmtest/vmtest-initramfs.sh \
		"$dir/initramfs.cpio.gz" "$dir/vmtest.conf" "$out/fsmodel" "$out/logreplay" \
		tools/crashreplay/guest/crashreplay-run tools/crashreplay/guest/crashreplay-check \
		tools/vmtest/vmtest-fsck.sh ||
		return 1
	VMTEST_CACHE=$cache tools/vmtest/vmtest-boot.sh "$name" "$kernel" "$dir" \
		"$dir/results" "$dir/console" "$timeout" 1024 1
}

# Lane K runs every second filesystem from the Kth, one after another.
lane() {
	i=0
	for name in $filesystems; do
		if [ $((i % 2)) = "$1" ]; then
			run_fs "$name" || true
		fi
		i=$((i + 1))
	done
}
lane 0 &
lane 1 &
wait

passed=0 failed=0
for name in $filesystems; do
	dir=$out/$name
	type=$(awk -v n="$name" '$1 == n { print $2 }' tools/vmtest/guest/filesystems.txt)
	results=$(tr -d '\r' <"$dir/results" 2>/dev/null || true)
	ok=$(echo "$results" | grep -c '^ok ' || true)
	bad=$(echo "$results" | grep -c '^not ok ' || true)
	said=$(echo "$results" | sed -n 's/^# logreplay: \([0-9]*\) states$/\1/p')
	problems=""
	[ -s "$dir/setup.err" ] && problems="$problems setup: $(head -c 300 "$dir/setup.err");"
	echo "$results" | grep -q "^vmtest-end $name status=0 " ||
		problems="$problems the guest did not finish ($(echo "$results" | grep "^vmtest-end $name" || echo 'no end line'));"
	[ "$said" = "$((ok + bad))" ] ||
		problems="$problems the replay reported ${said:-no} states, the checks $((ok + bad));"
	[ $((ok + bad)) -gt 0 ] || problems="$problems no state was checked;"
	if ! tools/vmtest/vmtest-fsck.sh "$type" "$dir/$name.img" >"$dir/fsck.log" 2>&1; then
		problems="$problems fsck of the recorded image failed ($dir/fsck.log);"
	fi
	splats=$(tools/lib/splat.py "$dir/console" || true)
	[ -n "$splats" ] && problems="$problems kernel splat: $(echo "$splats" | head -n 3 | tr '\n' ' ');"
	entries=$(echo "$results" | sed -n 's/^# logreplay: .*: \([0-9]*\) entries.*/\1/p')
	echo "crashreplay: $name: $ok states passed, $bad failed, of ${entries:-?} log entries"
	echo "$results" | grep -A 30 '^not ok ' | head -n 60 | sed 's/^/    /' || true
	echo "$results" | sed -n 's/^not ok \([0-9]*\) - .*/\1/p' | head -n 3 |
		while read -r n; do
			echo "    replay just this state from the kept log: CRASHREPLAY_FROM=$out CRASHREPLAY_OUT=$out-again CRASHREPLAY_SEED=$seed CRASHREPLAY_FS=$name CRASHREPLAY_STATE=$n tools/crashreplay/crashreplay.sh $kernel $ops $mode"
		done
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ -n "$problems" ]; then
		echo "crashreplay: $name FAILED:$problems"
		failed=$((failed + 1))
	else
		rm -f "$dir"/*.img "$dir/initramfs.cpio.gz"
	fi
done
echo "crashreplay: time $(($(date +%s) - start)) s"
echo "crashreplay: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
