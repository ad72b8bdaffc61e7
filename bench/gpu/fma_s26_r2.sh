#!/bin/bash
# Twenty-sixth session, R2 (issue 9): the forward suite with the FMA-pipe exponential
# variants of R1 forced (persistent -x4 and -x8, 192-key -x8), compute-sanitizer on the
# persistent -x8 kernel over many tiles per block, and clock_probe's m128 / m64 cases:
# the cluster multicast of K/V ("-mc", tuning variants of the fifth session) against the
# same kernels without it, sustained at the power cap (does halving the L2 -> SM bytes buy
# clock?; the m64 case turned out void: an odd query-tile count drops the multicast). Needs a build with -DPOLYATTN_CUDA_TUNING_VARIANTS=ON and, for the -x variants,
# bench/gpu/fma_s26_r1.patch (removed after this session; without it their names run the
# default). The -mc variants are in the tree.
# Run: source .devkit/env; OUT=dir bash bench/gpu/fma_s26_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fma_s26_r2 python3 nvidia-smi test_forward test_cuda
STEP_TAIL=0
step probe 150 python3 bench/gpu/clock_probe.py --rounds 2 --cases m128,m64
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
pa_hopper_sweep x8p $V=pingpong-rel-p-q2-os-x8
pa_hopper_sweep x4p-b3 $V=pingpong-rel-p-q2-os-x4 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sweep x8k $V=serial-rel-wg3-k192-x8
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
grep -hE "d64|emptyrows" "$LOG"/sweep-x8p.log | grep bf16 | head -8 | tee -a "$SUMMARY"
pa_hopper_sanitizers gqa_8_2,causal_sq113_sk64_emptyrows,s1500_d64,s1500_causal_d64 $V=pingpong-rel-p-q2-os-x8 POLYATTN_CUDA_HOPPER_BLOCKS=3
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
