#!/usr/bin/env bash
# (The script of a GPU round as it ran: `cd KIT && source ./env && OUT=dir timeout 400
# bash run.sh`; logs in bench/results/2026-12-01s9-tile/r1.)
# ninth session, R1: the persistent kernel's tile boundary. "-q2" (two Q buffers: the
# next tile's Q loaded two stages ahead) and "-q2-xt" (plus the software pipeline
# carried across query tiles) against "pingpong-rel-p": correctness first (forced
# sweeps with many tiles per block, racecheck), then BLOCK 25% / 100% and SDPA.
set -u
gzip -d lib/*.gz 2>/dev/null
mkdir -p "$OUT"; S=$OUT/SUMMARY.txt; : > "$S"; T0=$SECONDS
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_TEST_BACKENDS=cuda
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$OUT/$n.log" 2>&1; echo $? > "$OUT/$n.rc" ) & }
sum() { for n in "$@"; do echo "== $n rc=$(cat "$OUT/$n.rc" 2>/dev/null) $(grep -hE "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$n.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-200)" | tee -a "$S"; grep -h "\[FAIL\]\|Error: Race\|Assertion" "$OUT/$n.log" | head -6 | cut -c1-220 | tee -a "$S"; done; }
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
# bf16 cases carry the new variants (fp16 ones run the default under their names)
bg xt-7 60 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-xt POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 8
bg q2-7 60 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2 POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 8
wait; sum xt-7 q2-7; echo "t=$((SECONDS-T0))" | tee -a "$S"
bg race-xt-block 70 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-xt POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block128_hopper_list_empty_rows $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
bg race-xt-dense 70 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-xt POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=d128_s128_b2 $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
bg xt-block-3 40 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-xt POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 8
wait; sum race-xt-block race-xt-dense xt-block-3; echo "t=$((SECONDS-T0))" | tee -a "$S"
st() { local n=$1; shift; timeout 12 "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$OUT/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2; do
  st p25-$i $B --density 0.25
  st q2-25-$i env $V=pingpong-rel-p-q2 $B --density 0.25
  st xt-25-$i env $V=pingpong-rel-p-q2-xt $B --density 0.25
done
st xt-100 env $V=pingpong-rel-p-q2-xt $B --density 1.0
st p100 $B --density 1.0
st xt-25-d64 env $V=pingpong-rel-p-q2-xt polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128 --density 0.25
st p25-d64 polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128 --density 0.25
echo "t=$((SECONDS-T0))" | tee -a "$S"
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
timeout 120 python3 bench/compare_torch.py --dims 128,64 --seqlens 512,2048,8192 --no-efficient \
  --variants "$V=default,pingpong-rel-p,pingpong-rel-p-q2,pingpong-rel-p-q2-xt" --json "$OUT/torch.jsonl" > "$OUT/torch.txt" 2>&1
echo "== torch rc=$?" | tee -a "$S"; grep -E "^bf16|VARIANT=" "$OUT/torch.txt" | grep -v "first line" | cut -c1-140 | tee -a "$S"
echo "total $((SECONDS-T0))s" | tee -a "$S"
