#!/bin/bash
# Twentieth session, R2 (issue 9, decision 111): hd64 plain problems from 8192 keys run
# "serial-rel-wg3-k192" (192-key tiles, two stages; now compiled for fp16 and bf16) by
# default. Sustained with clock and power (clock_probe.py, two rounds) against the
# previous default ("serial-s3-rel-wg3") and two stages on 128-key tiles
# ("serial-rel-wg3", bf16 only) at S 2048-16384, causal 8192/16384, fp16 8192; the
# forward suite by default (new case s8400_d64 takes the new kernel) and with the new
# variant forced (fp16 cases now run it too); compute-sanitizer with it forced; test_cuda.
# "serial-rel-wg3" is bf16-only: since decision 112 it needs a build with
# -DPOLYATTN_CUDA_TUNING_VARIANTS=ON (without, its name runs the default).
# Run: source .devkit/env; OUT=dir bash bench/gpu/k192_s20_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup k192_s20_r2 python3 nvidia-smi test_forward test_cuda
STEP_TAIL=0
pa_hopper_resources 32792
step probe 360 python3 bench/gpu/clock_probe.py --rounds 2 --cases t8k,t16k,tc8k,tc16k,tf16,t4k,t2k,tc4k
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step sweep-default 200 test_forward --verbose --jobs 8
pa_hopper_sweep k192s2 $V=serial-rel-wg3-k192
pa_fwd_checks_tail "s8400|s1500"
pa_hopper_sanitizers gqa_8_2,causal_sq17_sk256,s1500_d64,s1500_causal_d64 $V=serial-rel-wg3-k192
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
