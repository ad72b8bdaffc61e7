#!/bin/bash
# Seventh session R1 (helper queue, 150 s): the Hopper backward's schedule flags
# (POLYATTN_CUDA_HOPPER_BWD_SCHED: lpt = grouped key-block-major order for causal
# problems, early = S^T/dP^T issued before the next tile's loads, dvf = dV issued
# before dS's arithmetic; unset or default = lpt+early+dvf at hd128, lpt+early at
# hd64), from a devkit with test_backward, test_cuda, bench/compare_torch.py and
# bindings/python:
#   cd KIT && source ./env && OUT=<dir> bash run.sh
#   1. correctness, in parallel (nothing timed meanwhile): backward suite forced on the
#      Hopper kernel with POLYATTN_CUDA_HOPPER_BWD_GROUP=3 (every problem in the grouped
#      order, partial groups included), the suite with the default choice, test_cuda,
#      memcheck on three small cases
#   2. speed, alone: compare_torch --backward (bf16, hd 128/64, S 2048/8192, causal and
#      not), the default then old, lpt, lpt+early, lpt+dvf, lpt+early+dvf in the same
#      process
# Logs: bench/results/2026-12-01s7-hbwd-r1/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
export POLYATTN_TEST_BACKENDS=cuda
sum() { echo "== $1 rc=$(cat "$R/$1.rc" 2>/dev/null)"; grep -hE "Synthesis|\[FAIL\]|CRASH|ERROR SUMMARY" "$R/$1.log" | head -6 | cut -c1-200; }
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$R/nvidia-smi.txt" 2>&1
bg suite-hopper-group3 40 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 8
bg suite-default-choice 40 test_backward --jobs 8
bg test-cuda 30 test_cuda --jobs 4
bg memcheck 40 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_GROUP=3 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_causal_sq,bw_window_16_4 $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
wait
for n in suite-hopper-group3 suite-default-choice test-cuda memcheck; do sum $n; done
echo "correctness $((SECONDS-T0))s"
timeout 75 python3 bench/compare_torch.py --backward --no-cudnn --dtypes bf16 --dims 128,64 --seqlens 2048,8192 \
  --variants POLYATTN_CUDA_HOPPER_BWD_SCHED=default,old,lpt,lpt+early,lpt+dvf,lpt+early+dvf \
  --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-backward.jsonl" > "$R/torch-backward.txt" 2>&1
echo "== compare rc=$?"; grep -E "^bf16|BWD_SCHED|geomean|gradients" "$R/torch-backward.txt" | cut -c1-150
echo "total $((SECONDS-T0))s"
