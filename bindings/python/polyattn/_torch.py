"""PyTorch integration: the library's forward and backward as custom operators
(torch.ops.polyattn.fwd / bwd, torch.library.custom_op) with fake (meta)
implementations, so torch.compile traces through them, and autograd wired to the
library's backward (torch.library.register_autograd). Importing this module
registers them; polyattn's functions import it on the first torch tensor.

CUDA tensors are used in place (zero copy) on torch's current stream: the op wraps
the tensors' memory, asks for the workspace size and takes the workspace from
torch's caching allocator, and enqueues the call without synchronising. LSE is
returned detached: no gradient flows through it.
"""

import contextlib
from typing import Optional, Tuple

import torch

from . import _core, capi

# cudaStreamLegacy: torch's default stream reports handle 0, which polyattn would
# read as "no stream, create one"; the legacy default stream's own handle is 1.
_CUDA_STREAM_LEGACY = 1


def current_stream_handle(device):
    h = torch.cuda.current_stream(device).cuda_stream
    return h if h else _CUDA_STREAM_LEGACY


def _stream(t):
    return None if t.device.type == "cpu" else current_stream_handle(t.device)


def _device_guard(t):
    """The library sets the CUDA device of the calling thread (cudaSetDevice) when it
    creates a context and on every call; this restores torch's current device after."""
    return contextlib.nullcontext() if t.device.type == "cpu" else torch.cuda.device(t.device)


def _workspace(device):
    return lambda n: torch.empty(n, dtype=torch.uint8, device=device)


def _opts(scale, causal, wl, wr, softcap, sparsity, bq, bk, thr, cutoff, deterministic,
          max_q, max_k):
    o = _core.Options(scale if scale else None, causal, (wl, wr), softcap, sparsity,
                      (bq, bk), thr, cutoff, deterministic, max_q, max_k)
    return o


def _fwd_shapes(q, k, v, cu_q, max_q, max_k, sparsity, bq, bk):
    varlen = cu_q is not None
    out_shape = tuple(q.shape[:-1]) + (v.shape[-1],)
    lse_shape = _core.lse_shape(tuple(q.shape), varlen)
    if sparsity == capi.SPARSITY_AUTO_BLOCK:
        batch = cu_q.shape[0] - 1 if varlen else q.shape[0]
        o = _core.Options(max_seqlen_q=max_q, max_seqlen_k=max_k, block_size=(bq, bk))
        mask_shape = _core.block_mask_out_shape(tuple(q.shape), tuple(k.shape), varlen, batch,
                                                o)
    else:
        mask_shape = (0,)
    return out_shape, lse_shape, mask_shape


@torch.library.custom_op("polyattn::fwd", mutates_args=())
def fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
        cu_seqlens_q: Optional[torch.Tensor], cu_seqlens_k: Optional[torch.Tensor],
        max_seqlen_q: int, max_seqlen_k: int, seqused_k: Optional[torch.Tensor],
        alibi_slopes: Optional[torch.Tensor], block_mask: Optional[torch.Tensor],
        scale: float, causal: bool, window_left: int, window_right: int, softcap: float,
        sparsity: int, block_q: int, block_k: int, block_threshold: float,
        auto_density_cutoff: float, deterministic: bool
        ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(out, lse, block_mask_out); block_mask_out is empty unless sparsity is AUTO."""
    out_shape, lse_shape, mask_shape = _fwd_shapes(q, k, v, cu_seqlens_q, max_seqlen_q,
                                                   max_seqlen_k, sparsity, block_q, block_k)
    out = torch.empty(out_shape, dtype=q.dtype, device=q.device)
    lse = torch.empty(lse_shape, dtype=torch.float32, device=q.device)
    mask = torch.empty(mask_shape, dtype=torch.uint8, device=q.device)
    opts = _opts(scale, causal, window_left, window_right, softcap, sparsity, block_q,
                 block_k, block_threshold, auto_density_cutoff, deterministic, max_seqlen_q,
                 max_seqlen_k)
    with _device_guard(q):
        _core.forward(q, k, v, out, lse, opts, alibi_slopes, cu_seqlens_q, cu_seqlens_k,
                      seqused_k, block_mask,
                      mask if sparsity == capi.SPARSITY_AUTO_BLOCK else None,
                      stream=_stream(q), workspace=_workspace(q.device))
    return out, lse, mask


@fwd.register_fake
def _fwd_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_k,
              alibi_slopes, block_mask, scale, causal, window_left, window_right, softcap,
              sparsity, block_q, block_k, block_threshold, auto_density_cutoff,
              deterministic):
    out_shape, lse_shape, mask_shape = _fwd_shapes(q, k, v, cu_seqlens_q, max_seqlen_q,
                                                   max_seqlen_k, sparsity, block_q, block_k)
    return (q.new_empty(out_shape), q.new_empty(lse_shape, dtype=torch.float32),
            q.new_empty(mask_shape, dtype=torch.uint8))


@torch.library.custom_op("polyattn::bwd", mutates_args=())
def bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
        out: torch.Tensor, lse: torch.Tensor, cu_seqlens_q: Optional[torch.Tensor],
        cu_seqlens_k: Optional[torch.Tensor], max_seqlen_q: int, max_seqlen_k: int,
        seqused_k: Optional[torch.Tensor], alibi_slopes: Optional[torch.Tensor],
        block_mask: Optional[torch.Tensor], scale: float, causal: bool, window_left: int,
        window_right: int, softcap: float, sparsity: int, block_q: int, block_k: int,
        deterministic: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv). sparsity is never AUTO here: the forward's mask comes as BLOCK."""
    dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    dk = torch.empty(k.shape, dtype=k.dtype, device=k.device)
    dv = torch.empty(v.shape, dtype=v.dtype, device=v.device)
    opts = _opts(scale, causal, window_left, window_right, softcap, sparsity, block_q,
                 block_k, 0.0, 0.0, deterministic, max_seqlen_q, max_seqlen_k)
    with _device_guard(q):
        _core.backward(q, k, v, out, lse, dout, dq, dk, dv, opts, alibi_slopes, cu_seqlens_q,
                       cu_seqlens_k, seqused_k, block_mask, stream=_stream(q),
                       workspace=_workspace(q.device))
    return dq, dk, dv


@bwd.register_fake
def _bwd_fake(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
              max_seqlen_k, seqused_k, alibi_slopes, block_mask, scale, causal, window_left,
              window_right, softcap, sparsity, block_q, block_k, deterministic):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _setup_context(ctx, inputs, output):
    (q, k, v, cu_q, cu_k, max_q, max_k, seqused, alibi, block_mask, scale, causal, wl, wr,
     softcap, sparsity, bq, bk, thr, cutoff, deterministic) = inputs
    out, lse, mask_out = output
    # AUTO_BLOCK's backward is BLOCK with the mask the forward chose (decision 8).
    mask = mask_out if sparsity == capi.SPARSITY_AUTO_BLOCK else block_mask
    ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k, seqused, alibi, mask)
    ctx.args = (max_q, max_k, scale, causal, wl, wr, softcap,
                capi.SPARSITY_BLOCK if sparsity == capi.SPARSITY_AUTO_BLOCK else sparsity,
                bq, bk, deterministic)


def _backward(ctx, dout, dlse, dmask):
    q, k, v, out, lse, cu_q, cu_k, seqused, alibi, mask = ctx.saved_tensors
    max_q, max_k, scale, causal, wl, wr, softcap, sparsity, bq, bk, det = ctx.args
    dq, dk, dv = bwd(_maybe_contiguous(dout), q, k, v, out, lse, cu_q, cu_k, max_q, max_k,
                     seqused, alibi, mask, scale, causal, wl, wr, softcap, sparsity, bq, bk,
                     det)
    return (dq, dk, dv) + (None,) * 18


fwd.register_autograd(_backward, setup_context=_setup_context)


# ------------------------------------------------------------------ frontend


def _maybe_contiguous(x):
    """As FlashAttention: copy only when the head dim is not contiguous."""
    return x if x is None or x.stride(-1) == 1 else x.contiguous()


def _int32(x, device, name):
    if x is None:
        return None
    if not isinstance(x, torch.Tensor):
        return torch.as_tensor(x, dtype=torch.int32, device=device)
    if x.dtype != torch.int32:
        raise TypeError("%s must be int32, not %s" % (name, x.dtype))
    return x


def _mask(m):
    if m is None:
        return None
    return m.view(torch.uint8) if m.dtype == torch.bool else m


def _slopes(a, device):
    if a is None:
        return None
    return torch.as_tensor(a, device=device).to(torch.float32)


def attention(q, k, v, opts, alibi, cu_q, cu_k, seqused, block_mask):
    """(out, lse (detached), mask or None) for torch tensors; differentiable in q, k, v."""
    # (no generator expressions: this runs under torch.compile's tracer)
    q, k, v = _maybe_contiguous(q), _maybe_contiguous(k), _maybe_contiguous(v)
    dev = q.device
    cu_q = _int32(cu_q, dev, "cu_seqlens_q")
    cu_k = _int32(cu_k, dev, "cu_seqlens_k")
    if cu_q is not None and dev.type != "cpu" and not (opts.max_seqlen_q and opts.max_seqlen_k):
        raise ValueError("varlen on %s needs max_seqlen_q and max_seqlen_k (cu_seqlens are "
                         "not read on the host)" % dev)
    out, lse, mask = fwd(q, k, v, cu_q, cu_k, opts.max_seqlen_q, opts.max_seqlen_k,
                         _int32(seqused, dev, "cache_seqlens"), _slopes(alibi, dev),
                         _mask(block_mask), opts.scale, opts.causal, opts.window_left,
                         opts.window_right, opts.softcap, opts.sparsity, opts.block_q,
                         opts.block_k, opts.block_threshold, opts.auto_density_cutoff,
                         opts.deterministic)
    return out, lse.detach(), (mask if opts.sparsity == capi.SPARSITY_AUTO_BLOCK else None)


def backward(dout, q, k, v, out, lse, opts, alibi, cu_q, cu_k, seqused, block_mask):
    dev = q.device
    return bwd(_maybe_contiguous(dout), _maybe_contiguous(q), _maybe_contiguous(k),
               _maybe_contiguous(v), out, lse, _int32(cu_q, dev, "cu_seqlens_q"),
               _int32(cu_k, dev, "cu_seqlens_k"), opts.max_seqlen_q, opts.max_seqlen_k,
               _int32(seqused, dev, "cache_seqlens"), _slopes(alibi, dev), _mask(block_mask),
               opts.scale, opts.causal, opts.window_left, opts.window_right, opts.softcap,
               opts.sparsity, opts.block_q, opts.block_k, opts.deterministic)


def kvcache_append(k_cache, v_cache, k, v, cache_seqlens, batch):
    """Write k, v into the caches at cache_seqlens (in place); the int32 used lengths."""
    dev = k_cache.device
    if cache_seqlens is None and k is None:
        return None
    if cache_seqlens is None:
        seq = torch.full((batch,), k_cache.shape[1], dtype=torch.int32, device=dev)
    elif isinstance(cache_seqlens, int):
        seq = torch.full((batch,), cache_seqlens, dtype=torch.int32, device=dev)
    else:
        seq = torch.as_tensor(cache_seqlens, device=dev).to(torch.int32).expand(batch)
    if k is not None:
        n = k.shape[1]
        pos = seq.long()[:, None] + torch.arange(n, device=dev)[None, :]
        rows = torch.arange(batch, device=dev)[:, None]
        with torch.no_grad():
            k_cache[rows, pos] = k
            v_cache[rows, pos] = v
        seq = seq + n
    return seq.to(torch.int32).contiguous()
