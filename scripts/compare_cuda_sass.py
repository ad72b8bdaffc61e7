#!/usr/bin/env python3
"""Compare one CUDA kernel file's machine code between two source trees.

    python3 scripts/compare_cuda_sass.py OLD_TREE NEW_TREE [--file backends/cuda/fwd_ampere.cu]
                                         [--arch 90] [--nvcc /usr/local/cuda/bin/nvcc]
                                         [--nvdisasm PATH] [--define NAME=VALUE ...]

Compiles the file in each tree to a cubin with the module's flags (-O3 -lineinfo,
-Xptxas -v), then prints per kernel: registers and spill bytes (ptxas), the counts
of HMMA, LDSM, LDGSTS, BAR, MUFU and all instructions (nvdisasm), and whether the
SASS is identical (branch labels and nvcc's anonymous-namespace hash normalised).
Kernels are matched by their template arguments, so a renamed kernel still pairs up.
--define adds a -D to both compilations (the Hopper kernels: --file
backends/cuda/fwd_hopper.cu --arch 90a --define PA_CUDA_HOPPER_BUILT=1).
nvdisasm from CUDA 11.8 reads a CUDA 12+/13 cubin once its ELF header is rewritten
in the old encoding (done here when --nvdisasm is an 11.x one). Used for issue 7's
refactor (docs/decisions.md 66; bench/results/2026-11-30s5-hip-sass-sm90.txt)."""
import argparse, collections, difflib, os, re, struct, subprocess, sys, tempfile

OPS = ('HMMA', 'LDSM', 'LDGSTS', 'BAR', 'MUFU')

def key(name):
    m = re.search(r'(6__half|13__nv_bfloat16)Li(\d+)ELi(\d+)ELb(\d)', name)
    if m: return m.group(0)
    m = re.search(r'(pa_\w+?_kernel)I(\w+?)EEv', name)
    # other kernels in an anonymous namespace: its hash follows the file's path, so the
    # two trees' names differ there
    return f'{m.group(1)}<{m.group(2)}>' if m else re.sub(r'_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+', 'NS', name)

def build(tree, a, out):
    flags = ['-cubin', f'-arch=sm_{a.arch}', '-O3', '-lineinfo', '-std=c++17', '-Ibackends/cuda',
             '-Iapi/include', '-Icommon', '-Ibackends', '-D_GNU_SOURCE', f'-DPA_CUDA_MIN_ARCH={a.arch}',
             '-DPA_CUDA_TUNING_VARIANTS=0', '-Xptxas', '-v'] + [f'-D{d}' for d in a.define]
    r = subprocess.run([a.nvcc] + flags + [a.file, '-o', out], cwd=tree, capture_output=True, text=True)
    if r.returncode: sys.exit(r.stderr)
    regs, cur = {}, None
    for l in r.stderr.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", l)
        if m: cur = key(m.group(1))
        m = re.search(r'(\d+) bytes spill stores, (\d+) bytes spill loads', l)
        if m and cur: regs.setdefault(cur, {})['spill'] = f'{m.group(1)}/{m.group(2)}'
        m = re.search(r'Used (\d+) registers', l)
        if m and cur: regs.setdefault(cur, {})['regs'] = m.group(1)
    return regs

def nvdisasm_text(cubin, nvdisasm):
    """nvdisasm -c of a cubin; an 11.x nvdisasm gets a copy with the ELF header rewritten
    in CUDA 11's encoding (scripts/sass_loop_mix.py uses this too)."""
    path = cubin
    if '11.' in subprocess.run([nvdisasm, '--version'], capture_output=True, text=True).stdout:
        b = bytearray(open(cubin, 'rb').read())
        sm = (struct.unpack_from('<I', b, 0x30)[0] >> 8) & 0xff
        if b[7] != 0x33:  # CUDA 12+ encoding -> CUDA 11's
            b[7], b[8] = 0x33, 7
            struct.pack_into('<I', b, 0x30, sm | sm << 16 | 0x500)
        path = cubin + '.old'
        open(path, 'wb').write(b)
    return subprocess.run([nvdisasm, '-c', path], capture_output=True, text=True, check=True).stdout

def disasm(cubin, a):
    text = nvdisasm_text(cubin, a.nvdisasm)
    k, cur = {}, None
    for l in text.splitlines():
        m = re.match(r'^//-+ \.text\.(\S+) -+', l)
        if m: cur = key(m.group(1)); k[cur] = []; continue
        m = re.match(r'^\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;', l)
        if m and cur:
            # the numbers of the labels, of the anonymous namespace and of the compiler's
            # internal routines ($__internal_N_$...: renumbered when kernels are added)
            k[cur].append(re.sub(r'__internal_\d+_', '__internal_N_', re.sub(r'\.L_x_\d+', 'L', re.sub(r'_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+', 'NS', m.group(1)))))
    return k

def hist(ins):
    opc = [re.sub(r'^@!?U?P\w+\s+', '', i).split()[0] for i in ins]
    return {o: sum(1 for x in opc if x.split('.')[0] == o) for o in OPS} | {'total': len(ins)}, collections.Counter(opc)

def main():
    p = argparse.ArgumentParser()
    p.add_argument('old'); p.add_argument('new')
    p.add_argument('--file', default='backends/cuda/fwd_ampere.cu'); p.add_argument('--arch', default='90')
    p.add_argument('--nvcc', default='/usr/local/cuda/bin/nvcc')
    p.add_argument('--define', action='append', default=[], help='NAME=VALUE, a -D for both trees')
    p.add_argument('--nvdisasm', default=next((x for x in ('/usr/local/cuda/bin/nvdisasm', '/opt/cuda-11.8/bin/nvdisasm') if os.path.exists(x)), 'nvdisasm'))
    a = p.parse_args()
    tmp = tempfile.mkdtemp()
    ro, rn = build(a.old, a, f'{tmp}/old.cubin'), build(a.new, a, f'{tmp}/new.cubin')
    so, sn = disasm(f'{tmp}/old.cubin', a), disasm(f'{tmp}/new.cubin', a)
    same = 0
    print(f'{a.file}, sm_{a.arch}: old {a.old}, new {a.new}')
    for k in sorted(so):
        ho, co = hist(so[k]); hn, cn = hist(sn.get(k, []))
        ident = so[k] == sn.get(k); same += ident
        print(f'{k}\n  old: regs {ro.get(k,{}).get("regs")} spill {ro.get(k,{}).get("spill")}  ' +
              ' '.join(f'{o}={ho[o]}' for o in ho) +
              f'\n  new: regs {rn.get(k,{}).get("regs")} spill {rn.get(k,{}).get("spill")}  ' +
              ' '.join(f'{o}={hn[o]}' for o in hn))
        if ident: print('  SASS identical')
        else:
            n = sum(1 for l in difflib.unified_diff(so[k], sn.get(k, []), n=0) if l[:1] in '+-' and not l.startswith(('+++', '---')))
            d = {o: cn[o] - co[o] for o in set(co) | set(cn) if cn[o] != co[o]}
            print(f'  SASS differs: {n} diff lines; opcode count changes: {d or "none (order only)"}')
    print(f'{same} of {len(so)} kernels with identical SASS')

if __name__ == '__main__':
    main()
