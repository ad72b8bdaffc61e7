#!/bin/bash
# Tenth session, R4 = the check of the committed build: R2's kernels exactly (R3's
# O zeroing at each tile's start reverted: ~1% slower under BLOCK, within the
# spread) and the test switch POLYATTN_CUDA_HOPPER_O_TMA=0 (host side). Suites,
# sanitizers, BLOCK against dense beside the ninth session's module (.devkit/old),
# SDPA in the same process on the standard sweep.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s10b.sh
# Logs: bench/results/2026-12-01s10-tile/final2/.
gzip -d .devkit/lib/*.gz .devkit/old/*.gz 2>/dev/null # carried compressed (64 MiB)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s10b test_forward test_cuda polyattn
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
OLD=$PWD/.devkit/old
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$LOG/gpu.txt" 2>&1

step_bg fwd-default 120 test_forward --jobs 16
step_wait
step_bg fwd-persist-7 90 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 16
step_wait
step_bg fwd-otma0 90 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_O_TMA=0 test_forward --filter 'forward/sweep' --jobs 16
step_wait
step_bg block-b2 60 env POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 6
step_bg test-cuda 60 test_cuda --jobs 4
step_wait
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step_bg race-p 120 env POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block128_hopper_list_empty_rows,block_dense1,d128_s128_b2 "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
step_bg memcheck 120 env POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=d128_s128_b2,s1000,block128,block_dense1,d256_s255,varlen_empty,guard_strided_varlen,auto_clustered_varlen "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 6
step_wait
echo "t=$SECONDS" | tee -a "$SUMMARY"

B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2 3 4; do
  timed b25-new-$i $B --density 0.25
  timed b25-old-$i env POLYATTN_BACKEND_PATH=$OLD $B --density 0.25
done
timed b100-new $B --density 1.0
timed b25-s16k-new polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 16384 --batch 1 --repeat 30 --vs-dense --sparsity block --block 128 --density 0.25
echo "t=$SECONDS" | tee -a "$SUMMARY"

export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
tab() { grep -E "^bf16|VARIANT=|geomean" "$LOG/$1.log" | grep -v "first line" | cut -c1-150 | tee -a "$SUMMARY"; }
step torch-fwd 200 python3 bench/compare_torch.py --dtypes bf16 --dims 128,64 --seqlens 512,2048,8192,16384 --no-efficient --json "$LOG/torch-fwd.jsonl"
tab torch-fwd
echo "total t=$SECONDS" | tee -a "$SUMMARY"
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
