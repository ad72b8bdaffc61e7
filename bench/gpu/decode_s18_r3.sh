#!/bin/bash
# Eighteenth session, decode R3 (issue 3): the ticket merge's tail with 8-byte partial
# stores and 16-byte partial loads (the partials 16-byte aligned in the workspace), A/B in
# one process against the same harness built from the scalar code (decode_timeline*_old),
# alternated; the timeline of each; the decode sweep, graph capture, 20-run identity and
# memcheck / racecheck with the new module; decode_variants.py's graph timer beside SDPA.
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s18_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s18_r3 decode_timeline decode_timeline0 decode_timeline_old decode_timeline0_old test_forward test_cuda
STEP_TAIL=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$LOG/gpu.txt" 2>&1
for i in 1 2 3; do
  step ctl-new-4k-$i 60 decode_timeline0 4096
  step ctl-old-4k-$i 60 decode_timeline0_old 4096
done
step tl-new-4k 60 decode_timeline 4096
step tl-old-4k 60 decode_timeline_old 4096
step ctl-new-32k 60 decode_timeline0 32768
step ctl-old-32k 60 decode_timeline0_old 32768
for f in "$LOG"/ctl-*.log "$LOG"/tl-*.log; do
  echo "== $(basename "$f" .log)" >>"$SUMMARY"
  grep -E "^graph replay|^  |^streaming" "$f" >>"$SUMMARY"
done
export POLYATTN_TEST_BACKENDS=cuda
CASES=decode,d32_s1,s1_sk1000,d256_s3_256,d40_sq3_sk256,seqlen_k_0_causal_nolse
T="POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=$CASES"
step sweep 120 env $T test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-mergekernel 120 env $T POLYATTN_CUDA_DECODE_MERGE=kernel test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-k16 120 env $T POLYATTN_CUDA_DECODE_VARIANT=k16 test_forward --verbose --filter 'forward/sweep' --jobs 8
step graph 60 test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
step det 60 env POLYATTN_CUDA_KERNEL=decode POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
  test_forward --verbose --filter 'forward/deterministic'
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
MC=decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits,d256_s3_256,decode_s1_sk16384
step memcheck 150 env POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=$MC \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
step racecheck 150 env POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk1500,d40_softcap \
  "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
grep -hE "Synthesis" "$LOG"/sweep*.log "$LOG"/graph.log "$LOG"/det.log | sed 's/^/  /' >>"$SUMMARY"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG"/memcheck.log "$LOG"/racecheck.log >>"$SUMMARY"
step perf 150 python3 bench/gpu/decode_variants.py --timers graph --sk 4096,32768,131072 --variants "default:;default-again:" --json "$LOG/decode.jsonl"
grep -vh "^#" "$LOG/perf.log" | grep -E "^ +[0-9]" | cut -c1-110 >>"$SUMMARY"
pa_gpu_finish
