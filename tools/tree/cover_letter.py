#!/usr/bin/env python3
"""Write patches/0000-cover-letter.patch from docs/cover-letter.txt.

usage: tools/tree/cover_letter.py TEMPLATE TREE LOGS HEADLINE OUT STAGE...

git format-patch --cover-letter --base=base writes the letter's frame from
the commits of TREE (base..HEAD): the shortlog, the diffstat and the
base-commit line.  The subject and body come from TEMPLATE, whose first
line is "SUBJECT: TITLE".  Its placeholders take the figures of the last
runs, never typed by hand:

  @TEST_SUMMARY@         the sum of the STAGEs' result lines (as make test)
  @KUNIT_SUMMARY@ ...    each STAGE's result line, from LOGS/STAGE.log
                         (the name in capitals, "-" as "_")
  @BENCH_HEADLINE@       the 64 MiB lines of HEADLINE (make bench)

A stage without a log or a result line fails the script, and so does a
log that is not from the last make test (its first line names the run of
LOGS/test.run, tools/lib/stage.sh): the letter reports only the stages of
one whole run, never a make kunit SUITES=... made since.  tools/check/check_cover_letter.py
checks the letter against the series and the logs.
"""

import os
import re
import subprocess
import sys
import tempfile

# The stage logs' result lines are read as tools/lib/summary.py reads them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib'))
from summary import last_result  # noqa: E402


def result_line(logs, stage, run):
    """The last "STAGE: N passed, N failed, N skipped" line of its log,
    which make test run @run wrote."""
    path = os.path.join(logs, f'{stage}.log')
    try:
        with open(path, errors='replace') as f:
            first = f.readline().strip()
    except OSError:
        first = ''
    if first != f'{stage}: a stage of make test run {run}':
        sys.exit(f'cover_letter: {path} is not from the last make test '
                 f'(run {run}): run make test, then make cover-letter')
    line, counts = last_result(path, stage)
    if line is None:
        sys.exit(f'cover_letter: no result line of {stage} in {path}')
    return line, counts


def main():
    template, tree, logs, headline, out = sys.argv[1:6]
    stages = sys.argv[6:]
    with open(template) as f:
        text = f.read()
    first, body = text.split('\n', 1)
    if not first.startswith('SUBJECT: '):
        sys.exit(f'cover_letter: {template} must start with "SUBJECT: "')
    title = first[len('SUBJECT: '):].strip()

    try:
        with open(os.path.join(logs, 'test.run')) as f:
            run = f.read().strip()
    except OSError:
        sys.exit(f'cover_letter: no {logs}/test.run: run make test first')
    total = [0, 0, 0]
    fill = {}
    for stage in stages:
        line, counts = result_line(logs, stage, run)
        total = [a + b for a, b in zip(total, counts)]
        fill[f'@{stage.upper().replace("-", "_")}_SUMMARY@'] = f'  {line}'
    fill['@TEST_SUMMARY@'] = (f'  test: {total[0]} passed, {total[1]} failed, '
                              f'{total[2]} skipped')
    try:
        with open(headline) as f:
            # "FS 64 MiB warm collapse 4k@0: FIGURES"; the text before
            # the lines says which case it is, so the lines fit 75 columns.
            bench = ['  {0}: {2}'.format(*l.strip().partition(
                ' warm collapse 4k@0: ')) for l in f if ' 64 MiB ' in l]
    except OSError:
        sys.exit(f'cover_letter: no {headline}: run make bench QUICK=1')
    fill['@BENCH_HEADLINE@'] = '\n'.join(bench)
    for key, value in fill.items():
        body = body.replace(key, value)
    left = re.findall(r'@[A-Z0-9_]+@', body)
    if left:
        sys.exit(f'cover_letter: {template} has unknown placeholders {left}')

    author = subprocess.run(['git', '-C', tree, 'log', '-1', '--format=%an%n%ae',
                             'base..HEAD'], capture_output=True, text=True,
                            check=True).stdout.split('\n')
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(['git', '-C', tree, '-c', f'user.name={author[0]}',
                        '-c', f'user.email={author[1]}', 'format-patch', '-q',
                        '--cover-letter', '--base=base', '--zero-commit',
                        '--no-signature', '-o', tmp, 'base..HEAD'], check=True)
        with open(os.path.join(tmp, '0000-cover-letter.patch')) as f:
            letter = f.read()
    # git's summary of created files repeats the diffstat's paths, and a
    # selftest's path runs past the 75 columns checkpatch allows a letter.
    letter = re.sub(r'^ (create|delete) mode \d+ .*\n', '', letter,
                    flags=re.M)
    for stub, value in (('*** SUBJECT HERE ***', title),
                        ('*** BLURB HERE ***', body.strip('\n'))):
        if stub not in letter:
            sys.exit(f'cover_letter: git format-patch wrote no "{stub}"')
        letter = letter.replace(stub, value)
    # The date of the run, not of the moment the letter was written.
    letter = re.sub(r'^Date: .*$', 'Date: ' + subprocess.run(
        ['date', '-R', '-r', os.path.join(logs, f'{stages[0]}.log')],
        capture_output=True, text=True, check=True).stdout.strip(),
        letter, count=1, flags=re.M)
    with open(out, 'w') as f:
        f.write(letter)
    print(f'cover_letter: wrote {out} ({title})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
