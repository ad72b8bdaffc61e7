#!/usr/bin/env bash
# (The script of a GPU round as it ran: started as `cd KIT && source ./env && OUT=dir
# timeout 180 bash run.sh`; logs in bench/results/2026-12-01s8-sparse/r1.)
# sparse, eighth session, R1: BLOCK on the persistent Hopper kernel with a tile counter
# (the default under BLOCK now) against the grid (POLYATTN_CUDA_HOPPER_BLOCK_GRID=1),
# each against the dense default in the same process.
set -u
mkdir -p "$OUT"
gzip -d lib/*.gz 2>/dev/null
S=$OUT/SUMMARY.txt; : > "$S"
step() { local name=$1 lim=$2; shift 2; local t0=$SECONDS left=$((175 - SECONDS))
  [ "$left" -lt 4 ] && { echo "$name SKIPPED (budget)" | tee -a "$S"; return; }
  [ "$lim" -gt "$left" ] && lim=$left
  timeout "$lim" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS-t0))s" | tee -a "$S"; grep -E "^forward|^vs dense|vs |tests|Synthesis|FAIL|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$name.log" | tail -n 6 | cut -c1-200 | tee -a "$S"; }
A="--backend cuda --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 30 --no-check --vs-dense --sparsity block --block 128"
A64="--backend cuda --dtype bf16 --batch 2 --heads 32 --dim 64 --seq 8192 --repeat 30 --no-check --vs-dense --sparsity block --block 128"
G="env POLYATTN_CUDA_HOPPER_BLOCK_GRID=1"
step p25a 10 polyattn run $A --density 0.25
step g25a 10 $G polyattn run $A --density 0.25
step p25b 10 polyattn run $A --density 0.25
step g25b 10 $G polyattn run $A --density 0.25
step p100 10 polyattn run $A --density 1.0
step g100 10 $G polyattn run $A --density 1.0
step p50 8 polyattn run $A --density 0.5
step g50 8 $G polyattn run $A --density 0.5
step p10 8 polyattn run $A --density 0.1
step g10 8 $G polyattn run $A --density 0.1
step p25-d64 10 polyattn run $A64 --density 0.25
step g25-d64 10 $G polyattn run $A64 --density 0.25
step sweep-block-auto 20 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
step sweep-hopper-3blk 20 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
step sweep-persist-7blk 35 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=7 POLYATTN_TEST_BACKENDS=cuda test_forward --filter 'forward/sweep' --jobs 16
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step memcheck 25 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=block128,block_causal,auto_t0.9 $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
cat "$S"
