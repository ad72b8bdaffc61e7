#!/bin/bash
# Seventeenth session, the review's check: the FP8 kernel's ROWSUM exponentials now through
# frag_softmax.cuh's accumulate step (SUM = false) instead of a copy of it, fp8_check also
# over ROWSUM's V^T blocks of D + 8 rows, the timeline harness's per-iteration helper shared;
# fp8_check, test_fp8 (defaults, and hd128's ROWSUM variant, whose 192-key tiles have three
# V^T blocks), memcheck on two no-LSE hd64 cases, one timeline, and the other suites
# (frag_softmax.cuh gained a defaulted template parameter).
# Run: source .devkit/env; OUT=dir bash bench/gpu/final2_s17.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final2_s17 test_fp8 fp8_check fp8_timeline test_forward test_cuda test_backward
step fp8_check 30 fp8_check
grep -E "^fp8_check D" "$LOG/fp8_check.log" | cut -c1-250 | tee -a "$SUMMARY"
pa_fp8_test ""
pa_fp8_test pingpong-gs-k192-t-r
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
step memcheck 120 env POLYATTN_TEST_CASES=d64_causal_s1000_nolse,d64_varlen_seqused_nolse \
  "$CS" --tool memcheck test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
grep -hE "ERROR SUMMARY" "$LOG/memcheck.log" | tee -a "$SUMMARY"
step timeline-128 60 fp8_timeline 128 -1 8
grep -E "^fp8_timeline|one iteration|start to end, cycles|beyond" "$LOG/timeline-128.log" | tee -a "$SUMMARY"
pa_cuda_suites
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
