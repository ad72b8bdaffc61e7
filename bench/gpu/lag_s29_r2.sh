#!/bin/bash
# Twenty-ninth session, R2 (issue 9, short sequences): the persistent kernel's two consumers
# reach each query tile's boundary (the last P.V, O's normalisation and store, the next Q,
# the first S and softmax) half a pingpong turn apart, so the tensor cores wait through
# most of it (ncu_s29_traffic.sh: 3.1k more active cycles per hd128 S512 tile than cuDNN).
# Tuning variants: the persistent kernel without turns ("pipe-rel-p-q2-os") and the same
# with consumer 1 started POLYATTN_CUDA_HOPPER_LAG_CYCLES behind consumer 0 and, at hd64,
# a three-stage ring ("pipe-rel-p-q2-os-lag"), so that one consumer's boundary can run
# beside the other's main loop. Correctness first (forward suite forced onto each, also on
# 3 blocks; sanitizers on the lag form), then timings alone (clock_probe, two rounds,
# sustained) at lags of 0, 3000 and 6000 cycles.
# Run: source .devkit/env; OUT=dir bash bench/gpu/lag_s29_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup lag_s29_r2 python3 nvidia-smi test_forward test_cuda
pa_gpu_state
STEP_TAIL=0
CASES=d64_s64_h4,gqa_8_2,s1500_d64,s1500_causal_d64,varlen_causal_gqa,softcap5,causal_sq113_sk64_emptyrows,d128_s128_b2,s1000_causal_d128,s2048_d128,strided_gqa_causal
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step_bg sweep-pp 300 env POLYATTN_CUDA_KERNEL=hopper $V=pipe-rel-p-q2-os test_forward --filter 'forward/sweep' --jobs 3
step_bg sweep-lag 300 env POLYATTN_CUDA_KERNEL=hopper $V=pipe-rel-p-q2-os-lag test_forward --filter 'forward/sweep' --jobs 3
step_bg sweep-lag-b3 300 env POLYATTN_CUDA_KERNEL=hopper $V=pipe-rel-p-q2-os-lag POLYATTN_CUDA_HOPPER_BLOCKS=3 \
  POLYATTN_CUDA_HOPPER_LAG_CYCLES=20000 test_forward --filter 'forward/sweep' --jobs 3
step_wait
pa_hopper_sanitizers_bg lag 300 "$CASES" $V=pipe-rel-p-q2-os-lag POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
step probe 330 python3 bench/gpu/clock_probe.py --rounds 2 \
  --cases k64s512,k128s512,k64s1k,k128s1k,k64c2k,k128s2k
pa_gpu_pack_keep probe.log
pa_gpu_finish
