#!/bin/bash
# Twentieth session, R3 (issue 9, decision 111): hd64 causal problems above 2048 keys on
# the 192-key grid kernel (the persistent bound 4096 -> 2048); new bf16-only variants,
# the persistent walk on the three-consumer kernel ("serial-rel-wg3-p-q2", "-k192-p-q2"),
# timed sustained against the defaults at S 1024-4096 and causal 2048-8192 (clock_probe,
# two rounds). The forward suite by default (s2500_causal_d64 takes the 192-key kernel),
# the new variants forced (also with 5 blocks: many tiles per block), test_cuda, and
# compute-sanitizer with the persistent three-consumer kernel forced.
# Run: source .devkit/env; OUT=dir bash bench/gpu/k192_s20_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup k192_s20_r3 python3 nvidia-smi test_forward test_cuda
STEP_TAIL=0
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
step resources 60 sh -c "'$CUOBJ' --dump-resource-usage .devkit/lib/libpolyattn-cuda.so | grep -A1 'pa_hopper_fwd_kernel.*Li64ELi' | grep -oE 'Li64ELi[0-9]+|REG:[0-9]+|LOCAL:[0-9]+' | paste - - - | sort | uniq -c"
grep -E "Li64ELi(32792|12312|45080)" "$LOG/resources.log" | tee -a "$SUMMARY"
step probe 360 python3 bench/gpu/clock_probe.py --rounds 2 --cases u1k,u2k,u4k,uc2k,uc4k,uc8k
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step sweep-default 200 test_forward --verbose --jobs 8
step sweep-wg3p 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-wg3-p-q2 test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-wg3pk 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-wg3-k192-p-q2 test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-wg3p-b5 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-wg3-p-q2 POLYATTN_CUDA_HOPPER_BLOCKS=5 test_forward --verbose --filter 'forward/sweep' --jobs 8
step test-cuda 120 test_cuda --verbose
grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/test-cuda.log | tee -a "$SUMMARY"
grep -hE "s2500|s8400" "$LOG"/sweep-default.log | head -8 | tee -a "$SUMMARY"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck synccheck; do
  step $tool 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-wg3-p-q2 POLYATTN_CUDA_HOPPER_BLOCKS=3 \
    POLYATTN_TEST_CASES=gqa_8_2,causal_sq17_sk256,s1500_d64,s1500_causal_d64 \
    "$CS" --tool $tool --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$tool.log" | sed "s/^/$tool: /" | tee -a "$SUMMARY"
done
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
