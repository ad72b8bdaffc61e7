#!/bin/bash
# Tenth session, R2 (issue 5): R1's whole-context hand-off reverted (slower); kept:
# under a block mask the last two rounds of tiles are taken longest first
# (POLYATTN_CUDA_HOPPER_TAIL=0: in the grid's order), and the hand-off's phase is
# the tile count's parity. .devkit/old/ holds the CUDA module of 39b1580, loaded
# through POLYATTN_BACKEND_PATH. Checks: forced persistent sweep with 7 blocks, the
# forward suite, block/auto with 2 blocks and without the tail order, test_cuda,
# racecheck and memcheck on the persistent kernel; then BLOCK 25% / 100% against
# dense (new, new without the tail order, old, alternating), ncu of the BLOCK kernel,
# and SDPA beside the new and the old module (dense short and causal problems).
# Run: source .devkit/env; OUT=dir bash bench/gpu/tile_s10_r2.sh
# Logs: bench/results/2026-12-01s10-tile/r2/.
gzip -d .devkit/lib/*.gz .devkit/old/*.gz 2>/dev/null # carried compressed (64 MiB)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup tile_s10_r2 test_forward test_cuda polyattn
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
OLD=$PWD/.devkit/old
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$LOG/gpu.txt" 2>&1
POLYATTN_BACKEND_PATH=$OLD POLYATTN_LOG=debug polyattn run --backend cuda --dim 128 --seq 256 --heads 2 2>&1 | grep -i "module\|backend cuda" | head -3 > "$LOG/old-module.txt"

step_bg fwd-persist-7 90 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 16
step_wait
step_bg fwd-default 120 test_forward --jobs 16
step_wait
step_bg block-b2 60 env POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 6
step_bg block-notail 60 env POLYATTN_CUDA_HOPPER_TAIL=0 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 6
step_bg test-cuda 60 test_cuda --jobs 4
step_wait
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step_bg race-p 120 env POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block128_hopper_list_empty_rows,block_dense1,d128_s128_b2 "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
step_bg memcheck-p 120 env POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=d128_s128_b2,s1000,block128,block_dense1,varlen_empty,guard_strided_varlen,auto_clustered_varlen "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 6
step_wait
echo "t=$SECONDS" | tee -a "$SUMMARY"

B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2 3 4 5; do
  timed b25-new-$i $B --density 0.25
  timed b25-notail-$i env POLYATTN_CUDA_HOPPER_TAIL=0 $B --density 0.25
  timed b25-old-$i env POLYATTN_BACKEND_PATH=$OLD $B --density 0.25
done
timed b100-new $B --density 1.0
timed b100-old env POLYATTN_BACKEND_PATH=$OLD $B --density 1.0
S16="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 16384 --batch 1 --repeat 30 --vs-dense --sparsity block --block 128 --density 0.25"
timed b25-s16k-new $S16
timed b25-s16k-notail env POLYATTN_CUDA_HOPPER_TAIL=0 $S16
timed b25-s16k-old env POLYATTN_BACKEND_PATH=$OLD $S16
D64="polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 8192 --batch 2 --repeat 40 --vs-dense --sparsity block --block 128 --density 0.25"
timed b25-d64-new $D64
timed b25-d64-old env POLYATTN_BACKEND_PATH=$OLD $D64
echo "t=$SECONDS" | tee -a "$SUMMARY"

NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum
P="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 1 --sparsity block --block 128 --density 0.25"
nc() { local n=$1; shift; timeout 60 "$@" > "$LOG/ncu-$n.txt" 2>&1; echo "ncu $n rc=$? $(grep -E "gpu__|sm__|lts__|smsp__" "$LOG/ncu-$n.txt" | awk '{print $1, $(NF)}' | tr '\n' ' ')" | tee -a "$SUMMARY"; }
K="--clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --metrics $M"
nc b25-new "$NCU" $K $P
nc b100-new "$NCU" $K ${P/0.25/1.0}
echo "t=$SECONDS" | tee -a "$SUMMARY"

export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
tab() { grep -E "^bf16|VARIANT=|geomean" "$LOG/$1.txt" | grep -v "first line" | cut -c1-150 | tee -a "$SUMMARY"; }
step torch-new 150 python3 bench/compare_torch.py --dtypes bf16 --dims 128,64 --seqlens 512,2048,8192 --no-efficient --json "$LOG/torch-new.jsonl"
cp "$LOG/torch-new.log" "$LOG/torch-new.txt"; tab torch-new
step torch-old 150 env POLYATTN_BACKEND_PATH=$OLD python3 bench/compare_torch.py --dtypes bf16 --dims 128,64 --seqlens 512,2048,8192 --no-efficient --json "$LOG/torch-old.jsonl"
cp "$LOG/torch-old.log" "$LOG/torch-old.txt"; tab torch-old
echo "total t=$SECONDS" | tee -a "$SUMMARY"
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
