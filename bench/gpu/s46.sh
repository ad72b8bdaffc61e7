#!/bin/bash
# Forty-sixth session (issue 3): the Ampere kernel's two-halves schedule at hd64
# (fwd_ampere_pipe.cu; POLYATTN_CUDA_AMPERE_PIPE=1, or 3 with tree maxima and one ldmatrix
# offset per lane, or 5: 3 with the halves rotated across tiles on three stages), one call
# on a module whose fwd_ampere_pipe.cu is compiled (PA_CUDA_AMPERE_PIPE_BUILD=1; otherwise
# the build CI ships: sm_90, no tuning variants). In order:
#  1. a check that the module holds the six hd64 pipe kernels (settings 1, 3, 5; two dtypes);
#  2. in parallel: the forward sweep forced onto each setting (POLYATTN_CUDA_KERNEL=ampere;
#     the hd64 and hd128 dense cases run the pipe kernel, the others the Ampere rows), and
#     memcheck / racecheck on five hd64 cases with settings 3 and 5;
#  3. clock_probe's hp* cases (two rounds, sustained; named ap* when it ran, renamed since):
#     the Ampere default row beside the pipe kernel's settings and SDPA flash.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s46.sh   (~5 min)
# Run in the forty-sixth session on an H100 (267 s; bench/results/2026-12-07s46-pipe/).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s46 'pa_ampere_pipe_kernelI(13__nv_bfloat16|6__half)Li64ELi[013]E' 6 test_forward
export POLYATTN_TEST_BACKENDS=cuda
for v in 1 3 5; do
  step_bg "sweep-pipe$v" 240 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_CUDA_AMPERE_PIPE=$v \
    test_forward --verbose --filter 'forward/sweep' --jobs 3
done
cs=$(command -v compute-sanitizer ||
  ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
HCASES=d64_s64_h4,dv32_d64,s1500_d64,s1500_causal_d64,s2500_causal_softcap_d64
for v in 3 5; do
  for tool in memcheck racecheck; do
    step_bg "$tool-pipe$v" 240 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_CUDA_AMPERE_PIPE=$v \
      POLYATTN_TEST_CASES="$HCASES" "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 \
      test_forward --filter 'forward/sweep' --jobs 2
  done
done
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
pa_probe "${PROBE_CASES:-hp64s8k,hp64s2k,hp64s16k,hp64c8k,hp64h8k,hp128s8k}" 2 300
pa_gpu_pack_keep probe.log
pa_gpu_finish
