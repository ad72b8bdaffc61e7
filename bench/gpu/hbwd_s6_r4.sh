#!/bin/bash
# (Record of round R4; the variant "solo" it times was removed after this round.)
# The Hopper backward as merged in the sixth session (instruction cuts; statistics by
# plain loads) on an H200, from a devkit with compare_torch.py and the Python package:
#   cd KIT && source ./env && OUT=<dir> bash hbwd_s6_r2.sh
# Logs in $OUT; a copy in bench/results/2026-11-30s6-h200-hbwd-r4.txt.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
st() { local n=$1 t=$2; shift 2; local t1=$SECONDS; timeout "$t" "$@" > "$R/$n.log" 2>&1; echo "== $n rc=$? $((SECONDS-t1))s"; grep -hE "Synthesis|FAIL|^backward" "$R/$n.log" | head -6 | cut -c1-220; }
export POLYATTN_TEST_BACKENDS=cuda
st suite-default-choice 40 test_backward --jobs 12
st suite-solo 40 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_VARIANT=solo test_backward --jobs 12
P="polyattn run --backend cuda --backward --dtype bf16 --repeat 10 --no-check --seq 8192 --batch 2"
for c in "" "--causal"; do for d in 128 64; do
  st perf-d$d$c 12 $P --heads $((2048/d)) --dim $d $c
  st perf-d$d-solo$c 12 env POLYATTN_CUDA_HOPPER_BWD_VARIANT=solo $P --heads $((2048/d)) --dim $d $c
done; done
timeout 50 python3 bench/compare_torch.py --backward --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 \
  --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-backward.jsonl" > "$R/torch-backward.txt" 2>&1
echo "compare rc=$?"; grep -E "^bf16|geomean|gradients" "$R/torch-backward.txt" | cut -c1-170
st test-cuda 30 test_cuda --jobs 8
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
st memcheck-solo 30 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_VARIANT=solo POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d128_sq17_sk128,varlen $SAN --tool memcheck --error-exitcode 99 --print-limit 20 test_backward --filter 'backward/sweep' --jobs 4
st memcheck-default 30 env POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d128_sq17_sk128,varlen $SAN --tool memcheck --error-exitcode 99 --print-limit 20 test_backward --filter 'backward/sweep' --jobs 4
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
"$CUOBJ" -res-usage lib/libpolyattn-cuda.so 2>&1 | grep -A1 "pa_hopper_bwd_kernelI13" > "$R/res-usage.txt"
echo "total $((SECONDS-T0))s"
