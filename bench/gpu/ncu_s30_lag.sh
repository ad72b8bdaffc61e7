#!/bin/bash
# Thirtieth session (issue 9): ncu_s29_traffic.sh's counters at hd64 S512 and S1024 on the
# committed kernels (decision 121: the lag on four stages) beside cuDNN's, one launch each
# after warm-up in compare_torch's process, clocks left alone: how much of the twenty-ninth
# session's +30% active cycles at S512 the lag removed.
# Run: source .devkit/env; OUT=dir bash bench/gpu/ncu_s30_lag.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ncu_s30_lag python3 nvidia-smi
STEP_TAIL=0
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M="--metrics gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,dram__bytes_read.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread"
for sl in 512 1024; do
  P="python3 bench/compare_torch.py --dims 64 --seqlens $sl --causal 0 --dtypes bf16 --no-efficient --min-runs 5 --rep-ms 5 --warmup-ms 2"
  # shellcheck disable=SC2086
  step ncu-pa-d64-s$sl 120 "$NCU" --clock-control none -k regex:pa_hopper_fwd --launch-skip 4 --launch-count 1 $M $P
  # shellcheck disable=SC2086
  step ncu-cudnn-d64-s$sl 120 "$NCU" --clock-control none -k regex:'sdpa|fprop|cudnn' --launch-skip 4 --launch-count 1 $M $P
done
pa_ncu_summary "^  [a-zA-Z_].*\(|^    [a-z]"
pa_gpu_pack_logs
pa_gpu_finish
