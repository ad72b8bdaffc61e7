#!/bin/bash
# Twenty-ninth session (issue 9): the instruction mix of our forward against cuDNN's at
# S512 (hd64, hd128) and hd128 S8192, after ncu_s29_traffic.sh found our S512 launches 6-7%
# more instructions and ~36x cuDNN's FP32 FFMA thread-instructions with the same SFU
# count. ncu (clocks left alone), one launch each after warm-up in compare_torch's
# process: warp instructions per pipe (one step) and thread instructions per FP operation
# (another, so that a metric name this ncu lacks costs one step only).
# Run: source .devkit/env; OUT=dir bash bench/gpu/ncu_s29_mix.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ncu_s29_mix python3 nvidia-smi
STEP_TAIL=0
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
PIPES="--metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_fmaheavy.sum,smsp__inst_executed_pipe_fp16.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_uniform.sum,smsp__inst_executed_pipe_lsu.sum,smsp__inst_executed_pipe_adu.sum,smsp__inst_executed_pipe_cbu.sum"
OPS="--metrics smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,smsp__sass_thread_inst_executed_op_hmul_pred_on.sum,smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"
for dc in 64:512 128:512 128:8192; do
  d=${dc%%:*} sl=${dc##*:}
  P="python3 bench/compare_torch.py --dims $d --seqlens $sl --causal 0 --dtypes bf16 --no-efficient --min-runs 5 --rep-ms 5 --warmup-ms 2"
  for who in pa cudnn; do
    if [ $who = pa ]; then K=regex:pa_hopper_fwd; else K='regex:sdpa|fprop|cudnn'; fi
    # shellcheck disable=SC2086
    step ncu-$who-pipes-d$d-s$sl 120 "$NCU" --clock-control none -k "$K" --launch-skip 4 --launch-count 1 $PIPES $P
    # shellcheck disable=SC2086
    step ncu-$who-ops-d$d-s$sl 120 "$NCU" --clock-control none -k "$K" --launch-skip 4 --launch-count 1 $OPS $P
  done
done
pa_ncu_summary "^  [a-zA-Z_].*\(|^    [a-z]"
pa_gpu_pack_logs
pa_gpu_finish
