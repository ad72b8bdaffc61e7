#!/usr/bin/env bash
# (The script of a GPU round as it ran: `cd KIT && source ./env && OUT=dir timeout 250
# bash run.sh`; logs in bench/results/2026-12-01s9-tile/r5.)
# ninth session, R5: the persistent kernel's producer at 24 registers and its consumers
# at 240, as in the grid kernel ("-np"; it has taken 40 / 232 since the seventh session),
# against the default "pingpong-rel-p-q2-os": BLOCK 25% / 100% and dense S8192 by
# `polyattn run` in one process each, alternating; a forced sweep with 7 blocks first.
set -u
gzip -d lib/*.gz 2>/dev/null
mkdir -p "$OUT"; S=$OUT/SUMMARY.txt; : > "$S"; T0=$SECONDS
V=POLYATTN_CUDA_HOPPER_VARIANT; NP="env $V=pingpong-rel-p-q2-os-np"
export POLYATTN_TEST_BACKENDS=cuda
( timeout 60 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=7 $V=pingpong-rel-p-q2-os-np test_forward --filter 'forward/sweep' --jobs 16 > "$OUT/np-7.log" 2>&1; echo "== np-7 rc=$? $(grep -h Synthesis "$OUT/np-7.log")" | tee -a "$S" )
st() { local n=$1; shift; timeout 12 "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$OUT/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
P="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2"
B="$P --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2 3; do
  st p25-$i $B --density 0.25
  st np25-$i $NP $B --density 0.25
done
st p100 $B --density 1.0
st np100 $NP $B --density 1.0
for i in 1 2; do
  st pd-$i env $V=pingpong-rel-p-q2-os $P --repeat 100
  st npd-$i $NP $P --repeat 100
done
st p512 env $V=pingpong-rel-p-q2-os polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 512 --batch 32 --repeat 200
st np512 $NP polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 512 --batch 32 --repeat 200
echo "total $((SECONDS-T0))s" | tee -a "$S"
