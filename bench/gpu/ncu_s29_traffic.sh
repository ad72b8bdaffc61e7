#!/bin/bash
# Twenty-ninth session (issue 9): where our forward spends the energy cuDNN's does not. At
# the board's 700 W cap every case runs at sw-power-cap, so a kernel's rate is its work per
# joule; R1's one-consumer blocks did 4% more work per cycle at hd64 S512 and lost 7% of
# the clock. ncu (clocks left alone) on one launch of ours and one of cuDNN's, after
# warm-up, in compare_torch's process: instructions (all, SFU, FMA-pipe threads), bytes
# from DRAM and through L2, shared-memory wavefronts of the load/store unit, the tensor
# pipe's activity and the elapsed cycles.
# Run: source .devkit/env; OUT=dir bash bench/gpu/ncu_s29_traffic.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ncu_s29_traffic python3 nvidia-smi
STEP_TAIL=0
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M="--metrics gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread"
for dc in 64:512 128:512 128:8192; do
  d=${dc%%:*} sl=${dc##*:}
  P="python3 bench/compare_torch.py --dims $d --seqlens $sl --causal 0 --dtypes bf16 --no-efficient --min-runs 5 --rep-ms 5 --warmup-ms 2"
  # shellcheck disable=SC2086
  step ncu-pa-d$d-s$sl 120 "$NCU" --clock-control none -k regex:pa_hopper_fwd --launch-skip 4 --launch-count 1 $M $P
  # shellcheck disable=SC2086
  step ncu-cudnn-d$d-s$sl 120 "$NCU" --clock-control none -k regex:'sdpa|fprop|cudnn' --launch-skip 4 --launch-count 1 $M $P
done
pa_ncu_summary "^  [a-zA-Z_].*\(|^    [a-z]"
pa_gpu_pack_logs
pa_gpu_finish
