// Bindings, parameters and element access shared by the Vulkan kernels.
//
// Tensors are bound whole (descriptor offset 0) and addressed by element offsets
// from the parameter block, so a view may start at any element: the buffers'
// offset alignment limits never apply. 16-bit tensors are read and written as
// 32-bit words (two elements each), so no 16-bit storage feature is needed;
// a word a thread shares with a neighbouring view is written with atomics.
#ifndef PA_IO_GLSL
#define PA_IO_GLSL

// dtype (spec constant PA_DTYPE): the values of polyattn_dtype.
#define PA_F32 0
#define PA_F16 1
#define PA_BF16 2

// Bits of P.flags.
#define PA_HAS_LSE 1u
#define PA_VARLEN 2u
#define PA_SEQUSED 4u
#define PA_ALIBI 8u
#define PA_BLOCK_MASK 16u
#define PA_NM_2_4 32u

// One block per dispatch (backends/vulkan/vk_dispatch.c fills it: pa_vk_params).
// Offsets and strides are in elements of their tensor (bytes for the mask).
layout(set = 0, binding = 0, std140) uniform Params {
  uint q_off, k_off, v_off, o_off, lse_off;
  uint q_sb, q_ss, q_sh;
  uint k_sb, k_ss, k_sh;
  uint v_sb, v_ss, v_sh;
  uint o_sb, o_ss, o_sh;
  uint lse_sb, lse_sh, lse_ss;
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv;
  float scale, softcap;
  int window_left, window_right;
  uint flags;
  uint cuq_off, cuq_stride, cuk_off, cuk_stride, used_off, used_stride;
  uint alibi_off, alibi_sb, alibi_sh;
  uint mask_off, mask_sb, mask_sh, mask_ss;
  int block_q, block_k;
  uint num_splits; // split-KV partitions (1: the forward writes O itself)
  uint ws_rows;    // query rows per (split, head) in the workspace: total_q
} P;

layout(set = 0, binding = 1, std430) readonly buffer QBuf { uint q_words[]; };
layout(set = 0, binding = 2, std430) readonly buffer KBuf { uint k_words[]; };
layout(set = 0, binding = 3, std430) readonly buffer VBuf { uint v_words[]; };
layout(set = 0, binding = 4, std430) buffer OBuf { uint o_words[]; };
layout(set = 0, binding = 5, std430) writeonly buffer LseBuf { float lse_data[]; };
layout(set = 0, binding = 6, std430) readonly buffer CuQBuf { int cuq_data[]; };
layout(set = 0, binding = 7, std430) readonly buffer CuKBuf { int cuk_data[]; };
layout(set = 0, binding = 8, std430) readonly buffer UsedBuf { int used_data[]; };
layout(set = 0, binding = 9, std430) readonly buffer AlibiBuf { float alibi_data[]; };
layout(set = 0, binding = 10, std430) readonly buffer MaskBuf { uint mask_words[]; };
layout(set = 0, binding = 11, std430) buffer WsBuf { float ws_data[]; };

// Element e of a tensor of dtype PA_DTYPE, as fp32.
#define PA_DEFINE_LOAD(name, words)                                                  \
  float name(uint e) {                                                               \
    if (PA_DTYPE == PA_F32) return uintBitsToFloat(words[e]);                        \
    uint w = words[e >> 1];                                                          \
    uint half_bits = (e & 1u) != 0u ? (w >> 16) : (w & 0xffffu);                     \
    if (PA_DTYPE == PA_BF16) return uintBitsToFloat(half_bits << 16);                \
    return unpackHalf2x16(half_bits).x;                                              \
  }
PA_DEFINE_LOAD(pa_load_q, q_words)
PA_DEFINE_LOAD(pa_load_k, k_words)
PA_DEFINE_LOAD(pa_load_v, v_words)

// fp32 -> fp16 bits, round to nearest even (as common/convert.h), with overflow to
// inf and subnormals; NaN stays NaN.
uint pa_f32_to_f16(float f) {
  uint x = floatBitsToUint(f);
  uint sign = (x >> 16) & 0x8000u;
  uint ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | 0x7e00u;
  if (ax >= 0x477ff000u) return sign | 0x7c00u; // rounds to >= 65520: inf
  if (ax < 0x38800000u)                          // below 2^-14: subnormal or zero
    return sign | uint(roundEven(uintBitsToFloat(ax) * 16777216.0));
  return sign | ((ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13);
}

// fp32 -> bf16 bits, round to nearest even; NaN stays NaN.
uint pa_f32_to_bf16(float f) {
  uint u = floatBitsToUint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

uint pa_to_bits16(float f) { return PA_DTYPE == PA_BF16 ? pa_f32_to_bf16(f) : pa_f32_to_f16(f); }

// Output element pairs are handled as 32-bit words. For a row starting at element
// e0, word k holds the row's dims 2k - par and 2k + 1 - par, par = e0 & 1 for
// 16-bit dtypes (0 for fp32, where "word" k is simply dims 2k and 2k + 1).
uint pa_row_parity(uint e0) { return PA_DTYPE == PA_F32 ? 0u : (e0 & 1u); }

// Write dims (d0, d0 + 1) = (2k - par, 2k + 1 - par) of a row of `dv` dims starting
// at element e0. A half outside [0, dv) belongs to another view and is left alone.
void pa_store_o_pair(uint e0, int k, int dv, float x0, float x1) {
  int par = int(pa_row_parity(e0));
  int d0 = 2 * k - par;
  bool in0 = d0 >= 0 && d0 < dv, in1 = d0 + 1 >= 0 && d0 + 1 < dv;
  if (PA_DTYPE == PA_F32) {
    if (in0) o_words[e0 + uint(d0)] = floatBitsToUint(x0);
    if (in1) o_words[e0 + uint(d0) + 1u] = floatBitsToUint(x1);
    return;
  }
  uint w = (e0 >> 1) + uint(k);
  if (in0 && in1) {
    o_words[w] = pa_to_bits16(x0) | (pa_to_bits16(x1) << 16);
  } else if (in0) { // the low half is ours, the high half a neighbour's
    atomicAnd(o_words[w], 0xffff0000u);
    atomicOr(o_words[w], pa_to_bits16(x0));
  } else if (in1) { // the high half is ours
    atomicAnd(o_words[w], 0x0000ffffu);
    atomicOr(o_words[w], pa_to_bits16(x1) << 16);
  }
}

// Words a row of dv dims can span (dv / 2 + 1 when it starts mid-word).
int pa_row_words(int dv) { return PA_DTYPE == PA_F32 ? (dv + 1) / 2 : dv / 2 + 1; }

#endif

#include "mask.glsl"

#ifndef PA_PROBLEM_GLSL
#define PA_PROBLEM_GLSL
// common/problem.h's per-entry helpers, reading the metadata on the device.
struct pa_seq {
  int q_start, k_start; // first row of this entry in q/k (varlen); else 0
  int len_q, len_k;     // len_k already limited by seqused_k
};

pa_seq pa_problem_seq(int b) {
  pa_seq s;
  if ((P.flags & PA_VARLEN) != 0u) {
    int q0 = cuq_data[P.cuq_off + uint(b) * P.cuq_stride];
    int k0 = cuk_data[P.cuk_off + uint(b) * P.cuk_stride];
    s.q_start = q0;
    s.k_start = k0;
    s.len_q = cuq_data[P.cuq_off + uint(b + 1) * P.cuq_stride] - q0;
    s.len_k = cuk_data[P.cuk_off + uint(b + 1) * P.cuk_stride] - k0;
  } else {
    s.q_start = 0;
    s.k_start = 0;
    s.len_q = P.seqlen_q;
    s.len_k = P.seqlen_k;
  }
  if ((P.flags & PA_SEQUSED) != 0u) s.len_k = min(s.len_k, used_data[P.used_off + uint(b) * P.used_stride]);
  return s;
}

pa_mask pa_problem_mask(pa_seq s) { return pa_mask(s.len_q, s.len_k, P.window_left, P.window_right); }

float pa_problem_alibi_slope(int b, int h) {
  if ((P.flags & PA_ALIBI) == 0u) return 0.0;
  return alibi_data[P.alibi_off + uint(b) * P.alibi_sb + uint(h) * P.alibi_sh];
}

// The block-mask byte of (b, h, query block, key block) is nonzero; true without a mask.
bool pa_block_mask_keep(int b, int h, int qb, int kb) {
  if ((P.flags & PA_BLOCK_MASK) == 0u) return true;
  uint e = P.mask_off + uint(b) * P.mask_sb + uint(h) * P.mask_sh + uint(qb) * P.mask_ss + uint(kb);
  return ((mask_words[e >> 2] >> (8u * (e & 3u))) & 0xffu) != 0u;
}

// Element index of (entry b, token row `tok` of the entry, head h) in a q/k/v/o view.
uint pa_view_row(uint off, uint sb, uint ss, uint sh, int b, int seq_start, int tok, int h) {
  return off + uint(b) * sb + uint(seq_start + tok) * ss + uint(h) * sh;
}

// The workspace row of a split's partial result: (Dv + 2) floats, O then m and l.
uint pa_ws_row(uint split, int h, int row_global, int dv) {
  return ((split * uint(P.heads_q) + uint(h)) * P.ws_rows + uint(row_global)) * uint(dv + 2);
}
#endif
