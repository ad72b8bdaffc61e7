#!/bin/bash
# Twenty-seventh session (issue 3): hd64 under a sliding window on the Ampere kernel,
# where "auto" runs m2j (the second session's choice for masked problems, never measured
# again): m2j against m2k128tj (hd64's default elsewhere, decision 118) and m2k128t, bf16,
# B2 H32 S8192, left windows of 256, 1024 and 4096 keys (causal), two alternated rounds
# of `polyattn run --repeat 30`, one process each. Needs a build with
# -DPOLYATTN_CUDA_TUNING_VARIANTS=ON (m2k128t).
# Run: source .devkit/env; OUT=dir bash bench/gpu/window_s27.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup window_s27 polyattn
export POLYATTN_CUDA_KERNEL=ampere
for w in 256 1024 4096; do
  for round in 1 2; do
    for v in m2j m2k128tj m2k128t; do
      timed "w$w-$v-$round" env POLYATTN_CUDA_AMPERE_VARIANT=$v polyattn run --backend cuda \
        --dtype bf16 --batch 2 --heads 32 --seq 8192 --dim 64 --causal --window $w,0 --repeat 30
    done
  done
done
pa_gpu_finish
