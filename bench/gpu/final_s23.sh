#!/bin/bash
# Twenty-third session, the committed code (issue 3: hd64's Ampere default m2k128t,
# decision 115): the CUDA suites by default (forward, test_cuda, backward), the forward
# suite and test_cuda with the Ampere kernel forced, memcheck and racecheck with the
# Ampere kernel forced on hd64 cases (the new row: plain, causal, varlen, GQA, odd dims,
# strided) and on two of the 2:4 row's, and the standard sweep beside SDPA with the
# Ampere kernel forced (bf16 and fp16, hd 64 and 128).
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s23.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s23 nvidia-smi polyattn test_forward test_cuda test_backward
pa_gpu_state
pa_cuda_suites
export POLYATTN_TEST_BACKENDS=cuda
step sweep-ampere 200 env POLYATTN_CUDA_KERNEL=ampere test_forward --verbose --jobs 8
step test-cuda-ampere 120 env POLYATTN_CUDA_KERNEL=ampere test_cuda --verbose --filter 'cuda/*'
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
CASES=d64_s64_h4,dv32_d64,d72_sq17_sk255,varlen_causal_gqa,s1500_causal_d64,causal_sq113_sk64_emptyrows,causal_sq17_sk256,strided_gqa_causal,bhsd,nm24
for tool in memcheck racecheck; do
  step $tool-ampere 180 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_CASES=$CASES \
    "$SAN" --tool $tool --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
done
step torch 300 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16,fp16 \
  --dims 64,128 --json "$LOG/torch-ampere.jsonl"
grep -hE "Synthesis" "$LOG"/sweep-ampere.log "$LOG"/test-cuda-ampere.log | tee -a "$SUMMARY"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG"/memcheck-ampere.log "$LOG"/racecheck-ampere.log | sort | uniq -c | tee -a "$SUMMARY"
grep -E "geomean|correctness" "$LOG/torch.log" | tee -a "$SUMMARY"
pa_gpu_pack_keep torch.log torch-ampere.jsonl
pa_gpu_finish
