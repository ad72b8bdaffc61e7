#!/bin/bash
# Forty-first session (issue 9): the persistent Hopper kernels' stream-K tail (PA_HV_SK,
# "-sk": the last round's query tiles cut along their keys into one equal share per block,
# the two pieces of a cut tile merged by the second to arrive), one call on the build CI
# ships (sm_90) with the two "-sk" forms compiled. In order of need:
#  1. a check that the module holds the four "-sk" kernels (bf16 and fp16, hd64 and hd128);
#  2. the forward sweep forced onto each "-sk" form on 3 blocks (many tiles per block, so
#     every dense case with more than 3 tiles is cut), in parallel;
#  3. clock_probe's sk* cases (two rounds, sustained at the power cap): the default, the
#     persistent "-pn" kernel without and with the tail, and cuDNN;
#  4. in parallel: the sweep on 7 / 5 blocks, the forward suite by default, memcheck /
#     racecheck / synccheck on each "-sk" form on 3 blocks over dense cases;
#  5. test_cuda with the hd128 "-sk" form on 5 blocks (repeat_100_dense_bf16: 128 tiles,
#     cut tiles whose pieces arrive in either order, 100 runs bit-identical).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s41.sh   (~8 min)
# Run in the forty-first session on an H100 (426 s; bench/results/2026-12-06s41-sk/); in that
# build both "-sk" forms were "full", hd64's is a tuning variant since.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# V 6844426 = PA_HV_SHORT_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_SK (hd128),
# 7041034 = PA_HV_SHORT_D64_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_SK (hd64)
pa_gpu_start s41 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li(128ELi6844426|64ELi7041034)E' 4 \
  test_forward test_cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
SK128=pingpong-rel-p-q2-os-km1-pn-sk
SK64=pingpong-rel-p-q2-os-lag-km1-pn-sk
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_variant_sweep_bg sk128-b3 $SK128 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_variant_sweep_bg sk64-b3 $SK64 POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
pa_check_summary
pa_probe sk128s512,sk128s1k,sk128s2k,sk128s4k,sk128s8k,sk64s512,sk64s1k,sk64s2k,sk64s4k,sk128h4k,sk64h1k 2 420
pa_hopper_variant_sweep_bg sk128-b7 $SK128 POLYATTN_CUDA_HOPPER_BLOCKS=7
pa_hopper_variant_sweep_bg sk64-b5 $SK64 POLYATTN_CUDA_HOPPER_BLOCKS=5
step_bg sweep-default 300 test_forward --jobs 2
pa_hopper_sanitizers_bg sk128 300 s2048_d128 $V=$SK128 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sanitizers_bg sk64 300 s1000,s1500_d64 $V=$SK64 POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
step test-cuda-sk 200 env $V=$SK128 POLYATTN_CUDA_HOPPER_BLOCKS=5 test_cuda --verbose --filter 'cuda/*'
pa_check_summary
pa_gpu_pack_keep probe.log
pa_gpu_finish
