#!/bin/bash
# Seventeenth session, R3 (issue 9, FP8): the defaults with l from the tensor cores when no
# LSE is asked for (decision 108): test_fp8 (its no-LSE cases run that path), sanitizers
# on those; where a block's cycles go beyond the loop (fp8_timeline's whole-block lines,
# blocks of head 8: the fourth wave) and the SM clock under load; ncu's pipe
# utilisation of the two forms; beside SDPA against the previous default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s17_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s17_r3 test_fp8 attn_speed fp8_timeline fp8_timeline_ctl
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
pa_fp8_test ""
for a in "128 482 8" "128 2530 8" "128 2530 0" "64 865 8" "64 2913 8"; do
  n=timeline-${a// /-}
  step "$n" 60 fp8_timeline $a
  grep -E "^fp8_timeline|softmax|one iteration|whole block|start to end|SM clock|beyond" "$LOG/$n.log" | tee -a "$SUMMARY"
done
# the SM clock while the default runs for ~3 s
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 >"$LOG/clocks.txt" 2>&1 &
SMI=$!
step speed-long 60 attn_speed --backend cuda --warm 0.3 --iters 2500 --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 -
kill $SMI 2>/dev/null
sort "$LOG/clocks.txt" | uniq -c | sort -rn | head -8 | sed 's/^/clocks (count, MHz, W, C): /' | tee -a "$SUMMARY"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
for x in 482 2530; do
  step "ncu-$x" 120 "$NCU" --clock-control none -k regex:fp8 --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --print-details all fp8_timeline_ctl 128 $x
  grep -iE "Duration|SM Frequency|Issue Slots Busy|Pipe|Tensor|XU|FMA|ALU|Eligible|Stall|Warp Cycles" "$LOG/ncu-$x.log" | cut -c1-140 | sed "s/^/$x /" | tee -a "$SUMMARY"
done
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active
for x in 482 2530; do
  step "ncu-m-$x" 120 "$NCU" --clock-control none -k regex:fp8 --launch-skip 5 --launch-count 1 --metrics "$M" fp8_timeline_ctl 128 $x
  grep -E "sm__|smsp__" "$LOG/ncu-m-$x.log" | sed "s/^/$x /" | tee -a "$SUMMARY"
done
CASES=d64_causal_s1000_nolse,d128_varlen_causal_gqa_nolse,d64_varlen_seqused_nolse,d128_b2_gqa_s300_nolse
pa_fp8_sanitizers $CASES ""
step torch128 200 python3 bench/fp8_torch.py --dims 128 --seqlens 2048,8192,16384 --causal both --variants=-,pingpong-gs-k192-t,-
step torch64 200 python3 bench/fp8_torch.py --dims 64 --seqlens 2048,8192,16384 --causal both --variants=-,pipe-gs-t-wg3,-
grep -hE "polyattn|sdpa-(flash|cudnn)" "$LOG/torch128.log" "$LOG/torch64.log" | cut -c1-110 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
