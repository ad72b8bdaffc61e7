#!/bin/bash
# Thirteenth session, R5: the carried-dQ loop (decision 102, carry) with the row
# statistics by cp.async (POLYATTN_CUDA_HOPPER_BWD_STATS=async, now a flag of the
# default variant that the stream-K tail also takes): R4's carry3 (the next tile's
# loads after this tile's S^T, dP^T) lost 1-4%, which points at the statistics' plain
# loads, whose latency warps 0-1 wait out before warpgroup 0's wgmmas. Suites with both
# forced (also with the tail forced), racecheck, memcheck; compare_torch --backward
# with the forms side by side in one process, in two orders.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s13_r5.sh
# Logs: bench/results/2026-12-01s13-bwd/r5/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s13_r5 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
A=POLYATTN_CUDA_HOPPER_BWD_STATS=async P=POLYATTN_CUDA_HOPPER_BWD_PIPE S=POLYATTN_CUDA_HOPPER_BWD_SK M=POLYATTN_CUDA_HOPPER_BWD_LPT_MB
step_bg bwd-hopper-carry-stats 150 $H $P=carry $A test_backward --jobs 3
step_bg bwd-hopper-carry-stats-sk3 150 $H $P=carry $A $S=force:3 POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 3
step_bg bwd-default-carry-stats 150 env $P=carry $A test_backward --jobs 3
step_wait
step_bg racecheck-carry-stats 150 $H $P=carry $A POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_bg memcheck-carry-stats 150 $H $P=carry $A $S=force:2 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
show() { python3 bench/gpu/torch_summary.py "$1" | tee -a "$SUMMARY"; }
step torch 300 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --variants "$P=carry&$A,carry,0,0&$A,carry#2,carry&$A#2" --json "$LOG/torch.jsonl"
show "$LOG/torch.jsonl"
pa_gpu_pack_logs
pa_gpu_finish
