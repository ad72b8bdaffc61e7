#!/bin/bash
# Thirteenth session, a diagnostic: where a Hopper backward block's time goes. A module
# built with bench/gpu/bwd_timing_s13.patch (not in the tree; in .devkit/timing) has
# thread 0 of each block of the main kernel read %globaltimer at its start, after the
# first tile's barrier (prologue: K, V and the first Q, dO tile loaded), after the tile
# loop, and after the dK, dV stores (epilogue), and the gap on its SM since the previous
# block's end (the block launch); a one-thread kernel after each call prints the means.
# The stream-K tail off (its workers are not timed). hd128 and hd64, bf16, 16k tokens,
# causal and not; the kernel's time from `polyattn run` for the clean and timed modules.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s13_timing.sh
# Logs: bench/results/2026-12-01s13-bwd/timing/.
gzip -d .devkit/lib/*.gz .devkit/timing/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s13_timing polyattn
export POLYATTN_CUDA_HOPPER_BWD_SK=0
for d in 128 64; do
  for s in 2048 8192 16384; do
    for c in "" "--causal"; do
      n=d$d-s$s${c:+-causal}
      R="polyattn run --backend cuda --backward --dtype bf16 --repeat 5 --no-check --seq $s --batch $((16384 / s)) --heads $((2048 / d)) --dim $d $c"
      timeout 60 $R > "$LOG/clean-$n.txt" 2>&1 || FAILED=1
      echo "clean-$n $(grep -E '^backward' "$LOG/clean-$n.txt" | head -1 | tr -s ' ')" | tee -a "$SUMMARY"
      POLYATTN_TIMING=1 POLYATTN_BACKEND_PATH=$PWD/.devkit/timing timeout 60 $R > "$LOG/timed-$n.txt" 2>&1 || FAILED=1
      echo "timed-$n $(grep -E '^backward' "$LOG/timed-$n.txt" | head -1 | tr -s ' ') $(grep TIMING "$LOG/timed-$n.txt" | tail -1)" | tee -a "$SUMMARY"
    done
  done
done
pa_gpu_pack_logs
pa_gpu_finish
