#!/usr/bin/python3
"""Sum the result lines of finished stages into one line.

Each stage NAME left build/logs/NAME.log ending in a line
"NAME: N passed, N failed, N skipped" and its exit status in
build/logs/NAME.rc (tools/lib/stage.sh).  Prints a table of the stages'
wall times (build/logs/NAME.time, tools/lib/timed.sh), with the times a
stage's log names in lines "WHO: time of WHAT: N s" (the kernel builds of
kunit) under it, then "TOTAL: N passed, N failed, N skipped"; exits 1 if
any stage failed, exited non-zero or gave no result line; such a stage
counts as one failure.  --timed-before NAME,... puts the times of steps
run before the stages (make test's deps and tree) at the head of the
table.

usage: tools/lib/summary.py [--timed-before NAME,...] TOTAL STAGE...
"""
import re
import sys

RESULT = re.compile(r'^([\w-]+): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$')
PART_TIME = re.compile(r'^[\w-]+: time of (.+): (\d+) s$')


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


def minutes(secs):
    return f'{secs // 60:3d} min {secs % 60:2d} s'


def stage_time(name):
    """The wall time of the stage @name in seconds, summed over its runs
    (a line each), None if not recorded."""
    try:
        with open(f'build/logs/{name}.time') as f:
            return sum(int(line) for line in f if line.strip())
    except (OSError, ValueError):
        return None


def part_times(name):
    """The (what, seconds) pairs the log of the stage @name reports."""
    try:
        with open(f'build/logs/{name}.log', errors='replace') as f:
            return [(m.group(1), int(m.group(2)))
                    for m in map(PART_TIME.match, f) if m]
    except OSError:
        return []


def print_times(total_name, names):
    print(f'{total_name}: wall time of each stage:')
    width = max(len(n) for n in names) + 2
    total = 0
    for name in names:
        secs = stage_time(name)
        if secs is None:
            print(f'{total_name}:   {name:<{width}} not timed')
            continue
        total += secs
        print(f'{total_name}:   {name:<{width}}{minutes(secs)}')
        for what, part in part_times(name):
            print(f'{total_name}:     {what}: {minutes(part).strip()}')
    print(f'{total_name}:   {"all":<{width}}{minutes(total)}')


def main():
    args = sys.argv[1:]
    before = []
    if args[:1] == ['--timed-before']:
        before, args = [n for n in args[1].split(',') if n], args[2:]
    total_name, stages = args[0], args[1:]
    print_times(total_name, before + stages)
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
