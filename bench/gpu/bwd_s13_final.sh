#!/bin/bash
# Thirteenth session, the committed build: dQ carried across the loop's top (decision
# 102) as the Hopper backward's default. Suites (default choice; forced Hopper; with
# the stream-K tail forced by dependent launch and by two grids, groups of 3), test_cuda,
# memcheck / racecheck / synccheck on the default, then compare_torch --backward with
# cuDNN, bf16 and fp16, the committed loop (PIPE=0) beside the default in the same
# process, and a second process bf16 only.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s13_final.sh
# Logs: bench/results/2026-12-01s13-bwd/final/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s13_final test_backward test_cuda polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
P=POLYATTN_CUDA_HOPPER_BWD_PIPE S=POLYATTN_CUDA_HOPPER_BWD_SK L=POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH
step_bg bwd-default 150 test_backward --jobs 3
step_bg bwd-hopper 150 $H test_backward --jobs 3
step_bg bwd-hopper-sk3-pdl-g3 150 $H $S=force:3 POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 3
step_wait
step_bg bwd-hopper-sk5-two 150 $H $S=force:5 $L=two test_backward --jobs 3
step_bg bwd-hopper-pipe0 150 $H $P=0 test_backward --jobs 3
step_bg test-cuda 150 test_cuda --jobs 3
step_wait
C="POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3"
step_bg memcheck 150 $H $S=force:2 $C "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_bg racecheck 150 $H $C "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_bg synccheck 150 $H $C "$SAN" --tool synccheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
show() { python3 bench/gpu/torch_summary.py "$1" | tee -a "$SUMMARY"; }
step torch 330 python3 bench/compare_torch.py --backward --no-efficient --dtypes bf16,fp16 --dims 128,64 --seqlens 2048,8192,16384 --variants "$P=default,0,default#2" --json "$LOG/torch.jsonl"
show "$LOG/torch.jsonl"
step torch2 200 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --json "$LOG/torch2.jsonl"
show "$LOG/torch2.jsonl"
pa_gpu_pack_logs
pa_gpu_finish
