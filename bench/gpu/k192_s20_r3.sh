#!/bin/bash
# Twentieth session, R3 (issue 9, decision 111): hd64 causal problems above 2048 keys on
# the 192-key grid kernel (the persistent bound 4096 -> 2048); new bf16-only variants,
# the persistent walk on the three-consumer kernel ("serial-rel-wg3-p-q2", "-k192-p-q2"),
# timed sustained against the defaults at S 1024-4096 and causal 2048-8192 (clock_probe,
# two rounds). The forward suite by default (s2500_causal_d64 takes the 192-key kernel),
# the new variants forced (also with 5 blocks: many tiles per block), test_cuda, and
# compute-sanitizer with the persistent three-consumer kernel forced.
# Its two bf16-only variants were removed after this round: to run it again, apply
# bench/gpu/k192_s20_r3.patch and build with -DPOLYATTN_CUDA_TUNING_VARIANTS=ON
# (decision 112); without, their names run the default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/k192_s20_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_hopper_round k192_s20_r3 "Li64ELi(32792|12312|45080)" 360 u1k,u2k,u4k,uc2k,uc4k,uc8k
pa_hopper_sweep wg3p $V=serial-rel-wg3-p-q2
pa_hopper_sweep wg3pk $V=serial-rel-wg3-k192-p-q2
pa_hopper_sweep wg3p-b5 $V=serial-rel-wg3-p-q2 POLYATTN_CUDA_HOPPER_BLOCKS=5
pa_fwd_checks_tail "s2500|s8400"
pa_hopper_sanitizers gqa_8_2,causal_sq17_sk256,s1500_d64,s1500_causal_d64 $V=serial-rel-wg3-p-q2 POLYATTN_CUDA_HOPPER_BLOCKS=3
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
