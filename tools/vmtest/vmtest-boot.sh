#!/bin/sh
# Boot the guest of `make vmtest` or `make bench` and follow it.
#
# QEMU x86_64 under TCG boots KERNEL with DIR/initramfs.cpio.gz and one
# virtio disk DIR/NAME.img, serial NAME, for every filesystem of
# DIR/vmtest.conf that is not tmpfs (one per NAME, however many lines name
# it); the kernel console goes to CONSOLE and the guest's results to
# RESULTS (tools/vmtest/vmtest-qemu.py prints the progress, as "LABEL: ...", and
# kills QEMU after TIMEOUT seconds).  KERNEL-ARGs are added to the kernel
# command line.  VMTEST_CACHE is the disks' QEMU cache mode (default
# unsafe: QEMU ignores flushes, which only a crash of the host would show;
# `make crashtest` needs them honoured).  VMTEST_ARCH=arm64 boots
# qemu-system-aarch64's virt machine instead (kunit.py's arm64 machine),
# the results on a virtio console.
#
# usage: tools/vmtest/vmtest-boot.sh LABEL KERNEL DIR RESULTS CONSOLE TIMEOUT MEM-MIB CPUS [KERNEL-ARG...]
# Exit status: tools/vmtest/vmtest-qemu.py's (QEMU's own, 124 on a timeout).
set -eu

label=$1 kernel=$2 dir=$3 results=$4 console=$5 timeout=$6 mem=$7 cpus=$8
shift 8
extra_args="$*"

# kunit.py's QEMU command, plus the disks and a results port, with two
# changes.  SeaBIOS instead of qboot, with pci=noacpi: the kernel then
# routes PCI interrupts from SeaBIOS's $PIR table; through ACPI, under
# KASAN and TCG, evaluating _PRT costs ~12 s per virtio disk and trips an
# RCU stall warning.  acpi=off is no way out: without MSI (CONFIG_PCI_MSI
# is off) the disks then get no interrupt at all.
args="kunit.enable=0 rdinit=/init panic=-1 printk.time=1${extra_args:+ $extra_args}"
case ${VMTEST_ARCH:-x86_64} in
x86_64)
	set -- qemu-system-x86_64 -nodefaults -machine pc -m "$mem" \
		-smp "$cpus" -kernel "$kernel" -initrd "$dir/initramfs.cpio.gz" \
		-append "console=ttyS0 pci=noacpi $args" \
		-no-reboot -nographic \
		-serial stdio -serial "file:$results" ;;
arm64)
	set -- qemu-system-aarch64 -nodefaults -machine virt \
		-cpu max,pauth-impdef=on -m "$mem" \
		-smp "$cpus" -kernel "$kernel" -initrd "$dir/initramfs.cpio.gz" \
		-append "console=ttyAMA0 VMTEST_RESULTS=/dev/hvc0 $args" \
		-no-reboot -nographic -serial stdio \
		-device virtio-serial-pci -chardev "file,id=results,path=$results" \
		-device virtconsole,chardev=results ;;
*)
	echo "$label: VMTEST_ARCH=$VMTEST_ARCH: only x86_64 and arm64 are set up" >&2
	exit 2 ;;
esac
attached=" "
while read -r name type _; do
	# tmpfs has no disk; a filesystem named on several lines has one.
	[ "$type" = tmpfs ] && continue
	case $attached in *" $name "*) continue ;; esac
	attached="$attached$name "
	set -- "$@" -drive "if=none,id=$name,file=$dir/$name.img,format=raw,cache=${VMTEST_CACHE:-unsafe}" \
		-device "virtio-blk-pci,drive=$name,serial=$name"
done <"$dir/vmtest.conf"

echo "$label: booting QEMU (TCG), timeout $timeout s"
exec /usr/bin/python3 "$(dirname "$0")/vmtest-qemu.py" "$label" "$timeout" \
	"$console" "$results" -- "$@"
