#!/bin/bash
# Twelfth session, a diagnostic for hd128 causal S16384 (the one row of issue 4 below
# 1.1x flash): the Hopper backward's main kernel under ncu at S8192 and S16384, causal
# and not (bf16, hd128, 16k tokens) — duration, SMs' active share of the elapsed
# cycles (a tail shows as idle SMs), issue slots, L2 hit rate, DRAM bytes.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s12_ncu_causal.sh
# Logs: bench/results/2026-12-01s12-bwd/ncu-causal/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s12_ncu_causal polyattn
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,sm__cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_issued.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum
for s in 8192 16384; do
  for c in "" "--causal"; do
    n=s$s${c:+-causal}
    step ncu-$n 40 "$NCU" --clock-control none --kernel-name regex:'pa_hopper_bwd' --launch-count 2 --metrics $M \
      polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq $s --batch $((16384 / s)) --heads 16 --dim 128 $c
    grep -E "pa_hopper|gpu__time|sm__cycles|sm__inst|lts__|dram__" "$LOG/ncu-$n.log" | grep -v PROF | sed 's/(pa_problem.*//' | cut -c1-110 | sed "s/^/$n /" | tee -a "$SUMMARY"
  done
done
pa_gpu_pack_logs
pa_gpu_finish
