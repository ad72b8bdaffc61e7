#!/usr/bin/env python3
"""List the GPU code embedded in a CUDA shared object, like `cuobjdump --list-elf
--list-ptx`, for machines without cuobjdump (the pip-packaged CUDA 13 compiler here
ships none).

    .ci/fatbin_archs.py build/lib/libpolyattn-cuda.so [--expect 75,80,90]

Prints one line per embedded image ("sm_80 elf 5658784 bytes", "compute_80 ptx ...")
and, with --expect, exits 1 unless every listed architecture has an ELF (SASS)
image. Reads the .nv_fatbin section: a sequence of fatbin containers (magic
0xBA55ED50, u16 version, u16 header size, u64 payload size), each a sequence of
entries (u16 kind: 1 PTX, 2 ELF; u16; u32 header size; u64 payload size; ...; u32
architecture at byte 28).
"""
import argparse
import struct
import sys

FATBIN_MAGIC = 0xBA55ED50
KINDS = {1: "ptx", 2: "elf"}


def section(path, name):
    """The bytes of ELF64 section `name` of `path`, or None."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit(f"{path}: not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    strtab = header(shstrndx)
    for i in range(shnum):
        h = header(i)
        start = strtab[4] + h[0]
        sname = data[start:data.index(b"\0", start)].decode()
        if sname == name:
            return data[h[4]:h[4] + h[5]]
    return None


def entries(blob):
    off = 0
    while off + 16 <= len(blob):
        magic, _version, header_size, size = struct.unpack_from("<IHHQ", blob, off)
        if magic != FATBIN_MAGIC:
            break
        e, end = off + header_size, off + header_size + size
        while e < end:
            kind, _, ehs, esize = struct.unpack_from("<HHIQ", blob, e)
            arch, = struct.unpack_from("<I", blob, e + 28)
            yield KINDS.get(kind, f"kind{kind}"), arch, esize
            e += ehs + esize
        off = (end + 7) // 8 * 8 if end % 8 else end


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("library")
    ap.add_argument("--expect", default="", help="comma-separated architectures, e.g. 75,80,90")
    args = ap.parse_args()
    blob = section(args.library, ".nv_fatbin")
    if blob is None:
        sys.exit(f"{args.library}: no .nv_fatbin section (no CUDA device code)")
    elf = set()
    for kind, arch, size in entries(blob):
        print(f"{'sm' if kind == 'elf' else 'compute'}_{arch} {kind} {size} bytes")
        if kind == "elf":
            elf.add(arch)
    missing = [a for a in args.expect.split(",") if a and int(a) not in elf]
    if missing:
        print(f"MISSING SASS for: {', '.join('sm_' + a for a in missing)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
