#!/bin/bash
# Thirty-fourth session (issue 3; written without a device): where the Ampere path's
# warps wait, which no session has profiled per instruction: ncu's summary metrics (pipe
# utilisations, issue) and source page (warp-state samples per SASS instruction, for
# scripts/ncu_source_classes.py) of one launch each of the default rows (m2k128tj at
# hd64, m2k64-km at hd128) and their "-rs" forms (decision 125), bf16 S8192, 16k tokens,
# hidden 2048, clocks unmodified. The launches come from compare_torch.py without LSE
# (the CLI asks for the LSE, on which the "-rs" rows run their base row).
# Needs a tuning build (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON), the devkit of
# bench/gpu/rowsum_s34.sh. PARTS="64 128" (default; ~400 s, not measured) or one of them.
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_ncu_s34.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_ncu_s34 python3
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_xu.sum
keep=()
for d in ${PARTS:-64 128}; do
  if [ "$d" = 64 ]; then rows="m2k128tj m2k128tj-rs"; else rows="m2k64-km m2k64-km-rs"; fi
  P="python3 bench/compare_torch.py --env-kernel ampere --dims $d --seqlens 8192 --causal 0 --no-cudnn --no-efficient --min-runs 1 --rep-ms 1 --warmup-ms 1"
  for v in $rows; do
    step "ncu-metrics-$v" 90 env POLYATTN_CUDA_AMPERE_VARIANT=$v "$NCU" --clock-control none --kernel-name regex:pa_ampere_fwd --launch-count 1 --metrics $M $P
    grep -E "gpu__time|cycles_elapsed|inst_executed|pct_of_peak" "$LOG/ncu-metrics-$v.log" | sed "s/^/$v: /" | tr -s ' ' | tee -a "$SUMMARY"
    step "ncu-source-$v" 120 sh -c "POLYATTN_CUDA_AMPERE_VARIANT=$v \"$NCU\" --clock-control none --kernel-name regex:pa_ampere_fwd --launch-count 1 --section WarpStateStats --section SourceCounters --page source --csv --print-source sass $P > \"$LOG/ncu-src-$v.csv\""
    python3 scripts/ncu_source_classes.py "$LOG/ncu-src-$v.csv" >"$LOG/classes-$v.txt" 2>&1
    gzip -f "$LOG/ncu-src-$v.csv"
    keep+=("ncu-src-$v.csv.gz" "classes-$v.txt")
  done
done
pa_gpu_pack_keep "${keep[@]}"
pa_gpu_finish
