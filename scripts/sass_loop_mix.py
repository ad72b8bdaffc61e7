#!/usr/bin/env python3
"""The instruction mix of a kernel's loops, from its SASS (static counts, no GPU).

    python3 scripts/sass_loop_mix.py CUBIN REGEX [--nvdisasm PATH]
    python3 scripts/sass_loop_mix.py --sass FILE REGEX

For each kernel whose mangled name matches REGEX: its instruction count, each loop (a
backward branch and the instructions from its target label to it) that holds tensor-core
products (HMMA, HGMMA, QGMMA), with its length and its opcode counts, and the positions
of local-memory loads and stores (spills). A loop that holds a kernel's every mask path
counts them all, so two rows of one kernel compare by the difference of their counts,
not by a per-tile total. The cubin is disassembled with nvdisasm; an 11.x nvdisasm
reads a CUDA 12+/13 cubin once its ELF header is rewritten in the old encoding
(scripts/compare_cuda_sass.py's nvdisasm_text, which this calls). This machine's CUDA 13
has no nvdisasm: Debian's nvidia-cuda-toolkit 11.8 .deb has one (`apt-get download
nvidia-cuda-toolkit` with the non-free component, then `dpkg-deb --fsys-tarfile ... |
tar -x ./usr/bin/nvdisasm`; scripts/check_sm70_build.sh unpacks the whole toolkit). Used
for decision 125."""
import argparse, collections, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_cuda_sass import nvdisasm_text  # noqa: E402

MMA = ('HMMA', 'HGMMA', 'QGMMA')


def kernels(text):
    """{name: [('L', label) | ('I', instruction)]}"""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r'^//-+ \.text\.(\S+) -+', line)
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        if cur is None:
            continue
        m = re.match(r'^(\.L_x_\d+):', line)
        if m:
            out[cur].append(('L', m.group(1)))
            continue
        m = re.match(r'^\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;', line)
        if m:
            out[cur].append(('I', m.group(1)))
    return out


def opcode(ins):
    return re.sub(r'^@!?U?P\w+\s+', '', ins).split()[0]


def report(name, body):
    labels, ins = {}, []
    for kind, v in body:
        if kind == 'L':
            labels[v] = len(ins)
        else:
            ins.append(v)
    print('==', name)
    print('instructions', len(ins))
    for i, x in enumerate(ins):
        m = re.search(r'BRA\s+`?\(?(\.L_x_\d+)', x)
        if not (m and m.group(1) in labels and labels[m.group(1)] <= i):
            continue
        a = labels[m.group(1)]
        mix = collections.Counter(opcode(y).split('.')[0] for y in ins[a:i + 1])
        if not any(mix[o] for o in MMA):
            continue
        print('loop %d-%d, %d instructions: %s' % (a, i, i + 1 - a,
              ' '.join('%s:%d' % kv for kv in mix.most_common())))
    print('local loads/stores at', [i for i, x in enumerate(ins)
                                    if opcode(x).startswith(('LDL', 'STL'))])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('input', help='a cubin, or with --sass nvdisasm -c output')
    ap.add_argument('regex', help='kernels whose mangled name matches')
    ap.add_argument('--sass', action='store_true')
    ap.add_argument('--nvdisasm', default='nvdisasm')
    a = ap.parse_args()
    text = open(a.input).read() if a.sass else nvdisasm_text(a.input, a.nvdisasm)
    found = 0
    for name, body in kernels(text).items():
        if re.search(a.regex, name):
            report(name, body)
            found += 1
    if not found:
        sys.exit('no kernel matches %r' % a.regex)


if __name__ == '__main__':
    main()
