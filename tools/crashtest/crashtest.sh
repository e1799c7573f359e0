#!/bin/sh
# `make crashtest`: crash injection for collapse and insert range on ext4
# and xfs, in QEMU.
#
# Each run makes fresh ext4 and xfs images (the mkfs options of
# tools/vmtest/guest/filesystems.txt) on disks in a cache mode that honours
# flushes: cache=none, or cache=writethrough where the host filesystem
# refuses O_DIRECT.  A first boot of KERNEL runs tools/vmtest/guest/fsmodel's
# crash workload on both at once: on each, a file of a secret pattern is
# written, fsync'd and deleted, a second file of known data written, and
# then collapse- and insert-heavy operations run on a third, every step
# logged on the results port (fsmodel --help: the log).  One filesystem
# leads the run: its workload reboots the machine with SysRq b itself, at
# its Tth valid shift or a later one, before the shift, during it (from a
# second thread; three seeds in five) or after it; the other is wherever
# it is then.  A second
# boot mounts each filesystem, which replays its journal, and checks with
# fsmodel --crash-check that every block of the file is one the
# operations after the last fsync can leave, that no word of the secret or
# the second file is in it and that the second file is intact.  The host
# then runs fsck on each image.
#
# A run passes only if its logs show the crash and nothing else: each
# workload began, logged no error and never ended; the leader logged its
# crash point; the other's last line is at most STALL seconds older than
# the crash (a hung operation fails, as does a leader stopped by the
# init's deadline); neither boot shows a kernel splat or an unexpected
# line; both filesystems mount; the checks pass; fsck is clean.  Nothing
# is skipped.
#
# usage: tools/crashtest/crashtest.sh KERNEL [COUNT]
# COUNT runs (default 20), each crashing both filesystems.  Environment:
# CRASHTEST_SEED (default random): run N uses seed+N for the workload and
# the crash point; CRASHTEST_OUT (default build/crashtest).
# Output: OUT.log (this output) and OUT/runN/ (the images of a failed
# run, the logs and consoles of every run).  Each run's line says where
# the crash landed on each filesystem and which states its file shows
# (found=, fsmodel --crash-check); it ends with the crash points by
# position, the time, and "crashtest: N passed, N failed, 0 skipped".
set -eu

cd "$(dirname "$0")/../.."
out=${CRASHTEST_OUT:-build/crashtest}

# Keep everything this script prints in OUT.log.
if [ -z "${CRASHTEST_LOGGING:-}" ]; then
	CRASHTEST_LOGGING=1 exec tools/lib/logged.sh "$out.log" "$0" "$@"
fi

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: tools/crashtest/crashtest.sh KERNEL [COUNT]" >&2
	exit 2
fi
kernel=$1
count=${2:-20}
filesystems="ext4 xfs"
# The longest an operation may have run at the crash, and the init's
# deadline: a leader that has not crashed the machine by then has hung.
stall=2
deadline=120
base=${CRASHTEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
start=$(date +%s)

die() {
	echo "crashtest: ERROR: $*"
	echo "crashtest: 0 passed, 1 failed, 0 skipped"
	exit 1
}

[ -f "$kernel" ] || die "no kernel at $kernel (build it with 'make kunit')"
for tool in qemu-system-x86_64 busybox gcc mkfs.ext4 e2fsck mkfs.xfs xfs_repair python3; do
	command -v "$tool" >/dev/null 2>&1 || die "missing host tool '$tool' (make deps)"
done
rm -rf "$out"
mkdir -p "$out"
gcc -static -O2 -Wall -Wextra -Werror -o "$out/fsmodel" tools/vmtest/guest/fsmodel/*.c ||
	die "cannot build tools/vmtest/guest/fsmodel/ statically (gcc, libc6-dev)"

# The guest's flushes must reach the image: O_DIRECT where the host allows.
cache=$(tools/lib/flush_cache_mode.sh "$out")
echo "crashtest: kernel $kernel; $count runs on $filesystems; disks cache=$cache; seeds $((base + 1))..$((base + count)) (CRASHTEST_SEED=$base repeats them)"

# The lines of complete log lines: the last one may have been cut by the crash.
complete_lines() {
	if [ -n "$(tail -c 1 "$1")" ]; then
		sed '$d' "$1"
	else
		cat "$1"
	fi | tr -d '\r'
}

# The crash log of NAME in FILE, as "BEGUN DURABLE STARTED POSITION
# CRASH-TIME LAST-TIME LAST-WORD": POSITION is where the crash landed
# (before:N, during:N or after:N for shift N, after:N+K when K more
# operations had started since; before:first before any shift), CRASH-TIME the
# time of the point line (none: no such line).
crash_summary() {
	complete_lines "$2" | awk -v n="$1" '
		$1 != "crash" || $2 != n { next }
		{ t = $NF; sub(/^t=/, "", t); last_t = t; last = $3 }
		$3 == "begin" { begun = 1 }
		$3 == "durable" { durable = $4 }
		$3 == "start" {
			started = $4
			if ($5 == "collapse" || $5 == "insert")
				shift = $4
		}
		$3 == "done" { done[$4] = 1 }
		$3 == "point" { where = $4; point = $5; crash_t = t }
		END {
			if (where == "before")
				pos = "before:" point
			else if (where == "during" && !done[point])
				pos = "during:" point
			else if (where != "")
				pos = "after:" point
			else if (shift == "")
				pos = "before:first"
			else if (shift == started && !done[shift])
				pos = "during:" shift
			else if (shift == started)
				pos = "after:" shift
			else
				pos = "after:" shift "+" started - shift
			printf "%d %d %d %s %s %s %s\n", begun, durable == "" ? -1 : durable,
				started == "" ? -1 : started, pos,
				crash_t == "" ? "none" : crash_t,
				last_t == "" ? 0 : last_t, last == "" ? "none" : last
		}'
}

# boot RUN-DIR WHAT [KERNEL-ARG...]: the guest of RUN-DIR/vmtest.conf,
# logs in RUN-DIR/WHAT.*; fails if QEMU did (a timeout: 124).
boot() {
	dir=$1 what=$2
	shift 2
	tools/vmtest/vmtest-initramfs.sh "$dir/initramfs.cpio.gz" "$dir/vmtest.conf" "$out/fsmodel" ||
		die "cannot build the initramfs"
	cp "$dir/vmtest.conf" "$dir/$what.conf"
	VMTEST_CACHE=$cache tools/vmtest/vmtest-boot.sh crashtest "$kernel" "$dir" \
		"$dir/$what.results" "$dir/$what.console" 300 2048 1 "$@" \
		>"$dir/$what.boot" 2>&1
}

passed=0 failed=0 before=0 during=0 after=0
i=1
while [ "$i" -le "$count" ]; do
	run=$out/run$i
	seed=$((base + i))
	# The leader, where it crashes and from which valid shift on: during
	# a shift, the most telling place, for three seeds in five in turn,
	# so that any five runs crash during a shift three times.
	# shellcheck disable=SC2046 # split the plan into its fields
	set -- $(echo "$filesystems" | awk -v s="$seed" '{ srand(s)
		split("during before during after during", where)
		print where[1 + s % 5], 3 + int(98 * rand()), $(1 + int(NF * rand())) }')
	where=$1 at=$2 leader=$3
	others=$(echo "$filesystems" | tr ' ' '\n' | grep -vx "$leader" | paste -sd, -)
	mkdir -p "$run"
	: >"$run/vmtest.conf"
	for name in $filesystems; do
		# shellcheck disable=SC2046 # split the table line into its fields
		set -- $(awk -v n="$name" '$1 == n' tools/vmtest/guest/filesystems.txt)
		type=$2 mb=$3 unit=$4 block=$5
		shift 6
		tools/vmtest/vmtest-mkfs.sh "$type" "$mb" "$run/$name.img" "$@" >/dev/null ||
			die "mkfs for $name failed"
		plan=""
		[ "$name" = "$leader" ] && plan=" -X $where -T $at -F $others"
		echo "$name $type defaults fsmodel --crash-workload -f $name -u $unit -b $block -S $seed -l /dev/ttyS1$plan" >>"$run/vmtest.conf"
	done
	boot_problem=""
	boot "$run" workload "VMTEST_CRASH_AFTER=$deadline" ||
		boot_problem=" the first boot failed ($run/workload.boot);"
	# shellcheck disable=SC2046 # the leader's summary, split
	set -- $(crash_summary "$leader" "$run/workload.results")
	crash_t=$5

	# The check: what the log says was durable, and what was started.
	: >"$run/vmtest.conf"
	for name in $filesystems; do
		# shellcheck disable=SC2046 # split the table line into its fields
		set -- $(awk -v n="$name" '$1 == n' tools/vmtest/guest/filesystems.txt)
		type=$2 unit=$4 block=$5
		# shellcheck disable=SC2046 # split the summary into its fields
		set -- $(crash_summary "$name" "$run/workload.results")
		echo "$name $type defaults fsmodel --crash-check -f $name -u $unit -b $block -S $seed -D $2 -J $3" >>"$run/vmtest.conf"
	done
	boot "$run" check || boot_problem="$boot_problem the second boot failed ($run/check.boot);"

	splats=$(tools/lib/splat.py "$run/workload.console" "$run/check.console" || true)
	# Every line of the first boot's results but those expected.
	unexpected=$(complete_lines "$run/workload.results" |
		grep -v -e '^vmtest-guest ' -e '^vmtest-begin [a-z0-9-]*$' \
			-e '^vmtest-crash in [0-9]* s$' \
			-e '^# fsmodel: [a-z0-9-]*: [a-z]* left out$' \
			-e '^crash [a-z0-9-]* \(begin\|start\|done\|durable\|point\|miss\|end\) ' |
		head -5 | tr '\n' '|' || true)
	line="crashtest: run $i/$count: seed $seed, $leader leads ($where its valid shift $at or a later one):"
	run_ok=1
	for name in $filesystems; do
		type=$(awk -v n="$name" '$1 == n { print $2 }' tools/vmtest/guest/filesystems.txt)
		# shellcheck disable=SC2046 # split the summary into its fields
		set -- $(crash_summary "$name" "$run/workload.results")
		begun=$1 durable=$2 started=$3 pos=$4 last_t=$6 last=$7
		problems=$boot_problem
		if [ "$begun" != 1 ]; then
			problems="$problems the workload did not begin;"
		fi
		if [ "$crash_t" = none ]; then
			problems="$problems no crash point logged by $leader: the init's deadline of $deadline s stopped the machine (a hang?);"
		elif [ "$last" != end ] &&
			awk -v c="$crash_t" -v l="$last_t" -v s="$stall" 'BEGIN { exit !(c - l > s) }'; then
			problems="$problems its last line ($last) is more than $stall s older than the crash: no progress;"
		fi
		[ -n "$unexpected" ] && problems="$problems unexpected lines: $unexpected;"
		check=$(tr -d '\r' <"$run/check.results" 2>/dev/null | grep "^ok 1 - $name crash\|^not ok 1 - $name crash" || true)
		case $check in
		"ok "*) ;;
		"not ok "*) problems="$problems the check failed ($run/check.results);" ;;
		*) problems="$problems no check result: $(tr -d '\r' <"$run/check.results" 2>/dev/null | grep "^vmtest-end $name" || echo 'the guest did not get to it');" ;;
		esac
		if ! tools/vmtest/vmtest-fsck.sh "$type" "$run/$name.img" >"$run/$name.fsck.log" 2>&1; then
			problems="$problems fsck failed ($run/$name.fsck.log);"
		fi
		[ -n "$splats" ] && problems="$problems kernel splat;"
		case $pos in
		before:*) before=$((before + 1)) ;;
		during:*) during=$((during + 1)) ;;
		*) after=$((after + 1)) ;;
		esac
		found=$(echo "$check" | sed -n 's/.* found=\([^ ]*\).*/\1/p')
		what="crash ${pos%%:*} shift op ${pos#*:}"
		[ "$pos" = before:first ] && what="crash before any shift"
		what="$what, durable $durable, started $started, found ${found:-nothing}"
		if [ -z "$problems" ]; then
			passed=$((passed + 1))
			line="$line $name ok ($what);"
		else
			failed=$((failed + 1))
			run_ok=0
			line="$line $name FAILED ($what):$problems"
		fi
	done
	echo "$line"
	if [ "$run_ok" = 1 ]; then
		rm -f "$run"/*.img "$run"/initramfs.cpio.gz
	else
		[ -n "$splats" ] && echo "$splats" | sed 's/^/    /'
		complete_lines "$run/workload.results" | grep '^crash [a-z0-9-]* \(error\|exit\)' | sed 's/^/    /' | head -10
		tr -d '\r' <"$run/check.results" 2>/dev/null | grep '^#' | sed 's/^/    /' | head -40
	fi
	i=$((i + 1))
done
echo "crashtest: crash points: $before before a shift, $during during one, $after after one"
echo "crashtest: time $(($(date +%s) - start)) s"
echo "crashtest: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
