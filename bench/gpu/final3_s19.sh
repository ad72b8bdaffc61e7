#!/bin/bash
# Nineteenth session, the check after the review (decision 110): the bounds as named
# constants (PA_HOPPER_PERSIST_SK_*; the same values as final2_s19.sh) and the hd128
# default without its dead 2048-key rule; a new forward case, s4352_d128, which on cc 9.0
# runs the 176-key grid kernel by default (until now only forced runs took it). The
# forward suite (default choice) and the 176-key kernel forced on every Hopper case;
# clock_probe.py after its review (own workspaces, the device's NVML handle by UUID,
# SDPA's backend entered once per timing, settings restored) on one short case.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final3_s19.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final3_s19 python3 nvidia-smi test_forward
STEP_TAIL=0
step sweep-default 200 env POLYATTN_TEST_BACKENDS=cuda test_forward --verbose --jobs 8
step sweep-k176os 200 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176-os test_forward --verbose --filter 'forward/sweep' --jobs 8
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
step s4352 120 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=s4352_d128 test_forward --verbose --filter 'forward/sweep' --jobs 2
grep -hE "Synthesis|s4352" "$LOG/s4352.log" | head -6 | tee -a "$SUMMARY"
step probe 120 python3 bench/gpu/clock_probe.py --rounds 1 --secs 1 --cases g4096
pa_gpu_pack_keep probe.log
pa_gpu_finish
