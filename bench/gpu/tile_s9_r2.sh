#!/usr/bin/env bash
# (The script of a GPU round as it ran: `cd KIT && source ./env && OUT=dir timeout 420
# bash run.sh`; logs in bench/results/2026-12-01s9-tile/r2.)
# ninth session, R2: O through shared memory and the TMA ("-os": each consumer
# warpgroup's rows of the finished tile's Q buffer, one bulk tensor copy per panel),
# on the persistent kernel with two Q buffers ("pingpong-rel-p-q2-os") and on the
# grid's ("pingpong-rel-os"). Correctness first (forced sweeps, one at a time; racecheck),
# then BLOCK 25% / 100% and SDPA in the same process.
set -u
gzip -d lib/*.gz 2>/dev/null
mkdir -p "$OUT"; S=$OUT/SUMMARY.txt; : > "$S"; T0=$SECONDS
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_TEST_BACKENDS=cuda
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$OUT/$n.log" 2>&1; echo $? > "$OUT/$n.rc" ) & }
sum() { for n in "$@"; do echo "== $n rc=$(cat "$OUT/$n.rc" 2>/dev/null) $(grep -hE "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$n.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-200)" | tee -a "$S"; grep -h "\[FAIL\]\|Error: Race\|Assertion\|mismatch\|max |" "$OUT/$n.log" | head -6 | cut -c1-220 | tee -a "$S"; done; }
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
# bf16 cases run the named variant (fp16 ones the default under these names)
bg os-p7 80 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 16
wait; sum os-p7; echo "t=$((SECONDS-T0))" | tee -a "$S"
bg os-grid 60 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-os test_forward --filter 'forward/sweep' --jobs 16
wait; sum os-grid; echo "t=$((SECONDS-T0))" | tee -a "$S"
bg race-os-block 70 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block128_hopper_list_empty_rows $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
bg race-os-dense 70 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=d128_s128_b2 $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
bg mem-os 70 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=block128,d128_s128_b2,varlen $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
wait; sum race-os-block race-os-dense mem-os; echo "t=$((SECONDS-T0))" | tee -a "$S"
st() { local n=$1; shift; timeout 12 "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$OUT/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2; do
  st p25-$i $B --density 0.25
  st q2-25-$i env $V=pingpong-rel-p-q2 $B --density 0.25
  st os-25-$i env $V=pingpong-rel-p-q2-os $B --density 0.25
done
st os-100 env $V=pingpong-rel-p-q2-os $B --density 1.0
st os-25-d64 env $V=pingpong-rel-p-q2-os polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128 --density 0.25
echo "t=$((SECONDS-T0))" | tee -a "$S"
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
timeout 110 python3 bench/compare_torch.py --dims 128,64 --seqlens 512,2048,8192 --no-efficient \
  --variants "$V=default,pingpong-rel-p,pingpong-rel-p-q2-os,pingpong-rel-os" --json "$OUT/torch.jsonl" > "$OUT/torch.txt" 2>&1
echo "== torch rc=$?" | tee -a "$S"; grep -E "^bf16|VARIANT=" "$OUT/torch.txt" | grep -v "first line" | cut -c1-140 | tee -a "$S"
echo "total $((SECONDS-T0))s" | tee -a "$S"
