#!/bin/bash
# Twenty-fifth session, R3 (issue 9, hd64): three consumer warpgroups taking pingpong
# turns in a ring (0, 1, 2, 0, ...) on 64-key K/V tiles (PA_HV_K64 at hd64 with WG3;
# bf16-only tuning variants "pingpong-rel-wg3-k64-p-q2-os" (persistent),
# "pingpong-rel-wg3-k64" and "pingpong-s3-rel-wg3-k64" (grid)): clock_probe's w* cases in
# two rounds beside the defaults and cuDNN, the forward suite by default and with the
# persistent variant forced on 3 blocks (many query tiles per block) and the grid one
# forced, test_cuda, and compute-sanitizer with the persistent variant on 3 blocks.
# The three variants and the ring of turns were removed after this round (9-14% slower:
# bench/RESULTS.md, twenty-fifth session): to run it again, apply
# bench/gpu/wg3pp_s25_r3.patch (on e395431) and build with
# -DPOLYATTN_CUDA_TUNING_VARIANTS=ON; without, their names run the default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/wg3pp_s25_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_hopper_round wg3pp_s25_r3 "Li64ELi(1050|1054|29722)" 320 w512,w1k,wc2k,w2k,w4k,w8k,wc8k
pa_hopper_sweep wg3k64p-b3 $V=pingpong-rel-wg3-k64-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sweep wg3k64 $V=pingpong-rel-wg3-k64
pa_fwd_checks_tail "s1500_d64|s1500_causal_d64|s2500_causal_d64"
pa_hopper_sanitizers gqa_8_2,causal_sq17_sk256,s1500_d64,s1500_causal_d64 $V=pingpong-rel-wg3-k64-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=3
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
