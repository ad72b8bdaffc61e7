#!/bin/bash
# Forty-first session (issue 9): the stream-K tail (decision 132) at hd256, on a persistent
# kernel with O through its one Q buffer ("pingpong-rel-p-os-km-pn-sk": the tile settles
# its O copy at its end, since the next tile's Q lands in the same buffer), "full" in the
# module this runs (a candidate: bench/gpu/s41_d256.patch, which applies to 31b6b39 with
# tests/test_forward.c's d256_s700_h3; slower, not kept). hd256's grid has 1024 query tiles at every length of the
# 16k-token sweep, 7.76 rounds on 132 SMs. In order of need:
#  1. a check that the module holds it (bf16 and fp16);
#  2. the sweep forced onto it on 5 blocks (d256_bhsd_gqa and d256_s700_h3 cut tiles;
#     causal / masked / non-plain hd256 cases fall back to the default);
#  3. clock_probe's sq256* cases (two rounds, sustained): the grid default, the candidate,
#     cuDNN;
#  4. memcheck / racecheck / synccheck on it on 5 blocks over the two dense cases; the
#     forward suite by default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s41_d256.sh   (~5 min)
# Run in the forty-first session on an H100 (168 s; bench/results/2026-12-06s41-d256/).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# V 6574090 = PINGPONG | RELEASE | PERSIST | OST | KEEPM | PLAIN | SK
pa_gpu_start s41d 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li256ELi6574090E' 2 test_forward
V=POLYATTN_CUDA_HOPPER_VARIANT
SK256=pingpong-rel-p-os-km-pn-sk
export POLYATTN_TEST_BACKENDS=cuda
step sweep-sk256-b5 200 env POLYATTN_CUDA_KERNEL=hopper $V=$SK256 POLYATTN_CUDA_HOPPER_BLOCKS=5 \
  test_forward --verbose --filter 'forward/sweep' --jobs 8
pa_check_summary
pa_probe sq256s2k,sq256s8k,sq256s16k,sq256c8k,sq256h8k 2 300
step_bg sweep-default 300 test_forward --jobs 4
pa_hopper_sanitizers_bg sk256 200 d256_bhsd_gqa,d256_s700_h3 $V=$SK256 POLYATTN_CUDA_HOPPER_BLOCKS=5
step_wait
pa_check_summary
pa_gpu_pack_keep probe.log
pa_gpu_finish
