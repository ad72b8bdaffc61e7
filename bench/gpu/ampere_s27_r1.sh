#!/bin/bash
# Twenty-seventh session, R1 (issue 3): the Ampere kernel's rows on one block of 8 warps
# ("w8": m2k64 at hd128, m2k128t at hd64, with 256 query rows sharing each K/V tile;
# "w8j": the same with one barrier per tile; ampere_tune.cuh, tuning variants). The
# forward suite forced onto each, memcheck and racecheck on w8, the rows beside the
# default and SDPA in one process (bf16, S 2048-16384, each value of auto and w8 twice),
# sustained at the power cap (clock_probe.py w128, w64, wc128, w128s2k); and two
# measurements for issue 9: the hd64 multicast at an even query-tile count (m64e) and the
# SFU's exponential rates (ex2_s26.sh). Needs a build with
# -DPOLYATTN_CUDA_TUNING_VARIANTS=ON and build/bin/ex2_peak in the devkit.
# (Its suite and sanitizer steps moved into lib.sh's pa_ampere_rows after the run: the
# same commands. R1 ran clock_probe's m64e at S6144, skipped as not whole batches; it is
# S4096 since R2.)
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s27_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s27_r1 python3 nvidia-smi polyattn test_forward ex2_peak
pa_gpu_state
STEP_TAIL=0
step ex2 60 env OUT="$LOG" bash bench/gpu/ex2_s26.sh
V=POLYATTN_CUDA_AMPERE_VARIANT
pa_ampere_rows w8 w8 d64_s64_h4,dv32_d64,varlen_causal_gqa,s1500_causal_d64,causal_sq113_sk64_emptyrows,strided_gqa_causal,bhsd,nm24 \
  w8 w8j
step torch 300 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 \
  --dims 64,128 --seqlens 2048,4096,8192,16384 --variants "$V=auto,w8,w8j,auto#2,w8#2" \
  --json "$LOG/torch.jsonl"
step probe 150 python3 bench/gpu/clock_probe.py --rounds 2 --cases w128,w64,wc128,w128s2k,m64e
pa_gpu_pack_keep torch.log torch.jsonl probe.log ex2.txt
pa_gpu_finish
