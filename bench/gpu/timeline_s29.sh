#!/bin/bash
# Twenty-ninth session (issue 9): does R2's start offset between the persistent kernel's
# consumers persist? bench/gpu/hopper_timeline.cu (event stamps; since this session it also
# prints consumer 1's "O stored" minus consumer 0's per query tile), built against
# fwd_hopper.cu with bench/gpu/lag_s29_r2.patch applied (its lag variant marked "full" so
# that the harness's bf16 dispatch compiles it without the tuning variants): the pingpong
# default (28682) and the lag form (94217) at lags of 0, 3000 and 6000 cycles, hd64 and
# hd128 at S512. Output in $OUT/timeline.txt.
# Build (here): the nvcc line of hopper_timeline.cu's header with -I to the patched copy
# first, the binary into .devkit/bin. Run: source .devkit/env; OUT=dir bash bench/gpu/timeline_s29.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
T=${OUT:-$PWD/timeline_s29-logs}/timeline.txt
mkdir -p "$(dirname "$T")"
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv >"$T"
for d in 64 128; do
  hopper_timeline $d 512 28682 || exit 1
  for lag in 0 3000 6000; do
    echo "POLYATTN_CUDA_HOPPER_LAG_CYCLES=$lag"
    POLYATTN_CUDA_HOPPER_LAG_CYCLES=$lag hopper_timeline $d 512 94217 || exit 1
  done
done >>"$T" 2>&1
grep -E "hopper_timeline|consumer offset|LAG_CYCLES" "$T"
