#!/bin/bash
# Eleventh session, profile for the next step (issue 4): ncu stall reasons of the
# committed Hopper backward's main kernel (warp states per issued instruction, issue
# activity, tensor pipe), hd128 and hd64 at S8192 B2 and hd64 at S2048 B8, bf16.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_ncu.sh
# Logs: bench/results/2026-12-01s11-bwd/ncu/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_ncu polyattn
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,gpu__time_duration.sum,smsp__inst_executed.sum'
for c in "128 8192 2" "64 8192 2" "64 2048 8"; do
  set -- $c
  step ncu-d$1-s$2 60 "$NCU" --clock-control none --kernel-name regex:'pa_hopper_bwd_kernel' --launch-count 1 \
    --metrics "$M" polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq $2 --batch $3 \
    --heads $((2048 / $1)) --dim $1
  grep -E "stalled|issue_active|gmma|warps_active|duration|inst_executed" "$LOG/ncu-d$1-s$2.log" | \
    awk '$NF+0 > 0.05 || /duration|inst|gmma|issue_active/' | sed 's/^ *//' | tr -s ' ' | tee -a "$SUMMARY"
done
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
