#!/bin/bash
# Twelfth session, after the review of the whole change: the one-grid form of the
# stream-K tail removed, the dependent launch through pdl.cuh's pa_launch_dependent
# (also the decode merge's). Suites (default, Hopper with the tail forced by dependent
# launch and by two grids), the decode forward sweep with the merge as a dependent
# launch, memcheck with the tail forced, one compare_torch --backward.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s12_review.sh
# Logs: bench/results/2026-12-01s12-bwd/review/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s12_review test_backward test_forward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
S=POLYATTN_CUDA_HOPPER_BWD_SK L=POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH
step_bg bwd-default 120 test_backward --jobs 3
step_bg bwd-hopper-sk3-pdl 120 $H $S=force:3 test_backward --jobs 3
step_bg bwd-hopper-sk5-two 120 $H $S=force:5 $L=two test_backward --jobs 3
step_bg fwd-decode-pdl 120 env POLYATTN_CUDA_KERNEL=decode POLYATTN_CUDA_DECODE_MERGE=pdl test_forward --jobs 3
step_wait
step memcheck 90 $H $S=force:2 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step torch 120 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --json "$LOG/torch.jsonl"
python3 bench/gpu/torch_summary.py "$LOG/torch.jsonl" | tee -a "$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
