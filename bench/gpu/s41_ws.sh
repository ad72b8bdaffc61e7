#!/bin/bash
# Forty-first session (issue 9): the review's mends of decision 132, one short call on the
# build CI ships: the stream-K tail's workspace asked for only where the tail cuts tiles
# (pa_hopper_sk_grid, which follows POLYATTN_CUDA_HOPPER_BLOCKS as the launch does), its start
# rounded up to 16 bytes; test_cuda's dense repeat case (2048 keys, 144 query tiles) runs
# the tail by default. In parallel: the sweep forced onto the tail on 3 blocks, the forward
# suite by default, test_cuda by default (100 repeats bit-identical with cut tiles).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s41_ws.sh   (~2 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# V 6844426 = PA_HV_SHORT_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_SK (hd128)
pa_gpu_start s41ws 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li128ELi6844426E' 2 \
  test_forward test_cuda
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_variant_sweep_bg sk128-b3 pingpong-rel-p-q2-os-km1-pn-sk POLYATTN_CUDA_HOPPER_BLOCKS=3
step_bg sweep-default 150 test_forward --jobs 4
step_bg test-cuda 150 test_cuda --verbose --filter 'cuda/*'
step_wait
pa_check_summary
grep -h "repeat100_dense" "$LOG/test-cuda.log" | tee -a "$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
