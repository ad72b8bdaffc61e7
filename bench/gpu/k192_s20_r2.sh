#!/bin/bash
# Twentieth session, R2 (issue 9, decision 111): hd64 plain problems from 8192 keys run
# "serial-rel-wg3-k192" (192-key tiles, two stages; now compiled for fp16 and bf16) by
# default. Sustained with clock and power (clock_probe.py, two rounds) against the
# previous default ("serial-s3-rel-wg3") and two stages on 128-key tiles
# ("serial-rel-wg3", bf16 only) at S 2048-16384, causal 8192/16384, fp16 8192; the
# forward suite by default (new case s8400_d64 takes the new kernel) and with the new
# variant forced (fp16 cases now run it too); compute-sanitizer with it forced; test_cuda.
# Run: source .devkit/env; OUT=dir bash bench/gpu/k192_s20_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup k192_s20_r2 python3 nvidia-smi test_forward test_cuda
STEP_TAIL=0
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
step resources 60 sh -c "'$CUOBJ' --dump-resource-usage .devkit/lib/libpolyattn-cuda.so | grep -A1 'pa_hopper_fwd_kernel.*Li64ELi' | grep -oE 'Li64ELi[0-9]+|REG:[0-9]+|LOCAL:[0-9]+' | paste - - - | sort | uniq -c"
grep -E "32792" "$LOG/resources.log" | tee -a "$SUMMARY"
step probe 360 python3 bench/gpu/clock_probe.py --rounds 2 --cases t8k,t16k,tc8k,tc16k,tf16,t4k,t2k,tc4k
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step sweep-default 200 test_forward --verbose --jobs 8
step sweep-k192s2 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-wg3-k192 test_forward --verbose --filter 'forward/sweep' --jobs 8
step test-cuda 120 test_cuda --verbose
grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/test-cuda.log | tee -a "$SUMMARY"
grep -hE "s8400|s1500" "$LOG"/sweep-default.log | head -12 | tee -a "$SUMMARY"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck synccheck; do
  step $tool 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-wg3-k192 \
    POLYATTN_TEST_CASES=gqa_8_2,causal_sq17_sk256,s1500_d64,s1500_causal_d64 \
    "$CS" --tool $tool --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$tool.log" | sed "s/^/$tool: /" | tee -a "$SUMMARY"
done
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
