"""Decision 101's claim, checked on a GPU: the backward's gradients are bit for bit the
same with the 16-byte prep (POLYATTN_CUDA_BWD_PREP=v16) as with the default prep16 and
the per-row kernel ("old"), which sum D_i = rowsum(dO o O) in the same order. With
deterministic=True (dQ by the atomics-free kernel), so that the gradients of one form
repeat bit for bit from call to call.
Run: POLYATTN_LIB=... python3 bench/gpu/prep_bitwise.py (exit 1 on a difference)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bindings", "python"))
import polyattn  # noqa: E402

FORMS = ["default", "old", "v16"]
SHAPES = [  # B, S, H, D
    (2, 300, 4, 64), (2, 257, 3, 128), (1, 100, 2, 40), (2, 513, 4, 72), (3, 64, 2, 96),
    (1, 1, 1, 32), (2, 2048, 8, 128), (2, 2048, 16, 64),
]
bad = 0
gen = torch.Generator(device="cuda")
for dt in (torch.bfloat16, torch.float16):
    for (B, S, H, D) in SHAPES:
        for causal in (False, True):
            gen.manual_seed(B * 1000003 + S * 101 + H * 7 + D)
            q, k, v, do = (torch.randn((B, S, H, D), dtype=dt, device="cuda", generator=gen)
                           for _ in range(4))
            for t in (q, k, v):
                t.requires_grad_(True)
            grads = {}
            for form in FORMS:
                if form == "default":
                    os.environ.pop("POLYATTN_CUDA_BWD_PREP", None)
                else:
                    os.environ["POLYATTN_CUDA_BWD_PREP"] = form
                o = polyattn.flash_attn_func(q, k, v, causal=causal, deterministic=True)
                grads[form] = torch.autograd.grad(o, (q, k, v), do)
            torch.cuda.synchronize()
            same = all(torch.equal(a, b) for f in FORMS[1:]
                       for a, b in zip(grads["default"], grads[f]))
            bad += not same
            print("%s B%d S%d H%d D%d causal=%d: %s" % (str(dt)[6:], B, S, H, D, causal,
                                                      "bit-identical" if same else "DIFFER"))
os.environ.pop("POLYATTN_CUDA_BWD_PREP", None)
print("prep forms %s: %d of %d cases differ" % (FORMS, bad, 2 * len(SHAPES) * 2))
sys.exit(1 if bad else 0)
