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
pa_gpu_state
pa_decode_ab_4k new old
step tl-new-4k 60 env DECODE_TL_CSV=$LOG/tl-new-4k.csv decode_timeline 4096
pa_decode_ab_long new old
pa_decode_timelines
pa_decode_checks
pa_cuda_suites
pa_decode_perf graph,scrub 4096,32768,131072 "default:;default-again:"
gzip "$LOG"/*.csv 2>/dev/null
# shellcheck disable=SC2046
pa_gpu_pack_keep $(cd "$LOG" && ls -- *.jsonl *.csv.gz 2>/dev/null)
pa_gpu_finish
