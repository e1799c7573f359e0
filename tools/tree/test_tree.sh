#!/bin/sh
# shellcheck disable=SC2016,SC2034 # the checks are strings check() evaluates
# Self-test of the kernel developer's loop on a toy tree: tools/tree/tree.sh,
# export.sh and mutant.sh on a tarball of a few files, no kernel needed.
# Each step checks the files' contents, not only exit codes: an edit and an
# unexported commit survive `make tree`; a change of patches/ under local
# work stops with a message and leaves the work; FORCE=1 resets; `make
# export` saves the work; a mutant an interrupted `make mutants` left
# applied is reverted, and a hand edit beside it is kept.
#
# usage: tools/tree/test_tree.sh
set -eu

tools=$(realpath "$(dirname "$0")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

check() {
	if eval "$2"; then
		echo "tree-selftest: ok $1"
		passed=$((passed + 1))
	else
		echo "tree-selftest: not ok $1 ($2)"
		failed=$((failed + 1))
	fi
}

tree=$work/linux
patches=$work/patches
out=$work/out
git_tree() {
	git -C "$tree" -c user.name=test -c user.email=test@invalid "$@"
}
# tree.sh as `make tree` runs it; its exit status in $rc, its output in $out.
make_tree() {
	rc=0
	"$tools/tree.sh" "$work/toy.tar.xz" "$tree" "$patches" >"$out" 2>&1 || rc=$?
}
has() {
	grep -qxF "$2" "$tree/$1"
}

# A tarball laid out as the kernel's: one top directory, and Debian's
# .gitignore that ignores every file.
mkdir -p "$work/src/toy" "$patches"
printf '/*\n' >"$work/src/toy/.gitignore"
printf 'int a;\n' >"$work/src/toy/a.c"
printf 'int b;\n' >"$work/src/toy/b.c"
printf '#define C 1\n' >"$work/src/toy/c.h"
tar -cJf "$work/toy.tar.xz" -C "$work/src" toy
echo '# The series, in order.' >"$patches/series"

make_tree
check "an empty series gives the base tree" '[ "$rc" = 0 ] && has a.c "int a;"'

# Two patches, written by export.sh from commits in the tree.
printf 'int a2;\n' >>"$tree/a.c"
git_tree commit -q -a -m "toy: first"
printf 'int b2;\n' >>"$tree/b.c"
git_tree commit -q -a -m "toy: second"
"$tools/export.sh" "$tree" "$patches" >/dev/null
check "export writes the commits to patches/" \
	'[ "$(grep -vc "^#" "$patches/series")" = 2 ] && grep -q "^+int b2;" "$patches/0002-toy-second.patch"'
make_tree
check "an exported tree is up to date" '[ "$rc" = 0 ] && grep -q "is up to date" "$out"'

# 1. An edit and a new file survive, and are built as they stand.
printf 'int hand;\n' >>"$tree/b.c"
printf 'int new;\n' >"$tree/new.c"
make_tree
check "an edit and a new file survive make tree" \
	'[ "$rc" = 0 ] && has b.c "int hand;" && has new.c "int new;"'
check "make tree says it builds 0 commits and 2 edited files" \
	'grep -q "has 0 commits and 2 edited files beyond patches/: building them; .make export. saves them" "$out"'

# 2. An unexported commit survives.
git_tree add -f new.c
git_tree commit -q -a -m "toy: third"
make_tree
check "an unexported commit survives make tree" \
	'[ "$rc" = 0 ] && [ "$(git_tree log -1 --format=%s)" = "toy: third" ] && has b.c "int hand;" && has new.c "int new;"'
check "make tree says it builds 1 commit" 'grep -q "has 1 commit and 0 edited files" "$out"'

# 3. patches/ changes under the work (a pull that rewords patch 2): stop,
# name the work, change nothing.
printf 'int edit;\n' >>"$tree/a.c"
sed -i 's/toy: second/toy: second, reworded/' "$patches/0002-toy-second.patch"
make_tree
check "patches/ changed under local work: make tree stops with status 1" '[ "$rc" = 1 ]'
check "the message names the commit, the file and both ways on" \
	'grep -q "commit [0-9a-f]* toy: third" "$out" && grep -q "file a.c" "$out" &&
	 grep -q "make export" "$out" && grep -q "make tree FORCE=1" "$out"'
check "the stopped make tree left the work in place" \
	'[ "$(git_tree log -1 --format=%s)" = "toy: third" ] && has a.c "int edit;" && has b.c "int hand;" && has new.c "int new;"'

# 4. FORCE=1 throws the work away and applies patches/.
rc=0
FORCE=1 "$tools/tree.sh" "$work/toy.tar.xz" "$tree" "$patches" >"$out" 2>&1 || rc=$?
check "FORCE=1 resets to patches/" \
	'[ "$rc" = 0 ] && [ "$(git_tree log -1 --format=%s)" = "toy: second, reworded" ] &&
	 ! has a.c "int edit;" && ! has b.c "int hand;" && [ ! -e "$tree/new.c" ] && has b.c "int b2;"'

# 5. make export saves a commit: patches/ holds it and the tree is kept.
printf 'int d;\n' >"$tree/d.c"
git_tree add -f d.c
git_tree commit -q -m "toy: fourth"
"$tools/export.sh" "$tree" "$patches" >/dev/null
make_tree
check "an exported commit is in patches/ and the tree is up to date" \
	'[ "$rc" = 0 ] && grep -q "is up to date" "$out" && grep -q "^+int d;" "$patches/0003-toy-fourth.patch" && has d.c "int d;"'

# 6. A mutant applied by a `make mutants` killed with SIGKILL, and a hand
# edit beside it: make tree reverts exactly the mutant.
printf 'Bug: C is 2\nKunit-suites: toy\n\n' >"$work/mutant.patch"
sed -i 's/C 1/C 2/' "$tree/c.h"
git_tree diff >>"$work/mutant.patch"
git_tree checkout -q -- c.h
# The shell reports the killed job on its own standard error.
exec 3>&2 2>/dev/null
sh -c '"$1" apply "$2" "$3"; kill -KILL $$' sh "$tools/mutant.sh" "$tree" "$work/mutant.patch" || true
exec 2>&3 3>&-
check "the killed run left its mutant applied" 'has c.h "#define C 2"'
printf 'int hand2;\n' >>"$tree/a.c"
make_tree
check "make tree reverts the interrupted mutant" \
	'[ "$rc" = 0 ] && has c.h "#define C 1" && grep -q "reverted the mutant .*(mutant)" "$out"'
check "the hand edit beside the mutant is kept" 'has a.c "int hand2;" && grep -q "0 commits and 1 edited file" "$out"'
make_tree
check "the mutant is reverted once" '[ "$rc" = 0 ] && has c.h "#define C 1" && ! grep -q "mutant" "$out"'

# 7. A run killed before it applied its mutant: nothing to revert.
cp "$work/mutant.patch" "$tree/.git/mutant-applied.patch"
"$tools/mutant.sh" recover "$tree" >"$out" 2>&1
check "a mutant not yet applied is not reverted" \
	'has c.h "#define C 1" && [ ! -e "$tree/.git/mutant-applied.patch" ] && grep -q "had not applied" "$out"'

# 8. The mutant runner itself, killed while its mutant is applied, then
# stopped with SIGTERM: tools/kunit/mutants.sh with a stand-in for the
# kernel build and run (tools/kunit/kunit.sh), which idles while a mutant
# is applied, and for the report (every case passed).
proj=$work/project
mkdir -p "$proj/tools/kunit" "$proj/tools/tree"
cp "$tools/../kunit/mutants.sh" "$proj/tools/kunit/"
cp "$tools/mutant.sh" "$proj/tools/tree/"
printf '#!/bin/sh\nexit 0\n' >"$proj/tools/kunit/kunit_report.py"
cat >"$proj/tools/kunit/kunit.sh" <<'STANDIN'
#!/bin/sh
echo "a kernel log" >"$2/test.log"
if [ -e "$1/.git/mutant-applied.patch" ]; then
	: >"$2/mutant-running"
	sleep 5
fi
STANDIN
chmod +x "$proj/tools/kunit/"*
# Start the runner in a process group of its own; wait until its mutant runs.
run_mutants() {
	rm -f "$work/kbuild/mutant-running"
	mkdir -p "$work/kbuild"
	MUTANTS_OUT=$work/mutants setsid "$proj/tools/kunit/mutants.sh" \
		"$tree" "$work/kbuild" "" "$work/mutant.patch" >"$work/mutants.log" 2>&1 &
	runner=$!
	i=0
	while [ ! -e "$work/kbuild/mutant-running" ] && [ "$i" -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
run_mutants
check "the mutant runner applied its mutant" 'has c.h "#define C 2" && has a.c "int hand2;"'
pkill -KILL -g "$runner"
wait "$runner" 2>/dev/null || true
check "the runner killed by SIGKILL left its mutant and the marker" \
	'has c.h "#define C 2" && [ -e "$tree/.git/mutant-applied.patch" ]'
make_tree
check "make tree reverts the killed runner's mutant and keeps the hand edit" \
	'[ "$rc" = 0 ] && has c.h "#define C 1" && has a.c "int hand2;" && grep -q "reverted the mutant .*(mutant)" "$out"'
run_mutants
kill -TERM "$runner"
wait "$runner" 2>/dev/null || true
check "the runner stopped by SIGTERM reverts its mutant itself" \
	'has c.h "#define C 1" && has a.c "int hand2;" && [ ! -e "$tree/.git/mutant-applied.patch" ]'

echo "tree-selftest: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
