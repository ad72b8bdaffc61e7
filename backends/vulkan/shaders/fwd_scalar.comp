#version 450
// The scalar forward: fp32 arithmetic on any Vulkan 1.1 device, no subgroup
// operations (so any subgroup size works) and shared memory sized by the planner
// (16 KiB suffices up to head dim 256).
//
// One workgroup per (query block, query head, batch entry x split). BQ rows of Q
// stay in shared memory; K and V stream through it BK keys at a time. TPR threads
// serve each row: thread `lane` of row r computes the scores of keys lane,
// lane + TPR, ... and owns output words lane, lane + TPR, ... (two dims each) in
// registers. Every lane of a row runs the online softmax itself over the BK scores
// in shared memory, in the same order, so all lanes agree on m and l bit for bit.
//
// num_splits > 1 (split-KV decode): split z % num_splits visits its share of the
// key tiles and writes the unnormalised accumulator with m and l to the workspace;
// merge.comp combines the splits in order.
#extension GL_GOOGLE_include_directive : require

layout(constant_id = 0) const int D = 64;     // head dim of q and k
layout(constant_id = 1) const int DV = 64;    // head dim of v and o
layout(constant_id = 2) const int BQ = 16;    // query rows per workgroup
layout(constant_id = 3) const int BK = 16;    // keys per tile
layout(constant_id = 4) const int TPR = 8;    // threads per query row
layout(constant_id = 5) const int PA_DTYPE = 0;
layout(local_size_x_id = 6) in;               // = BQ * TPR

#include "softmax.glsl"
#include "io.glsl"
#include "tile.glsl"

const int KS = D + 1;                          // padded K row: lanes read different banks
const int NW = (DV / 2 + 1 + TPR - 1) / TPR;   // output words per thread

shared float sQ[BQ * D];  // [BQ rows x D]
shared float sK[BK * KS]; // [BK keys x D], rows padded
shared float sV[BK * DV]; // [BK keys x DV]
shared float sS[BQ * BK]; // [BQ rows x BK] scores

void main() {
  const int tid = int(gl_LocalInvocationIndex);
  const int r = tid / TPR, lane = tid % TPR;
  const int h = int(gl_WorkGroupID.y);
  const int b = int(gl_WorkGroupID.z / P.num_splits);
  const uint split = gl_WorkGroupID.z % P.num_splits;
  const int hk = h / (P.heads_q / P.heads_kv);

  const pa_seq seq = pa_problem_seq(b);
  const int i0 = int(gl_WorkGroupID.x) * BQ;
  if (i0 >= seq.len_q) return; // the whole workgroup: no barrier is left waiting
  const int i1 = min(i0 + BQ, seq.len_q);
  const int i = i0 + r;
  const bool row_valid = i < seq.len_q;
  const pa_mask m = pa_problem_mask(seq);
  const float slope = pa_problem_alibi_slope(b, h);

  for (int x = tid; x < BQ * D; x += BQ * TPR) {
    int rr = x / D, d = x % D;
    sQ[x] = i0 + rr < seq.len_q
        ? pa_load_q(pa_view_row(P.q_off, P.q_sb, P.q_ss, P.q_sh, b, seq.q_start, i0 + rr, h) + uint(d))
        : 0.0;
  }

  // The output row's first element decides which dims each word holds.
  const uint o_e0 = pa_view_row(P.o_off, P.o_sb, P.o_ss, P.o_sh, b, seq.q_start, min(i, seq.len_q - 1), h);
  const int par = int(pa_row_parity(o_e0));
  float acc[2 * NW]; // dims 2k - par, 2k + 1 - par of words k = lane + w * TPR
  for (int w = 0; w < 2 * NW; ++w) acc[w] = 0.0;
  pa_softmax_row row = pa_softmax_start();

  int t_begin, t_end;
  pa_tile_range(m, i0, i1, BK, split, P.num_splits, t_begin, t_end);
  for (int t = t_begin; t < t_end; ++t) {
    const int j0 = t * BK;
    const int j1 = min(j0 + BK, seq.len_k);
    if (!pa_tile_any_block(b, h, i0, i1, j0, j1)) continue; // uniform: whole tile dropped

    barrier(); // the previous tile's K, V and S are no longer read
    for (int x = tid; x < BK * D; x += BQ * TPR) {
      int jj = x / D, d = x % D;
      sK[jj * KS + d] = j0 + jj < j1
          ? pa_load_k(pa_view_row(P.k_off, P.k_sb, P.k_ss, P.k_sh, b, seq.k_start, j0 + jj, hk) + uint(d))
          : 0.0;
    }
    for (int x = tid; x < BK * DV; x += BQ * TPR) {
      int jj = x / DV, d = x % DV;
      sV[x] = j0 + jj < j1
          ? pa_load_v(pa_view_row(P.v_off, P.v_sb, P.v_ss, P.v_sh, b, seq.k_start, j0 + jj, hk) + uint(d))
          : 0.0;
    }
    barrier();

    // Scores: -inf where any mask drops (i, j).
    for (int jj = lane; jj < BK; jj += TPR) {
      const int j = j0 + jj;
      float s = PA_NEG_INF;
      if (row_valid && j < j1 && pa_mask_keep(m, i, j) &&
          pa_block_mask_keep(b, h, i / P.block_q, j / P.block_k)) {
        float dot_qk = 0.0;
        for (int d = 0; d < D; ++d) dot_qk += sQ[r * D + d] * sK[jj * KS + d];
        s = pa_score(dot_qk, P.scale, P.softcap, slope, m, i, j);
      }
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

    // The online softmax over this tile, then acc += P V.
    float tile_max = PA_NEG_INF;
    for (int jj = 0; jj < BK; ++jj) tile_max = max(tile_max, sS[r * BK + jj]);
    const float alpha = pa_softmax_update_max(row, tile_max);
    pa_softmax_rescale(row, alpha);
    for (int w = 0; w < 2 * NW; ++w) acc[w] *= alpha;
    const float ref = pa_softmax_ref(row);
    float p_sum = 0.0;
    for (int jj = 0; jj < BK; ++jj) {
      const float p = pa_exp(sS[r * BK + jj] - ref);
      p_sum += p;
      if (p == 0.0) continue;
      for (int w = 0; w < NW; ++w) {
        const int d0 = 2 * (lane + w * TPR) - par;
        if (d0 >= 0 && d0 < DV) acc[2 * w] += p * sV[jj * DV + d0];
        if (d0 + 1 >= 0 && d0 + 1 < DV) acc[2 * w + 1] += p * sV[jj * DV + d0 + 1];
      }
    }
    pa_softmax_accumulate(row, p_sum);
  }

  if (!row_valid) return;
  if (P.num_splits > 1u) { // partial result: the merge normalises
    const int row_global = (P.flags & PA_VARLEN) != 0u ? seq.q_start + i : b * P.seqlen_q + i;
    const uint base = pa_ws_row(split, h, row_global, DV);
    for (int w = 0; w < NW; ++w) {
      const int d0 = 2 * (lane + w * TPR) - par;
      if (d0 >= 0 && d0 < DV) ws_data[base + uint(d0)] = acc[2 * w];
      if (d0 + 1 >= 0 && d0 + 1 < DV) ws_data[base + uint(d0 + 1)] = acc[2 * w + 1];
    }
    if (lane == 0) {
      ws_data[base + uint(DV)] = row.m;
      ws_data[base + uint(DV) + 1u] = row.l;
    }
    return;
  }
  const float norm = pa_softmax_normaliser(row);
  for (int w = 0; w < NW; ++w)
    pa_store_o_pair(o_e0, lane + w * TPR, DV, acc[2 * w] * norm, acc[2 * w + 1] * norm);
  if (lane == 0 && (P.flags & PA_HAS_LSE) != 0u)
    lse_data[P.lse_off + uint(b) * P.lse_sb + uint(h) * P.lse_sh + uint(seq.q_start + i) * P.lse_ss] =
        pa_softmax_lse(row);
}
