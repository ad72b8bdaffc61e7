#!/bin/bash
# Thirty-sixth session (issue 9), the second call on the tuning build of km1_s36.sh: "-km1"
# on hd128's persistent kernel ("pingpong-rel-p-q2-os-km1") where km1_s36.sh did not time
# it (S512, S4096 and causal 4096 / 8192, the default's reach there) and on hd64's at causal
# 1024, sustained beside the default and cuDNN (two rounds); then memcheck / racecheck /
# synccheck on hd128's "-km1" over short cases (km1_s36.sh ran its sweep only).
# Run in the thirty-sixth session on an H100 (every step passed; bench/results/2026-12-05s36-km1/km1b/).
# Run: source .devkit/env; OUT=dir bash bench/gpu/km1b_s36.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup km1b_s36 python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
pa_probe kq128s512,kr128s4k,kr128c4k,kr128c8k,kr64c1k
SHORT=s1000_causal_d128,s2048_d128,s4352_d128,d128_s128_b2,block128_hopper_list_empty_rows,auto_clustered_causal_gqa
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_sanitizers_bg p-km1 240 "$SHORT" POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p-q2-os-km1 \
  POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
pa_gpu_pack_keep probe.log
pa_gpu_finish
