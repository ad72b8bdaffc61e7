#version 450
// The cooperative-matrix-2 forward with subgroup-scope matrices (FlashAttention-2's
// layout on NVIDIA tensor cores): fp16 inputs, fp32 accumulation, head dims up to 256.
//
// One workgroup per (query block of BQ rows, query head, batch entry x split); each
// of its subgroups owns 16 consecutive query rows (the host makes BQ = 16 x the
// number of subgroups) and computes them on its own, with 16 x 16 matrices:
//   Q     DP / 16 A tiles      loaded once (from shared memory, staged with bounds)
//   K^T   B tiles [16 x 16]    from the workgroup's K tile in shared memory
//   S, P  BK / 16 acc tiles    scores per element (mask.glsl via coopmat2.glsl)
//   V     B tiles [16 x 16]    from the workgroup's V tile in shared memory
//   O     DVP / 16 acc tiles   in registers across key tiles
// Each key tile [BK x D] of K and V is copied once per workgroup into shared memory
// with 16-byte loads (the next tile's words requested while this one is computed),
// so the subgroups share each K/V read. Row maxima and sums are row reductions of
// the 16-row tiles; the row state (m, l, alpha) is held as 16 x 16 accumulators
// whose columns repeat the row's value, the shape of an O tile, so O's rescale and
// P's exponent are element-wise products with them (no smearing, no shared memory).
// The workgroup synchronises only around the K/V copies.
//
// The host (vk_dispatch.c, pick_coopmat2) guarantees: fp16; D, DV <= 256; 16-byte
// aligned rows of Q, K, V (element offsets and strides multiples of 8) and D, DV
// multiples of 8; O's offset and strides even; BQ = 16 x subgroups; no 2:4.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require

layout(constant_id = 0) const int D = 128;       // head dim of q and k, at most 256
layout(constant_id = 1) const int DV = 128;      // head dim of v and o, at most 256
layout(constant_id = 2) const int BQ = 64;       // query rows per workgroup: 16 per subgroup
layout(constant_id = 3) const int BK = 32;       // keys per tile, multiple of 16
layout(constant_id = 4) const int UNUSED4 = 0;   // (fwd_coopmat2.comp's 2:4 switch)
layout(constant_id = 5) const int PA_DTYPE = 1;  // fp16 only
layout(local_size_x_id = 6) in;                  // WG invocations

const int DP = (D + 15) / 16 * 16;   // the head dims as matrix dimensions
const int DVP = (DV + 15) / 16 * 16;
const int NDK = DP / 16, NDV = DVP / 16, NB = BK / 16; // 16 x 16 tiles
const int KS = DP + 8;               // shared row strides (halves): 16 bytes of padding
const int VS = DVP + 8;
const int SROWS = BQ > 2 * BK ? BQ : 2 * BK; // rows of sKV: Q at the start, then K and V

#define PA_SOFTMAX_EXP exp
#include "softmax.glsl"
#include "io.glsl"
#include "tile.glsl"

// fp16 rows, 4 halves per element: Q [BQ x KS] at the start; then K [BK x KS]
// followed by V [BK x VS]. Matrices load from it with offsets and strides in
// elements of 4 halves (the element type is the matrices' component type).
shared f16vec4 sKV[SROWS * (KS > VS ? KS : VS) / 4];

// Store 16-byte word w (8 halves) at element 2 e of sKV, bits unchanged.
void store_word(int e, uvec4 w) {
  sKV[2 * e] = f16vec4(unpackFloat2x16(w.x), unpackFloat2x16(w.y));
  sKV[2 * e + 1] = f16vec4(unpackFloat2x16(w.z), unpackFloat2x16(w.w));
}
shared float sOut[BQ * 16];   // per subgroup: one [16 x 16] O tile on its way out

#define PA_CM2_SCOPE gl_ScopeSubgroup
#include "coopmat2.glsl"

// K and V again, as 16-byte words (aliases of bindings 1 to 3).
layout(set = 0, binding = 1, std430) readonly buffer QVec { uvec4 q_vec[]; };
layout(set = 0, binding = 2, std430) readonly buffer KVec { uvec4 k_vec[]; };
layout(set = 0, binding = 3, std430) readonly buffer VVec { uvec4 v_vec[]; };

const int KW = DP / 8, VW = DVP / 8;       // 16-byte words per staged row
const int WG = int(gl_WorkGroupSize.x);
const int CPT = (BK * (KW + VW) + WG - 1) / WG; // words each invocation copies per tile

// The words of key tile j0: word w of the tile (K rows, then V rows) is
// invocation tid's word tid + x WG; words past the keys or dims are zero.
void tile_load(uint k_row0, uint v_row0, int j0, int len_k, int tid, out uvec4 w[CPT]) {
  [[unroll]] for (int x = 0; x < CPT; ++x) {
    const int e = tid + x * WG;
    w[x] = uvec4(0u);
    if (e < BK * KW) {
      const int j = j0 + e / KW, d8 = e % KW;
      if (j < len_k && 8 * d8 < D) w[x] = k_vec[(k_row0 + uint(j) * P.k_ss) / 8u + uint(d8)];
    } else if (e < BK * (KW + VW)) {
      const int f = e - BK * KW, j = j0 + f / VW, d8 = f % VW;
      if (j < len_k && 8 * d8 < DV) w[x] = v_vec[(v_row0 + uint(j) * P.v_ss) / 8u + uint(d8)];
    }
  }
}

void tile_store(int tid, uvec4 w[CPT]) {
  [[unroll]] for (int x = 0; x < CPT; ++x) {
    const int e = tid + x * WG;
    if (e < BK * KW) store_word((e / KW) * (KS / 8) + e % KW, w[x]);
    else if (e < BK * (KW + VW)) {
      const int f = e - BK * KW;
      store_word(BK * (KS / 8) + (f / VW) * (VS / 8) + f % VW, w[x]);
    }
  }
}

void main() {
  const int tid = int(gl_LocalInvocationIndex);
  const int sg = int(gl_SubgroupID), lane = int(gl_SubgroupInvocationID);
  const int h = int(gl_WorkGroupID.y);
  const int b = int(gl_WorkGroupID.z / P.num_splits);
  const uint split = gl_WorkGroupID.z % P.num_splits;
  const int hk = h / (P.heads_q / P.heads_kv);

  g_seq = pa_problem_seq(b);
  // The last query blocks first: under a causal mask they have the most key tiles.
  const int w0 = int(gl_NumWorkGroups.x - 1u - gl_WorkGroupID.x) * BQ;
  if (w0 >= g_seq.len_q) return; // the whole workgroup
  const int w1 = min(w0 + BQ, g_seq.len_q);
  const int i0 = w0 + 16 * sg;   // this subgroup's rows [i0, i0 + 16)
  g_m = pa_problem_mask(g_seq);
  g_b = b;
  g_h = h;
  g_i0 = i0;
  g_slope = pa_problem_alibi_slope(b, h);
  const bool plain_score = P.softcap <= 0.0 && g_slope == 0.0 && (P.flags & PA_BLOCK_MASK) == 0u;

  const uint q_row0 = pa_view_row(P.q_off, P.q_sb, P.q_ss, P.q_sh, b, g_seq.q_start, 0, h);
  const uint k_row0 = pa_view_row(P.k_off, P.k_sb, P.k_ss, P.k_sh, b, g_seq.k_start, 0, hk);
  const uint v_row0 = pa_view_row(P.v_off, P.v_sb, P.v_ss, P.v_sh, b, g_seq.k_start, 0, hk);

  // Q of the workgroup's rows into shared memory (zero past the rows and dims), then
  // each subgroup's 16 rows into registers.
  for (int e = tid; e < BQ * KW; e += WG) {
    const int i = w0 + e / KW, d8 = e % KW;
    uvec4 w = uvec4(0u);
    if (i < g_seq.len_q && 8 * d8 < D) w = q_vec[(q_row0 + uint(i) * P.q_ss) / 8u + uint(d8)];
    store_word((e / KW) * (KS / 8) + d8, w);
  }
  barrier();
  PA_A(16, 16) q[NDK];
  [[unroll]] for (int k = 0; k < NDK; ++k)
    coopMatLoad(q[k], sKV, uint((16 * sg * KS + 16 * k) / 4), uint(KS / 4), gl_CooperativeMatrixLayoutRowMajor);

  PA_ACC(16, 16) o[NDV];
  [[unroll]] for (int c = 0; c < NDV; ++c) o[c] = PA_ACC(16, 16)(0.0);
  PA_ACC(16, 16) m = PA_ACC(16, 16)(PA_NEG_INF); // pa_softmax_start()
  PA_ACC(16, 16) l = PA_ACC(16, 16)(0.0);

  // The workgroup visits the union of its rows' tiles; a subgroup computes only the
  // tiles its own rows reach (and the block mask keeps).
  int t_begin, t_end, lo_own, hi_own;
  pa_tile_range(g_m, w0, w1, BK, split, P.num_splits, t_begin, t_end);
  const int i1 = min(i0 + 16, g_seq.len_q);
  if (i0 < i1) pa_mask_rows_range(g_m, i0, i1, lo_own, hi_own);
  else lo_own = hi_own = 0;
  uvec4 words[CPT];
  if (t_begin < t_end) tile_load(k_row0, v_row0, t_begin * BK, g_seq.len_k, tid, words);
  [[dont_unroll]] for (int t = t_begin; t < t_end; ++t) {
    const int j0 = t * BK;
    barrier(); // every subgroup is done with the previous tile (and with Q)
    tile_store(tid, words);
    barrier();
    if (t + 1 < t_end) tile_load(k_row0, v_row0, j0 + BK, g_seq.len_k, tid, words);
    if (j0 >= hi_own || j0 + BK <= lo_own ||
        !pa_tile_any_block(b, h, i0, max(i1, i0 + 1), j0, min(j0 + BK, g_seq.len_k)))
      continue; // uniform across the subgroup

    // S = Q K^T, tile by tile of 16 keys; scores.
    int lo_first, hi_first, lo_last, hi_last;
    pa_mask_row_range(g_m, i0, lo_first, hi_first);
    pa_mask_row_range(g_m, max(i1, i0 + 1) - 1, lo_last, hi_last);
    const bool whole = i1 == i0 + 16 && j0 + BK <= g_seq.len_k && lo_last <= j0 && hi_first >= j0 + BK;
    PA_ACC(16, 16) s[NB];
    PA_ACC(16, 16) tile_max = PA_ACC(16, 16)(PA_NEG_INF);
    [[unroll]] for (int n = 0; n < NB; ++n) {
      s[n] = PA_ACC(16, 16)(0.0);
      [[unroll]] for (int k = 0; k < NDK; ++k) {
        PA_B(16, 16) kt;
        coopMatLoad(kt, sKV, uint(((16 * n) * KS + 16 * k) / 4), uint(KS / 4),
                    gl_CooperativeMatrixLayoutColumnMajor);
        s[n] = coopMatMulAdd(q[k], kt, s[n]);
      }
      if (plain_score && whole)
        s[n] = s[n] * P.scale;
      else
        coopMatPerElementNV(s[n], s[n], pa_cm2_score, j0 + 16 * n);
      PA_ACC(16, 16) mx;
      coopMatReduceNV(mx, s[n], gl_CooperativeMatrixReduceRowNV, pa_cm2_row_max);
      [[unroll]] for (int x = 0; x < tile_max.length(); ++x) tile_max[x] = max(tile_max[x], mx[x]);
    }

    // The online softmax: m, alpha, p, l.
    PA_ACC(16, 16) alpha;
    coopMatPerElementNV(alpha, m, pa_cm2_alpha, tile_max);
    coopMatPerElementNV(m, m, pa_cm2_new_max, tile_max);
    PA_ACC(16, 16) p_sum = PA_ACC(16, 16)(0.0);
    PA_A(16, 16) p16[NB];
    [[unroll]] for (int n = 0; n < NB; ++n) {
      PA_ACC(16, 16) p;
      coopMatPerElementNV(p, s[n], pa_cm2_p, m);
      PA_ACC(16, 16) ps;
      coopMatReduceNV(ps, p, gl_CooperativeMatrixReduceRowNV, pa_cm2_row_add);
      p_sum = p_sum + ps;
      p16[n] = PA_A(16, 16)(p);
    }
    coopMatPerElementNV(l, l, pa_cm2_sum, alpha, p_sum);

    // O = alpha O + P V.
    [[unroll]] for (int c = 0; c < NDV; ++c) {
      o[c] = o[c] * alpha;
      [[unroll]] for (int n = 0; n < NB; ++n) {
        PA_B(16, 16) v;
        coopMatLoad(v, sKV, uint((BK * KS + (16 * n) * VS + 16 * c) / 4), uint(VS / 4),
                    gl_CooperativeMatrixLayoutRowMajor);
        o[c] = coopMatMulAdd(p16[n], v, o[c]);
      }
    }
  }

  // The rows' m for the row-state outputs; O normalised (one split) or raw (splits),
  // out through this subgroup's [16 x 16] slice of sOut, 16 dims at a time.
  const int row_global0 = (P.flags & PA_VARLEN) != 0u ? g_seq.q_start : b * P.seqlen_q;
  const uint ws_base = P.num_splits > 1u ? pa_ws_row(split, h, row_global0, DV) : 0u;
  coopMatPerElementNV(m, m, pa_cm2_store_row, l, ws_base);
  PA_ACC(16, 16) norm;
  coopMatPerElementNV(norm, l, pa_cm2_normaliser);
  const uint out0 = uint(sg * 256);
  [[unroll]] for (int c = 0; c < NDV; ++c) {
    PA_ACC(16, 16) oc = o[c];
    if (P.num_splits == 1u) oc = oc * norm;
    subgroupBarrier();
    coopMatStore(oc, sOut, out0, 16u, gl_CooperativeMatrixLayoutRowMajor);
    subgroupBarrier();
    for (int e = lane; e < 16 * 8; e += int(gl_SubgroupSize)) { // 16 rows x 8 pairs of dims
      const int r = e / 8, d0 = 16 * c + 2 * (e % 8), i = i0 + r;
      if (i >= g_seq.len_q || d0 >= DV) continue;
      const float x0 = sOut[out0 + uint(r * 16 + d0 - 16 * c)], x1 = sOut[out0 + uint(r * 16 + d0 + 1 - 16 * c)];
      if (P.num_splits > 1u) {
        const uint e0 = ws_base + uint(i) * uint(DV + 2) + uint(d0);
        ws_data[e0] = x0;
        if (d0 + 1 < DV) ws_data[e0 + 1u] = x1;
      } else {
        const uint o_e0 = pa_view_row(P.o_off, P.o_sb, P.o_ss, P.o_sh, b, g_seq.q_start, i, h);
        pa_store_o_pair(o_e0, d0 / 2, DV, x0, x1);
      }
    }
  }
}
