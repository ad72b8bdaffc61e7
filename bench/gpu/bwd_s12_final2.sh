#!/bin/bash
# Twelfth session, the last build: after the review (the workers' grid is a dependent
# launch only where a whole-block grid precedes it) and the PDL helpers moved to
# pdl.cuh (shared with the decode merge). Suites (default choice, Hopper with the tail
# forced in its launch forms, decode via test_cuda and the forward suite's decode cases),
# the prep forms bit for bit, memcheck with the tail forced, one compare_torch --backward.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s12_final2.sh
# Logs: bench/results/2026-12-01s12-bwd/final2/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s12_final2 test_backward test_cuda test_forward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
S=POLYATTN_CUDA_HOPPER_BWD_SK L=POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH
step_bg bwd-default 120 test_backward --jobs 3
step_bg bwd-hopper-sk3-pdl 120 $H $S=force:3 test_backward --jobs 3
step_bg bwd-hopper-sk5-two 120 $H $S=force:5 $L=two test_backward --jobs 3
step_bg test-cuda 120 test_cuda --jobs 2
step_bg fwd-decode 120 env POLYATTN_CUDA_KERNEL=decode test_forward --jobs 3
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step_bg prep-bitwise 120 python3 bench/gpu/prep_bitwise.py
step_bg memcheck 90 $H $S=force:2 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
tail -1 "$LOG/prep-bitwise.log" | tee -a "$SUMMARY"
step torch 150 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --json "$LOG/torch.jsonl"
python3 bench/gpu/torch_summary.py "$LOG/torch.jsonl" | tee -a "$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
