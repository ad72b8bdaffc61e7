/* Tile-level pieces the forward and backward kernels share: loading rows of a
 * tensor into fp32 tiles, packing K/V tiles, and turning a tile of dot products
 * into scores (score transform, masks, 2:4) by the rules of common/mask.h.
 * Included by kernel_forward.c and kernel_backward.c inside one isa_*.c unit. */
#ifndef PA_CPU_KERNEL_TILE_H
#define PA_CPU_KERNEL_TILE_H

#include <math.h>
#include <string.h>

#include "convert.h"
#include "cpu_internal.h"
#include "mask.h"
#include "softmax.h"

/* One (batch entry, query head) as the kernels see it. */
typedef struct pa_head_ctx {
  const pa_problem *p;
  int32_t b, h, hkv;
  pa_seq seq;
  pa_mask mask;
  float slope; /* ALiBi; 0: off */
} pa_head_ctx;

static pa_head_ctx pa_head_make(const pa_problem *p, int32_t b, int32_t h) {
  pa_head_ctx t;
  t.p = p;
  t.b = b;
  t.h = h;
  t.hkv = h / (p->heads_q / p->heads_kv);
  t.seq = pa_problem_seq(p, b);
  t.mask = pa_problem_mask(p, &t.seq);
  t.slope = pa_problem_alibi_slope(p, b, h);
  return t;
}

static inline int32_t pa_min32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int64_t pa_round_up64(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* Scratch carving: consecutive 64-byte-aligned fp32 arrays from `base`, `*used`
 * bytes in. With base == NULL nothing is handed out and only *used grows: that is
 * how the layout sizes a thread's scratch, from the very code that carves it. */
typedef struct pa_carver {
  unsigned char *base;
  size_t used;
} pa_carver;

static inline float *pa_take(pa_carver *c, int64_t floats) {
  float *f = c->base ? (float *)(c->base + c->used) : NULL;
  c->used += (size_t)pa_round_up64(floats * (int64_t)sizeof(float), PA_CPU_ALIGN);
  return f;
}

/* The tile shape every carve uses. */
typedef struct pa_tile_dims {
  int32_t bq, bk, D, Dv, dp, dvp;
} pa_tile_dims;

static inline pa_tile_dims pa_tile_dims_of(const pa_problem *p, const pa_cpu_layout *L) {
  pa_tile_dims t = {L->tiles.block_q, L->tiles.block_k, p->head_dim, p->head_dim_v, L->dp,
                    L->dvp};
  return t;
}

static inline unsigned char *pa_thread_scratch(const pa_cpu_job *job, int thread) {
  return job->ws + job->lay.off_scratch + (size_t)thread * job->lay.scratch_per_thread;
}

/* pa_f16_to_f32 (common/convert.h) on VL lanes without branches; the same bits for
 * every input (checked over all 65536). Exponent and mantissa move into float
 * position and are scaled by 2^112, which rebiases normals and normalises
 * subnormals exactly; inf/NaN get the all-ones exponent. */
static inline pa_vf pa_vf16_to_f32(const uint16_t *s) {
  pa_vu h;
  for (int i = 0; i < PA_VL; ++i) h[i] = s[i];
  pa_vu em = h & 0x7fffu;
  pa_vu finite = (pa_vu)((pa_vf)(em << 13) * 0x1p112f);
  pa_vu special = 0x7f800000u | ((em & 0x3ffu) << 13);
  pa_vu is_special = (pa_vu)(em >= 0x7c00u);
  return (pa_vf)(((h & 0x8000u) << 16) | (finite & ~is_special) | (special & is_special));
}

/* dst[0, n) = mul * row; dst[n, npad) = 0. The row is element `off` of `base`. */
static void pa_load_row(const void *base, int64_t off, polyattn_dtype dt, int32_t n,
                        int32_t npad, float mul, float *dst) {
  if (dt == POLYATTN_DTYPE_F32) {
    const float *s = (const float *)base + off;
    for (int32_t d = 0; d < n; ++d) dst[d] = s[d] * mul;
  } else if (dt == POLYATTN_DTYPE_BF16) {
    const uint16_t *s = (const uint16_t *)base + off;
    for (int32_t d = 0; d < n; ++d) dst[d] = pa_bf16_to_f32(s[d]) * mul;
  } else {
    const uint16_t *s = (const uint16_t *)base + off;
    int32_t d = 0;
    for (; d + PA_VL <= n; d += PA_VL) pa_vstore(dst + d, pa_vf16_to_f32(s + d) * mul);
    for (; d < n; ++d) dst[d] = pa_f16_to_f32(s[d]) * mul;
  }
  for (int32_t d = n; d < npad; ++d) dst[d] = 0.0f;
}

/* row[0, n) stored into the tensor in its dtype (round to nearest even). */
static void pa_store_row(void *base, int64_t off, polyattn_dtype dt, int32_t n, float mul,
                         const float *row) {
  if (dt == POLYATTN_DTYPE_F32) {
    float *d = (float *)base + off;
    for (int32_t i = 0; i < n; ++i) d[i] = row[i] * mul;
  } else if (dt == POLYATTN_DTYPE_BF16) {
    uint16_t *d = (uint16_t *)base + off;
    for (int32_t i = 0; i < n; ++i) d[i] = pa_f32_to_bf16(row[i] * mul);
  } else {
    uint16_t *d = (uint16_t *)base + off;
    for (int32_t i = 0; i < n; ++i) d[i] = pa_f32_to_f16(row[i] * mul);
  }
}

/* Rows [r0, r0 + n) of a q/k/v-like view (head hh) into tile[rows x ld], scaled by
 * mul; rows n..pad_rows of the tile and columns width..ld are zero. */
static void pa_load_tile(const pa_view *v, polyattn_dtype dt, int32_t b, int64_t start,
                         int32_t hh, int64_t r0, int32_t n, int32_t pad_rows, int32_t width,
                         int32_t ld, float mul, float *tile) {
  for (int32_t r = 0; r < n; ++r)
    pa_load_row(v->ptr, pa_view_row(v, b, r0 + r, start, hh), dt, width, ld, mul,
                tile + (int64_t)r * ld);
  if (pad_rows > n)
    memset(tile + (int64_t)n * ld, 0, sizeof(float) * (size_t)(pad_rows - n) * (size_t)ld);
}

/* The transposed tile: kt[d * ldk + j] = K[k0 + j][d] for j < n, 0 for n <= j < ldk.
 * `rows` is scratch for n x width floats. The rows are first copied (converted)
 * one after the other, then transposed column by column from that copy. Reading
 * the tensor directly column-wise measured 4x slower on Zen 5: rows a power-of-two
 * apart (2 KiB for 8 heads of 64) fall into the same few L1 sets and evict each
 * other; writing row by row stalls instead on loads aliasing pending stores. */
static void pa_load_tile_t(const pa_view *v, polyattn_dtype dt, int32_t b, int64_t start,
                           int32_t hh, int64_t k0, int32_t n, int32_t width, int32_t ldk,
                           float *rows, float *kt) {
  for (int32_t j = 0; j < n; ++j)
    pa_load_row(v->ptr, pa_view_row(v, b, k0 + j, start, hh), dt, width, width, 1.0f,
                rows + (int64_t)j * width);
  for (int32_t d = 0; d < width; ++d) {
    float *dst = kt + (int64_t)d * ldk;
    for (int32_t j = 0; j < n; ++j) dst[j] = rows[(int64_t)j * width + d];
    for (int32_t j = n; j < ldk; ++j) dst[j] = 0.0f;
  }
}

/* Ask for rows [r0, r0 + n) of a q/k/v-like view (width elements of es bytes) to be
 * brought into cache: called for the next key tile while this one computes. The
 * rows of one head are strided (by all heads' widths), a pattern the hardware
 * prefetchers follow poorly; the profile showed the tile loads waiting on them. */
static inline void pa_prefetch_rows(const pa_view *v, size_t es, int32_t b, int64_t start,
                                    int32_t hh, int64_t r0, int32_t n, int32_t width) {
  const char *base = (const char *)v->ptr;
  for (int32_t j = 0; j < n; ++j) {
    const char *row = base + pa_view_row(v, b, r0 + j, start, hh) * (int64_t)es;
    for (int64_t off = 0; off < (int64_t)width * (int64_t)es; off += 64)
      __builtin_prefetch(row + off, 0, 3);
  }
}

/* How a (query rows, key tile) pair must be treated. */
typedef struct pa_tile_kind {
  int skip;       /* nothing in it is kept: do not compute it */
  int edge_range; /* causal/window/length boundary crosses it: test per element */
  int edge_block; /* the block mask keeps only part of it: test per element */
} pa_tile_kind;

/* Rows [i0, i0 + rows) against keys [k0, k0 + bk). Interior tiles (every row keeps
 * every key, every mask block set) skip all per-element tests. */
static pa_tile_kind pa_tile_classify(const pa_head_ctx *t, int64_t i0, int32_t rows,
                                     int64_t k0, int32_t bk) {
  pa_tile_kind kind = {0, 0, 0};
  int64_t kn = t->mask.len_k - k0;
  if (kn > bk) kn = bk;
  int64_t lo, hi;
  pa_mask_rows_range(&t->mask, i0, i0 + rows, &lo, &hi);
  if (kn <= 0 || rows <= 0 || hi <= k0 || lo >= k0 + kn) {
    kind.skip = 1;
    return kind;
  }
  int64_t lo_last, hi_last, lo_first, hi_first;
  pa_mask_row_range(&t->mask, i0 + rows - 1, &lo_last, &hi_last);
  pa_mask_row_range(&t->mask, i0, &lo_first, &hi_first);
  /* Row ranges move monotonically with i: the last row has the largest lo, the
   * first row the smallest hi (and hi <= len_k covers a short last tile). */
  kind.edge_range = !(lo_last <= k0 && hi_first >= k0 + bk);

  const pa_problem *p = t->p;
  if (p->sparsity == POLYATTN_SPARSITY_BLOCK && p->block_mask.buf) {
    int32_t qb0 = (int32_t)(i0 / p->block_q), qb1 = (int32_t)((i0 + rows - 1) / p->block_q);
    int32_t kb0 = (int32_t)(k0 / p->block_k), kb1 = (int32_t)((k0 + kn - 1) / p->block_k);
    int64_t kept = 0, all = (int64_t)(qb1 - qb0 + 1) * (kb1 - kb0 + 1);
    for (int32_t qb = qb0; qb <= qb1; ++qb)
      for (int32_t kb = kb0; kb <= kb1; ++kb)
        kept += pa_block_mask_keep(&p->block_mask, t->b, t->h, qb, kb);
    if (kept == 0) kind.skip = 1;
    kind.edge_block = kept != all;
  }
  return kind;
}

/* S[rows x bk] (stride lds) holds scale * q_i . k_j for rows i0.., keys k0..; turn it
 * into scores: softcap and ALiBi through pa_score, -inf where a mask drops the
 * pair, then 2:4. With `capgrad`, also store d(score)/d(scale * q.k) = 1 - tanh^2
 * there (softcap only), for the backward. */
static void pa_tile_scores(const pa_head_ctx *t, pa_tile_kind kind, float *S, int64_t lds,
                           int64_t i0, int32_t rows, int64_t k0, int32_t bk,
                           float *capgrad) {
  const pa_problem *p = t->p;
  const float cap = p->softcap;
  if (cap > 0.0f || t->slope != 0.0f) {
    for (int32_t r = 0; r < rows; ++r) {
      float *s = S + r * lds;
      for (int32_t j = 0; j < bk; ++j) {
        /* Already scaled (Q was pre-multiplied): scale 1 here. Softcap, then ALiBi,
         * composed as pa_score composes them. */
        float capped = pa_score(s[j], 1.0f, cap, 0.0f, &t->mask, i0 + r, k0 + j);
        if (capgrad) {
          float th = cap > 0.0f ? capped / cap : 0.0f;
          capgrad[r * lds + j] = 1.0f - th * th;
        }
        s[j] = pa_score(capped, 1.0f, 0.0f, t->slope, &t->mask, i0 + r, k0 + j);
      }
    }
  }
  if (kind.edge_range) {
    for (int32_t r = 0; r < rows; ++r) {
      int64_t lo, hi;
      pa_mask_row_range(&t->mask, i0 + r, &lo, &hi);
      int64_t a = lo - k0, z = hi - k0; /* kept keys of this row, tile-relative */
      if (a > bk) a = bk;
      if (z < 0) z = 0;
      float *s = S + r * lds;
      for (int64_t j = 0; j < a; ++j) s[j] = -INFINITY;
      for (int64_t j = z > a ? z : a; j < bk; ++j) s[j] = -INFINITY;
    }
  }
  if (kind.edge_block) {
    /* Keys past len_k have no mask block (and the range test dropped them). */
    int64_t kn = t->mask.len_k - k0 < bk ? t->mask.len_k - k0 : bk;
    for (int32_t r = 0; r < rows; ++r) {
      int32_t qb = (int32_t)((i0 + r) / p->block_q);
      float *s = S + r * lds;
      for (int64_t j = 0; j < kn;) {
        int64_t kb = (k0 + j) / p->block_k;
        int64_t end = (kb + 1) * p->block_k - k0; /* end of this mask block in the tile */
        if (end > kn) end = kn;
        if (!pa_block_mask_keep(&p->block_mask, t->b, t->h, qb, (int32_t)kb))
          for (int64_t jj = j; jj < end; ++jj) s[jj] = -INFINITY;
        j = end;
      }
    }
  }
  if (p->sparsity == POLYATTN_SPARSITY_NM_2_4) {
    /* k0 and bk are multiples of 4, so tile groups are the sequence's groups. */
    for (int32_t r = 0; r < rows; ++r) {
      float *s = S + r * lds;
      for (int32_t g = 0; g < bk; g += 4) {
        int kept[4];
        for (int a = 0; a < 4; ++a) kept[a] = s[g + a] != -INFINITY;
        pa_select_2_4_f32(s + g, kept);
        for (int a = 0; a < 4; ++a)
          if (!kept[a]) s[g + a] = -INFINITY;
      }
    }
  }
}

#endif
