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
 * where it does not list this one) and tiles, query rows x keys, by head dim. Started
 * from ggml's flash_attn_cm2 points (64 x 64, 64 x 32 above head dim 128); measured on
 * the H200 (f16, B=2, S=8192, bench/RESULTS.md): hd128 64x64 46.0 TFLOP/s, 64x32
 * 60.8, 128x64 29.3, 128x32 30.7; hd64 64x64 125.6. So 64 x 32 above head dim 64.
 * POLYATTN_VULKAN_COOPMAT2_TILES=BQxBK overrides them (a tuning aid). */
#define PA_VK_COOPMAT2_THREADS 128
/* 1: the coopmat2 kernel is the default for the cases it takes (fp16, head dims up
 * to 256) on devices that run it, the scalar kernel for the rest. It passed the fp16
 * sweep on the H200 (58 cases; docs/decisions.md 40, 44, 45). */
#define PA_VK_COOPMAT2_DEFAULT 1
/* 1: the subgroup-scope coopmat2 kernel (fwd_coopmat2_sg.comp: 16 x 16 tiles, 16 rows
 * per subgroup, K/V staged in shared memory once per workgroup) where it takes the
 * case, else the workgroup-scope one; its tiles: query rows per workgroup (16 per
 * subgroup) x keys. Measured on the H200 (f16 hd128 S8192, bench/RESULTS.md): 64 x 32
 * 146.8 TFLOP/s, 128 x 32 152.2, 64 x 64 107.5, 64 x 16 110.7; the workgroup-scope
 * kernel 63.3. Its forced fp16 sweep there: 27 cases run, all passed (the run was cut
 * by its time limit; docs/decisions.md 63 lists what is left). */
#define PA_VK_COOPMAT2_SUBGROUP 1
#define PA_VK_COOPMAT2_SG_BQ 64
#define PA_VK_COOPMAT2_SG_BK 32
#define PA_VK_COOPMAT2_BQ 64
#define PA_VK_COOPMAT2_BK 64
#define PA_VK_COOPMAT2_BK_LARGE_D 32
#define PA_VK_COOPMAT2_LARGE_D 64

_Static_assert(PA_VK_COOPMAT2_BQ % 16 == 0 && PA_VK_COOPMAT2_BK % 16 == 0 && PA_VK_COOPMAT2_BK_LARGE_D % 16 == 0,
               "coopmat2 tiles are multiples of the 16x16x16 granularity");
_Static_assert(PA_VK_SCALAR_PREFER_BQ % 4 == 0 && PA_VK_SCALAR_PREFER_BK % 4 == 0,
               "the planner aligns tiles to 4 (2:4 groups)");
_Static_assert(PA_VK_SCALAR_THREADS <= 128, "must fit every Vulkan device's workgroup limit");

#endif
