#!/bin/bash
# Twenty-sixth session, R4 (issue 9; measurement only): what the hd64 softmax's
# instructions wait on in the persistent kernel at S512 (B32 Hq32 bf16, 16k tokens), with
# all exponentials on the SFU (the default) and with every 4th pair on the FMA pipe
# ("-x4"): ncu's source page (warp-state samples per SASS instruction, for
# scripts/ncu_source_classes.py) and summary metrics (pipe utilisations, issue), one
# launch each, clocks unmodified. Needs the R1 build (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON,
# bench/gpu/fma_s26_r1.patch).
# Run: source .devkit/env; OUT=dir bash bench/gpu/fma_s26_r4.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fma_s26_r4 polyattn
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_xu.sum
P="polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 512 --batch 32 --repeat 1"
for v in default pingpong-rel-p-q2-os-x4; do
  step "ncu-metrics-$v" 60 env POLYATTN_CUDA_HOPPER_VARIANT=$v "$NCU" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --metrics $M $P
  grep -E "gpu__time|cycles_elapsed|inst_executed|pct_of_peak" "$LOG/ncu-metrics-$v.log" | sed "s/^/$v: /" | tr -s ' ' | tee -a "$SUMMARY"
  step "ncu-source-$v" 120 sh -c "POLYATTN_CUDA_HOPPER_VARIANT=$v \"$NCU\" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --section WarpStateStats --section SourceCounters --page source --csv --print-source sass $P > \"$LOG/ncu-src-$v.csv\""
  gzip -f "$LOG/ncu-src-$v.csv"
done
pa_gpu_pack_keep ncu-src-default.csv.gz ncu-src-pingpong-rel-p-q2-os-x4.csv.gz
pa_gpu_finish
