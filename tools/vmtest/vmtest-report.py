#!/usr/bin/python3
"""Judge one `make vmtest` run.

Reads the guest's results (the TAP of each program the guest ran on a
filesystem, between vmtest-begin/-end markers), the host's fsck verdicts,
the kernel console log and QEMU's exit status.  Prints per-filesystem
results and the side-by-side table of answers (also written to TABLE),
and ends with "STAGE: N passed, N failed, N skipped" (--stage, default vmtest).

Each program's cases are counted from its own result lines, against its
own plan: fcheck's and fsmodel's ("ok N - FS CASE answer=... expect=...
model=..."), and the kselftest's plain TAP ("ok N NAME"), whose model
answer is OK.  A failed case, a program that exited non-zero (except with 1,
fcheck's and fsmodel's "a case failed", after a failed case), a program
whose plan is missing or does not match its result lines (the missing
cases count as failed), an fsck problem, a filesystem or guest
that did not run to the end, a kernel splat, a guest that did not boot or
timed out, a skip the skips file does not declare (or a declared one that
ran), and an answer that differs from the model answer without a line in
the intended-divergence file each fail the run (exit 1).
"""
import argparse
import fnmatch
import os
import re
import sys

# splat.py is shared with the other stages, in tools/lib.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib'))
from splat import splat_problems  # noqa: E402

CASE = re.compile(r'^(not )?ok (\d+) - (\S+) (\S+) answer=(\S+) expect=(\S+) '
                  r'model=(\S+)(.*)$')
# A result of the series' kselftest (tools/testing/selftests/filesystems/
# fallocate), run through the guest's kselftest-run: "ok N FIXTURE.VARIANT.
# TEST", "# SKIP REASON" after it for a skip.
KSFT_CASE = re.compile(r'^(not )?ok (\d+) (\S+)(.*)$')
# Any TAP result line, to catch one CASE cannot read.
RESULT = re.compile(r'^(not )?ok\b')


def read_lines(path):
    try:
        with open(path, errors='replace') as f:
            return [l.rstrip('\r\n') for l in f]
    except OSError:
        return None


def parse_results(lines):
    """Returns (booted, fss, problems).  fss: fs -> {'cases': the cases of
    all its programs, 'runs': one dict for each program the guest ran on
    it, between its own vmtest-begin/-end markers: {'prog': its name from
    its first "# NAME:" line, 'cases', 'nums': the TAP number of each,
    'plans': its plan lines, 'unread': result lines CASE cannot read,
    'end': the end marker's fields or None}}.  problems: guests whose
    results do not reach their "vmtest-done"."""
    fss, run, guest, problems = {}, None, 0, []
    finished = True
    for line in lines:
        line = line.strip('\r')
        if line.startswith('vmtest-guest '):
            if not finished:
                problems.append(f'guest {guest}: no vmtest-done (it died or '
                                'was killed before the end of its list)')
            guest, finished, run = guest + 1, False, None
        elif line == 'vmtest-done':
            finished = True
        elif line.startswith('vmtest-swap '):
            problems.append(f'guest {guest}: {line}')
        elif line.startswith('vmtest-begin '):
            run = {'prog': None, 'cases': [], 'nums': [], 'plans': [],
                   'unread': [], 'end': None}
            fs = fss.setdefault(line.split()[1], {'cases': [], 'runs': []})
            fs['runs'].append(run)
        elif run is None:
            continue
        elif line.startswith('vmtest-end '):
            run['end'] = dict(kv.split('=', 1) for kv in line.split()[2:]
                              if '=' in kv)
            run = None
        elif m := CASE.match(line):
            run['nums'].append(int(m.group(2)))
            run['cases'].append({'case': m.group(4),
                                 'ok': not m.group(1),
                                 'skip': not m.group(1) and
                                 '# SKIP' in m.group(8),
                                 'answer': m.group(5), 'expect': m.group(6),
                                 'model': m.group(7), 'diag': [],
                                 'extra': m.group(8).strip()})
        elif run['prog'] == 'kselftest' and (m := KSFT_CASE.match(line)):
            skip = not m.group(1) and '# SKIP' in m.group(4)
            run['nums'].append(int(m.group(2)))
            run['cases'].append({'case': m.group(3), 'ok': not m.group(1),
                                 'skip': skip,
                                 'answer': 'SKIP' if skip else
                                 'OK' if not m.group(1) else 'FAIL',
                                 'expect': 'OK', 'model': 'OK', 'diag': [],
                                 'extra': m.group(4).strip()})
        elif RESULT.match(line):
            run['unread'].append(line)
        elif re.fullmatch(r'1\.\.\d+', line):
            run['plans'].append(int(line[3:]))
        elif line.startswith('# '):
            if run['cases']:
                run['cases'][-1]['diag'].append(line)
            elif run['prog'] is None and (m := re.match(r'# (\w+): ', line)):
                run['prog'] = m.group(1)
    if not finished:
        problems.append(f'guest {guest}: no vmtest-done (it died or was '
                        'killed before the end of its list)')
    for fs in fss.values():
        fs['cases'] = [c for r in fs['runs'] for c in r['cases']]
    return guest > 0, fss, problems


def judge_run(name, i, run):
    """The problems of one program's run, each a failure, and how many
    cases of its plan it never reported, each a failed case (with the
    message that says so)."""
    prog = f'{name}: {run["prog"] or f"program {i}"}'
    end, problems, missing = run['end'], [], 0
    status = end.get('status', '?') if end else None
    if end is None:
        problems.append(f'{prog}: no end marker (guest crashed, hung or was '
                        'killed)')
    elif not status.isdigit():
        # mount-failed, no-disk, umount-failed: the guest's init says why.
        return [f'{prog}: {status}'], 0, None
    elif status != '0':
        # fcheck and fsmodel exit 1 when a case failed, and for nothing
        # else: any other status (a crash, a usage error, an exit before
        # the end) fails the row even if every case it printed passed.
        failed_case = any(not c['ok'] for c in run['cases'])
        if status != '1' or not failed_case:
            problems.append(f'{prog}: exited with status {status}' +
                            ('' if failed_case else ' without a failed case'))
    got = len(run['cases'])
    if len(run['plans']) != 1:
        problems.append(f'{prog}: {len(run["plans"])} plan lines, not one')
    elif run['plans'][0] < got:
        problems.append(f'{prog}: {got} results for a plan of '
                        f'{run["plans"][0]}')
    else:
        missing = run['plans'][0] - got
    lost = (f'{prog}: {got} results for a plan of {run["plans"][0]}: the '
            f'{missing} missing cases count as failed') if missing else None
    if run['nums'] != list(range(1, got + 1)):
        problems.append(f'{prog}: results numbered {run["nums"][:10]}..., '
                        f'not 1..{got} in order')
    for line in run['unread'][:5]:
        problems.append(f'{prog}: result line not understood: {line}')
    return problems, missing, lost


def read_divergence(path):
    rules = []
    for n, line in enumerate(read_lines(path) or [], 1):
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        parts = line.split(None, 4)
        if len(parts) < 5:
            sys.exit(f'{path}:{n}: want "FS CASE ANSWER MAX REASON"')
        bound = '' if parts[3] == '-' else \
            f' (at most {parts[3]} every 100 rounds)'
        rules.append({'fs': parts[0], 'case': parts[1], 'answer': parts[2],
                      'reason': parts[4] + bound, 'used': 0})
    return rules


def read_skips(path):
    lines = read_lines(path)
    if lines is None:
        sys.exit(f'cannot read {path}')
    rules = []
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3:
            sys.exit(f'{path}:{n}: want "FS CASE REASON"')
        rules.append({'fs': parts[0], 'case': parts[1], 'reason': parts[2],
                      'where': f'{path}:{n}'})
    return rules


def declared(rules, fs, case):
    return next((r for r in rules if fnmatch.fnmatchcase(fs, r['fs']) and
                 fnmatch.fnmatchcase(case, r['case'])), None)


def intended(rules, fs, case, answer):
    for r in rules:
        if (fnmatch.fnmatchcase(fs, r['fs']) and
                fnmatch.fnmatchcase(case, r['case']) and r['answer'] == answer):
            r['used'] += 1
            return r
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--results', required=True)
    ap.add_argument('--console', required=True)
    ap.add_argument('--fsck', required=True,
                    help='file of "NAME ok|fail|none" lines from the host fsck')
    ap.add_argument('--divergence', required=True)
    ap.add_argument('--skips', required=True, action='append',
                    help='file of "FS CASE REASON" lines: the skips allowed '
                    '(several: their rules together)')
    ap.add_argument('--table', required=True)
    ap.add_argument('--qemu-rc', type=int, required=True)
    ap.add_argument('--seconds', default='?')
    ap.add_argument('--stage', default='vmtest',
                    help='the name of the result lines (vmtest-arm64)')
    ap.add_argument('filesystems', nargs='+')
    args = ap.parse_args()

    passed = failed = skipped = 0
    lost_cases = []
    results = read_lines(args.results)
    console = read_lines(args.console)
    booted, fss, problems = parse_results(results or [])
    skip_rules = [r for path in args.skips for r in read_skips(path)]
    skips_named = ' or '.join(args.skips)
    fsck = {}
    for line in read_lines(args.fsck) or []:
        if line.split():
            fsck[line.split()[0]] = line.split()[1]

    if args.qemu_rc == 124:
        problems.append('timeout: the guest was killed (see the console log '
                        f'{args.console})')
    if console is None or not console:
        problems.append(f'no console output in {args.console}: QEMU did not '
                        'start the kernel')
    elif not booted:
        problems.append('the guest did not boot to its init (no results); '
                        f'see {args.console}, which ends with:\n' +
                        '\n'.join(f'    {l}' for l in console[-15:]))
    problems += splat_problems(console or [], args.console)

    # Per filesystem.
    print(f'{args.stage}: results per filesystem')
    for name in args.filesystems:
        r = fss.get(name)
        if r is None:
            print(f'  {name}: did not run')
            if booted:
                problems.append(f'{name}: the guest never started it')
            failed += 1
            continue
        ok = sum(c['ok'] and not c['skip'] for c in r['cases'])
        bad = sum(not c['ok'] for c in r['cases'])
        skip = sum(c['skip'] for c in r['cases'])
        note, seconds = [], 0.0
        for i, run in enumerate(r['runs'], 1):
            run_problems, missing, lost = judge_run(name, i, run)
            problems += run_problems
            bad += missing
            if lost:
                lost_cases.append(lost)
            if run_problems or lost:
                note.append(f'{run["prog"] or f"program {i}"}: see the '
                            'errors below')
            try:
                seconds += float(run['end']['end']) - float(
                    run['end']['start'])
            except (KeyError, TypeError, ValueError):
                pass
        # Every skip must be declared, and a declared skip must happen:
        # the file says exactly what each filesystem does not run.
        for c in r['cases']:
            rule = declared(skip_rules, name, c['case'])
            if c['skip'] and rule is None:
                why = c['extra'].split('# SKIP', 1)[1].strip()
                problems.append(f'{name} {c["case"]}: skipped ({why}) but '
                                f'not declared in {skips_named}')
            elif not c['skip'] and rule is not None:
                problems.append(f'{name} {c["case"]}: declared a skip in '
                                f'{rule["where"]}, but it ran')
        passed, failed, skipped = passed + ok, failed + bad, skipped + skip
        verdict = fsck.get(name, 'missing')
        if verdict == 'ok':
            passed += 1
            note.append('fsck clean')
        elif verdict == 'none':
            note.append('no fsck (no disk)')
        else:
            failed += 1
            note.append(f'fsck: {verdict}')
            if verdict != 'fail':
                problems.append(f'{name}: fsck verdict {verdict}')
        if seconds:
            note.append(f'{seconds:.0f} s in the guest')
        print(f'  {name}: {ok} passed, {bad} failed, {skip} skipped; '
              f'{"; ".join(note)}')
        for c in r['cases']:
            if c['case'].startswith('model'):
                print(f'    {c["case"]}: {c["extra"]}')
        for c in r['cases']:
            if not c['ok']:
                print(f'    not ok {c["case"]}: answered {c["answer"]}, '
                      f'expected {c["expect"]}')
                for d in c['diag']:
                    print(f'      {d}')

    # The side-by-side table: rows are cases, columns filesystems.
    rules = read_divergence(args.divergence)
    names = [n for n in args.filesystems if n in fss]
    cases, model = [], {}
    for n in names:
        for c in fss[n]['cases']:
            if c['case'] not in model:
                cases.append(c['case'])
                model[c['case']] = c['model']
    unintended = []
    rows = []
    for case in cases:
        row = [case, model[case]]
        for n in names:
            c = next((x for x in fss[n]['cases'] if x['case'] == case), None)
            if c is None:
                row.append('-')
                continue
            cell = c['answer']
            if c['answer'] not in ('SKIP', c['model']):
                if intended(rules, n, case, c['answer']):
                    cell += '*'
                else:
                    cell += '!'
                    unintended.append(f'{n} {case}: {c["answer"]}, model '
                                      f'{c["model"]}' +
                                      ''.join(f'\n    {d}' for d in c['diag']))
            if not c['ok']:
                cell += ' (FAIL)'
            row.append(cell)
        rows.append(row)
    head = ['case', 'model'] + names
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    fmt = '  '.join(f'{{:<{w}}}' for w in widths)
    table = [fmt.format(*head), fmt.format(*['-' * w for w in widths])]
    table += [fmt.format(*r) for r in rows]
    legend = [
        '',
        'Answer of each filesystem to each case: OK, the errno name, or SKIP',
        '(the case needs what the filesystem lacks; tools/vmtest/guest/skips.txt',
        'declares each skip with its reason).  "model" is what',
        'a filesystem supporting COLLAPSE_RANGE and INSERT_RANGE answers.',
        '*  differs from the model, listed in tools/vmtest/guest/intended-divergence.txt',
        '!  differs from the model and is NOT listed: fails the run',
        '(FAIL)  the case failed on that filesystem (answer or data checks)',
    ]
    for r in rules:
        if r['used']:
            legend.append(f'*  {r["fs"]} {r["case"]} {r["answer"]}: {r["reason"]}')
    print(f'\n{args.stage}: side-by-side table')
    print('\n'.join(table + legend))
    try:
        with open(args.table, 'w') as f:
            f.write('\n'.join(table + legend) + '\n')
    except OSError as e:
        problems.append(f'cannot write {args.table}: {e}')
    if unintended:
        failed += 1
        for u in unintended:
            print(f'{args.stage}: ERROR: unintended divergence: {u}')
    elif names:
        passed += 1

    for p in lost_cases + problems:
        print(f'{args.stage}: ERROR: {p}')
    failed += len(problems)
    print(f'{args.stage}: time {args.seconds} s')
    print(f'{args.stage}: {passed} passed, {failed} failed, {skipped} skipped')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
