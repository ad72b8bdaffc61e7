#!/bin/bash
# The Hopper backward (bwd_hopper.cu) on an H200, as run in the fifth session (R2; R3 below):
# from a devkit with compare_torch.py and the Python package beside it, as
#   cd KIT && source ./env && OUT=<dir> bash hopper_bwd_check.sh
# Logs in $OUT; copies in bench/results/2026-11-30s5-h200-hbwd-*.
gzip -d lib/*.gz
R=$OUT; T0=$SECONDS
st() { local n=$1 t=$2; shift 2; local t1=$SECONDS; timeout "$t" "$@" > "$R/$n.log" 2>&1; echo "== $n rc=$? $((SECONDS-t1))s"; grep -hE "Synthesis|FAIL|^backward" "$R/$n.log" | head -6 | cut -c1-220; }
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_BACKWARD_KERNEL=hopper
V=POLYATTN_CUDA_HOPPER_BWD_VARIANT
st suite-default 40 test_backward --jobs 12
st suite-ksplit 40 env $V=ksplit test_backward --jobs 12
st suite-q128 40 env $V=q128 test_backward --jobs 12
P="polyattn run --backend cuda --backward --dtype bf16 --repeat 10 --no-check --seq 8192 --batch 2"
for c in "" "--causal"; do
  st perf-d128-nsplit$c 15 $P --heads 16 --dim 128 $c
  st perf-d128-ksplit$c 15 env $V=ksplit $P --heads 16 --dim 128 $c
  st perf-d64-ksplit$c 15 $P --heads 32 --dim 64 $c
  st perf-d64-q128$c 15 env $V=q128 $P --heads 32 --dim 64 $c
done
timeout 35 python3 bench/compare_torch.py --backward --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --causal 0 \
  --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-backward-hopper.jsonl" > "$R/torch-backward-hopper.txt" 2>&1
echo "compare rc=$?"; grep -E "^bf16|geomean|gradients" "$R/torch-backward-hopper.txt" | cut -c1-170
st test-cuda 25 test_cuda --jobs 8
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
st memcheck-q128 30 env $V=q128 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d128_sq17_sk128 $SAN --tool memcheck --error-exitcode 99 --print-limit 20 test_backward --filter 'backward/sweep' --jobs 4
echo "total $((SECONDS-T0))s"

# ---- R3 (the defaults, and dQ by bulk reductions) ----
R=$OUT; T0=$SECONDS
st() { local n=$1 t=$2; shift 2; local t1=$SECONDS; timeout "$t" "$@" > "$R/$n.log" 2>&1; echo "== $n rc=$? $((SECONDS-t1))s"; grep -hE "Synthesis|FAIL|^backward" "$R/$n.log" | head -6 | cut -c1-220; }
export POLYATTN_TEST_BACKENDS=cuda
B=POLYATTN_CUDA_HOPPER_BWD_DQ
st suite-default-choice 40 test_backward --jobs 12
st suite-bulk 40 env $B=bulk POLYATTN_CUDA_BACKWARD_KERNEL=hopper test_backward --jobs 12
P="polyattn run --backend cuda --backward --dtype bf16 --repeat 10 --no-check --seq 8192 --batch 2"
for c in "" "--causal"; do for d in 128 64; do for m in red bulk; do
  st perf-d$d-$m$c 15 env $B=$m $P --heads $((2048/d)) --dim $d $c
done; done; done
tf() { grep -h "^backward" "$R/$1.log" | awk '{print $(NF-1)}'; }
best=red; awk -v a="$(tf perf-d128-red)" -v b="$(tf perf-d128-bulk)" 'BEGIN{exit !(b>a)}' && best=bulk
echo "compare with $B=$best"
env $B=$best timeout 45 python3 bench/compare_torch.py --backward --dtypes bf16 --dims 128,64 --seqlens 2048,8192 \
  --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-backward.jsonl" > "$R/torch-backward.txt" 2>&1
echo "compare rc=$?"; grep -E "^bf16|geomean|gradients" "$R/torch-backward.txt" | cut -c1-170
st test-cuda-bulk 25 env $B=bulk test_cuda --jobs 8
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
st memcheck-bulk 30 env $B=bulk POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d128_sq17_sk128,varlen $SAN --tool memcheck --error-exitcode 99 --print-limit 20 test_backward --filter 'backward/sweep' --jobs 4
echo "total $((SECONDS-T0))s"
