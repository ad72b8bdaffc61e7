#!/bin/bash
# (Record of round R1; the option "s3" it times was removed after this round.)
# The Hopper backward's tile-loop options (POLYATTN_CUDA_HOPPER_BWD_OPT=stats,s3,
# sixth session R1) on an H200, from a devkit with compare_torch.py and the Python package:
#   cd KIT && source ./env && OUT=<dir> bash hbwd_s6_r1.sh
# Logs in $OUT; copies in bench/results/2026-11-30s6-h200-hbwd-*.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
st() { local n=$1 t=$2; shift 2; local t1=$SECONDS; timeout "$t" "$@" > "$R/$n.log" 2>&1; echo "== $n rc=$? $((SECONDS-t1))s"; grep -hE "Synthesis|FAIL|^backward" "$R/$n.log" | head -6 | cut -c1-220; }
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_BACKWARD_KERNEL=hopper
O=POLYATTN_CUDA_HOPPER_BWD_OPT
st suite-stats-s3 40 env $O=stats,s3 test_backward --jobs 12
st suite-stats 40 env $O=stats test_backward --jobs 12
P="polyattn run --backend cuda --backward --dtype bf16 --repeat 10 --no-check --seq 8192 --batch 2"
for c in "" "--causal"; do for d in 128 64; do for o in none stats s3 stats,s3; do
  st perf-d$d-$o$c 12 env $O=$o $P --heads $((2048/d)) --dim $d $c
done; done; done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
st ncu-d128 40 "$NCU" --clock-control none --kernel-name regex:pa_hopper_bwd --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section InstructionStats \
    polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq 4096 --batch 2 --heads 16 --dim 128
grep -E "Duration|Throughput|Busy|Stall|Warp Cycles|Issued|Eligible|Active Warps|Executed Ipc|Pipe" "$R/ncu-d128.log" | head -50
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
st memcheck-stats-s3 30 env $O=stats,s3 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d128_sq17_sk128,varlen $SAN --tool memcheck --error-exitcode 99 --print-limit 20 test_backward --filter 'backward/sweep' --jobs 4
echo "total $((SECONDS-T0))s"
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
"$CUOBJ" -res-usage lib/libpolyattn-cuda.so 2>&1 | grep -A1 "pa_hopper_bwd_kernelI13" > "$R/res-usage.txt"; grep -o "REG:[0-9]*.*LOCAL:[0-9]*" "$R/res-usage.txt" | head -12
