#!/bin/bash
# Twenty-first session, R1 (issue 9): the persistent kernel with each query tile's last
# P.V issued in the next tile's first turn and its O stored after that tile's first
# softmax ("pingpong-rel-p-q2-os-x", PA_HV_CARRY) against the default persistent kernel
# ("pingpong-rel-p-q2-os") at the lengths where the default runs it. Sustained with clock
# and power (clock_probe.py, two rounds); the forward suite by default and with the
# variant forced (also with 3 blocks, so that every block carries across many tiles, and
# with O stored from registers); the sanitizers with it forced on 3 blocks. The variant
# was removed after this run (decision 113): apply bench/gpu/carry_s21_r1.patch to
# a53b02a's fwd_hopper.cu to run it again (without, its name runs the default).
# Run: source .devkit/env; OUT=dir bash bench/gpu/carry_s21_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_hopper_round carry_s21_r1 "Li(64|128)ELi(28682|94218)" 420 \
  x512,xc512,x2k,x4k,xc4k,xc8k,x64s512,x64s1k,x64c2k,xf512
X=pingpong-rel-p-q2-os-x
pa_hopper_sweep x $V=$X
pa_hopper_sweep x-b3 $V=$X POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sweep x-b3-regs $V=$X POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_CUDA_HOPPER_O_TMA=0
pa_fwd_checks_tail "s1000|s2048_d128|varlen_empty"
pa_hopper_sanitizers gqa_8_2,causal_sq113_sk64_emptyrows,varlen_empty,varlen_causal_gqa,block128_hopper_list_empty_rows,seqlen_k_0,causal_s128 \
  $V=$X POLYATTN_CUDA_HOPPER_BLOCKS=3
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
