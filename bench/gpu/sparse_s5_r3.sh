#!/usr/bin/env bash
# (The script of a follow-up GPU request as it ran: started as `cd KIT && source ./env &&
# OUT=dir timeout 100 bash run.sh`; logs in bench/results/2026-11-30s5-h200-sparse-*.)
# sparse, fifth session, a request after R2 (same build as R2, commit b34b7fb's module):
# 1. the whole forward sweep with the Hopper kernel forced (R2's was cut at 22 s)
# 2. ncu: the choose kernel's stall reasons, occupancy and memory traffic (S16384)
# 3. BLOCK 128x128 at 50%; AUTO on structured inputs at thresholds 0.9 and 0.99
set -u
mkdir -p "$OUT"
gzip -d lib/*.gz 2>/dev/null
S=$OUT/SUMMARY.txt; : > "$S"
step() { local name=$1 lim=$2; shift 2; local t0=$SECONDS left=$((96 - SECONDS))
  [ "$left" -lt 4 ] && { echo "$name SKIPPED (budget)" | tee -a "$S"; return; }
  [ "$lim" -gt "$left" ] && lim=$left
  timeout "$lim" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS-t0))s" | tee -a "$S"; grep -E "^forward|^vs dense|keeps|auto:|Synthesis|ERROR SUMMARY|FAIL" "$OUT/$name.log" | tail -n 6 | tee -a "$S"; }
step sweep-hopper-all 55 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_TEST_BACKENDS=cuda test_forward --filter 'forward/sweep' --jobs 16
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
step ncu-choose 14 "$NCU" --kernel-name regex:choose --launch-count 1 --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis polyattn run --backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 1 --no-check --sparsity auto
grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Stall|Warp Cycles|Issued Warp|Eligible|Memory Throughput|L2 Hit|L1/TEX Hit|Block Limit|Waves" "$OUT/ncu-choose.log" | head -40 | tee -a "$S"
step block128-50 10 polyattn run --backend cuda --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 10 --no-check --vs-dense --sparsity block --block 128 --density 0.5
B="--backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 5 --no-check --vs-dense --sparsity auto --structured --cutoff 1"
step auto-structured-0.9 8 polyattn run $B --threshold 0.9
step auto-structured-0.99 8 polyattn run $B --threshold 0.99
cat "$S"
