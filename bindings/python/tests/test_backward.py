"""Gradients through polyattn.flash_attn_backward (the library's backward on the
CPU backend) against the float64 reference, by the tolerance rule."""

import numpy as np
import pytest
from conftest import make_qkv, randn
from reference import attention_ref, tolerance_check, varlen_ref

import polyattn

CASES = [
    # sizes as tests/test_backward.c's: at a few keys the naive reference's error (the
    # yardstick) is a few ulp, below the noise of the library's vectorised exp
    ("mha", dict(B=2, Sq=64, Sk=64, Hq=2, Hkv=2, D=64), {}),
    ("gqa causal Sq<Sk", dict(B=1, Sq=17, Sk=128, Hq=4, Hkv=2, D=64), dict(causal=True)),
    ("mqa window softcap alibi", dict(B=2, Sq=64, Sk=113, Hq=4, Hkv=1, D=40),
     dict(window_size=(30, 8), softcap=4.0, alibi=True, softmax_scale=0.25)),
    ("causal Sq>Sk empty rows", dict(B=1, Sq=113, Sk=64, Hq=2, Hkv=2, D=32),
     dict(causal=True)),
]


def _grads_check(grads, q, k, v, dout, dtype, softcap=0.0, **kw):
    dt = np.dtype(dtype).name
    ref = attention_ref(q, k, v, softcap=softcap, dout=dout, **kw)
    naive = attention_ref(q, k, v, softcap=softcap, dout=dout, mode="naive", dtype=dt, **kw)
    for name, g, r, n in zip(("dq", "dk", "dv"), grads, ref[2:], naive[2:]):
        assert g.shape == r.shape and g.dtype == dtype
        ok, msg = tolerance_check(g, r, n, dt, softcap=softcap > 0, name=name)
        assert ok, msg


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,shape,opts", CASES, ids=[c[0] for c in CASES])
def test_backward(rng, dtype, name, shape, opts):
    opts = dict(opts)
    q, k, v = make_qkv(rng, dtype, **shape)
    alibi = (0.3 / (np.arange(shape["Hq"]) + 1)).astype(np.float32) if opts.pop("alibi", 0) \
        else None
    out, lse = polyattn.flash_attn_func(q, k, v, alibi_slopes=alibi, return_lse=True, **opts)
    dout = randn(rng, out.shape, dtype)
    grads = polyattn.flash_attn_backward(dout, q, k, v, out, lse, alibi_slopes=alibi,
                                         deterministic=True, **opts)
    _grads_check(grads, q, k, v, dout, dtype, softcap=opts.get("softcap", 0.0),
                 scale=opts.get("softmax_scale"), causal=opts.get("causal", False),
                 window=opts.get("window_size", (-1, -1)), alibi=alibi)


def test_backward_block_sparse_and_2_4(rng):
    q, k, v = make_qkv(rng, np.float32, 1, 128, 128, 2, 1, 64)
    mask = rng.random((1, 2, 8, 8)) < 0.5
    mask[..., 0] = True
    for kw, ref_kw in ((dict(sparsity="block", block_mask=mask, block_size=16),
                        dict(block_mask=mask, block=(16, 16))),
                       (dict(sparsity="2:4"), dict(nm24=True))):
        out, lse = polyattn.flash_attn_func(q, k, v, causal=True, return_lse=True, **kw)
        dout = randn(rng, out.shape, np.float32)
        grads = polyattn.flash_attn_backward(dout, q, k, v, out, lse, causal=True, **kw)
        _grads_check(grads, q, k, v, dout, np.float32, causal=True, **ref_kw)


def test_backward_varlen(rng):
    cu = np.array([0, 17, 17, 81], np.int32)  # one empty sequence
    q, k, v = (randn(rng, (81, 2, 64), np.float32) for _ in range(3))
    out, lse = polyattn.flash_attn_varlen_func(q, k, v, cu, cu, 64, 64, causal=True,
                                              return_lse=True)
    dout = randn(rng, out.shape, np.float32)
    grads = polyattn.flash_attn_backward(dout, q, k, v, out, lse, causal=True,
                                         cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=64,
                                         max_seqlen_k=64)
    ref = varlen_ref(q, k, v, cu, cu, dout=dout, causal=True)
    naive = varlen_ref(q, k, v, cu, cu, dout=dout, causal=True, mode="naive")
    for name, g, r, n in zip(("dq", "dk", "dv"), grads, ref[2:], naive[2:]):
        ok, msg = tolerance_check(g, r, n, name=name)
        assert ok, msg


def test_backward_finite_differences(rng):
    """The reference's gradient itself, against central differences of its forward
    (so the gradient checks above compare against something right)."""
    q, k, v = make_qkv(rng, np.float64, 1, 4, 5, 2, 1, 3)
    dout = rng.standard_normal(q.shape)
    kw = dict(causal=True, softcap=2.0, alibi=np.array([0.2, 0.4]))
    _, _, dq, dk, dv = attention_ref(q, k, v, dout=dout, **kw)
    eps = 1e-6
    for x, g in ((q, dq), (k, dk), (v, dv)):
        idx = tuple(rng.integers(0, n) for n in x.shape)
        x0 = x[idx]
        x[idx] = x0 + eps
        fp = np.sum(attention_ref(q, k, v, **kw)[0] * dout)
        x[idx] = x0 - eps
        fm = np.sum(attention_ref(q, k, v, **kw)[0] * dout)
        x[idx] = x0
        assert abs((fp - fm) / (2 * eps) - g[idx]) < 1e-6 * max(1, abs(g[idx]))


def test_deterministic(rng):
    q, k, v = make_qkv(rng, np.float32, 2, 200, 200, 4, 2, 64)
    out, lse = polyattn.flash_attn_func(q, k, v, causal=True, return_lse=True)
    dout = randn(rng, out.shape, np.float32)
    a = polyattn.flash_attn_backward(dout, q, k, v, out, lse, causal=True, deterministic=True)
    b = polyattn.flash_attn_backward(dout, q, k, v, out, lse, causal=True, deterministic=True)
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
