#!/usr/bin/env bash
# (The script of a GPU round as it ran: started as `cd KIT && source ./env && OUT=dir
# timeout 100 bash run.sh` from a devkit whose CUDA module is gzip-compressed; logs in
# bench/results/2026-11-30s5-h200-sparse-*.)
# sparse, fifth session, R1: the Hopper kernel walks the BLOCK key-tile list.
# 1. BLOCK 128x128 at 25%, hd128 S8192 bf16 B2 H16: the sparse run (Hopper by default)
#    against Hopper dense and Ampere dense in the same process
# 2. forward sweep on CUDA, default kernel choice: the nm24, block, auto cases
# 3. BLOCK 128x128 at 100%, 50%, 12.5% (same comparison)
# 4. the block and auto cases with the Hopper kernel forced
# 5. AUTO on random inputs at S16384 (falls back to dense, gated on the device)
# 6. ncu: each kernel of one AUTO call on random inputs at S16384 (the estimator's
#    pool_k, choose, settle; the BLOCK kernel's list and empty pass; the gated dense
#    Hopper kernel), gpu__time_duration
set -u
mkdir -p "$OUT"
gzip -d lib/*.gz 2>/dev/null
S=$OUT/SUMMARY.txt; : > "$S"
step() { local name=$1 lim=$2; shift 2; local t0=$SECONDS left=$((96 - SECONDS))
  [ "$left" -lt 4 ] && { echo "$name SKIPPED (budget)" | tee -a "$S"; return; }
  [ "$lim" -gt "$left" ] && lim=$left
  timeout "$lim" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS-t0))s" | tee -a "$S"; grep -E "^forward|^vs dense|keeps|auto:|tests|Synthesis|FAIL" "$OUT/$name.log" | tail -n 6 | tee -a "$S"; }
A="--backend cuda --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 20 --no-check --vs-dense --vs-kernel ampere --sparsity block"
step block128-25 12 polyattn run $A --block 128 --density 0.25
step sweep 22 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=nm24,block,auto test_forward --filter 'forward/sweep' --jobs 16
step block128-100 9 polyattn run $A --block 128 --density 1.0
step block128-50 8 polyattn run $A --block 128 --density 0.5
step sweep-hopper-block-auto 14 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
step auto-random-s16384 12 polyattn run --backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 10 --no-check --vs-dense --vs-kernel ampere --sparsity auto
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
step ncu-auto-random 20 "$NCU" --kernel-name regex:"pool_k|choose|settle|block_list|fwd_kernel" --launch-count 6 --metrics gpu__time_duration.sum polyattn run --backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 1 --no-check --sparsity auto
grep -E "pool_k|choose|settle|block_list|fwd_kernel|gpu__time_duration" "$OUT/ncu-auto-random.log" | tee -a "$S"
cat "$S"
