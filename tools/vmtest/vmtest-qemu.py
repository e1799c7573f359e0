#!/usr/bin/python3
"""Run the guest of `make vmtest` or `make bench` in QEMU and follow it.

Starts QEMU with the kernel console on its stdio (kept in CONSOLE) and the
guest's results on a second serial port (written to RESULTS), prints one
progress line per filesystem as the guest reports it, and the guest's own
"progress " lines, each after "LABEL: ", and kills QEMU after TIMEOUT
seconds.  Exit status: QEMU's own, or 124 on a timeout.

usage: tools/vmtest/vmtest-qemu.py LABEL TIMEOUT CONSOLE RESULTS -- QEMU-COMMAND...
The QEMU command must contain "-serial stdio -serial file:RESULTS".
"""
import os
import subprocess
import sys
import threading
import time


def pump(stream, log):
    for chunk in iter(lambda: stream.read1(4096), b''):
        log.write(chunk)
        log.flush()


def follow(label, results, pos, counts):
    """Print progress for the complete lines added to RESULTS since pos."""
    try:
        with open(results, 'rb') as f:
            f.seek(pos)
            data = f.read()
    except OSError:
        return pos
    end = data.rfind(b'\n') + 1
    for raw in data[:end].split(b'\n')[:-1]:
        line = raw.decode(errors='replace').rstrip('\r')
        if line.startswith('vmtest-guest '):
            print(f'{label}: guest booted ({line.split(" ", 1)[1]})', flush=True)
        elif line.startswith('vmtest-begin '):
            counts.clear()
            counts.update(ok=0, fail=0, skip=0)
            print(f'{label}: {line.split()[1]}: running', flush=True)
        elif line.startswith('ok ') or line.startswith('not ok '):
            kind = ('skip' if '# SKIP' in line else
                    'ok' if line.startswith('ok ') else 'fail')
            counts[kind] = counts.get(kind, 0) + 1
            if kind == 'fail':
                print(f'{label}:   {line}', flush=True)
        elif line.startswith('vmtest-end '):
            print(f'{label}: {line.split()[1]}: {counts.get("ok", 0)} passed, '
                  f'{counts.get("fail", 0)} failed, {counts.get("skip", 0)} '
                  f'skipped ({" ".join(line.split()[2:])})', flush=True)
        elif line.startswith('progress '):
            print(f'{label}: {line.split(" ", 1)[1]}', flush=True)
    return pos + end


def main():
    label, timeout, console, results = (sys.argv[1], int(sys.argv[2]),
                                        sys.argv[3], sys.argv[4])
    if sys.argv[5] != '--':
        sys.exit(__doc__)
    cmd = sys.argv[6:]
    for path in (console, results):
        if os.path.exists(path):
            os.unlink(path)
    start = time.monotonic()
    with open(console, 'wb') as log:
        qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        reader = threading.Thread(target=pump, args=(qemu.stdout, log))
        reader.start()
        pos, counts, rc = 0, {}, None
        while rc is None:
            time.sleep(0.5)
            pos = follow(label, results, pos, counts)
            rc = qemu.poll()
            if rc is None and time.monotonic() - start > timeout:
                print(f'{label}: ERROR: the guest did not finish in {timeout} s:'
                      f' killed QEMU (pid {qemu.pid}); console log: {console}',
                      flush=True)
                qemu.kill()
                qemu.wait()
                rc = 124
        reader.join(timeout=5)
        follow(label, results, pos, counts)
    print(f'{label}: QEMU exited ({rc}) after {time.monotonic() - start:.0f} s',
          flush=True)
    return rc


if __name__ == '__main__':
    sys.exit(main())
