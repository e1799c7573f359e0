#!/bin/sh
# Build the series kernel with kunit.py for x86_64 and run its KUnit suites
# in QEMU (TCG), then judge the run with tools/kunit/kunit_report.py.
#
# usage: tools/kunit/kunit.sh TREE BUILD_DIR JSON_OUT FILTER_GLOB FRAGMENT...
# FILTER_GLOB may be empty (all suites).  The kernel configuration is the
# concatenation of the FRAGMENTs (kunitconfig and kconfig fragments).
# Environment: KUNIT_TIMEOUT (seconds for the test run, default 1500);
# KUNIT_ARCH (x86_64, the default, or arm64: built with Debian's
# aarch64-linux-gnu cross compiler and run in qemu-system-aarch64, TCG).
#
# TCG runs the guest tens of times slower than hardware, and slower still
# while the host builds: the RCU stall detector's 21 s default then reports
# starved kthreads that are only emulation.  It gets its maximum, 300 s;
# a real hang still ends in kunit.py's timeout and fails the run.  The
# guest has two CPUs (kconfig/debug.config: SMP, full preemption).
set -eu

tree=$(realpath "$1")
build_arg=$2
build_dir=$(realpath -m "$2")
json=$(realpath -m "$3")
filter=$4
shift 4
fragments=""
for f in "$@"; do
	fragments="$fragments --kunitconfig $(realpath "$f")"
done

mkdir -p "$build_dir" "$(dirname "$json")"
# Paths below the project are hashed relative to the build directory, so
# a fresh clone elsewhere hits the ccache entries this one left.
CCACHE_BASEDIR=$(realpath "$(dirname "$0")/../..")
export CCACHE_BASEDIR
rm -f "$json" "$build_dir/test.log"

arch=${KUNIT_ARCH:-x86_64}
case $arch in
x86_64)	cross="" ;;
arm64)	cross=aarch64-linux-gnu- ;;
*)	echo "kunit: KUNIT_ARCH=$arch: only x86_64 and arm64 are set up" >&2
	exit 2 ;;
esac

# No PS/2 keyboard or mouse: on two CPUs serio probes them asynchronously,
# and a line such as "input: ImExPS/2 Generic Explorer Mouse" printed
# between a suite's "KTAP version 1" and its "# Subtest:" line leaves
# kunit.py's JSON with a suite of no name.
# shellcheck disable=SC2086 # $fragments is a list of options
set -- --arch="$arch" --build_dir "$build_dir" $fragments \
	--make_options "CC=ccache ${cross}gcc" --jobs "$(nproc)" \
	--kernel_args rcupdate.rcu_cpu_stall_timeout=300 --qemu_args '-smp 2' \
	--kernel_args i8042.noaux --kernel_args i8042.nokbd \
	--timeout "${KUNIT_TIMEOUT:-1500}" --json="$json"
[ -n "$cross" ] && set -- "$@" --cross_compile="$cross"
[ -n "$filter" ] && set -- "$@" "$filter"

echo "kunit: building in $build_dir and running in QEMU $arch (TCG)"
# kunit.py exits non-zero on any failure; the report below gives the verdict.
PYTHONUNBUFFERED=1 /usr/bin/python3 "$tree/tools/testing/kunit/kunit.py" run "$@" 2>&1 |
	tee "$build_dir/kunit.py.log" || true
# The times kunit.py measured, in the form tools/lib/summary.py tabulates.
sed -n 's/.*Elapsed time: [0-9.]*s total, [0-9.]*s configuring, \([0-9]*\)[0-9.]*s building, \([0-9]*\)[0-9.]*s running$/\1 \2/p' \
	"$build_dir/kunit.py.log" | while read -r build run; do
	echo "kunit: time of the kernel build ($build_arg): $build s"
	echo "kunit: time of the QEMU run ($build_arg): $run s"
done
