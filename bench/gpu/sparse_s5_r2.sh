#!/usr/bin/env bash
# (The script of a GPU round as it ran: started as `cd KIT && source ./env && OUT=dir
# timeout 100 bash run.sh` from a devkit whose large libraries are gzip-compressed;
# logs in bench/results/2026-11-30s5-h200-sparse-*.)
# sparse, fifth session, R2 (the warp-per-query-block estimator, not run before):
# 1. forward sweep on CUDA, default kernel choice: the nm24, block, auto cases (the
#    GPU estimator's masks must equal the CPU's)
# 2. AUTO on random inputs at S16384 (falls back: the gated dense Hopper kernel)
#    against Hopper dense; ncu: each kernel of one such call
# 3. BLOCK 128x128 at 100% and 12.5% against Hopper dense
# 4. the whole forward sweep with the Hopper kernel forced
# 5. compute-sanitizer memcheck, Hopper forced, on three block/auto cases
# 6. AUTO on structured inputs at S16384, threshold 0.95 (cut-off 1), against Hopper
#    dense; BLOCK 64x64 at 25% with the Hopper kernel forced (decision 65)
# 7. ncu: the list builder and the Hopper kernel of BLOCK 128x128 at 25%
set -u
mkdir -p "$OUT"
gzip -d lib/*.gz 2>/dev/null
S=$OUT/SUMMARY.txt; : > "$S"
step() { local name=$1 lim=$2; shift 2; local t0=$SECONDS left=$((96 - SECONDS))
  [ "$left" -lt 4 ] && { echo "$name SKIPPED (budget)" | tee -a "$S"; return; }
  [ "$lim" -gt "$left" ] && lim=$left
  timeout "$lim" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS-t0))s" | tee -a "$S"; grep -E "^forward|^vs dense|keeps|auto:|Synthesis|ERROR SUMMARY|FAIL" "$OUT/$name.log" | tail -n 6 | tee -a "$S"; }
step sweep 14 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=nm24,block,auto test_forward --filter 'forward/sweep' --jobs 16
step auto-random-s16384 11 polyattn run --backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 10 --no-check --vs-dense --sparsity auto
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
step ncu-auto-random 9 "$NCU" --kernel-name regex:"pool_k|choose|settle|block_list|fwd_kernel" --launch-count 6 --metrics gpu__time_duration.sum polyattn run --backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 1 --no-check --sparsity auto
grep -E "gpu__time_duration" "$OUT/ncu-auto-random.log" | tee -a "$S"
A="--backend cuda --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 10 --no-check --vs-dense --sparsity block"
step block128-100 10 polyattn run $A --block 128 --density 1.0
step sweep-hopper-all 22 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_TEST_BACKENDS=cuda test_forward --filter 'forward/sweep' --jobs 16
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step memcheck-hopper-block 16 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=block128_hopper_list_empty_rows,block256x128_hopper_list_causal_gqa,auto_block128_random_fallback "$CS" --tool memcheck --error-exitcode 9 test_forward --filter 'forward/sweep' --jobs 1
step block128-12.5 9 polyattn run $A --block 128 --density 0.125
step auto-structured-0.95 10 polyattn run --backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 5 --no-check --vs-dense --sparsity auto --structured --threshold 0.95 --cutoff 1
step block64-25-hopper 9 env POLYATTN_CUDA_KERNEL=hopper polyattn run $A --block 64 --density 0.25
step ncu-block128-25 8 "$NCU" --kernel-name regex:"block_list|fwd_kernel" --launch-count 2 --metrics gpu__time_duration.sum polyattn run --backend cuda --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 1 --no-check --sparsity block --block 128 --density 0.25
grep -E "gpu__time_duration" "$OUT/ncu-block128-25.log" | tee -a "$S"
cat "$S"
