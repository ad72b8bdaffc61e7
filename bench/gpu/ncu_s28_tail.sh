#!/bin/bash
# Twenty-eighth session (issue 9): how much of a launch the SMs sit idle at its end. A
# grid of equal tiles leaves SMs idle for the last partial round: hd128 at S4096-16384 has
# 2048 query tiles of 128 rows (15.52 rounds on 132 SMs: predicted 3.0% of the SM-cycles
# idle), hd64 S512 4096 tiles (31.03: 3.0%), hd64 S2048 2560 tiles of 192 rows and 256 of 128
# (about 3%). ncu (clocks left alone) on one launch of ours and one of cuDNN's at each,
# after warm-up, in compare_torch's process: the SMs' active cycles (mean, min, max)
# against the elapsed cycles.
# Run: source .devkit/env; OUT=dir bash bench/gpu/ncu_s28_tail.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ncu_s28_tail python3 nvidia-smi
STEP_TAIL=0
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M="--metrics sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_elapsed.max,gpu__time_duration.sum,launch__grid_size"
for dc in 128:8192 128:16384 128:4096 64:2048 64:512; do
  d=${dc%%:*} sl=${dc##*:}
  P="python3 bench/compare_torch.py --dims $d --seqlens $sl --causal 0 --dtypes bf16 --no-efficient --min-runs 5 --rep-ms 5 --warmup-ms 2"
  # shellcheck disable=SC2086
  step ncu-pa-d$d-s$sl 90 "$NCU" --clock-control none -k regex:pa_hopper_fwd --launch-skip 4 --launch-count 1 $M $P
  # shellcheck disable=SC2086
  step ncu-cudnn-d$d-s$sl 90 "$NCU" --clock-control none -k regex:'sdpa|fprop|cudnn' --launch-skip 4 --launch-count 1 $M $P
done
pa_ncu_summary "^  [a-zA-Z_].*\(|sm__cycles|gpu__time|launch__grid"
pa_gpu_pack_logs
pa_gpu_finish
