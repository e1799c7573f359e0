#!/usr/bin/python3
"""Judge one `make vmtest` run.

Reads the guest's results (fcheck TAP between vmtest-begin/-end markers),
the host's fsck verdicts, the kernel console log and QEMU's exit status.
Prints per-filesystem results and the side-by-side table of answers (also
written to TABLE), and ends with "vmtest: N passed, N failed, N skipped".

A failed case, an fsck problem, a filesystem that did not run to the end,
a kernel splat, a guest that did not boot or timed out, and an answer that
differs from the model answer without a line in the intended-divergence
file each fail the run (exit 1).
"""
import argparse
import fnmatch
import re
import sys

from splat import splat_problems

CASE = re.compile(r'^(not )?ok \d+ - (\S+) (\S+) answer=(\S+) expect=(\S+) '
                  r'model=(\S+)(.*)$')


def read_lines(path):
    try:
        with open(path, errors='replace') as f:
            return [l.rstrip('\r\n') for l in f]
    except OSError:
        return None


def parse_results(lines):
    """fs -> {'cases': [(case, ok, skip, answer, expect, model, diag,
    extra)], 'end': status dict of its last program or None, 'bad':
    statuses that are not exit codes, 'seconds', 'plan': int or None}.
    A filesystem may run several programs (fcheck, then fsmodel), each
    between its own markers: their cases, plans and times add up."""
    fss, cur, booted = {}, None, False
    for line in lines:
        line = line.strip('\r')
        if line.startswith('vmtest-guest '):
            booted = True
        elif line.startswith('vmtest-begin '):
            cur = fss.setdefault(line.split()[1],
                                 {'cases': [], 'end': None, 'plan': None,
                                  'bad': [], 'seconds': 0.0})
            cur['end'] = None
        elif line.startswith('vmtest-end ') and cur is not None:
            end = dict(kv.split('=', 1) for kv in line.split()[2:]
                       if '=' in kv)
            cur['end'] = end
            if not end.get('status', '').isdigit():
                cur['bad'].append(end.get('status'))
            try:
                cur['seconds'] += float(end['end']) - float(end['start'])
            except (KeyError, ValueError):
                pass
            cur = None
        elif cur is not None and (m := CASE.match(line)):
            cur['cases'].append({'case': m.group(3), 'ok': not m.group(1),
                                 'skip': '# SKIP' in m.group(7),
                                 'answer': m.group(4), 'expect': m.group(5),
                                 'model': m.group(6), 'diag': [],
                                 'extra': m.group(7).strip()})
        elif cur is not None and line.startswith('1..'):
            cur['plan'] = (cur['plan'] or 0) + int(line[3:])
        elif cur is not None and line.startswith('# ') and cur['cases']:
            cur['cases'][-1]['diag'].append(line)
    return booted, fss


def read_divergence(path):
    rules = []
    for n, line in enumerate(read_lines(path) or [], 1):
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        parts = line.split(None, 3)
        if len(parts) < 4:
            sys.exit(f'{path}:{n}: want "FS CASE ANSWER REASON"')
        rules.append({'fs': parts[0], 'case': parts[1], 'answer': parts[2],
                      'reason': parts[3], 'used': 0})
    return rules


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
    ap.add_argument('--table', required=True)
    ap.add_argument('--qemu-rc', type=int, required=True)
    ap.add_argument('--seconds', default='?')
    ap.add_argument('filesystems', nargs='+')
    args = ap.parse_args()

    passed = failed = skipped = 0
    problems = []
    results = read_lines(args.results)
    console = read_lines(args.console)
    booted, fss = parse_results(results or [])
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
    print('vmtest: results per filesystem')
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
        passed, failed, skipped = passed + ok, failed + bad, skipped + skip
        end = r['end']
        note = []
        if end is None:
            problems.append(f'{name}: no end marker (guest crashed, hung or '
                            'was killed)')
            note.append('did not finish')
        for status in r['bad']:
            problems.append(f'{name}: {status}')
            note.append(status)
        if r['plan'] is None and end is not None and not r['bad']:
            problems.append(f'{name}: fcheck gave no plan line')
        elif r['plan'] is not None and r['plan'] != len(r['cases']):
            problems.append(f'{name}: {len(r["cases"])} results for a plan of '
                            f'{r["plan"]}')
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
        if r['seconds']:
            note.append(f'{r["seconds"]:.0f} s in the guest')
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
        '(the case needs a feature the filesystem lacks: FS_IOC_SETFLAGS,',
        'reflink, or an allocation unit larger than a block).  "model" is what',
        'a filesystem supporting COLLAPSE_RANGE and INSERT_RANGE answers.',
        '*  differs from the model, listed in tools/guest/intended-divergence.txt',
        '!  differs from the model and is NOT listed: fails the run',
        '(FAIL)  the case failed on that filesystem (answer or data checks)',
    ]
    for r in rules:
        if r['used']:
            legend.append(f'*  {r["fs"]} {r["case"]} {r["answer"]}: {r["reason"]}')
    print('\nvmtest: side-by-side table')
    print('\n'.join(table + legend))
    try:
        with open(args.table, 'w') as f:
            f.write('\n'.join(table + legend) + '\n')
    except OSError as e:
        problems.append(f'cannot write {args.table}: {e}')
    if unintended:
        failed += 1
        for u in unintended:
            print(f'vmtest: ERROR: unintended divergence: {u}')
    elif names:
        passed += 1

    for p in problems:
        print(f'vmtest: ERROR: {p}')
    failed += len(problems)
    print(f'vmtest: time {args.seconds} s')
    print(f'vmtest: {passed} passed, {failed} failed, {skipped} skipped')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
