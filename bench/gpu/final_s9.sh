#!/bin/bash
# Ninth session, R4 = the check of the new defaults (decision 96: O through shared
# memory, "pingpong-rel-os" at hd128/hd256, "pingpong-rel-p-q2-os" for short keys and
# block masks): suites first (default choice, forced Hopper, forced persistent with 7
# blocks, block/auto with POLYATTN_CUDA_HOPPER_PDL=1, backward, test_cuda), sanitizers,
# then BLOCK timings (with and without PDL) and SDPA in the same process with the old
# defaults beside. Run from a devkit: cd KIT && source ./env && OUT=dir bash run.sh
# Logs: bench/results/2026-12-01s9-tile/r4/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; S=$R/SUMMARY.txt; : > "$S"; T0=$SECONDS
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_TEST_BACKENDS=cuda
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
sum() { for n in "$@"; do echo "== $n rc=$(cat "$R/$n.rc" 2>/dev/null) $(grep -hE "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" "$R/$n.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-200)" | tee -a "$S"; grep -h "\[FAIL\]\|Error: Race" "$R/$n.log" | head -4 | cut -c1-200 | tee -a "$S"; done; echo "t=$((SECONDS-T0))" | tee -a "$S"; }
bg fwd-default 100 test_forward --jobs 16
wait; sum fwd-default
bg fwd-hopper 60 env POLYATTN_CUDA_KERNEL=hopper test_forward --filter 'forward/sweep' --jobs 16
wait; sum fwd-hopper
bg fwd-persist-7 60 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 16
wait; sum fwd-persist-7
bg block-pdl 30 env POLYATTN_CUDA_HOPPER_PDL=1 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 8
bg test-cuda 40 test_cuda --jobs 4
bg bwd-default 80 test_backward --jobs 6
wait; sum block-pdl test-cuda bwd-default
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
bg memcheck 80 env POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=d128_s128_b2,s1000,block128,block_dense1,d256_s255,varlen_empty,guard_strided_varlen,auto_clustered_varlen $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 6
bg race-grid 80 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-os POLYATTN_TEST_CASES=d128_s128_b2,d256_s255 $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
bg race-p 80 env POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block128_hopper_list_empty_rows,d128_s128_b2 $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
wait; sum memcheck race-grid race-p
st() { local n=$1; shift; timeout 12 "$@" > "$R/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$R/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2 3; do
  st b25-$i $B --density 0.25
  st b25-pdl-$i env POLYATTN_CUDA_HOPPER_PDL=1 $B --density 0.25
done
st b100 $B --density 1.0
st b25-s16k polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 16384 --batch 1 --repeat 30 --vs-dense --sparsity block --block 128 --density 0.25
echo "t=$((SECONDS-T0))" | tee -a "$S"
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
tab() { grep -E "^bf16|VARIANT=|geomean" "$R/$1.txt" | grep -v "first line" | cut -c1-150 | tee -a "$S"; }
timeout 130 python3 bench/compare_torch.py --dtypes bf16 --dims 128,64 --seqlens 512,2048,8192,16384 --no-efficient \
  --variants "$V=default,pingpong-rel,pingpong-rel-p,serial-s3-rel-wg3-os" --json "$R/torch-fwd.jsonl" > "$R/torch-fwd.txt" 2>&1; echo "== torch-fwd rc=$?" | tee -a "$S"; tab torch-fwd
timeout 40 python3 bench/compare_torch.py --dtypes bf16 --dims 256 --seqlens 512,8192 --no-efficient \
  --variants "$V=default,pingpong-rel" --json "$R/torch-fwd256.jsonl" > "$R/torch-fwd256.txt" 2>&1; echo "== torch-fwd256 rc=$?" | tee -a "$S"; tab torch-fwd256
echo "total $((SECONDS-T0))s" | tee -a "$S"
