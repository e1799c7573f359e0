#!/bin/sh
# The read-latency part of `make bench`: what a reader pays while the file
# it reads is collapsed.  Boots the series kernel and the same
# configuration without the series (`make bench-kernel` and `make
# bench-base-kernel`), one after the other in the same run, with two CPUs
# each, and runs tools/vmtest/guest/readlat.c on ext4 and f2fs, the two
# filesystems whose buffered reads the series makes wait for a shift:
# pread() of the first page in a loop while 4 KiB is collapsed below the
# middle of a file with a dirty tail ("below": the read ends before the
# shifted range) and at offset 0 ("over").  Prints one table of medians
# over the repetitions and their ratio, series over base; each image is
# checked with its fsck after each guest.
#
# usage: tools/bench/bench-readlat.sh SERIES_KERNEL BASE_KERNEL
# Environment: READLAT_MIB (file size, default 64), READLAT_REPS (default 5).
# Output in build/bench-readlat/: results.md (the table, also printed),
# samples.csv, and each kernel's console and raw results.
set -eu

cd "$(dirname "$0")/../.."
out=build/bench-readlat
table=tools/vmtest/guest/filesystems.txt

die() {
	echo "bench-readlat: ERROR: $*" >&2
	exit 1
}

[ $# -eq 2 ] || { echo "usage: tools/bench/bench-readlat.sh SERIES_KERNEL BASE_KERNEL" >&2; exit 2; }
series_kernel=$1 base_kernel=$2
mib=${READLAT_MIB:-64}
reps=${READLAT_REPS:-5}
filesystems="ext4 f2fs"

mkdir -p "$out"
gcc -static -O2 -Wall -Wextra -Werror -pthread -o "$out/readlat" \
	tools/vmtest/guest/readlat.c ||
	die "cannot build tools/vmtest/guest/readlat.c statically (gcc, libc6-dev)"
: >"$out/vmtest.conf"
for name in $filesystems; do
	echo "$name $name defaults readlat -n $name -m $mib -r $reps" >>"$out/vmtest.conf"
done
tools/vmtest/vmtest-initramfs.sh "$out/initramfs.cpio.gz" "$out/vmtest.conf" "$out/readlat" ||
	die "cannot build the initramfs"
# The writeback the collapse starts with must reach the host's disk, as
# in tools/bench/bench.sh.
cache=$(tools/lib/flush_cache_mode.sh "$out")

echo "kernel,fs,case,rep,collapse_ns,idle_p50_ns,reads,p50_ns,p99_ns,max_ns" >"$out/samples.csv"
for which in series base; do
	if [ "$which" = series ]; then kernel=$series_kernel; else kernel=$base_kernel; fi
	[ -f "$kernel" ] || die "no $which kernel at $kernel (make bench-kernel bench-base-kernel)"
	for name in $filesystems; do
		# shellcheck disable=SC2046 # the table line's mkfs options
		set -- $(awk -v n="$name" '$1 == n' "$table")
		[ $# -ge 6 ] || die "no line for $name in $table"
		type=$2
		shift 6
		tools/vmtest/vmtest-mkfs.sh "$type" $((mib * 4 + 256)) "$out/$name.img" "$@" ||
			die "mkfs for $name failed"
	done
	echo "bench-readlat: $which kernel $kernel; disks cache=$cache"
	VMTEST_CACHE=$cache tools/vmtest/vmtest-boot.sh "readlat-$which" "$kernel" "$out" \
		"$out/$which.txt" "$out/$which-console.log" 900 2048 2 ||
		die "the $which guest failed (see $out/$which-console.log)"
	for name in $filesystems; do
		tools/vmtest/vmtest-fsck.sh "$name" "$out/$name.img" >"$out/$which-$name.fsck.log" 2>&1 ||
			die "fsck of $name after the $which guest (see $out/$which-$name.fsck.log)"
		grep -q "^vmtest-end $name status=0 " "$out/$which.txt" ||
			die "readlat failed on $name in the $which guest (see $out/$which.txt)"
	done
	grep '^readlat,' "$out/$which.txt" | sed "s/^readlat,/$which,/" >>"$out/samples.csv"
done

# Medians over the repetitions of each figure, and the series' ratio.
awk -F, -v mib="$mib" -v reps="$reps" '
NR > 1 {
	for (f = 5; f <= 10; f++)
		v[$1 "," $2 "," $3 "," f, ++n[$1 "," $2 "," $3 "," f]] = $f
	if (!seen[$2 "," $3]++)
		rows[++nrows] = $2 "," $3
}
function median(key,    i, j, t, m, a) {
	m = n[key]
	for (i = 1; i <= m; i++)
		a[i] = v[key, i]
	for (i = 2; i <= m; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
function ratio(s, b) {
	return b > 0 ? sprintf("%.2f", s / b) : "-"
}
END {
	printf "pread of 4 KiB at offset 0 during one 4 KiB collapse of a %d MiB file with a dirty tail,\n", mib
	printf "medians of %d repetitions; below: collapse at the middle, over: at offset 0;\n", reps
	printf "reads: the preads that overlapped the fallocate() call; collapse in ms, p99 and max in microseconds\n\n"
	printf "| fs   | case  | collapse base | series | reads base | series | p99 base |  series | ratio | max base |   series | ratio |\n"
	printf "| ---- | ----- | ------------- | ------ | ---------- | ------ | -------- | ------- | ----- | -------- | -------- | ----- |\n"
	for (r = 1; r <= nrows; r++) {
		split(rows[r], k, ",")
		b = "base," rows[r] ","; s = "series," rows[r] ","
		printf "| %-4s | %-5s | %13.0f | %6.0f | %10.0f | %6.0f | %8.0f | %7.0f | %5s | %8.0f | %8.0f | %5s |\n",
			k[1], k[2], median(b 5) / 1e6, median(s 5) / 1e6,
			median(b 7), median(s 7),
			median(b 9) / 1e3, median(s 9) / 1e3, ratio(median(s 9), median(b 9)),
			median(b 10) / 1e3, median(s 10) / 1e3, ratio(median(s 10), median(b 10))
	}
}' "$out/samples.csv" | tee "$out/results.md"
