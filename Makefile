# The map of the project: `make help` lists every target.
# Every target is idempotent; the kernel tree and all output live in build/.

include tools/tree/config.mk

TREE      := build/linux
KUNIT_DIR := build/kunit
FRAGMENTS := kunit/collapse.kunitconfig kconfig/debug.config kconfig/guest.config kconfig/modules.config
MUTANTS   := $(sort $(wildcard kunit/mutants/*.patch))
ALL_SUITES := $(shell sed -e '/^\#/d' -e '/^$$/d' kunit/suites)
# The series' in-tree kunitconfigs; kunit/collapse.kunitconfig is their union.
KUNITCONFIG_DIRS := fs/tests fs/ext4 fs/xfs mm/tests

# make kunit SUITES=GLOB runs only the suites kunit.py's filter glob GLOB
# names (xfs_bmap_shift, 'ext4_*'), on the same debug kernel, under the same
# verdict rules.  ARCH=arm64 builds and runs every suite on arm64 with
# 64 KiB pages instead, in its own build directory.
SUITES ?=
ARCH ?= x86_64
ifeq ($(ARCH),arm64)
KUNIT_NAME := kunit-arm64
KUNIT_BUILD := build/kunit-arm64
KUNIT_FRAGMENTS := $(FRAGMENTS) kconfig/arm64-64k.config
else ifeq ($(ARCH),x86_64)
KUNIT_NAME := kunit
KUNIT_BUILD := $(KUNIT_DIR)
KUNIT_FRAGMENTS := $(FRAGMENTS)
else
$(error ARCH=$(ARCH): make kunit knows x86_64 (the default) and arm64)
endif

# Debian packages the targets need, besides the pinned kernel source.
PACKAGES := qemu-system-x86 python3 python3-docutils python3-ply python3-git gcc make flex bison bc \
	libelf-dev libssl-dev cpio xz-utils ccache sparse git perl \
	busybox-static xfsprogs e2fsprogs f2fs-tools dosfstools util-linux procps \
	libc6-dev seabios gnuplot-nox gcc-aarch64-linux-gnu qemu-system-arm

# make vmtest boots the kernel `make kunit` built (kconfig/guest.config is
# one of its fragments).  FS= picks filesystems by name from
# tools/vmtest/guest/filesystems.txt (space or comma separated; empty: all).
VMTEST_KERNEL := $(KUNIT_DIR)/arch/x86/boot/bzImage
# ARCH=arm64: the kernel of make kunit ARCH=arm64, 64 KiB pages, on the
# rows of tools/vmtest/guest/filesystems-arm64.txt, into build/vmtest-arm64.
ifeq ($(ARCH),arm64)
VMTEST_NAME := vmtest-arm64
VMTEST_IMAGE := build/kunit-arm64/arch/arm64/boot/Image.gz
else
VMTEST_NAME := vmtest
VMTEST_IMAGE := $(VMTEST_KERNEL)
endif
FS ?=

# LONG=1: make vmtest runs the model checker for 1000000 operations per
# filesystem instead of 100000.  make crashtest makes COUNT runs, each
# crashing ext4 and xfs once; make test runs TEST_CRASH_COUNT of them.
LONG ?=
COUNT ?= 20
TEST_CRASH_COUNT := 3

# make crashreplay records OPS operations of the crash workload on ext4,
# ext4-1k, xfs and f2fs with dm-log-writes and checks every crash state of
# the log (MODE=flush: at each flush and FUA; MODE=write: at every entry);
# make test runs TEST_REPLAY_OPS of them and checks the first
# TEST_REPLAY_STATES states of each log, a count the cover letter can quote.
# 400 operations left a log of 89 states on a loaded machine (session 10);
# f2fs flushes least, about 0.15 states an operation (58 of 400, session
# 11): 1200 leave room on every filesystem.
OPS ?= 400
MODE ?= flush
TEST_REPLAY_OPS := 1200
TEST_REPLAY_STATES := 100

# make bench boots the same kernel (KERNEL= another); QUICK=1 for the short
# run, SIZES= for other file sizes in MiB.  Not part of make test.  The
# debug options slow the kernel side several times over: make bench-kernel
# builds the series without them, for KERNEL=$(BENCH_KERNEL).  The
# fill-path and read-latency parts of make bench compare that kernel
# with the same configuration without the series (make
# bench-base-kernel, from a worktree of the tree at tag base), side by
# side in one run.
KERNEL ?= $(VMTEST_KERNEL)
BENCH_FRAGMENTS := kconfig/bench.config kconfig/guest.config
BENCH_DIR := build/bench-kernel
BENCH_KERNEL := $(BENCH_DIR)/arch/x86/boot/bzImage
BASE_TREE := build/linux-base
BASE_DIR := build/bench-base
BASE_KERNEL := $(BASE_DIR)/arch/x86/boot/bzImage
QUICK ?=
SIZES ?=

CHECK_STAGES := checkpatch prefixes docs mutants-apply verdicts tree-selftest cover
TEST_STAGES  := kunit vmtest crashtest crashreplay $(CHECK_STAGES)
# The stages whose figures the cover letter quotes: all but its own check
# and the self-test of the project's tree tools, which tests no kernel code.
COVER_STAGES := $(filter-out cover tree-selftest,$(TEST_STAGES))
COVER_LETTER := patches/0000-cover-letter.patch

.PHONY: help test-clock test-space deps tree export cover-letter kunit vmtest crashtest crashreplay bench bench-kernel bench-base-kernel check $(CHECK_STAGES) mutants test clean distclean

help:
	@echo 'make deps       install the Debian packages (pinned $(KERNEL_PKG) $(KERNEL_VERSION))'
	@echo 'make tree       extract the pinned kernel into $(TREE) and apply patches/series; keeps edits and'
	@echo '                unexported commits, stops if patches/ changed under them (FORCE=1: reset)'
	@echo 'make export     write the commits of $(TREE) (base..HEAD) back to patches/'
	@echo 'make cover-letter  write $(COVER_LETTER) from docs/cover-letter.txt and the last runs'"'"' figures'
	@echo 'make kunit      build the series kernel (debug config) and run every KUnit suite in QEMU x86_64'
	@echo '                (SUITES=xfs_bmap_shift: those suites only; ARCH=arm64: on arm64 with 64 KiB pages)'
	@echo 'make vmtest     boot that kernel in QEMU: the conformance matrix and the model checker (FS=xfs: one; LONG=1)'
	@echo '                (ARCH=arm64: the make kunit ARCH=arm64 kernel, 64 KiB pages, on ext4, ext4-1k, xfs, tmpfs)'
	@echo 'make crashtest  kill the guest amid collapse/insert on ext4 and xfs COUNT=20 times; fsck, check the file'
	@echo 'make crashreplay  record OPS=400 operations on ext4, ext4-1k, xfs, f2fs with dm-log-writes; check every crash state'
	@echo '                (MODE=write: at every log entry, not only at flushes)'
	@echo 'make bench      time collapse/insert against a user-space shift on ext4, xfs, f2fs, tmpfs (QUICK=1: short),'
	@echo '                then the tmpfs fill path (faults, writes, hole reads) with and without the series,'
	@echo '                then ext4 and f2fs pread latency during a collapse, with and without the series'
	@echo 'make bench-kernel  build the series without debug options, for make bench KERNEL=$(BENCH_KERNEL)'
	@echo 'make bench-base-kernel  the same kernel without the series (make bench compares their fill path and reads)'
	@echo 'make check      checkpatch, prefix builds (W=1, sparse), docs, mutants-apply, verdicts, tree-selftest'
	@echo '                and cover: the seven below'
	@echo 'make checkpatch checkpatch.pl --strict on every patch'
	@echo 'make prefixes   every prefix of the series builds its touched objects W=1 and sparse clean'
	@echo 'make docs       docs/design.rst renders without a docutils warning'
	@echo 'make mutants-apply  every kunit/mutants/*.patch applies to the series tree (git apply --check)'
	@echo 'make verdicts   tools/vmtest/vmtest-report.py fails each way a made-up guest run can go wrong'
	@echo 'make tree-selftest  make tree, make export and an interrupted make mutants on a toy tree keep work'
	@echo 'make cover      the cover letter lists every patch of the series and quotes the last runs exactly'
	@echo 'make mutants    every kunit/mutants/*.patch must be killed by the suites it names'
	@echo 'make test       deps + tree + kunit + vmtest + crashtest (3 runs) + crashreplay (1200 operations, 100 states each) + check: one "test: N passed, ..." line'
	@echo 'make clean      remove build output, keep the kernel tree and the ccache'
	@echo 'make distclean  remove build/ entirely'

deps:
	@tools/lib/timed.sh deps tools/tree/deps.sh $(KERNEL_PKG) $(KERNEL_VERSION) $(PACKAGES)

tree:
	@FORCE="$(FORCE)" tools/lib/timed.sh tree tools/tree/tree.sh $(KERNEL_TARBALL) $(TREE) patches

export:
	@tools/tree/export.sh $(TREE) patches

cover-letter: tree
	@tools/tree/cover_letter.py docs/cover-letter.txt $(TREE) build/logs build/bench/headline.txt \
		$(COVER_LETTER) $(COVER_STAGES)

kunit: tree
	@KUNIT_ARCH=$(ARCH) tools/lib/stage.sh $(KUNIT_NAME) tools/kunit/kunit-stage.sh $(TREE) $(KUNIT_BUILD) \
		build/$(KUNIT_NAME) "$(SUITES)" "$(ALL_SUITES)" "$(KUNITCONFIG_DIRS)" $(KUNIT_FRAGMENTS)

vmtest:
	@LONG="$(LONG)" VMTEST_ARCH=$(ARCH) VMTEST_OUT="$${VMTEST_OUT:-build/$(VMTEST_NAME)}" \
		tools/lib/stage.sh $(VMTEST_NAME) tools/vmtest/vmtest.sh $(VMTEST_IMAGE) $(FS)

crashtest:
	@tools/lib/stage.sh crashtest tools/crashtest/crashtest.sh $(VMTEST_KERNEL) $(COUNT)

crashreplay:
	@tools/lib/stage.sh crashreplay tools/crashreplay/crashreplay.sh $(VMTEST_KERNEL) $(OPS) $(MODE)

bench: bench-kernel bench-base-kernel
	@QUICK="$(QUICK)" SIZES="$(SIZES)" tools/bench/bench.sh $(KERNEL)
	@tools/bench/bench-fill.sh $(BENCH_KERNEL) $(BASE_KERNEL)
	@tools/bench/bench-readlat.sh $(BENCH_KERNEL) $(BASE_KERNEL)

bench-kernel: tree
	@tools/bench/bench-kernel.sh $(TREE) $(BENCH_DIR) $(BENCH_FRAGMENTS)

bench-base-kernel: tree
	@tools/tree/base-tree.sh $(TREE) $(BASE_TREE)
	@tools/bench/bench-kernel.sh $(BASE_TREE) $(BASE_DIR) $(BENCH_FRAGMENTS)

check: tree
	@MAKE="$(MAKE)" tools/lib/run_stages.sh check $(CHECK_STAGES)

checkpatch: tree
	@tools/lib/stage.sh checkpatch tools/check/checkpatch.sh $(TREE) patches

prefixes: tree
	@tools/lib/stage.sh prefixes tools/check/check_prefixes.py $(TREE) build/check-src build/check $(FRAGMENTS)

docs:
	@tools/lib/stage.sh docs tools/check/check_docs.py docs/design.rst

mutants-apply: tree
	@tools/lib/stage.sh mutants-apply tools/kunit/check_mutants_apply.sh $(TREE) $(MUTANTS)

cover:
	@tools/lib/stage.sh cover tools/check/check_cover_letter.py $(COVER_LETTER) patches build/logs $(COVER_STAGES)

verdicts:
	@tools/lib/stage.sh verdicts tools/vmtest/check_vmtest_report.py

tree-selftest:
	@tools/lib/stage.sh tree-selftest tools/tree/test_tree.sh

mutants: tree
	@tools/kunit/mutants.sh $(TREE) $(KUNIT_DIR) "$(FRAGMENTS)" $(MUTANTS)

# What build/ grows to in a cold make test (session 11: 5.7 GiB at the
# end, with the kernel tree, both kunit builds and the prefix worktree);
# apt's packages and the ccache are besides.
TEST_DISK_GIB := 8

test-space:
	@tools/lib/disk_space.sh test build $(TEST_DISK_GIB)

# The table of times at the end of make test starts empty: each step adds
# its time to build/logs/NAME.time (tools/lib/timed.sh).  The run's id in
# build/logs/test.run heads each of its stage logs (tools/lib/stage.sh), so
# make cover-letter quotes only the stages of the last make test.
test-clock:
	@mkdir -p build/logs && rm -f build/logs/*.time && date +%s >build/logs/test.run

test: test-clock test-space deps tree
	@MAKE="$(MAKE)" TEST_RUN=$$(cat build/logs/test.run) TIMED_BEFORE=deps,tree COUNT=$(TEST_CRASH_COUNT) OPS=$(TEST_REPLAY_OPS) MODE=flush \
		CRASHREPLAY_STATES=$(TEST_REPLAY_STATES) \
		tools/lib/run_stages.sh test $(TEST_STAGES)

clean:
	rm -rf build/logs build/mutants build/check build/kunit.* build/kunit-console.log build/kunit-cases.txt
	rm -rf build/kunit-arm64* build/kunitconfigs
	rm -rf build/vmtest build/vmtest.log build/vmtest-console.log build/vmtest-table.txt
	rm -rf build/vmtest-arm64* build/arm64-userland
	rm -rf build/crashtest build/crashtest.log build/crashreplay build/crashreplay.log
	rm -rf build/bench build/bench-fill
	rm -rf $(KUNIT_DIR) $(KUNIT_DIR)-modules build/kunit-modules*

distclean:
	-git -C $(TREE) worktree prune 2>/dev/null
	rm -rf build
