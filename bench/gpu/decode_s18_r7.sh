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
pa_gpu_state
pa_decode_ab_4k new old d b
step tl-new-4k 60 env DECODE_TL_CSV=$LOG/tl-new-4k.csv decode_timeline 4096
pa_decode_ab_long new old d b
pa_decode_timelines
pa_decode_checks
pa_decode_perf graph,scrub 4096,32768,131072 "default:;default-again:"
gzip "$LOG"/*.csv 2>/dev/null
pa_gpu_finish
