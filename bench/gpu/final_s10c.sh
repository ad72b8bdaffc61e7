#!/bin/bash
# Tenth session, R5: after the review, the tail order never covers the first round of
# tiles (host side: tail = min(2 grid, 256, units - grid)), so that no block waits for
# the order before its first tile. Block/auto suites (default, 2 and 7 blocks), BLOCK
# timings at S8192 and on a 256-tile problem (S2048, B1, Hq16, where the tail used to
# be every tile), beside the ninth session's module (.devkit/old).
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s10c.sh
# Logs: bench/results/2026-12-01s10-tile/final3/.
gzip -d .devkit/lib/*.gz .devkit/old/*.gz 2>/dev/null # carried compressed (64 MiB)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s10c test_forward polyattn
export POLYATTN_TEST_BACKENDS=cuda
OLD=$PWD/.devkit/old
step_bg block-default 60 env POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 5
step_bg block-b2 60 env POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 5
step_bg block-b7 60 env POLYATTN_CUDA_HOPPER_BLOCKS=7 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 5
step_wait
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --sparsity block --block 128 --density 0.25 --vs-dense"
for i in 1 2; do
  timed b25-new-$i $B --seq 8192 --batch 2 --repeat 60
  timed b25-old-$i env POLYATTN_BACKEND_PATH=$OLD $B --seq 8192 --batch 2 --repeat 60
done
for i in 1 2; do
  timed s2k-new-$i $B --seq 2048 --batch 1 --repeat 200
  timed s2k-notail-$i env POLYATTN_CUDA_HOPPER_TAIL=0 $B --seq 2048 --batch 1 --repeat 200
  timed s2k-old-$i env POLYATTN_BACKEND_PATH=$OLD $B --seq 2048 --batch 1 --repeat 200
done
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
