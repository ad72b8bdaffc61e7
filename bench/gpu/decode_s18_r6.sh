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
pa_gpu_state
pa_decode_ab_4k new old r5
step tl-new-4k 60 env DECODE_TL_CSV=$LOG/tl-new-4k.csv decode_timeline 4096
pa_decode_ab_long new old r5
pa_decode_timelines
pa_decode_checks
pa_decode_perf graph,scrub 4096,32768,131072 "default:;default-again:"
gzip "$LOG"/*.csv 2>/dev/null
pa_gpu_finish
