#!/usr/bin/env python3
"""Compare one CUDA kernel file's PTX between two source trees, kernel by kernel.

    python3 scripts/compare_cuda_ptx.py OLD_TREE NEW_TREE [--file backends/cuda/fwd_hopper.cu]
                                        [--tuning] [--arch compute_90a] [--nvcc PATH]

Each tree's file is copied to backends/cuda/<name>_ptxcheck.cu (the same file name in
both, removed after) and compiled with `nvcc -ptx` and the module's defines (the Hopper
kernels built, PA_CUDA_TUNING_VARIANTS 1 with --tuning, else 0). The trees' paths enter
nvcc's names for anonymous namespaces and internal symbols, so those hashes are masked;
then per kernel (.entry): identical, identical once its virtual registers and block labels
are renumbered in order of first use (the same instructions in the same order, each
operand wired to the same others; the .reg declarations left out), or different; and the
kernels only one tree has. --ptx compares two PTX files made this way (--save keeps them).
One run at a time per file: two runs on the same file share the temporary name. Needs no GPU and no disassembler (this machine has neither
cuobjdump nor nvdisasm; scripts/compare_cuda_sass.py compares SASS where they exist).
Used for the thirty-first and thirty-second sessions' identity checks (decisions 122, 123)."""
import argparse, os, re, subprocess, sys, tempfile


def ptx(tree, a, out):
    base = os.path.splitext(os.path.basename(a.file))[0]
    src = os.path.join(tree, 'backends/cuda', base + '_ptxcheck.cu')
    with open(os.path.join(tree, a.file)) as f, open(src, 'w') as g:
        g.write(f.read())
    inc = [f'-I{os.path.join(tree, d)}' for d in ('backends/cuda', 'api/include', 'common', 'backends')]
    cmd = [a.nvcc, '-ptx', '-DPA_CUDA_HOPPER_BUILT=1', f'-DPA_CUDA_TUNING_VARIANTS={int(a.tuning)}',
           '-D_GNU_SOURCE'] + inc + ['-O3', '-DNDEBUG', f'-arch={a.arch}', '-std=c++17',
                                     os.path.relpath(src, tree), '-o', out]
    try:
        r = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
    finally:
        os.remove(src)
    if r.returncode:
        sys.exit(r.stderr)
    return out


def entries(path):
    s = open(path).read()
    s = re.sub(r'_GLOBAL__N__[0-9a-f]+_\d+_\w+?_ptxcheck_cu_[0-9a-f]+', 'ANON', s)
    s = re.sub(r'_INTERNAL_[0-9a-f]+_\d+_\w+?_ptxcheck_cu_[0-9a-f]+', 'INTERNAL', s)
    parts = re.split(r'\n(?=(?:\.visible |\.weak )?\.entry )', s)
    out = {}
    for p in parts[1:]:
        name = re.match(r'(?:\.visible |\.weak )?\.entry (\S+)\(', p).group(1)
        out[name] = p.rstrip()
    return out


def renumbered(p):
    """The kernel with its virtual registers and block labels renumbered in order of first
    appearance (per register class), and its .reg declarations (whose counts follow the
    numbering) left out: equal iff the instructions, their order and how each operand
    connects to the others are equal."""
    names, counts = {}, {}

    def canon(m):
        cls = m.group(1) or 'L'
        if m.group(0) not in names:
            counts[cls] = counts.get(cls, 0) + 1
            names[m.group(0)] = f'{cls}#{counts[cls]}'
        return names[m.group(0)]

    body = '\n'.join(l for l in p.split('\n') if not l.strip().startswith('.reg '))
    return re.sub(r'%(rd|rs|fd|hh|r|f|p|h)\d+\b|\$L__BB\d+_\d+', canon, body)


def short(name):
    m = re.search(r'(pa_\w+?_kernel)I(\w+?)EE', name)
    return f'{m.group(1)}<{m.group(2)}>' if m else name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('old')
    ap.add_argument('new')
    ap.add_argument('--file', default='backends/cuda/fwd_hopper.cu')
    ap.add_argument('--tuning', action='store_true')
    ap.add_argument('--arch', default='compute_90a')
    ap.add_argument('--nvcc', default='/usr/local/cuda/bin/nvcc')
    ap.add_argument('--save', help='keep the two PTX files in this folder (old.ptx, new.ptx)')
    ap.add_argument('--ptx', action='store_true',
                    help='OLD and NEW are PTX files already made this way: compare only')
    a = ap.parse_args()
    if a.ptx:
        o, n = entries(a.old), entries(a.new)
    else:
        tmp = a.save or tempfile.mkdtemp()
        os.makedirs(tmp, exist_ok=True)
        o = entries(ptx(a.old, a, os.path.join(tmp, 'old.ptx')))
        n = entries(ptx(a.new, a, os.path.join(tmp, 'new.ptx')))
    same = regs = 0
    for k in sorted(o):
        if k not in n:
            print('only in old:', short(k))
        elif o[k] == n[k]:
            same += 1
        elif renumbered(o[k]) == renumbered(n[k]):
            regs += 1
        else:
            print('different:', short(k))
    for k in sorted(set(n) - set(o)):
        print('only in new:', short(k))
    common = len(set(o) & set(n))
    what = (f'{a.old} against {a.new}' if a.ptx else
            f'{a.file} ({"tuning" if a.tuning else "default"} configuration, {a.arch})')
    print(f'{what}: '
          f'{len(o)} kernels old, {len(n)} new; of the {common} in both {same} identical, '
          f'{regs} identical once registers and labels are renumbered in order of first use, '
          f'{common - same - regs} different')


main()
