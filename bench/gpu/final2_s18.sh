#!/bin/bash
# Eighteenth session, the check after the review (decision 109; commit e768fd3 plus the
# review's fixes: the merge's last step through pa_softmax_normaliser / pa_softmax_lse,
# named timeline slots, the harness's stamps on a cleared buffer and signed differences):
# the A/B against the previous code at Sk 4k, the timelines (ticket and merge kernel), the
# decode sweep (default, k16, one warp per block, merge kernel, and 12 splits: a second,
# partly filled batch in the merge), graph capture, 20-run identity, memcheck and
# racecheck (incl. 12 splits), the forward suite and test_cuda, decode_variants.py.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final2_s18.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final2_s18 decode_timeline decode_timeline0 decode_timeline0_old test_forward test_cuda
STEP_TAIL=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$LOG/gpu.txt" 2>&1
for i in 1 2; do
  step ctl-new-4k-$i 60 decode_timeline0 4096
  step ctl-old-4k-$i 60 decode_timeline0_old 4096
done
step tl-new-4k 60 decode_timeline 4096
step tl-kernel-4k 60 env POLYATTN_CUDA_DECODE_MERGE=kernel decode_timeline 4096
pa_decode_timelines
export POLYATTN_TEST_BACKENDS=cuda
pa_decode_sweeps k16:POLYATTN_CUDA_DECODE_VARIANT=k16 w1:POLYATTN_CUDA_DECODE_WARPS=1 splits12:POLYATTN_CUDA_DECODE_SPLITS=12 mergekernel:POLYATTN_CUDA_DECODE_MERGE=kernel
pa_decode_sanitizer memcheck memcheck decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits,d256_s3_256
pa_decode_sanitizer memcheck memcheck-splits12 decode_varlen_seqused_gqa,many_splits POLYATTN_CUDA_DECODE_SPLITS=12
pa_decode_sanitizer racecheck racecheck decode_varlen_seqused_gqa,decode_sq2_sk1500,many_splits
step sweep-default 200 test_forward --verbose --jobs 8
step test-cuda 120 test_cuda --verbose
grep -hE "Synthesis" "$LOG"/sweep-default.log "$LOG"/test-cuda.log | tee -a "$SUMMARY"
unset POLYATTN_TEST_BACKENDS
pa_decode_perf graph 4096,32768,131072 "default:;default-again:"
mkdir -p /tmp/keep && cp "$LOG"/*.jsonl /tmp/keep/ 2>/dev/null
pa_gpu_pack_logs
cp /tmp/keep/* "$LOG/" 2>/dev/null
pa_gpu_finish
