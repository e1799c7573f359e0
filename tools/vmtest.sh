#!/bin/sh
# `make vmtest`: collapse/insert conformance on real filesystems, in QEMU.
#
# Makes a sparse scratch image per filesystem on the host (mkfs), boots
# KERNEL in QEMU x86_64 under TCG with a busybox initramfs that runs
# tools/guest/fcheck on each, checks every image with its fsck on the
# host afterwards, and judges the run with tools/vmtest-report.py.
#
# usage: tools/vmtest.sh KERNEL [FS...]
# FS: names from tools/guest/filesystems.txt (space or comma separated);
# none means all.  Environment: VMTEST_TIMEOUT (seconds for the guest,
# default 600), VMTEST_MEM (MiB, default 2048), VMTEST_SMP (default 1).
# Output: build/vmtest.log (this output), build/vmtest-console.log (the
# kernel console), build/vmtest-table.txt, and build/vmtest/ (images,
# the guest's results, fsck logs).
set -eu

cd "$(dirname "$0")/.."
out=build/vmtest

# Keep everything this script prints in build/vmtest.log.
if [ -z "${VMTEST_LOGGING:-}" ]; then
	mkdir -p "$out"
	rm -f "$out/rc"
	{ VMTEST_LOGGING=1 "$0" "$@" 2>&1 || echo $? >"$out/rc"; } |
		tee build/vmtest.log
	[ -f "$out/rc" ] && exit "$(cat "$out/rc")"
	exit 0
fi

[ $# -ge 1 ] || { echo "usage: tools/vmtest.sh KERNEL [FS...]" >&2; exit 2; }
kernel=$1
shift
want=$(echo "$*" | tr ',' ' ')
table=tools/guest/filesystems.txt
start=$(date +%s)

die() {
	echo "vmtest: ERROR: $*"
	echo "vmtest: 0 passed, 1 failed, 0 skipped"
	exit 1
}

[ -f "$kernel" ] || die "no kernel at $kernel (build it with 'make kunit')"

# The filesystems to run, in table order.
fslist=$(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$table")
selected=""
for w in $want; do
	echo "$fslist" | awk -v w="$w" '$1 == w { f = 1 } END { exit !f }' ||
		die "unknown filesystem '$w'; known: $(echo "$fslist" | awk '{ printf "%s ", $1 }')"
done
for name in $(echo "$fslist" | awk '{ print $1 }'); do
	if [ -z "$want" ] || echo " $want " | grep -q " $name "; then
		selected="$selected $name"
	fi
done

# Host tools: each named with the Debian package that provides it.
need() {
	command -v "$1" >/dev/null 2>&1 || die "missing host tool '$1' (Debian package $2)"
}
need qemu-system-x86_64 qemu-system-x86
need busybox busybox-static
need gcc gcc
need cpio cpio
need gzip gzip
need ldd libc-bin
need xfs_io xfsprogs
need fallocate util-linux
need mkswap util-linux
need python3 python3
[ -f /usr/share/seabios/bios-256k.bin ] || die "missing /usr/share/seabios/bios-256k.bin (Debian package seabios)"
ldd "$(command -v busybox)" >/dev/null 2>&1 &&
	die "busybox is not static (install the Debian package busybox-static)"
for name in $selected; do
	type=$(echo "$fslist" | awk -v n="$name" '$1 == n { print $2 }')
	case $type in
	ext4) need mkfs.ext4 e2fsprogs; need e2fsck e2fsprogs ;;
	xfs) need mkfs.xfs xfsprogs; need xfs_repair xfsprogs ;;
	f2fs) need mkfs.f2fs f2fs-tools; need fsck.f2fs f2fs-tools ;;
	vfat) need mkfs.vfat dosfstools; need fsck.fat dosfstools ;;
	esac
done

echo "vmtest: kernel $kernel; filesystems:$selected"
mkdir -p "$out"
rm -f "$out"/*.img "$out"/*.log "$out/results.tap" "$out/fsck.txt"

gcc -static -O2 -Wall -Wextra -Werror -o "$out/fcheck" tools/guest/fcheck.c ||
	die "cannot build tools/guest/fcheck.c statically (gcc, libc6-dev)"

# Scratch images and the guest's list.  First a swap disk, which the
# guest turns on before any filesystem runs: fcheck's pageout cases then
# push tmpfs pages out to swap, so a shift has swap entries to move.
rm -f "$out/swap.img"
dd if=/dev/zero of="$out/swap.img" bs=1M count=64 status=none
chmod 600 "$out/swap.img"
mkswap "$out/swap.img" >/dev/null || die "mkswap $out/swap.img failed"
echo "swap swap - -" >"$out/vmtest.conf"
set --
for name in $selected; do
	line=$(echo "$fslist" | awk -v n="$name" '$1 == n')
	# shellcheck disable=SC2086 # split the table line into its fields
	set -- "$@" $line
	type=$2 mb=$3 unit=$4 block=$5 flags=$6
	shift 6
	opts=defaults
	# tmpfs has no mkfs: the column holds mount options.
	[ "$type" = tmpfs ] && opts=$(echo size=64m "$@" | tr ' ' ',')
	# With huge pages st_blocks counts whole huge folios: see fcheck -B.
	blocks=""
	case $opts in *huge=always*|*huge=within_size*) blocks=-B ;; esac
	echo "$name $type $opts fcheck -f $name -u $unit -b $block -s $flags -x /bin $blocks" >>"$out/vmtest.conf"
	if [ "$mb" -gt 0 ]; then
		echo "vmtest: mkfs.$type $* ($name, ${mb} MiB sparse image)"
		tools/vmtest-mkfs.sh "$type" "$mb" "$out/$name.img" "$@" ||
			die "mkfs for $name failed"
	fi
	set --
done
tools/vmtest-initramfs.sh "$out/initramfs.cpio.gz" "$out/vmtest.conf" "$out/fcheck" ||
	die "cannot build the initramfs"

qemu_rc=0
tools/vmtest-boot.sh vmtest "$kernel" "$out" "$out/results.tap" build/vmtest-console.log \
	"${VMTEST_TIMEOUT:-600}" "${VMTEST_MEM:-2048}" "${VMTEST_SMP:-1}" || qemu_rc=$?

# fsck every image on the host, read-only.
: >"$out/fsck.txt"
while read -r name type _; do
	[ "$type" = swap ] && continue
	if [ "$type" = tmpfs ]; then
		echo "$name none" >>"$out/fsck.txt"
		continue
	fi
	if tools/vmtest-fsck.sh "$type" "$out/$name.img" >"$out/$name.fsck.log" 2>&1; then
		echo "$name ok" >>"$out/fsck.txt"
		echo "vmtest: $name: fsck clean"
	else
		echo "$name fail" >>"$out/fsck.txt"
		echo "vmtest: $name: fsck FAILED ($out/$name.fsck.log):"
		sed 's/^/    /' "$out/$name.fsck.log" | tail -20
	fi
done <"$out/vmtest.conf"

# shellcheck disable=SC2086 # $selected is a list of names
/usr/bin/python3 tools/vmtest-report.py --results "$out/results.tap" \
	--console build/vmtest-console.log --fsck "$out/fsck.txt" \
	--divergence tools/guest/intended-divergence.txt \
	--table build/vmtest-table.txt --qemu-rc "$qemu_rc" \
	--seconds "$(($(date +%s) - start))" $selected
