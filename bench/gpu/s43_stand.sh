#!/bin/bash
# Forty-third session (issues 9 and 3): the standing of the tree as it is (14db497's kernels,
# the build CI ships: sm_90, no tuning variants), one call, no kernel named:
#  1. clock_probe's st* cases (two rounds, sustained at the power cap): the default beside
#     cuDNN at S512 (hd64, hd128), and from 2048 keys beside cuDNN, SDPA flash and the
#     Ampere kernel forced (hd64 and hd128, S 2048-16384, causal 4096 / 8192 at hd128);
#     hd64 causal 4096, hd256 S8192 / S16384 and FP8 hd128 S8192 beside cuDNN;
#  2. compare_torch's standard sweep on the default (bf16 and fp16, hd64 and hd128, S
#     512-16384, causal and not, with SDPA flash and cuDNN), its correctness lines;
#  3. the same with the Ampere kernel forced (POLYATTN_CUDA_KERNEL=ampere) beside SDPA
#     flash (issue 3), and hd256 on the default (bf16 and fp16).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s43_stand.sh   (~8 min)
# PROBE_CASES=a,b,... and STAND_STEPS (a subset of torch,torch-ampere,torch-256) shorten it
# (the forty-sixth session's form, to fit one call with a start).
# Written for an H200 in the forty-third session; not run then (no H200 came, nor in the
# forty-fourth, whose device starts failed). Shortened (PROBE_CASES, STAND_STEPS=torch), it
# ran in the forty-sixth on an H100 after the call named the H200
# (bench/results/2026-12-07s46-stand/).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s43 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li(128ELi6844426|64ELi2359324)E' 4
pa_probe "${PROBE_CASES:-st128s512,st64s512,st128s2k,st128s4k,st128s8k,st128s16k,st128c4k,st128c8k,st64s2k,st64s4k,st64s8k,st64s16k,st64c4k,st256s8k,st256s16k,st8s8k}" 2 400
SEQ=512,1024,2048,4096,8192,16384
STEPS=,${STAND_STEPS:-torch,torch-ampere,torch-256},
[[ $STEPS == *,torch,* ]] &&
  step torch 120 python3 -u bench/compare_torch.py --no-efficient --dtypes bf16,fp16 --dims 64,128 \
    --seqlens $SEQ --json "$LOG/torch.jsonl"
[[ $STEPS == *,torch-ampere,* ]] &&
  step torch-ampere 120 python3 -u bench/compare_torch.py --no-efficient --no-cudnn \
    --env-kernel ampere --dtypes bf16,fp16 --dims 64,128 --seqlens $SEQ \
    --json "$LOG/torch-ampere.jsonl"
[[ $STEPS == *,torch-256,* ]] &&
  step torch-256 90 python3 -u bench/compare_torch.py --no-efficient --dtypes bf16,fp16 \
    --dims 256 --seqlens $SEQ --json "$LOG/torch-256.jsonl"
for f in torch torch-ampere torch-256; do
  [ -f "$LOG/$f.log" ] || continue
  grep -E "geomean|correctness" "$LOG/$f.log" | sed "s/^/$f: /" | tee -a "$SUMMARY"
done
pa_gpu_pack_keep torch.log torch-ampere.log torch-256.log probe.log
pa_gpu_finish
