#!/bin/bash
# The Hopper backward after the sixth session's instruction cuts (uniform descriptors,
# the division-free tile walk, whole-row dQ adds; R3 of the session) on an H200, from a
# devkit with compare_torch.py and the Python package:
#   cd KIT && source ./env && OUT=<dir> bash hbwd_s6_r3.sh
# Logs in $OUT; a copy in bench/results/2026-11-30s6-h200-hbwd-r3.txt.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
st() { local n=$1 t=$2; shift 2; local t1=$SECONDS; timeout "$t" "$@" > "$R/$n.log" 2>&1; echo "== $n rc=$? $((SECONDS-t1))s"; grep -hE "Synthesis|FAIL|^backward" "$R/$n.log" | head -6 | cut -c1-220; }
export POLYATTN_TEST_BACKENDS=cuda
st suite-default-choice 40 test_backward --jobs 12
st suite-ampere 40 env POLYATTN_CUDA_BACKWARD_KERNEL=ampere test_backward --jobs 12
S=POLYATTN_CUDA_HOPPER_BWD_STATS
P="polyattn run --backend cuda --backward --dtype bf16 --repeat 10 --no-check --seq 8192 --batch 2"
for c in "" "--causal"; do for d in 128 64; do for o in async load; do
  st perf-d$d-$o$c 12 env $S=$o $P --heads $((2048/d)) --dim $d $c
done; done; done
st suite-stats-d64 40 env $S=async POLYATTN_CUDA_BACKWARD_KERNEL=hopper test_backward --jobs 12
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
st ncu-d128 40 "$NCU" --clock-control none --kernel-name regex:pa_hopper_bwd --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section InstructionStats \
    polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq 4096 --batch 2 --heads 16 --dim 128
grep -E "Duration|Issue Slots|Issued Instructions  |No Eligible|Compute \(SM\)" "$R/ncu-d128.log" | head
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
st memcheck-default 30 env POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d128_sq17_sk128,varlen $SAN --tool memcheck --error-exitcode 99 --print-limit 20 test_backward --filter 'backward/sweep' --jobs 4
echo "total $((SECONDS-T0))s"
