#!/bin/bash
# Seventeenth session, the committed code's check (issue 9, decision 108: the FP8 kernel's
# row sums by the tensor cores, the hd64 default's when no LSE is asked for): fp8_check,
# test_fp8 with the defaults (its no-LSE cases run that path), the sanitizers on both
# paths, the timelines of the defaults, the FP8 rows beside PyTorch in one process
# (against the previous hd64 default, and hd128's ROWSUM form), and the other suites.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s17.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s17 test_fp8 attn_speed fp8_check fp8_timeline test_forward test_cuda test_backward
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
step fp8_check 30 fp8_check
grep -E "^fp8_check D" "$LOG/fp8_check.log" | grep -v candidate | cut -c1-220 | tee -a "$SUMMARY"
pa_fp8_test ""
pa_fp8_sanitizers d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block,d64_causal_s1000_nolse,d64_varlen_seqused_nolse
export POLYATTN_CUDA_FP8=1
for a in "128 482 8" "64 2913 8"; do
  n=timeline-${a// /-}
  step "$n" 60 fp8_timeline $a
  grep -E "^fp8_timeline|softmax|one iteration|whole block|start to end|SM clock|beyond" "$LOG/$n.log" | tee -a "$SUMMARY"
done
step torch128 200 python3 bench/fp8_torch.py --dims 128 --seqlens 2048,8192,16384 --causal both --variants=-,pingpong-gs-k192-t-r
step torch64 200 python3 bench/fp8_torch.py --dims 64 --seqlens 2048,8192,16384 --causal both --variants=-,pipe-gs-t-wg3
grep -hE "polyattn|sdpa-(flash|cudnn)" "$LOG/torch128.log" "$LOG/torch64.log" | cut -c1-110 | tee -a "$SUMMARY"
unset POLYATTN_CUDA_FP8
pa_cuda_suites
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
