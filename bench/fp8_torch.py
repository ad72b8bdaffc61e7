#!/usr/bin/env python3
"""fp8_torch.py -- the FP8 (e4m3) forward beside PyTorch, in one process (issue 9).

Per (D, S, causal): polyattn fp8 (q, k, v torch.float8_e4m3fn with per-tensor float32
descales, out bf16; the variants of POLYATTN_CUDA_FP8_VARIANT given by --variants),
polyattn bf16 (its default Hopper kernel) and PyTorch SDPA bf16 (flash, cuDNN) on the
same shapes, timed alike (compare_torch.py's Bench: CUDA events or triton's do_bench,
median, L2 cleared). PyTorch SDPA with fp8 inputs is tried once and its answer
printed: where it refuses, the fp8 row is compared with the bf16 rows only, and says so.
The output is checked against SDPA bf16 on the dequantised inputs (max |d|, rel).
FLOPs = 4*B*H*S*S*D, half when causal; B*S = --tokens, H*D = --hidden.

  python3 bench/fp8_torch.py --dims 128,64 --seqlens 8192 --variants serial,pingpong-e16
"""
import argparse
import ctypes
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_torch as ct  # noqa: E402
from polyattn import capi as pa  # noqa: E402
import polyattn  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dims", default="128,64")
    ap.add_argument("--seqlens", default="8192")
    ap.add_argument("--causal", default="0", choices=["0", "1", "both"])
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--variants", default="-", help="POLYATTN_CUDA_FP8_VARIANT values, comma list")
    ap.add_argument("--lib", default=None)
    a = ap.parse_args()
    args = ct.parse_args(["--min-runs", "20"])
    import torch
    bench = ct.Bench(args)
    dev = bench.dev
    stream = torch.cuda.Stream(device=dev)
    print("# torch %s, %s, timer %s" % (torch.__version__, torch.cuda.get_device_name(dev), bench.timer))
    with torch.cuda.stream(stream):
        lib = polyattn.load_library(a.lib)
        tp = ct.TorchPolyattn(lib, torch, dev)
        tp.DT[torch.float8_e4m3fn] = pa.DTYPE_FP8_E4M3
        from torch.nn.attention import SDPBackend, sdpa_kernel
        F = torch.nn.functional
        causals = [False, True] if a.causal == "both" else [a.causal == "1"]
        for D in [int(x) for x in a.dims.split(",")]:
            for S in [int(x) for x in a.seqlens.split(",")]:
                for causal in causals:
                    H = a.hidden // D
                    B = max(1, a.tokens // S)
                    flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
                    g = torch.Generator(device=dev).manual_seed(0)
                    x = [torch.randn(B, S, H, D, device=dev, dtype=torch.float32, generator=g)
                         for _ in range(3)]
                    xb = [t.to(torch.bfloat16) for t in x]
                    # per-tensor descales: amax / 448
                    sc = [float(t.abs().max()) / 448.0 for t in xb]
                    x8 = [(t.float() / s).to(torch.float8_e4m3fn) for t, s in zip(xb, sc)]
                    deq = [(t.float() * s).to(torch.bfloat16) for t, s in zip(x8, sc)]
                    tag = "D=%d S=%d B=%d H=%d causal=%d" % (D, S, B, H, causal)

                    def rate(ms):
                        return flops / (ms * 1e-3) / 1e12

                    # SDPA bf16 on the dequantised inputs: the reference and the timing
                    qt, kt, vt = (t.transpose(1, 2) for t in deq)
                    ref = None
                    for name, be in (("sdpa-flash-bf16", SDPBackend.FLASH_ATTENTION),
                                     ("sdpa-cudnn-bf16", SDPBackend.CUDNN_ATTENTION)):
                        try:
                            out, (ms, n) = ct._sdpa_try(bench, sdpa_kernel, be,
                                                        lambda: F.scaled_dot_product_attention(
                                                            qt, kt, vt, is_causal=causal))
                            if ref is None:
                                ref = out.transpose(1, 2).float()
                            print("%s %-16s %8.3f ms %8.1f TFLOP/s" % (tag, name, ms, rate(ms)))
                        except Exception as e:  # noqa: BLE001
                            print("%s %-16s refused: %s" % (tag, name, str(e)[:200]))
                    # SDPA with fp8 inputs: does this torch have it?
                    q8t, k8t, v8t = (t.transpose(1, 2) for t in x8)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        try:
                            F.scaled_dot_product_attention(q8t, k8t, v8t, is_causal=causal)
                            bench.sync()
                            print("%s sdpa-fp8         ran (unexpected; not timed here)" % tag)
                        except Exception as e:  # noqa: BLE001
                            print("%s sdpa-fp8         refused: %s" % (tag, ct._err_line(e)[:200]))
                    # polyattn bf16 (default kernel) on the dequantised inputs
                    ob = torch.empty(B, S, H, D, device=dev, dtype=torch.bfloat16)
                    call, _ = tp.prepare(deq[0], deq[1], deq[2], ob, causal)
                    ms, n = bench.time_ms(call)
                    print("%s %-16s %8.3f ms %8.1f TFLOP/s" % (tag, "polyattn-bf16", ms, rate(ms)))
                    # polyattn fp8
                    o8 = torch.empty(B, S, H, D, device=dev, dtype=torch.bfloat16)
                    dsc = [torch.tensor([s], device=dev, dtype=torch.float32) for s in sc]
                    tq, tk, tv, to = (tp.view(t) for t in (x8[0], x8[1], x8[2], o8))
                    td = [tp.view(t) for t in dsc]
                    p = tp.ctx.params(causal=1 if causal else 0,
                                      q_descale=ctypes.pointer(td[0]),
                                      k_descale=ctypes.pointer(td[1]),
                                      v_descale=ctypes.pointer(td[2]))
                    for var in a.variants.split(","):
                        if var == "-":
                            os.environ.pop("POLYATTN_CUDA_FP8_VARIANT", None)
                        else:
                            os.environ["POLYATTN_CUDA_FP8_VARIANT"] = var
                        o8.fill_(float("nan"))
                        call8 = tp.ctx.forward_call(p, tq, tk, tv, to, None, tp.workspace(0))
                        call8()
                        bench.sync()
                        d = (o8.float() - ref).abs()
                        rel = float(((o8.float() - ref) ** 2).sum() / (ref ** 2).sum()) ** 0.5
                        ms, n = bench.time_ms(call8)
                        print("%s %-16s %8.3f ms %8.1f TFLOP/s  max|d| vs sdpa-bf16(deq) %.3g "
                              "rel %.3g nan %d" % (tag, "polyattn-fp8:" + var, ms, rate(ms),
                                                   float(d.max()), rel,
                                                   int(torch.isnan(o8).sum())))
                    os.environ.pop("POLYATTN_CUDA_FP8_VARIANT", None)
                    tp.release()


if __name__ == "__main__":
    main()
