"""PyTorch: forward and gradients against torch.nn.functional.scaled_dot_product_attention
(in float64, as the reference of the tolerance rule), torch.library.opcheck,
torch.compile, streams, varlen, KV cache and DLPack.

Runs on CPU tensors wherever torch is installed, and on CUDA tensors as well when a
GPU and polyattn's CUDA module are usable; skipped (reported) without torch. On CUDA
the backward runs the simple fp32 kernel (backends/cuda/bwd_simple.cu).
"""

import numpy as np
import pytest
from reference import attention_ref, lse_check, tolerance_check, varlen_ref

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import polyattn  # noqa: E402
from polyattn import capi  # noqa: E402


def _cuda_usable():
    if not torch.cuda.is_available():
        return False
    return any(b["name"] == "cuda" and b["usable"] for b in polyattn.backends())


DEVICES = ["cpu"] + (["cuda"] if _cuda_usable() else [])
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def _np(t):
    """A low-precision tensor's values, exactly, as float32 NumPy."""
    return t.detach().float().cpu().numpy()


def _np64(t):
    return t.detach().double().cpu().numpy()


def _dtname(dt):
    return str(dt).replace("torch.", "")


def _qkv(dev, dtype, B, Sq, Sk, Hq, Hkv, D, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    mk = [(B, Sq, Hq, D), (B, Sk, Hkv, D), (B, Sk, Hkv, D)]
    return [torch.randn(s, generator=g).to(dev, dtype).requires_grad_(grad) for s in mk]


def _sdpa64(q, k, v, causal=False, window=(-1, -1), scale=None, alibi=None):
    """SDPA in float64 on [B, S, H, D] tensors, FlashAttention's masks (bottom-right)."""
    Sq, Sk, Hq, Hkv = q.shape[1], k.shape[1], q.shape[2], k.shape[2]
    g = Hq // Hkv
    qt = q.double().transpose(1, 2)
    kt = k.double().repeat_interleave(g, dim=2).transpose(1, 2)
    vt = v.double().repeat_interleave(g, dim=2).transpose(1, 2)
    i = torch.arange(Sq, device=q.device)[:, None]
    j = torch.arange(Sk, device=q.device)[None, :]
    diag = i + Sk - Sq
    keep = torch.ones(Sq, Sk, dtype=torch.bool, device=q.device)
    if causal:
        keep &= j <= diag
    if window[0] >= 0:
        keep &= j >= diag - window[0]
    if window[1] >= 0:
        keep &= j <= diag + window[1]
    bias = torch.zeros(Sq, Sk, dtype=torch.float64, device=q.device).masked_fill(
        ~keep, float("-inf"))
    bias = bias.expand(q.shape[0], Hq, Sq, Sk)
    if alibi is not None:
        bias = bias - alibi.double().to(q.device)[None, :, None, None] * \
            (diag - j).abs().double()[None, None]
    o = F.scaled_dot_product_attention(qt, kt, vt, attn_mask=bias, scale=scale)
    return o.transpose(1, 2)


def _check(out, ref, naive, dtype, name="out", softcap=False):
    ok, msg = tolerance_check(_np(out), ref, naive, _dtname(dtype), softcap=softcap, name=name)
    assert ok, msg


CASES = [
    ("mha", dict(B=2, Sq=64, Sk=64, Hq=2, Hkv=2, D=64), {}),
    ("gqa causal Sq<Sk", dict(B=1, Sq=17, Sk=128, Hq=4, Hkv=2, D=64), dict(causal=True)),
    ("mqa window alibi scale", dict(B=2, Sq=64, Sk=113, Hq=4, Hkv=1, D=40),
     dict(window_size=(30, 8), alibi=True, softmax_scale=0.25)),
    ("d128 causal", dict(B=1, Sq=128, Sk=128, Hq=2, Hkv=1, D=128), dict(causal=True)),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=_dtname)
@pytest.mark.parametrize("name,shape,opts", CASES, ids=[c[0] for c in CASES])
def test_forward_and_grads_vs_sdpa(dev, dtype, name, shape, opts):
    opts = dict(opts)
    alibi = None
    if opts.pop("alibi", False):
        alibi = (0.3 / (torch.arange(shape["Hq"]) + 1)).float().to(dev)
    q, k, v = _qkv(dev, dtype, seed=len(name), grad=True, **shape)
    out, lse = polyattn.flash_attn_func(q, k, v, alibi_slopes=alibi, return_lse=True, **opts)
    # float64 leaves for SDPA, so that its gradients are not rounded back to dtype
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    assert out.dtype == dtype and out.device == q.device and lse.dtype == torch.float32
    assert not lse.requires_grad
    sdpa_kw = dict(causal=opts.get("causal", False), window=opts.get("window_size", (-1, -1)),
                   scale=opts.get("softmax_scale"), alibi=alibi)
    ref = _sdpa64(q64, k64, v64, **sdpa_kw)
    ref_kw = dict(scale=opts.get("softmax_scale"), causal=sdpa_kw["causal"],
                  window=sdpa_kw["window"], alibi=None if alibi is None else _np(alibi))
    nq, nk, nv = _np(q), _np(k), _np(v)
    o64, l64 = attention_ref(nq, nk, nv, **ref_kw)
    assert np.max(np.abs(_np64(ref) - o64)) < 1e-9, "reference and SDPA disagree"
    naive = attention_ref(nq, nk, nv, mode="naive", dtype=_dtname(dtype), **ref_kw)
    _check(out, _np64(ref), naive[0], dtype)
    ok, msg = lse_check(_np(lse), l64)
    assert ok, msg

    dout = torch.randn(out.shape, generator=torch.Generator().manual_seed(7)).to(dev, dtype)
    out.backward(dout)
    gref = torch.autograd.grad(ref, (q64, k64, v64), dout.double())
    gnaive = attention_ref(nq, nk, nv, mode="naive", dtype=_dtname(dtype), dout=_np(dout),
                           **ref_kw)[2:]
    for nm, g, r, n in zip(("dq", "dk", "dv"), (q.grad, k.grad, v.grad), gref, gnaive):
        assert g.dtype == dtype and g.shape == r.shape
        _check(g, _np64(r), n, dtype, name=nm)


def _fwd_args(dev, dtype, requires_grad, sparsity=0, causal=True):
    q, k, v = _qkv(dev, dtype, 2, 33, 48, 4, 2, 32, grad=requires_grad)
    bm = None
    if sparsity == capi.SPARSITY_BLOCK:
        bm = torch.ones(1, 1, 3, 3, dtype=torch.uint8, device=dev)
        bm[..., 0, 2] = 0
    return (q, k, v, None, None, 0, 0, None, None, bm, 0.0, causal, -1, -1, 0.0, sparsity,
            16, 16, 0.0, 0.0, False)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("sparsity", [capi.SPARSITY_NONE, capi.SPARSITY_BLOCK,
                                      capi.SPARSITY_AUTO_BLOCK])
def test_opcheck_fwd(dev, sparsity):
    from polyattn import _torch  # noqa: F401 (registers the ops)
    torch.library.opcheck(torch.ops.polyattn.fwd.default,
                          _fwd_args(dev, torch.float32, True, sparsity))


@pytest.mark.parametrize("dev", DEVICES)
def test_opcheck_bwd(dev):
    from polyattn import _torch
    q, k, v = _qkv(dev, torch.float32, 2, 33, 48, 4, 2, 32)
    out, lse, _ = _torch.fwd(q, k, v, None, None, 0, 0, None, None, None, 0.0, True, -1, -1,
                             0.0, 0, 0, 0, 0.0, 0.0, False)
    dout = torch.randn_like(out)
    torch.library.opcheck(torch.ops.polyattn.bwd.default,
                          (dout, q, k, v, out, lse, None, None, 0, 0, None, None, None, 0.0,
                           True, -1, -1, 0.0, 0, 0, 0, False))


# inductor on CPU tensors needs a C++ compiler at run time; on CUDA it uses triton
COMPILE_CASES = [("cpu", "aot_eager")] + [("cuda", b) for b in ("aot_eager", "inductor")
                                          if "cuda" in DEVICES]


@pytest.mark.parametrize("dev,backend", COMPILE_CASES)
def test_torch_compile(dev, backend):
    """fullgraph=True: the whole function, polyattn's frontend included, is one graph
    (the custom op is opaque to it, traced through its fake implementation)."""
    dtype = torch.float32 if dev == "cpu" else torch.bfloat16
    q, k, v = _qkv(dev, dtype, 2, 64, 64, 4, 2, 64, grad=dev == "cpu")

    def f(q, k, v):
        return polyattn.flash_attn_func(q * 1.5, k, v, causal=True) * 2

    cf = torch.compile(f, backend=backend, fullgraph=True)
    a = f(q, k, v)
    b = cf(q, k, v)
    torch.testing.assert_close(a, b)
    if dev == "cpu":
        ga = torch.autograd.grad(a.sum(), (q, k, v))
        gb = torch.autograd.grad(b.sum(), (q, k, v))
        for x, y in zip(ga, gb):
            torch.testing.assert_close(x, y)


@pytest.mark.skipif("cuda" not in DEVICES, reason="no usable CUDA device / polyattn module")
def test_cuda_current_stream():
    """The call is enqueued on torch's current stream, side streams included."""
    q, k, v = _qkv("cuda", torch.bfloat16, 4, 1024, 1024, 8, 8, 64)
    ref = polyattn.flash_attn_func(q, k, v, causal=True)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            out = polyattn.flash_attn_func(q, k, v, causal=True)
        res = out.clone()  # ordered after the call on s only if it ran on s
    torch.cuda.current_stream().wait_stream(s)
    torch.testing.assert_close(res, ref, atol=0, rtol=0)


@pytest.mark.parametrize("dev", DEVICES)
def test_varlen_and_kvcache(dev):
    dtype = torch.float16
    cu = torch.tensor([0, 17, 17, 81], dtype=torch.int32, device=dev)
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(81, 4, 64, generator=g).to(dev, dtype) for _ in range(3))
    k, v = k[:, :2], v[:, :2]  # GQA, strided views
    out, lse = polyattn.flash_attn_varlen_func(q, k, v, cu, cu, 64, 64, causal=True,
                                              return_lse=True)
    cun = cu.cpu().numpy()
    ref, rl = varlen_ref(_np(q), _np(k), _np(v), cun, cun, causal=True)
    nv, _ = varlen_ref(_np(q), _np(k), _np(v), cun, cun, causal=True, mode="naive",
                       dtype="float16")
    _check(out, ref, nv, dtype)
    assert lse_check(_np(lse), rl)[0]

    B, S = 3, 64
    kc = torch.randn(B, S, 2, 64, generator=g).to(dev, dtype)
    vc = torch.randn(B, S, 2, 64, generator=g).to(dev, dtype)
    qn = torch.randn(B, 1, 4, 64, generator=g).to(dev, dtype)
    kn = torch.randn(B, 1, 2, 64, generator=g).to(dev, dtype)
    vn = torch.randn(B, 1, 2, 64, generator=g).to(dev, dtype)
    seqlens = torch.tensor([3, 40, 63], dtype=torch.int32, device=dev)
    out = polyattn.flash_attn_with_kvcache(qn, kc, vc, kn, vn, cache_seqlens=seqlens,
                                           causal=True)
    used = (seqlens + 1).cpu().numpy()
    for b in range(B):
        assert torch.equal(kc[b, used[b] - 1], kn[b, 0])
    ref, _ = attention_ref(_np(qn), _np(kc), _np(vc), causal=True, seqused=used)
    nv, _ = attention_ref(_np(qn), _np(kc), _np(vc), causal=True, seqused=used, mode="naive",
                          dtype="float16")
    _check(out, ref, nv, dtype)


def test_auto_block_grads_use_the_chosen_mask():
    q, k, v = _qkv("cpu", torch.float32, 1, 512, 512, 2, 2, 64, grad=True)
    out, mask = polyattn.flash_attn_func(q, k, v, causal=True, sparsity="auto",
                                         block_threshold=0.5, auto_density_cutoff=1.0,
                                         return_block_mask=True)
    dout = torch.randn_like(out)
    out.backward(dout)
    m = mask.numpy()
    r = attention_ref(_np(q), _np(k), _np(v), causal=True, block_mask=m, dout=_np(dout))
    n = attention_ref(_np(q), _np(k), _np(v), causal=True, block_mask=m, dout=_np(dout),
                      mode="naive")
    _check(out, r[0], n[0], torch.float32)
    for nm, g_, rr, nn in zip(("dq", "dk", "dv"), (q.grad, k.grad, v.grad), r[2:], n[2:]):
        _check(g_, rr, nn, torch.float32, name=nm)


def test_bf16_through_dlpack():
    """A bf16 __dlpack__ object (not NumPy-representable) comes back as a torch tensor."""
    class Wrapped:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None, **kw):  # newer consumers pass max_version
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    q, k, v = _qkv("cpu", torch.bfloat16, 1, 20, 30, 2, 1, 64)
    out = polyattn.flash_attn_func(Wrapped(q), Wrapped(k), Wrapped(v), causal=True)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16
    torch.testing.assert_close(out, polyattn.flash_attn_func(q, k, v, causal=True), atol=0,
                               rtol=0)
