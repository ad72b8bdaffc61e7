"""The FlashAttention-style functions. Each takes NumPy arrays (CPU backend),
PyTorch tensors (CPU, or CUDA zero-copy on the current stream; autograd and
torch.compile through polyattn._torch) or any object with __dlpack__, and returns
results of the same kind.

Layout as FlashAttention: q [B, Sq, Hq, D], k [B, Sk, Hkv, D], v [B, Sk, Hkv, Dv]
(varlen: [total, H, D] with cu_seqlens); the head dim must be contiguous, every
other stride is free. LSE is float32 [B, Hq, Sq] (varlen [Hq, total_q]).
"""

import sys

from . import _core
from ._arrays import has_dlpack, is_numpy, is_torch

# Keyword-only options shared by every function (after FlashAttention's own).
_SPARSE_DOC = """
    sparsity: None (dense), 'block' (block_mask, one byte per (block_q x block_k)
        block, [1|B, 1|Hq, ceil(Sq/block_q), ceil(Sk/block_k)], nonzero keeps),
        'auto' (AUTO_BLOCK: an estimated block mask keeping block_threshold of the
        softmax mass; an approximation) or '2:4' (two largest scores of every four keys).
    block_size: (block_q, block_k), default (64, 64).
    block_threshold, auto_density_cutoff: AUTO_BLOCK's parameters (None: 0.95, 0.3).
    return_block_mask: with sparsity='auto', also return the mask it chose.
"""


# torch.Tensor once torch is imported: a plain isinstance check is what torch.compile
# (Dynamo) traces without a graph break.
_TorchTensor = getattr(sys.modules.get("torch"), "Tensor", None)


def _kind(*xs):
    """'torch', 'numpy' or 'dlpack' by the first array argument."""
    global _TorchTensor
    x = xs[0]
    if _TorchTensor is not None and isinstance(x, _TorchTensor):
        return "torch"
    if is_torch(x):
        import torch
        _TorchTensor = torch.Tensor
        return "torch"
    if is_numpy(x):
        return "numpy"
    if has_dlpack(x):
        return "dlpack"
    raise TypeError("polyattn: q must be a NumPy array, a torch tensor or an object with "
                    "__dlpack__, not %s" % type(x).__name__)


def _import_dlpack(args):
    """Generic __dlpack__ inputs: CPU float32/float16 ones become NumPy arrays (zero
    copy), others torch tensors (zero copy, needs torch). Returns (kind, args)."""
    import numpy as np
    try:
        conv = [np.from_dlpack(a) if has_dlpack(a) else a for a in args]
        if all(c is None or not is_numpy(c) or c.dtype.name in ("float32", "float16", "int32",
                                                                 "uint8", "bool")
               for c in conv):
            return "numpy", conv
    except (TypeError, BufferError, RuntimeError, ValueError):
        pass
    try:
        import torch
    except ImportError:
        raise TypeError("polyattn: this __dlpack__ input is not a CPU float32/float16 array, "
                        "and torch (to import it) is not installed; call polyattn.forward() "
                        "with your own output arrays instead")
    return "torch", [torch.from_dlpack(a) if has_dlpack(a) else a for a in args]


def _results(out, lse, mask, return_lse, return_block_mask):
    res = [out]
    if return_lse:
        res.append(lse)
    if return_block_mask:
        res.append(mask)
    return res[0] if len(res) == 1 else tuple(res)


def _check_dropout(dropout_p):
    if dropout_p:
        raise ValueError("polyattn has no dropout (dropout_p=%r)" % (dropout_p,))


# ---------------------------------------------------------------- NumPy path


def _np_forward(q, k, v, opts, alibi, cu_q, cu_k, seqused, block_mask, want_mask):
    import numpy as np
    varlen = cu_q is not None
    alibi = None if alibi is None else np.ascontiguousarray(alibi, dtype=np.float32)
    cu_q = None if cu_q is None else np.ascontiguousarray(cu_q, dtype=np.int32)
    cu_k = None if cu_k is None else np.ascontiguousarray(cu_k, dtype=np.int32)
    seqused = None if seqused is None else np.ascontiguousarray(seqused, dtype=np.int32)
    out = np.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    lse = np.empty(_core.lse_shape(q.shape, varlen), dtype=np.float32)
    mask = None
    if want_mask:
        batch = cu_q.shape[0] - 1 if varlen else q.shape[0]
        mask = np.empty(_core.block_mask_out_shape(q.shape, k.shape, varlen, batch, opts),
                        dtype=np.uint8)
    _core.forward(q, k, v, out, lse, opts, alibi, cu_q, cu_k, seqused, block_mask, mask)
    return out, lse, mask


def _np_backward(dout, q, k, v, out, lse, opts, alibi, cu_q, cu_k, seqused, block_mask):
    import numpy as np
    alibi = None if alibi is None else np.ascontiguousarray(alibi, dtype=np.float32)
    cu_q = None if cu_q is None else np.ascontiguousarray(cu_q, dtype=np.int32)
    cu_k = None if cu_k is None else np.ascontiguousarray(cu_k, dtype=np.int32)
    seqused = None if seqused is None else np.ascontiguousarray(seqused, dtype=np.int32)
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    _core.backward(q, k, v, out, lse, dout, dq, dk, dv, opts, alibi, cu_q, cu_k, seqused,
                   block_mask)
    return dq, dk, dv


def _attention(kind, q, k, v, opts, alibi, cu_q, cu_k, seqused, block_mask, want_mask):
    if kind == "torch":
        from . import _torch
        return _torch.attention(q, k, v, opts, alibi, cu_q, cu_k, seqused, block_mask)
    return _np_forward(q, k, v, opts, alibi, cu_q, cu_k, seqused, block_mask, want_mask)


# ----------------------------------------------------------------- functions


def flash_attn_func(q, k, v, softmax_scale=None, causal=False, window_size=(-1, -1),
                    softcap=0.0, alibi_slopes=None, return_lse=False, *, dropout_p=0.0,
                    deterministic=False, return_attn_probs=False, sparsity=None,
                    block_mask=None, block_size=(64, 64), block_threshold=None,
                    auto_density_cutoff=None, return_block_mask=False):
    """Attention over fixed-length batches: q [B, Sq, Hq, D], k [B, Sk, Hkv, D],
    v [B, Sk, Hkv, Dv] -> out [B, Sq, Hq, Dv] (and LSE [B, Hq, Sq], float32).

    softmax_scale: None means 1/sqrt(D). causal and window_size=(left, right) are
        aligned at the bottom right (FlashAttention >= 2.1); -1 is unbounded.
    softcap: > 0 caps scores at softcap * tanh(s / softcap).
    alibi_slopes: float32 [Hq] or [B, Hq]; subtracts slope * |i + Sk - Sq - j|.
    return_lse (or FlashAttention's return_attn_probs, which gives (out, lse, None)):
        also return the log-sum-exp. LSE carries no gradient.
    deterministic: bit-identical gradients run to run.
    dropout_p: accepted for FlashAttention compatibility; must be 0.
    (The sparsity options are listed below.)
    """
    _check_dropout(dropout_p)
    kind = _kind(q)
    if kind == "dlpack":
        kind, (q, k, v, alibi_slopes, block_mask) = _import_dlpack(
            [q, k, v, alibi_slopes, block_mask])
    opts = _core.Options(softmax_scale, causal, window_size, softcap, sparsity, block_size,
                         block_threshold, auto_density_cutoff, deterministic)
    out, lse, mask = _attention(kind, q, k, v, opts, alibi_slopes, None, None, None,
                                block_mask, return_block_mask)
    if return_attn_probs:
        return out, lse, None
    return _results(out, lse, mask, return_lse, return_block_mask)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q=None,
                           max_seqlen_k=None, softmax_scale=None, causal=False,
                           window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           return_lse=False, *, dropout_p=0.0, deterministic=False,
                           return_attn_probs=False, sparsity=None, block_mask=None,
                           block_size=(64, 64), block_threshold=None,
                           auto_density_cutoff=None, return_block_mask=False):
    """Attention over packed variable-length sequences: q [total_q, Hq, D],
    k [total_k, Hkv, D], v [total_k, Hkv, Dv]; cu_seqlens_q/k int32 [B + 1] (0, then
    the running totals). Returns out [total_q, Hq, Dv] (and LSE [Hq, total_q]).

    max_seqlen_q/k: the longest sequence; may be None on the CPU (read from
        cu_seqlens), required for GPU tensors (their contents are not read on the host).
    Other options as flash_attn_func; with sparsity='block' the mask's Sq and Sk are
    max_seqlen_q/k and blocks count from each sequence's start.
    """
    _check_dropout(dropout_p)
    kind = _kind(q)
    if kind == "dlpack":
        kind, (q, k, v, cu_seqlens_q, cu_seqlens_k, alibi_slopes, block_mask) = \
            _import_dlpack([q, k, v, cu_seqlens_q, cu_seqlens_k, alibi_slopes, block_mask])
    opts = _core.Options(softmax_scale, causal, window_size, softcap, sparsity, block_size,
                         block_threshold, auto_density_cutoff, deterministic, max_seqlen_q,
                         max_seqlen_k)
    out, lse, mask = _attention(kind, q, k, v, opts, alibi_slopes, cu_seqlens_q, cu_seqlens_k,
                                None, block_mask, return_block_mask)
    if return_attn_probs:
        return out, lse, None
    return _results(out, lse, mask, return_lse, return_block_mask)


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, rotary_cos=None,
                            rotary_sin=None, cache_seqlens=None, cache_batch_idx=None,
                            cache_leftpad=None, block_table=None, softmax_scale=None,
                            causal=False, window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None, num_splits=0,
                            return_softmax_lse=False, *, return_lse=False, sparsity=None,
                            block_mask=None, block_size=(64, 64), block_threshold=None,
                            auto_density_cutoff=None):
    """Decoding against a KV cache (FlashAttention's argument order): q [B, Sq, Hq, D],
    k_cache [B, S_cache, Hkv, D], v_cache [B, S_cache, Hkv, Dv].

    cache_seqlens: int or int32 [B], the used length of each cache (None: all of it).
    k, v: optional new keys/values [B, S_new, Hkv, D]; they are written into the caches
        in place at positions cache_seqlens[b] ... + S_new (the caches must have room),
        and attention then uses cache_seqlens + S_new keys. cache_seqlens itself is not
        updated.
    causal / window / ALiBi are aligned at the end of each used cache (the new queries
    are the last positions). Forward only (no gradient). num_splits is ignored (the
    backend picks). Rotary embedding, cache_batch_idx, cache_leftpad and paged caches
    (block_table) are not supported and raise NotImplementedError.
    """
    for name, val in (("rotary_cos", rotary_cos), ("rotary_sin", rotary_sin),
                      ("cache_batch_idx", cache_batch_idx), ("cache_leftpad", cache_leftpad),
                      ("block_table", block_table)):
        if val is not None:
            raise NotImplementedError("polyattn.flash_attn_with_kvcache: %s is not supported"
                                      % name)
    if (k is None) != (v is None):
        raise ValueError("k and v must be given together")
    kind = _kind(q)
    if kind == "dlpack":
        kind, (q, k_cache, v_cache, k, v, cache_seqlens, alibi_slopes, block_mask) = \
            _import_dlpack([q, k_cache, v_cache, k, v, cache_seqlens, alibi_slopes,
                            block_mask])
    opts = _core.Options(softmax_scale, causal, window_size, softcap, sparsity, block_size,
                         block_threshold, auto_density_cutoff)
    B = q.shape[0]
    if kind == "torch":
        from . import _torch
        seqused = _torch.kvcache_append(k_cache, v_cache, k, v, cache_seqlens, B)
        out, lse, _ = _torch.attention(q, k_cache, v_cache, opts, alibi_slopes, None, None,
                                       seqused, block_mask)
    else:
        import numpy as np
        seqused = None
        if cache_seqlens is not None or k is not None:
            seqused = (np.full(B, k_cache.shape[1], np.int32) if cache_seqlens is None else
                       np.broadcast_to(np.asarray(cache_seqlens, np.int32), (B,)).copy())
        if k is not None:
            n = k.shape[1]
            if np.any(seqused + n > k_cache.shape[1]):
                raise ValueError("k/v do not fit: cache_seqlens + %d exceeds the cache "
                                 "length %d" % (n, k_cache.shape[1]))
            pos = seqused[:, None] + np.arange(n)[None, :]
            rows = np.arange(B)[:, None]
            k_cache[rows, pos] = k
            v_cache[rows, pos] = v
            seqused = seqused + n
        out, lse, _ = _np_forward(q, k_cache, v_cache, opts, alibi_slopes, None, None,
                                  seqused, block_mask, False)
    return (out, lse) if (return_softmax_lse or return_lse) else out


def flash_attn_backward(dout, q, k, v, out, lse, softmax_scale=None, causal=False,
                        window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                        deterministic=False, *, cu_seqlens_q=None, cu_seqlens_k=None,
                        max_seqlen_q=None, max_seqlen_k=None, cache_seqlens=None,
                        sparsity=None, block_mask=None, block_size=(64, 64)):
    """Gradients (dq, dk, dv) of attention given dout, the inputs and the forward's
    out and lse, with the forward's options (for sparsity='auto' pass the mask the
    forward chose as block_mask with sparsity='block'). NumPy arrays or torch
    tensors (torch users normally get this through autograd instead)."""
    kind = _kind(q)
    if kind == "dlpack":
        kind, args = _import_dlpack([dout, q, k, v, out, lse, alibi_slopes, cu_seqlens_q,
                                     cu_seqlens_k, cache_seqlens, block_mask])
        (dout, q, k, v, out, lse, alibi_slopes, cu_seqlens_q, cu_seqlens_k, cache_seqlens,
         block_mask) = args
    opts = _core.Options(softmax_scale, causal, window_size, softcap, sparsity, block_size,
                         None, None, deterministic, max_seqlen_q, max_seqlen_k)
    if kind == "torch":
        from . import _torch
        return _torch.backward(dout, q, k, v, out, lse, opts, alibi_slopes, cu_seqlens_q,
                               cu_seqlens_k, cache_seqlens, block_mask)
    return _np_backward(dout, q, k, v, out, lse, opts, alibi_slopes, cu_seqlens_q,
                        cu_seqlens_k, cache_seqlens, block_mask)


for _f in (flash_attn_func, flash_attn_varlen_func):
    _f.__doc__ += _SPARSE_DOC


def forward(q, k, v, out, lse=None, *, softmax_scale=None, causal=False, window_size=(-1, -1),
            softcap=0.0, alibi_slopes=None, cu_seqlens_q=None, cu_seqlens_k=None,
            max_seqlen_q=None, max_seqlen_k=None, cache_seqlens=None, sparsity=None,
            block_mask=None, block_size=(64, 64), block_threshold=None,
            auto_density_cutoff=None, block_mask_out=None):
    """The C call itself on arrays the caller allocated (any mix of NumPy arrays,
    torch tensors and __dlpack__ objects on one device): writes out (and lse,
    block_mask_out). No autograd; on a GPU, DLPack inputs run on the legacy default
    stream and torch tensors on torch's current stream."""
    opts = _core.Options(softmax_scale, causal, window_size, softcap, sparsity, block_size,
                         block_threshold, auto_density_cutoff, False, max_seqlen_q,
                         max_seqlen_k)
    _core.forward(q, k, v, out, lse, opts, alibi_slopes, cu_seqlens_q, cu_seqlens_k,
                  cache_seqlens, block_mask, block_mask_out, stream=_stream_of(q))


def backward(q, k, v, out, lse, dout, dq, dk, dv, *, softmax_scale=None, causal=False,
             window_size=(-1, -1), softcap=0.0, alibi_slopes=None, deterministic=False,
             cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
             cache_seqlens=None, sparsity=None, block_mask=None, block_size=(64, 64)):
    """polyattn_backward on arrays the caller allocated: writes dq, dk, dv."""
    opts = _core.Options(softmax_scale, causal, window_size, softcap, sparsity, block_size,
                         None, None, deterministic, max_seqlen_q, max_seqlen_k)
    _core.backward(q, k, v, out, lse, dout, dq, dk, dv, opts, alibi_slopes, cu_seqlens_q,
                   cu_seqlens_k, cache_seqlens, block_mask, stream=_stream_of(q))


def _stream_of(q):
    from ._arrays import DLPACK_LEGACY_STREAM
    if is_torch(q):
        if q.device.type == "cpu":
            return None
        from . import _torch
        return _torch.current_stream_handle(q.device)
    if is_numpy(q):
        return None
    return DLPACK_LEGACY_STREAM
