#!/usr/bin/env python3
"""Check the in-tree kunitconfigs of the series' suites.

usage: tools/kunit/check_kunitconfigs.py TREE BUILD_DIR UNION DIR...

Each TREE/DIR/.kunitconfig must be enough on its own: `kunit.py config
--arch=x86_64 --kunitconfig=DIR` makes its .config in BUILD_DIR/DIR and
fails if a symbol it names is missing or cannot be set (a renamed option,
an unmet dependency).  UNION (kunit/collapse.kunitconfig, what `make kunit`
builds) must hold exactly the options of all of them together, so that the
one-suite loop and the full run build the same suites.  Prints one line a
kunitconfig and a last "kunitconfigs: N passed, N failed" line; exits 1 on
any failure.
"""

import os
import subprocess
import sys


def main():
    tree, build, union_path, dirs = (os.path.abspath(sys.argv[1]),
                                     os.path.abspath(sys.argv[2]),
                                     sys.argv[3], sys.argv[4:])
    sys.path.insert(0, os.path.join(tree, 'tools', 'testing', 'kunit'))
    import kunit_config  # pylint: disable=import-outside-toplevel

    kunit_py = os.path.join(tree, 'tools', 'testing', 'kunit', 'kunit.py')
    passed = failed = 0
    union = set()
    for d in dirs:
        path = os.path.join(tree, d, '.kunitconfig')
        out = os.path.join(build, d.replace('/', '-'))
        if not os.path.isfile(path):
            print(f'kunitconfigs: {d}: no .kunitconfig in the tree')
            failed += 1
            continue
        union |= set(kunit_config.parse_file(path).as_entries())
        os.makedirs(out, exist_ok=True)
        run = subprocess.run(
            [sys.executable, kunit_py, 'config', '--arch=x86_64',
             f'--kunitconfig={path}', f'--build_dir={out}'],
            cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, check=False)
        if run.returncode:
            print(f'kunitconfigs: {d}: kunit.py config failed:')
            print(run.stdout)
            failed += 1
        else:
            print(f'kunitconfigs: {d}: every option set on its own')
            passed += 1

    have = set(kunit_config.parse_file(union_path).as_entries())
    if have == union:
        print(f'kunitconfigs: {union_path} is their union')
        passed += 1
    else:
        for e in sorted(map(str, union - have)):
            print(f'kunitconfigs: {union_path} lacks {e}')
        for e in sorted(map(str, have - union)):
            print(f'kunitconfigs: {union_path} has {e}, which no '
                  'in-tree kunitconfig names')
        failed += 1
    print(f'kunitconfigs: {passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
