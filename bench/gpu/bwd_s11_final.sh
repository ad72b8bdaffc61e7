#!/bin/bash
# Eleventh session, final check of the committed backward (issue 4): dS stored K-major by
# stmatrix .trans and dQ's A operand read K-major (the R5 "dsk" kernels, now the only
# form). Suites (default choice; forced Hopper with groups of 3; forced Hopper ksplit),
# test_cuda, memcheck and racecheck on sweep cases, then compare_torch --backward with
# flash and cuDNN (bf16 hd 128/64, S 2048/8192/16384, causal and not; fp16 at S8192).
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_final.sh
# Logs: bench/results/2026-12-01s11-bwd/final/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_final test_backward test_cuda polyattn
export POLYATTN_TEST_BACKENDS=cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$LOG/gpu.txt" 2>&1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
CASES='bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3'
step_bg bwd-default 90 test_backward --jobs 5
step_bg bwd-hopper3 90 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 5
step_bg bwd-ksplit 90 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_VARIANT=ksplit test_backward --jobs 3
step_wait
step_bg test-cuda 60 test_cuda --jobs 4
step_bg memcheck 90 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_TEST_CASES=$CASES "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_bg racecheck 120 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d96_sq113_sk3 "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
tab() { grep -E "^bf16|^fp16|geomean" "$LOG/$1.log" | cut -c1-150 | tee -a "$SUMMARY"; }
step torch-bwd 200 python3 bench/compare_torch.py --backward --no-efficient --dtypes bf16 --dims 128,64 \
  --seqlens 2048,8192,16384 --json "$LOG/torch-bwd.jsonl"
tab torch-bwd
step torch-bwd-f16 100 python3 bench/compare_torch.py --backward --no-efficient --dtypes fp16 --dims 128,64 \
  --seqlens 8192 --json "$LOG/torch-bwd-f16.jsonl"
tab torch-bwd-f16
echo "total t=$SECONDS" | tee -a "$SUMMARY"
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
