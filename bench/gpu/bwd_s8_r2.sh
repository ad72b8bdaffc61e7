#!/bin/bash
# Eighth session R2 (helper queue, 150 s): the tree's defaults after R1: the 16-bit
# prep/convert kernels with 8 rows per warp (POLYATTN_CUDA_BWD_PREP unset; "fast4" R1's
# 4 rows per warp, "old" the per-row kernels) and the Hopper dK/dV pair stores (hd64);
# POLYATTN_CUDA_HOPPER_BWD_LPT_MB=n times the causal grouped order's L2 budget (16 MiB).
# From a devkit with test_backward, polyattn, bench/compare_torch.py, bindings/python:
#   cd KIT && source ./env && OUT=<dir> bash run.sh
#   1. correctness in parallel: backward suite with the default choice, forced Hopper with
#      groups of 3, memcheck on four sweep cases (hd64 pair stores and the two-rows-per-
#      step convert, head dims 40/72, varlen + seqused, odd row counts)
#   2. speed alone: compare_torch --backward (bf16, hd 128/64, S 2048/8192/16384, causal
#      and not), variants in one process: default (first), fast4, old, LPT_MB=8, LPT_MB=48
#   3. ncu: prep and convert durations with the default, hd128/hd64 S2048
#   4. with the time left (<= 35 s): the suite forced on the Ampere backward
# Logs: bench/results/2026-12-01s8-bwd/r2/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
export POLYATTN_TEST_BACKENDS=cuda
sum() { echo "== $1 rc=$(cat "$R/$1.rc" 2>/dev/null)"; grep -hE "Synthesis|\[FAIL\]|CRASH|ERROR SUMMARY" "$R/$1.log" | head -6 | cut -c1-200; }
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$R/nvidia-smi.txt" 2>&1
bg suite-default-choice 42 test_backward --jobs 7
bg suite-hopper-group3 42 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 7
bg memcheck 42 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_TEST_CASES='bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3' $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
wait
for n in suite-default-choice suite-hopper-group3 memcheck; do sum $n; done
echo "correctness $((SECONDS-T0))s"
P=POLYATTN_CUDA_BWD_PREP L=POLYATTN_CUDA_HOPPER_BWD_LPT_MB
timeout 78 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 \
  --seqlens 2048,8192,16384 --variants "$P=fast8,fast4,old,fast8&$L=8,fast8&$L=48" \
  --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-backward.jsonl" > "$R/torch-backward.txt" 2>&1
echo "== compare rc=$?"; grep -E "^bf16|BWD_PREP|geomean|gradients" "$R/torch-backward.txt" | cut -c1-150
echo "compare done $((SECONDS-T0))s"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
for d in 128 64; do
  timeout 10 "$NCU" --clock-control none --kernel-name regex:'pa_bwd_(prep|convert)' --launch-count 2 \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq 2048 --batch 8 \
    --heads $((2048/d)) --dim $d > "$R/ncu-d$d.log" 2>&1
  echo "== ncu d$d rc=$?"; grep -E "pa_bwd_|gpu__time_duration|dram__throughput" "$R/ncu-d$d.log" | grep -v PROF | sed 's/(pa_problem.*//' | cut -c1-120 | head -8
done
# 4. what time is left: the backward suite forced on the Ampere kernel (its prep and
#    convert are these kernels too)
left=$((143 - SECONDS + T0)); [ $left -gt 35 ] && left=35
if [ $left -gt 5 ]; then
  timeout $left env POLYATTN_CUDA_BACKWARD_KERNEL=ampere test_backward --jobs 14 > "$R/suite-ampere.log" 2>&1
  echo $? > "$R/suite-ampere.rc"; sum suite-ampere
fi
echo "total $((SECONDS-T0))s"
