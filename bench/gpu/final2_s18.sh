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
for f in "$LOG"/ctl-*.log "$LOG"/tl-*.log; do
  echo "== $(basename "$f" .log)" >>"$SUMMARY"
  grep -E "^graph replay|^  |^streaming" "$f" >>"$SUMMARY"
done
export POLYATTN_TEST_BACKENDS=cuda
CASES=decode,d32_s1,s1_sk1000,d256_s3_256,d40_sq3_sk256,seqlen_k_0_causal_nolse
T="POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=$CASES"
step sweep 120 env $T test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-k16 120 env $T POLYATTN_CUDA_DECODE_VARIANT=k16 test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-w1 120 env $T POLYATTN_CUDA_DECODE_WARPS=1 test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-splits12 120 env $T POLYATTN_CUDA_DECODE_SPLITS=12 test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-mergekernel 120 env $T POLYATTN_CUDA_DECODE_MERGE=kernel test_forward --verbose --filter 'forward/sweep' --jobs 8
step graph 60 test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
step det 60 env POLYATTN_CUDA_KERNEL=decode POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
  test_forward --verbose --filter 'forward/deterministic'
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
MC=decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits,d256_s3_256
step memcheck 150 env POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=$MC \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
step memcheck-splits12 150 env POLYATTN_CUDA_KERNEL=decode POLYATTN_CUDA_DECODE_SPLITS=12 POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,many_splits \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
step racecheck 150 env POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk1500,many_splits \
  "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
grep -hE "Synthesis" "$LOG"/sweep*.log "$LOG"/graph.log "$LOG"/det.log | sed 's/^/  /' >>"$SUMMARY"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG"/memcheck*.log "$LOG"/racecheck.log >>"$SUMMARY"
step sweep-default 200 test_forward --verbose --jobs 8
step test-cuda 120 test_cuda --verbose
grep -hE "Synthesis" "$LOG"/sweep-default.log "$LOG"/test-cuda.log | tee -a "$SUMMARY"
unset POLYATTN_TEST_BACKENDS
step perf 120 python3 bench/gpu/decode_variants.py --timers graph --sk 4096,32768,131072 --variants "default:;default-again:" --json "$LOG/decode.jsonl"
grep -vh "^#" "$LOG/perf.log" | grep -E "^ +[0-9]" | cut -c1-110 >>"$SUMMARY"
mkdir -p /tmp/keep && cp "$LOG"/*.jsonl /tmp/keep/ 2>/dev/null
pa_gpu_pack_logs
cp /tmp/keep/* "$LOG/" 2>/dev/null
pa_gpu_finish
