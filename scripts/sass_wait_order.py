#!/usr/bin/env python3
"""Where the pipelined Hopper loops wait for P.V, from `cuobjdump -sass` text.

    cuobjdump -sass OBJ | python3 scripts/sass_wait_order.py [--match REGEX]

For each kernel (name matching REGEX) and each `WARPGROUP.DEPBAR.LE gsb0, 0x1` (the
wait for S, with P.V still in flight), counts the MUFU.EX2 instructions (the
softmax's exponentials) that follow it before the next `WARPGROUP.DEPBAR.LE gsb0,
0x0` (the wait for P.V) and after it, up to the next wgmma issue. Exponentials
before the P.V wait run while P.V is on the tensor cores; after it, they do not
(fifteenth session: ptxas scheduled that wait above the softmax)."""
import argparse, re, sys

ap = argparse.ArgumentParser()
ap.add_argument('--match', default='.')
a = ap.parse_args()
name, body = None, []
kernels = []
for line in sys.stdin:
    m = re.search(r'Function : (\S+)', line)
    if m:
        if name: kernels.append((name, body))
        name, body = m.group(1), []
    elif name:
        body.append(line)
if name: kernels.append((name, body))
for name, body in kernels:
    if not re.search(a.match, name): continue
    out = []
    i = 0
    while i < len(body):
        if 'WARPGROUP.DEPBAR.LE gsb0, 0x1' in body[i]:
            before = after = 0; j = i + 1; seen0 = False
            while j < len(body) and not re.search(r'[HQ]GMMA', body[j]):
                if 'WARPGROUP.DEPBAR.LE gsb0, 0x0' in body[j]: seen0 = True
                elif 'MUFU.EX2' in body[j]:
                    if seen0: after += 1
                    else: before += 1
                j += 1
            if before + after: out.append('%d/%d' % (before, after))
            i = j
        else:
            i += 1
    print('%-90s exps before/after the P.V wait: %s' % (name[:90], ' '.join(out) or '-'))
