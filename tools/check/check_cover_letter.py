#!/usr/bin/env python3
"""Check patches/0000-cover-letter.patch against the series and the runs.

usage: tools/check/check_cover_letter.py LETTER PATCH_DIR LOGS STAGE...

patches/series must list the letter first, and the letter must announce as
many patches as the series names after it and list each one's subject in
its shortlog.  Its figures must be those of the last
runs: every "STAGE: N passed, N failed, N skipped" line it quotes for a
STAGE whose log in LOGS has a result line must be that line, and its
"test:" line must be the sum of the STAGEs' logs, as
tools/tree/cover_letter.py wrote it (make cover-letter).  A stage without
a log is not compared.
Prints one line a check and "cover: N passed, N failed"; exits 1 on any
failure.
"""

import os
import re
import sys

# The same result lines tools/lib/summary.py reads, quoted indented here.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib'))
from summary import RESULT, last_result  # noqa: E402


def subject_of(path):
    """The Subject header of a patch file, unfolded, without [PATCH...]."""
    with open(path, errors='replace') as f:
        text = f.read()
    m = re.search(r'^Subject: (.*(?:\n[ \t].*)*)', text, re.M)
    if not m:
        return None
    subject = ' '.join(m.group(1).split())
    return re.sub(r'^\[PATCH[^\]]*\]\s*', '', subject)


def log_result(logs, stage):
    """The counts of the last result line of LOGS/STAGE.log, or None."""
    return last_result(os.path.join(logs, f'{stage}.log'), stage)[1]


def main():
    letter_path, patches, logs, stages = (sys.argv[1], sys.argv[2],
                                          sys.argv[3], sys.argv[4:])
    passed = failed = 0

    def verdict(ok, what):
        nonlocal passed, failed
        print(f'cover: {"ok" if ok else "FAILED"}: {what}')
        if ok:
            passed += 1
        else:
            failed += 1

    try:
        with open(letter_path, errors='replace') as f:
            letter = f.read()
    except OSError as e:
        print(f'cover: FAILED: {e} (make cover-letter writes it)')
        print('cover: 0 passed, 1 failed')
        return 1
    with open(os.path.join(patches, 'series')) as f:
        series = [l.strip() for l in f if l.strip() and not l.startswith('#')]
    name = os.path.basename(letter_path)
    verdict(series[:1] == [name], f'patches/series lists {name} first')
    series = [p for p in series if p != name]

    m = re.search(r'^Subject: \[PATCH 0+/(\d+)\]', letter, re.M)
    verdict(m and int(m.group(1)) == len(series),
            f'the letter announces {m.group(1) if m else "no"} patches, '
            f'patches/series names {len(series)}')
    flat = ' '.join(letter.split())
    missing = [p for p in series
               if ' '.join((subject_of(os.path.join(patches, p)) or p).split())
               not in flat]
    verdict(not missing, 'every patch of the series is in the shortlog' +
            (f'; missing: {", ".join(missing)}' if missing else ''))

    quoted = {}
    for line in letter.split('\n'):
        m = RESULT.match(line.strip())
        if m:
            quoted[m.group(1)] = [int(g or 0) for g in m.groups()[1:]]
    total, have_all = [0, 0, 0], True
    for stage in stages:
        counts = log_result(logs, stage)
        if counts is None:
            have_all = False
            continue
        total = [a + b for a, b in zip(total, counts)]
        if stage in quoted:
            verdict(quoted[stage] == counts,
                    f'{stage}: the letter says {quoted[stage]}, the last run '
                    f'{counts} (passed, failed, skipped)')
    if have_all:
        verdict(quoted.get('test') == total,
                f'test: the letter says {quoted.get("test")}, the stages '
                f'{" ".join(stages)} sum to {total}')
    else:
        print('cover: the test line is not compared: a stage has no log here')
    print(f'cover: {passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
