#!/bin/bash
# Twenty-first session (issue 9, "S = 512: >= cuDNN"): launch shape and speed-of-light of
# cuDNN's forward kernel and ours at the short lengths where cuDNN leads (hd128 and hd64,
# S512, bf16, 16k tokens, hidden 2048): ncu (its own clocks left alone) on one launch of
# each, after warm-up, in compare_torch's process (the polyattn default, SDPA cuDNN).
# PA_SEQLENS (default 512) lists the lengths (the second run: "2048 8192").
# Run: source .devkit/env; OUT=dir bash bench/gpu/ncu_s21_short.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ncu_s21_short python3 nvidia-smi
STEP_TAIL=0
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats"
for sl in ${PA_SEQLENS:-512}; do
  for d in 128 64; do
    P="python3 bench/compare_torch.py --dims $d --seqlens $sl --causal 0 --min-runs 5 --rep-ms 5 --warmup-ms 2"
    t=d$d${PA_SEQLENS:+-s$sl}
    # shellcheck disable=SC2086
    step ncu-cudnn-$t 120 "$NCU" --clock-control none -k regex:'sdpa|fprop|cudnn' --launch-skip 4 --launch-count 1 $S $P
    # shellcheck disable=SC2086
    step ncu-pa-$t 120 "$NCU" --clock-control none -k regex:pa_hopper_fwd --launch-skip 4 --launch-count 1 $S $P
  done
done
pa_ncu_summary "^  [a-zA-Z_].*\(|Duration|SM Frequency|Grid Size|Block Size|Registers Per|Shared Memory Config|Dynamic Shared|Waves Per SM|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput|Theoretical Occupancy|Warp Cycles Per Issued|Block Limit"
pa_gpu_pack_logs
pa_gpu_finish
