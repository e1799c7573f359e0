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
# `make crashtest` needs them honoured).
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
set -- qemu-system-x86_64 -nodefaults -machine pc -m "$mem" \
	-smp "$cpus" -kernel "$kernel" -initrd "$dir/initramfs.cpio.gz" \
	-append "console=ttyS0 kunit.enable=0 rdinit=/init panic=-1 printk.time=1 pci=noacpi${extra_args:+ $extra_args}" \
	-no-reboot -nographic \
	-serial stdio -serial "file:$results"
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
