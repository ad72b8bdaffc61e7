#!/usr/bin/env python3
"""List the GPU code embedded in a CUDA shared object, like `cuobjdump --list-elf
--list-ptx`, for machines without cuobjdump (the pip-packaged CUDA 13 compiler here
ships none).

    .ci/fatbin_archs.py build/lib/libpolyattn-cuda.so [--expect 75,80,90] [--ptx-dir DIR]

Prints one line per embedded image ("sm_80 elf 5658784 bytes", "compute_80 ptx ...")
and, with --expect, exits 1 unless every listed architecture has an ELF (SASS)
image. Reads the .nv_fatbin section: a sequence of fatbin containers (magic
0xBA55ED50, u16 version, u16 header size, u64 payload size), each a sequence of
entries (u16 kind: 1 PTX, 2 ELF; u16; u32 header size; u64 payload size; ...; u32
architecture at byte 28).

With --ptx-dir, also writes each embedded PTX image as DIR/<source>.<target>.ptx
(e.g. fwd_ampere.compute_80.ptx): the source is the one .cu file among the PTX's
`.file` directives (the module is built with -lineinfo), the target its `.target`
line. nvcc compresses the images with zstd (frame magic 28 b5 2f fd); they are
decompressed with the system's libzstd (libzstd1, which dpkg itself needs).
"""
import argparse
import ctypes
import os
import re
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
            yield KINDS.get(kind, f"kind{kind}"), arch, esize, blob[e + ehs:e + ehs + esize]
            e += ehs + esize
        off = (end + 7) // 8 * 8 if end % 8 else end


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


_ZSTD = []


def zstd():
    """libzstd, bound once (the first compressed image)."""
    if not _ZSTD:
        z = ctypes.CDLL("libzstd.so.1")
        z.ZSTD_findFrameCompressedSize.restype = ctypes.c_size_t
        z.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
        z.ZSTD_decompress.restype = ctypes.c_size_t
        z.ZSTD_isError.argtypes = [ctypes.c_size_t]
        _ZSTD.append(z)
    return _ZSTD[0]


def ptx_text(payload):
    """The PTX text of an image, decompressed if nvcc compressed it."""
    if not payload.startswith(ZSTD_MAGIC):
        return payload.split(b"\0", 1)[0].decode()
    z = zstd()
    frame = z.ZSTD_findFrameCompressedSize(payload, len(payload))  # the image is padded
    size = z.ZSTD_getFrameContentSize(payload, frame) if not z.ZSTD_isError(frame) else 2**64 - 1
    if size >= 2**63:
        raise ValueError("a compressed PTX image whose frame or size zstd cannot read")
    out = ctypes.create_string_buffer(size)
    got = z.ZSTD_decompress(out, size, payload, frame)
    if z.ZSTD_isError(got) or got != size:
        raise ValueError("a compressed PTX image zstd cannot decompress")
    return out.raw[:got].split(b"\0", 1)[0].decode()


def ptx_name(text):
    """<source>.<target>.ptx for a PTX text: its one .cu file, its .target."""
    sources = sorted({os.path.basename(f) for f in re.findall(r'^\s*\.file\s+\d+\s+"([^"]+\.cu)"', text, re.M)})
    target = re.search(r"^\s*\.target\s+sm_(\w+)", text, re.M)
    if len(sources) != 1 or not target:
        return None
    return f"{sources[0][:-3]}.compute_{target.group(1)}.ptx"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("library")
    ap.add_argument("--expect", default="", help="comma-separated architectures, e.g. 75,80,90")
    ap.add_argument("--ptx-dir", help="write each PTX image here as <source>.<target>.ptx")
    args = ap.parse_args()
    blob = section(args.library, ".nv_fatbin")
    if blob is None:
        sys.exit(f"{args.library}: no .nv_fatbin section (no CUDA device code)")
    elf = set()
    unnamed = 0
    for kind, arch, size, payload in entries(blob):
        line = f"{'sm' if kind == 'elf' else 'compute'}_{arch} {kind} {size} bytes"
        if kind == "elf":
            elf.add(arch)
        if kind == "ptx" and args.ptx_dir:
            text = ptx_text(payload)
            name = ptx_name(text)
            if name is None:  # no kernel with line info (an empty translation unit)
                unnamed += 1
                name = f"unnamed{unnamed}.compute_{arch}.ptx"
            path = os.path.join(args.ptx_dir, name)
            if os.path.exists(path):
                print(f"{path}: two PTX images of one source and target")
                return 1
            with open(path, "w") as f:
                f.write(text)
            line += f" -> {path}"
        print(line)
    missing = [a for a in args.expect.split(",") if a and int(a) not in elf]
    if missing:
        print(f"MISSING SASS for: {', '.join('sm_' + a for a in missing)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
