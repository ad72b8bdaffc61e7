#!/bin/bash
# Thirteenth session, R4: the carried-dQ loop (decision 102, carry: R2/R3's winner)
# and carry3 (the next tile's walk and loads, with the row statistics' plain loads,
# after this tile's S^T and dP^T are issued). reorder and carry2 (R1-R3's losers) are
# gone from the build. Suites with carry3 forced (also with the stream-K tail forced),
# racecheck and memcheck; compare_torch --backward with the forms side by side in one
# process (0 = the committed loop), in two orders.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s13_r4.sh
# Logs: bench/results/2026-12-01s13-bwd/r4/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s13_r4 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
P=POLYATTN_CUDA_HOPPER_BWD_PIPE S=POLYATTN_CUDA_HOPPER_BWD_SK M=POLYATTN_CUDA_HOPPER_BWD_LPT_MB
step_bg bwd-hopper-carry3 150 $H $P=carry3 test_backward --jobs 3
step_bg bwd-hopper-carry3-sk3 150 $H $P=carry3 $S=force:3 POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 3
step_bg bwd-default-carry3 150 env $P=carry3 test_backward --jobs 3
step_wait
step_bg racecheck-carry3 150 $H $P=carry3 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_bg memcheck-carry3 150 $H $P=carry3 $S=force:2 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
show() { python3 bench/gpu/torch_summary.py "$1" | tee -a "$SUMMARY"; }
step torch 300 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --variants "$P=carry3,carry,0,0#2,carry#2,carry3#2" --json "$LOG/torch.jsonl"
show "$LOG/torch.jsonl"
pa_gpu_pack_logs
pa_gpu_finish
