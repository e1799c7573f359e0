#!/bin/sh
# `make crashtest`: crash injection for collapse and insert range on ext4
# and xfs, in QEMU.
#
# Each run makes fresh ext4 and xfs images (the mkfs options of
# tools/guest/filesystems.txt) on disks in a cache mode that honours
# flushes: cache=none, or cache=writethrough where the host filesystem
# refuses O_DIRECT.  A first boot of KERNEL runs tools/guest/fsmodel's
# crash workload on both at once (collapse and insert heavy, every
# operation logged before it starts and every fsync once it returned, on
# the results port), and the guest init kills the machine with SysRq b a
# random time later.  A second boot mounts each filesystem, which replays
# its journal, and checks the file with fsmodel --crash-check against the
# log: exactly the durable state if nothing had started since, else a
# state the operations in flight could have left.  The host then runs
# fsck on each image.  A filesystem passes a run when its workload found
# no error, neither boot shows a kernel splat, it mounts, the check passes
# and fsck is clean.
#
# usage: tools/crashtest.sh KERNEL [COUNT]
# COUNT runs (default 20), each crashing both filesystems.  Environment:
# CRASHTEST_SEED (default random): run N uses seed+N for the workload and
# the time of the crash; CRASHTEST_OUT (default build/crashtest).
# Output: OUT.log (this output) and OUT/runN/ (the images of a failed
# run, the logs and consoles of every run).  Ends with
# "crashtest: N passed, N failed, N skipped".
set -eu

cd "$(dirname "$0")/.."
out=${CRASHTEST_OUT:-build/crashtest}

# Keep everything this script prints in OUT.log.
if [ -z "${CRASHTEST_LOGGING:-}" ]; then
	mkdir -p "$out"
	rm -f "$out/rc"
	{ CRASHTEST_LOGGING=1 "$0" "$@" 2>&1 || echo $? >"$out/rc"; } |
		tee "$out.log"
	[ -f "$out/rc" ] && exit "$(cat "$out/rc")"
	exit 0
fi

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: tools/crashtest.sh KERNEL [COUNT]" >&2
	exit 2
fi
kernel=$1
count=${2:-20}
filesystems="ext4 xfs"
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
gcc -static -O2 -Wall -Wextra -Werror -o "$out/fsmodel" tools/guest/fsmodel.c ||
	die "cannot build tools/guest/fsmodel.c statically (gcc, libc6-dev)"

# The guest's flushes must reach the image: O_DIRECT where the host allows.
if dd if=/dev/zero of="$out/direct-io.probe" bs=4096 count=1 oflag=direct 2>/dev/null; then
	cache=none
else
	cache=writethrough
fi
rm -f "$out/direct-io.probe"
echo "crashtest: kernel $kernel; $count runs on $filesystems; disks cache=$cache; seeds $((base + 1))..$((base + count)) (CRASHTEST_SEED=$base repeats them)"

# The lines of complete log lines: the last one may have been cut by the crash.
complete_lines() {
	if [ -n "$(tail -c 1 "$1")" ]; then
		sed '$d' "$1"
	else
		cat "$1"
	fi | tr -d '\r'
}

# The last operation number the log gives for NAME and WHAT (-1: none).
last_logged() {
	complete_lines "$1" |
		awk -v n="$2" -v w="$3" '$1 == "crash" && $2 == n && $3 == w { x = $4 }
			END { print x == "" ? -1 : x }'
}

# boot RUN-DIR WHAT [KERNEL-ARG...]: the guest of RUN-DIR/vmtest.conf,
# logs in RUN-DIR/WHAT.*
boot() {
	dir=$1 what=$2
	shift 2
	tools/vmtest-initramfs.sh "$dir/initramfs.cpio.gz" "$dir/vmtest.conf" "$out/fsmodel" ||
		die "cannot build the initramfs"
	cp "$dir/vmtest.conf" "$dir/$what.conf"
	VMTEST_CACHE=$cache tools/vmtest-boot.sh crashtest "$kernel" "$dir" \
		"$dir/$what.results" "$dir/$what.console" 300 2048 1 "$@" \
		>"$dir/$what.boot" 2>&1 || true
}

passed=0 failed=0 skipped=0
i=1
while [ "$i" -le "$count" ]; do
	run=$out/run$i
	seed=$((base + i))
	crash_after=$(awk -v s="$seed" 'BEGIN { srand(s); printf "%.1f", 1 + 9 * rand() }')
	mkdir -p "$run"
	: >"$run/vmtest.conf"
	for name in $filesystems; do
		# shellcheck disable=SC2046 # split the table line into its fields
		set -- $(awk -v n="$name" '$1 == n' tools/guest/filesystems.txt)
		type=$2 mb=$3 unit=$4 block=$5
		shift 6
		tools/vmtest-mkfs.sh "$type" "$mb" "$run/$name.img" "$@" >/dev/null ||
			die "mkfs for $name failed"
		echo "$name $type defaults fsmodel --crash-workload -f $name -u $unit -b $block -S $seed -l /dev/ttyS1" >>"$run/vmtest.conf"
	done
	boot "$run" workload "VMTEST_CRASH_AFTER=$crash_after"

	# The check: what the log says was durable, and what was in flight.
	: >"$run/vmtest.conf"
	for name in $filesystems; do
		# shellcheck disable=SC2046 # split the table line into its fields
		set -- $(awk -v n="$name" '$1 == n' tools/guest/filesystems.txt)
		type=$2 unit=$4 block=$5
		durable=$(last_logged "$run/workload.results" "$name" durable)
		started=$(last_logged "$run/workload.results" "$name" start)
		echo "$name $type defaults fsmodel --crash-check -f $name -u $unit -b $block -S $seed -D $durable -J $started" >>"$run/vmtest.conf"
	done
	boot "$run" check

	splats=$(tools/splat.py "$run/workload.console" "$run/check.console" || true)
	line="crashtest: run $i/$count: seed $seed, SysRq b after $crash_after s:"
	run_ok=1
	for name in $filesystems; do
		type=$(awk -v n="$name" '$1 == n { print $2 }' tools/guest/filesystems.txt)
		durable=$(last_logged "$run/workload.results" "$name" durable)
		started=$(last_logged "$run/workload.results" "$name" start)
		problems=""
		if ! grep -q '^vmtest-guest ' "$run/workload.results" 2>/dev/null; then
			problems="$problems the guest did not boot ($run/workload.console);"
		elif ! complete_lines "$run/workload.results" | grep -q "^crash $name begin"; then
			skipped=$((skipped + 1))
			line="$line $name: skipped (the crash came before the workload began);"
			continue
		fi
		workload_error=$(complete_lines "$run/workload.results" | grep "^crash $name error" || true)
		[ -n "$workload_error" ] && problems="$problems workload: $workload_error;"
		check=$(tr -d '\r' <"$run/check.results" | grep "^ok 1 - $name crash\|^not ok 1 - $name crash" || true)
		case $check in
		"ok "*) ;;
		"not ok "*) problems="$problems the check failed ($run/check.results);" ;;
		*) problems="$problems no check result: $(tr -d '\r' <"$run/check.results" | grep "^vmtest-end $name" || echo 'the guest did not get to it');" ;;
		esac
		if ! tools/vmtest-fsck.sh "$type" "$run/$name.img" >"$run/$name.fsck.log" 2>&1; then
			problems="$problems fsck failed ($run/$name.fsck.log);"
		fi
		[ -n "$splats" ] && problems="$problems kernel splat;"
		if [ -z "$problems" ]; then
			passed=$((passed + 1))
			line="$line $name ok (durable $durable, started $started);"
		else
			failed=$((failed + 1))
			run_ok=0
			line="$line $name FAILED:$problems"
		fi
	done
	echo "$line"
	if [ "$run_ok" = 1 ]; then
		rm -f "$run"/*.img "$run"/initramfs.cpio.gz
	else
		[ -n "$splats" ] && echo "$splats" | sed 's/^/    /'
		tr -d '\r' <"$run/check.results" | grep '^#' | sed 's/^/    /' | head -40
	fi
	i=$((i + 1))
done
echo "crashtest: time $(($(date +%s) - start)) s"
echo "crashtest: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
