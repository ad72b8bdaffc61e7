#!/usr/bin/env bash
# vulkan-final-check.sh: the Vulkan part of the final GPU check of merged main (at most
# 60 s): what the fourth session changed and could not finish checking
# on the H200 (bench/RESULTS.md, docs/decisions.md 62-63). Run it from a devkit
# directory (../shared/tools/devkit --vulkan <build>/bin/{polyattn,test_forward,
# test_vulkan,attn_speed} <build>/lib/*.so*, the module built with glslc-modern) with
# $OUT set; each step's log goes to $OUT, a summary to stdout.
#   1. the decode kernel, forced, on the sweep's decode cases (default choice there)
#   2. the subgroup-scope coopmat2 kernel (the fp16 default), forced, on the fp16 sweep
#      cases its round-2 run did not reach
#   3. test_vulkan: both coopmat2 kernels forced; the decode kernel's scatter forms
#   4. the prefill speed, hd128 S8192 B2 H16: subgroup scope (default), workgroup scope
# If step 2 reports a FAIL, set PA_VK_COOPMAT2_SUBGROUP to 0 in
# backends/vulkan/vk_tune.h (the workgroup-scope kernel, verified in the third session).
set -uo pipefail
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
L=${OUT:-$PWD/vulkan-final-check}
mkdir -p "$L"
step() { # NAME LIMIT CMD...
  local n=$1 lim=$2; shift 2; local t0=$SECONDS
  timeout "$lim" "$@" > "$L/$n.log" 2>&1; local rc=$?
  printf '%-16s rc=%-3s %3ds  PASS %s  FAIL %s\n' "$n" "$rc" $((SECONDS - t0)) \
    "$(grep -c '^\[PASS\]' "$L/$n.log")" "$(grep -c '^\[FAIL\]' "$L/$n.log")"
  grep -E '^\[FAIL\]|Synthesis' "$L/$n.log" | head -5
}
step decode 15 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_VULKAN_KERNEL=decode \
  POLYATTN_TEST_CASES=decode,seqused_k_decode test_forward --verbose --filter 'forward/sweep' --jobs 16
step coopmat2-sg 28 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_VULKAN_KERNEL=coopmat2 \
  POLYATTN_VULKAN_COOPMAT2_SCOPE=subgroup \
  POLYATTN_TEST_CASES='s1000,s2048_d128,gqa_8_2,block16_per_head,block128x32_per_batch_causal,block48x80_gqa_alibi,varlen_empty,varlen_causal_gqa,varlen_block,seqused_k,seqused_k_decode_window,decode_sq4_sk4096_gqa8_causal_alibi_softcap,decode_sq2_sk1500_gqa4_causal_alibi_softcap,decode_s1_sk3000_g16_block_window_d96,decode_sq2_sk2000_gqa2_block_causal,decode_s1_sk1200_gqa2_d256_window,seqlen_k_0,seqlen_q_0,seqlen_k_0_causal_nolse,strided_gqa_causal,packed_qkv_causal,bhsd,bhsd_varlen,packed_varlen,strided_block_alibi,no_lse' \
  test_forward --verbose --filter 'forward/sweep' --jobs 16
step test-vulkan 8 test_vulkan --verbose --filter 'vulkan/*'
step speed 9 attn_speed --backend vulkan --dtype f16 --batch 2 --heads 16 --dim 128 --seq 8192 \
  --iters 10 --warm 0.5 - POLYATTN_VULKAN_COOPMAT2_SCOPE=workgroup
grep -A3 '^variant' "$L/speed.log"
