#!/bin/bash
# Eighteenth session, decode R7 (issue 3): R5 and R6 moved the tail's work around without
# shortening it at 4k, and the last block's merge read ~1.9 us whether its partials came
# from shared memory or L2: so the merge itself is the cost. R7 (C, this build): the
# committed protocol (partials to the workspace, one release compare-and-swap after a load
# of the word) with a short merge -- per batch of splits one branch-free set of loads, the
# batch folded into running sums, __expf, stores in the kernel's type; D: C with the
# compare-and-swap's first guess the last arrival's word instead of the load (_d); B: R6's
# build (_b); old: the committed code (_old). A/B in one process, alternated; C's timeline;
# the decode sweep (default, k16, one warp per block, merge kernel), graph capture, 20-run
# identity, memcheck / racecheck / synccheck; decode_variants.py beside SDPA.
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s18_r7.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s18_r7 decode_timeline decode_timeline0 decode_timeline0_old decode_timeline0_d decode_timeline0_b test_forward test_cuda
STEP_TAIL=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$LOG/gpu.txt" 2>&1
for i in 1 2 3; do
  step ctl-new-4k-$i 60 decode_timeline0 4096
  step ctl-old-4k-$i 60 decode_timeline0_old 4096
  step ctl-d-4k-$i 60 decode_timeline0_d 4096
  step ctl-b-4k-$i 60 decode_timeline0_b 4096
done
step tl-new-4k 60 env DECODE_TL_CSV=$LOG/tl-new-4k.csv decode_timeline 4096
for sk in 32768 131072; do
  step ctl-new-$sk 60 decode_timeline0 $sk
  step ctl-old-$sk 60 decode_timeline0_old $sk
  step ctl-d-$sk 60 decode_timeline0_d $sk
  step ctl-b-$sk 60 decode_timeline0_b $sk
done
pa_decode_timelines
export POLYATTN_TEST_BACKENDS=cuda
pa_decode_sweeps k16:POLYATTN_CUDA_DECODE_VARIANT=k16 w1:POLYATTN_CUDA_DECODE_WARPS=1 mergekernel:POLYATTN_CUDA_DECODE_MERGE=kernel
pa_decode_sanitizer memcheck memcheck decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits,d256_s3_256,decode_s1_sk16384
pa_decode_sanitizer racecheck racecheck decode_varlen_seqused_gqa,decode_sq2_sk1500,d40_softcap,many_splits
pa_decode_sanitizer synccheck synccheck decode_varlen_seqused_gqa,many_splits
pa_decode_perf graph,scrub 4096,32768,131072 "default:;default-again:"
gzip "$LOG"/*.csv 2>/dev/null
pa_gpu_finish
