/* plan, forward and backward of the Vulkan backend, all through pick(): the one
 * place that decides which kernel runs a problem, with which tiles, and whether
 * any kernel can. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"
#include "vk_tune.h"

/* The parameter block of shaders/io.glsl (std140: 4-byte scalars, in order). */
typedef struct pa_vk_params {
  uint32_t q_off, k_off, v_off, o_off, lse_off;
  uint32_t q_sb, q_ss, q_sh;
  uint32_t k_sb, k_ss, k_sh;
  uint32_t v_sb, v_ss, v_sh;
  uint32_t o_sb, o_ss, o_sh;
  uint32_t lse_sb, lse_sh, lse_ss;
  int32_t batch, seqlen_q, seqlen_k, heads_q, heads_kv;
  float scale, softcap;
  int32_t window_left, window_right;
  uint32_t flags;
  uint32_t cuq_off, cuq_stride, cuk_off, cuk_stride, used_off, used_stride;
  uint32_t alibi_off, alibi_sb, alibi_sh;
  uint32_t mask_off, mask_sb, mask_sh, mask_ss;
  int32_t block_q, block_k;
  uint32_t num_splits;
  uint32_t ws_rows;
} pa_vk_params;

enum {
  PA_VK_HAS_LSE = 1,
  PA_VK_VARLEN = 2,
  PA_VK_SEQUSED = 4,
  PA_VK_ALIBI = 8,
  PA_VK_BLOCK_MASK = 16,
  PA_VK_NM_2_4 = 32
};

/* What pick() decided. */
typedef struct pa_vk_choice {
  pa_vk_kernel kernel;
  int32_t bq, bk, tpr;
  int32_t qblocks, splits;
  int32_t keys_per_lane; /* the decode kernel's U (its spec constant 6) */
  int32_t threads;       /* the coopmat2 kernels' workgroup size (0: BQ x TPR) */
  size_t workspace;
} pa_vk_choice;

/* Shared memory of fwd_scalar.comp: sQ, sK (rows padded by one), sV, sS. */
static int64_t scalar_shared_bytes(int32_t bq, int32_t bk, int32_t d, int32_t dv) {
  return ((int64_t)bq * d + (int64_t)bk * (d + 1) + (int64_t)bk * dv + (int64_t)bq * bk) * 4;
}

/* Loop iterations one invocation of fwd_scalar.comp runs per key tile, an upper
 * bound (K and V loads, scores, 2:4, max, rescale, P V, the block-mask check). */
static int64_t scalar_loop_iterations_per_tile(int32_t bq, int32_t bk, int32_t tpr, int32_t d, int32_t dv) {
  int64_t wg = (int64_t)bq * tpr, nw = (dv / 2 + 1 + tpr - 1) / tpr;
  int64_t keys_per_lane = (bk + tpr - 1) / tpr;
  return ((int64_t)bk * d + wg - 1) / wg + ((int64_t)bk * dv + wg - 1) / wg + keys_per_lane * (d + 1) +
         keys_per_lane * 12 + bk + 2 * nw + (int64_t)bk * (nw + 1) + 16;
}

/* A view's element offset and strides fit the kernels' 32-bit indices. */
static int view_fits(const pa_view *v, size_t esize, VkDeviceSize max_range) {
  if (!v->buf) return 1;
  if (v->offset % esize) return 0;
  if (v->stride_b < 0 || v->stride_s < 0 || v->stride_h < 0) return 0;
  if (v->stride_b > UINT32_MAX || v->stride_s > UINT32_MAX || v->stride_h > UINT32_MAX) return 0;
  return v->buf->size <= max_range && v->buf->size <= UINT32_MAX;
}

/* The scalar kernel's tiles: the planner's, shrunk if ever they do not fit. */
static polyattn_status pick_scalar(const pa_vk_ctx *ctx, const pa_problem *p, const pa_tile_plan *plan,
                                   pa_vk_choice *c, pa_error *err) {
  int32_t bq = plan->block_q, bk = plan->block_k;
  /* The planner counts the accumulator in fast memory; this kernel keeps it in
   * registers, so its tiles always fit where the planner's do. Guard anyway. */
  while (scalar_shared_bytes(bq, bk, p->head_dim, p->head_dim_v) > ctx->lim.shared_bytes && bk > 4) bk /= 2;
  while (scalar_shared_bytes(bq, bk, p->head_dim, p->head_dim_v) > ctx->lim.shared_bytes && bq > 4) bq /= 2;
  if (scalar_shared_bytes(bq, bk, p->head_dim, p->head_dim_v) > ctx->lim.shared_bytes)
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                      "head dims %d/%d need more than the device's %u bytes of shared memory",
                      (int)p->head_dim, (int)p->head_dim_v, ctx->lim.shared_bytes);
  int32_t threads = PA_VK_SCALAR_THREADS;
  if ((uint32_t)threads > ctx->lim.max_invocations) threads = (int32_t)ctx->lim.max_invocations;
  while (bq > threads && bq > 4) bq /= 2;
  c->kernel = PA_VK_KERNEL_SCALAR;
  c->bq = bq;
  c->bk = bk;
  c->tpr = threads / bq > 0 ? threads / bq : 1;
  c->qblocks = (p->seqlen_q + bq - 1) / bq;
  return POLYATTN_OK;
}

/* Shared memory of fwd_coopmat.comp: Q, K, V, P in fp16; S and O in fp32. */
static int64_t coopmat_shared_bytes(int32_t bq, int32_t bk, int32_t d, int32_t dv) {
  return (int64_t)bq * d * 2 + (int64_t)bk * d * 2 + (int64_t)bk * dv * 2 + (int64_t)bq * bk * 6 +
         (int64_t)bq * dv * 4;
}

/* The cooperative-matrix kernel: fp16, head dims multiples of 16, subgroups of a
 * multiple of 16 lanes; the largest tiles (16 rows per subgroup, up to 4
 * subgroups; 16..64 keys) that fit the shared memory. */
static polyattn_status pick_coopmat(const pa_vk_ctx *ctx, const pa_problem *p, pa_vk_choice *c,
                                    pa_error *err) {
  const char *why = NULL;
  const uint32_t sgs = ctx->lim.subgroup_size;
  if (!ctx->mod_coopmat)
    why = ctx->lim.mobile ? "mobile limits disable cooperative matrices"
                          : "the device offers no cooperative matrices this module can use "
                            "(VK_KHR/NV_cooperative_matrix, 16x16x16 fp16 with fp32 accumulation, "
                            "on a device the context created itself)";
  else if (p->dtype != POLYATTN_DTYPE_F16)
    why = "the cooperative-matrix kernel is fp16 only";
  else if (p->head_dim % 16 || p->head_dim_v % 16)
    why = "the cooperative-matrix kernel needs head dims that are multiples of 16";
  else if (sgs < 16 || sgs % 16)
    why = "the cooperative-matrix kernel needs a subgroup size that is a multiple of 16";
  if (why) return pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "POLYATTN_VULKAN_KERNEL=coopmat: %s", why);
  for (int32_t nsg = 4; nsg >= 1; nsg /= 2)
    for (int32_t bk = 64; bk >= 16; bk /= 2) {
      int32_t bq = 16 * nsg;
      if ((uint32_t)nsg * sgs > ctx->lim.max_invocations) continue;
      if (coopmat_shared_bytes(bq, bk, p->head_dim, p->head_dim_v) > ctx->lim.shared_bytes) continue;
      c->kernel = PA_VK_KERNEL_COOPMAT;
      c->bq = bq;
      c->bk = bk;
      c->tpr = (int32_t)sgs / 16;
      c->qblocks = (p->seqlen_q + bq - 1) / bq;
      return POLYATTN_OK;
    }
  return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                    "POLYATTN_VULKAN_KERNEL=coopmat: head dims %d/%d need more than the device's %u "
                    "bytes of shared memory", (int)p->head_dim, (int)p->head_dim_v, ctx->lim.shared_bytes);
}

/* A view's element offset and strides are multiples of `n` elements. */
static int view_aligned(const pa_view *v, size_t esize, int64_t n) {
  return (int64_t)(v->offset / esize) % n == 0 && v->stride_b % n == 0 && v->stride_s % n == 0 &&
         v->stride_h % n == 0;
}

/* The subgroup-scope coopmat2 kernel (fwd_coopmat2_sg.comp) takes the case: 16-byte
 * rows of Q, K and V, head dims multiples of 8, O on even elements, no 2:4, a fixed
 * subgroup size, and its workgroup and shared memory fit. */
static int coopmat2_sg_takes(const pa_vk_ctx *ctx, const pa_problem *p, int32_t bq, int32_t bk) {
  const uint32_t sgs = ctx->lim.subgroup_size;
  if (!ctx->mod_coopmat2_sg || ctx->lim.subgroup_min != sgs || sgs < 16) return 0;
  if (p->sparsity == POLYATTN_SPARSITY_NM_2_4 || p->head_dim % 8 || p->head_dim_v % 8) return 0;
  if (!view_aligned(&p->q, 2, 8) || !view_aligned(&p->k, 2, 8) || !view_aligned(&p->v, 2, 8) ||
      !view_aligned(&p->o, 2, 2))
    return 0;
  const int64_t threads = (int64_t)bq / 16 * sgs;
  const int64_t dp = (p->head_dim + 15) / 16 * 16, dvp = (p->head_dim_v + 15) / 16 * 16;
  const int64_t stride = (dp > dvp ? dp : dvp) + 8, rows = bq > 2 * bk ? bq : 2 * bk;
  const int64_t shared = rows * stride * 2 + (int64_t)bq * 16 * 4;
  return threads <= ctx->lim.max_invocations && shared <= ctx->lim.shared_bytes;
}

/* The coopmat2 kernel (NV cooperative matrix 2): fp16, head dims up to 256 (any:
 * padded to 16 inside), every mask, softcap, ALiBi, varlen, LSE and split; 2:4 takes
 * a shared-memory round trip of the scores (spec slot 4, TPR in the other kernels,
 * is its switch). Tiles from vk_tune.h or POLYATTN_VULKAN_COOPMAT2_TILES=BQxBK. */
static polyattn_status pick_coopmat2(const pa_vk_ctx *ctx, const pa_problem *p, pa_vk_choice *c,
                                     pa_error *err) {
  const char *why = NULL;
  if (!ctx->mod_coopmat2)
    why = ctx->coopmat2_why[0] ? ctx->coopmat2_why : "the device cannot run it";
  else if (p->dtype != POLYATTN_DTYPE_F16)
    why = "the coopmat2 kernel is fp16 only (bf16 cooperative matrices are not used yet)";
  else if (p->head_dim > 256 || p->head_dim_v > 256)
    why = "the coopmat2 kernel takes head dims up to 256";
  if (why) return pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "POLYATTN_VULKAN_KERNEL=coopmat2: %s", why);
  int32_t bq = PA_VK_COOPMAT2_BQ;
  int32_t bk = p->head_dim > PA_VK_COOPMAT2_LARGE_D || p->head_dim_v > PA_VK_COOPMAT2_LARGE_D
                   ? PA_VK_COOPMAT2_BK_LARGE_D
                   : PA_VK_COOPMAT2_BK;
  const char *tiles = getenv("POLYATTN_VULKAN_COOPMAT2_TILES");
  if (tiles && *tiles) {
    int a = 0, k = 0;
    if (sscanf(tiles, "%dx%d", &a, &k) != 2 || a < 16 || k < 16 || a % 16 || k % 16 || a > 256 || k > 256)
      return pa_fail(err, POLYATTN_ERR_INVALID_VALUE,
                        "POLYATTN_VULKAN_COOPMAT2_TILES=%s: expected BQxBK, multiples of 16 up to 256", tiles);
    bq = a, bk = k;
  }
  const int nm24 = p->sparsity == POLYATTN_SPARSITY_NM_2_4;
  const int64_t shared = (nm24 ? (int64_t)bq * bk * 4 : 4) + ctx->coopmat2_reserved_shared;
  if (shared > ctx->lim.shared_bytes)
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                      "POLYATTN_VULKAN_KERNEL=coopmat2: tiles %dx%d need %lld bytes of shared memory "
                      "(the device has %u)", (int)bq, (int)bk, (long long)shared, ctx->lim.shared_bytes);
  c->kernel = PA_VK_KERNEL_COOPMAT2;
  c->bq = bq;
  c->bk = bk;
  c->tpr = nm24;
  c->threads = (int32_t)ctx->coopmat2_threads;
  /* The subgroup-scope form (PA_VK_COOPMAT2_SUBGROUP; POLYATTN_VULKAN_COOPMAT2_SCOPE=
   * subgroup|workgroup overrides it, a tuning aid) where it takes the case: BQ rows
   * per workgroup, 16 per subgroup. */
  int sg = PA_VK_COOPMAT2_SUBGROUP;
  const char *env = getenv("POLYATTN_VULKAN_COOPMAT2_SCOPE");
  if (env && *env) sg = !strcmp(env, "subgroup");
  if (sg) {
    int32_t sbq = PA_VK_COOPMAT2_SG_BQ, sbk = PA_VK_COOPMAT2_SG_BK;
    if (tiles && *tiles) sbq = bq, sbk = bk;
    if (coopmat2_sg_takes(ctx, p, sbq, sbk)) {
      c->kernel = PA_VK_KERNEL_COOPMAT2_SG;
      c->bq = sbq;
      c->bk = sbk;
      c->tpr = 0;
      c->threads = sbq / 16 * (int32_t)ctx->lim.subgroup_size;
    }
  }
  c->qblocks = (p->seqlen_q + c->bq - 1) / c->bq;
  return POLYATTN_OK;
}

static size_t dtype_size(polyattn_dtype t) { return t == POLYATTN_DTYPE_F32 ? 4 : 2; }

/* Bytes of the split-KV partial results merge.comp reads: per split, query head and
 * query row, Dv floats of O then m and l (io.glsl's pa_ws_row). */
static size_t split_workspace(const pa_problem *p, int32_t splits) {
  return (size_t)splits * p->heads_q * (size_t)p->total_q * (size_t)(p->head_dim_v + 2) * 4;
}

/* Loop iterations one invocation of fwd_decode.comp runs per iteration of its key
 * loop, an upper bound (loads, unpacking, dots, the reduce-scatter, the pairs'
 * softmax and shuffles, P V). */
static int64_t decode_loop_iterations(int32_t r, int32_t c, int32_t dl, int32_t u) {
  int64_t rp = r <= 1 ? 1 : r <= 2 ? 2 : r <= 4 ? 4 : 8, nv = u * rp, stages = 0;
  for (int32_t o = dl / 2; o > 0; o /= 2) ++stages;
  int64_t nown = nv >= dl ? nv / dl : 1;
  return u * 2 * c + u * (c * 4 + 8 * c + rp * (8 * c + 1)) + 2 * stages + nv +
         nown * (2 * u + 8) + r * (8 * c + 1) + u * (c * 12 + r * (8 * c + 1)) + 16;
}

/* Keys per key lane per iteration of the decode kernel: 4 for up to 4 rows, else 2,
 * at most DL (so a lane's pairs after the scatter share one key); a power of two.
 * POLYATTN_VULKAN_DECODE_U overrides it (a tuning aid; still capped by DL). */
static int32_t decode_keys_per_lane(int64_t rows, int32_t dl) {
  int32_t u = rows <= 4 ? 4 : 2;
  const char *force = getenv("POLYATTN_VULKAN_DECODE_U");
  if (force && *force) u = atoi(force);
  int32_t p = 1;
  while (p * 2 <= u && p * 2 <= dl) p *= 2;
  return p;
}

/* The decode kernel (fwd_decode.comp): a workgroup per (split, kv head, batch
 * entry) serving the GQA group's rows, so K and V are read once per group. It
 * takes 16-bit K/V with 16-byte aligned rows, D == Dv (a multiple of 8, <= 256),
 * at most 8 rows per kv head (group x query rows), no 2:4; it needs subgroup
 * shuffles. The split count fills the device: about 8 workgroups per compute
 * unit, each split keeping at least 4 iterations of its key loop. */
static polyattn_status pick_decode(const pa_vk_ctx *ctx, const pa_problem *p, pa_vk_choice *c,
                                   pa_error *err) {
  const int32_t d = p->head_dim, group = p->heads_q / p->heads_kv;
  const int64_t rows = (int64_t)group * p->seqlen_q;
  const char *why = NULL;
  if (!ctx->mod_decode) why = "the device lacks subgroup shuffles in compute shaders";
  else if (p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16)
    why = "it reads 16-bit K and V (f16, bf16)";
  else if (d != p->head_dim_v || d % 8 || d > 256)
    why = "it needs D == Dv, a multiple of 8, at most 256";
  else if (rows > 8 || p->seqlen_q < 1)
    why = "it serves at most 8 rows per kv head (GQA group x query rows)";
  else if (p->sparsity != POLYATTN_SPARSITY_NONE && p->sparsity != POLYATTN_SPARSITY_BLOCK)
    why = "it takes dense attention and block masks only";
  else if (!view_aligned(&p->k, 2, 8) || !view_aligned(&p->v, 2, 8))
    why = "it needs K and V rows on 16-byte boundaries (offsets and strides multiples of 8 elements)";
  int32_t dl = 1;
  while (!why && dl * 2 <= (int32_t)ctx->lim.subgroup_min && dl * 2 <= 32 && (d / 8) % (dl * 2) == 0)
    dl *= 2;
  const int32_t kl = 128 / dl, chunks = d / (8 * dl), u = decode_keys_per_lane(rows, dl);
  if (!why && ((int64_t)kl * d + (2 * rows + 1) * kl) * 4 > ctx->lim.shared_bytes)
    why = "its merge buffer exceeds the device's shared memory";
  if (why) return pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "the Vulkan decode kernel: %s", why);

  const int32_t step = kl * u;
  const int64_t iters = ((int64_t)p->seqlen_k + step - 1) / step;
  const int64_t tasks = (int64_t)p->batch * p->heads_kv;
  int64_t splits = ((int64_t)ctx->lim.compute_units * 8 + tasks - 1) / tasks;
  if (splits > iters / 4) splits = iters / 4;
  const char *force = getenv("POLYATTN_VULKAN_SPLITS");
  if (force && *force) splits = atoi(force);
  if (ctx->lim.loop_budget > 0) { /* llvmpipe: keep under its loop limiter */
    int64_t per = decode_loop_iterations((int32_t)rows, chunks, dl, u);
    int64_t iters_max = (ctx->lim.loop_budget - 200 * rows) / per;
    if (iters_max < 1) iters_max = 1;
    if ((iters + iters_max - 1) / iters_max > splits) splits = (iters + iters_max - 1) / iters_max;
  }
  if (splits < 1) splits = 1;
  if (splits > (int64_t)ctx->lim.max_group_count[0]) splits = ctx->lim.max_group_count[0];
  c->kernel = PA_VK_KERNEL_DECODE;
  c->bq = (int32_t)rows; /* spec constants R, SQ, DL in the BQ, BK, TPR slots */
  c->bk = p->seqlen_q;
  c->tpr = dl;
  c->keys_per_lane = u;
  c->qblocks = 1;
  c->splits = (int32_t)splits;
  return POLYATTN_OK;
}

static polyattn_status pick(const pa_vk_ctx *ctx, const pa_problem *p, pa_vk_choice *c, pa_error *err) {
  memset(c, 0, sizeof *c);
  if (p->pass == PA_PASS_BACKWARD)
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                      "the Vulkan backend computes the forward only; its backward is not written yet");
  if (p->dtype != POLYATTN_DTYPE_F32 && p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16)
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                      "dtype %s is not supported by the Vulkan backend (f32, f16, bf16 are; "
                      "fp8_e4m3 runs on CUDA, Hopper only)",
                      p->dtype == POLYATTN_DTYPE_FP8_E4M3 ? "fp8_e4m3" : "(unknown)");
  if (p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK)
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                      "AUTO_BLOCK sparsity is not implemented by the Vulkan backend (pass a BLOCK mask)");
  const size_t esize = dtype_size(p->dtype);
  const VkDeviceSize range = ctx->lim.max_storage_range;
  const struct {
    const pa_view *v;
    size_t esize;
    const char *name;
  } views[] = {{&p->q, esize, "q"},           {&p->k, esize, "k"},
               {&p->v, esize, "v"},           {&p->o, esize, "out"},
               {&p->lse, 4, "lse"},           {&p->cu_seqlens_q, 4, "cu_seqlens_q"},
               {&p->cu_seqlens_k, 4, "cu_seqlens_k"}, {&p->seqused_k, 4, "seqused_k"},
               {&p->alibi, 4, "alibi_slopes"}, {&p->block_mask, 1, "block_mask"}};
  for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i)
    if (!view_fits(views[i].v, views[i].esize, range))
      return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                        "%s: the Vulkan kernels need its buffer within maxStorageBufferRange "
                        "(%llu bytes) and 32-bit element offsets and strides, aligned to the element",
                        views[i].name, (unsigned long long)range);

  pa_device_desc dev = {.cls = PA_DEVICE_GPU,
                        .compute_units = ctx->lim.compute_units,
                        .simd_width = (int32_t)ctx->lim.subgroup_size,
                        .fast_mem_bytes = ctx->lim.shared_bytes,
                        .max_threads = (int32_t)ctx->lim.max_invocations,
                        .prefer_block_q = PA_VK_SCALAR_PREFER_BQ,
                        .prefer_block_k = PA_VK_SCALAR_PREFER_BK};
  pa_tile_plan plan = pa_plan_tiles(&dev, p);

  /* The cooperative-matrix kernels run only when asked for (coopmat is verified but
   * slower than needed, coopmat2 not yet verified on a device: docs/decisions.md 44),
   * and then a case they cannot take is unsupported rather than falling back. */
  const char *want = getenv("POLYATTN_VULKAN_KERNEL");
  if (want && *want && strcmp(want, "scalar") && strcmp(want, "coopmat") && strcmp(want, "coopmat2") &&
      strcmp(want, "decode"))
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                      "POLYATTN_VULKAN_KERNEL=%s is not one of scalar, coopmat, coopmat2, decode", want);
  const int forced = want && *want;
  if ((!forced || !strcmp(want, "decode")) &&
      (pick_decode(ctx, p, c, forced ? err : NULL) == POLYATTN_OK || forced)) {
    if (c->kernel != PA_VK_KERNEL_DECODE) return POLYATTN_ERR_UNSUPPORTED; /* forced; err says why */
    if (c->splits > 1) {
      c->workspace = split_workspace(p, c->splits);
      if (c->workspace > range || c->workspace > UINT32_MAX)
        return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                       "the decode kernel's %d key splits need a workspace (%zu bytes) beyond "
                       "maxStorageBufferRange", (int)c->splits, c->workspace);
    }
    if ((uint32_t)p->heads_kv > ctx->lim.max_group_count[1] ||
        (uint32_t)p->batch > ctx->lim.max_group_count[2] ||
        (c->splits > 1 && (uint32_t)p->seqlen_q > ctx->lim.max_group_count[0]))
      return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                     "the problem needs more workgroups than maxComputeWorkGroupCount allows");
    return POLYATTN_OK;
  }
  memset(c, 0, sizeof *c);
  if (forced && !strcmp(want, "coopmat2")) {
    polyattn_status st = pick_coopmat2(ctx, p, c, err);
    if (st != POLYATTN_OK) return st;
  } else if (!forced && PA_VK_COOPMAT2_DEFAULT && ctx->mod_coopmat2 &&
             pick_coopmat2(ctx, p, c, NULL) == POLYATTN_OK) {
    /* the default where it takes the case (vk_tune.h); the scalar kernel elsewhere */
  } else if (want && !strcmp(want, "coopmat")) {
    polyattn_status st = pick_coopmat(ctx, p, c, err);
    if (st != POLYATTN_OK) return st;
  } else {
    polyattn_status st = pick_scalar(ctx, p, &plan, c, err);
    if (st != POLYATTN_OK) return st;
  }
  const int32_t bk = c->bk;

  int32_t splits = plan.num_splits;
  const char *force = getenv("POLYATTN_VULKAN_SPLITS");
  if (force && *force) splits = atoi(force);
  if (splits < 1) splits = 1;
  int64_t ktiles = ((int64_t)p->seqlen_k + bk - 1) / bk;
  if (splits > ktiles) splits = ktiles > 0 ? (int32_t)ktiles : 1;
  /* llvmpipe: keep under its loop limiter (only the scalar kernel runs there) */
  if (ctx->lim.loop_budget > 0 && ktiles > 0 && c->kernel == PA_VK_KERNEL_SCALAR) {
    int64_t per_tile = scalar_loop_iterations_per_tile(c->bq, bk, c->tpr, p->head_dim, p->head_dim_v);
    int64_t tiles_max = ctx->lim.loop_budget / per_tile;
    if (tiles_max < 1) tiles_max = 1;
    int64_t need = (ktiles + tiles_max - 1) / tiles_max;
    if (need > splits) splits = (int32_t)need;
  }
  while (splits > 1 && (int64_t)p->batch * splits > ctx->lim.max_group_count[2]) splits--;
  c->splits = splits;
  if ((uint32_t)c->qblocks > ctx->lim.max_group_count[0] ||
      (uint32_t)p->heads_q > ctx->lim.max_group_count[1] ||
      (uint32_t)p->batch > ctx->lim.max_group_count[2] ||
      (splits > 1 && (uint32_t)p->seqlen_q > ctx->lim.max_group_count[0]))
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                      "the problem needs more workgroups than maxComputeWorkGroupCount allows");
  if (splits > 1) {
    c->workspace = split_workspace(p, splits);
    if (c->workspace > range || c->workspace > UINT32_MAX) {
      if (ctx->lim.loop_budget > 0)
        return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                          "this driver's loop limit (llvmpipe) needs %d key splits, whose "
                          "workspace (%zu bytes) exceeds maxStorageBufferRange",
                          (int)splits, c->workspace);
      c->splits = 1; /* fall back to one split */
      c->workspace = 0;
    }
  }
  return POLYATTN_OK;
}

polyattn_status pa_vk_plan(void *bctx, const pa_problem *p, size_t *workspace_bytes, pa_error *err) {
  pa_vk_choice c;
  polyattn_status st = pick((const pa_vk_ctx *)bctx, p, &c, err);
  if (st == POLYATTN_OK) *workspace_bytes = c.workspace;
  return st;
}

static uint32_t elem(const pa_view *v, size_t esize) { return v->buf ? (uint32_t)(v->offset / esize) : 0; }

static void fill_params(const pa_problem *p, const pa_vk_choice *c, pa_vk_params *P) {
  const size_t es = dtype_size(p->dtype);
  memset(P, 0, sizeof *P);
  P->q_off = elem(&p->q, es), P->k_off = elem(&p->k, es), P->v_off = elem(&p->v, es);
  P->o_off = elem(&p->o, es), P->lse_off = elem(&p->lse, 4);
  P->q_sb = (uint32_t)p->q.stride_b, P->q_ss = (uint32_t)p->q.stride_s, P->q_sh = (uint32_t)p->q.stride_h;
  P->k_sb = (uint32_t)p->k.stride_b, P->k_ss = (uint32_t)p->k.stride_s, P->k_sh = (uint32_t)p->k.stride_h;
  P->v_sb = (uint32_t)p->v.stride_b, P->v_ss = (uint32_t)p->v.stride_s, P->v_sh = (uint32_t)p->v.stride_h;
  P->o_sb = (uint32_t)p->o.stride_b, P->o_ss = (uint32_t)p->o.stride_s, P->o_sh = (uint32_t)p->o.stride_h;
  P->lse_sb = (uint32_t)p->lse.stride_b, P->lse_sh = (uint32_t)p->lse.stride_h;
  P->lse_ss = (uint32_t)p->lse.stride_s;
  P->batch = p->batch, P->seqlen_q = p->seqlen_q, P->seqlen_k = p->seqlen_k;
  P->heads_q = p->heads_q, P->heads_kv = p->heads_kv;
  P->scale = p->scale, P->softcap = p->softcap;
  P->window_left = p->window_left, P->window_right = p->window_right;
  uint32_t f = 0;
  if (p->lse.buf) f |= PA_VK_HAS_LSE;
  if (p->varlen) f |= PA_VK_VARLEN;
  if (p->seqused_k.buf) f |= PA_VK_SEQUSED;
  if (p->alibi.buf) f |= PA_VK_ALIBI;
  if (p->sparsity == POLYATTN_SPARSITY_BLOCK) f |= PA_VK_BLOCK_MASK;
  if (p->sparsity == POLYATTN_SPARSITY_NM_2_4) f |= PA_VK_NM_2_4;
  P->flags = f;
  P->cuq_off = elem(&p->cu_seqlens_q, 4), P->cuq_stride = (uint32_t)p->cu_seqlens_q.stride_s;
  P->cuk_off = elem(&p->cu_seqlens_k, 4), P->cuk_stride = (uint32_t)p->cu_seqlens_k.stride_s;
  P->used_off = elem(&p->seqused_k, 4), P->used_stride = (uint32_t)p->seqused_k.stride_s;
  P->alibi_off = elem(&p->alibi, 4);
  P->alibi_sb = (uint32_t)p->alibi.stride_b, P->alibi_sh = (uint32_t)p->alibi.stride_h;
  P->mask_off = elem(&p->block_mask, 1);
  P->mask_sb = (uint32_t)p->block_mask.stride_b, P->mask_sh = (uint32_t)p->block_mask.stride_h;
  P->mask_ss = (uint32_t)p->block_mask.stride_s;
  P->block_q = p->block_q, P->block_k = p->block_k;
  P->num_splits = (uint32_t)c->splits;
  P->ws_rows = (uint32_t)p->total_q;
}

/* The descriptor set of one forward: every binding of shaders/io.glsl, the
 * context's dummy buffer where a tensor is absent. */
static polyattn_status make_set(pa_vk_ctx *ctx, pa_vk_slot *slot, const pa_problem *p,
                                const struct polyattn_buffer *ws, VkDescriptorSet *set, pa_error *err) {
  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = slot->pool,
                                    .descriptorSetCount = 1,
                                    .pSetLayouts = &ctx->set_layout};
  VkResult r = vkAllocateDescriptorSets(ctx->device, &ai, set);
  if (r != VK_SUCCESS) return pa_vk_status(err, r, "vkAllocateDescriptorSets");
  const pa_view *views[PA_VK_BINDINGS - 1] = {&p->q, &p->k, &p->v, &p->o, &p->lse,
                                              &p->cu_seqlens_q, &p->cu_seqlens_k, &p->seqused_k,
                                              &p->alibi, &p->block_mask, NULL};
  VkDescriptorBufferInfo info[PA_VK_BINDINGS];
  VkWriteDescriptorSet w[PA_VK_BINDINGS];
  info[0] = (VkDescriptorBufferInfo){slot->params.buf, 0, sizeof(pa_vk_params)};
  for (int i = 1; i < PA_VK_BINDINGS; ++i) {
    const struct polyattn_buffer *b = i == PA_VK_BINDINGS - 1 ? ws : views[i - 1]->buf;
    info[i] = (VkDescriptorBufferInfo){b ? pa_vk_buffer_of(b) : ctx->dummy.buf, 0, VK_WHOLE_SIZE};
  }
  for (int i = 0; i < PA_VK_BINDINGS; ++i)
    w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstSet = *set,
                                  .dstBinding = (uint32_t)i,
                                  .descriptorCount = 1,
                                  .descriptorType = i == 0 ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                                           : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &info[i]};
  vkUpdateDescriptorSets(ctx->device, PA_VK_BINDINGS, w, 0, NULL);
  return POLYATTN_OK;
}

/* Record and submit; returns without waiting for the device. */
polyattn_status pa_vk_forward(void *bctx, const pa_problem *p, const struct polyattn_buffer *workspace,
                              pa_error *err) {
  pa_vk_ctx *ctx = (pa_vk_ctx *)bctx;
  pa_vk_choice c;
  polyattn_status st = pick(ctx, p, &c, err);
  if (st != POLYATTN_OK) return st;
  if (p->total_q == 0 || p->seqlen_q == 0 || c.qblocks == 0) return POLYATTN_OK; /* no rows */

  const int32_t dtype = (int32_t)p->dtype; /* PA_F32/F16/BF16 of io.glsl */
  /* spec constant 6: the workgroup size; the decode kernel's is fixed (128) and
   * the slot carries its keys per lane (U) */
  const int32_t slot6 = c.kernel == PA_VK_KERNEL_DECODE ? c.keys_per_lane : c.threads ? c.threads : c.bq * c.tpr;
  const int32_t spec[7] = {p->head_dim, p->head_dim_v, c.bq, c.bk, c.tpr, dtype, slot6};
  const int32_t merge_spec[7] = {p->head_dim, p->head_dim_v, 0, 0, 0, dtype, PA_VK_MERGE_THREADS};
  VkPipeline fwd, merge = VK_NULL_HANDLE;
  if ((st = pa_vk_pipeline_get(ctx, c.kernel, spec, &fwd, err)) != POLYATTN_OK) return st;
  if (c.splits > 1 && (st = pa_vk_pipeline_get(ctx, PA_VK_KERNEL_MERGE, merge_spec, &merge, err)) != POLYATTN_OK)
    return st;

  pa_vk_slot *slot;
  if ((st = pa_vk_slot_acquire(ctx, &slot, err)) != POLYATTN_OK) return st;
  fill_params(p, &c, (pa_vk_params *)slot->params.map);
  VkDescriptorSet set;
  if ((st = make_set(ctx, slot, p, c.splits > 1 ? workspace : NULL, &set, err)) != POLYATTN_OK) {
    (void)vkEndCommandBuffer(slot->cmd);
    return st;
  }
  vkCmdBindDescriptorSets(slot->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, ctx->pipe_layout, 0, 1, &set, 0, NULL);
  pa_vk_slot_time_begin(ctx, slot);
  vkCmdBindPipeline(slot->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, fwd);
  if (c.kernel == PA_VK_KERNEL_DECODE)
    vkCmdDispatch(slot->cmd, (uint32_t)c.splits, (uint32_t)p->heads_kv, (uint32_t)p->batch);
  else
    vkCmdDispatch(slot->cmd, (uint32_t)c.qblocks, (uint32_t)p->heads_q, (uint32_t)(p->batch * c.splits));
  if (c.splits > 1) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT};
    vkCmdPipelineBarrier(slot->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    vkCmdBindPipeline(slot->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, merge);
    vkCmdDispatch(slot->cmd, (uint32_t)p->seqlen_q, (uint32_t)p->heads_q, (uint32_t)p->batch);
  }
  pa_vk_slot_time_end(ctx, slot);
  return pa_vk_slot_submit(ctx, slot, err);
}

polyattn_status pa_vk_backward(void *bctx, const pa_problem *p, const struct polyattn_buffer *workspace,
                               pa_error *err) {
  (void)workspace;
  pa_vk_choice c;
  return pick((const pa_vk_ctx *)bctx, p, &c, err); /* says why: forward only */
}
