#!/bin/sh
# A worktree of the kernel tree at tag 'base': the pinned kernel without
# the series, for `make bench-base-kernel` (the fill-path benchmark
# compares the series with it).  Re-set to base on every call.
#
# usage: tools/tree/base-tree.sh TREE BASE_DIR
set -eu

tree=$1
base_dir=$2

if [ ! -d "$base_dir/.git" ] && [ ! -f "$base_dir/.git" ]; then
	echo "base-tree: adding $base_dir, the tree at tag base"
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$(realpath -m "$base_dir")" base
fi
git -C "$base_dir" checkout -q --detach base
git -C "$base_dir" reset -q --hard base
echo "base-tree: $base_dir is at base ($(git -C "$base_dir" log -1 --format=%s))"
