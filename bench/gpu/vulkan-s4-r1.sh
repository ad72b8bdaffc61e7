#!/usr/bin/env bash
# vulkan R1 (2026-11-30 s4): decode kernel v2 (reduce-scatter), coopmat2 with row state in
# shared memory (ROWSH) and K/V prefetch, compiler statistics. Tool: attn_speed (one
# process per shape, several settings; GPU time per call = host time of N back-to-back
# calls / N after a warm-up of continuous work).
# (A record of round 1: POLYATTN_VULKAN_COOPMAT2_ROWSH and _PREFETCH were removed after it,
# docs/decisions.md 63; the round ran an earlier version of this script, bench/RESULTS.md.)
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
DEC="--backend vulkan --dtype f16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1"
PRE="--backend vulkan --dtype f16 --batch 2 --heads 16 --dim 128 --seq 8192"
# 1. decode v2 at Sk=32k: default choice, U and split variants
step dec32k 18 env POLYATTN_VULKAN_TIMESTAMPS=1 attn_speed $DEC --seq-k 32768 --iters 100 --warm 0.8 \
  - POLYATTN_VULKAN_DECODE_U=2 POLYATTN_VULKAN_DECODE_U=1 POLYATTN_VULKAN_SPLITS=34 POLYATTN_VULKAN_SPLITS=68
show "$L/dec32k.log"
# 2. the full default sweep (correctness after the shader changes)
step sweep-default 50 env POLYATTN_TEST_BACKENDS=vulkan test_forward --filter 'forward/sweep' --jobs 14
grep -E 'Synthesis|FAIL' "$L/sweep-default.log" | head -8
# 3. coopmat2 hd128 S8192: default (ROWSH + PREFETCH), without prefetch, the old form,
#    64x64 tiles; the subgroup-scope kernel (64x32, 64x64, 128x32); 256 invocations
#    with 128-row tiles (workgroup scope)
SG=POLYATTN_VULKAN_COOPMAT2_SCOPE=subgroup
step cm2 22 attn_speed $PRE --iters 20 --warm 0.8 \
  - POLYATTN_VULKAN_COOPMAT2_PREFETCH=0 POLYATTN_VULKAN_COOPMAT2_ROWSH=0,POLYATTN_VULKAN_COOPMAT2_PREFETCH=0 \
  POLYATTN_VULKAN_COOPMAT2_TILES=64x64 \
  +POLYATTN_VULKAN_COOPMAT2_THREADS=256,POLYATTN_VULKAN_COOPMAT2_TILES=128x32 \
  POLYATTN_VULKAN_COOPMAT2_TILES=128x64 \
  $SG $SG,POLYATTN_VULKAN_COOPMAT2_TILES=64x64 $SG,POLYATTN_VULKAN_COOPMAT2_TILES=128x32
show "$L/cm2.log"
# 4. compiler statistics (registers, spills) of the decode and coopmat2 pipelines
step stats 10 env POLYATTN_VULKAN_PIPELINE_STATS=1 attn_speed --backend vulkan --dtype f16 --batch 1 \
  --heads 16 --kv-heads 4 --dim 128 --seq-q 1 --seq-k 4096 --iters 1 --warm 0 \
  - POLYATTN_VULKAN_DECODE_U=2 POLYATTN_VULKAN_KERNEL=coopmat2 \
  POLYATTN_VULKAN_KERNEL=coopmat2,POLYATTN_VULKAN_COOPMAT2_PREFETCH=0 \
  POLYATTN_VULKAN_KERNEL=coopmat2,POLYATTN_VULKAN_COOPMAT2_ROWSH=0,POLYATTN_VULKAN_COOPMAT2_PREFETCH=0 \
  +POLYATTN_VULKAN_KERNEL=coopmat2,POLYATTN_VULKAN_COOPMAT2_THREADS=256,POLYATTN_VULKAN_COOPMAT2_TILES=128x32 \
  POLYATTN_VULKAN_KERNEL=coopmat2,$SG
grep '^polyattn vulkan: pipeline' "$L/stats.log" | cut -c1-330
# 5. decode at Sk 4k; coopmat2 at hd64
step dec4k 6 attn_speed $DEC --seq-k 4096 --iters 200 --warm 0.8 - POLYATTN_VULKAN_DECODE_U=2
step cm2-hd64 8 attn_speed ${PRE/--heads 16 --dim 128/--heads 32 --dim 64} --iters 20 --warm 0.8 \
  - POLYATTN_VULKAN_COOPMAT2_ROWSH=0,POLYATTN_VULKAN_COOPMAT2_PREFETCH=0 $SG
show "$L"/dec4k.log "$L"/cm2-hd64.log
cat "$S"
