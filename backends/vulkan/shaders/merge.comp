#version 450
// Split-KV merge: one workgroup per (query row, query head, batch entry) combines
// the num_splits partial results of fwd_scalar.comp in split order with
// pa_softmax_merge, normalises, and writes O (in the dtype) and LSE.
#extension GL_GOOGLE_include_directive : require

layout(constant_id = 0) const int D = 64; // unused; keeps the constant ids of the forward
layout(constant_id = 1) const int DV = 64;
layout(constant_id = 5) const int PA_DTYPE = 0;
layout(local_size_x_id = 6) in;

#include "softmax.glsl"
#include "io.glsl"

void main() {
  const int i = int(gl_WorkGroupID.x), h = int(gl_WorkGroupID.y), b = int(gl_WorkGroupID.z);
  const pa_seq seq = pa_problem_seq(b);
  if (i >= seq.len_q) return;
  const int row_global = (P.flags & PA_VARLEN) != 0u ? seq.q_start + i : b * P.seqlen_q + i;
  const uint o_e0 = pa_view_row(P.o_off, P.o_sb, P.o_ss, P.o_sh, b, seq.q_start, i, h);
  const int par = int(pa_row_parity(o_e0));

  // Every thread merges m and l itself (cheap), in split order.
  pa_softmax_row row = pa_softmax_start();
  for (uint s = 0u; s < P.num_splits; ++s) {
    const uint base = pa_ws_row(s, h, row_global, DV);
    float sa, sb;
    row = pa_softmax_merge(row, pa_softmax_row(ws_data[base + uint(DV)], ws_data[base + uint(DV) + 1u]), sa, sb);
  }
  const float norm = pa_softmax_normaliser(row);

  for (int k = int(gl_LocalInvocationIndex); k < pa_row_words(DV); k += int(gl_WorkGroupSize.x)) {
    const int d0 = 2 * k - par;
    float x[2] = float[2](0.0, 0.0);
    pa_softmax_row part = pa_softmax_start();
    for (uint s = 0u; s < P.num_splits; ++s) {
      const uint base = pa_ws_row(s, h, row_global, DV);
      float sa, sb;
      part = pa_softmax_merge(part, pa_softmax_row(ws_data[base + uint(DV)], ws_data[base + uint(DV) + 1u]), sa, sb);
      for (int e = 0; e < 2; ++e) {
        const int d = d0 + e;
        x[e] = x[e] * sa + (d >= 0 && d < DV ? ws_data[base + uint(d)] * sb : 0.0);
      }
    }
    pa_store_o_pair(o_e0, k, DV, x[0] * norm, x[1] * norm);
  }
  if (gl_LocalInvocationIndex == 0u && (P.flags & PA_HAS_LSE) != 0u)
    lse_data[P.lse_off + uint(b) * P.lse_sb + uint(h) * P.lse_sh + uint(seq.q_start + i) * P.lse_ss] =
        pa_softmax_lse(row);
}
