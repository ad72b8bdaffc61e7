#!/bin/bash
# Thirty-fourth session, final check of the build CI ships (no tuning variants) with
# bench/gpu/rowsum_default_s34.patch applied: the Ampere path's hd128 "auto" on
# m2k64-km-rs for calls without LSE (decision 125; with LSE or 2:4 m2k64-km), beside the
# Hopper kept maximum (the default since final_s33.sh passed in this session): the forward
# suite by default, forced onto the Ampere kernel as the cases ask and with
# POLYATTN_TEST_NO_LSE=1, memcheck / racecheck on the Ampere kernel without LSE over hd128
# cases; then alone: clock_probe's ak128* cases (the default row against m2k64-km, which
# this build compiles as the fallback, and SDPA flash) and the Ampere kernel beside SDPA
# flash (compare_torch, bf16 and fp16). ~250 s. Not run in the thirty-fourth session (no
# machine started after its six calls): apply the patch, build as CI builds, devkit, run.
# SHORT=1 (little device time): the suites and sanitizers only (~150 s), not the timings
# (the "-rs" row's are the tuning build's, rowsum_s34.sh).
# Run in the thirty-fifth session on an H200: passed (bench/results/2026-12-05s35-rsdefault/).
# Run: source .devkit/env; OUT=dir [SHORT=1] bash bench/gpu/final_s34.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s34 python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
ACASES=s1000_causal_d128,s4352_d128,auto_clustered_causal_gqa,block_dense1_sparse,d128_s128_b2
pa_ampere_suites ampere-nolse "$ACASES" POLYATTN_TEST_NO_LSE=1
if [ -n "$SHORT" ]; then
  pa_gpu_pack_logs
  pa_gpu_finish
fi
step probe 120 python3 -u bench/gpu/clock_probe.py --rounds 2 --cases ak128s8k,ak128s16k
step torch-ampere 120 python3 -u bench/compare_torch.py --env-kernel ampere --no-efficient --no-cudnn \
  --dtypes bf16,fp16 --dims 64,128 --seqlens 2048,4096,8192,16384 --json "$LOG/torch-ampere.jsonl"
grep -E "speed-up|correctness" "$LOG/torch-ampere.log" | tee -a "$SUMMARY"
pa_gpu_pack_keep probe.log torch-ampere.log
pa_gpu_finish
