#!/bin/bash
# Sixteenth session, R2 (issue 9, FP8): the committed form of R1's transposer (the
# matrix-instruction transpose is the only one; decision 107) and where a loop iteration's
# cycles go (bench/gpu/fp8_timeline.cu: SM-clock stamps at the producer's and consumers'
# phase boundaries). fp8_check, test_fp8 with the defaults, sanitizers, attn_speed, the
# timelines (hd128 default, its pipe form, hd64 default), beside SDPA, and the other
# suites (hopper_ptx.cuh gained stmatrix: forward sweep, test_cuda, backward).
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s16_r2.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s16_r2 test_fp8 attn_speed fp8_check fp8_timeline test_forward test_cuda test_backward
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
step fp8_check 30 fp8_check
grep -E "^fp8_check D" "$LOG/fp8_check.log" | grep -v candidate | cut -c1-220 | tee -a "$SUMMARY"
pa_fp8_test ""
pa_fp8_sanitizers d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block,d64_b2_gqa_s300_block,d128_sq17_sk1000_window
export POLYATTN_CUDA_FP8=1
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
step speed-d128 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 - POLYATTN_CUDA_FP8_VARIANT=pipe-gs-k192-t -
step speed-d64 60 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 - POLYATTN_CUDA_FP8_VARIANT=pipe-gs-k192-t -
for f in speed-d128 speed-d64; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130; done | tee -a "$SUMMARY"
# variant numbers: pingpong-gs-k192-t 482, pipe-gs-k192-t 481, pipe-gs-t-wg3 865, serial 0
for a in "128" "128 481" "64" "128 0"; do
  n=timeline-${a// /-}
  step "$n" 60 fp8_timeline $a
  cat "$LOG/$n.log" | tee -a "$SUMMARY"
done
step torch 300 python3 bench/fp8_torch.py --dims 128,64 --seqlens 2048,8192,16384 --causal both --variants=-
grep -E "polyattn|sdpa-(flash|cudnn)" "$LOG/torch.log" | cut -c1-110 | tee -a "$SUMMARY"
unset POLYATTN_CUDA_FP8
pa_cuda_suites
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
