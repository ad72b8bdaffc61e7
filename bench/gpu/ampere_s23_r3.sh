#!/bin/bash
# Twenty-third session, R3 (issue 3): hd64's rows beside each other in one process,
# the standard lengths, causal and not, bf16 and fp16: auto (m2k128 plain, m2j with a
# causal/window mask), m2k128 and m2k128t (balanced-tree maxima) named for every
# problem, m2j named; R2 put m2k128t 4-6% ahead of auto on causal problems, where auto
# runs m2j, so the tile and the tree are separated here.
# Ran on the same build as R2 (before commit 1ab5738: auto as described above, m2k128
# compiled by default); on the committed code auto runs m2k128t at hd64 and m2k128
# needs -DPOLYATTN_CUDA_TUNING_VARIANTS=ON (without it the name runs auto).
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s23_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s23_r3 polyattn
V=POLYATTN_CUDA_AMPERE_VARIANT
step torch64 300 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16,fp16 \
  --dims 64 --variants "$V=auto,m2k128,m2k128t,m2j,auto#2,m2k128t#2" --json "$LOG/torch64.jsonl"
pa_gpu_pack_keep torch64.log torch64.jsonl
pa_gpu_finish
