#!/bin/bash
# Forty-ninth session (issue 3): the Ampere kernel's step 3 in P.V's k16 steps ("-x" rows,
# decision 142: m2k64-km-rs-x at hd128, m2k128tj-x at hd64), one call on a module whose
# fwd_ampere.cu compiles them (PA_CUDA_AMPERE_XPV=1, or a tuning build). In order:
#  1. a check that the module holds the four "-x" kernels (two rows, two dtypes);
#  2. in parallel: the forward sweep forced onto each row (POLYATTN_CUDA_KERNEL=ampere; the
#     hd128 row without LSE too, POLYATTN_TEST_NO_LSE=1, since calls with LSE run m2k64-km),
#     and memcheck / racecheck on each row over five cases of its head dim (hd128 without
#     LSE);
#  3. clock_probe's xq* cases (two rounds, sustained): the default row beside the "-x" row
#     and SDPA flash.
# Run in the forty-ninth session on an H100 (198 s; bench/results/2026-12-07s49-x/): 3-6%
# slower than the default rows, not kept (decision 142).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s49_x.sh   (~5 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s49_x 'pa_ampere_fwd_kernelI(13__nv_bfloat16|6__half)Li(128ELi14|64ELi15)ELb0E' 4 \
  test_forward
X128="POLYATTN_CUDA_AMPERE_VARIANT=m2k64-km-rs-x POLYATTN_TEST_NO_LSE=1"
X64=POLYATTN_CUDA_AMPERE_VARIANT=m2k128tj-x
pa_ampere_row_sweep x128-nolse $X128
pa_ampere_row_sweep x64 $X64
C128=s1000_causal_d128,s4352_d128,auto_clustered_causal_gqa,block_dense1_sparse,d128_s128_b2
C64=d64_s64_h4,dv32_d64,s1500_d64,s1500_causal_d64,s2500_causal_softcap_d64
for tool in memcheck racecheck; do
  pa_ampere_row_sanitize $tool x128 "$C128" $X128
  pa_ampere_row_sanitize $tool x64 "$C64" $X64
done
step_wait
pa_check_summary
pa_probe "${PROBE_CASES:-xq128s8k,xq128s2k,xq128s16k,xq128c8k,xq128h8k,xq64s8k,xq64s2k,xq64c8k}" \
  2 330
pa_gpu_pack_keep probe.log
pa_gpu_finish
