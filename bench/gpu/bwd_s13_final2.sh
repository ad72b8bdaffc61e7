#!/bin/bash
# Thirteenth session, the last build: decision 102's carried dQ and the walk's jumps
# (bwd_common.cuh: a causal block goes straight to its first query tile instead of
# testing the ones before it; the timing diagnostic had the prologue at 21.6 µs per
# block at hd128 causal S16384 against 2.6 non-causal). Suites (default choice; forced
# Hopper; Hopper with the stream-K tail forced, groups of 3; forced Ampere and Volta,
# whose walk is the same code), memcheck, then compare_torch --backward (bf16) in two
# processes. Sized for the session's last ~5 device minutes.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s13_final2.sh
# Logs: bench/results/2026-12-01s13-bwd/final2/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s13_final2 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
K=POLYATTN_CUDA_BACKWARD_KERNEL
step_bg bwd-default 150 test_backward --jobs 3
step_bg bwd-hopper 150 env $K=hopper test_backward --jobs 3
step_bg bwd-hopper-sk3-g3 150 env $K=hopper POLYATTN_CUDA_HOPPER_BWD_SK=force:3 POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 3
step_bg bwd-ampere 150 env $K=ampere test_backward --jobs 2
step_bg bwd-volta 150 env $K=volta test_backward --jobs 2
step_bg memcheck 150 env $K=hopper POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
show() { python3 bench/gpu/torch_summary.py "$1" | tee -a "$SUMMARY"; }
step torch 120 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --json "$LOG/torch.jsonl"
show "$LOG/torch.jsonl"
step torch2 120 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --json "$LOG/torch2.jsonl"
show "$LOG/torch2.jsonl"
pa_gpu_pack_logs
pa_gpu_finish
