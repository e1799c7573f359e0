#!/usr/bin/python3
"""Sum the result lines of finished stages into one line.

Each stage NAME left build/logs/NAME.log ending in a line
"NAME: N passed, N failed, N skipped" and its exit status in
build/logs/NAME.rc (tools/lib/stage.sh).  Prints "TOTAL: N passed, N failed,
N skipped" and exits 1 if any stage failed, exited non-zero or gave no
result line; such a stage counts as one failure.

usage: tools/lib/summary.py TOTAL STAGE...
"""
import re
import sys

RESULT = re.compile(r'^([\w-]+): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$')


def last_result(path, name):
    """The last "NAME: N passed, N failed, N skipped" line of the file
    @path, stripped, and its counts [passed, failed, skipped]; (None,
    None) if it has none or cannot be read.  Also used by the cover
    letter's writer and its check."""
    try:
        with open(path, errors='replace') as f:
            lines = [l.strip() for l in f]
    except OSError:
        return None, None
    for line in reversed(lines):
        m = RESULT.match(line)
        if m and m.group(1) == name:
            return line, [int(g or 0) for g in m.groups()[1:]]
    return None, None


def stage_result(name):
    _, counts = last_result(f'build/logs/{name}.log', name)
    try:
        with open(f'build/logs/{name}.rc') as f:
            rc = int(f.read().strip() or 1)
    except (OSError, ValueError):
        return None, 1
    return counts, rc


def main():
    total_name, stages = sys.argv[1], sys.argv[2:]
    total, bad = [0, 0, 0], False
    for name in stages:
        counts, rc = stage_result(name)
        if counts is None:
            print(f'{total_name}: stage {name} gave no result line (exit {rc})')
            counts = [0, 1, 0]
        elif rc and not counts[1]:
            print(f'{total_name}: stage {name} exited {rc}')
            counts[1] += 1
        bad = bad or rc != 0 or counts[1] > 0
        total = [a + b for a, b in zip(total, counts)]
    print(f'{total_name}: {total[0]} passed, {total[1]} failed, {total[2]} skipped')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
