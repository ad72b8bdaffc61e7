#!/bin/bash
# Fiftieth session (issue 3): the Ampere kernel's next-tile copies spread between the warp's
# Q.K^T k16 steps ("-sc") and the block-mask bits shifted per warp ("-mg"), decision 144:
# rows m2k64-km-rs-mg-sc (hd128), m2k128tj-sc and m2k128tj-mg (hd64), on a module whose
# fwd_ampere.cu compiles them (a tuning build, or PA_CUDA_AMPERE_SC=1). In order:
#  1. a check that the module holds the three rows' six kernels (two dtypes);
#  2. in parallel: the forward sweep forced onto each row (POLYATTN_CUDA_KERNEL=ampere; the
#     hd128 row without LSE, POLYATTN_TEST_NO_LSE=1, since calls with LSE run m2k64-km), and
#     memcheck / racecheck on the hd128 row and m2k128tj-sc over five cases of their head dim;
#  3. clock_probe's sc* cases (two rounds, sustained): the default row beside the new rows
#     and SDPA flash.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s50.sh   (~5 min)
# NO_MG=1 skips m2k128tj-mg's sweep and PROBE_CASES=a,b,... shortens step 3 (a short call).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s50 \
  "pa_ampere_fwd_kernelI(13__nv_bfloat16|6__half)Li(128ELi18|64ELi19|64ELi20)ELb0E" 6 test_forward
X128="POLYATTN_CUDA_AMPERE_VARIANT=m2k64-km-rs-mg-sc POLYATTN_TEST_NO_LSE=1"
XSC=POLYATTN_CUDA_AMPERE_VARIANT=m2k128tj-sc
XMG=POLYATTN_CUDA_AMPERE_VARIANT=m2k128tj-mg
pa_ampere_row_sweep mgsc128-nolse $X128
pa_ampere_row_sweep sc64 $XSC
[ -n "${NO_MG:-}" ] || pa_ampere_row_sweep mg64 $XMG
C128=s1000_causal_d128,s4352_d128,auto_clustered_causal_gqa,block_dense1_sparse,d128_s128_b2
C64=d64_s64_h4,dv32_d64,s1500_d64,s1500_causal_d64,s2500_causal_softcap_d64
for tool in memcheck racecheck; do
  pa_ampere_row_sanitize $tool mgsc128 "$C128" $X128
  pa_ampere_row_sanitize $tool sc64 "$C64" $XSC
done
step_wait
pa_check_summary
CASES=sc128s8k,sc128s2k,sc128s16k,sc128c8k,sc128h8k,sc64s8k,sc64s2k,sc64c8k
pa_probe "${PROBE_CASES:-$CASES}" 2 360
pa_gpu_pack_keep probe.log
pa_gpu_finish
