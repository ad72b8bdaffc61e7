// What the cooperative-matrix-2 forwards share (fwd_coopmat2.comp, workgroup scope;
// fwd_coopmat2_sg.comp, subgroup scope): fp16 views of the q/k/v/o bindings, the
// matrix type macros, and the per-element and reduction functions of the scores and
// the online softmax. The includer defines PA_CM2_SCOPE (the matrices' scope),
// declares the specialization constant DV, and includes softmax.glsl, io.glsl and
// tile.glsl first.
#ifndef PA_COOPMAT2_GLSL
#define PA_COOPMAT2_GLSL

// The same q/k/v/o bindings as io.glsl, as fp16 elements: tensor loads and stores
// address elements, so views may start at any element.
layout(set = 0, binding = 1, std430) readonly buffer QBuf16 { float16_t q16[]; };
layout(set = 0, binding = 2, std430) readonly buffer KBuf16 { float16_t k16[]; };
layout(set = 0, binding = 3, std430) readonly buffer VBuf16 { float16_t v16[]; };
layout(set = 0, binding = 4, std430) writeonly buffer OBuf16 { float16_t o16[]; };

#define PA_ACC(R, C) coopmat<float, PA_CM2_SCOPE, R, C, gl_MatrixUseAccumulator>
#define PA_A(R, C) coopmat<float16_t, PA_CM2_SCOPE, R, C, gl_MatrixUseA>
#define PA_B(R, C) coopmat<float16_t, PA_CM2_SCOPE, R, C, gl_MatrixUseB>

// This workgroup's (or subgroup's) problem, read by the per-element functions.
pa_mask g_m;
pa_seq g_seq;
int g_b, g_h, g_i0;
float g_slope;

// ---- per-element functions: (row, column, element[, element of another matrix...])

// The score of query row g_i0 + r and key j0 + c from its dot product; -inf where a
// mask drops it (mask.glsl, as in fwd_scalar.comp).
float pa_cm2_score(const in uint r, const in uint c, const in float dot_qk, const in int j0) {
  const int i = g_i0 + int(r), j = j0 + int(c);
  if (i >= g_seq.len_q || j >= g_seq.len_k || !pa_mask_keep(g_m, i, j) ||
      !pa_block_mask_keep(g_b, g_h, i / P.block_q, j / P.block_k))
    return PA_NEG_INF;
  return pa_score(dot_qk, P.scale, P.softcap, g_slope, g_m, i, j);
}

// Step 1: the row's new maximum, and alpha (which rescales l and O).
float pa_cm2_new_max(const in uint r, const in uint c, const in float m, const in float tile_max) {
  pa_softmax_row row = pa_softmax_row(m, 0.0);
  pa_softmax_update_max(row, tile_max);
  return row.m;
}
float pa_cm2_alpha(const in uint r, const in uint c, const in float m, const in float tile_max) {
  pa_softmax_row row = pa_softmax_row(m, 0.0);
  return pa_softmax_update_max(row, tile_max);
}

// p = exp(s - the row's reference point).
float pa_cm2_p(const in uint r, const in uint c, const in float s, const in float m) {
  return PA_SOFTMAX_EXP(s - pa_softmax_ref(pa_softmax_row(m, 0.0)));
}

// Steps 2 and 3 on the running sum.
float pa_cm2_sum(const in uint r, const in uint c, const in float l, const in float alpha,
                 const in float p_sum) {
  pa_softmax_row row = pa_softmax_row(0.0, l);
  pa_softmax_rescale(row, alpha);
  pa_softmax_accumulate(row, p_sum);
  return row.l;
}

// Step 4: the factor that turns the accumulator into O.
float pa_cm2_normaliser(const in uint r, const in uint c, const in float l) {
  return pa_softmax_normaliser(pa_softmax_row(0.0, l));
}

// Column 0 of the row state writes the row's LSE (num_splits == 1) or its m and l
// to the workspace (num_splits > 1); every element returns m unchanged.
float pa_cm2_store_row(const in uint r, const in uint c, const in float m, const in float l,
                       const in uint ws_base) {
  const int i = g_i0 + int(r);
  if (c != 0u || i >= g_seq.len_q) return m;
  if (P.num_splits > 1u) {
    const uint e = ws_base + uint(i) * uint(DV + 2) + uint(DV);
    ws_data[e] = m;
    ws_data[e + 1u] = l;
  } else if ((P.flags & PA_HAS_LSE) != 0u) {
    lse_data[P.lse_off + uint(g_b) * P.lse_sb + uint(g_h) * P.lse_sh + uint(g_seq.q_start + i) * P.lse_ss] =
        pa_softmax_lse(pa_softmax_row(m, l));
  }
  return m;
}

float pa_cm2_row_max(const in float x, const in float y) { return max(x, y); }
float pa_cm2_row_add(const in float x, const in float y) { return x + y; }
float pa_cm2_row_smear(const in float x, const in float y) { return x; }

#endif
