#!/bin/bash
# Eighteenth session, decode R6 (issue 3): R5's protocol (partials published after the
# ticket) made the 4k tail longer (the last block waited for its partner's publish) but
# the long lengths 1.7% faster. R6's form (B; not kept, decision 109): every warp stages its partial in
# its own ring; every block writes its partials to the workspace from there (16-byte
# stores), then one release compare-and-swap whose first guess is the last arrival's word
# (no load of the word first); the last block merges its own splits from shared memory,
# __expf for the merge factors. A/B/C in one process: this build (decode_timeline0), the
# committed code (_old) and R5's (_r5), alternated; the timeline; the decode sweep (default,
# k16, one warp per block, merge kernel), graph capture, 20-run identity, memcheck /
# racecheck / synccheck; decode_variants.py's graph and scrub timers beside SDPA.
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s18_r6.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s18_r6 decode_timeline decode_timeline0 decode_timeline0_old decode_timeline0_r5 test_forward test_cuda
STEP_TAIL=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$LOG/gpu.txt" 2>&1
for i in 1 2 3; do
  step ctl-new-4k-$i 60 decode_timeline0 4096
  step ctl-old-4k-$i 60 decode_timeline0_old 4096
  step ctl-r5-4k-$i 60 decode_timeline0_r5 4096
done
step tl-new-4k 60 env DECODE_TL_CSV=$LOG/tl-new-4k.csv decode_timeline 4096
for sk in 32768 131072; do
  step ctl-new-$sk 60 decode_timeline0 $sk
  step ctl-old-$sk 60 decode_timeline0_old $sk
  step ctl-r5-$sk 60 decode_timeline0_r5 $sk
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
