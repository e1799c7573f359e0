#!/bin/sh
# Apply and revert one mutant (kunit/mutants/*.patch) in the series tree,
# leaving a marker while it is applied, so that a `make mutants` killed
# mid-run (SIGKILL, a crash, a lost session) is cleaned up by the next
# `make mutants` or `make tree`: exactly that mutant is reverted, and any
# other change in the tree is kept.
#
# The marker is a copy of the mutant in the tree's .git directory after a
# line naming it, written before the mutant is applied, so that it still
# reverts the mutant when the file in kunit/mutants/ has changed since.
#
# usage: tools/tree/mutant.sh apply TREE MUTANT
#        tools/tree/mutant.sh revert TREE
#        tools/tree/mutant.sh recover TREE
set -eu

action=$1
tree=$2
marker=$tree/.git/mutant-applied.patch

case $action in
apply)
	mutant=$3
	{
		echo "Mutant: $(basename "$mutant" .patch)"
		cat "$mutant"
	} >"$marker.tmp"
	mv "$marker.tmp" "$marker"
	if ! git -C "$tree" apply "$(realpath "$marker")"; then
		rm -f "$marker"
		exit 1
	fi
	;;
revert)
	git -C "$tree" apply -R "$(realpath "$marker")"
	rm -f "$marker"
	;;
recover)
	[ -f "$marker" ] || exit 0
	name=$(sed -n 's/^Mutant: //p' "$marker" | head -n 1)
	if git -C "$tree" apply -R --check "$(realpath "$marker")" 2>/dev/null; then
		git -C "$tree" apply -R "$(realpath "$marker")"
		echo "tree: reverted the mutant an interrupted 'make mutants' left applied ($name)"
	elif git -C "$tree" apply --check "$(realpath "$marker")" 2>/dev/null; then
		# Killed between writing the marker and applying the mutant.
		echo "tree: the interrupted 'make mutants' had not applied its mutant ($name)"
	else
		echo "tree: the mutant an interrupted 'make mutants' applied ($name) is edited over:" >&2
		echo "tree: revert it by hand (the mutant is $marker), remove that file, and run make again" >&2
		exit 1
	fi
	rm -f "$marker"
	;;
*)
	echo "mutant: usage: $0 apply TREE MUTANT | revert TREE | recover TREE" >&2
	exit 2
	;;
esac
