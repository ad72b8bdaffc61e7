#!/bin/bash
# Twenty-fifth session, R4 (issue 9): where the bf16 Hopper forward's warpgroups spend
# their cycles at the short lengths where cuDNN leads (bench/gpu/hopper_timeline.cu: the
# kernel with event stamps, and the same harness without them as the control), hd128 and
# hd64 at S512, hd128 S2048, hd64 S1024 (the persistent kernel), hd128 S8192 (the 176-key
# grid kernel, head 0's blocks) for contrast; 16k tokens, hidden 2048, non-causal. All
# output into $OUT/timeline.txt (one file: the run tool brings back a limited number).
# Build (here): the nvcc line of hopper_timeline.cu's header into build/bin, and again with
# -DPA_HOPPER_TIMELINE=0 as build/bin/hopper_timeline0 (the control); bundle both with the
# devkit. Run: source .devkit/env; OUT=dir bash bench/gpu/timeline_s25.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
T=${OUT:-$PWD/timeline_s25-logs}/timeline.txt
mkdir -p "$(dirname "$T")"
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv >"$T"
for c in "128 512" "64 512" "128 2048" "64 1024" "128 8192"; do
  # shellcheck disable=SC2086
  hopper_timeline0 $c && hopper_timeline $c || exit 1
done >>"$T" 2>&1
grep hopper_timeline "$T"
