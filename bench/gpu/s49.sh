#!/bin/bash
# Forty-ninth session (issue 3): hd64's Ampere kernel with three M tiles (48 query rows) per
# warp on 64-key tiles ("m3k64tj", one barrier per tile; "m3k64t", K and V waited apart), one
# call on a module whose fwd_ampere.cu compiles them (PA_CUDA_AMPERE_M3=1, or a tuning build).
# In order:
#  1. a check that the module holds the four hd64 m3 kernels (two rows, two dtypes);
#  2. in parallel: the forward sweep forced onto each row (POLYATTN_CUDA_KERNEL=ampere; the
#     hd64 cases run the row, the others their head dim's default), and memcheck / racecheck
#     on five hd64 cases with m3k64tj, memcheck with m3k64t;
#  3. clock_probe's m364* cases (two rounds, sustained): the default row beside both m3 rows
#     and SDPA flash.
# Run in the forty-ninth session on an H100 (179 s; bench/results/2026-12-07s49-m3/): 8-17%
# slower than the default row, not kept (decision 141).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s49.sh   (~5 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s49 'pa_ampere_fwd_kernelI(13__nv_bfloat16|6__half)Li64ELi1[23]ELb0E' 4 test_forward
for v in m3k64tj m3k64t; do pa_ampere_row_sweep $v POLYATTN_CUDA_AMPERE_VARIANT=$v; done
HCASES=d64_s64_h4,dv32_d64,s1500_d64,s1500_causal_d64,s2500_causal_softcap_d64
for vt in m3k64tj:memcheck m3k64tj:racecheck m3k64t:memcheck; do
  pa_ampere_row_sanitize "${vt##*:}" "${vt%%:*}" "$HCASES" POLYATTN_CUDA_AMPERE_VARIANT="${vt%%:*}"
done
step_wait
pa_check_summary
pa_probe "${PROBE_CASES:-m364s8k,m364s2k,m364s16k,m364c8k,m364h8k}" 2 300
pa_gpu_pack_keep probe.log
pa_gpu_finish
