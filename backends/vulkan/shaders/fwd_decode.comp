#version 450
// The decode forward (few query rows, long keys: a KV cache), fp16 and bf16 K/V.
//
// One workgroup per (split, kv head, batch entry) serves every query row that reads
// that kv head: the GQA group's G heads x SQ query rows (R = G x SQ rows, at most
// 8), so K and V are read from memory once per group, not once per query head.
// The workgroup's invocations form KL key lanes x DL dim lanes (DL consecutive
// invocations of one subgroup share a key); a lane owns C chunks of 8 dims, chunk
// c covering dims 8 (c DL + dl) .. + 8, so the DL lanes of a key read its row as
// consecutive 16-byte words. Each iteration a key lane takes U keys (their K and
// V words are requested one iteration ahead: U x C x 2 loads in flight while the
// previous keys are computed), computes its partial dot products, sums them
// across the DL lanes with subgroup shuffles, and runs the online softmax of its
// own keys. At the end the KL lanes'
// (m, l, O) are merged in shared memory in key-lane order, so the result does not
// depend on timing. With num_splits > 1 the partial rows go to the workspace and
// merge.comp finishes; else O and LSE are written here.
//
// The host (vk_dispatch.c, pick_decode) guarantees: D == DV, D % 8 == 0, D / 8 a
// multiple of DL, DL a power of two no larger than the device's smallest subgroup,
// the K and V views' element offsets and strides multiples of 8 (16-byte words),
// R = G x SQ <= 8, no 2:4 sparsity.
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
layout(local_size_x = 128) in;             // (constant 6, the others' workgroup size, is unused)

#include "softmax.glsl"
#include "io.glsl"

// K and V again, as 16-byte words (aliases of bindings 2 and 3).
layout(set = 0, binding = 2, std430) readonly buffer KVec { uvec4 k_vec[]; };
layout(set = 0, binding = 3, std430) readonly buffer VVec { uvec4 v_vec[]; };

const int C = D / (8 * DL);  // chunks of 8 dims per lane
const int U = R <= 4 ? 4 : 2; // keys per key lane per iteration

const int WG = 128;
const int KL = WG / DL;      // key lanes
shared float sAcc[KL * D];   // [key lane][dim] of one row: 4 C KiB
shared float sM[KL], sL[KL], sW[KL]; // per key lane: m, l, merge weight

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
void load_kv(int b, int hk, int k_start, int jb, int j_end, int kl, int dl, out uvec4 kw[U][C],
             out uvec4 vw[U][C]) {
  [[unroll]] for (int u = 0; u < U; ++u) {
    const int j = min(jb + u * KL + kl, j_end - 1);
    const uint kr = pa_view_row(P.k_off, P.k_sb, P.k_ss, P.k_sh, b, k_start, j, hk) >> 3;
    const uint vr = pa_view_row(P.v_off, P.v_sb, P.v_ss, P.v_sh, b, k_start, j, hk) >> 3;
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
  const int kl = int(gl_SubgroupID) * (int(gl_SubgroupSize) / DL) + sg_lane / DL;
  const uint split = gl_WorkGroupID.x;
  const int hk = int(gl_WorkGroupID.y), b = int(gl_WorkGroupID.z);
  const int G = P.heads_q / P.heads_kv;

  const pa_seq seq = pa_problem_seq(b);
  if (seq.len_q <= 0) return;
  const pa_mask m = pa_problem_mask(seq);
  const int nq = min(seq.len_q, SQ);

  // This lane's dims of every row's query, the rows' ALiBi slopes and key ranges.
  // Every loop over R, U, C or 8 is unrolled ([[unroll]]: their bounds are
  // specialization constants), so the arrays below live in registers.
  float q[R][C * 8];
  float slope[R];
  int r_lo[R], r_hi[R];
  [[unroll]] for (int r = 0; r < R; ++r) {
    const int h = hk * G + r / SQ, i = r % SQ;
    slope[r] = pa_problem_alibi_slope(b, h);
    pa_mask_row_range(m, i, r_lo[r], r_hi[r]);
    if (i >= nq) r_hi[r] = r_lo[r]; // a padding row keeps nothing
    const uint e0 = i < nq ? pa_view_row(P.q_off, P.q_sb, P.q_ss, P.q_sh, b, seq.q_start, i, h) : 0u;
    [[unroll]] for (int c = 0; c < C; ++c)
      [[unroll]] for (int e = 0; e < 8; ++e)
        q[r][c * 8 + e] = i < nq ? pa_load_q(e0 + uint(8 * (c * DL + dl) + e)) : 0.0;
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

  pa_softmax_row row[R];
  float acc[R][C * 8];
  [[unroll]] for (int r = 0; r < R; ++r) {
    row[r] = pa_softmax_start();
    [[unroll]] for (int x = 0; x < C * 8; ++x) acc[r][x] = 0.0;
  }

  // K and V words of one iteration (U keys of this lane), requested together; the
  // next iteration's are requested before this one's are used (register double
  // buffering), so a lane always has loads in flight while it computes.
  uvec4 kn[U][C], vn[U][C];
  if (j_begin < j_end) load_kv(b, hk, seq.k_start, j_begin, j_end, kl, dl, kn, vn);
  for (int jb = j_begin; jb < j_end; jb += step) {
    uvec4 kw[U][C], vw[U][C];
    [[unroll]] for (int u = 0; u < U; ++u)
      [[unroll]] for (int c = 0; c < C; ++c) {
        kw[u][c] = kn[u][c];
        vw[u][c] = vn[u][c];
      }
    if (jb + step < j_end) load_kv(b, hk, seq.k_start, jb + step, j_end, kl, dl, kn, vn);
    // Scores: partial dots over this lane's dims, summed across the key's DL lanes.
    float s[U][R];
    [[unroll]] for (int u = 0; u < U; ++u) {
      float kx[C * 8];
      [[unroll]] for (int c = 0; c < C; ++c) {
        float x8[8];
        unpack8(kw[u][c], x8);
        [[unroll]] for (int e = 0; e < 8; ++e) kx[c * 8 + e] = x8[e];
      }
      [[unroll]] for (int r = 0; r < R; ++r) {
        float dot = 0.0;
        [[unroll]] for (int x = 0; x < C * 8; ++x) dot = fma(q[r][x], kx[x], dot);
        [[unroll]] for (int o = DL / 2; o > 0; o /= 2) dot += subgroupShuffleXor(dot, uint(o));
        s[u][r] = dot;
      }
    }
    float vx[U][C * 8];
    [[unroll]] for (int u = 0; u < U; ++u)
      [[unroll]] for (int c = 0; c < C; ++c) {
        float x8[8];
        unpack8(vw[u][c], x8);
        [[unroll]] for (int e = 0; e < 8; ++e) vx[u][c * 8 + e] = x8[e];
      }
    [[unroll]] for (int r = 0; r < R; ++r) {
      const int h = hk * G + r / SQ, i = r % SQ;
      float tile_max = PA_NEG_INF;
      [[unroll]] for (int u = 0; u < U; ++u) {
        const int j = jb + u * KL + kl;
        const bool keep = j < j_end && j >= r_lo[r] && j < r_hi[r] &&
                          (!block_mask || pa_block_mask_keep(b, h, i / P.block_q, j / P.block_k));
        s[u][r] = keep ? pa_score(s[u][r], P.scale, P.softcap, slope[r], m, i, j) : PA_NEG_INF;
        tile_max = max(tile_max, s[u][r]);
      }
      const float alpha = pa_softmax_update_max(row[r], tile_max);
      pa_softmax_rescale(row[r], alpha);
      const float ref = pa_softmax_ref(row[r]);
      float p_sum = 0.0;
      [[unroll]] for (int x = 0; x < C * 8; ++x) acc[r][x] *= alpha;
      [[unroll]] for (int u = 0; u < U; ++u) {
        const float p = pa_exp(s[u][r] - ref);
        p_sum += p;
        [[unroll]] for (int x = 0; x < C * 8; ++x) acc[r][x] = fma(p, vx[u][x], acc[r][x]);
      }
      pa_softmax_accumulate(row[r], p_sum);
    }
  }

  // Merge the key lanes, one row at a time: the row's maximum M over the lanes, each
  // lane's weight exp(m_k - M) once (sW), then O and l as weighted sums in key-lane
  // order (deterministic).
  const int tid = int(gl_LocalInvocationIndex);
  for (int r = 0; r < R; ++r) {
    const int h = hk * G + r / SQ, i = r % SQ;
    barrier();
    [[unroll]] for (int c = 0; c < C; ++c)
      [[unroll]] for (int e = 0; e < 8; ++e) sAcc[kl * D + 8 * (c * DL + dl) + e] = acc[r][c * 8 + e];
    if (dl == 0) {
      sM[kl] = row[r].m;
      sL[kl] = row[r].l;
    }
    barrier();
    if (i >= nq) continue; // uniform across the workgroup
    pa_softmax_row total = pa_softmax_start();
    for (int k = 0; k < KL; ++k) total.m = max(total.m, sM[k]);
    if (tid < KL) sW[tid] = sM[tid] == PA_NEG_INF ? 0.0 : pa_exp(sM[tid] - total.m);
    barrier();
    for (int k = 0; k < KL; ++k) total.l += sL[k] * sW[k];
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
