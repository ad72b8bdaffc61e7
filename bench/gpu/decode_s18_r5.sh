#!/bin/bash
# Eighteenth session, decode R5 (issue 3): the ticket merge reworked (not kept; decision 109) -- each
# warp stages its partial in its own ring; the block that arrives last for its (batch, kv
# head) merges its own splits from shared memory and only the others' from the workspace;
# the others write theirs after their ticket and publish them; the first guess of each
# compare-and-swap is the last arrival's word. A/B in one process against the harness
# built from the committed protocol (decode_timeline*_old), alternated; the timeline of
# each; the decode sweep (default, k16, one warp per block), graph capture, 20-run
# identity, memcheck / racecheck / synccheck; decode_variants.py's graph timer beside SDPA.
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s18_r5.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s18_r5 decode_timeline decode_timeline0 decode_timeline_old decode_timeline0_old test_forward test_cuda
STEP_TAIL=0
pa_gpu_state
pa_decode_ab_4k new old
step tl-new-4k 60 env DECODE_TL_CSV=$LOG/tl-new-4k.csv decode_timeline 4096
step tl-old-4k 60 decode_timeline_old 4096
pa_decode_ab_long new old
pa_decode_timelines
pa_decode_checks
pa_decode_perf graph,scrub 4096,32768,131072 "default:;default-again:"
gzip "$LOG"/*.csv 2>/dev/null
pa_gpu_finish
