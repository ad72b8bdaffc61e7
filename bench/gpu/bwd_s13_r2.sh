#!/bin/bash
# Thirteenth session, R2: the Hopper backward's tile loop in two new forms (decision
# 102), POLYATTN_CUDA_HOPPER_BWD_PIPE=reorder (dV, dQ, dK; dQ's adds under dK) and
# =carry (dQ left in flight across the loop's top, added after the next S^T is issued;
# dS in two buffers). Suites with each forced (carry also with the stream-K tail
# forced), racecheck and memcheck with carry, then compare_torch --backward with the
# forms side by side in one process (0 = the committed loop). R2: carry's adds moved
# before the next tile's S^T (R1's form, adds after the S^T issue, had ptxas serialize
# the wgmmas: C7514, and ran 7-13% slower); the forms in two orders.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s13_r2.sh
# Logs: bench/results/2026-12-01s13-bwd/r2/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s13_r2 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
P=POLYATTN_CUDA_HOPPER_BWD_PIPE S=POLYATTN_CUDA_HOPPER_BWD_SK
step_bg bwd-hopper-reorder 150 $H $P=reorder test_backward --jobs 3
step_bg bwd-hopper-carry 150 $H $P=carry test_backward --jobs 3
step_bg bwd-hopper-carry-sk3 150 $H $P=carry $S=force:3 POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 3
step_wait
step_bg bwd-default-carry 150 env $P=carry test_backward --jobs 3
step_bg racecheck-carry 150 $H $P=carry POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_bg memcheck-carry 150 $H $P=carry $S=force:2 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 1
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step torch 300 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --variants "$P=0,reorder,carry,carry#2,reorder#2,0#2" --json "$LOG/torch.jsonl"
python3 bench/gpu/torch_summary.py "$LOG/torch.jsonl" | tee -a "$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
