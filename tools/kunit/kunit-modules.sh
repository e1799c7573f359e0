#!/bin/sh
# The second half of `make kunit`: the suites as modules.  Build the series
# kernel from make kunit's fragments plus kconfig/kunit-modules.config
# (every suite that can be a module is one), boot it in QEMU x86_64 (TCG)
# with an initramfs of busybox and the installed modules, load every
# module the build made (each runs its suites as it loads), and judge the
# KTAP they print with the rules of the built-in run.
#
# usage: tools/kunit/kunit-modules.sh TREE BUILD_DIR OUT SUITES FRAGMENT...
# SUITES: the suites the run must hold.  Writes OUT.json, OUT-console.log,
# OUT.ktap and OUT-cases.txt, like tools/kunit/kunit-stage.sh.
# Environment: KUNIT_TIMEOUT (seconds for the guest, default 1500);
# KUNIT_MODULES_SEED, the build directory of the built-in kernel
# (make kunit's build/kunit), whose objects a first build starts from.
set -eu

tree=$(realpath "$1")
build_arg=$2
build=$(realpath -m "$2")
out=$(realpath -m "$3")
suites=$4
shift 4
here=$(realpath "$(dirname "$0")")
timeout=${KUNIT_TIMEOUT:-1500}

mkdir -p "$build" "$(dirname "$out")"
# Paths below the project are hashed relative to the build directory, so
# the built-in kernel's objects serve this one from ccache.
CCACHE_BASEDIR=$(realpath "$here/../..")
export CCACHE_BASEDIR
kmake() {
	make -C "$tree" O="$build" ARCH=x86_64 CC="ccache gcc" "$@"
}

# The two kernels differ only in the options kconfig/kunit-modules.config
# sets: a first build starts from a copy of the built-in kernel's build
# directory, and Kbuild rebuilds only the objects whose command line or
# options changed (fixdep records each object's CONFIG_ dependencies),
# instead of compiling the whole kernel a second time.
seed=${KUNIT_MODULES_SEED:-}
if [ ! -f "$build/.config" ] && [ -n "$seed" ] && [ -f "$seed/vmlinux" ]; then
	echo "kunit-modules: starting from a copy of $seed"
	cp -a "$seed/." "$build/"
fi
echo "kunit-modules: configuring $build"
cat "$@" >"$build/.config"
kmake olddefconfig >"$build/olddefconfig.log" 2>&1
# Every option the fragments set (the last fragment to set it wins) must
# have survived olddefconfig.
missing=$(awk '/^CONFIG_[A-Z0-9_]*=/ { k = $0; sub(/=.*/, "", k); last[k] = $0 }
	/^# CONFIG_[A-Z0-9_]* is not set$/ { last[$2] = $0 }
	END { for (k in last) print last[k] }' "$@" |
	grep -vxF -f "$build/.config" || true)
if [ -n "$missing" ]; then
	echo "kunit-modules: ERROR: olddefconfig dropped: $missing"
	echo "kunit-modules: 0 passed, 1 failed, 0 skipped"
	exit 1
fi

echo "kunit-modules: building the kernel and modules ($(nproc) jobs)"
start=$(date +%s)
kmake -j"$(nproc)" bzImage modules >"$build/build.log" 2>&1 || {
	tail -n 30 "$build/build.log"
	echo "kunit-modules: ERROR: the build failed ($build/build.log)"
	echo "kunit-modules: 0 passed, 1 failed, 0 skipped"
	exit 1
}
echo "kunit-modules: time of the kernel build ($build_arg): $(($(date +%s) - start)) s"

stage=$build/initramfs.d
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/proc" "$stage/sys" "$stage/dev"
kmake INSTALL_MOD_PATH="$stage" INSTALL_MOD_STRIP=1 modules_install >/dev/null
cp "$(command -v busybox)" "$stage/bin/busybox"
cp "$here/kunit-modules-init" "$stage/init"
# The modules to load: those that hold KUnit suites.
mkdir -p "$stage/etc"
find "$stage/lib/modules" -name '*.ko' | sort | while read -r ko; do
	if objdump -h "$ko" | grep -q ' \.kunit_test_suites '; then
		basename "$ko" .ko
	fi
done >"$stage/etc/kunit-modules"
if [ ! -s "$stage/etc/kunit-modules" ]; then
	echo "kunit-modules: ERROR: no module holds a KUnit suite"
	echo "kunit-modules: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$build/initramfs.cpio.gz"
echo "kunit-modules: loading $(tr '\n' ' ' <"$stage/etc/kunit-modules")in QEMU x86_64 (TCG), timeout $timeout s"

console=$build/console.log
rc=0
start=$(date +%s)
timeout "$timeout" qemu-system-x86_64 -nodefaults -machine pc -m 2048 -smp 2 \
	-kernel "$build/arch/x86/boot/bzImage" \
	-initrd "$build/initramfs.cpio.gz" \
	-append "console=ttyS0 rdinit=/init panic=-1 rcupdate.rcu_cpu_stall_timeout=300 i8042.noaux i8042.nokbd" \
	-no-reboot -nographic -serial stdio >"$console" 2>&1 </dev/null || rc=$?
echo "kunit-modules: time of the QEMU run ($build_arg): $(($(date +%s) - start)) s"
[ "$rc" = 124 ] && echo "kunit-modules: the guest timed out after $timeout s"

guest_rc=0
if grep -q '^kunit-modules: \(modprobe\|rmmod\) .* failed' "$console" ||
	! grep -q '^kunit-modules: every module unloaded' "$console"; then
	grep '^kunit-modules: ' "$console"
	echo "kunit-modules: ERROR: a module did not load or unload (see $out-console.log)"
	guest_rc=1
fi
"$here/ktap_merge.py" "$console" >"$build/merged.ktap"
python3 "$tree/tools/testing/kunit/kunit.py" parse --json="$out.json" \
	"$build/merged.ktap" >/dev/null || true
# shellcheck disable=SC2086 # $suites is a list of names
"$here/kunit_report.py" --stage "$(basename "$out")" --arch x86_64 \
	--log "$console" --json "$out.json" \
	--console-out "$out-console.log" --ktap-out "$out.ktap" \
	--cases-out "$out-cases.txt" --skips kunit/skips.txt \
	--suites $suites >"$build/verdict" || guest_rc=1
if [ "$guest_rc" != 0 ] && ! grep -q ' [1-9][0-9]* failed' "$build/verdict"; then
	# The report found every case passing; the run fails all the same.
	sed '$d' "$build/verdict"
	tail -n 1 "$build/verdict" | sed 's/ 0 failed/ 1 failed/'
else
	cat "$build/verdict"
fi
exit "$guest_rc"
