#!/bin/bash
# Eleventh session R2 (issue 4): dQ through shared memory and TMA tensor reductions
# (POLYATTN_CUDA_HOPPER_BWD_KO=tma, the PA_HBWD_TMAQ kernels) against the per-thread
# red.global.add.v2 (R1: skipping those adds alone made the main kernel 1.6x faster).
# Suites with tma forced (Hopper with groups of 3; the default choice), memcheck on four
# sweep cases, then compare_torch --backward: none (the default), tma, the old row-bulk
# form (POLYATTN_CUDA_HOPPER_BWD_DQ=bulk), none again.
# Needs the measurement patch: `git checkout eb1be17 && patch -p1 < bench/gpu/bwd_ko_s11.patch`
# (the knock-outs and variants; R1-R4 ran parts of it), a build and a devkit; then
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_r2.sh
# Logs: bench/results/2026-12-01s11-bwd/r2/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_r2 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
K=POLYATTN_CUDA_HOPPER_BWD_KO
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$LOG/gpu.txt" 2>&1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step_bg suite-tma-hopper3 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $K=tma POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 6
step_bg suite-tma-default 60 env $K=tma test_backward --jobs 6
step_bg memcheck-tma 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $K=tma POLYATTN_TEST_CASES='bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3' "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step torch-bwd 240 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 \
  --seqlens 2048,8192,16384 --variants "$K=none,tma,none&POLYATTN_CUDA_HOPPER_BWD_DQ=bulk,none#2,tma#2" --json "$LOG/torch-bwd.jsonl"
grep -E "^bf16|BWD_KO|geomean" "$LOG/torch-bwd.log" | cut -c1-150 | tee -a "$SUMMARY"
echo "total t=$SECONDS" | tee -a "$SUMMARY"
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
