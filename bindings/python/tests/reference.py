"""NumPy references of the semantics (docs/semantics.md) for the binding's tests:
the float64 oracle and the "naive" reference of DESIGN.md's tolerance rule, with
common/naive.c's rounding points (docs/decisions.md 11 and 12), and the rule itself.

Shapes are the library's: q [B, Sq, Hq, D], k [B, Sk, Hkv, D], v [B, Sk, Hkv, Dv];
varlen inputs go through varlen_ref, which runs one entry per sequence.
"""

import numpy as np

F64 = np.float64


# ------------------------------------------------------------------- rounding


def round_bf16(x):
    """float32 -> bf16 (round to nearest even), returned as float32."""
    a = np.ascontiguousarray(x, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    out = r.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, out)


def rounder(dtype):
    """x -> x rounded to `dtype` ('float32', 'float16' or 'bfloat16'), as float32."""
    dtype = str(dtype).replace("torch.", "")
    if dtype == "float32":
        return lambda x: np.asarray(x, dtype=np.float32)
    if dtype == "float16":
        return lambda x: np.asarray(x, dtype=np.float16).astype(np.float32)
    if dtype == "bfloat16":
        return round_bf16
    raise ValueError(dtype)


# ------------------------------------------------------------ one batch entry


def _c(spec, a, b, mode):
    """einsum with one summed index: float64 for the oracle; for the naive reference
    float32 products summed in order (np.cumsum is sequential), as a plain loop in
    common/naive.c accumulates them, so its error is the yardstick the rule means."""
    if mode == "oracle":
        return np.einsum(spec, a, b)
    ins, out = spec.split("->")
    summed = sorted(set(ins.replace(",", "")) - set(out))
    assert len(summed) == 1, spec
    prods = np.einsum("%s->%s" % (ins, out + summed[0]), a.astype(np.float32),
                      b.astype(np.float32))
    if prods.shape[-1] == 0:
        return np.zeros(prods.shape[:-1], np.float32)
    return np.cumsum(prods, axis=-1, dtype=np.float32)[..., -1]


def _sum32(x, axis, mode):
    if mode == "oracle":
        return x.sum(axis)
    x = np.moveaxis(np.asarray(x, np.float32), axis, -1)
    if x.shape[-1] == 0:
        return np.zeros(x.shape[:-1], np.float32)
    return np.cumsum(x, axis=-1, dtype=np.float32)[..., -1]


def _scores(qb, kb, len_k, scale, causal, window, softcap, slopes, mask_b, block, nm24, mode,
            rnd):
    """Scores, kept entries and P for one entry: qb [Sq, Hq, D], kb [Sk, Hkv, D].
    Returns (s_raw [Hq, Sq, Sk] (before the cap), s, keep, P), float64 or float32."""
    Sq, Hq, D = qb.shape
    Sk, Hkv = kb.shape[0], kb.shape[1]
    g = Hq // Hkv
    ft = F64 if mode == "oracle" else np.float32
    kx = np.repeat(kb.astype(ft), g, axis=1)  # [Sk, Hq, D]
    s_raw = (ft(scale) * _c("ihd,jhd->hij", qb.astype(ft), kx, mode)).astype(ft)
    s = s_raw
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    i = np.arange(Sq)[:, None]
    j = np.arange(Sk)[None, :]
    diag = i + len_k - Sq
    if slopes is not None:
        s = s - np.asarray(slopes, ft)[:, None, None] * np.abs(diag - j)[None].astype(ft)
    s = s.astype(ft)
    keep = np.broadcast_to(j < len_k, (Sq, Sk)).copy()
    if causal:
        keep &= j <= diag
    wl, wr = window
    if wl >= 0:
        keep &= j >= diag - wl
    if wr >= 0:
        keep &= j <= diag + wr
    keep = np.broadcast_to(keep, (Hq, Sq, Sk)).copy()
    if mask_b is not None:
        bq, bk = block
        m = np.broadcast_to(mask_b, (Hq,) + mask_b.shape[1:])
        keep &= m[:, i // bq, j // bk] != 0
    if nm24:  # two largest kept of each group of four keys, ties to the lower j
        pad = (-Sk) % 4
        sp = np.pad(s, ((0, 0), (0, 0), (0, pad)), constant_values=-np.inf)
        kp = np.pad(keep, ((0, 0), (0, 0), (0, pad)))
        sg = sp.reshape(Hq, Sq, -1, 4)
        kg = kp.reshape(Hq, Sq, -1, 4)
        better = np.zeros(kg.shape, dtype=np.int64)
        for a in range(4):
            for b in range(4):
                if a == b:
                    continue
                beats = kg[..., b] & ((sg[..., b] > sg[..., a]) |
                                      ((sg[..., b] == sg[..., a]) & (b < a)))
                better[..., a] += beats
        nkept = kg.sum(-1, keepdims=True)
        kg2 = kg & ((better < 2) | (nkept <= 2))
        keep = kg2.reshape(Hq, Sq, -1)[..., :Sk]
    if mode != "oracle":
        s = rnd(s)  # the naive reference rounds S to the dtype (after the 2:4 choice)
    ms = np.where(keep, s, -np.inf)
    mx = ms.max(-1, keepdims=True) if Sk else np.zeros((Hq, Sq, 1), ft)
    mx = np.where(np.isfinite(mx), mx, 0)
    e = np.where(keep, np.exp(ms - mx), 0).astype(ft)
    z = _sum32(e, -1, mode)[..., None]
    P = np.where(z > 0, e / np.where(z > 0, z, 1), 0).astype(ft)
    with np.errstate(divide="ignore"):
        lse = np.where(z[..., 0] > 0, mx[..., 0] + np.log(np.where(z[..., 0] > 0, z[..., 0], 1)),
                       -np.inf)
    if mode != "oracle":
        P = rnd(P)
    return s_raw, s, keep, P, lse


def _entry_args(b, B, alibi, block_mask, seqused, Sk):
    slopes = None
    if alibi is not None:
        a = np.asarray(alibi, F64)
        slopes = a[b] if a.ndim == 2 else a
    mask_b = None
    if block_mask is not None:
        m = np.asarray(block_mask)
        mask_b = m[b if m.shape[0] > 1 else 0]
    len_k = Sk if seqused is None else int(np.asarray(seqused)[b])
    return slopes, mask_b, len_k


def attention_ref(q, k, v, scale=None, causal=False, window=(-1, -1), softcap=0.0,
                  alibi=None, seqused=None, block_mask=None, block=(64, 64), nm24=False,
                  mode="oracle", dtype="float32", dout=None):
    """(out [B, Sq, Hq, Dv], lse [B, Hq, Sq]) in float64 (mode 'oracle') or as the naive
    reference computes them (mode 'naive', rounding to `dtype`); with dout, also
    (dq, dk, dv)."""
    B, Sq, Hq, D = q.shape
    Sk, Hkv, Dv = k.shape[1], k.shape[2], v.shape[3]
    g = Hq // Hkv
    scale = 1.0 / np.sqrt(D) if not scale else scale
    rnd = rounder(dtype)
    ft = F64 if mode == "oracle" else np.float32
    out = np.zeros((B, Sq, Hq, Dv))
    lse = np.zeros((B, Hq, Sq))
    grads = None
    if dout is not None:
        grads = (np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape))
    for b in range(B):
        slopes, mask_b, len_k = _entry_args(b, B, alibi, block_mask, seqused, Sk)
        s_raw, s, keep, P, l = _scores(q[b], k[b], len_k, scale, causal, window, softcap,
                                       slopes, mask_b, block, nm24, mode, rnd)
        vx = np.repeat(v[b].astype(ft), g, axis=1)  # [Sk, Hq, Dv]
        o = _c("hij,jhd->ihd", P, vx, mode)
        out[b] = rnd(o) if mode != "oracle" else o
        lse[b] = l
        if dout is None:
            continue
        do = dout[b].astype(ft)  # [Sq, Hq, Dv]
        kx = np.repeat(k[b].astype(ft), g, axis=1)
        dP = _c("ihd,jhd->hij", do, vx, mode)
        Di = _sum32(P * dP, -1, mode)[..., None]
        dS = P * (dP - Di)
        if softcap > 0:
            dS = dS * (1 - np.tanh(s_raw / softcap) ** 2)
        if mode != "oracle":
            dS = rnd(dS.astype(np.float32))
        dq = scale * _c("hij,jhd->ihd", dS, kx, mode)
        dk_h = _c("hij,ihd->jhd", dS, q[b].astype(ft), mode)  # per query head
        dv_h = _c("hij,ihd->jhd", P, do, mode)
        dk = scale * _sum32(dk_h.reshape(Sk, Hkv, g, D), 2, mode)
        dv = _sum32(dv_h.reshape(Sk, Hkv, g, Dv), 2, mode)
        if mode != "oracle":
            dq, dk, dv = rnd(dq), rnd(dk), rnd(dv)
        grads[0][b], grads[1][b], grads[2][b] = dq, dk, dv
    if dout is None:
        return out, lse
    return (out, lse) + grads


def varlen_ref(q, k, v, cu_q, cu_k, dout=None, block_mask=None, alibi=None, **kw):
    """The reference over packed sequences: q [total_q, Hq, D]; returns out
    [total_q, Hq, Dv], lse [Hq, total_q] (and packed gradients with dout)."""
    outs, lses, gq, gk, gv = [], [], [], [], []
    for b in range(len(cu_q) - 1):
        a0, a1, c0, c1 = cu_q[b], cu_q[b + 1], cu_k[b], cu_k[b + 1]
        bm = None
        if block_mask is not None:
            bm = block_mask[b:b + 1] if block_mask.shape[0] > 1 else block_mask
        al = None
        if alibi is not None:
            al = alibi[b] if np.asarray(alibi).ndim == 2 else alibi
        r = attention_ref(q[None, a0:a1], k[None, c0:c1], v[None, c0:c1], block_mask=bm,
                          alibi=al, dout=None if dout is None else dout[None, a0:a1], **kw)
        outs.append(r[0][0])
        lses.append(r[1][0])
        if dout is not None:
            gq.append(r[2][0])
            gk.append(r[3][0])
            gv.append(r[4][0])
    res = (np.concatenate(outs), np.concatenate(lses, axis=1))
    if dout is None:
        return res
    return res + (np.concatenate(gq), np.concatenate(gk), np.concatenate(gv))


# --------------------------------------------------------------- the rule


def tolerance_check(out, ref, naive, dtype="float32", softcap=False, name="out"):
    """DESIGN.md's rule: max|out - ref| <= 2 max|naive - ref| + atol, atol =
    2 max|round(ref) - ref| (3x with softcap); normalised MSE <= 5e-4; NaN or Inf
    where ref is finite fails. Returns (ok, message)."""
    o = np.asarray(out, F64)
    ref = np.asarray(ref, F64)
    naive = np.asarray(naive, F64)
    fin = np.isfinite(ref)
    if np.any(~np.isfinite(o[fin])):
        return False, "%s: NaN/Inf where the reference is finite" % name
    if not fin.any():
        return True, "%s: empty" % name
    err = np.max(np.abs(o - ref)[fin])
    nerr = np.max(np.abs(naive - ref)[fin])
    atol = (3 if softcap else 2) * np.max(np.abs(rounder(dtype)(ref).astype(F64) - ref)[fin])
    bound = 2 * nerr + atol
    den = np.sum(ref[fin] ** 2)
    nmse = np.sum((o - ref)[fin] ** 2) / den if den > 0 else 0.0
    ok = err <= bound and nmse <= 5e-4
    return ok, "%s: max err %.3e, bound %.3e (naive %.3e, atol %.3e), nmse %.2e" % (
        name, err, bound, nerr, atol, nmse)


def lse_check(lse, ref, name="lse"):
    lse = np.asarray(lse, F64)
    ref = np.asarray(ref, F64)
    neg = np.isneginf(ref)
    if not np.array_equal(np.isneginf(lse), neg):
        return False, "%s: -inf pattern differs from the reference" % name
    if np.any(~np.isfinite(lse[~neg])):
        return False, "%s: NaN/Inf where the reference is finite" % name
    err = np.max(np.abs(lse[~neg] - ref[~neg])) if (~neg).any() else 0.0
    return err <= 1e-3, "%s: max err %.3e (limit 1e-3)" % (name, err)
