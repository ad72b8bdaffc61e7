#!/bin/bash
# Fifty-first session (issue 3): why decision 144's "-sc" row is slower. ncu's summary metrics
# and source page (warp-state samples per SASS instruction) of one launch each of hd128's
# default row (m2k64-km-rs) and m2k64-km-rs-mg-sc, bf16 S8192, 16k tokens, hidden 2048,
# without LSE (the "-rs" rows need it off; compare_torch.py asks for none), clocks unmodified.
# Needs a module built with PA_CUDA_AMPERE_SC=1 (xz- or gzip-compressed in .devkit/lib is fine).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s51_ncu.sh   (~1 min of command time on an H100)
# (The unpacking, written out here for the run, is lib.sh's pa_devkit_unpack since.)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_devkit_unpack
pa_gpu_setup s51_ncu python3
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum
M=$M,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
M=$M,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active
M=$M,sm__issue_active.avg.pct_of_peak_sustained_active
P="python3 bench/compare_torch.py --env-kernel ampere --dims 128 --seqlens 8192 --causal 0"
P="$P --no-cudnn --no-efficient --min-runs 1 --rep-ms 1 --warmup-ms 1"
keep=()
for v in m2k64-km-rs m2k64-km-rs-mg-sc; do
  step "ncu-metrics-$v" 90 env POLYATTN_CUDA_AMPERE_VARIANT=$v "$NCU" --clock-control none \
    --kernel-name regex:pa_ampere_fwd --launch-count 1 --metrics $M $P
  grep -E "gpu__time|cycles_elapsed|inst_executed|pct_of_peak" "$LOG/ncu-metrics-$v.log" |
    sed "s/^/$v: /" | tr -s ' ' | tee -a "$SUMMARY"
  step "ncu-source-$v" 120 sh -c "POLYATTN_CUDA_AMPERE_VARIANT=$v \"$NCU\" --clock-control none \
    --kernel-name regex:pa_ampere_fwd --launch-count 1 --section WarpStateStats \
    --section SourceCounters --page source --csv --print-source sass $P > \"$LOG/ncu-src-$v.csv\""
  python3 scripts/ncu_source_classes.py "$LOG/ncu-src-$v.csv" >"$LOG/classes-$v.txt" 2>&1
  gzip -f "$LOG/ncu-src-$v.csv"
  keep+=("ncu-src-$v.csv.gz" "classes-$v.txt")
done
pa_gpu_pack_keep "${keep[@]}"
pa_gpu_finish
