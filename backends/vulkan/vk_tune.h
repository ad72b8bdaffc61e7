/* The Vulkan scalar path's tuning table: what the planner is asked for before the
 * device's limits shrink it. Starting points, not yet measured on a GPU (lavapipe
 * timings are in bench/RESULTS.md once measured); change them only with a
 * measurement. */
#ifndef PA_VK_TUNE_H
#define PA_VK_TUNE_H

/* Query rows per workgroup and keys per tile asked of pa_plan_tiles(). */
#define PA_VK_SCALAR_PREFER_BQ 32
#define PA_VK_SCALAR_PREFER_BK 32
/* Invocations per workgroup the scalar kernel aims for (BQ x threads per row);
 * 128 is the smallest maxComputeWorkGroupInvocations Vulkan allows. */
#define PA_VK_SCALAR_THREADS 128
/* The split-KV merge kernel's workgroup. */
#define PA_VK_MERGE_THREADS 64

/* The coopmat2 kernel (shaders/fwd_coopmat2.comp): invocations per workgroup (4
 * NVIDIA subgroups; the closest size the device lists for workgroup-scope matrices
 * where it does not list this one) and tiles, query rows x keys, by head dim. ggml's
 * flash_attn_cm2 uses the same starting points (64 x 64, 64 x 32 above head dim 128:
 * its O and Q are held in registers); not yet measured here (bench/RESULTS.md).
 * POLYATTN_VULKAN_COOPMAT2_TILES=BQxBK overrides them (a tuning aid). */
#define PA_VK_COOPMAT2_THREADS 128
/* 1: the coopmat2 kernel is the default for the cases it takes (fp16, head dims up
 * to 256) on devices that run it, the scalar kernel for the rest. 0 until it has
 * passed the fp16 sweep on a GPU (docs/decisions.md 40, 44). */
#define PA_VK_COOPMAT2_DEFAULT 0
#define PA_VK_COOPMAT2_BQ 64
#define PA_VK_COOPMAT2_BK 64
#define PA_VK_COOPMAT2_BK_LARGE_D 32
#define PA_VK_COOPMAT2_LARGE_D 128

_Static_assert(PA_VK_COOPMAT2_BQ % 16 == 0 && PA_VK_COOPMAT2_BK % 16 == 0 && PA_VK_COOPMAT2_BK_LARGE_D % 16 == 0,
               "coopmat2 tiles are multiples of the 16x16x16 granularity");
_Static_assert(PA_VK_SCALAR_PREFER_BQ % 4 == 0 && PA_VK_SCALAR_PREFER_BK % 4 == 0,
               "the planner aligns tiles to 4 (2:4 groups)");
_Static_assert(PA_VK_SCALAR_THREADS <= 128, "must fit every Vulkan device's workgroup limit");

#endif
