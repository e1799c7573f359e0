#!/bin/sh
# `make bench-kernel` and `make bench-base-kernel`: build a kernel tree
# (the series, or the tree without it) without the debug options (KASAN,
# lockdep, UBSAN, DEBUG_VM) of `make kunit`, to time with `make bench`:
# those options slow the kernel side of a collapse several times over,
# and not the user-space copy it is compared with.  Both use the same
# fragments (kconfig/bench.config, kconfig/guest.config), so that they
# differ in the series only.
#
# usage: tools/bench/bench-kernel.sh TREE BUILD_DIR FRAGMENT...
set -eu

tree=$(realpath "$1")
build_dir=$(realpath -m "$2")
shift 2
fragments=""
for f in "$@"; do
	fragments="$fragments --kunitconfig $(realpath "$f")"
done

mkdir -p "$build_dir"
# As in tools/kunit/kunit.sh: paths hashed relative to the project for ccache.
CCACHE_BASEDIR=$(realpath "$(dirname "$0")/../..")
export CCACHE_BASEDIR
echo "bench-kernel: building in $build_dir"
# shellcheck disable=SC2086 # $fragments is a list of options
/usr/bin/python3 "$tree/tools/testing/kunit/kunit.py" build --arch=x86_64 \
	--build_dir "$build_dir" $fragments \
	--make_options "CC=ccache gcc" --jobs "$(nproc)"
echo "bench-kernel: $build_dir/arch/x86/boot/bzImage"
