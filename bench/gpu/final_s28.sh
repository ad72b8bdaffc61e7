#!/bin/bash
# Twenty-eighth session, final check of the committed code (decision 119: idle consumer
# warpgroups of the Hopper grid kernels without turns and of the FP8 kernel exit; R1 and
# R2 ran it with trial code around it): the forward suite by default and forced onto the
# three-consumer kernels, test_cuda, the backward suite, test_fp8 (its LSE-only failures of
# decision 78 make that step exit 1), sanitizers on hd64 cases with idle consumers, then
# alone: clock_probe (the skip on and off, sustained, two rounds) and the standard sweep
# beside SDPA (bf16 and fp16, hd 64 and 128).
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s28.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s28 python3 nvidia-smi test_forward test_cuda test_backward test_fp8
pa_gpu_state
STEP_TAIL=0
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
CASES64=d64_s64_h4,gqa_8_2,s1500_d64,varlen_causal_gqa,softcap5,causal_sq113_sk64_emptyrows
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step_bg sweep-default 240 test_forward --jobs 4
step_bg sweep-wg3 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3 test_forward --filter 'forward/sweep' --jobs 4
step_bg sweep-k192 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-wg3-k192 test_forward --filter 'forward/sweep' --jobs 4
step_bg test-fp8 120 test_fp8 --verbose --jobs 4
step_wait
for tool in memcheck racecheck synccheck; do
  step_bg "$tool-wg3" 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3 POLYATTN_TEST_CASES="$CASES64" \
    "$cs" --tool $tool --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
done
step_bg backward 200 test_backward --jobs 4
step_wait
step test-cuda 120 test_cuda --filter 'cuda/*'
unset POLYATTN_TEST_BACKENDS
grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/test-*.log "$LOG"/backward.log | tee -a "$SUMMARY"
for f in "$LOG"/*check-*.log; do
  echo "$(basename "$f" .log): $(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$f" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
done | tee -a "$SUMMARY"
grep -hE "vs oracle" "$LOG/test-fp8.log" >"$LOG/fp8-oracle.txt"
step probe 200 python3 bench/gpu/clock_probe.py --rounds 2 --cases z2k,z4k,zc4k
step torch 300 python3 bench/compare_torch.py --no-efficient --dtypes bf16,fp16 --dims 64,128 \
  --json "$LOG/torch.jsonl"
grep -E "geomean|correctness" "$LOG/torch.log" | tee -a "$SUMMARY"
pa_gpu_pack_keep probe.log torch.log torch.jsonl fp8-oracle.txt
pa_gpu_finish
