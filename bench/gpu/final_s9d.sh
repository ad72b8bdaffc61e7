#!/bin/bash
# Ninth session, after R5: the persistent kernel's producer at 24 registers and its
# consumers at 240 (the rule now, no variant bit). Checks of that build: the forced
# persistent sweep with 7 blocks (fp16 and bf16), the forward suite, block/auto,
# test_cuda, racecheck on the persistent kernel; BLOCK 25% / 100% against dense.
# cd KIT && source ./env && OUT=dir bash run.sh; logs in bench/results/2026-12-01s9-tile/final3/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; S=$R/SUMMARY.txt; : > "$S"; T0=$SECONDS
export POLYATTN_TEST_BACKENDS=cuda
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
sum() { for n in "$@"; do echo "== $n rc=$(cat "$R/$n.rc" 2>/dev/null) $(grep -hE "Synthesis|RACECHECK SUMMARY" "$R/$n.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-200)" | tee -a "$S"; grep -h "\[FAIL\]\|Error: Race" "$R/$n.log" | head -4 | cut -c1-200 | tee -a "$S"; done; echo "t=$((SECONDS-T0))" | tee -a "$S"; }
bg fwd-persist-7 60 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=7 POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p-q2-os test_forward --filter 'forward/sweep' --jobs 16
wait; sum fwd-persist-7
bg fwd-default 80 test_forward --jobs 16
wait; sum fwd-default
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
bg race-p 80 env POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block128_hopper_list_empty_rows,d128_s128_b2 $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
bg test-cuda 40 test_cuda --jobs 4
wait; sum race-p test-cuda
st() { local n=$1; shift; timeout 12 "$@" > "$R/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$R/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2 3 4 5; do st b25-$i $B --density 0.25; done
st b100 $B --density 1.0
st b25-s16k polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 16384 --batch 1 --repeat 30 --vs-dense --sparsity block --block 128 --density 0.25
echo "total $((SECONDS-T0))s" | tee -a "$S"
