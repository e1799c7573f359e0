#!/usr/bin/python3
"""Report of `make bench`: tables, CSV files and the plot.

Reads the guest's results (the "sample," lines of tools/vmtest/guest/bench.c
between vmtest-begin/-end markers) and writes to OUT:
  samples.csv  every timed call, as the guest reported it;
  summary.csv  one row per case: median, min and max of each method, the
               share of the file still cached after the call, the median
               time to read the whole file back after it (warm cases),
               and the ratio user-space / kernel of the medians;
  results.md   the tables (also printed): the tmpfs figures of issue #9,
               scaling with file size, fragmentation, every case;
  headline.txt one line per filesystem and file size for the warm 4 KiB
               collapse at offset 0 (also printed, last):
               "FS SIZE MiB warm collapse 4k@0: ratio R, kernel T ms,
               reread T2 ms, cached P%", R the ratio of the medians user
               space / kernel, T the kernel's median, T2 the median reread
               after it, P the share cached after it; a figure not
               measured is "-";
  plot.png     time against file size, log-log, per filesystem and method
               (gnuplot; plot.gp and plot.dat are kept beside it).
Exit status 1 on any problem (QEMU failed, the guest did not finish a
filesystem, a kernel splat in the console log, gnuplot failed); the files
are written from whatever was measured all the same.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys

# splat.py is shared with the other stages, in tools/lib.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib'))
from splat import splat_problems  # noqa: E402

FIELDS = ['fs', 'size_mib', 'extents_asked', 'extents', 'op', 'len', 'where',
          'cache', 'method', 'rep', 'seconds', 'cached_pct', 'reread_seconds',
          'status']
CASE = ('fs', 'size_mib', 'extents_asked', 'len', 'where', 'cache')
OPS = ('collapse', 'insert')
METHODS = ('kernel', 'user')


def read_results(path):
    """(samples, {fs: end status or None}, the guest's kernel release)"""
    samples, ends, release = [], {}, None
    try:
        with open(path, errors='replace') as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        line = line.strip('\r')
        if line.startswith('vmtest-guest '):
            release = line.split()[1]
        elif line.startswith('vmtest-begin '):
            ends[line.split()[1]] = None
        elif line.startswith('vmtest-end '):
            words = line.split()
            ends[words[1]] = dict(kv.split('=', 1) for kv in words[2:]
                                  if '=' in kv).get('status')
        elif line.startswith('sample,'):
            row = dict(zip(FIELDS, line.split(',')[1:]))
            if len(row) == len(FIELDS):
                samples.append(row)
    return samples, ends, release


def summarise(samples):
    """{case key: {(op, method): stats}} in the order the guest ran them."""
    cases = {}
    for s in samples:
        key = tuple(s[k] for k in CASE)
        cell = cases.setdefault(key, {}).setdefault(
            (s['op'], s['method']),
            {'times': [], 'cached': [], 'rereads': [], 'status': 'ok',
             'extents': s['extents']})
        if s['status'] == 'ok':
            cell['times'].append(float(s['seconds']))
            if s['cached_pct']:
                cell['cached'].append(float(s['cached_pct']))
            if s['reread_seconds']:
                cell['rereads'].append(float(s['reread_seconds']))
            cell['extents'] = s['extents']
        else:
            cell['status'] = s['status']
    for cells in cases.values():
        for cell in cells.values():
            t = cell['times']
            cell['median'] = statistics.median(t) if t else None
            cell['min'] = min(t) if t else None
            cell['max'] = max(t) if t else None
            cell['pct'] = (statistics.median(cell['cached']) if cell['cached']
                           else None)
            cell['reread'] = (statistics.median(cell['rereads'])
                              if cell['rereads'] else None)
    return cases


def ratio(cells, op):
    k, u = cells.get((op, 'kernel')), cells.get((op, 'user'))
    if k and u and k['median'] and u['median']:
        return u['median'] / k['median']
    return None


def unit(t):
    """(scale, name) of the unit that shows @t seconds best."""
    return next(((s, n) for s, n in ((1, 's'), (1e-3, 'ms'), (1e-6, 'us'))
                 if t >= s), (1e-6, 'us'))


def fmt_cell(cell):
    """"12.3 ms (11.9-13.0)": median (min-max), in the median's unit."""
    if not cell:
        return '-'
    if cell['median'] is None:
        return {'skipped': 'skipped (budget)'}.get(cell['status'], cell['status'])
    scale, name = unit(cell['median'])
    return (f"{cell['median'] / scale:.3g} {name} "
            f"({cell['min'] / scale:.3g}-{cell['max'] / scale:.3g})")


def fmt_number(r):
    """@r to three significant figures (whole above 1000); "-" for none."""
    if r is None:
        return '-'
    return f'{r:.3g}' if r < 1000 else f'{r:.0f}'


def fmt_ratio(r):
    return '-' if r is None else fmt_number(r) + 'x'


def fmt_pct(cell):
    return '-' if not cell or cell['pct'] is None else f"{cell['pct']:.0f}%"


def fmt_time(t):
    """The median @t seconds alone, in its unit; "-" for none."""
    if t is None:
        return '-'
    scale, name = unit(t)
    return f'{t / scale:.3g} {name}'


def fmt_reread(cells, op):
    """"40 ms / 12 ms": the median rereads after @op, kernel / user space."""
    return ' / '.join(fmt_time(cells[(op, m)]['reread'] if (op, m) in cells
                               else None) for m in METHODS)


def len_name(n):
    n = int(n)
    return f'{n >> 20} MiB' if n % (1 << 20) == 0 else f'{n >> 10} KiB'


def where_name(w):
    return 'offset 0' if w == '0' else 'middle'


def table(header, rows):
    out = ['| ' + ' | '.join(header) + ' |',
           '|' + '|'.join(' --- ' for _ in header) + '|']
    out += ['| ' + ' | '.join(r) + ' |' for r in rows]
    return out


def op_columns(cells, reread=False):
    """Each operation's kernel, user space and ratio cells, and with
    @reread the rereads after it."""
    row = []
    for op in OPS:
        row += [fmt_cell(cells.get((op, 'kernel'))),
                fmt_cell(cells.get((op, 'user'))), fmt_ratio(ratio(cells, op))]
        if reread:
            row.append(fmt_reread(cells, op))
    return row


def op_header(reread=False):
    header = []
    for op in OPS:
        header += [f'{op}: kernel', 'user space', 'user/kernel']
        if reread:
            header.append(f'reread after {op}: kernel / user')
    return header


def targets(cases):
    """The two tmpfs figures of issue #9, as lines of text."""
    out = []
    for fs, length, what in (('tmpfs', 4096, '4k pages, 4 KiB collapse'),
                             ('tmpfs-huge', 2 << 20,
                              'huge=always, 2 MiB (aligned) collapse')):
        cells = cases.get((fs, '256', '0', str(length), '0', 'warm'))
        if not cells:
            out.append(f'tmpfs target, {what} at offset 0 of 256 MiB: not measured')
            continue
        k, u = cells.get(('collapse', 'kernel')), cells.get(('collapse', 'user'))
        r = ratio(cells, 'collapse')
        out.append(f'tmpfs target, {what} at offset 0 of 256 MiB: '
                   f'kernel {fmt_cell(k)}, user space {fmt_cell(u)}'
                   + (f': user/kernel {fmt_ratio(r)}' if r else ''))
    return out


def kernel_build(kernel):
    """What the .config of KERNEL's build directory says of its speed."""
    config = os.path.join(os.path.dirname(kernel), '..', '..', '..', '.config')
    try:
        with open(config) as f:
            options = f.read().splitlines()
    except OSError:
        return 'a build whose .config is not beside it (debug options unknown)'
    debug = [o for o in ('KASAN', 'PROVE_LOCKING', 'UBSAN', 'DEBUG_VM')
             if f'CONFIG_{o}=y' in options]
    if debug:
        return (f'a debug build ({", ".join(debug)}), so kernel-side times '
                f'are inflated and the ratios conservative')
    return 'a build without KASAN, lockdep, UBSAN or DEBUG_VM'


def markdown(cases, fss, args, release, problems):
    md = ['# make bench', '',
          f'Kernel `{args.kernel}` ({release or "did not boot"}) in QEMU '
          f'x86_64 under TCG (no KVM), one CPU: '
          f'{kernel_build(args.kernel)}.  Every figure is the median (min-max) '
          f'of the repetitions of one boot; each call is followed by fsync '
          f'(not on tmpfs; disks `cache={args.disk_cache}`).  "user/kernel" '
          f'is the ratio of the medians, measured side by side.  Run time '
          f'{args.seconds} s.', '']
    if problems:
        md += ['**Problems:**', ''] + [f'- {p}' for p in problems] + ['']
    md += ['## tmpfs targets (issue #9)', '']
    md += [f'- {t}' for t in targets(cases)] + ['']

    scaling = [k for k in cases if k[2] == '0' and k[3] == '4096' and k[4] == '0']
    for cache in ('warm', 'cold'):
        rows = []
        for fs in fss:
            for key in sorted((k for k in scaling if k[0] == fs and k[5] == cache),
                              key=lambda k: int(k[1])):
                cells = cases[key]
                rows.append([fs, f'{key[1]} MiB']
                            + op_columns(cells, cache == 'warm')
                            + [fmt_pct(cells.get(('collapse', 'kernel')))])
        if rows:
            md += [f'## Scaling: 4 KiB at offset 0, {cache} cache', '']
            md += table(['fs', 'file'] + op_header(cache == 'warm') +
                        ['cached after kernel collapse'], rows) + ['']

    rows = []
    for fs in fss:
        for key in sorted((k for k in cases if k[0] == fs and k[2] != '0'),
                          key=lambda k: (int(k[1]), int(k[2]), k[3], k[4], k[5])):
            cells = cases[key]
            got = next((c['extents'] for c in cells.values()
                        if c['extents'] != '-1'), '?')
            rows.append([fs, f'{key[1]} MiB', f'{key[2]} ({got})',
                         f'{len_name(key[3])} at {where_name(key[4])}, {key[5]}']
                        + op_columns(cells))
    if rows:
        md += ['## Fragmentation: extents asked for (FIEMAP found)', '']
        md += table(['fs', 'file', 'extents', 'case'] + op_header(), rows) + ['']

    rows = []
    for fs in fss:
        for key in sorted((k for k in cases if k[0] == fs and k[2] == '0'),
                          key=lambda k: (int(k[1]), int(k[3]), k[4], k[5])):
            cells = cases[key]
            rows.append([fs, f'{key[1]} MiB',
                         f'{len_name(key[3])} at {where_name(key[4])}', key[5]]
                        + op_columns(cells, True)
                        + [fmt_pct(cells.get(('collapse', 'kernel'))) + ' / '
                           + fmt_pct(cells.get(('collapse', 'user')))])
    if rows:
        md += ['## Every case', '']
        md += table(['fs', 'file', 'range', 'cache'] + op_header(True) +
                    ['cached after collapse: kernel / user'], rows) + ['']
    md += ['"cached after": share of the file\'s pages in the page cache right '
           'after the call (mincore); "reread after": median time to read the '
           'whole file back right after the call (warm cases only); "skipped '
           '(budget)": not run, the guest predicted it would overrun its time '
           'budget.  Headline: `headline.txt`; plot: `plot.png`; raw figures: '
           '`samples.csv`, `summary.csv`.', '']
    return md


def headline(cases, fss):
    """The lines of headline.txt: the warm 4 KiB collapse at offset 0 of
    every filesystem and size where the kernel's call was measured."""
    out = []
    for fs in fss:
        for key in sorted((k for k in cases if k[0] == fs and k[2:] ==
                           ('0', '4096', '0', 'warm')), key=lambda k: int(k[1])):
            cells = cases[key]
            k = cells.get(('collapse', 'kernel'))
            if not k or k['median'] is None:
                continue
            r = ratio(cells, 'collapse')
            reread = None if k['reread'] is None else k['reread'] * 1e3
            pct = '-' if k['pct'] is None else f"{k['pct']:.0f}"
            out.append(f"{fs} {key[1]} MiB warm collapse 4k@0: ratio "
                       f"{fmt_number(r)}, kernel {fmt_number(k['median'] * 1e3)} "
                       f"ms, reread {fmt_number(reread)} ms, cached {pct}%")
    return out


def write_csv(path, header, rows):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def summary_rows(cases):
    for key, cells in cases.items():
        row = list(key)
        for op in OPS:
            for m in METHODS:
                c = cells.get((op, m))
                row += ([c['status'], c['median'], c['min'], c['max'], c['pct'],
                         c['reread']] if c else ['', '', '', '', '', ''])
            r = ratio(cells, op)
            row.append(f'{r:.4g}' if r else '')
        yield row


def summary_header():
    h = list(CASE)
    for op in OPS:
        for m in METHODS:
            h += [f'{op}_{m}_{x}' for x in
                  ('status', 'median_s', 'min_s', 'max_s', 'cached_pct',
                   'reread_median_s')]
        h.append(f'{op}_user_over_kernel')
    return h


# One colour a line of the plot: a filesystem, or tmpfs-huge's aligned
# 2 MiB shift.
COLOURS = ['#7b2d8e', '#1b9e77', '#1f78b4', '#e6700a', '#d62728', '#8c564b',
           '#555555']


def plot(cases, fss, out):
    """plot.png: median time against file size at offset 0, warm and cold,
    for 4 KiB and (huge pages) 2 MiB ranges."""
    blocks = []
    for cache in ('warm', 'cold'):
        for op in OPS:
            for fs in fss:
                for length in ('4096', str(2 << 20)):
                    for m in METHODS:
                        pts = sorted(
                            (int(k[1]), c[(op, m)]) for k, c in cases.items()
                            if k[0] == fs and k[2] == '0' and k[3] == length
                            and k[4] == '0' and k[5] == cache
                            and c.get((op, m), {}).get('median'))
                        if pts:
                            name = fs if length == '4096' else f'{fs} 2 MiB'
                            blocks.append((cache, op, name, m, pts))
    if not blocks:
        return 'no data to plot'
    data = os.path.join(out, 'plot.dat')
    with open(data, 'w') as f:
        for cache, op, name, m, pts in blocks:
            f.write(f'# {name} {m} {op} {cache}\n')
            for size, c in pts:
                f.write(f"{size} {c['median']} {c['min']} {c['max']}\n")
            f.write('\n\n')
    names = list(dict.fromkeys(b[2] for b in blocks))
    colour = {n: COLOURS[i % len(COLOURS)] for i, n in enumerate(names)}
    sizes = [size for b in blocks for size, _ in b[4]]
    gp = ['set terminal pngcairo size 1600,1200 font ",10"',
          f"set output '{os.path.join(out, 'plot.png')}'",
          'set logscale xy', 'set grid', 'set key left top font ",8"',
          f'set xrange [{min(sizes) / 1.5}:{max(sizes) * 1.5}]',
          'set xlabel "file size (MiB)"', 'set ylabel "seconds (median, min-max)"',
          'set multiplot layout 2,2 title "collapse/insert at offset 0 (4 KiB; '
          'tmpfs-huge also 2 MiB) + fsync: kernel (solid) vs user-space shift '
          '(dashed); debug kernel under TCG"']
    for cache in ('warm', 'cold'):
        for op in OPS:
            parts = [f"'{data}' index {i} using 1:2:3:4 with yerrorlines "
                     f"lc rgb '{colour[name]}' dt {1 if m == 'kernel' else 2} "
                     f"pt {names.index(name) + 1} title '{name} {m}'"
                     for i, (c, o, name, m, _) in enumerate(blocks)
                     if (c, o) == (cache, op)]
            gp.append(f'set title "{op}, {cache} cache"')
            gp.append('plot ' + ', \\\n     '.join(parts) if parts else
                      'plot NaN title "not measured"')
    gp.append('unset multiplot')
    script = os.path.join(out, 'plot.gp')
    with open(script, 'w') as f:
        f.write('\n'.join(gp) + '\n')
    run = subprocess.run(['gnuplot', script], capture_output=True, text=True)
    return None if run.returncode == 0 else f'gnuplot failed: {run.stderr.strip()}'


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--results', required=True)
    ap.add_argument('--console', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--kernel', required=True)
    ap.add_argument('--disk-cache', required=True,
                    help="the disks' QEMU cache mode")
    ap.add_argument('--qemu-rc', type=int, required=True)
    ap.add_argument('--seconds', type=int, required=True)
    args = ap.parse_args()

    samples, ends, release = read_results(args.results)
    problems = []
    if not release:
        problems.append('the guest did not boot (see the console log)')
    if args.qemu_rc:
        problems.append(f'QEMU exited with status {args.qemu_rc}')
    for fs, status in ends.items():
        if status != '0':
            problems.append(f'{fs}: the guest program did not finish '
                            f'(status {status or "none: crashed or timed out"})')
    try:
        with open(args.console, errors='replace') as f:
            problems += splat_problems(f, args.console)
    except OSError:
        problems.append(f'no console log {args.console}')

    fss = list(ends)
    cases = summarise(samples)
    write_csv(os.path.join(args.out, 'samples.csv'), FIELDS,
              ([s[k] for k in FIELDS] for s in samples))
    write_csv(os.path.join(args.out, 'summary.csv'), summary_header(),
              summary_rows(cases))
    trouble = plot(cases, fss, args.out)
    if trouble:
        problems.append(trouble)
    md = markdown(cases, fss, args, release, problems)
    with open(os.path.join(args.out, 'results.md'), 'w') as f:
        f.write('\n'.join(md))
    head = headline(cases, fss)
    with open(os.path.join(args.out, 'headline.txt'), 'w') as f:
        f.write(''.join(line + '\n' for line in head))
    print('\n'.join(md))
    for line in targets(cases):
        print(f'bench: {line}')
    print(f'bench: {len(samples)} samples; {args.out}/results.md, samples.csv, '
          f'summary.csv, plot.png')
    for p in problems:
        print(f'bench: ERROR: {p}')
    if head:
        print(f'bench: headline ({args.out}/headline.txt):')
        print('\n'.join(head))
    else:
        print('bench: headline: no warm 4 KiB collapse at offset 0 measured')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
