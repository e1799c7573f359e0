#!/bin/sh
# The fill-path part of `make bench`: what the series costs a first touch
# of a tmpfs page.  Boots the series kernel and the same configuration
# without the series (both without debug options: `make bench-kernel` and
# `make bench-base-kernel`), one after the other in the same run, with two
# CPUs each, and runs tools/vmtest/guest/fillbench.c on a tmpfs mount in each:
# page faults, writes and hole reads, with 1 and 2 threads.  Prints one
# table of medians and their ratio, series over base.
#
# usage: tools/bench/bench-fill.sh SERIES_KERNEL BASE_KERNEL
# Environment: FILL_MIB (file size, default 64), FILL_REPS (default 15).
# Output in build/bench-fill/: results.md (the table, also printed),
# samples.csv, and each kernel's console and raw results.
set -eu

cd "$(dirname "$0")/../.."
out=build/bench-fill

die() {
	echo "bench-fill: ERROR: $*" >&2
	exit 1
}

[ $# -eq 2 ] || { echo "usage: tools/bench/bench-fill.sh SERIES_KERNEL BASE_KERNEL" >&2; exit 2; }
mib=${FILL_MIB:-64}
reps=${FILL_REPS:-15}

mkdir -p "$out"
gcc -static -O2 -Wall -Wextra -Werror -pthread -o "$out/fillbench" \
	tools/vmtest/guest/fillbench.c ||
	die "cannot build tools/vmtest/guest/fillbench.c statically (gcc, libc6-dev)"
echo "fill tmpfs size=$((mib * 2))m,huge=never fillbench -m $mib -r $reps" >"$out/vmtest.conf"
tools/vmtest/vmtest-initramfs.sh "$out/initramfs.cpio.gz" "$out/vmtest.conf" "$out/fillbench" ||
	die "cannot build the initramfs"

echo "kernel,path,threads,rep,ns_per_page" >"$out/samples.csv"
for which in series base; do
	if [ "$which" = series ]; then kernel=$1; else kernel=$2; fi
	[ -f "$kernel" ] || die "no $which kernel at $kernel (make bench-kernel bench-base-kernel)"
	echo "bench-fill: $which kernel $kernel"
	tools/vmtest/vmtest-boot.sh "fill-$which" "$kernel" "$out" "$out/$which.txt" \
		"$out/$which-console.log" 900 2048 2 ||
		die "the $which guest failed (see $out/$which-console.log)"
	grep '^fill,' "$out/$which.txt" | sed "s/^fill,/$which,/" >>"$out/samples.csv"
	grep -q "^$which,fault,2,$reps," "$out/samples.csv" ||
		die "the $which guest did not finish its $reps repetitions (see $out/$which.txt)"
done

# Medians of each path and thread count, and the series' ratio.
awk -F, -v mib="$mib" -v reps="$reps" '
NR > 1 { v[$1 "," $2 "," $3, ++n[$1 "," $2 "," $3]] = $5 }
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
END {
	printf "tmpfs fill path, %d MiB file, median of %d, ns per page (wall clock; 2 threads fill half each)\n\n", mib, reps
	printf "| path  | threads | base ns | series ns | series/base |\n"
	printf "| ----- | ------- | ------- | --------- | ----------- |\n"
	split("fault write hole", paths, " ")
	for (p = 1; p <= 3; p++)
		for (t = 1; t <= 2; t++) {
			b = median("base," paths[p] "," t)
			s = median("series," paths[p] "," t)
			printf "| %-5s | %7d | %7.0f | %9.0f | %11.3f |\n", paths[p], t, b, s, s / b
		}
}' "$out/samples.csv" | tee "$out/results.md"
