#!/usr/bin/env bash
# (The script of a GPU round as it ran: `cd KIT && source ./env && OUT=dir timeout 170
# bash run.sh`; logs in bench/results/2026-12-01s8-sparse/r4.)
# eighth session, R4: the persistent BLOCK kernel taking each head's tiles most key
# tiles first (the builder's per-head order, decision 94) against the grid's order
# (POLYATTN_CUDA_HOPPER_ORDER=0) and the grid kernel; the block sweeps; memcheck.
set -u
gzip -d lib/*.gz 2>/dev/null
mkdir -p "$OUT"; S=$OUT/SUMMARY.txt; : > "$S"
G="env POLYATTN_CUDA_HOPPER_BLOCK_GRID=1"; N="env POLYATTN_CUDA_HOPPER_ORDER=0"
st() { local n=$1; shift; timeout 12 "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$OUT/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2 3; do
  st ord25-$i $B --density 0.25
  st nat25-$i $N $B --density 0.25
done
st grid25 $G $B --density 0.25
st ord100 $B --density 1.0
st ord50 $B --density 0.5
st ord10 $B --density 0.1
st ord25-d64 polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128 --density 0.25
st ord25-s16k polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 16384 --batch 1 --repeat 30 --vs-dense --sparsity block --block 128 --density 0.25
export POLYATTN_TEST_BACKENDS=cuda
t() { local n=$1 l=$2; shift 2; timeout $l "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -h -E "Synthesis|ERROR SUMMARY" "$OUT/$n.txt" | tr '\n' ' ')" | tee -a "$S"; }
t sweep-block-auto 15 env POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
t sweep-p-block-3 15 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
t sweep-ampere-block 15 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
t memcheck-block 40 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=block128,block256,block_dense1 $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 6
