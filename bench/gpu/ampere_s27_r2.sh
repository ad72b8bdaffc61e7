#!/bin/bash
# Twenty-seventh session, R2 (issue 3): hd64 on 64-key tiles at three blocks per SM
# ("m2k64b3": three warps per scheduler where the default rows run two, 168 registers;
# "m2k64b3j": the same with one barrier per tile; bench/gpu/ampere_s27_b3.patch, tuning
# variants). The forward suite forced onto each, memcheck and racecheck on m2k64b3, the
# rows beside the default and SDPA in one process (bf16, hd64, S 512-16384, auto and
# m2k64b3 twice), sustained at the power cap (clock_probe.py b64, bc64, b64s2k); and for
# issue 9 the hd64 multicast at even query-tile counts (m64e S4096, m64f S16384).
# Needs a build with -DPOLYATTN_CUDA_TUNING_VARIANTS=ON and the patch applied (removed
# after the session: without it the names run the default).
# (Its suite and sanitizer steps moved into lib.sh's pa_ampere_rows after the run: the
# same commands.)
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s27_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s27_r2 python3 nvidia-smi polyattn test_forward
pa_gpu_state
STEP_TAIL=0
V=POLYATTN_CUDA_AMPERE_VARIANT
pa_ampere_rows m2k64b3 b3 d64_s64_h4,dv32_d64,varlen_causal_gqa,s1500_d64,s1500_causal_d64,causal_sq113_sk64_emptyrows,gqa_8_2,nm24 \
  m2k64b3 m2k64b3j
step torch 300 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 \
  --dims 64 --seqlens 512,1024,2048,4096,8192,16384 \
  --variants "$V=auto,m2k64b3,m2k64b3j,auto#2,m2k64b3#2" --json "$LOG/torch.jsonl"
step probe 200 python3 bench/gpu/clock_probe.py --rounds 2 --cases b64,bc64,b64s2k,m64e,m64f
pa_gpu_pack_keep torch.log torch.jsonl probe.log
pa_gpu_finish
