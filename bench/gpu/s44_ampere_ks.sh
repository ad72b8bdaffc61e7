#!/bin/bash
# Forty-fourth session (issue 3): the Ampere kernel's rows with the kept maximum decided on
# the row sums (fwd_tile.cuh keep_max 2, decision 135): "m2k128tj-ks" (hd64) and "m2k64-ks"
# (hd128), one call on a module built with bench/gpu/s44_ampere_ks.patch (applies to 7d621a5;
# the rows are not in the tree: slower, decision 135), otherwise the build CI ships (sm_90, no
# tuning variants). In order:
#  1. a check that the module holds the two bf16 rows;
#  2. clock_probe's aq* cases (two rounds, sustained): the Ampere default row beside its
#     "-ks" row by name and SDPA flash;
#  3. in parallel: test_cuda (with the ks_climb_ampere tests: scores built to take the rows'
#     slow steps) and compute-sanitizer memcheck / racecheck / synccheck on those tests;
#  4. the forward sweep forced onto each row (POLYATTN_CUDA_KERNEL=ampere; fp16 and bf16).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s44_ampere_ks.sh   (~6 min)
# Run in the forty-fourth session on an H100 (316 s; bench/results/2026-12-06s44-aks/).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s44aks 'pa_ampere_fwd_kernelI13__nv_bfloat16Li(64ELi12|128ELi13)ELb0E' 2 \
  test_forward test_cuda
pa_probe "${PROBE_CASES:-aq128s8k,aq64s8k,aq128s2k,aq64s2k,aq128s16k,aq64s16k,aq128c8k,aq64c8k,aq128h8k,aq64h8k}" 2 300
export POLYATTN_TEST_BACKENDS=cuda
pa_cuda_checks 'cuda/ks_climb_ampere*'
for v in m2k128tj-ks m2k64-ks; do
  step_bg "sweep-$v" 300 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_CUDA_AMPERE_VARIANT=$v \
    test_forward --verbose --filter 'forward/sweep' --jobs 2
done
pa_ks_climb_tail
