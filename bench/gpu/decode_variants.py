#!/usr/bin/env python3
"""decode_variants.py -- the decode benchmark of issue 3 (B=8, Hq=32, Hkv=8, D=128,
Sq=1, bf16) for several polyattn decode variants (environment settings) and PyTorch
SDPA flash / cuDNN on the same tensors, in one process, under three timers:

  graph   N calls captured in one CUDA graph, rotating over enough K/V copies that
          they exceed the L2 several times; events around each replay; median / N.
          What a serving loop that replays graphs sees (no launch gaps, no host).
  scrub   one call between CUDA events, after a read-only pass over a 256 MiB buffer
          (the L2 then holds clean lines: nothing of K/V, nothing to write back);
          median of --runs.
  dobench bench/compare_torch.py's timer (triton do_bench, median; its L2 clear is
          a write of 256 MiB, whose dirty lines the timed call must evict).

Achieved bandwidth = K+V bytes / time. Correctness per variant: NaN-poisoned output,
max |polyattn - flash| and finiteness (the float64 oracle check is test_forward's).

  python3 decode_variants.py --variants 'base:POLYATTN_CUDA_DECODE_MERGE=kernel;
      cluster:POLYATTN_CUDA_DECODE_MERGE=cluster,POLYATTN_CUDA_DECODE_EARLY=1'
      [--sk 4096,32768,131072] [--json out.jsonl]

A variant's pseudo-setting LAYOUT=bhsd (not an environment variable) times it on copies
of K/V whose memory is [B, Hkv, Sk, D] (each kv head's keys contiguous), passed as the
same strided [B, Sk, Hkv, D] view: a diagnostic of the access pattern, not the issue's
layout.

Needs torch, the polyattn package (bindings/python) and bench/compare_torch.py next to
it or in ../ (the devkit copies them beside this file).
"""
import argparse
import json
import os
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
for d in (here, os.path.dirname(here)):
    if os.path.exists(os.path.join(d, "compare_torch.py")):
        sys.path.insert(0, d)
        break
import compare_torch as ct  # noqa: E402

ENV_KEYS = ("POLYATTN_CUDA_DECODE_MERGE", "POLYATTN_CUDA_DECODE_EARLY",
            "POLYATTN_CUDA_DECODE_TICKET_ZERO",
            "POLYATTN_CUDA_DECODE_SPLITS", "POLYATTN_CUDA_DECODE_PATH",
            "POLYATTN_CUDA_DECODE_COPY", "POLYATTN_CUDA_DECODE_WARPS",
            "POLYATTN_CUDA_DECODE_VARIANT")


def parse_variants(text):
    out = []
    for item in filter(None, (x.strip() for x in text.split(";"))):
        name, _, envs = item.partition(":")
        env = {}
        for kv in filter(None, (x.strip() for x in envs.split(","))):
            k, _, v = kv.partition("=")
            env[k] = v
        out.append((name.strip(), env))
    return out


def set_env(env):
    for k in ENV_KEYS:
        os.environ.pop(k, None)
    os.environ.update({k: v for k, v in env.items() if k != "LAYOUT"})


class Timers:
    def __init__(self, torch, bench, args):
        self.torch = torch
        self.bench = bench
        self.args = args
        self.scrub_buf = torch.empty(64 << 20, dtype=torch.float32, device=bench.dev).fill_(1.0)
        self.scrub_out = torch.empty((), dtype=torch.float32, device=bench.dev)

    def scrub(self):
        self.torch.sum(self.scrub_buf, dim=0, out=self.scrub_out)

    def t_scrub(self, fn):
        torch = self.torch
        for _ in range(3):
            fn()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(self.args.runs)]
        for s, e in ev:
            self.scrub()
            s.record()
            fn()
            e.record()
        self.bench.sync()
        return statistics.median(s.elapsed_time(e) for s, e in ev)

    def t_graph(self, fns, stream):
        """fns: one callable per K/V copy; the graph holds n_calls of them in turn."""
        torch = self.torch
        n_calls = self.args.graph_calls
        for f in fns:
            f()
        self.bench.sync()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            for i in range(n_calls):
                fns[i % len(fns)]()
        for _ in range(2):
            g.replay()
        self.bench.sync()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(self.args.graph_reps)]
        for s, e in ev:
            s.record()
            g.replay()
            e.record()
        self.bench.sync()
        ms = statistics.median(s.elapsed_time(e) for s, e in ev) / n_calls
        del g
        return ms

    def t_dobench(self, fn):
        return self.bench.time_ms(fn)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", required=True)
    ap.add_argument("--sk", default="4096,32768,131072")
    ap.add_argument("--timers", default="graph,scrub,dobench")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--graph-calls", type=int, default=12)
    ap.add_argument("--graph-reps", type=int, default=15)
    ap.add_argument("--kv-bytes-rotate", type=float, default=3 * 50e6 * 4,
                    help="copies of K/V until their bytes reach this (L2 is ~50 MB)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    # compare_torch's Bench wants its own arguments
    cargs = ct.parse_args(["--decode", "--min-runs", "20"])
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    stream = torch.cuda.Stream(device=dev)
    out = open(a.json, "w") if a.json else None
    timers = a.timers.split(",")
    variants = parse_variants(a.variants)
    with torch.cuda.stream(stream):
        bench = ct.Bench(cargs)
        T = Timers(torch, bench, a)
        lib = ct.polyattn.load_library(None)
        tp = ct.TorchPolyattn(lib, torch, bench.dev)
        print("# gpu %s, torch %s, timers %s, graph %d calls x %d replays, scrub/dobench "
              "median of >= %d" % (torch.cuda.get_device_name(dev), torch.__version__, a.timers,
                                   a.graph_calls, a.graph_reps, a.runs), flush=True)
        B, Hq, Hkv, D = 8, 32, 8, 128
        gen = torch.Generator(device=dev)
        gen.manual_seed(1234)
        rows = []
        for Sk in [int(x) for x in a.sk.split(",")]:
            kv_bytes = 2 * B * Sk * Hkv * D * 2
            ncopy = max(1, min(8, int(-(-a.kv_bytes_rotate // kv_bytes))))
            qs = [torch.randn((B, 1, Hq, D), dtype=torch.bfloat16, device=dev, generator=gen)
                  for _ in range(ncopy)]
            ks = [torch.randn((B, Sk, Hkv, D), dtype=torch.bfloat16, device=dev, generator=gen)
                  for _ in range(ncopy)]
            vs = [torch.randn((B, Sk, Hkv, D), dtype=torch.bfloat16, device=dev, generator=gen)
                  for _ in range(ncopy)]
            os_ = [torch.empty_like(q) for q in qs]
            qts = [q.transpose(1, 2) for q in qs]
            kts = [k.transpose(1, 2) for k in ks]
            vts = [v.transpose(1, 2) for v in vs]
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                ref = F.scaled_dot_product_attention(qts[0], kts[0], vts[0],
                                                     enable_gqa=True).transpose(1, 2).float()
            bench.sync()

            def record(name, kind, res, extra=None):
                rec = {"Sk": Sk, "name": name, "kind": kind, "kv_bytes": kv_bytes,
                       "copies": ncopy}
                for t, ms in res.items():
                    rec[t + "_ms"] = ms
                    rec[t + "_tbps"] = kv_bytes / (ms * 1e-3) / 1e12
                rec.update(extra or {})
                rows.append(rec)
                if out:
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                print("%7d %-22s %s %s" % (Sk, name, " ".join(
                    "%s %8.4f ms %5.2f TB/s (%3.0f%%)" % (t, res[t], kv_bytes / res[t] / 1e9,
                                                         100 * kv_bytes / res[t] / 1e9 / 4.2)
                    for t in timers if t in res),
                    " ".join("%s=%s" % kv for kv in (extra or {}).items())), flush=True)

            kv_bhsd = None
            for name, env in variants:
                set_env(env)
                try:
                    kk, vv = ks, vs
                    if env.get("LAYOUT") == "bhsd":
                        # a diagnostic, not the layout: the same values with each
                        # kv head's keys contiguous ([B, Hkv, Sk, D] memory, passed as the
                        # strided [B, Sk, Hkv, D] view)
                        if kv_bhsd is None:
                            kv_bhsd = ([k.transpose(1, 2).contiguous().transpose(1, 2) for k in ks],
                                       [v.transpose(1, 2).contiguous().transpose(1, 2) for v in vs])
                        kk, vv = kv_bhsd
                    calls = [tp.prepare(qs[c], kk[c], vv[c], os_[c], False, None)[0]
                             for c in range(ncopy)]
                    os_[0].fill_(float("nan"))
                    calls[0]()
                    bench.sync()
                    o0 = os_[0].float()
                    finite = bool(torch.isfinite(o0).all())
                    md = float((o0 - ref).abs().max())
                    res = {}
                    if "graph" in timers:
                        res["graph"] = T.t_graph(calls, stream)
                    if "scrub" in timers:
                        res["scrub"] = T.t_scrub(calls[0])
                    if "dobench" in timers:
                        res["dobench"] = T.t_dobench(calls[0])
                    record(name, "polyattn", res, {"maxdiff_flash": "%.2e" % md,
                                                   "finite": finite,
                                                   "env": ",".join("%s=%s" % kv
                                                                   for kv in env.items())})
                except Exception as e:  # noqa: BLE001
                    print("%7d %-22s ERROR %s" % (Sk, name, ct._err_line(e)), flush=True)
                    rows.append({"Sk": Sk, "name": name, "error": ct._err_line(e)})
                set_env({})
            if not a.no_torch:
                for name, be in (("flash", SDPBackend.FLASH_ATTENTION),
                                 ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        with sdpa_kernel(be):
                            fns = [(lambda c=c: F.scaled_dot_product_attention(
                                qts[c], kts[c], vts[c], enable_gqa=True)) for c in range(ncopy)]
                            fns[0]()
                            bench.sync()
                            res = {}
                            if "graph" in timers:
                                res["graph"] = T.t_graph(fns, stream)
                            if "scrub" in timers:
                                res["scrub"] = T.t_scrub(fns[0])
                            if "dobench" in timers:
                                res["dobench"] = T.t_dobench(fns[0])
                        record(name, "torch", res)
                    except Exception as e:  # noqa: BLE001
                        print("%7d %-22s ERROR %s" % (Sk, name, ct._err_line(e)), flush=True)
            tp.release()
            del qs, ks, vs, os_, qts, kts, vts, ref, kv_bhsd
            torch.cuda.empty_cache()
    if out:
        out.close()
    bad = [r for r in rows if r.get("error") or r.get("finite") is False]
    print("# %d rows, %d errors or non-finite outputs" % (len(rows), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
