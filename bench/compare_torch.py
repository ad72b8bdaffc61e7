#!/usr/bin/env python3
"""compare_torch.py -- polyattn forward and backward beside PyTorch SDPA (flash, cuDNN, efficient).

DESIGN.md "Performance method", issue 3 "Measure". Runs on a CUDA machine with
PyTorch (no network needed). polyattn is called through its Python package
(bindings/python/polyattn) on the SAME torch tensors, zero copy, on torch's current
stream, in the same process as SDPA: --api prepared (default) times the C call alone,
through polyattn.capi with every argument built once; --api func times the user's
path, polyattn.flash_attn_func (the torch custom op: wrapping, workspace, the call).

  Standard sweep (default): tokens B*S = 16384, hidden 2048 -> Hq = Hkv = 2048/D,
  D in --dims (64,128), S in 512..16384, causal off and on, --dtypes (bf16).
  Layout [B, S, H, D]; SDPA gets q.transpose(1, 2) views (no copies).
  FLOPs = 4*B*Hq*S*S*D, half when causal.

  --decode: B=8, Hq=32, Hkv=8, D=128, Sq=1, Sk in {4096, 32768, 131072}, bf16;
  achieved bandwidth = (K+V bytes) / time.

  --backward (issue 4): the same configs through autograd, polyattn.flash_attn_func
  against SDPA flash and cuDNN on the same tensors: forward+backward (a forward and
  torch.autograd.grad) and backward alone (grad of a retained graph); TFLOP/s by
  3.5x and 2.5x the forward count. Gradients are compared with flash's, elementwise
  |g - g_flash| <= atol * max(1, max|g_flash|) + rtol * |g_flash| (gradients sum over
  S rows, so the absolute part scales with their size); the float64 oracle check of
  the gradients is the test suite's (tests/test_backward.c), not this.

Timing: CUDA events, warm-up, median of >= --min-runs (20) runs with the L2 cleared
before each (triton.testing.do_bench(return_mode='median') when triton is present,
else an equivalent event loop; --timer picks).

Correctness, per config: max |polyattn - flash| (and |cudnn - flash| as the noise
floor), NaN/Inf check, and an allclose-style verdict (--atol/--rtol, dtype defaults).

Plot: --plot FILE.png draws TFLOP/s against sequence length, one panel per (dtype,
head dim, causal), after the sweep; --plot-from RESULTS.jsonl draws it from a saved
--json file (no torch or GPU needed). Needs matplotlib (Debian: python3-matplotlib);
without it the plot is skipped with a message.

Examples (repo root, after `source .devkit/env`):
  python3 bench/compare_torch.py --json bench/torch_sweep.jsonl
  python3 bench/compare_torch.py --dtypes bf16,fp16 --dims 64,128 --json out.jsonl
  python3 bench/compare_torch.py --decode --json decode.jsonl
  python3 bench/compare_torch.py --backward --seqlens 2048,8192,16384 --json bwd.jsonl
  python3 bench/compare_torch.py --env-kernel volta --quick
  python3 bench/compare_torch.py --json sweep.jsonl --plot sweep.png
  python3 bench/compare_torch.py --plot-from sweep.jsonl --plot sweep.png   # no GPU
  python3 bench/compare_torch.py --selftest-cpu        # no GPU/torch needed

Library: --lib PATH, else the package's search (polyattn.capi: env POLYATTN_LIB, the
install, the dynamic loader's path, then build/lib and .devkit/lib of this checkout).
libpolyattn-cuda.so must lie next to it.
"""

import argparse
import ctypes
import json
import math
import os
import platform
import statistics
import struct
import sys
import time
import warnings
import zlib

try:
    import polyattn
except ImportError:  # run from a checkout: the package next door
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "bindings", "python"))
    import polyattn
from polyattn import capi as pa  # noqa: E402

SEQLENS = [512, 1024, 2048, 4096, 8192, 16384]
DECODE_SK = [4096, 32768, 131072]
QUICK = [  # (D, S, causal)
    (128, 512, False),
    (128, 8192, False),
    (64, 2048, True),
]


_VARIANT_EXTRA = []


def _set_variant(var_name, val):
    """Set var_name for one --variants value. A value may carry more settings after '&'
    (VALUE&VAR2=x&VAR3=y; each is cleared again before the next value) and a '#tag'
    suffix that is not passed on (to time one value twice under distinct names)."""
    for k in _VARIANT_EXTRA:
        os.environ.pop(k, None)
    del _VARIANT_EXTRA[:]
    parts = val.split("#")[0].split("&")
    os.environ[var_name] = parts[0]
    for a in parts[1:]:
        k, _, x = a.partition("=")
        os.environ[k] = x
        _VARIANT_EXTRA.append(k)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__[__doc__.index("Examples"):])
    ap.add_argument("--lib", default=None, help="path of libpolyattn.so")
    ap.add_argument("--env-kernel", default=None, metavar="NAME",
                    help="set POLYATTN_CUDA_KERNEL=NAME (simple|ampere|volta) before "
                         "loading the library")
    ap.add_argument("--json", default=None, metavar="FILE",
                    help="write one JSON object per config (and a header line) here")
    ap.add_argument("--dtypes", default="bf16", help="comma list of bf16, fp16 (default bf16)")
    ap.add_argument("--dims", default="64,128", help="head dims, comma list (default 64,128)")
    ap.add_argument("--seqlens", default=",".join(map(str, SEQLENS)),
                    help="sequence lengths, comma list")
    ap.add_argument("--causal", default="both", choices=["both", "0", "1"],
                    help="causal off (0), on (1) or both (default)")
    ap.add_argument("--tokens", type=int, default=16384, help="B*S (default 16384)")
    ap.add_argument("--hidden", type=int, default=2048, help="Hq*D (default 2048)")
    ap.add_argument("--quick", action="store_true", help="3-config smoke subset")
    ap.add_argument("--decode", action="store_true", help="the decode (split-KV) benchmark")
    ap.add_argument("--backward", action="store_true",
                    help="training: forward+backward and backward alone through autograd "
                         "(polyattn.flash_attn_func vs SDPA flash and cuDNN), gradients "
                         "checked against flash's")
    ap.add_argument("--deterministic", action="store_true",
                    help="--backward: polyattn with deterministic=True")
    ap.add_argument("--decode-sk", default=",".join(map(str, DECODE_SK)),
                    help="decode key lengths, comma list")
    ap.add_argument("--lse", action="store_true",
                    help="also have polyattn write LSE (off: lse = NULL)")
    ap.add_argument("--no-cudnn", action="store_true", help="skip the cuDNN backend")
    ap.add_argument("--variants", default=None, metavar="VAR=a,b,...",
                    help="time polyattn once per value of the environment variable VAR "
                         "(read by the backend at each call), e.g. "
                         "POLYATTN_CUDA_HOPPER_VARIANT=serial,pingpong; the first value is "
                         "the 'polyattn' column, the others get a line each (with --backward: "
                         "the backward alone, gradients checked against flash's); a value "
                         "may set more variables (a&VAR2=x) and carry a #tag to repeat it; "
                         "the Hopper backward's POLYATTN_CUDA_HOPPER_BWD_*, the Ampere "
                         "backward's POLYATTN_CUDA_BWD_VARIANT (their plans size "
                         "workspaces by them) and POLYATTN_CUDA_SP24_SELECT are read once "
                         "per process: time those one process per value")
    ap.add_argument("--no-efficient", action="store_true",
                    help="skip SDPA's memory-efficient backend")
    ap.add_argument("--api", default="prepared", choices=["prepared", "func"],
                    help="time the C call with arguments built once (prepared) or "
                         "polyattn.flash_attn_func per call (func)")
    ap.add_argument("--plot", default=None, metavar="PNG",
                    help="write a TFLOP/s-vs-S plot (matplotlib) after the sweep")
    ap.add_argument("--plot-from", default=None, metavar="JSONL",
                    help="only plot a saved --json file (to --plot, default <file>.png)")
    ap.add_argument("--timer", default="auto", choices=["auto", "triton", "events"],
                    help="triton.testing.do_bench or own event loop (auto: triton if present)")
    ap.add_argument("--min-runs", type=int, default=20, help="timed runs at least (20)")
    ap.add_argument("--rep-ms", type=float, default=100.0, help="target timed ms per impl")
    ap.add_argument("--warmup-ms", type=float, default=25.0, help="warm-up ms per impl")
    ap.add_argument("--atol", type=float, default=None, help="abs tol (bf16 1e-2, fp16 2e-3)")
    ap.add_argument("--rtol", type=float, default=None, help="rel tol (bf16 1.6e-2, fp16 2e-3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", type=int, default=0, help="CUDA device index")
    ap.add_argument("--selftest-cpu", action="store_true",
                    help="check the ctypes mirrors on the CPU backend (no torch/GPU)")
    return ap.parse_args(argv)


def _csv_ints(s):
    return [int(x) for x in s.split(",") if x.strip()]


# ============================================================ CPU self-test


def _ref_attention(q, k, v, B, Sq, Sk, Hq, Hkv, D, scale, causal, wl, wr, softcap, slopes):
    """Pure-Python reference. q/k/v: callables (b, s, h, d) -> float. Returns
    (O as dict[(b,i,h)] -> list[D], LSE as dict[(b,h,i)] -> float)."""
    O, L = {}, {}
    g = Hq // Hkv
    for b in range(B):
        for h in range(Hq):
            hk = h // g
            for i in range(Sq):
                diag = i + Sk - Sq
                s = []
                for j in range(Sk):
                    keep = True
                    if causal and j > diag:
                        keep = False
                    if wl >= 0 and j < diag - wl:
                        keep = False
                    if wr >= 0 and j > diag + wr:
                        keep = False
                    if not keep:
                        continue
                    x = scale * sum(q(b, i, h, d) * k(b, j, hk, d) for d in range(D))
                    if softcap > 0:
                        x = softcap * math.tanh(x / softcap)
                    if slopes is not None:
                        x -= slopes[h] * abs(i + Sk - Sq - j)
                    s.append((j, x))
                if not s:
                    O[(b, i, h)] = [0.0] * D
                    L[(b, h, i)] = -math.inf
                    continue
                m = max(x for _, x in s)
                w = [(j, math.exp(x - m)) for j, x in s]
                z = sum(p for _, p in w)
                O[(b, i, h)] = [sum(p * v(b, j, hk, d) for j, p in w) / z for d in range(D)]
                L[(b, h, i)] = m + math.log(z)
    return O, L


def _f32_to_bf16_bits(x):
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF  # round to nearest even


class _HostArray:
    """A host allocation of n elements of `dtype` wrapped as a polyattn buffer
    (MEMORY_HOST); get/set convert from/to Python floats."""

    def __init__(self, ctx, n, dtype=pa.DTYPE_F32):
        self.dtype = dtype
        ctype = ctypes.c_float if dtype == pa.DTYPE_F32 else ctypes.c_uint16
        self.arr = (ctype * max(n, 1))()
        self.buf = ctx.wrap(pa.MEMORY_HOST, ctypes.addressof(self.arr), ctypes.sizeof(self.arr))

    def __len__(self):
        return len(self.arr)

    def set(self, i, x):
        if self.dtype == pa.DTYPE_F32:
            self.arr[i] = x
        elif self.dtype == pa.DTYPE_F16:
            self.arr[i] = struct.unpack("<H", struct.pack("<e", x))[0]
        else:
            self.arr[i] = _f32_to_bf16_bits(x)

    def get(self, i):
        if self.dtype == pa.DTYPE_F32:
            return self.arr[i]
        if self.dtype == pa.DTYPE_F16:
            return struct.unpack("<e", struct.pack("<H", self.arr[i]))[0]
        return struct.unpack("<f", struct.pack("<I", self.arr[i] << 16))[0]


def _selftest_case(ctx, name, B, Sq, Sk, Hq, Hkv, D, causal=0, wl=-1, wr=-1, softcap=0.0,
                   scale=0.0, alibi=False, k_bhsd=False, v_offset=0, with_lse=True,
                   dtype=pa.DTYPE_F32):
    import random
    rnd = random.Random(zlib.crc32(name.encode()))
    dt = dtype
    tol = {pa.DTYPE_F32: 1e-4, pa.DTYPE_F16: 4e-3, pa.DTYPE_BF16: 2.5e-2}[dt]
    # Q: [B, Sq, Hq, D] contiguous
    qa = _HostArray(ctx, B * Sq * Hq * D, dt)
    q_str = (Sq * Hq * D, Hq * D, D, 1)
    # K: stored [B, Hkv, Sk, D] (BHSD) or [B, Sk, Hkv, D]; viewed as [B, Sk, Hkv, D]
    ka = _HostArray(ctx, B * Sk * Hkv * D, dt)
    k_str = (Hkv * Sk * D, D, Sk * D, 1) if k_bhsd else (Sk * Hkv * D, Hkv * D, D, 1)
    # V: [B, Sk, Hkv, D] at an element offset inside a bigger buffer
    va = _HostArray(ctx, v_offset + B * Sk * Hkv * D + 3, dt)
    v_str = (Sk * Hkv * D, Hkv * D, D, 1)
    oa = _HostArray(ctx, B * Sq * Hq * D, dt)
    la = _HostArray(ctx, B * Hq * Sq)

    def idx(st, b, s, h, d):
        return b * st[0] + s * st[1] + h * st[2] + d * st[3]

    for x in (qa, ka, va):
        for i in range(len(x)):
            x.set(i, rnd.uniform(-1, 1))
    for i in range(len(oa)):
        oa.set(i, 12345.0)  # must be overwritten
    slopes = [0.5 / (h + 1) for h in range(Hq)] if alibi else None

    T = pa.Context.tensor
    f32 = pa.DTYPE_F32
    tq = T(qa.buf, 0, dt, (B, Sq, Hq, D), q_str)
    tk = T(ka.buf, 0, dt, (B, Sk, Hkv, D), k_str)
    tv = T(va.buf, v_offset * pa.DTYPE_SIZE[dt], dt, (B, Sk, Hkv, D), v_str)
    to = T(oa.buf, 0, dt, (B, Sq, Hq, D), (Sq * Hq * D, Hq * D, D, 1))
    tl = T(la.buf, 0, f32, (B, Hq, Sq), (Hq * Sq, Sq, 1)) if with_lse else None
    kw = dict(scale=scale, causal=causal, window_left=wl, window_right=wr, softcap=softcap)
    keep = []
    if alibi:
        sa = _HostArray(ctx, Hq)
        for h in range(Hq):
            sa.set(h, slopes[h])
        ts = T(sa.buf, 0, f32, (Hq,), (1,))
        keep += [sa, ts]
        kw["alibi_slopes"] = ctypes.pointer(ts)
    p = ctx.params(**kw)
    ws_bytes = ctx.forward_workspace_size(p, tq, tk, tv, to, tl)
    wa = _HostArray(ctx, (ws_bytes + 3) // 4 + 16)
    ctx.forward(p, tq, tk, tv, to, tl, wa.buf)

    eff_scale = scale if scale else 1.0 / math.sqrt(D)
    O, L = _ref_attention(
        lambda b, s, h, d: qa.get(idx(q_str, b, s, h, d)),
        lambda b, s, h, d: ka.get(idx(k_str, b, s, h, d)),
        lambda b, s, h, d: va.get(v_offset + idx(v_str, b, s, h, d)),
        B, Sq, Sk, Hq, Hkv, D, eff_scale, causal, wl, wr, softcap, slopes)
    err_o = err_l = 0.0
    bad = []
    for (b, i, h), row in O.items():
        for d in range(D):
            got = oa.get(idx((Sq * Hq * D, Hq * D, D, 1), b, i, h, d))
            e = abs(got - row[d])
            if not (e <= tol):
                bad.append(("O", b, i, h, d, got, row[d]))
            err_o = max(err_o, e) if e == e else math.inf
    if with_lse:
        for (b, h, i), ref in L.items():
            got = la.arr[b * Hq * Sq + h * Sq + i]
            if ref == -math.inf:
                e = 0.0 if got == -math.inf else math.inf
            else:
                e = abs(got - ref)
            if not (e <= 2e-4 if dt == pa.DTYPE_F32 else e <= 2e-3):
                bad.append(("LSE", b, h, i, got, ref))
            err_l = max(err_l, e) if e == e else math.inf
    for x in (qa, ka, va, oa, la, wa) + tuple(o for o in keep if isinstance(o, _HostArray)):
        x.buf.free()
    ok = not bad
    print("  %-44s ws=%-6d max|dO|=%.2e max|dLSE|=%.2e  %s" %
          (name, ws_bytes, err_o, err_l, "ok" if ok else "FAIL %s" % (bad[:3],)))
    return ok


def selftest_cpu(args):
    os.environ.pop("POLYATTN_BACKEND", None)
    ok = True
    errs = pa.check_layout()
    print("struct layout vs C (gcc, LP64): %s" % ("ok" if not errs else "; ".join(errs)))
    ok &= not errs
    lib = polyattn.load_library(args.lib)
    print("library %s, version %s (0x%06x)" % (lib.path, lib.version_str(), lib.version()))
    for b in lib.backend_list():
        print("  backend %-7s built=%d usable=%d devices=%d %s %s" %
              (b["name"], b["built"], b["usable"], b["device_count"], b["module_path"],
               ("(" + b["reason"] + ")") if b["reason"] else ""))
    ctx = lib.context(pa.BACKEND_CPU, 0, None, 2)
    print("context: backend %s, device %r" % (lib.backend_name(ctx.backend()).decode(),
                                                ctx.device_name()))
    ok &= ctx.backend() == pa.BACKEND_CPU
    cases = [
        dict(name="plain MHA Sq=Sk=6 D=8", B=2, Sq=6, Sk=6, Hq=2, Hkv=2, D=8),
        dict(name="GQA causal Sq=3<Sk=7 D=16, K bhsd, V offset", B=2, Sq=3, Sk=7, Hq=4,
             Hkv=2, D=16, causal=1, k_bhsd=True, v_offset=5),
        dict(name="MQA window(2,1) softcap alibi scale=.4", B=1, Sq=5, Sk=9, Hq=4, Hkv=1,
             D=8, wl=2, wr=1, softcap=3.0, scale=0.4, alibi=True),
        dict(name="causal Sq=6>Sk=3 (empty rows), no LSE", B=1, Sq=6, Sk=3, Hq=2, Hkv=2,
             D=4, causal=1, with_lse=False),
        dict(name="causal Sq=6>Sk=3 (empty rows), LSE", B=1, Sq=6, Sk=3, Hq=2, Hkv=2,
             D=4, causal=1),
        dict(name="fp16 GQA causal Sq=Sk=9 D=32, K bhsd", B=2, Sq=9, Sk=9, Hq=4, Hkv=2,
             D=32, causal=1, k_bhsd=True, dtype=pa.DTYPE_F16),
        dict(name="bf16 MHA Sq=4 Sk=11 D=64, V offset", B=1, Sq=4, Sk=11, Hq=2, Hkv=2,
             D=64, v_offset=3, dtype=pa.DTYPE_BF16),
    ]
    for c in cases:
        try:
            ok &= _selftest_case(ctx, **c)
        except pa.PolyattnError as e:
            print("  %-44s FAIL %s" % (c["name"], e))
            ok = False
    # Error path: Hq = 3 is not a multiple of Hkv = 2 -> ERR_HEADS with a message.
    try:
        _selftest_case(ctx, name="error: Hq=3 Hkv=2", B=1, Sq=2, Sk=2, Hq=3, Hkv=2, D=4)
        print("  error path: FAIL (no exception)")
        ok = False
    except pa.PolyattnError as e:
        good = e.status == pa.POLYATTN_ERR_HEADS and e.message
        print("  error path: %s (%s)" % ("ok" if good else "FAIL", e))
        ok &= bool(good)
    # ABI check: a wrong struct_size must be refused.
    p = ctx.params()
    p.struct_size = 7
    z = pa.polyattn_tensor()
    n = ctypes.c_size_t()
    st = lib.forward_workspace_size(ctx.handle, ctypes.byref(p), ctypes.byref(z),
                                    ctypes.byref(z), ctypes.byref(z), ctypes.byref(z),
                                    None, ctypes.byref(n))
    print("  bad struct_size -> %s: %s" % (pa.STATUS_NAMES[st] if 0 <= st < len(pa.STATUS_NAMES)
                                          else st, lib.last_error(ctx.handle).decode()))
    ok &= st != pa.POLYATTN_OK
    ctx.close()
    print("SELFTEST %s" % ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


# ============================================================ GPU benchmark


class Bench:
    def __init__(self, args):
        import torch
        self.torch = torch
        self.args = args
        self.dev = torch.device("cuda", args.device)
        torch.cuda.set_device(self.dev)
        torch.cuda.init()
        self.timer = args.timer
        self.do_bench = None
        if self.timer in ("auto", "triton"):
            try:
                from triton.testing import do_bench
                self.do_bench = do_bench
                self.timer = "triton"
            except Exception as e:  # noqa: BLE001
                if args.timer == "triton":
                    raise SystemExit("--timer triton: cannot import triton: %s" % e)
                self.timer = "events"
        self.cache = torch.empty(256 << 20, dtype=torch.int8, device=self.dev)

    def sync(self):
        self.torch.cuda.synchronize(self.dev)

    def estimate_ms(self, fn, n=3):
        torch = self.torch
        fn()
        self.sync()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e) / n

    def time_ms(self, fn):
        """Median ms of >= min_runs runs after warm-up; returns (ms, runs)."""
        a = self.args
        est = max(self.estimate_ms(fn), 1e-3)
        if self.timer == "triton":
            # do_bench runs int(rep / estimate) times, its estimate including the L2
            # clear; ask for enough (with margin) to get >= min_runs.
            rep = max(a.rep_ms, 1.5 * (a.min_runs + 2) * (est + 0.25))
            warm = max(a.warmup_ms, 2 * est)
            try:
                ms = self.do_bench(fn, warmup=warm, rep=rep, return_mode="median")
            except TypeError:  # very old triton: no return_mode
                ms = self.do_bench(fn, warmup=warm, rep=rep, quantiles=[0.5])
                ms = ms[0] if isinstance(ms, (list, tuple)) else ms
            return float(ms), max(1, int(rep / (est + 0.1)))
        torch = self.torch
        n_warm = max(3, int(a.warmup_ms / est))
        n = max(a.min_runs, min(2000, int(a.rep_ms / est)))
        for _ in range(n_warm):
            fn()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            self.cache.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        self.sync()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)), n


class TorchPolyattn:
    """polyattn CUDA context on torch's current stream; torch tensors wrapped zero-copy."""

    def __init__(self, lib, torch, dev):
        self.torch = torch
        self.dev = dev
        self.lib = lib
        stream = torch.cuda.current_stream(dev)
        if not stream.cuda_stream:
            raise SystemExit("run under a non-default torch stream (main() does)")
        self.ctx = lib.context(pa.BACKEND_CUDA, dev.index, stream.cuda_stream, 0)
        if self.ctx.backend() != pa.BACKEND_CUDA:
            name = lib.backend_name(self.ctx.backend())
            raise SystemExit("polyattn context is on backend %s, not cuda (env "
                             "POLYATTN_BACKEND?)" % (name.decode() if name else "?"))
        self.ws_t = None
        self.ws_buf = None
        self.bufs = []
        self.DT = {torch.float32: pa.DTYPE_F32, torch.float16: pa.DTYPE_F16,
                   torch.bfloat16: pa.DTYPE_BF16}

    def view(self, t):
        st = t.untyped_storage()
        buf = self.ctx.wrap(pa.MEMORY_CUDA_DEVICE, st.data_ptr(), st.nbytes())
        self.bufs.append(buf)
        return pa.Context.tensor(buf, t.storage_offset() * t.element_size(),
                                 self.DT[t.dtype], tuple(t.shape), tuple(t.stride()))

    def workspace(self, nbytes):
        need = max(int(nbytes), 256)
        if self.ws_t is None or self.ws_t.numel() < need:
            if self.ws_buf is not None:
                self.torch.cuda.synchronize(self.dev)
                self.ws_buf.free()
            self.ws_t = self.torch.empty(need, dtype=self.torch.uint8, device=self.dev)
            self.ws_buf = self.ctx.wrap(pa.MEMORY_CUDA_DEVICE, self.ws_t.data_ptr(), need)
        return self.ws_buf

    def func_call(self, q, k, v, o, causal, lse=None):
        """A callable running polyattn.flash_attn_func (the torch custom op) as a user
        would; call.result() is its last output (the caller's `o` is not written)."""
        last = [None]

        def call():
            last[0] = polyattn.flash_attn_func(q, k, v, causal=causal,
                                               return_lse=lse is not None)
        call.result = lambda: last[0][0] if isinstance(last[0], tuple) else last[0]
        return call

    def prepare(self, q, k, v, o, causal, lse=None):
        """Returns (call, workspace_bytes); call() enqueues one forward."""
        tq, tk, tv, to = self.view(q), self.view(k), self.view(v), self.view(o)
        tl = self.view(lse) if lse is not None else None
        p = self.ctx.params(causal=1 if causal else 0)
        nbytes = self.ctx.forward_workspace_size(p, tq, tk, tv, to, tl)
        ws = self.workspace(nbytes)
        return self.ctx.forward_call(p, tq, tk, tv, to, tl, ws), nbytes

    def release(self):
        """Free the per-config wrapped buffers (after the work on them finished)."""
        self.torch.cuda.synchronize(self.dev)
        for b in self.bufs:
            b.free()
        self.bufs = []


def _sdpa_try(bench, sdpa_kernel, be, fn):
    """Run fn once under backend `be` (the reasons torch gives as warnings when the
    backend refuses go into the exception), then time it. Returns (out, (ms, runs))."""
    with sdpa_kernel(be):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                out = fn()
                bench.sync()
            except Exception as e:  # noqa: BLE001
                why = "; ".join(str(x.message).strip().splitlines()[0] for x in w[:3])
                raise RuntimeError(_err_line(e) + (" [" + why + "]" if why else ""))
        return out, bench.time_ms(fn)


def _err_line(e):
    s = str(e).strip().splitlines()
    return (s[0] if s else type(e).__name__)[:400]


def env_record(args, lib, torch, bench, tp):
    rec = {
        "kind": "env",
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "host": platform.node(),
        "gpu": torch.cuda.get_device_name(bench.dev),
        "capability": "sm_%d%d" % torch.cuda.get_device_capability(bench.dev),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "timer": bench.timer,
        "min_runs": args.min_runs,
        "polyattn_lib": lib.path,
        "polyattn_version": lib.version_str(),
        "polyattn_device": tp.ctx.device_name(),
        "POLYATTN_CUDA_KERNEL": os.environ.get("POLYATTN_CUDA_KERNEL", ""),
        "argv": sys.argv[1:],
    }
    try:
        import triton
        rec["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        rec["triton"] = None
    for b in lib.backend_list():
        if b["name"] == "cuda":
            rec["cuda_module"] = b["module_path"]
    return rec


def _tols(args, torch, dtype):
    atol = args.atol if args.atol is not None else (1e-2 if dtype == torch.bfloat16 else 2e-3)
    rtol = args.rtol if args.rtol is not None else (1.6e-2 if dtype == torch.bfloat16 else 2e-3)
    return atol, rtol


def _compare(torch, o, ref, atol, rtol):
    """(max abs diff, fraction outside atol + rtol*|ref|) in float32."""
    d = (o.float() - ref.float()).abs()
    bad = (d > atol + rtol * ref.float().abs()).sum().item()
    return d.max().item(), bad / d.numel()


def _finite(torch, o):
    return bool(torch.isfinite(o).all().item())


def _fmt(ms, tf):
    return "%8.3f %6.1f" % (ms, tf) if ms is not None else "%8s %6s" % ("-", "-")


def _print_speedups(rows, dtypes, key, what):
    """Per dtype and head dim, the geomean and minimum of rows' `key` at S >= 2048."""
    for dt in dtypes:
        for D in sorted({r["D"] for r in rows}):
            xs = [r[key] for r in rows if r["dtype"] == dt and r["D"] == D and r["S"] >= 2048
                  and key in r]
            if xs:
                gm = math.exp(sum(math.log(x) for x in xs) / len(xs))
                print("%s D=%d S>=2048: polyattn/flash %s geomean %.3f, min %.3f, "
                      "%d/%d configs >= 1.1x" % (dt, D, what, gm, min(xs),
                                                 sum(x >= 1.1 for x in xs), len(xs)))


def run_sweep(args, lib, torch, bench, tp, out):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    DT = {"bf16": torch.bfloat16, "fp16": torch.float16}
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    for d in dtypes:
        if d not in DT:
            raise SystemExit("--dtypes: unknown %r (bf16, fp16)" % d)
    causals = {"both": [False, True], "0": [False], "1": [True]}[args.causal]
    if args.quick:
        configs = [(dt, D, S, c) for dt in dtypes for (D, S, c) in QUICK]
    else:
        configs = [(dt, D, S, c) for dt in dtypes for D in _csv_ints(args.dims)
                   for S in _csv_ints(args.seqlens) for c in causals]
    backends = [("flash", SDPBackend.FLASH_ATTENTION)]
    if not args.no_cudnn:
        backends.append(("cudnn", SDPBackend.CUDNN_ATTENTION))
    if not args.no_efficient:
        backends.append(("efficient", SDPBackend.EFFICIENT_ATTENTION))

    hdr = ("%-4s %3s %5s %3s %3s %1s | %8s %6s | %8s %6s | %8s %6s | %8s %6s | %6s %6s %6s "
           "| %8s %8s %s" %
           ("dt", "D", "S", "B", "H", "c", "pa ms", "TF/s", "flash ms", "TF/s", "cudnn ms",
            "TF/s", "eff ms", "TF/s", "x fl", "x cu", "x ef", "|pa-fl|", "|cu-fl|", "check"))
    print("polyattn timed through %s" % ("polyattn.flash_attn_func (per call)"
                                         if args.api == "func" else
                                         "polyattn.capi (the C call, arguments built once)"))
    print("speed-up columns are t_torch / t_polyattn (> 1: polyattn faster)")
    print(hdr)
    print("-" * len(hdr))
    gen = torch.Generator(device=bench.dev)
    rows = []
    for dt, D, S, causal in configs:
        dtype = DT[dt]
        if args.tokens % S or args.hidden % D:
            print("skip %s D=%d S=%d: tokens/hidden not divisible" % (dt, D, S))
            continue
        B, H = args.tokens // S, args.hidden // D
        gen.manual_seed(args.seed * 1000003 + S * 7 + D)
        q = torch.randn((B, S, H, D), dtype=dtype, device=bench.dev, generator=gen)
        k = torch.randn((B, S, H, D), dtype=dtype, device=bench.dev, generator=gen)
        v = torch.randn((B, S, H, D), dtype=dtype, device=bench.dev, generator=gen)
        o = torch.empty_like(q)
        lse = (torch.empty((B, H, S), dtype=torch.float32, device=bench.dev)
               if args.lse else None)
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        rec = {"kind": "fwd", "dtype": dt, "D": D, "S": S, "B": B, "Hq": H, "Hkv": H,
               "causal": causal, "flops": flops, "lse": bool(args.lse)}
        # --- polyattn (with --variants: the first value; the others below)
        res = {}
        var_name, var_values = None, [None]
        if args.variants:
            var_name, _, vals = args.variants.partition("=")
            var_values = [x for x in vals.split(",") if x]
            _set_variant(var_name, var_values[0])
        try:
            if args.api == "func":
                call = tp.func_call(q, k, v, o, causal, lse)
                rec["api"] = "func"
            else:
                call, wsb = tp.prepare(q, k, v, o, causal, lse)
                rec["workspace_bytes"] = wsb
            call()
            bench.sync()
            ms, n = bench.time_ms(call)
            res["polyattn"] = (ms, n)
            for val in var_values[1:]:
                _set_variant(var_name, val)
                call()
                bench.sync()
                res["pa:" + val] = bench.time_ms(call)
            if var_name:
                _set_variant(var_name, var_values[0])
        except Exception as e:  # noqa: BLE001
            rec["polyattn_error"] = _err_line(e)
            call = None
        # --- SDPA
        outs = {}
        for name, be in backends:
            try:
                def fn(qt=qt, kt=kt, vt=vt, causal=causal):
                    return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
                outs[name], res[name] = _sdpa_try(bench, sdpa_kernel, be, fn)
            except Exception as e:  # noqa: BLE001
                rec[name + "_error"] = _err_line(e)
        # --- correctness (fresh outputs: polyattn rerun after the timing)
        if call is not None:
            o.fill_(float("nan"))  # so that an output left unwritten shows
            call()
            if getattr(call, "result", None):
                o.copy_(call.result())
            bench.sync()
            rec["finite"] = _finite(torch, o)
        atol, rtol = _tols(args, torch, dtype)
        check = "-"
        if call is not None and "flash" in outs:
            ref = outs["flash"].transpose(1, 2)
            md, frac = _compare(torch, o, ref, atol, rtol)
            rec["maxdiff_flash"] = md
            rec["frac_outside_tol"] = frac
            ok = rec["finite"] and frac == 0.0
            check = "ok" if ok else ("NaN/Inf" if not rec["finite"] else
                                     "FAIL(%.1e)" % frac)
            rec["check"] = "ok" if ok else "fail"
        elif call is not None:
            check = "finite" if rec["finite"] else "NaN/Inf"
        if "flash" in outs and "cudnn" in outs:
            rec["maxdiff_cudnn_flash"] = _compare(torch, outs["cudnn"], outs["flash"],
                                                  atol, rtol)[0]
        # --- record
        tf = {}
        for name in ("polyattn", "flash", "cudnn", "efficient"):
            if name in res:
                ms, n = res[name]
                tf[name] = flops / (ms * 1e-3) / 1e12
                rec[name + "_ms"] = ms
                rec[name + "_tflops"] = tf[name]
                rec[name + "_runs"] = n
        for name in ("flash", "cudnn", "efficient"):
            if "polyattn" in res and name in res:
                rec["speedup_vs_" + name] = res[name][0] / res["polyattn"][0]

        def g(n):
            return (res[n][0], tf[n]) if n in res else (None, None)

        def sp(n):
            x = rec.get("speedup_vs_" + n)
            return "%6.2f" % x if x is not None else "%6s" % "-"
        md = rec.get("maxdiff_flash")
        mc = rec.get("maxdiff_cudnn_flash")
        print("%-4s %3d %5d %3d %3d %1d | %s | %s | %s | %s | %s %s %s | %8s %8s %s" % (
            dt, D, S, B, H, int(causal), _fmt(*g("polyattn")), _fmt(*g("flash")),
            _fmt(*g("cudnn")), _fmt(*g("efficient")), sp("flash"), sp("cudnn"),
            sp("efficient"),
            "%.2e" % md if md is not None else "-", "%.2e" % mc if mc is not None else "-",
            check), flush=True)
        if var_name:
            rec["variant_" + var_name] = var_values[0]
            for val in var_values[1:]:
                if "pa:" + val not in res:
                    continue
                ms, n = res["pa:" + val]
                t = flops / (ms * 1e-3) / 1e12
                rec.setdefault("variants", {})[val] = {"ms": ms, "tflops": t, "runs": n}
                print("     %s=%s: %8.3f ms %6.1f TF/s  x flash %s  x cudnn %s" % (
                    var_name, val, ms, t,
                    "%.2f" % (res["flash"][0] / ms) if "flash" in res else "-",
                    "%.2f" % (res["cudnn"][0] / ms) if "cudnn" in res else "-"), flush=True)
            print("     (first line: %s=%s)" % (var_name, var_values[0]), flush=True)
        for name in ("polyattn", "flash", "cudnn", "efficient"):
            if name + "_error" in rec:
                print("     %s: %s" % (name, rec[name + "_error"]), flush=True)
        rows.append(rec)
        if out:
            out.write(json.dumps(rec) + "\n")
            out.flush()
        tp.release()
        del q, k, v, o, lse, qt, kt, vt, outs
    # --- summary
    print()
    _print_speedups(rows, dtypes, "speedup_vs_flash", "speed-up")
    args.rows = rows
    nfail = sum(1 for r in rows if r.get("check") == "fail" or r.get("finite") is False)
    nerr = sum(1 for r in rows if "polyattn_error" in r)
    print("correctness: %d configs, %d failed, %d polyattn errors" % (len(rows), nfail, nerr))
    return 0 if nfail == 0 and nerr == 0 else 1


def run_decode(args, lib, torch, bench, tp, out):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    B, Hq, Hkv, D = 8, 32, 8, 128
    dtype = torch.bfloat16
    sks = _csv_ints(args.decode_sk)
    if args.quick:
        sks = sks[:1]
    variants = [("flash", SDPBackend.FLASH_ATTENTION)]
    if not args.no_cudnn:
        variants.append(("cudnn", SDPBackend.CUDNN_ATTENTION))
    variants.append(("efficient", SDPBackend.EFFICIENT_ATTENTION))
    print("decode: B=%d Hq=%d Hkv=%d D=%d Sq=1 bf16; TB/s = (K+V bytes) / time" %
          (B, Hq, Hkv, D))
    hdr = "%7s %8s | %10s %6s" % ("Sk", "KV MiB", "pa ms", "TB/s")
    for n, _ in variants:
        hdr += " | %10s %6s" % (n + " ms", "TB/s")
    hdr += " | %8s %s" % ("|pa-ref|", "check")
    print(hdr)
    print("-" * len(hdr))
    gen = torch.Generator(device=bench.dev)
    gen.manual_seed(args.seed)
    nfail = 0
    for Sk in sks:
        q = torch.randn((B, 1, Hq, D), dtype=dtype, device=bench.dev, generator=gen)
        k = torch.randn((B, Sk, Hkv, D), dtype=dtype, device=bench.dev, generator=gen)
        v = torch.randn((B, Sk, Hkv, D), dtype=dtype, device=bench.dev, generator=gen)
        o = torch.empty_like(q)
        kv_bytes = 2 * B * Sk * Hkv * D * q.element_size()
        rec = {"kind": "decode", "dtype": "bf16", "B": B, "Hq": Hq, "Hkv": Hkv, "D": D,
               "Sq": 1, "Sk": Sk, "kv_bytes": kv_bytes,
               "flops": 4.0 * B * Hq * 1 * Sk * D}
        res = {}
        call = None
        try:
            call, wsb = tp.prepare(q, k, v, o, False, None)
            rec["workspace_bytes"] = wsb
            call()
            bench.sync()
            res["polyattn"] = bench.time_ms(call)
        except Exception as e:  # noqa: BLE001
            rec["polyattn_error"] = _err_line(e)
            call = None
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        outs = {}
        for name, be in variants:
            try:
                def fn(qt=qt, kt=kt, vt=vt):
                    return F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
                outs[name], res[name] = _sdpa_try(bench, sdpa_kernel, be, fn)
            except Exception as e:  # noqa: BLE001
                rec[name + "_error"] = _err_line(e)
        if call is not None:
            o.fill_(float("nan"))  # so that an output left unwritten shows
            call()
            bench.sync()
            rec["finite"] = _finite(torch, o)
            refname = next((n for n, _ in variants if n in outs), None)
            if refname:
                atol, rtol = _tols(args, torch, dtype)
                md, frac = _compare(torch, o, outs[refname].transpose(1, 2), atol, rtol)
                rec["maxdiff_ref"] = md
                rec["ref"] = refname
                rec["frac_outside_tol"] = frac
                rec["check"] = "ok" if rec["finite"] and frac == 0.0 else "fail"
            if rec.get("check") == "fail" or not rec["finite"]:
                nfail += 1
        for name, (ms, n) in res.items():
            rec[name + "_ms"] = ms
            rec[name + "_tbps"] = kv_bytes / (ms * 1e-3) / 1e12
            rec[name + "_runs"] = n
        line = "%7d %8.0f" % (Sk, kv_bytes / 2**20)
        for name in ["polyattn"] + [n for n, _ in variants]:
            if name in res:
                line += " | %10.4f %6.2f" % (res[name][0], rec[name + "_tbps"])
            else:
                line += " | %10s %6s" % ("n/a", "-")
        line += " | %8s %s" % ("%.2e" % rec["maxdiff_ref"] if "maxdiff_ref" in rec else "-",
                               rec.get("check", ""))
        print(line, flush=True)
        for name in ["polyattn"] + [n for n, _ in variants]:
            if name + "_error" in rec:
                print("     %s: %s" % (name, rec[name + "_error"]), flush=True)
        if out:
            out.write(json.dumps(rec) + "\n")
            out.flush()
        tp.release()
        del q, k, v, o, qt, kt, vt, outs
    return 0 if nfail == 0 else 1


# ================================================================= plotting

PLOT_IMPLS = [("polyattn", "polyattn", "-o"), ("flash", "SDPA flash", "--s"),
              ("cudnn", "SDPA cuDNN", "--^"), ("efficient", "SDPA efficient", ":v")]


def run_backward(args, lib, torch, bench, tp, out):
    """Training-shaped timing through autograd, on the same tensors for every
    implementation: fwd+bwd (a forward and torch.autograd.grad) and bwd alone (grad of
    a retained graph). FLOPs: backward 2.5x the forward count, fwd+bwd 3.5x."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    DT = {"bf16": torch.bfloat16, "fp16": torch.float16}
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    causals = {"both": [False, True], "0": [False], "1": [True]}[args.causal]
    configs = ([(dt, D, S, c) for dt in dtypes for (D, S, c) in QUICK] if args.quick else
               [(dt, D, S, c) for dt in dtypes for D in _csv_ints(args.dims)
                for S in _csv_ints(args.seqlens) for c in causals])
    impls = [("polyattn", None), ("flash", SDPBackend.FLASH_ATTENTION)]
    if not args.no_cudnn:
        impls.append(("cudnn", SDPBackend.CUDNN_ATTENTION))
    print("backward through autograd; polyattn.flash_attn_func(deterministic=%s); "
          "TF/s by 3.5x (fwd+bwd) and 2.5x (bwd) the forward FLOPs" % bool(args.deterministic))
    hdr = ("%-4s %3s %5s %3s %3s %1s | %-23s | %-23s | %-23s | %6s %6s | %s" %
           ("dt", "D", "S", "B", "H", "c", "polyattn fb/bwd TF/s", "flash fb/bwd TF/s",
            "cudnn fb/bwd TF/s", "bw/fl", "bw/cu", "grads vs flash"))
    print(hdr)
    print("-" * len(hdr))
    gen = torch.Generator(device=bench.dev)
    rows = []
    for dt, D, S, causal in configs:
        dtype = DT[dt]
        if args.tokens % S or args.hidden % D:
            continue
        B, H = args.tokens // S, args.hidden // D
        gen.manual_seed(args.seed * 1000003 + S * 7 + D)
        q, k, v, do = (torch.randn((B, S, H, D), dtype=dtype, device=bench.dev, generator=gen)
                       for _ in range(4))
        for t in (q, k, v):
            t.requires_grad_(True)
        fwd_flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        rec = {"kind": "bwd", "dtype": dt, "D": D, "S": S, "B": B, "Hq": H, "Hkv": H,
               "causal": causal, "flops": fwd_flops, "deterministic": bool(args.deterministic)}
        grads = {}
        var_name, var_values = None, [None]
        if args.variants:  # the first value for the 'polyattn' column, the others below
            var_name, _, vals = args.variants.partition("=")
            var_values = [x for x in vals.split(",") if x]
            _set_variant(var_name, var_values[0])
        for name, be in impls:
            def forward(name=name, be=be):
                if be is None:
                    return polyattn.flash_attn_func(q, k, v, causal=causal,
                                                    deterministic=bool(args.deterministic))
                with sdpa_kernel([be]):
                    return F.scaled_dot_product_attention(
                        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                        is_causal=causal).transpose(1, 2)

            def fb(forward=forward):
                o = forward()
                return torch.autograd.grad(o, (q, k, v), do)
            try:
                grads[name] = fb()
                bench.sync()
                o_keep = forward()

                def bwd(o_keep=o_keep):
                    return torch.autograd.grad(o_keep, (q, k, v), do, retain_graph=True)
                ms_fb, n_fb = bench.time_ms(fb)
                ms_b, n_b = bench.time_ms(bwd)
                rec[name + "_fb_ms"], rec[name + "_bwd_ms"] = ms_fb, ms_b
                rec[name + "_fb_tflops"] = 3.5 * fwd_flops / (ms_fb * 1e-3) / 1e12
                rec[name + "_bwd_tflops"] = 2.5 * fwd_flops / (ms_b * 1e-3) / 1e12
                del o_keep
            except Exception as e:  # noqa: BLE001
                rec[name + "_error"] = _err_line(e)
        atol, rtol = _tols(args, torch, dtype)

        def grads_check(gpa, prefix):
            worst, ok = 0.0, True
            for gp, gf, gname in zip(gpa, grads["flash"], ("dq", "dk", "dv")):
                # gradients are sums over S rows: scale the tolerance by their magnitude
                scale = max(1.0, float(gf.float().abs().max()))
                md, frac = _compare(torch, gp, gf, atol * scale, rtol)
                rec[prefix + "maxdiff_" + gname] = md
                worst = max(worst, md)
                ok &= frac == 0.0 and _finite(torch, gp)
            return ok, worst
        var_lines = []
        for val in var_values[1:]:  # --variants: backward alone, gradients checked too
            _set_variant(var_name, val)
            try:
                def fwd_v():
                    return polyattn.flash_attn_func(q, k, v, causal=causal,
                                                    deterministic=bool(args.deterministic))
                gv = torch.autograd.grad(fwd_v(), (q, k, v), do)
                bench.sync()
                o_keep = fwd_v()

                def bwd_v(o_keep=o_keep):
                    return torch.autograd.grad(o_keep, (q, k, v), do, retain_graph=True)
                ms_v, n_v = bench.time_ms(bwd_v)
                del o_keep
                t = 2.5 * fwd_flops / (ms_v * 1e-3) / 1e12
                vrec = {"bwd_ms": ms_v, "bwd_tflops": t, "runs": n_v}
                vchk = "-"
                if "flash" in grads:
                    vok, vworst = grads_check(gv, "var:%s:" % val)
                    vrec["check"] = "ok" if vok else "fail"
                    vchk = "%s (max %.2e)" % (vrec["check"], vworst)
                    if not vok:
                        rec["check_variant_failed"] = True
                rec.setdefault("variants", {})[val] = vrec
                var_lines.append("     %s=%s: bwd %8.3f ms %6.1f TF/s  x flash %s  x cudnn %s | %s" % (
                    var_name, val, ms_v, t,
                    "%.2f" % (rec["flash_bwd_ms"] / ms_v) if "flash_bwd_ms" in rec else "-",
                    "%.2f" % (rec["cudnn_bwd_ms"] / ms_v) if "cudnn_bwd_ms" in rec else "-",
                    vchk))
                del gv
            except Exception as e:  # noqa: BLE001
                var_lines.append("     %s=%s: error %s" % (var_name, val, _err_line(e)))
        if var_name:
            _set_variant(var_name, var_values[0])
            rec["variant_" + var_name] = var_values[0]
            var_lines.append("     (first line: %s=%s)" % (var_name, var_values[0]))
        check = "-"
        if "polyattn" in grads and "flash" in grads:
            ok, worst = grads_check(grads["polyattn"], "")
            rec["check"] = "ok" if ok else "fail"
            check = "%s (max %.2e)" % (rec["check"], worst)
        for n in ("flash", "cudnn"):
            if "polyattn_bwd_ms" in rec and n + "_bwd_ms" in rec:
                rec["bwd_speedup_vs_" + n] = rec[n + "_bwd_ms"] / rec["polyattn_bwd_ms"]

        def cell(n):
            if n + "_fb_tflops" not in rec:
                return "%-23s" % "-"
            return "%7.1f / %7.1f      " % (rec[n + "_fb_tflops"], rec[n + "_bwd_tflops"])

        def sp(n):
            x = rec.get("bwd_speedup_vs_" + n)
            return "%6.2f" % x if x is not None else "%6s" % "-"
        print("%-4s %3d %5d %3d %3d %1d | %s | %s | %s | %s %s | %s" % (
            dt, D, S, B, H, int(causal), cell("polyattn"), cell("flash"), cell("cudnn"),
            sp("flash"), sp("cudnn"), check), flush=True)
        for line in var_lines:
            print(line, flush=True)
        for n, _ in impls:
            if n + "_error" in rec:
                print("     %s: %s" % (n, rec[n + "_error"]), flush=True)
        rows.append(rec)
        if out:
            out.write(json.dumps(rec) + "\n")
            out.flush()
        q = k = v = do = grads = None  # freed before the next config's tensors
        torch.cuda.empty_cache()
    print()
    _print_speedups(rows, dtypes, "bwd_speedup_vs_flash", "backward speed-up")
    nfail = sum(1 for r in rows if r.get("check") == "fail" or r.get("check_variant_failed"))
    nerr = sum(1 for r in rows if "polyattn_error" in r)
    print("gradients: %d configs, %d failed, %d polyattn errors" % (len(rows), nfail, nerr))
    return 0 if nfail == 0 and nerr == 0 else 1


def load_jsonl(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def plot_results(rows, path):
    """TFLOP/s against S, one panel per (dtype, D, causal), from --json records.
    Returns True if a file was written; without matplotlib says so and skips."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print("# plot skipped: matplotlib is not installed (%s; Debian: python3-matplotlib)"
              % e)
        return False
    env = next((r for r in rows if r.get("kind") == "env"), {})
    fwd = [r for r in rows if r.get("kind") == "fwd"]
    if not fwd:
        print("# plot skipped: no forward-sweep records (kind 'fwd') in the input")
        return False
    panels = sorted({(r["dtype"], r["D"], bool(r["causal"])) for r in fwd})
    ncol = 2 if len(panels) > 1 else 1
    nrow = -(-len(panels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.0 * ncol, 4.0 * nrow), squeeze=False)
    for ax, (dt, D, causal) in zip(axes.flat, panels):
        sel = sorted((r for r in fwd if (r["dtype"], r["D"], bool(r["causal"])) ==
                      (dt, D, causal)), key=lambda r: r["S"])
        for key, label, style in PLOT_IMPLS:
            pts = [(r["S"], r[key + "_tflops"]) for r in sel if key + "_tflops" in r]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xticks([r["S"] for r in sel])
        ax.set_xticklabels([str(r["S"]) for r in sel])
        ax.set_xlabel("sequence length (B*S = %d)" % (sel[0]["B"] * sel[0]["S"]))
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.set_title("%s, head dim %d, %s" % (dt, D, "causal" if causal else "non-causal"))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    title = "polyattn vs PyTorch SDPA, forward"
    if env:
        title += " -- %s, torch %s" % (env.get("gpu", "?"), env.get("torch", "?"))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print("# plot: %s (%d panels)" % (path, len(panels)))
    return True


def main(argv=None):
    args = parse_args(argv)
    if args.env_kernel:
        os.environ["POLYATTN_CUDA_KERNEL"] = args.env_kernel
    if args.selftest_cpu:
        return selftest_cpu(args)
    if args.plot_from:
        rows = load_jsonl(args.plot_from)
        plot_results(rows, args.plot or os.path.splitext(args.plot_from)[0] + ".png")
        return 0
    try:
        import torch
    except ImportError as e:
        raise SystemExit("PyTorch is required for the GPU benchmark (%s); "
                         "--selftest-cpu runs without it" % e)
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device visible to PyTorch")
    t0 = time.time()
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    # A dedicated (non-default) stream, current for everything below: polyattn gets
    # its handle as native_stream (a NULL handle, i.e. the legacy default stream's 0,
    # would make polyattn create a stream of its own, outside torch's events).
    stream = torch.cuda.Stream(device=dev)
    with torch.cuda.stream(stream):
        bench = Bench(args)
        lib = polyattn.load_library(args.lib)  # the package's library, shared by --api func
        tp = TorchPolyattn(lib, torch, bench.dev)
        env = env_record(args, lib, torch, bench, tp)
        print("# " + ", ".join("%s=%s" % (k, env[k]) for k in
                               ("gpu", "capability", "torch", "torch_cuda", "cudnn", "triton",
                                "timer", "polyattn_version", "POLYATTN_CUDA_KERNEL")))
        print("# lib %s; cuda module %s" % (env["polyattn_lib"], env.get("cuda_module")))
        out = open(args.json, "w") if args.json else None
        if out:
            out.write(json.dumps(env) + "\n")
        try:
            if args.decode:
                rc = run_decode(args, lib, torch, bench, tp, out)
            elif args.backward:
                rc = run_backward(args, lib, torch, bench, tp, out)
            else:
                rc = run_sweep(args, lib, torch, bench, tp, out)
        finally:
            if out:
                out.close()
            bench.sync()
            if tp.ws_buf is not None:
                tp.ws_buf.free()
            tp.ctx.close()
    print("# total %.1f s%s" % (time.time() - t0, ("; JSON lines in " + args.json)
                                if args.json else ""))
    if args.plot and getattr(args, "rows", None):
        plot_results([env] + args.rows, args.plot)
    return rc


if __name__ == "__main__":
    sys.exit(main())
