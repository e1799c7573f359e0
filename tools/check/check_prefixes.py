#!/usr/bin/python3
"""Prove every prefix of the series builds, W=1 and sparse (C=2) clean.

For each commit of the applied series (build/linux, base..HEAD), in order,
a worktree is checked out at that commit and the objects built from the
files it touches are compiled with W=1 C=2.  A prefix passes when make
succeeds and neither gcc nor sparse says anything new about a file the
series touches: warnings the pristine tree already gives for the same
object (compiled once at 'base') are not the series' and are not counted.
A .c file that is #included by another (a KUnit suite) is compiled through
its includer.

usage: tools/check/check_prefixes.py TREE WORKTREE BUILD_DIR FRAGMENT...
"""
import collections
import os
import re
import subprocess
import sys

DIAG = re.compile(r'^(\S+?):\d+:(?:\d+:)? (warning|error): (.*)$')


def git(repo, *args):
    return subprocess.run(['git', '-C', repo, *args], check=True, text=True,
                          capture_output=True).stdout.split()


def setup_worktree(tree, worktree):
    if os.path.isdir(worktree):
        ok = subprocess.run(['git', '-C', worktree, 'rev-parse', '--git-dir'],
                            capture_output=True).returncode == 0
        if ok:
            return
        subprocess.run(['rm', '-rf', worktree], check=True)
    subprocess.run(['git', '-C', tree, 'worktree', 'prune'], check=True)
    print(f'prefixes: adding worktree {worktree}', flush=True)
    git(tree, 'worktree', 'add', '-q', '--detach', os.path.abspath(worktree), 'base')


def setup_config(worktree, build, fragments):
    os.makedirs(build, exist_ok=True)
    text = ''.join(open(f).read() for f in fragments)
    stamp = os.path.join(build, '.fragments')
    if os.path.exists(stamp) and open(stamp).read() == text:
        return
    with open(os.path.join(build, '.config'), 'w') as f:
        f.write(text)
    make(worktree, build, ['olddefconfig'])
    with open(stamp, 'w') as f:
        f.write(text)


def make(worktree, build, targets, extra=()):
    cmd = ['make', '-C', worktree, f'O={os.path.abspath(build)}', 'ARCH=x86_64',
           'CC=ccache gcc', f'-j{os.cpu_count()}', *extra, *targets]
    env = dict(os.environ, CCACHE_BASEDIR=os.path.dirname(os.path.abspath(build)))
    return subprocess.run(cmd, text=True, capture_output=True, env=env)


def objects_for(worktree, path):
    """The objects to build for a touched file: none for non-C files, nor
    for user-space programs under tools/ (the kselftest), which are not
    kernel objects and which make vmtest compiles with -Wall -Werror."""
    if not path.endswith('.c') or path.startswith('tools/'):
        return set()
    name = os.path.basename(path)
    here = os.path.dirname(path)
    includers = set()
    for d in {here, os.path.dirname(here)}:
        for f in os.listdir(os.path.join(worktree, d)):
            full = os.path.join(worktree, d, f)
            if f.endswith('.c') and os.path.isfile(full):
                text = open(full, errors='replace').read()
                if re.search(r'#include\s+"([\w./-]*/)?%s"' % re.escape(name), text):
                    includers.add(os.path.join(d, f))
    return {p[:-2] + '.o' for p in (includers or {path})}


def diagnostics(worktree, build, result, files):
    seen = collections.Counter()
    for line in (result.stdout + result.stderr).splitlines():
        m = DIAG.match(line)
        if not m:
            continue
        path = m.group(1)
        if not os.path.isabs(path):
            path = os.path.join(build, path)
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(worktree))
        if rel in files:
            seen[f'{rel}: {m.group(2)}: {m.group(3)}'] += 1
    return seen


def build_objects(worktree, build, objects, files):
    for o in objects:   # make decides from mtimes; a checkout may keep them
        os.utime(os.path.join(worktree, o[:-2] + '.c'))
    result = make(worktree, build, sorted(objects), ['W=1', 'C=2'])
    return result, diagnostics(worktree, build, result, files)


def main():
    tree, worktree, build, fragments = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    commits = git(tree, 'rev-list', '--reverse', 'base..HEAD')
    if not commits:
        print('prefixes: the series is empty')
        print('prefixes: 0 passed, 0 failed, 0 skipped')
        return 0
    setup_worktree(tree, worktree)
    touched = {c: git(tree, 'diff-tree', '--no-commit-id', '--name-only', '-r', c)
               for c in commits}
    files = set().union(*touched.values())

    git(worktree, 'checkout', '-q', '--detach', 'base')
    setup_config(worktree, build, fragments)
    print('prefixes: preparing the build directory', flush=True)
    result = make(worktree, build, ['prepare'])
    if result.returncode:
        print(result.stdout[-3000:] + result.stderr[-3000:])
        print('prefixes: 0 passed, 1 failed, 0 skipped')
        return 1

    baseline = {}
    for f in sorted(files):
        if os.path.exists(os.path.join(worktree, f)):
            for o in objects_for(worktree, f):
                if o not in baseline:
                    _, baseline[o] = build_objects(worktree, build, {o}, files)
    passed = failed = 0
    for i, c in enumerate(commits, 1):
        git(worktree, 'checkout', '-q', '--detach', c)
        subject = subprocess.run(['git', '-C', worktree, 'log', '-1', '--format=%s'],
                                 text=True, capture_output=True).stdout.strip()
        objects = set().union(*(objects_for(worktree, f) for f in touched[c]
                                if os.path.exists(os.path.join(worktree, f))))
        new = collections.Counter()
        result = None
        for o in sorted(objects):
            result_o, seen = build_objects(worktree, build, {o}, files)
            new += seen - baseline.get(o, collections.Counter())
            if result_o.returncode:
                result = result_o
        if result is None and not new:
            passed += 1
            print(f'prefixes: ok {i}/{len(commits)} {subject} '
                  f'({" ".join(sorted(objects)) or "no C objects"})', flush=True)
            continue
        failed += 1
        print(f'prefixes: FAIL {i}/{len(commits)} {subject}')
        for msg in new:
            print(f'  new: {msg}')
        if result is not None:
            print((result.stdout + result.stderr)[-4000:])
    print(f'prefixes: {passed} passed, {failed} failed, 0 skipped')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
