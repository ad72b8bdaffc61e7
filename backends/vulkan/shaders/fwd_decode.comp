#version 450
// The decode forward (few query rows, long keys: a KV cache), fp16 and bf16 K/V.
//
// One workgroup per (split, kv head, batch entry) serves every query row that reads
// that kv head: the GQA group's G heads x SQ query rows (R = G x SQ rows, at most
// 8), so K and V are read from memory once per group, not once per query head.
// The workgroup's 128 invocations form KL key lanes x DL dim lanes (the DL
// consecutive invocations of a key lane share a subgroup); a lane owns C chunks of
// 8 dims, chunk c covering dims 8 (c DL + dl) .. + 8, so a key lane reads a K or V
// row as consecutive 16-byte words. Each iteration a key lane takes U keys, their K
// and V words requested one iteration ahead (register double buffering).
//
// The per-key scalar work is done once per (row, key), not once per lane: each lane
// computes its partial dot products for all U x R (key, row) pairs, and a
// reduce-scatter over the DL lanes (halving exchanges by subgroupShuffleXor) leaves
// each lane the full scores of N = max(U RP / DL, 1) pairs (RP: R rounded up to a
// power of two; with fewer pairs than lanes, REP = DL / (U RP) lanes hold each pair).
// A lane masks, scores and exponentiates only its own pairs; the row maxima and sums
// over the key lane's U keys are xor-shuffles among the U lanes holding one row; then
// every lane fetches the U x R probabilities and R rescale factors it needs for its
// dims of P V with subgroupShuffle. Each key lane keeps its own online-softmax state;
// at the end the KL key lanes' (m, l, O) merge in shared memory in key-lane order,
// so the result does not depend on timing. With num_splits > 1 the partial rows go
// to the workspace and merge.comp finishes; else O and LSE are written here.
//
// Pair v = u RP + r (key u of the lane's U, row r). After the reduce-scatter, lane
// dl holds pairs v0 + k, k < N, v0 = (dl / REP) N; the host keeps U <= DL, so
// N <= RP and a lane's pairs share one key: u = v0 / RP, rows v0 % RP + k.
//
// The host (vk_dispatch.c, pick_decode) guarantees: D == DV, D % 8 == 0, D / 8 a
// multiple of DL, DL a power of two no larger than the device's smallest subgroup,
// U a power of two <= DL, the K and V views' element offsets and strides multiples of
// 8 (16-byte words), R = G x SQ <= 8, no 2:4 sparsity.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 0) const int D = 128; // = DV
layout(constant_id = 1) const int DV = 128;
layout(constant_id = 2) const int R = 4;   // rows per workgroup: G x SQ
layout(constant_id = 3) const int SQ = 1;  // query rows per head (P.seqlen_q)
layout(constant_id = 4) const int DL = 16; // dim lanes per key
layout(constant_id = 5) const int PA_DTYPE = 1;
layout(constant_id = 6) const int U = 4;   // keys per key lane per iteration
layout(local_size_x = 128) in;

#include "softmax.glsl"
#include "io.glsl"

// K and V again, as 16-byte words (aliases of bindings 2 and 3).
layout(set = 0, binding = 2, std430) readonly buffer KVec { uvec4 k_vec[]; };
layout(set = 0, binding = 3, std430) readonly buffer VVec { uvec4 v_vec[]; };

const int C = D / (8 * DL);                    // chunks of 8 dims per lane
const int RP = R <= 1 ? 1 : R <= 2 ? 2 : R <= 4 ? 4 : 8;
const int NV = U * RP;                         // (key, row) pairs of a key lane
const int N = NV >= DL ? NV / DL : 1;          // pairs a lane holds after the scatter
const int REP = NV >= DL ? 1 : DL / NV;        // lanes holding the same pairs

const int WG = 128;
const int KL = WG / DL;      // key lanes
shared float sAcc[KL * D];   // [key lane][dim] of one row
shared float sM[R * KL], sL[R * KL], sW[KL]; // [row][key lane] m, l; merge weights

// Dim d of the row in sAcc, the key lanes' partial O weighted by sW, in lane order.
float merged_dim(int d) {
  float x = 0.0;
  for (int k = 0; k < KL; ++k) x = fma(sAcc[k * D + d], sW[k], x);
  return x;
}

// The 8 values of a 16-byte word of fp16 or bf16.
void unpack8(uvec4 w, out float x[8]) {
  [[unroll]] for (int e = 0; e < 4; ++e) {
    uint u = w[e];
    if (PA_DTYPE == PA_BF16) {
      x[2 * e] = uintBitsToFloat(u << 16);
      x[2 * e + 1] = uintBitsToFloat(u & 0xffff0000u);
    } else {
      vec2 f = unpackHalf2x16(u);
      x[2 * e] = f.x;
      x[2 * e + 1] = f.y;
    }
  }
}

// Request the K and V words of keys jb + u KL + kl (u < U) for this lane's dims; a key
// past j_end is clamped to j_end - 1 (loaded, then dropped by the mask).
void load_kv(uint k_row0, uint v_row0, int jb, int j_end, int kl, int dl, out uvec4 kw[U][C],
             out uvec4 vw[U][C]) {
  [[unroll]] for (int u = 0; u < U; ++u) {
    const uint j = uint(min(jb + u * KL + kl, j_end - 1));
    const uint kr = (k_row0 + j * P.k_ss) >> 3;
    const uint vr = (v_row0 + j * P.v_ss) >> 3;
    [[unroll]] for (int c = 0; c < C; ++c) {
      kw[u][c] = k_vec[kr + uint(c * DL + dl)];
      vw[u][c] = v_vec[vr + uint(c * DL + dl)];
    }
  }
}

void main() {
  // Lanes from the subgroup numbering, so a key's DL lanes share a subgroup.
  const int sg_lane = int(gl_SubgroupInvocationID);
  const int dl = sg_lane % DL;
  const uint lane0 = uint(sg_lane - dl); // the key lane's first invocation
  const int kl = int(gl_SubgroupID) * (int(gl_SubgroupSize) / DL) + sg_lane / DL;
  const uint split = gl_WorkGroupID.x;
  const int hk = int(gl_WorkGroupID.y), b = int(gl_WorkGroupID.z);
  const int G = P.heads_q / P.heads_kv;

  const pa_seq seq = pa_problem_seq(b);
  if (seq.len_q <= 0) return;
  const pa_mask m = pa_problem_mask(seq);
  const int nq = min(seq.len_q, SQ);

  // The pairs this lane holds after the scatter: key u_own, rows r0 + k.
  const int v0 = (dl / REP) * N;
  const int u_own = v0 / RP, r0 = v0 % RP;

  // This lane's dims of every row's query; its own rows' ALiBi slopes and key ranges.
  // Every loop over R, U, C, N or 8 is unrolled ([[unroll]]: their bounds are
  // specialization constants), so the arrays below live in registers.
  float q[R][C * 8];
  [[unroll]] for (int r = 0; r < R; ++r) {
    const int h = hk * G + r / SQ, i = r % SQ;
    const uint e0 = i < nq ? pa_view_row(P.q_off, P.q_sb, P.q_ss, P.q_sh, b, seq.q_start, i, h) : 0u;
    [[unroll]] for (int c = 0; c < C; ++c)
      [[unroll]] for (int e = 0; e < 8; ++e)
        q[r][c * 8 + e] = i < nq ? pa_load_q(e0 + uint(8 * (c * DL + dl) + e)) : 0.0;
  }
  float slope[N];
  int r_lo[N], r_hi[N], own_h[N], own_i[N];
  [[unroll]] for (int k = 0; k < N; ++k) {
    const int r = r0 + k;
    own_h[k] = hk * G + min(r, R - 1) / SQ;
    own_i[k] = min(r, R - 1) % SQ;
    slope[k] = pa_problem_alibi_slope(b, own_h[k]);
    pa_mask_row_range(m, own_i[k], r_lo[k], r_hi[k]);
    if (r >= R || own_i[k] >= nq) r_hi[k] = r_lo[k]; // padding rows keep nothing
  }
  const bool block_mask = (P.flags & PA_BLOCK_MASK) != 0u;

  // This split's keys: the rows' union range, cut into runs of whole iterations.
  int lo, hi;
  pa_mask_rows_range(m, 0, nq, lo, hi);
  const int step = KL * U;
  const int n = max(hi - lo, 0);
  const int per = ((n + int(P.num_splits) - 1) / int(P.num_splits) + step - 1) / step * step;
  const int j_begin = min(hi, lo + int(split) * per);
  const int j_end = max(j_begin, min(hi, j_begin + per));

  pa_softmax_row row[N]; // the online softmax of this key lane's rows r0 + k
  [[unroll]] for (int k = 0; k < N; ++k) row[k] = pa_softmax_start();
  float acc[R][C * 8];
  [[unroll]] for (int r = 0; r < R; ++r)
    [[unroll]] for (int x = 0; x < C * 8; ++x) acc[r][x] = 0.0;

  const uint k_row0 = pa_view_row(P.k_off, P.k_sb, P.k_ss, P.k_sh, b, seq.k_start, 0, hk);
  const uint v_row0 = pa_view_row(P.v_off, P.v_sb, P.v_ss, P.v_sh, b, seq.k_start, 0, hk);
  uvec4 kn[U][C], vn[U][C];
  if (j_begin < j_end) load_kv(k_row0, v_row0, j_begin, j_end, kl, dl, kn, vn);
  for (int jb = j_begin; jb < j_end; jb += step) {
    uvec4 kw[U][C], vw[U][C];
    [[unroll]] for (int u = 0; u < U; ++u)
      [[unroll]] for (int c = 0; c < C; ++c) {
        kw[u][c] = kn[u][c];
        vw[u][c] = vn[u][c];
      }
    if (jb + step < j_end) load_kv(k_row0, v_row0, jb + step, j_end, kl, dl, kn, vn);

    // Partial dots of every pair over this lane's dims.
    float x[NV];
    [[unroll]] for (int u = 0; u < U; ++u) {
      float kx[C * 8];
      [[unroll]] for (int c = 0; c < C; ++c) {
        float x8[8];
        unpack8(kw[u][c], x8);
        [[unroll]] for (int e = 0; e < 8; ++e) kx[c * 8 + e] = x8[e];
      }
      [[unroll]] for (int r = 0; r < RP; ++r) {
        float dot = 0.0;
        if (r < R)
          [[unroll]] for (int e = 0; e < C * 8; ++e) dot = fma(q[r][e], kx[e], dot);
        x[u * RP + r] = dot;
      }
    }
    // Reduce-scatter over the DL lanes: each stage halves the pairs a lane keeps
    // (the upper half where its lane bit is set), adding the partner's copy.
    [[unroll]] for (int st = 1; (DL >> st) > 0; ++st) {
      const int o = DL >> st, half_n = NV >> st;
      const bool up = (dl & o) != 0;
      if (half_n >= 1) {
        [[unroll]] for (int k = 0; k < half_n; ++k) {
          const float send = up ? x[k] : x[k + half_n];
          const float keep = up ? x[k + half_n] : x[k];
          x[k] = keep + subgroupShuffleXor(send, uint(o));
        }
      } else {
        x[0] += subgroupShuffleXor(x[0], uint(o));
      }
    }

    // This lane's pairs: scores, the rows' maxima over the key lane's U keys (xor
    // across the U lanes holding a row), alpha, p and the rows' sums.
    const int j = jb + u_own * KL + kl;
    float alpha[N], p[N];
    [[unroll]] for (int k = 0; k < N; ++k) {
      const bool keep = j < j_end && j >= r_lo[k] && j < r_hi[k] &&
                        (!block_mask || pa_block_mask_keep(b, own_h[k], own_i[k] / P.block_q, j / P.block_k));
      const float s = keep ? pa_score(x[k], P.scale, P.softcap, slope[k], m, own_i[k], j) : PA_NEG_INF;
      float tile_max = s;
      [[unroll]] for (int w = 1; w < U; w *= 2)
        tile_max = max(tile_max, subgroupShuffleXor(tile_max, uint(w * (RP / N) * REP)));
      alpha[k] = pa_softmax_update_max(row[k], tile_max);
      p[k] = pa_exp(s - pa_softmax_ref(row[k]));
      float p_sum = p[k];
      [[unroll]] for (int w = 1; w < U; w *= 2) p_sum += subgroupShuffleXor(p_sum, uint(w * (RP / N) * REP));
      pa_softmax_rescale(row[k], alpha[k]);
      pa_softmax_accumulate(row[k], p_sum);
    }

    // O = alpha O + P V for this lane's dims: the rows' alpha and the pairs' p from
    // the lanes holding them (pair v sits on lane (v / N) REP, slot v % N).
    [[unroll]] for (int r = 0; r < R; ++r) {
      const float a = subgroupShuffle(alpha[r % N], lane0 + uint((r / N) * REP));
      [[unroll]] for (int e = 0; e < C * 8; ++e) acc[r][e] *= a;
    }
    [[unroll]] for (int u = 0; u < U; ++u) {
      float vx[C * 8];
      [[unroll]] for (int c = 0; c < C; ++c) {
        float x8[8];
        unpack8(vw[u][c], x8);
        [[unroll]] for (int e = 0; e < 8; ++e) vx[c * 8 + e] = x8[e];
      }
      [[unroll]] for (int r = 0; r < R; ++r) {
        const int v = u * RP + r;
        const float pv = subgroupShuffle(p[v % N], lane0 + uint((v / N) * REP));
        [[unroll]] for (int e = 0; e < C * 8; ++e) acc[r][e] = fma(pv, vx[e], acc[r][e]);
      }
    }
  }

  // Each key lane's (m, l) per row, from the lanes holding its key-0 pairs.
  if (u_own == 0 && dl % REP == 0)
    [[unroll]] for (int k = 0; k < N; ++k)
      if (r0 + k < R) {
        sM[(r0 + k) * KL + kl] = row[k].m;
        sL[(r0 + k) * KL + kl] = row[k].l;
      }

  // Merge the key lanes, one row at a time: the row's maximum M over the lanes, each
  // lane's weight exp(m_k - M) once (sW), then O and l as weighted sums in key-lane
  // order (deterministic).
  const int tid = int(gl_LocalInvocationIndex);
  [[unroll]] for (int r = 0; r < R; ++r) {
    const int h = hk * G + r / SQ, i = r % SQ;
    barrier();
    [[unroll]] for (int c = 0; c < C; ++c)
      [[unroll]] for (int e = 0; e < 8; ++e) sAcc[kl * D + 8 * (c * DL + dl) + e] = acc[r][c * 8 + e];
    barrier();
    if (i >= nq) continue; // uniform across the workgroup
    pa_softmax_row total = pa_softmax_start();
    for (int k = 0; k < KL; ++k) total.m = max(total.m, sM[r * KL + k]);
    if (tid < KL) sW[tid] = sM[r * KL + tid] == PA_NEG_INF ? 0.0 : pa_exp(sM[r * KL + tid] - total.m);
    barrier();
    for (int k = 0; k < KL; ++k) total.l += sL[r * KL + k] * sW[k];
    const int row_global = (P.flags & PA_VARLEN) != 0u ? seq.q_start + i : b * P.seqlen_q + i;
    if (P.num_splits > 1u) {
      const uint base = pa_ws_row(split, h, row_global, DV);
      for (int d = tid; d < D; d += WG) ws_data[base + uint(d)] = merged_dim(d);
      if (tid == 0) {
        ws_data[base + uint(DV)] = total.m;
        ws_data[base + uint(DV) + 1u] = total.l;
      }
      continue;
    }
    const float norm = pa_softmax_normaliser(total);
    const uint o_e0 = pa_view_row(P.o_off, P.o_sb, P.o_ss, P.o_sh, b, seq.q_start, i, h);
    const int par = int(pa_row_parity(o_e0));
    for (int k = tid; k < pa_row_words(DV); k += WG) {
      const int d0 = 2 * k - par;
      const float x0 = d0 >= 0 && d0 < D ? merged_dim(d0) : 0.0;
      const float x1 = d0 + 1 >= 0 && d0 + 1 < D ? merged_dim(d0 + 1) : 0.0;
      pa_store_o_pair(o_e0, k, DV, x0 * norm, x1 * norm);
    }
    if (tid == 0 && (P.flags & PA_HAS_LSE) != 0u)
      lse_data[P.lse_off + uint(b) * P.lse_sb + uint(h) * P.lse_sh + uint(seq.q_start + i) * P.lse_ss] =
          pa_softmax_lse(total);
  }
}
