#!/usr/bin/env python3
"""basic.py: attention with polyattn's Python package, NumPy on the CPU backend.

Run from a checkout (after building): python3 examples/basic.py
or with the installed package on PYTHONPATH (see README.md, "Python").
The same calls take PyTorch tensors (CUDA ones on the current stream, with
autograd) or any object with __dlpack__."""
import os
import sys

import numpy as np

try:
    import polyattn
except ImportError:  # a checkout: use bindings/python
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "bindings", "python"))
    import polyattn

print("polyattn %s, library %s" % (polyattn.version(), polyattn.library_path()))

rng = np.random.default_rng(0)
B, S, Hq, Hkv, D = 2, 128, 8, 2, 64  # grouped-query attention: 4 query heads per kv head
q = rng.standard_normal((B, S, Hq, D), dtype=np.float32)
k = rng.standard_normal((B, S, Hkv, D), dtype=np.float32)
v = rng.standard_normal((B, S, Hkv, D), dtype=np.float32)

# Causal attention and its log-sum-exp, FlashAttention's interface.
out, lse = polyattn.flash_attn_func(q, k, v, causal=True, return_lse=True)
print("out", out.shape, out.dtype, "lse", lse.shape)

# Row 0 of a causal attention sees only key 0: its output is v[:, 0] of its kv head.
assert np.allclose(out[:, 0, 0], v[:, 0, 0], atol=1e-6)

# Gradients through the library's backward, given dL/dout.
dout = np.ones_like(out)
dq, dk, dv = polyattn.flash_attn_backward(dout, q, k, v, out, lse, causal=True)
print("dq", dq.shape, "dk", dk.shape, "dv", dv.shape)

# Varlen: two sequences of 100 and 28 tokens packed into one [128, H, D] batch.
cu = np.array([0, 100, 128], dtype=np.int32)
out_v = polyattn.flash_attn_varlen_func(q[0], k[0], v[0], cu, cu, 100, 100, causal=True)
print("varlen out", out_v.shape)

# Errors name the argument at fault.
try:
    polyattn.flash_attn_func(q[:, :, :3], k, v)  # 3 query heads, 2 kv heads
except polyattn.PolyattnError as e:
    print("expected error:", e.status_name, "-", e.message)
