#!/bin/bash
# Eighteenth session, decode R3 (issue 3): the ticket merge's tail with 8-byte partial
# stores and 16-byte partial loads (the partials 16-byte aligned in the workspace), A/B in
# one process against the same harness built from the scalar code (decode_timeline*_old),
# alternated; the timeline of each; the decode sweep, graph capture, 20-run identity and
# memcheck / racecheck with the new module; decode_variants.py's graph timer beside SDPA.
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s18_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s18_r3 decode_timeline decode_timeline0 decode_timeline_old decode_timeline0_old test_forward test_cuda
STEP_TAIL=0
pa_gpu_state
pa_decode_ab_4k new old
step tl-new-4k 60 decode_timeline 4096
step tl-old-4k 60 decode_timeline_old 4096
step ctl-new-32k 60 decode_timeline0 32768
step ctl-old-32k 60 decode_timeline0_old 32768
pa_decode_timelines
export POLYATTN_TEST_BACKENDS=cuda
pa_decode_sweeps mergekernel:POLYATTN_CUDA_DECODE_MERGE=kernel k16:POLYATTN_CUDA_DECODE_VARIANT=k16
pa_decode_sanitizer memcheck memcheck decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits,d256_s3_256,decode_s1_sk16384
pa_decode_sanitizer racecheck racecheck decode_varlen_seqused_gqa,decode_sq2_sk1500,d40_softcap
pa_decode_perf graph 4096,32768,131072 "default:;default-again:"
pa_gpu_finish
