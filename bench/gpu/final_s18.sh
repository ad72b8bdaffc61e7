#!/bin/bash
# Eighteenth session, the committed code's check (issue 3, decision 109: the decode
# kernel's ticket merge, short): the A/B against the previous code (decode_timeline0_old,
# the same harness built from the committed sources before this change) alternated at Sk
# 4k, once at 32k and 128k; the new code's timeline; the decode sweep (default, k16, one
# warp per block, merge kernel), graph capture, 20-run identity, memcheck / racecheck /
# synccheck; the forward suite, test_cuda and the backward suite; decode_variants.py's
# graph and scrub timers beside SDPA flash and cuDNN.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s18.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s18 decode_timeline decode_timeline0 decode_timeline0_old test_forward test_cuda test_backward
STEP_TAIL=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$LOG/gpu.txt" 2>&1
for i in 1 2 3; do
  step ctl-new-4k-$i 60 decode_timeline0 4096
  step ctl-old-4k-$i 60 decode_timeline0_old 4096
done
step tl-new-4k 60 env DECODE_TL_CSV=$LOG/tl-new-4k.csv decode_timeline 4096
for sk in 32768 131072; do
  step ctl-new-$sk 60 decode_timeline0 $sk
  step ctl-old-$sk 60 decode_timeline0_old $sk
done
pa_decode_timelines
export POLYATTN_TEST_BACKENDS=cuda
pa_decode_sweeps k16:POLYATTN_CUDA_DECODE_VARIANT=k16 w1:POLYATTN_CUDA_DECODE_WARPS=1 mergekernel:POLYATTN_CUDA_DECODE_MERGE=kernel
pa_decode_sanitizer memcheck memcheck decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits,d256_s3_256,decode_s1_sk16384
pa_decode_sanitizer racecheck racecheck decode_varlen_seqused_gqa,decode_sq2_sk1500,d40_softcap,many_splits
pa_decode_sanitizer synccheck synccheck decode_varlen_seqused_gqa,many_splits
unset POLYATTN_TEST_BACKENDS
pa_cuda_suites
pa_decode_perf graph,scrub 4096,32768,131072 "default:;default-again:"
gzip "$LOG"/*.csv 2>/dev/null
mkdir -p /tmp/keep && cp "$LOG"/*.jsonl "$LOG"/*.csv.gz /tmp/keep/ 2>/dev/null
pa_gpu_pack_logs
cp /tmp/keep/* "$LOG/" 2>/dev/null
pa_gpu_finish
