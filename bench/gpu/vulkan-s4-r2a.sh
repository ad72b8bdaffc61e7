#!/usr/bin/env bash
# vulkan R2a (2026-11-30 s4): the subgroup-scope coopmat2 kernel (speed, compiler
# statistics, forced fp16 sweep); decode sweep cases; default sweep, first half.
set -uo pipefail
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
L=$OUT
S=$L/SUMMARY.txt; : > "$S"
step() { # NAME LIMIT CMD...
  local n=$1 lim=$2; shift 2; local t0=$SECONDS
  echo "=== $n: $*" > "$L/$n.log"
  timeout "$lim" "$@" >> "$L/$n.log" 2>&1; local rc=$?
  printf '%-22s rc=%-3s %4ds\n' "$n" "$rc" $((SECONDS - t0)) | tee -a "$S"
}
show() { grep -hv '^polyattn vulkan\|^attn_speed:\|^===' "$@"; }
sweep_sum() { echo "PASS $(grep -c '^\[PASS\]' "$1")"; grep -E 'Synthesis|FAIL' "$1" | head -12; }
PRE="--backend vulkan --dtype f16 --batch 2 --heads 16 --dim 128 --seq 8192"
SG=POLYATTN_VULKAN_COOPMAT2_SCOPE=subgroup
# 1. coopmat2 hd128 S8192: workgroup scope (default) against the subgroup kernel's tiles
step cm2 16 attn_speed $PRE --iters 10 --warm 0.5 - $SG $SG,POLYATTN_VULKAN_COOPMAT2_TILES=64x64 \
  $SG,POLYATTN_VULKAN_COOPMAT2_TILES=128x32 $SG,POLYATTN_VULKAN_COOPMAT2_TILES=64x16
show "$L/cm2.log"
# 2. compiler statistics of the subgroup kernel's pipelines
step stats 8 env POLYATTN_VULKAN_PIPELINE_STATS=1 attn_speed --backend vulkan --dtype f16 --batch 1 \
  --heads 4 --dim 128 --seq 256 --iters 1 --warm 0 $SG $SG,POLYATTN_VULKAN_COOPMAT2_TILES=64x64 \
  $SG,POLYATTN_VULKAN_COOPMAT2_TILES=128x32 $SG,POLYATTN_VULKAN_COOPMAT2_TILES=64x16
grep '^polyattn vulkan: pipeline' "$L/stats.log" | cut -c1-250
# 3. the forced fp16 sweep on the subgroup kernel (other rows skip)
step sweep-sg 36 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_VULKAN_KERNEL=coopmat2 $SG \
  test_forward --verbose --filter 'forward/sweep' --jobs 16
sweep_sum "$L/sweep-sg.log"
# 4. the default sweep, first half of the cases (decode included)
step sweep-default-1 34 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_TEST_CASES='d32_s1,d32_s17_b2h2,d64_s64_h4,d96_s113,d128_s128_b2,d256_s255,d256_s3_256,d40_sq3_sk256,d72_sq256_sk3,d72_sq17_sk255,dv32_d64,dv128_d32,dv40_d96_causal,scale_explicit,s1_sk1000,s1000,s1000_causal_d128,s2048_d128,s2048_causal_d256,sq2048_sk255_causal,sq255_sk2048_window,sq1000_sk2048_f32,decode_s1_sk2048_mqa,decode_s3_sk1000_gqa,gqa_8_2,mqa_4_1,gqa_6_3_causal,causal_s128,causal_sq17_sk256,causal_sq113_sk64_emptyrows,causal_sq255_sk3,window_left16,window_right8,window_32_16_sq<sk,window_causal_left20,window_0_0_sq>sk,window_causal_right5_ignored,softcap5,softcap_causal_gqa,alibi_heads,alibi_batch_heads_causal,alibi_softcap_window_gqa,block64_bcast_diag,block32x128_bh_emptyrows,block16_per_head,block128x32_per_batch_causal,block48x80_gqa_alibi,block_dense1_sparse' \
  test_forward --verbose --filter 'forward/sweep' --jobs 16
sweep_sum "$L/sweep-default-1.log"
cat "$S"
