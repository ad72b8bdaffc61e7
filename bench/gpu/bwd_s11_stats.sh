#!/bin/bash
# Eleventh session: the row statistics by 4-byte cp.async with Q and dO
# (POLYATTN_CUDA_HOPPER_BWD_STATS=async, the PA_HBWD_STATS kernels, read once per
# process) against the default plain loads, on the committed build (K-major dS): ncu put
# hd64's largest stall on the long scoreboard, where these loads wait. Suites with async
# forced, then polyattn run --backward in alternating processes (default, async, x3).
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_stats.sh
# Logs: bench/results/2026-12-01s11-bwd/stats/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_stats test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
S=POLYATTN_CUDA_HOPPER_BWD_STATS
step_bg suite-async-hopper3 90 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $S=async POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 6
step_bg suite-async-default 90 env $S=async test_backward --jobs 6
step_wait
R="polyattn run --backend cuda --backward --dtype bf16 --no-check --repeat 30"
for i in 1 2 3; do
  for s in load async; do
    timed d64-s8192-$s-$i env $S=$s $R --seq 8192 --batch 2 --heads 32 --dim 64
    timed d64-s8192c-$s-$i env $S=$s $R --seq 8192 --batch 2 --heads 32 --dim 64 --causal
    timed d64-s2048-$s-$i env $S=$s $R --seq 2048 --batch 8 --heads 32 --dim 64
    timed d128-s8192-$s-$i env $S=$s $R --seq 8192 --batch 2 --heads 16 --dim 128
    timed d128-s2048-$s-$i env $S=$s $R --seq 2048 --batch 8 --heads 16 --dim 128
  done
done
for f in "$LOG"/d*.txt; do echo "$(basename $f .txt): $(grep -E '^backward' $f | tr -s ' ')"; done | sort | tee -a "$SUMMARY"
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
