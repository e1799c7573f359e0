#!/usr/bin/python3
"""Merge the KTAP documents of a console log into one.

Built-in suites print one KTAP document at boot; every module that holds
suites prints another as it loads.  kunit.py parses one document, so this
prints a single one: the header, a plan that is the sum of the plans, and
every suite's lines with the top-level results numbered in order.  Lines
that are not KTAP (the kernel's own messages) are left out.
"""
import re
import sys

# The console conventions tools/kunit/kunit_report.py already parses.
from kunit_report import TIMESTAMP, TOP_PLAN as PLAN

HEADER = re.compile(r'^(KTAP|TAP) version \d+$')
TOP_RESULT = re.compile(r'^(ok|not ok) \d+(.*)$')
NESTED = re.compile(r'^\s+\S|^# ')


def main():
    planned, body, number, in_doc = 0, [], 0, False
    with open(sys.argv[1], errors='replace') as f:
        for raw in f:
            line = TIMESTAMP.sub('', raw.rstrip('\n').rstrip('\r'))
            if HEADER.match(line):
                in_doc = True
                continue
            if not in_doc:
                continue
            plan = PLAN.match(line)
            if plan:
                planned += int(plan.group(1))
                continue
            result = TOP_RESULT.match(line)
            if result:
                number += 1
                body.append(f'{result.group(1)} {number}{result.group(2)}')
            elif NESTED.match(line):
                body.append(line)
    print('KTAP version 1')
    print(f'1..{planned}')
    print('\n'.join(body))


if __name__ == '__main__':
    main()
