#!/bin/bash
# Twentieth session, R1 (issue 9): hd64's three-consumer grid kernel on 192-key tiles
# ("serial-s3-rel-wg3-k192", "serial-rel-wg3-k192": FlashAttention-3's hd64 non-causal
# tile; bf16 only in this build) against the default's 128-key tiles, sustained with the
# clock and power beside each (clock_probe.py, two rounds), S 2048-16384, causal 8192 and
# 16384. Also the nineteenth session's unrun check (final3_s19.sh): the forward suite by
# default choice (with its new cases s4352_d128, s1500_d64, s1500_causal_d64), the
# 176-key kernel forced; the new variants forced on every Hopper case; compute-sanitizer
# memcheck / racecheck / synccheck with the three-stage one forced on hd64 cases.
# Run: source .devkit/env; OUT=dir bash bench/gpu/k192_s20_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup k192_s20_r1 python3 nvidia-smi test_forward
STEP_TAIL=0
# registers and spills of the hd64 Hopper kernels (the 192-key ones: V = 32796 / 32792)
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
step resources 60 sh -c "'$CUOBJ' --dump-resource-usage .devkit/lib/libpolyattn-cuda.so | grep -A1 'pa_hopper_fwd_kernel.*Li64ELi' | grep -oE 'Li64ELi[0-9]+|REG:[0-9]+|LOCAL:[0-9]+' | paste - - - | sort -u"
grep -E "3279[26]" "$LOG/resources.log" | tee -a "$SUMMARY"
step probe 360 python3 bench/gpu/clock_probe.py --rounds 2 \
  --cases s20d64,s20d64s2k,s20d64s4k,s20d64s16k,s20d64c8k,s20d64c16k
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step sweep-default 200 test_forward --verbose --jobs 8
step sweep-k176os 200 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-k176-os test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-k192 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3-k192 test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-k192s2 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-wg3-k192 test_forward --verbose --filter 'forward/sweep' --jobs 8
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
grep -hE "s4352|s1500" "$LOG"/sweep-default.log | head -12 | tee -a "$SUMMARY"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck synccheck; do
  step $tool 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3-k192 \
    POLYATTN_TEST_CASES=gqa_8_2,causal_sq17_sk256,s1500_d64,s1500_causal_d64 \
    "$CS" --tool $tool --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$tool.log" | sed "s/^/$tool: /" | tee -a "$SUMMARY"
done
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
