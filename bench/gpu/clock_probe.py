#!/usr/bin/env python3
"""clock_probe.py -- the SM clock and board power beside each timing (issues 3 and 9).

Earlier sessions saw one kernel read up to 11% apart between a profiled launch and a
sustained run, and 4-5% between processes, and guessed a lower clock under sustained
load (bench/RESULTS.md, fifth and sixth sessions). This prints, for each contender on
the same tensors in one process, what the GPU did while it ran:

  sustained  calls back to back for --secs seconds (no cache clearing, like a training
             step's attention), events around the calls of the last half; NVML sampled
             every --period ms meanwhile: SM clock (median), board power (mean), the
             clock-event (throttle) reasons seen; FLOP per SM cycle = rate / (clock x 132);
  bench      compare_torch.py's timer (do_bench median with the L2 cleared), the
             clock median over its duration.

Contenders (--cases): polyattn's default and named variants (env settings per entry:
NAME@VAR=VALUE&VAR2=VALUE...), PyTorch SDPA flash and cuDNN, and the FP8 forward.
Each case's contenders run in order, the whole list --rounds times (ABCABC), so that a
slow drift shows as a difference between rounds rather than between contenders. A
POLYATTN_CUDA_HOPPER_VARIANT / POLYATTN_CUDA_FP8_VARIANT name that this checkout's
source does not list runs the default: such a contender is labelled "(=default)".
NVML's power reading is itself an average over about a second, so the power column
lags its window a little; the clock is an instantaneous sample.

  python3 bench/gpu/clock_probe.py --rounds 2
"""
import argparse
import contextlib
import ctypes
import os
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import compare_torch as ct  # noqa: E402
from polyattn import capi as pa  # noqa: E402
import polyattn  # noqa: E402

# (dtype, D, S, causal, contenders); a contender is "flash", "cudnn", or
# "pa[:label]@ENV=VAL&ENV2=VAL2" (polyattn with those settings; plain "pa" = default),
# or "fp8[:label]@..." / "fp8lse[:label]@..." (the FP8 forward, POLYATTN_CUDA_FP8=1, without /
# with an LSE output, on the inputs rounded to
# e4m3 with per-tensor descales; output bf16)


class _Cases(dict):
    """The cases by name; a name defined again keeps the last definition (as a dict
    would) and is remembered in `redefined`, so that a run of it says so (names were
    reused over the sessions; a script written before a name's second definition ran
    the first)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.redefined = set()

    def __setitem__(self, name, case):
        if name in self:
            self.redefined.add(name)
        super().__setitem__(name, case)


CASES = _Cases({
    "d128": ("bf16", 128, 8192, False,
             ["pa", "pa:k176@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176", "cudnn", "flash",
              "pa:ampere@POLYATTN_CUDA_KERNEL=ampere", "fp8"]),
    "d64": ("bf16", 64, 8192, False,
            ["pa", "cudnn", "flash", "pa:ampere@POLYATTN_CUDA_KERNEL=ampere"]),
    "d256": ("bf16", 256, 8192, False,
             ["pa", "cudnn", "pa:lo@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-lo"]),
    "d128s512": ("bf16", 128, 512, False, ["pa", "cudnn"]),
    # R2: O's rescale skipped where no row maximum moved (-lo), the wgmma descriptors by
    # addition in the grid kernel (-da), the 176-key tile with O through shared memory
    # (-k176-os), the FP8 row sums by the tensor cores (-r). -lo and -da were removed
    # after R2 (level; bench/gpu/clock_s19_r2.patch holds them): in later trees those
    # names run the default.
    "r2d128": ("bf16", 128, 8192, False,
               ["pa", "pa:os-lo@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os-lo",
                "pa:os-lo-da@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os-lo-da",
                "pa:k176-os@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176-os",
                "pa:k176-os-lo@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176-os-lo", "cudnn"]),
    "r2d256": ("bf16", 256, 8192, False,
               ["pa", "pa:os-lo@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os-lo", "cudnn"]),
    "r2d64": ("bf16", 64, 8192, False,
              ["pa", "pa:wg3-lo@POLYATTN_CUDA_HOPPER_VARIANT=serial-s3-rel-wg3-lo", "cudnn"]),
    "r2d64c": ("bf16", 64, 8192, True,
               ["pa", "pa:wg3-lo@POLYATTN_CUDA_HOPPER_VARIANT=serial-s3-rel-wg3-lo", "cudnn"]),
    "r2fp8": ("bf16", 128, 8192, False,
              ["fp8", "fp8:r@POLYATTN_CUDA_FP8_VARIANT=pingpong-gs-k192-t-r", "cudnn"]),
})
# R3: the new hd128 default (176-key tiles, O through shared memory, plain problems on
# the grid kernel) against the previous one, and the FP8 hd128 default without LSE (row
# sums by the tensor cores) against the previous one, at the other lengths
_OLD128 = "pa:old@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os"
_OLD8 = "fp8:old@POLYATTN_CUDA_FP8_VARIANT=pingpong-gs-k192-t"
for _n, _dt, _s, _c in (("r3s2k", "bf16", 2048, False), ("r3s4k", "bf16", 4096, False),
                        ("r3s16k", "bf16", 16384, False), ("r3c16k", "bf16", 16384, True),
                        ("r3f16", "fp16", 8192, False)):
    CASES[_n] = (_dt, 128, _s, _c, ["pa", _OLD128, "cudnn"])
for _n, _s, _c in (("r3fp8s2k", 2048, False), ("r3fp8s16k", 16384, False),
                   ("r3fp8c8k", 8192, True)):
    CASES[_n] = ("bf16", 128, _s, _c, ["fp8", _OLD8, "cudnn"])
# R4 (the committed build, no rebuild): the persistent kernel and the 176-key grid kernel
# at the lengths where the default choice switches between them (decision 89's Sk <= 1024,
# causal <= 8192 at hd128 and <= 2048 at hd64)
_P = "pa:p@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p-q2-os"
_K176 = "pa:k176@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176-os"
_GRID = "pa:grid@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os"
CASES["r4d128s2k"] = ("bf16", 128, 2048, False, ["pa", _P, _K176, "cudnn"])
CASES["r4d128s4k"] = ("bf16", 128, 4096, False, ["pa", _P, "cudnn"])
CASES["r4d128c8k"] = ("bf16", 128, 8192, True, ["pa", _K176, _GRID, "cudnn"])
CASES["r4d128c4k"] = ("bf16", 128, 4096, True, ["pa", _K176, "cudnn"])
CASES["r4d64s2k"] = ("bf16", 64, 2048, False, ["pa", _P, "cudnn"])
CASES["r4d64c8k"] = ("bf16", 64, 8192, True, ["pa", _P, "cudnn"])
CASES["r4d64c4k"] = ("bf16", 64, 4096, True, ["pa", _P, "cudnn"])
# the second final check: R4's bounds (hd128 up to 4096 keys and hd64 causal up to 4096
# on the persistent kernel) against the kernels those lengths ran before
_WG3 = "pa:wg3@POLYATTN_CUDA_HOPPER_VARIANT=serial-s3-rel-wg3"
CASES["g2048"] = ("bf16", 128, 2048, False, ["pa", _GRID, "cudnn"])
CASES["g4096"] = ("bf16", 128, 4096, False, ["pa", _K176, "cudnn"])
CASES["g64c4k"] = ("bf16", 64, 4096, True, ["pa", _WG3, "cudnn"])
# the final check: the committed defaults on the standard sweep's hd128 lengths (the
# previous hd128 default beside them), hd64 and the FP8 forward, beside SDPA
for _s in (2048, 4096, 8192, 16384):
    CASES["f%d" % _s] = ("bf16", 128, _s, False, ["pa", _OLD128, "cudnn", "flash"])
CASES["fc16k"] = ("bf16", 128, 16384, True, ["pa", _OLD128, "cudnn", "flash"])
CASES["fd64"] = ("bf16", 64, 8192, False, ["pa", "cudnn", "flash"])
CASES["ffp8"] = ("bf16", 128, 8192, False, ["fp8", _OLD8, "cudnn"])
# twentieth session: hd64's three-consumer grid kernel on 192-key tiles (FlashAttention-3's
# hd64 non-causal tile), three and two stages, against the default (128-key tiles)
_K192 = "pa:k192@POLYATTN_CUDA_HOPPER_VARIANT=serial-s3-rel-wg3-k192"  # R1 only (removed)
_K192S2 = "pa:k192s2@POLYATTN_CUDA_HOPPER_VARIANT=serial-rel-wg3-k192"
CASES["s20d64"] = ("bf16", 64, 8192, False, ["pa", _K192, _K192S2, "cudnn"])
for _n, _s, _c in (("s20d64s2k", 2048, False), ("s20d64s4k", 4096, False),
                   ("s20d64s16k", 16384, False), ("s20d64c8k", 8192, True),
                   ("s20d64c16k", 16384, True)):
    CASES[_n] = ("bf16", 64, _s, _c, ["pa", _K192, "cudnn"])
# R2: the new hd64 default from 8192 keys ("serial-rel-wg3-k192", both dtypes) against the
# previous one (three stages, 128 keys), and two stages on 128-key tiles ("serial-rel-wg3")
_OLD64 = "pa:old@POLYATTN_CUDA_HOPPER_VARIANT=serial-s3-rel-wg3"
_WG3S2 = "pa:wg3s2@POLYATTN_CUDA_HOPPER_VARIANT=serial-rel-wg3"
_K192S2F = "pa:k192s2@POLYATTN_CUDA_HOPPER_VARIANT=serial-rel-wg3-k192"
CASES["t8k"] = ("bf16", 64, 8192, False, ["pa", _OLD64, _WG3S2, "cudnn"])
CASES["t16k"] = ("bf16", 64, 16384, False, ["pa", _OLD64, "cudnn"])
CASES["tc8k"] = ("bf16", 64, 8192, True, ["pa", _OLD64, _WG3S2, "cudnn"])
CASES["tc16k"] = ("bf16", 64, 16384, True, ["pa", _OLD64, "cudnn"])
CASES["tf16"] = ("fp16", 64, 8192, False, ["pa", _OLD64, "cudnn"])
CASES["t4k"] = ("bf16", 64, 4096, False, ["pa", _K192S2F, _WG3S2, "cudnn"])
CASES["t2k"] = ("bf16", 64, 2048, False, ["pa", _WG3S2, "cudnn"])
CASES["tc4k"] = ("bf16", 64, 4096, True, ["pa", _K192S2F, _OLD64, "cudnn"])
# R3: hd64 causal from 2048 keys on the 192-key grid kernel (the new default); the
# persistent walk on the three-consumer kernel (serial, two Q buffers; with 128- and
# 192-key tiles) against the defaults at the short lengths (those two variants were
# removed after R3: bench/gpu/k192_s20_r3.patch; in later trees they run the default)
_WG3P = "pa:wg3p@POLYATTN_CUDA_HOPPER_VARIANT=serial-rel-wg3-p-q2"
_WG3PK = "pa:wg3pk192@POLYATTN_CUDA_HOPPER_VARIANT=serial-rel-wg3-k192-p-q2"
CASES["u1k"] = ("bf16", 64, 1024, False, ["pa", _WG3P, "cudnn"])
CASES["u2k"] = ("bf16", 64, 2048, False, ["pa", _WG3P, "cudnn"])
CASES["u4k"] = ("bf16", 64, 4096, False, ["pa", _WG3P, "cudnn"])
CASES["uc2k"] = ("bf16", 64, 2048, True, ["pa", _K192S2F, _WG3P, "cudnn"])
CASES["uc4k"] = ("bf16", 64, 4096, True, ["pa", _WG3PK, _P, "cudnn"])
CASES["uc8k"] = ("bf16", 64, 8192, True, ["pa", _WG3PK, "cudnn"])
# the final check: the two-consumer grid kernels (128-row tiles, pingpong) at hd64's
# short lengths, where the three-consumer kernel's 192-row tiles leave the last query
# tile a third empty (S2048) and the persistent kernels lost (R3)
_PP = "pa:pp@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel"
_PPOS = "pa:ppos@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os"
CASES["v2k"] = ("bf16", 64, 2048, False, ["pa", _PP, _PPOS, "cudnn"])
CASES["v4k"] = ("bf16", 64, 4096, False, ["pa", _PP, _PPOS, "cudnn"])

# twenty-first session: the persistent kernel with each tile's last P.V issued in the next
# tile's first turn ("-x", PA_HV_CARRY) against the default persistent kernel, at the
# lengths where the default runs it (hd128 up to 4096 keys, causal up to 8192; hd64 up to
# 1024, causal plain up to 2048); "-x" was removed after R1 (decision 113,
# bench/gpu/carry_s21_r1.patch): in later trees its name runs the default
_X = "pa:x@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p-q2-os-x"
for _n, _dt, _d, _s, _c in (("x512", "bf16", 128, 512, False), ("xc512", "bf16", 128, 512, True),
                            ("x2k", "bf16", 128, 2048, False), ("x4k", "bf16", 128, 4096, False),
                            ("xc4k", "bf16", 128, 4096, True), ("xc8k", "bf16", 128, 8192, True),
                            ("x64s512", "bf16", 64, 512, False), ("x64s1k", "bf16", 64, 1024, False),
                            ("x64c2k", "bf16", 64, 2048, True), ("xf512", "fp16", 128, 512, False)):
    CASES[_n] = (_dt, _d, _s, _c, ["pa", _X, "cudnn"])

# R2: the persistent kernel on a three-stage ring (cuDNN's budget at these lengths, as its
# shared memory size suggests: ncu):
# with two Q buffers and O through shared memory (hd64 only) and with one Q buffer (both
# removed after R2, bench/gpu/s3p_s21_r2.patch: in later trees their names run the default)
_S3Q2 = "pa:s3q2@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-s3-rel-p-q2-os"
_S3P = "pa:s3p@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-s3-rel-p"
for _n, _d, _s, _c in (("y64s512", 64, 512, False), ("y64s1k", 64, 1024, False),
                       ("y64c2k", 64, 2048, True), ("y64s2k", 64, 2048, False)):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", _S3Q2, _S3P, "cudnn"])
for _n, _s in (("y512", 512), ("y2k", 2048)):
    CASES[_n] = ("bf16", 128, _s, False, ["pa", _S3P, "cudnn"])

# twenty-fifth session, R1: S = Q.K^T with Q's fragments in registers (wgmma RS, "-qrs",
# PA_HV_QRS), on the persistent kernel where the defaults run it (hd128 up to 4096 keys,
# causal 8192; hd64 up to 1024, causal plain 2048) and on the 128-key grid kernel at hd128
# S8192 / causal S16384 against the same kernel without it and the 176-key default;
# both removed after R1 (bench/gpu/qrs_s25_r1.patch): in later trees their names run the
# default
_QP = "pa:qrs@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p-q2-os-qrs"
_QG = "pa:os-qrs@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os-qrs"
for _n, _d, _s, _c in (("q512", 128, 512, False), ("q2k", 128, 2048, False),
                       ("qc4k", 128, 4096, True), ("q64s512", 64, 512, False),
                       ("q64s1k", 64, 1024, False), ("q64c2k", 64, 2048, True)):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", _QP, "cudnn"])
CASES["q8k"] = ("bf16", 128, 8192, False, ["pa", _OLD128, _QG, "cudnn"])
CASES["qc16k"] = ("bf16", 128, 16384, True, ["pa", _OLD128, _QG, "cudnn"])

# R3: three consumer warpgroups taking pingpong turns in a ring on 64-key tiles at hd64
# ("-wg3-k64": S, P and O in 80 of a consumer's 160 registers; the 128-key form spills),
# persistent at the lengths the two-consumer persistent kernel runs, on the grid above;
# removed after R3 (bench/gpu/wg3pp_s25_r3.patch): in later trees their names run the
# default
_W3P = "pa:wg3k64p@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-wg3-k64-p-q2-os"
_W3G = "pa:wg3k64@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-wg3-k64"
_W3GS3 = "pa:wg3k64s3@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-s3-rel-wg3-k64"
for _n, _s, _c in (("w512", 512, False), ("w1k", 1024, False), ("wc2k", 2048, True)):
    CASES[_n] = ("bf16", 64, _s, _c, ["pa", _W3P, "cudnn"])
for _n, _s in (("w2k", 2048), ("w4k", 4096)):
    CASES[_n] = ("bf16", 64, _s, False, ["pa", _W3G, _W3GS3, "cudnn"])
for _n, _s, _c in (("w8k", 8192, False), ("wc8k", 8192, True)):
    CASES[_n] = ("bf16", 64, _s, _c, ["pa", _W3G, "cudnn"])

# twenty-sixth session, R1: a share of hd64's exponentials on the FMA pipe (pa_exp2_fma,
# FlashAttention-4's split; "-x4": the last pair of every 4, "-x8": of every 8), on each
# kernel where hd64's default runs: persistent (up to 1024 keys, causal plain 2048), the
# three-consumer grid kernel on 128-key tiles (2048-4096), on 192-key tiles (from 8192,
# causal above 2048); removed after the session (bench/gpu/fma_s26_r1.patch): in later
# trees their names run the default
_XV = {"p": "pingpong-rel-p-q2-os", "g": "serial-s3-rel-wg3", "k": "serial-rel-wg3-k192"}
for _n, _s, _c, _k in (("e512", 512, False, "p"), ("e1k", 1024, False, "p"),
                       ("ec2k", 2048, True, "p"), ("e2k", 2048, False, "g"),
                       ("e4k", 4096, False, "g"), ("e8k", 8192, False, "k"),
                       ("ec8k", 8192, True, "k")):
    CASES[_n] = ("bf16", 64, _s, _c, ["pa"] + ["pa:%s@POLYATTN_CUDA_HOPPER_VARIANT=%s-%s" %
                                              (x, _XV[_k], x) for x in ("x4", "x8")] + ["cudnn"])

# R2: does the halved L2 -> SM traffic of the cluster multicast ("-mc": two blocks share
# each K/V load) buy clock at the power cap? Against the same kernels without it. (m64 is
# void: S8192 has 43 query tiles of 192 rows per head, an odd count, for which
# pa_hopper_effective drops the multicast; an even count, e.g. S6144, would test it.)
CASES["m128"] = ("bf16", 128, 8192, False, ["pa", "pa:s3@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-s3-rel",
                                            "pa:s3mc@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-s3-rel-mc",
                                            "cudnn"])
CASES["m64"] = ("bf16", 64, 8192, False, ["pa", _WG3, "pa:wg3mc@POLYATTN_CUDA_HOPPER_VARIANT=serial-s3-rel-wg3-mc",
                                          "cudnn"])

# R3: a query tile's first S and last P.V without a pingpong turn ("-fb", PA_HV_FREEB),
# on the persistent kernel where the defaults run it and on the hd128 grid kernels; removed
# after R3 (bench/gpu/fb_s26_r3.patch): in later trees their names run the default
_FBP = "pa:fb@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p-q2-os-fb"
for _n, _d, _s, _c in (("f512", 128, 512, False), ("f2k", 128, 2048, False),
                       ("fc4k", 128, 4096, True), ("f64s512", 64, 512, False),
                       ("f64s1k", 64, 1024, False), ("f64c2k", 64, 2048, True)):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", _FBP, "cudnn"])
CASES["f8k"] = ("bf16", 128, 8192, False,
                ["pa", "pa:k176fb@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176-os-fb", "cudnn"])
CASES["fc16k"] = ("bf16", 128, 16384, True,
                  ["pa", "pa:k176fb@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176-os-fb", "cudnn"])


# twenty-seventh session, R1 (issue 3): the Ampere kernel's rows on one block of 8 warps
# ("w8", "w8j": 256 query rows share each K/V tile) against its default rows and
# FlashAttention-2, sustained (removed after R1, bench/gpu/ampere_s27_w8.patch: in later
# trees their names run the default); and (issue 9) the hd64 multicast at an even query-tile
# count (S6144: 32 tiles of 192 rows per head), which R2 of the twenty-sixth could not test
_AMP = "pa:ampere@POLYATTN_CUDA_KERNEL=ampere"
for _n, _d, _s, _c in (("w128", 128, 8192, False), ("w64", 64, 8192, False),
                       ("wc128", 128, 8192, True), ("w128s2k", 128, 2048, False)):
    CASES[_n] = ("bf16", _d, _s, _c, [_AMP] +
                 ["pa:%s@POLYATTN_CUDA_KERNEL=ampere&POLYATTN_CUDA_AMPERE_VARIANT=%s" % (x, x)
                  for x in ("w8", "w8j")] + ["flash"])
# (R1's m64e at S6144 was skipped: 16384 tokens are not whole batches of 6144; R2 runs
# S4096 and S16384, 22 and 86 tiles of 192 rows per head)
for _n, _s in (("m64e", 4096), ("m64f", 16384)):
    CASES[_n] = ("bf16", 64, _s, False,
                 ["pa", _WG3, "pa:wg3mc@POLYATTN_CUDA_HOPPER_VARIANT=serial-s3-rel-wg3-mc", "cudnn"])

# R2 (issue 3): hd64 on 64-key tiles at three blocks per SM ("m2k64b3", "m2k64b3j": three
# warps per scheduler, 168 registers) against the default row (m2k128t) and
# FlashAttention-2; removed after R2 (bench/gpu/ampere_s27_b3.patch): in later trees
# their names run the default
for _n, _s, _c in (("b64", 8192, False), ("bc64", 8192, True), ("b64s2k", 2048, False)):
    CASES[_n] = ("bf16", 64, _s, _c, [_AMP] +
                 ["pa:%s@POLYATTN_CUDA_KERNEL=ampere&POLYATTN_CUDA_AMPERE_VARIANT=m2k64%s" % (x, x)
                  for x in ("b3", "b3j")] + ["flash"])


# R3 (issue 3): one barrier per key tile (K and V waited together) on the default rows'
# shapes: "m2k128tj" (hd64; its default since, decision 118: in later trees the first
# contender runs it too) and "m2k64j" (hd128; a tuning variant, 40 bytes of spills)
for _n, _d, _c, _v in (("j64", 64, False, "m2k128tj"), ("jc64", 64, True, "m2k128tj"),
                       ("j128", 128, False, "m2k64j"), ("jc128", 128, True, "m2k64j")):
    CASES[_n] = ("bf16", _d, 8192, _c,
                 [_AMP, "pa:j@POLYATTN_CUDA_KERNEL=ampere&POLYATTN_CUDA_AMPERE_VARIANT=" + _v, "flash"])


# twenty-eighth session (issue 9): the hd64 three-consumer grid kernel's partial query
# tiles (S2048: 128 of 192 rows in each head's last tile, S4096: 64, S8192: 128): their
# idle consumer warpgroups compute nothing ("idle": POLYATTN_CUDA_HOPPER_PARTIAL_LAST=0)
# and the partial tiles are the grid's last blocks (the default since); "base" as before
_IDLE0 = "pa:base@POLYATTN_CUDA_HOPPER_IDLE=0"
_IDLE1 = "pa:idle@POLYATTN_CUDA_HOPPER_PARTIAL_LAST=0"
for _n, _s in (("i2k", 2048), ("i4k", 4096), ("i8k", 8192)):
    CASES[_n] = ("bf16", 64, _s, False, [_IDLE0, _IDLE1, "pa", "cudnn"])
# R2: hd64 on a persistent three-consumer kernel (serial schedule, three stages, two Q
# buffers: "wg3p", a tuning variant) against the defaults (the persistent two-consumer
# pingpong kernel up to 1024 keys and causal 2048, the three-consumer grid kernel at
# 2048-4096); and the FP8 kernel's idle consumers at hd64 (three consumers, 192-row tiles)
_WG3P = "pa:wg3p@POLYATTN_CUDA_HOPPER_VARIANT=serial-s3-rel-wg3-p-q2"
for _n, _s, _c in (("p512", 512, False), ("p1k", 1024, False), ("p2k", 2048, False),
                   ("p4k", 4096, False), ("pc2k", 2048, True)):
    CASES[_n] = ("bf16", 64, _s, _c, ["pa", _WG3P, "cudnn"])
for _n, _s in (("fq2k", 2048), ("fq4k", 4096)):  # R2 ran them as q2k/q4k (overriding hd128 q2k above)
    CASES[_n] = ("bf16", 64, _s, False, ["fp8:idle0@POLYATTN_CUDA_HOPPER_IDLE=0", "fp8"])
# the twenty-eighth session's final check: the committed kernels with and without the
# idle consumers' skip (no partial-tiles-last order; the R2 variant above was removed after
# R2, bench/gpu/wg3p_s28_r2.patch: in later trees its name runs the default)
for _n, _s, _c in (("z2k", 2048, False), ("z4k", 4096, False), ("zc4k", 4096, True)):
    CASES[_n] = ("bf16", 64, _s, _c, [_IDLE0, "pa", "cudnn"])
# R3: the partial last tiles of the grid's last n heads at its end (POLYATTN_CUDA_HOPPER_LAG=n,
# a tuning setting: R1's order for every head lost to L2 misses; n heads' K/V stay in L2);
# not kept (bench/gpu/lag_s28_r3.patch): in later trees every contender runs the default
for _n, _s in (("l2k", 2048), ("l4k", 4096)):
    CASES[_n] = ("bf16", 64, _s, False,
                 ["pa"] + ["pa:lag%d@POLYATTN_CUDA_HOPPER_LAG=%d" % (x, x) for x in (16, 32, 64)])
# R4: the grid kernel's last partial round split along the keys (POLYATTN_CUDA_HOPPER_SPLIT_TAIL=k:
# the last round's tiles in k pieces each, then a merge launch), hd128 plain problems on the
# 176-key grid kernel (2048 tiles: 15 rounds and 68 tiles on 132 SMs); not kept
# (bench/gpu/tail_s28_r4.patch): in later trees every contender runs the default
for _n, _s in (("t8k", 8192), ("t16k", 16384)):
    CASES[_n] = ("bf16", 128, _s, False,
                 ["pa"] + ["pa:split%d@POLYATTN_CUDA_HOPPER_SPLIT_TAIL=%d" % (x, x) for x in (2, 3, 5)] +
                 ["cudnn"])

# twenty-ninth session (issue 9's short sequences): one consumer warpgroup per block and
# two blocks per SM ("-wg1", tuning variants; hd128 on 64-key tiles), so that one block's
# query-tile boundary runs beside the other block's main loop: persistent (two Q buffers,
# O through shared memory) and grid forms, against the defaults (the persistent pingpong
# kernel to 1024 keys at hd64 / 4096 at hd128, the three-consumer grid kernel at hd64 S2048);
# not kept (bench/gpu/wg1_s29_r1.patch): in later trees their names run the default
_W1P = "pa:w1p@POLYATTN_CUDA_HOPPER_VARIANT=pipe-rel-p-q2-os-wg1"
_W1G = "pa:w1g@POLYATTN_CUDA_HOPPER_VARIANT=pipe-rel-os-wg1"
_W1S = "pa:w1s@POLYATTN_CUDA_HOPPER_VARIANT=serial-rel-os-wg1"
for _n, _d, _s, _c in (("o64s512", 64, 512, False), ("o64s1k", 64, 1024, False),
                       ("o64s2k", 64, 2048, False), ("o128s512", 128, 512, False),
                       ("o128s1k", 128, 1024, False), ("o128s2k", 128, 2048, False),
                       ("o64c2k", 64, 2048, True), ("o128c1k", 128, 1024, True)):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", _W1P, _W1G, _W1S, "cudnn"])

# R2: the persistent kernel without pingpong turns ("pp": pipe-rel-p-q2-os) and with
# consumer 1 started a.lag_cycles behind consumer 0 ("lag": pipe-rel-p-q2-os-lag; three
# stages at hd64), so that the consumers' query-tile boundaries fall apart; not kept
# (bench/gpu/lag_s29_r2.patch): in later trees their names run the default
_V = "POLYATTN_CUDA_HOPPER_VARIANT"
_PIPEP = "pa:pp@%s=pipe-rel-p-q2-os" % _V
_LAGS = ["pa:lag%d@%s=pipe-rel-p-q2-os-lag&POLYATTN_CUDA_HOPPER_LAG_CYCLES=%d" % (x, _V, x)
         for x in (0, 3000, 6000)]
for _n, _d, _s, _c in (("k64s512", 64, 512, False), ("k64s1k", 64, 1024, False),
                       ("k64c2k", 64, 2048, True), ("k128s512", 128, 512, False),
                       ("k128s1k", 128, 1024, False), ("k128s2k", 128, 2048, False)):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", _PIPEP] + _LAGS + ["cudnn"])

# R3: the persistent pingpong kernel with consumer 1 a key tile behind consumer 0 (an
# empty first turn; "lagpp": pingpong-rel-p-q2-os-lag, four stages, hd64 only); not kept
# there (bench/gpu/lagpp_s29_r3.patch: it deadlocks on tiles without keys); with the fix
# (lagpp_s29_r3b.patch) hd64's persistent default since the thirtieth session (decision
# 121), so in later trees "pa" and "lagpp" run the same kernel at hd64
_LAGPP = "pa:lagpp@%s=pingpong-rel-p-q2-os-lag" % _V
for _n, _s, _c in (("n64s512", 512, False), ("n64s1k", 1024, False), ("n64c2k", 2048, True)):
    CASES[_n] = ("bf16", 64, _s, _c, ["pa", _LAGPP, "cudnn"])
# thirtieth session: R3's fix (bench/gpu/lagpp_s29_r3b.patch) on causal 1024 and fp16 S512
# too (fp16 "lagpp" ran the default: the variant was bf16-only there)
CASES["n64c1k"] = ("bf16", 64, 1024, True, ["pa", _LAGPP, "cudnn"])
CASES["n64f512"] = ("fp16", 64, 512, False, ["pa", _LAGPP, "cudnn"])
# thirtieth session, R1: the lag (with the four-stage ring) as hd64's persistent default
# ("pa"), against the kernel without either ("nolag": pingpong-rel-p-q2-os, compiled at
# hd64 in tuning builds only), the four-stage ring alone ("s4") and the lag on two stages
# ("lag2"; both bf16-only tuning variants: at fp16 they run the default)
_NOLAG = "pa:nolag@%s=pingpong-rel-p-q2-os" % _V
_S4 = "pa:s4@%s=pingpong-rel-p-q2-os-s4" % _V
_LAG2 = "pa:lag2@%s=pingpong-rel-p-q2-os-lag2" % _V
for _n, _dt, _s, _c in (("lg512", "bf16", 512, False), ("lg1k", "bf16", 1024, False),
                        ("lgc1k", "bf16", 1024, True), ("lgc2k", "bf16", 2048, True),
                        ("lgs256", "bf16", 256, False)):
    CASES[_n] = (_dt, 64, _s, _c, ["pa", _NOLAG, _S4, _LAG2, "cudnn"])
for _n, _s, _c in (("lgf512", 512, False), ("lgf1k", 1024, False), ("lgfc2k", 2048, True)):
    CASES[_n] = ("fp16", 64, _s, _c, ["pa", _NOLAG, "cudnn"])
# the final check: the lag kernel past the persistent bounds (hd64 S2048 and causal 4096,
# where the grid kernels run by default; the variant is "full", so any build has it)
_LAGF = "pa:lag@%s=pingpong-rel-p-q2-os-lag" % _V
CASES["lgs2k"] = ("bf16", 64, 2048, False, ["pa", _LAGF, "cudnn"])
CASES["lgc4k"] = ("bf16", 64, 4096, True, ["pa", _LAGF, "cudnn"])
# R2: the lag at hd128, where four stages do not fit beside two Q buffers: a third V stage
# ("lagv3": K's ring two, V's three, the rings apart; 227 KB exactly), a third K stage
# ("lagk3"), the third V stage alone ("v3") and the lag on two stages ("lag2"); at hd64 the
# same beside three stages ("lag3") against the default's four; not kept
# (bench/gpu/kv_s30_r2.patch, applies to 461f41a): in later trees "lag2" runs the default
# at hd128 and the other names run the default
_LAGV3 = "pa:lagv3@%s=pingpong-rel-p-q2-os-lag-v3" % _V
_LAGK3 = "pa:lagk3@%s=pingpong-rel-p-q2-os-lag-k3" % _V
_V3 = "pa:v3@%s=pingpong-rel-p-q2-os-v3" % _V
_LAG3 = "pa:lag3@%s=pingpong-rel-p-q2-os-lag3" % _V
for _n, _s, _c in (("kv512", 512, False), ("kv1k", 1024, False), ("kv2k", 2048, False),
                   ("kvc1k", 1024, True), ("kvc2k", 2048, True)):
    CASES[_n] = ("bf16", 128, _s, _c, ["pa", _LAGV3, _LAGK3, _V3, _LAG2, "cudnn"])
for _n, _s, _c in (("kw512", 512, False), ("kw1k", 1024, False)):
    CASES[_n] = ("bf16", 64, _s, _c, ["pa", _LAG3, _LAGK3, _LAGV3])

# thirty-first session (issue 9): the kept maximum (FlashAttention-4's conditional
# rescaling: a row's reference m moves only when a score exceeds it by more than 8 in
# log2 units, so most tiles skip the row maxima's shuffles and O's rescale; "km") and the
# same with the exponentials against the kept m computed beside the vote ("sp", hd64's
# persistent kernel only: it keeps S until the vote), bf16 tuning variants, against the
# default on each kernel where it runs: the persistent kernel (hd64 with the lag, hd128),
# hd128's 176-key grid kernel, hd64's three-consumer grid kernels (128 and 192 keys). "-sp"
# was removed after R1 (bench/gpu/keep_s31_r1.patch, which applies to 8e2177d): in later
# trees its names run the default; "-km" is R1's form in later trees too
_KM = {"l": "pingpong-rel-p-q2-os-lag", "p": "pingpong-rel-p-q2-os", "k": "pingpong-rel-k176-os",
       "g": "serial-s3-rel-wg3", "w": "serial-rel-wg3-k192"}
for _n, _d, _s, _c, _k in (("kp64s256", 64, 256, False, "l"), ("kp64s512", 64, 512, False, "l"),
                           ("kp64s1k", 64, 1024, False, "l"), ("kp64c1k", 64, 1024, True, "l"),
                           ("kp64c2k", 64, 2048, True, "l")):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "pa:km@%s=%s-km" % (_V, _KM[_k]),
                                      "pa:sp@%s=%s-sp" % (_V, _KM[_k]), "cudnn"])
for _n, _d, _s, _c, _k in (("kp128s512", 128, 512, False, "p"), ("kp128s1k", 128, 1024, False, "p"),
                           ("kp128s2k", 128, 2048, False, "p"), ("kp128c2k", 128, 2048, True, "p"),
                           ("kp128s8k", 128, 8192, False, "k"), ("kp128s16k", 128, 16384, False, "k"),
                           ("kp64s2k", 64, 2048, False, "g"), ("kp64s4k", 64, 4096, False, "g"),
                           ("kp64s8k", 64, 8192, False, "w"), ("kp64c8k", 64, 8192, True, "w")):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "pa:km@%s=%s-km" % (_V, _KM[_k]), "cudnn"])

# R2 (written in the thirty-first session, not run there: no device was lent after R1):
# "-km1", the kept maximum without the vote on a query tile's first key tile (every m is
# -inf there), beside "-km" and the default on each kernel
for _n, _d, _s, _c, _k in (("kq128s8k", 128, 8192, False, "k"), ("kq128s16k", 128, 16384, False, "k"),
                           ("kq128c16k", 128, 16384, True, "k"), ("kq64s4k", 64, 4096, False, "g"),
                           ("kq64s8k", 64, 8192, False, "w"),
                           ("kq64c8k", 64, 8192, True, "w"), ("kq64s256", 64, 256, False, "l"),
                           ("kq64s512", 64, 512, False, "l"), ("kq64s1k", 64, 1024, False, "l"),
                           ("kq64c2k", 64, 2048, True, "l"), ("kq128s512", 128, 512, False, "p"),
                           ("kq128s1k", 128, 1024, False, "p"), ("kq128s2k", 128, 2048, False, "p")):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "pa:km@%s=%s-km" % (_V, _KM[_k]),
                                      "pa:km1@%s=%s-km1" % (_V, _KM[_k]), "cudnn"])

# thirty-second session (issues 3 and 9), written without a device: the kept maximum on
# the Ampere rows the defaults ran then ("m2k64-km" at hd128, "m2k128tj-km" at hd64) beside
# the default row and SDPA flash (run in the thirty-third session; since decision 124
# "m2k64-km" is hd128's default, so ak128* time the default against itself: name
# POLYATTN_CUDA_AMPERE_VARIANT=m2k64 for the old row, a tuning row); and on the FP8 kernels the defaults run without LSE (the
# ROWSUM forms: "pingpong-gs-k192-t-r-km" at hd128, "pipe-gs-t-wg3-r-km" at hd64) beside
# the default and cuDNN bf16
_AKM = {64: "m2k128tj-km", 128: "m2k64-km"}
for _n, _d, _s, _c in (("ak64s2k", 64, 2048, False), ("ak64s8k", 64, 8192, False),
                       ("ak64c8k", 64, 8192, True), ("ak128s2k", 128, 2048, False),
                       ("ak128s8k", 128, 8192, False), ("ak128c8k", 128, 8192, True),
                       ("ak128s16k", 128, 16384, False)):
    CASES[_n] = ("bf16", _d, _s, _c,
                 [_AMP, "pa:km@POLYATTN_CUDA_KERNEL=ampere&POLYATTN_CUDA_AMPERE_VARIANT=" + _AKM[_d],
                  "flash"])
# hd256's default with the kept maximum ("pingpong-rel-os-km"; hd256's default since decision
# 124, so kd256* and the grid kp* cases time the default against itself: the names without
# "-km" are the old kernels, tuning variants)
for _n, _s, _c in (("kd256s8k", 8192, False), ("kd256c8k", 8192, True), ("kd256s2k", 2048, False)):
    CASES[_n] = ("bf16", 256, _s, _c, ["pa", "pa:km@%s=pingpong-rel-os-km" % _V, "cudnn"])
_FKM = {64: "pipe-gs-t-wg3-r-km", 128: "pingpong-gs-k192-t-r-km"}
for _n, _d, _s, _c in (("fk128s2k", 128, 2048, False), ("fk128s8k", 128, 8192, False),
                       ("fk128c8k", 128, 8192, True), ("fk128s16k", 128, 16384, False),
                       ("fk64s8k", 64, 8192, False), ("fk64c8k", 64, 8192, True)):
    CASES[_n] = ("bf16", _d, _s, _c,
                 ["fp8", "fp8:km@POLYATTN_CUDA_FP8_VARIANT=" + _FKM[_d], "cudnn"])

# thirty-fourth session (issue 3), written without a device: the Ampere rows with the row
# sums l by the tensor cores ("-rs", decision 125; run only without LSE, as here) beside
# the default row they were made from and SDPA flash
_ARS = {64: "m2k128tj-rs", 128: "m2k64-km-rs"}
# the Ampere rows' shapes (name suffix, dtype, head dim, S, causal); also the xq* cases below
_ASHAPES = tuple(("%d%s" % (_d, _x), _dt, _d, _s, _c) for _d in (64, 128)
                 for _x, _dt, _s, _c in (("s2k", "bf16", 2048, False), ("s8k", "bf16", 8192, False),
                                         ("c8k", "bf16", 8192, True),
                                         ("s16k", "bf16", 16384, False),
                                         ("h8k", "fp16", 8192, False)))
for _n, _dt, _d, _s, _c in (("rs" + _x, _dt, _d, _s, _c) for _x, _dt, _d, _s, _c in _ASHAPES):
    CASES[_n] = (_dt, _d, _s, _c,
                 [_AMP, "pa:rs@POLYATTN_CUDA_KERNEL=ampere&POLYATTN_CUDA_AMPERE_VARIANT=" + _ARS[_d],
                  "flash"])

# thirty-fifth session (issue 3): the Ampere kernel's default rows beside SDPA flash only,
# for a comparison across processes of two builds of the library (bench/gpu/ldsm_s35.sh:
# the lane's ldmatrix offsets as one register, pa_ldsm_lane ONE, against the committed
# build), each process's ratio to flash taken as the measure
for _n, _dt, _d, _s, _c in (("xa64s2k", "bf16", 64, 2048, False),
                            ("xa64s8k", "bf16", 64, 8192, False),
                            ("xa64c8k", "bf16", 64, 8192, True),
                            ("xa64s16k", "bf16", 64, 16384, False),
                            ("xa128s8k", "bf16", 128, 8192, False),
                            ("xa128c8k", "bf16", 128, 8192, True)):
    CASES[_n] = (_dt, _d, _s, _c, [_AMP, "flash"])


# thirty-sixth session (issue 9): "-km1" on the persistent kernels where kq* did not reach
# (hd128 up to its bounds of 4096 keys, causal 8192; hd64 causal 1024), beside the default
# and cuDNN
for _n, _d, _s, _c, _k in (("kr128s4k", 128, 4096, False, "p"), ("kr128c4k", 128, 4096, True, "p"),
                           ("kr128c8k", 128, 8192, True, "p"), ("kr64c1k", 64, 1024, True, "l")):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "pa:km1@%s=%s-km1" % (_V, _KM[_k]), "cudnn"])
# "-km1" on the grid kernels (bench/gpu/km1c_s36.sh): hd64's three-consumer kernel at S2048
CASES["kq64s2k"] = ("bf16", 64, 2048, False, ["pa", "pa:km@%s=%s-km" % (_V, _KM["g"]),
                                              "pa:km1@%s=%s-km1" % (_V, _KM["g"]), "cudnn"])
# and the persistent range's default alone beside cuDNN, three grid cases after them
# (bench/gpu/final_s36.sh)
for _n, _d, _s, _c in (("ks64s256", 64, 256, False), ("ks64s512", 64, 512, False),
                       ("ks64s1k", 64, 1024, False), ("ks64c1k", 64, 1024, True),
                       ("ks64c2k", 64, 2048, True), ("ks128s512", 128, 512, False),
                       ("ks128s1k", 128, 1024, False), ("ks128s2k", 128, 2048, False),
                       ("ks128s4k", 128, 4096, False), ("ks128c4k", 128, 4096, True),
                       ("ks64s8k", 64, 8192, False), ("ks128s8k", 128, 8192, False),
                       ("ks128c16k", 128, 16384, True)):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "cudnn"])
# the persistent kernels' bounds (PA_HOPPER_PERSIST_SK_*, decisions 89, 110, 111) with
# "-km1" on them: each side of a bound, the default beside the other kernel and cuDNN
_PK = {64: _KM["l"] + "-km1", 128: _KM["p"] + "-km1"}
_GK = {64: _KM["g"] + "-km", 128: _KM["k"] + "-km"}
for _n, _d, _s, _c, _o in (("bd64s2k", 64, 2048, False, "p"), ("bd64s4k", 64, 4096, False, "p"),
                           ("bd64c4k", 64, 4096, True, "p"), ("bd128s4k", 128, 4096, False, "g"),
                           ("bd128s8k", 128, 8192, False, "p"), ("bd128c8k", 128, 8192, True, "g"),
                           ("bd128c16k", 128, 16384, True, "p")):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "pa:%s@%s=%s" % (_o, _V, (_PK if _o == "p" else _GK)[_d]),
                                      "cudnn"])

# thirty-seventh session (issue 9; bench/gpu/s37.sh, written for a later session: no device
# was lent in this one): hd256's default ("pingpong-rel-os-km") beside its "-km1" form and
# its plain-only score pass ("-km-pn"; both bf16 tuning variants) and cuDNN; hd128 S4096,
# the persistent bound, with the grid kernel in its "-km1" form (the grid default since
# decision 127) beside the persistent default and cuDNN; hd64's 192-key kernel (the
# default from 8192 keys, "-km1") beside its peeled form ("-km1-pl", PA_HV_PEEL), its "-km"
# form and cuDNN
for _n, _s, _c in (("ke256s8k", 8192, False), ("ke256c8k", 8192, True),
                   ("ke256s16k", 16384, False)):
    CASES[_n] = ("bf16", 256, _s, _c, ["pa", "pa:km1@%s=pingpong-rel-os-km1" % _V,
                                       "pa:pn@%s=pingpong-rel-os-km-pn" % _V, "cudnn"])
CASES["be128s4k"] = ("bf16", 128, 4096, False, ["pa", "pa:g@%s=%s-km1" % (_V, _KM["k"]), "cudnn"])
# and the persistent defaults beside their plain-only score pass ("-pn", PA_HV_PLAIN) at the
# short lengths where issue 9's "S = 512: >= cuDNN" is open
for _n, _d, _s, _c, _k in (("pn128s512", 128, 512, False, "p"), ("pn128s2k", 128, 2048, False, "p"),
                           ("pn64s512", 64, 512, False, "l"), ("pn64s1k", 64, 1024, False, "l")):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "pa:pn@%s=%s-km1-pn" % (_V, _KM[_k]), "cudnn"])
for _n, _s, _c in (("pl64s8k", 8192, False), ("pl64c8k", 8192, True), ("pl64s16k", 16384, False)):
    CASES[_n] = ("bf16", 64, _s, _c, ["pa", "pa:pl@%s=%s-km1-pl" % (_V, _KM["w"]),
                                      "pa:km@%s=%s-km" % (_V, _KM["w"]), "cudnn"])

# thirty-eighth session (bench/gpu/s38.sh, a tuning build with bench/gpu/adopt_s38.patch
# applied, so "pa" is the adopted default): each adopted kernel beside the default it
# replaces ("old", by name) and cuDNN; hd256 with its "-km1" form too. (bench/gpu/
# s39.sh runs the persistent ones on the build CI ships after decision 128: there "pa"
# is the "-pn" default and "old" its form without "-pn", still compiled.)
_OLD = {"w": _KM["w"] + "-km1", "p": _KM["p"] + "-km1", "l": _KM["l"] + "-km1",
        "h": "pingpong-rel-os-km"}
for _n, _d, _s, _c, _k in (("ad64w8k", 64, 8192, False, "w"), ("ad64wc8k", 64, 8192, True, "w"),
                           ("ad64w16k", 64, 16384, False, "w"),
                           ("ad256s8k", 256, 8192, False, "h"), ("ad256c8k", 256, 8192, True, "h"),
                           ("ad256s16k", 256, 16384, False, "h"),
                           ("ad128s512", 128, 512, False, "p"), ("ad128s2k", 128, 2048, False, "p"),
                           ("ad128c4k", 128, 4096, True, "p"), ("ad64s512", 64, 512, False, "l"),
                           ("ad64s1k", 64, 1024, False, "l"), ("ad64c2k", 64, 2048, True, "l")):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "pa:old@%s=%s" % (_V, _OLD[_k])] +
                 (["pa:km1@%s=pingpong-rel-os-km1" % _V] if _k == "h" else []) + ["cudnn"])

# thirty-ninth session (issue 9; bench/gpu/s39.sh): the kernels' bounds with "-pn" on the
# persistent kernels (decision 128): each case's default ("pa") beside the other side of
# its bound ("-pn" persistent "p", or the grid default "g") and cuDNN; hd64's cases also
# beside the three-consumer grid kernel's plain-only form "serial-s3-rel-wg3-km-pn" (a
# candidate in the module s39.sh runs, bench/gpu/s39_wg3pn.patch)
_PN = {64: _KM["l"] + "-km1-pn", 128: _KM["p"] + "-km1-pn"}
for _n, _d, _s, _c, _o in (("pb64s2k", 64, 2048, False, "p"), ("pb64s4k", 64, 4096, False, "p"),
                           ("pb64c4k", 64, 4096, True, "p"), ("pb128s4k", 128, 4096, False, "g"),
                           ("pb128s8k", 128, 8192, False, "p"), ("pb128c8k", 128, 8192, True, "g"),
                           ("pb128c16k", 128, 16384, True, "p")):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "pa:%s@%s=%s" % (_o, _V, _PN[_d] if _o == "p" else
                                                            _KM["k"] + "-km1")] +
                 (["pa:gpn@%s=%s-km-pn" % (_V, _KM["g"])] if _d == 64 and not _c else []) +
                 ["cudnn"])
# and the Ampere kernel's plain-only score pass (decision 129, not in the tree: in a module
# built with bench/gpu/ampere_plain_s39.patch it is the default for plain problems) beside
# the same rows with every path (POLYATTN_CUDA_AMPERE_PLAIN=0) and SDPA flash, without
# LSE as every case here (hd128 runs m2k64-km-rs); without the patch both contenders run
# the same kernel
_APL = "pa:all@POLYATTN_CUDA_KERNEL=ampere&POLYATTN_CUDA_AMPERE_PLAIN=0"
for _n, _dt, _d, _s, _c in (("ap64s2k", "bf16", 64, 2048, False), ("ap64s8k", "bf16", 64, 8192, False),
                            ("ap64c8k", "bf16", 64, 8192, True), ("ap128s2k", "bf16", 128, 2048, False),
                            ("ap128s8k", "bf16", 128, 8192, False), ("ap128c8k", "bf16", 128, 8192, True),
                            ("ap128h8k", "fp16", 128, 8192, False)):
    CASES[_n] = (_dt, _d, _s, _c, [_AMP, _APL, "flash"])


# fortieth session (issue 9; bench/gpu/s40.sh): the three-consumer hd64 grid kernel's
# plain-only form "serial-s3-rel-wg3-km-pn" as the default of plain problems between the
# bounds (decision 130): "pa" (the default) beside the form without "-pn" ("old") and cuDNN;
# at S2048 also the persistent kernel across PA_HOPPER_PERSIST_SK_D64 ("p"); at S1024 (the
# persistent kernel's) and S8192 (the 192-key kernel's) the new form by name ("gpn"), to
# see whether the bounds still fall where the kernels cross
_WN = "%s=%s-km" % (_V, _KM["g"])
for _n, _dt, _s, _o in (("wn64s1k", "bf16", 1024, ["pa:gpn@%s-pn" % _WN]),
                        ("wn64s2k", "bf16", 2048, ["pa:old@" + _WN, "pa:p@%s=%s" % (_V, _PN[64])]),
                        ("wn64s4k", "bf16", 4096, ["pa:old@" + _WN]),
                        ("wn64h4k", "fp16", 4096, ["pa:old@" + _WN]),
                        ("wn64s8k", "bf16", 8192, ["pa:gpn@%s-pn" % _WN])):
    CASES[_n] = (_dt, 64, _s, False, ["pa"] + _o + ["cudnn"])

# fortieth session (issue 9; bench/gpu/s40_fp8.sh): the FP8 kernel's plain-only score pass
# (PA_FP8_PLAIN, "-pn") as the defaults' form for plain problems (here without LSE: the
# "-r" forms): "fp8" (the default) beside the form without "-pn" by name ("old") and cuDNN
_FPN = {64: "pipe-gs-t-wg3-r", 128: "pingpong-gs-k192-t-r"}
for _n, _d, _s, _c in (("fpn128s2k", 128, 2048, False), ("fpn128s8k", 128, 8192, False),
                       ("fpn128c8k", 128, 8192, True), ("fpn128s16k", 128, 16384, False),
                       ("fpn64s8k", 64, 8192, False), ("fpn64c8k", 64, 8192, True)):
    CASES[_n] = ("bf16", _d, _s, _c, ["fp8", "fp8:old@POLYATTN_CUDA_FP8_VARIANT=" + _FPN[_d], "cudnn"])

# fortieth session (issue 9; bench/gpu/s40_tail.sh): the persistent kernels' last round.
# At S512 and S1024 with 16384 tokens the grid has 2048 (hd128) / 4096 (hd64) query tiles
# of 128 rows for 132 blocks: 15.5 / 31.03 per block, so the last round is part full and
# the slowest block does 16 / 32 (3.1% / 3.1% above the mean). Run with --tokens 16896
# (S512) or 33792 (S1024), 33 batches, the tiles divide evenly (16 / 32 / 64 per block):
# the default and cuDNN each at both token counts
for _n, _d, _s in (("tq128s512", 128, 512), ("tq64s512", 64, 512), ("tq128s1k", 128, 1024),
                   ("tq64s1k", 64, 1024)):
    CASES[_n] = ("bf16", _d, _s, False, ["pa", "cudnn"])

# fortieth session (issue 9; bench/gpu/s40_wg3p.sh, a module with bench/gpu/s40_wg3p.patch):
# the three-consumer kernel on the persistent walk again (the twenty-eighth session's
# "serial-s3-rel-wg3-p-q2" was 5-14% slower), now with the plain-only pass and the kept
# maximum, O out through registers ("p") or through shared memory ("pos"), beside the
# default (the persistent "-pn" kernel up to 1024 keys, the grid "-pn" kernel above) and cuDNN
_W3P = "pa:p@%s=serial-s3-rel-wg3-p-q2-km-pn" % _V
_W3POS = "pa:pos@%s=serial-s3-rel-wg3-p-q2-os-km-pn" % _V
for _n, _s, _c in (("w3p512", 512, False), ("w3p1k", 1024, False), ("w3p2k", 2048, False),
                   ("w3p4k", 4096, False), ("w3pc2k", 2048, True)):
    CASES[_n] = ("bf16", 64, _s, _c, ["pa", _W3P, _W3POS, "cudnn"])

# fortieth session (issue 9; bench/gpu/s40_fp8lse.sh, a module with bench/gpu/s40_fp8lse.patch):
# hd64's FP8 default with LSE ("pipe-gs-t-wg3", no ROWSUM) on its "-pn" form, which that
# module makes the default, beside the form without it ("old") and cuDNN
for _n, _s, _c in (("fpl64s4k", 4096, False), ("fpl64s8k", 8192, False), ("fpl64c8k", 8192, True)):
    CASES[_n] = ("bf16", 64, _s, _c, ["fp8lse", "fp8lse:old@POLYATTN_CUDA_FP8_VARIANT=pipe-gs-t-wg3",
                                      "cudnn"])

# forty-first session (issue 9; bench/gpu/s41.sh): the persistent kernels' stream-K tail
# (PA_HV_SK, "-sk"): the last round's tiles cut along their keys into one equal share per
# block. "pa" (the default) beside the persistent "-pn" kernel without ("p") and with the
# tail ("sk") by name, and cuDNN; at the 16k-token sweep every case has 2048 (hd128) or
# 4096 (hd64) query tiles of 128 rows, 15.5 / 31.03 per block on 132 SMs
for _n, _d, _s in (("sk128s512", 128, 512), ("sk128s1k", 128, 1024), ("sk128s2k", 128, 2048),
                   ("sk128s4k", 128, 4096), ("sk128s8k", 128, 8192), ("sk64s512", 64, 512),
                   ("sk64s1k", 64, 1024), ("sk64s2k", 64, 2048), ("sk64s4k", 64, 4096)):
    CASES[_n] = ("bf16", _d, _s, False, ["pa", "pa:p@%s=%s" % (_V, _PN[_d]),
                                         "pa:sk@%s=%s-sk" % (_V, _PN[_d]), "cudnn"])
for _n, _d, _s in (("sk128h4k", 128, 4096), ("sk64h1k", 64, 1024)):
    CASES[_n] = ("fp16", _d, _s, False, ["pa", "pa:sk@%s=%s-sk" % (_V, _PN[_d]), "cudnn"])

# and the build with decision 132 (bench/gpu/s41_final.sh): hd128's default on the
# stream-K tail from 2048 keys ("pa") beside the form without it by name ("old") and
# cuDNN; at S1024 the default is unchanged (below the bound) and "sk" is the tail by name
for _n, _dt, _s in (("fk128s2k", "bf16", 2048), ("fk128s4k", "bf16", 4096),
                    ("fk128h2k", "fp16", 2048), ("fk128h4k", "fp16", 4096)):
    CASES[_n] = (_dt, 128, _s, False, ["pa", "pa:old@%s=%s" % (_V, _PN[128]), "cudnn"])
CASES["fk128s1k"] = ("bf16", 128, 1024, False, ["pa", "pa:sk@%s=%s-sk" % (_V, _PN[128]), "cudnn"])

# and the stream-K tail on wide key tiles (bench/gpu/s41_wide.sh, tuning candidates): the
# persistent hd128 kernel on 160-key tiles with both Q buffers ("k160": 227 KiB of shared
# memory) or on 176-key tiles with one Q buffer and O out from registers ("k176"), each with
# the tail, beside the default (the grid's 176-key kernel above 4096 keys), the 128-key
# persistent form with the tail ("sk") and cuDNN
_SKW = ["pa", "pa:k160@%s=pingpong-rel-p-q2-os-k160-km1-pn-sk" % _V,
        "pa:k176@%s=pingpong-rel-p-k176-km1-pn-sk" % _V, "pa:sk@%s=%s-sk" % (_V, _PN[128]), "cudnn"]
for _n, _dt, _s in (("sw128s4k", "bf16", 4096), ("sw128s8k", "bf16", 8192),
                    ("sw128s16k", "bf16", 16384), ("sw128h8k", "fp16", 8192)):
    CASES[_n] = (_dt, 128, _s, False, _SKW)

# and the Ampere kernel's last round (s41_wide.sh): run with --tokens 8192 and --hidden 4096
# (hd128: 2048 query tiles of 128 rows, 7.76 rounds of the 264 blocks two per SM hold; hd64:
# 4096, 15.5 rounds) or --hidden 4224 (33 / 66 heads: 2112 / 4224 tiles, whole rounds),
# the Ampere kernel beside SDPA flash
for _n, _d in (("ta128s8k", 128), ("ta64s8k", 64)):
    CASES[_n] = ("bf16", _d, 8192, False, [_AMP, "flash"])

# and hd256 (bench/gpu/s41_d256.sh): the persistent kernel with O through its one Q buffer and
# the tail, "pingpong-rel-p-os-km-pn-sk" ("sk"), beside the grid default and cuDNN (1024
# query tiles at every length: 7.76 rounds on 132 SMs)
for _n, _s, _c in (("sq256s2k", 2048, False), ("sq256s8k", 8192, False),
                   ("sq256s16k", 16384, False), ("sq256c8k", 8192, True)):
    CASES[_n] = ("bf16", 256, _s, _c, ["pa", "pa:sk@%s=pingpong-rel-p-os-km-pn-sk" % _V, "cudnn"])
CASES["sq256h8k"] = ("fp16", 256, 8192, False,
                     ["pa", "pa:sk@%s=pingpong-rel-p-os-km-pn-sk" % _V, "cudnn"])

# forty-second session (issue 9; bench/gpu/s42.sh, a module with bench/gpu/s42_split.patch;
# decision 133, not adopted): the split: the grid
# defaults at hd128 (176-key tiles) and hd256 run their whole rounds less one, then the
# persistent stream-K kernel cuts the rest into one equal share per SM. "pa" (the default:
# the split from 8192 keys) beside it off ("off", POLYATTN_CUDA_HOPPER_SPLIT=0) or, below
# 8192 keys, forced on ("on", =1), and cuDNN; 2048 (hd128) / 1024 (hd256) query tiles of
# 128 rows at every length of the 16k-token sweep
_SPLIT_OFF = "pa:off@POLYATTN_CUDA_HOPPER_SPLIT=0"
_SPLIT_ON = "pa:on@POLYATTN_CUDA_HOPPER_SPLIT=1"
for _n, _dt, _d, _s in (("sp128s8k", "bf16", 128, 8192), ("sp128s16k", "bf16", 128, 16384),
                        ("sp128h8k", "fp16", 128, 8192), ("sp256s8k", "bf16", 256, 8192),
                        ("sp256s16k", "bf16", 256, 16384), ("sp256h8k", "fp16", 256, 8192)):
    CASES[_n] = (_dt, _d, _s, False, ["pa", _SPLIT_OFF, "cudnn"])
for _n, _s in (("sp256s2k", 2048), ("sp256s4k", 4096)):
    CASES[_n] = ("bf16", 256, _s, False, ["pa", _SPLIT_ON, "cudnn"])

# and the grid kernels' cut last round (bench/gpu/s42_lr.sh, a module with
# bench/gpu/s42_lr.patch; decision 133, not adopted): the R = T mod
# 132 query tiles of the part-full last round cut along their keys into f pieces, one block
# each. "pa" (the default: cut where pa_hopper_last_round says) beside it off ("off",
# POLYATTN_CUDA_HOPPER_LAST_ROUND=0) and cuDNN: hd64 S2048 / S4096 (2816 tiles of 192 rows,
# R = 44, f = 3), hd128 S8192 / S16384 (2048 of 128, R = 68, f = 5), hd256 (1024, R = 100,
# f = 5)
_LR_OFF = "pa:off@POLYATTN_CUDA_HOPPER_LAST_ROUND=0"
for _n, _dt, _d, _s in (("lr64s2k", "bf16", 64, 2048), ("lr64s4k", "bf16", 64, 4096),
                        ("lr64h4k", "fp16", 64, 4096), ("lr128s8k", "bf16", 128, 8192),
                        ("lr128s16k", "bf16", 128, 16384), ("lr256s2k", "bf16", 256, 2048),
                        ("lr256s8k", "bf16", 256, 8192), ("lr256s16k", "bf16", 256, 16384)):
    CASES[_n] = (_dt, _d, _s, False, ["pa", _LR_OFF, "cudnn"])

# and hd64's query tiles of 192 rows (bench/gpu/s42_quant.sh): lengths with whole tiles
# (2304 = 12 x 192, 4224 = 22 x 192) beside the sweep's (2048 = 10.67 tiles, 4096 = 21.33),
# the default beside cuDNN; run with --tokens 18432 (S2048: 9 batch entries, S2304: 8),
# 16384 (S4096: 4) and 16896 (S4224: 4)
for _n, _s in (("q64s2k", 2048), ("q64s2304", 2304), ("q64s4k", 4096), ("q64s4224", 4224)):
    CASES[_n] = ("bf16", 64, _s, False, ["pa", "cudnn"])

# forty-third session (bench/gpu/s43_stand.sh): the standing of issues 9 and 3 on the
# tree as it is (no variant named): the default beside cuDNN, and from 2048 keys at hd64 and
# hd128 beside SDPA flash and the Ampere kernel forced (issue 3's comparison) too
_ST = ["pa", "cudnn", "flash", _AMP]
for _n, _d, _s, _c, _w in (("st128s512", 128, 512, False, ["pa", "cudnn"]),
                           ("st64s512", 64, 512, False, ["pa", "cudnn"]),
                           ("st128s2k", 128, 2048, False, _ST), ("st128s4k", 128, 4096, False, _ST),
                           ("st128s8k", 128, 8192, False, _ST), ("st128s16k", 128, 16384, False, _ST),
                           ("st128c4k", 128, 4096, True, _ST), ("st128c8k", 128, 8192, True, _ST),
                           ("st64s2k", 64, 2048, False, _ST), ("st64s4k", 64, 4096, False, _ST),
                           ("st64s8k", 64, 8192, False, _ST), ("st64s16k", 64, 16384, False, _ST),
                           ("st64c4k", 64, 4096, True, ["pa", "cudnn"]),
                           ("st256s8k", 256, 8192, False, ["pa", "cudnn"]),
                           ("st256s16k", 256, 16384, False, ["pa", "cudnn"]),
                           ("st8s8k", 128, 8192, False, ["fp8", "cudnn"])):
    CASES[_n] = ("bf16", _d, _s, _c, _w)


# and the kept maximum decided on the row sums (bench/gpu/s43_ks.sh; decision 134): each
# default ("pa") beside its bf16 "-ks" probe by name and cuDNN
_KS = {"k176": "pingpong-rel-k176-os-km1-ks", "p128": "pingpong-rel-p-q2-os-km1-pn-ks",
       "sk128": "pingpong-rel-p-q2-os-km1-pn-sk-ks", "wg3": "serial-s3-rel-wg3-km-pn-ks",
       "k192": "serial-rel-wg3-k192-km1-ks", "p64": "pingpong-rel-p-q2-os-lag-km1-pn-ks",
       "d256": "pingpong-rel-os-km-ks"}
for _n, _d, _s, _c, _k in (("ks128s512", 128, 512, False, "p128"), ("ks128s4k", 128, 4096, False, "sk128"),
                           ("ks128s8k", 128, 8192, False, "k176"), ("ks128s16k", 128, 16384, False, "k176"),
                           ("ks64s512", 64, 512, False, "p64"), ("ks64s2k", 64, 2048, False, "wg3"),
                           ("ks64s4k", 64, 4096, False, "wg3"), ("ks64s8k", 64, 8192, False, "k192"),
                           ("ks256s8k", 256, 8192, False, "d256"), ("ks128c8k", 128, 8192, True, "p128"),
                           ("ks128c16k", 128, 16384, True, "k176")):
    CASES[_n] = ("bf16", _d, _s, _c, ["pa", "pa:ks@%s=%s" % (_V, _KS[_k]), "cudnn"])


# and the build with decision 134 (bench/gpu/s43_final.sh): hd128's defaults on the row-sum
# vote ("pa") beside the forms without it by name ("old") and cuDNN; hd64's bf16 probes
# with the sums in four chains ("ks") beside the default
_OLDK = {"k176": "pingpong-rel-k176-os-km1", "p128": "pingpong-rel-p-q2-os-km1-pn",
         "sk128": "pingpong-rel-p-q2-os-km1-pn-sk"}
for _n, _dt, _s, _c, _k in (("kf128s512", "bf16", 512, False, "p128"),
                            ("kf128s2k", "bf16", 2048, False, "sk128"),
                            ("kf128s4k", "bf16", 4096, False, "sk128"),
                            ("kf128s8k", "bf16", 8192, False, "k176"),
                            ("kf128s16k", "bf16", 16384, False, "k176"),
                            ("kf128c8k", "bf16", 8192, True, "p128"),
                            ("kf128h4k", "fp16", 4096, False, "sk128"),
                            ("kf128h8k", "fp16", 8192, False, "k176")):
    CASES[_n] = (_dt, 128, _s, _c, ["pa", "pa:old@%s=%s" % (_V, _OLDK[_k]), "cudnn"])
for _n, _s, _k in (("kf64s512", 512, "p64"), ("kf64s2k", 2048, "wg3"), ("kf64s4k", 4096, "wg3"),
                   ("kf64s8k", 8192, "k192")):
    CASES[_n] = ("bf16", 64, _s, False, ["pa", "pa:ks@%s=%s" % (_V, _KS[_k]), "cudnn"])


# and hd64's grid defaults on the row-sum vote too (bench/gpu/s43_final64.sh): "pa" beside the
# forms without it by name ("old") and cuDNN
_OLD64K = {"wg3": "serial-s3-rel-wg3-km-pn", "k192": "serial-rel-wg3-k192-km1"}
for _n, _dt, _s, _c, _k in (("kg64s2k", "bf16", 2048, False, "wg3"), ("kg64s4k", "bf16", 4096, False, "wg3"),
                            ("kg64s8k", "bf16", 8192, False, "k192"),
                            ("kg64s16k", "bf16", 16384, False, "k192"),
                            ("kg64c8k", "bf16", 8192, True, "k192"), ("kg64h4k", "fp16", 4096, False, "wg3")):
    CASES[_n] = (_dt, 64, _s, _c, ["pa", "pa:old@%s=%s" % (_V, _OLD64K[_k]), "cudnn"])

# forty-fourth session (issue 3; bench/gpu/s44_ampere_ks.sh, decision 135): the Ampere
# kernel's rows with the kept maximum on the row sums ("ks": m2k128tj-ks at hd64, m2k64-ks at
# hd128; only in a module built with bench/gpu/s44_ampere_ks.patch, without it the name runs
# the default row) beside its default row ("ampere") and SDPA flash, without LSE
_AKS = {64: "m2k128tj-ks", 128: "m2k64-ks"}
for _n, _dt, _d, _s, _c in (("aq64s2k", "bf16", 64, 2048, False), ("aq64s8k", "bf16", 64, 8192, False),
                            ("aq64s16k", "bf16", 64, 16384, False), ("aq64c8k", "bf16", 64, 8192, True),
                            ("aq64h8k", "fp16", 64, 8192, False),
                            ("aq128s2k", "bf16", 128, 2048, False), ("aq128s8k", "bf16", 128, 8192, False),
                            ("aq128s16k", "bf16", 128, 16384, False), ("aq128c8k", "bf16", 128, 8192, True),
                            ("aq128h8k", "fp16", 128, 8192, False)):
    CASES[_n] = (_dt, _d, _s, _c,
                 [_AMP, "pa:ks@POLYATTN_CUDA_KERNEL=ampere&POLYATTN_CUDA_AMPERE_VARIANT=" + _AKS[_d],
                  "flash"])

# forty-fifth session (issue 9; bench/gpu/s45.sh): hd256's default ("pingpong-rel-os-km")
# beside its plain-only form with the kept maximum decided on the row sums ("ks",
# "pingpong-rel-os-km-pn-ks" by name) and cuDNN
for _n, _dt, _s, _c in (("kh256s2k", "bf16", 2048, False), ("kh256s8k", "bf16", 8192, False),
                        ("kh256s16k", "bf16", 16384, False), ("kh256c8k", "bf16", 8192, True),
                        ("kh256h8k", "fp16", 8192, False)):
    CASES[_n] = (_dt, 256, _s, _c, ["pa", "pa:ks@%s=pingpong-rel-os-km-pn-ks" % _V, "cudnn"])


# forty-sixth session (issue 3; bench/gpu/s46.sh): the Ampere kernel's two-halves schedule
# (fwd_ampere_pipe.cu, POLYATTN_CUDA_AMPERE_PIPE: 1; 3 with tree maxima and one ldmatrix
# offset; 5: 3 with the halves rotated across tiles on three stages) beside the default row
# and SDPA flash; only in a module whose fwd_ampere_pipe.cu is compiled (a tuning build, or
# PA_CUDA_AMPERE_PIPE_BUILD=1), else the names run the default row. s46.sh ran them as
# ap* cases, which redefined the thirty-ninth session's ap* cases above; renamed hp* since
_APP = "pa:pp%d@POLYATTN_CUDA_KERNEL=ampere&POLYATTN_CUDA_AMPERE_PIPE=%d"
for _n, _dt, _d, _s, _c in (("hp64s2k", "bf16", 64, 2048, False),
                            ("hp64s8k", "bf16", 64, 8192, False),
                            ("hp64s16k", "bf16", 64, 16384, False),
                            ("hp64c8k", "bf16", 64, 8192, True),
                            ("hp64h8k", "fp16", 64, 8192, False),
                            ("hp128s8k", "bf16", 128, 8192, False)):
    CASES[_n] = (_dt, _d, _s, _c,
                 [_AMP, _APP % (1, 1)] + ([_APP % (3, 3)] if _d == 64 else []) +
                 ([_APP % (5, 5)] if _n in ("hp64s8k", "hp64s16k") else []) + ["flash"])

# forty-seventh session (issue 9; bench/gpu/s47.sh): the FP8 kernel with the
# exponentials taking turns too ("-x", PA_FP8_XTURN): without LSE the default ("fp8", the
# "-r" form) beside "pingpong-gs-k192-t-r-x"; with LSE ("fp8lse") the default beside
# "pingpong-gs-k192-t-x"; cuDNN bf16 for scale
_FX = "POLYATTN_CUDA_FP8_VARIANT=pingpong-gs-k192-t"
for _n, _s, _c in (("xt128s2k", 2048, False), ("xt128s8k", 8192, False),
                   ("xt128s16k", 16384, False), ("xt128c8k", 8192, True)):
    CASES[_n] = ("bf16", 128, _s, _c, ["fp8", "fp8:x@%s-r-x" % _FX, "cudnn"])
CASES["xl128s8k"] = ("bf16", 128, 8192, False, ["fp8lse", "fp8lse:x@%s-x" % _FX])
# and hd64's three consumers in a ring: the default without LSE ("pipe-gs-t-wg3-r-pn" on
# plain problems) beside "pipe-gs-t-wg3-r-pn-x"
for _n, _s, _c in (("xt64s8k", 8192, False), ("xt64c8k", 8192, True)):
    CASES[_n] = ("bf16", 64, _s, _c,
                 ["fp8", "fp8:x@POLYATTN_CUDA_FP8_VARIANT=pipe-gs-t-wg3-r-pn-x", "cudnn"])

# and hd128's default without LSE with P packed into a second register set before the P.V
# wait ("-r-p2", PA_FP8_P2), beside the default ("fp8", the "-r" form) and cuDNN (s47_p2.sh
# ran p2128s2k, s8k, s16k and c8k; p2128s4k and p2128c16k were added for a second run that no
# device came for)
for _n, _s, _c in (("p2128s2k", 2048, False), ("p2128s4k", 4096, False),
                   ("p2128s8k", 8192, False), ("p2128s16k", 16384, False),
                   ("p2128c8k", 8192, True), ("p2128c16k", 16384, True)):
    CASES[_n] = ("bf16", 128, _s, _c, ["fp8", "fp8:p2@%s-r-p2" % _FX, "cudnn"])

# forty-eighth session (issue 9; bench/gpu/s48.sh): the FP8 kernel's kept maximum decided
# after the exponentials ("-kp", PA_FP8_VOTEP, plain problems: "-pn-kp"). Without LSE the
# default ("fp8", the "-r" form) beside "-r-pn" (the plain-only pass alone) and
# "-r-pn-kp"; with LSE the default beside "-pn-kp"; hd64 the default ("-r-pn") beside
# "pipe-gs-t-wg3-r-pn-kp"; cuDNN bf16 for scale. (The first run, bench/results/
# 2026-12-07s48-kp/r1, called them kp*, which redefined the thirty-sixth session's kp*
# cases above; renamed vp* since.)
for _n, _s, _c in (("vp128s2k", 2048, False), ("vp128s4k", 4096, False),
                   ("vp128s8k", 8192, False), ("vp128s16k", 16384, False),
                   ("vp128c8k", 8192, True)):
    CASES[_n] = ("bf16", 128, _s, _c, ["fp8", "fp8:pn@%s-r-pn" % _FX,
                                       "fp8:kp@%s-r-pn-kp" % _FX, "cudnn"])
CASES["vl128s8k"] = ("bf16", 128, 8192, False, ["fp8lse", "fp8lse:kp@%s-pn-kp" % _FX])
for _n, _s, _c in (("vp64s8k", 8192, False), ("vp64c8k", 8192, True)):
    CASES[_n] = ("bf16", 64, _s, _c,
                 ["fp8", "fp8:kp@POLYATTN_CUDA_FP8_VARIANT=pipe-gs-t-wg3-r-pn-kp", "cudnn"])
# and "-r-pn-kp" with the exponentials taking turns ("-r-pn-kp-x", PA_FP8_XTURN): without
# the maxima before them, a consumer's step 3 is mostly exponentials, and the two
# consumers' overlapped (bench/results/2026-12-07s48-kp/r2's ncu page)
for _n, _s, _c in (("vx128s2k", 2048, False), ("vx128s8k", 8192, False),
                   ("vx128s16k", 16384, False), ("vx128c8k", 8192, True)):
    CASES[_n] = ("bf16", 128, _s, _c, ["fp8", "fp8:kp@%s-r-pn-kp" % _FX,
                                       "fp8:kpx@%s-r-pn-kp-x" % _FX, "cudnn"])

# forty-ninth session (issue 3; bench/gpu/s49.sh): hd64's Ampere kernel with three M tiles
# (48 query rows) per warp on 64-key tiles ("m3k64tj", one barrier per tile; "m3k64t", K and
# V waited apart), beside the default row (m2k128tj) and SDPA flash; only in a module whose
# fwd_ampere.cu compiles them (a tuning build, or PA_CUDA_AMPERE_M3=1), else the names run
# the default row
_AM3 = "pa:%s@POLYATTN_CUDA_KERNEL=ampere&POLYATTN_CUDA_AMPERE_VARIANT=%s"
for _n, _dt, _s, _c in (("m364s2k", "bf16", 2048, False), ("m364s8k", "bf16", 8192, False),
                        ("m364s16k", "bf16", 16384, False), ("m364c8k", "bf16", 8192, True),
                        ("m364h8k", "fp16", 8192, False)):
    CASES[_n] = (_dt, 64, _s, _c, [_AMP, _AM3 % ("m3j", "m3k64tj"), _AM3 % ("m3", "m3k64t"),
                                   "flash"])

# and the Ampere kernel's step 3 in P.V's k16 steps ("-x", decision 142; bench/gpu/s49_x.sh):
# the default row beside its "-x" form (m2k64-km-rs-x, m2k128tj-x) and SDPA flash; only in a
# module that compiles them (a tuning build, or PA_CUDA_AMPERE_XPV=1)
_AX = {64: "m2k128tj-x", 128: "m2k64-km-rs-x"}
for _x, _dt, _d, _s, _c in _ASHAPES:
    CASES["xq" + _x] = (_dt, _d, _s, _c, [_AMP, _AM3 % ("x", _AX[_d]), "flash"])
# and the next tile's copies issued after the warp's Q.K^T ("-lk", decision 143;
# bench/gpu/s49_x.sh FORM=lk): the default row beside its "-lk" form and SDPA flash; only in a module
# that compiles them (a tuning build, or PA_CUDA_AMPERE_LK=1)
_ALK = {64: "m2k128tj-lk", 128: "m2k64-km-rs-lk"}
for _x, _dt, _d, _s, _c in _ASHAPES:
    CASES["lq" + _x] = (_dt, _d, _s, _c, [_AMP, _AM3 % ("lk", _ALK[_d]), "flash"])

# fiftieth session (issue 3; bench/gpu/s50.sh): the next tile's copies spread between the
# warp's Q.K^T k16 steps ("-sc", decision 144) and the block-mask bits shifted per warp
# ("-mg"): the default row beside m2k64-km-rs-mg-sc (hd128), or m2k128tj-sc and m2k128tj-mg
# (hd64), and SDPA flash; only in a module that compiles them (a tuning build, or
# PA_CUDA_AMPERE_SC=1)
_ASC = {64: [_AM3 % ("sc", "m2k128tj-sc"), _AM3 % ("mg", "m2k128tj-mg")],
        128: [_AM3 % ("mgsc", "m2k64-km-rs-mg-sc")]}
for _x, _dt, _d, _s, _c in _ASHAPES:
    CASES["sc" + _x] = (_dt, _d, _s, _c, [_AMP] + _ASC[_d] + ["flash"])

# fifty-second session (issue 9's S512; bench/gpu/s52_qs.sh): hd128's persistent kernel on one
# split Q buffer and three stages ("-qs"), without and with consumer 1 a turn behind ("-lag"),
# beside the default (pingpong-rel-p-q2-os-km1-pn-ks; from 2048 keys, non-causal, its "-sk"
# form) and cuDNN; not kept (bench/gpu/s52_qs.patch): in later trees their names run the default
_QS = "pa:%s@POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p-s3-%s-km1-pn-ks"
for _x, _s, _c in (("s512", 512, False), ("s1k", 1024, False), ("s2k", 2048, False),
                   ("s4k", 4096, False), ("c2k", 2048, True), ("c4k", 4096, True)):
    for _dt in ("bf16", "fp16"):
        CASES["qs%s%s" % ("" if _dt == "bf16" else "h", _x)] = (
            _dt, 128, _s, _c, ["pa", _QS % ("qs", "qs"), _QS % ("qslag", "qs-lag"), "cudnn"])


class Sampler:
    """SM clock (MHz), power (W) and clock-event reasons, every period_s, with
    time.monotonic() stamps: NVML through pynvml when it imports, else nvidia-smi."""

    def __init__(self, period_s, uuid, index):
        """uuid: the torch device's ("GPU-...", or "" if torch does not give it), so
        that NVML samples that GPU whatever CUDA_VISIBLE_DEVICES and the device order
        say; else NVML's device `index` (the first form of this tool, R1-R4)."""
        self.period = period_s
        self.rows = []  # (t, mhz, watts, reasons)
        self.stop_ev = threading.Event()
        self.how = None
        self.nv = None
        self.which = uuid or str(index)
        try:
            import pynvml
            pynvml.nvmlInit()
            try:
                self.h = pynvml.nvmlDeviceGetHandleByUUID(uuid) if uuid else None
            except Exception:  # noqa: BLE001
                self.h = None
            if self.h is None:
                self.h = pynvml.nvmlDeviceGetHandleByIndex(index)
                self.which = "index %d" % index
            self.nv = pynvml
            self.how = "pynvml"
        except Exception:  # noqa: BLE001
            self.how = "nvidia-smi"
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        if self.nv is not None:
            nv = self.nv
            while not self.stop_ev.is_set():
                t = time.monotonic()
                try:
                    mhz = nv.nvmlDeviceGetClockInfo(self.h, nv.NVML_CLOCK_SM)
                    w = nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0
                    try:
                        r = nv.nvmlDeviceGetCurrentClocksEventReasons(self.h)
                    except Exception:  # noqa: BLE001
                        r = nv.nvmlDeviceGetCurrentClocksThrottleReasons(self.h)
                    self.rows.append((t, float(mhz), float(w), int(r)))
                except Exception:  # noqa: BLE001
                    pass
                time.sleep(self.period)
            return
        ms = max(10, int(self.period * 1000))
        p = subprocess.Popen(["nvidia-smi", "-i", self.which.replace("index ", ""),
                              "--query-gpu=clocks.sm,power.draw,"
                              "clocks_event_reasons.active", "--format=csv,noheader,nounits",
                              "-lms", str(ms)], stdout=subprocess.PIPE, text=True, bufsize=1)
        for line in p.stdout:
            if self.stop_ev.is_set():
                break
            f = [x.strip() for x in line.split(",")]
            try:
                self.rows.append((time.monotonic(), float(f[0]), float(f[1]), int(f[2], 16)))
            except (ValueError, IndexError):
                pass
        p.terminate()

    def window(self, t0, t1):
        w = [r for r in self.rows if t0 <= r[0] <= t1]
        if not w:
            return None
        reasons = 0
        for r in w:
            reasons |= r[3]
        return (statistics.median(r[1] for r in w), statistics.mean(r[2] for r in w),
                min(r[1] for r in w), max(r[1] for r in w), reasons, len(w))

    def stop(self):
        self.stop_ev.set()


def reasons_text(r):
    names = [(0x1, "idle"), (0x2, "app-clocks"), (0x4, "sw-power-cap"), (0x8, "hw-slowdown"),
             (0x20, "sw-thermal"), (0x40, "hw-thermal"), (0x80, "hw-power-brake"),
             (0x100, "display")]
    return "+".join(n for b, n in names if r & b) or "none"


def sustained(torch, fn, secs):
    """Calls back to back for secs; ms per call over the last half (events)."""
    fn()
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(3):
        fn()
    e.record()
    e.synchronize()
    est = max(s.elapsed_time(e) / 3, 1e-3)
    n = max(10, int(secs * 1000 / 2 / est))
    t_start = time.monotonic()
    for _ in range(n):  # first half: reach the steady state
        fn()
    torch.cuda.synchronize()
    t_mid = time.monotonic()
    s.record()
    for _ in range(n):
        fn()
    e.record()
    e.synchronize()
    t_end = time.monotonic()
    return s.elapsed_time(e) / n, t_start, t_mid, t_end


def listed_variants():
    """The variant names this checkout's CUDA sources list (PA_HOPPER_VARIANT_LIST,
    PA_FP8_VARIANT_LIST), per environment variable; None where a source is missing."""
    root = os.path.dirname(os.path.dirname(HERE))
    out = {}
    for var, path in (("POLYATTN_CUDA_HOPPER_VARIANT", "backends/cuda/fwd_hopper.cu"),
                      ("POLYATTN_CUDA_FP8_VARIANT", "backends/cuda/fwd_hopper_fp8.cu")):
        try:
            with open(os.path.join(root, path)) as f:
                out[var] = set(re.findall(r'X\("([^"]+)"', f.read()))
        except OSError:
            out[var] = None
    return out


class Env:
    """Sets the given environment variables for a with-block and restores them after."""

    def __init__(self, settings):
        self.settings = settings

    def __enter__(self):
        self.old = {k: os.environ.get(k) for k in self.settings}
        os.environ.update(self.settings)

    def __exit__(self, *exc):
        for k, v in self.old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="d128,d64,d256,d128s512")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--secs", type=float, default=2.0)
    ap.add_argument("--period", type=float, default=5.0, help="sampling period, ms")
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--lib", default=None)
    a = ap.parse_args()
    args = ct.parse_args(["--min-runs", "20"])
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    bench = ct.Bench(args)
    dev = bench.dev
    props = torch.cuda.get_device_properties(dev)
    sm_count = props.multi_processor_count
    uuid = str(getattr(props, "uuid", "") or "")
    uuid = uuid if uuid.startswith("GPU-") or not uuid else "GPU-" + uuid
    smp = Sampler(a.period / 1000.0, uuid, dev.index)
    time.sleep(0.3)
    print("# torch %s, %s, %d SMs, timer %s, clocks by %s of %s (%d samples in 0.3 s idle)" %
          (torch.__version__, torch.cuda.get_device_name(dev), sm_count, bench.timer, smp.how,
           smp.which, len(smp.rows)))
    listed = listed_variants()
    stream = torch.cuda.Stream(device=dev)
    hdr = ("%-9s %-12s %5s | %9s %7s %6s %6s %5s %8s | %9s %7s %6s | %s" %
           ("case", "who", "round", "sust ms", "TF/s", "MHz", "W", "F/c", "range", "bench ms",
            "TF/s", "MHz", "reasons"))
    print(hdr)
    print("-" * len(hdr))
    with torch.cuda.stream(stream):
        lib = polyattn.load_library(a.lib)
        tp = ct.TorchPolyattn(lib, torch, dev)
        tp.DT[torch.float8_e4m3fn] = pa.DTYPE_FP8_E4M3

        def workspace(nbytes):
            """A workspace of its own per contender, freed with the case's buffers (the
            shared one of TorchPolyattn is replaced, and freed, when a later call needs
            more)."""
            t = torch.empty(max(int(nbytes), 256), dtype=torch.uint8, device=dev)
            buf = tp.ctx.wrap(pa.MEMORY_CUDA_DEVICE, t.data_ptr(), t.numel())
            tp.bufs.append(buf)
            return buf, t

        for cname in a.cases.split(","):
            dt, D, S, causal, who = CASES[cname]
            if cname in CASES.redefined:
                print("%-9s note: defined more than once in this file; the last definition "
                      "runs" % cname)
            if a.tokens % S or a.hidden % D:
                print("%-9s skipped: tokens %d / S %d or hidden %d / D %d not whole" %
                      (cname, a.tokens, S, a.hidden, D))
                continue
            dtype = torch.bfloat16 if dt == "bf16" else torch.float16
            B, H = a.tokens // S, a.hidden // D
            flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
            g = torch.Generator(device=dev).manual_seed(S * 7 + D)
            q, k, v = (torch.randn(B, S, H, D, device=dev, dtype=dtype, generator=g)
                       for _ in range(3))
            o = torch.empty_like(q)
            qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            calls = {}  # contender: (call, env settings, SDPA backend or None, label)
            for w in who:
                name, _, env = w.partition("@")
                settings = dict(x.split("=", 1) for x in env.split("&") if x)
                label = name
                for var, names in listed.items():
                    if var in settings and names is not None and settings[var] not in names:
                        label += "(=default)"
                if w in ("flash", "cudnn"):
                    be = SDPBackend.FLASH_ATTENTION if w == "flash" else SDPBackend.CUDNN_ATTENTION

                    def fn():
                        return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
                    calls[w] = (fn, {}, be, label, None)
                elif name.split(":")[0] in ("fp8", "fp8lse"):
                    sc = [float(t.abs().max()) / 448.0 for t in (q, k, v)]
                    x8 = [(t.float() / s).to(torch.float8_e4m3fn) for t, s in zip((q, k, v), sc)]
                    o8 = torch.empty(B, S, H, D, device=dev, dtype=torch.bfloat16)
                    dsc = [torch.tensor([s], device=dev, dtype=torch.float32) for s in sc]
                    tq, tk, tv, to = (tp.view(t) for t in (x8[0], x8[1], x8[2], o8))
                    td = [tp.view(t) for t in dsc]
                    # "fp8lse": the call writes the LSE too (the kernels without ROWSUM)
                    lse8 = (torch.empty(B, H, S, device=dev, dtype=torch.float32)
                            if name.split(":")[0] == "fp8lse" else None)
                    tl = tp.view(lse8) if lse8 is not None else None
                    p = tp.ctx.params(causal=1 if causal else 0, q_descale=ctypes.pointer(td[0]),
                                      k_descale=ctypes.pointer(td[1]),
                                      v_descale=ctypes.pointer(td[2]))
                    settings["POLYATTN_CUDA_FP8"] = "1"
                    with Env(settings):
                        ws, wst = workspace(tp.ctx.forward_workspace_size(p, tq, tk, tv, to, tl))
                        call = tp.ctx.forward_call(p, tq, tk, tv, to, tl, ws)
                    calls[w] = (call, settings, None, label, (x8, o8, dsc, td, p, wst, lse8, tl))
                else:
                    with Env(settings):
                        tq, tk, tv, to = (tp.view(t) for t in (q, k, v, o))
                        p = tp.ctx.params(causal=1 if causal else 0)
                        ws, wst = workspace(tp.ctx.forward_workspace_size(p, tq, tk, tv, to, None))
                        call = tp.ctx.forward_call(p, tq, tk, tv, to, None, ws)
                    calls[w] = (call, settings, None, label, (p, wst))
            for rnd in range(a.rounds):
                for w in who:
                    fn, settings, be, label, _ = calls[w]
                    try:
                        with Env(settings):
                            with (sdpa_kernel(be) if be is not None else contextlib.nullcontext()):
                                ms, t0, tm, t1 = sustained(torch, fn, a.secs)
                                ws = smp.window(tm, t1)
                                tb0 = time.monotonic()
                                bms, _ = bench.time_ms(fn)
                                wb = smp.window(tb0, time.monotonic())
                    except Exception as e:  # noqa: BLE001
                        print("%-9s %-12s %5d | error %s" % (cname, label, rnd, ct._err_line(e)))
                        continue
                    tf = flops / (ms * 1e-3) / 1e12
                    btf = flops / (bms * 1e-3) / 1e12
                    if ws and ws[0] > 0:
                        fpc = flops / (ms * 1e-3) / (ws[0] * 1e6) / sm_count
                        print("%-9s %-12s %5d | %9.3f %7.1f %6.0f %6.0f %5.0f %4.0f-%-4.0f | "
                              "%9.3f %7.1f %6.0f | %s (%d samples)" %
                              (cname, label, rnd, ms, tf, ws[0], ws[1], fpc, ws[2],
                               ws[3], bms, btf, wb[0] if wb else float("nan"),
                               reasons_text(ws[4] | (wb[4] if wb else 0)), ws[5]))
                    else:
                        print("%-9s %-12s %5d | %9.3f %7.1f (no clock samples) | %9.3f %7.1f" %
                              (cname, label, rnd, ms, tf, bms, btf))
                    sys.stdout.flush()
            tp.release()
            calls.clear()
    smp.stop()


if __name__ == "__main__":
    main()
