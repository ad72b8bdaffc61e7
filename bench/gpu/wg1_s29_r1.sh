#!/bin/bash
# Twenty-ninth session, R1 (issue 9, short sequences): one consumer warpgroup per block and
# two blocks per SM ("-wg1" tuning variants: the persistent "pipe-rel-p-q2-os-wg1", the grid
# "pipe-rel-os-wg1" and "serial-rel-os-wg1"; hd128 on 64-key tiles), so that one block's
# query-tile boundary (O's normalisation and store, the next Q, the first S and softmax)
# runs beside the other block's main loop instead of beside its own second consumer's.
# Correctness first, in parallel: the forward suite by default, forced onto each variant
# (the persistent one also on 3 blocks: many tiles per block), sanitizers on the persistent
# and grid forms over hd64 and hd128 cases; then timings alone (clock_probe, two rounds,
# sustained) at hd64 / hd128, S512-2048, against the defaults and cuDNN.
# Run: source .devkit/env; OUT=dir bash bench/gpu/wg1_s29_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup wg1_s29_r1 python3 nvidia-smi test_forward test_cuda
pa_gpu_state
STEP_TAIL=0
CASES=d64_s64_h4,gqa_8_2,s1500_d64,s1500_causal_d64,varlen_causal_gqa,softcap5,causal_sq113_sk64_emptyrows,d128_s128_b2,s1000_causal_d128,s2048_d128,strided_gqa_causal
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step_bg sweep-default 300 test_forward --jobs 3
step_bg sweep-w1p 300 env POLYATTN_CUDA_KERNEL=hopper $V=pipe-rel-p-q2-os-wg1 test_forward --filter 'forward/sweep' --jobs 3
step_bg sweep-w1p-b3 300 env POLYATTN_CUDA_KERNEL=hopper $V=pipe-rel-p-q2-os-wg1 POLYATTN_CUDA_HOPPER_BLOCKS=3 \
  test_forward --filter 'forward/sweep' --jobs 3
step_bg sweep-w1g 300 env POLYATTN_CUDA_KERNEL=hopper $V=pipe-rel-os-wg1 test_forward --filter 'forward/sweep' --jobs 3
step_bg sweep-w1s 300 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-os-wg1 test_forward --filter 'forward/sweep' --jobs 3
step_wait
pa_hopper_sanitizers_bg w1p 300 "$CASES" $V=pipe-rel-p-q2-os-wg1 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sanitizers_bg w1g 300 "$CASES" $V=pipe-rel-os-wg1
step_bg test-cuda 120 test_cuda --filter 'cuda/*'
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
step probe 330 python3 bench/gpu/clock_probe.py --rounds 2 \
  --cases o64s512,o128s512,o64s1k,o128s1k,o64s2k,o128s2k,o64c2k,o128c1k
pa_gpu_pack_keep probe.log
pa_gpu_finish
