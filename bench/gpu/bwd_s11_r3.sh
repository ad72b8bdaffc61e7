#!/bin/bash
# Eleventh session R3 (issue 4): clusters of two CTAs adding their dQ tiles in shared memory
# (POLYATTN_CUDA_HOPPER_BWD_KO=cl2: key blocks 2m, 2m + 1 of a pair in one cluster walk
# the same query tiles; each CTA sums half of the dQ rows of both over DSMEM and reduces
# them to global memory with TMA: half R2's reduction bytes). Suites with cl2 forced,
# memcheck on four sweep cases, then compare_torch --backward: none, cl2, tma (R2), none
# again, cl2 again.
# Needs the measurement patch: `git checkout eb1be17 && patch -p1 < bench/gpu/bwd_ko_s11.patch`
# (the knock-outs and variants; R1-R4 ran parts of it), a build and a devkit; then
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_r3.sh
# Logs: bench/results/2026-12-01s11-bwd/r3/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_r3 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
K=POLYATTN_CUDA_HOPPER_BWD_KO
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$LOG/gpu.txt" 2>&1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step_bg suite-cl2-hopper3 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $K=cl2 POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 6
step_bg suite-cl2-default 60 env $K=cl2 test_backward --jobs 6
step_bg memcheck-cl2 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $K=cl2 POLYATTN_TEST_CASES='bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3' "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step torch-bwd 240 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 \
  --seqlens 2048,8192,16384 --variants "$K=none,cl2,tma,none#2,cl2#2" --json "$LOG/torch-bwd.jsonl"
grep -E "^bf16|BWD_KO|geomean" "$LOG/torch-bwd.log" | cut -c1-150 | tee -a "$SUMMARY"
echo "total t=$SECONDS" | tee -a "$SUMMARY"
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
