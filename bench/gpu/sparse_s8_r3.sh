#!/usr/bin/env bash
# (The script of a GPU round as it ran: `cd KIT && source ./env && OUT=dir timeout 230
# bash run.sh`; logs in bench/results/2026-12-01s8-sparse/r3.)
# eighth session, R3: (1) the forward module of c16eb03 (old/, the seventh session's
# final) against this build, alternating processes, hd64 and hd128 S8192 dense default;
# (2) BLOCK with full tiles walked as dense (PA_BLOCK_LIST_FULL): persistent and grid,
# 25/100/50/10%, against dense in the same process; (3) the sweeps (block/auto cases on
# the default, forced Hopper with 3 persistent blocks, forced Ampere; the whole forced
# Hopper sweep) and memcheck on block cases.
set -u
gzip -d lib/*.gz old/*.gz 2>/dev/null
mkdir -p "$OUT"; S=$OUT/SUMMARY.txt; : > "$S"
G="env POLYATTN_CUDA_HOPPER_BLOCK_GRID=1"
OLD="env LD_LIBRARY_PATH=$PWD/old:$LD_LIBRARY_PATH"
st() { local n=$1; shift; timeout 12 "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$OUT/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
D64="polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 8192 --batch 2 --repeat 200"
D128="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 200"
for i in 1 2 3; do
  st old-d64-$i $OLD $D64; st new-d64-$i $D64
  st old-d128-$i $OLD $D128; st new-d128-$i $D128
done
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 40 --vs-dense --sparsity block --block 128"
st p25a $B --density 0.25
st g25a $G $B --density 0.25
st p25b $B --density 0.25
st g25b $G $B --density 0.25
st p100 $B --density 1.0
st g100 $G $B --density 1.0
st p50 $B --density 0.5
st p10 $B --density 0.1
B64="polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 8192 --batch 2 --repeat 40 --vs-dense --sparsity block --block 128"
st p25-d64 $B64 --density 0.25
st p100-d64 $B64 --density 1.0
export POLYATTN_TEST_BACKENDS=cuda
t() { local n=$1 l=$2; shift 2; timeout $l "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -h -E "Synthesis|ERROR SUMMARY" "$OUT/$n.txt" | tr '\n' ' ')" | tee -a "$S"; }
t sweep-block-auto 15 env POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
t sweep-p-block-3 15 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
t sweep-ampere-block 15 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
t memcheck-block 25 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=block128,block256,block_dense1,auto_clustered_varlen $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
t sweep-hopper 40 env POLYATTN_CUDA_KERNEL=hopper test_forward --filter 'forward/sweep' --jobs 16
