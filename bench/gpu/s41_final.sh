#!/bin/bash
# Forty-first session (issue 9): the final check of decision 132, one call: the build CI
# ships (sm_90, no tuning variants) with hd128's persistent default on the stream-K tail
# ("pingpong-rel-p-q2-os-km1-pn-sk") for uniform plain problems from 2048 keys. In order:
#  1. a check that the module holds the hd128 "-sk" kernels (bf16 and fp16) and not hd64's
#     (a tuning variant now);
#  2. clock_probe's fk* cases (two rounds, sustained at the power cap): the default beside
#     the form without the tail and cuDNN at S2048 / S4096 (bf16, fp16); at S1024 (below
#     the bound) the default beside the tail by name;
#  3. in parallel: the forward suite by default, the sweep forced onto the Hopper kernels
#     on 3 blocks (s2048_d128 runs the tail by default there), memcheck / racecheck /
#     synccheck by default on 3 blocks over dense and fallback cases;
#  4. test_cuda by default; compare_torch on the default (bf16 and fp16, hd128, S 2048 /
#     4096).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s41_final.sh   (~6 min)
# Run in the forty-first session on an H100 (181 s; bench/results/2026-12-06s41-final/), and
# again on 8c03c55 (196 s; bench/results/2026-12-06s41-head/); its end was written out then,
# gathered into lib.sh's pa_default_tail afterwards, the commands unchanged.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# V 6844426 = PA_HV_SHORT_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_SK (hd128)
pa_gpu_start s41f 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li(128ELi6844426|64ELi7041034)E' 2 \
  test_forward test_cuda
pa_probe fk128s2k,fk128s4k,fk128h2k,fk128h4k,fk128s1k 2 240
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_final_bg s1000,s2048_d128,s1500_d64,s1000_causal_d128,s2500_causal_softcap_d64
pa_hopper_sanitizers_bg b3 300 s2048_d128,s1000,s1500_d64 POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
pa_default_tail 128 200 150 --verbose
