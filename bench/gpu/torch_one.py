#!/usr/bin/env python3
"""One PyTorch SDPA backend on one shape, for a profiler: a few warm-up calls, then
N calls between torch.cuda.profiler.start() and stop() (so `ncu --profile-from-start
off` sees only those). Layout as the issue's sweeps: q [B, Sq, Hq, D] and k, v
[B, Sk, Hkv, D] memory, passed to SDPA as [B, H, S, D] views.

    python3 torch_one.py --backend flash|cudnn --b 2 --hq 16 --hkv 16 --sq 8192 --sk 8192 --d 128
"""
import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ap = argparse.ArgumentParser()
ap.add_argument("--backend", default="flash")
for n, v in (("b", 2), ("hq", 16), ("hkv", 16), ("sq", 8192), ("sk", 8192), ("d", 128), ("calls", 1)):
    ap.add_argument("--" + n, type=int, default=v)
ap.add_argument("--causal", action="store_true")
a = ap.parse_args()
be = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[a.backend]
q = torch.randn(a.b, a.sq, a.hq, a.d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
k = torch.randn(a.b, a.sk, a.hkv, a.d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
v = torch.randn(a.b, a.sk, a.hkv, a.d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
gqa = a.hq != a.hkv
with sdpa_kernel(be):
    for _ in range(3):
        F.scaled_dot_product_attention(q, k, v, is_causal=a.causal, enable_gqa=gqa)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _ in range(a.calls):
        F.scaled_dot_product_attention(q, k, v, is_causal=a.causal, enable_gqa=gqa)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
print("ok", a)
