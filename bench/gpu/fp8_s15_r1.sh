#!/bin/bash
# Fifteenth session, R1 (issue 9, the FP8 forward): where the FP8 kernel's time goes, and
# three changes as variant bits (POLYATTN_CUDA_FP8_VARIANT; fwd_hopper_fp8.cu):
#   -g     P's 2^8 inside the exponent (no multiply in the pack)
#   -gs    and O's rescale skipped when no row of the warp moved its maximum
#   -k192  key tiles of 192 (V^T in three 64-byte-swizzled blocks)
# Steps: test_fp8 (the oracle cases) per variant; attn_speed fp8 hd128/hd64 S8192 for
# every variant in one process; ncu summary sections and the source page (SASS with
# warp-state samples per instruction) of serial and of the best new variant; memcheck,
# racecheck and synccheck on two small cases with the new variants.
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s15_r1.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s15_r1 test_fp8 attn_speed
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
for v in serial pipe serial-gs pipe-gs pingpong-gs serial-k192 serial-gs-k192 pipe-gs-k192 pingpong-gs-k192; do
  pa_fp8_test "$v"
done
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
ALL="$V=serial $V=pipe $V=pingpong $V=serial-g $V=serial-gs $V=pipe-g $V=pipe-gs $V=pingpong-gs $V=serial-k192 $V=serial-gs-k192 $V=pipe-gs-k192 $V=pingpong-gs-k192 $V=serial"
step speed-d128 120 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 $ALL
step speed-d64 120 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 $ALL
step speed-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal $V=serial $V=pipe $V=pipe-gs $V=serial-gs-k192 $V=pipe-gs-k192 $V=pingpong-gs-k192
step speed-bf16 30 $AS --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 -
for f in speed-d128 speed-d64 speed-d128-causal speed-bf16; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-150; done | tee -a "$SUMMARY"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats"
SRC="--section WarpStateStats --section SourceCounters --page source --csv --print-source sass"
ONE="attn_speed --backend cuda --dtype fp8 --warm 0 --iters 1 --batch 2 --heads 16 --dim 128 --seq 8192"
for v in serial pipe-gs pipe-gs-k192; do
  step "ncu-$v" 90 env $V=$v "$NCU" --clock-control none -k regex:fp8 --launch-count 1 $SEC $ONE -
  step "src-$v" 120 sh -c "$V=$v \"$NCU\" --clock-control none -k regex:fp8 --launch-count 1 $SRC $ONE - > \"$LOG/src-$v.csv\""
  grep -E "Duration  |Registers Per|Executed Instructions  |Issue Slots Busy|Warp Cycles Per Issued|Eligible Warps|No Eligible|Tensor|Pipe" "$LOG/ncu-$v.log" | cut -c1-150 | sed "s/^/$v /" | tee -a "$SUMMARY"
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
CASES=d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block
for v in pipe-gs pipe-gs-k192 serial-gs-k192; do
  for tool in memcheck racecheck synccheck; do
    step "$tool-$v" 90 env $V=$v POLYATTN_TEST_CASES=$CASES "$CS" --tool $tool --error-exitcode 9 test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
    grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|Synthesis" "$LOG/$tool-$v.log" | sed "s/^/$tool-$v: /" | tee -a "$SUMMARY"
  done
done
cut -c1-220 "$LOG/oracle-lines.txt" | tee -a "$SUMMARY"
gzip -f "$LOG"/*.csv
pa_gpu_pack_logs
pa_gpu_finish
