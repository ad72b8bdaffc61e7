/* The forward sweep of DESIGN.md "Tests": every selected backend against the
 * float64 oracle, one table of cases, each expanded over its dtypes. Plus run-to-run
 * bit identity and the bytes around a strided output. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NM24 POLYATTN_SPARSITY_NM_2_4
#define BLOCK POLYATTN_SPARSITY_BLOCK
#define AUTO POLYATTN_SPARSITY_AUTO_BLOCK

/* Sizes mostly small (the oracle is float64 and one pair at a time); a few big
 * rows carry the long-sequence coverage. */
static const th_case cases[] = {
    /* ---- head dims and sequence lengths, dense */
    {.name = "d32_s1", .dtypes = TH_ALL, .seq_q = 1, .seq_k = 1, .head_dim = 32},
    {.name = "d32_s17_b2h2", .dtypes = TH_ALL, .batch = 2, .heads_q = 2, .seq_q = 17, .seq_k = 17, .head_dim = 32},
    {.name = "d64_s64_h4", .dtypes = TH_ALL, .heads_q = 4, .seq_q = 64, .seq_k = 64, .head_dim = 64},
    {.name = "d96_s113", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 113, .seq_k = 113, .head_dim = 96},
    {.name = "d128_s128_b2", .dtypes = TH_ALL, .batch = 2, .heads_q = 2, .seq_q = 128, .seq_k = 128, .head_dim = 128},
    {.name = "d256_s255", .dtypes = TH_ALL, .seq_q = 255, .seq_k = 255, .head_dim = 256},
    {.name = "d256_s3_256", .dtypes = TH_F16, .seq_q = 3, .seq_k = 256, .head_dim = 256},
    /* dense, 18 query tiles of 128 rows over three heads (the forty-first session's hd256
     * stream-K candidate, bench/gpu/s41_d256.patch, cut them on 5 blocks) */
    {.name = "d256_s700_h3", .dtypes = TH_BF16 | TH_F16, .heads_q = 3, .seq_q = 700, .seq_k = 700, .head_dim = 256},
    {.name = "d40_sq3_sk256", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 3, .seq_k = 256, .head_dim = 40},
    {.name = "d72_sq256_sk3", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 256, .seq_k = 3, .head_dim = 72},
    {.name = "d72_sq17_sk255", .dtypes = TH_BF16, .seq_q = 17, .seq_k = 255, .head_dim = 72},
    {.name = "dv32_d64", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 64, .seq_k = 113, .head_dim = 64, .head_dim_v = 32},
    {.name = "dv128_d32", .dtypes = TH_F16 | TH_F32, .seq_q = 17, .seq_k = 128, .head_dim = 32, .head_dim_v = 128},
    {.name = "dv40_d96_causal", .dtypes = TH_BF16, .seq_q = 113, .seq_k = 113, .head_dim = 96, .head_dim_v = 40, .causal = 1},
    {.name = "scale_explicit", .dtypes = TH_F16, .seq_q = 64, .seq_k = 64, .head_dim = 64, .scale = 0.3f},
    {.name = "s1_sk1000", .dtypes = TH_F32, .heads_q = 4, .seq_q = 1, .seq_k = 1000, .head_dim = 64},
    {.name = "s1000", .dtypes = TH_F16, .seq_q = 1000, .seq_k = 1000, .head_dim = 64},
    {.name = "s1000_causal_d128", .dtypes = TH_BF16, .seq_q = 1000, .seq_k = 1000, .head_dim = 128, .causal = 1},
    {.name = "s2048_d128", .dtypes = TH_F16, .seq_q = 2048, .seq_k = 2048, .head_dim = 128},
    /* hd128 above the persistent kernel's 4096 keys: the Hopper grid kernel's 176-key
     * tiles on cc 9.0 (decision 110), a partial last key tile and query tile */
    {.name = "s4352_d128", .dtypes = TH_BF16 | TH_F16, .seq_q = 200, .seq_k = 4352, .head_dim = 128},
    /* hd64 above the persistent kernel's bound: on cc 9.0 the three-consumer grid kernel
     * (non-causal; causal up to 2048 keys runs the persistent one); forced onto "-k192":
     * 1500 keys = 7 whole 192-key tiles and a partial one, the causal diagonal across
     * query tiles of 192 rows */
    {.name = "s1500_d64", .dtypes = TH_BF16 | TH_F16, .heads_q = 2, .seq_q = 600, .seq_k = 1500, .head_dim = 64},
    {.name = "s1500_causal_d64", .dtypes = TH_BF16 | TH_F16, .seq_q = 1500, .seq_k = 1500, .head_dim = 64, .causal = 1},
    /* hd64 from 8192 keys: the 192-key grid kernel by default on cc 9.0 (decision 111),
     * a partial last key tile (8400 = 43 x 192 + 144) */
    {.name = "s8400_d64", .dtypes = TH_BF16 | TH_F16, .seq_q = 100, .seq_k = 8400, .head_dim = 64},
    /* hd64 causal above 2048 keys: the 192-key grid kernel by default on cc 9.0; with a
     * softcap (not plain) the persistent kernel, with ALiBi above 8192 keys the 128-key
     * grid kernel: the wide tile's kernel has no score passes for them */
    {.name = "s2500_causal_d64", .dtypes = TH_BF16 | TH_F16, .seq_q = 300, .seq_k = 2500, .head_dim = 64, .causal = 1},
    {.name = "s2500_causal_softcap_d64", .dtypes = TH_BF16 | TH_F16, .seq_q = 300, .seq_k = 2500, .head_dim = 64, .causal = 1, .scale = 0.5f, .softcap = 5.0f},
    {.name = "s8400_alibi_d64", .dtypes = TH_BF16 | TH_F16, .heads_q = 2, .seq_q = 100, .seq_k = 8400, .head_dim = 64, .alibi = TH_ALIBI_HEADS},
    {.name = "s2048_causal_d256", .dtypes = TH_BF16, .seq_q = 2048, .seq_k = 2048, .head_dim = 256, .causal = 1},
    /* hd256 with the forward features (the Hopper kernel's 80-key tiles on cc 9.0:
     * tails of 128-row and 80-key tiles, GQA, masks, varlen, seqused_k, block lists) */
    {.name = "d256_gqa_causal_s300", .dtypes = TH_BF16 | TH_F16, .heads_q = 4, .heads_kv = 2, .seq_q = 300, .seq_k = 300, .head_dim = 256, .causal = 1},
    {.name = "d256_alibi_softcap_window", .dtypes = TH_BF16 | TH_F16, .heads_q = 2, .seq_q = 200, .seq_k = 333, .head_dim = 256, .alibi = TH_ALIBI_HEADS, .scale = 0.5f, .softcap = 4.0f, .window = 1, .window_left = 60, .window_right = 20},
    {.name = "d256_varlen_causal_gqa", .dtypes = TH_BF16 | TH_F16, .batch = 3, .heads_q = 4, .heads_kv = 1, .head_dim = 256, .causal = 1, .varlen = 1, .seqlens_q = {130, 0, 17}, .seqlens_k = {170, 5, 81}},
    {.name = "d256_seqused_k_no_lse", .dtypes = TH_BF16, .batch = 3, .heads_q = 2, .seq_q = 100, .seq_k = 300, .head_dim = 256, .seqused = 1, .seqused_k = {300, 77, 0}, .no_lse = 1},
    {.name = "d256_block128_list_empty_rows", .dtypes = TH_BF16 | TH_F16, .batch = 2, .heads_q = 2, .seq_q = 600, .seq_k = 700, .head_dim = 256, .sparsity = BLOCK, .block_q = 128, .block_k = 128, .mask_per_batch = 1, .mask_per_head = 1, .mask_empty_rows = 1, .mask_density = 0.4},
    {.name = "d256_auto_block128_clustered", .dtypes = TH_F16, .heads_q = 2, .seq_q = 700, .seq_k = 700, .head_dim = 256, .sparsity = AUTO, .block_q = 128, .block_k = 128, .block_threshold = 0.9f, .auto_density_cutoff = 1.0f, .mask_out = 1, .clustered = 1},
    {.name = "d256_auto_block128_random_fallback", .dtypes = TH_BF16, .seq_q = 384, .seq_k = 384, .head_dim = 256, .sparsity = AUTO, .block_q = 128, .block_k = 128, .mask_out = 1},
    {.name = "d256_packed_qkv_causal", .dtypes = TH_BF16, .batch = 2, .heads_q = 2, .seq_q = 200, .seq_k = 200, .head_dim = 256, .causal = 1, .layout = TH_PACKED_QKV},
    {.name = "d256_bhsd_gqa", .dtypes = TH_F16, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 100, .seq_k = 257, .head_dim = 256, .layout = TH_BHSD},
    {.name = "d256_strided_block256_causal", .dtypes = TH_BF16, .batch = 2, .heads_q = 2, .seq_q = 255, .seq_k = 513, .head_dim = 256, .causal = 1, .sparsity = BLOCK, .block_q = 128, .block_k = 256, .mask_per_head = 1, .mask_keep_diag = 1, .mask_density = 0.5, .layout = TH_STRIDED},
    {.name = "sq2048_sk255_causal", .dtypes = TH_F32, .seq_q = 2048, .seq_k = 255, .head_dim = 64, .causal = 1},
    {.name = "sq255_sk2048_window", .dtypes = TH_BF16, .heads_q = 2, .heads_kv = 1, .seq_q = 255, .seq_k = 2048, .head_dim = 96, .window = 1, .window_left = 300, .window_right = 50},
    {.name = "sq1000_sk2048_f32", .dtypes = TH_F32, .seq_q = 1000, .seq_k = 2048, .head_dim = 32},
    {.name = "decode_s1_sk2048_mqa", .dtypes = TH_BF16 | TH_F16, .heads_q = 8, .heads_kv = 1, .seq_q = 1, .seq_k = 2048, .head_dim = 128},
    {.name = "decode_s3_sk1000_gqa", .dtypes = TH_F32, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 3, .seq_k = 1000, .head_dim = 64, .causal = 1},

    /* ---- batches and heads: GQA, MQA */
    {.name = "gqa_8_2", .dtypes = TH_ALL, .batch = 2, .heads_q = 8, .heads_kv = 2, .seq_q = 128, .seq_k = 255, .head_dim = 64},
    {.name = "mqa_4_1", .dtypes = TH_ALL, .batch = 3, .heads_q = 4, .heads_kv = 1, .seq_q = 113, .seq_k = 64, .head_dim = 32},
    {.name = "gqa_6_3_causal", .dtypes = TH_BF16, .heads_q = 6, .heads_kv = 3, .seq_q = 255, .seq_k = 255, .head_dim = 96, .causal = 1},

    /* ---- causal (bottom-right aligned) */
    {.name = "causal_s128", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 128, .seq_k = 128, .head_dim = 64, .causal = 1},
    {.name = "causal_sq17_sk256", .dtypes = TH_ALL, .seq_q = 17, .seq_k = 256, .head_dim = 64, .causal = 1},
    {.name = "causal_sq113_sk64_emptyrows", .dtypes = TH_ALL, .seq_q = 113, .seq_k = 64, .head_dim = 64, .causal = 1},
    {.name = "causal_sq255_sk3", .dtypes = TH_F16, .batch = 2, .seq_q = 255, .seq_k = 3, .head_dim = 40, .causal = 1},

    /* ---- sliding windows */
    {.name = "window_left16", .dtypes = TH_F16 | TH_F32, .heads_q = 2, .seq_q = 255, .seq_k = 255, .head_dim = 64, .window = 1, .window_left = 16, .window_right = -1},
    {.name = "window_right8", .dtypes = TH_F16, .seq_q = 113, .seq_k = 113, .head_dim = 64, .window = 1, .window_left = -1, .window_right = 8},
    {.name = "window_32_16_sq<sk", .dtypes = TH_BF16, .seq_q = 113, .seq_k = 256, .head_dim = 64, .window = 1, .window_left = 32, .window_right = 16},
    {.name = "window_causal_left20", .dtypes = TH_F32 | TH_BF16, .seq_q = 256, .seq_k = 256, .head_dim = 64, .causal = 1, .window = 1, .window_left = 20, .window_right = -1},
    {.name = "window_0_0_sq>sk", .dtypes = TH_F16, .seq_q = 64, .seq_k = 17, .head_dim = 32, .window = 1, .window_left = 0, .window_right = 0},
    {.name = "window_causal_right5_ignored", .dtypes = TH_F16, .seq_q = 64, .seq_k = 64, .head_dim = 32, .causal = 1, .window = 1, .window_left = 7, .window_right = 5},

    /* ---- softcap (3x atol) */
    {.name = "softcap5", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 128, .seq_k = 128, .head_dim = 64, .scale = 0.5f, .softcap = 5.0f},
    {.name = "softcap_causal_gqa", .dtypes = TH_F16, .heads_q = 4, .heads_kv = 2, .seq_q = 113, .seq_k = 255, .head_dim = 96, .causal = 1, .scale = 0.4f, .softcap = 3.0f},

    /* ---- ALiBi */
    {.name = "alibi_heads", .dtypes = TH_ALL, .heads_q = 4, .seq_q = 128, .seq_k = 255, .head_dim = 64, .alibi = TH_ALIBI_HEADS},
    {.name = "alibi_batch_heads_causal", .dtypes = TH_F16, .batch = 2, .heads_q = 4, .seq_q = 113, .seq_k = 113, .head_dim = 32, .causal = 1, .alibi = TH_ALIBI_BATCH_HEADS},
    {.name = "alibi_softcap_window_gqa", .dtypes = TH_BF16, .heads_q = 4, .heads_kv = 1, .seq_q = 64, .seq_k = 255, .head_dim = 64, .alibi = TH_ALIBI_HEADS, .scale = 0.5f, .softcap = 4.0f, .window = 1, .window_left = 40, .window_right = 10},

    /* ---- block masks */
    {.name = "block64_bcast_diag", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 256, .seq_k = 256, .head_dim = 64, .sparsity = BLOCK, .mask_keep_diag = 1},
    {.name = "block32x128_bh_emptyrows", .dtypes = TH_BF16 | TH_F32, .batch = 2, .heads_q = 2, .seq_q = 255, .seq_k = 1000, .head_dim = 64, .sparsity = BLOCK, .block_q = 32, .block_k = 128, .mask_per_batch = 1, .mask_per_head = 1, .mask_empty_rows = 1},
    {.name = "block16_per_head", .dtypes = TH_F32 | TH_F16, .heads_q = 3, .seq_q = 113, .seq_k = 64, .head_dim = 32, .sparsity = BLOCK, .block_q = 16, .block_k = 16, .mask_per_head = 1, .mask_density = 0.3},
    {.name = "block128x32_per_batch_causal", .dtypes = TH_F16, .batch = 3, .seq_q = 255, .seq_k = 255, .head_dim = 64, .causal = 1, .sparsity = BLOCK, .block_q = 128, .block_k = 32, .mask_per_batch = 1, .mask_keep_diag = 1},
    {.name = "block48x80_gqa_alibi", .dtypes = TH_F16, .heads_q = 4, .heads_kv = 2, .seq_q = 128, .seq_k = 255, .head_dim = 64, .sparsity = BLOCK, .block_q = 48, .block_k = 80, .mask_per_head = 1, .alibi = TH_ALIBI_HEADS},
    /* 128-multiple blocks: the Hopper kernel's tile list by default on cc 9.0 (with
     * rows past the last full tile, empty rows, and tiles partly masked by causal) */
    {.name = "block128_hopper_list_empty_rows", .dtypes = TH_BF16 | TH_F16, .batch = 2, .heads_q = 2, .seq_q = 1000, .seq_k = 1000, .head_dim = 128, .sparsity = BLOCK, .block_q = 128, .block_k = 128, .mask_per_batch = 1, .mask_per_head = 1, .mask_empty_rows = 1, .mask_density = 0.3},
    {.name = "block256x128_hopper_list_causal_gqa", .dtypes = TH_F16, .heads_q = 4, .heads_kv = 2, .seq_q = 700, .seq_k = 900, .head_dim = 64, .causal = 1, .sparsity = BLOCK, .block_q = 256, .block_k = 128, .mask_per_head = 1, .mask_keep_diag = 1, .mask_density = 0.5},
    {.name = "block_dense1_sparse", .dtypes = TH_BF16, .seq_q = 1000, .seq_k = 1000, .head_dim = 128, .sparsity = BLOCK, .mask_density = 0.1, .mask_keep_diag = 1},

    /* ---- 2:4 */
    {.name = "nm24", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 64, .seq_k = 128, .head_dim = 64, .sparsity = NM24},
    {.name = "nm24_sk17_causal", .dtypes = TH_F16, .seq_q = 17, .seq_k = 17, .head_dim = 32, .causal = 1, .sparsity = NM24},
    {.name = "nm24_sk113_window", .dtypes = TH_BF16, .seq_q = 64, .seq_k = 113, .head_dim = 64, .window = 1, .window_left = 30, .window_right = 3, .sparsity = NM24},
    /* the CUDA 2:4 kernel (bf16/f16): 128-key tiles at hd64, GQA + causal at hd128, varlen with ALiBi */
    {.name = "nm24_d64_s1000", .dtypes = TH_BF16, .heads_q = 2, .seq_q = 1000, .seq_k = 1000, .head_dim = 64, .sparsity = NM24},
    {.name = "nm24_d128_gqa_causal", .dtypes = TH_F16 | TH_BF16, .heads_q = 4, .heads_kv = 2, .seq_q = 255, .seq_k = 300, .head_dim = 128, .causal = 1, .sparsity = NM24},
    {.name = "nm24_varlen_alibi_softcap", .dtypes = TH_F16, .batch = 3, .heads_q = 2, .head_dim = 96, .alibi = TH_ALIBI_HEADS, .scale = 0.5f, .softcap = 5.0f, .sparsity = NM24, .varlen = 1, .seqlens_q = {113, 0, 64}, .seqlens_k = {255, 17, 64}},
    {.name = "nm24_softcap_alibi_gqa", .dtypes = TH_F32, .heads_q = 4, .heads_kv = 2, .seq_q = 113, .seq_k = 255, .head_dim = 40, .scale = 0.5f, .softcap = 5.0f, .alibi = TH_ALIBI_HEADS, .sparsity = NM24},

    /* ---- AUTO_BLOCK */
    {.name = "auto_t0.9", .dtypes = TH_F16 | TH_F32, .heads_q = 2, .seq_q = 1000, .seq_k = 1000, .head_dim = 64, .sparsity = AUTO, .block_threshold = 0.9f, .auto_density_cutoff = 1.0f, .mask_out = 1},
    {.name = "auto_t1.0", .dtypes = TH_F32, .seq_q = 256, .seq_k = 256, .head_dim = 64, .sparsity = AUTO, .block_threshold = 1.0f, .auto_density_cutoff = 1.0f, .mask_out = 1},
    {.name = "auto_cutoff_dense", .dtypes = TH_BF16, .seq_q = 255, .seq_k = 255, .head_dim = 64, .sparsity = AUTO, .block_threshold = 0.9f, .auto_density_cutoff = 0.01f, .mask_out = 1},
    {.name = "auto_causal_defaults", .dtypes = TH_F16, .batch = 2, .heads_q = 2, .heads_kv = 1, .seq_q = 256, .seq_k = 256, .head_dim = 32, .causal = 1, .sparsity = AUTO},
    {.name = "auto_block32_t0.9", .dtypes = TH_BF16, .seq_q = 113, .seq_k = 255, .head_dim = 64, .sparsity = AUTO, .block_q = 32, .block_k = 32, .block_threshold = 0.9f, .auto_density_cutoff = 1.0f, .mask_out = 1},

    /* block-structured inputs: the estimator drops most blocks */
    {.name = "auto_clustered_t0.9", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 1000, .seq_k = 1000, .head_dim = 64, .sparsity = AUTO, .block_threshold = 0.9f, .auto_density_cutoff = 1.0f, .mask_out = 1, .clustered = 1},
    {.name = "auto_clustered_causal_gqa", .dtypes = TH_BF16 | TH_F16, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 512, .seq_k = 512, .head_dim = 128, .causal = 1, .sparsity = AUTO, .block_threshold = 0.95f, .auto_density_cutoff = 1.0f, .mask_out = 1, .clustered = 1},
    {.name = "auto_clustered_t1.0", .dtypes = TH_F32, .seq_q = 256, .seq_k = 255, .head_dim = 32, .sparsity = AUTO, .block_threshold = 1.0f, .auto_density_cutoff = 1.0f, .mask_out = 1, .clustered = 1},
    {.name = "auto_clustered_cutoff_dense", .dtypes = TH_F16, .seq_q = 512, .seq_k = 512, .head_dim = 64, .sparsity = AUTO, .block_threshold = 0.9f, .auto_density_cutoff = 0.05f, .mask_out = 1, .clustered = 1},
    {.name = "auto_clustered_varlen", .dtypes = TH_BF16, .batch = 3, .heads_q = 2, .head_dim = 64, .sparsity = AUTO, .block_threshold = 0.9f, .auto_density_cutoff = 1.0f, .mask_out = 1, .clustered = 1, .varlen = 1, .seqlens_q = {300, 0, 129}, .seqlens_k = {300, 64, 200}},
    /* 128 x 128 blocks on cc 9.0: the Hopper kernel walks the chosen mask; random
     * inputs fall back to the dense Hopper kernel, gated on the device */
    {.name = "auto_block128_random_fallback", .dtypes = TH_BF16, .heads_q = 2, .seq_q = 640, .seq_k = 640, .head_dim = 128, .sparsity = AUTO, .block_q = 128, .block_k = 128, .mask_out = 1},
    {.name = "auto_block128_clustered", .dtypes = TH_F16, .heads_q = 2, .seq_q = 1000, .seq_k = 1000, .head_dim = 64, .sparsity = AUTO, .block_q = 128, .block_k = 128, .block_threshold = 0.9f, .auto_density_cutoff = 1.0f, .mask_out = 1, .clustered = 1},
    {.name = "auto_clustered_sq1_decode", .dtypes = TH_F16, .heads_q = 4, .heads_kv = 1, .seq_q = 1, .seq_k = 1000, .head_dim = 64, .sparsity = AUTO, .block_threshold = 0.9f, .auto_density_cutoff = 1.0f, .clustered = 1},

    /* ---- varlen (with empty sequences) */
    {.name = "varlen_empty", .dtypes = TH_ALL, .batch = 4, .heads_q = 2, .head_dim = 64, .varlen = 1, .seqlens_q = {17, 0, 64, 5}, .seqlens_k = {33, 0, 64, 0}},
    /* hd128: query tiles without keys and a sequence of three query tiles on the
     * persistent Hopper kernel (written for decision 146's split-Q form with the lag) */
    {.name = "varlen_empty_d128", .dtypes = TH_BF16, .batch = 4, .heads_q = 2, .head_dim = 128, .varlen = 1, .seqlens_q = {17, 0, 300, 5}, .seqlens_k = {33, 0, 700, 0}},
    {.name = "varlen_causal_gqa", .dtypes = TH_F16, .batch = 4, .heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = 1, .varlen = 1, .seqlens_q = {113, 1, 0, 255}, .seqlens_k = {128, 3, 0, 255}},
    {.name = "varlen_window_alibi_bh", .dtypes = TH_BF16, .batch = 3, .heads_q = 2, .head_dim = 32, .window = 1, .window_left = 8, .window_right = 4, .alibi = TH_ALIBI_BATCH_HEADS, .varlen = 1, .seqlens_q = {64, 17, 3}, .seqlens_k = {64, 113, 1}},
    {.name = "varlen_block", .dtypes = TH_F16, .batch = 3, .heads_q = 2, .head_dim = 64, .sparsity = BLOCK, .block_q = 32, .block_k = 32, .mask_per_batch = 1, .varlen = 1, .seqlens_q = {100, 0, 64}, .seqlens_k = {128, 17, 70}},
    {.name = "varlen_no_max_seqlen", .dtypes = TH_F32, .batch = 2, .head_dim = 96, .varlen = 1, .no_max_seqlen = 1, .seqlens_q = {3, 113}, .seqlens_k = {255, 17}},
    {.name = "varlen_nm24_softcap", .dtypes = TH_F16, .batch = 2, .head_dim = 64, .scale = 0.5f, .softcap = 5.0f, .sparsity = NM24, .varlen = 1, .seqlens_q = {17, 64}, .seqlens_k = {23, 64}},

    /* ---- seqused_k (KV cache) */
    {.name = "seqused_k", .dtypes = TH_F16 | TH_F32, .batch = 3, .heads_q = 2, .seq_q = 17, .seq_k = 128, .head_dim = 64, .causal = 1, .seqused = 1, .seqused_k = {128, 50, 0}},
    {.name = "seqused_k_varlen_gqa", .dtypes = TH_BF16, .batch = 3, .heads_q = 4, .heads_kv = 1, .head_dim = 64, .varlen = 1, .seqlens_q = {1, 5, 17}, .seqlens_k = {64, 255, 30}, .seqused = 1, .seqused_k = {10, 255, 0}},
    {.name = "seqused_k_decode_window", .dtypes = TH_F16, .batch = 2, .heads_q = 2, .seq_q = 1, .seq_k = 1000, .head_dim = 128, .window = 1, .window_left = 64, .window_right = -1, .seqused = 1, .seqused_k = {700, 1}},

    /* ---- decode: Sq <= 16 against long K, many query heads per kv head (split-KV) */
    {.name = "decode_varlen_seqused_gqa", .dtypes = TH_BF16 | TH_F32, .batch = 4, .heads_q = 8, .heads_kv = 2, .head_dim = 128, .varlen = 1, .seqlens_q = {1, 1, 0, 1}, .seqlens_k = {4096, 700, 64, 2500}, .seqused = 1, .seqused_k = {4000, 700, 0, 0}},
    {.name = "decode_sq4_sk4096_gqa8_causal_alibi_softcap", .dtypes = TH_F16 | TH_F32, .batch = 2, .heads_q = 16, .heads_kv = 2, .seq_q = 4, .seq_k = 4096, .head_dim = 64, .causal = 1, .scale = 0.5f, .softcap = 5.0f, .alibi = TH_ALIBI_BATCH_HEADS},
    /* the tensor-core decode path's shapes: <= 16 rows per kv head, aligned rows */
    {.name = "decode_sq2_sk1500_gqa4_causal_alibi_softcap", .dtypes = TH_BF16 | TH_F16, .batch = 2, .heads_q = 8, .heads_kv = 2, .seq_q = 2, .seq_k = 1500, .head_dim = 128, .causal = 1, .scale = 0.3f, .softcap = 8.0f, .alibi = TH_ALIBI_BATCH_HEADS},
    /* one (batch, kv head) task and long keys: more splits than one thread-block cluster
     * holds (under POLYATTN_CUDA_DECODE_MERGE=cluster the CUDA decode kernel falls back
     * to its merge kernel, fwd_decode.cu) */
    {.name = "decode_s1_sk16384_mqa8_many_splits", .dtypes = TH_BF16, .heads_q = 8, .heads_kv = 1, .seq_q = 1, .seq_k = 16384, .head_dim = 128},
    {.name = "decode_s1_sk3000_g16_block_window_d96", .dtypes = TH_BF16 | TH_F16, .heads_q = 16, .heads_kv = 1, .seq_q = 1, .seq_k = 3000, .head_dim = 96, .head_dim_v = 64, .window = 1, .window_left = 1000, .window_right = -1, .sparsity = BLOCK, .block_k = 128, .mask_per_head = 1, .mask_density = 0.4},
    {.name = "decode_sq2_sk3000_block_window_strided_odd", .dtypes = TH_BF16 | TH_F16, .batch = 2, .heads_q = 4, .heads_kv = 1, .seq_q = 2, .seq_k = 3000, .head_dim = 72, .head_dim_v = 40, .window = 1, .window_left = 2000, .window_right = -1, .sparsity = BLOCK, .block_k = 128, .mask_per_head = 1, .mask_density = 0.3, .layout = TH_STRIDED_ODD},
    /* the Vulkan decode kernel's shapes: <= 8 rows per kv head, D == Dv, 16-byte rows */
    {.name = "decode_sq2_sk2000_gqa2_block_causal", .dtypes = TH_BF16 | TH_F16, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 2, .seq_k = 2000, .head_dim = 64, .causal = 1, .sparsity = BLOCK, .block_k = 64, .mask_per_head = 1, .mask_density = 0.5},
    {.name = "decode_s1_sk1200_gqa2_d256_window", .dtypes = TH_F16, .heads_q = 4, .heads_kv = 2, .seq_q = 1, .seq_k = 1200, .head_dim = 256, .window = 1, .window_left = 500, .window_right = -1},
    {.name = "decode_sq3_sk700_d40_softcap", .dtypes = TH_BF16, .heads_q = 2, .seq_q = 3, .seq_k = 700, .head_dim = 40, .softcap = 6.0f},

    /* ---- empty keys, fully masked rows */
    {.name = "seqlen_k_0", .dtypes = TH_ALL, .batch = 2, .heads_q = 2, .seq_q = 17, .seq_k = 0, .head_dim = 64},
    {.name = "seqlen_q_0", .dtypes = TH_F16, .batch = 2, .heads_q = 2, .seq_q = 0, .seq_k = 17, .head_dim = 32},
    {.name = "seqlen_k_0_causal_nolse", .dtypes = TH_F16, .seq_q = 3, .seq_k = 0, .head_dim = 32, .causal = 1, .no_lse = 1},

    /* ---- layouts */
    {.name = "strided_gqa_causal", .dtypes = TH_ALL, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 113, .seq_k = 128, .head_dim = 64, .causal = 1, .layout = TH_STRIDED},
    {.name = "strided_odd_dv", .dtypes = TH_F16 | TH_F32, .batch = 2, .heads_q = 2, .seq_q = 64, .seq_k = 17, .head_dim = 40, .head_dim_v = 72, .layout = TH_STRIDED_ODD},
    {.name = "packed_qkv_causal", .dtypes = TH_ALL, .batch = 2, .heads_q = 4, .seq_q = 128, .seq_k = 128, .head_dim = 64, .causal = 1, .layout = TH_PACKED_QKV},
    {.name = "packed_qkv_gqa", .dtypes = TH_BF16, .heads_q = 4, .heads_kv = 2, .seq_q = 113, .seq_k = 113, .head_dim = 96, .layout = TH_PACKED_QKV},
    {.name = "bhsd", .dtypes = TH_F32 | TH_F16, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 64, .seq_k = 255, .head_dim = 128, .layout = TH_BHSD},
    {.name = "bhsd_varlen", .dtypes = TH_F16, .batch = 3, .heads_q = 2, .head_dim = 64, .varlen = 1, .seqlens_q = {17, 0, 64}, .seqlens_k = {17, 5, 128}, .layout = TH_BHSD},
    {.name = "strided_varlen_causal", .dtypes = TH_BF16, .batch = 2, .heads_q = 2, .head_dim = 32, .causal = 1, .varlen = 1, .seqlens_q = {64, 113}, .seqlens_k = {64, 113}, .layout = TH_STRIDED},
    {.name = "packed_varlen", .dtypes = TH_F16, .batch = 3, .heads_q = 2, .head_dim = 64, .varlen = 1, .seqlens_q = {17, 64, 3}, .seqlens_k = {17, 64, 3}, .layout = TH_PACKED_QKV},
    {.name = "strided_block_alibi", .dtypes = TH_F16, .batch = 2, .heads_q = 2, .seq_q = 128, .seq_k = 255, .head_dim = 64, .sparsity = BLOCK, .mask_per_head = 1, .alibi = TH_ALIBI_BATCH_HEADS, .layout = TH_STRIDED},

    /* ---- the context's own workspace (workspace = NULL) */
    {.name = "null_workspace_decode", .dtypes = TH_F32, .heads_q = 8, .heads_kv = 2, .seq_q = 1, .seq_k = 1000, .head_dim = 64, .no_workspace = 1},
    {.name = "null_workspace_auto", .dtypes = TH_F16, .seq_q = 256, .seq_k = 256, .head_dim = 64, .sparsity = AUTO, .block_threshold = 0.9f, .auto_density_cutoff = 1.0f, .clustered = 1, .no_workspace = 1},

    /* ---- LSE not requested */
    {.name = "no_lse", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 113, .seq_k = 64, .head_dim = 64, .no_lse = 1},
    {.name = "no_lse_varlen_causal", .dtypes = TH_BF16, .batch = 2, .head_dim = 32, .causal = 1, .varlen = 1, .seqlens_q = {5, 17}, .seqlens_k = {0, 17}, .no_lse = 1},
};

ParameterizedTestParameters(forward, sweep) {
  th_param *p;
  size_t n = th_make_params(cases, sizeof cases / sizeof cases[0], &p);
  return cr_make_param_array(th_param, p, n, NULL);
}

ParameterizedTest(th_param *p, forward, sweep, .timeout = 300) { th_forward_test(cases, p); }

/* ------------------------------------------------------------ determinism */

static const th_case det_cases[] = {
    {.name = "det_prefill", .dtypes = TH_BF16, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 512, .seq_k = 512, .head_dim = 128, .causal = 1, .alibi = TH_ALIBI_HEADS},
    /* decode: few (batch, head, row) tasks, so a backend splits the keys */
    {.name = "det_decode_split", .dtypes = TH_F32 | TH_BF16, .batch = 1, .heads_q = 8, .heads_kv = 1, .seq_q = 1, .seq_k = 4096, .head_dim = 128},
};

ParameterizedTestParameters(forward, deterministic) {
  th_param *p;
  size_t n = th_make_params(det_cases, sizeof det_cases / sizeof det_cases[0], &p);
  return cr_make_param_array(th_param, p, n, NULL);
}

/* The same inputs 20 times (POLYATTN_TEST_REPEAT=N: N times, as in the backward's
 * test): out and LSE must be bit-identical (a moving result is a race). */
ParameterizedTest(th_param *p, forward, deterministic, .timeout = 300) {
  if (p->case_index < 0) (void)th_context_or_skip(p->backend);
  th_case c = th_case_resolve(&det_cases[p->case_index], p->dtype);
  char label[200];
  th_case_label(&c, p->backend, label, sizeof label);
  polyattn_context *ctx = th_context_or_skip(p->backend);
  th_run *r = th_run_create(ctx, &c, 0);
  polyattn_status st = th_run_forward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) cr_skip_test("SKIPPED %s: %s", label, th_run_message(r));
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", label, th_run_message(r));
  size_t nout, nlse;
  const void *o = th_run_bytes(r, 0, &nout), *l = th_run_bytes(r, 1, &nlse);
  void *first_out = malloc(nout), *first_lse = malloc(nlse);
  memcpy(first_out, o, nout);
  memcpy(first_lse, l, nlse);
  const int runs = th_repeats(20);
  for (int it = 1; it < runs; ++it) {
    st = th_run_forward(r);
    cr_assert_eq(st, POLYATTN_OK, "%s run %d: %s", label, it, th_run_message(r));
    cr_assert(memcmp(first_out, th_run_bytes(r, 0, &nout), nout) == 0,
              "%s: out differs between run 0 and run %d", label, it);
    cr_assert(memcmp(first_lse, th_run_bytes(r, 1, &nlse), nlse) == 0,
              "%s: lse differs between run 0 and run %d", label, it);
  }
  /* and the result it keeps repeating is the right one */
  char summary[2048];
  int ok = th_check_forward(r, summary, sizeof summary);
  cr_log_info("%s (%d identical runs)", summary, runs);
  cr_assert(ok, "%s", summary);
  free(first_out), free(first_lse);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

/* ------------------------------------------------------------ guard bytes */

static const th_case guard_cases[] = {
    {.name = "guard_strided_odd", .dtypes = TH_F16 | TH_F32, .batch = 2, .heads_q = 3, .seq_q = 17, .seq_k = 33, .head_dim = 72, .layout = TH_STRIDED_ODD},
    {.name = "guard_strided_varlen", .dtypes = TH_BF16, .batch = 2, .heads_q = 2, .head_dim = 64, .varlen = 1, .seqlens_q = {3, 64}, .seqlens_k = {17, 64}, .layout = TH_STRIDED},
};

ParameterizedTestParameters(forward, output_guard_bytes) {
  th_param *p;
  size_t n = th_make_params(guard_cases, sizeof guard_cases / sizeof guard_cases[0], &p);
  return cr_make_param_array(th_param, p, n, NULL);
}

/* Padding between heads, tokens and batches of the output, and the bytes before
 * and after the view, keep their values; the view itself is fully written. */
ParameterizedTest(th_param *p, forward, output_guard_bytes, .timeout = 120) {
  if (p->case_index < 0) (void)th_context_or_skip(p->backend);
  th_case c = th_case_resolve(&guard_cases[p->case_index], p->dtype);
  char label[200], msg[256];
  th_case_label(&c, p->backend, label, sizeof label);
  polyattn_context *ctx = th_context_or_skip(p->backend);
  th_run *r = th_run_create(ctx, &c, 0);
  polyattn_status st = th_run_forward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) cr_skip_test("SKIPPED %s: %s", label, th_run_message(r));
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", label, th_run_message(r));
  cr_assert(th_guard_ok(r, msg, sizeof msg), "%s: %s", label, msg);
  th_assert_forward_ok(r, NULL);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

TH_DEFINE_MAIN
