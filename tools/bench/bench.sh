#!/bin/sh
# `make bench`: collapse and insert range against the user-space
# alternative (shifting the tail with pread/pwrite), on ext4, xfs, f2fs,
# tmpfs and tmpfs with huge=always, timed in one boot of KERNEL in QEMU.
#
# The guest harness is `make vmtest`'s: sparse images made on the host
# with mkfs (the mkfs options of tools/vmtest/guest/filesystems.txt), a busybox
# initramfs whose init runs tools/vmtest/guest/bench.c on each filesystem, the
# results over a serial port.  tools/bench/bench-report.py then writes the
# tables, the CSV files and the plot.
#
# usage: tools/bench/bench.sh KERNEL
# Environment: QUICK=1 for the short run; SIZES, file sizes in MiB (space
# or comma separated; default 1 4 16 64 256 1024, with QUICK 1 4 16: the
# small ones are what f2fs, whose calls grow with the file, can afford);
# BENCH_TIMEOUT (seconds for the guest), BENCH_MEM (MiB, default 4096).
# Output in build/bench/: results.md (the tables, also printed),
# headline.txt (the warm 4 KiB collapse at offset 0, one line per
# filesystem and size, printed last), samples.csv, summary.csv, plot.png,
# console.log (the kernel console).
set -eu

cd "$(dirname "$0")/../.."
out=build/bench
table=tools/vmtest/guest/filesystems.txt
start=$(date +%s)

die() {
	echo "bench: ERROR: $*" >&2
	exit 1
}

[ $# -eq 1 ] || { echo "usage: tools/bench/bench.sh KERNEL" >&2; exit 2; }
kernel=$1
[ -f "$kernel" ] || die "no kernel at $kernel (build it with 'make kunit', or give KERNEL=)"

# What to measure, in order of priority.  Every figure is the median of
# REPS repetitions, and each filesystem has a time budget: the guest
# skips a method whose repetitions it predicts would end past it (see
# tools/vmtest/guest/bench.c), so the run ends in time on a slow or busy host.
#   headline  (QUICK only, ext4, xfs and tmpfs) 64 MiB, 4 KiB at offset 0,
#             warm: the file size headline.txt must have, which the
#             quick sizes lack;
#   targets   tmpfs, 256 MiB, a 4 KiB collapse at offset 0 with 4k pages
#             and a 2 MiB (huge-page aligned) one with huge=always: the
#             figures issue #9 asks for;
#   scaling   4 KiB at offset 0, warm and cold, at every size up to 64 MiB
#             (the plot; larger sizes come after frag); with huge pages
#             first the aligned 2 MiB shift at every size;
#   frag      a 64 MiB file of 1 to 16384 extents, cold: the extent work
#             alone;
#   cases     4 KiB and 1 MiB (and 2 MiB with huge pages), at 0 and in
#             the middle, warm and cold, at every size.
# The quick run keeps the headline, the targets, the scaling on small
# files and a small fragmentation series.  The first case of a
# filesystem always runs (nothing predicts it), so the headline does: on
# ext4 it takes about 25 of the quick 40 s, and tmpfs's budget holds it
# and the 256 MiB target with its user-space side.  f2fs, without the
# headline, keeps the short budget.
reps=5
if [ "${QUICK:-}" = 1 ]; then
	sizes=${SIZES:-1 4 16}
	headline="-p 64/4k/0/warm"
	frag=16/4k/0/cold/1,256
	budget_disk=40 budget_f2fs=10 budget_tmpfs=90
else
	sizes=${SIZES:-1 4 16 64 256 1024}
	headline=
	frag=64/4k/0/cold/1,64,4096,16384
	budget_disk=210 budget_f2fs=210 budget_tmpfs=150
fi
sizes=$(echo "$sizes" | tr ' ' ',' | sed 's/,,*/,/g; s/^,//; s/,$//')
echo "$sizes" | grep -Eq '^[0-9]+(,[0-9]+)*$' || die "SIZES: want MiB numbers, got '$sizes'"
largest=$(echo "$sizes,256" | tr ',' '\n' | sort -n | tail -1)
small=$(echo "$sizes" | tr ',' '\n' | awk '$1 <= 64' | paste -sd, -)
large=$(echo "$sizes" | tr ',' '\n' | awk '$1 > 64' | paste -sd, -)
scaling="${small:+-p $small/4k/0/warm,cold}"
large_scaling="${large:+-p $large/4k/0/warm,cold}"
cases="-p $sizes/4k,1m/0,mid/warm,cold"
huge_cases="$cases -p $sizes/2m/0,mid/warm"
[ "${QUICK:-}" = 1 ] && cases='' huge_cases=''
timeout=${BENCH_TIMEOUT:-$((2 * budget_disk + budget_f2fs + 2 * budget_tmpfs + 300))}

# Host tools: each named with the Debian package that provides it.
for tool in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static gcc:gcc \
	cpio:cpio gzip:gzip ldd:libc-bin xfs_io:xfsprogs fallocate:util-linux \
	mkfs.ext4:e2fsprogs mkfs.xfs:xfsprogs mkfs.f2fs:f2fs-tools gnuplot:gnuplot-nox; do
	command -v "${tool%%:*}" >/dev/null 2>&1 ||
		die "missing host tool '${tool%%:*}' (Debian package ${tool#*:})"
done
[ -f /usr/share/seabios/bios-256k.bin ] || die "missing /usr/share/seabios/bios-256k.bin (Debian package seabios)"

mkdir -p "$out"
rm -f "$out"/*.img "$out"/*.img.mkfs.log "$out/results.txt" "$out/headline.txt"

# The guest's fsync must reach the host's disk, or it costs the
# user-space shift next to nothing: O_DIRECT (cache=none) where the host
# filesystem allows it, else writethrough.
cache=$(tools/lib/flush_cache_mode.sh "$out")
echo "bench: kernel $kernel; sizes $sizes MiB; $reps repetitions${QUICK:+ (QUICK)};" \
	"disks cache=$cache"
gcc -static -O2 -Wall -Wextra -Werror -o "$out/bench" tools/vmtest/guest/bench.c ||
	die "cannot build tools/vmtest/guest/bench.c statically (gcc, libc6-dev)"

# Scratch images, sparse, with room for the largest file twice over (f2fs
# writes moved blocks anew before the old ones are freed) and the guest's
# list: NAME TYPE MOUNT-OPTIONS COMMAND.
image_mb=$((largest * 3 + 512))
tmpfs_opts=size=$((largest * 2 + 256))m
: >"$out/vmtest.conf"
for name in ext4 xfs f2fs; do
	line=$(awk -v n="$name" '$1 == n' "$table")
	[ -n "$line" ] || die "no line for $name in $table"
	# shellcheck disable=SC2086 # split the table line into its fields
	set -- $line
	type=$2
	shift 6
	echo "bench: mkfs.$type $* ($name, $image_mb MiB sparse image)"
	tools/vmtest/vmtest-mkfs.sh "$type" "$image_mb" "$out/$name.img" "$@" ||
		die "mkfs for $name failed"
	# f2fs's calls grow with the file: a 64 MiB headline would take minutes.
	case $name in
	f2fs) lead='' budget=$budget_f2fs ;;
	*) lead=$headline budget=$budget_disk ;;
	esac
	echo "$name $type defaults bench -n $name -r $reps -t $budget" \
		"$lead $scaling -p $frag $large_scaling $cases" >>"$out/vmtest.conf"
done
echo "tmpfs tmpfs $tmpfs_opts,huge=never bench -n tmpfs -r $reps -t $budget_tmpfs" \
	"$headline -p 256/4k/0/warm $scaling $large_scaling $cases" >>"$out/vmtest.conf"
echo "tmpfs-huge tmpfs $tmpfs_opts,huge=always bench -n tmpfs-huge -r $reps -t $budget_tmpfs" \
	"-p 256/2m/0/warm -p $sizes/2m/0/warm $scaling $large_scaling $huge_cases" >>"$out/vmtest.conf"
tools/vmtest/vmtest-initramfs.sh "$out/initramfs.cpio.gz" "$out/vmtest.conf" "$out/bench" ||
	die "cannot build the initramfs"

# A long in-kernel call (f2fs moves a large file block by block) must not
# be reported as an RCU stall: the limit make kunit uses.
qemu_rc=0
VMTEST_CACHE=$cache tools/vmtest/vmtest-boot.sh bench "$kernel" "$out" "$out/results.txt" \
	"$out/console.log" "$timeout" "${BENCH_MEM:-4096}" 1 \
	rcupdate.rcu_cpu_stall_timeout=300 || qemu_rc=$?

/usr/bin/python3 tools/bench/bench-report.py --results "$out/results.txt" \
	--console "$out/console.log" --out "$out" --kernel "$kernel" \
	--disk-cache "$cache" --qemu-rc "$qemu_rc" --seconds "$(($(date +%s) - start))"
