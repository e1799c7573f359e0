#!/bin/sh
# `make vmtest`: collapse/insert conformance on real filesystems, in QEMU.
#
# Makes a sparse scratch image per filesystem on the host (mkfs), boots
# KERNEL in QEMU x86_64 under TCG, in guests side by side, with a busybox
# initramfs that runs tools/vmtest/guest/fcheck and the series' kselftest
# (tools/testing/selftests/filesystems/fallocate of the tree, VMTEST_TREE,
# default build/linux) on each, then, where the
# filesystem offers the two flags, the seeded model checker
# tools/vmtest/guest/fsmodel (on the memfd row, fsmodel alone: sealed memfds,
# then memory pressure), checks every image with its fsck on the host
# afterwards, and judges the run as one with tools/vmtest/vmtest-report.py.
#
# usage: tools/vmtest/vmtest.sh KERNEL [FS...]
# FS: names from tools/vmtest/guest/filesystems.txt (space or comma separated);
# none means all.  Environment: FSMODEL_OPS (operations of the model run
# per filesystem, default 100000, or 1000000 with LONG=1), FSMODEL_ROUNDS
# (rounds of its concurrent run, default 200, or 2000 with LONG=1),
# FSMODEL_SEED (default random; printed: set it to repeat a run),
# FSMODEL_PRESSURE (MiB reclaim must swap out in each loop of the memfd
# row's pressure run, default 8), VMTEST_GUESTS (guests side by side,
# default 2, at most the host's CPUs), VMTEST_TIMEOUT (seconds for each
# guest, default 600 plus three times the model checker's expected time),
# VMTEST_MEM (MiB a guest, default 2048), VMTEST_SMP (CPUs a guest, default 2),
# VMTEST_OUT (output directory, default build/vmtest; another lets two
# runs share the project), VMTEST_ARCH (x86_64, the default, or arm64:
# KERNEL is an arm64 Image with 64 KiB pages, the guest programs are
# cross-built, busybox and the tools come from Debian's arm64 packages,
# and the rows from tools/vmtest/guest/filesystems-arm64.txt).
# Output: OUT.log (this output), OUT-console.log (the kernel consoles, one
# guest after the other), OUT-table.txt, and OUT/ (images, the guests'
# results, fsck logs; OUT/gN/: guest N's list, initramfs, swap disk).
set -eu

cd "$(dirname "$0")/../.."
out=${VMTEST_OUT:-build/vmtest}

# Keep everything this script prints in OUT.log.
if [ -z "${VMTEST_LOGGING:-}" ]; then
	VMTEST_LOGGING=1 exec tools/lib/logged.sh "$out.log" "$0" "$@"
fi

[ $# -ge 1 ] || { echo "usage: tools/vmtest/vmtest.sh KERNEL [FS...]" >&2; exit 2; }
kernel=$1
shift
want=$(echo "$*" | tr ',' ' ')
export VMTEST_ARCH="${VMTEST_ARCH:-x86_64}"
case $VMTEST_ARCH in
x86_64)	table=tools/vmtest/guest/filesystems.txt cc=gcc page=4096 stage=vmtest
	skips="--skips tools/vmtest/guest/skips.txt" ;;
arm64)	table=tools/vmtest/guest/filesystems-arm64.txt cc=aarch64-linux-gnu-gcc page=65536 stage=vmtest-arm64
	skips="--skips tools/vmtest/guest/skips.txt --skips tools/vmtest/guest/skips-arm64.txt" ;;
*)	echo "vmtest: VMTEST_ARCH=$VMTEST_ARCH: only x86_64 and arm64 are set up" >&2
	exit 2 ;;
esac
start=$(date +%s)

die() {
	echo "vmtest: ERROR: $*"
	echo "$stage: 0 passed, 1 failed, 0 skipped"
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
if [ "$VMTEST_ARCH" = arm64 ]; then
	need qemu-system-aarch64 qemu-system-arm
	need "$cc" gcc-aarch64-linux-gnu
else
	need qemu-system-x86_64 qemu-system-x86
	need busybox busybox-static
	need gcc gcc
fi
need cpio cpio
need gzip gzip
need ldd libc-bin
need xfs_io xfsprogs
need fallocate util-linux
need mkswap util-linux
need python3 python3
if [ "$VMTEST_ARCH" = arm64 ]; then
	tools/vmtest/arm64-userland.sh build/arm64-userland ||
		die "cannot get the arm64 userland"
	export VMTEST_USERLAND=build/arm64-userland/root
else
	[ -f /usr/share/seabios/bios-256k.bin ] || die "missing /usr/share/seabios/bios-256k.bin (Debian package seabios)"
	ldd "$(command -v busybox)" >/dev/null 2>&1 &&
		die "busybox is not static (install the Debian package busybox-static)"
fi
for name in $selected; do
	type=$(echo "$fslist" | awk -v n="$name" '$1 == n { print $2 }')
	case $type in
	ext4) need mkfs.ext4 e2fsprogs; need e2fsck e2fsprogs ;;
	xfs) need mkfs.xfs xfsprogs; need xfs_repair xfsprogs ;;
	f2fs) need mkfs.f2fs f2fs-tools; need fsck.f2fs f2fs-tools ;;
	vfat) need mkfs.vfat dosfstools; need fsck.fat dosfstools ;;
	esac
done

echo "vmtest: kernel $kernel ($VMTEST_ARCH); filesystems:$selected"
mkdir -p "$out"
rm -f "$out"/*.img "$out"/*.log "$out/results.tap" "$out/fsck.txt"

for prog in fcheck fsmodel; do
	"$cc" -static -O2 -Wall -Wextra -Werror -o "$out/$prog" tools/vmtest/guest/$prog/*.c ||
		die "cannot build tools/vmtest/guest/$prog/ statically ($cc, its libc)"
done
# The kselftest as its Makefile builds it (-Wall -O2), statically.
kselftest=${VMTEST_TREE:-build/linux}/tools/testing/selftests/filesystems/fallocate/collapse_insert.c
"$cc" -static -O2 -Wall -Werror -o "$out/collapse_insert" "$kselftest" ||
	die "cannot build $kselftest statically ($cc, its libc; make tree)"

# The model checker: one seed for every filesystem.
if [ "${LONG:-}" = 1 ]; then
	ops=${FSMODEL_OPS:-1000000} rounds=${FSMODEL_ROUNDS:-2000}
else
	ops=${FSMODEL_OPS:-100000} rounds=${FSMODEL_ROUNDS:-200}
fi
seed=${FSMODEL_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
nmodel=0 slow=0
# The memfd row's run under memory pressure: MiB reclaim must swap out in
# each loop (fsmodel -P), and the largest file, large enough that most of
# its pages are cold when reclaim comes.  Reclaim under KASAN and TCG
# stalls the model run for seconds at a time, so it makes a twentieth of
# the operations, but no fewer than 5000: a shorter run may end before
# reclaim has swapped out any page of the file, which fails it.
pressure=${FSMODEL_PRESSURE:-8}
memfd_size=$((8 << 20))
pressure_ops=$((ops / 20))
[ "$pressure_ops" -ge 5000 ] || pressure_ops=5000
# The swap row's memory.high in KiB (fsmodel -H): below the concurrent
# run's 4 MiB read file and its own buffers, so that reclaim swaps the
# file out while shifts move it.
swap_high=${FSMODEL_SWAP_HIGH:-12288}
# Reclaim at every step makes its rounds about ten times slower: a fifth
# of the rounds.
swap_rounds=$((rounds / 5))

# The guests: VMTEST_GUESTS of them (default 2, at most one per host CPU)
# run side by side, each on the filesystems dealt to it in table order, so
# that the slow disk filesystems spread out.  Each has its own directory
# DIR/gN: its list, its initramfs, a swap disk, which its init turns on
# before any filesystem runs (fcheck's pageout cases and the memfd row's
# memory pressure push tmpfs pages out to it, so a shift has swap entries
# to move), and links to the scratch images.
guests=${VMTEST_GUESTS:-2}
[ "$(nproc)" -lt "$guests" ] && guests=$(nproc)
rm -rf "$out"/g[0-9]*
g=1
while [ "$g" -le "$guests" ]; do
	mkdir -p "$out/g$g"
	dd if=/dev/zero of="$out/g$g/swap.img" bs=1M count=256 status=none
	chmod 600 "$out/g$g/swap.img"
	mkswap -p "$page" "$out/g$g/swap.img" >/dev/null || die "mkswap $out/g$g/swap.img failed"
	echo "swap swap - -" >"$out/g$g/vmtest.conf"
	g=$((g + 1))
done
set --
i=0
for name in $selected; do
	conf=$out/g$((i % guests + 1))/vmtest.conf
	i=$((i + 1))
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
	check="fcheck -f $name -u $unit -b $block -s $flags -x /bin $blocks"
	# The concurrent run's outcomes intended-divergence.txt allows this
	# filesystem, each with its bound (MAX): fsmodel -a enforces them.
	allow=""
	while read -r w_fs _ w_answer w_max _; do
		case $w_fs in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2254 # FS is a glob
		case $name in $w_fs) ;; *) continue ;; esac
		case $w_max in ''|*[!0-9]*) ;; *) allow="$allow -a $w_answer=$w_max" ;; esac
	done <tools/vmtest/guest/intended-divergence.txt
	# fsmodel -K checks that the page cache follows each shift of whole
	# pages, on every row fcheck's cache_kept_* cases run on: a row that
	# drops its cache declares those cases' skip in skips.txt, once.
	keep=" -K"
	while read -r k_fs k_case _; do
		case $k_fs in ''|'#'*) continue ;; esac
		[ "$k_case" = 'cache_kept_*' ] || continue
		# shellcheck disable=SC2254 # FS is a glob, as vmtest-report.py reads it
		case $name in $k_fs) keep="" ;; esac
	done <tools/vmtest/guest/skips.txt
	# Each reader class of the concurrent run must overlap shifts: half a
	# read a round, or five on ext4, xfs and tmpfs, where the splice
	# family meets each way the filesystem excludes (or does not) a shift.
	floor=""
	case $name in ext4|xfs|tmpfs) floor=" -O $((rounds * 5))" ;; esac
	# On two CPUs a disk shift now and then drops a cached folio a
	# reference holds past both its looks (docs/design.rst): xfs 17 and
	# 27 of 1529 shifts in two runs, so at most 40 in 1000; ext4 rows 0
	# in most runs and 1 of 1601 in one, so at most 5.  Never data.
	if [ -n "$keep" ]; then
		case $name in
		xfs) keep="$keep -Y 40" ;;
		ext4*) keep="$keep -Y 5" ;;
		esac
	fi
	model="fsmodel -f $name -u $unit -b $block -n $ops -c $rounds -S $seed$allow$keep$floor"
	# The kselftest runs where fcheck does, with the row's unit.
	case $flags in full|none)
		echo "$name $type $opts kselftest-run collapse_insert $unit" >>"$conf" ;;
	esac
	case $flags in
	full)
		echo "$name $type $opts $check" >>"$conf"
		# A second line: the guest mounts the filesystem again for fsmodel.
		echo "$name $type $opts $model" >>"$conf"
		nmodel=$((nmodel + 1)) ;;
	swap|swap64k)
		# The concurrent run alone, racing shifts with swap-out, swap-in
		# and MADV_COLLAPSE, in a memory cgroup below its working set;
		# swap64k: the read file is shared anonymous memory in 64 KiB
		# folios (fsmodel -A).
		anon=""
		[ "$flags" = swap64k ] && anon=" -A"
		echo "$name $type $opts fsmodel -f $name -u $unit -b $block -n 0 -c $swap_rounds -S $seed$allow -R -H $swap_high$anon" >>"$conf"
		nmodel=$((nmodel + 1)) ;;
	memfd)
		# Seals, then a twentieth of the operations under memory pressure.
		echo "$name $type $opts $model --memfd" >>"$conf"
		echo "$name $type $opts fsmodel -f $name -u $unit -b $block -n $pressure_ops -c 0 -S $seed --memfd -P $pressure -m $memfd_size" >>"$conf"
		nmodel=$((nmodel + 1)) slow=$((slow + 1)) ;;
	*)
		echo "$name $type $opts $check" >>"$conf" ;;
	esac
	if [ "$mb" -gt 0 ]; then
		echo "vmtest: mkfs.$type $* ($name, ${mb} MiB sparse image)"
		tools/vmtest/vmtest-mkfs.sh "$type" "$mb" "$out/$name.img" "$@" ||
			die "mkfs for $name failed"
		ln -s "../$name.img" "$(dirname "$conf")/$name.img"
	fi
	set --
done
[ "$i" -lt "$guests" ] && guests=$i
if [ "$nmodel" -gt 0 ]; then
	echo "vmtest: fsmodel: seed $seed, $ops operations and $rounds concurrent rounds on each of $nmodel filesystems (FSMODEL_SEED=$seed repeats them)"
fi

# Measured: about 1000 model operations and 20 concurrent rounds a second
# (tools/vmtest/guest/fsmodel/, docs/design.rst), about 50 a second under memory
# pressure (which makes a twentieth of the operations); a bound for every
# guest.
timeout=${VMTEST_TIMEOUT:-$((600 + (nmodel * (ops / 1000 + rounds / 20) + slow * pressure_ops / 50) * 3))}
# oops=panic: an oops (a BUG, a DEBUG_VM assertion) ends the guest at
# once (panic=-1 reboots, and QEMU does not), where the task it killed
# would hold its locks and leave the guest hung until the timeout.
pids=""
g=1
while [ "$g" -le "$guests" ]; do
	tools/vmtest/vmtest-initramfs.sh "$out/g$g/initramfs.cpio.gz" "$out/g$g/vmtest.conf" \
		"$out/fcheck" "$out/fsmodel" "$out/collapse_insert" \
		tools/vmtest/guest/kselftest-run || die "cannot build the initramfs"
	echo "vmtest: guest $g:$(awk '$2 != "swap" && !seen[$1]++ { printf " %s", $1 }' "$out/g$g/vmtest.conf")"
	tools/vmtest/vmtest-boot.sh vmtest "$kernel" "$out/g$g" "$out/g$g/results.tap" \
		"$out/g$g/console.log" "$timeout" "${VMTEST_MEM:-2048}" \
		"${VMTEST_SMP:-2}" oops=panic &
	pids="$pids $!"
	g=$((g + 1))
done
# The worst exit status: a timeout (124) before any other failure.
qemu_rc=0
for pid in $pids; do
	rc=0
	wait "$pid" || rc=$?
	case $rc in
	0) ;;
	124) qemu_rc=124 ;;
	*) [ "$qemu_rc" = 0 ] && qemu_rc=$rc ;;
	esac
done
: >"$out/results.tap"
: >"$out-console.log"
g=1
while [ "$g" -le "$guests" ]; do
	cat "$out/g$g/results.tap" >>"$out/results.tap" 2>/dev/null || true
	echo "=== guest $g ($out/g$g/console.log) ===" >>"$out-console.log"
	cat "$out/g$g/console.log" >>"$out-console.log" 2>/dev/null || true
	g=$((g + 1))
done

# fsck every image on the host, read-only.
: >"$out/fsck.txt"
# shellcheck disable=SC2086 # $selected is a list of names
for name in $selected; do
	type=$(echo "$fslist" | awk -v n="$name" '$1 == n { print $2 }')
	if [ "$type" = tmpfs ]; then
		echo "$name none" >>"$out/fsck.txt"
		continue
	fi
	if tools/vmtest/vmtest-fsck.sh "$type" "$out/$name.img" >"$out/$name.fsck.log" 2>&1; then
		echo "$name ok" >>"$out/fsck.txt"
		echo "vmtest: $name: fsck clean"
	else
		echo "$name fail" >>"$out/fsck.txt"
		echo "vmtest: $name: fsck FAILED ($out/$name.fsck.log):"
		sed 's/^/    /' "$out/$name.fsck.log" | tail -20
	fi
done

# shellcheck disable=SC2086 # $skips and $selected are lists
/usr/bin/python3 tools/vmtest/vmtest-report.py --results "$out/results.tap" \
	--console "$out-console.log" --fsck "$out/fsck.txt" \
	--divergence tools/vmtest/guest/intended-divergence.txt \
	$skips \
	--table "$out-table.txt" --qemu-rc "$qemu_rc" --stage "$stage" \
	--seconds "$(($(date +%s) - start))" $selected
