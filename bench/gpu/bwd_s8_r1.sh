#!/bin/bash
# Eighth session R1 (helper queue, 150 s): the backward's fixed costs. Defaults of this
# tree: the 16-bit prep/convert kernels (POLYATTN_CUDA_BWD_PREP unset = fast; "old" the
# per-row kernels; "memset" the 16-bit prep without zeroing, dQ's accumulator cleared by
# cudaMemsetAsync) and dK/dV stored as 4-byte pairs where the staged hd128 epilogue does
# not apply (hd64; POLYATTN_CUDA_HOPPER_BWD_SCHED=default-pair turns it off).
# From a devkit with test_backward, polyattn, bench/compare_torch.py, bindings/python:
#   cd KIT && source ./env && OUT=<dir> bash run.sh
#   1. correctness, two suites in parallel: forced Hopper with groups of 3, default choice
#   2. speed alone: compare_torch --backward (bf16, hd 128/64, S 2048/8192/16384, causal
#      and not), variants in one process: fast (first), old, memset, fast-pair, fast#2, old#2
#   3. ncu: prep and convert kernel durations, old against fast, hd128/hd64 S2048
# Logs: bench/results/2026-12-01s8-bwd/r1/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
export POLYATTN_TEST_BACKENDS=cuda
sum() { echo "== $1 rc=$(cat "$R/$1.rc" 2>/dev/null)"; grep -hE "Synthesis|\[FAIL\]|CRASH|ERROR SUMMARY" "$R/$1.log" | head -6 | cut -c1-200; }
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$R/nvidia-smi.txt" 2>&1
bg suite-hopper-group3 40 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 8
bg suite-default-choice 40 test_backward --jobs 8
wait
for n in suite-hopper-group3 suite-default-choice; do sum $n; done
echo "correctness $((SECONDS-T0))s"
P=POLYATTN_CUDA_BWD_PREP
timeout 70 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 \
  --seqlens 2048,8192,16384 \
  --variants "$P=fast,old,memset,fast&POLYATTN_CUDA_HOPPER_BWD_SCHED=default-pair,fast#2,old#2" \
  --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-backward.jsonl" > "$R/torch-backward.txt" 2>&1
echo "== compare rc=$?"; grep -E "^bf16|BWD_PREP|geomean|gradients" "$R/torch-backward.txt" | cut -c1-150
echo "compare done $((SECONDS-T0))s"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
for d in 128 64; do for m in old fast; do
  timeout 12 env $P=$m "$NCU" --clock-control none --kernel-name regex:'pa_bwd_(prep|convert)' \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq 2048 --batch 8 \
    --heads $((2048/d)) --dim $d > "$R/ncu-d$d-$m.log" 2>&1
  echo "== ncu d$d $m rc=$?"; grep -E "pa_bwd_|gpu__time_duration|dram__throughput" "$R/ncu-d$d-$m.log" | sed 's/(pa_problem.*//' | cut -c1-120 | head -12
done; done
echo "total $((SECONDS-T0))s"
