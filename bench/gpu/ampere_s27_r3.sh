#!/bin/bash
# Twenty-seventh session, R3 (issue 3): one barrier per key tile (K and V waited
# together, PA_KV_JOINT) on the default rows' shapes: "m2k128tj" at hd64 (then a tuning
# row; hd64's default since, decision 118) and "m2k64j" at hd128 (a tuning variant in the tree,
# never timed since the variable is read at each call: the fourteenth session's columns
# timed the default). R2's m2k64b3j was 4.4% ahead of m2k64b3 at three blocks per SM.
# The forward suite forced onto each, memcheck and racecheck on m2k128tj, the rows
# beside the default and SDPA in one process (bf16, S 2048-16384; a name without a row
# at the other head dim runs the default there), sustained (clock_probe.py j64, jc64,
# j128, jc128). Needs -DPOLYATTN_CUDA_TUNING_VARIANTS=ON. On the committed code "auto"
# at hd64 is m2k128tj itself: name m2k128t for the previous default.
# (Its suite and sanitizer steps moved into lib.sh's pa_ampere_rows after the run: the
# same commands.)
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s27_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s27_r3 python3 nvidia-smi polyattn test_forward
pa_gpu_state
STEP_TAIL=0
V=POLYATTN_CUDA_AMPERE_VARIANT
pa_ampere_rows m2k128tj tj d64_s64_h4,dv32_d64,varlen_causal_gqa,s1500_d64,s1500_causal_d64,causal_sq113_sk64_emptyrows,gqa_8_2,nm24 \
  m2k128tj m2k64j
step torch 300 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 \
  --dims 64,128 --seqlens 2048,4096,8192,16384 \
  --variants "$V=auto,m2k128tj,m2k64j,auto#2,m2k128tj#2,m2k64j#2" --json "$LOG/torch.jsonl"
step probe 200 python3 bench/gpu/clock_probe.py --rounds 2 --cases j64,jc64,j128,jc128
pa_gpu_pack_keep torch.log torch.jsonl probe.log
pa_gpu_finish
