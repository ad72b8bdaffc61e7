#!/bin/bash
# Fortieth session (issues 9 and 3): the final check of the tree as committed (decisions
# 130 and 131), the build CI ships: the module holds exactly one FP8 "-pn" kernel (hd64's
# "pipe-gs-t-wg3-r-pn") and the hd64 grid "-pn" kernels; test_fp8 by default (7/18
# expected, decision 78), its oracle lines kept for comparison with the thirty-fourth
# session's; the forward suite by default, the sweep forced onto the Ampere kernel,
# test_cuda; memcheck on the FP8 cases hd64 "-pn" runs by default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s40_final.sh   (~2 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s40_final 'pa_hopper_fp8_kernelILi64ELi11105E' 1 test_forward test_fp8 test_cuda
cuobj=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
"$cuobj" --dump-resource-usage .devkit/lib/libpolyattn-cuda.so |
  grep -oE 'pa_hopper_fp8_kernelILi(64|128)ELi[0-9]*E|pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li64ELi2359324E' |
  sort -u | tee -a "$SUMMARY"
step test-fp8 90 test_fp8 --verbose --jobs 8
grep -hE "Synthesis" "$LOG/test-fp8.log" | tee -a "$SUMMARY"
grep -hE "vs oracle" "$LOG/test-fp8.log" | sort >"$LOG/fp8-oracle.txt"
export POLYATTN_TEST_BACKENDS=cuda
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
step_bg memcheck-fp8 120 env POLYATTN_TEST_CASES=d64_causal_s1000_nolse,d64_varlen_seqused_nolse,d64_causal_s1000_tensor \
  "$cs" --tool memcheck test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
step_bg sweep-default 200 test_forward --jobs 4
step_bg sweep-ampere 200 env POLYATTN_CUDA_KERNEL=ampere test_forward --verbose --filter 'forward/sweep' --jobs 4
step_wait
step test-cuda 120 test_cuda --filter 'cuda/*'
unset POLYATTN_TEST_BACKENDS
grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG/test-cuda.log" | tee -a "$SUMMARY"
grep -hE "ERROR SUMMARY" "$LOG/memcheck-fp8.log" | sort | uniq -c | sed 's/^/memcheck-fp8: /' | tee -a "$SUMMARY"
pa_gpu_pack_keep fp8-oracle.txt
pa_gpu_finish
