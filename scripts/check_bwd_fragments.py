#!/usr/bin/env python3
"""CPU model of the Ampere backward's five warp products (backends/cuda/bwd_ampere.cu).

No GPU needed. Swizzled shared-memory tiles (ampere_tile.cuh pa_tile_layout), the
lane addresses of pa_ldsm_lane, ldmatrix .x4 (plain and .trans) and mma m16n8k16
with the fragment layouts of the PTX ISA are modelled; each product is composed the
way the kernel composes it (which ldmatrix order, which registers go to which mma,
how the C fragments are repacked into A fragments, how dS^T goes through shared
memory) and compared with plain matrix products (exact: small integers). Run: python3 scripts/check_bwd_fragments.py
"""
import random

random.seed(1)


class Mat:
    """The little of numpy this needs (no numpy on the build machine)."""

    def __init__(self, rows):
        self.a = [list(r) for r in rows]
        self.shape = (len(self.a), len(self.a[0]) if self.a else 0)

    def _idx(self, k):
        r, c = k if isinstance(k, tuple) else (k, slice(None))
        rr = range(*r.indices(self.shape[0])) if isinstance(r, slice) else [r]
        cc = range(*c.indices(self.shape[1])) if isinstance(c, slice) else [c]
        return rr, cc, isinstance(r, slice) or isinstance(c, slice)

    def __getitem__(self, k):
        rr, cc, sl = self._idx(k)
        if not sl:
            return self.a[rr[0]][cc[0]]
        return Mat([[self.a[r][c] for c in cc] for r in rr])

    def __setitem__(self, k, v):
        rr, cc, sl = self._idx(k)
        if not sl:
            self.a[rr[0]][cc[0]] = v
            return
        flat = [x for row in v.a for x in row] if isinstance(v, Mat) else list(v)
        it = iter(flat)
        for r in rr:
            for c in cc:
                self.a[r][c] = next(it)

    @property
    def T(self):
        return Mat([[self.a[r][c] for r in range(self.shape[0])] for c in range(self.shape[1])])

    def __matmul__(self, o):
        ot = o.T.a
        return Mat([[sum(x * y for x, y in zip(row, col)) for col in ot] for row in self.a])

    def map(self, f):
        return Mat([[f(x) for x in row] for row in self.a])


class np:  # noqa: N801 - stands in for numpy in the code below
    @staticmethod
    def zeros(shape):
        return Mat([[0.0] * shape[1] for _ in range(shape[0])])

    @staticmethod
    def array(rows):
        return Mat(rows)

    @staticmethod
    def array_equal(x, y):
        return x.a == y.a


def rand_mat(rows, cols):
    return Mat([[float(random.randint(-4, 4)) for _ in range(cols)] for _ in range(rows)])


def layout_offset(chunks, row, chunk):
    phys = chunk ^ (row & 7) if chunks % 8 == 0 else chunk ^ ((row >> 1) & 3)
    return (row * chunks + phys) * 16


class Tile:
    """A [rows x cols] 16-bit tile in swizzled shared memory (byte -> value)."""

    def __init__(self, m):
        self.rows, self.cols = m.shape
        self.chunks = self.cols // 8
        self.mem = {}
        for r in range(self.rows):
            for c in range(self.cols):
                self.mem[layout_offset(self.chunks, r, c // 8) + (c % 8) * 2] = m[r, c]


def ldsm_lane_at(cols, order, lane, row0, kk):
    chunks = cols // 8
    xmask = 7 if chunks % 8 == 0 else 3
    period = (xmask + 1) // 2
    if order == "COL_PAIR":
        lr, lc = (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1
    else:
        lr, lc = lane & 15, lane >> 4
    x = (lr & 7) if xmask == 7 else ((lr >> 1) & 3)
    off = [(lr * chunks + ((2 * q + lc) ^ x)) * 16 for q in range(period)]
    return off[kk % period] + (row0 * chunks + ((2 * kk) & ~xmask)) * 16


def ldmatrix_x4(tile, addrs, trans):
    """addrs[lane]: row address; returns regs[lane][i] = (lo, hi) element pair."""
    regs = [[None] * 4 for _ in range(32)]
    for i in range(4):
        m = np.array([[tile.mem[addrs[8 * i + r] + 2 * c] for c in range(8)] for r in range(8)])
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            regs[lane][i] = (m[2 * t, g], m[2 * t + 1, g]) if trans else (m[g, 2 * t], m[g, 2 * t + 1])
    return regs


def mma(d, a, b0, b1):
    """d[lane][4] += A[16x16] . B[16x8] per the ISA fragment layouts."""
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        A[g, 2 * t:2 * t + 2] = a[lane][0]
        A[g + 8, 2 * t:2 * t + 2] = a[lane][1]
        A[g, 2 * t + 8:2 * t + 10] = a[lane][2]
        A[g + 8, 2 * t + 8:2 * t + 10] = a[lane][3]
        B[2 * t:2 * t + 2, g] = b0[lane]
        B[2 * t + 8:2 * t + 10, g] = b1[lane]
    C = A @ B
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        d[lane][0] += C[g, 2 * t]
        d[lane][1] += C[g, 2 * t + 1]
        d[lane][2] += C[g + 8, 2 * t]
        d[lane][3] += C[g + 8, 2 * t + 1]


def gather_c(acc, rows, ntiles):
    """acc[n][lane][4] -> [16 x 8 ntiles] matrix."""
    M = np.zeros((16, 8 * ntiles))
    for n in range(ntiles):
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            M[g, 8 * n + 2 * t] = acc[n][lane][0]
            M[g, 8 * n + 2 * t + 1] = acc[n][lane][1]
            M[g + 8, 8 * n + 2 * t] = acc[n][lane][2]
            M[g + 8, 8 * n + 2 * t + 1] = acc[n][lane][3]
    return M


def zeros(ntiles):
    return [[[0.0] * 4 for _ in range(32)] for _ in range(ntiles)]


def addrs(cols, order, base_tile_row0, kk):
    return [ldsm_lane_at(cols, order, lane, base_tile_row0, kk) for lane in range(32)]


def pick(regs, i):
    return [regs[lane][i] for lane in range(32)]


def check(D, BQ, BK, warps):
    K, V = rand_mat(BK, D), rand_mat(BK, D)
    Q, dO = rand_mat(BQ, D), rand_mat(BQ, D)
    tk, tv, tq, tdo = Tile(K), Tile(V), Tile(Q), Tile(dO)
    q_tiles, d_tiles = BQ // 8, D // 8
    dS_full = np.zeros((BK, BQ))
    dK_want, dV_want = np.zeros((BK, D)), np.zeros((BK, D))
    dk_got, dv_got = np.zeros((BK, D)), np.zeros((BK, D))
    ds_tile_mem = {}
    for warp in range(warps):
        wk = 16 * warp
        s, dp = zeros(q_tiles), zeros(q_tiles)
        for kk in range(D // 16):
            av = ldmatrix_x4(tv, addrs(D, "ROW_PAIR", wk, kk), False)
            ak = ldmatrix_x4(tk, addrs(D, "ROW_PAIR", wk, kk), False)
            for nn in range(BQ // 16):
                b = ldmatrix_x4(tdo, addrs(D, "COL_PAIR", 16 * nn, kk), False)
                mma(dp[2 * nn], av, pick(b, 0), pick(b, 1))
                mma(dp[2 * nn + 1], av, pick(b, 2), pick(b, 3))
                b = ldmatrix_x4(tq, addrs(D, "COL_PAIR", 16 * nn, kk), False)
                mma(s[2 * nn], ak, pick(b, 0), pick(b, 1))
                mma(s[2 * nn + 1], ak, pick(b, 2), pick(b, 3))
        S_T = gather_c(s, 16, q_tiles)
        dP_T = gather_c(dp, 16, q_tiles)
        assert np.array_equal(S_T, K[wk:wk + 16] @ Q.T), "S^T = K Q^T"
        assert np.array_equal(dP_T, V[wk:wk + 16] @ dO.T), "dP^T = V dO^T"
        # Stand-ins for P^T and dS^T: any elementwise map of the accumulators.
        P_T = S_T.map(lambda x: (1.0 if x > 0 else -1.0) * (abs(x) % 3))
        dS_T = dP_T.map(lambda x: (x % 5) - 2)
        for n in range(q_tiles):
            for lane in range(32):
                g, t = lane >> 2, lane & 3
                for e in range(4):
                    r, c = g + 8 * (e >> 1), 8 * n + 2 * t + (e & 1)
                    s[n][lane][e] = P_T[r, c]
                    dp[n][lane][e] = dS_T[r, c]
        pf = [[(s[2 * kk][l][0], s[2 * kk][l][1]), (s[2 * kk][l][2], s[2 * kk][l][3]),
               (s[2 * kk + 1][l][0], s[2 * kk + 1][l][1]), (s[2 * kk + 1][l][2], s[2 * kk + 1][l][3])]
              for kk in range(BQ // 16) for l in range(32)]
        dsf = [[(dp[2 * kk][l][0], dp[2 * kk][l][1]), (dp[2 * kk][l][2], dp[2 * kk][l][3]),
                (dp[2 * kk + 1][l][0], dp[2 * kk + 1][l][1]), (dp[2 * kk + 1][l][2], dp[2 * kk + 1][l][3])]
               for kk in range(BQ // 16) for l in range(32)]
        pf = [pf[32 * kk:32 * kk + 32] for kk in range(BQ // 16)]
        dsf = [dsf[32 * kk:32 * kk + 32] for kk in range(BQ // 16)]
        # dS^T to shared memory, as the kernel writes it.
        for kk in range(BQ // 16):
            for lane in range(32):
                g, t = lane >> 2, lane & 3
                for r in range(4):
                    row, chunk = wk + g + 8 * (r & 1), 2 * kk + (r >> 1)
                    off = layout_offset(BQ // 8, row, chunk) + 4 * t
                    ds_tile_mem[off], ds_tile_mem[off + 2] = dsf[kk][lane][r]
        dv, dk = zeros(d_tiles), zeros(d_tiles)
        for kk in range(BQ // 16):
            for dd in range(D // 16):
                b = ldmatrix_x4(tdo, addrs(D, "ROW_PAIR", 16 * kk, dd), True)
                mma(dv[2 * dd], pf[kk], pick(b, 0), pick(b, 1))
                mma(dv[2 * dd + 1], pf[kk], pick(b, 2), pick(b, 3))
                b = ldmatrix_x4(tq, addrs(D, "ROW_PAIR", 16 * kk, dd), True)
                mma(dk[2 * dd], dsf[kk], pick(b, 0), pick(b, 1))
                mma(dk[2 * dd + 1], dsf[kk], pick(b, 2), pick(b, 3))
        dv_got[wk:wk + 16] = gather_c(dv, 16, d_tiles)
        dk_got[wk:wk + 16] = gather_c(dk, 16, d_tiles)
        dV_want[wk:wk + 16] = P_T @ dO
        dK_want[wk:wk + 16] = dS_T @ Q
        dS_full[wk:wk + 16] = dS_T
    assert np.array_equal(dv_got, dV_want), "dV += P^T dO"
    assert np.array_equal(dk_got, dK_want), "dK += dS^T Q"
    # dQ = dS K: each warp a [16 x dq_cols] block of the [BQ x D] partial.
    tds = Tile(np.zeros((BK, BQ)))
    tds.mem = ds_tile_mem
    q_mtiles = BQ // 16
    dq_slices = warps // q_mtiles
    dq_cols = D // dq_slices
    dq_got = np.zeros((BQ, D))
    for warp in range(warps):
        mq = warp % q_mtiles
        c0 = 0 if dq_slices == 1 else (warp // q_mtiles) * dq_cols
        dq = zeros(dq_cols // 8)
        for kk in range(BK // 16):
            a = ldmatrix_x4(tds, addrs(BQ, "COL_PAIR", 16 * kk, mq), True)
            for dd in range(dq_cols // 16):
                ad = [x + 2 * c0 for x in addrs(D, "ROW_PAIR", 16 * kk, dd)]
                b = ldmatrix_x4(tk, ad, True)
                mma(dq[2 * dd], a, pick(b, 0), pick(b, 1))
                mma(dq[2 * dd + 1], a, pick(b, 2), pick(b, 3))
        dq_got[16 * mq:16 * mq + 16, c0:c0 + dq_cols] = gather_c(dq, 16, dq_cols // 8)
    assert np.array_equal(dq_got, dS_full.T @ K), "dQ = dS K"
    print(f"D={D} BQ={BQ} BK={BK} warps={warps}: S^T, dP^T, dV, dK, dQ match")


check(64, 64, 64, 4)   # the hd64 row of ampere_bwd_tune.cuh
check(128, 32, 64, 4)  # the hd128 row
check(128, 64, 64, 4)  # block_q 64 at hd128 (one dQ slice per warp)
