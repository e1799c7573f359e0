#!/usr/bin/python3
"""Kernel splat detection shared by tools/kunit/kunit_report.py,
tools/vmtest/vmtest-report.py and tools/crashtest/crashtest.sh, so all fail on the same
reports.  As a command, it prints the splats of the console logs it is
given and exits 1 if there is any.

KASAN, lockdep, UBSAN, DEBUG_VM, DEBUG_LIST, DEBUG_ATOMIC_SLEEP and core
kernel reports.  The boot line "KernelAddressSanitizer initialized"
matches none of the patterns.
"""
import re
import sys

SPLAT = re.compile(r'BUG: |WARNING: |UBSAN: |kernel BUG at|Oops|Kernel panic'
                   r'|general protection fault|Unable to handle kernel'
                   r'|INFO: task .* blocked|stack-protector|'
                   r'detected stall|list_(add|del) corruption'
                   r'|possible circular locking|inconsistent lock state')


def splat_problems(console, where, shown=10):
    """One problem line for each of the first @shown splat lines of
    @console, and one counting the rest, which are in the file @where."""
    splats = [l.strip() for l in console if SPLAT.search(l)]
    problems = [f'kernel splat: {l}' for l in splats[:shown]]
    if len(splats) > shown:
        problems.append(f'{len(splats) - shown} more splat lines in {where}')
    return problems


def main():
    problems = []
    for path in sys.argv[1:]:
        with open(path, errors='replace') as f:
            problems += splat_problems(f.read().splitlines(), path)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
