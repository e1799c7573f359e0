#!/usr/bin/python3
"""Judge one kunit.py run from its console log and JSON.

Writes the console log and the KTAP it carries next to the JSON, prints the
per-suite summary and a last line "<stage>: N passed, N failed, N skipped".
Exits 1 on a failed or crashed case, a missing suite, an incomplete run
(crash, hang or timeout), a kernel splat anywhere in the console log, or a
skip the skips file does not declare for the architecture (and one it
declares that ran and did not skip: the line is stale).
"""
import argparse
import fnmatch
import json
import os
import re
import shutil
import sys

# splat.py is shared with the other stages, in tools/lib.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib'))
from splat import splat_problems  # noqa: E402

TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
KTAP_LINE = re.compile(r'^\s*(KTAP version|TAP version|1\.\.\d+|ok |not ok |# )')
TOP_RESULT = re.compile(r'^(ok|not ok) \d+ ')
TOP_PLAN = re.compile(r'^1\.\.(\d+)$')


def count(group, acc, cases, path):
    """Add @group's cases to @acc (passed, failed, skipped) and "STATUS
    NAME" lines to @cases, NAME dotted from the suite down (@path)."""
    for case in group.get('test_cases', []):
        acc[{'PASS': 0, 'SKIP': 2}.get(case.get('status'), 1)] += 1
        cases.append(f"{case.get('status')} {path}.{case.get('name')}")
    for sub in group.get('sub_groups', []):
        count(sub, acc, cases, f"{path}.{sub.get('name')}")


def skip_problems(cases, skips_path, arch):
    """List the declared skips of @arch that happened and return the
    problems: a skip not declared, a declared one that ran and passed."""
    declared = {}
    if skips_path:
        with open(skips_path) as f:
            for line in f:
                fields = line.split(None, 2)
                if fields and not fields[0].startswith('#') and fields[0] == arch:
                    declared[fields[1]] = fields[2].strip() if len(fields) > 2 else ''
    problems = []
    for case in cases:
        status, name = case.split(' ', 1)
        if status == 'SKIP' and name in declared:
            print(f'  declared skip {name}: {declared[name]}')
        elif status == 'SKIP':
            problems.append(f'{name} skipped, and {skips_path or "no skips file"} '
                            f'does not declare it for {arch}')
        elif name in declared:
            problems.append(f'{name} is declared a skip for {arch} but ran '
                            f'({status}): remove the line')
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--log', required=True, help="kunit.py's test.log")
    ap.add_argument('--json', required=True, help="kunit.py's JSON output")
    ap.add_argument('--console-out', required=True)
    ap.add_argument('--ktap-out', required=True)
    ap.add_argument('--suites', nargs='*', default=[],
                    help='suites that must be present')
    ap.add_argument('--stage', default='kunit')
    ap.add_argument('--filter', default='',
                    help="kunit.py's filter glob: only the --suites it "
                    'matches must be present')
    ap.add_argument('--arch', default='x86_64')
    ap.add_argument('--skips', help='the declared skips: lines "ARCH NAME '
                    'REASON", NAME as in --cases-out; without it any skip '
                    'is an error')
    ap.add_argument('--cases-out',
                    help='write each case there as "STATUS NAME", STATUS '
                    "kunit.py's (PASS, FAIL, SKIP, ERROR), NAME SUITE.CASE "
                    'or SUITE.CASE.PARAM')
    args = ap.parse_args()
    problems = []

    try:
        shutil.copyfile(args.log, args.console_out)
        with open(args.log, errors='replace') as f:
            console = [TIMESTAMP.sub('', l.rstrip('\n')) for l in f]
    except OSError as e:
        console = []
        problems.append(f'no console log: {e}')

    ktap, started = [], False
    for line in console:
        started = started or 'KTAP version' in line or 'TAP version' in line
        if started and KTAP_LINE.match(line):
            ktap.append(line)
    with open(args.ktap_out, 'w') as f:
        f.write('\n'.join(ktap) + '\n')

    # One KTAP document for the built-in suites, and one more for every
    # module with suites (tools/kunit/kunit-modules.sh): their plans add up.
    plans = [int(m.group(1)) for m in map(TOP_PLAN.match, ktap) if m]
    results = sum(1 for l in ktap if TOP_RESULT.match(l))
    if not plans:
        problems.append('no KTAP plan in the console log: the kernel did not boot or run KUnit')
    elif results < sum(plans):
        problems.append(f'incomplete run: {results} of {sum(plans)} suites reported '
                        '(crash, hang or timeout; see the console log)')

    problems += splat_problems(console, args.console_out)

    try:
        with open(args.json) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        data = {}
        problems.append(f'no usable JSON from kunit.py: {e}')
    suites = data.get('sub_groups', [])
    total = [0, 0, 0]
    cases = []
    for suite in suites:
        acc = [0, 0, 0]
        count(suite, acc, cases, suite.get('name'))
        total = [a + b for a, b in zip(total, acc)]
        print(f"  {suite.get('name', '?')}: {acc[0]} passed, {acc[1]} failed, "
              f"{acc[2]} skipped")
    names = {s.get('name') for s in suites}
    wanted = args.suites
    if args.filter:
        suite_glob = args.filter.split('.')[0]
        wanted = [w for w in wanted if fnmatch.fnmatchcase(w, suite_glob)]
        if not wanted:
            problems.append(f'filter {args.filter} matches none of the suites '
                            f'{" ".join(args.suites)}')
    for want in wanted:
        if want not in names:
            problems.append(f'suite {want} is missing from the run')
    problems += skip_problems(cases, args.skips, args.arch)
    if sum(total) == 0:
        problems.append('no test case ran')

    if args.cases_out:
        with open(args.cases_out, 'w') as f:
            f.write(''.join(f'{c}\n' for c in cases))
    for p in problems:
        print(f'{args.stage}: ERROR: {p}')
    failed = total[1] + (1 if problems and not total[1] else 0)
    print(f'{args.stage}: {total[0]} passed, {failed} failed, {total[2]} skipped')
    return 1 if total[1] or problems else 0


if __name__ == '__main__':
    sys.exit(main())
