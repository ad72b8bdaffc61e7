#!/bin/bash
# After the final run's racecheck (2 hazards: the persistent kernel's tile hand-off,
# ordered only by Q's barrier, which the TMA's bytes complete): the hand-off's own
# barrier pair. Racecheck on the BLOCK case and a dense persistent case (2 blocks), the
# forced persistent sweep with 7 blocks, the block/auto sweep, BLOCK 25% timings.
# Logs: bench/results/2026-12-01s8-h200-final/fix/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
export POLYATTN_TEST_BACKENDS=cuda
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
sum() { for n in "$@"; do echo "== $n rc=$(cat "$R/$n.rc" 2>/dev/null) $(grep -hE "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" "$R/$n.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-200)"; grep -h "\[FAIL\]\|Error: Race" "$R/$n.log" | head -4 | cut -c1-200; done; }
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
bg racecheck-block 100 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block128_hopper_list_empty_rows $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
bg racecheck-dense-p 100 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=d128_s128_b2 $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
bg fwd-persist-7 100 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 8
wait; sum racecheck-block racecheck-dense-p fwd-persist-7
bg sweep-block-auto 25 env POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
wait; sum sweep-block-auto
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2; do timeout 12 $B --density 0.25 > "$R/block25-$i.log" 2>&1; echo "== block25-$i $(grep -E "^forward|^vs dense" "$R/block25-$i.log" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')"; done
echo "total $((SECONDS-T0))s"
# A second call on the same build (the device still held), as a command line: the whole
# forced-Hopper sweep and three more BLOCK 25% runs and one at 100% (logs in fix/ too):
#   POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper timeout 90 test_forward \
#     --filter 'forward/sweep' --jobs 16
#   for i in 3 4 5; do $B --density 0.25; done; $B --density 1.0
