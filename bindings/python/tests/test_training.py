"""A training-style check (issue 4): a small attention layer — Q/K/V projections with
GQA, polyattn's attention, an output projection — run forward and backward through
autograd, and the gradients of its weights and input compared with the same layer
in float64 (PyTorch's SDPA) under DESIGN.md's tolerance rule. The rule's "naive"
implementation is the same layer whose attention is computed step by step in the
low-precision dtype (matmuls, softmax and P.V each rounded), the way a plain
framework implementation would.

Runs on CPU tensors wherever torch is installed and on CUDA tensors where a GPU and
polyattn's CUDA module are usable (there the backward is the tensor-core kernel for
fp16/bf16; POLYATTN_CUDA_KERNEL=volta runs the Volta one for fp16); skipped without
torch.
"""

import numpy as np
import pytest
from reference import tolerance_check

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import polyattn  # noqa: E402


def _cuda_usable():
    if not torch.cuda.is_available():
        return False
    return any(b["name"] == "cuda" and b["usable"] for b in polyattn.backends())


DEVICES = ["cpu"] + (["cuda"] if _cuda_usable() else [])
DTYPES = [torch.float32, torch.float16, torch.bfloat16]

HIDDEN, HQ, HKV, D = 256, 4, 2, 64


def _weights(seed):
    g = torch.Generator().manual_seed(seed)
    shapes = {"wq": (HQ * D, HIDDEN), "wk": (HKV * D, HIDDEN), "wv": (HKV * D, HIDDEN),
              "wo": (HIDDEN, HQ * D)}
    return {n: torch.randn(s, generator=g, dtype=torch.float64) / HIDDEN ** 0.5
            for n, s in shapes.items()}


def _attn_sdpa64(q, k, v, causal):
    """float64 SDPA on [B, S, H, D], GQA by repeating K/V, bottom-right causal mask."""
    g = q.shape[2] // k.shape[2]
    qt = q.transpose(1, 2)
    kt = k.repeat_interleave(g, dim=2).transpose(1, 2)
    vt = v.repeat_interleave(g, dim=2).transpose(1, 2)
    Sq, Sk = q.shape[1], k.shape[1]
    mask = None
    if causal:
        i = torch.arange(Sq, device=q.device)[:, None]
        j = torch.arange(Sk, device=q.device)[None, :]
        mask = j <= i + Sk - Sq
    return F.scaled_dot_product_attention(qt, kt, vt, attn_mask=mask).transpose(1, 2)


def _attn_naive(q, k, v, causal):
    """Attention step by step in the inputs' dtype: every stage rounded to it."""
    g = q.shape[2] // k.shape[2]
    qt = q.transpose(1, 2)
    kt = k.repeat_interleave(g, dim=2).transpose(1, 2)
    vt = v.repeat_interleave(g, dim=2).transpose(1, 2)
    s = (qt @ kt.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
    if causal:
        Sq, Sk = q.shape[1], k.shape[1]
        i = torch.arange(Sq, device=q.device)[:, None]
        j = torch.arange(Sk, device=q.device)[None, :]
        s = s.masked_fill(j > i + Sk - Sq, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return (p @ vt).transpose(1, 2)


def _layer(x, w, attn, causal):
    B, S, _ = x.shape
    q = (x @ w["wq"].T).view(B, S, HQ, D)
    k = (x @ w["wk"].T).view(B, S, HKV, D)
    v = (x @ w["wv"].T).view(B, S, HKV, D)
    o = attn(q, k, v, causal)
    return o.reshape(B, S, HQ * D) @ w["wo"].T


def _grads(dev, dtype, attn, causal, w64, x64, target64):
    """Weight and input gradients of loss = sum(layer(x) * target), in `dtype`."""
    w = {n: t.to(dev, dtype).requires_grad_() for n, t in w64.items()}
    x = x64.to(dev, dtype).requires_grad_()
    out = _layer(x, w, attn, causal)
    (out * target64.to(dev, dtype)).sum().backward()
    return {"x": x.grad, **{n: t.grad for n, t in w.items()}}


def _polyattn(q, k, v, causal):
    return polyattn.flash_attn_func(q, k, v, causal=causal)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_attention_layer_gradients(dev, dtype, causal):
    B, S = 2, 96
    w64 = _weights(1)
    g = torch.Generator().manual_seed(2)
    x64 = torch.randn(B, S, HIDDEN, generator=g, dtype=torch.float64)
    target64 = torch.randn(B, S, HIDDEN, generator=g, dtype=torch.float64)
    # The reference starts from the dtype-rounded weights and inputs, so it computes
    # exactly what the low-precision layer is asked to compute.
    rnd = lambda t: t.to(dtype).double()  # noqa: E731
    ref = _grads("cpu", torch.float64, _attn_sdpa64, causal,
                 {n: rnd(t) for n, t in w64.items()}, rnd(x64), rnd(target64))
    ours = _grads(dev, dtype, _polyattn, causal, w64, x64, target64)
    naive = _grads(dev, dtype, _attn_naive, causal, w64, x64, target64)
    name = str(dtype).replace("torch.", "")
    for n in ref:
        r = ref[n].numpy()
        ok, msg = tolerance_check(ours[n].detach().double().cpu().numpy(), r,
                                  naive[n].detach().double().cpu().numpy(), name,
                                  name="d" + n)
        assert ok, msg
        assert np.abs(r).max() > 0, "a zero gradient checks nothing"
