#version 450
// The cooperative-matrix forward (tensor cores through VK_NV/KHR_cooperative_matrix):
// fp16 inputs, fp32 accumulation; head dims multiples of 16.
//
// UNVERIFIED: no device with cooperative matrices was available when this was
// written; CI compiles it, and the module runs it only when asked
// (POLYATTN_VULKAN_KERNEL=coopmat) on a device that reports the extension.
//
// One workgroup per (query block, query head, batch entry x split), NSG subgroups,
// subgroup g owning query rows [16 g, 16 g + 16) of the block (BQ = 16 NSG). Per key
// tile: S = Q K^T by 16x16x16 products into shared memory (fp32), the scores and
// the online softmax by all threads as in fwd_scalar.comp (TPR threads per row),
// P (fp16) back to shared memory, then O += P V with the O accumulator kept in
// shared memory (fp32), where the rows are rescaled by alpha between tiles.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require

layout(constant_id = 0) const int D = 64;    // multiple of 16
layout(constant_id = 1) const int DV = 64;   // multiple of 16
layout(constant_id = 2) const int BQ = 64;   // 16 x subgroups
layout(constant_id = 3) const int BK = 32;   // multiple of 16
layout(constant_id = 4) const int TPR = 2;   // threads per query row
layout(constant_id = 5) const int PA_DTYPE = 1; // fp16 only
layout(local_size_x_id = 6) in;              // BQ x TPR = subgroups x subgroup size

#include "coopmat.glsl"
#include "softmax.glsl"
#include "io.glsl"
#include "tile.glsl"

shared float16_t sQ[BQ * D];  // [BQ rows x D]
shared float16_t sK[BK * D];  // [BK keys x D]
shared float16_t sV[BK * DV]; // [BK keys x DV]
shared float sS[BQ * BK];     // [BQ x BK] dots, then scores
shared float16_t sP[BQ * BK]; // [BQ x BK] probabilities
shared float sO[BQ * DV];     // [BQ x DV] output accumulator

void main() {
  const int tid = int(gl_LocalInvocationIndex);
  const int r = tid / TPR, lane = tid % TPR;
  const int sg = int(gl_SubgroupID);
  const int h = int(gl_WorkGroupID.y);
  const int b = int(gl_WorkGroupID.z / P.num_splits);
  const uint split = gl_WorkGroupID.z % P.num_splits;
  const int hk = h / (P.heads_q / P.heads_kv);

  const pa_seq seq = pa_problem_seq(b);
  const int i0 = int(gl_WorkGroupID.x) * BQ;
  if (i0 >= seq.len_q) return;
  const int i1 = min(i0 + BQ, seq.len_q);
  const int i = i0 + r;
  const bool row_valid = i < seq.len_q;
  const pa_mask m = pa_problem_mask(seq);
  const float slope = pa_problem_alibi_slope(b, h);
  const int nthreads = BQ * TPR;

  for (int x = tid; x < BQ * D; x += nthreads) {
    int rr = x / D, d = x % D;
    sQ[x] = float16_t(i0 + rr < seq.len_q
        ? pa_load_q(pa_view_row(P.q_off, P.q_sb, P.q_ss, P.q_sh, b, seq.q_start, i0 + rr, h) + uint(d))
        : 0.0);
  }
  for (int x = tid; x < BQ * DV; x += nthreads) sO[x] = 0.0;
  pa_softmax_row row = pa_softmax_start();

  int t_begin, t_end;
  pa_tile_range(m, i0, i1, BK, split, P.num_splits, t_begin, t_end);
  for (int t = t_begin; t < t_end; ++t) {
    const int j0 = t * BK;
    const int j1 = min(j0 + BK, seq.len_k);
    if (!pa_tile_any_block(b, h, i0, i1, j0, j1)) continue;

    barrier();
    for (int x = tid; x < BK * D; x += nthreads) {
      int jj = x / D, d = x % D;
      sK[x] = float16_t(j0 + jj < j1
          ? pa_load_k(pa_view_row(P.k_off, P.k_sb, P.k_ss, P.k_sh, b, seq.k_start, j0 + jj, hk) + uint(d))
          : 0.0);
    }
    for (int x = tid; x < BK * DV; x += nthreads) {
      int jj = x / DV, d = x % DV;
      sV[x] = float16_t(j0 + jj < j1
          ? pa_load_v(pa_view_row(P.v_off, P.v_sb, P.v_ss, P.v_sh, b, seq.k_start, j0 + jj, hk) + uint(d))
          : 0.0);
    }
    barrier();

    // S = Q K^T: subgroup sg, rows [16 sg, 16 sg + 16), every 16-key block.
    for (int nb = 0; nb < BK / 16; ++nb) {
      PA_MAT_C c = PA_MAT_C(0.0);
      for (int kb = 0; kb < D / 16; ++kb) {
        PA_MAT_A a;
        PA_MAT_B bm;
        pa_mat_load_rows(a, sQ, uint(16 * sg * D + 16 * kb), uint(D));
        pa_mat_load_cols(bm, sK, uint(16 * nb * D + 16 * kb), uint(D)); // K^T
        c = pa_mat_mul_add(a, bm, c);
      }
      pa_mat_store_rows(c, sS, uint(16 * sg * BK + 16 * nb), uint(BK));
    }
    barrier();

    // Scores in place: -inf where any mask drops (i, j).
    for (int jj = lane; jj < BK; jj += TPR) {
      const int j = j0 + jj;
      float s = PA_NEG_INF;
      if (row_valid && j < j1 && pa_mask_keep(m, i, j) &&
          pa_block_mask_keep(b, h, i / P.block_q, j / P.block_k))
        s = pa_score(sS[r * BK + jj], P.scale, P.softcap, slope, m, i, j);
      sS[r * BK + jj] = s;
    }
    barrier();
    if ((P.flags & PA_NM_2_4) != 0u) {
      for (int g = lane; g < BK / 4; g += TPR) {
        float s4[4];
        for (int a = 0; a < 4; ++a) s4[a] = sS[r * BK + 4 * g + a];
        pa_select_2_4(s4);
        for (int a = 0; a < 4; ++a) sS[r * BK + 4 * g + a] = s4[a];
      }
      barrier();
    }

    float tile_max = PA_NEG_INF;
    for (int jj = 0; jj < BK; ++jj) tile_max = max(tile_max, sS[r * BK + jj]);
    const float alpha = pa_softmax_update_max(row, tile_max);
    pa_softmax_rescale(row, alpha);
    const float ref = pa_softmax_ref(row);
    float p_sum = 0.0;
    for (int jj = 0; jj < BK; ++jj) {
      const float p = pa_exp(sS[r * BK + jj] - ref);
      p_sum += p;
      if (jj % TPR == lane) sP[r * BK + jj] = float16_t(p);
    }
    pa_softmax_accumulate(row, p_sum);
    for (int d = lane; d < DV; d += TPR) sO[r * DV + d] *= alpha;
    barrier();

    // O += P V: subgroup sg, its rows, every 16-dim block of the output.
    for (int db = 0; db < DV / 16; ++db) {
      PA_MAT_C c;
      pa_mat_load_rows(c, sO, uint(16 * sg * DV + 16 * db), uint(DV));
      for (int kb = 0; kb < BK / 16; ++kb) {
        PA_MAT_A a;
        PA_MAT_B bm;
        pa_mat_load_rows(a, sP, uint(16 * sg * BK + 16 * kb), uint(BK));
        pa_mat_load_rows(bm, sV, uint(16 * kb * DV + 16 * db), uint(DV));
        c = pa_mat_mul_add(a, bm, c);
      }
      pa_mat_store_rows(c, sO, uint(16 * sg * DV + 16 * db), uint(DV));
    }
  }
  barrier();

  if (!row_valid) return;
  if (P.num_splits > 1u) {
    const int row_global = (P.flags & PA_VARLEN) != 0u ? seq.q_start + i : b * P.seqlen_q + i;
    const uint base = pa_ws_row(split, h, row_global, DV);
    for (int d = lane; d < DV; d += TPR) ws_data[base + uint(d)] = sO[r * DV + d];
    if (lane == 0) {
      ws_data[base + uint(DV)] = row.m;
      ws_data[base + uint(DV) + 1u] = row.l;
    }
    return;
  }
  const float norm = pa_softmax_normaliser(row);
  const uint o_e0 = pa_view_row(P.o_off, P.o_sb, P.o_ss, P.o_sh, b, seq.q_start, i, h);
  const int par = int(pa_row_parity(o_e0));
  for (int k = lane; k < pa_row_words(DV); k += TPR) {
    const int d0 = 2 * k - par;
    const float x0 = d0 >= 0 && d0 < DV ? sO[r * DV + d0] : 0.0;
    const float x1 = d0 + 1 >= 0 && d0 + 1 < DV ? sO[r * DV + d0 + 1] : 0.0;
    pa_store_o_pair(o_e0, k, DV, x0 * norm, x1 * norm);
  }
  if (lane == 0 && (P.flags & PA_HAS_LSE) != 0u)
    lse_data[P.lse_off + uint(b) * P.lse_sb + uint(h) * P.lse_sh + uint(seq.q_start + i) * P.lse_ss] =
        pa_softmax_lse(row);
}
