#!/usr/bin/env python3
"""Where a kernel's warps spend their time, by how often each instruction runs.

    python3 scripts/ncu_source_classes.py SOURCE.csv[.gz] [--runs EXEC_COUNT]

SOURCE.csv is ncu's source page as CSV (`ncu --section WarpStateStats --section
SourceCounters --page source --csv --print-source sass ...`): one row per SASS
instruction with its warp-state samples and execution count. Instructions that run
equally often belong to the same part of the kernel (in the Hopper forward kernel:
once per key tile in the main loop, once per query tile and consumer warp, once per
key tile in the producer), so the samples summed per execution count give each
part's share of the warps' time, with the top stall reasons. --runs N lists the
contiguous runs of instructions executed N times, their samples and hottest
instructions. Used for bench/RESULTS.md (ninth session, BLOCK at 25%)."""
import argparse, collections, csv, gzip


def read(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        lines = [l for l in f if l.startswith('"')]
    hdr, rows = None, []
    for row in csv.reader(lines):
        if row[0] == 'Address':
            hdr = row
        elif hdr is not None and row[0] != 'Kernel Name':
            rows.append(row)
    return hdr, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('csv')
    ap.add_argument('--runs', type=int, default=None, metavar='EXEC_COUNT')
    ap.add_argument('--top', type=int, default=15)
    a = ap.parse_args()
    hdr, rows = read(a.csv)
    ix = {h: i for i, h in enumerate(hdr)}
    samp, execd = ix['Warp Stall Sampling (All Samples)'], ix['Instructions Executed']
    reasons = [h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
    n = lambda r: int(r[samp] or 0)
    e = lambda r: int(r[execd] or 0)
    total = sum(n(r) for r in rows)
    print(f'{len(rows)} instructions, {total} samples')
    if a.runs is None:
        cls = collections.defaultdict(lambda: [0, 0, collections.Counter()])
        for r in rows:
            c = cls[e(r)]
            c[0] += n(r)
            c[1] += 1
            for s in reasons:
                c[2][s[6:]] += int(r[ix[s]] or 0)
        for k, (s, cnt, why) in sorted(cls.items(), key=lambda t: -t[1][0])[:a.top]:
            top = ' '.join(f'{w}:{v}' for w, v in why.most_common(4))
            print(f'executed {k:>9}  {cnt:5d} instrs  {s:7d} samples {100 * s / total:5.1f}%  {top}')
        return
    run, runs = [], []
    for i, r in enumerate(rows):
        if e(r) == a.runs:
            run.append(i)
        elif run:
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    for run in runs:
        s = sum(n(rows[i]) for i in run)
        if s < 20:
            continue
        print(f'instructions {run[0]}-{run[-1]} ({len(run)}): {s} samples')
        for i in sorted(run, key=lambda i: -n(rows[i]))[:4]:
            print(f'    {i:6d} {n(rows[i]):5d}  {rows[i][1].strip()[:72]}')


if __name__ == '__main__':
    main()
