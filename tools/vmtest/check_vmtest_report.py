#!/usr/bin/python3
"""Check that tools/vmtest/vmtest-report.py fails every way a guest run can go
wrong: it judges a small made-up run that must pass, then the same run
broken one way at a time, each of which must fail with its own message.

usage: tools/vmtest/check_vmtest_report.py
"""
import os
import subprocess
import sys
import tempfile

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      'vmtest-report.py')

# One guest, one filesystem: the kselftest (its own TAP), fcheck (plan
# last), then fsmodel (plan first).
GOOD = """vmtest-guest 6.12.0
vmtest-begin ext4
# kselftest: collapse_insert in /mnt/ext4, unit 4096
TAP version 13
1..2
# Starting 2 tests from 1 test cases.
ok 1 shift.collapse.start
ok 2 shift.collapse.append_only
# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0
vmtest-end ext4 status=0 start=0.5 end=1.0
vmtest-begin ext4
# fcheck: ext4 in /mnt/ext4, unit 4096, block 4096, flags supported
ok 1 - ext4 collapse_dense_start answer=OK expect=OK model=OK
ok 2 - ext4 reflink_insert answer=SKIP expect=OK model=OK # SKIP no reflink
1..2
vmtest-end ext4 status=0 start=1.0 end=2.0
vmtest-begin ext4
1..2
# fsmodel: ext4 in /mnt/ext4: seed 1
ok 1 - ext4 model answer=OK expect=OK model=OK seed=1
ok 2 - ext4 model_concurrent answer=OK expect=OK model=OK seed=1
vmtest-end ext4 status=0 start=2.0 end=5.0
vmtest-done
"""
SKIPS = 'ext4 reflink_* no reflink on ext4\n'

# (name, results, skips, what the report must say)
BROKEN = [
    ('fsmodel exits early, status 0',
     GOOD.replace('ok 2 - ext4 model_concurrent', '# ok 2'), SKIPS,
     'fsmodel: 1 results for a plan of 2: the 1 missing cases'),
    ('fsmodel crashes after its last case',
     GOOD.replace('status=0 start=2.0', 'status=139 start=2.0'), SKIPS,
     'fsmodel: exited with status 139 without a failed case'),
    ('fsmodel exits 1 with every case passed',
     GOOD.replace('status=0 start=2.0', 'status=1 start=2.0'), SKIPS,
     'fsmodel: exited with status 1 without a failed case'),
    ('fsmodel never starts (no plan, no case)',
     GOOD.split('1..2\n# fsmodel')[0] +
     'vmtest-end ext4 status=127 start=2.0 end=5.0\nvmtest-done\n', SKIPS,
     'program 3: 0 plan lines, not one'),
    ('fcheck dies before its plan',
     GOOD.replace('1..2\nvmtest-end ext4 status=0 start=1.0',
                  'vmtest-end ext4 status=0 start=1.0'), SKIPS,
     'fcheck: 0 plan lines, not one'),
    ('a result line the report cannot read',
     GOOD.replace('ok 1 - ext4 collapse_dense_start answer=OK expect=OK '
                  'model=OK', 'ok 1 - ext4 collapse_dense_start OK'), SKIPS,
     'result line not understood'),
    ('a skip nobody declared', GOOD, '', 'skipped (no reflink) but not '
     'declared'),
    ('a declared skip that ran',
     GOOD.replace('answer=SKIP expect=OK model=OK # SKIP no reflink',
                  'answer=OK expect=OK model=OK'), SKIPS,
     'declared a skip in'),
    ('the guest stops after its last filesystem',
     GOOD.replace('vmtest-done\n', ''), SKIPS, 'guest 1: no vmtest-done'),
    ('a kselftest case fails, the program exiting 1',
     GOOD.replace('ok 1 shift.collapse.start', 'not ok 1 shift.collapse.start')
     .replace('status=0 start=0.5', 'status=1 start=0.5'), SKIPS,
     'ext4 shift.collapse.start: FAIL, model OK'),
    ('a kselftest skip nobody declared',
     GOOD.replace('ok 2 shift.collapse.append_only',
                  'ok 2 shift.collapse.append_only # SKIP no flags'), SKIPS,
     'shift.collapse.append_only: skipped (no flags) but not declared'),
    ('the mount fails',
     GOOD.replace('status=0 start=2.0 end=5.0', 'status=mount-failed'),
     SKIPS, 'fsmodel: mount-failed'),
]


def judge(tmp, results, skips):
    files = {'results': results, 'skips': skips, 'console': 'booted\n',
             'fsck': 'ext4 ok\n', 'divergence': ''}
    for name, text in files.items():
        with open(os.path.join(tmp, name), 'w') as f:
            f.write(text)
    args = [sys.executable, REPORT, '--qemu-rc', '0',
            '--table', os.path.join(tmp, 'table')]
    args += [a for name in files for a in (f'--{name}',
                                            os.path.join(tmp, name))]
    p = subprocess.run(args + ['ext4'], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = judge(tmp, GOOD, SKIPS)
        if rc == 0 and 'ERROR' not in out:
            passed += 1
            print('verdicts: ok the good run passes')
        else:
            failed += 1
            print(f'verdicts: FAIL the good run (exit {rc}):\n{out}')
        for name, results, skips, want in BROKEN:
            rc, out = judge(tmp, results, skips)
            if rc == 1 and any(l.startswith('vmtest: ERROR: ') and want in l
                               for l in out.splitlines()):
                passed += 1
                print(f'verdicts: ok {name}: fails')
            else:
                failed += 1
                print(f'verdicts: FAIL {name}: exit {rc}, no "{want}":'
                      f'\n{out}')
    print(f'verdicts: {passed} passed, {failed} failed, 0 skipped')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
