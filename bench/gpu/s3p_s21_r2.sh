#!/bin/bash
# Twenty-first session, R2 (issue 9): the persistent kernel with a three-stage K/V ring,
# cuDNN's budget at the short lengths as its shared memory size suggests (ncu, R1's
# second part: one 128-row Q and three 128-key stages would fill it; inferred, not seen): "pingpong-s3-rel-p-q2-os" (hd64 only: at hd128 two Q buffers and three
# stages do not fit) and "pingpong-s3-rel-p" (one Q buffer, O from registers; fits hd128
# exactly) against the defaults at hd64 S512, S1024, causal 2048, S2048 and hd128 S512,
# S2048. Sustained (clock_probe.py, two rounds); the forward suite by default and with
# each variant forced (on 3 blocks), the sanitizers with them forced on 3 blocks. Both
# variants were removed after this run: apply bench/gpu/s3p_s21_r2.patch (to f01dc08's
# fwd_hopper.cu) to run them again (without, their names run the default).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s3p_s21_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_hopper_round s3p_s21_r2 "Li(64|128)ELi(28682|28686|4110)" 300 y64s512,y64s1k,y64c2k,y64s2k,y512,y2k
pa_hopper_sweep s3q2-b3 $V=pingpong-s3-rel-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sweep s3p-b3 $V=pingpong-s3-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_fwd_checks_tail "s1000|s2048_d128"
pa_hopper_sanitizers gqa_8_2,causal_sq113_sk64_emptyrows,varlen_empty,block128_hopper_list_empty_rows,causal_s128 \
  $V=pingpong-s3-rel-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=3
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
