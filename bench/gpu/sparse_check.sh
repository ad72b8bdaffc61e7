#!/usr/bin/env bash
# sparse_check.sh: issue 5's sparse modes on CUDA, ON A MACHINE WITH AN NVIDIA GPU
# (about 90 s). Same devkit setup as check_cuda.sh; from the repository root:
#
#   bash bench/gpu/sparse_check.sh        # logs to $OUT, or ./sparse-check-logs
#
# 1. the forward sweep's BLOCK, AUTO_BLOCK and 2:4 cases on CUDA against the oracle
#    (AUTO_BLOCK cases also require the GPU estimator's mask to equal the CPU's);
# 2. the backward's 2:4 and BLOCK cases on CUDA; test_cuda's refusals (2:4 on a forced
#    decode kernel, AUTO_BLOCK's backward) and AUTO_BLOCK captured in a CUDA graph;
# 3. timings against dense on the same inputs (`--vs-dense`, and `--vs-kernel ampere`:
#    the Ampere kernel's dense time beside the default, on the H200 the Hopper
#    kernel's), bf16: BLOCK at 25% with 128x128 (the Hopper kernel's tile list) and
#    64x64 blocks (the Ampere kernel's), and 128x128 at 100% (hd128 S8192), AUTO_BLOCK
#    on random inputs at S16384 (falls back to the dense kernel: the difference is the
#    estimator's cost), 2:4 at hd128
#    S8192 with and without the selection step (POLYATTN_CUDA_SP24_SELECT=0), and
#    AUTO_BLOCK on structured inputs (S16384, thresholds 0.9 / 0.95 / 0.99, cut-off 1:
#    the speed-up and error table of RESULTS).
# The timings only print (bench/RESULTS.md, "Sparse attention (issue 5)", says what
# they were); a step fails on a test failure, a crash or its time limit.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
# shellcheck source=bench/gpu/lib.sh
source bench/gpu/lib.sh
pa_gpu_setup sparse-check polyattn test_forward test_backward test_cuda

step sweep 60 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=block,auto,nm24 \
  test_forward --filter 'forward/sweep' --jobs 8
step backward 30 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=nm24,block \
  test_backward --filter 'backward/sweep' --jobs 8
step cuda-refusals 30 test_cuda --verbose --filter 'cuda/unsupported_is_refused'
step cuda-graph-auto 30 test_cuda --verbose --filter 'cuda/graph_capture_auto_block_bf16'

A=(--backend cuda --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 10 --no-check
   --vs-dense --vs-kernel ampere)
step block128-25 20 polyattn run "${A[@]}" --sparsity block --block 128 --density 0.25
step block128-100 20 polyattn run "${A[@]}" --sparsity block --block 128 --density 1.0
step block64-25 20 polyattn run "${A[@]}" --sparsity block --block 64 --density 0.25
step 2to4-d128 20 polyattn run "${A[@]}" --sparsity 2:4
step 2to4-d128-noselect 20 env POLYATTN_CUDA_SP24_SELECT=0 polyattn run "${A[@]}" --sparsity 2:4
step auto-random-s16384 25 polyattn run --backend cuda --dtype bf16 --batch 1 --heads 16 \
  --dim 128 --seq 16384 --repeat 10 --no-check --vs-dense --sparsity auto
for t in 0.9 0.95 0.99; do
  step "auto-structured-$t" 20 polyattn run --backend cuda --dtype bf16 --batch 1 --heads 16 \
    --dim 128 --seq 16384 --repeat 5 --no-check --vs-dense --sparsity auto --structured \
    --threshold "$t" --cutoff 1
done
grep -h "^problem\|^forward\|^vs dense\|auto:\|keeps" "$LOG"/block*.log "$LOG"/2to4*.log \
  "$LOG"/auto*.log | tee -a "$SUMMARY"
pa_gpu_finish
