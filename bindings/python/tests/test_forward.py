"""The NumPy interface on the CPU backend against the float64 reference, with
DESIGN.md's tolerance rule: every flash_attn_func option, GQA/MQA, layouts,
varlen, KV cache, LSE and the sparsity modes."""

import numpy as np
import pytest
from conftest import make_qkv, randn
from reference import attention_ref, lse_check, tolerance_check, varlen_ref

import polyattn

DTYPES = [np.float32, np.float16]

# (name, shapes, flash_attn_func options, layout)
CASES = [
    ("mha", dict(B=2, Sq=17, Sk=17, Hq=2, Hkv=2, D=32), {}, "bshd"),
    ("gqa causal Sq<Sk", dict(B=2, Sq=13, Sk=64, Hq=4, Hkv=2, D=64), dict(causal=True), "bshd"),
    ("mqa causal Sq>Sk empty rows", dict(B=1, Sq=17, Sk=3, Hq=4, Hkv=1, D=40),
     dict(causal=True), "bshd"),
    ("window softcap alibi scale", dict(B=2, Sq=33, Sk=50, Hq=4, Hkv=2, D=72),
     dict(window_size=(7, 3), softcap=5.0, alibi=True, softmax_scale=0.3), "bshd"),
    ("causal + left window", dict(B=1, Sq=64, Sk=64, Hq=2, Hkv=1, D=128),
     dict(causal=True, window_size=(16, -1)), "bshd"),
    ("alibi per batch", dict(B=2, Sq=9, Sk=30, Hq=3, Hkv=1, D=16), dict(alibi="batch"), "bshd"),
    ("Dv != D", dict(B=1, Sq=20, Sk=31, Hq=2, Hkv=2, D=64, Dv=32), {}, "bshd"),
    ("bhsd storage", dict(B=2, Sq=31, Sk=47, Hq=4, Hkv=2, D=64), dict(causal=True), "bhsd"),
    ("packed qkv", dict(B=2, Sq=40, Sk=40, Hq=3, Hkv=3, D=32), dict(causal=True), "packed"),
    ("head dim 256", dict(B=1, Sq=5, Sk=70, Hq=2, Hkv=1, D=256), {}, "bshd"),
]


def _alibi(rng, opt, B, Hq):
    if opt is True:
        return (0.5 / (np.arange(Hq) + 1)).astype(np.float32)
    if opt == "batch":
        return rng.uniform(0.05, 0.5, (B, Hq)).astype(np.float32)
    return None


def _check_all(out, lse, q, k, v, dtype, softcap=0.0, **ref_kw):
    dt = np.dtype(dtype).name
    ref_o, ref_l = attention_ref(q, k, v, softcap=softcap, **ref_kw)
    nv_o, _ = attention_ref(q, k, v, softcap=softcap, mode="naive", dtype=dt, **ref_kw)
    ok, msg = tolerance_check(out, ref_o, nv_o, dt, softcap=softcap > 0)
    assert ok, msg
    if lse is not None:
        ok, msg = lse_check(lse, ref_l)
        assert ok, msg


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,shape,opts,layout", CASES, ids=[c[0] for c in CASES])
def test_flash_attn_func(rng, dtype, name, shape, opts, layout):
    opts = dict(opts)
    q, k, v = make_qkv(rng, dtype, layout=layout, **shape)
    alibi = _alibi(rng, opts.pop("alibi", None), shape["B"], shape["Hq"])
    out, lse = polyattn.flash_attn_func(q, k, v, alibi_slopes=alibi, return_lse=True, **opts)
    assert out.shape == q.shape[:3] + (v.shape[3],) and out.dtype == q.dtype
    assert lse.shape == (shape["B"], shape["Hq"], shape["Sq"]) and lse.dtype == np.float32
    _check_all(out, lse, q, k, v, dtype, softcap=opts.get("softcap", 0.0),
               scale=opts.get("softmax_scale"), causal=opts.get("causal", False),
               window=opts.get("window_size", (-1, -1)), alibi=alibi)


def test_empty_rows_are_zero_and_neg_inf(rng):
    q, k, v = make_qkv(rng, np.float32, 1, 6, 3, 2, 2, 8)
    out, lse = polyattn.flash_attn_func(q, k, v, causal=True, return_lse=True)
    # rows 0..2 sit before the first key (diag = i - 3 < 0): nothing kept
    assert np.all(out[0, :3] == 0) and np.all(np.isneginf(lse[0, :, :3]))
    assert np.all(np.isfinite(lse[0, :, 3:]))


def test_every_element_written(rng):
    """polyattn.forward into NaN-poisoned outputs the caller owns."""
    q, k, v = make_qkv(rng, np.float32, 2, 30, 45, 4, 2, 64)
    out = np.full(q.shape, np.nan, np.float32)
    lse = np.full((2, 4, 30), np.nan, np.float32)
    polyattn.forward(q, k, v, out, lse, causal=True)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(lse))
    _check_all(out, lse, q, k, v, np.float32, causal=True)


def test_wrong_scale_fails_the_check(rng):
    """The comparison can fail: a 10% wrong scale must not pass the rule."""
    q, k, v = make_qkv(rng, np.float32, 2, 32, 32, 2, 2, 64)
    out = polyattn.flash_attn_func(q, k, v, softmax_scale=0.9 / 8)
    ref, _ = attention_ref(q, k, v)
    naive, _ = attention_ref(q, k, v, mode="naive")
    ok, msg = tolerance_check(out, ref, naive)
    assert not ok, "a wrong scale passed: " + msg
    out = polyattn.flash_attn_func(q, k, v)  # and the right one passes
    assert tolerance_check(out, ref, naive)[0]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("causal", [False, True])
def test_varlen(rng, dtype, causal):
    seqs_q = [5, 0, 17, 33]  # one empty sequence
    seqs_k = [9, 4, 17, 20]
    cu_q = np.concatenate([[0], np.cumsum(seqs_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(seqs_k)]).astype(np.int32)
    Hq, Hkv, D = 4, 2, 64
    q = randn(rng, (cu_q[-1], Hq, D), dtype)
    k = randn(rng, (cu_k[-1], Hkv, D), dtype)
    v = randn(rng, (cu_k[-1], Hkv, D), dtype)
    out, lse = polyattn.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(seqs_q), max(seqs_k),
                                              causal=causal, window_size=(-1, -1),
                                              return_lse=True)
    assert lse.shape == (Hq, cu_q[-1])
    dt = np.dtype(dtype).name
    ref_o, ref_l = varlen_ref(q, k, v, cu_q, cu_k, causal=causal)
    nv_o, _ = varlen_ref(q, k, v, cu_q, cu_k, causal=causal, mode="naive", dtype=dt)
    ok, msg = tolerance_check(out, ref_o, nv_o, dt)
    assert ok, msg
    ok, msg = lse_check(lse, ref_l)
    assert ok, msg
    # max_seqlen may be left out on the CPU (read from cu_seqlens)
    out2 = polyattn.flash_attn_varlen_func(q, k, v, cu_q, cu_k, causal=causal)
    assert np.array_equal(out, out2)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_kvcache(rng, dtype):
    B, S_cache, Hq, Hkv, D = 3, 40, 4, 1, 32
    k_cache = randn(rng, (B, S_cache, Hkv, D), dtype)
    v_cache = randn(rng, (B, S_cache, Hkv, D), dtype)
    seqlens = np.array([5, 17, 30], np.int32)
    q = randn(rng, (B, 2, Hq, D), dtype)
    k_new = randn(rng, (B, 2, Hkv, D), dtype)
    v_new = randn(rng, (B, 2, Hkv, D), dtype)
    kc0 = k_cache.copy()
    out, lse = polyattn.flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new,
                                                cache_seqlens=seqlens, causal=True,
                                                return_softmax_lse=True)
    used = seqlens + 2
    for b in range(B):  # the new keys were written in place, nothing else changed
        assert np.array_equal(k_cache[b, seqlens[b]:used[b]], k_new[b])
        assert np.array_equal(v_cache[b, seqlens[b]:used[b]], v_new[b])
        assert np.array_equal(k_cache[b, :seqlens[b]], kc0[b, :seqlens[b]])
        assert np.array_equal(k_cache[b, used[b]:], kc0[b, used[b]:])
    _check_all(out, lse, q, k_cache, v_cache, dtype, causal=True, seqused=used)
    # an int cache_seqlens, no new keys, a window
    out = polyattn.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=11,
                                           window_size=(4, 0))
    _check_all(out, None, q, k_cache, v_cache, dtype, seqused=np.full(B, 11),
               window=(4, 0))


def test_kvcache_unsupported_options(rng):
    q, k, v = make_qkv(rng, np.float32, 1, 1, 8, 2, 2, 16)
    with pytest.raises(NotImplementedError, match="block_table"):
        polyattn.flash_attn_with_kvcache(q, k, v, block_table=np.zeros((1, 1), np.int32))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_block_sparsity(rng, dtype):
    B, S, Hq, Hkv, D, bs = 2, 100, 2, 1, 64, 16
    q, k, v = make_qkv(rng, dtype, B, S, S, Hq, Hkv, D)
    nb = -(-S // bs)
    mask = rng.random((B, Hq, nb, nb)) < 0.4
    mask[..., 0] = True
    out, lse = polyattn.flash_attn_func(q, k, v, causal=True, sparsity="block",
                                        block_mask=mask, block_size=(bs, bs), return_lse=True)
    _check_all(out, lse, q, k, v, dtype, causal=True, block_mask=mask, block=(bs, bs))
    # a broadcast [1, 1, nqb, nkb] uint8 mask
    m1 = mask[:1, :1].astype(np.uint8)
    out = polyattn.flash_attn_func(q, k, v, sparsity="block", block_mask=m1,
                                   block_size=(bs, bs))
    _check_all(out, None, q, k, v, dtype, block_mask=m1, block=(bs, bs))


def test_varlen_block_sparsity(rng):
    seqs = [30, 70]
    cu = np.array([0, 30, 100], np.int32)
    q, k, v = (randn(rng, (100, 2, 32), np.float32) for _ in range(3))
    mask = rng.random((2, 2, 5, 5)) < 0.5
    mask[..., 0] = True
    out = polyattn.flash_attn_varlen_func(q, k, v, cu, cu, max(seqs), max(seqs), causal=True,
                                          sparsity="block", block_mask=mask,
                                          block_size=16)
    ref, _ = varlen_ref(q, k, v, cu, cu, causal=True, block_mask=mask, block=(16, 16))
    nv, _ = varlen_ref(q, k, v, cu, cu, causal=True, block_mask=mask, block=(16, 16),
                       mode="naive")
    ok, msg = tolerance_check(out, ref, nv)
    assert ok, msg


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_sparsity_2_4(rng, dtype):
    q, k, v = make_qkv(rng, dtype, 1, 37, 53, 4, 2, 32)
    out, lse = polyattn.flash_attn_func(q, k, v, causal=True, sparsity="2:4",
                                        return_lse=True)
    _check_all(out, lse, q, k, v, dtype, causal=True, nm24=True)
    dense = polyattn.flash_attn_func(q, k, v, causal=True)
    assert not np.allclose(out, dense)  # 2:4 changed something


def test_auto_block_matches_its_mask(rng):
    """AUTO_BLOCK's result is exact attention under the mask it reports."""
    B, S, H, D = 1, 512, 2, 64
    q, k, v = make_qkv(rng, np.float32, B, S, S, H, H, D)
    out, lse, mask = polyattn.flash_attn_func(q, k, v, causal=True, sparsity="auto",
                                              block_threshold=0.5, auto_density_cutoff=1.0,
                                              return_lse=True, return_block_mask=True)
    assert mask.shape == (B, H, 8, 8) and mask.dtype == np.uint8
    allowed = np.tril(np.ones((8, 8), bool))
    assert 0 < mask[0, 0][allowed].sum() < allowed.sum(), "expected a sparse choice"
    _check_all(out, lse, q, k, v, np.float32, causal=True, block_mask=mask)


def test_dlpack_objects(rng):
    """Any __dlpack__ object: CPU float32 ones come back as NumPy arrays."""
    class Wrapped:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None, **kw):  # newer consumers pass max_version
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    q, k, v = make_qkv(rng, np.float32, 1, 10, 12, 2, 2, 16)
    out = polyattn.flash_attn_func(Wrapped(q), Wrapped(k), Wrapped(v), causal=True)
    assert isinstance(out, np.ndarray)
    assert np.array_equal(out, polyattn.flash_attn_func(q, k, v, causal=True))
    # and the low-level call reads and writes DLPack views directly (no NumPy import)
    o = np.full(q.shape, np.nan, np.float32)
    polyattn.forward(Wrapped(q), Wrapped(k), Wrapped(v), Wrapped(o), causal=True)
    assert np.array_equal(o, out)
