#!/bin/bash
# Twenty-seventh session, the committed code (issue 3: hd64's Ampere default m2k128tj,
# one barrier per key tile, decision 118): the forward suite by default and with the
# Ampere kernel forced, test_cuda by default and forced, and the standard sweep beside
# SDPA with the Ampere kernel forced (bf16 and fp16, hd 64 and 128, S 512-16384).
# memcheck and racecheck on the new row ran in R3 (ampere_s27_r3.sh, the same kernel).
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s27.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s27 nvidia-smi python3 polyattn test_forward test_cuda
pa_gpu_state
STEP_TAIL=0
export POLYATTN_TEST_BACKENDS=cuda
step_bg sweep-default 240 test_forward --jobs 6
step_bg sweep-ampere 240 env POLYATTN_CUDA_KERNEL=ampere test_forward --jobs 6
step_wait
step test-cuda 120 test_cuda --filter 'cuda/*'
step test-cuda-ampere 120 env POLYATTN_CUDA_KERNEL=ampere test_cuda --filter 'cuda/*'
unset POLYATTN_TEST_BACKENDS
step torch 300 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16,fp16 \
  --dims 64,128 --json "$LOG/torch-ampere.jsonl"
grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/test-cuda*.log | tee -a "$SUMMARY"
grep -E "geomean|correctness" "$LOG/torch.log" | tee -a "$SUMMARY"
pa_gpu_pack_keep torch.log torch-ampere.jsonl
pa_gpu_finish
