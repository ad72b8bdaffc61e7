#version 450
// The cooperative-matrix-2 forward (VK_NV_cooperative_matrix2, NVIDIA tensor cores):
// fp16 inputs, fp32 accumulation, any head dim up to 256 (padded to a multiple of 16
// inside the kernel; the padding is read as zeros and never written).
//
// One workgroup per (query block, query head, batch entry x split), WG invocations
// (4 subgroups on NVIDIA), every matrix of workgroup scope, so the driver lays the
// tiles over the subgroups and stages them as it sees fit:
//   Q      [BQ x DP]  fp16 A      loaded once (tensor layout, rows past the sequence
//                                 read as 0)
//   K^T    [DP x BK]  fp16 B      per key tile, a transposing tensor view of K
//   S, P   [BQ x BK]  fp32 acc    S = Q K^T; masks, scale, softcap, ALiBi per element
//                                 through mask.glsl's pa_mask_keep / pa_block_mask_keep
//                                 / pa_score; P = exp(S - m)
//   V      [BK x DVP] fp16 B      per key tile
//   O      [BQ x DVP] fp32 acc    stays in registers across key tiles; rows rescaled
//                                 by alpha per element (alpha smeared across the row)
//   m, l   [BQ x 16]  fp32 acc    the online softmax's row state, every column of a
//                                 row holding the same value (row reductions)
// The online softmax steps are softmax.glsl's (update max, rescale, accumulate,
// normalise), called per element; its exponential is the device's exp() here
// (PA_SOFTMAX_EXP): its error is far below the fp16 rounding of P.
//
// num_splits > 1: split z % num_splits writes its unnormalised O rows with m and l to
// the workspace, as fwd_scalar.comp does; merge.comp combines them.
//
// 2:4 sparsity (flag PA_NM_2_4) needs a key's three neighbours, which a per-element
// function cannot see: with NM24 = 1 the scores take a round trip through shared
// memory for mask.glsl's pa_select_2_4.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require

layout(constant_id = 0) const int D = 128;       // head dim of q and k, at most 256
layout(constant_id = 1) const int DV = 128;      // head dim of v and o, at most 256
layout(constant_id = 2) const int BQ = 64;       // query rows per workgroup, multiple of 16
layout(constant_id = 3) const int BK = 64;       // keys per tile, multiple of 16
layout(constant_id = 4) const int NM24 = 0;      // 1: the 2:4 round trip (shared memory)
layout(constant_id = 5) const int PA_DTYPE = 1;  // fp16 only
layout(local_size_x_id = 6) in;                  // WG invocations

const int DP = (D + 15) / 16 * 16;   // the head dims as matrix dimensions
const int DVP = (DV + 15) / 16 * 16;
const int RS = 16;                   // columns of the row-state matrices

#define PA_SOFTMAX_EXP exp
#include "softmax.glsl"
#include "io.glsl"
#include "tile.glsl"

shared float sS[NM24 != 0 ? BQ * BK : 1]; // [BQ x BK] scores for 2:4

#define PA_CM2_SCOPE gl_ScopeWorkgroup
#include "coopmat2.glsl"

void main() {
  const int tid = int(gl_LocalInvocationIndex);
  const int nthreads = int(gl_WorkGroupSize.x);
  const int h = int(gl_WorkGroupID.y);
  const int b = int(gl_WorkGroupID.z / P.num_splits);
  const uint split = gl_WorkGroupID.z % P.num_splits;
  const int hk = h / (P.heads_q / P.heads_kv);

  g_seq = pa_problem_seq(b);
  // The last query blocks first: under a causal mask they have the most key tiles.
  const int i0 = int(gl_NumWorkGroups.x - 1u - gl_WorkGroupID.x) * BQ;
  if (i0 >= g_seq.len_q) return; // the whole workgroup
  const int i1 = min(i0 + BQ, g_seq.len_q);
  g_m = pa_problem_mask(g_seq);
  g_b = b;
  g_h = h;
  g_i0 = i0;
  g_slope = pa_problem_alibi_slope(b, h);
  const bool plain_score = P.softcap <= 0.0 && g_slope == 0.0 && (P.flags & PA_BLOCK_MASK) == 0u;

  // This (entry, head)'s rows of q/k/v/o as 2-D tensors [rows x dims].
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lay_q =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lay_k =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lay_v =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lay_o =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  lay_q = setTensorLayoutDimensionNV(lay_q, uint(g_seq.len_q), uint(D));
  lay_k = setTensorLayoutDimensionNV(lay_k, uint(g_seq.len_k), uint(D));
  lay_v = setTensorLayoutDimensionNV(lay_v, uint(g_seq.len_k), uint(DV));
  lay_o = setTensorLayoutDimensionNV(lay_o, uint(g_seq.len_q), uint(DV));
  lay_q = setTensorLayoutStrideNV(lay_q, P.q_ss, 1u);
  lay_k = setTensorLayoutStrideNV(lay_k, P.k_ss, 1u);
  lay_v = setTensorLayoutStrideNV(lay_v, P.v_ss, 1u);
  const uint q_base = pa_view_row(P.q_off, P.q_sb, P.q_ss, P.q_sh, b, g_seq.q_start, 0, h);
  const uint k_base = pa_view_row(P.k_off, P.k_sb, P.k_ss, P.k_sh, b, g_seq.k_start, 0, hk);
  const uint v_base = pa_view_row(P.v_off, P.v_sb, P.v_ss, P.v_sh, b, g_seq.k_start, 0, hk);
  tensorViewNV<2, false, 1, 0> transpose = createTensorViewNV(2, false, 1, 0);

  PA_A(BQ, DP) q;
  coopMatLoadTensorNV(q, q16, q_base, sliceTensorLayoutNV(lay_q, uint(i0), uint(BQ), 0u, uint(DP)));

  PA_ACC(BQ, DVP) o = PA_ACC(BQ, DVP)(0.0);
  PA_ACC(BQ, RS) m = PA_ACC(BQ, RS)(PA_NEG_INF); // pa_softmax_start()
  PA_ACC(BQ, RS) l = PA_ACC(BQ, RS)(0.0);

  int t_begin, t_end;
  pa_tile_range(g_m, i0, i1, BK, split, P.num_splits, t_begin, t_end);
  [[dont_unroll]] for (int t = t_begin; t < t_end; ++t) {
    const int j0 = t * BK;
    if (!pa_tile_any_block(b, h, i0, i1, j0, min(j0 + BK, g_seq.len_k))) continue; // uniform

    // S = Q K^T, then scores.
    PA_B(DP, BK) kt;
    coopMatLoadTensorNV(kt, k16, k_base, sliceTensorLayoutNV(lay_k, uint(j0), uint(BK), 0u, uint(DP)), transpose);
    PA_ACC(BQ, BK) s = PA_ACC(BQ, BK)(0.0);
    s = coopMatMulAdd(q, kt, s);
    PA_B(BK, DVP) v; // issued now: its latency hides behind the softmax
    coopMatLoadTensorNV(v, v16, v_base, sliceTensorLayoutNV(lay_v, uint(j0), uint(BK), 0u, uint(DVP)));
    // A tile every valid row keeps whole, with a plain score (dot x scale, which is
    // what pa_score computes then), skips the per-element masks.
    int lo_first, hi_first, lo_last, hi_last;
    pa_mask_row_range(g_m, i0, lo_first, hi_first);
    pa_mask_row_range(g_m, i1 - 1, lo_last, hi_last);
    const bool whole = j0 + BK <= g_seq.len_k && lo_last <= j0 && hi_first >= j0 + BK;
    if (plain_score && whole)
      s = s * P.scale;
    else
      coopMatPerElementNV(s, s, pa_cm2_score, j0);
    if (NM24 != 0 && (P.flags & PA_NM_2_4) != 0u) {
      coopMatStore(s, sS, 0, BK, gl_CooperativeMatrixLayoutRowMajor);
      barrier();
      for (int g = tid; g < BQ * BK / 4; g += nthreads) {
        float s4[4];
        for (int a = 0; a < 4; ++a) s4[a] = sS[4 * g + a];
        pa_select_2_4(s4);
        for (int a = 0; a < 4; ++a) sS[4 * g + a] = s4[a];
      }
      barrier();
      coopMatLoad(s, sS, 0, BK, gl_CooperativeMatrixLayoutRowMajor);
      barrier(); // sS is rewritten by the next tile
    }

    // The online softmax: m, alpha, p, l.
    PA_ACC(BQ, RS) tile_max, alpha, p_sum;
    coopMatReduceNV(tile_max, s, gl_CooperativeMatrixReduceRowNV, pa_cm2_row_max);
    coopMatPerElementNV(alpha, m, pa_cm2_alpha, tile_max);
    coopMatPerElementNV(m, m, pa_cm2_new_max, tile_max);
    PA_ACC(BQ, BK) m_row;
    coopMatReduceNV(m_row, m, gl_CooperativeMatrixReduceRowNV, pa_cm2_row_smear);
    PA_ACC(BQ, BK) p;
    coopMatPerElementNV(p, s, pa_cm2_p, m_row);
    coopMatReduceNV(p_sum, p, gl_CooperativeMatrixReduceRowNV, pa_cm2_row_add);
    coopMatPerElementNV(l, l, pa_cm2_sum, alpha, p_sum);

    // O = alpha O + P V.
    PA_ACC(BQ, DVP) alpha_o;
    coopMatReduceNV(alpha_o, alpha, gl_CooperativeMatrixReduceRowNV, pa_cm2_row_smear);
    o = o * alpha_o;
    PA_A(BQ, BK) p16 = PA_A(BQ, BK)(p);
    o = coopMatMulAdd(p16, v, o);
  }

  if (P.num_splits > 1u) { // partial result: the merge normalises
    const int row_global0 = (P.flags & PA_VARLEN) != 0u ? g_seq.q_start : b * P.seqlen_q;
    const uint ws_base = pa_ws_row(split, h, row_global0, DV);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lay_ws =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    lay_ws = setTensorLayoutDimensionNV(lay_ws, uint(g_seq.len_q), uint(DV));
    lay_ws = setTensorLayoutStrideNV(lay_ws, uint(DV + 2), 1u);
    coopMatStoreTensorNV(o, ws_data, ws_base, sliceTensorLayoutNV(lay_ws, uint(i0), uint(BQ), 0u, uint(DVP)));
    coopMatPerElementNV(m, m, pa_cm2_store_row, l, ws_base);
    return;
  }
  PA_ACC(BQ, RS) norm;
  coopMatPerElementNV(norm, l, pa_cm2_normaliser);
  PA_ACC(BQ, DVP) norm_o;
  coopMatReduceNV(norm_o, norm, gl_CooperativeMatrixReduceRowNV, pa_cm2_row_smear);
  o = o * norm_o;
  coopmat<float16_t, gl_ScopeWorkgroup, BQ, DVP, gl_MatrixUseAccumulator> o_half =
      coopmat<float16_t, gl_ScopeWorkgroup, BQ, DVP, gl_MatrixUseAccumulator>(o);
  lay_o = setTensorLayoutStrideNV(lay_o, P.o_ss, 1u);
  const uint o_base = pa_view_row(P.o_off, P.o_sb, P.o_ss, P.o_sh, b, g_seq.q_start, 0, h);
  coopMatStoreTensorNV(o_half, o16, o_base, sliceTensorLayoutNV(lay_o, uint(i0), uint(BQ), 0u, uint(DVP)));
  coopMatPerElementNV(m, m, pa_cm2_store_row, l, 0u);
}
