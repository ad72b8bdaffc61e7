#!/bin/bash
# Twentieth session, the check of the committed kernels (decision 111: hd64 plain
# problems take "serial-rel-wg3-k192" from 8192 keys, causal ones above 2048, the others
# keep decision 110's choice; R3's persistent three-consumer variants removed): the
# forward suite by default (new cases s2500_causal_softcap_d64, s8400_alibi_d64: not
# plain) and with the 192-key kernel forced, test_cuda; sustained beside SDPA at hd64
# S8192 (flash too), and the two-consumer grid kernels at hd64 S2048 / S4096.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s20.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s20 python3 nvidia-smi test_forward test_cuda
STEP_TAIL=0
step probe 240 python3 bench/gpu/clock_probe.py --rounds 2 --cases fd64,v2k,v4k
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step sweep-default 200 test_forward --verbose --jobs 8
pa_hopper_sweep k192s2 $V=serial-rel-wg3-k192
pa_fwd_checks_tail "s2500|s8400"
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
