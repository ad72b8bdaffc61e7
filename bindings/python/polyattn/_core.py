"""The calls themselves: attention options -> polyattn_params, Views -> wrapped
buffers and tensors, one context per (thread, backend, device, stream)."""

import ctypes
import math
import threading

from . import capi
from ._arrays import BACKEND_OF, KIND_NAME, View, as_view, is_numpy

_lib = None
_lib_lock = threading.Lock()


def library(path=None):
    """The loaded capi.Library (loaded on first use; see capi's docstring for the
    search order). With `path`, load that file first; a second, different path after
    the library is loaded is an error."""
    global _lib
    with _lib_lock:
        if _lib is None:
            _lib = capi.Library(path)
        elif path is not None and not _same(path, _lib.path):
            raise RuntimeError("polyattn: %s is already loaded; cannot switch to %s" %
                               (_lib.path, path))
        return _lib


def _same(a, b):
    import os
    try:
        return os.path.samefile(a, b) or os.path.samefile(a, os.path.dirname(b))
    except OSError:
        return False


_tls = threading.local()


def context(kind, device, stream=None):
    """The calling thread's context for memory `kind` on `device` (and, on GPUs, the
    native stream handle `stream`). Contexts are not thread-safe, hence per thread."""
    cache = getattr(_tls, "contexts", None)
    if cache is None:
        cache = _tls.contexts = {}
    key = (kind, device, stream or 0)
    ctx = cache.get(key)
    if ctx is None:
        lib = library()
        backend = BACKEND_OF[kind]
        ctx = lib.context(backend, device, stream or None, 0)
        if ctx.backend() != backend:
            got = lib.backend_name(ctx.backend())
            ctx.close()
            raise RuntimeError(
                "polyattn: asked for a %s context for %s tensors but got %s (is the "
                "environment variable POLYATTN_BACKEND set?)" %
                (lib.backend_name(backend).decode(), KIND_NAME[kind],
                 got.decode() if got else "?"))
        cache[key] = ctx
    return ctx


# ------------------------------------------------------------------- options

SPARSITY = {None: capi.SPARSITY_NONE, "none": capi.SPARSITY_NONE,
            "block": capi.SPARSITY_BLOCK, "auto": capi.SPARSITY_AUTO_BLOCK,
            "auto_block": capi.SPARSITY_AUTO_BLOCK, "2:4": capi.SPARSITY_NM_2_4}


def sparsity_code(s):
    if isinstance(s, int) and s in SPARSITY.values():
        return s
    try:
        return SPARSITY[s.lower() if isinstance(s, str) else s]
    except (KeyError, AttributeError):
        raise ValueError("sparsity=%r: expected None, 'block', 'auto' or '2:4'" % (s,))


class Options:
    """Everything of polyattn_params except the tensors' addresses."""

    def __init__(self, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                 sparsity=None, block_size=(64, 64), block_threshold=None,
                 auto_density_cutoff=None, deterministic=False, max_seqlen_q=None,
                 max_seqlen_k=None):
        self.scale = 0.0 if softmax_scale is None else float(softmax_scale)
        if not math.isfinite(self.scale):
            raise ValueError("softmax_scale=%r must be finite" % (softmax_scale,))
        self.causal = bool(causal)
        wl, wr = (-1, -1) if window_size is None else window_size
        self.window_left, self.window_right = int(wl), int(wr)
        self.softcap = float(softcap or 0.0)
        self.sparsity = sparsity_code(sparsity)
        bq, bk = (block_size, block_size) if isinstance(block_size, int) else block_size
        self.block_q, self.block_k = int(bq or 0), int(bk or 0)
        self.block_threshold = float(block_threshold or 0.0)
        self.auto_density_cutoff = float(auto_density_cutoff or 0.0)
        self.deterministic = bool(deterministic)
        self.max_seqlen_q = int(max_seqlen_q or 0)
        self.max_seqlen_k = int(max_seqlen_k or 0)


class _Call:
    """Buffers wrapped for one call; freed by close() (after the call was enqueued:
    a wrapped buffer is only a handle, the memory stays the caller's)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.bufs = []
        self.tensors = []  # keep the ctypes structs alive until the call
        self.keep = []  # and arrays the binding allocated for it

    def tensor(self, view):
        if view is None:
            return None
        if view.kind != self.kind or (view.kind != capi.MEMORY_HOST and
                                      view.device != self.device):
            raise ValueError("%s is on %s:%d but q is on %s:%d" % (
                view.name or "a tensor", KIND_NAME[view.kind], view.device,
                KIND_NAME[self.kind], self.device))
        base, nbytes, offset = view.extent()
        # polyattn_buffer_wrap wants a non-NULL handle, even for an empty view.
        buf = self.ctx.wrap(view.kind, base or 1, nbytes)
        self.bufs.append(buf)
        t = capi.Context.tensor(buf, offset, view.dtype, view.shape, view.strides)
        self.tensors.append(t)
        return t

    def close(self):
        for b in self.bufs:
            b.free()
        self.bufs = []


def _params(call, opts, alibi, cu_q, cu_k, seqused, block_mask, block_mask_out, sparsity):
    P = ctypes.pointer
    kw = dict(scale=opts.scale, causal=int(opts.causal), window_left=opts.window_left,
              window_right=opts.window_right, softcap=opts.softcap, sparsity=sparsity,
              block_q=opts.block_q, block_k=opts.block_k,
              block_threshold=opts.block_threshold,
              auto_density_cutoff=opts.auto_density_cutoff,
              deterministic=int(opts.deterministic), max_seqlen_q=opts.max_seqlen_q,
              max_seqlen_k=opts.max_seqlen_k)
    for field, view in (("alibi_slopes", alibi), ("cu_seqlens_q", cu_q),
                        ("cu_seqlens_k", cu_k), ("seqused_k", seqused),
                        ("block_mask", block_mask), ("block_mask_out", block_mask_out)):
        t = call.tensor(view)
        if t is not None:
            kw[field] = P(t)
    return call.ctx.params(**kw)


def _begin(q, stream):
    call_ctx = context(q.kind, q.device, stream if q.kind != capi.MEMORY_HOST else None)
    call = _Call(call_ctx)
    call.kind, call.device = q.kind, q.device
    return call


def _writable(*outs):
    for name, x in outs:
        flags = getattr(x, "flags", None)
        if flags is not None and is_numpy(x) and not flags.writeable:
            raise ValueError("%s is a read-only NumPy array" % name)


def forward(q, k, v, out, lse, opts, alibi=None, cu_q=None, cu_k=None, seqused=None,
            block_mask=None, block_mask_out=None, stream=None, workspace=None):
    """polyattn_forward on Views (or arrays). `workspace`: None (the context keeps
    one) or a callable nbytes -> View of at least that many bytes."""
    _writable(("out", out), ("lse", lse), ("block_mask_out", block_mask_out))
    v_ = [as_view(x, n) if x is not None else None for x, n in (
        (q, "q"), (k, "k"), (v, "v"), (out, "out"), (lse, "lse"), (alibi, "alibi_slopes"),
        (cu_q, "cu_seqlens_q"), (cu_k, "cu_seqlens_k"), (seqused, "cache_seqlens"),
        (block_mask, "block_mask"), (block_mask_out, "block_mask_out"))]
    q, k, v, out, lse, alibi, cu_q, cu_k, seqused, block_mask, block_mask_out = v_
    call = _begin(q, stream)
    try:
        tq, tk, tv, to, tl = (call.tensor(x) for x in (q, k, v, out, lse))
        p = _params(call, opts, alibi, cu_q, cu_k, seqused, block_mask, block_mask_out,
                    opts.sparsity)
        ws = _workspace(call, workspace, lambda: call.ctx.forward_workspace_size(
            p, tq, tk, tv, to, tl))
        call.ctx.forward(p, tq, tk, tv, to, tl, ws)
    finally:
        call.close()


def backward(q, k, v, out, lse, dout, dq, dk, dv, opts, alibi=None, cu_q=None, cu_k=None,
             seqused=None, block_mask=None, stream=None, workspace=None):
    """polyattn_backward on Views (or arrays). AUTO_BLOCK is not a backward mode: pass
    the forward's chosen mask as block_mask with sparsity 'block'."""
    _writable(("dq", dq), ("dk", dk), ("dv", dv))
    v_ = [as_view(x, n) if x is not None else None for x, n in (
        (q, "q"), (k, "k"), (v, "v"), (out, "out"), (lse, "lse"), (dout, "dout"),
        (dq, "dq"), (dk, "dk"), (dv, "dv"), (alibi, "alibi_slopes"), (cu_q, "cu_seqlens_q"),
        (cu_k, "cu_seqlens_k"), (seqused, "cache_seqlens"), (block_mask, "block_mask"))]
    q, k, v, out, lse, dout, dq, dk, dv, alibi, cu_q, cu_k, seqused, block_mask = v_
    call = _begin(q, stream)
    try:
        ts = [call.tensor(x) for x in (q, k, v, out, lse, dout, dq, dk, dv)]
        p = _params(call, opts, alibi, cu_q, cu_k, seqused, block_mask, None, opts.sparsity)
        ws = _workspace(call, workspace, lambda: call.ctx.backward_workspace_size(p, *ts))
        call.ctx.backward(p, *ts, workspace=ws)
    finally:
        call.close()


def _workspace(call, workspace, size):
    if workspace is None:
        return None
    n = size()
    if n == 0:
        return None
    w = as_view(workspace(n), "workspace")
    base, nbytes, _ = w.extent()
    if nbytes < n:
        raise RuntimeError("workspace allocator returned %d bytes, %d needed" % (nbytes, n))
    buf = call.ctx.wrap(w.kind, base, nbytes)
    call.bufs.append(buf)
    call.keep.append(w)  # the workspace array must outlive the call
    return buf


def lse_shape(q_shape, varlen):
    """[B, Hq, Sq], or [Hq, total_q] for varlen."""
    return (q_shape[1], q_shape[0]) if varlen else (q_shape[0], q_shape[2], q_shape[1])


def block_mask_out_shape(q_shape, k_shape, varlen, batch, opts):
    """AUTO_BLOCK's chosen mask: [B, Hq, ceil(Sq/block_q), ceil(Sk/block_k)]."""
    bq, bk = opts.block_q or 64, opts.block_k or 64
    if varlen:
        sq, sk, hq = opts.max_seqlen_q, opts.max_seqlen_k, q_shape[1]
        if not sq or not sk:
            raise ValueError("sparsity='auto' with varlen needs max_seqlen_q and max_seqlen_k")
    else:
        sq, sk, hq = q_shape[1], k_shape[1], q_shape[2]
    return (batch, hq, -(-sq // bq), -(-sk // bk))


__all__ = ["library", "context", "Options", "forward", "backward", "View"]
