#!/bin/bash
# Seventh session R2 (helper queue, 150 s): the Hopper backward with the R1 schedule
# defaults (POLYATTN_CUDA_HOPPER_BWD_SCHED unset: the grouped key-block order for
# causal problems, S^T/dP^T issued before the next tile's loads, dV before dS at
# hd128) and dK/dV stored through shared memory at hd128 (epi); ORD (warpgroup 1
# issues S^T/dP^T after warpgroup 0) as an option; from a devkit with test_backward,
# test_cuda, bench/compare_torch.py and bindings/python:
#   cd KIT && source ./env && OUT=<dir> bash run.sh
#   1. correctness, in parallel (nothing timed meanwhile): backward suite forced on the
#      Hopper kernel (the default) and again with default+ord and
#      POLYATTN_CUDA_HOPPER_BWD_GROUP=3,
#      the suite with the default choice, test_cuda, memcheck on three small cases
#      (odd head dims, varlen with seqused rows, causal Sq < Sk)
#   2. speed, alone: compare_torch --backward (bf16, hd 128/64, S 2048/8192/16384,
#      causal and not, flash and cuDNN), the default then default-epi, default+ord
#      and old in the same process
# Logs: bench/results/2026-12-01s7-hbwd-r2/. As run, the three suites (each --jobs 6,
# beside memcheck) hit their 40 s limit unfinished: run at most two suites at a time.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
export POLYATTN_TEST_BACKENDS=cuda
sum() { echo "== $1 rc=$(cat "$R/$1.rc" 2>/dev/null)"; grep -hE "Synthesis|\[FAIL\]|CRASH|ERROR SUMMARY" "$R/$1.log" | head -6 | cut -c1-200; }
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$R/nvidia-smi.txt" 2>&1
bg suite-hopper 40 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper test_backward --jobs 6
bg suite-hopper-ord-group3 40 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_SCHED=default+ord POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 6
bg suite-default-choice 40 test_backward --jobs 6
bg test-cuda 30 test_cuda --jobs 4
bg memcheck 40 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_TEST_CASES='bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_causal_sq<sk' $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
wait
for n in suite-hopper suite-hopper-ord-group3 suite-default-choice test-cuda memcheck; do sum $n; done
echo "correctness $((SECONDS-T0))s"
timeout 85 python3 bench/compare_torch.py --backward --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 \
  --variants POLYATTN_CUDA_HOPPER_BWD_SCHED=default,default-epi,default+ord,old \
  --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-backward.jsonl" > "$R/torch-backward.txt" 2>&1
echo "== compare rc=$?"; grep -E "^bf16|BWD_SCHED|geomean|gradients" "$R/torch-backward.txt" | cut -c1-150
echo "total $((SECONDS-T0))s"
