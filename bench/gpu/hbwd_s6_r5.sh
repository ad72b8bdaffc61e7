#!/bin/bash
# The Hopper backward's masked lean path (causal/window/length edges without the
# general per-element path; sixth session R5) on an H200, from a devkit with
# compare_torch.py and the Python package:
#   cd KIT && source ./env && OUT=<dir> bash hbwd_s6_r5.sh
# Logs in $OUT; a copy in bench/results/2026-11-30s6-h200-hbwd-r5.txt.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
st() { local n=$1 t=$2; shift 2; local t1=$SECONDS; timeout "$t" "$@" > "$R/$n.log" 2>&1; echo "== $n rc=$? $((SECONDS-t1))s"; grep -hE "Synthesis|FAIL|^backward" "$R/$n.log" | head -6 | cut -c1-220; }
export POLYATTN_TEST_BACKENDS=cuda
st suite-hopper 40 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper test_backward --jobs 12
st suite-default-choice 40 test_backward --jobs 12
P="polyattn run --backend cuda --backward --dtype bf16 --repeat 10 --no-check --batch 2"
for d in 128 64; do
  st perf-d$d-causal 12 $P --seq 8192 --heads $((2048/d)) --dim $d --causal
done
timeout 40 python3 bench/compare_torch.py --backward --dtypes bf16 --dims 128,64 --seqlens 2048,8192 \
  --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-backward.jsonl" > "$R/torch-backward.txt" 2>&1
echo "compare rc=$?"; grep -E "^bf16|geomean|gradients" "$R/torch-backward.txt" | cut -c1-170
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
st memcheck-causal 30 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_TEST_CASES=bw_d128_sq17_sk128,causal,window $SAN --tool memcheck --error-exitcode 99 --print-limit 20 test_backward --filter 'backward/sweep' --jobs 4
echo "total $((SECONDS-T0))s"
